"""Driving ``tests/proc_memory_writer.py`` from a test: start it, follow its lines, kill it.

One copy for the store suite (``test_memory``) and the partitioned store (``test_pg_partition``):
a writer process that commits batches and reports each step on stdout, so a test can SIGKILL it
at a known point (inside an uncommitted batch) and then count what the store kept.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

WRITER = Path(__file__).resolve().parent / "proc_memory_writer.py"


def spawn_writer(store: str | Path, *args: Any) -> subprocess.Popen[str]:
    """Start the writer on ``store`` with its mode and arguments (see proc_memory_writer.py)."""
    env = {**os.environ, "PYTHONPATH": str(WRITER.parent.parent)}
    return subprocess.Popen([sys.executable, str(WRITER), str(store), *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_for(proc: subprocess.Popen[str], line: str) -> list[str]:
    """Read the writer's lines up to and including ``line``; fail if it ends first."""
    seen = []
    assert proc.stdout is not None
    for raw in proc.stdout:
        seen.append(raw.strip())
        if seen[-1] == line:
            return seen
    raise AssertionError(f"writer ended before {line!r}: {seen}; "
                         f"{proc.stderr.read() if proc.stderr else ''}")


def kill_inside_fourth_batch(store: str | Path, size: int) -> None:
    """Commit three batches of ``size``, then SIGKILL the writer inside the uncommitted fourth."""
    proc = spawn_writer(store, "stall", 10, size, 3, 60)
    try:
        seen = wait_for(proc, "inside")
        assert seen == ["committed 0", "committed 1", "committed 2", "inside"]
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def batches(mem: Any, namespace: str = "w") -> dict[int, int]:
    """Episodes per batch number in ``namespace`` (the writer names them ``<p><batch>_<i>``)."""
    out: dict[int, int] = {}
    for e in mem.list(namespace, include_superseded=True):
        b = int(e.episode_id[1:].split("_")[0])
        out[b] = out.get(b, 0) + 1
    return out
