"""Leave-one-out retrieval on the bundled casebook: structural MAC/FAC vs a surface baseline.

Run:  python benchmarks/casebook_loo.py [--no-baseline] [--out benchmarks/results/casebook_loo.json]

Every real casebook episode is taken out in turn and used as the target against the rest of the
casebook (decoys included). Relevant = the other episodes of its mechanism. The structural arm is
analogist's retriever (content vectors + WL fingerprint, SME on a shortlist of 20, the judge); the
surface arm ranks by the cosine of the default embedder on the L0 narrative plus entity names.
Both arms see the same targets (paired); McNemar on hit@5. The casebook is development data.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from analogist import __version__
from analogist.bench.loo import Entry, leave_one_out
from analogist.casebook import load_casebook

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-baseline", action="store_true", help="skip the surface arm")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "casebook_loo.json")
    ap.add_argument("--sweep", type=float, nargs="*", default=[0.0, 0.25, 0.5, 1.0],
                    help="w_embedding values tried with the level-embedding channel on "
                         "(development data: this is where the default weight is chosen)")
    args = ap.parse_args(argv)
    console = Console()
    entries = [Entry(c.id, c.mechanism, c.domain, c.decoy_of is not None, c.signature)
               for c in load_casebook()]
    embed = None
    embedder_name = None
    if not args.no_baseline:
        from analogist.index.embed import default_embedder

        emb = default_embedder()
        embed, embedder_name = emb.embed, emb.name
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("leave-one-out", total=None)
        res = leave_one_out(entries, embed=embed,
                            progress=lambda n, t: bar.update(task, completed=n, total=t))
    sweep = []
    if args.sweep and not args.no_baseline:
        from analogist.retrieve import RetrieveParams

        for w in args.sweep:
            r = leave_one_out(entries, level_embedder=emb,
                              params=RetrieveParams(k=10, shortlist=20, w_embedding=w))
            sweep.append({"w_embedding": w, **r["structural"],
                          "decoy_transfers": r["decoy_transfers"]})
            console.print(f"w_embedding={w}: " + ", ".join(
                f"{k} {r['structural'][k]:.3f}" for k in ("hit@5", "recall@5", "mrr",
                                                          "relevant_above_decoys")))
    res["embedding_sweep"] = sweep
    t = Table(title=f"casebook leave-one-out: {res['targets']} targets, {res['decoys']} decoys "
                    "(development data)", title_justify="left")
    t.add_column("arm")
    for k in ("hit@5", "recall@5", "mrr", "relevant_above_decoys"):
        t.add_column(k, justify="right")
    for arm in ("structural", "surface"):
        if arm in res:
            t.add_row(arm, *(f"{res[arm][k]:.3f}" for k in ("hit@5", "recall@5", "mrr",
                                                             "relevant_above_decoys")))
    console.print(t)
    console.print(f"decoy transfers (judge, every decoy x every target): "
                  f"{res['decoy_transfers']} of {res['decoy_judgements']}")
    if "mcnemar_hit@5" in res:
        m = res["mcnemar_hit@5"]
        console.print(f"McNemar on hit@5: structural-only {m['structural_only']}, surface-only "
                      f"{m['surface_only']}, exact p = {m['p_value']:.4g}")
    report = {"benchmark": "casebook_loo", "date": dt.datetime.now(dt.UTC).isoformat(
        timespec="seconds"), "analogist_version": __version__,
        "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
        "surface_embedder": embedder_name, "data": "bundled casebook (development data)",
        **res}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
