"""The project's statistics, in one place: the normal distribution, exact McNemar tests, paired
and plain bootstrap intervals, Wilson's score interval, and seed 002's detectability rules.

Seed 000 §15 ("Statistics"): the design is paired — every arm sees every item — so arms are
compared with *paired* bootstrap confidence intervals on NAV and *exact McNemar* tests on
per-item correctness; with small item sets only large effects are detectable and the results
must say so. Seed 002 ("Honesty about noise") supplies the rules used here for the smallest
detectable swing (``p = 2 * 0.5**n`` when every discordant item moves the same way, first
under 0.05 at n = 6), the noise floor ``max(min_detectable, observed_drift + 1)``, and the
rule that a difference inside the noise band is reported as "not shown", never as "no effect".

Everything here is a pure function of its arguments (random draws come from an explicit seed);
numpy is the only dependency. Bad input raises :class:`analogist.errors.AnalogistError`. PARB's
hypothesis cards and their verdicts are :mod:`analogist.bench.parb.stats`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from analogist.errors import AnalogistError

__all__ = [
    "N_BOOT",
    "bootstrap_ci",
    "mcnemar_exact",
    "mcnemar_from_outcomes",
    "min_unanimous_discordant",
    "minimum_detectable_swing",
    "nav_difference_ci",
    "noise_floor",
    "norm_cdf",
    "norm_ppf",
    "paired_bootstrap_ci",
    "ratio_bootstrap_ci",
    "wilson_interval",
]

N_BOOT = 2000


# --------------------------------------------------------------------------- normal distribution

# Acklam's rational approximation to the inverse normal CDF (relative error < 1.15e-9),
# P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution
# function" (2003); refined below with Halley steps on math.erfc to full double precision.
_A = (
    -3.969683028665376e01,
    2.209460984245205e02,
    -2.759285104469687e02,
    1.383577518672690e02,
    -3.066479806614716e01,
    2.506628277459239e00,
)
_B = (
    -5.447609879822406e01,
    1.615858368580409e02,
    -1.556989798598866e02,
    6.680131188771972e01,
    -1.328068155288572e01,
)
_C = (
    -7.784894002430293e-03,
    -3.223964580411365e-01,
    -2.400758277161838e00,
    -2.549671979476824e00,
    4.374664141464968e00,
    2.938163982698783e00,
)
_D = (
    7.784695709041462e-03,
    3.224671290700398e-01,
    2.445134137142996e00,
    3.754408661907416e00,
)
_P_LOW = 0.02425


def norm_cdf(x: float) -> float:
    """Standard normal CDF, Φ(x) = erfc(−x/√2)/2 (exact to double precision via math.erfc)."""
    return 0.5 * math.erfc(-float(x) / math.sqrt(2.0))


def norm_ppf(p: float) -> float:
    """Inverse standard normal CDF Φ⁻¹(p) for 0 < p < 1.

    Acklam's (2003) rational approximation, then two Halley refinement steps against
    :func:`norm_cdf` (which uses ``math.erfc``), giving ~1e-15 accuracy; e.g.
    ``norm_ppf(0.975) = 1.959963984540054``. ``p`` outside the open interval (0, 1) raises.
    """
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise AnalogistError(f"norm_ppf: probability must be a number, got {p!r}") from None
    if not (0.0 < p < 1.0) or math.isnan(p):
        raise AnalogistError(f"norm_ppf: probability must lie strictly between 0 and 1, got {p}")
    if p < _P_LOW:
        q = math.sqrt(-2.0 * math.log(p))
        x = (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    elif p <= 1.0 - _P_LOW:
        q = p - 0.5
        r = q * q
        x = (
            (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5])
            * q
            / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
        )
    else:
        q = math.sqrt(-2.0 * math.log1p(-p))
        x = -(((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    for _ in range(2):  # Halley's method on Φ(x) − p = 0
        # below the median compare lower tails, above it upper tails (keeps precision near 1)
        e = norm_cdf(x) - p if p < 0.5 else (1.0 - p) - 0.5 * math.erfc(x / math.sqrt(2.0))
        u = e * math.sqrt(2.0 * math.pi) * math.exp(x * x / 2.0)
        x = x - u / (1.0 + x * u / 2.0)
    return x


# --------------------------------------------------------------------------- validation helpers


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise AnalogistError(f"{name} must be a non-negative integer count, got {value!r}")
    if value < 0:
        raise AnalogistError(f"{name} must be a non-negative integer count, got {value}")
    return int(value)


def _level(level: float) -> float:
    level = float(level)
    if not (0.0 < level < 1.0):
        raise AnalogistError(f"level must lie strictly between 0 and 1, got {level}")
    return level


def _alpha_power(alpha: float, power: float) -> tuple[float, float]:
    alpha, power = float(alpha), float(power)
    if not (0.0 < alpha < 1.0):
        raise AnalogistError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if not (0.0 < power < 1.0):
        raise AnalogistError(f"power must lie strictly between 0 and 1, got {power}")
    return alpha, power


def _finite_vector(name: str, values: Any) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise AnalogistError(f"{name} must be a sequence of numbers") from None
    if arr.ndim != 1:
        raise AnalogistError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise AnalogistError(f"{name} is empty")
    if not np.all(np.isfinite(arr)):
        raise AnalogistError(f"{name} contains NaN or infinite values")
    return arr


# --------------------------------------------------------------------------- McNemar


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs.

    Under H0 the discordant pairs split Binomial(n = b + c, 1/2), so (McNemar 1947, exact form)
    ``p = min(1, 2 · Σ_{i=0}^{min(b,c)} C(n, i) / 2^n)``, computed exactly with integers.
    ``b = c = 0`` gives p = 1. Examples: (0, 6) → 2/64 = 0.03125 and (1, 9) → 2·11/1024 =
    0.021484375. Seed 002 uses this test on per-query hits (5 discordant, all one way:
    p = 0.0625, "inside the noise band"); seed 000 §15 prescribes it on per-item correctness.
    """
    b, c = _count("b", b), _count("c", c)
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2.0 * tail / 2**n)


def mcnemar_from_outcomes(correct_a: Sequence[Any], correct_b: Sequence[Any]) -> dict[str, Any]:
    """Exact McNemar on paired per-item correctness (seed 000 §15).

    ``correct_a[i]`` / ``correct_b[i]`` say whether arm A / arm B got item i right (bool or 0/1).
    Returns ``{"n": items, "a_only": b, "b_only": c, "net": b − c, "p": mcnemar_exact(b, c)}``
    where ``a_only`` counts items A got right and B wrong.
    """
    a = _binary_vector("correct_a", correct_a)
    bb = _binary_vector("correct_b", correct_b)
    if a.size != bb.size:
        raise AnalogistError(f"correct_a has {a.size} items but correct_b has {bb.size}")
    a_only = int(np.sum(a & ~bb))
    b_only = int(np.sum(~a & bb))
    return {
        "n": int(a.size),
        "a_only": a_only,
        "b_only": b_only,
        "net": a_only - b_only,
        "p": mcnemar_exact(a_only, b_only),
    }


def _binary_vector(name: str, values: Any) -> np.ndarray:
    arr = _finite_vector(name, values)
    if not np.all((arr == 0) | (arr == 1)):
        raise AnalogistError(f"{name} must hold only booleans or 0/1")
    return arr.astype(bool)


# --------------------------------------------------------------------------- bootstrap


def paired_bootstrap_ci(
    values_a: Sequence[float],
    values_b: Sequence[float],
    stat: Callable[[np.ndarray], float] = np.mean,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Seeded paired percentile-bootstrap CI for ``stat(A) − stat(B)`` (seed 000 §15).

    Items are resampled *jointly* — one index draw picks the same items for both arms — so the
    per-item pairing (every arm sees every item) is kept (Efron & Tibshirani 1993, ch. 13,
    percentile interval). Returns ``{"estimate", "lo", "hi", "level", "n_boot", "n"}`` with
    ``estimate = stat(a) − stat(b)`` on the full sample and ``[lo, hi]`` the
    ``(1−level)/2`` and ``(1+level)/2`` quantiles of the bootstrap differences. The default
    ``stat=np.mean`` is vectorised; any other callable is applied per resample.
    """
    a = _finite_vector("values_a", values_a)
    b = _finite_vector("values_b", values_b)
    if a.size != b.size:
        raise AnalogistError(f"values_a has {a.size} items but values_b has {b.size}: not paired")
    n_boot = _count("n_boot", n_boot)
    if n_boot < 1:
        raise AnalogistError("n_boot must be at least 1")
    level = _level(level)
    if not callable(stat):
        raise AnalogistError("stat must be callable")
    rng = np.random.default_rng(seed)
    n = a.size
    idx = rng.integers(0, n, size=(n_boot, n))
    if stat is np.mean:
        diffs = a[idx].mean(axis=1) - b[idx].mean(axis=1)
    else:
        diffs = np.array([float(stat(a[row])) - float(stat(b[row])) for row in idx])
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(diffs, [tail, 1.0 - tail])
    return {
        "estimate": float(stat(a)) - float(stat(b)),
        "lo": float(lo),
        "hi": float(hi),
        "level": level,
        "n_boot": n_boot,
        "n": int(n),
    }


def _ufn_contributions(name: str, rows: Sequence[Sequence[float]], alpha: float, beta: float):
    try:
        arr = np.asarray(rows, dtype=float)
    except (TypeError, ValueError):
        raise AnalogistError(f"{name} must be a sequence of (U, F, N) triples") from None
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] == 0:
        raise AnalogistError(f"{name} must be a non-empty sequence of (U, F, N) triples")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise AnalogistError(f"{name}: U, F and N per item must be non-negative numbers")
    return arr[:, 0] - alpha * arr[:, 1] - beta * arr[:, 2]


def nav_difference_ci(
    arm_a: Sequence[Sequence[float]],
    arm_b: Sequence[Sequence[float]],
    alpha: float = 1.0,
    beta: float = 2.0,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Paired bootstrap CI for NAV(A) − NAV(B) (seed 000 §15).

    ``arm_a[i] = (U_i, F_i, N_i)``: item i's count of verified-useful analogies, accepted false
    analogies and negative-transfer events (normally each 0 or 1). Item i contributes
    ``U_i − α·F_i − β·N_i``; the mean of the contributions over the O items is exactly
    ``NAV = (U − αF − βN)/O``. The difference of means is bootstrapped with items resampled
    jointly (:func:`paired_bootstrap_ci`). Returns that dict plus ``nav_a``, ``nav_b``,
    ``alpha`` and ``beta``.
    """
    alpha, beta = float(alpha), float(beta)
    if alpha < 0 or beta < 0 or math.isnan(alpha) or math.isnan(beta):
        raise AnalogistError(f"alpha and beta must be non-negative, got {alpha}, {beta}")
    ca = _ufn_contributions("arm_a", arm_a, alpha, beta)
    cb = _ufn_contributions("arm_b", arm_b, alpha, beta)
    out = paired_bootstrap_ci(ca, cb, n_boot=n_boot, seed=seed, level=level)
    out.update(nav_a=float(ca.mean()), nav_b=float(cb.mean()), alpha=alpha, beta=beta)
    return out


# --------------------------------------------------------------------------- detectability


def min_unanimous_discordant(alpha: float = 0.05) -> int:
    """Seed 002's minimum detectable swing, in items: the smallest m with ``2·0.5^m < alpha``.

    If every item that changes changes the same way (b = 0, c = m) the exact McNemar p is
    ``2·0.5^m``; at alpha = 0.05 this first drops below the bar at m = 6 (p = 0.03125;
    m = 5 gives 0.0625). No smaller net change can ever be significant, whatever n is.
    """
    alpha = float(alpha)
    if not (0.0 < alpha < 1.0):
        raise AnalogistError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    m = 1
    while 2.0 * 0.5**m >= alpha:
        m += 1
    return m


def minimum_detectable_swing(
    n: int, alpha: float = 0.05, power: float = 0.8, discordance: float = 0.25
) -> float:
    """Smallest paired accuracy difference (a fraction of the n items) detectable with McNemar.

    Formula (Connor 1987, "Sample size for testing differences in proportions for the
    paired-sample design", Biometrics 43:207–211): with discordance ψ = p₁₀ + p₀₁ (share of items
    on which the two arms disagree) and swing δ = p₀₁ − p₁₀, the items needed are

        n = [z_{1−α/2}·√ψ + z_{power}·√(ψ − δ²)]² / δ²

    solved here for δ by bisection on (0, ψ]. The result is floored by seed 002's exact rule —
    a net swing of fewer than :func:`min_unanimous_discordant` items can never reach p < alpha —
    i.e. ``δ ≥ m/n``. Returns ``math.inf`` when even δ = ψ (all disagreements one way) is not
    detectable at this n. Non-increasing in n. With n = 48, ψ between 0.2 and 0.3 this gives
    about 0.18–0.22, matching seed 000 §15's "only effects of 15–20 points are detectable".
    ``discordance`` is an assumption about the arms (default 0.25); report it with the result.
    """
    n = _count("n", n)
    if n < 1:
        raise AnalogistError("n must be at least 1")
    alpha, power = _alpha_power(alpha, power)
    psi = float(discordance)
    if not (0.0 < psi <= 1.0):
        raise AnalogistError(f"discordance must lie in (0, 1], got {discordance}")
    za, zb = norm_ppf(1.0 - alpha / 2.0), norm_ppf(power)

    def needed(delta: float) -> float:
        return (za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta * delta, 0.0))) ** 2 / delta**2

    floor = min_unanimous_discordant(alpha) / n
    if floor > psi or needed(psi) > n:
        return math.inf
    lo, hi = 0.0, psi  # needed() is decreasing in delta: find the smallest delta with needed <= n
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid > 0 and needed(mid) <= n:
            hi = mid
        else:
            lo = mid
    return max(hi, floor)


def noise_floor(min_detectable: float, drift: float) -> float:
    """Seed 002's noise floor for a verdict: ``max(min_detectable, observed_drift + 1)``.

    Both in items (e.g. ``noise_floor(6, 0) = 6``, ``noise_floor(6, 7) = 8``). A net change
    below it is "inside the noise band" and is reported as "not shown".
    """
    md, dr = float(min_detectable), float(drift)
    if md < 0 or dr < 0 or math.isnan(md) or math.isnan(dr):
        raise AnalogistError(f"min_detectable and drift must be non-negative, got {md}, {dr}")
    return max(md, dr + 1.0)


# --------------------------------------------------------------------------- plain intervals

def bootstrap_ci(correct: Sequence[bool], *, seed: int = 0, n_boot: int = N_BOOT,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``correct`` (seeded, deterministic)."""
    x = np.asarray(correct, dtype=np.float64)
    if x.size == 0:
        raise AnalogistError("no items to bootstrap")
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [a, 1.0 - a])
    return (round(float(lo), 6), round(float(hi), 6))


def ratio_bootstrap_ci(num: Sequence[float], den: Sequence[float], rng: np.random.Generator,
                       n_boot: int = N_BOOT, level: float = 0.95
                       ) -> tuple[float | None, float | None, float | None]:
    """A ratio of sums — ``sum(num) / sum(den)``, a micro-averaged recall or precision — with a
    percentile bootstrap interval over the items (resampled jointly for ``num`` and ``den``;
    resamples whose ``den`` sums to 0 are dropped). Draws from ``rng`` (the caller's seeded
    generator, so that successive ratios of one run share its stream). Returns
    ``(estimate, lo, hi)``; all None when ``den`` sums to 0; lo and hi NaN when no resample has
    a positive ``den``."""
    n = np.asarray(num, dtype=float)
    d = np.asarray(den, dtype=float)
    if n.shape != d.shape:
        raise AnalogistError(f"num has {n.size} items but den has {d.size}: not paired")
    if d.sum() == 0:
        return None, None, None
    est = float(n.sum() / d.sum())
    idx = rng.integers(0, len(n), size=(n_boot, len(n)))
    nums, dens = n[idx].sum(axis=1), d[idx].sum(axis=1)
    ok = dens > 0
    vals = nums[ok] / dens[ok]
    a = round((1.0 - level) / 2.0, 12)  # 0.025 exactly at the default level
    lo, hi = np.quantile(vals, [a, 1.0 - a]) if len(vals) else (np.nan, np.nan)
    return est, float(lo), float(hi)


def wilson_interval(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's (1927) score interval for a proportion k/n (95% by default); (0, 1) at n = 0."""
    if n == 0:
        return (0.0, 1.0)
    ph = k / n
    den = 1 + z * z / n
    centre = (ph + z * z / (2 * n)) / den
    half = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))
