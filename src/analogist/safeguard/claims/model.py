"""A claim and the claim reader's parameters (see :mod:`analogist.safeguard.claims`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from analogist.params import bounded, check_bounds
from analogist.safeguard.lexicon import Concept

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

