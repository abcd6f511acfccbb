"""The embedding channel in pgvector against exact in-process search, on real abstract-text
embeddings.

Run:  nice -n 10 python benchmarks/pg_vector_texts.py --n 100000 --cache /tmp/analogist-pgv-cache
      nice -n 10 python benchmarks/pg_vector_channel.py --sizes 10000 100000 \\
          --cache /tmp/analogist-pgv-cache

The episodes and their L2 texts are ``benchmarks/pg_vector_texts.py``'s (casebook structures
recombined, L2 sentences from 16 mechanism templates with their slots filled from word pools), the
vectors the bundled embedder's (Universal Sentence Encoder, 512-d), computed once into the cache;
200 query episodes come from the same generator with another seed (never stored). The server is
PostgreSQL 16.2 with pgvector 0.6.2 from the ``pgserver`` wheel, started here by
tests/pg_servers.py in its test configuration (``fsync=off``, ``shared_buffers=64MB``). Per size,
one store (a fresh database):

* **build**: ``add_many`` with the L2 vectors (the store's rows and the HNSW index maintained in
  the same transactions), episodes per wall and per CPU second of this process, and the server
  backend's CPU seconds; the level table and its HNSW index sizes;
* **nearest rows**: per query, the channel's statement (:meth:`PgVector.search`) for ``k`` 10 and
  200 at several ``hnsw.ef_search``, against the exact top ``k`` of a NumPy scan of the same
  matrix in this process in the same run (``mat @ q`` and ``np.argpartition``): recall@k (share
  of the exact k the index returns, by id, and counting a returned row whose exact cosine ties the
  k-th: about 11% of the texts repeat another's exactly), p50/p95 wall and CPU milliseconds (this process, and the
  server backend's CPU);
* **stage 1 and find**: :class:`Retriever` with the channel from the database (``min_rows`` 1) and
  in-process exact, on the same store: the first ``refresh`` (both load the saved stage-1 index;
  the in-process one also reads every vector), ``mac`` p50/p95, agreement of the stage-1
  shortlist of 20 and of ``find``'s top 5 (first 50 queries).

Wall times on a shared machine are noisy; CPU times are reported beside them. Writes
``benchmarks/results/pg_vector_channel.json`` and, when matplotlib is installed,
``benchmarks/results/pg_vector_channel.png``.
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

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the exact baseline on one thread
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import psycopg  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.pg_vector_texts import abstract_l2, embed_cached, episodes  # noqa: E402
from tests import pg_servers  # noqa: E402

from analogist.index.embed import abstract_texts  # noqa: E402
from analogist.memory import open_memory  # noqa: E402
from analogist.memory.pg_vector import PgVectorParams  # noqa: E402
from analogist.plots import load_pyplot  # noqa: E402
from analogist.retrieve import RetrieveParams, Retriever  # noqa: E402
from analogist.signature import validate_signature  # noqa: E402

HERE = Path(__file__).resolve().parent
SEARCHES = ((10, 40), (10, 100), (10, 200), (200, 200), (200, 400), (200, 800))
TICK = os.sysconf("SC_CLK_TCK")


def _ms(xs: list[float]) -> dict[str, float]:
    a = np.asarray(xs) * 1e3
    return {"p50_ms": round(float(np.percentile(a, 50)), 3),
            "p95_ms": round(float(np.percentile(a, 95)), 3)}


def _backend_cpu(pg: Any) -> float:
    """CPU seconds of the connection's server process so far (same machine: /proc)."""
    f = Path(f"/proc/{pg.info.backend_pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


class Precomputed:
    """The bundled embedder's vectors for known texts (computed once into the cache)."""

    name = "use-multilingual-v3 (precomputed)"

    def __init__(self, texts: list[str], vecs: np.ndarray) -> None:
        self.dim = int(vecs.shape[1])
        self._by_text = {t: vecs[i] for i, t in enumerate(texts)}

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.vstack([self._by_text[t] for t in texts]).astype(np.float32)


def _not_cached(texts: list[str]) -> np.ndarray:
    raise SystemExit("error: vectors missing from the cache: run benchmarks/pg_vector_texts.py "
                     "with the same --cache first")


def _exact_top(mat: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    sims = mat @ q
    part = np.argpartition(-sims, k)[:k]
    return part[np.argsort(-sims[part], kind="stable")]


def run_size(n: int, admin: str, cache: Path, queries: int, finds: int, seed: int
             ) -> dict[str, Any]:
    recs = episodes(n, seed)
    texts = abstract_l2(recs)
    mat, _w, _c = embed_cached(texts, cache / "store", _not_cached)
    qrecs = [validate_signature(d) for d in episodes(queries, seed + 1, prefix="q")]
    qtexts = [abstract_texts(sig)["L2"] for sig in qrecs]
    qmat, _w, _c = embed_cached(qtexts, cache / "queries", _not_cached)
    out: dict[str, Any] = {"size": n, "dim": int(mat.shape[1]), "queries": queries,
                           "distinct_vectors": int(len(np.unique(mat.round(6), axis=0)))}

    name = f"analogist_pgvch_{n}_{int(time.time())}"
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    url = admin.rsplit("/", 1)[0] + "/" + name
    mem = open_memory(url)
    assert mem._pgvector is not None, mem.pgvector_note
    pg = mem.conn._pg
    row_of = {r["episode_id"]: i for i, r in enumerate(recs)}

    # -- build ---------------------------------------------------------------------------
    s0, t0, c0 = _backend_cpu(pg), time.perf_counter(), time.process_time()
    mem.add_many(recs, batch_size=500, embed=lambda sig: {"L2": mat[row_of[sig.episode_id]]})
    wall, cpu, server = (time.perf_counter() - t0, time.process_time() - c0,
                         _backend_cpu(pg) - s0)
    pg.execute("ANALYZE")
    sizes = pg.execute(
        "SELECT pg_table_size('sig_embedding_l2'), (SELECT sum(pg_relation_size(indexrelid)) "
        "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = "
        "'sig_embedding_l2'::regclass AND c.relname LIKE 'sig_embedding_hnsw_%%')").fetchone()
    out["build"] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                    "server_cpu_s": round(server, 2),
                    "episodes_per_wall_s": round(n / wall, 1),
                    "episodes_per_cpu_s": round(n / cpu, 1),
                    "l2_table_mb": round(sizes[0] / 2**20, 1),
                    "l2_hnsw_index_mb": round(int(sizes[1]) / 2**20, 1)}
    print(f"[{n}] build {out['build']}", flush=True)

    # -- nearest rows: the channel's statement against the exact scan ---------------------
    ids = np.asarray(mem.embeddings("L2")[0], dtype=np.int64)  # row id of each matrix row
    vec = mem._pgvector
    exact: dict[int, list[np.ndarray]] = {10: [], 200: []}
    kth: dict[int, list[float]] = {10: [], 200: []}  # the exact k-th cosine per query
    row_of_id = {int(s): j for j, s in enumerate(ids)}
    ew, ec = [], []
    for q in qmat:
        t, c = time.perf_counter(), time.process_time()
        top = _exact_top(mat, q, 200)
        ec.append(time.process_time() - c)
        ew.append(time.perf_counter() - t)
        exact[200].append(ids[top])
        exact[10].append(ids[_exact_top(mat, q, 10)])
        sims = mat @ q
        for k in (10, 200):
            kth[k].append(float(np.sort(sims)[-k]))
    out["exact_numpy"] = {"wall": _ms(ew), "cpu": _ms(ec)}
    out["search"] = []
    for k, ef in SEARCHES:
        rec, tied, sw, sc, ss = [], [], [], [], []
        for j, q in enumerate(qmat):
            s, t, c = _backend_cpu(pg), time.perf_counter(), time.process_time()
            got, _sims = vec.search("default", "L2", q, k, ef)
            sc.append(time.process_time() - c)
            sw.append(time.perf_counter() - t)
            ss.append(_backend_cpu(pg) - s)
            rec.append(len(set(got.tolist()) & set(exact[k][j].tolist())) / k)
            # a returned row as near as the exact k-th counts (duplicate texts tie exactly)
            s_got = mat[[row_of_id[int(g)] for g in got]] @ q if len(got) else np.zeros(0)
            tied.append(min(k, int(np.sum(s_got >= kth[k][j] - 1e-6))) / k)
        row = {"k": k, "ef_search": max(k, ef), "recall_mean": round(statistics.mean(rec), 4),
               "recall_min": round(min(rec), 4),
               "recall_ties_mean": round(statistics.mean(tied), 4),
               "recall_ties_min": round(min(tied), 4), "wall": _ms(sw), "client_cpu": _ms(sc),
               "server_cpu_mean_ms": round(statistics.mean(ss) * 1e3, 2)}
        out["search"].append(row)
        print(f"[{n}] search {row}", flush=True)
    out["plan"] = vec.plan("default", "L2", qmat[0], 200, 200).splitlines()[:3]

    # -- stage 1 and find: the database channel against in-process exact -------------------
    emb = Precomputed(qtexts, qmat)
    # the stage-1 index built and saved once, unmeasured: both refreshes below load it
    Retriever(mem, log=False).refresh()
    res: dict[str, Any] = {}
    runs: dict[str, Any] = {}
    for label, pv in (("pgvector", PgVectorParams(min_rows=1)),
                      ("in_process", PgVectorParams(enabled=False))):
        r = Retriever(mem, embedder=emb, log=False, params=RetrieveParams(pgvector=pv))
        t, c = time.perf_counter(), time.process_time()
        r.refresh()
        first = (time.perf_counter() - t, time.process_time() - c)
        assert (r._pgv is not None) == (label == "pgvector")
        mw, mc, shorts, tops = [], [], [], []
        for j, qr in enumerate(qrecs):
            t, c = time.perf_counter(), time.process_time()
            ids_, fused, _ch, _sk = r.mac(qr)
            mc.append(time.process_time() - c)
            mw.append(time.perf_counter() - t)
            part = np.argsort(-fused, kind="stable")[:20]
            shorts.append(set(ids_[part].tolist()))
            if j < finds:
                tops.append([h.episode_id for h in r.find(qr).results])
        res[label] = {"first_refresh_wall_s": round(first[0], 3),
                      "first_refresh_cpu_s": round(first[1], 3),
                      "stage1_wall": _ms(mw), "stage1_cpu": _ms(mc)}
        runs[label] = (shorts, tops)
        print(f"[{n}] {label} {res[label]}", flush=True)
    a, b = runs["pgvector"], runs["in_process"]
    res["shortlist20_overlap_mean"] = round(statistics.mean(
        len(x & y) / 20 for x, y in zip(a[0], b[0], strict=True)), 4)
    res["find_top5_identical"] = f"{sum(x == y for x, y in zip(a[1], b[1], strict=True))}/{finds}"
    res["find_top1_identical"] = (
        f"{sum(x[:1] == y[:1] for x, y in zip(a[1], b[1], strict=True))}/{finds}")
    out["retriever"] = res
    print(f"[{n}] agreement {res['shortlist20_overlap_mean']} {res['find_top5_identical']}",
          flush=True)
    mem.close()
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return out


def _plot(rows: list[dict[str, Any]], path: Path) -> str | None:
    plt, why = load_pyplot()
    if plt is None:
        return why
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for r in rows:
        for k in (10, 200):
            pts = [(s["ef_search"], s["recall_ties_mean"]) for s in r["search"] if s["k"] == k]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    label=f"{r['size']:,} episodes, recall@{k}")
    ax.set_xscale("log")
    ax.set_xlabel("hnsw.ef_search")
    ax.set_ylabel("recall against exact search")
    ax.set_title("pgvector HNSW on real abstract-text embeddings (512-d)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--finds", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "pg_vector_channel.json")
    a = ap.parse_args(argv)
    b = pg_servers.pgvector_bin()
    if b is None:
        print("error: no PostgreSQL with pgvector (pip install --no-deps --only-binary=:all: "
              "'pgserver==0.1.4')", file=sys.stderr)
        return 2
    root, urls = pg_servers.start(1, binaries=b)
    rows = []
    try:
        for n in a.sizes:
            rows.append(run_size(n, urls[0], a.cache, a.queries, a.finds, a.seed))
            _write(a, rows)
    finally:
        pg_servers.stop(root, b)
    return 0


def _write(a: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    doc = {
        "benchmark": "pg_vector_channel",
        "command": "nice -n 10 python benchmarks/pg_vector_channel.py --sizes "
                   + " ".join(str(r["size"]) for r in rows) + f" --cache {a.cache}",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_avg_1m": round(os.getloadavg()[0], 2)},
        "server": "PostgreSQL 16.2, pgvector 0.6.2 (pgserver 0.1.4 wheel), test configuration",
        "embedder": "use-multilingual-v3 (the bundled default), 512-d, L2 texts",
        "sizes": rows,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    why = _plot(rows, a.out.with_suffix(".png"))
    if why:
        print(f"note: no chart ({why})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
