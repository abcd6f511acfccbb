"""Load test of the HTTP API (issue 9): N concurrent clients mixing writes and finds on loopback.

Starts a real ``analogist serve`` subprocess over a fresh store, seeds one namespace with the
casebook's 60 real episodes, then runs ``--clients`` threads (one httpx client each) for
``--seconds``: each request is a write (POST a casebook episode under a new unique id) with
probability ``--write-share``, else a find (POST /find with a random seeded episode as the
target). Reports throughput, p50/p95 latency per operation, errors, and a recount: the stored
count (over HTTP and straight from the SQLite file after the server stops) must equal the seed
plus the acknowledged writes, and every acknowledged episode id must be stored — no write lost.

    python benchmarks/service_load.py --clients 8 --seconds 60 \
        --out benchmarks/results/service_load.json

Timings on shared 2-core machines are noisy; the recount is the hard result.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))], 2)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--write-share", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)

    from analogist.casebook import load_casebook
    from analogist.service.keys import keys_add

    sigs = [e.signature.to_data() for e in load_casebook() if not e.is_decoy]
    tmp = Path(tempfile.mkdtemp(prefix="analogist-load-"))
    store = tmp / "store.db"
    token = keys_add(store, "load", ["load"])
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("ANALOGIST_") and k.endswith(("_BASE_URL", "_MODEL")))}
    cmd = [sys.executable, "-m", "analogist", "serve", "--store", str(store), "--port",
           str(port), "--rate", "0", "--max-body", "1000000"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    h = {"Authorization": f"Bearer {token}"}
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise SystemExit("server did not start: " + proc.stderr.read().decode()[-2000:])
        r = httpx.post(base + "/v1/ns/load/episodes/bulk", json={"episodes": sigs}, headers=h,
                       timeout=120)
        r.raise_for_status()
        seed_n = len(r.json()["ids"])
        seeded_ids = [s["episode_id"] for s in sigs]
        # warm the retriever and encoder caches once (untimed)
        httpx.post(base + "/v1/ns/load/find", json={"episode": seeded_ids[0]}, headers=h,
                   timeout=120).raise_for_status()

        lock = threading.Lock()
        lat: dict[str, list[float]] = {"write": [], "find": []}
        errors: dict[str, int] = {}
        acked: list[str] = []
        stop = time.perf_counter() + a.seconds

        def client(i: int) -> None:
            rng = random.Random(a.seed * 1000 + i)
            n = 0
            with httpx.Client(base_url=base, headers=h, timeout=120) as c:
                while time.perf_counter() < stop:
                    write = rng.random() < a.write_share
                    t0 = time.perf_counter()
                    try:
                        if write:
                            eid = f"load-c{i}-{n}"
                            n += 1
                            body = dict(rng.choice(sigs), episode_id=eid)
                            resp = c.post("/v1/ns/load/episodes", json=body)
                            ok = resp.status_code == 201
                        else:
                            resp = c.post("/v1/ns/load/find",
                                          json={"episode": rng.choice(seeded_ids), "k": 5})
                            ok = resp.status_code == 200
                        code = str(resp.status_code)
                    except httpx.HTTPError as e:
                        ok, code = False, type(e).__name__
                    ms = (time.perf_counter() - t0) * 1000
                    op = "write" if write else "find"
                    with lock:
                        if ok:
                            lat[op].append(ms)
                            if write:
                                acked.append(eid)
                        else:
                            errors[f"{op}:{code}"] = errors.get(f"{op}:{code}", 0) + 1

        t_start = time.perf_counter()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t_start

        listed = httpx.get(base + "/v1/ns/load/episodes", params={"limit": 1}, headers=h,
                           timeout=60).json()["total"]
        metrics = httpx.get(base + "/v1/metrics", headers=h, timeout=60).json()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    with sqlite3.connect(store) as db:
        file_count = db.execute("SELECT COUNT(*) FROM signatures WHERE namespace = 'load'"
                                ).fetchone()[0]
        stored = {r[0] for r in db.execute(
            "SELECT episode_id FROM signatures WHERE namespace = 'load'")}
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    missing = [e for e in acked if e not in stored]
    expected = seed_n + len(acked)
    n_ok = len(lat["write"]) + len(lat["find"])
    res = {
        "command": "python benchmarks/service_load.py " + " ".join(argv or sys.argv[1:]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "settings": {"clients": a.clients, "seconds": a.seconds, "write_share": a.write_share,
                     "seed": a.seed, "seed_episodes": seed_n, "server": "uvicorn subprocess, "
                     "loopback, rate limit off, 1 worker process"},
        "elapsed_s": round(elapsed, 2),
        "requests_ok": n_ok,
        "throughput_rps": round(n_ok / elapsed, 2),
        "writes": {"ok": len(lat["write"]), "rps": round(len(lat["write"]) / elapsed, 2),
                   "p50_ms": _pct(lat["write"], 0.5), "p95_ms": _pct(lat["write"], 0.95)},
        "finds": {"ok": len(lat["find"]), "rps": round(len(lat["find"]) / elapsed, 2),
                  "p50_ms": _pct(lat["find"], 0.5), "p95_ms": _pct(lat["find"], 0.95)},
        "all": {"p50_ms": _pct(lat["write"] + lat["find"], 0.5),
                "p95_ms": _pct(lat["write"] + lat["find"], 0.95)},
        "errors": errors,
        "error_count": sum(errors.values()),
        "recount": {"seed": seed_n, "acknowledged_writes": len(acked), "expected": expected,
                    "listed_over_http": listed, "counted_in_file": file_count,
                    "acknowledged_but_missing": len(missing), "integrity_check": integrity,
                    "no_write_lost": listed == expected == file_count and not missing},
        "server_metrics_5xx": metrics.get("errors_5xx"),
    }
    print(json.dumps({k: res[k] for k in ("throughput_rps", "writes", "finds", "all",
                                          "error_count", "recount")}, indent=2))
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    out = main()
    sys.exit(0 if out["recount"]["no_write_lost"] else 1)
