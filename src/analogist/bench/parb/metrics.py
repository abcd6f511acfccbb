"""PARB metrics: every stage metric of seed 000 §15 and the headline Net Analogical Value.

Seed 000 §15: "Score each stage separately, then judge the system on one headline number that
charges for every wrong or harmful analogy: Net Analogical Value." Stage metrics (retrieval,
mapping, decoy discrimination, transfer, verification, attribution, calibration) locate
failures; NAV = (U − αF − βN)/O with α = 1, β = 2, reported with its sensitivity grid
α, β ∈ {0.5, 1, 2, 3}, Useful Analogy Precision and Yield. The composite definitions are the
seed's own; the component ideas (recall@k, F1, signal-detection d′, balanced accuracy, Brier)
are standard and cited where a formula comes from the literature.

All functions are pure. Per-item inputs are sequences aligned by item. Bad input (negative
counts, mismatched lengths, probabilities outside [0, 1], O = 0, …) raises
:class:`analogist.errors.AnalogistError`. A ratio whose denominator is legitimately empty
(e.g. precision when nothing was proposed) is undefined and returned as ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from analogist.bench.parb.stats import norm_ppf
from analogist.errors import AnalogistError

__all__ = [
    "NAV_GRID_WEIGHTS",
    "brier",
    "d_prime",
    "historical_claim_precision",
    "nav",
    "nav_grid",
    "negative_transfer_rate",
    "no_match_specificity",
    "partial_transfer_balanced_accuracy",
    "recall_at_k",
    "role_mapping_f1",
    "source_dependence",
    "transfer_accuracy",
    "useful_analogy_precision",
    "verification_survival",
    "yield_",
]

NAV_GRID_WEIGHTS: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0)
"""Seed 000 §15: report NAV sensitivity at α, β ∈ {0.5, 1, 2, 3}."""


# --------------------------------------------------------------------------- validation helpers


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif hasattr(value, "__index__") and not isinstance(value, bool):
            value = int(value.__index__())
        else:
            raise AnalogistError(f"{name} must be a non-negative integer count, got {value!r}")
    if value < 0:
        raise AnalogistError(f"{name} must be a non-negative integer count, got {value}")
    return int(value)


def _flags(name: str, values: Iterable[Any]) -> list[bool]:
    if isinstance(values, (str, bytes)):
        raise AnalogistError(f"{name} must be a sequence of booleans")
    out = []
    for i, v in enumerate(values):
        try:
            ok = not isinstance(v, (str, bytes)) and float(v) in (0.0, 1.0)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise AnalogistError(f"{name}[{i}] must be a boolean or 0/1, got {v!r}")
        out.append(bool(v))
    return out


def _probs(name: str, values: Iterable[Any]) -> list[float]:
    if isinstance(values, (str, bytes)):
        raise AnalogistError(f"{name} must be a sequence of numbers in [0, 1]")
    out = []
    for i, v in enumerate(values):
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise AnalogistError(f"{name}[{i}] must be a number in [0, 1], got {v!r}") from None
        if not (0.0 <= f <= 1.0):  # also rejects NaN
            raise AnalogistError(f"{name}[{i}] must lie in [0, 1], got {v!r}")
        out.append(f)
    return out


def _same_length(**seqs: Sequence[Any]) -> int:
    lengths = {name: len(s) for name, s in seqs.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise AnalogistError(f"per-item sequences must be aligned by item: {detail}")
    return next(iter(lengths.values()))


def _mean_or_none(flags: Sequence[bool | float]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _key_set(name: str, i: int, key: Any) -> frozenset:
    if key is None:
        return frozenset()
    if isinstance(key, (str, bytes)):
        return frozenset([key])
    try:
        return frozenset(key)
    except TypeError:
        raise AnalogistError(f"{name}[{i}] must be a collection of source ids") from None


# --------------------------------------------------------------------------- stage B: retrieval


def recall_at_k(
    rankings: Sequence[Sequence[str]], keys: Sequence[Collection[str]], k: int
) -> float | None:
    """Retrieval recall@k (seed 000 §15, stage B).

    "Share of items where a keyed source appears in the top k candidates": item i is a hit when
    ``set(rankings[i][:k]) ∩ keys[i]`` is non-empty. Items whose key is empty (no-match items)
    have no source to find; they are left out of the denominator and scored by
    :func:`no_match_specificity` instead. Returns ``None`` if no item has a key.
    """
    k = _count("k", k)
    if k < 1:
        raise AnalogistError("k must be at least 1")
    _same_length(rankings=rankings, keys=keys)
    hits = scored = 0
    for i, (ranking, key) in enumerate(zip(rankings, keys, strict=True)):
        gold = _key_set("keys", i, key)
        if isinstance(ranking, (str, bytes)):
            raise AnalogistError(f"rankings[{i}] must be a sequence of candidate ids")
        if not gold:
            continue
        scored += 1
        hits += bool(gold.intersection(list(ranking)[:k]))
    return hits / scored if scored else None


def historical_claim_precision(
    cited: Sequence[str | None], keys: Sequence[Collection[str]]
) -> float | None:
    """Historical claim precision (seed 000 §15, stage B).

    "When Piper says 'I have seen this shape before', share where the cited episode is in the
    key": over items with a claim (``cited[i]`` not None), the share with ``cited[i] ∈
    keys[i]``. A claim on a no-match item (empty key) is a wrong claim. ``None`` when no
    claim was made.
    """
    _same_length(cited=cited, keys=keys)
    claims = correct = 0
    for i, (c, key) in enumerate(zip(cited, keys, strict=True)):
        gold = _key_set("keys", i, key)
        if c is None:
            continue
        claims += 1
        correct += c in gold
    return correct / claims if claims else None


def no_match_specificity(
    reported_none: Sequence[bool], is_no_match: Sequence[bool]
) -> float | None:
    """No-match specificity (seed 000 §15, stage B).

    "Share of no-match items where she correctly reports none": among items with
    ``is_no_match[i]``, the share with ``reported_none[i]``. ``None`` if there are no
    no-match items.
    """
    rep = _flags("reported_none", reported_none)
    nm = _flags("is_no_match", is_no_match)
    _same_length(reported_none=rep, is_no_match=nm)
    return _mean_or_none([r for r, m in zip(rep, nm, strict=True) if m])


# --------------------------------------------------------------------------- stage C: mapping


def _pairs(name: str, i: int, value: Any) -> frozenset[tuple[Any, Any]]:
    if value is None:
        return frozenset()
    if isinstance(value, dict):
        value = value.items()
    out = set()
    try:
        for pair in value:
            if isinstance(pair, (str, bytes)) or len(pair) != 2:
                raise TypeError
            out.add((pair[0], pair[1]))
    except TypeError:
        raise AnalogistError(
            f"{name}[{i}] must be a collection of (source role, target role) pairs or a dict"
        ) from None
    return frozenset(out)


def role_mapping_f1(predicted: Sequence[Any], gold: Sequence[Any]) -> dict[str, float | None]:
    """Role-mapping F1 over (source role, target role) pairs (seed 000 §15, stage C).

    Each item's mapping is a collection of ``(source_role, target_role)`` pairs or a dict
    ``{source_role: target_role}``. Per item TP = |pred ∩ gold|, FP = |pred − gold|,
    FN = |gold − pred|; F1 = 2TP / (2TP + FP + FN) (van Rijsbergen 1979).

    * micro: TP, FP, FN summed over items, then F1 (and micro precision, recall);
    * macro: the mean of per-item F1; an item with empty prediction *and* empty key has no
      pairs to score and is left out.

    Returns ``{"micro_f1", "micro_precision", "micro_recall", "macro_f1"}``; an undefined
    value (0/0) is ``None``.
    """
    _same_length(predicted=predicted, gold=gold)
    tp = fp = fn = 0
    per_item = []
    for i, (p, g) in enumerate(zip(predicted, gold, strict=True)):
        ps, gs = _pairs("predicted", i, p), _pairs("gold", i, g)
        t, f_p, f_n = len(ps & gs), len(ps - gs), len(gs - ps)
        tp, fp, fn = tp + t, fp + f_p, fn + f_n
        if t + f_p + f_n:
            per_item.append(2 * t / (2 * t + f_p + f_n))
    return {
        "micro_f1": 2 * tp / (2 * tp + fp + fn) if (tp + fp + fn) else None,
        "micro_precision": tp / (tp + fp) if (tp + fp) else None,
        "micro_recall": tp / (tp + fn) if (tp + fn) else None,
        "macro_f1": _mean_or_none(per_item),
    }


# --------------------------------------------------------------------------- stage C/D: decoys


def d_prime(
    hits: int,
    misses: int,
    false_alarms: int,
    correct_rejections: int,
    correction: str = "loglinear",
) -> float:
    """Decoy discrimination d′ = z(H) − z(F) (seed 000 §15, stage C/D; Green & Swets 1966).

    H is the hit rate on true analogues (accepted / all true analogues), F the false-alarm rate
    on decoys (accepted / all decoys); z is the inverse standard normal CDF
    (:func:`analogist.bench.parb.stats.norm_ppf`). d′ separates skill from a bias toward
    saying yes. Rates of 0 or 1 would give infinite z, so a correction is always stated:

    * ``"loglinear"`` (Hautus 1995): add 0.5 to every cell, always —
      H = (hits + 0.5)/(hits + misses + 1), F = (FA + 0.5)/(FA + CR + 1);
    * ``"1/2N"`` (Macmillan & Kaplan 1985): rates are left as they are unless extreme; a rate
      of 0 becomes 1/(2N) and a rate of 1 becomes 1 − 1/(2N), N being that rate's trial count.

    Both need at least one true-analogue trial and one decoy trial.
    """
    h, m = _count("hits", hits), _count("misses", misses)
    fa, cr = _count("false_alarms", false_alarms), _count("correct_rejections", correct_rejections)
    n_signal, n_noise = h + m, fa + cr
    if n_signal == 0 or n_noise == 0:
        raise AnalogistError(
            "d_prime needs at least one true-analogue trial (hits + misses) and one decoy "
            f"trial (false_alarms + correct_rejections); got {n_signal} and {n_noise}"
        )
    if correction == "loglinear":
        hr = (h + 0.5) / (n_signal + 1)
        far = (fa + 0.5) / (n_noise + 1)
    elif correction == "1/2N":

        def fix(k: int, n: int) -> float:
            if k == 0:
                return 1.0 / (2 * n)
            if k == n:
                return 1.0 - 1.0 / (2 * n)
            return k / n

        hr, far = fix(h, n_signal), fix(fa, n_noise)
    else:
        raise AnalogistError(f"correction must be 'loglinear' or '1/2N', got {correction!r}")
    return norm_ppf(hr) - norm_ppf(far)


# --------------------------------------------------------------------------- stage D/E/F: transfer


def partial_transfer_balanced_accuracy(
    transferred: Sequence[bool], should_transfer: Sequence[bool]
) -> float | None:
    """Partial-transfer balanced accuracy (seed 000 §15, stage D/E).

    One entry per mechanism component (over all items): ``transferred[j]`` whether the system
    carried component j over, ``should_transfer[j]`` the key (transfer vs withhold). Balanced
    accuracy (Brodersen et al. 2010) = (share of transfer-components transferred + share of
    withhold-components withheld) / 2. If the key holds only one class, that class's accuracy
    is returned; ``None`` for no components.
    """
    t = _flags("transferred", transferred)
    s = _flags("should_transfer", should_transfer)
    _same_length(transferred=t, should_transfer=s)
    pos = [a for a, k in zip(t, s, strict=True) if k]
    neg = [not a for a, k in zip(t, s, strict=True) if not k]
    rates = [r for r in (_mean_or_none(pos), _mean_or_none(neg)) if r is not None]
    return sum(rates) / len(rates) if rates else None


def transfer_accuracy(passed: Sequence[bool]) -> float | None:
    """Transfer accuracy (seed 000 §15, stage E).

    "Share of items whose target-domain action passes the executable check or key-element
    rubric": the mean of ``passed`` over all items. ``None`` for no items.
    """
    return _mean_or_none(_flags("passed", passed))


def verification_survival(survived: Sequence[bool]) -> float | None:
    """Verification survival (seed 000 §15, stage F).

    "Share of proposed analogies that pass the prediction check and critic": one entry per
    proposed analogy. ``None`` when nothing was proposed.
    """
    return _mean_or_none(_flags("survived", survived))


def negative_transfer_rate(
    analogy_scores: Sequence[float], no_analogy_scores: Sequence[float]
) -> float | None:
    """Negative-transfer rate (seed 000 §15, stage F).

    "Share of analogy-driven actions that score worse than the no-analogy arm on the same item":
    one entry per analogy-driven action, paired with the no-analogy arm's score on that item;
    counts strict ``analogy < no_analogy``. ``None`` when there were no such actions.
    """
    a = _finite("analogy_scores", analogy_scores)
    b = _finite("no_analogy_scores", no_analogy_scores)
    _same_length(analogy_scores=a, no_analogy_scores=b)
    return _mean_or_none([x < y for x, y in zip(a, b, strict=True)])


def _finite(name: str, values: Iterable[Any]) -> list[float]:
    if isinstance(values, (str, bytes)):
        raise AnalogistError(f"{name} must be a sequence of numbers")
    out = []
    for i, v in enumerate(values):
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise AnalogistError(f"{name}[{i}] must be a number, got {v!r}") from None
        if not math.isfinite(f):
            raise AnalogistError(f"{name}[{i}] must be finite, got {v!r}")
        out.append(f)
    return out


def source_dependence(
    correct_source: Sequence[float],
    no_source: Sequence[float],
    wrong_source: Sequence[float] | None = None,
) -> dict[str, float | None]:
    """Source dependence Δ (seed 000 §15, attribution; §2 attribution controls).

    Per-item accuracy (booleans or scores in [0, 1]) of the same arm run with the correct
    source, with no source and (optionally) with a wrong source of matched surface similarity,
    aligned by item. Returns ``{"delta_vs_no_source": acc(correct) − acc(none),
    "delta_vs_wrong_source": acc(correct) − acc(wrong) or None}``. A Δ near 0 means the
    answer did not depend on the source.
    """
    c = _probs("correct_source", correct_source)
    n = _probs("no_source", no_source)
    if not c:
        raise AnalogistError("source_dependence needs at least one item")
    _same_length(correct_source=c, no_source=n)
    acc_c = sum(c) / len(c)
    out: dict[str, float | None] = {"delta_vs_no_source": acc_c - sum(n) / len(n)}
    if wrong_source is None:
        out["delta_vs_wrong_source"] = None
    else:
        w = _probs("wrong_source", wrong_source)
        _same_length(correct_source=c, wrong_source=w)
        out["delta_vs_wrong_source"] = acc_c - sum(w) / len(w)
    return out


# --------------------------------------------------------------------------- calibration


def brier(confidences: Sequence[float], outcomes: Sequence[bool]) -> float | None:
    """Brier score of stated confidence that an analogy is valid (seed 000 §15; Brier 1950).

    mean over analogies of (p_i − o_i)², p_i ∈ [0, 1] the stated confidence, o_i ∈ {0, 1}
    whether the analogy was valid. 0 is perfect; always saying 0.5 scores 0.25. ``None`` for
    no analogies.
    """
    p = _probs("confidences", confidences)
    o = _flags("outcomes", outcomes)
    _same_length(confidences=p, outcomes=o)
    return _mean_or_none([(pi - oi) ** 2 for pi, oi in zip(p, o, strict=True)])


# --------------------------------------------------------------------------- headline


def _weight(name: str, value: Any) -> float:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise AnalogistError(f"{name} must be a non-negative number, got {value!r}") from None
    if not (f >= 0.0) or math.isinf(f):
        raise AnalogistError(f"{name} must be a finite non-negative number, got {value!r}")
    return f


def nav(U: int, F: int, N: int, O: int, alpha: float = 1.0, beta: float = 2.0) -> float:  # noqa: N803, E741
    """Net Analogical Value, NAV = (U − αF − βN)/O (seed 000 §15, headline metric).

    O: items (opportunities); U: verified-useful analogies (correct source, correct mapping,
    transfer passes); F: accepted false analogies (decoys or no-match items accepted);
    N: negative-transfer events. α = 1, β = 2 by policy (harm counts double). NAV is 0 for a
    system that never proposes and negative for one that proposes many bad analogies.
    O must be positive and U, F, N each at most O.
    """
    u, f, n, o = _count("U", U), _count("F", F), _count("N", N), _count("O", O)
    if o == 0:
        raise AnalogistError("O (number of items) must be positive")
    for name, v in (("U", u), ("F", f), ("N", n)):
        if v > o:
            raise AnalogistError(f"{name} = {v} exceeds the number of items O = {o}")
    a, b = _weight("alpha", alpha), _weight("beta", beta)
    return (u - a * f - b * n) / o


def nav_grid(
    U: int,  # noqa: N803
    F: int,  # noqa: N803
    N: int,  # noqa: N803
    O: int,  # noqa: N803, E741
    weights: Sequence[float] = NAV_GRID_WEIGHTS,
) -> dict[tuple[float, float], float]:
    """NAV sensitivity grid (seed 000 §15): ``{(α, β): nav(U, F, N, O, α, β)}`` for α, β in
    ``weights`` (default {0.5, 1, 2, 3}, 16 cells). "The weights are a policy choice; fix them
    before running and report sensitivity."
    """
    ws = [_weight("weight", w) for w in weights]
    if not ws:
        raise AnalogistError("weights must not be empty")
    return {(a, b): nav(U, F, N, O, a, b) for a in ws for b in ws}


def useful_analogy_precision(U: int, proposed: int) -> float | None:  # noqa: N803
    """Useful Analogy Precision = U / all analogies proposed (seed 000 §15).

    A system that sprays analogies has low precision. ``None`` when nothing was proposed.
    """
    u, p = _count("U", U), _count("proposed", proposed)
    if u > p:
        raise AnalogistError(f"U = {u} exceeds the number of proposed analogies {p}")
    return u / p if p else None


def yield_(U: int, valid_exists: int) -> float | None:  # noqa: N803
    """Yield = U / items where a valid analogy existed (seed 000 §15).

    ``None`` when no item had a valid analogy. (Trailing underscore: ``yield`` is a keyword.)
    """
    u, v = _count("U", U), _count("valid_exists", valid_exists)
    if u > v:
        raise AnalogistError(f"U = {u} exceeds the number of items with a valid analogy {v}")
    return u / v if v else None
