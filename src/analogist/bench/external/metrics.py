"""The per-item metrics of a benchmark run: the seeded tie-break of a pick and a ranking,
retrieval metrics over a ranking, and the AUC of binary scores (see
:mod:`analogist.bench.external.runner`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from analogist.bench.external.sample import item_rng


def _pick(scores: list[float], rng_key: str, seed: int) -> tuple[int, bool]:
    top = max(scores)
    best = [i for i, s in enumerate(scores) if s >= top - 1e-12]
    if len(best) == 1:
        return best[0], False
    return item_rng(seed, rng_key).choice(best), True


def _rank(cands: Sequence[str], scores: list[float], rng_key: str, seed: int) -> list[str]:
    order = list(range(len(cands)))
    item_rng(seed, rng_key).shuffle(order)            # random order within ties
    order.sort(key=lambda i: -scores[i])
    return [cands[i] for i in order]


def _retrieval_metrics(ranked: list[str], gold: frozenset[str], ks: Sequence[int]) -> dict:
    hits, ap, rr = 0, 0.0, 0.0
    for pos, c in enumerate(ranked, start=1):
        if c in gold:
            hits += 1
            ap += hits / pos
            if rr == 0.0:
                rr = 1.0 / pos
    out = {"ap": ap / len(gold), "rr": rr,
           "recall@10": sum(c in gold for c in ranked[:10]) / len(gold)}
    for k in ks:
        out[f"hit@{k}"] = float(any(c in gold for c in ranked[:k]))
    return out


def _auc(scores: list[float], labels: list[bool]) -> float | None:
    pos = np.array([s for s, y in zip(scores, labels, strict=True) if y])
    neg = np.array([s for s, y in zip(scores, labels, strict=True) if not y])
    if not pos.size or not neg.size:
        return None
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(wins / (pos.size * neg.size))
