"""PARB aggregation: per-arm metrics (NAV with its interval, recall@k, d′ overall and per decoy
type, cost, verification survival), the family table, the pre-registered hypotheses and the
paired comparisons between arms (definitions in :mod:`analogist.bench.parb.runner`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from analogist.bench.parb import metrics as M
from analogist.bench.parb import stats as S

DECOY_TYPES = ("minimal_pair", "surface_decoy", "far_disanalogy")
KEY_PAIRS = (("C", "B'"), ("C", "C'"), ("D", "C"), ("E", "D"))
N_BOOT = 2000


def _dprime_counts(recs: list[dict[str, Any]], decoy: str | None = None) -> tuple[int, ...]:
    f2 = [r for r in recs if r["family"] == "F2"]
    hits = sum(r["source_correct"] for r in f2)
    fa = sum(1 for r in f2 if r.get("picked_type") and (decoy is None or r["picked_type"] == decoy)
             and not r["source_correct"])
    return hits, len(f2) - hits, fa, len(f2) - fa


def _dprime(recs: list[dict[str, Any]], decoy: str | None = None) -> float | None:
    h, m, fa, cr = _dprime_counts(recs, decoy)
    return M.d_prime(h, m, fa, cr) if h + m and fa + cr else None


def _far(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in recs if r["family"] in ("F3", "F6") and not r["no_match"]]


def _par(rec: dict[str, Any]) -> list[dict[str, Any]]:
    return (rec.get("output") or {}).get("parametric") or []


def arm_metrics(recs: list[dict[str, Any]], ctx_ci_seed: int = 0) -> dict[str, Any]:
    O = len(recs)  # noqa: E741
    U, F, N = (sum(r[k] for r in recs) for k in ("U", "F", "N"))
    contrib = np.array([r["U"] - r["F"] - 2 * r["N"] for r in recs], dtype=float)
    ci = S.paired_bootstrap_ci(contrib, np.zeros_like(contrib), n_boot=N_BOOT, seed=ctx_ci_seed)
    far = _far(recs)
    rk = {str(k): M.recall_at_k([r["ranking"] for r in far], [r["_gold"] for r in far], k)
          if far else None for k in (1, 2, 3, 5, 10)}
    keyed = [r for r in recs if r["_gold"]]
    rk_all = {str(k): M.recall_at_k([r["ranking"] for r in keyed], [r["_gold"] for r in keyed], k)
              if keyed else None for k in (1, 2, 3, 5, 10)}
    mapped = [r for r in recs if "gold_map" in r]
    rmf = M.role_mapping_f1([r["pred_map"] for r in mapped], [r["gold_map"] for r in mapped]) \
        if mapped else {"micro_f1": None, "macro_f1": None}
    parts = [p for r in recs if r["family"] == "F5" for p in r.get("parts", [])]
    f4 = [r for r in recs if r["family"] == "F4"]
    nt = [r["nt_pair"] for r in recs if "nt_pair" in r]
    proposed = sum(r["proposed"] for r in recs)
    valid = sum(1 for r in recs if r["_gold"])
    nm = [r for r in recs if r["no_match"]]
    grid = {f"{a:g},{b:g}": v for (a, b), v in M.nav_grid(U, F, N, O).items()}
    return {
        "n_items": O, "U": U, "F": F, "N": N, "proposed": proposed,
        "nav": M.nav(U, F, N, O), "nav_ci": [ci["lo"], ci["hi"]], "nav_grid": grid,
        "recall_at_5_far": rk["5"], "recall_at_k_far": rk, "recall_at_k_all": rk_all,
        "n_far_items": len(far),
        "no_match_specificity": M.no_match_specificity([not r["proposed"] for r in nm],
                                                       [True] * len(nm)) if nm else None,
        "historical_claim_precision": M.historical_claim_precision(
            [r["chosen"] for r in recs], [r["_gold"] for r in recs]),
        "role_mapping_f1": rmf["micro_f1"], "role_mapping_macro_f1": rmf["macro_f1"],
        "d_prime": _dprime(recs), "d_prime_counts": list(_dprime_counts(recs)),
        "d_prime_by_decoy": {d: _dprime(recs, d) for d in DECOY_TYPES},
        "d_prime_correction": "loglinear (Hautus 1995): +0.5 to every cell",
        "partial_transfer_balanced_accuracy": M.partial_transfer_balanced_accuracy(
            [a for a, _b in parts], [b for _a, b in parts]) if parts else None,
        "transfer_accuracy": M.transfer_accuracy([bool(r["transfer_correct"]) for r in f4])
        if f4 else None,
        "negative_transfer_rate": M.negative_transfer_rate([a for a, _ in nt], [b for _, b in nt])
        if nt else None,
        "brier": M.brier([r["confidence"] for r in recs], [r["source_correct"] for r in recs]),
        "useful_analogy_precision": M.useful_analogy_precision(U, proposed),
        "yield": M.yield_(U, valid),
        "accuracy": sum(r["correct"] for r in recs) / O,
        "parametric": {   # the labelled parametric channel, scored apart (never in U/F/N)
            "proposed": sum(len(_par(r)) for r in recs),
            "judged_transfer": sum(1 for r in recs for p in _par(r) if p.get("transfer")),
            "items_with_any": sum(1 for r in recs if _par(r))},
        "cost": cost_metrics(recs),
        "failed": sum(1 for r in recs if r.get("failed")),
        "verification_survival": None,
    }


def cost_metrics(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """Wall seconds and tokens per item and per useful analogy (U) of one arm's records."""
    O, U = len(recs), sum(r["U"] for r in recs)  # noqa: E741
    wall = sum(float(r.get("wall_s") or 0.0) for r in recs)
    toks = [r.get("tokens") for r in recs]
    tok = None if all(t is None for t in toks) else sum(int(t or 0) for t in toks)
    return {"wall_s": wall, "wall_s_per_item": wall / O if O else None,
            "wall_s_per_U": wall / U if U else None,
            "tokens": tok, "tokens_per_item": tok / O if tok is not None and O else None,
            "tokens_per_U": tok / U if tok is not None and U else None}


def verification_survival(gated: list[dict[str, Any]], ungated: list[dict[str, Any]]
                          ) -> dict[str, Any]:
    """E's verification survival against D's proposals on the same items (paired records)."""
    pairs = [(e, d) for e, d in zip(gated, ungated, strict=True) if d["proposed"]]
    kept = [e["proposed"] and e["chosen"] == d["chosen"] for e, d in pairs]
    useful = [k for k, (_e, d) in zip(kept, pairs, strict=True) if d["U"]]
    false = [not k for k, (_e, d) in zip(kept, pairs, strict=True) if d["F"]]
    return {"survival": M.verification_survival(kept), "n": len(pairs),
            "useful_kept": sum(useful) / len(useful) if useful else None,
            "n_useful": len(useful),
            "false_killed": sum(false) / len(false) if false else None, "n_false": len(false),
            "reference": "D"}


def family_table(recs: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for fam in sorted({r["family"] for r in recs}):
        rs = [r for r in recs if r["family"] == fam]
        U, F, N = (sum(r[k] for r in rs) for k in ("U", "F", "N"))
        out[fam] = {"n": len(rs), "U": U, "F": F, "N": N, "nav": M.nav(U, F, N, len(rs)),
                    "accuracy": sum(r["correct"] for r in rs) / len(rs)}
    return out


def _contrib(recs: list[dict[str, Any]]) -> list[list[int]]:
    return [[r["U"], r["F"], r["N"]] for r in recs]


def _mean_diff(a: list[float], b: list[float], seed: int) -> dict[str, Any] | None:
    if not a:
        return None
    return S.paired_bootstrap_ci(a, b, n_boot=N_BOOT, seed=seed)


def _stat_ci(a: list[float], b: list[float], stat: Callable[[np.ndarray], float],
             seed: int) -> dict[str, Any] | None:
    if not a:
        return None
    return S.paired_bootstrap_ci(a, b, stat=stat, n_boot=N_BOOT, seed=seed)


def _dprime_stat(arr: np.ndarray) -> float:
    n = len(arr)
    h = int(np.sum(arr == 1))
    fa = int(np.sum(arr == 2))
    return M.d_prime(h, n - h, fa, n - fa)


def hypotheses(per_arm: dict[str, list[dict[str, Any]]], seed: int,
               skipped: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def have(*arms: str) -> bool:
        return all(a in per_arm for a in arms)

    def band(n: int) -> float:                      # seed 002 noise floor, as a fraction
        return S.noise_floor(S.min_unanimous_discordant(), 0) / n if n else 0.0

    # H1
    eff: dict[str, float | None] = {}
    cis: dict[str, Any] = {}
    bands: dict[str, float] = {}
    for ctrl, m in (("B'", "recall_at_5_far:C-B'"), ("C'", "recall_at_5_far:C-C'")):
        if have("C", ctrl):
            fc, fx = _far(per_arm["C"]), _far(per_arm[ctrl])
            a = [float(bool(set(r["ranking"][:5]) & set(r["_gold"]))) for r in fc]
            b = [float(bool(set(r["ranking"][:5]) & set(r["_gold"]))) for r in fx]
            d = _mean_diff(a, b, seed)
            if d:
                eff[m], cis[m], bands[m] = d["estimate"], (d["lo"], d["hi"]), band(len(a))
    out["H1"] = S.judge_hypothesis(S.HYPOTHESES["H1"], eff, cis, bands)
    # H2
    eff, cis, bands = {}, {}, {}
    if have("D", "C"):
        def code(r: dict[str, Any]) -> float:
            return 1.0 if r["source_correct"] else (2.0 if r.get("picked_type") else 0.0)
        f2d = [code(r) for r in per_arm["D"] if r["family"] == "F2"]
        f2c = [code(r) for r in per_arm["C"] if r["family"] == "F2"]
        d = _stat_ci(f2d, f2c, _dprime_stat, seed)
        if d:
            eff["d_prime:D-C"], cis["d_prime:D-C"] = d["estimate"], (d["lo"], d["hi"])
        td = [float(bool(r["transfer_correct"])) for r in per_arm["D"] if r["family"] == "F4"]
        tc = [float(bool(r["transfer_correct"])) for r in per_arm["C"] if r["family"] == "F4"]
        d = _mean_diff(td, tc, seed)
        if d:
            m = "transfer_accuracy:D-C"
            eff[m], cis[m], bands[m] = d["estimate"], (d["lo"], d["hi"]), band(len(td))
    out["H2"] = S.judge_hypothesis(S.HYPOTHESES["H2"], eff, cis, bands)
    # H3
    eff, cis, bands = {}, {}, {}
    if have("E", "D"):
        d = S.nav_difference_ci(_contrib(per_arm["E"]), _contrib(per_arm["D"]), n_boot=N_BOOT,
                                seed=seed)
        eff["nav:E-D"], cis["nav:E-D"] = d["estimate"], (d["lo"], d["hi"])
        bands["nav:E-D"] = band(len(per_arm["E"]))
    out["H3"] = S.judge_hypothesis(S.HYPOTHESES["H3"], eff, cis, bands)
    # H4: E vs A1 on F7 nonce items (private F3 items do not exist in generated sets)
    eff, cis, bands = {}, {}, {}
    if have("E", "A1"):
        def nonce(rs: list[dict[str, Any]]) -> list[list[int]]:
            return [[r["U"], r["F"], r["N"]] for r in rs
                    if r["family"] == "F7" and r["item_id"].endswith("-n")]
        e7, a7 = nonce(per_arm["E"]), nonce(per_arm["A1"])
        if e7:
            d = S.nav_difference_ci(e7, a7, n_boot=N_BOOT, seed=seed)
            eff["nav_f7_nonce:E-A1"], cis["nav_f7_nonce:E-A1"] = d["estimate"], (d["lo"], d["hi"])
            bands["nav_f7_nonce:E-A1"] = band(len(e7))
    out["H4"] = S.judge_hypothesis(S.HYPOTHESES["H4"], eff, cis, bands)
    if not have("E", "A1"):
        out["H4"]["reason"] = (f"needs arm A1 ({skipped.get('A1', 'not run')}) and private F3 "
                               "items; not shown")
    else:
        out["H4"]["reason"] = ("measured on F7 nonce items only: generated sets have no private "
                               "F3 items, so the second half of H4 is not shown")
    out["H5"] = S.judge_hypothesis(S.HYPOTHESES["H5"], {}, {})
    out["H5"]["reason"] = ("needs a re-representation loop arm (E + loop), which does not exist "
                           "yet; F8 success of E is reported under the arms, no loop to compare")
    for h in ("H1", "H2", "H3"):
        if all(c["detail"].endswith("not measured") for c in out[h]["conditions"]):
            out[h]["reason"] = "an arm it needs was not run"
    return out


def comparisons(per_arm: dict[str, list[dict[str, Any]]], seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {"nav_vs": {}, "mcnemar": {}}
    for ref in ("B'", "E"):
        if ref not in per_arm:
            continue
        for arm, recs in per_arm.items():
            if arm == ref:
                continue
            d = S.nav_difference_ci(_contrib(recs), _contrib(per_arm[ref]), n_boot=N_BOOT,
                                    seed=seed)
            out["nav_vs"][f"{arm}-{ref}"] = {"estimate": d["estimate"], "ci": [d["lo"], d["hi"]]}
    for a, b in KEY_PAIRS:
        if a in per_arm and b in per_arm:
            out["mcnemar"][f"{a} vs {b}"] = S.mcnemar_from_outcomes(
                [r["correct"] for r in per_arm[a]], [r["correct"] for r in per_arm[b]])
    return out

