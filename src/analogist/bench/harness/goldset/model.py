"""The gold set's records (its parameters, a query, the set and its JSON form), its categories and
the content words every step counts (see :mod:`analogist.bench.harness.goldset`; "the module
docstring" below is that package's)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from analogist.errors import AnalogistError
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
