"""Bulk ``add`` speed against raw SQLite inserts of the same rows, in the same run.

Run:  nice -n 10 python benchmarks/add_speed.py [--sizes 10000 100000] [--cli 5000]

Records are the synthetic signatures of ``benchmarks/retrieve_speed.py`` (casebook structures
recombined), as parsed JSON objects — what a bulk file holds. Per size:

* **add**: ``Memory.add_many(records, batch_size=5000)`` into a new store — validation, features,
  JSON, all four tables, one transaction per batch (the store is opened before the clock starts
  and closed after it stops, as the baseline's is);
* **raw SQLite** (the baseline): the very rows ``add`` wrote (computed beforehand, not timed)
  inserted into a new store of the same schema, with the same pragmas, ``executemany`` per table
  and one transaction per batch of 5000;
* the CPU time per episode of each preparation step over one batch of 5,000, as ``add_many``
  runs them (validation into plain values, the stored features of a batch at once, and the
  compact canonical JSON).

Then ``analogist add --no-embed`` of one JSON file of ``--cli`` episodes in a new process (wall and
CPU). Rates are episodes per second of wall time and of CPU time (``time.process_time``; the
child's rusage for the CLI). Targets (reported, never asserted): add >= 5,000 episodes/s and
>= a third of the raw SQLite rate. Writes ``benchmarks/results/add_speed.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from retrieve_speed import _casebook_dicts, synth  # noqa: E402


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(t: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - t[0], time.process_time() - t[1]


def _records(n: int, seed: int) -> list[dict[str, Any]]:
    base = _casebook_dicts()
    out = []
    for start in range(0, n, 20_000):
        recs = synth(base, min(20_000, n - start), seed + start)
        for j, r in enumerate(recs):
            r["episode_id"] = f"syn-{start + j}"
        out.extend(recs)
    return out


def _steps(recs: list[dict[str, Any]]) -> dict[str, float]:
    """CPU microseconds per episode of each preparation step over one batch (with the collector
    paused, as ``add_many`` runs them)."""
    from analogist.memory.sqlite import _collector_paused

    with _collector_paused():
        return _timed_steps(recs)


def _timed_steps(recs: list[dict[str, Any]]) -> dict[str, float]:
    from analogist.index.features import _stored_features
    from analogist.memory.records import _plain_json, _plain_record

    sample = recs[:5000]
    t = time.process_time()
    plains = [_plain_record(r) for r in sample]  # as add_many validates: to plain values
    v = time.process_time() - t
    t = time.process_time()
    _stored_features(plains)  # as add_many does: one pass over a batch
    f = time.process_time() - t
    t = time.process_time()
    for p in plains:
        _plain_json(p)  # the compact canonical JSON it stores
    j = time.process_time() - t
    k = 1e6 / len(sample)
    return {"validate_us": v * k, "features_us": f * k, "json_us": j * k}


def _raw_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path)
    q = {
        "signatures": "SELECT id, namespace, episode_id, kind, json, source_hash, created_at, "
                      "verified, surface FROM signatures ORDER BY id",
        "sig_relations": "SELECT signature_id, position, predicate, args, in_causal_chain "
                         "FROM sig_relations ORDER BY signature_id, position",
        "sig_vectors": "SELECT signature_id, channel, format, data FROM sig_vectors "
                       "ORDER BY signature_id, channel",
        "sig_fingerprint": "SELECT signature_id, fingerprint, depth FROM sig_fingerprint "
                           "ORDER BY signature_id",
    }
    out = {t: conn.execute(sql).fetchall() for t, sql in q.items()}
    conn.close()
    return out


def _raw_insert(path: Path, rows: dict[str, list[tuple[Any, ...]]], batch: int
                ) -> tuple[float, float]:
    """Insert ``rows`` into the fresh store at ``path``: executemany per table, one transaction
    per ``batch`` signatures (their child rows with them)."""
    from analogist.memory.sqlite import Memory

    with Memory.open(path):
        pass  # the same schema, triggers included
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA journal_mode = WAL").fetchone()
    conn.execute("PRAGMA synchronous = NORMAL")
    cols = {"signatures": 9, "sig_relations": 5, "sig_vectors": 4, "sig_fingerprint": 3}
    names = {
        "signatures": "signatures(id, namespace, episode_id, kind, json, source_hash, "
                      "created_at, verified, surface)",
        "sig_relations": "sig_relations(signature_id, position, predicate, args, "
                         "in_causal_chain)",
        "sig_vectors": "sig_vectors(signature_id, channel, format, data)",
        "sig_fingerprint": "sig_fingerprint(signature_id, fingerprint, depth)",
    }
    sigs = rows["signatures"]
    # split the child rows by batch beforehand (not timed)
    bounds = [sigs[i][0] for i in range(0, len(sigs), batch)] + [sigs[-1][0] + 1]
    parts: list[dict[str, list[tuple[Any, ...]]]] = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        parts.append({t: [r for r in rs if a <= r[0] < b] for t, rs in rows.items()})
    t0 = _clock()
    for part in parts:
        conn.execute("BEGIN IMMEDIATE")
        for t in ("signatures", "sig_relations", "sig_vectors", "sig_fingerprint"):
            conn.executemany(f"INSERT INTO {names[t]} VALUES ({', '.join('?' * cols[t])})",
                             part[t])
        conn.execute("COMMIT")
    took = _since(t0)
    conn.close()
    return took


def run_size(n: int, workdir: Path, seed: int) -> dict[str, Any]:
    from analogist.memory.sqlite import Memory

    recs = _records(n, seed)
    path = workdir / f"add-{n}.db"
    with Memory.open(path) as m:  # opened (schema made) and closed off the clock, as for raw
        t0 = _clock()
        m.add_many(recs, namespace="bench", batch_size=5000)
        add_wall, add_cpu = _since(t0)
    rows = _raw_rows(path)
    raw_path = workdir / f"raw-{n}.db"
    raw_wall, raw_cpu = _raw_insert(raw_path, rows, 5000)
    out = {"size": n, "add_s": add_wall, "add_cpu_s": add_cpu, "add_per_s": n / add_wall,
           "add_per_cpu_s": n / add_cpu, "raw_s": raw_wall, "raw_cpu_s": raw_cpu,
           "raw_per_s": n / raw_wall, "raw_per_cpu_s": n / raw_cpu,
           "ratio_wall": raw_wall / add_wall, "ratio_cpu": raw_cpu / add_cpu,
           "steps": _steps(recs)}
    for p in workdir.glob("*-*.db*"):
        p.unlink()
    return out


def run_cli(n: int, workdir: Path, seed: int) -> dict[str, Any]:
    recs = _records(n, seed)
    f = workdir / "bulk.json"
    f.write_text(json.dumps(recs, indent=1), encoding="utf-8")
    store = workdir / "cli.db"
    exe = Path(sys.executable).with_name("analogist")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([str(exe), "add", str(f), "--store", str(store), "--no-embed",
                        "--batch-size", "5000"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    out = {"episodes": n, "file_bytes": f.stat().st_size, "wall_s": wall, "cpu_s": cpu,
           "per_s": n / wall, "per_cpu_s": n / cpu, "exit_code": p.returncode,
           "output": (p.stdout + p.stderr).strip()[-300:]}
    for q in workdir.glob("cli.db*"):
        q.unlink()
    f.unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--cli", type=int, default=5000, help="episodes in the CLI bulk file")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "add_speed.json")
    args = ap.parse_args(argv)
    from rich.console import Console
    from rich.table import Table

    console = Console()
    load_start = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("ANALOGIST_BENCH_TMP")) as tmp:
        for n in args.sizes:
            console.print(f"adding {n:,} episodes, then the same rows raw ...")
            rows.append(run_size(n, Path(tmp), args.seed))
        console.print(f"analogist add of one JSON file of {args.cli:,} episodes ...")
        cli = run_cli(args.cli, Path(tmp), args.seed) if args.cli else None
    t = Table(title="add speed (episodes/s; CPU time unless marked wall)", title_justify="left")
    for c in ("size", "add/s", "add/s wall", "raw/s", "raw/s wall", "add ÷ raw (cpu)",
              "validate µs", "features µs", "json µs"):
        t.add_column(c, justify="right")
    for r in rows:
        s = r["steps"]
        t.add_row(f"{r['size']:,}", f"{r['add_per_cpu_s']:.0f}", f"{r['add_per_s']:.0f}",
                  f"{r['raw_per_cpu_s']:.0f}", f"{r['raw_per_s']:.0f}", f"{r['ratio_cpu']:.2f}",
                  f"{s['validate_us']:.0f}", f"{s['features_us']:.0f}", f"{s['json_us']:.0f}")
    console.print(t)
    if cli:
        console.print(f"CLI add of {cli['file_bytes'] / 2**20:.1f} MiB ({cli['episodes']:,} "
                      f"episodes): {cli['per_cpu_s']:.0f}/s CPU, {cli['per_s']:.0f}/s wall, "
                      f"exit {cli['exit_code']}")
    targets = {
        "add_ge_5000_per_cpu_s": all(r["add_per_cpu_s"] >= 5000 for r in rows),
        "add_ge_third_of_raw_cpu": all(r["ratio_cpu"] >= 1 / 3 for r in rows),
    }
    for k, v in targets.items():
        console.print(f"target {k}: {'PASS' if v else 'FAIL'}")
    report = {"benchmark": "add_speed",
              "command": " ".join(["python", "benchmarks/add_speed.py", *sys.argv[1:]]),
              "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                          "cpu_count": os.cpu_count(), "load_avg_1m_start": load_start,
                          "load_avg_1m": os.getloadavg()[0]},
              "settings": {"sizes": args.sizes, "cli": args.cli, "seed": args.seed,
                           "batch_size": 5000},
              "targets": targets, "rows": rows, "cli": cli}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
