"""Schema-first vs episode-only retrieval on the casebook, leave-one-out, paired (issue 10).

Run:  python benchmarks/schema_first_casebook.py [--out-dir benchmarks/results/schema_first]

For every real casebook episode (60 targets), the episode is taken out and the rest of the
casebook (59 real episodes + 15 near-miss decoys) is the memory. Two arms see the same target
against the same memory:

* **episode-only** — :class:`~analogist.retrieve.Retriever` on a namespace holding the 74
  episodes and no schemas;
* **schema-first** (primary) — the same 74 episodes after :func:`analogist.consolidate.consolidate`
  (default ``ConsolidateParams``; casebook vocabulary) has induced schemas from them (the held-out
  target never takes part in induction); the Retriever maps the schemas first
  (``Retriever._schema_hits``) and ranks them with the episodes by score;
* **schema-strict** (secondary, from the same retrieval result) — a schema that maps by the rule
  fixed in :func:`analogist.consolidate.schema_fit` (normalised score >= 0.5 and a verdict other
  than "no transfer") is ranked before every episode (schemas literally answer first).

Per-target outcomes, fixed before the run:

* ``top1`` — the first result exists, clears ``min_score`` (no "no match") and is *relevant*: an
  episode of the target's mechanism, or a schema whose members are all of that mechanism;
* ``useful`` — ``top1`` and the judge's verdict on it is not "no transfer";
* ``decoy_top1`` — the first result is a decoy, or a schema with a decoy among its members;
* ``hit@5`` — a relevant result among the first five.

Arms are compared with exact McNemar tests on the paired per-target outcomes and a seeded paired
bootstrap CI on top-1 accuracy (analogist.bench.parb.stats); the minimum detectable swing for n =
60 is reported with its assumed discordance. The casebook is development data (the consolidation
thresholds were set before this run, on no held-out data); PARB items are not part of this
script (a harness-based comparison can follow).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from analogist import __version__
from analogist.bench.parb.stats import (
    mcnemar_from_outcomes,
    min_unanimous_discordant,
    minimum_detectable_swing,
    noise_floor,
    paired_bootstrap_ci,
)
from analogist.casebook import casebook_vocabulary, load_casebook
from analogist.consolidate import ConsolidateParams, consolidate
from analogist.memory.sqlite import Memory
from analogist.retrieve import RetrieveParams, Retriever

HERE = Path(__file__).resolve().parent
COMMAND = "python benchmarks/schema_first_casebook.py"


def _outcomes(res: Any, target_mech: str, label: dict[str, tuple[str, bool]],
              schema_members: dict[int, list[str]]) -> dict[str, Any]:
    def mechs(h: Any) -> tuple[set[str], bool]:
        if h.schema:
            ms = schema_members[-h.id]
            return {label[m][0] for m in ms}, any(label[m][1] for m in ms)
        m, decoy = label[h.episode_id]
        return {m}, decoy

    def relevant(h: Any) -> bool:
        ms, decoy = mechs(h)
        return ms == {target_mech} and not decoy

    hits = list(res.results)
    top = hits[0] if hits and not res.no_match else None
    return {
        "top1": bool(top is not None and relevant(top)),
        "useful": bool(top is not None and relevant(top) and top.report.verdict != "no transfer"),
        "decoy_top1": bool(top is not None and mechs(top)[1]),
        "hit@5": bool(not res.no_match and any(relevant(h) for h in hits[:5])),
        "top": None if top is None else {"id": top.episode_id, "schema": top.schema,
                                         "score": round(top.score, 4),
                                         "verdict": top.report.verdict},
        "schema_in_top5": sum(1 for h in hits[:5] if h.schema),
    }


def run(out_dir: Path) -> dict[str, Any]:
    warnings.simplefilter("ignore")
    cb = load_casebook()
    vocab = casebook_vocabulary()
    label = {e.id: (e.mechanism, e.is_decoy) for e in cb}
    real = [e for e in cb if not e.is_decoy]
    rparams = RetrieveParams(k=10, shortlist=20)
    cparams = ConsolidateParams()
    cache: dict[tuple[str, str], Any] = {}
    rows = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Memory.open(Path(tmp) / "sf.db") as mem:
        for n, target in enumerate(real):
            others = [e.signature for e in cb if e.id != target.id]
            ep_ns, sf_ns = f"ep-{n}", f"sf-{n}"
            mem.add_many(others, namespace=ep_ns)
            mem.add_many(others, namespace=sf_ns)
            rep = consolidate(mem, sf_ns, vocab=vocab, params=cparams, encoder=None,
                              cache=cache)
            members = {int(r["id"]): [mem.get(i, sf_ns).episode_id for i in r["members"]]
                       for r in mem.schemas(sf_ns)}
            assert not any(target.id in ms for ms in members.values())
            a = Retriever(mem, ep_ns, vocab=vocab, params=rparams, log=False).find(
                target.signature)
            b = Retriever(mem, sf_ns, vocab=vocab, params=rparams, log=False).find(
                target.signature)
            strict = [h for h in b.results if h.schema and h.score >= cparams.map_threshold
                      and h.report.verdict != "no transfer"]
            c = replace(b, results=tuple(strict + [h for h in b.results if h not in strict]),
                        no_match=b.no_match and not strict)
            rows.append({"target": target.id, "mechanism": target.mechanism,
                         "schemas": len(rep.schemas), "merges": len(rep.merges),
                         "episode_only": _outcomes(a, target.mechanism, label, {}),
                         "schema_first": _outcomes(b, target.mechanism, label, members),
                         "schema_strict": _outcomes(c, target.mechanism, label, members)})
    elapsed = time.perf_counter() - t0
    n = len(rows)
    summary: dict[str, Any] = {}
    tests: dict[str, Any] = {}
    strict_tests: dict[str, Any] = {}
    for m in ("top1", "useful", "decoy_top1", "hit@5"):
        ea = [r["episode_only"][m] for r in rows]
        sf = [r["schema_first"][m] for r in rows]
        ss = [r["schema_strict"][m] for r in rows]
        summary[m] = {"episode_only": sum(ea) / n, "schema_first": sum(sf) / n,
                      "schema_strict": sum(ss) / n}
        tests[m] = mcnemar_from_outcomes(sf, ea)  # a_only = schema-first right, episode wrong
        strict_tests[m] = mcnemar_from_outcomes(ss, ea)
    ci = paired_bootstrap_ci([float(r["schema_first"]["top1"]) for r in rows],
                             [float(r["episode_only"]["top1"]) for r in rows], seed=0)
    mds = minimum_detectable_swing(n, discordance=0.25)
    floor_items = noise_floor(min_unanimous_discordant(), 0)
    net = tests["top1"]["net"]
    if abs(net) < floor_items or tests["top1"]["p"] >= 0.05:
        verdict = (f"not shown: schema-first changes top-1 accuracy by {net:+d} of {n} targets "
                   f"(McNemar p = {tests['top1']['p']:.3g}); inside the noise band")
    else:
        verdict = (f"schema-first {'better' if net > 0 else 'worse'} on top-1 by {net:+d} of {n} "
                   f"(McNemar p = {tests['top1']['p']:.3g})")
    out = {
        "command": COMMAND,
        "analogist": __version__, "python": platform.python_version(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "targets": n, "memory_size": len(cb) - 1,
        "consolidate_params": {k: getattr(cparams, k) for k in (
            "min_pair_score", "min_schema_relations", "min_schema_edges", "map_threshold")},
        "retrieve_params": {"k": rparams.k, "shortlist": rparams.shortlist,
                            "min_score": rparams.min_score},
        "summary": summary, "mcnemar_schema_first_vs_episode_only": tests,
        "mcnemar_schema_strict_vs_episode_only": strict_tests,
        "top1_paired_bootstrap_ci95": ci,
        "top1_strict_paired_bootstrap_ci95": paired_bootstrap_ci(
            [float(r["schema_strict"]["top1"]) for r in rows],
            [float(r["episode_only"]["top1"]) for r in rows], seed=0),
        "minimum_detectable_swing": {"n": n, "assumed_discordance": 0.25, "share": mds},
        "noise_floor_items": floor_items,
        "verdict": verdict,
        "schemas_per_fold": {"min": min(r["schemas"] for r in rows),
                             "max": max(r["schemas"] for r in rows)},
        "schema_top1_targets": sum(1 for r in rows if r["schema_first"]["top"]
                                   and r["schema_first"]["top"]["schema"]),
        "schema_strict_top1_targets": sum(1 for r in rows if r["schema_strict"]["top"]
                                          and r["schema_strict"]["top"]["schema"]),
        "elapsed_s": round(elapsed, 1),
        "rows": rows,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps(out, indent=2) + "\n")
    (out_dir / "report.md").write_text(_report(out))
    return out


def _report(o: dict[str, Any]) -> str:
    lines = ["# Schema-first vs episode-only retrieval, casebook leave-one-out", "",
             f"Command: `{o['command']}` (analogist {o['analogist']}, Python {o['python']}, "
             f"{o['date']}, {o['elapsed_s']} s).", "",
             f"{o['targets']} targets, memory of {o['memory_size']} episodes each (decoys "
             f"included); {o['schemas_per_fold']['min']}–{o['schemas_per_fold']['max']} schemas "
             "induced per fold without the target. Paired: both arms see every target.", "",
             "| outcome | episode-only | schema-first | (schema-first only / episode-only "
             "only, McNemar p) | schema-strict | (strict only / episode-only only, p) |",
             "|---|---|---|---|---|---|"]
    for m, s in o["summary"].items():
        t = o["mcnemar_schema_first_vs_episode_only"][m]
        u = o["mcnemar_schema_strict_vs_episode_only"][m]
        lines.append(f"| {m} | {s['episode_only']:.3f} | {s['schema_first']:.3f} | "
                     f"{t['a_only']} / {t['b_only']}, {t['p']:.3g} | {s['schema_strict']:.3f} | "
                     f"{u['a_only']} / {u['b_only']}, {u['p']:.3g} |")
    ci = o["top1_paired_bootstrap_ci95"]
    lines += ["", f"Top-1 difference (schema-first − episode-only): {ci['estimate']:+.3f}, "
              f"paired bootstrap 95% CI [{ci['lo']:+.3f}, {ci['hi']:+.3f}].",
              f"Minimum detectable swing at n = {o['targets']} (discordance 0.25 assumed): "
              f"{o['minimum_detectable_swing']['share']:.3f}; noise floor "
              f"{o['noise_floor_items']} items.",
              f"Schema-strict top-1 difference: "
              f"{o['top1_strict_paired_bootstrap_ci95']['estimate']:+.3f}, CI "
              f"[{o['top1_strict_paired_bootstrap_ci95']['lo']:+.3f}, "
              f"{o['top1_strict_paired_bootstrap_ci95']['hi']:+.3f}].",
              f"A schema is the top result for {o['schema_top1_targets']} targets (primary "
              f"arm) and {o['schema_strict_top1_targets']} (strict arm).", "",
              "Targets missed at top-1 (arm: what ranked first): " + ("; ".join(
                  f"{r['target']} ({arm}: {r[arm]['top']['id'] if r[arm]['top'] else 'no match'})"
                  for r in o["rows"] for arm in ("episode_only", "schema_first", "schema_strict")
                  if not r[arm]["top1"]) or "none") + ".", "",
              f"**Verdict:** {o['verdict']}.", "",
              "Caveats: the casebook is development data and small; schemas are induced from the "
              "other members of the target's mechanism, so this measures whether a schema "
              "answers as well as (or better than) its best member, not transfer to new "
              "mechanisms. PARB items were not run here.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", type=Path, default=HERE / "results" / "schema_first")
    args = ap.parse_args(argv)
    o = run(args.out_dir)
    sys.stdout.write(_report(o))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
