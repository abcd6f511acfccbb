"""Schema-first vs episode-only retrieval on PARB pool items, paired (issue 10).

Run:  python benchmarks/schema_first_parb.py [--items 240] [--seed 1] [--split dev]

PARB items of the pool families F3 (find the same shape in a 40-episode pool with minimal-pair,
surface and filler decoys, or answer "no match") and F6 (one true match among look-alikes) are
generated (generator ``parb-gen-2``). For each item the pool goes into two namespaces of a real
SQLite store: **episode-only** (the pool as it is) and **schema-first** (the same pool after
:func:`analogist.consolidate.consolidate` has induced schemas from it; default parameters, no
synonym merge or re-abstraction). The target is then retrieved with the default
:class:`~analogist.retrieve.Retriever` in both, and a **schema-strict** arm puts every schema that
maps by :func:`analogist.consolidate.schema_fit`'s fixed rule (normalised score >= 0.5 and a
verdict other than "no transfer") before the episodes.

Per item, fixed before the run: ``correct`` — a no-match item answered "no match", or the first
result is a true match (a schema counts when a true match is among its members and no
minimal-pair decoy is); ``hit@5`` — a true match (or such a schema) among the first five;
``decoy_transfer`` — the first result is a minimal-pair decoy (or a schema holding one) and the
judge lets it transfer. Arms are compared with exact McNemar on paired per-item outcomes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from analogist import __version__
from analogist.bench.parb.items import generate
from analogist.bench.parb.stats import mcnemar_from_outcomes, paired_bootstrap_ci
from analogist.consolidate import ConsolidateParams, consolidate
from analogist.memory.sqlite import Memory
from analogist.retrieve import RetrieveParams, Retriever

HERE = Path(__file__).resolve().parent


def _outcome(res: Any, item: dict[str, Any], roles: dict[str, str],
             members: dict[int, list[str]]) -> dict[str, Any]:
    matches = set(item["key"]["match_ids"])

    def kind(h: Any) -> tuple[bool, bool]:
        ids = members[-h.id] if h.schema else [h.episode_id]
        has_match = any(i in matches for i in ids)
        has_mp = any(roles.get(i) == "minimal_pair" for i in ids)
        return has_match and not has_mp, has_mp

    hits = list(res.results)
    top = hits[0] if hits and not res.no_match else None
    if item["key"]["no_match"]:
        correct = top is None or not top.transfer
    else:
        correct = top is not None and kind(top)[0]
    return {
        "correct": bool(correct),
        "hit@5": bool(not item["key"]["no_match"] and not res.no_match
                      and any(kind(h)[0] for h in hits[:5])),
        "decoy_transfer": bool(top is not None and kind(top)[1] and top.transfer),
        "top_is_schema": bool(top is not None and top.schema),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=240)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--out-dir", type=Path, default=HERE / "results" / "schema_first_parb")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    items = [i for i in generate(args.items, args.seed, args.split).items
             if i["family"] in ("F3", "F6")]
    cparams = ConsolidateParams(merge_synonyms=False, rewrite_merged=False, reabstract=False)
    rparams = RetrieveParams(k=10, shortlist=20)
    rows = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Memory.open(Path(tmp) / "p.db") as mem:
        for n, it in enumerate(items):
            sigs = [p["signature"] for p in it["pool"]]
            roles = {p["episode_id"]: p["labels"]["role"] for p in it["pool"]}
            ep_ns, sf_ns = f"ep-{n}", f"sf-{n}"
            mem.add_many(sigs, namespace=ep_ns)
            mem.add_many(sigs, namespace=sf_ns)
            rep = consolidate(mem, sf_ns, params=cparams, encoder=None)
            members = {int(r["id"]): [mem.get(i, sf_ns).episode_id for i in r["members"]]
                       for r in mem.schemas(sf_ns)}
            a = Retriever(mem, ep_ns, params=rparams, log=False).find(it["target"])
            b = Retriever(mem, sf_ns, params=rparams, log=False).find(it["target"])
            strict = [h for h in b.results if h.schema and h.score >= cparams.map_threshold
                      and (h.report.transfer or h.report.transfer_mechanism)]
            c = replace(b, results=tuple(strict + [h for h in b.results if h not in strict]),
                        no_match=b.no_match and not strict)
            rows.append({"item": it["item_id"], "family": it["family"],
                         "no_match_item": it["key"]["no_match"], "schemas": len(rep.schemas),
                         "episode_only": _outcome(a, it, roles, {}),
                         "schema_first": _outcome(b, it, roles, members),
                         "schema_strict": _outcome(c, it, roles, members)})
            print(f"{n + 1}/{len(items)} {it['item_id']} schemas {len(rep.schemas)}",
                  flush=True)
    n = len(rows)
    summary, tests = {}, {}
    for m in ("correct", "hit@5", "decoy_transfer", "top_is_schema"):
        summary[m] = {arm: sum(r[arm][m] for r in rows) / n
                      for arm in ("episode_only", "schema_first", "schema_strict")}
        if m != "top_is_schema":
            tests[m] = {
                "schema_first_vs_episode_only": mcnemar_from_outcomes(
                    [r["schema_first"][m] for r in rows], [r["episode_only"][m] for r in rows]),
                "schema_strict_vs_episode_only": mcnemar_from_outcomes(
                    [r["schema_strict"][m] for r in rows], [r["episode_only"][m] for r in rows]),
            }
    ci = paired_bootstrap_ci([float(r["schema_strict"]["correct"]) for r in rows],
                             [float(r["episode_only"]["correct"]) for r in rows], seed=0)
    cmd = (f"python benchmarks/schema_first_parb.py --items {args.items} --seed {args.seed} "
           f"--split {args.split}")
    out = {"command": cmd, "analogist": __version__, "items": n,
           "families": {f: sum(r["family"] == f for r in rows) for f in ("F3", "F6")},
           "summary": summary, "mcnemar": tests, "strict_correct_diff_ci95": ci,
           "elapsed_s": round(time.perf_counter() - t0, 1), "rows": rows}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "results.json").write_text(json.dumps(out, indent=1) + "\n")
    md = ["# Schema-first vs episode-only on PARB pool items (issue 10)", "",
          f"Command: `{cmd}` ({n} items: F3 {out['families']['F3']}, F6 "
          f"{out['families']['F6']}; {out['elapsed_s']} s).", "",
          "| outcome | episode-only | schema-first | schema-strict | McNemar first vs episode "
          "(a only / b only, p) | strict vs episode |", "|---|---|---|---|---|---|"]
    for m, v in summary.items():
        t = tests.get(m)
        f = (f"{t['schema_first_vs_episode_only']['a_only']} / "
             f"{t['schema_first_vs_episode_only']['b_only']}, "
             f"p={t['schema_first_vs_episode_only']['p']:.3g}") if t else "–"
        s = (f"{t['schema_strict_vs_episode_only']['a_only']} / "
             f"{t['schema_strict_vs_episode_only']['b_only']}, "
             f"p={t['schema_strict_vs_episode_only']['p']:.3g}") if t else "–"
        md.append(f"| {m} | {v['episode_only']:.3f} | {v['schema_first']:.3f} | "
                  f"{v['schema_strict']:.3f} | {f} | {s} |")
    md += ["", f"Strict − episode-only on `correct`: {ci['estimate']:+.3f} "
               f"[{ci['lo']:+.3f}, {ci['hi']:+.3f}] (paired bootstrap 95%)."]
    (args.out_dir / "report.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
