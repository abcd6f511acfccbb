"""Retrieval speed and size on synthetic stores of 10k, 100k and 1M signatures.

Run:  nice -n 10 python benchmarks/retrieve_speed.py [--sizes 10000 100000 1000000] [--queries 50]
      [--store-cache DIR]   (keeps each built store and reuses it: build rates then not measured)

Each store is built from the bundled casebook's structures recombined: a casebook signature with
its roles renamed to fresh tags, a random subset of its relations and causal edges kept (at least
half), a relation borrowed from another casebook signature over its own roles, and a fresh surface
(domain and entity names drawn from a word list). Queries are casebook signatures with fresh role
names (not stored). Per size, each in its own child process (so that peak RSS is per size):

* build: ``Memory.add_many`` rate (wall and CPU);
* index: building the stage-1 index from SQLite against loading the copy saved beside the store;
* stage 1 (``Retriever.stage1``: the shortlist of 20 by content cosine + fingerprint, exact,
  as find computes it) against a **baseline in the same run**: a ``scipy.sparse`` CSR product
  over the same TF-IDF vectors plus ``np.argpartition`` (the ratio is ours / baseline); beside
  it the top 200 that find asks for when the decoy probe pools (``stage1_pool``) and the pass
  over every row (``Retriever.mac`` and a partial sort, ``stage1_all_rows``);
* ``find`` end to end (stage 1, SME and the judge on a shortlist of 20, the decoy probe, no log)
  p50/p95, wall and CPU time;
* a cold CLI ``analogist find --json`` in a new process (the saved index loaded), wall and CPU,
  5 runs after an unmeasured one (bytecode cached, as installed).

Wall times on a shared machine are noisy; CPU time (``time.process_time``) is reported beside them,
and the load average at the start and end of each size with the commit measured.
Targets (reported, never asserted): find p50 <= 20 ms at 100k and <= 50 ms at 1M; stage 1
within 2x of the baseline; cold CLI find <= 1 s wall at 100k; 1M within 4 GiB RSS. Writes
``benchmarks/results/retrieve_speed.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORDS = tuple(["amber", "basin", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "iris", "juniper", "kestrel", "lumen", "marble", "nectar", "onyx", "prairie", "quartz", "raven", "sierra", "tundra", "umber", "violet", "willow", "xenon", "yarrow", "zephyr", "atlas", "beacon", "canyon", "dune", "echo", "falcon", "glacier", "heron", "island", "jasper", "koi", "lagoon", "meadow", "nova", "orchid", "pine", "quill", "reef", "sage", "tide", "vale", "wren"])
DOMAINS = ("shipping", "hospital", "brewery", "observatory", "vineyard", "archive", "railway",
           "bakery", "laboratory", "theatre", "fishery", "mine", "studio", "orchard", "dairy")


def synth(base: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` signatures recombined from the casebook structures ``base`` (dict form)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        src = base[rng.randrange(len(base))]
        roles = list(src["roles"])
        fresh = {r: f"R{j}x{rng.randrange(100_000)}" for j, r in enumerate(roles)}
        rels = [r for r in src["relations"] if rng.random() < 0.85] or src["relations"][:1]
        donor = [r for r in base[rng.randrange(len(base))]["relations"] if len(r) == 3]
        if donor and len(roles) >= 2:
            a, b = rng.sample(roles, 2)
            extra = [rng.choice(donor)[0], a, b]
            if extra not in rels:
                rels = [*rels, extra]

        def ren(atom: str, fresh: dict[str, str] = fresh) -> str:
            name, args = atom[:-1].split("(", 1)
            return f"{name}({','.join(fresh[a] for a in args.split(',') if a)})"

        chain = [{**e, "cause": ren(e["cause"]), "effect": ren(e["effect"])}
                 for e in src["causal_chain"] if rng.random() < 0.85]
        words = rng.sample(WORDS, 3)
        out.append({
            "episode_id": f"syn-{i}",
            "kind": src["kind"],
            "roles": {fresh[r]: f"{words[j % 3]} {src['roles'][r][:60]}"
                      for j, r in enumerate(roles)},
            "relations": [[r[0], *(fresh[a] for a in r[1:])] for r in rels],
            "causal_chain": chain,
            "surface": {"domain": rng.choice(DOMAINS), "entities": words},
            "levels": {"L0": f"The {words[0]} {rng.choice(DOMAINS)} case {i}."},
        })
    return out


def _casebook_dicts() -> list[dict[str, Any]]:
    from analogist.casebook import load_casebook

    out = []
    for c in load_casebook():
        if c.decoy_of is not None:
            continue
        d = c.signature.model_dump(mode="json")
        d["relations"] = [a.to_list() for a in c.signature.relations]
        d["causal_chain"] = [e.to_data() for e in c.signature.causal_chain]
        out.append(d)
    return out


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def _timed(fn: Any, items: list[Any]) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of ``fn(item)`` for each item."""
    wall, cpu = [], []
    for it in items:
        a, c = time.perf_counter(), time.process_time()
        fn(it)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - a)
    return wall, cpu


def _ms(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": statistics.median(xs) * 1e3, "p95_ms": _pct(xs, 0.95) * 1e3}


def _scipy_baseline(r: Any, qs: list[Any], shortlist: int) -> tuple[list[float], list[float]]:
    """scipy.sparse CSR (TF-IDF rows) @ query + fingerprint + np.argpartition, same vectors."""
    import numpy as np
    import scipy.sparse as sp

    from analogist.index.features import extract_features

    idx = r._index
    ci = idx.content
    n, v = len(ci), len(ci.feature_names)
    mat = sp.csr_matrix((ci.data, ci.indices, ci.indptr), shape=(n, v))
    vocab = {k: i for i, k in enumerate(ci.feature_names)}

    def one(q: Any) -> Any:
        f = extract_features(q)
        x = np.zeros(v)
        qn2 = 0.0
        for k, c in f.content.items():
            j = vocab.get(k)
            w = c * (ci._idf[j] if j is not None else math.log(1.0 + n) + 1.0)
            qn2 += w * w
            if j is not None:
                x[j] = w
        s = np.minimum(mat @ x / math.sqrt(qn2), 1.0) if qn2 > 0 else np.zeros(n)
        fused = s + 0.25 * (idx.fp_codes == idx.fingerprint_code(f.fingerprint))
        top = np.argpartition(-fused, shortlist)[:shortlist]
        return top[np.argsort(-fused[top])]

    return _timed(one, qs)


def _cold_cli(path: Path, target: Path, runs: int) -> dict[str, Any]:
    """``runs`` new processes of ``analogist find --json`` after one unmeasured run, with the
    package's bytecode cached (as ``pip install`` leaves it; a tree run with
    ``PYTHONDONTWRITEBYTECODE=1`` would compile every module at every start)."""
    exe = Path(sys.executable).with_name("analogist")
    cmd = [str(exe), "find", str(target), "--store", str(path), "--namespace", "bench",
           "--json", "--no-critic"]
    env = {**os.environ, "ANALOGIST_LLM": "off",
           "PYTHONPYCACHEPREFIX": str(path.parent / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    wall, cpu = [], []
    for i in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        a = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           env=env)
        w = time.perf_counter() - a
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            return {"error": p.stderr[-500:]}
        if i:
            wall.append(w)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {"runs": runs, "bytecode": "cached", "wall_p50_s": statistics.median(wall),
            "wall_min_s": min(wall), "cpu_p50_s": statistics.median(cpu), "cpu_min_s": min(cpu),
            "wall_s": wall, "cpu_s": cpu}


def run_size(n: int, queries: int, workdir: Path, seed: int,
             cache: Path | None = None) -> dict[str, Any]:
    import shutil

    from analogist.memory.sqlite import Memory
    from analogist.retrieve import RetrieveParams, Retriever
    from analogist.signature import validate_signature

    base = _casebook_dicts()
    path = workdir / f"store-{n}.db"
    # the same store as benchmarks/cli_startup.py --large builds (seed 7), kept between runs
    kept = None if cache is None else cache / (
        f"synthetic-{n}.db" if seed == 7 else f"synthetic-{n}-seed{seed}.db")
    build_s = build_cpu = None
    if kept is not None and kept.exists():
        shutil.copy(kept, path)
    else:
        t0, c0 = time.perf_counter(), time.process_time()
        with Memory.open(path) as m:
            chunk = 20000
            for start in range(0, n, chunk):
                recs = synth(base, min(chunk, n - start), seed + start)
                for j, r in enumerate(recs):
                    r["episode_id"] = f"syn-{start + j}"
                m.add_many(recs, namespace="bench", batch_size=5000)
        build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
        if kept is not None:
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, kept.with_suffix(".part"))
            kept.with_suffix(".part").rename(kept)
    size = path.stat().st_size + sum(p.stat().st_size for p in workdir.glob(f"store-{n}.db-*"))
    rng = random.Random(seed)
    qs = [validate_signature(q) for q in synth(base, queries, seed + 10_000_019)]
    out: dict[str, Any] = {"size": n, "loadavg_start": list(os.getloadavg()),
                           "build_s": build_s, "build_cpu_s": build_cpu,
                           "build_rate_per_s": n / build_s if build_s else None,
                           "build_rate_per_cpu_s": n / build_cpu if build_cpu else None,
                           "store": "built" if build_s is not None else f"copied from {kept}",
                           "file_bytes": size, "queries": queries}
    mac_dir = Path(str(path) + ".mac")
    with Memory.open(path) as m:
        shutil.rmtree(mac_dir, ignore_errors=True)
        r = Retriever(m, "bench", log=False)
        a, c = time.perf_counter(), time.process_time()
        r.refresh()  # builds from SQLite and saves beside the store
        out["index_build_s"], out["index_build_cpu_s"] = (time.perf_counter() - a,
                                                          time.process_time() - c)
        out["index_bytes"] = sum(f.stat().st_size for f in mac_dir.rglob("*") if f.is_file())
        r2 = Retriever(m, "bench", log=False)
        a, c = time.perf_counter(), time.process_time()
        r2.refresh()  # a new retriever (as in a new process): loads the saved copy
        out["index_load_s"], out["index_load_cpu_s"] = (time.perf_counter() - a,
                                                        time.process_time() - c)
        out["index_notes"] = r.notes + r2.notes
        r.mac(qs[0])
        r.stage1(qs[0], 200, positive=False)
        _scipy_baseline(r, qs[:3], 20)
        mw, mc = _timed(lambda q: r.stage1(q, 20), qs)
        bw, bc = _scipy_baseline(r, qs, 20)
        pw, pc = _timed(lambda q: r.stage1(q, 200, positive=False), qs)
        aw, ac = _timed(lambda q: (lambda ids, fused, ch, sk: _top(fused))(*r.mac(q)), qs)
        out["stage1"] = {"wall": _ms(mw), "cpu": _ms(mc)}
        out["stage1_baseline_scipy"] = {"wall": _ms(bw), "cpu": _ms(bc)}
        out["stage1_pool"] = {"wall": _ms(pw), "cpu": _ms(pc)}
        out["stage1_all_rows"] = {"wall": _ms(aw), "cpu": _ms(ac)}
        out["stage1_ratio_cpu_p50"] = statistics.median(mc) / statistics.median(bc)
        out["stage1_ratio_wall_p50"] = statistics.median(mw) / statistics.median(bw)
        rng.shuffle(qs)
        fw, fc = _timed(r.find, qs)
        out["find"] = {"wall": _ms(fw), "cpu": _ms(fc)}
        nr = Retriever(m, "bench", params=RetrieveParams(decoy_probe=False), log=False)
        nr.refresh()
        nw, nc = _timed(nr.find, qs)
        out["find_no_probe"] = {"wall": _ms(nw), "cpu": _ms(nc)}
    target = workdir / "target.json"
    target.write_text(json.dumps(qs[0].to_data()), encoding="utf-8")
    out["cold_cli_find"] = _cold_cli(path, target, 5)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["loadavg_end"] = list(os.getloadavg())  # the machine's load as this size finished
    shutil.rmtree(mac_dir, ignore_errors=True)
    return out


def _commit() -> str | None:
    """The checkout's commit (with ``+changes`` when the tree differs from it), if a git one."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=HERE, text=True, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+changes" if dirty.strip() else "")


def _top(fused: Any) -> Any:
    from analogist.retrieve import _top as top

    return top(fused, 20, positive=True)


def _write(args: argparse.Namespace, rows: list[dict[str, Any]], *, partial: bool
           ) -> dict[str, bool | None]:
    """Write the report of the sizes done so far (``partial`` while more are to come)."""
    by = {r["size"]: r for r in rows if "error" not in r}

    def at(n: int, f: Any) -> bool | None:
        return None if n not in by else bool(f(by[n]))

    targets = {
        "find_cpu_p50_le_20ms_at_100k": at(100_000, lambda r: r["find"]["cpu"]["p50_ms"] <= 20),
        "find_cpu_p50_le_50ms_at_1M": at(1_000_000, lambda r: r["find"]["cpu"]["p50_ms"] <= 50),
        "stage1_within_2x_of_scipy_at_100k": at(100_000,
                                                lambda r: r["stage1_ratio_cpu_p50"] <= 2),
        "stage1_within_2x_of_scipy_at_1M": at(1_000_000,
                                              lambda r: r["stage1_ratio_cpu_p50"] <= 2),
        "cold_cli_find_le_1s_wall_at_100k": at(
            100_000, lambda r: r["cold_cli_find"].get("wall_p50_s", 99) <= 1.0),
        "rss_le_4GiB_at_1M": at(1_000_000, lambda r: r["peak_rss_mib"] <= 4096),
    }
    report = {"benchmark": "retrieve_speed",
              "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                          "cpu_count": os.cpu_count()},
              "commit": args.commit,
              "settings": {"sizes": args.sizes, "queries": args.queries, "seed": args.seed,
                           "shortlist": 20},
              "targets": targets, "rows": rows, "partial": partial}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return targets


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "retrieve_speed.json")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--store-cache", type=Path, default=None,
                    help="Keep each size's built store here and reuse it (its build not timed).")
    args = ap.parse_args(argv)
    if args.child:
        res = run_size(args.child, args.queries, args.workdir, args.seed, args.store_cache)
        print(json.dumps(res))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    args.commit = _commit()  # before the report is first written (it may be a tracked file)
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("ANALOGIST_BENCH_TMP")) as tmp:
        for n in args.sizes:
            console.print(f"building and querying a store of {n:,} signatures ...")
            p = subprocess.run([sys.executable, __file__, "--child", str(n), "--queries",
                                str(args.queries), "--seed", str(args.seed), "--workdir", tmp,
                                *(["--store-cache", str(args.store_cache)] if args.store_cache
                                  else [])],
                               capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if p.returncode != 0:
                console.print(f"[red]size {n} failed[/]: {p.stderr[-2000:]}")
                rows.append({"size": n, "error": p.stderr[-2000:]})
                continue
            rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
            for f in Path(tmp).glob(f"store-{n}.db*"):
                f.unlink()
            _write(args, rows, partial=n != args.sizes[-1])  # partial results as sizes finish
    t = Table(title="retrieval speed (synthetic stores from casebook structures; CPU ms "
                    "unless marked wall)", title_justify="left")
    for c in ("size", "add/s (cpu)", "index load s", "stage1 p50", "scipy p50", "ratio",
              "find p50", "find p95", "find wall p50", "cold CLI wall s", "RSS MiB"):
        t.add_column(c, justify="right")
    for r in rows:
        if "error" in r:
            t.add_row(f"{r['size']:,}", *(["error"] + [""] * 10))
            continue
        t.add_row(f"{r['size']:,}", f"{r['build_rate_per_cpu_s'] or float('nan'):.0f}",
                  f"{r['index_load_s']:.2f}", f"{r['stage1']['cpu']['p50_ms']:.2f}",
                  f"{r['stage1_baseline_scipy']['cpu']['p50_ms']:.2f}",
                  f"{r['stage1_ratio_cpu_p50']:.2f}", f"{r['find']['cpu']['p50_ms']:.1f}",
                  f"{r['find']['cpu']['p95_ms']:.1f}", f"{r['find']['wall']['p50_ms']:.1f}",
                  f"{r['cold_cli_find'].get('wall_p50_s', float('nan')):.2f}",
                  f"{r['peak_rss_mib']:.0f}")
    console.print(t)
    targets = _write(args, rows, partial=False)
    for k, v in targets.items():
        console.print(f"target {k}: {({True: 'PASS', False: 'FAIL', None: 'not run'})[v]}")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
