"""Schema-first vs episode-only retrieval through the evaluation harness (issues 8 and 10).

Run:  python benchmarks/harness_schema_first.py [--runs 3]

The casebook store of ``benchmarks/harness_casebook.py`` and its pinned gold set
(``benchmarks/results/harness/gold.json``) are used unchanged. One copy of the store stays
episode-only; on the other, ``analogist.consolidate.consolidate`` induces schemas (synonym merge
and re-abstraction off, so the episodes are byte-identical in both stores and only the schemas
table differs). The fused retriever — which searches schemas before episodes — runs the gold set
on both, ``runs`` times each, and the harness compares them (paired McNemar, minimum detectable
swing, drift, noise floor, seed-002 verdict). Writes ``run_episode_only.json``,
``run_schema_first.json``, ``compare_episode_only_vs_schema_first.json`` and
``schema_first.md`` under ``benchmarks/results/harness/``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness_casebook import NS, build_store  # noqa: E402

from analogist.bench.harness.compare import compare_results, render  # noqa: E402
from analogist.bench.harness.goldset import check_goldset, load_goldset  # noqa: E402
from analogist.bench.harness.runner import run_goldset  # noqa: E402
from analogist.consolidate import ConsolidateParams, consolidate  # noqa: E402
from analogist.memory.sqlite import Memory  # noqa: E402

OUT = HERE / "results" / "harness"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from analogist.encode.deterministic import DeterministicEncoder
    from analogist.index.embed import default_embedder

    emb = default_embedder()
    enc = DeterministicEncoder(embedder=emb)
    gold = load_goldset(OUT / "gold.json")
    cmd = f"python benchmarks/harness_schema_first.py --runs {args.runs}"
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "episodes.db"
        build_store(plain)
        with Memory.open(plain) as m:
            problems = check_goldset(gold, m)
        if problems:
            print(f"the pinned gold set no longer fits the store: {problems}", file=sys.stderr)
            return 1
        schemas = Path(tmp) / "schemas.db"
        shutil.copyfile(plain, schemas)
        with Memory.open(schemas) as m:
            rep = consolidate(m, NS, params=ConsolidateParams(
                merge_synonyms=False, rewrite_merged=False, reabstract=False), encoder=None)
            n_schemas = len(m.schemas(NS))
        print(f"induced {n_schemas} schemas", flush=True)
        results = {}
        for name, store in (("episode_only", plain), ("schema_first", schemas)):
            res = run_goldset(gold, store, "fused", runs=args.runs, embedder=emb, encoder=enc)
            res["command"] = cmd
            res["arm"] = name
            res["schemas_in_store"] = n_schemas if name == "schema_first" else 0
            (OUT / f"run_{name}.json").write_text(json.dumps(res, indent=2, sort_keys=True)
                                                  + "\n", encoding="utf-8")
            results[name] = res
    cmp = compare_results(results["episode_only"], results["schema_first"],
                          labels=("episode_only", "schema_first"))
    cmp["command"] = cmd
    (OUT / "compare_episode_only_vs_schema_first.json").write_text(
        json.dumps(cmp, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    text = render(cmp)
    md = ["# Schema-first vs episode-only through the harness (issues 8 and 10)", "",
          f"Command: `{cmd}`. Store: the casebook store of `harness_casebook.py`; gold set: the "
          f"pinned `gold.json` ({len(gold.queries)} queries). Schemas induced by "
          f"`consolidate` (synonym merge and re-abstraction off): {n_schemas}. "
          f"Pairs compared {rep.pairs_compared}, mapping well {rep.pairs_mapping_well}.", "",
          "Both columns are the fused retriever: left on the episode-only store (baseline), "
          "right on the store with schemas (candidate, schema-first).", "",
          "```", text, "```", ""]
    (OUT / "schema_first.md").write_text("\n".join(md), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
