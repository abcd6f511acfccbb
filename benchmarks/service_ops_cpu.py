"""CPU per operation of the service's varied mix, in one process (issue 19): the thread CPU time
of an add, a find given a fresh signature inline and a find of a stored episode by id, over a
store grown to ``--preload`` varied episodes, with the answers' digest and the CPU of reading a
stored row back (``get_many`` over up to 1,000 rows, best of five).

The operations are those of ``benchmarks/service_load.py --targets varied`` (its
``varied_signature``), run one after another through the application layer (no HTTP, no
queueing), so the figures are CPU the server spends per request whatever the machine's load.
Before each find by id the process's text caches are emptied, as in a server worker that did not
write the target itself. BLAS runs on one thread, as in ``analogist serve``. ``--src`` takes
several source trees, run one after another in fresh processes (an A/B at the same time):

    python benchmarks/service_ops_cpu.py --src /tmp/base/src src --preload 1500 --ops 100

The CPU of Python's cyclic collector during the measured rounds is reported beside them (per
generation, from ``gc.callbacks``: the thread CPU of each pass, and the longest full pass).
``--collector`` runs each tree under CPython's default collector (``default``) and/or under the
policy a serving process installs (``policy``: :class:`analogist.service.runtime.
CollectorPolicy`, installed after the warm-up find; a tree without it is refused):

    python benchmarks/service_ops_cpu.py --src src --collector default policy --ops 150
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _cpu_of(fn: Any) -> float:
    t = time.thread_time()
    fn()
    return time.thread_time() - t


class _CollectorClock:
    """The thread CPU of the collector's passes, per generation, while installed."""

    def __init__(self) -> None:
        self.cpu = [0.0, 0.0, 0.0]
        self.passes = [0, 0, 0]
        self.longest_full = 0.0
        self._started: list[float] = []

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started.append(time.thread_time())
        elif self._started:
            g, spent = info["generation"], time.thread_time() - self._started.pop()
            self.cpu[g] += spent
            self.passes[g] += 1
            if g == 2:
                self.longest_full = max(self.longest_full, spent)


def _one(preload: int, ops: int, seed: int, collector: str = "default") -> dict[str, Any]:
    """The measurement, in this process (its ``analogist`` from ``sys.path``)."""
    sys.path.insert(0, str(HERE))
    from service_load import varied_signature

    import analogist
    from analogist.app import Analogist, Settings
    from analogist.casebook import load_casebook
    from analogist.index.embed import use as use_mod
    from analogist.service.workers import limit_blas_threads

    limit_blas_threads(1)
    sigs = [e.signature.to_data() for e in load_casebook() if not e.is_decoy]
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="analogist-ops-") as d:
        a = Analogist(Settings.from_env(store=str(Path(d) / "s.db"), llm=False))
        a.add_many(sigs, namespace="load")
        a.add_many([varied_signature(rng.choice(sigs), rng, f"pre{i}") for i in range(preload)],
                   namespace="load")
        ids = [s["episode_id"] for s in sigs] + [f"pre{i}" for i in range(preload)]
        a.find(ids[0], namespace="load")   # warm: the model, the index, the caches
        if collector == "policy":
            from analogist.service.runtime import CollectorPolicy

            CollectorPolicy().install()
        clock = _CollectorClock()
        gc.callbacks.append(clock)

        def forget_texts() -> None:
            use_mod._text_cache(1).vectors.clear()
            for r in a._local.retrievers.values():
                r._query_vecs.clear()

        def key(res: Any) -> dict[str, Any]:
            return {k: v for k, v in res.to_json().items() if k not in ("timings_ms", "log_id")}

        spent = {"add": 0.0, "find_inline": 0.0, "find_by_id": 0.0}
        answers = []
        for i in range(ops):
            sig = varied_signature(rng.choice(sigs), rng, f"w{i}")
            t = time.thread_time()
            a.add(sig, namespace="load")
            spent["add"] += time.thread_time() - t
            ids.append(f"w{i}")
            q = varied_signature(rng.choice(sigs), rng, f"p{i}")
            t = time.thread_time()
            res = a.find(q, namespace="load", k=5)
            spent["find_inline"] += time.thread_time() - t
            answers.append(key(res))
            eid = ids[rng.randrange(len(ids))]
            forget_texts()
            t = time.thread_time()
            res = a.find(eid, namespace="load", k=5)
            spent["find_by_id"] += time.thread_time() - t
            answers.append(key(res))
        gc.callbacks.remove(clock)
        # reading stored rows back (the candidate stage's read of episodes it has not cached)
        m = a.memory()
        rows = [r.id for r in m.list("load", include_superseded=True, limit=1000)]
        best = min(_cpu_of(lambda: m.get_many(rows, "load")) for _ in range(5))
        a.close()
    return {"analogist": str(Path(analogist.__file__).parent.parent),
            "rows_at_end": len(ids),
            "collector": collector,
            "cpu_ms_per_op": {k: round(v / ops * 1000, 2) for k, v in spent.items()},
            "collector_cpu_ms_per_round": {f"gen{g}": round(clock.cpu[g] / ops * 1000, 3)
                                           for g in range(3)},
            "collector_passes": {f"gen{g}": clock.passes[g] for g in range(3)},
            "longest_full_pass_ms": round(clock.longest_full * 1000, 1),
            "stored_row_read_us": round(best / len(rows) * 1e6, 1),
            "answers_sha256": hashlib.sha256(json.dumps(answers, sort_keys=True).encode()
                                             ).hexdigest()[:16]}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", nargs="+", default=["src"],
                    help="source trees (src directories) to measure, one after another")
    ap.add_argument("--preload", type=int, default=1500,
                    help="varied episodes stored before the measured operations")
    ap.add_argument("--ops", type=int, default=100, help="measured rounds (add + two finds)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1, help="repeat the set of trees")
    ap.add_argument("--collector", nargs="+", choices=("default", "policy"),
                    default=["default"], help="the collector each tree runs under "
                    "(several: one after another)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.preload < 0 or a.ops < 1:
        ap.error("--preload must be >= 0 and --ops >= 1")
    if a.child:
        print(json.dumps(_one(a.preload, a.ops, a.seed, a.collector[0])))
        return {}
    runs = []
    for _ in range(a.rounds):
        for src, collector in [(x, c) for x in a.src for c in a.collector]:
            if not (Path(src) / "analogist" / "__init__.py").is_file():
                ap.error(f"--src {src}: no analogist package there")
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [str(Path(src).resolve()), *filter(None, [os.environ.get("PYTHONPATH")])]),
                OPENBLAS_NUM_THREADS="1")
            env = {k: v for k, v in env.items()
                   if not (k.startswith("ANALOGIST_") and k.endswith(("_BASE_URL", "_MODEL")))}
            out = subprocess.run([sys.executable, __file__, "--child", "--preload",
                                  str(a.preload), "--ops", str(a.ops), "--seed", str(a.seed),
                                  "--collector", collector],
                                 env=env, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                raise SystemExit(f"--src {src}: " + out.stderr.strip()[-2000:])
            run = {"src": src, **json.loads(out.stdout.strip().splitlines()[-1]),
                   "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()]}
            print(json.dumps(run))
            runs.append(run)
    res = {"command": "python benchmarks/service_ops_cpu.py " + " ".join(argv or sys.argv[1:]),
           "runs": runs}
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    main()
