"""External analogy benchmarks on the development sets (issue 8, item 5, "Must show").

Runs ``analogist bench external`` — analogist's pipeline (deterministic encoder + SME normalised
score) against the surface baseline (cosine of the default embedder) — on StoryAnalogy multiple
choice and on the ParallelPARC silver rows turned into a multiple-choice and a binary task, all
from /work/shared/data/dev (development data: nothing in analogist is tuned on them here; the
binary thresholds come from the project's casebook). Seeded subsamples keep the run within a
few minutes of CPU. Writes, under --out:

* ``<name>.json`` — exactly what ``analogist bench external NAME PATH --json --limit N --seed S``
  prints;
* ``<name>.details.json`` — parameters, paired McNemar / bootstrap per condition, ties, AUCs,
  per-item outcomes;
* ``calibration.json`` — the baseline's casebook threshold recomputed (must equal the constant);
* ``report.md`` — the tables and the exact commands.

    python benchmarks/bench_external.py --data /work/shared/data/dev \\
        --out benchmarks/results/external --seed 0 --limit-storyanalogy 200 \\
        --limit-parallelparc 200
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from analogist import __version__
from analogist.bench.external import ExternalParams, calibrate_surface_threshold, run_external
from analogist.bench.external.runner import SURFACE_THRESHOLD, CachingEncoder


def _fmt_p(p: float) -> str:
    return f"{p:.3g}"


def _section(name: str, det: dict[str, Any], cli: str) -> list[str]:
    s, pr, ex = det["summary"], det["paired"], det["extras"]
    a, b = s["analogist"], s["baseline"]
    out = [f"## {name}", "", f"CLI equivalent: `{cli}`", "",
           f"n = {s['n']}, chance = {s['chance']:.3f}. Notes: " + "; ".join(det["notes"]) + ".",
           "",
           "| condition | n | chance | analogist | baseline | A only | B only | McNemar p "
           "| diff (A−B) [95% CI] |",
           "|---|---|---|---|---|---|---|---|---|"]

    def row(label: str, n: int, acc_a: float, acc_b: float, m: dict[str, Any]) -> str:
        return (f"| {label} | {n} | {s['chance']:.3f} | {acc_a:.3f} | {acc_b:.3f} | "
                f"{m['a_only']} | {m['b_only']} | {_fmt_p(m['p'])} | {m['diff']:+.3f} "
                f"[{m['diff_ci95'][0]:+.3f}, {m['diff_ci95'][1]:+.3f}] |")

    out.append(row("all", s["n"], a["accuracy"], b["accuracy"], pr["all"]))
    for c, ca in a["conditions"].items():
        out.append(row(c, ca["n"], ca["accuracy"], b["conditions"][c]["accuracy"],
                       pr["conditions"][c]))
    out.append("")
    if "ties_at_top" in ex and "scores" in det["items"][0]["analogist"]:
        t = ex["ties_at_top"]
        out.append(f"Ties at the top (broken by the seeded generator): analogist "
                   f"{t['analogist']}, baseline {t['baseline']} of {s['n']} items.")
        for sys_ in ("analogist", "baseline"):
            tied = [r for r in det["items"] if r[sys_]["tie"]]
            untied = [r for r in det["items"] if not r[sys_]["tie"]]
            zero = sum(1 for r in det["items"] if max(r[sys_]["scores"]) == 0.0)
            if tied:
                out.append(f"{sys_}: accuracy on the {len(tied)} tied items "
                           f"{sum(r[sys_]['correct'] for r in tied) / len(tied):.3f}, on the "
                           f"{len(untied)} untied items "
                           + (f"{sum(r[sys_]['correct'] for r in untied) / len(untied):.3f}"
                              if untied else "n/a")
                           + f"; items where every candidate scored 0: {zero}.")
    if "auc" in ex:
        def f(v: float | None) -> str:
            return "n/a" if v is None else f"{v:.3f}"
        out.append(f"Threshold-free ROC AUC: analogist {f(ex['auc']['analogist'])}, baseline "
                   f"{f(ex['auc']['baseline'])}; per condition: " + "; ".join(
                       f"{c} {f(v['analogist'])} vs {f(v['baseline'])}"
                       for c, v in ex["auc_conditions"].items()) + ".")
        preds = {sys_: sum(r[sys_]["pred"] for r in det["items"]) for sys_ in
                 ("analogist", "baseline")}
        out.append(f"Pairs called analogies: analogist {preds['analogist']}, baseline "
                   f"{preds['baseline']} of {s['n']} (half are analogies).")
    if "analogue_vs_distractor_type" in ex:
        for sys_, d in ex["analogue_vs_distractor_type"].items():
            out.append(f"{sys_}: analogue vs distractor type — " + "; ".join(
                f"{t}: wins {v['wins']}, ties {v['ties']}, losses {v['losses']} (n={v['n']})"
                for t, v in sorted(d.items())) + ".")
    out.append("")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/dev"))
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/external"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit-storyanalogy", type=int, default=200)
    ap.add_argument("--limit-parallelparc", type=int, default=200)
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite report.md from the stored run.json and details files")
    args = ap.parse_args(argv)
    if args.report_only:
        write_report(args.out)
        print(f"wrote {args.out}/report.md")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)

    from analogist.encode.deterministic import DeterministicEncoder
    from analogist.index.embed import default_embedder

    embedder = default_embedder()
    encoder = CachingEncoder(DeterministicEncoder(embedder=embedder))
    cal = calibrate_surface_threshold(embedder)
    cal["constant"] = SURFACE_THRESHOLD
    (args.out / "calibration.json").write_text(json.dumps(cal, indent=2) + "\n")
    if abs(cal["threshold"] - SURFACE_THRESHOLD) > 1e-9:
        print(f"warning: recomputed threshold {cal['threshold']} differs from the constant "
              f"{SURFACE_THRESHOLD}", file=sys.stderr)

    runs = [("storyanalogy", args.data / "storyanalogy_mc.json", args.limit_storyanalogy),
            ("parallelparc-mc", args.data / "parallelparc_silver.csv", args.limit_parallelparc),
            ("parallelparc-binary", args.data / "parallelparc_silver.csv",
             args.limit_parallelparc)]
    cmd = ("python benchmarks/bench_external.py --data " + str(args.data) + " --out "
           + str(args.out) + f" --seed {args.seed} --limit-storyanalogy "
           f"{args.limit_storyanalogy} --limit-parallelparc {args.limit_parallelparc}")
    t_all = time.process_time()
    for name, path, limit in runs:
        params = ExternalParams(seed=args.seed, limit=limit)
        res = run_external(name, path, params=params, encoder=encoder, embedder=embedder)
        det = res.details()
        det["command"] = cmd
        det["analogist_version"] = __version__
        det["python"] = platform.python_version()
        (args.out / f"{name}.json").write_text(json.dumps(res.summary(), indent=2) + "\n")
        det["cli"] = (f"analogist bench external {name} {path} --json --limit {limit} "
                      f"--seed {args.seed}")
        (args.out / f"{name}.details.json").write_text(json.dumps(det, indent=1) + "\n")
        s = res.summary()
        print(f"{name}: n={s['n']} chance={s['chance']:.3f} analogist="
              f"{s['analogist']['accuracy']:.3f} baseline={s['baseline']['accuracy']:.3f} "
              f"p={det['paired']['all']['p']:.3g} cpu={sum(res.timings.values()):.0f}s")
    cpu = time.process_time() - t_all
    run = {"command": cmd, "process_cpu_s": round(cpu, 1), "data": str(args.data),
           "seed": args.seed, "limit_storyanalogy": args.limit_storyanalogy,
           "limit_parallelparc": args.limit_parallelparc, "calibration": cal,
           "sets": [r[0] for r in runs]}
    (args.out / "run.json").write_text(json.dumps(run, indent=2) + "\n")
    write_report(args.out)
    print(f"total cpu {cpu:.0f}s; wrote {args.out}/report.md")
    return 0


def write_report(out_dir: Path) -> None:
    """(Re)write report.md from run.json and the details files."""
    run = json.loads((out_dir / "run.json").read_text())
    cal = run["calibration"]
    cpu = run["process_cpu_s"]
    sections: list[str] = []
    for name in run["sets"]:
        det = json.loads((out_dir / f"{name}.details.json").read_text())
        sections += _section(name, det, det["cli"])
    head = [
        "# External analogy benchmarks — development sets",
        "",
        "Development results (StoryAnalogy MC and ParallelPARC silver from "
        f"`{run['data']}`, MIT licensed, see the LICENSE files there). Nothing was tuned on these "
        "sets for this run: analogist's binary threshold is `RetrieveParams().min_score` "
        f"= {ExternalParams().min_score} (chosen on the development casebook), the baseline's "
        f"cosine threshold {SURFACE_THRESHOLD} was chosen on the casebook "
        f"(`calibration.json`: balanced accuracy {cal['balanced_accuracy']:.3f} on "
        f"{cal['n_pos']} same-mechanism and {cal['n_neg']} other pairs of L0 narratives). "
        "(The default embedder itself was chosen earlier on these same development sets — "
        "`benchmarks/results/embedder_choice.json` — which favours the baseline, if anything.)",
        "",
        "Systems: **analogist** = offline deterministic encoder → Signature → SME, score = best "
        "mapping of candidate (base) onto the query (target) over the query's self-score; "
        "**baseline** = cosine of the default offline embedder (USE). Choice: highest score "
        "wins, ties broken by a seeded generator. Binary: score ≥ threshold. Paired exact "
        "McNemar (A = analogist, B = baseline; A only = items only analogist got right) and a "
        "seeded paired bootstrap CI of the accuracy difference "
        "(`analogist.bench.parb.stats`).",
        "",
        f"Subsamples (seed {run['seed']}): StoryAnalogy {run['limit_storyanalogy']} of 360 "
        f"items; ParallelPARC {run['limit_parallelparc']} of 403 rows, tasks built within the sampled "
        "rows (see `analogist.bench.external.parallelparc`). Conditions: ParallelPARC near = "
        "source and target domain equal, far = different; binary distractor = another row's "
        "target from the same target domain (`same_domain`) or another (`other_domain`). "
        "StoryAnalogy MC has no conditions; its distractor types are reported instead.",
        "",
        "Caveats. These are development sets, not held-out tests: the deterministic "
        "encoder was developed with the ParallelPARC silver triples as its development data "
        "(`benchmarks/results/encoder_triples.json`) and the default embedder was chosen on "
        "both sets (`benchmarks/results/embedder_choice.json`). analogist's binary threshold "
        "was chosen for episode retrieval on the casebook and the baseline's on casebook "
        "narratives; neither is fitted to these paragraphs, so the threshold-free ROC AUC is "
        "reported beside the accuracy. On StoryAnalogy most items give analogist no mapped "
        "structure at all (every candidate scores 0), and those are decided by the seeded "
        "tie-break, i.e. at chance; the tie split below separates the two regimes.",
        "",
        "Exact command (all three sets in one process; CPU for the three sets after model loading "
        f"{cpu:.0f} s; per-set CPU in each `*.details.json` under `timings_s`):",
        "",
        "```",
        run["command"],
        "```",
        "",
        "Rebuild this report from the stored results without re-running: "
        "`python benchmarks/bench_external.py --out OUT --report-only`.",
        "",
    ]
    (out_dir / "report.md").write_text("\n".join(head + sections))


if __name__ == "__main__":
    sys.exit(main())
