"""Hidden-factor evaluation of foresight (issue 6): CANA vs the surface-only baseline.

Run:  python benchmarks/foresight_eval.py [--out benchmarks/results/foresight]

Every bundled corpus event with a cutoff and something hidden is a target, leave-one-out (the
target, its aliases, sub-events and super-events removed from the pool). Pools: ``loo`` (every
other event), ``past`` (only events that began before the target's cutoff) and ``cross`` (only
events of other domains). Arms, paired on the same targets: cana (the reflective loop), cana_r0
(round 0 only), single (the best analogy alone, no confirmation) and surface (embedding
similarity of the pre-cutoff brief to event descriptions, then the same confirmation).

π per position and (q, p) per analogy strength are calibrated in the run on the dev targets,
for each arm with its own evidence, and applied unchanged to the test targets. Writes
calibration.json, results_<pool>.json (summary and per-target rows), the paper's uncalibrated
regime, a δ sweep (delta_sweep.json/.png), report.md, recall_precision.png and the Structural
Analogy Briefs of three showcase targets (cut at their own cutoffs, leave-one-out).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from analogist import __version__
from analogist.foresight.brief import write_brief
from analogist.foresight.calibrate import bundled_calibration, calibrate
from analogist.foresight.confirm import ConfirmParams
from analogist.foresight.evaluate import ARMS, eval_targets, evaluate, loo_pool, split_of
from analogist.foresight.event import load_corpus
from analogist.foresight.loop import ForesightParams, run_foresight
from analogist.index.embed import default_embedder

HERE = Path(__file__).resolve().parent
SHOWCASE = ("global-financial-crisis-2007-2008", "covid-19-pandemic", "arab-spring")


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _table(summary: dict, title: str) -> list[str]:
    out = [f"### {title}", "", f"targets {summary['n_targets']}, hidden factors "
           f"{summary['n_hidden']}", "",
           "| arm | recall | 95% CI | precision | 95% CI | hits | asserted | targets with a hit |",
           "|---|---|---|---|---|---|---|---|"]
    for arm, m in summary.get("arms", {}).items():
        out.append(f"| {arm} | {_fmt(m['recall'])} | [{_fmt(m['recall_ci'][0])}, "
                   f"{_fmt(m['recall_ci'][1])}] | {_fmt(m['precision'])} | "
                   f"[{_fmt(m['precision_ci'][0])}, {_fmt(m['precision_ci'][1])}] | {m['tp']} | "
                   f"{m['asserted']} | {m['targets_with_a_hit']} |")
    if summary.get("paired"):
        out += ["", "| comparison | macro recall diff [95% CI] | McNemar on hidden factors "
                    "(a only / b only, p) | false assertions per target diff [95% CI] |",
                "|---|---|---|---|"]
        for k, c in summary["paired"].items():
            r, mc, fp = (c["macro_recall_diff"], c["mcnemar_hidden_factors"],
                         c["false_assertions_per_target_diff"])
            out.append(f"| {k} | {r['estimate']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}] | "
                       f"{mc['a_only']} / {mc['b_only']}, p={mc['p']:.4f} | "
                       f"{fp['estimate']:+.2f} [{fp['lo']:+.2f}, {fp['hi']:+.2f}] |")
    return out + [""]


def _plot(results: dict[str, dict], path: Path) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # pragma: no cover
        return f"plot skipped ({type(e).__name__})"
    pools = list(results)
    fig, axes = plt.subplots(1, len(pools), figsize=(5.2 * len(pools), 3.6), squeeze=False)
    for ax, pool in zip(axes[0], pools, strict=True):
        s = results[pool]["summary"]["all"]["arms"]
        arms = list(s)
        for j, metric in enumerate(("recall", "precision")):
            xs = [i + (j - 0.5) * 0.36 for i in range(len(arms))]
            vals = [s[a][metric] or 0.0 for a in arms]
            lo = [max(0.0, v - (s[a][f"{metric}_ci"][0] or v)) for a, v in zip(arms, vals,
                                                                               strict=True)]
            hi = [max(0.0, (s[a][f"{metric}_ci"][1] or v) - v) for a, v in zip(arms, vals,
                                                                               strict=True)]
            ax.bar(xs, vals, width=0.34, yerr=[lo, hi], capsize=3, label=metric,
                   color=("#5b9bd5", "#ed7d31")[j])
        ax.set_xticks(range(len(arms)))
        ax.set_xticklabels(arms)
        ax.set_ylim(0, 1)
        ax.set_title(f"pool={pool}: hidden factors at 1−δ (95% CI)", fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def _pr_plot(sweep: dict[str, dict[str, list]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    for arm, pts in sweep.items():
        xs = [p["recall"] for p in pts]
        ys = [p["precision"] if p["precision"] is not None else float("nan") for p in pts]
        ax.plot(xs, ys, marker="o", label=arm)
        for p in pts:
            if p["precision"] is not None:
                ax.annotate(f"δ={p['delta']}", (p["recall"], p["precision"]), fontsize=6,
                            xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("hidden-factor recall")
    ax.set_ylabel("precision of asserted hidden factors")
    ax.set_ylim(0, 1.05)
    ax.set_title("calibrated posterior thresholds 1−δ (pool=loo, all targets)", fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "results" / "foresight")
    ap.add_argument("--pools", nargs="*", default=["loo", "past", "cross"])
    ap.add_argument("--deltas", type=float, nargs="*", default=[0.05, 0.1, 0.2, 0.3, 0.5])
    args = ap.parse_args(argv)
    console = Console()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    corpus = load_corpus()
    embedder = default_embedder()
    dev = [e for e in eval_targets(corpus) if split_of(e.event_id) == "dev"]
    t0 = time.perf_counter()
    base = ForesightParams()
    cal_c = calibrate(corpus, dev, params=base, arm="cana", embedder=embedder,
                      source=f"dev split ({len(dev)} targets), in this run")
    cal_s = calibrate(corpus, dev, params=base, arm="surface", embedder=embedder,
                      source=f"dev split ({len(dev)} targets), in this run")
    bundled = bundled_calibration("cana")
    same = bundled is not None and all(
        bundled.to_json()[k] == cal_c.to_json()[k] for k in ("rates", "pi"))
    (out / "calibration.json").write_text(json.dumps(
        {"cana": cal_c.to_json(), "surface": cal_s.to_json(),
         "equals_bundled": same}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    console.print(f"calibrated on {len(dev)} dev targets in {time.perf_counter() - t0:.0f}s; "
                  f"equals the bundled calibration: {same}")
    params = ForesightParams(calibration=cal_c)
    results: dict[str, dict] = {}
    md = ["# Foresight: hidden-factor recall and precision", "",
          f"analogist {__version__}, {dt.date.today().isoformat()}, Python "
          f"{platform.python_version()}; corpus {len(corpus)} events, "
          f"{len(eval_targets(corpus))} targets ({len(dev)} dev, the rest test). Command: "
          f"`python benchmarks/foresight_eval.py` (about 15 minutes on 2 cores).", "",
          "Protocol: every corpus event with a cutoff and a hidden factor is a target, cut at "
          "its cutoff; leave-one-out pool (the target, its aliases, sub- and super-events "
          "removed). A hidden factor is a (position, mechanism) pair first present after the "
          "cutoff. π per position and (q, p) per analogy strength are counted on the dev "
          "targets (each arm with its own evidence) and used unchanged on test; δ = 0.05. "
          f"Loop: R={params.rounds}, K={params.per_round}, M={params.carryover}, min fidelity "
          f"{params.min_fidelity}, min matches {params.min_matches}, negative evidence "
          f"'{params.negative_evidence}', MAC text weight {params.w_embedding}. Surface arm: "
          f"top-{params.per_round} by sentence-embedding cosine of the pre-cutoff brief to "
          "event descriptions, same filter, same confirmation.", "",
          "Calibration (dev): cana " + json.dumps(cal_c.to_json()["rates"]) + ", π " +
          json.dumps(cal_c.to_json()["pi"]) + "; surface " +
          json.dumps(cal_s.to_json()["rates"]) + ".", ""]
    for pool in args.pools:
        t0 = time.perf_counter()
        with Progress(console=console, transient=True) as bar:
            task = bar.add_task(f"pool={pool}", total=None)
            res = evaluate(corpus, params=params, arms=ARMS, pool=pool, embedder=embedder,
                           surface_calibration=cal_s,
                           progress=lambda i, n, t=task: bar.update(t, completed=i, total=n))
        res["seconds"] = round(time.perf_counter() - t0, 1)
        res["version"] = __version__
        results[pool] = res
        (out / f"results_{pool}.json").write_text(json.dumps(res, indent=1, sort_keys=True)
                                                  + "\n", encoding="utf-8")
        md += [f"## pool = {pool}", ""]
        for sp in ("test", "dev", "all"):
            md += _table(res["summary"][sp], f"{pool} / {sp}")
        for arm, m in res["summary"]["test"]["arms"].items():
            console.print(f"{pool:5s} test {arm:8s} recall {_fmt(m['recall'])} "
                          f"[{_fmt(m['recall_ci'][0])}, {_fmt(m['recall_ci'][1])}]  "
                          f"precision {_fmt(m['precision'])} "
                          f"[{_fmt(m['precision_ci'][0])}, {_fmt(m['precision_ci'][1])}]")
    note = _plot(results, out / "recall_precision.png")
    md += ["![recall and precision](recall_precision.png)" if note is None else note, ""]
    # the paper's illustrative regime, uncalibrated
    paper = ForesightParams(confirm=ConfirmParams(pi=0.5, q=0.9, p=0.2, delta=0.05))
    rp = evaluate(corpus, params=paper, arms=("cana", "surface"), pool="loo", embedder=embedder)
    (out / "results_loo_uncalibrated.json").write_text(json.dumps(rp, indent=1, sort_keys=True)
                                                       + "\n", encoding="utf-8")
    md += ["## Uncalibrated: the paper's regime (π = 0.5, q = 0.9, p = 0.2, δ = 0.05), "
           "pool = loo", ""]
    for sp in ("test", "all"):
        md += _table(rp["summary"][sp], f"uncalibrated / {sp}")
    # δ sweep
    sweep: dict[str, list] = {"cana": [], "surface": []}
    md += ["## Operating points: calibrated posteriors at several δ (pool = loo)", "",
           "| δ | split | cana recall | cana precision | surface recall | surface precision |",
           "|---|---|---|---|---|---|"]
    for d in args.deltas:
        prm = replace(params, confirm=replace(params.confirm, delta=d))
        rs = evaluate(corpus, params=prm, arms=("cana", "surface"), pool="loo",
                      embedder=embedder, surface_calibration=cal_s)
        for sp in ("test", "all"):
            a = rs["summary"][sp]["arms"]
            md.append(f"| {d} | {sp} | {_fmt(a['cana']['recall'])} | "
                      f"{_fmt(a['cana']['precision'])} | {_fmt(a['surface']['recall'])} | "
                      f"{_fmt(a['surface']['precision'])} |")
        for arm in sweep:
            m = rs["summary"]["all"]["arms"][arm]
            sweep[arm].append({"delta": d, "recall": m["recall"], "precision": m["precision"],
                               "tp": m["tp"], "asserted": m["asserted"]})
    (out / "delta_sweep.json").write_text(json.dumps(sweep, indent=1) + "\n", encoding="utf-8")
    _pr_plot(sweep, out / "delta_sweep.png")
    md += ["", "![operating points](delta_sweep.png)", ""]
    md += ["## Showcase briefs", ""]
    for tid in SHOWCASE:
        try:
            tgt = corpus.get(tid)
        except Exception as e:  # the corpus lacks it: say so
            md.append(f"- {tid}: not in the corpus ({e})")
            continue
        res_b = run_foresight(tgt, loo_pool(tgt, corpus), params=params, corpus=corpus,
                              embedder=embedder)
        paths = write_brief(res_b, out / "briefs", stem=f"brief-{tid}")
        pred = ", ".join(f"{h[0]}/{h[1]} ({p.probability:.2f})" for h, p in res_b.predicted())
        hidden = res_b.target.hidden_hypotheses()
        hits = [h for h, _ in res_b.predicted() if h in hidden]
        top = ", ".join(res_b.events[a.candidate].name for a in res_b.decision.ranked[:4])
        md.append(f"- [{tgt.name}](briefs/brief-{tid}.md) at "
                  f"{tgt.cutoff.date if tgt.cutoff else '-'}: top analogies {top}; asserted "
                  f"{pred or 'nothing at 1−δ'}; {len(hits)} of {len(hidden)} hidden factors "
                  f"recovered")
        console.print(f"brief {tid}: {paths.get('markdown')}")
    (out / "report.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    console.print(f"wrote {out}/report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
