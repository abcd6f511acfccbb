"""Consolidation's shared parts: its parameters, its results (an induced schema, a schema's fit,
the pass's report) and the input checks every step makes (see :mod:`analogist.consolidate`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from analogist.description import Description
from analogist.errors import AnalogistError
from analogist.params import bounded, check_bounds
from analogist.signature import Signature, compile_signature, validate_signature
from analogist.sme import SMEParams
from analogist.vocabulary import ProposedTermWarning, Vocabulary

WRITER = "analogist-consolidate"


@dataclass(frozen=True, slots=True)
class ConsolidateParams:
    """Settings of one consolidation pass (seed 000 §9; Gick & Holyoak 1983; Gentner,
    Loewenstein & Thompson 2003; SME: Falkenhainer, Forbus & Gentner 1989).

    Attributes:
        min_pair_score: a pair *maps well* when SME's score over the larger self-match score
            reaches this.
        min_schema_relations: fewest shared relations a schema must keep.
        min_schema_edges: fewest shared causal edges a schema must keep (a schema without a
            causal edge carries no mechanism).
        max_episodes: refuse namespaces larger than this (pairwise comparison is quadratic).
        map_threshold: normalised score (mapping score over the target's self-match score, as in
            retrieval) at or above which a schema *maps onto* a target (with the judge letting its
            conclusion or mechanism transfer); fixed in advance, see :func:`schema_fit`.
        merge_synonyms: run the vocabulary merge.
        rewrite_merged: rewrite stored episodes that use a merged proposed alias.
        reabstract: re-abstract episodes lacking levels.
        sme: the engine's parameters.
    """

    min_pair_score: float = bounded(0.5, lo=0.0, hi=1.0)
    min_schema_relations: int = bounded(2, lo=0, integer=True)
    min_schema_edges: int = bounded(1, lo=0, integer=True)
    max_episodes: int = bounded(2000, lo=0, integer=True)
    map_threshold: float = bounded(0.5, lo=0.0, hi=1.0)
    merge_synonyms: bool = True
    rewrite_merged: bool = True
    reabstract: bool = True
    sme: SMEParams = field(default_factory=SMEParams)

    def __post_init__(self) -> None:
        check_bounds(self)


@dataclass(frozen=True, slots=True)
class InducedSchema:
    """One induced schema: its Signature, member episode ids, the pairs (and their scores) it
    was induced from, and each generalised tag's origin (episode id → role tag)."""

    name: str
    signature: Signature
    members: tuple[str, ...]
    pairs: tuple[tuple[str, str, float], ...]
    role_origins: dict[str, dict[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "members": list(self.members),
                "pairs": [list(p) for p in self.pairs],
                "role_origins": {k: dict(v) for k, v in self.role_origins.items()},
                "signature": self.signature.to_data()}


@dataclass(frozen=True, slots=True)
class SchemaFit:
    """How a schema maps onto a target: the normalised score, the judge's verdict, and whether
    it *maps* by the stated rule."""

    normalized: float
    verdict: str
    maps: bool
    role_map: dict[str, str]


@dataclass
class ConsolidationReport:
    namespace: str
    episodes: int
    pairs_compared: int
    pairs_mapping_well: int
    schemas: list[InducedSchema]
    merges: list[dict[str, Any]]
    health: dict[str, Any]
    reabstracted: list[str]
    notes: list[str]
    written: dict[str, int] | None

    def to_json(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "episodes": self.episodes,
                "pairs_compared": self.pairs_compared,
                "pairs_mapping_well": self.pairs_mapping_well,
                "schemas": [s.to_json() for s in self.schemas], "merges": list(self.merges),
                "vocabulary_health": self.health, "reabstracted": list(self.reabstracted),
                "notes": list(self.notes), "written": self.written}

    def render(self) -> str:
        out = [f"consolidated namespace {self.namespace!r}: {self.episodes} episode(s), "
               f"{self.pairs_compared} pair(s) compared, {self.pairs_mapping_well} map well",
               f"schemas: {len(self.schemas)}"]
        for s in self.schemas:
            out.append(f"  {s.name}  members {', '.join(s.members)}  "
                       f"({len(s.signature.relations)} relations, "
                       f"{len(s.signature.causal_chain)} edges)")
        out.append(f"synonym merges: {len(self.merges)}")
        for m in self.merges:
            out.append(f"  {m['alias']} -> {m['canonical']} (count {m['count_moved']}; "
                       f"{m['reason']})")
        h = self.health
        out.append(f"vocabulary: {h['declared']} declared, {h['proposed']} proposed, "
                   f"{h['merged']} merged; {len(h['proposed_unused'])} proposed but unused")
        out.append(f"re-abstracted: {len(self.reabstracted)}")
        out.extend(f"note: {n}" for n in self.notes)
        return "\n".join(out)


def _compile(sig: Signature, vocab: Vocabulary) -> Description:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ProposedTermWarning)
        return compile_signature(sig, vocab)


def _sig(x: Any, field: str) -> Signature:
    if isinstance(x, Signature):
        return x
    if isinstance(x, dict):
        try:
            return validate_signature(x)
        except AnalogistError as e:
            raise AnalogistError(e.message, field=f"{field}.{e.field}" if e.field else field
                                 ) from None
    raise AnalogistError(f"expected a Signature or a mapping, got {type(x).__name__}",
                         field=field)
