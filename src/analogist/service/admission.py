"""Admission for the HTTP service's heavy requests (find, map, foresight, check).

A fixed number of them run at once — one per core by default: they are CPU-bound Python, so
more at a time only share the same cores and all finish later — and a bounded number wait, in
arrival order, for a free slot. A request that finds the queue full is refused at once (the
server answers 503 with ``Retry-After``) instead of piling up behind the others.

Admitted work runs on the admission's own pool of ``workers`` threads (:meth:`Admission.run`),
not on whichever of the server's many request threads took the request: the application keeps
one store connection and one retriever (with its stage-1 index) per thread, so a few long-lived
threads keep a few warm indexes instead of dozens of cold ones rebuilt as requests land on new
threads.

:meth:`Admission.counts` also sums, over the requests run, the seconds they waited for a slot,
the seconds they then took, and the CPU seconds their pool thread spent on them: where a lane's
time goes (waiting in line, or working, or held off the CPU by other threads of the process).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

__all__ = ["Admission", "Busy", "default_workers"]


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not every platform has affinity
        return max(1, os.cpu_count() or 1)


class Busy(Exception):  # noqa: N818 - a state, not a bug
    """The queue is full; try again after :attr:`retry_after` seconds."""

    def __init__(self, retry_after: int, waiting: int) -> None:
        super().__init__(f"{waiting} requests are already waiting")
        self.retry_after = retry_after
        self.waiting = waiting


class Admission:
    """``workers`` slots and a first-come-first-served queue of at most ``queue`` waiters."""

    def __init__(self, workers: int | None = None, queue: int = 256,
                 name: str = "analogist-heavy") -> None:
        self.workers = default_workers() if workers is None else int(workers)
        self.queue = int(queue)
        if self.workers < 1 or self.queue < 0:
            raise ValueError("workers must be >= 1 and queue >= 0")
        self._lock = threading.Lock()
        self._running = 0
        self._waiting: deque[threading.Event] = deque()
        self._pool = ThreadPoolExecutor(max_workers=self.workers,
                                        thread_name_prefix=name)
        self._done = 0
        self._refused = 0
        self._wait_s = 0.0
        self._run_s = 0.0
        self._cpu_s = 0.0

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"workers": self.workers, "running": self._running,
                    "waiting": len(self._waiting), "queue": self.queue}

    def counts(self) -> dict[str, int | float]:
        """Requests admitted and finished, and requests refused, since the start; and, summed
        over the requests :meth:`run` ran, the seconds they waited for a slot (``wait_s``), the
        seconds from their slot to their answer (``run_s``) and the CPU seconds of the thread
        that ran them (``cpu_s``)."""
        with self._lock:
            return {"done": self._done, "refused": self._refused,
                    "wait_s": round(self._wait_s, 6), "run_s": round(self._run_s, 6),
                    "cpu_s": round(self._cpu_s, 6)}

    def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on one of the pool's threads once a slot is free; raises :class:`Busy`
        when the queue is full (``fn`` then never runs). Its exceptions propagate."""
        asked = time.perf_counter()
        with self.slot():
            admitted = time.perf_counter()
            try:
                return self._pool.submit(self._timed, fn).result()
            finally:
                ended = time.perf_counter()
                with self._lock:
                    self._wait_s += admitted - asked
                    self._run_s += ended - admitted

    def _timed(self, fn: Callable[[], T]) -> T:
        start = time.thread_time()
        try:
            return fn()
        finally:
            spent = time.thread_time() - start
            with self._lock:
                self._cpu_s += spent

    def close(self) -> None:
        """Stop the pool's threads once the work in hand is done."""
        self._pool.shutdown(wait=True)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one slot for the block; raises :class:`Busy` when the queue is full."""
        with self._lock:
            if self._running < self.workers and not self._waiting:
                self._running += 1
                turn = None
            elif len(self._waiting) >= self.queue:
                self._refused += 1
                raise Busy(1, len(self._waiting))
            else:
                turn = threading.Event()
                self._waiting.append(turn)
        if turn is not None:
            turn.wait()  # the slot is handed over by the request that frees it
        try:
            yield
        finally:
            with self._lock:
                self._done += 1
                if self._waiting:
                    self._waiting.popleft().set()  # the slot passes on; _running unchanged
                else:
                    self._running -= 1
