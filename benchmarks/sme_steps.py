"""Where an SME match spends its time: CPU time per pipeline step on the three families of
``sme_speed.py`` (heat-water; 24 compiled random Signatures; 24 dense random pairs).

Runs the steps of :func:`analogist.sme.match` one by one, timing each with ``time.process_time``
(summed over many repetitions); then the whole ``match`` again, whose excess over the steps is
the driver and the result objects (a difference of two timings: noisy), and reading the lazily
computed candidate inferences and alignable differences. Prints a table of milliseconds per match
and shares; shares are the robust number on a shared machine. Run: ``python
benchmarks/sme_steps.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sme_speed  # noqa: E402  (the benchmark families)

from analogist.examples import load_example  # noqa: E402
from analogist.sme import SMEParams, match  # noqa: E402
from analogist.sme.core import (  # noqa: E402
    build_match_hypotheses,
    evaluate,
    kernel_roots,
    propagate_consistency,
)
from analogist.sme.merge import greedy_merge, kernel_mappings, rescore_mapping  # noqa: E402

STEPS = ("1 match hypotheses", "2 structural consistency", "3 kernels", "4 trickle-down",
         "5 greedy merge", "6 rescoring", "match() minus steps 1–6 (driver, results)",
         "7–8 read inferences, differences")


def families(seed: int) -> dict[str, list]:
    rng = random.Random(seed)
    vocab = sme_speed.random_vocabulary()
    sig = [sme_speed.signature_pair(rng, i) for i in range(24)]
    dense = [sme_speed.random_pair(rng, i, vocab) for i in range(24)]
    return {"heat-water": [load_example("heat-water")],
            "signature": [(c.base, c.target) for c in sig],
            "dense": [(c.base, c.target) for c in dense]}


def profile(pairs: list, reps: int, params: SMEParams) -> dict[str, float]:
    clock = time.process_time
    acc = dict.fromkeys(STEPS, 0.0)
    for _ in range(reps):
        for base, target in pairs:
            t0 = clock()
            H = build_match_hypotheses(base, target)
            t1 = clock()
            propagate_consistency(H)
            t2 = clock()
            roots = kernel_roots(H)
            t3 = clock()
            evaluate(H, params)
            t4 = clock()
            state = kernel_mappings(H, roots)
            t5 = clock()
            chosen = greedy_merge(state, params)
            t6 = clock()
            for mp in chosen:
                rescore_mapping(state, mp, params)
            t7 = clock()
            res = match(base, target, params)  # the whole pipeline again, for the results' share
            t8 = clock()
            for m in res.mappings:
                _ = m.inferences, m.alignable_differences
            t9 = clock()
            steps = t7 - t0
            for name, dt in zip(STEPS, (t1 - t0, t2 - t1, t3 - t2 + t5 - t4, t4 - t3, t6 - t5,
                                        t7 - t6, max(0.0, (t8 - t7) - steps), t9 - t8),
                                strict=True):
                acc[name] += dt
    n = reps * len(pairs)
    return {k: v / n for k, v in acc.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1, help="multiply the repetitions")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args(argv)
    reps = {"heat-water": 1000, "signature": 30, "dense": 10}
    table = Table(title="SME: CPU ms per match, per step (share)")
    table.add_column("step")
    rows: dict[str, list[str]] = {s: [] for s in [*STEPS, "total"]}
    for fam, pairs in families(args.seed).items():
        table.add_column(fam, justify="right")
        got = profile(pairs, reps[fam] * args.rounds, SMEParams())
        total = sum(got.values())
        for s, v in got.items():
            rows[s].append(f"{v * 1e3:.3f} ({100 * v / total:.0f}%)")
        rows["total"].append(f"{total * 1e3:.3f}")
    for s, cells in rows.items():
        table.add_row(s, *cells)
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
