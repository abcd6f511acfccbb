"""Calibrating Theorem 5's π, q and p on development targets (seed 001 §3.3: "the calibrated
regime").

Theorem 5 is exact only when π_s, q and p are the real rates of the procedure that produced the
analogy set ("the probabilities are understood conditional on the selection rule that produced
A"). The paper's illustration (π = 0.5, q = 1, p = 0.2) is a regime, not a measurement. Here the
rates are counted on development targets of a corpus — each cut at its cutoff, the loop run over
its leave-one-out pool — exactly as :func:`analogist.foresight.loop.decide` will use them:

* the hypotheses are those Decide weighs (the keys of its posteriors) that the target does not
  show at the cutoff; a hypothesis is *true* when it is a hidden factor of the target;
* **π_s** — the share of hypotheses at position s that are true (a per-position prior: hidden
  factors are mostly amplifiers, responses and outcomes; preconditions are rarely still hidden);
* **q_b, p_b** — for analogies in strength bin b (how many target factors they match on position
  and mechanism: 1, 2, 3 or more), the rate of X = 1 among true and among false hypotheses, over
  every (analogy, hypothesis) pair where X is defined under the loop's negative-evidence reading.

Counts are Laplace-smoothed ((k + 1) / (n + 2)). A bin whose q does not exceed its p carries no
evidence and is left out (its analogies then contribute nothing). Calibration runs the loop with
``rounds = 0`` (Gen is then MAC alone and does not depend on the posteriors being calibrated).
The surface baseline is calibrated the same way with its own evidence (one bin, ``surface``), so
each arm is judged with the rates of its own selection rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from analogist.errors import AnalogistError
from analogist.foresight.calibration import (
    STRENGTH_BINS,
    Calibration,
    bundled_calibration,
    load_calibration,
    strength_bin,
)
from analogist.foresight.evaluate import embed_corpus, loo_pool, surface_evidence
from analogist.foresight.event import POSITIONS, Corpus, Event
from analogist.foresight.loop import ForesightParams, run_foresight

__all__ = ["STRENGTH_BINS", "Calibration", "bundled_calibration", "calibrate",
           "load_calibration", "strength_bin"]


def _smooth(k: int, n: int) -> float:
    return (k + 1) / (n + 2)


def _finish(arm: str, truth: dict[str, list[int]], xs: dict[str, list[int]], source: str
            ) -> Calibration:
    pi = {s: _smooth(truth[s][0], truth[s][1]) for s in POSITIONS if s in truth}
    rates = {}
    for b, (k1, n1, k0, n0) in xs.items():
        q, p = _smooth(k1, n1), _smooth(k0, n0)
        if q > p:
            rates[b] = (q, p)
    counts = {"positions": {s: {"true": t[0], "considered": t[1]} for s, t in truth.items()},
              "bins": {b: {"x1_true": v[0], "n_true": v[1], "x1_false": v[2], "n_false": v[3]}
                       for b, v in xs.items()}}
    return Calibration(arm, pi, rates, counts, source)


def calibrate(corpus: Corpus, targets: Sequence[Event], *, params: Any = None,
              arm: str = "cana", pool: str = "loo", surface_k: int | None = None,
              embedder: Any = None, source: str = "",
              progress: Callable[[int, int], None] | None = None) -> Calibration:
    """Count π_s, q_b, p_b for ``arm`` ("cana" or "surface") on ``targets`` (see the module
    docstring). ``params`` are the loop's (their calibration is ignored)."""
    if arm not in ("cana", "surface"):
        raise AnalogistError(f"arm must be 'cana' or 'surface', got {arm!r}", field="arm")
    params = params or ForesightParams()
    base = replace(params, rounds=0, calibration=None)
    truth: dict[str, list[int]] = {}
    xs: dict[str, list[int]] = {}
    vectors = queries = None
    if arm == "surface" or params.w_embedding > 0:
        if embedder is None:
            # the embedder package (httpx among it) and its weights, only when asked for
            from analogist.index.embed import default_embedder

            embedder = default_embedder()
        vectors, queries = embed_corpus(corpus, targets, embedder)
    for n, tgt in enumerate(targets):
        tv = tgt.at_cutoff()
        obs = tv.view.hypotheses()
        hidden = tv.hidden_hypotheses()
        pool_l = loo_pool(tgt, corpus, pool)
        if arm == "cana":
            res = run_foresight(tv, pool_l, params=base, corpus=corpus, embedder=embedder,
                                vectors=vectors)
            hyps = [h for h in res.decision.posteriors if h not in obs]
            items = [(strength_bin(a.mechanism_matches), a.x) for a in res.decision.ranked]
        else:
            assert vectors is not None and queries is not None
            k = surface_k if surface_k is not None else params.per_round
            chosen, hyps_s, xfun = surface_evidence(tv, pool_l, corpus, base, vectors,
                                                    queries[tgt.event_id], k)
            hyps = sorted(hyps_s - obs)
            items = [("surface", (lambda h, e=e, f=xfun: f(e, h))) for e in chosen]
        for h in hyps:
            t = truth.setdefault(h[0], [0, 0])
            t[0] += h in hidden
            t[1] += 1
            for b, xf in items:
                x = xf(h)
                if x is None:
                    continue
                v = xs.setdefault(b, [0, 0, 0, 0])
                if h in hidden:
                    v[0] += x
                    v[1] += 1
                else:
                    v[2] += x
                    v[3] += 1
        if progress is not None:
            progress(n + 1, len(targets))
    return _finish(arm, truth, xs, source)
