"""The consolidation pass over one namespace of a store: vocabulary, re-abstraction, schemas,
written in one transaction (:mod:`analogist.consolidate`; "the module docstring" below is that
package's)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from analogist.consolidate.base import WRITER, ConsolidateParams, ConsolidationReport
from analogist.consolidate.reabstraction import reabstract
from analogist.consolidate.schemas import induce_schemas
from analogist.consolidate.vocab import _rename, plan_vocabulary, vocabulary_health
from analogist.errors import AnalogistError
from analogist.memory.sqlite import Memory
from analogist.signature import Signature, default_signature_vocabulary
from analogist.vocabulary import Vocabulary


def consolidate(memory: Memory, namespace: str = "default", *,
                vocab: Vocabulary | None = None, params: ConsolidateParams | None = None,
                encoder: Any = "deterministic", dry_run: bool = False,
                cache: dict[tuple[str, str], Any] | None = None,
                progress: Callable[[int, int], None] | None = None) -> ConsolidationReport:
    """One consolidation pass over ``namespace`` (see the module docstring).

    ``encoder``: ``"deterministic"`` (default; a :class:`~analogist.encode.deterministic.
    DeterministicEncoder` is made only when an episode lacks levels), any object with
    ``encode(text, episode_id=, domain=)``, or None. ``dry_run`` computes without writing.
    ``progress`` is passed to :func:`induce_schemas` (pairs compared, pairs in all).
    """
    params = params or ConsolidateParams()
    if not isinstance(params, ConsolidateParams):
        raise AnalogistError("params must be ConsolidateParams", field="params")
    vocab = vocab if vocab is not None else default_signature_vocabulary()
    eps = memory.list(namespace)
    notes: list[str] = []
    sigs = [e.signature for e in eps if e.kind != "schema"]
    # 1. vocabulary first: schemas are induced over the merged names
    uses = memory.predicate_uses(namespace)
    arities: dict[str, int] = {}
    for s in sigs:
        for _f, a in s.atoms():
            arities.setdefault(a.predicate, max(len(a.args), 1))
        for e in s.causal_chain:
            arities.setdefault(e.edge, 2)
    terms, merges, renames = plan_vocabulary(uses, memory.terms(namespace), vocab, arities) \
        if params.merge_synonyms else (memory.terms(namespace), [], {})
    known = {m["alias"] for m in memory.merges(namespace)}
    merges = [m for m in merges if m["count_moved"] > 0 or m["alias"] not in known]
    rewritten: dict[str, Signature] = {}
    if renames and params.rewrite_merged:
        for s in sigs:
            try:
                r = _rename(s, renames)
            except AnalogistError as e:
                notes.append(f"{s.episode_id}: not rewritten after the merge: {e}"[:300])
                continue
            if r is not None:
                rewritten[s.episode_id] = r
    sigs = [rewritten.get(s.episode_id, s) for s in sigs]
    # 2. re-abstraction
    reabstracted: list[str] = []
    if params.reabstract:
        lacking = [s for s in sigs if not (s.levels.L1 and s.levels.L2 and s.levels.L3)]
        enc = encoder
        if lacking and encoder == "deterministic":
            from analogist.encode.deterministic import DeterministicEncoder  # spaCy, on use

            enc = DeterministicEncoder()
        elif isinstance(encoder, str) and encoder != "deterministic":
            raise AnalogistError(f"encoder must be 'deterministic', None or an encoder object, "
                                 f"got {encoder!r}", field="encoder")
        for s in lacking:
            new, n = reabstract(s, enc)
            notes.extend(n)
            if new is not None:
                rewritten[s.episode_id] = new
                reabstracted.append(s.episode_id)
        sigs = [rewritten.get(s.episode_id, s) for s in sigs]
    # 3. schemas
    schemas, compared, well = induce_schemas(sigs, vocab=vocab, params=params, cache=cache,
                                             progress=progress)
    health = vocabulary_health(terms, {**{k: 0 for k in uses}, **_recount(sigs)})
    written = None
    if not dry_run:
        written = memory.write_consolidation(
            namespace=namespace,
            schemas=[{"name": s.name, "description": s.signature.to_data(),
                      "members": list(s.members),
                      "meta": {"pairs": [list(p) for p in s.pairs],
                               "role_origins": s.role_origins, "writer": WRITER}}
                     for s in schemas],
            terms=terms, merges=merges,
            signatures=[rewritten[k] for k in sorted(rewritten)])
    return ConsolidationReport(namespace, len(sigs), compared, well, schemas, merges, health,
                               reabstracted, notes, written)


def _recount(sigs: Sequence[Signature]) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in sigs:
        seen = set(s.relations)
        for a in s.relations:
            out[a.predicate] = out.get(a.predicate, 0) + 1
        for a in {x for e in s.causal_chain for x in e.atoms()} - seen:
            out[a.predicate] = out.get(a.predicate, 0) + 1
        for e in s.causal_chain:
            out[e.edge] = out.get(e.edge, 0) + 1
    return out
