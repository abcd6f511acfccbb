"""Retrieval speed and size on synthetic stores of 10k, 100k and 1M signatures.

Run:  python benchmarks/retrieve_speed.py [--sizes 10000 100000 1000000] [--queries 50]

Each store is built from the bundled casebook's structures recombined: a casebook signature with
its roles renamed to fresh tags, a random subset of its relations and causal edges kept (at least
half), a relation borrowed from another casebook signature over its own roles, and a fresh surface
(domain and entity names drawn from a word list). Per size the script reports build time and rate,
file size, stage-1 (MAC over the whole namespace) latency p50/p95, end-to-end ``find`` latency
p50/p95 with SME on a shortlist of 20, and the peak RSS of the process, and writes
``benchmarks/results/retrieve_speed.json``. Queries are casebook signatures with fresh role names
(not stored). Targets (reported, never asserted): stage 1 <= 50 ms p50 at 100k; find <= 150 ms p50
at 100k; 1M within 4 GiB RSS. Each size runs in its own child process so that peak RSS is per size.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
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


def run_size(n: int, queries: int, workdir: Path, seed: int) -> dict[str, Any]:
    from analogist.memory.sqlite import Memory
    from analogist.retrieve import RetrieveParams, Retriever
    from analogist.signature import validate_signature

    base = _casebook_dicts()
    path = workdir / f"store-{n}.db"
    t0 = time.perf_counter()
    with Memory.open(path) as m:
        chunk = 20000
        for start in range(0, n, chunk):
            recs = synth(base, min(chunk, n - start), seed + start)
            for j, r in enumerate(recs):
                r["episode_id"] = f"syn-{start + j}"
            m.add_many(recs, namespace="bench", batch_size=5000)
    build_s = time.perf_counter() - t0
    size = path.stat().st_size + sum(p.stat().st_size for p in workdir.glob(f"store-{n}.db-*"))
    rng = random.Random(seed)
    qs = [validate_signature(q) for q in synth(base, queries, seed + 10_000_019)]
    with Memory.open(path) as m:
        r = Retriever(m, "bench", params=RetrieveParams(k=5, shortlist=20, decoy_probe=False),
                      log=False)
        t1 = time.perf_counter()
        r.refresh()
        load_s = time.perf_counter() - t1
        s1, e2e = [], []
        for q in qs:
            a = time.perf_counter()
            r.mac(q)
            s1.append(time.perf_counter() - a)
        rng.shuffle(qs)
        for q in qs:
            a = time.perf_counter()
            r.find(q)
            e2e.append(time.perf_counter() - a)
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def pct(xs: list[float], p: float) -> float:
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]

    return {"size": n, "build_s": build_s, "build_rate_per_s": n / build_s,
            "file_bytes": size, "index_load_s": load_s,
            "stage1_p50_ms": statistics.median(s1) * 1e3, "stage1_p95_ms": pct(s1, 0.95) * 1e3,
            "find_p50_ms": statistics.median(e2e) * 1e3, "find_p95_ms": pct(e2e, 0.95) * 1e3,
            "queries": queries, "peak_rss_mib": rss_kib / 1024}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "retrieve_speed.json")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        res = run_size(args.child, args.queries, args.workdir, args.seed)
        print(json.dumps(res))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("ANALOGIST_BENCH_TMP")) as tmp:
        for n in args.sizes:
            console.print(f"building and querying a store of {n:,} signatures ...")
            p = subprocess.run([sys.executable, __file__, "--child", str(n), "--queries",
                                str(args.queries), "--seed", str(args.seed), "--workdir", tmp],
                               capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if p.returncode != 0:
                console.print(f"[red]size {n} failed[/]: {p.stderr[-2000:]}")
                rows.append({"size": n, "error": p.stderr[-2000:]})
                continue
            rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
            for f in Path(tmp).glob(f"store-{n}.db*"):
                f.unlink()
    t = Table(title="retrieval speed (synthetic stores from casebook structures)",
              title_justify="left")
    for c in ("size", "build s", "rate/s", "file MiB", "stage1 p50 ms", "stage1 p95 ms",
              "find p50 ms", "find p95 ms", "peak RSS MiB"):
        t.add_column(c, justify="right")
    for r in rows:
        if "error" in r:
            t.add_row(f"{r['size']:,}", *(["error"] + [""] * 8))
            continue
        t.add_row(f"{r['size']:,}", f"{r['build_s']:.1f}", f"{r['build_rate_per_s']:.0f}",
                  f"{r['file_bytes'] / 2**20:.1f}", f"{r['stage1_p50_ms']:.1f}",
                  f"{r['stage1_p95_ms']:.1f}", f"{r['find_p50_ms']:.1f}",
                  f"{r['find_p95_ms']:.1f}", f"{r['peak_rss_mib']:.0f}")
    console.print(t)
    by = {r["size"]: r for r in rows if "error" not in r}
    targets = {
        "stage1_p50_le_50ms_at_100k": None if 100_000 not in by else
        by[100_000]["stage1_p50_ms"] <= 50,
        "find_p50_le_150ms_at_100k": None if 100_000 not in by else
        by[100_000]["find_p50_ms"] <= 150,
        "rss_le_4GiB_at_1M": None if 1_000_000 not in by else
        by[1_000_000]["peak_rss_mib"] <= 4096,
    }
    for k, v in targets.items():
        console.print(f"target {k}: {({True: 'PASS', False: 'FAIL', None: 'not run'})[v]}")
    report = {"benchmark": "retrieve_speed",
              "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                          "cpu_count": os.cpu_count()},
              "settings": {"sizes": args.sizes, "queries": args.queries, "seed": args.seed,
                           "shortlist": 20},
              "targets": targets, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
