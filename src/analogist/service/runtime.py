"""Runtime pieces of the HTTP service: the request-size limit (an ASGI middleware), a per-key
rate limiter (token bucket), request metrics, a background job runner (its jobs kept in
the store, for every worker process to answer for, when it is given one), and the server
process's policy for Python's cyclic garbage collector (:class:`CollectorPolicy`)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import secrets
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from analogist.errors import AnalogistError
from analogist.io import MAX_DEPTH, json_depth_check

__all__ = ["LOST", "BodyLimit", "CollectorPolicy", "Jobs", "Metrics", "RateLimiter"]


def _json_response_parts(status: int, payload: dict[str, Any],
                         headers: tuple[tuple[bytes, bytes], ...] = ()) -> tuple[dict, dict]:
    body = json.dumps(payload).encode()
    start = {"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode()), *headers]}
    return start, {"type": "http.response.body", "body": body}


class BodyLimit:
    """ASGI middleware: refuse request bodies over ``max_bytes`` with 413 and a JSON message,
    before any handler (and so any store write) runs. Checks ``Content-Length`` up front and
    counts streamed bytes (chunked uploads) as they arrive. A JSON body (or one without a
    content type, which the framework reads as JSON) nested deeper than ``max_depth`` levels
    is refused with 400 naming the line, before any parser recurses into it."""

    def __init__(self, app: Any, max_bytes: int, max_depth: int = MAX_DEPTH) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    def _too_deep(self, scope: dict, body: bytes) -> dict[str, Any] | None:
        ctype = b""
        for k, v in scope.get("headers", ()):
            if k == b"content-type":
                ctype = v.lower()
        if not body or ctype.startswith((b"application/x-www-form-urlencoded",
                                         b"multipart/")):
            return None
        try:
            json_depth_check(body.decode("utf-8", errors="replace"), max_depth=self.max_depth)
        except AnalogistError as e:
            return {"error": {"type": "malformed_json", "field": "body",
                              "message": f"the request body is {e.message} (line {e.line})"}}
        return None

    def _message(self, got: str) -> dict[str, Any]:
        return {"error": {"type": "request_too_large", "field": "body",
                          "message": f"request body is {got}; the limit is {self.max_bytes} "
                                     "bytes (start the server with a larger --max-body, or "
                                     "split a bulk request)"}}

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    n = int(v)
                except ValueError:
                    n = -1
                if n > self.max_bytes:
                    start, body = _json_response_parts(413, self._message(f"{n} bytes"))
                    await send(start)
                    await send(body)
                    return
        # buffer the body (at most max_bytes) so a chunked upload is refused before any
        # handler sees a byte of it; then replay it to the app
        chunks: list[bytes] = []
        seen = 0
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                await self.app(scope, _replay([], msg), send)
                return
            body = msg.get("body", b"")
            seen += len(body)
            if seen > self.max_bytes:
                start, out = _json_response_parts(413, self._message(f"over {self.max_bytes} "
                                                                     "bytes"))
                await send(start)
                await send(out)
                return
            chunks.append(body)
            if not msg.get("more_body", False):
                break
        deep = self._too_deep(scope, b"".join(chunks))
        if deep is not None:
            start, out = _json_response_parts(400, deep)
            await send(start)
            await send(out)
            return
        await self.app(scope, _replay(chunks, None, receive), send)


def _replay(chunks: list[bytes], last: dict | None, receive: Callable | None = None
            ) -> Callable:
    """A ``receive`` that hands the app the buffered body once, then defers to the server."""
    state = {"sent": False}

    async def rcv() -> dict:
        if not state["sent"]:
            state["sent"] = True
            if last is not None:
                return last
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        if receive is not None:
            return await receive()
        return {"type": "http.disconnect"}

    return rcv


class RateLimiter:
    """A token bucket per key: ``rate_per_minute`` requests per minute on average, bursts up to
    ``burst`` (default: the per-minute rate). ``rate_per_minute <= 0`` turns it off."""

    def __init__(self, rate_per_minute: float, burst: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate_per_minute / 60.0
        self.burst = float(burst if burst is not None else max(rate_per_minute, 1))
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> tuple[bool, float]:
        """(allowed, seconds until the next token)."""
        if self.rate <= 0:
            return True, 0.0
        now = self.clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return True, 0.0
            self._buckets[key] = (tokens, now)
            return False, (1.0 - tokens) / self.rate


class Metrics:
    """Request counts, errors and latencies per namespace and route template (the last
    ``window`` latencies per pair are kept for percentiles).

    A request counts under the namespace its key was allowed into (``None``: requests that named
    none or were refused before that — health checks, unknown keys). :meth:`snapshot` shows one
    caller only the namespaces it is bound to; the admin scope sees all, unattributed included.
    """

    def __init__(self, window: int = 10_000) -> None:
        self._lock = threading.Lock()
        self.window = window
        self.started = time.time()
        self.routes: dict[tuple[str | None, str], dict[str, Any]] = {}

    def record(self, route: str, status: int, ms: float, namespace: str | None = None) -> None:
        with self._lock:
            r = self.routes.get((namespace, route))
            if r is None:
                r = self.routes[(namespace, route)] = {
                    "count": 0, "errors_4xx": 0, "errors_5xx": 0, "status": {},
                    "lat": deque(maxlen=self.window)}
            r["count"] += 1
            r["status"][str(status)] = r["status"].get(str(status), 0) + 1
            if 400 <= status < 500:
                r["errors_4xx"] += 1
            elif status >= 500:
                r["errors_5xx"] += 1
            r["lat"].append(ms)

    def snapshot(self, namespaces: Collection[str] | None = None) -> dict[str, Any]:
        """The metrics of ``namespaces`` (None: everything), merged per route."""
        def pct(xs: list[float], q: float) -> float | None:
            if not xs:
                return None
            s = sorted(xs)
            return round(s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))], 3)

        allowed = None if namespaces is None else set(namespaces)
        merged: dict[str, dict[str, Any]] = {}
        with self._lock:
            for (ns, route), v in self.routes.items():
                if allowed is not None and ns not in allowed:
                    continue
                m = merged.setdefault(route, {"count": 0, "errors_4xx": 0, "errors_5xx": 0,
                                              "status": {}, "lat": []})
                for k in ("count", "errors_4xx", "errors_5xx"):
                    m[k] += v[k]
                for code, n in v["status"].items():
                    m["status"][code] = m["status"].get(code, 0) + n
                m["lat"].extend(v["lat"])
        routes = {k: {"count": v["count"], "errors_4xx": v["errors_4xx"],
                      "errors_5xx": v["errors_5xx"], "status": v["status"],
                      "latency_ms": {"p50": pct(v["lat"], 0.5), "p95": pct(v["lat"], 0.95),
                                     "max": max(v["lat"], default=None)}}
                  for k, v in sorted(merged.items())}
        return {"uptime_s": round(time.time() - self.started, 3),
                "scope": "admin" if allowed is None else "namespaces",
                "namespaces": None if allowed is None else sorted(allowed),
                "requests": sum(r["count"] for r in routes.values()),
                "errors_4xx": sum(r["errors_4xx"] for r in routes.values()),
                "errors_5xx": sum(r["errors_5xx"] for r in routes.values()),
                "routes": routes}


@dataclass
class Job:
    id: str
    namespace: str
    kind: str
    status: str = "queued"              # queued | running | done | skipped | failed
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    finished_at: str | None = None
    result: Any = None
    error: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "namespace": self.namespace, "kind": self.kind,
                "status": self.status, "created_at": self.created_at,
                "finished_at": self.finished_at, "result": self.result, "error": self.error}


def _owner_gone(owner: str) -> bool:
    """Whether the worker process named by ``owner`` (``host:pid:token``) is known to be gone:
    it ran on this host and its pid is no longer a live process. A worker on another host, or
    this process itself, is never judged here (its lease says)."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:          # alive, another user's
        return False
    try:                             # exited but not yet reaped by its parent
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[:1] == ["Z"]
    except OSError:
        return False


LOST = {"type": "worker_lost", "field": None,
        "message": "the server process running this job stopped before it finished; submit "
                   "it again"}
"""The error of a job whose worker process died or stopped while it was queued or running."""


class Jobs:
    """Background jobs on a small thread pool.

    Without ``store``, the jobs and their results are kept in this process (the last
    ``keep``). With ``store`` (a function returning this thread's connection to the store),
    they are kept in the store's ``api_jobs`` table (:mod:`analogist.memory.service_state`),
    so that every worker process of a server answers for every job. The process running a job
    holds a lease on it, renewed every ``renew_every`` seconds (``lease / 4``) while it has jobs in hand; a job
    whose lease ran out, or whose process is gone from this host, is reported ``failed``
    (:data:`LOST`) instead of staying queued or running for ever.
    """

    def __init__(self, workers: int = 2, keep: int = 1000,
                 store: Callable[[], Any] | None = None, lease: float = 60.0,
                 clock: Callable[[], float] = time.time,
                 renew_every: float | None = None) -> None:
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="analogist-job")
        self._jobs: dict[str, Job] = {}
        self._order: deque[str] = deque()
        self.keep = keep
        self._lock = threading.Lock()
        self.store = store
        self.lease = float(lease)
        self.clock = clock
        self.renew_every = self.lease / 4 if renew_every is None else float(renew_every)
        #: this process's name on the jobs it runs: host, pid and a random token
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(6)}"
        self._in_hand = 0
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        if store is not None:
            self._renewer = threading.Thread(target=self._renew, name="analogist-job-lease",
                                             daemon=True)
            self._renewer.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.renew_every):
            with self._lock:
                busy = self._in_hand > 0
            if not busy:
                continue
            try:
                self.store().renew_job_leases(self.owner, self.clock() + self.lease)  # type: ignore[misc]
            except Exception:  # noqa: BLE001 - a busy store: the next round renews
                continue

    def submit(self, namespace: str, kind: str, fn: Callable[[], tuple[str, Any]],
               on_error: Callable[[BaseException], dict[str, Any]]) -> Job:
        """Run ``fn`` (returning ``(status, result)``) in the background."""
        job = Job(secrets.token_hex(12), namespace, kind)
        if self.store is not None:
            return self._submit_stored(job, fn, on_error)
        with self._lock:
            self._jobs[job.id] = job
            self._order.append(job.id)
            while len(self._order) > self.keep:
                self._jobs.pop(self._order.popleft(), None)

        def run() -> None:
            job.status = "running"
            try:
                status, result = fn()
                job.result, job.status = result, status
            except BaseException as e:  # noqa: BLE001 - reported on the job, never lost
                job.error, job.status = on_error(e), "failed"
            job.finished_at = datetime.now(UTC).isoformat()

        self.pool.submit(run)
        return job

    def _submit_stored(self, job: Job, fn: Callable[[], tuple[str, Any]],
                       on_error: Callable[[BaseException], dict[str, Any]]) -> Job:
        store: Callable[[], Any] = self.store  # type: ignore[assignment]
        store().add_job(job_id=job.id, namespace=job.namespace, kind=job.kind,
                        created_at=job.created_at, owner=self.owner,
                        lease_until=self.clock() + self.lease, keep=self.keep)
        with self._lock:
            self._in_hand += 1

        def run() -> None:
            try:
                mem = store()
                mem.set_job_status(job.id, "running")
                try:
                    status, result = fn()
                    json.dumps(result)            # a result the store can hold, or an error
                    error = None
                except BaseException as e:  # noqa: BLE001 - reported on the job, never lost
                    status, result, error = "failed", None, on_error(e)
                try:
                    mem.set_job_status(job.id, status, result=result, error=error,
                                       finished_at=datetime.now(UTC).isoformat())
                except AnalogistError as e:      # the store refused the end: say so instead
                    mem.set_job_status(job.id, "failed", error=on_error(e),
                                       finished_at=datetime.now(UTC).isoformat())
            finally:
                with self._lock:
                    self._in_hand -= 1

        self.pool.submit(run)
        return job

    def get(self, job_id: str) -> Job | None:
        if self.store is None:
            with self._lock:
                return self._jobs.get(job_id)
        mem = self.store()
        row = mem.job(job_id)
        if row is None:
            return None
        if row["status"] in ("queued", "running"):
            gone = [row["owner"]] if _owner_gone(row["owner"]) else []
            if gone or row["lease_until"] < self.clock():
                mem.fail_lost_jobs(now=self.clock(), finished_at=datetime.now(UTC).isoformat(),
                                   error=LOST, owners=gone)
                row = mem.job(job_id) or row
        return Job(row["id"], row["namespace"], row["kind"], row["status"], row["created_at"],
                   row["finished_at"], row["result"], row["error"])

    def shutdown(self) -> None:
        self._stop.set()
        self.pool.shutdown(wait=False, cancel_futures=True)
        if self.store is not None:
            # the jobs still in hand end with this process: failed, not pending for ever
            # (a store already gone: the lease runs out instead)
            with contextlib.suppress(Exception):
                self.store().fail_lost_jobs(now=0.0, error=LOST,
                                            finished_at=datetime.now(UTC).isoformat(),
                                            owners=[self.owner])


class CollectorPolicy:
    """Python's cyclic garbage collector in a long-running server process: what survives a
    full collection is frozen (:func:`gc.freeze`), so that the next full collections scan only
    what was made since, not the whole warm state (the store's caches, compiled episodes,
    the stage-1 index, the imported modules) again and again; every ``every``-th full
    collection unfreezes everything first, so that cycles which became garbage while frozen
    are freed after at most ``every`` full collections.

    A full collection over a server's warm state took tens of milliseconds of one core, the
    whole process held up while it ran (``benchmarks/find_gc.py``; in the service's mix the
    collector's passes were about a tenth of the CPU of a write and two finds). Answers do not
    depend on it: it changes when objects are looked at, never which are freed. Install it in
    the process that serves (:meth:`install`), not in a library's caller.
    """

    def __init__(self, every: int = 8) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError("every must be a whole number >= 1")
        self.every = every
        #: full collections seen since :meth:`install`, and those followed by a freeze
        self.full = 0
        self.frozen = 0
        self._installed = False

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop" or info.get("generation") != 2:
            return
        self.full += 1
        if self.full % self.every == 0:
            gc.unfreeze()           # the next full collection looks at everything again
        else:
            gc.freeze()
            self.frozen += 1

    def install(self) -> CollectorPolicy:
        """Start the policy in this process (at most once per policy object): what lives now
        is frozen at once, then the survivors of each full collection."""
        if not self._installed:
            gc.collect()
            gc.freeze()
            gc.callbacks.append(self._on_gc)
            self._installed = True
        return self

    def remove(self) -> None:
        """Stop the policy and unfreeze everything it froze."""
        if self._installed:
            with contextlib.suppress(ValueError):
                gc.callbacks.remove(self._on_gc)
            gc.unfreeze()
            self._installed = False

    def stats(self) -> dict[str, int]:
        """Full collections seen, how many were followed by a freeze, and the objects frozen
        now."""
        return {"full_collections": self.full, "frozen_after": self.frozen,
                "frozen_objects": gc.get_freeze_count(), "every": self.every}
