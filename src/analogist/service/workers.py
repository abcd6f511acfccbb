"""Several worker processes serving one store on one port: ``analogist serve --workers N``.

The finds, maps, foresight briefs and checks are CPU-bound Python, and one process runs Python
on one core at a time; so the server can run as ``N`` processes. The supervisor (the process
``analogist serve`` starts as) creates and migrates the store, binds one listening socket and
starts ``N`` worker processes (``spawn``: each imports the application afresh, none inherits
the supervisor's threads) that all accept connections from that socket; the kernel hands each
new connection to one of them. Each worker is a whole server — its own application layer,
store connections, admission lane, rate limiter and metrics — so ``/v1/metrics`` and the heavy
lane describe the worker that answered (named in the ``X-Analogist-Worker`` header and in
``/v1/health``), and a rate limit applies per worker. Background jobs and viewer sessions are kept
in the store (:mod:`analogist.memory.service_state`): every worker answers for a job another one
runs, and knows every session.

The store is what they share (and through it, jobs and sessions). SQLite in WAL mode lets readers run beside the one writer;
every write is one ``BEGIN IMMEDIATE`` transaction that waits up to 30 s for another
process's write lock, so writes from all workers are serialised and none is half-applied (a
write that still finds the lock taken is refused with 503 and ``Retry-After``, and leaves the
store unchanged). Each worker's stage-1 index follows the store through the namespace's
generation counter, which the store's triggers bump in the same transaction as every write:
a find in one worker sees the episodes another worker stored.

Each worker gets the same share of the cores for its heavy-request lane, and OpenBLAS runs one
thread per call (:func:`limit_blas_threads`; the requests are the parallelism): with a BLAS
thread per core in every worker, two workers on two cores ran a sixth of the requests one
worker did, their BLAS threads spinning against each other. Each worker, like a single-process
server, runs Python's collector under :class:`~analogist.service.runtime.CollectorPolicy`
(what survives a full collection is frozen, so that the next ones scan only what is new).

SIGINT or SIGTERM stops every worker (each finishes the requests in hand) and then the
supervisor; a worker whose supervisor is gone (killed outright) stops itself the same way. A worker that exits on its own — killed, crashed — is reported on standard error
with its pid and exit status, and another takes its place; a worker that fails before it
serves (a broken store, say) stops the whole server with that failure as its message.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, TextIO

import uvicorn

from analogist.errors import AnalogistError
from analogist.service.admission import default_workers
from analogist.service.runtime import CollectorPolicy

__all__ = ["MAX_WORKERS", "ServeOptions", "Supervisor", "limit_blas_threads", "parse_workers"]

MAX_WORKERS = 64
STOP_GRACE = 30.0
"""Seconds a worker has to finish its requests after SIGTERM before it is killed."""


def parse_workers(value: str | int) -> int:
    """A ``--workers`` value: a whole number from 1 to :data:`MAX_WORKERS`, or ``auto`` (one
    per core this process may run on)."""
    text = str(value).strip().lower()
    if text == "auto":
        return min(MAX_WORKERS, default_workers())
    if not text.isdigit() or not 1 <= int(text) <= MAX_WORKERS:
        raise AnalogistError(f"--workers must be a whole number from 1 to {MAX_WORKERS} or "
                             f"'auto', not {str(value)[:40]!r}")
    return int(text)


@dataclass(frozen=True)
class ServeOptions:
    """What every worker serves with (passed to each worker process)."""

    store: str
    host: str = "127.0.0.1"
    port: int = 8765
    max_body_bytes: int = 1_000_000
    rate_per_minute: float = 600.0
    log_level: str = "warning"


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` for the workers to share."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as e:
        sock.close()
        raise AnalogistError(f"cannot listen on {host}:{port}: {e.strerror or e}",
                             field="port") from None
    sock.set_inheritable(True)
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server, telling the supervisor once it serves."""

    def __init__(self, config: uvicorn.Config, ready: Any) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._ready.set()


def _worker_main(index: int, count: int, sock: socket.socket, opts: ServeOptions,
                 heavy: int, ready: Any, create_app: Callable[..., Any]) -> None:
    """One worker process: the whole app over the shared socket until SIGINT/SIGTERM."""
    try:
        app = create_app(opts.store, max_body_bytes=opts.max_body_bytes,
                         rate_per_minute=opts.rate_per_minute, workers=heavy,
                         worker=(index, count))
    except AnalogistError as e:
        print(f"analogist serve: worker {index}: {e}", file=sys.stderr, flush=True)
        sys.exit(3)
    limit_blas_threads(1)
    CollectorPolicy().install()
    threading.Thread(target=_stop_with_parent, name="analogist-parent-watch",
                     daemon=True).start()
    _Server(uvicorn.Config(app, log_level=opts.log_level, lifespan="on"), ready).run(
        sockets=[sock])


def limit_blas_threads(n: int) -> list[str]:
    """Set the thread count of every OpenBLAS loaded in this process (numpy's and scipy's
    builds, whatever their symbol prefix) to ``n``; the files limited. Linux only (it finds
    the libraries in ``/proc/self/maps``); elsewhere, or with another BLAS, nothing changes."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            libs = sorted({ln.split()[-1] for ln in f
                           if "openblas" in ln.split()[-1].lower() and ".so" in ln})
    except OSError:
        return []
    done = []
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("openblas_set_num_threads", "openblas_set_num_threads64_",
                     "scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn(ctypes.c_int(n))
                done.append(path)
                break
    return done


def _stop_with_parent() -> None:
    """Stop this worker (as SIGTERM would) once the supervisor is gone, even if it was killed
    without stopping its workers."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        wait([parent.sentinel])
        os.kill(os.getpid(), signal.SIGTERM)


def _status(code: int | None) -> str:
    if code is None:
        return "is running"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


@dataclass
class _Worker:
    index: int
    process: Any
    ready: Any


class Supervisor:
    """Runs ``workers`` worker processes over one listening socket until SIGINT/SIGTERM.

    Args:
        opts: what the workers serve.
        workers: the number of worker processes (>= 1).
        create_app: builds a worker's ASGI app (:func:`analogist.server.create_app`; passed
            to each worker process by reference, so it must be a module-level function).
        err: where the supervisor reports (workers starting, dying, stopping).
        prepare: run once before any worker starts (creates and migrates the store).
    """

    def __init__(self, opts: ServeOptions, workers: int, create_app: Callable[..., Any], *,
                 err: TextIO | None = None, prepare: Callable[[], None] | None = None) -> None:
        self.opts = opts
        self.create_app = create_app
        self.count = parse_workers(workers)
        self.err = err or sys.stderr
        self.prepare = prepare
        # one heavy thread per core, shared out among the workers
        self.heavy = max(1, default_workers() // self.count)
        self._ctx = multiprocessing.get_context("spawn")
        self._stop: int | None = None
        self.deaths = 0

    def _say(self, msg: str) -> None:
        print(f"analogist serve: {msg}", file=self.err, flush=True)

    def _start(self, index: int, sock: socket.socket) -> _Worker:
        ready = self._ctx.Event()
        p = self._ctx.Process(target=_worker_main, name=f"analogist-worker-{index}",
                              args=(index, self.count, sock, self.opts, self.heavy, ready,
                                    self.create_app))
        p.start()
        return _Worker(index, p, ready)

    def _on_signal(self, sig: int, _frame: Any) -> None:
        self._stop = sig

    def run(self) -> int:
        """Serve until a stop signal (exit status 0) or a worker that fails before it serves
        (1). Raises :class:`AnalogistError` when the port cannot be bound."""
        if self.prepare is not None:
            self.prepare()
        sock = listen(self.opts.host, self.opts.port)
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        pool: list[_Worker] = []
        status = 0
        try:
            pool = [self._start(i, sock) for i in range(self.count)]
            self._say(f"{self.count} workers (pids "
                      f"{', '.join(str(w.process.pid) for w in pool)}) on "
                      f"http://{self.opts.host}:{self.opts.port}")
            while self._stop is None:
                wait([w.process.sentinel for w in pool], timeout=0.5)
                for i, w in enumerate(pool):
                    code = w.process.exitcode
                    if code is None or self._stop is not None:
                        continue
                    w.process.join()
                    if not w.ready.is_set():
                        self._say(f"worker {w.index} (pid {w.process.pid}) {_status(code)} "
                                  "before it served; stopping")
                        status = 1
                        self._stop = signal.SIGTERM
                        break
                    self.deaths += 1
                    pool[i] = self._start(w.index, sock)
                    self._say(f"worker {w.index} (pid {w.process.pid}) {_status(code)}; "
                              f"started worker {w.index} again (pid {pool[i].process.pid})")
        finally:
            self._shutdown(pool)
            sock.close()
            for s, h in old.items():
                signal.signal(s, h)
        if status == 0:
            self._say("stopped")
        return status

    def _shutdown(self, pool: list[_Worker]) -> None:
        """SIGTERM to every live worker, then wait for each (SIGKILL after the grace)."""
        for w in pool:
            if w.process.exitcode is None and w.process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(w.process.pid, signal.SIGTERM)
        for w in pool:
            w.process.join(STOP_GRACE)
            if w.process.exitcode is None:
                self._say(f"worker {w.index} (pid {w.process.pid}) did not stop within "
                          f"{STOP_GRACE:g} s; killing it")
                w.process.kill()
                w.process.join()

