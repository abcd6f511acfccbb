"""Public analogy benchmarks on the development sets (issue 15, "Must show").

Lays the two development sets of the project's ``dev`` data folder out as
``analogist bench external all`` expects them (``storyanalogy/`` holding StoryAnalogy multiple
choice, ``parallelparc/`` holding the ParallelPARC silver rows) and runs the one-report mode:
analogist's embedded default beside the embedder and BM25 baselines of the same run, chance and
the published figures, paired McNemar and bootstrap CIs. Nothing in analogist is tuned on these
sets here; the baselines' binary thresholds come from the project's casebook and are recomputed
into ``calibration.json``. Writes, under --out: ``report.md``, ``report.json``, ``report.png``,
``calibration.json`` and ``run.json`` (the command, CPU and wall time).

    nice -n 10 python benchmarks/bench_external.py --data /work/shared/data/dev \\
        --out benchmarks/results/external

The same report from the command line, with the two files laid out by hand:
``analogist bench external all FOLDER --out OUT``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

from _git import git_head  # benchmarks/_git.py (the script's own folder is on sys.path)

from analogist import __version__
from analogist.bench.external import calibrate_surface_threshold, calibrate_threshold
from analogist.bench.external.bm25 import BM25Scorer
from analogist.bench.external.report import run_all
from analogist.bench.external.runner import SURFACE_THRESHOLD, CachingEncoder

ROOT = Path(__file__).resolve().parent.parent


DEV_FILES = {"storyanalogy": "storyanalogy_mc.json", "parallelparc": "parallelparc_silver.csv"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/dev"))
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/external"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None,
                    help="a seeded sample of this many items per set (rows for the silver set)")
    args = ap.parse_args(argv)
    for f in DEV_FILES.values():
        if not (args.data / f).is_file():
            print(f"error: {args.data / f}: not found", file=sys.stderr)
            return 2
    args.out.mkdir(parents=True, exist_ok=True)

    from analogist.encode.deterministic import DeterministicEncoder
    from analogist.index.embed import default_embedder

    embedder = default_embedder()
    encoder = CachingEncoder(DeterministicEncoder(embedder=embedder))
    cal = {"embedder": {**calibrate_surface_threshold(embedder), "constant": SURFACE_THRESHOLD},
           "bm25": calibrate_threshold(BM25Scorer())}
    (args.out / "calibration.json").write_text(json.dumps(cal, indent=2) + "\n")
    if abs(cal["embedder"]["threshold"] - SURFACE_THRESHOLD) > 1e-9:
        print(f"warning: recomputed embedder threshold {cal['embedder']['threshold']} differs "
              f"from the constant {SURFACE_THRESHOLD}", file=sys.stderr)
    cmd = (f"nice -n 10 python benchmarks/bench_external.py --data {args.data} --out {args.out}"
           f" --seed {args.seed}" + (f" --limit {args.limit}" if args.limit else ""))
    git = git_head()  # the code measured: read before the run, which may take a while
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for sub, f in DEV_FILES.items():
            (root / sub).mkdir()
            (root / sub / f).symlink_to((args.data / f).resolve())
        rep = run_all(root, args.out, seed=args.seed, limit=args.limit, encoder=encoder,
                      embedder=embedder)
    run = {"command": cmd, "git": git, "analogist_version": __version__,
           "python": platform.python_version(), "data": str(args.data), "seed": args.seed,
           "limit": args.limit, "process_cpu_s": round(time.process_time() - t_cpu, 1),
           "wall_s": round(time.perf_counter() - t_wall, 1), "errors": rep["errors"]}
    (args.out / "run.json").write_text(json.dumps(run, indent=2) + "\n")
    md = args.out / "report.md"
    md.write_text(md.read_text().replace("# Public analogy benchmarks",
                                         "# Public analogy benchmarks — development sets", 1)
                  + f"\nReproduce: `{cmd}` (code at {run['git']}; CPU {run['process_cpu_s']:.0f} s,"
                    f" wall {run['wall_s']:.0f} s on a shared 2-core machine).\n")
    for det in rep["results"]:
        s = det["summary"]
        a = s["systems"]
        print(f"{s['benchmark']}/{s['variant']}: n={s['n']} analogist="
              f"{a['analogist']['accuracy']:.3f} embedder={a['embedder']['accuracy']:.3f} "
              f"bm25={a['bm25']['accuracy']:.3f}")
    print(f"cpu {run['process_cpu_s']:.0f}s; wrote {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
