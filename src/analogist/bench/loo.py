"""Leave-one-out retrieval on the casebook: structural retrieval against a surface baseline.

For every real (non-decoy) casebook episode, the episode is taken out, the rest of the casebook
(decoys included) is the memory, and the episode is the target. Relevant answers are the other
episodes of the same mechanism. Reported per arm, paired over the same targets:

* ``hit@5`` — a relevant episode among the first five;
* ``recall@5`` — relevant episodes among the first five over min(5, number relevant);
* ``MRR`` — mean reciprocal rank of the first relevant episode (0 when none is ranked);
* ``relevant_above_decoys`` — share of targets for which every relevant episode ranks above
  every decoy (unranked decoys count as below; an unranked relevant episode counts as below);
* ``decoy_transfers`` — for the structural arm, how many (decoy → target) judgements let a
  conclusion transfer (should be 0): every decoy is judged against every target.

The structural arm is :class:`~analogist.retrieve.Retriever` (MAC/FAC with the judge; with
``level_embedder`` its abstract-level embedding channel is on too); the
surface arm ranks by the cosine of an embedding of the L0 narrative plus the entity names (the
"semantic memory" every agent-memory library uses). A paired McNemar test on hit@5 compares them.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from analogist.bench.parb.stats import mcnemar_exact
from analogist.judge import judge_mapping
from analogist.memory.sqlite import Memory
from analogist.retrieve import RetrieveParams, Retriever, level_embeddings
from analogist.signature import Signature, compile_signature
from analogist.sme import match


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    mechanism: str
    domain: str
    decoy: bool
    signature: Signature


def _metrics(ranked: Sequence[str], relevant: set[str], decoys: set[str]) -> dict[str, float]:
    first = next((i for i, x in enumerate(ranked) if x in relevant), None)
    top5 = ranked[:5]
    n_rel = len(relevant)
    pos = {x: i for i, x in enumerate(ranked)}
    worst_rel = max((pos.get(r, math.inf) for r in relevant), default=-1)
    best_decoy = min((pos.get(d, math.inf) for d in decoys), default=math.inf)
    return {
        "hit@5": 1.0 if first is not None and first < 5 else 0.0,
        "recall@5": (sum(1 for x in top5 if x in relevant) / min(5, n_rel)) if n_rel else 0.0,
        "mrr": 1.0 / (first + 1) if first is not None else 0.0,
        "relevant_above_decoys": 1.0 if worst_rel < best_decoy else 0.0,
    }


def _summary(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = rows[0].keys() if rows else []
    return {k: float(np.mean([r[k] for r in rows])) for k in keys}


def leave_one_out(entries: Sequence[Entry], *, params: RetrieveParams | None = None,
                  embed: Callable[[list[str]], np.ndarray] | None = None,
                  level_embedder: Any | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  workdir: Path | None = None) -> dict[str, Any]:
    """Run both arms on every real entry; returns summaries and per-target rows."""
    params = params or RetrieveParams(k=10, shortlist=20)
    real = [e for e in entries if not e.decoy]
    decoys = [e for e in entries if e.decoy]
    tmp = tempfile.TemporaryDirectory() if workdir is None else None
    base = Path(tmp.name) if tmp is not None else workdir
    assert base is not None
    surface_vecs: dict[str, np.ndarray] = {}
    if embed is not None:
        texts = [" ".join([e.signature.levels.L0 or "", *e.signature.surface.entities])
                 for e in entries]
        mat = embed(texts)
        surface_vecs = {e.id: mat[i] for i, e in enumerate(entries)}
    compiled = {e.id: compile_signature(e.signature) for e in entries}
    level_vecs: dict[str, Any] = {}
    if level_embedder is not None:
        level_vecs = {e.signature.episode_id: level_embeddings(e.signature, level_embedder)
                      for e in entries}
    structural_rows: list[dict[str, Any]] = []
    surface_rows: list[dict[str, Any]] = []
    decoy_transfers = 0
    decoy_judgements = 0
    try:
        with Memory.open(base / "loo.db") as mem:
            for n, target in enumerate(real):
                ns = f"loo-{n}"
                mem.add_many([e.signature for e in entries if e.id != target.id],
                             namespace=ns, embed=None if level_embedder is None else
                             (lambda s: level_vecs[s.episode_id]))
                relevant = {e.id for e in real if e.mechanism == target.mechanism
                            and e.id != target.id}
                decoy_ids = {e.id for e in decoys}
                res = Retriever(mem, ns, params=params, log=False,
                                embedder=level_embedder).find(target.signature,
                                                              k=len(entries))
                ranked = [h.episode_id for h in res.results]
                row = _metrics(ranked, relevant, decoy_ids)
                row.update({"target": target.id, "mechanism": target.mechanism,
                            "top": ranked[:5]})
                structural_rows.append(row)
                td = compiled[target.id]
                for d in decoys:
                    sd = compiled[d.id]
                    r = match(sd, td)
                    rep = judge_mapping(d.signature, target.signature, sd, td, r,
                                        params=params.judge)
                    decoy_judgements += 1
                    if rep.transfer:
                        decoy_transfers += 1
                if surface_vecs:
                    q = surface_vecs[target.id]
                    others = [e for e in entries if e.id != target.id]
                    sims = np.array([float(q @ surface_vecs[e.id]) for e in others])
                    order = np.lexsort(([e.id for e in others], -sims))
                    sranked = [others[i].id for i in order]
                    srow = _metrics(sranked, relevant, decoy_ids)
                    srow.update({"target": target.id, "mechanism": target.mechanism,
                                 "top": sranked[:5]})
                    surface_rows.append(srow)
                if progress is not None:
                    progress(n + 1, len(real))
    finally:
        if tmp is not None:
            tmp.cleanup()
    out: dict[str, Any] = {
        "targets": len(real), "decoys": len(decoys),
        "structural": _summary([{k: r[k] for k in ("hit@5", "recall@5", "mrr",
                                                   "relevant_above_decoys")}
                                for r in structural_rows]),
        "decoy_transfers": decoy_transfers, "decoy_judgements": decoy_judgements,
        "rows": {"structural": structural_rows, "surface": surface_rows},
    }
    if surface_rows:
        out["surface"] = _summary([{k: r[k] for k in ("hit@5", "recall@5", "mrr",
                                                      "relevant_above_decoys")}
                                   for r in surface_rows])
        b = sum(1 for s, u in zip(structural_rows, surface_rows, strict=True)
                if s["hit@5"] == 1 and u["hit@5"] == 0)
        c = sum(1 for s, u in zip(structural_rows, surface_rows, strict=True)
                if s["hit@5"] == 0 and u["hit@5"] == 1)
        out["mcnemar_hit@5"] = {"structural_only": b, "surface_only": c,
                                "p_value": mcnemar_exact(b, c)}
    return out
