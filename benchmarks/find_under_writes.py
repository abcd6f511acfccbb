"""CPU time of ``find`` while the namespace is being written: one add, then four finds, repeated,
through one long-lived retriever with the embedding channel on (as a server's thread keeps one).

Run:  nice -n 10 python benchmarks/find_under_writes.py [--size 10000] [--rounds 25]
      [--baseline main] [--repeats 2] [--modes repeat fresh service http]

A store of ``--size`` synthetic episodes (benchmarks/retrieve_speed.py's recombined casebook
structures), each with the bundled embedder's L1-L3 vectors of one casebook episode's levels, is
built once (by the baseline's code); every arm then runs in its own child process on a fresh copy of it:

* ``current``: this checkout's ``src``;
* ``baseline``: ``src`` of ``--baseline`` (a git revision, by default ``main``), extracted with
  ``git archive`` into a temporary directory — the same run, the same store, the same writes.

Two query mixes: ``repeat`` (twenty casebook signatures, renamed, asked in turn: their level
texts recur) and ``fresh`` (the same signatures, each level text given a word of its own per
query, so no text is ever asked twice: both arms then pay the embedder for every level text;
the bundled embedder keeps its own text cache, so ``repeat`` costs it a look-up; ``--modes``
picks them, ``repeat`` alone by default).

Two more mixes follow the HTTP load test (benchmarks/service_load.py) instead of a prebuilt store:
a fresh store seeded with the casebook's 60 episodes, then ``--requests`` requests, each a write
(one casebook episode under a new id) with probability one half, else a find (k 5) of a random
seeded episode by its id — the store grows under the finds. ``service``: through the application
layer (:class:`analogist.app.Analogist` with the default settings: the embedding channel, the
decoy probe and the find log on); ``http``: through the HTTP API in process (``create_app`` and
a test client: routing, validation, the admission pools, JSON), CPU of the whole process per
request. Both arms see the same request sequence, and every find's answer (its JSON without the
timings and the log id) must be the same in both, else the run fails. Arms alternate (baseline, current, ...) ``--repeats``
times. Per find: CPU seconds (``time.process_time``) and wall seconds; the adds are timed apart
and not counted in the finds. Writes ``benchmarks/results/find_under_writes.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NS = "bench"
WARM = 20  # finds before the measured ones (repeat: each of the twenty queries once)


def _level_vectors(emb: Any, path: Path) -> list[dict[str, Any]]:
    """The bundled embedder's L1-L3 vectors of each casebook episode's levels (computed once,
    kept in ``path`` for the arms)."""
    import numpy as np  # lazy: the parent process imports no numpy

    from analogist.casebook import load_casebook  # lazy: the arm's src, set at run time
    from analogist.retrieve import level_embeddings

    if path.exists():
        with np.load(path) as z:
            out: dict[int, dict[str, Any]] = {}
            for key in z.files:
                i, ch = key.split("-")
                out.setdefault(int(i), {})[ch] = z[key]
            return [out.get(i, {}) for i in range(max(out) + 1)]
    vecs = [level_embeddings(c.signature, emb) for c in load_casebook()]
    np.savez(path, **{f"{i}-{ch}": v for i, d in enumerate(vecs) for ch, v in d.items()})
    return vecs


def _queries(mode: str, n: int) -> list[Any]:
    from analogist.casebook import load_casebook  # lazy: the arm's src, set at run time
    from analogist.signature import validate_signature

    base = [c.signature for c in load_casebook() if c.decoy_of is None][:WARM]
    out = []
    for i in range(n):
        d = base[i % len(base)].to_data()
        d["episode_id"] = f"query-{i}"
        if mode == "fresh":
            lv = d.get("levels") or {}
            d["levels"] = {k: (f"{v} (query {i})" if k in ("L1", "L2", "L3") else v)
                           for k, v in lv.items()}
        out.append(validate_signature(d))
    return out


def build(path: Path, size: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from retrieve_speed import _casebook_dicts, synth  # lazy: benchmarks/ on sys.path first

    from analogist.index.embed import default_embedder  # lazy: the arm's src, set at run time
    from analogist.memory import Memory

    emb = default_embedder()
    vecs = _level_vectors(emb, path.parent / "vectors.npz")
    recs = synth(_casebook_dicts(), size, seed=7)
    t = time.process_time()
    order = iter(range(size))
    with Memory.open(path) as m:
        m.add_many(recs, namespace=NS, batch_size=5000,
                   embed=lambda _s: vecs[next(order) % len(vecs)])
    return {"episodes": size, "build_cpu_s": round(time.process_time() - t, 2)}


def child(store: Path, mode: str, rounds: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from retrieve_speed import _casebook_dicts, synth  # lazy: benchmarks/ on sys.path first

    from analogist.index.embed import default_embedder  # lazy: the arm's src, set at run time
    from analogist.memory import Memory
    from analogist.retrieve import Retriever

    emb = default_embedder()
    vecs = _level_vectors(emb, store.parent / "vectors.npz")
    adds = synth(_casebook_dicts(), rounds, seed=11)
    for i, a in enumerate(adds):
        a["episode_id"] = f"added-{i}"
    warm = WARM if mode == "repeat" else 4
    qs = _queries(mode, 4 * rounds + warm)
    cpu: list[float] = []
    wall: list[float] = []
    first: list[float] = []  # CPU of the first find after each add (the one that refreshes)
    add_cpu: list[float] = []
    with Memory.open(store) as m:
        r = Retriever(m, NS, embedder=emb, log=False)
        # warm: the index built or loaded, the embedder's model in memory and (repeat) every
        # query text seen once, so that the finds measured differ only in what the writes cost
        for q in qs[:warm]:
            r.find(q)
        for i in range(rounds):
            t = time.process_time()
            m.add(adds[i], namespace=NS, embeddings=vecs[i % len(vecs)])
            add_cpu.append(time.process_time() - t)
            for j, q in enumerate(qs[warm + 4 * i:warm + 4 + 4 * i]):
                c0, w0 = time.process_time(), time.perf_counter()
                r.find(q)
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - w0)
                if j == 0:
                    first.append(cpu[-1])
        stats = getattr(r, "stats", None)
    import analogist  # lazy: the arm's own src, put first on the path by the parent

    return {"cpu": cpu, "wall": wall, "first": first, "add_cpu": add_cpu, "stats": stats,
            "src": str(Path(analogist.__file__).parent.parent)}


def _mix(n: int, seed: int = 0) -> list[tuple[str, int]]:
    """The load test's request sequence: ("write", casebook index) or ("find", seeded index)."""
    import random  # lazy: only the service mixes draw one

    rng = random.Random(seed)
    return [("write", rng.randrange(60)) if rng.random() < 0.5 else ("find", rng.randrange(60))
            for _ in range(n)]


def _answer(res: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in res.items() if k not in ("timings_ms", "log_id")}


def service_child(store: Path, mode: str, requests: int) -> dict[str, Any]:
    """The service mixes (see the module docstring) in this process, over a fresh store."""
    from analogist.app import Analogist, Settings  # lazy: the arm's src, set at run time
    from analogist.casebook import load_casebook

    sigs = [e.signature.to_data() for e in load_casebook() if not e.is_decoy][:60]
    ids = [s["episode_id"] for s in sigs]
    mix = _mix(requests)
    out: dict[str, list[Any]] = {"write": [], "find": [], "find_wall": [], "answers": []}
    if mode == "service":
        app = Analogist(Settings(store=str(store)))
        app.add_many(sigs, namespace="load", batch_size=len(sigs))
        app.find(ids[0], namespace="load")  # warm: the retriever, its index and the embedder

        def write(i: int, c: int) -> None:
            app.add(dict(sigs[c], episode_id=f"w{i}"), namespace="load")

        def find(c: int) -> dict[str, Any]:
            return app.find(ids[c], namespace="load", k=5).to_json()
    else:
        from fastapi.testclient import TestClient  # lazy: the http mix only

        from analogist.server import create_app
        from analogist.service.keys import keys_add

        token = keys_add(store, "load", ["load"])
        client = TestClient(create_app(store, rate_per_minute=0, settings=Settings(
            store=str(store)), mount_viewer=False))
        client.__enter__()
        h = {"Authorization": f"Bearer {token}"}
        client.post("/v1/ns/load/episodes/bulk", json={"episodes": sigs}, headers=h
                    ).raise_for_status()
        for _ in range(4):  # warm every admission thread's retriever (untimed)
            client.post("/v1/ns/load/find", json={"episode": ids[0]}, headers=h
                        ).raise_for_status()

        def write(i: int, c: int) -> None:
            r = client.post("/v1/ns/load/episodes", json=dict(sigs[c], episode_id=f"w{i}"),
                            headers=h)
            if r.status_code != 201:
                raise SystemExit(f"write {i}: {r.status_code} {r.text[:300]}")

        def find(c: int) -> dict[str, Any]:
            r = client.post("/v1/ns/load/find", json={"episode": ids[c], "k": 5}, headers=h)
            if r.status_code != 200:
                raise SystemExit(f"find: {r.status_code} {r.text[:300]}")
            return r.json()
    for i, (op, c) in enumerate(mix):
        c0, w0 = time.process_time(), time.perf_counter()
        if op == "write":
            write(i, c)
            out["write"].append(time.process_time() - c0)
        else:
            res = find(c)
            out["find"].append(time.process_time() - c0)
            out["find_wall"].append(time.perf_counter() - w0)
            out["answers"].append(_answer(res))
    if mode == "http":
        client.__exit__(None, None, None)
    import analogist  # lazy: the arm's own src, put first on the path by the parent

    return {"cpu": out["find"], "wall": out["find_wall"], "first": [], "add_cpu": out["write"],
            "answers": out["answers"], "stats": None,
            "src": str(Path(analogist.__file__).parent.parent)}


def _ms(xs: list[float]) -> dict[str, float]:
    s = sorted(xs)
    return {"mean": round(1e3 * statistics.fmean(s), 2), "p50": round(1e3 * s[len(s) // 2], 2),
            "p95": round(1e3 * s[min(len(s) - 1, int(0.95 * len(s)))], 2)}


def _rev(rev: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True,
                          capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--baseline", default="main")
    ap.add_argument("--modes", nargs="+", choices=("repeat", "fresh", "service", "http"),
                    default=["repeat"])
    ap.add_argument("--requests", type=int, default=400,
                    help="requests of the service and http mixes (half writes, half finds)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "find_under_writes.json")
    ap.add_argument("--child", nargs=3, metavar=("SRC", "STORE", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        src, store, mode = args.child
        sys.path.insert(0, src)
        if mode in ("service", "http"):
            print(json.dumps(service_child(Path(store), mode, args.requests)))
        else:
            print(json.dumps(child(Path(store), mode, args.rounds)))
        return 0
    with tempfile.TemporaryDirectory(prefix="find-writes-") as tmp:
        work = Path(tmp)
        base_src = work / "baseline"
        base_src.mkdir()
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "src"],
                              check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base_src)], input=arch, check=True)
        arms = {"baseline": str(base_src / "src"), "current": str(ROOT / "src")}
        store = work / "store.db"
        info: dict[str, Any] = {"episodes": 0}
        if set(args.modes) & {"repeat", "fresh"}:
            info = _build_store(arms["baseline"], store, args.size)
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for rep in range(args.repeats):
            for mode in args.modes:
                for arm, src in arms.items():
                    copy = work / f"{arm}-{mode}-{rep}.db"
                    if mode in ("repeat", "fresh"):
                        shutil.copyfile(store, copy)
                    out = subprocess.run(
                        [sys.executable, __file__, "--rounds", str(args.rounds), "--requests",
                         str(args.requests), "--child", src, str(copy), mode], check=True,
                        capture_output=True, text=True,
                        env={k: v for k, v in os.environ.items()
                             if not (k.startswith("ANALOGIST_")
                                     and k.endswith(("_BASE_URL", "_MODEL")))}
                        | {"PYTHONPATH": src})
                    runs.setdefault(mode, {}).setdefault(arm, []).append(
                        json.loads(out.stdout.strip().splitlines()[-1]))
                    for f in work.glob(f"{copy.name}*"):
                        if f.is_dir():
                            shutil.rmtree(f, ignore_errors=True)
                        else:
                            f.unlink()
    return _report(args, argv, info, runs)


def _build_store(baseline_src: str, store: Path, size: int) -> dict[str, Any]:
    """The prebuilt store of the repeat and fresh mixes, by the baseline's code (the current
    one opens an older schema, migrating it on open before the measured finds, not always the
    other way round)."""
    built = subprocess.run([sys.executable, "-c", (
        f"import sys, json; sys.path.insert(0, {baseline_src!r}); "
        f"sys.path.insert(0, {str(HERE)!r}); import find_under_writes as f; "
        f"print(json.dumps(f.build(__import__('pathlib').Path({str(store)!r}), {size})))")],
        check=True, capture_output=True, text=True)
    return json.loads(built.stdout.strip().splitlines()[-1])


def _report(args: argparse.Namespace, argv: list[str] | None, info: dict[str, Any],
            runs: dict[str, dict[str, list[dict[str, Any]]]]) -> int:
    result: dict[str, Any] = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "nice -n 10 python benchmarks/find_under_writes.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "current": _rev("HEAD"), "baseline": f"{args.baseline} = {_rev(args.baseline)}",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load average "
                   f"{os.getloadavg()[0]:.1f}",
        "store": info, "rounds": args.rounds, "finds_per_add": 4, "repeats": args.repeats,
        "service_requests": args.requests, "modes": {}}
    for mode, by_arm in runs.items():
        row: dict[str, Any] = {}
        for arm, rs in by_arm.items():
            cpu = [x for r in rs for x in r["cpu"]]
            wall = [x for r in rs for x in r["wall"]]
            row[arm] = {"find_cpu_ms": _ms(cpu), "find_wall_ms": _ms(wall),
                        "first_find_after_add_cpu_ms": _ms(first) if (first := [
                            x for r in rs for x in r["first"]]) else None,
                        "add_cpu_ms": _ms([x for r in rs for x in r["add_cpu"]]),
                        "finds": len(cpu), "stats": rs[-1]["stats"]}
            if any(Path(r["src"]).name != "src" or (arm == "current") != (
                    Path(r["src"]).parent == ROOT) for r in rs):
                raise SystemExit(f"the {arm} arm imported analogist from {rs[-1]['src']}")
        if mode in ("service", "http"):
            pairs = [(b["answers"], c["answers"]) for b, c in zip(
                by_arm["baseline"], by_arm["current"], strict=True)]
            same = sum(x == y for b, c in pairs for x, y in zip(b, c, strict=True))
            total = sum(len(b) for b, _c in pairs)
            row["answers_identical"] = f"{same} of {total}"
            for arm in ("baseline", "current"):
                row[arm]["write_cpu_ms"] = row[arm].pop("add_cpu_ms")
                del row[arm]["first_find_after_add_cpu_ms"], row[arm]["stats"]
                n = sum(len(r["cpu"]) + len(r["add_cpu"]) for r in by_arm[arm])
                row[arm]["cpu_ms_per_request"] = round(1e3 * sum(
                    sum(r["cpu"]) + sum(r["add_cpu"]) for r in by_arm[arm]) / n, 2)
            if same != total:
                raise SystemExit(f"{mode}: {total - same} of {total} finds answered "
                                 "differently by the two arms")
        row["cpu_ratio_current_over_baseline"] = round(
            row["current"]["find_cpu_ms"]["mean"] / row["baseline"]["find_cpu_ms"]["mean"], 3)
        result["modes"][mode] = row
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["modes"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
