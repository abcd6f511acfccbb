"""The retrieval harness (issue 8) on the bundled casebook: surface vs structural vs fused vs
associative, paired, with seed 002's noise discipline.

Store: :func:`analogist.casebook.load_casebook` (60 episodes + 15 decoys) in a temporary SQLite
Memory, namespace ``casebook``, with abstract-level embeddings from the default embedder (as
``analogist demo`` builds it), plus three re-recorded episodes: for each of three casebook
episodes a corrected copy (``<id>-corrected``, L0 prefixed "Re-recorded after review.") that
supersedes it, so the ``superseded`` category has something to measure (the casebook itself has no
supersession links). The gold set is built from that store with the default
:class:`~analogist.bench.harness.goldset.GoldSetParams` and the hand-written paraphrases below
(written for this benchmark; each is machine-checked to share no content word with its target).

Writes, under ``benchmarks/results/harness/``: ``store.db`` is NOT kept; ``gold.json``,
``run_<retriever>.json`` (3 runs each), ``compare_<a>_vs_<b>.json`` and ``report.md``.

Run:  python benchmarks/harness_casebook.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from analogist.bench.harness.compare import compare_results, render
from analogist.bench.harness.goldset import build_goldset, check_goldset, save_goldset
from analogist.bench.harness.runner import run_goldset
from analogist.casebook import load_casebook
from analogist.memory.sqlite import Memory

NS = "casebook"
OUT = Path(__file__).parent / "results" / "harness"
CORRECTED = ("stale-copy-med-discharge-list", "herd-nrg-cold-load-pickup",
             "race-log-truck-dispatch")

PARAPHRASES = [
    {"target": "stale-copy-fin-cash-extract",
     "text": "The governing body approved a payout using an outdated tabular dump; funds that "
             "had come back unpaid were still counted"},
    {"target": "goodhart-pol-rat-bounty",
     "text": "A per-pest payment made locals raise vermin to collect the prize"},
    {"target": "survivorship-avn-bomber-armour",
     "text": "Planes lost overseas were struck precisely where crews who lived reported no scars"},
    {"target": "deadlock-sw-lock-ordering",
     "text": "Two workers each grabbed one mutex then waited forever on the other"},
    {"target": "herd-sw-cache-stampede",
     "text": "A hot item lapsed and a crowd of lookups hammered the datastore together"},
    {"target": "feedback-fin-bank-run",
     "text": "Rumours of insolvency drove account holders to pull money, which produced the "
             "insolvency"},
    {"target": "alarm-fatigue-pol-evacuation-orders",
     "text": "After needless calls to flee, locals ignored the genuine flood"},
    {"target": "race-med-therac-edit",
     "text": "A quick typist changed a setting mid-entry and the device delivered a huge "
             "radiation excess"},
]


def build_store(path: Path) -> dict[str, object]:
    from analogist.index.embed import default_embedder
    from analogist.retrieve import level_embeddings

    emb = default_embedder()
    entries = load_casebook()
    with Memory.open(path) as m:
        m.add_many([e.signature for e in entries], namespace=NS, batch_size=25,
                   embed=lambda s: level_embeddings(s, emb))
        for eid in CORRECTED:
            old = m.get(eid, NS)
            assert old is not None
            data = old.signature.to_data()
            data["episode_id"] = f"{eid}-corrected"
            data["levels"]["L0"] = "Re-recorded after review. " + data["levels"]["L0"]
            m.add(data, namespace=NS, embeddings=level_embeddings(old.signature, emb))
            m.supersede(eid, f"{eid}-corrected", namespace=NS)
        groups = [g for g in m.fingerprint_groups(NS).values() if len(g) > 1]
        return {"episodes": m.count(NS), "superseded": len(m.superseded(NS)),
                "schemas": len(m.schemas(NS)), "fingerprint_groups": len(groups),
                "in_groups": sum(len(g) for g in groups)}


def reading(results: dict, gold, info: dict, verdicts: dict) -> list[str]:
    """Facts a reader needs next to the tables, computed from the results."""
    from analogist.bench.harness.compare import _mean_summary, outcomes

    nm = {n: _mean_summary(r)["no_match_on_answerable"] for n, r in results.items()}
    text_q = sum(1 for q in gold.queries if q.signature is None and q.category != "nonsense")
    return [
        "## Reading", "",
        "- Verdicts (seed 002 rule: McNemar p < 0.05 *and* net swing >= noise floor): "
        + "; ".join(f"{a} -> {b}: {v}" for (a, b), v in verdicts.items()) + ".",
        f"- The MAC/FAC retrievers (fused, structural) reported **no match** on "
        f"{nm['fused'][0]}/{nm['fused'][1]} and {nm['structural'][0]}/{nm['structural'][1]} "
        f"answerable queries. {text_q} answerable queries are short texts, turned into a target "
        "Signature by the deterministic encoder (the `analogist find --from-text` path); such "
        "drafts carry one or two relations, so SME maps too little of them to clear "
        "`min_score`. Their 3/3 on the nonsense controls is therefore not evidence of "
        "discrimination: they say no match to most text queries. The ranked lists are still "
        "scored (a user sees them under the NO MATCH banner).",
        "- `structural` queries (whole Signatures of a stored episode, excluded from the "
        "ranking; answers: episodes SME maps well onto it, whose narrative shares at most "
        "a tenth of its content words and which the judge finds no contradiction with) "
        "favour fused and structural by construction (they rank by SME); the text "
        "retrievers only see the narrative, which shares few words with the answers.",
        "- The `associative` category is derived from the same structural edges (equal WL "
        "fingerprint, supersession) the associative retriever walks, as in seed 002; its gain "
        "there is expected by construction. The casebook has few such edges: "
        f"{info['fingerprint_groups']} WL-fingerprint groups of two or more episodes "
        f"(covering {info['in_groups']} episodes), the {info['superseded']} supersession "
        f"links added here, {info['schemas']} schemas.",
        "- Associative vs fused is the comparison issue 8 asks for (kept only if the verdict "
        f"says it helps): {verdicts[('fused', 'associative')]}. It is not adopted; it stays a "
        "harness candidate (`--retriever associative`).",
        "- The gold set is small (46 queries): the minimum detectable swing is 6 queries, and "
        "a genuine effect of 3-5 queries would not clear the bar; a small positive delta "
        "means 'not shown', not 'no effect'.",
        "- Run-to-run drift (queries whose hit@5 differed between runs): "
        + ", ".join(f"{n} {outcomes(r)[1]}" for n, r in results.items())
        + "; with zero drift the noise floor is the minimum "
        "detectable swing.",
        "",
        "## Running the harness yourself", "",
        "```",
        "analogist eval build --store S.db --namespace NS --out gold.json "
        "[--paraphrases para.yaml]",
        "analogist eval check gold.json --store S.db      # exit 1 when a query became "
        "unwinnable",
        "analogist eval run gold.json --store S.db --runs 3 --retriever fused --out A.json",
        "analogist eval run gold.json --store S.db --runs 3 --retriever associative --out B.json",
        "analogist eval compare A.json B.json [--json]",
        "# two builds, each in its own venv (git worktree for refs; a directory = a source tree):",
        "analogist eval compare --baseline main --candidate my-branch --gold gold.json "
        "--store S.db --retriever fused --runs 3 [--repo .] [--out cmp.json]",
        "# its end-to-end tests (slow, skipped by default):",
        "ANALOGIST_SLOW_TESTS=1 python -m pytest tests/test_harness_refs.py",
        "```",
        "",
    ]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    from analogist.encode.deterministic import DeterministicEncoder
    from analogist.index.embed import default_embedder

    emb = default_embedder()
    enc = DeterministicEncoder(embedder=emb)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "casebook.db"
        info = build_store(store)
        with Memory.open(store) as m:
            gold = build_goldset(m, NS, paraphrases=PARAPHRASES)
            problems = check_goldset(gold, m)
        assert not problems, problems
        save_goldset(gold, OUT / "gold.json")
        print(f"store {info}; gold set {gold.counts()}", flush=True)
        for name in ("surface", "structural", "fused", "associative"):
            t = time.perf_counter()
            res = run_goldset(gold, store, name, runs=args.runs, embedder=emb, encoder=enc)
            res["command"] = f"python benchmarks/harness_casebook.py --runs {args.runs}"
            (OUT / f"run_{name}.json").write_text(json.dumps(res, indent=2, sort_keys=True)
                                                  + "\n", encoding="utf-8")
            results[name] = res
            s = res["runs"][0]["summary"]
            print(f"{name}: hit@5 {s['hit@5']:.3f} mrr {s['mrr@10']:.3f} "
                  f"({time.perf_counter() - t:.0f} s)", flush=True)
    pairs = [("surface", "structural"), ("surface", "fused"), ("structural", "fused"),
             ("fused", "associative"), ("surface", "associative")]
    report = ["# Retrieval harness on the casebook (issue 8)", "",
              f"Command: `python benchmarks/harness_casebook.py --runs {args.runs}`", "",
              f"Store: bundled casebook in namespace `{NS}` — {info['episodes']} episodes "
              f"(60 real, 15 decoys, 3 re-recorded corrections superseding "
              f"{', '.join(CORRECTED)}); schemas in the store: {info['schemas']}.", "",
              "Gold set (`gold.json`): " + ", ".join(f"{k} {v}" for k, v in
                                                     gold.counts().items()) +
              f"; {len(gold.queries)} queries, {args.runs} runs per retriever.", ""]
    from analogist.bench.harness.compare import _mean_summary

    report += ["## All four retrievers (mean over runs)", "",
               "| retriever | hit@5 | recall@5 | recall@10 | precision@5 | MRR@10 | nonsense "
               "clean | superseded outranks | no match on answerable | p50 ms | p95 ms |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        sm = _mean_summary(res)
        report.append(
            f"| {name} | {sm['hit@5']:.1%} | {sm['recall@5']:.1%} | {sm['recall@10']:.1%} | "
            f"{sm['precision@5']:.1%} | {sm['mrr@10']:.3f} | {sm['nonsense_clean'][0]}/"
            f"{sm['nonsense_clean'][1]} | {sm['superseded_outranks'][0]}/"
            f"{sm['superseded_outranks'][1]} | {sm['no_match_on_answerable'][0]}/"
            f"{sm['no_match_on_answerable'][1]} | {sm['latency_p50_ms']:.1f} | "
            f"{sm['latency_p95_ms']:.1f} |")
    cats = list(_mean_summary(results["surface"])["by_category_hit@5"])
    report += ["", "hit@5 by category:", "",
               "| retriever | " + " | ".join(f"{c} (n={gold.counts()[c]})" for c in cats) + " |",
               "|---|" + "---|" * len(cats)]
    for name, res in results.items():
        bc = _mean_summary(res)["by_category_hit@5"]
        report.append(f"| {name} | " + " | ".join(f"{bc[c]:.1%}" for c in cats) + " |")
    report += ["", "Latency is wall-clock per query on a shared 2-core machine (for fused and "
               "structural it includes writing the query's Signature with the deterministic "
               "encoder for text queries); reported, never asserted.", ""]
    if not info["schemas"]:
        report += ["Schema-first vs episode-only: **not measured** — the store holds no "
                   "schemas (schemas exist only when added with `Memory.add_schema`; the "
                   "consolidator that induces them is not built yet), so schema-first "
                   "retrieval and episode-only retrieval are the same code path here.", ""]
    verdicts: dict[tuple[str, str], str] = {}
    for a, b in pairs:
        cmp = compare_results(results[a], results[b])
        verdicts[(a, b)] = cmp["verdict"]
        cmp["command"] = f"python benchmarks/harness_casebook.py --runs {args.runs}"
        (OUT / f"compare_{a}_vs_{b}.json").write_text(
            json.dumps(cmp, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        text = render(cmp)
        print(f"\n== {a} (baseline) vs {b} (candidate)\n{text}", flush=True)
        report += [f"## {a} (baseline) vs {b} (candidate)", "", "```", text, "```", ""]
    report += reading(results, gold, info, verdicts)
    (OUT / "report.md").write_text("\n".join(report) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
