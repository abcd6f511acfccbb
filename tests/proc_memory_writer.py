"""A writer process for tests/test_memory.py: adds batches to a Memory, reporting on stdout.

usage: python proc_memory_writer.py STORE MODE BATCHES BATCH_SIZE [STALL_BATCH STALL_SECONDS]

MODE ``stall``: batch STALL_BATCH stops half-way through its transaction, prints ``inside`` and
sleeps STALL_SECONDS (the test kills it there, or reads meanwhile). MODE ``loop``: no stall.
After each committed batch it prints ``committed B``. Environment: ``WRITER_PREFIX`` (default
empty) prefixes the episode ids, so that several writers can share a namespace.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from analogist.memory import Memory, is_postgres_url
from analogist.signature import validate_signature


def record(b: int, i: int) -> Any:
    return validate_signature({
        "episode_id": f"{os.environ.get('WRITER_PREFIX', '')}b{b}_{i}", "kind": "failure",
        "roles": {"A": "a", "B": "b"},
        "relations": [["derives_from", "A", "B"], [f"p{i % 5}", "A"]],
        "causal_chain": [[f"p{i % 5}(A)", "causes", "stale(B)"]],
    })


def main() -> None:
    db, mode, batches, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    stall_batch = int(sys.argv[5]) if len(sys.argv) > 5 else -1
    stall_s = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
    state = {"batch": 0}

    if is_postgres_url(db):
        from analogist.memory.postgres import PgMemory as base
    else:
        base = Memory

    class Stalling(base):  # type: ignore[misc, valid-type]
        def _insert_batch(self, batch: Any, namespace: str, now: str) -> list[int]:
            if mode != "stall" or state["batch"] != stall_batch:
                return super()._insert_batch(batch, namespace, now)
            # half the batch written inside its transaction, then stop there
            sids = super()._insert_batch(batch[: size // 2], namespace, now)
            print("inside", flush=True)
            time.sleep(stall_s)
            return sids + super()._insert_batch(batch[size // 2:], namespace, now)

    with Stalling.open(db) as mem:
        for b in range(batches):
            state["batch"] = b
            mem.add_many([record(b, i) for i in range(size)], namespace="w", batch_size=size)
            print(f"committed {b}", flush=True)


if __name__ == "__main__":
    main()
