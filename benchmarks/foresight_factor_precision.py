"""Per-factor precision of the evidence each foresight arm transfers (a diagnostic for issue 6).

Run:  python benchmarks/foresight_factor_precision.py [--out benchmarks/results/foresight/factor_precision.json]

For every corpus target (cut at its cutoff, leave-one-out pool), count the (position, mechanism)
factors each arm would carry over to the target at the positions where hidden factors occur
(amplifier, transmission, response, outcome), and how many of them are hidden factors of the
target:

* structure — projections of round 0 of the loop (SME alignment, forward-anchored on factors
  matched on position and mechanism), broken down by the analogy's number of matches (m1, m2,
  m3+) and by the length of the causal path from the anchor;
* surface — every factor of the top-8 events by sentence-embedding cosine (the surface arm's
  selection), broken down by rank.

It explains the main evaluation: whether the structural evidence is more precise per factor, and
how many such factors each arm offers for confirmation. Nothing is tuned here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from analogist.foresight.evaluate import (
    embed_corpus,
    eval_targets,
    loo_pool,
    split_of,
    surface_evidence,
)
from analogist.foresight.event import load_corpus
from analogist.foresight.loop import ForesightParams, run_foresight
from analogist.index.embed import default_embedder

HERE = Path(__file__).resolve().parent
LATE = ("amplifier", "transmission", "response", "outcome")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path,
                    default=HERE / "results" / "foresight" / "factor_precision.json")
    args = ap.parse_args(argv)
    corpus = load_corpus()
    targets = eval_targets(corpus)
    emb = default_embedder()
    vectors, queries = embed_corpus(corpus, targets, emb)
    prm = replace(ForesightParams(), rounds=0)
    out: dict[str, dict[str, list[int]]] = {}
    for t in targets:
        sp = split_of(t.event_id)
        tv = t.at_cutoff()
        obs, hid = tv.view.hypotheses(), tv.hidden_hypotheses()
        pool = loo_pool(t, corpus)
        cnt = out.setdefault(sp, defaultdict(lambda: [0, 0]))
        res = run_foresight(tv, pool, params=prm, corpus=corpus, embedder=emb, vectors=vectors)
        for a in res.decision.ranked:
            for p in a.projections:
                h = (p.position, p.mechanism)
                if h in obs or p.position not in LATE:
                    continue
                for key in ("structure", f"structure_m{min(3, a.mechanism_matches)}",
                            f"structure_path{min(len(p.path), 4)}"):
                    cnt[key][0] += h in hid
                    cnt[key][1] += 1
        chosen, _, _ = surface_evidence(tv, pool, corpus, prm, vectors, queries[t.event_id],
                                        prm.per_round)
        for rank, e in enumerate(chosen):
            for h in e.hypotheses():
                if h in obs or h[0] not in LATE:
                    continue
                for key in ("surface", f"surface_rank{rank // 2 * 2 + 1}-{rank // 2 * 2 + 2}"):
                    cnt[key][0] += h in hid
                    cnt[key][1] += 1
    result = {sp: {k: {"hidden": v[0], "transferred": v[1],
                       "precision": round(v[0] / v[1], 4) if v[1] else None}
                   for k, v in sorted(c.items())} for sp, c in sorted(out.items())}
    result["command"] = "python benchmarks/foresight_factor_precision.py"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for sp in ("dev", "test"):
        for k, v in result[sp].items():
            print(f"{sp:4s} {k:22s} {v['hidden']:4d}/{v['transferred']:5d} "
                  f"precision {v['precision']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
