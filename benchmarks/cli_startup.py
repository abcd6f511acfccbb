"""Start-up cost of the ``analogist`` command: whole-process wall and CPU time, median of N runs.

Each command runs as its own process (``python -m analogist ...``), so the numbers include the
interpreter, the imports and the work. CPU time is the child's user + system time (from
``os.wait4``). The baseline in the same run is the bare interpreter (``python -c pass``); with
``--baseline-ref REF`` the same commands also run over that git ref's source tree (extracted with
``git archive``, put first on ``PYTHONPATH``), so a change can be compared with its parent on the
same machine at the same time.

Commands: ``--help``; ``find`` of one casebook episode on a small store (the bundled casebook,
without embeddings) with ``--no-critic``; with ``--large N``, ``find`` on a store of N synthetic
episodes (``benchmarks/retrieve_speed.py``'s, built once, kept with ``--store-cache``). Each tree
runs on its own copy of the stores, and one unmeasured run of each command first saves the
stage-1 index beside the copy (so the measured runs load it, as a second ``find`` does).

Bytecode: ``pip install`` writes the package's ``.pyc`` files, but a development tree run with
``PYTHONDONTWRITEBYTECODE=1`` (as here) compiles every module of ``analogist`` from source at
each start. ``--bytecode cached`` (the default) gives each tree a bytecode cache of its own
(``PYTHONPYCACHEPREFIX`` in the temporary folder, filled by one unmeasured run of each command);
``none`` compiles analogist's modules at every start (this tree then runs its committed source,
extracted like a baseline ref's, so that no ``__pycache__`` folder is read); ``both`` measures
the two, interleaved.

    python benchmarks/cli_startup.py --runs 7 --baseline-ref main --bytecode both \
        --out benchmarks/results/cli_startup.json
    python benchmarks/cli_startup.py --runs 5 --baseline-ref main --large 100000 \
        --store-cache /tmp/analogist-bench --out benchmarks/results/cli_startup_100k.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def extract_ref(ref: str, dest: Path) -> Path:
    """The ``src`` folder of git ref ``ref``, extracted under ``dest``."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest / "src"


def make_store(tmp: Path) -> tuple[Path, Path]:
    """A store of the bundled casebook (no embeddings) and one target signature file."""
    from analogist.casebook import load_casebook
    from analogist.memory.sqlite import Memory
    from analogist.signature import dump_signature

    entries = load_casebook()
    store = tmp / "small.db"
    with Memory.open(store) as m:
        m.add_many([e.signature for e in entries[1:]], namespace="default")
    target = tmp / "target.json"
    target.write_text(dump_signature(entries[0].signature, "json"), encoding="utf-8")
    return store, target


def make_large(n: int, cache: Path) -> tuple[Path, Path]:
    """A store of ``n`` synthetic episodes (namespace ``bench``; ``retrieve_speed.synth``, its
    seed 7) and a query target, built once into ``cache`` and reused."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from retrieve_speed import _casebook_dicts, synth

    from analogist.memory.sqlite import Memory

    store, target = cache / f"synthetic-{n}.db", cache / f"synthetic-{n}-target.json"
    if not store.exists():
        cache.mkdir(parents=True, exist_ok=True)
        base, part = _casebook_dicts(), cache / f".synthetic-{n}.db.part"
        part.unlink(missing_ok=True)
        with Memory.open(part) as m:
            for start in range(0, n, 20_000):
                recs = synth(base, min(20_000, n - start), 7 + start)
                for j, r in enumerate(recs):
                    r["episode_id"] = f"syn-{start + j}"
                m.add_many(recs, namespace="bench", batch_size=5000)
        part.rename(store)
    if not target.exists():
        target.write_text(json.dumps(synth(_casebook_dicts(), 1, 7 + 10_000_019)[0]),
                          encoding="utf-8")
    return store, target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--baseline-ref", default=None, help="A git ref to compare with.")
    ap.add_argument("--out", type=Path, default=None, help="Write the results (JSON) here.")
    ap.add_argument("--bytecode", choices=("cached", "none", "both"), default="cached",
                    help="cached: as installed (.pyc written once); none: compiled each start.")
    ap.add_argument("--large", type=int, default=0,
                    help="Also time find on a store of this many synthetic episodes.")
    ap.add_argument("--store-cache", type=Path, default=None,
                    help="Keep the --large store here (built once; default: a temporary one).")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        store, target = make_store(tmp)
        large = make_large(args.large, args.store_cache or tmp / "large") if args.large else None
        base_env = {**os.environ, "ANALOGIST_LLM_BASE_URL": "", "ANALOGIST_LLM_MODEL": ""}
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
        trees = {"this tree": base_env}
        if args.baseline_ref:
            src = extract_ref(args.baseline_ref, tmp / "ref")
            trees[args.baseline_ref] = {**base_env, "PYTHONPATH": str(src)}
        modes = ["cached", "none"] if args.bytecode == "both" else [args.bytecode]

        def head() -> Path:
            return extract_ref("HEAD", tmp / "head") if not (tmp / "head").exists() \
                else tmp / "head" / "src"

        trees = {(f"{t} ({m} bytecode)" if len(modes) > 1 else t): (
                    {**env, "PYTHONPYCACHEPREFIX": str(tmp / "pyc" / str(i))} if m == "cached"
                    # analogist's modules compiled at each start (the installed packages keep
                    # their bytecode): a tree without __pycache__ folders, this one's committed
                    # source when it is this tree (the working tree may hold stale ones)
                    else {**env, "PYTHONDONTWRITEBYTECODE": "1",
                          "PYTHONPATH": env.get("PYTHONPATH") or str(head())})
                 for i, (t, env) in enumerate(trees.items()) for m in modes}
        def cases_of(tree: str) -> dict[str, list[str]]:
            # a copy of the store per tree: trees whose saved index differs in format would
            # otherwise rebuild each other's at every run
            own = tmp / "stores" / str(list(trees).index(tree))
            own.mkdir(parents=True, exist_ok=True)
            out = {
                "python -c pass": [py, "-c", "pass"],
                "analogist --help": [py, "-m", "analogist", "--help"],
                "analogist find (small store)": [py, "-m", "analogist", "find", str(target),
                                                 "--store", str(own / store.name), "--no-critic",
                                                 "--json"],
            }
            shutil.copy(store, own / store.name)
            if large is not None:
                shutil.copy(large[0], own / large[0].name)
                out[f"analogist find ({args.large:,} episodes)"] = [
                    py, "-m", "analogist", "find", str(large[1]), "--store",
                    str(own / large[0].name), "--namespace", "bench", "--no-critic", "--json"]
            return out
        cases = {tree: cases_of(tree) for tree in trees}
        rows = []
        for tree, env in trees.items():  # fill the bytecode caches and save the index (unmeasured)
            for argv in cases[tree].values():
                run_once(argv, env)
        with Progress(transient=True) as bar:
            task = bar.add_task("runs", total=args.runs * len(cases[next(iter(trees))])
                                * len(trees))
            samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for _ in range(args.runs):      # interleaved, so load drifts hit every case alike
                for tree, env in trees.items():
                    for name, argv in cases[tree].items():
                        if name.startswith("python") and tree != next(iter(trees)):
                            bar.advance(task)
                            continue
                        samples.setdefault((tree, name), []).append(run_once(argv, env))
                        bar.advance(task)
        for (tree, name), xs in samples.items():
            rows.append({"tree": tree, "command": name, "runs": len(xs),
                         "wall_s": statistics.median(w for w, _ in xs),
                         "wall_min_s": min(w for w, _ in xs),
                         "cpu_s": statistics.median(c for _, c in xs),
                         "cpu_min_s": min(c for _, c in xs)})
    floor = next(r for r in rows if r["command"] == "python -c pass")
    for r in rows:
        r["bytecode"] = "none" if "PYTHONDONTWRITEBYTECODE" in trees[r["tree"]] else "cached"
    table = Table(title=f"CLI start-up, median of {args.runs} runs")
    for col in ("tree", "command", "wall s", "wall min", "CPU s", "CPU min", "CPU / bare python"):
        table.add_column(col)
    for r in rows:
        r["cpu_ratio_to_python"] = r["cpu_s"] / floor["cpu_s"] if floor["cpu_s"] else None
        table.add_row(r["tree"], r["command"], f"{r['wall_s']:.3f}", f"{r['wall_min_s']:.3f}",
                      f"{r['cpu_s']:.3f}", f"{r['cpu_min_s']:.3f}",
                      f"{r['cpu_ratio_to_python']:.1f}×" if r["cpu_ratio_to_python"] else "-")
    if args.baseline_ref:
        for r in rows:
            if r["tree"].startswith("this tree") and not r["command"].startswith("python"):
                ref = next(x for x in rows if x["tree"].startswith(args.baseline_ref)
                           and x["bytecode"] == r["bytecode"] and x["command"] == r["command"])
                r["cpu_ratio_to_ref"] = r["cpu_s"] / ref["cpu_s"]
                r["wall_ratio_to_ref"] = r["wall_s"] / ref["wall_s"]
    Console().print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"runs": args.runs, "baseline_ref": args.baseline_ref,
                                        "bytecode": args.bytecode, "large": args.large,
                                        "rows": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
