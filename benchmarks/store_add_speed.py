"""Bulk ``add`` rate on each backend, same records, same run: SQLite file vs PostgreSQL server.

Run:  nice -n 10 python benchmarks/store_add_speed.py [--n 10000] [--pg-url postgresql://...]

Records: the synthetic signatures of ``benchmarks/retrieve_speed.py`` (casebook structures
recombined). Each arm is ``open_memory(store).add_many(records, batch_size=5000)`` into a new,
empty store (one transaction per batch). Without ``--pg-url`` a throwaway PostgreSQL server is
started from the local binaries (``tests/pg_servers.py``: fsync off, as for tests — say so when
quoting the figure). The arms alternate over ``--repeats`` rounds; reported: episodes per second
of wall time and of this process's CPU time (the PostgreSQL server's own CPU is not counted),
median over rounds, and the ratio PostgreSQL / SQLite. Writes
``benchmarks/results/store_add_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from retrieve_speed import _casebook_dicts, synth  # noqa: E402

from analogist.memory import open_memory  # noqa: E402


def _fresh_pg(admin: str) -> str:
    import psycopg

    schema = "bench_" + uuid.uuid4().hex[:8]
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in admin else "?"
    return f"{admin}{sep}options=-csearch_path%3D{schema}"


def _arm(store: str, records: list[dict]) -> tuple[float, float]:
    with open_memory(store) as m:
        w0, c0 = time.perf_counter(), time.process_time()
        m.add_many(records, namespace="bench", batch_size=5000)
        w, c = time.perf_counter() - w0, time.process_time() - c0
        assert m.count("bench") == len(records)
    return w, c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--pg-url", default=None, help="admin URL of a PostgreSQL server")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "store_add_speed.json")
    a = ap.parse_args(argv)
    records = synth(_casebook_dicts(), a.n, a.seed)
    root = None
    admin = a.pg_url
    if admin is None:
        from tests import pg_servers

        root, urls = pg_servers.start(1)
        admin = urls[0]
    runs: dict[str, list[tuple[float, float]]] = {"sqlite": [], "postgres": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(a.repeats):
                for arm in (("sqlite", "postgres") if r % 2 == 0 else ("postgres", "sqlite")):
                    store = str(Path(tmp) / f"s{r}.db") if arm == "sqlite" else _fresh_pg(admin)
                    runs[arm].append(_arm(store, records))
    finally:
        if root is not None:
            pg_servers.stop(root)
    out = {"n": a.n, "repeats": a.repeats, "server": "given" if a.pg_url else
           "throwaway (tests/pg_servers.py: fsync=off, synchronous_commit=off)"}
    for arm, rs in runs.items():
        out[arm] = {"wall_s": statistics.median(w for w, _ in rs),
                    "cpu_s": statistics.median(c for _, c in rs),
                    "eps_per_wall_s": a.n / statistics.median(w for w, _ in rs),
                    "eps_per_cpu_s": a.n / statistics.median(c for _, c in rs)}
    out["ratio_wall_pg_over_sqlite"] = out["postgres"]["eps_per_wall_s"] / \
        out["sqlite"]["eps_per_wall_s"]
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    for arm in ("sqlite", "postgres"):
        o = out[arm]
        print(f"{arm:9s} {o['eps_per_wall_s']:8.0f} episodes/s wall  "
              f"{o['eps_per_cpu_s']:8.0f} episodes/s CPU  ({o['wall_s']:.2f} s wall)")
    print(f"PostgreSQL / SQLite (wall): {out['ratio_wall_pg_over_sqlite']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
