"""Consolidation: schemas from compared analogues, a healthy vocabulary, re-abstracted episodes.

Seed 000 §3 and §9 ("nightly consolidation"): comparing two analogues side by side induces a
schema that transfers better than either case alone (Gick & Holyoak 1983; Catrambone & Holyoak
1989; Gentner, Loewenstein & Thompson 2003; meta-analysis Alfieri, Nokes-Malach & Schunn 2013);
in LISA (Hummel & Holyoak 2003) schemas fall out of successful mappings. Here a consolidation pass
over one namespace of a :class:`~analogist.memory.sqlite.Memory`

1. **induces schemas**: every pair of live episodes is mapped with SME (Falkenhainer, Forbus &
   Gentner 1989); a pair *maps well* when the mapping's structural score covers at least
   ``min_pair_score`` of the **larger** of the two self-match scores (a symmetric, conservative
   share). The schema is the shared mapped structure — the first episode's relations and causal
   edges whose expressions the mapping pairs — rewritten over **generalised role tags** (a tag
   names the role's first structural position, e.g. ``DERIVES_FROM_1`` for the copy in
   ``derives_from(copy, source)``; a tag both episodes share is kept). An edge is ``observed``
   only when it is observed on both sides; an edge whose sign differs between the sides is left
   out. A pair the judge calls **contradictory** induces nothing: the judge's contradictions
   (:func:`analogist.judge.judge_mapping`) plus :func:`pair_contradictions`, which projects each
   side's causal edges and binary relations through the role mapping and flags one the other side
   states the other way round (reversed, of the opposite kind or sign, roles swapped) — the judge
   only sees such structure when SME happened to map the atoms involved, and an episode's
   reversed-edge decoy maps well otherwise. The schema's summary (its L1 and L3) is written from
   the schema's own relations and edges (predicate definitions from the vocabulary, generalised
   tags), never copied from the members' levels. Schemas with the same structure (the same
   relations and edges over the same generalised tags) are one schema whose members are the
   union. The schema is stored as a Signature
   (``kind: schema``) so that :class:`~analogist.retrieve.Retriever` maps it first
   (``_schema_hits``), with its member episodes, times used / verified (kept across runs) and
   ``meta`` (the pairs and scores it came from, the origin of each generalised tag);
2. **merges synonyms** in the store's ``vocab`` table: a used name that the vocabulary resolves to
   another declared name (a declared synonym), or a *proposed* name whose normalised form (lower
   case, ``_``/``-`` dropped, a plural ``s`` dropped per word) equals a declared or a more used
   proposed name of the same arity, is merged into it. The merge map records alias → canonical
   with the count moved; the canonical term's count becomes its own plus the alias's, the alias
   keeps status ``merged`` with count 0, so the total count is preserved. Stored episodes that use
   a merged *proposed* alias are rewritten to the canonical name (declared synonyms already
   resolve at compile time and are left as written);
3. reports **vocabulary health**: size (declared, proposed, merged), per-relation frequency, and
   proposed terms that no stored episode uses;
4. **re-abstracts** episodes that lack any of the levels L1–L3 with the configured encoder (the
   deterministic encoder by default): the text is the episode's L0, else its symptom, violated
   invariant and fix; missing L1 and L3 come from the encoder's output on that text; a missing L2
   is written from the stored structure itself (atoms and edges over the episode's own role tags,
   the same form the deterministic encoder writes) — departure: the encoder's L2 would be over
   the roles *it* drafted, not the stored ones. An episode with no text at all gets L2 only.

Everything computed is written in one transaction (:meth:`Memory.write_consolidation`): a failure
leaves the store as it was. Deterministic: same store, same result.

The package's rooms, in the order of the pass: :mod:`~analogist.consolidate.base` (parameters,
results, input checks), :mod:`~analogist.consolidate.schemas` (1),
:mod:`~analogist.consolidate.vocab` (2, 3), :mod:`~analogist.consolidate.reabstraction` (4) and
:mod:`~analogist.consolidate.run` (the pass).
"""

from __future__ import annotations

from analogist.consolidate.base import (
    ConsolidateParams,
    ConsolidationReport,
    InducedSchema,
    SchemaFit,
)
from analogist.consolidate.reabstraction import reabstract, structural_l2
from analogist.consolidate.run import consolidate
from analogist.consolidate.schemas import (
    induce_schema,
    induce_schemas,
    pair_contradictions,
    pair_score,
    schema_fit,
    schema_summary,
)
from analogist.consolidate.vocab import plan_vocabulary, vocabulary_health

__all__ = [
    "ConsolidateParams",
    "ConsolidationReport",
    "InducedSchema",
    "SchemaFit",
    "consolidate",
    "induce_schema",
    "induce_schemas",
    "pair_contradictions",
    "pair_score",
    "plan_vocabulary",
    "reabstract",
    "schema_summary",
    "schema_fit",
    "structural_l2",
    "vocabulary_health",
]
