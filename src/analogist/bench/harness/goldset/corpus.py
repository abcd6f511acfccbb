"""The corpus view: what the builder and the checker read from a namespace (episodes, their text,
the structural edges), the word and phrase indices over it, and the rater of structural pairs
(see :mod:`analogist.bench.harness.goldset`; "the module docstring" below is that package's)."""

from __future__ import annotations

import hashlib
import json
import random
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .model import (
    _WORD,
    STOPWORDS,
    GoldSetParams,
    _fold,
    content_words,
    episode_text,
    narrative_text,
    raw_words,
)


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
