"""The answers of ``find`` on a synthetic store, to compare two versions of the code.

Run:  python benchmarks/find_answers.py --size 1000000 --store-cache DIR --out answers.json
      python benchmarks/find_answers.py --compare before.json after.json

The store and the queries are those of ``benchmarks/retrieve_speed.py`` (same ``--seed``, same
store cache: a cached store is opened in place, its saved index beside it); every query's
``FindResult.to_json()`` without its timings (hits, scores, channels, reports, decoy probe) is
written, in query order. ``--compare`` says whether two such files are identical and, if not,
which queries and fields differ (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import retrieve_speed as rs  # noqa: E402  (the sibling benchmark's store and queries)


def answers(size: int, queries: int, seed: int, cache: Path) -> list[dict[str, Any]]:
    from analogist.memory.sqlite import Memory
    from analogist.retrieve import Retriever
    from analogist.signature import validate_signature

    base = rs._casebook_dicts()
    path = cache / (f"synthetic-{size}.db" if seed == 7 else f"synthetic-{size}-seed{seed}.db")
    if not path.exists():
        raise SystemExit(f"no cached store at {path}: run benchmarks/retrieve_speed.py "
                         f"--sizes {size} --store-cache {cache} first")
    qs = [validate_signature(q) for q in rs.synth(base, queries, seed + 10_000_019)]
    random.Random(seed).shuffle(qs)
    out = []
    with Memory.open(path) as m:
        r = Retriever(m, "bench", log=False)
        for q in qs:
            res = r.find(q).to_json()
            res.pop("timings_ms")
            out.append(res)
    return out


def compare(a: Path, b: Path) -> int:
    x = json.loads(a.read_text(encoding="utf-8"))
    y = json.loads(b.read_text(encoding="utf-8"))
    if len(x) != len(y):
        print(f"{len(x)} answers against {len(y)}")
        return 1
    bad = [i for i, (p, q) in enumerate(zip(x, y, strict=True)) if p != q]
    if not bad:
        print(f"identical: {len(x)} answers")
        return 0
    for i in bad:
        keys = sorted(k for k in set(x[i]) | set(y[i]) if x[i].get(k) != y[i].get(k))
        print(f"query {i} ({x[i].get('target')}): {', '.join(keys)} differ")
    return 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--store-cache", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("A", "B"))
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if args.store_cache is None or args.out is None:
        ap.error("--store-cache and --out are needed (or --compare A B)")
    res = answers(args.size, args.queries, args.seed, args.store_cache)
    args.out.write_text(json.dumps(res, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(res)} answers to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
