"""Reading English claims: each predicate of the spaCy parse with its arguments, negation,
antecedents and causal links (see :mod:`analogist.safeguard.claims`)."""

from __future__ import annotations

from typing import Any

from analogist.encode.deterministic import load_nlp
from analogist.safeguard.claims.model import Claim
from analogist.safeguard.claims.words import (
    _ARG_PREPS,
    _CASE_WORDS,
    _CAUSAL_MARKS,
    _HAS_VERBS,
    _NONCAUSAL_VERBS,
    _PLACEHOLDER_NOUNS,
    _PRONOUNS,
    _RELATIVE,
    _SURFACE_VERBS,
    _TIME_NOUNS,
    _TOPIC_VERBS,
    _lang,
)
from analogist.safeguard.lexicon import _SURFACE_PAT, Concept, concepts_in


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

