"""Time the peer SME (PyPI ``structuremappingmemory``, module ``sma``) on cases read from stdin.

Runs inside the peer's own virtual environment (see ``benchmarks/README.md``); analogist is never
imported here, and ``structuremappingmemory`` is never a dependency of analogist.

stdin (JSON)::

    {"reps": 200, "warmup": 20, "canon": "default" | "neutral",
     "cases": [{"name": "...", "base": {"name": "...", "statements": [FORM, ...]},
                "target": {...}}]}

where FORM is a nested list ``["functor", arg, ...]`` and an ``arg`` is an entity name (string)
or another FORM. Each case's statements are the top-level expressions of an analogist
Description.

stdout (JSON)::

    {"package": "structuremappingmemory", "version": "...",
     "results": [{"name": "...", "median_s": 0.001, "min_s": ..., "cpu_median_s": ...,
                  "cpu_min_s": ..., "reps": 200, "score": 11.4,
                  "entity_pairs": [["beaker", "coffee"], ...], "error": null}]}
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from importlib.metadata import version
from typing import Any

from sma.ir.canon import Canonicalizer, default_canonicalizer
from sma.ir.schema import Entity, Statement, make_case
from sma.match.engine import match_cases


def to_node(x: Any) -> Any:
    if isinstance(x, list):
        return Statement(str(x[0]), tuple(to_node(a) for a in x[1:]))
    return Entity(str(x))


def to_case(desc: dict[str, Any]) -> Any:
    return make_case([to_node(f) for f in desc["statements"]], case_id=desc["name"])


def run_case(case: dict[str, Any], reps: int, warmup: int, canon: Canonicalizer) -> dict[str, Any]:
    out: dict[str, Any] = {"name": case["name"], "error": None}
    try:
        base, target = to_case(case["base"]), to_case(case["target"])
        gmap = None
        for _ in range(warmup):
            gmap = match_cases(base, target, canon=canon)
        times = []
        cpu = []
        for _ in range(reps):
            c0 = time.process_time()
            t0 = time.perf_counter()
            gmap = match_cases(base, target, canon=canon)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        assert gmap is not None
        out.update(
            median_s=statistics.median(times),
            min_s=min(times),
            cpu_median_s=statistics.median(cpu),
            cpu_min_s=min(cpu),
            reps=reps,
            score=gmap.score,
            normalized_score=gmap.normalized_score,
            entity_pairs=[[h.base.name, h.target.name] for h in gmap.hypotheses
                          if isinstance(h.base, Entity) and isinstance(h.target, Entity)],
        )
    except Exception as e:  # report, don't die: one bad case must not lose the others
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def main() -> None:
    job = json.load(sys.stdin)
    canon = Canonicalizer() if job.get("canon") == "neutral" else default_canonicalizer()
    reps, warmup = int(job.get("reps", 200)), int(job.get("warmup", 20))
    results = [run_case(c, reps, warmup, canon) for c in job["cases"]]
    json.dump({"package": "structuremappingmemory", "version": version("structuremappingmemory"),
               "python": sys.version.split()[0], "canon": job.get("canon", "default"),
               "results": results}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
