"""A user's store of analogue pairs and decoys: what ``eval build`` derives from it, how the
default retriever and the surface baseline do on the structural queries, and what
``consolidate`` induces (issue 21, build items 7 and 8).

Store (development data only): :func:`analogist.bench.harness.pairs.analogue_pair_store` over
all 15 casebook mechanisms — two non-isomorphic analogues each, a reversed-edge decoy of the
first, and the casebook's surface decoys.

Measured, in one run:

* the gold set ``analogist eval build`` derives (counts per category);
* ``eval run`` of the structural queries alone against ``surface`` and ``fused`` (3 runs each)
  and their paired comparison (``eval compare``: McNemar on the structural queries);
* ``consolidate --dry-run``: schemas, and schemas uniting an episode with its own reversed-edge
  decoy.

Writes ``benchmarks/results/user_store_pairs/{gold.json,surface.json,fused.json,compare.json,
report.md}``.

Run:  python benchmarks/user_store_pairs.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path

from analogist.bench.harness.compare import compare_results, render
from analogist.bench.harness.goldset import build_goldset, save_goldset
from analogist.bench.harness.pairs import analogue_pair_store
from analogist.bench.harness.runner import run_goldset
from analogist.consolidate import consolidate
from analogist.memory.sqlite import Memory

OUT = Path(__file__).parent / "results" / "user_store_pairs"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store.db"
        rev = analogue_pair_store(store)
        with Memory.open(store) as m:
            episodes = m.count()
            gold = build_goldset(m)
            rep = consolidate(m, dry_run=True, encoder=None)
        save_goldset(gold, OUT / "gold.json")
        structural = replace(gold, queries=tuple(q for q in gold.queries
                                                 if q.category == "structural"))
        res = {name: run_goldset(structural, store, name, runs=args.runs)
               for name in ("surface", "fused")}
    for name, r in res.items():
        (OUT / f"{name}.json").write_text(json.dumps(r, indent=2, sort_keys=True) + "\n",
                                          encoding="utf-8")
    cmp = compare_results(res["surface"], res["fused"], labels=("surface", "fused"))
    (OUT / "compare.json").write_text(json.dumps(cmp, indent=2, sort_keys=True) + "\n",
                                      encoding="utf-8")
    own = [s.name for s in rep.schemas
           if any(d in s.members and o in s.members for d, o in rev.items())]
    leaked = sorted({e for q in structural.queries for e in q.expected
                     if rev.get(e) == q.check["source"] or rev.get(q.check["source"]) == e})
    lines = [
        "# A user's store of analogue pairs and decoys", "",
        f"Store: {episodes} episodes (15 mechanisms x 2 non-isomorphic analogues, "
        f"{len(rev)} reversed-edge decoys, casebook surface decoys). Command: "
        "`python benchmarks/user_store_pairs.py`.", "",
        "## eval build", "",
        "counts: " + ", ".join(f"{k} {v}" for k, v in gold.counts().items()), "",
        f"structural answers that are the query's own reversed-edge decoy (or its original): "
        f"{len(leaked)}", "",
        f"## Structural queries only: surface vs fused ({args.runs} runs each)", "",
        "```", render(cmp), "```", "",
        "## consolidate (dry run)", "",
        f"{rep.pairs_compared} pairs compared, {rep.pairs_mapping_well} map well, "
        f"{len(rep.schemas)} schemas; schemas uniting an episode with its own reversed-edge "
        f"decoy: {len(own)}", "",
    ]
    (OUT / "report.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
