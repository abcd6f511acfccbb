"""PARB runner: every arm on every item (paired), scored per split and family (issue 4, item 9).

Scoring rules (per item, per arm; ``chosen`` is the proposed source or None):

* **U** (verified useful) — the chosen source is keyed, and, where keyed, the role mapping is
  one of the keyed structure-preserving mappings (F1, F2, F4, F5, F7, F8), the transfer passes
  its key (F1: the held-back causal edge is among the transferred candidate inferences; F4: the fix carried into target terms
  equals the keyed fix; F5: every part's transfer/withhold decision equals the key).
* **F** (accepted false analogy) — something was proposed and it is not a keyed source: an
  accepted decoy, or any proposal on a no-true-match item.
* **N** (negative transfer) — a part the key says to withhold was transferred (F5).
* NAV = (U − αF − βN)/O with α = 1, β = 2; item contribution U − αF − βN, so NAV is the mean.
* Per-item correctness (McNemar): U, or a no-match item on which nothing was proposed.
* recall@k "far": F3 and F6 items with a true match (the match is always in another domain than
  the target, next to same-domain decoys in a pool of 40); recall@k curves also over all items.
* d′ on F2: one signal and one noise trial per item; hit = picks the far analogy, false alarm =
  picks any decoy; log-linear correction (Hautus 1995: +0.5 per cell). d′ per decoy type counts
  a false alarm only when the picked decoy is of that type.
* **Verification survival** (seed 000 §15, stage F) — defined for the verifying arm E only:
  over the items on which D (the same retrieval and mapping, no verification) proposed a
  source, the share on which E proposed *that same source*, i.e. D's proposal passed E's
  causal-path gate, the decoy probe and — when configured — the critic. Reported with n and
  split into ``useful_kept`` (share of D's U proposals E kept) and ``false_killed`` (share of
  D's F proposals E withheld). Arms without a verification stage report None.
* **Cost** (seed 000 §15) — wall seconds of the arm's ``run`` per item and per useful analogy
  (U); tokens (``total_tokens`` of the arm's ``usage()`` deltas) per item and per U when the arm
  reports LLM usage, else None. Retrieval shared through the per-item cache is charged to the
  first arm that calls it (C before H, D, E in the default order). Wall time is noisy on a
  shared machine: read ratios between arms of one run, never absolute values across runs.
* **Attribution controls** (seed 000 §2; :mod:`analogist.bench.parb.controls`) — with
  ``controls=True`` and the oracle representation, source dependence Δ (vs no source and vs a
  wrong source of matched surface) and the mapping-lesion test for D, E, G and A1 on F1/F4/F5
  items, in ``results["splits"][split]["controls"][arm]``.
* **Private items** (seed 000 §14 holdout rule) run through a separate entry point,
  :func:`analogist.bench.parb.private.run_private`, which reuses :func:`score_item`,
  :func:`arm_metrics` and :func:`comparisons` on F3-shaped items whose pool is a store snapshot
  without the target and anything derived from it.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from analogist.bench.parb import metrics as M
from analogist.bench.parb import stats as S
from analogist.bench.parb.arms import ARM_NAMES, LLM_ARMS, ArmContext, ArmOutput, make_arms
from analogist.bench.parb.controls import CONTROL_ARMS, run_controls, summarize_controls
from analogist.bench.parb.encoded import encode_items, gold_forms, translate_output
from analogist.bench.parb.items import generate, write_jsonl
from analogist.bench.parb.report import write_report as _write_report
from analogist.encode.deterministic import DeterministicEncoder
from analogist.errors import AnalogistError
from analogist.index.embed import default_embedder
from analogist.llm.base import NO_LLM_REASON
from analogist.memory.sqlite import Memory

__all__ = ["run_parb", "score_item"]
DECOY_TYPES = ("minimal_pair", "surface_decoy", "far_disanalogy")
KEY_PAIRS = (("C", "B'"), ("C", "C'"), ("D", "C"), ("E", "D"))
N_BOOT = 2000


# -- per-item scoring --------------------------------------------------------------------------
def _norm(s: str | None) -> str:
    return "".join((s or "").split())


def score_item(item: dict[str, Any], problem: Any, out: ArmOutput,
               forms: dict[str, str] | None = None) -> dict[str, Any]:
    """Score one arm output against the item's key. ``forms`` (encoded representation): the
    keyed F1 inference and F4 fix in the role-term form of
    :func:`analogist.bench.parb.encoded.gold_forms`; ``out`` must then be translated already."""
    fam, key = item["family"], item["key"]
    gold = set(problem.gold)
    chosen = out.chosen
    src_ok = chosen is not None and chosen in gold
    rec: dict[str, Any] = {"item_id": item["item_id"], "family": fam, "split": item["split"],
                           "proposed": chosen is not None, "chosen": chosen,
                           "source_correct": src_ok, "no_match": problem.no_match,
                           "ranking": out.ranking, "confidence": out.confidence}
    # mapping
    mapping_ok: bool | None = None
    if problem.role_mapping is not None:
        pm = out.role_map if (src_ok and out.role_map) else {}
        if chosen is not None and not src_ok and out.role_map:
            pm = {f"wrong:{k}": v for k, v in out.role_map.items()}   # all false positives
        rec["pred_map"] = sorted(pm.items())
        rec["gold_map"] = sorted(problem.role_mapping.items())
        mapping_ok = src_ok and bool(out.role_map) and \
            any(out.role_map == m for m in problem.all_role_mappings)
    rec["mapping_correct"] = mapping_ok
    # transfer
    transfer_ok: bool | None = None
    N = 0
    if fam == "F1":
        ti = key["transferred_inference"]
        inference = f"{ti['cause']} {ti['edge']} {ti['effect']}"
        if forms is not None:
            inference = forms["inference"]
        transfer_ok = chosen is not None and any(_norm(c) == _norm(inference)
                                                 for c in out.conclusions)
    elif fam == "F4":
        fix = key["fix_operator"] if forms is None else forms["fix"]
        transfer_ok = out.fix is not None and _norm(out.fix) == _norm(fix)
    elif fam == "F5":
        parts = out.parts or {p: False for p in key["parts"]}
        if chosen is None:
            parts = {p: False for p in key["parts"]}
        rec["parts"] = [[bool(parts.get(p, False)), v["decision"] == "transfer"]
                        for p, v in sorted(key["parts"].items())]
        transfer_ok = all(a == b for a, b in rec["parts"])
        N = int(any(a and not b for a, b in rec["parts"]))
    rec["transfer_correct"] = transfer_ok
    U = int(src_ok and mapping_ok is not False and transfer_ok is not False)
    F = int(chosen is not None and not src_ok)
    rec.update(U=U, F=F, N=N)
    rec["correct"] = bool(U or (problem.no_match and chosen is None))
    # negative-transfer pairs: analogy-driven action vs the no-analogy arm on the same item
    if out.transfer and chosen is not None:
        if fam == "F5":
            pa = rec["parts"]
            rec["nt_pair"] = [_part_acc(pa), _part_acc([[False, b] for _a, b in pa])]
        else:
            rec["nt_pair"] = [float(U), 1.0 if problem.no_match else 0.0]
    if fam == "F2":
        labels = {c["episode_id"]: c["labels"]["decoy"] for c in item["candidates"]}
        rec["picked_type"] = labels.get(chosen) if chosen else None
    return rec


def _part_acc(pairs: list[list[bool]]) -> float:
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else 0.0


# -- aggregation --------------------------------------------------------------------------------
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


# -- the run ------------------------------------------------------------------------------------
def _json_safe(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, (np.floating, np.integer)):
        return _json_safe(x.item())
    return x


def _arm_names(representation: str, arms: Sequence[str] | None) -> list[str]:
    """Check ``representation`` and the requested arms; return the arm names (prime-normalised)."""
    if representation not in ("oracle", "encoded"):
        raise AnalogistError(f"representation must be 'oracle' or 'encoded', got "
                             f"{representation!r}")
    names = [a.replace("′", "'") for a in (arms or list(ARM_NAMES) + list(LLM_ARMS))]
    unknown = [a for a in names if a not in ARM_NAMES and a not in LLM_ARMS]
    if unknown:
        raise AnalogistError(f"unknown arm(s) {', '.join(unknown)}; known: "
                             f"{', '.join(ARM_NAMES + LLM_ARMS)}")
    return names


def _llm_skips(names: list[str], provider: Any | None,
               critic_provider: Any | None) -> dict[str, str]:
    """The arms and arm channels skipped for want of an LLM, each with the reason."""
    skipped: dict[str, str] = {}
    if provider is None:
        skipped.update({a: NO_LLM_REASON for a in LLM_ARMS if a in names})
    if "E" in names and critic_provider is None:
        skipped["E.critic"] = NO_LLM_REASON
    if "E" in names and provider is None:
        skipped["E.parametric"] = NO_LLM_REASON
    return skipped


def _write_items(out: Path, itemset: Any, items: list[dict[str, Any]],
                 seed: int) -> dict[str, Any]:
    """Write ``items.jsonl`` (generated items only) and ``manifest.json``; return the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    if itemset is not None:
        manifest = write_jsonl(itemset, out / "items.jsonl")
    else:
        manifest = {"n_items": len(items), "seed": seed, "source": "given items"}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n",
                                       encoding="utf-8")
    return manifest


def _encode_all(items: list[dict[str, Any]], encoder: Any, progress: bool) -> Any:
    """Re-write every item's episodes from their text with ``encoder``, under a progress bar."""
    bar = _progress(progress)
    with bar:
        task = bar.add_task("encoding", total=len(items))
        return encode_items(items, encoder, progress=lambda n: bar.update(task, advance=n))


def _run_arm(arm: Any, item: dict[str, Any], run_item: dict[str, Any], pb: Any,
             ctx: ArmContext, enc: Any) -> tuple[ArmOutput, dict[str, Any], float]:
    """Run one arm on one item and score it; return the output, the record and the seconds."""
    tok0 = _tokens(arm)
    t0 = time.perf_counter()
    o = arm.run(run_item, ctx)
    dt = time.perf_counter() - t0
    tok1 = _tokens(arm)
    if enc is not None:
        o_s = translate_output(o, item, pb.query["episode_id"], enc.align[item["item_id"]])
        rec = score_item(item, pb, o_s, forms=gold_forms(item))
    else:
        rec = score_item(item, pb, o)
    if o.failed:     # an LLM failure is a failure, not an abstention
        rec.update(failed=True, correct=False)
    rec["_gold"] = list(pb.gold)
    rec["output"] = o.to_json()
    rec["wall_s"] = dt
    rec["tokens"] = None if tok1 is None else tok1 - (tok0 or 0)
    return o, rec, dt


def _write_per_item(path: Path, items: list[dict[str, Any]],
                    per_arm: dict[str, list[dict[str, Any]]]) -> None:
    """Write the per-item records (paired by construction: same item order for every arm)."""
    with open(path, "w", encoding="utf-8") as fh:
        for i, item in enumerate(items):
            fh.write(json.dumps(_json_safe({
                "item_id": item["item_id"], "family": item["family"], "split": item["split"],
                "arms": {a: {k: v for k, v in per_arm[a][i].items()
                             if k not in ("item_id", "family", "split")} for a in per_arm}}),
                sort_keys=True) + "\n")


def _split_results(per_arm: dict[str, list[dict[str, Any]]], split: str, seed: int,
                   skipped: dict[str, str],
                   ctl_recs: dict[str, list[dict[str, Any]]] | None) -> dict[str, Any]:
    """Metrics, family tables, comparisons, hypotheses and controls for each split present."""
    splits_present = ["dev", "test"] if split == "both" else [split]
    res_splits: dict[str, Any] = {}
    for sp in splits_present:
        sub = {a: [r for r in rs if r["split"] == sp] for a, rs in per_arm.items()}
        if not any(sub.values()) or not next(iter(sub.values())):
            res_splits[sp] = {"arms": {}, "hypotheses": {}, "note": "no items"}
            continue
        arms_m = {a: arm_metrics(rs, seed) for a, rs in sub.items()}
        if "E" in sub and "D" in sub:
            arms_m["E"]["verification_survival"] = verification_survival(sub["E"], sub["D"])
        res_splits[sp] = {
            "n_items": len(next(iter(sub.values()))),
            "arms": arms_m,
            "families": {a: family_table(rs) for a, rs in sub.items()},
            "comparisons": comparisons(sub, seed),
            "hypotheses": hypotheses(sub, seed, skipped),
        }
        if ctl_recs is not None:
            res_splits[sp]["controls"] = {
                a: summarize_controls([r for r in rs if r["split"] == sp], seed)
                for a, rs in ctl_recs.items()}
    return res_splits


def _definitions() -> dict[str, str]:
    """What each reported quantity means (written into ``results.json``)."""
    return {
        "U": "keyed source chosen, keyed role mapping (where keyed), transfer passes its key",
        "F": "proposal that is not a keyed source (accepted decoy / no-match item)",
        "N": "a part keyed 'withhold' was transferred (F5)",
        "nav": "(U - 1*F - 2*N)/O; nav_ci: seeded percentile bootstrap of the item mean",
        "far_items": "F3/F6 items with a true match (other domain, same-domain decoys in "
                     "a pool of 40)",
        "d_prime": "F2: hit = picks the far analogy, false alarm = picks a decoy; "
                   "loglinear correction (+0.5 per cell)",
        "correct": "U, or nothing proposed on a no-match item (McNemar unit); an item the "
                   "arm failed on (an LLM error) is never correct",
        "failed": "items on which the arm could not answer because an LLM call failed "
                  "(counted as failures, never as abstentions); llm_usage: per arm calls, "
                  "failures, tokens and seconds",
        "noise_band": "seed 002: noise_floor(6 items, drift 0) / n",
        "verification_survival": "E only: of the items where D proposed a source, the share "
                                 "where E proposed that same source (it passed the causal-"
                                 "path gate, the decoy probe and, when configured, the "
                                 "critic); useful_kept / false_killed split it by D's U / F",
        "cost": "wall seconds of the arm's run() per item and per U (shared retrieval is "
                "charged to the first arm calling it); tokens (usage() total_tokens deltas) "
                "per item and per U when the arm reports LLM usage",
        "source_dependence": "controls.py: answer correct on the item's key (F1 inference "
                             "transferred, F4 fix equal, F5 all part decisions equal) with "
                             "the correct source minus with no source / with a surface "
                             "decoy of the source (another template, source's domain, "
                             "seeded by item id); paired bootstrap 95% CI",
        "lesion_sensitivity": "controls.py: share of lesions (one load-bearing source "
                              "relation/edge deleted: F5 the transferred part, F1 the first "
                              "edge of the conclusion's supporting path, F4 the first edge "
                              "into the mechanism's sink) after which the focal transferred "
                              "conclusion is no longer transferred; unchanged = "
                              "rationalisation",
    }


def run_parb(n_items: int, arms: Sequence[str] | None = None, representation: str = "oracle",
             split: str = "both", seed: int = 0, out_dir: str | Path = "parb_out",
             progress: bool = True, embedder: Any | None = None,
             write_report: bool = True, encoder: Any | None = None,
             provider: Any | None = None, critic_provider: Any | None = None,
             items: list[dict[str, Any]] | None = None,
             controls: bool = True) -> dict[str, Any]:
    """Generate ``n_items`` items, run every arm on every item, score, write results.

    ``representation``: ``"oracle"`` (the generator's gold signatures) or ``"encoded"`` (every
    episode re-written from its text by ``encoder``, default the deterministic encoder; see
    :mod:`analogist.bench.parb.encoded`). ``provider``: an LLM for arms A0/A1 and E's parametric
    channel; ``critic_provider``: the independent critic used by arm E (default: ``provider``).
    Without an LLM, A0/A1 are reported as skipped and E runs without critic and parametric
    channel, and says so in ``results["skipped"]``. ``controls``: run the attribution controls
    (:mod:`analogist.bench.parb.controls`) for D, E, G and A1 on F1/F4/F5 items (oracle
    representation only; under ``encoded`` they are reported as skipped).
    """
    names = _arm_names(representation, arms)
    critic_provider = critic_provider if critic_provider is not None else provider
    skipped = _llm_skips(names, provider, critic_provider)
    run_names = [a for a in names if a not in LLM_ARMS or provider is not None]
    arm_objs = make_arms(run_names, provider=provider, critic_provider=critic_provider)
    itemset = generate(n_items, seed, split) if items is None else None
    all_items = itemset.items if itemset is not None else items
    out = Path(out_dir)
    manifest = _write_items(out, itemset, all_items, seed)
    if embedder is None:
        embedder = default_embedder()

    enc = None
    if representation == "encoded":
        if encoder is None:
            encoder = DeterministicEncoder(embedder=embedder)
        enc = _encode_all(all_items, encoder, progress)
    per_arm: dict[str, list[dict[str, Any]]] = {a.name: [] for a in arm_objs}
    ctl_out: dict[str, dict[str, ArmOutput]] = {a.name: {} for a in arm_objs
                                                if a.name in CONTROL_ARMS}
    ctl_recs: dict[str, list[dict[str, Any]]] | None = None
    if controls and representation != "oracle":
        skipped["controls"] = ("attribution controls need the oracle representation (the wrong "
                               "and lesioned sources are generated signatures)")
    timings = {a.name: 0.0 for a in arm_objs}
    usage: dict[str, Any] = {}
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parb-") as tmp:
        mem = Memory.open(Path(tmp) / "parb.db")
        try:
            ctx = ArmContext(mem, embedder, seed=seed)
            bar = _progress(progress)
            with bar:
                task = bar.add_task("PARB", total=len(all_items))
                for i, item in enumerate(all_items):
                    run_item = enc.items[i] if enc is not None else item
                    ctx.encoded_align = enc.align[item["item_id"]] if enc is not None else None
                    pb = ctx.begin(run_item)
                    for arm in arm_objs:
                        o, rec, dt = _run_arm(arm, item, run_item, pb, ctx, enc)
                        timings[arm.name] += dt
                        if arm.name in ctl_out and enc is None:
                            ctl_out[arm.name][item["item_id"]] = o
                        per_arm[arm.name].append(rec)
                    bar.update(task, advance=1)
            for a in arm_objs:
                u = getattr(a, "usage", None)
                if u is not None:
                    usage[a.name] = u()
            if controls and representation == "oracle" and ctl_out:
                c_arms = [a for a in arm_objs if a.name in ctl_out]
                ctl_recs = run_controls(all_items, c_arms, ArmContext(mem, embedder, seed=seed),
                                        correct_outputs=ctl_out)
        finally:
            mem.close()
    elapsed = time.perf_counter() - t_start
    _write_per_item(out / "per_item.jsonl", all_items, per_arm)
    results = {
        "manifest": {k: v for k, v in manifest.items()},
        "representation": representation,
        "arms_run": [a.name for a in arm_objs],
        "arms_requested": names,
        "splits": _split_results(per_arm, split, seed, skipped, ctl_recs),
        "skipped": skipped,
        "paired": all(len(rs) == len(all_items) for rs in per_arm.values()),
        "encoder": enc.stats if enc is not None else None,
        "llm_usage": usage,
        "timing_s": {"total": elapsed, **timings},
        "definitions": _definitions(),
    }
    results = _json_safe(results)
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=False) + "\n",
                                      encoding="utf-8")
    if write_report:
        _write_report(results, out)
    return results


def _tokens(arm: Any) -> int | None:
    u = getattr(arm, "usage", None)
    if u is None:
        return None
    d = u()
    if not d or d.get("total_tokens") is None:
        return None
    return int(d["total_tokens"])


class _NullBar:
    def __enter__(self) -> _NullBar:
        return self

    def __exit__(self, *a: object) -> None:
        return None

    def add_task(self, *a: Any, **k: Any) -> int:
        return 0

    def update(self, *a: Any, **k: Any) -> None:
        return None


def _progress(enabled: bool) -> Any:
    if not enabled:
        return _NullBar()
    # on stderr, never redirecting stdout (the report, JSON included, stays clean); silent
    # when stderr is not a terminal
    console = Console(stderr=True)
    return Progress("[progress.description]{task.description}", BarColumn(),
                    MofNCompleteColumn(), TimeRemainingColumn(), console=console,
                    redirect_stdout=False, redirect_stderr=False,
                    disable=not console.is_terminal)
