"""The claim reader: one stated similarity or difference read as relational claims.

Each predicate of the text (a verb with its arguments in English; a causal construction in
Chinese) becomes a :class:`Claim` — its participants, the relation or mechanism it states (mapped
onto the signature vocabulary's relation predicates and the foresight mechanism classes), whether
it is causal, its direction (cause → effect) and whether it is negated — and a ``status`` that
says what the claim amounts to:

* ``structural`` — a relation is actually stated between real participants (or a mechanism class
  is named as present): "X, which expanded Y"; "cheap loans pushed land prices up"; "a credit
  boom". A claim is causal when its verb acts on a participant (a transitive event verb), when two
  clauses are joined by a causal or temporal-causal link ("so", "which", "when", "once", "because"
  in English; 一…就, …后, 使/让/迫使… in Chinese), or when it names a causal vocabulary term;
* ``placeholder`` — cue words without participants ("one thing caused another", "both had causes
  that led to effects", "一件事导致了另一件事");
* ``topic`` — a shared topic, not a relation ("both involve regulation", "两者都涉及监管");
* ``negated`` — the relation is stated as not holding ("fraud did not cause the collapse");
* ``noncausal`` — a relation between participants that is not causal (ownership, containment…);
* ``surface`` — time, place, names, publicity ("both began in New York");
* ``event`` — something happened, with no relation to anything ("prices fell").

English is parsed with the project's spaCy pipeline (:func:`analogist.encode.deterministic.load_nlp`);
Chinese, for which no parser is bundled, is read by its function words (*departure*: causal
constructions, negators, placeholders and topic frames are matched as patterns, see ``_ZH_*``).
Named vocabulary terms come from the concept lexicon (:func:`analogist.safeguard.lexicon.concepts_in`);
a structural claim that names none is mapped onto the nearest vocabulary term by the bundled
embedder (:func:`analogist.index.embed.default_embedder`, multilingual) against each term's
definition, and the term and its cosine are kept as the claim's ``relation`` and ``similarity``
(provenance for the report); a relation that maps onto no term (cosine below
:attr:`ClaimReaderParams.map_min_cosine`) is an act or event, not a structural claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from analogist.encode.deterministic import load_nlp
from analogist.foresight.event import mechanism_definitions
from analogist.index.embed import default_embedder
from analogist.params import bounded, check_bounds
from analogist.safeguard.lexicon import (
    _CJK,
    _LABEL_PAT,
    _SURFACE_PAT,
    CAUSAL_RELATIONS,
    Concept,
    concepts_in,
)
from analogist.signature import default_signature_vocabulary

__all__ = ["Claim", "ClaimReaderParams", "ClaimStatus", "read_claims", "restates"]

ClaimStatus = Literal["structural", "placeholder", "topic", "negated", "noncausal", "surface",
                      "label", "event"]


@dataclass(frozen=True)
class ClaimReaderParams:
    """Parameters of the claim reader (ours).

    ``restate_cosine``: two structural claims whose texts have at least this cosine (bundled
    embedder) state the same thing; ``map_min_cosine``: a relation stated without naming a
    vocabulary term counts only when its nearest term (mechanism class or causal relation, by
    definition) is at least this close — below it the claim is an act or event that maps onto
    nothing the vocabulary knows ("the king married a princess")."""

    restate_cosine: float = bounded(0.85, lo=0.0, hi=1.0)
    map_min_cosine: float = bounded(0.35, lo=0.0, hi=1.0)

    def __post_init__(self) -> None:
        check_bounds(self, ValueError)


DEFAULT_PARAMS = ClaimReaderParams()


@dataclass(frozen=True)
class Claim:
    """One relational claim read from a similarity or difference (see the module docstring)."""

    text: str
    lang: str
    status: ClaimStatus
    verb: str | None = None
    cause: str | None = None
    effect: str | None = None
    participants: tuple[str, ...] = ()
    concepts: tuple[Concept, ...] = ()
    causal: bool = False
    negated: bool = False
    relation: str | None = None
    relation_kind: str | None = None
    similarity: float | None = None

    @property
    def counts(self) -> bool:
        return self.status == "structural"

    def mechanisms(self) -> frozenset[str]:
        return frozenset(c.name for c in self.concepts if c.kind == "mechanism")

    def describe(self) -> str:
        """A short account of the claim for reasons: relation (cause → effect)."""
        rel = self.relation or self.verb or "-"
        if self.similarity is not None:
            rel = f"{self.verb or '-'} ≈ {self.relation}"
        if self.cause or self.effect:
            return f"{rel}: {self.cause or '?'} → {self.effect or '?'}"
        return rel


# -- word classes (grammatical classes, not domain cues) -------------------------------------

_PLACEHOLDER_NOUNS = frozenset({
    "thing", "something", "anything", "everything", "another", "other", "one", "cause",
    "effect", "result", "outcome", "consequence", "factor", "event", "mechanism", "structure",
    "pattern", "dynamic", "dynamics", "situation", "issue", "problem", "case", "aspect",
    "element", "development", "circumstance", "process", "way", "stuff", "matter", "relation",
    "relationship", "link", "connection", "feature", "similarity", "difference", "trigger",
    "chain", "sequence", "path", "course", "logic", "trajectory", "kind", "sort", "type",
    "crisis", "story", "lot", "part", "point", "detail", "context", "causality", "force",
    "reason", "origin", "work", "change", "condition", "precondition", "amplifier", "response",
    "parallel", "lesson", "history", "time", "period", "while", "moment"})
_CASE_WORDS = frozenset({"both", "each", "either", "they", "them", "all"})
_PRONOUNS = frozenset({"it", "its", "they", "them", "their", "this", "that", "these", "those",
                       "he", "she", "him", "her", "we", "us", "something", "anything",
                       "everything", "another", "one", "themselves", "itself", "all", "both",
                       "each", "either", "neither", "none"})
_RELATIVE = frozenset({"which", "that", "who", "whom", "whose"})
_TOPIC_VERBS = frozenset({"involve", "concern", "relate", "regard", "mention", "revolve",
                          "center", "centre", "surround", "touch", "discuss", "deal"})
_HAS_VERBS = frozenset({"be", "have", "show", "see", "exhibit", "display", "suffer", "stay", "remain",
                        "experience", "face", "undergo", "witness", "share", "feature"})
_NONCAUSAL_VERBS = frozenset({"own", "possess", "belong", "contain", "include", "comprise",
                              "consist", "resemble", "equal", "represent", "lack", "house",
                              "run", "employ", "hold_in", "be_part"})
_SURFACE_VERBS = frozenset({"happen", "occur", "start", "begin", "end", "finish", "last",
                            "take_place", "visit", "print", "publish", "report", "announce",
                            "say", "tell", "write", "call", "name", "label", "dub", "meet",
                            "arrive", "travel", "come", "go", "live", "speak", "appear",
                            "return", "rule", "follow", "read", "attend", "look", "seem"})
_CAUSAL_MARKS = frozenset({"because", "since", "as", "when", "once", "after", "so", "until",
                           "if", "whenever", "unless", "therefore", "thus", "hence"})
_NEGATORS = frozenset({"not", "n't", "never", "neither", "nor", "no"})
_ARG_PREPS = frozenset({"with", "for", "on", "upon", "to", "into", "from", "against", "over",
                        "by", "through", "onto", "out", "off", "of", "beyond", "in"})
_TIME_NOUNS = frozenset({"year", "decade", "month", "week", "day", "while", "time", "moment",
                         "century", "era", "period", "season", "spring", "summer", "autumn",
                         "winter", "fall", "morning", "night", "hour"})

# Chinese: frame words, placeholders, topic frames, negators and causal constructions
_ZH_PLACEHOLDERS = ("另一件事", "一件事", "某种因素", "某种后果", "某种结果", "某种原因", "某事", "某种",
                    "事情", "东西", "因果关系", "原因", "结果", "后果", "因素", "机制", "结构", "问题",
                    "情况", "现象", "过程", "模式")
_ZH_FRAME = re.compile(r"两者|二者|两次|它们|这两次|两国|双方|也|都|是|了|的|在|就|又|把|被|由|着|过|这|那|其|各|所")
_ZH_TOPIC = re.compile(r"涉及|关于|有关|相关|牵涉")
_ZH_NONCAUSAL = re.compile(r"属于|拥有|包含|包括|隶属")
_ZH_NEG = re.compile(r"不是|并非|并不|没有|并未|从未|从没|未曾|未能?|不(?![断少良同足久仅光过但])")
_ZH_CAUSAL = re.compile(
    r"导致|引起|引发|造成|致使|使得|促使|迫使|促成|使|让|令|推高|推升|推动|拉高|抬高|压低|压得|拉低|"
    r"放大|加剧|助长|触发|点燃|带来|拖累|拖垮|吸引|冲击|削弱|耗尽|抽干|挤占|阻止|防止|阻碍|掩盖|掩饰|"
    r"延缓|推迟|依赖|依靠|威胁|吞噬|逼|害得")
_ZH_LINK = re.compile(r"一[\u3400-\u9fff]{1,3}[，,]|一旦|因为|由于|所以|因此|从而|于是|以致|随之|"
                      r"随即|进而|继而|"
                      r"(?<=[\u3400-\u9fff]{2})(?:之)?后(?!果|来)[，,]?")


# -- reading ---------------------------------------------------------------------------------

def read_claims(text: str, *, params: ClaimReaderParams = DEFAULT_PARAMS) -> list[Claim]:
    """The claims ``text`` states, one per predicate (English) or clause (Chinese); a text with
    no predicate is one claim (a named mechanism, or nothing). Structural claims that name no
    vocabulary term are mapped onto the nearest one by the embedder."""
    return list(_read_cached((text or "").strip(), params))


@lru_cache(maxsize=4096)
def _read_cached(t: str, params: ClaimReaderParams) -> tuple[Claim, ...]:
    if not t:
        return ()
    if _LABEL_PAT.search(t):
        return (Claim(t, _lang(t), "label", concepts=tuple(concepts_in(t))),)
    claims = _read_zh(t) if _lang(t) == "zh" else _read_en(t)
    return tuple(_mapped(c, t, params) for c in claims)


def restates(a: Claim, b: Claim, *, params: ClaimReaderParams = DEFAULT_PARAMS) -> bool:
    """Whether structural claim ``b`` states what ``a`` already states: the same named
    mechanisms, the same participants in the same direction, or near-identical text (cosine of
    the bundled embedder, computed only when the first two do not decide)."""
    if a.mechanisms() and a.mechanisms() == b.mechanisms():
        return True
    if a.mechanisms() != b.mechanisms():
        return False
    if a.cause and a.effect and (_head(a.cause), _head(a.effect)) == (_head(b.cause),
                                                                      _head(b.effect)):
        return True
    return float(np.dot(_vector(a.text), _vector(b.text))) >= params.restate_cosine


def _lang(text: str) -> str:
    return "zh" if len(_CJK.findall(text)) * 2 >= len(re.findall(r"[A-Za-z]", text)) and \
        _CJK.search(text) else "en"


def _head(phrase: str | None) -> str:
    words = re.findall(r"[a-z\u3400-\u9fff]+", (phrase or "").lower())
    return words[-1] if words else ""


# -- English ---------------------------------------------------------------------------------

def _lemma(tok: Any) -> str:
    lem = tok.lemma_.lower()
    prt = [c for c in tok.children if c.dep_ == "prt"]
    if lem == "take" and any(c.lemma_.lower() == "place" for c in tok.children):
        return "take_place"
    return lem + ("_" + prt[0].lower_ if prt else "")


def _is_pred(tok: Any) -> bool:
    if tok.dep_ in ("aux", "auxpass", "amod", "compound"):
        return False
    if tok.pos_ == "VERB":
        return True
    if tok.pos_ == "AUX":
        return tok.dep_ in ("ROOT", "relcl", "conj", "ccomp", "advcl")
    # the small pipeline sometimes tags a verb as a noun; its subject and object still show it
    deps = {c.dep_ for c in tok.children}
    return "nsubj" in deps and bool(deps & {"dobj", "prt"})


_CLAUSE_DEPS = frozenset({"relcl", "acl", "advcl", "ccomp", "conj", "xcomp", "cc", "punct",
                          "appos", "parataxis"})


def _np_tokens(tok: Any) -> list[Any]:
    """``tok`` and its dependents, without the clauses hanging off it."""
    out = [tok]
    for c in tok.children:
        if c.dep_ not in _CLAUSE_DEPS:
            out += _np_tokens(c)
    return sorted(out, key=lambda x: x.i)


def _content(tokens: list[Any]) -> bool:
    """A phrase names a real participant: a noun, name or number that is not a placeholder or
    a pronoun (adjectives count only beside a content noun, so 'something else' is empty)."""
    for t in tokens:
        lem = t.lemma_.lower()
        if t.pos_ in ("NOUN", "PROPN", "NUM") and lem not in _PLACEHOLDER_NOUNS and \
                t.lower_ not in _PRONOUNS:
            return True
        if t.pos_ == "VERB" and t.dep_ in ("amod", "compound") and lem not in ("cause",):
            return True
    return False


def _text(tokens: list[Any]) -> str:
    return " ".join(t.text for t in tokens).replace(" 's", "'s").strip()


def _negated(tok: Any) -> bool:
    for c in tok.children:
        if c.dep_ == "neg" or c.lower_ in ("never", "neither", "nor"):
            return True
        if c.dep_ == "prep" and any(p.lemma_.lower() == "case" and g.lower_ in ("neither", "no")
                                    for p in c.children for g in p.children if g.dep_ == "det"):
            return True
    return False


def _args(tok: Any) -> tuple[list[list[Any]], list[list[Any]], bool]:
    """(subject phrases, object phrases, passive) of predicate ``tok``."""
    subs: list[list[Any]] = []
    objs: list[list[Any]] = []
    passive = False
    for c in tok.children:
        if c.dep_ in ("nsubj", "csubj", "expl"):
            subs.append(_np_tokens(c))
        elif c.dep_ in ("nsubjpass", "csubjpass"):
            passive = True
            objs.append(_np_tokens(c))
        elif c.dep_ in ("dobj", "attr", "oprd", "dative", "acomp"):
            objs.append(_np_tokens(c))
        elif c.dep_ == "agent":
            subs += [_np_tokens(p) for p in c.children if p.dep_ == "pobj"]
        elif c.dep_ in ("prep", "prt") and c.lower_ in _ARG_PREPS:
            for p in c.children:
                if p.dep_ == "pobj" and p.pos_ != "PROPN" and p.lemma_.lower() not in (
                        _TIME_NOUNS | _CASE_WORDS | {"case"}):
                    objs.append(_np_tokens(p))
        elif c.dep_ in ("xcomp", "ccomp") and c.pos_ in ("VERB", "AUX"):
            objs.append([c])
    if tok.dep_ == "acl" and tok.head.pos_ in ("NOUN", "PROPN"):
        # a participle on a noun: "a boom fuelled by X" (the noun is the effect), "prices
        # rising ..." / a misparsed finite verb (the noun is the subject)
        if tok.tag_ == "VBN":
            objs.append(_np_tokens(tok.head))
            passive = True
        elif not subs:
            subs.append(_np_tokens(tok.head))
    return subs, objs, passive


def _antecedent(tok: Any) -> tuple[list[Any] | None, bool]:
    """The subject a predicate without one takes over: a relative clause's noun, or the clause
    it continues (an event, for 'X did Y, which expanded Z' and participial consequences).
    The flag says the antecedent is a whole clause (a causal link)."""
    rel = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in _RELATIVE]
    head = tok.head
    if rel or not any(c.dep_ in ("nsubj", "nsubjpass", "csubj") for c in tok.children):
        if tok.dep_ == "relcl" and head.pos_ in ("NOUN", "PROPN", "PRON"):
            return _np_tokens(head), False
        if tok.dep_ in ("relcl", "advcl", "ccomp") and rel and head.pos_ in ("VERB", "AUX"):
            return [head], True
        if tok.dep_ == "advcl" and tok.tag_ == "VBG" and head.pos_ in ("VERB", "AUX"):
            return [head], True
        if tok.dep_ in ("conj", "xcomp") and head.pos_ in ("VERB", "AUX"):
            subs, _, _ = _args(head)
            if subs:
                return subs[0], False
            ante, link = _antecedent(head)
            return ante, link
    return None, False


def _linked(tok: Any) -> bool:
    """Whether predicate ``tok`` takes part in a causal or temporal-causal link with another
    clause (a marked adverbial clause, 'so', or a clausal relative)."""
    for c in tok.children:
        if c.dep_ == "advcl" and any(m.lower_ in _CAUSAL_MARKS for m in c.children
                                     if m.dep_ in ("mark", "advmod")):
            return True
        if c.dep_ in ("advmod", "mark") and c.lower_ in _CAUSAL_MARKS and tok.dep_ in (
                "ROOT", "advcl", "conj", "ccomp"):
            return True
    return tok.dep_ == "advcl" and any(m.lower_ in _CAUSAL_MARKS for m in tok.children
                                       if m.dep_ in ("mark", "advmod"))


def _doc_linked(doc: Any) -> bool:
    """Whether the text joins two clauses by a causal or temporal-causal connective."""
    for t in doc:
        low = t.lower_
        if low not in _CAUSAL_MARKS or t.dep_ not in ("mark", "advmod"):
            continue
        if low == "as" and t.dep_ != "mark":
            continue
        if low == "so" and t.head.pos_ in ("ADJ", "ADV"):
            continue
        return True
    return False


def _read_en(text: str) -> list[Claim]:
    doc = load_nlp()(text)
    preds = [t for t in doc if _is_pred(t)]
    out: list[Claim] = []
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if not preds or (root is not None and root not in preds):
        out.append(_fragment(_text(_np_tokens(root)) if root is not None and preds else text))
    linked = len(preds) >= 2 and _doc_linked(doc)
    for p in preds:
        out.append(_read_pred(p, text, linked))
    return out


def _fragment(text: str) -> Claim:
    cs = tuple(concepts_in(text))
    named = tuple(c for c in cs if c.kind == "mechanism")
    if named:
        return Claim(text, _lang(text), "structural", concepts=cs, causal=True,
                     relation=named[0].name, relation_kind="mechanism")
    rel = tuple(c for c in cs if c.kind == "relation")
    if rel:
        return Claim(text, _lang(text), "placeholder", concepts=cs)
    if _SURFACE_PAT.search(text):
        return Claim(text, _lang(text), "surface", concepts=cs)
    return Claim(text, _lang(text), "event", concepts=cs)


def _read_pred(p: Any, text: str, doc_linked: bool = False) -> Claim:
    lem = _lemma(p)
    base = lem.split("_")[0]
    subs, objs, passive = _args(p)
    link = False
    if not subs or all(len(s) == 1 and s[0].lower_ in _RELATIVE for s in subs):
        ante, link = _antecedent(p)
        subs = [ante] if ante else []
    span = sorted({t for s in subs + objs for t in s} | {p}, key=lambda x: x.i)
    clause = _text(span) if span else text
    cs = tuple(concepts_in(clause))
    mech = tuple(c for c in cs if c.kind == "mechanism")
    sub_toks = [t for s in subs for t in s]
    obj_toks = [t for o in objs for t in o]
    cases_subject = any(t.lower_ in _CASE_WORDS for t in sub_toks) and not _content(sub_toks)
    sub_ok = _content(sub_toks) or (link and bool(sub_toks)) or \
        any(t.pos_ in ("VERB", "AUX") for t in sub_toks if len(sub_toks) == 1)
    obj_ok = _content(obj_toks) or any(t.pos_ in ("VERB", "AUX") and len(o) == 1
                                       for o in objs for t in o)
    cause = _text(sub_toks) if sub_toks else None
    effect = _text(obj_toks) if obj_toks else None
    participants = tuple(x for x in (cause, effect) if x)
    kw = {"verb": p.text if not [c for c in p.children if c.dep_ == "prt"] else
          f"{p.text} {[c for c in p.children if c.dep_ == 'prt'][0].text}",
          "cause": cause, "effect": effect, "participants": participants, "concepts": cs}
    lang = "en"
    if _negated(p):
        return Claim(clause, lang, "negated", negated=True, **kw)
    if base in _TOPIC_VERBS:
        return Claim(clause, lang, "topic", **kw)
    if mech and (sub_ok or obj_ok or cases_subject or base in _HAS_VERBS):
        return Claim(clause, lang, "structural", causal=True, relation=mech[0].name,
                     relation_kind="mechanism", **kw)
    linked = link or doc_linked or _linked(p)
    both_sides = (sub_ok or cases_subject) and obj_ok
    if base in _HAS_VERBS or base in _NONCAUSAL_VERBS:
        if both_sides or (sub_ok and base in _NONCAUSAL_VERBS):
            return Claim(clause, lang, "noncausal", **kw)
        return Claim(clause, lang, "placeholder" if _cue_only(cs) else "event", **kw)
    if base in _SURFACE_VERBS or lem in _SURFACE_VERBS:
        if linked and sub_ok:
            return Claim(clause, lang, "structural", causal=True, **kw)
        return Claim(clause, lang, "surface", **kw)
    if both_sides or (linked and sub_ok):
        rel = [c for c in cs if c.kind == "relation"]
        return Claim(clause, lang, "structural", causal=True,
                     relation=rel[0].name if rel else None,
                     relation_kind="relation" if rel else None, **kw)
    if not sub_ok and not obj_ok or _cue_only(cs):
        return Claim(clause, lang, "placeholder" if cs else "event", **kw)
    return Claim(clause, lang, "event", **kw)


def _cue_only(cs: tuple[Concept, ...]) -> bool:
    return bool(cs) and all(c.kind == "relation" for c in cs)


# -- Chinese ---------------------------------------------------------------------------------

def _zh_content(s: str) -> str:
    for ph in _ZH_PLACEHOLDERS:
        s = s.replace(ph, "")
    s = _ZH_CAUSAL.sub("", s)
    s = _ZH_FRAME.sub("", s)
    return "".join(_CJK.findall(s)) + "".join(re.findall(r"[A-Za-z0-9]+", s))


def _read_zh(text: str) -> list[Claim]:
    out: list[Claim] = []
    for clause in [x for x in re.split(r"[。；;！？!?]", text) if x.strip()]:
        out.append(_read_zh_clause(clause.strip()))
    return out


def _read_zh_clause(clause: str) -> Claim:
    cs = tuple(concepts_in(clause))
    mech = tuple(c for c in cs if c.kind == "mechanism")
    marks = sorted([*_ZH_CAUSAL.finditer(clause), *_ZH_LINK.finditer(clause)],
                   key=lambda m: m.start())
    cases_subject = bool(re.match(r"^(?:两者|二者|两次|它们|双方)?(?:的[\u3400-\u9fff]{1,6})?"
                                  r"(?:也)?都", clause))
    # the first marker that has real participants on both sides (or the cases as subject)
    best = None
    for m in marks:
        lc, rc = _zh_content(clause[:m.start()]), _zh_content(clause[m.end():])
        if len(rc) >= 2 and (len(lc) >= 2 or cases_subject):
            best = m
            break
    m = best or (marks[0] if marks else None)
    left, right = (clause[:m.start()], clause[m.end():]) if m else (clause, "")
    kw: dict[str, Any] = {"verb": m.group(0).strip("，,") if m else None,
                          "cause": left.strip("，, ") or None,
                          "effect": right.strip("，, ") or None, "concepts": cs}
    kw["participants"] = tuple(x for x in (kw["cause"], kw["effect"]) if x)
    if m and _ZH_NEG.search(left[-8:]):
        return Claim(clause, "zh", "negated", negated=True, **kw)
    if _ZH_TOPIC.search(clause):
        return Claim(clause, "zh", "topic", **kw)
    if _SURFACE_PAT.search(clause) and not mech and best is None:
        return Claim(clause, "zh", "surface", **kw)
    if mech:
        return Claim(clause, "zh", "structural", causal=True, relation=mech[0].name,
                     relation_kind="mechanism", **kw)
    if best is not None:
        rel = [c for c in cs if c.kind == "relation"]
        return Claim(clause, "zh", "structural", causal=True,
                     relation=rel[0].name if rel else None,
                     relation_kind="relation" if rel else None, **kw)
    if m:
        return Claim(clause, "zh", "placeholder", **kw)
    if _ZH_NONCAUSAL.search(clause) and len(_zh_content(clause)) >= 4:
        return Claim(clause, "zh", "noncausal", **kw)
    if _SURFACE_PAT.search(clause):
        return Claim(clause, "zh", "surface", **kw)
    return Claim(clause, "zh", "event", **kw)


# -- mapping onto the vocabularies (the bundled embedder) ------------------------------------

@dataclass(frozen=True)
class _Terms:
    names: tuple[tuple[str, str], ...]  # (kind, name)
    vectors: Any


@lru_cache(maxsize=1)
def _embedder() -> Any:
    return default_embedder()  # the weights load here, once per process


@lru_cache(maxsize=1)
def _terms() -> _Terms:
    """Every mechanism class and causal relation predicate with its definition, embedded once."""
    names: list[tuple[str, str]] = []
    texts: list[str] = []
    for m, d in mechanism_definitions().items():
        names.append(("mechanism", m))
        texts.append(f"{m.replace('_', ' ')}: {d}")
    for p in default_signature_vocabulary():
        if p.name in CAUSAL_RELATIONS:
            names.append(("relation", p.name))
            texts.append(f"{p.name.replace('_', ' ')}: {p.definition}")
    return _Terms(tuple(names), _embedder().embed(texts))


@lru_cache(maxsize=4096)
def _vector(text: str) -> Any:
    return _embedder().embed([text])[0]


def _mapped(c: Claim, text: str, params: ClaimReaderParams) -> Claim:
    """A structural claim that names no vocabulary term, mapped onto the nearest one: by the
    claim's own words or by the whole item's, whichever is closer (the small parser sometimes
    leaves a claim only a word or two)."""
    if c.status != "structural" or c.relation is not None:
        return c
    terms = _terms()
    sims = np.maximum(terms.vectors @ _vector(c.text), terms.vectors @ _vector(text))
    j = int(np.argmax(sims))
    if float(sims[j]) < params.map_min_cosine:
        # an act that maps onto no relation or mechanism ("the king married a princess")
        return replace(c, status="event", causal=False)
    kind, name = terms.names[j]
    return replace(c, relation=name, relation_kind=kind, similarity=round(float(sims[j]), 3))
