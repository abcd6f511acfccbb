"""Load test of the HTTP API (issue 9): N concurrent clients mixing writes and finds on loopback.

Starts a real ``analogist serve --workers W`` subprocess over a fresh store, seeds one namespace
with the casebook's 60 real episodes, then runs ``--clients`` threads (one httpx client each) for
``--seconds``: each request is a write with probability ``--write-share``, else a find. What is
written and looked for is set by ``--targets``:

* ``varied`` (the default): every write is a signature of our own, made from a random casebook
  episode by renaming its roles, dropping up to two of its relations and one causal link when it
  stays valid, drawing new surface entities and appending a sentence composed from word lists to
  its L0 and L1 texts (so its content vector, mappings, surface tokens and level embeddings are its
  own); a find asks, with probability ``--inline-share``, for such a fresh signature given inline
  (never stored, never asked before), else for a stored episode by id drawn from the whole growing
  store — the seed and every write acknowledged so far in the run.
* ``seed`` (the earlier mix, kept for comparison): every write is a copy of a casebook episode
  under a new id, every find asks for one of the 60 seeded episodes by id — 60 targets repeated,
  which a cache of targets answers from memory.

A 503 with ``Retry-After`` is honoured: the client waits that long and sends the same
request again (counted as a retry, not an error; the latency is from the first try to the
answer). Reports throughput, p50/p95 latency per operation, errors, retries, the CPU time of the
server's processes (supervisor and workers) and of this client process beside the wall time,
the load average before and after, the server-side find timings, and a recount: the stored count
(over HTTP and straight from the SQLite file after the server stops) must equal the seed plus
the acknowledged writes, and every acknowledged episode id must be stored — no write lost.

``--workers`` takes several values, run one after another in the same invocation (each over its
own fresh store), so a baseline sits beside the run it is compared with. ``--server-src`` takes
several source trees (``src`` directories of other checkouts, put first on the server's
``PYTHONPATH``) and ``--rounds`` repeats the whole set: the runs alternate between the trees,
an A/B over the same mix on the same machine at the same time (``"."``: this checkout):

    nice -n 5 python benchmarks/service_load.py --clients 64 --seconds 60 --workers 1 2 \
        --out benchmarks/results/service_load_64_workers.json
    nice -n 10 python benchmarks/service_load.py --clients 64 --seconds 60 --workers 2 \
        --server-src /tmp/base/src . --rounds 2 --note "loaded machine: A/B"

Timings on shared 2-core machines are noisy (the load average is recorded for that reason); the
recount is the hard result.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import platform
import random
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

# word lists of the varied mix: the sentence added to L0/L1, surface entities, role names
_PLACES = ["the north plant", "a regional depot", "the night shift", "a branch office",
           "the second warehouse", "a field station", "the test lab", "a rural clinic",
           "the harbour yard", "a call centre", "the pilot line", "a hill farm"]
_TIMES = ["during a holiday week", "after a reorganisation", "in the busiest month",
          "on the first cold morning", "while a supplier was late", "after a price change",
          "during an audit", "in a storm", "after a software upgrade", "at the end of a quarter"]
_NOTICED = ["a customer complained", "an intern checked the numbers", "the figures stopped adding "
            "up", "a second team repeated the test", "the backlog doubled", "an inspector visited",
            "the weekly report came back wrong", "a neighbour raised the alarm"]
_THINGS = ["ledger", "gauge", "timetable", "spreadsheet", "sensor", "valve", "queue", "badge",
           "thermostat", "contract", "map", "inventory", "forecast", "checklist", "pump",
           "relay", "roster", "tariff", "manifest", "scale"]
_ADJ = ["old", "shared", "backup", "spare", "local", "central", "temporary", "weekly",
        "remote", "manual", "second", "quarterly"]
_ROLE_WORDS = ["KEEPER", "SOURCE", "COPY", "OWNER", "GUARD", "STORE", "AGENT", "CLIENT",
               "BROKER", "PROBE", "SIGNAL", "BUFFER", "HOLDER", "READER", "WRITER", "LEDGER"]
_ROLE = re.compile(r"\b[A-Z][A-Z0-9_]*\b")


def varied_signature(base: dict, rng: random.Random, episode_id: str) -> dict:
    """A signature of our own made from ``base``: roles renamed throughout, up to two relations
    and one causal link dropped (only when the result still validates), new surface entities
    and a composed sentence appended to its L0 and L1 texts."""
    from analogist.signature import validate_signature  # after argument parsing

    d = copy.deepcopy(base)
    names = rng.sample(_ROLE_WORDS, len(d["roles"]))
    ren = {old: f"{w}_{rng.randrange(100)}" for old, w in zip(d["roles"], names, strict=True)}

    def sub(text: str) -> str:
        return _ROLE.sub(lambda m: ren.get(m.group(0), m.group(0)), text)

    d["roles"] = {ren[k]: v for k, v in d["roles"].items()}
    d["relations"] = [[r[0], *(ren.get(x, x) for x in r[1:])] for r in d["relations"]]
    for link in d["causal_chain"]:
        link["cause"], link["effect"] = sub(link["cause"]), sub(link["effect"])
    levels = d.get("levels") or {}
    extra = (f" It happened at {rng.choice(_PLACES)} {rng.choice(_TIMES)}, and nobody saw it "
             f"until {rng.choice(_NOTICED)}.")
    for lv in ("L0", "L1"):
        if lv in levels:
            levels[lv] = levels[lv] + extra
    if "L2" in levels:
        levels["L2"] = sub(levels["L2"])
    if "surface" in d:
        d["surface"] = dict(d["surface"], entities=[
            f"{rng.choice(_ADJ)} {t}" for t in rng.sample(_THINGS, rng.randint(3, 6))])
    d["episode_id"] = episode_id
    d["provenance"] = {"writer": "service-load"}
    whole = copy.deepcopy(d)
    rels, chain = d["relations"], d["causal_chain"]
    for _ in range(rng.randint(0, min(2, len(rels) - 2))):
        rels.pop(rng.randrange(len(rels)))
    if len(chain) >= 3 and rng.random() < 0.5:
        chain.pop(rng.randrange(len(chain)))
    try:
        validate_signature(d)
    except Exception:  # noqa: BLE001 - a drop that breaks it: the renamed whole instead
        d = whole
        validate_signature(d)
    return d


def _answer_key(res: dict) -> dict:
    """A find answer without what differs between two asks of the same question (its
    timings and its log row)."""
    return {k: v for k, v in res.items() if k not in ("timings_ms", "log_id")}


def _lane_means(lane: dict | None) -> dict | None:
    """A lane's counters (``/v1/metrics``) with the mean wait, run and CPU per request in ms."""
    if not lane or not lane.get("done") or "cpu_s" not in lane:
        return lane
    n = lane["done"]
    return {**lane, **{f"mean_{k[:-2]}_ms": round(lane[k] / n * 1000, 2)
                       for k in ("wait_s", "run_s", "cpu_s")}}


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


def _start_server(store: Path, workers: int, src: str | None) -> tuple[subprocess.Popen, str]:
    """``analogist serve`` over ``store`` (from the source tree ``src`` when given), once it
    answers its health check: the process and its base URL."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("ANALOGIST_") and k.endswith(("_BASE_URL", "_MODEL")))}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    cmd = [sys.executable, "-m", "analogist", "serve", "--store", str(store), "--port",
           str(port), "--rate", "0", "--max-body", "1000000", "--workers", str(workers)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        try:
            if httpx.get(base + "/v1/health", timeout=5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start: " + proc.stderr.read().decode()[-2000:])


def _stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _questions(a: argparse.Namespace, sigs: list[dict]) -> list[dict]:
    """The fixed finds of the answer check: half seeded episodes by id, half varied signatures
    given inline, the same in every run of one ``--seed``."""
    rng = random.Random(a.seed * 7919 + 1)
    out: list[dict] = []
    for q in range(a.answers):
        if q % 2 == 0:
            out.append({"episode": rng.choice(sigs)["episode_id"], "k": 5})
        else:
            out.append({"target": varied_signature(rng.choice(sigs), rng, f"question-{q}"),
                        "k": 5})
    return out


def _ask(base: str, h: dict, questions: list[dict]) -> list[dict]:
    out = []
    with httpx.Client(base_url=base, headers=h, timeout=300) as c:
        for body in questions:
            r = c.post("/v1/ns/load/find", json=body)
            r.raise_for_status()
            out.append(_answer_key(r.json()))
    return out


def _digest(answers: list[dict]) -> str:
    return hashlib.sha256(json.dumps(answers, sort_keys=True).encode()).hexdigest()[:16]


_MIX = {
    "varied": "writes: varied signatures of our own (casebook structure, roles renamed, up to "
              "two relations and one causal link dropped, new surface entities and level "
              "texts); finds: {inline} a fresh varied signature inline, {by_id} a stored "
              "episode by id drawn from the whole growing store (seed plus acknowledged writes)",
    "seed": "writes: copies of casebook episodes under new ids; finds: one of the 60 seeded "
            "episodes by id (60 targets repeated)",
}


def run_once(a: argparse.Namespace, workers: int, sigs: list[dict],
             src: str | None = None) -> dict:
    """One load run against a server with ``workers`` worker processes over a fresh store
    (its code from the source tree ``src``, else this checkout's)."""
    from analogist.service.keys import keys_add  # after argument parsing

    tmp = Path(tempfile.mkdtemp(prefix="analogist-load-"))
    store = tmp / "store.db"
    token = keys_add(store, "load", ["load"])
    h = {"Authorization": f"Bearer {token}"}
    load_before = _load()
    proc, base = _start_server(store, workers, src)
    questions = _questions(a, sigs)
    answers: dict[str, Any] = {}
    try:
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
        if questions:   # the same questions over the same seeded store in every run
            answers["at_start_sha256"] = _digest(_ask(base, h, questions))

        lock = threading.Lock()
        lat: dict[str, list[float]] = {"write": [], "find": []}
        errors: dict[str, int] = {}
        retries = {"write": 0, "find": 0}
        served_by: dict[str, int] = {}
        find_timings: dict[str, list[float]] = {}
        acked: list[str] = []
        known: list[str] = list(seeded_ids)   # every stored episode id: seeded and acked
        stop = time.perf_counter() + a.seconds
        give_up = stop + a.retry_window

        def client(i: int) -> None:
            rng = random.Random(a.seed * 1000 + i)
            n = 0
            with httpx.Client(base_url=base, headers=h, timeout=300) as c:
                while time.perf_counter() < stop:
                    write = rng.random() < a.write_share
                    op = "write" if write else "find"
                    eid = f"load-c{i}-{n}"
                    n += 1
                    if a.targets == "seed":
                        if write:
                            body = dict(rng.choice(sigs), episode_id=eid)
                        else:
                            body = {"episode": rng.choice(seeded_ids), "k": 5}
                    elif write:
                        body = varied_signature(rng.choice(sigs), rng, eid)
                    elif rng.random() < a.inline_share:
                        body = {"target": varied_signature(rng.choice(sigs), rng,
                                                           f"probe-c{i}-{n}"), "k": 5}
                    else:
                        with lock:
                            target = known[rng.randrange(len(known))]
                        body = {"episode": target, "k": 5}
                    path, want = (("/v1/ns/load/episodes", 201) if write
                                  else ("/v1/ns/load/find", 200))
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
                                known.append(eid)
                            else:
                                tm = resp.json().get("timings_ms", {})
                                for k, v in tm.items():
                                    find_timings.setdefault(k, []).append(v)
                                if "total" in tm:   # the rest: the log row, chiefly
                                    find_timings.setdefault("after_probe", []).append(
                                        tm["total"] - sum(tm.get(x, 0.0) for x in
                                                          ("stage1", "stage2", "probe")))
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
        if questions:
            live = _ask(base, h, questions)
    finally:
        _stop_server(proc)
    if questions:
        # the same questions over the same store asked of a fresh server (no cache warm):
        # what the run's caches answer must be what a cold process answers
        proc, base = _start_server(store, 1, src)
        try:
            fresh = _ask(base, h, questions)
        finally:
            _stop_server(proc)
        answers.update({"questions": len(questions), "at_end_live_sha256": _digest(live),
                        "at_end_fresh_server_sha256": _digest(fresh),
                        "live_equals_fresh": live == fresh})
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
        "server_src": src or "this checkout",
        "settings": {"clients": a.clients, "seconds": a.seconds, "write_share": a.write_share,
                     "targets": a.targets, "mix": _MIX[a.targets].format(
                         inline=a.inline_share, by_id=round(1 - a.inline_share, 3)),
                     "seed": a.seed, "seed_episodes": seed_n, "server": "analogist serve "
                     f"subprocess, loopback, rate limit off, --workers {workers}"},
        "load_average_1_5_15": {"before": load_before, "after": load_after},
        "elapsed_s": round(elapsed, 2),
        "cpu_s": {"server_processes": round(server_cpu, 2), "server_processes_counted":
                  len(pids), "client_process": round(client_cpu, 2),
                  "server_cores_busy": round(server_cpu / elapsed, 2)},
        "requests_ok": n_ok,
        "cpu_ms_per_request": round(server_cpu / n_ok * 1000, 2) if n_ok else None,
        "throughput_rps": round(n_ok / elapsed, 2),
        "writes": {"ok": len(lat["write"]), "rps": round(len(lat["write"]) / elapsed, 2),
                   "p50_ms": _pct(lat["write"], 0.5), "p95_ms": _pct(lat["write"], 0.95)},
        "finds": {"ok": len(lat["find"]), "rps": round(len(lat["find"]) / elapsed, 2),
                  "p50_ms": _pct(lat["find"], 0.5), "p95_ms": _pct(lat["find"], 0.95)},
        "all": {"p50_ms": _pct(lat["write"] + lat["find"], 0.5),
                "p95_ms": _pct(lat["write"] + lat["find"], 0.95)},
        "find_server_timings_p50_ms": {k: _pct(v, 0.5) for k, v in find_timings.items()},
        "find_server_timings_p95_ms": {k: _pct(v, 0.95) for k, v in find_timings.items()},
        "served_by_worker": dict(sorted(served_by.items())),
        "retries_after_503": retries,
        "errors": errors,
        "error_count": sum(errors.values()),
        "recount": {"seed": seed_n, "acknowledged_writes": len(acked), "expected": expected,
                    "listed_over_http": listed, "counted_in_file": file_count,
                    "acknowledged_but_missing": len(missing), "integrity_check": integrity,
                    "no_write_lost": listed == expected == file_count and not missing},
        "server_metrics_5xx_last_worker": metrics.get("errors_5xx"),
        # the same requests timed inside the server (its ASGI middleware: from the request's
        # arrival to its answer's last byte), by the worker that answered /v1/metrics: what
        # the clients' figures add to this is the clients' own process and the loopback
        "server_latency_ms_last_worker": {
            route: v.get("latency_ms") for route, v in (metrics.get("routes") or {}).items()
            if route in ("POST /v1/ns/{namespace}/find", "POST /v1/ns/{namespace}/episodes")},
        "lanes_last_worker": {k: _lane_means(metrics.get(k)) for k in (
            "heavy_lane", "write_lane", "log_lane") if k in metrics},
        **({"answers": answers} if answers else {}),
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
    ap.add_argument("--targets", choices=sorted(_MIX), default="varied",
                    help="what is written and looked for (see the module's description)")
    ap.add_argument("--inline-share", type=float, default=0.5,
                    help="--targets varied: the share of finds given a fresh signature inline "
                         "(the others ask for a stored episode by id)")
    ap.add_argument("--answers", type=int, default=20,
                    help="fixed finds asked before and after the load (0: none); their "
                         "answers are compared with a fresh server's over the same store")
    ap.add_argument("--server-src", nargs="+", default=["."],
                    help="source trees the server runs from, alternating ('.': this checkout)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat the whole set of runs this many times")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    if not 0.0 <= a.inline_share <= 1.0:
        ap.error("--inline-share must be from 0 to 1")
    srcs = [None if x == "." else str(Path(x).resolve()) for x in a.server_src]
    for x in srcs:
        if x is not None and not (Path(x) / "analogist" / "__init__.py").is_file():
            ap.error(f"--server-src {x}: no analogist package there")

    from analogist.casebook import load_casebook  # after argument parsing
    from analogist.service.workers import parse_workers

    counts = [parse_workers(w) for w in a.workers]
    sigs = [e.signature.to_data() for e in load_casebook() if not e.is_decoy]
    runs = [run_once(a, w, sigs, src) for _ in range(a.rounds) for w in counts for src in srcs]
    res = {
        "command": "python benchmarks/service_load.py " + " ".join(argv or sys.argv[1:]),
        **({"note": a.note} if a.note else {}),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "runs": runs,
    }
    for r in runs:
        print(json.dumps({k: r.get(k) for k in (
            "workers", "server_src", "load_average_1_5_15", "elapsed_s", "cpu_s",
            "cpu_ms_per_request", "throughput_rps", "writes", "finds", "retries_after_503",
            "error_count", "recount", "answers", "server_latency_ms_last_worker")}, indent=2))
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    out = main()
    sys.exit(0 if all(r["recount"]["no_write_lost"] and not r["error_count"]
                      for r in out["runs"]) else 1)
