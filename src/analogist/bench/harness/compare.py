"""Paired comparison of two harness result files (seed 002, "compare.py" and "Honesty about
noise").

A query's outcome on one side is its hit@5 (for ``nonsense``: reported no match) in the majority
of that side's runs (a tie goes to run 1). The two sides are paired query by query:

* the exact McNemar test on the discordant queries (:func:`analogist.bench.parb.stats.
  mcnemar_exact`);
* the minimum detectable swing: seed 002's rule, the fewest unanimous discordant queries that can
  reach p < alpha (:func:`~analogist.bench.parb.stats.min_unanimous_discordant`: 6 at 0.05),
  plus, for power, Connor's (1987) paired-design swing for the set's size
  (:func:`~analogist.bench.parb.stats.minimum_detectable_swing`, discordance assumed 0.25);
* observed run-to-run drift: queries whose outcome is not the same in every run of a side; the
  larger of the two sides is used;
* the noise floor ``max(min detectable, drift + 1)`` (:func:`~analogist.bench.parb.stats.
  noise_floor`);
* per category, the same pairing restricted to that category's queries (fixed, broken, exact
  McNemar p), so that a category a gold set is built to probe (``structural``) can be read on
  its own; the verdict stays the whole set's.

Verdict wording follows seed 002: a net change is called only when McNemar's p < alpha *and* the
net swing reaches the noise floor; otherwise the verdict is "no measurable difference", with the
direction and the discordant counts stated (a small positive delta means "not shown", not "no
effect"). Latency ratios are reported, never judged.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from analogist.bench.parb.stats import (
    mcnemar_exact,
    min_unanimous_discordant,
    minimum_detectable_swing,
    noise_floor,
)
from analogist.errors import AnalogistError

from .goldset import read_json_file
from .runner import RESULT_FORMAT

METRICS = ("hit@5", "recall@5", "recall@10", "precision@5", "mrr@10")
COMPARE_FORMAT = "analogist-harness-compare/1"


def _check(res: Any, label: str) -> None:
    if not isinstance(res, dict) or res.get("format") != RESULT_FORMAT:
        raise AnalogistError(f"not a harness result file (format {RESULT_FORMAT!r} expected)",
                             source=label, field="format")
    runs = res.get("runs")
    if not isinstance(runs, list) or not runs:
        raise AnalogistError("no runs in the result file", source=label, field="runs")
    ids = res.get("gold", {}).get("ids")
    for i, r in enumerate(runs):
        rows = r.get("rows") if isinstance(r, dict) else None
        if not isinstance(rows, list) or [x.get("id") for x in rows] != ids:
            raise AnalogistError("run rows do not match the gold set's query ids", source=label,
                                 field=f"runs[{i}].rows")


def outcomes(res: dict[str, Any]) -> tuple[list[int], int]:
    """Per-query majority outcome and the run-to-run drift (queries not identical in every
    run)."""
    runs = res["runs"]
    n = len(runs[0]["rows"])
    out, drift = [], 0
    for i in range(n):
        hits = [int(r["rows"][i]["hit@5"] >= 1.0) for r in runs]
        if len(set(hits)) > 1:
            drift += 1
        s = sum(hits)
        out.append(1 if 2 * s > len(hits) else 0 if 2 * s < len(hits) else hits[0])
    return out, drift


def _mean_summary(res: dict[str, Any]) -> dict[str, Any]:
    sums = [r["summary"] for r in res["runs"]]
    out: dict[str, Any] = {m: statistics.fmean(s[m] for s in sums) for m in METRICS}
    for key in ("p50", "p95", "max"):
        out[f"latency_{key}_ms"] = statistics.median(s["latency_ms"][key] for s in sums)
    out["nonsense_clean"] = sums[0]["nonsense_clean"]
    out["no_match_on_answerable"] = [sums[0].get("no_match_on_answerable", 0),
                                     sums[0]["answerable"]]
    out["superseded_outranks"] = sums[0]["superseded_outranks"]
    cats: dict[str, float] = {}
    for c in sums[0]["by_category"]:
        cats[c] = statistics.fmean(s["by_category"][c]["hit@5"] for s in sums)
    out["by_category_hit@5"] = cats
    return out


def compare_results(baseline: dict[str, Any], candidate: dict[str, Any], *,
                    alpha: float = 0.05, labels: tuple[str, str] = ("baseline", "candidate")
                    ) -> dict[str, Any]:
    """The paired comparison document (see the module docstring)."""
    _check(baseline, labels[0])
    _check(candidate, labels[1])
    if baseline["gold"]["ids"] != candidate["gold"]["ids"] or \
            baseline["gold"].get("store_fingerprint") != candidate["gold"].get(
                "store_fingerprint"):
        raise AnalogistError("the two result files were not run on the same gold set",
                             field="gold")
    a, drift_a = outcomes(baseline)
    b, drift_b = outcomes(candidate)
    ids = baseline["gold"]["ids"]
    fixed = [q for q, x, y in zip(ids, a, b, strict=True) if x == 0 and y == 1]
    broken = [q for q, x, y in zip(ids, a, b, strict=True) if x == 1 and y == 0]
    p = mcnemar_exact(len(broken), len(fixed))
    net = len(fixed) - len(broken)
    m_items = min_unanimous_discordant(alpha)
    drift = max(drift_a, drift_b)
    floor = noise_floor(m_items, drift)
    connor = minimum_detectable_swing(len(ids), alpha=alpha)
    sa, sb = _mean_summary(baseline), _mean_summary(candidate)
    if p < alpha and abs(net) >= floor:
        verdict = ("candidate better: a measurable improvement" if net > 0 else
                   "candidate worse: a measurable regression")
    else:
        if net == 0:
            direction = "no net change"
        else:
            direction = ("directionally better" if net > 0 else "directionally worse") + \
                f", inside the noise band of {floor:g} queries"
        verdict = (f"no measurable difference ({direction}; {len(fixed)} fixed, "
                   f"{len(broken)} broken)")
        if (not fixed or not broken) and 0 < abs(net) < floor:
            verdict += (f"; {abs(net)} of {abs(net)} the same way, needs "
                        f"{math.ceil(floor - abs(net))} more or a larger gold set to call")
    cats = [q.get("category") for q in baseline["runs"][0]["rows"]]
    per_cat: dict[str, dict[str, Any]] = {}
    for c in dict.fromkeys(cats):
        fx = [q for q, x, y, k in zip(ids, a, b, cats, strict=True) if k == c and x < y]
        br = [q for q, x, y, k in zip(ids, a, b, cats, strict=True) if k == c and x > y]
        per_cat[str(c)] = {"n": cats.count(c), "fixed": fx, "broken": br,
                           "mcnemar_p": mcnemar_exact(len(br), len(fx))}
    lat = {}
    for key in ("p50", "p95", "max"):
        x, y = sa[f"latency_{key}_ms"], sb[f"latency_{key}_ms"]
        lat[key] = {"baseline_ms": x, "candidate_ms": y,
                    "ratio": (y / x) if x > 0 else None}
    return {
        "format": COMPARE_FORMAT,
        "baseline": {"retriever": baseline.get("retriever"), "runs": len(baseline["runs"]),
                     "system_under_test": baseline.get("system_under_test"), "summary": sa},
        "candidate": {"retriever": candidate.get("retriever"), "runs": len(candidate["runs"]),
                      "system_under_test": candidate.get("system_under_test"), "summary": sb},
        "queries": len(ids),
        "delta": {m: sb[m] - sa[m] for m in METRICS},
        "by_category_hit@5": {c: {"baseline": sa["by_category_hit@5"].get(c),
                                  "candidate": sb["by_category_hit@5"].get(c)}
                              for c in sa["by_category_hit@5"]},
        "by_category_paired": per_cat,
        "fixed": fixed, "broken": broken, "net": net,
        "mcnemar_p": p, "alpha": alpha,
        "min_detectable_queries": m_items,
        "min_detectable_swing_connor": connor if math.isfinite(connor) else None,
        "drift": {"baseline": drift_a, "candidate": drift_b},
        "noise_floor_queries": floor,
        "latency": lat,
        "verdict": verdict,
    }


def _load(path: str | Path) -> dict[str, Any]:
    return read_json_file(path)


def compare_files(a: str | Path, b: str | Path, alpha: float = 0.05) -> dict[str, Any]:
    return compare_results(_load(a), _load(b), alpha=alpha, labels=(str(a), str(b)))


def render(cmp: dict[str, Any]) -> str:
    """A plain-text table plus the verdict."""
    sa, sb = cmp["baseline"]["summary"], cmp["candidate"]["summary"]
    name_a = cmp["baseline"]["retriever"]
    name_b = cmp["candidate"]["retriever"]
    lines = [f"{'':22}{name_a:>14}{name_b:>14}{'delta':>12}"]
    for m in METRICS:
        d = cmp["delta"][m]
        if m == "mrr@10":
            lines.append(f"{m:22}{sa[m]:>14.3f}{sb[m]:>14.3f}{d:>+12.3f}")
        else:
            lines.append(f"{m:22}{sa[m]:>13.1%} {sb[m]:>13.1%} {d * 100:>+10.1f}pp")
    for key in ("p50", "p95"):
        r = cmp["latency"][key]
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        lines.append(f"{'latency ' + key:22}{r['baseline_ms']:>11.1f} ms{r['candidate_ms']:>11.1f}"
                     f" ms{ratio:>12}")
    for key in ("nonsense_clean", "superseded_outranks", "no_match_on_answerable"):
        x, y = sa[key], sb[key]
        lines.append(f"{key.replace('_', ' '):22}{f'{x[0]}/{x[1]}':>14}{f'{y[0]}/{y[1]}':>14}")
    lines.append("")
    lines.append("by category (hit@5; paired: fixed/broken, McNemar exact p)")
    paired = cmp.get("by_category_paired") or {}
    for c, v in cmp["by_category_hit@5"].items():
        pc = paired.get(c)
        tail = (f"   {len(pc['fixed'])}/{len(pc['broken'])}, p = {pc['mcnemar_p']:.4g}"
                if pc else "")
        lines.append(f"  {c:20}{v['baseline']:>13.1%} {v['candidate']:>13.1%}{tail}")
    lines.append("")
    lines.append(f"queries {cmp['queries']}; fixed {len(cmp['fixed'])}, broken "
                 f"{len(cmp['broken'])}, net {cmp['net']:+d}; McNemar exact p = "
                 f"{cmp['mcnemar_p']:.4g}; minimum detectable swing {cmp['min_detectable_queries']}"
                 f" queries; drift {cmp['drift']['baseline']}/{cmp['drift']['candidate']}; "
                 f"noise floor {cmp['noise_floor_queries']:g} queries")
    lines.append(f"verdict: {cmp['verdict']}")
    return "\n".join(lines)
