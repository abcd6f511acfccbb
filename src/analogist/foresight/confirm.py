"""Cross-analogy confirmation (seed 001, Theorem 5 / Theorem 16 in its appendix C).

For one position hypothesis h (a position s, and here also the mechanism class m seen there),
each analogy E_k in the evidence set gives X_{k,h} ∈ {1, 0}: 1 when it confirms h, 0 when it
speaks against it. With a prior π = P(Z=1), the rate q = P(X=1 | Z=1) at which an analogy
confirms a truly structural factor and the rate p = P(X=1 | Z=0) at which one confirms a
coincidental one, and the X's conditionally independent given Z, the posterior log-odds are

    log π/(1−π) + Σ_k [ X_k log(q/p) + (1−X_k) log((1−q)/(1−p)) ].

Each independent confirming analogy multiplies the odds by q/p. In the homogeneous all-positive
case the number of confirmations needed to reach posterior 1−δ is

    n* = ⌈ (log((1−δ)/δ) − log(π/(1−π))) / log(q/p) ⌉,

which is 2 in the paper's calibrated regime (π = 0.5, q = 1, p = 0.2, δ = 0.05).

Departures and readings, stated:

* **Silence is not evidence.** An analogy that has no factor at position s at all is a partial
  view (seed 001 Fig. 1: "no single analogy covers all hidden positions, but their union does"),
  so it contributes no term for hypotheses at s. X = 0 is recorded only when the analogy's mapped
  structure reaches position s and shows a different mechanism there.
* **Independence is enforced, not assumed.** Analogies that are aliases, sub-events or
  super-events of one another, or share a larger event, form one *independence group*; a group
  contributes one term — a confirmation if any member confirms, else a disconfirmation if any
  member disconfirms.
* **q = 1 is allowed.** Then log((1−q)/(1−p)) = −∞: a single disconfirming group drives the
  posterior to 0, as the formula says. p must be in (0, 1) and q > p.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from analogist.errors import AnalogistError
from analogist.params import bounded, check_bounds

__all__ = ["ConfirmParams", "Posterior", "n_star", "posterior", "posterior_log_odds"]


@dataclass(frozen=True, slots=True)
class ConfirmParams:
    """Parameters of Theorem 5 (names as in seed 001).

    Attributes:
        pi: prior P(Z_s = 1) that a position hypothesis holds before any analogy is seen.
        q: P(X = 1 | Z = 1), how often an analogy confirms a factor that truly holds.
        p: P(X = 1 | Z = 0), how often an analogy confirms one by coincidence.
        delta: a hidden factor is asserted only when its posterior is at least 1 − delta.

    The defaults keep the paper's calibrated π = 0.5, p = 0.2, δ = 0.05 but take q = 0.9 rather
    than 1: with q = 1 one dissenting analogy makes the posterior exactly 0, which is the formula's
    answer but rarely what an analyst means. n* is still 2 with these defaults.
    """

    pi: float = bounded(0.5, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    q: float = bounded(0.9, lo=0.0, hi=1.0, lo_open=True)
    p: float = bounded(0.2, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    delta: float = bounded(0.05, lo=0.0, hi=1.0, lo_open=True, hi_open=True)

    def __post_init__(self) -> None:
        check_bounds(self)
        if not self.q > self.p:
            raise AnalogistError(f"q must exceed p (an analogy must be more likely to confirm a "
                                 f"true factor than a coincidental one); got q={self.q}, "
                                 f"p={self.p}", field="q")

    @property
    def threshold(self) -> float:
        return 1.0 - self.delta


def _log_ratio(q: float, p: float, x: int) -> float:
    if x:
        return math.log(q / p)
    if q >= 1.0:
        return -math.inf
    return math.log((1.0 - q) / (1.0 - p))


def posterior_log_odds(xs: Iterable[int], params: ConfirmParams,
                       rates: Iterable[tuple[float, float]] | None = None) -> float:
    """Posterior log-odds of Z = 1 given the evidence ``xs`` (each 0 or 1). ``rates`` gives a
    (q_k, p_k) per analogy for the heterogeneous case; otherwise params.q, params.p for all."""
    xs = list(xs)
    for x in xs:
        if x not in (0, 1):
            raise AnalogistError(f"evidence must be 0 or 1, got {x!r}")
    pairs = list(rates) if rates is not None else [(params.q, params.p)] * len(xs)
    if len(pairs) != len(xs):
        raise AnalogistError(f"{len(xs)} evidence values but {len(pairs)} (q, p) pairs")
    total = math.log(params.pi / (1.0 - params.pi))
    for x, (q, p) in zip(xs, pairs, strict=True):
        if not (0.0 < p < 1.0 and p < q <= 1.0):
            raise AnalogistError(f"need 0 < p < q <= 1, got q={q}, p={p}")
        total += _log_ratio(q, p, int(x))
    return total


def _sigmoid(z: float) -> float:
    if z == -math.inf:
        return 0.0
    if z == math.inf:
        return 1.0
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@dataclass(frozen=True, slots=True)
class Posterior:
    """The confirmation state of one hypothesis."""

    log_odds: float
    probability: float
    confirmations: int
    disconfirmations: int
    asserted: bool

    def to_json(self) -> dict[str, object]:
        lo = self.log_odds
        return {"log_odds": None if math.isinf(lo) else round(lo, 6),
                "posterior": round(self.probability, 6),
                "confirmations": self.confirmations,
                "disconfirmations": self.disconfirmations, "asserted": self.asserted}


def posterior(evidence: Mapping[str, int], params: ConfirmParams,
              groups: Mapping[str, str] | None = None, *,
              rates: Mapping[str, tuple[float, float]] | None = None,
              pi: float | None = None) -> Posterior:
    """The posterior of one hypothesis from per-analogy evidence ``{analogy_id: 0 or 1}``.

    ``groups`` maps each analogy id to its independence group (default: each its own); a group
    counts once — by its most informative member: a confirmation if any member confirms (the
    one with the largest q/p), else its mildest disconfirmation. ``rates`` gives per-analogy
    (q_k, p_k) (Theorem 5's heterogeneous case; default params.q, params.p for all) and ``pi``
    overrides params.pi (a per-position prior π_s).
    """
    prior = params.pi if pi is None else pi
    if not 0.0 < prior < 1.0:
        raise AnalogistError(f"pi must be strictly between 0 and 1, got {prior!r}", field="pi")
    best: dict[str, tuple[int, float]] = {}
    for aid, x in evidence.items():
        if x not in (0, 1):
            raise AnalogistError(f"evidence for {aid!r} must be 0 or 1, got {x!r}")
        q, p = rates[aid] if rates is not None and aid in rates else (params.q, params.p)
        if not (0.0 < p < 1.0 and p < q <= 1.0):
            raise AnalogistError(f"need 0 < p < q <= 1 for {aid!r}, got q={q}, p={p}")
        term = _log_ratio(q, p, int(x))
        g = groups.get(aid, aid) if groups is not None else aid
        cur = best.get(g)
        if cur is None or (int(x), term) > cur:
            best[g] = (int(x), term)
    lo = math.log(prior / (1.0 - prior)) + sum(t for _, t in best.values())
    prob = _sigmoid(lo)
    ones = sum(x for x, _ in best.values())
    return Posterior(lo, prob, ones, len(best) - ones, prob >= params.threshold)


def n_star(params: ConfirmParams, *, pi: float | None = None, q: float | None = None,
           p: float | None = None) -> int:
    """Confirmations needed in the homogeneous all-positive case to reach 1 − δ (≥ 0);
    ``pi``, ``q``, ``p`` override the params' values (a position's prior, a strength bin)."""
    pi = params.pi if pi is None else pi
    q = params.q if q is None else q
    p = params.p if p is None else p
    need = math.log((1 - params.delta) / params.delta) - math.log(pi / (1 - pi))
    if need <= 0:
        return 0
    raw = need / math.log(q / p)
    n = math.ceil(raw - 1e-12)
    return max(n, 0)
