"""CPU time of ``find`` while the namespace is being written: one add, then four finds, repeated,
through one long-lived retriever with the embedding channel on (as a server's thread keeps one).

Run:  nice -n 10 python benchmarks/find_under_writes.py [--size 10000] [--rounds 25]
      [--baseline main] [--repeats 2] [--modes repeat fresh]

A store of ``--size`` synthetic episodes (benchmarks/retrieve_speed.py's recombined casebook
structures), each with the bundled embedder's L1-L3 vectors of one casebook episode's levels, is
built once (by the baseline's code); every arm then runs in its own child process on a fresh copy of it:

* ``current``: this checkout's ``src``;
* ``baseline``: ``src`` of ``--baseline`` (a git revision, by default ``main``), extracted with
  ``git archive`` into a temporary directory — the same run, the same store, the same writes.

Two query mixes: ``repeat`` (twenty casebook signatures, renamed, asked in turn: their level
texts recur) and ``fresh`` (the same signatures, each level text given a word of its own per
query, so no text is ever asked twice: both arms then pay the embedder for every level text;
the bundled embedder keeps its own text cache, so ``repeat`` costs it a look-up; ``--modes``
picks them, ``repeat`` alone by default). Arms alternate (baseline, current, ...) ``--repeats``
times. Per find: CPU seconds (``time.process_time``) and wall seconds; the adds are timed apart
and not counted in the finds. Writes ``benchmarks/results/find_under_writes.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NS = "bench"
WARM = 20  # finds before the measured ones (repeat: each of the twenty queries once)


def _level_vectors(emb: Any, path: Path) -> list[dict[str, Any]]:
    """The bundled embedder's L1-L3 vectors of each casebook episode's levels (computed once,
    kept in ``path`` for the arms)."""
    import numpy as np  # lazy: the parent process imports no numpy

    from analogist.casebook import load_casebook  # lazy: the arm's src, set at run time
    from analogist.retrieve import level_embeddings

    if path.exists():
        with np.load(path) as z:
            out: dict[int, dict[str, Any]] = {}
            for key in z.files:
                i, ch = key.split("-")
                out.setdefault(int(i), {})[ch] = z[key]
            return [out.get(i, {}) for i in range(max(out) + 1)]
    vecs = [level_embeddings(c.signature, emb) for c in load_casebook()]
    np.savez(path, **{f"{i}-{ch}": v for i, d in enumerate(vecs) for ch, v in d.items()})
    return vecs


def _queries(mode: str, n: int) -> list[Any]:
    from analogist.casebook import load_casebook  # lazy: the arm's src, set at run time
    from analogist.signature import validate_signature

    base = [c.signature for c in load_casebook() if c.decoy_of is None][:WARM]
    out = []
    for i in range(n):
        d = base[i % len(base)].to_data()
        d["episode_id"] = f"query-{i}"
        if mode == "fresh":
            lv = d.get("levels") or {}
            d["levels"] = {k: (f"{v} (query {i})" if k in ("L1", "L2", "L3") else v)
                           for k, v in lv.items()}
        out.append(validate_signature(d))
    return out


def build(path: Path, size: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from retrieve_speed import _casebook_dicts, synth  # lazy: benchmarks/ on sys.path first

    from analogist.index.embed import default_embedder  # lazy: the arm's src, set at run time
    from analogist.memory import Memory

    emb = default_embedder()
    vecs = _level_vectors(emb, path.parent / "vectors.npz")
    recs = synth(_casebook_dicts(), size, seed=7)
    t = time.process_time()
    order = iter(range(size))
    with Memory.open(path) as m:
        m.add_many(recs, namespace=NS, batch_size=5000,
                   embed=lambda _s: vecs[next(order) % len(vecs)])
    return {"episodes": size, "build_cpu_s": round(time.process_time() - t, 2)}


def child(store: Path, mode: str, rounds: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from retrieve_speed import _casebook_dicts, synth  # lazy: benchmarks/ on sys.path first

    from analogist.index.embed import default_embedder  # lazy: the arm's src, set at run time
    from analogist.memory import Memory
    from analogist.retrieve import Retriever

    emb = default_embedder()
    vecs = _level_vectors(emb, store.parent / "vectors.npz")
    adds = synth(_casebook_dicts(), rounds, seed=11)
    for i, a in enumerate(adds):
        a["episode_id"] = f"added-{i}"
    warm = WARM if mode == "repeat" else 4
    qs = _queries(mode, 4 * rounds + warm)
    cpu: list[float] = []
    wall: list[float] = []
    first: list[float] = []  # CPU of the first find after each add (the one that refreshes)
    add_cpu: list[float] = []
    with Memory.open(store) as m:
        r = Retriever(m, NS, embedder=emb, log=False)
        # warm: the index built or loaded, the embedder's model in memory and (repeat) every
        # query text seen once, so that the finds measured differ only in what the writes cost
        for q in qs[:warm]:
            r.find(q)
        for i in range(rounds):
            t = time.process_time()
            m.add(adds[i], namespace=NS, embeddings=vecs[i % len(vecs)])
            add_cpu.append(time.process_time() - t)
            for j, q in enumerate(qs[warm + 4 * i:warm + 4 + 4 * i]):
                c0, w0 = time.process_time(), time.perf_counter()
                r.find(q)
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - w0)
                if j == 0:
                    first.append(cpu[-1])
        stats = getattr(r, "stats", None)
    import analogist  # lazy: the arm's own src, put first on the path by the parent

    return {"cpu": cpu, "wall": wall, "first": first, "add_cpu": add_cpu, "stats": stats,
            "src": str(Path(analogist.__file__).parent.parent)}


def _ms(xs: list[float]) -> dict[str, float]:
    s = sorted(xs)
    return {"mean": round(1e3 * statistics.fmean(s), 2), "p50": round(1e3 * s[len(s) // 2], 2),
            "p95": round(1e3 * s[min(len(s) - 1, int(0.95 * len(s)))], 2)}


def _rev(rev: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True,
                          capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--baseline", default="main")
    ap.add_argument("--modes", nargs="+", choices=("repeat", "fresh"), default=["repeat"])
    ap.add_argument("--out", type=Path, default=HERE / "results" / "find_under_writes.json")
    ap.add_argument("--child", nargs=3, metavar=("SRC", "STORE", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        src, store, mode = args.child
        sys.path.insert(0, src)
        print(json.dumps(child(Path(store), mode, args.rounds)))
        return 0
    with tempfile.TemporaryDirectory(prefix="find-writes-") as tmp:
        work = Path(tmp)
        base_src = work / "baseline"
        base_src.mkdir()
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "src"],
                              check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base_src)], input=arch, check=True)
        arms = {"baseline": str(base_src / "src"), "current": str(ROOT / "src")}
        store = work / "store.db"
        built = subprocess.run([sys.executable, "-c", (
            # by the baseline's code: the current one opens an older schema (migrating it on
            # open, before the measured finds), not always the other way round
            f"import sys, json; sys.path.insert(0, {arms['baseline']!r}); "
            f"sys.path.insert(0, {str(HERE)!r}); import find_under_writes as f; "
            f"print(json.dumps(f.build(__import__('pathlib').Path({str(store)!r}), "
            f"{args.size})))")], check=True, capture_output=True, text=True)
        info = json.loads(built.stdout.strip().splitlines()[-1])
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for rep in range(args.repeats):
            for mode in args.modes:
                for arm, src in arms.items():
                    copy = work / f"{arm}-{mode}-{rep}.db"
                    shutil.copyfile(store, copy)
                    out = subprocess.run(
                        [sys.executable, __file__, "--rounds", str(args.rounds), "--child",
                         src, str(copy), mode], check=True, capture_output=True, text=True,
                        env={**os.environ, "PYTHONPATH": src})
                    runs.setdefault(mode, {}).setdefault(arm, []).append(
                        json.loads(out.stdout.strip().splitlines()[-1]))
                    copy.unlink()
                    shutil.rmtree(str(copy) + ".mac", ignore_errors=True)
    result: dict[str, Any] = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "nice -n 10 python benchmarks/find_under_writes.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "current": _rev("HEAD"), "baseline": f"{args.baseline} = {_rev(args.baseline)}",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load average "
                   f"{os.getloadavg()[0]:.1f}",
        "store": info, "rounds": args.rounds, "finds_per_add": 4, "repeats": args.repeats,
        "modes": {}}
    for mode, by_arm in runs.items():
        row: dict[str, Any] = {}
        for arm, rs in by_arm.items():
            cpu = [x for r in rs for x in r["cpu"]]
            wall = [x for r in rs for x in r["wall"]]
            row[arm] = {"find_cpu_ms": _ms(cpu), "find_wall_ms": _ms(wall),
                        "first_find_after_add_cpu_ms": _ms([x for r in rs for x in r["first"]]),
                        "add_cpu_ms": _ms([x for r in rs for x in r["add_cpu"]]),
                        "finds": len(cpu), "stats": rs[-1]["stats"]}
            if any(Path(r["src"]).name != "src" or (arm == "current") != (
                    Path(r["src"]).parent == ROOT) for r in rs):
                raise SystemExit(f"the {arm} arm imported analogist from {rs[-1]['src']}")
        row["cpu_ratio_current_over_baseline"] = round(
            row["current"]["find_cpu_ms"]["mean"] / row["baseline"]["find_cpu_ms"]["mean"], 3)
        result["modes"][mode] = row
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["modes"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
