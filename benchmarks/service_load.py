"""Load test of the HTTP API (issue 9): N concurrent clients mixing writes and finds on loopback.

Starts a real ``analogist serve --workers W`` subprocess over a fresh store, seeds one namespace
with the casebook's 60 real episodes, then runs ``--clients`` threads (one httpx client each) for
``--seconds``: each request is a write (POST a casebook episode under a new unique id) with
probability ``--write-share``, else a find (POST /find with a random seeded episode as the
target). A 503 with ``Retry-After`` is honoured: the client waits that long and sends the same
request again (counted as a retry, not an error; the latency is from the first try to the
answer). Reports throughput, p50/p95 latency per operation, errors, retries, the CPU time of the
server's processes (supervisor and workers) and of this client process beside the wall time,
the load average before and after, the server-side find timings, and a recount: the stored count
(over HTTP and straight from the SQLite file after the server stops) must equal the seed plus
the acknowledged writes, and every acknowledged episode id must be stored — no write lost.

``--workers`` takes several values, run one after another in the same invocation (each over its
own fresh store), so a baseline sits beside the run it is compared with:

    nice -n 5 python benchmarks/service_load.py --clients 64 --seconds 60 --workers 1 2 \
        --out benchmarks/results/service_load_64_workers.json

Timings on shared 2-core machines are noisy (the load average is recorded for that reason); the
recount is the hard result.
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


def _proc_cpu(pid: int) -> float:
    """User plus system CPU seconds of one process (Linux /proc), 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, ()))
    return out


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_once(a: argparse.Namespace, workers: int, sigs: list[dict]) -> dict:
    """One load run against a server with ``workers`` worker processes over a fresh store."""
    from analogist.service.keys import keys_add  # after argument parsing

    tmp = Path(tempfile.mkdtemp(prefix="analogist-load-"))
    store = tmp / "store.db"
    token = keys_add(store, "load", ["load"])
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("ANALOGIST_") and k.endswith(("_BASE_URL", "_MODEL")))}
    cmd = [sys.executable, "-m", "analogist", "serve", "--store", str(store), "--port",
           str(port), "--rate", "0", "--max-body", "1000000", "--workers", str(workers)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    h = {"Authorization": f"Bearer {token}"}
    load_before = _load()
    try:
        for _ in range(1200):
            try:
                if httpx.get(base + "/v1/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise SystemExit("server did not start: " + proc.stderr.read().decode()[-2000:])
        r = httpx.post(base + "/v1/ns/load/episodes/bulk", json={"episodes": sigs}, headers=h,
                       timeout=900)
        r.raise_for_status()
        seed_n = len(r.json()["ids"])
        seeded_ids = [s["episode_id"] for s in sigs]
        # warm every worker's retriever and encoder caches once (untimed): finds on new
        # connections until each worker has answered one, or 20 tries per worker
        warmed: set[str] = set()
        for _ in range(20 * workers):
            r = httpx.post(base + "/v1/ns/load/find", json={"episode": seeded_ids[0]},
                           headers=h, timeout=300)
            r.raise_for_status()
            warmed.add(r.headers.get("x-analogist-worker", "0"))
            if len(warmed) >= workers:
                break

        lock = threading.Lock()
        lat: dict[str, list[float]] = {"write": [], "find": []}
        errors: dict[str, int] = {}
        retries = {"write": 0, "find": 0}
        served_by: dict[str, int] = {}
        find_timings: dict[str, list[float]] = {}
        acked: list[str] = []
        stop = time.perf_counter() + a.seconds
        give_up = stop + a.retry_window

        def client(i: int) -> None:
            rng = random.Random(a.seed * 1000 + i)
            n = 0
            with httpx.Client(base_url=base, headers=h, timeout=300) as c:
                while time.perf_counter() < stop:
                    write = rng.random() < a.write_share
                    op = "write" if write else "find"
                    if write:
                        eid = f"load-c{i}-{n}"
                        n += 1
                        path, body, want = ("/v1/ns/load/episodes",
                                            dict(rng.choice(sigs), episode_id=eid), 201)
                    else:
                        path, body, want = ("/v1/ns/load/find",
                                            {"episode": rng.choice(seeded_ids), "k": 5}, 200)
                    t0 = time.perf_counter()
                    tries = 0
                    while True:
                        try:
                            resp = c.post(path, json=body)
                            code = str(resp.status_code)
                        except httpx.HTTPError as e:
                            resp, code = None, type(e).__name__
                            break
                        wait_s = resp.headers.get("retry-after")
                        if resp.status_code != 503 or wait_s is None \
                                or time.perf_counter() > give_up:
                            break
                        tries += 1
                        time.sleep(float(wait_s))
                    ok = resp is not None and resp.status_code == want
                    ms = (time.perf_counter() - t0) * 1000
                    with lock:
                        retries[op] += tries
                        if ok:
                            lat[op].append(ms)
                            w = resp.headers.get("x-analogist-worker", "0")
                            served_by[w] = served_by.get(w, 0) + 1
                            if write:
                                acked.append(eid)
                            else:
                                for k, v in resp.json().get("timings_ms", {}).items():
                                    find_timings.setdefault(k, []).append(v)
                        else:
                            errors[f"{op}:{code}"] = errors.get(f"{op}:{code}", 0) + 1

        pids = _tree(proc.pid)
        cpu0 = {p: _proc_cpu(p) for p in pids}
        own0 = os.times()
        t_start = time.perf_counter()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t_start
        own1 = os.times()
        server_cpu = sum(_proc_cpu(p) - cpu0[p] for p in pids)
        load_after = _load()

        listed = httpx.get(base + "/v1/ns/load/episodes", params={"limit": 1}, headers=h,
                           timeout=60).json()["total"]
        metrics = httpx.get(base + "/v1/metrics", headers=h, timeout=60).json()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
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
    client_cpu = (own1.user - own0.user) + (own1.system - own0.system)
    return {
        "workers": workers,
        "settings": {"clients": a.clients, "seconds": a.seconds, "write_share": a.write_share,
                     "seed": a.seed, "seed_episodes": seed_n, "server": "analogist serve "
                     f"subprocess, loopback, rate limit off, --workers {workers}"},
        "load_average_1_5_15": {"before": load_before, "after": load_after},
        "elapsed_s": round(elapsed, 2),
        "cpu_s": {"server_processes": round(server_cpu, 2), "server_processes_counted":
                  len(pids), "client_process": round(client_cpu, 2),
                  "server_cores_busy": round(server_cpu / elapsed, 2)},
        "requests_ok": n_ok,
        "throughput_rps": round(n_ok / elapsed, 2),
        "writes": {"ok": len(lat["write"]), "rps": round(len(lat["write"]) / elapsed, 2),
                   "p50_ms": _pct(lat["write"], 0.5), "p95_ms": _pct(lat["write"], 0.95)},
        "finds": {"ok": len(lat["find"]), "rps": round(len(lat["find"]) / elapsed, 2),
                  "p50_ms": _pct(lat["find"], 0.5), "p95_ms": _pct(lat["find"], 0.95)},
        "all": {"p50_ms": _pct(lat["write"] + lat["find"], 0.5),
                "p95_ms": _pct(lat["write"] + lat["find"], 0.95)},
        "find_server_timings_p50_ms": {k: _pct(v, 0.5) for k, v in find_timings.items()},
        "served_by_worker": dict(sorted(served_by.items())),
        "retries_after_503": retries,
        "errors": errors,
        "error_count": sum(errors.values()),
        "recount": {"seed": seed_n, "acknowledged_writes": len(acked), "expected": expected,
                    "listed_over_http": listed, "counted_in_file": file_count,
                    "acknowledged_but_missing": len(missing), "integrity_check": integrity,
                    "no_write_lost": listed == expected == file_count and not missing},
        "server_metrics_5xx_last_worker": metrics.get("errors_5xx"),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--write-share", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", nargs="+", default=["1"],
                    help="server worker processes; several values run one after another")
    ap.add_argument("--retry-window", type=float, default=60.0,
                    help="seconds after the end during which a 503 is still retried")
    ap.add_argument("--note", default=None,
                    help="a label stored with the result (e.g. how loaded the machine was)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)

    from analogist.casebook import load_casebook  # after argument parsing
    from analogist.service.workers import parse_workers

    counts = [parse_workers(w) for w in a.workers]
    sigs = [e.signature.to_data() for e in load_casebook() if not e.is_decoy]
    runs = [run_once(a, w, sigs) for w in counts]
    res = {
        "command": "python benchmarks/service_load.py " + " ".join(argv or sys.argv[1:]),
        **({"note": a.note} if a.note else {}),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "runs": runs,
    }
    for r in runs:
        print(json.dumps({k: r[k] for k in ("workers", "load_average_1_5_15", "elapsed_s",
                                            "cpu_s", "throughput_rps", "writes", "finds",
                                            "retries_after_503", "error_count", "recount")},
                         indent=2))
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    out = main()
    sys.exit(0 if all(r["recount"]["no_write_lost"] and not r["error_count"]
                      for r in out["runs"]) else 1)
