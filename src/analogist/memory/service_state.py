"""The HTTP service's shared state: background jobs and viewer sessions (schema v7).

A part of :class:`~analogist.memory.sqlite.Memory`, which composes it with the store's
other parts and supplies the connection (``conn``) and the write transaction (``_tx``).
Every worker process of one server reads and writes these tables, so a job submitted
through one worker is answered by any other, and a viewer session signed in on one is
known to all (see :mod:`analogist.service.runtime` and :mod:`analogist.service.sessions`).

Times are seconds since the epoch (``REAL``), as the service's clocks give them.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Collection
from typing import Any

_JOB_COLUMNS = ("id, namespace, kind, status, created_at, finished_at, result, error, owner, "
                "lease_until")
_UNFINISHED = "('queued', 'running')"


def _job_row(r: Any) -> dict[str, Any]:
    return {"id": r[0], "namespace": r[1], "kind": r[2], "status": r[3], "created_at": r[4],
            "finished_at": r[5], "result": None if r[6] is None else json.loads(r[6]),
            "error": None if r[7] is None else json.loads(r[7]), "owner": r[8],
            "lease_until": r[9]}


class ServiceState:
    """Background jobs (``api_jobs``) and viewer sessions (``api_sessions``)."""

    # -- jobs ------------------------------------------------------------------------------
    def add_job(self, *, job_id: str, namespace: str, kind: str, created_at: str, owner: str,
                lease_until: float, keep: int) -> None:
        """Record a new queued job run by ``owner`` (a worker's identity) whose lease on it
        lasts until ``lease_until``; only the newest ``keep`` jobs are kept."""
        with self._tx() as c:
            c.execute("INSERT INTO api_jobs(id, namespace, kind, status, created_at, owner, "
                      "lease_until) VALUES (?, ?, ?, 'queued', ?, ?, ?)",
                      (job_id, namespace, kind, created_at, owner, float(lease_until)))
            top = c.execute("SELECT MAX(seq) FROM api_jobs").fetchone()[0]
            c.execute("DELETE FROM api_jobs WHERE seq <= ?", (int(top) - int(keep),))

    def set_job_status(self, job_id: str, status: str, *, result: Any = None,
                       error: dict[str, Any] | None = None,
                       finished_at: str | None = None) -> bool:
        """Move a job to ``status`` (with its result or error when it finished). A job
        already finished (done, skipped, failed — a lost worker's included) keeps its end;
        False then, or when there is no such job."""
        res = None if result is None else json.dumps(result)
        err = None if error is None else json.dumps(error)
        with self._tx() as c:
            cur = c.execute(f"UPDATE api_jobs SET status = ?, result = ?, error = ?, "
                            f"finished_at = ? WHERE id = ? AND status IN {_UNFINISHED}",
                            (status, res, err, finished_at, job_id))
        return cur.rowcount > 0

    def renew_job_leases(self, owner: str, lease_until: float) -> int:
        """Extend the lease of every unfinished job of ``owner``; returns how many."""
        with self._tx() as c:
            cur = c.execute(f"UPDATE api_jobs SET lease_until = ? WHERE owner = ? AND "
                            f"status IN {_UNFINISHED}", (float(lease_until), owner))
        return cur.rowcount

    def fail_lost_jobs(self, *, now: float, finished_at: str, error: dict[str, Any],
                       owners: Collection[str] = ()) -> int:
        """Mark failed every unfinished job whose lease ended before ``now`` or whose owner
        is one of ``owners`` (workers known to be gone); returns how many."""
        owners = sorted(set(owners))
        cond = "lease_until < ?"
        args: list[Any] = [float(now)]
        if owners:
            cond += f" OR owner IN ({', '.join('?' * len(owners))})"
            args.extend(owners)
        with self._tx() as c:
            cur = c.execute(f"UPDATE api_jobs SET status = 'failed', error = ?, "
                            f"finished_at = ? WHERE status IN {_UNFINISHED} AND ({cond})",
                            (json.dumps(error), finished_at, *args))
        return cur.rowcount

    def job(self, job_id: str) -> dict[str, Any] | None:
        """One job's row (result and error decoded), or None."""
        r = self.conn.execute(f"SELECT {_JOB_COLUMNS} FROM api_jobs WHERE id = ?",
                              (job_id,)).fetchone()
        return None if r is None else _job_row(r)

    def unfinished_job_owners(self) -> builtins.list[str]:
        """The owners of the jobs still queued or running."""
        rows = self.conn.execute(f"SELECT DISTINCT owner FROM api_jobs WHERE status IN "
                                 f"{_UNFINISHED} ORDER BY owner").fetchall()
        return [r[0] for r in rows]

    # -- viewer sessions -------------------------------------------------------------------
    def add_session(self, *, digest: str, key_id: str, name: str,
                    namespaces: Collection[str], csrf: str, expires: float,
                    keep: int) -> None:
        """Record a signed-in session (its id's digest, never the id); only the newest
        ``keep`` sessions are kept."""
        with self._tx() as c:
            c.execute("INSERT INTO api_sessions(digest, key_id, name, namespaces, csrf, "
                      "expires) VALUES (?, ?, ?, ?, ?, ?)",
                      (digest, key_id, name, json.dumps(sorted(namespaces)), csrf,
                       float(expires)))
            top = c.execute("SELECT MAX(seq) FROM api_sessions").fetchone()[0]
            c.execute("DELETE FROM api_sessions WHERE seq <= ?", (int(top) - int(keep),))

    def session(self, digest: str, *, now: float) -> dict[str, Any] | None:
        """The live session of ``digest``, or None (an expired one is removed)."""
        r = self.conn.execute("SELECT key_id, name, namespaces, csrf, expires FROM "
                              "api_sessions WHERE digest = ?", (digest,)).fetchone()
        if r is None:
            return None
        if r[4] <= now:
            with self._tx() as c:
                c.execute("DELETE FROM api_sessions WHERE digest = ? AND expires <= ?",
                          (digest, float(now)))
            return None
        return {"key_id": r[0], "name": r[1], "namespaces": json.loads(r[2]), "csrf": r[3],
                "expires": r[4]}

    def end_session(self, digest: str) -> bool:
        """Remove one session; False when there was none."""
        with self._tx() as c:
            cur = c.execute("DELETE FROM api_sessions WHERE digest = ?", (digest,))
        return cur.rowcount > 0

    def end_key_sessions(self, key_id: str) -> int:
        """Remove every session of one key; returns how many."""
        with self._tx() as c:
            cur = c.execute("DELETE FROM api_sessions WHERE key_id = ?", (key_id,))
        return cur.rowcount

    def session_count(self, *, now: float) -> int:
        """How many sessions are live at ``now``."""
        return int(self.conn.execute("SELECT COUNT(*) FROM api_sessions WHERE expires > ?",
                                     (float(now),)).fetchone()[0])
