"""The same memory on PostgreSQL and on SQLite, same machine, same run, per size.

For each size: ``add`` rate (episodes per wall and per CPU second of the writing process),
stage-1 (MAC) and whole ``find`` latency p50/p95 (wall and CPU), and a cold start — a new process
that opens the store and answers one ``find`` — for SQLite (index from ``<store>.mac/``), for
PostgreSQL with the stage-1 index read from its ``mac_index`` table, and for PostgreSQL with that
row removed (so the new process rebuilds the index from the episode rows: what the table saves).
The PostgreSQL server is started here from the Debian binaries (tests/pg_servers.py).

    nice -n 10 python benchmarks/pg_scale.py --sizes 10000 100000 \\
        --out benchmarks/results/pg_scale.json

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
                target_file: Path) -> dict[str, Any]:
    from analogist.memory import open_memory
    from analogist.retrieve import Retriever

    m = open_memory(store)
    a, c = time.perf_counter(), time.process_time()
    m.add_many(recs, batch_size=500)
    add_wall, add_cpu = time.perf_counter() - a, time.process_time() - c
    r = Retriever(m, log=False)
    a, c = time.perf_counter(), time.process_time()
    r.refresh()  # builds (and saves) the stage-1 index
    build = {"wall_s": time.perf_counter() - a, "cpu_s": time.process_time() - c}
    s1w, s1c = _timed(r.mac, queries)
    fw, fc = _timed(r.find, queries)
    answers = [[h.episode_id for h in r.find(q).results] for q in queries[:5]]
    m.close()
    row: dict[str, Any] = {
        "backend": name, "episodes": len(recs),
        "add": {"wall_s": add_wall, "cpu_s": add_cpu, "per_wall_s": len(recs) / add_wall,
                "per_cpu_s": len(recs) / add_cpu},
        "index_build": build,
        "stage1": {"wall": _ms(s1w), "cpu": _ms(s1c)},
        "find": {"wall": _ms(fw), "cpu": _ms(fc)},
        "answers_top5_first5": answers,
        "cold_start": _cold(store, target_file),
    }
    if name == "postgresql":
        import psycopg

        with psycopg.connect(store, autocommit=True) as pg:
            size = pg.execute("SELECT pg_database_size(current_database()), "
                              "octet_length(data) FROM mac_index, (SELECT 1) x "
                              "WHERE namespace = 'default'").fetchone()
            row["database_bytes"], row["mac_index_bytes"] = int(size[0]), int(size[1])
            pg.execute("DELETE FROM mac_index")
        row["cold_start_rebuild"] = _cold(store, target_file)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/pg_scale.json"))
    args = ap.parse_args(argv)
    from analogist.signature import validate_signature

    base = _casebook_dicts()
    work = Path(tempfile.mkdtemp(prefix="pg_scale-"))
    work.chmod(0o755)  # the server runs as the postgres user
    root, urls = pg_servers.start(1, work / "pg")
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
            import psycopg

            with psycopg.connect(urls[0], autocommit=True) as pg:
                pg.execute(f"CREATE DATABASE {db}")
            pg_url = urls[0].rsplit("/", 1)[0] + "/" + db
            for name, store in (("sqlite", str(work / f"s{n}.db")), ("postgresql", pg_url)):
                print(f"{name} {n} ...", file=sys.stderr, flush=True)
                rows.append(run_backend(name, store, recs, queries, tf))
                _write(args, rows, partial=n != args.sizes[-1] or name != "postgresql")
    finally:
        pg_servers.stop(root)
    return 0


def _write(args: argparse.Namespace, rows: list[dict[str, Any]], *, partial: bool) -> None:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out = {"benchmark": "pg_scale", "partial": partial,
           "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "machine": {"python": platform.python_version(), "platform": platform.platform()},
           "command": "python benchmarks/pg_scale.py --sizes "
                      + " ".join(map(str, args.sizes)) + f" --queries {args.queries}",
           "peak_rss_mib": ru.ru_maxrss / 1024, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
