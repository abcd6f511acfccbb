"""Recall and speed of the approximate (HNSW) embedding channel against exact search.

Run:  nice -n 10 python benchmarks/ann_recall.py [--sizes 10000 50000] [--dim 512] [--queries 200]

Needs the ``ann`` extra (``pip install 'analogist[ann]'``). Vectors are synthetic: unit vectors
drawn around 500 random centres (spread 0.35 per coordinate before normalising) in ``--dim``
dimensions, the shape of sentence-embedding clouds, not real embeddings; queries are fresh draws
from the same mixture. Per size: the HNSW build time (one thread), query CPU time p50 against
the exact baseline in the same run (a float32 matrix-vector product over every row plus
``np.argpartition``), and recall@k (the share of the exact k nearest the graph returns among its
k) for k = 20 and for the channel's default k = 200, with the HNSW settings of
:class:`analogist.index.ann.AnnParams`. Writes ``benchmarks/results/ann_recall.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# one BLAS thread: the exact baseline's CPU time is then comparable with the one-thread HNSW
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent


def _cloud(n: int, dim: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    pick = rng.integers(0, len(centres), n)
    x = centres[pick] + 0.35 * rng.standard_normal((n, dim)).astype(np.float32) / np.sqrt(dim)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def run_size(n: int, dim: int, queries: int, seed: int) -> dict[str, Any]:
    from analogist.index.ann import AnnParams, HnswChannel

    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((500, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    mat = _cloud(n, dim, rng, centres)
    qs = _cloud(queries, dim, rng, centres)
    params = AnnParams()
    t, c = time.perf_counter(), time.process_time()
    ann = HnswChannel(np.arange(n), mat, params, threads=1)
    build = (time.perf_counter() - t, time.process_time() - c)
    out: dict[str, Any] = {"size": n, "dim": dim, "queries": queries,
                           "build_s": build[0], "build_cpu_s": build[1]}
    exact_cpu, ann_cpu = [], []
    recall: dict[int, list[float]] = {20: [], params.k: []}
    for q in qs:
        c = time.process_time()
        sims = mat @ q
        top = np.argpartition(-sims, params.k)[: params.k]
        exact = top[np.argsort(-sims[top], kind="stable")]
        exact_cpu.append(time.process_time() - c)
        c = time.process_time()
        near, _s = ann.search(q, params.k)
        ann_cpu.append(time.process_time() - c)
        for k in recall:
            recall[k].append(len(set(exact[:k].tolist()) & set(near[:k].tolist())) / k)
    out["exact_cpu_p50_ms"] = statistics.median(exact_cpu) * 1e3
    out["hnsw_cpu_p50_ms"] = statistics.median(ann_cpu) * 1e3
    out["speedup_cpu_p50"] = out["exact_cpu_p50_ms"] / max(out["hnsw_cpu_p50_ms"], 1e-9)
    for k, xs in recall.items():
        out[f"recall_at_{k}_mean"] = statistics.fmean(xs)
        out[f"recall_at_{k}_min"] = min(xs)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "ann_recall.json")
    args = ap.parse_args(argv)
    from rich.console import Console
    from rich.progress import track

    from analogist.index.ann import AnnParams, ann_available

    console = Console()
    if not ann_available():
        console.print("the HNSW library is not installed: pip install 'analogist[ann]'")
        return 1
    rows = [run_size(n, args.dim, args.queries, args.seed + n)
            for n in track(args.sizes, description="sizes", console=console)]
    for r in rows:
        console.print(f"{r['size']:>9,}  build {r['build_cpu_s']:.1f} s CPU  exact "
                      f"{r['exact_cpu_p50_ms']:.2f} ms  hnsw {r['hnsw_cpu_p50_ms']:.2f} ms  "
                      f"recall@20 {r['recall_at_20_mean']:.3f} (min "
                      f"{r['recall_at_20_min']:.2f})  recall@200 {r['recall_at_200_mean']:.3f}")
    p = AnnParams()
    report = {"benchmark": "ann_recall",
              "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                          "cpu_count": os.cpu_count(), "load_avg_1m": os.getloadavg()[0]},
              "settings": {"sizes": args.sizes, "dim": args.dim, "queries": args.queries,
                           "seed": args.seed, "M": p.M, "ef_construction": p.ef_construction,
                           "ef_search": p.ef_search, "k": p.k},
              "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
