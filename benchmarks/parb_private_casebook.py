"""PARB on a private item set: the bundled casebook as "your own history", with the holdout rule.

Writes the casebook (60 real episodes, 15 decoys) into a fresh store, labels each real episode as
a target keyed to the other episodes of its mechanism (decoys with a mechanism of their own are
no-match targets), and runs the retrieval arms under the holdout rule (the target and everything
derived from it removed from the snapshot). Results: ``benchmarks/results/parb_private_casebook/``
(results.json, report.md). Development data: the casebook was written alongside the retriever.

    python benchmarks/parb_private_casebook.py [--arms B,C,D,E]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import warnings
from pathlib import Path

from analogist.bench.parb.private import run_private, write_casebook_private

OUT = Path(__file__).parent / "results" / "parb_private_casebook"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arms", default="B,C,D,E")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    arms = [x.strip() for x in a.arms.split(",") if x.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        spec = write_casebook_private(tmp)
        if OUT.exists():
            shutil.rmtree(OUT)
        res = run_private(spec, arms, out_dir=OUT)
        shutil.copy(spec, OUT / "casebook_private.yaml")
    (OUT / "per_item.jsonl").unlink(missing_ok=True)
    sp = res["splits"]["private"]
    for arm, m in sp["arms"].items():
        print(f"{arm:3s} NAV {m['nav']:+.3f} [{m['nav_ci'][0]:+.3f}, {m['nav_ci'][1]:+.3f}]  "
              f"recall@5 {m['recall_at_k_all']['5']:.3f}  no-match specificity "
              f"{m['no_match_specificity']}  U {m['U']} F {m['F']}")
    print(json.dumps({"wrote": str(OUT)}))


if __name__ == "__main__":
    main()
