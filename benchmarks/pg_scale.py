"""The same memory on PostgreSQL and on SQLite, same machine, same run, per size.

For each size: ``add`` rate (episodes per wall and per CPU second of the writing process),
stage-1 (MAC) and whole ``find`` latency p50/p95 (wall and CPU), and a cold start — a new process
that opens the store and answers one ``find`` — for SQLite (index from ``<store>.mac/``), for
PostgreSQL with the stage-1 index read from its ``mac_index`` table, and for PostgreSQL with that
row removed (so the new process rebuilds the index from the episode rows: what the table saves).
The PostgreSQL server is started here from the Debian binaries (tests/pg_servers.py).

    nice -n 10 python benchmarks/pg_scale.py --sizes 10000 100000 \\
        --out benchmarks/results/pg_scale.json

``--partitioned K`` also runs the store partitioned across K servers (memory/pg_partition.py;
K servers started here, the coordinator database on the first): layout ``hash``, the namespace
spread by hash of the row id over one database on each of the K servers; layout ``one``, the
whole namespace on the second server (one postgres_fdw hop). Single-server PostgreSQL in the same
run is the baseline, and each partitioned row records whether its answers (the top 5 of every
query) equal the single server's:

    nice -n 10 python benchmarks/pg_scale.py --sizes 10000 --partitioned 3 \\
        --out benchmarks/results/pg_partitioned.json

Results are written after each size (``partial: true`` until the last one).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.retrieve_speed import _casebook_dicts, _ms, _timed, synth  # noqa: E402
from tests import pg_servers  # noqa: E402

_COLD = """
import json, sys, time, resource
t0 = time.perf_counter()
from analogist.memory import open_memory
from analogist.retrieve import Retriever
from analogist.signature import validate_signature
m = open_memory(sys.argv[1])
target = validate_signature(json.load(open(sys.argv[2])))
r = Retriever(m, log=False)
res = r.find(target)
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": ru.ru_utime + ru.ru_stime,
                  "notes": r.notes, "top": [h.episode_id for h in res.results]}))
"""


def _cold(store: str, target: Path) -> dict[str, Any]:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _COLD, store, str(target)], check=True,
                         capture_output=True, text=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    got["process_wall_s"] = time.perf_counter() - t
    return got


def run_backend(name: str, store: str, recs: list[dict[str, Any]], queries: list[Any],
                target_file: Path, shards: list[str] | None = None) -> dict[str, Any]:
    from analogist.memory import open_memory
    from analogist.retrieve import Retriever

    m = open_memory(store)
    if shards:
        from analogist.memory.pg_partition import place

        place(m, "default", shards)
    a, c = time.perf_counter(), time.process_time()
    m.add_many(recs, batch_size=500)
    add_wall, add_cpu = time.perf_counter() - a, time.process_time() - c
    r = Retriever(m, log=False)
    a, c = time.perf_counter(), time.process_time()
    r.refresh()  # builds (and saves) the stage-1 index
    build = {"wall_s": time.perf_counter() - a, "cpu_s": time.process_time() - c}
    s1w, s1c = _timed(r.mac, queries)
    fw, fc = _timed(r.find, queries)
    answers = [[h.episode_id for h in r.find(q).results] for q in queries]
    m.close()
    row: dict[str, Any] = {
        "backend": name, "episodes": len(recs),
        "add": {"wall_s": add_wall, "cpu_s": add_cpu, "per_wall_s": len(recs) / add_wall,
                "per_cpu_s": len(recs) / add_cpu},
        "index_build": build,
        "stage1": {"wall": _ms(s1w), "cpu": _ms(s1c)},
        "find": {"wall": _ms(fw), "cpu": _ms(fc)},
        "answers_top5_first5": answers[:5],
        "answers_top5": answers,
        "cold_start": _cold(store, target_file),
    }
    if name.startswith("postgresql"):
        import psycopg

        with psycopg.connect(store, autocommit=True) as pg:
            size = pg.execute("SELECT pg_database_size(current_database()), "
                              "octet_length(data) FROM mac_index, (SELECT 1) x "
                              "WHERE namespace = 'default'").fetchone()
            row["database_bytes"], row["mac_index_bytes"] = int(size[0]), int(size[1])
            pg.execute("DELETE FROM mac_index")
        if shards:
            row["shards"] = len(shards)
            row["shard_database_bytes"] = []
            for u in shards:
                with psycopg.connect(u, autocommit=True) as pg:
                    row["shard_database_bytes"].append(int(pg.execute(
                        "SELECT pg_database_size(current_database())").fetchone()[0]))
        row["cold_start_rebuild"] = _cold(store, target_file)
    return row


def _same(rows: list[dict[str, Any]], n: int) -> None:
    """Mark each partitioned row of size ``n`` with whether its answers equal one server's."""
    one = next((r for r in rows if r["backend"] == "postgresql" and r["episodes"] == n), None)
    for r in rows:
        if r["episodes"] == n and r["backend"].startswith("postgresql-partitioned") and one:
            same = [a == b for a, b in zip(r["answers_top5"], one["answers_top5"], strict=True)]
            r["same_answers_as_one_server"] = {"queries": len(same), "same": sum(same)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--partitioned", type=int, default=0, metavar="K",
                    help="also run the store partitioned across K servers (K >= 2)")
    ap.add_argument("--layouts", default="hash,one",
                    help="with --partitioned: hash (spread over the K servers) and/or one "
                         "(the namespace on the second server)")
    ap.add_argument("--no-sqlite", action="store_true", help="skip the SQLite rows")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/pg_scale.json"))
    args = ap.parse_args(argv)
    from analogist.signature import validate_signature

    base = _casebook_dicts()
    work = Path(tempfile.mkdtemp(prefix="pg_scale-"))
    work.chmod(0o755)  # the server runs as the postgres user
    if args.partitioned == 1 or args.partitioned < 0:
        ap.error("--partitioned needs at least 2 servers")
    root, urls = pg_servers.start(max(1, args.partitioned), work / "pg")
    rows: list[dict[str, Any]] = []
    try:
        for n in args.sizes:
            recs = synth(base, n, args.seed)
            qd = synth(base, args.queries, args.seed + 1)
            for i, q in enumerate(qd):
                q["episode_id"] = f"q-{i}"
            queries = [validate_signature(q) for q in qd]
            tf = work / f"target-{n}.json"
            tf.write_text(json.dumps(qd[0]), encoding="utf-8")
            db = f"bench_{n}"
            runs: list[tuple[str, str, list[str] | None]] = []
            if not args.no_sqlite:
                runs.append(("sqlite", str(work / f"s{n}.db"), None))
            runs.append(("postgresql", _new_db(urls[0], db), None))
            layouts = [x.strip() for x in args.layouts.split(",") if x.strip()]
            if args.partitioned:
                k = args.partitioned
                if "hash" in layouts:
                    runs.append((f"postgresql-partitioned-hash{k}", _new_db(urls[0], db + "_ch"),
                                 [_new_db(u, f"{db}_h{i}") for i, u in enumerate(urls)]))
                if "one" in layouts:
                    runs.append(("postgresql-partitioned-one", _new_db(urls[0], db + "_co"),
                                 [_new_db(urls[1], f"{db}_o1")]))
            for i, (name, store, shards) in enumerate(runs):
                print(f"{name} {n} ...", file=sys.stderr, flush=True)
                rows.append(run_backend(name, store, recs, queries, tf, shards))
                _same(rows, n)
                _write(args, rows, partial=n != args.sizes[-1] or i != len(runs) - 1)
    finally:
        pg_servers.stop(root)
    return 0


def _new_db(admin_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as pg:
        pg.execute(f"CREATE DATABASE {name}")
    return admin_url.rsplit("/", 1)[0] + "/" + name


def _write(args: argparse.Namespace, rows: list[dict[str, Any]], *, partial: bool) -> None:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out = {"benchmark": "pg_scale", "partial": partial,
           "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "machine": {"python": platform.python_version(), "platform": platform.platform()},
           "command": "python benchmarks/pg_scale.py --sizes "
                      + " ".join(map(str, args.sizes)) + f" --queries {args.queries}"
                      + (f" --partitioned {args.partitioned} --layouts {args.layouts}"
                         if args.partitioned else "")
                      + (" --no-sqlite" if args.no_sqlite else ""),
           "peak_rss_mib": ru.ru_maxrss / 1024, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
