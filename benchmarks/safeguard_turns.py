"""Verdict accuracy of the analogy safeguard on its hand-written turn sets.

A turn's verdict is right when the safeguard finds as many analogies as expected and each one's
pass/fail (and, for advisory entries, its grade) is the expected one. Two sets, both written by
hand for the tests (``tests/data/safeguard/``): ``turns.yaml`` (the original set) and
``claim_turns.yaml`` (the claim-reader set: cue-less causal similarities, keyword-stuffed ones,
restatements, negations, English and Chinese, strict and advisory). Deterministic path only (no
LLM, no text-encoded mapping). ``--show`` prints the readings of every wrong turn.

    python benchmarks/safeguard_turns.py [--show] [--json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.progress import track
from rich.table import Table

from analogist.safeguard import Safeguard, parse_turn

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "safeguard"
SETS = ("turns.yaml", "claim_turns.yaml")


def verdict_right(case: dict[str, Any], sg: Safeguard) -> tuple[bool, Any]:
    turn = case["text"] if "text" in case else parse_turn(case["turn"])
    r = sg.check(turn, mode=case.get("mode"))
    exp = case["expect"]["analogies"]
    if len(r.analogies) != len(exp):
        return False, r
    for a, e in zip(r.analogies, exp, strict=True):
        if a.passed is not e["pass"] or ("grade" in e and a.grade != e["grade"]):
            return False, r
    return True, r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="print the readings of wrong turns")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = ap.parse_args()
    con = Console(stderr=args.json)
    sg = Safeguard(encode_text=False)
    out: dict[str, Any] = {}
    for name in SETS:
        cases = yaml.safe_load((DATA / name).read_text(encoding="utf-8"))
        wrong = []
        for c in track(cases, description=name, console=con, transient=True):
            ok, rep = verdict_right(c, sg)
            if not ok:
                wrong.append(c["id"])
                if args.show:
                    con.print(f"[bold]{name} {c['id']}[/bold] expected "
                              f"{c['expect']['analogies']}")
                    for a in rep.analogies:
                        con.print(f"  pass={a.passed} grade={a.grade}")
                        for x in a.reasons:
                            con.print(f"    - {x}", markup=False)
        out[name] = {"turns": len(cases), "right": len(cases) - len(wrong), "wrong": wrong}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    t = Table(title="safeguard verdict accuracy (deterministic path)")
    for col in ("set", "turns", "right", "accuracy", "wrong"):
        t.add_column(col)
    for name, v in out.items():
        t.add_row(name, str(v["turns"]), str(v["right"]), f"{v['right'] / v['turns']:.1%}",
                  ", ".join(v["wrong"]) or "-")
    con.print(t)


if __name__ == "__main__":
    main()
