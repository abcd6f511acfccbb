"""PARB statistics: the hypothesis cards H1–H5 and their verdicts, over the project's paired
tests, bootstrap intervals and noise floors (:mod:`analogist.stats`, re-exported here).

Seed 000 §15 ("Statistics"): the design is paired — every arm sees every item — so arms are
compared with *paired* bootstrap confidence intervals on NAV and *exact McNemar* tests on
per-item correctness; with small item sets only large effects are detectable and the results
must say so. Seed 002 ("Honesty about noise") supplies the rules used here for the smallest
detectable swing (``p = 2 * 0.5**n`` when every discordant item moves the same way, first
under 0.05 at n = 6), the noise floor ``max(min_detectable, observed_drift + 1)``, and the
rule that a difference inside the noise band is reported as "not shown", never as "no effect".
Seed 000 §16 supplies the hypothesis cards H1–H5 and their pre-registered "keep if" thresholds.

Everything here is a pure function of its arguments (random draws come from an explicit seed);
numpy is the only dependency. Bad input raises :class:`analogist.errors.AnalogistError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from analogist.errors import AnalogistError

__all__ = [
    "HYPOTHESES",
    "judge_hypothesis",
    "mcnemar_exact",
    "mcnemar_from_outcomes",
    "min_unanimous_discordant",
    "minimum_detectable_swing",
    "nav_difference_ci",
    "noise_floor",
    "norm_cdf",
    "norm_ppf",
    "paired_bootstrap_ci",
]


from analogist.stats import (  # noqa: F401 - re-exported: PARB's statistics API
    _finite_vector,
    _level,
    mcnemar_exact,
    mcnemar_from_outcomes,
    min_unanimous_discordant,
    minimum_detectable_swing,
    nav_difference_ci,
    noise_floor,
    norm_cdf,
    norm_ppf,
    paired_bootstrap_ci,
)

# --------------------------------------------------------------------------- hypothesis cards

# Seed 000 §16, "Hypothesis cards", H1–H5 (H6 concerns blend-worker, outside PARB).
# Each condition is machine-checkable: ``measure`` names the effect (manipulation − control,
# in the measure's own units: fractions for accuracies/recall, raw for d′ and NAV);
# kind "improve" needs effect ≥ min_effect with a CI excluding 0 on the positive side;
# kind "not_worse" (for lower-is-better measures, effect = manipulation − control) fails only
# when the CI shows a significant increase. ``combine`` says whether all or any conditions
# must hold.
HYPOTHESES: dict[str, dict[str, Any]] = {
    "H1": {
        "id": "H1",
        "claim": "Structural signatures retrieve far analogues that semantic retrieval misses",
        "manipulation": "Signature index (C)",
        "control": "B′ and C′",
        "measure": "Recall@5 on far-analogy items",
        "failure_signature": "C ≤ B′, or C ≈ C′ (gain is from any extra structure-shaped text)",
        "keep_if": "C beats B′ by ≥ 15 points on far items, CI excluding 0, and beats C′",
        "combine": "all",
        "conditions": [
            {"measure": "recall_at_5_far:C-B'", "kind": "improve", "min_effect": 0.15},
            {"measure": "recall_at_5_far:C-C'", "kind": "improve", "min_effect": 0.0},
        ],
    },
    "H2": {
        "id": "H2",
        "claim": "Forced mapping improves transfer and decoy rejection",
        "manipulation": "Mapping step (D)",
        "control": "C",
        "measure": "Role-mapping F1, d′, transfer accuracy",
        "failure_signature": "No change in d′; transfer flat while cost rises",
        "keep_if": "d′ up by ≥ 0.3 or transfer up ≥ 10 points",
        "combine": "any",
        "conditions": [
            {"measure": "d_prime:D-C", "kind": "improve", "min_effect": 0.3},
            {"measure": "transfer_accuracy:D-C", "kind": "improve", "min_effect": 0.10},
        ],
    },
    "H3": {
        "id": "H3",
        "claim": "Verification raises net value by cutting false and harmful analogies",
        "manipulation": "Gate + critic + prediction (E)",
        "control": "D",
        "measure": "NAV; precision; negative-transfer rate",
        "failure_signature": "NAV flat because Yield falls as much as F and N",
        "keep_if": "NAV up with CI excluding 0",
        "combine": "all",
        "conditions": [{"measure": "nav:E-D", "kind": "improve", "min_effect": 0.0}],
    },
    "H4": {
        "id": "H4",
        "claim": "Machinery adds value beyond the base model",
        "manipulation": "Full system (E)",
        "control": "A1",
        "measure": "NAV on F7 nonce items and F3 private items",
        "failure_signature": "E ≈ A1 on synthetic items (the LLM already does it)",
        "keep_if": "E beats A1 on both item sources",
        "combine": "all",
        "conditions": [
            {"measure": "nav_f7_nonce:E-A1", "kind": "improve", "min_effect": 0.0},
            {"measure": "nav_f3_private:E-A1", "kind": "improve", "min_effect": 0.0},
        ],
    },
    "H5": {
        "id": "H5",
        "claim": "Re-representation recovers missed matches",
        "manipulation": "Loop (E + loop)",
        "control": "E",
        "measure": "F8 success",
        "failure_signature": "No gain; loop mostly adds false positives",
        "keep_if": "F8 success up ≥ 15 points with F6 false positives not worse",
        "combine": "all",
        "conditions": [
            {"measure": "f8_success:E+loop-E", "kind": "improve", "min_effect": 0.15},
            {"measure": "f6_false_positive_rate:E+loop-E", "kind": "not_worse"},
        ],
    },
}


def _as_ci(measure: str, ci: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in ci)
    except (TypeError, ValueError):
        raise AnalogistError(f"CI for {measure} must be a (lo, hi) pair, got {ci!r}") from None
    if math.isnan(lo) or math.isnan(hi) or lo > hi:
        raise AnalogistError(f"CI for {measure} must satisfy lo <= hi, got ({lo}, {hi})")
    return lo, hi


def _judge_condition(cond: Mapping[str, Any], effect: float, ci: tuple[float, float], band: float):
    lo, hi = ci
    measure = cond["measure"]
    if cond["kind"] == "not_worse":
        if lo > 0 and effect > band:
            return (
                "failed",
                f"{measure}: significantly worse (effect {effect:+.4g}, CI [{lo:.4g}, {hi:.4g}])",
            )
        return "kept", f"{measure}: not worse (effect {effect:+.4g}, CI [{lo:.4g}, {hi:.4g}])"
    threshold = float(cond.get("min_effect", 0.0))
    desc = f"{measure}: effect {effect:+.4g}, CI [{lo:.4g}, {hi:.4g}], keep if ≥ {threshold:g} with CI > 0"
    if lo <= 0.0 <= hi:
        return "not shown", desc + " — CI includes 0"
    if abs(effect) <= band:
        return "not shown", desc + f" — inside the noise band (±{band:g})"
    if lo > 0 and effect >= threshold:
        return "kept", desc
    return "failed", desc


def judge_hypothesis(
    card: Mapping[str, Any],
    effect: float | Mapping[str, float],
    ci: Sequence[float] | Mapping[str, Sequence[float]],
    noise_band: float | Mapping[str, float] = 0.0,
) -> dict[str, Any]:
    """Verdict for one hypothesis card of seed 000 §16 against its pre-registered threshold.

    ``effect`` / ``ci`` are the manipulation − control effect and its CI, either a single
    float and (lo, hi) pair for a one-condition card, or mappings keyed by the card's
    condition measures. ``noise_band`` (same units; a float or per-measure mapping) is the
    seed 002 noise floor expressed as an effect size.

    Per "improve" condition: "not shown" when the CI includes 0 or |effect| ≤ noise band
    (seed 002: a small delta means "not shown", not "no effect"); "kept" when the CI lies
    above 0 and the effect reaches ``min_effect``; otherwise "failed" (a significant effect
    in the wrong direction, or one below the pre-registered bar — nothing is re-tuned to rescue
    it, issue 4). A "not_worse" condition fails only on a significant increase.
    ``combine="all"``: failed if any condition failed, else not shown if any is not shown,
    else kept. ``combine="any"``: kept if any condition is kept, else not shown if any is,
    else failed. A condition whose measure is missing (an arm was skipped) is "not shown".
    Returns ``{"id", "verdict", "keep_if", "conditions": [{"measure", "verdict", "detail"}]}``.
    """
    if not isinstance(card, Mapping) or "conditions" not in card or not card["conditions"]:
        raise AnalogistError("card must be a hypothesis card with conditions (see HYPOTHESES)")
    conds = list(card["conditions"])
    measures = [c["measure"] for c in conds]
    if isinstance(effect, Mapping):
        effects = dict(effect)
        if not isinstance(ci, Mapping):
            raise AnalogistError("when effect is a mapping, ci must be a mapping too")
        cis = dict(ci)
    else:
        if len(conds) != 1:
            raise AnalogistError(
                f"card {card.get('id')} has {len(conds)} conditions ({', '.join(measures)}): "
                "pass effect and ci as mappings keyed by measure"
            )
        effects, cis = {measures[0]: effect}, {measures[0]: ci}
    results = []
    for cond in conds:
        m = cond["measure"]
        if cond.get("kind") not in ("improve", "not_worse"):
            raise AnalogistError(f"condition {m}: kind must be 'improve' or 'not_worse'")
        if m not in effects or effects[m] is None or m not in cis or cis[m] is None:
            results.append({"measure": m, "verdict": "not shown", "detail": f"{m}: not measured"})
            continue
        e = float(effects[m])
        if math.isnan(e):
            raise AnalogistError(f"effect for {m} is NaN")
        band = float(noise_band.get(m, 0.0) if isinstance(noise_band, Mapping) else noise_band)
        if band < 0 or math.isnan(band):
            raise AnalogistError(f"noise band for {m} must be non-negative, got {band}")
        verdict, detail = _judge_condition(cond, e, _as_ci(m, cis[m]), band)
        results.append({"measure": m, "verdict": verdict, "detail": detail})
    verdicts = [r["verdict"] for r in results]
    combine = card.get("combine", "all")
    if combine == "all":
        overall = (
            "failed" if "failed" in verdicts else "not shown" if "not shown" in verdicts else "kept"
        )
    elif combine == "any":
        overall = (
            "kept" if "kept" in verdicts else "not shown" if "not shown" in verdicts else "failed"
        )
    else:
        raise AnalogistError(f"card combine must be 'all' or 'any', got {combine!r}")
    return {
        "id": card.get("id"),
        "verdict": overall,
        "keep_if": card.get("keep_if"),
        "conditions": results,
    }
