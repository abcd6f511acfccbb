"""What Python's cyclic garbage collector costs ``find`` on a large store: the tail of its times.

Run:  python benchmarks/find_gc.py --size 1000000 --store-cache DIR [--gen0 700 20000]
      [--out benchmarks/results/find_gc.json]

The store and the queries are those of ``benchmarks/retrieve_speed.py`` (same ``--seed``, the
store from its ``--store-cache``, opened in place with its saved index beside it). Per setting of
the collector's first threshold (``gc.set_threshold(gen0, 10, 10)``; 700 is CPython's default),
in a child process of its own: stage 1 is warmed on every query (as retrieve_speed.py does before
timing ``find``), then the queries are found twice — a first pass whose candidates are new to the
retriever (read, validated and compiled, then kept in its cache) and a second pass over the same
queries (candidates cached). For each pass: ``find`` CPU p50 / p95 / mean and the full (gen-2)
collections that ran during it, with the CPU time of each (``gc.callbacks``). Nothing here changes
the library: the threshold is a process's choice (a long-running service can make it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import retrieve_speed as rs  # noqa: E402  (the sibling benchmark's store and queries)


def run(size: int, queries: int, seed: int, cache: Path, gen0: int) -> dict[str, Any]:
    from analogist.memory.sqlite import Memory
    from analogist.retrieve import Retriever
    from analogist.signature import validate_signature

    path = cache / (f"synthetic-{size}.db" if seed == 7 else f"synthetic-{size}-seed{seed}.db")
    if not path.exists():
        raise SystemExit(f"no cached store at {path}: run benchmarks/retrieve_speed.py "
                         f"--sizes {size} --store-cache {cache} first")
    qs = [validate_signature(q) for q in rs.synth(rs._casebook_dicts(), queries,
                                                   seed + 10_000_019)]
    random.Random(seed).shuffle(qs)
    full: list[float] = []
    started: list[float] = []

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            started.append(time.process_time())
        elif started:
            full.append(time.process_time() - started.pop())

    out: dict[str, Any] = {"gen0": gen0, "loadavg_start": list(os.getloadavg())}
    with Memory.open(path) as m:
        r = Retriever(m, "bench", log=False)
        r.refresh()
        for q in qs:
            r.stage1(q, 200, positive=False)
        gc.set_threshold(gen0, 10, 10)
        gc.callbacks.append(on_gc)
        for name in ("first_pass", "second_pass"):
            full.clear()
            cpu = []
            for q in qs:
                c = time.process_time()
                r.find(q)
                cpu.append(time.process_time() - c)
            out[name] = {"cpu": {**rs._ms(cpu), "mean_ms": statistics.mean(cpu) * 1e3},
                         "full_collections": len(full),
                         "full_collection_cpu_ms": [x * 1e3 for x in full]}
        gc.callbacks.remove(on_gc)
        out["tracked_objects_end"] = len(gc.get_objects())
    out["loadavg_end"] = list(os.getloadavg())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--store-cache", type=Path, required=True)
    ap.add_argument("--gen0", type=int, nargs="+", default=[700, 20_000])
    ap.add_argument("--out", type=Path, default=HERE / "results" / "find_gc.json")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        print(json.dumps(run(args.size, args.queries, args.seed, args.store_cache, args.child)))
        return 0
    rows = []
    for g in args.gen0:
        p = subprocess.run([sys.executable, __file__, "--child", str(g), "--size", str(args.size),
                            "--queries", str(args.queries), "--seed", str(args.seed),
                            "--store-cache", str(args.store_cache)],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            print(f"gen0 {g} failed: {p.stderr[-1000:]}")
            rows.append({"gen0": g, "error": p.stderr[-1000:]})
            continue
        row = json.loads(p.stdout.strip().splitlines()[-1])
        rows.append(row)
        for name in ("first_pass", "second_pass"):
            x = row[name]
            print(f"gen0 {g:>6} {name}: find CPU p50 {x['cpu']['p50_ms']:.1f} ms, p95 "
                  f"{x['cpu']['p95_ms']:.1f} ms, mean {x['cpu']['mean_ms']:.1f} ms; "
                  f"{x['full_collections']} full collections"
                  + "".join(f", {v:.0f}" for v in x["full_collection_cpu_ms"])
                  + (" ms CPU" if x["full_collections"] else ""))
    report = {"benchmark": "find_gc",
              "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "commit": rs._commit(),
              "settings": {"size": args.size, "queries": args.queries, "seed": args.seed,
                           "gen0": args.gen0},
              "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
