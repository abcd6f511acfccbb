"""Pinned gold sets for retrieval over a store (seed 002, "The gold set", adapted to analogy).

A gold set is derived from one namespace of a :class:`~analogist.memory.sqlite.Memory` and
written as JSON. Ground truth is a list of **episode ids** (never a pattern), and every query
carries a ``derivation`` string saying how its answer was obtained. Categories:

* ``exact_rare`` — mined: words with document frequency 1 over the namespace's text fields; the
  single episode holding them is the only answer (seed 002: df = 1 tokens).
* ``phrase`` — mined: a verbatim word n-gram found (case-insensitively) in 2 to
  ``max_phrase_matches`` episodes; the matching set is the answer key (seed 002 rejects phrases
  matching more than 25 nodes; the bound is a parameter here because a casebook is small).
* ``paraphrase`` — hand-written query texts locked to a target id (given to the builder); the
  build proves that no content word of the query occurs in any text field of the target, and a
  leak fails the build.
* ``associative`` — derived from structural edges (shared schema, equal WL fingerprint,
  supersession): the query is made of one episode's distinctive words, the answers are its
  edge-neighbours, and neighbours sharing any query word are dropped, so the only route from the
  query to an answer is seed → edge → neighbour.
* ``nonsense`` — control: made-up words verified absent from the namespace; the right answer is
  nothing ("no match").
* ``superseded`` — derived from supersession links: the query is made of words the stale episode
  and its correction share; the correction must be returned and rank above the stale episode.
* ``structural`` — new for analogy, derived from the store's own structure as seed 002 derives
  its associative category from graph edges: the query is a stored episode's whole Signature
  (the episode itself excluded from the ranking; a text retriever sees its narrative); the
  answers are the live episodes the store itself makes plausible analogues of it — SME maps the
  pair well (the mapping covers at least ``min_structural_score`` of the larger self-match, as
  :mod:`analogist.consolidate` rates pairs), their concrete narratives (L0 plus surface
  entities) overlap little (content-word Jaccard at most ``max_surface_overlap``: "far
  analogues"; the abstract levels and role descriptions of one mechanism legitimately share
  words, so they are not part of this check), and the judge finds no contradiction between
  them (its contradictions plus :func:`analogist.consolidate.pair_contradictions`, so a
  reversed-edge decoy is not an answer). Every answer's score and overlap are recorded in the
  query's derivation. The fused and structural retrievers rank their shortlist by SME, so their
  advantage on this category is expected by construction (as the associative retriever's is on
  ``associative``); the category measures whether retrieval *reaches* the analogues a text
  retriever cannot.

Departures from seed 002: ids are episode ids; the builder mines associative queries from the
store's structural edges (there is no value hub); ``structural`` is an added category; the
category sizes are capped by :class:`GoldSetParams` and chosen deterministically (sorted ids, a
seeded generator for nonsense words).

Content words: lower-case alphabetic runs of at least 3 letters that are not in a short stop list,
with a plural ``s`` folded (``ledgers`` = ``ledger``). Text fields of an episode: its role tags and
descriptions, violated invariant, symptom, fix operator, levels L0–L3, surface domain and
entities.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError
from analogist.io import json_depth_check, read_text
from analogist.params import bounded, check_bounds

FORMAT = "analogist-goldset/1"
CATEGORIES = ("exact_rare", "phrase", "paraphrase", "associative", "nonsense", "superseded",
              "structural")

_STOP_TEXT = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers him his how i if in into is it its itself just me more most my
no nor not now of off on once only or other our out over own same she should so some such than
that the their them then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yet via per
one two three upon onto
"""
STOPWORDS = frozenset(_STOP_TEXT.split())

_WORD = re.compile(r"[a-z]+")


class GoldSetError(AnalogistError):
    """A gold set that cannot be built, read or trusted."""


def _fold(w: str) -> str:
    return w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w


def content_words(text: str) -> set[str]:
    """The folded content words of ``text`` (see the module docstring)."""
    return {_fold(w) for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in STOPWORDS}


def raw_words(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` in order (for phrase mining)."""
    return _WORD.findall(text.lower())


def episode_text(data: Mapping[str, Any]) -> str:
    """Every text field of a stored signature's JSON, joined (see the module docstring)."""
    parts: list[str] = []
    for tag, desc in (data.get("roles") or {}).items():
        parts += [str(tag), str(desc)]
    for key in ("violated_invariant", "symptom", "fix_operator"):
        if data.get(key):
            parts.append(str(data[key]))
    for lv in ("L0", "L1", "L2", "L3"):
        v = (data.get("levels") or {}).get(lv)
        if v:
            parts.append(str(v))
    surface = data.get("surface") or {}
    if surface.get("domain"):
        parts.append(str(surface["domain"]).replace("_", " "))
    parts += [str(x) for x in surface.get("entities") or []]
    return "\n".join(parts)


def narrative_text(data: Mapping[str, Any]) -> str:
    """An episode's concrete surface text: the L0 narrative plus the surface entity names (what a
    surface-only memory embeds; the same representation as :mod:`analogist.bench.loo`)."""
    levels = data.get("levels") or {}
    surface = data.get("surface") or {}
    return " ".join([str(levels.get("L0") or ""), *(str(x) for x in surface.get("entities")
                                                      or [])]).strip()


@dataclass(frozen=True, slots=True)
class GoldSetParams:
    """Gold-set builder settings (seed 002, "The gold set — 38 queries").

    Attributes:
        n_exact_rare, n_phrase, n_associative, n_nonsense, n_superseded, n_structural: caps per
            mined category (taken in sorted-id order, so the choice is deterministic).
        rare_words_per_query: df = 1 words used in one exact_rare query.
        min_rare_len: shortest word accepted as a rare token.
        phrase_len: words in a mined phrase.
        max_phrase_matches: a phrase matching more episodes is too diffuse (seed 002 uses 25 on a
            78,768-node corpus).
        assoc_words: distinctive words in an associative / superseded query.
        seed: the random seed for nonsense words.
        min_structural_score: a structural answer's SME mapping covers at least this share of
            the larger of the two self-match scores (consolidation's ``min_pair_score``).
        max_surface_overlap: a structural answer's narrative shares at most this Jaccard share
            of content words with the query's narrative.
    """

    n_exact_rare: int = bounded(8, lo=0, integer=True)
    n_phrase: int = bounded(8, lo=0, integer=True)
    n_associative: int = bounded(8, lo=0, integer=True)
    n_nonsense: int = bounded(3, lo=0, integer=True)
    n_superseded: int = bounded(3, lo=0, integer=True)
    n_structural: int = bounded(8, lo=0, integer=True)
    rare_words_per_query: int = bounded(2, lo=1, integer=True)
    min_rare_len: int = bounded(5, lo=1, integer=True)
    phrase_len: int = bounded(2, lo=1, integer=True)
    max_phrase_matches: int = bounded(6, lo=2, integer=True)
    assoc_words: int = bounded(3, lo=1, integer=True)
    seed: int = bounded(0, lo=0, integer=True)
    min_structural_score: float = bounded(0.5, lo=0.0, hi=1.0)
    max_surface_overlap: float = bounded(0.1, lo=0.0, hi=1.0)

    def __post_init__(self) -> None:
        check_bounds(self, GoldSetError)


@dataclass(frozen=True, slots=True)
class GoldQuery:
    """One pinned query. ``text`` is always present (what a text retriever sees, and what the
    encoder turns into a target Signature); ``signature`` is the whole target Signature for
    structural queries; ``exclude`` are episode ids dropped from the ranking before scoring;
    ``stale`` the superseded episode a ``superseded`` query's answer must outrank; ``check``
    what ``--check`` re-verifies."""

    id: str
    category: str
    text: str
    expected: tuple[str, ...]
    derivation: str
    signature: dict[str, Any] | None = None
    exclude: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    check: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "category": self.category, "text": self.text,
                "expected": list(self.expected), "derivation": self.derivation,
                "signature": self.signature, "exclude": list(self.exclude),
                "stale": list(self.stale), "check": dict(self.check)}


@dataclass(frozen=True, slots=True)
class GoldSet:
    namespace: str
    store_fingerprint: str
    episodes: int
    params: GoldSetParams
    queries: tuple[GoldQuery, ...]

    def counts(self) -> dict[str, int]:
        out = {c: 0 for c in CATEGORIES}
        for q in self.queries:
            out[q.category] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "namespace": self.namespace,
                "store_fingerprint": self.store_fingerprint, "episodes": self.episodes,
                "params": asdict(self.params), "counts": self.counts(),
                "queries": [q.to_json() for q in self.queries]}


# -- the corpus view ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Corpus:
    """What the builder and the checker read from a namespace: episodes by id, their text, and
    the structural edges."""

    data: dict[str, dict[str, Any]]            # episode id -> signature JSON
    superseded_by: dict[str, str]              # stale episode id -> correction episode id
    fingerprint: dict[str, str]                # episode id -> WL fingerprint
    schema_members: dict[str, tuple[str, ...]]  # schema name -> member episode ids
    fingerprint_hash: str
    _text: dict[str, str] = field(default_factory=dict)
    _words: dict[str, set[str]] = field(default_factory=dict)

    @property
    def live(self) -> list[str]:
        return sorted(e for e in self.data if e not in self.superseded_by)

    def text(self, eid: str) -> str:
        t = self._text.get(eid)
        if t is None:
            t = self._text[eid] = episode_text(self.data[eid])
        return t

    def words(self, eid: str) -> set[str]:
        w = self._words.get(eid)
        if w is None:
            w = self._words[eid] = content_words(self.text(eid))
        return w

    def surface_form(self, eid: str, folded: str) -> str:
        """The first word form in ``eid``'s text (alphabetically) that folds to ``folded``."""
        forms = sorted({w for w in _WORD.findall(self.text(eid).lower()) if _fold(w) == folded})
        return forms[0] if forms else folded

    def neighbours(self, eid: str) -> dict[str, str]:
        """Structural edge neighbours of ``eid`` → the edge kind that links them."""
        out: dict[str, str] = {}
        fp = self.fingerprint.get(eid)
        if fp is not None:
            for o, f in self.fingerprint.items():
                if f == fp and o != eid:
                    out.setdefault(o, "fingerprint")
        for name, members in self.schema_members.items():
            if eid in members:
                for o in members:
                    if o != eid:
                        out.setdefault(o, f"schema:{name}")
        for a, b in self.superseded_by.items():
            if a == eid:
                out.setdefault(b, "supersession")
            if b == eid:
                out.setdefault(a, "supersession")
        return out


def read_corpus(memory: Any, namespace: str = "default") -> Corpus:
    """Load one namespace of ``memory`` (every episode, superseded ones included)."""
    eps = memory.list(namespace, include_superseded=True)
    data: dict[str, dict[str, Any]] = {}
    by_row: dict[int, str] = {}
    h = hashlib.sha256()
    for ep in eps:
        d = ep.signature.to_data()
        data[ep.episode_id] = d
        by_row[ep.id] = ep.episode_id
        h.update(ep.episode_id.encode())
        h.update(json.dumps(d, sort_keys=True).encode())
    sup = {by_row[a]: by_row[b] for a, b in memory.superseded(namespace).items()
           if a in by_row and b in by_row}
    fps: dict[str, str] = {}
    for fp, members in memory.fingerprint_groups(namespace).items():
        for sid in members:
            if sid in by_row:
                fps[by_row[sid]] = fp
    schemas: dict[str, tuple[str, ...]] = {}
    for row in memory.schemas(namespace):
        schemas[str(row["name"])] = tuple(by_row[int(m)] for m in row.get("members") or []
                                          if int(m) in by_row)
    for a, b in sorted(sup.items()):
        h.update(f"sup:{a}>{b}".encode())
    for name, members in sorted(schemas.items()):
        h.update(f"schema:{name}:{','.join(members)}".encode())
    return Corpus(data, sup, fps, schemas, h.hexdigest())


def _doc_freq(corpus: Corpus) -> dict[str, set[str]]:
    where: dict[str, set[str]] = {}
    for eid in corpus.data:
        for w in corpus.words(eid):
            where.setdefault(w, set()).add(eid)
    return where


def _phrase_index(corpus: Corpus, n: int) -> dict[str, set[str]]:
    where: dict[str, set[str]] = {}
    for eid in corpus.data:
        toks = raw_words(corpus.text(eid))
        for i in range(len(toks) - n + 1):
            gram = toks[i:i + n]
            if gram[0] in STOPWORDS or gram[-1] in STOPWORDS or any(len(w) < 3 for w in gram):
                continue
            where.setdefault(" ".join(gram), set()).add(eid)
    return where


def phrase_matches(corpus: Corpus, phrase: str) -> set[str]:
    """Episodes whose text fields hold ``phrase`` verbatim (case-insensitive, on word
    boundaries)."""
    pat = re.compile(r"(?<![a-z])" + r"[^a-z]+".join(map(re.escape, phrase.split())) +
                     r"(?![a-z])")
    return {eid for eid in corpus.data if pat.search(corpus.text(eid).lower())}


def _distinctive(corpus: Corpus, eid: str, df: Mapping[str, set[str]], n: int,
                 avoid: Iterable[str] = (), allow: Iterable[str] = ()) -> list[str]:
    """Up to ``n`` words of ``eid`` with the lowest document frequency (ties by the word), not in
    any episode of ``avoid`` and found in no other episode except those in ``allow``."""
    banned: set[str] = set()
    for o in avoid:
        banned |= corpus.words(o)
    allowed = set(allow) | {eid}
    cands = [w for w in corpus.words(eid) if w not in banned and len(w) >= 4
             and df[w] <= allowed]
    cands.sort(key=lambda w: (len(df[w]), w))
    return cands[:n]


def _nonsense_word(rng: random.Random) -> str:
    cons, vow = "bcdfghjklmnpqrstvwxz", "aeiou"
    return "".join(rng.choice(cons) + rng.choice(vow) for _ in range(3)) + rng.choice(cons)


def surface_overlap(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """Jaccard share of content words between two episodes' narratives (L0 plus entities)."""
    wa, wb = content_words(narrative_text(a)), content_words(narrative_text(b))
    return len(wa & wb) / len(wa | wb) if wa or wb else 0.0


class _PairRater:
    """Rates stored pairs as structural analogues (see ``structural`` in the module docstring),
    compiling each episode once."""

    def __init__(self, corpus: Corpus) -> None:
        # imported here: the runner imports this module under other builds of analogist (see
        # .refs), which need not have these; only building and checking a gold set use them
        from analogist.consolidate import pair_contradictions, pair_score
        from analogist.judge import judge_mapping, self_score
        from analogist.signature import (
            compile_signature,
            default_signature_vocabulary,
            validate_signature,
        )
        from analogist.sme import match

        self._fns = (pair_contradictions, pair_score, judge_mapping, self_score, match)
        self.corpus = corpus
        self.vocab = default_signature_vocabulary()
        self._validate, self._compile_fn = validate_signature, compile_signature
        self._c: dict[str, tuple[Any, Any, float, frozenset[str]]] = {}

    def _compiled(self, eid: str) -> tuple[Any, Any, float, frozenset[str]]:
        got = self._c.get(eid)
        if got is None:
            sig = self._validate(self.corpus.data[eid], source=eid)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # proposed terms: compiled as written
                desc = self._compile_fn(sig, self.vocab)
            preds = frozenset(self.vocab.canonical(a.predicate) for _f, a in sig.atoms())
            got = self._c[eid] = (sig, desc, self._fns[3](desc), preds)
        return got

    def rate(self, src: str, other: str) -> tuple[float, list[str]]:
        """(SME share of the larger self-match, contradictions either way) for src -> other."""
        pair_contradictions, pair_score, judge_mapping, _self_score, match = self._fns
        sa, da, xa, pa = self._compiled(src)
        sb, db, xb, pb = self._compiled(other)
        if not pa & pb:
            return 0.0, []
        res = match(da, db)
        if res.best is None:
            return 0.0, []
        rep = judge_mapping(sa, sb, da, db, res, source_self_score=xa)
        bad = [*rep.contradictions, *pair_contradictions(sa, sb, dict(rep.role_map), self.vocab)]
        return pair_score(res.best.score, xa, xb), list(dict.fromkeys(bad))

    def answers(self, src: str, p: GoldSetParams) -> dict[str, tuple[float, float]]:
        """Live episodes that are structural analogues of ``src`` -> (score, surface overlap)."""
        out: dict[str, tuple[float, float]] = {}
        for o in self.corpus.live:
            if o == src or self.corpus.data[o].get("kind") == "schema":
                continue
            ov = surface_overlap(self.corpus.data[src], self.corpus.data[o])
            if ov > p.max_surface_overlap:
                continue
            score, bad = self.rate(src, o)
            if score >= p.min_structural_score and not bad:
                out[o] = (round(score, 4), round(ov, 4))
        return out


# -- build ---------------------------------------------------------------------------------------
def _paraphrase_queries(corpus: Corpus, namespace: str,
                        paraphrases: Sequence[Mapping[str, Any]]) -> list[GoldQuery]:
    """The hand-written paraphrase queries, each machine-checked (a live target, no content
    word shared with it)."""
    out: list[GoldQuery] = []
    for i, rec in enumerate(paraphrases):
        where = f"paraphrases[{i}]"
        if not isinstance(rec, Mapping) or not isinstance(rec.get("target"), str) or \
                not isinstance(rec.get("text"), str) or not rec["text"].strip():
            raise GoldSetError("expected {target: episode id, text: query text}", field=where)
        tgt, text = rec["target"], rec["text"].strip()
        if tgt not in corpus.data or tgt in corpus.superseded_by:
            raise GoldSetError(f"target {tgt!r} is not a live episode of namespace "
                               f"{namespace!r}", field=f"{where}.target")
        leak = sorted(content_words(text) & corpus.words(tgt))
        if leak:
            raise GoldSetError(f"paraphrase leaks target words {leak} into the query (it "
                               "must share no content word with the target)",
                               field=f"{where}.text")
        if not content_words(text):
            raise GoldSetError("the query has no content word", field=f"{where}.text")
        qid = str(rec.get("id") or f"paraphrase-{i + 1:02d}")
        out.append(GoldQuery(
            qid, "paraphrase", text, (tgt,),
            f"hand-written, locked to {tgt}; machine-checked: no content word of the query "
            "occurs in the target's text fields", check={"target": tgt}))
    return out


def _exact_rare_queries(corpus: Corpus, live: list[str], df: dict[str, set[str]], p: GoldSetParams,
                        namespace: str) -> list[GoldQuery]:
    """Queries of words that occur in one episode only (document frequency 1)."""
    out: list[GoldQuery] = []
    n = 0
    for eid in live:
        if n >= p.n_exact_rare:
            break
        rare = sorted(w for w in corpus.words(eid) if df[w] == {eid} and len(w) >= p.min_rare_len
                      and w.isalpha())
        if len(rare) < p.rare_words_per_query:
            continue
        words = rare[:p.rare_words_per_query]
        n += 1
        out.append(GoldQuery(
            f"exact_rare-{n:02d}", "exact_rare",
            " ".join(corpus.surface_form(eid, w) for w in words), (eid,),
            f"words {words} have document frequency 1 in namespace {namespace!r}; their only "
            f"episode is {eid}", check={"words": words}))
    return out


def _phrase_queries(corpus: Corpus, p: GoldSetParams) -> list[GoldQuery]:
    """Verbatim phrases that occur in a few live episodes (each set of episodes once)."""
    out: list[GoldQuery] = []
    grams = _phrase_index(corpus, p.phrase_len)
    n = 0
    used: set[frozenset[str]] = set()
    for gram in sorted(grams, key=lambda g: (-len(grams[g]), g)):
        if n >= p.n_phrase:
            break
        if not 2 <= len(grams[gram]) <= p.max_phrase_matches:
            continue
        where = phrase_matches(corpus, gram)
        live_where = {e for e in where if e not in corpus.superseded_by}
        if not 2 <= len(where) <= p.max_phrase_matches or len(live_where) != len(where):
            continue
        key = frozenset(where)
        if key in used:
            continue
        used.add(key)
        n += 1
        out.append(GoldQuery(
            f"phrase-{n:02d}", "phrase", gram, tuple(sorted(where)),
            f"verbatim case-insensitive scan: {gram!r} occurs in {len(where)} episodes "
            f"(at most {p.max_phrase_matches} allowed)", check={"phrase": gram}))
    return out


def _associative_queries(corpus: Corpus, live: list[str], df: dict[str, set[str]],
                         p: GoldSetParams) -> list[GoldQuery]:
    """An episode's distinctive words, answered by its structural neighbours sharing none."""
    out: list[GoldQuery] = []
    n = 0
    for eid in live:
        if n >= p.n_associative:
            break
        nb = {o: k for o, k in corpus.neighbours(eid).items()
              if o not in corpus.superseded_by and o in corpus.data}
        if not nb:
            continue
        words = _distinctive(corpus, eid, df, p.assoc_words)
        if len(words) < p.assoc_words:
            continue
        ws = set(words)
        answers = sorted(o for o in nb if not (corpus.words(o) & ws))
        if not answers:
            continue
        n += 1
        kinds = sorted({nb[o] for o in answers})
        out.append(GoldQuery(
            f"associative-{n:02d}", "associative",
            " ".join(corpus.surface_form(eid, w) for w in words), tuple(answers),
            f"query = distinctive words of {eid}; answers = its structural neighbours "
            f"({', '.join(kinds)}) sharing no query word; only route is {eid} -> edge -> "
            "neighbour", check={"seed": eid, "words": words}))
    return out


def _nonsense_queries(df: dict[str, set[str]], p: GoldSetParams) -> list[GoldQuery]:
    """Control queries of made-up words absent from every episode (answer: no match)."""
    out: list[GoldQuery] = []
    rng = random.Random(p.seed)
    vocab = set(df)
    for i in range(p.n_nonsense):
        words: list[str] = []
        while len(words) < 3:
            w = _nonsense_word(rng)
            if w not in vocab and _fold(w) not in vocab and w not in words:
                words.append(w)
        out.append(GoldQuery(
            f"nonsense-{i + 1:02d}", "nonsense", " ".join(words), (),
            "control: made-up words verified absent from every episode; the right answer is "
            "no match", check={"words": words}))
    return out


def _superseded_queries(corpus: Corpus, df: dict[str, set[str]],
                        p: GoldSetParams) -> list[GoldQuery]:
    """Words a superseded episode shares with its correction, answered by the correction."""
    out: list[GoldQuery] = []
    n = 0
    for stale, corr in sorted(corpus.superseded_by.items()):
        if n >= p.n_superseded:
            break
        if corr in corpus.superseded_by:
            continue
        words = _distinctive(corpus, stale, df, p.assoc_words, allow=[corr])
        words = [w for w in words if w in corpus.words(corr)]
        if not words:
            continue
        n += 1
        out.append(GoldQuery(
            f"superseded-{n:02d}", "superseded",
            " ".join(corpus.surface_form(stale, w) for w in words), (corr,),
            f"{stale} is superseded by {corr}; the query uses words both share; the correction "
            "must be returned and outrank the stale episode", stale=(stale,),
            check={"stale": stale, "words": words}))
    return out


def _structural_queries(corpus: Corpus, live: list[str], p: GoldSetParams,
                        progress: Callable[[int, int], None] | None) -> list[GoldQuery]:
    """Whole signatures answered by the live episodes the store makes plausible analogues."""
    out: list[GoldQuery] = []
    n = 0
    rater = _PairRater(corpus) if p.n_structural else None
    for examined, eid in enumerate(live):
        if progress is not None:
            progress(examined, len(live))
        if n >= p.n_structural or rater is None:
            break
        if corpus.data[eid].get("kind") == "schema":
            continue
        found = rater.answers(eid, p)
        if not found:
            continue
        n += 1
        answers = tuple(sorted(found))
        rated = ", ".join(f"{o} {found[o][0]:.2f}/{found[o][1]:.2f}" for o in answers)
        out.append(GoldQuery(
            f"structural-{n:02d}", "structural", narrative_text(corpus.data[eid]), answers,
            f"query = the whole signature of {eid} (excluded from the ranking); answers = the "
            f"live episodes the store makes plausible analogues of it: SME covers at least "
            f"{p.min_structural_score:.2f} of the larger self-match, narrative word overlap "
            f"(Jaccard) at most {p.max_surface_overlap:.2f}, no contradiction found by the "
            f"judge either way (answer score/overlap: {rated})",
            signature=corpus.data[eid], exclude=(eid,),
            check={"source": eid, "answers": {o: list(found[o]) for o in answers}}))
    return out


def build_goldset(memory: Any, namespace: str = "default", *,
                  paraphrases: Sequence[Mapping[str, Any]] = (),
                  params: GoldSetParams | None = None,
                  progress: Callable[[int, int], None] | None = None) -> GoldSet:
    """Derive a gold set from one namespace (see the module docstring).

    ``paraphrases``: hand-written ``{"target": episode_id, "text": query}`` records (optional
    ``"id"``). Each is machine-checked; a query sharing a content word with its target, or naming
    a target that is not a live episode, fails the build with :class:`GoldSetError`.
    ``progress`` (optional) is called with (episodes examined, live episodes) while the
    structural queries are mined, the long step (each examined episode is mapped onto every
    other).
    """
    p = params or GoldSetParams()
    corpus = read_corpus(memory, namespace)
    if not corpus.data:
        raise GoldSetError(f"namespace {namespace!r} holds no episodes", field="namespace")
    df = _doc_freq(corpus)
    live = corpus.live
    random.Random(p.seed).shuffle(live)   # spread mined queries over the corpus, reproducibly
    para_queries = _paraphrase_queries(corpus, namespace, paraphrases)
    queries: list[GoldQuery] = [*_exact_rare_queries(corpus, live, df, p, namespace),
                                *_phrase_queries(corpus, p), *para_queries,
                                *_associative_queries(corpus, live, df, p),
                                *_nonsense_queries(df, p), *_superseded_queries(corpus, df, p),
                                *_structural_queries(corpus, live, p, progress)]
    if progress is not None:
        progress(len(live), len(live))
    return GoldSet(namespace, corpus.fingerprint_hash, len(corpus.data), p, tuple(queries))


# -- check ---------------------------------------------------------------------------------------
def check_goldset(gold: GoldSet, memory: Any, namespace: str | None = None) -> list[str]:
    """Re-validate every query against the store; returns one problem line per query that
    became unwinnable or leaky (empty when the gold set still holds)."""
    ns = namespace or gold.namespace
    corpus = read_corpus(memory, ns)
    df = _doc_freq(corpus)
    vocab = set(df)
    problems: list[str] = []
    rater: _PairRater | None = None

    def bad(q: GoldQuery, why: str) -> None:
        problems.append(f"{q.id} ({q.category}): {why}")

    for q in gold.queries:
        missing = [e for e in (*q.expected, *q.exclude, *q.stale) if e not in corpus.data]
        if missing:
            bad(q, f"episode(s) {missing} no longer in namespace {ns!r}")
            continue
        stale_answers = [e for e in q.expected if e in corpus.superseded_by]
        if stale_answers:
            bad(q, f"answer(s) {stale_answers} are now superseded")
            continue
        c = q.check
        if q.category == "exact_rare":
            for w in c.get("words", []):
                if df.get(w) != {q.expected[0]}:
                    bad(q, f"word {w!r} no longer has document frequency 1 in {q.expected[0]}")
                    break
        elif q.category == "phrase":
            now = phrase_matches(corpus, c.get("phrase", q.text))
            if now != set(q.expected):
                bad(q, f"phrase now matches {sorted(now)}, not the pinned answer set")
        elif q.category == "paraphrase":
            leak = sorted(content_words(q.text) & corpus.words(q.expected[0]))
            if leak:
                bad(q, f"paraphrase leaks {leak} into the target")
        elif q.category == "associative":
            seed = c.get("seed")
            if seed not in corpus.data:
                bad(q, f"seed episode {seed!r} is gone")
                continue
            nb = corpus.neighbours(seed)
            lost = [e for e in q.expected if e not in nb]
            ws = set(c.get("words", []))
            shared = [e for e in q.expected if corpus.words(e) & ws]
            if lost:
                bad(q, f"answers {lost} lost their structural edge to {seed}")
            elif shared:
                bad(q, f"answers {shared} now share a query word")
        elif q.category == "nonsense":
            present = [w for w in c.get("words", []) if w in vocab]
            if present:
                bad(q, f"made-up words {present} now occur in the corpus")
        elif q.category == "superseded":
            stale = c.get("stale")
            if corpus.superseded_by.get(stale) != q.expected[0]:
                bad(q, f"{stale} is no longer superseded by {q.expected[0]}")
        elif q.category == "structural":
            src = c.get("source")
            if src not in corpus.data:
                bad(q, f"source episode {src!r} is gone")
                continue
            if rater is None:
                rater = _PairRater(corpus)
            lost = []
            for e in q.expected:
                ov = surface_overlap(q.signature or corpus.data[src], corpus.data[e])
                score, why = rater.rate(src, e)
                if ov > gold.params.max_surface_overlap:
                    lost.append(f"{e} (narrative overlap {ov:.2f})")
                elif why:
                    lost.append(f"{e} (contradicts: {why[0]})")
                elif score < gold.params.min_structural_score:
                    lost.append(f"{e} (SME share {score:.2f})")
            if lost:
                bad(q, f"answers no longer structural analogues of {src}: {'; '.join(lost)}"
                    [:500])
    return problems


# -- I/O -----------------------------------------------------------------------------------------
def _req(d: Mapping[str, Any], key: str, typ: type | tuple[type, ...], where: str,
         source: str) -> Any:
    if key not in d:
        raise GoldSetError(f"missing field {key!r}", source=source, field=f"{where}.{key}"
                           if where else key)
    v = d[key]
    if not isinstance(v, typ) or isinstance(v, bool) and typ is not bool:
        raise GoldSetError(f"field {key!r} has the wrong type ({type(v).__name__})",
                           source=source, field=f"{where}.{key}" if where else key)
    return v


def _ids(v: Any, where: str, source: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise GoldSetError("expected a list of episode ids", source=source, field=where)
    return tuple(v)


def goldset_from_json(data: Any, source: str = "<gold set>") -> GoldSet:
    """Validate and load a gold set's JSON (the inverse of :meth:`GoldSet.to_json`)."""
    if not isinstance(data, dict):
        raise GoldSetError("expected a JSON object", source=source)
    if data.get("format") != FORMAT:
        raise GoldSetError(f"format must be {FORMAT!r}, got {data.get('format')!r}",
                           source=source, field="format")
    ns = _req(data, "namespace", str, "", source)
    fp = _req(data, "store_fingerprint", str, "", source)
    eps = _req(data, "episodes", int, "", source)
    raw_params = _req(data, "params", dict, "", source)
    try:
        params = GoldSetParams(**raw_params)
    except TypeError as e:
        raise GoldSetError(f"bad params: {e}", source=source, field="params") from None
    qs = _req(data, "queries", list, "", source)
    out: list[GoldQuery] = []
    seen: set[str] = set()
    for i, q in enumerate(qs):
        w = f"queries[{i}]"
        if not isinstance(q, dict):
            raise GoldSetError("expected an object", source=source, field=w)
        qid = _req(q, "id", str, w, source)
        if qid in seen:
            raise GoldSetError(f"query id {qid!r} repeats", source=source, field=f"{w}.id")
        seen.add(qid)
        cat = _req(q, "category", str, w, source)
        if cat not in CATEGORIES:
            raise GoldSetError(f"category must be one of {', '.join(CATEGORIES)}, got {cat!r}",
                               source=source, field=f"{w}.category")
        text = _req(q, "text", str, w, source)
        expected = _ids(q.get("expected"), f"{w}.expected", source)
        if cat != "nonsense" and not expected:
            raise GoldSetError("expected must name at least one episode id", source=source,
                               field=f"{w}.expected")
        if cat == "nonsense" and expected:
            raise GoldSetError("a nonsense query expects no episode", source=source,
                               field=f"{w}.expected")
        sig = q.get("signature")
        if sig is not None and not isinstance(sig, dict):
            raise GoldSetError("signature must be an object or null", source=source,
                               field=f"{w}.signature")
        if not text.strip() and sig is None:
            raise GoldSetError("a query needs text or a signature", source=source,
                               field=f"{w}.text")
        chk = q.get("check") or {}
        if not isinstance(chk, dict):
            raise GoldSetError("check must be an object", source=source, field=f"{w}.check")
        out.append(GoldQuery(qid, cat, text, expected, _req(q, "derivation", str, w, source),
                             sig, _ids(q.get("exclude", []), f"{w}.exclude", source),
                             _ids(q.get("stale", []), f"{w}.stale", source), chk))
    if not out:
        raise GoldSetError("the gold set has no queries", source=source, field="queries")
    return GoldSet(ns, fp, eps, params, tuple(out))


def read_json_file(path: str | Path, *, error: type[AnalogistError] = AnalogistError) -> Any:
    """Parse a harness JSON file (gold set or run result) read through
    :func:`analogist.io.read_text` (size cap, UTF-8, no NUL) and
    :func:`analogist.io.json_depth_check` (nesting limit); failures raise ``error`` naming the
    file (and the line for malformed or too deeply nested JSON)."""
    p = Path(path)
    try:
        text = read_text(p)
        json_depth_check(text, source=str(p))
    except AnalogistError as e:
        raise error(e.message, source=str(p), line=e.line) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"not JSON: {e.msg}", source=str(p), line=e.lineno) from None


def load_goldset(path: str | Path) -> GoldSet:
    return goldset_from_json(read_json_file(path, error=GoldSetError), source=str(path))


def save_goldset(gold: GoldSet, path: str | Path) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(gold.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
