"""pgvector's HNSW cosine index against exact in-process search, on synthetic unit vectors.

The measurement under the embedding channel on PostgreSQL: ``n`` random unit vectors of
dimension ``d`` in a ``vector(d)`` column with an HNSW (``vector_cosine_ops``) index, queried
with ``ORDER BY emb <=> q LIMIT k``; the baseline is the exact top ``k`` by a NumPy scan of the
same matrix in this process. Reported per ``hnsw.ef_search``: recall@k against exact search, and
p50/p95 query latency (wall and CPU of this process) for both. The server (PostgreSQL 16 with
pgvector, the ``pgserver`` wheel's binaries) is started here by tests/pg_servers.py.

    nice -n 10 python benchmarks/pg_vector.py --sizes 10000 --out benchmarks/results/pg_vector.json
    nice -n 10 python benchmarks/pg_vector.py --sizes 10000 --clusters 200 \\
        --out benchmarks/results/pg_vector_clustered.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import pg_servers  # noqa: E402


def _lit(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in v) + "]"


def _pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(xs), p)) * 1000.0


def _vectors(rng: np.random.Generator, n: int, d: int, centres: np.ndarray | None,
             spread: float) -> np.ndarray:
    if centres is None:
        v = rng.standard_normal((n, d))
    else:
        v = centres[rng.integers(0, len(centres), n)] + spread * rng.standard_normal((n, d))
    v = v.astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def run_size(url: str, n: int, d: int, k: int, n_queries: int, efs: list[int],
             seed: int, clusters: int, spread: float) -> dict:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, d)) / np.sqrt(d) if clusters else None
    m = _vectors(rng, n, d, centres, spread)
    qs = _vectors(rng, n_queries, d, centres, spread)
    out: dict = {"n": n, "dim": d, "k": k, "queries": n_queries}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("DROP TABLE IF EXISTS bench_vec")
        conn.execute(f"CREATE TABLE bench_vec (id int PRIMARY KEY, emb vector({d}) NOT NULL)")
        t0 = time.perf_counter()
        with conn.cursor() as cur, cur.copy("COPY bench_vec (id, emb) FROM STDIN") as cp:
            for i in range(n):
                cp.write_row((i, _lit(m[i])))
        out["load_s"] = round(time.perf_counter() - t0, 2)
        conn.execute("SET maintenance_work_mem = '256MB'")
        t0 = time.perf_counter()
        conn.execute("CREATE INDEX ON bench_vec USING hnsw (emb vector_cosine_ops)")
        out["hnsw_build_s"] = round(time.perf_counter() - t0, 2)
        exact, ex_wall, ex_cpu = [], [], []
        for q in qs:
            w, c = time.perf_counter(), time.process_time()
            s = m @ q
            top = np.argpartition(-s, k)[:k]
            top = top[np.argsort(-s[top])]
            ex_wall.append(time.perf_counter() - w)
            ex_cpu.append(time.process_time() - c)
            exact.append(set(top.tolist()))
        out["exact_in_process"] = {"p50_ms": round(_pct(ex_wall, 50), 3),
                                   "p95_ms": round(_pct(ex_wall, 95), 3),
                                   "cpu_p50_ms": round(_pct(ex_cpu, 50), 3)}
        out["hnsw"] = []
        for ef in efs:
            conn.execute(f"SET hnsw.ef_search = {int(ef)}")
            hits, walls, cpus = 0, [], []
            for q, ex in zip(qs, exact, strict=True):
                lit = _lit(q)
                w, c = time.perf_counter(), time.process_time()
                got = [r[0] for r in conn.execute(
                    "SELECT id FROM bench_vec ORDER BY emb <=> %s::vector LIMIT %s", (lit, k))]
                walls.append(time.perf_counter() - w)
                cpus.append(time.process_time() - c)
                hits += len(ex & set(got))
            out["hnsw"].append({"ef_search": ef,
                                "recall_at_k": round(hits / (k * len(qs)), 4),
                                "p50_ms": round(_pct(walls, 50), 3),
                                "p95_ms": round(_pct(walls, 95), 3),
                                "client_cpu_p50_ms": round(_pct(cpus, 50), 3)})
        conn.execute("DROP TABLE bench_vec")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--ef-search", type=int, nargs="+", default=[40, 100, 200])
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--clusters", type=int, default=0,
                    help="0: uniform on the sphere (HNSW's hard case); C > 0: C Gaussian clusters")
    ap.add_argument("--spread", type=float, default=0.03,
                    help="per-coordinate noise around a cluster centre (centres have norm ~1)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    b = pg_servers.pgvector_bin()
    if b is None:
        print("error: no PostgreSQL with pgvector here (pip install 'pgserver==0.1.4')",
              file=sys.stderr)
        return 2
    os.environ["ANALOGIST_PG_BIN"] = str(b)
    root, urls = pg_servers.start(1)
    result = {"benchmark": "pg_vector", "when": dt.datetime.now(dt.UTC).isoformat(),
              "machine": platform.platform(), "cpus": os.cpu_count(),
              "server": "PostgreSQL 16.2 + pgvector 0.6.2 (pgserver 0.1.4 wheel)",
              "vectors": ("synthetic, L2-normalised float32: " + (
                  f"{a.clusters} Gaussian clusters, spread {a.spread}" if a.clusters
                  else "standard normal (uniform on the sphere)")), "sizes": []}
    try:
        for n in a.sizes:
            row = run_size(urls[0], n, a.dim, a.k, a.queries, a.ef_search, a.seed,
                           a.clusters, a.spread)
            result["sizes"].append(row)
            print(json.dumps(row))
            if a.out:
                a.out.write_text(json.dumps(result, indent=2) + "\n")
    finally:
        pg_servers.stop(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
