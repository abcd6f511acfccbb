"""The encoder's cost on PARB: the same arms on the same items, oracle vs encoded signatures.

Runs ``run_parb`` twice on one generated item set (same seed, same items, same arms): once on the
generator's gold signatures ("oracle") and once with every episode re-written from its text alone
by the deterministic encoder ("encoded"). Per split and arm it reports both NAVs, the paired
difference encoded − oracle with a paired bootstrap 95% CI (items resampled, seed 000 §15), an
exact McNemar test on per-item correctness, and the stage metrics that locate the loss (role-
mapping F1, recall@5 on far items, d′, transfer accuracy). The gap is the encoder's cost.

Writes ``benchmarks/results/parb_encoded/`` (the encoded run's results.json, report.md, plots)
and ``benchmarks/results/parb_encoder_cost.json`` + ``parb_encoder_cost.png``.

    python benchmarks/parb_encoder_cost.py [--items 320] [--seed 1] [--arms B,C,D,E,G]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from rich.console import Console
from rich.table import Table

from analogist.bench.parb import stats as S
from analogist.bench.parb.runner import run_parb

RESULTS = Path(__file__).parent / "results"
METRICS = ("nav", "role_mapping_f1", "recall_at_5_far", "d_prime", "transfer_accuracy",
           "partial_transfer_balanced_accuracy", "useful_analogy_precision", "yield")


def _per_item(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "per_item.jsonl").read_text().splitlines()]


def _minimal_pairs(out: Path) -> dict[str, set[str]]:
    """Item id → the episode ids of its minimal-pair decoys (F2/F7 candidates labelled
    ``minimal_pair``, F3/F6/F8 pool entries with that role); items without one are left out."""
    found: dict[str, set[str]] = {}
    for line in (out / "items.jsonl").read_text().splitlines():
        item = json.loads(line)
        ids = {c["episode_id"] for c in item.get("candidates", [])
               if c.get("labels", {}).get("decoy") == "minimal_pair"}
        ids |= {c["episode_id"] for c in item.get("pool", [])
                if c.get("labels", {}).get("role") == "minimal_pair"}
        if ids:
            found[item["item_id"]] = ids
    return found


def _minimal_pair_acceptance(rows: list[dict], mps: dict[str, set[str]], arm: str) -> dict:
    """Of the items with a minimal-pair decoy, the share on which the arm proposed one of them
    (its chosen episode)."""
    sel = [r for r in rows if r["item_id"] in mps]
    acc = sum(1 for r in sel if r["arms"][arm].get("chosen") in mps[r["item_id"]])
    return {"items": len(sel), "accepted": acc, "rate": acc / len(sel) if sel else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=320)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--arms", default="B,C,D,E,G")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    arms = [x.strip() for x in a.arms.split(",") if x.strip()]
    from analogist.index.embed import default_embedder

    emb = default_embedder()
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    enc_dir = RESULTS / "parb_encoded"
    with tempfile.TemporaryDirectory() as tmp:
        ora_dir = Path(tmp) / "oracle"
        ora = run_parb(a.items, arms, representation="oracle", split="both", seed=a.seed,
                       out_dir=ora_dir, embedder=emb, write_report=False)
        enc = run_parb(a.items, arms, representation="encoded", split="both", seed=a.seed,
                       out_dir=enc_dir, embedder=emb)
        rows_o, rows_e = _per_item(ora_dir), _per_item(enc_dir)
        mps = _minimal_pairs(enc_dir)
        if mps != _minimal_pairs(ora_dir):
            raise SystemExit("error: the oracle and encoded runs generated different items")
    assert [r["item_id"] for r in rows_o] == [r["item_id"] for r in rows_e], "items differ"
    out: dict = {"command": "python benchmarks/parb_encoder_cost.py " + " ".join(sys.argv[1:]),
                 "items": a.items, "seed": a.seed, "arms": arms, "encoder": enc["encoder"],
                 "manifest_sha256": enc["manifest"].get("sha256"), "splits": {},
                 "definitions": {"minimal_pair_acceptance": " ".join(
                     (_minimal_pair_acceptance.__doc__ or "").split())},
                 "note": "paired: same items, same arms; dev = templates the encoder was tuned "
                         "on (development results), test = held-out templates"}
    with contextlib.suppress(OSError):
        out["git"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                    capture_output=True, text=True, check=False).stdout.strip()
    out["process_cpu_s"] = round(time.process_time() - t_cpu, 1)
    out["wall_s"] = round(time.perf_counter() - t_wall, 1)
    for sp in ("dev", "test"):
        so, se = ora["splits"][sp]["arms"], enc["splits"][sp]["arms"]
        ro = [r for r in rows_o if r["split"] == sp]
        re_ = [r for r in rows_e if r["split"] == sp]
        per = {}
        for arm in arms:
            co = [[r["arms"][arm][k] for k in ("U", "F", "N")] for r in ro]
            ce = [[r["arms"][arm][k] for k in ("U", "F", "N")] for r in re_]
            d = S.nav_difference_ci(ce, co, n_boot=2000, seed=a.seed)
            mc = S.mcnemar_from_outcomes([r["arms"][arm]["correct"] for r in re_],
                                         [r["arms"][arm]["correct"] for r in ro])
            per[arm] = {"oracle": {m: so[arm].get(m) for m in METRICS},
                        "encoded": {m: se[arm].get(m) for m in METRICS},
                        "nav_gap": {"estimate": d["estimate"], "ci": [d["lo"], d["hi"]]},
                        "minimal_pair_acceptance": {
                            "oracle": _minimal_pair_acceptance(ro, mps, arm),
                            "encoded": _minimal_pair_acceptance(re_, mps, arm)},
                        "mcnemar_encoded_vs_oracle": mc}
        out["splits"][sp] = {"n_items": len(ro), "arms": per}
    (RESULTS / "parb_encoder_cost.json").write_text(json.dumps(out, indent=1) + "\n",
                                                    encoding="utf-8")
    console = Console()
    for sp, s in out["splits"].items():
        t = Table(title=f"PARB {sp} ({s['n_items']} items): oracle vs encoded (deterministic)")
        for c in ("arm", "NAV oracle", "NAV encoded", "gap [95% CI]", "McNemar p",
                  "role-map F1 o/e", "recall@5 far o/e",
                  "min-pair accepted o/e"):
            t.add_column(c)
        for arm, v in s["arms"].items():
            o, e, g = v["oracle"], v["encoded"], v["nav_gap"]

            def f(x):
                return "—" if x is None else f"{x:.3f}"
            t.add_row(arm, f(o["nav"]), f(e["nav"]),
                      f"{g['estimate']:+.3f} [{g['ci'][0]:+.3f}, {g['ci'][1]:+.3f}]",
                      f"{v['mcnemar_encoded_vs_oracle']['p']:.3g}",
                      f"{f(o['role_mapping_f1'])}/{f(e['role_mapping_f1'])}",
                      f"{f(o['recall_at_5_far'])}/{f(e['recall_at_5_far'])}",
                      f"{f(v['minimal_pair_acceptance']['oracle']['rate'])}/"
                      f"{f(v['minimal_pair_acceptance']['encoded']['rate'])}")
        console.print(t)
    _plot(out)
    console.print(f"wrote {RESULTS / 'parb_encoder_cost.json'} and {enc_dir}/")


def _plot(out: dict) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, (sp, s) in zip(axes, out["splits"].items(), strict=True):
        arms = list(s["arms"])
        x = np.arange(len(arms))
        o = [s["arms"][a]["oracle"]["nav"] for a in arms]
        e = [s["arms"][a]["encoded"]["nav"] for a in arms]
        ax.bar(x - 0.2, o, 0.4, label="oracle signatures")
        ax.bar(x + 0.2, e, 0.4, label="encoded (deterministic)")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(x, arms)
        ax.set_title(f"{sp}: NAV by arm ({s['n_items']} items)")
    axes[0].set_ylabel("NAV")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "parb_encoder_cost.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
