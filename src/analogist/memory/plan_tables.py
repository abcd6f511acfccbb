"""Role-parameterised plans and their reuse record.

A part of :class:`~analogist.memory.sqlite.Memory`, which composes it with the store's
other parts and supplies the connection (``conn``), the write transaction (``_tx``) and
the schema version.
"""

from __future__ import annotations

import builtins
import json
from typing import Any

from analogist.memory.records import (
    _CONTROL,
    PLAN_STATUSES,
    NotFoundError,
    StoreError,
    _json_text,
    _limit,
    _namespace,
)
from analogist.signature import MAX_TEXT


class PlanTables:
    """Plans and plan uses."""

    # -- plans -------------------------------------------------------------------------------
    def add_plan(self, name: str, plan: Any, *, namespace: str = "default") -> int:
        """Store a role-parameterised plan (its JSON) under a unique name; status ``plan``."""
        ns = _namespace(namespace)
        if not isinstance(name, str) or not 1 <= len(name) <= 200 or _CONTROL.search(name):
            raise StoreError("name must be a string of 1 to 200 characters", field="name")
        text = _json_text(plan, "plan")
        with self._tx() as c:
            try:
                cur = c.execute("INSERT INTO plans(namespace, name, json, created_at) "
                                "VALUES (?, ?, ?, ?)", (ns, name, text,
                                                        self._clock().isoformat()))
            except self._integrity_errors:
                raise StoreError(f"plan {name!r} already exists in namespace {ns!r}"[:300],
                                 field="name") from None
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def plans(self, namespace: str = "default", *, status: str | None = None
              ) -> builtins.list[dict[str, Any]]:
        """Stored plans in id order (optionally only those with ``status``)."""
        ns = _namespace(namespace)
        if status is not None and status not in PLAN_STATUSES:
            raise StoreError(f"status must be one of {', '.join(PLAN_STATUSES)}", field="status")
        where = "" if status is None else " AND status = ?"
        rows = self.conn.execute(
            "SELECT id, name, json, status, created_at, status_changed_at FROM plans "
            f"WHERE namespace = ?{where} ORDER BY id",
            (ns,) if status is None else (ns, status)).fetchall()
        return [{"id": r[0], "name": r[1], "plan": json.loads(r[2]), "status": r[3],
                 "created_at": r[4], "status_changed_at": r[5]} for r in rows]

    def set_plan_status(self, plan_id: int, status: str, *, namespace: str = "default") -> None:
        ns = _namespace(namespace)
        if status not in PLAN_STATUSES:
            raise StoreError(f"status must be one of {', '.join(PLAN_STATUSES)}", field="status")
        with self._tx() as c:
            cur = c.execute("UPDATE plans SET status = ?, status_changed_at = ? "
                            "WHERE id = ? AND namespace = ?",
                            (status, self._clock().isoformat(),
                             _limit(plan_id, "plan_id", allow_none=False), ns))
            if cur.rowcount == 0:
                raise NotFoundError(f"no plan {plan_id} in namespace {ns!r}"[:300],
                                    field="plan_id")

    def record_plan_use(self, *, task: str, decision: str, status: str,
                        plan_id: int | None = None, coverage: float | None = None,
                        instantiation: Any = None, namespace: str = "default") -> int:
        """Record one planning episode: a plan offered (``adapted``, status ``offered``), a plan
        offered and rejected for planning from scratch (``from_scratch``, ``rejected``), or a
        from-scratch run with no plan offered (``from_scratch``, ``unoffered``)."""
        ns = _namespace(namespace)
        if not isinstance(task, str) or not 1 <= len(task) <= MAX_TEXT:
            raise StoreError(f"task must be a string of 1 to {MAX_TEXT} characters",
                             field="task")
        if decision not in ("adapted", "from_scratch"):
            raise StoreError("decision must be adapted or from_scratch", field="decision")
        if status not in ("offered", "rejected", "unoffered"):
            raise StoreError("status must be offered, rejected or unoffered", field="status")
        if (decision == "adapted") != (status == "offered"):
            raise StoreError("an adapted plan is 'offered'; a from-scratch run is 'rejected' "
                             "(a plan was offered) or 'unoffered'", field="status")
        if (plan_id is None) != (status == "unoffered"):
            raise StoreError("plan_id is required exactly when a plan was offered",
                             field="plan_id")
        if coverage is not None and (isinstance(coverage, bool) or not isinstance(
                coverage, (int, float)) or not 0.0 <= coverage <= 1.0):
            raise StoreError("coverage must be a number in [0, 1]", field="coverage")
        inst = _json_text(instantiation, "instantiation", nullable=True)
        with self._tx() as c:
            if plan_id is not None:
                pid = _limit(plan_id, "plan_id", allow_none=False)
                if c.execute("SELECT 1 FROM plans WHERE id = ? AND namespace = ?",
                             (pid, ns)).fetchone() is None:
                    raise NotFoundError(f"no plan {plan_id} in namespace {ns!r}"[:300],
                                        field="plan_id")
            cur = c.execute(
                "INSERT INTO plan_uses(namespace, plan_id, created_at, task, coverage, decision, "
                "status, instantiation) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (ns, plan_id, self._clock().isoformat(), task,
                 None if coverage is None else float(coverage), decision, status, inst))
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def set_plan_outcome(self, use_id: int, *, success: bool, steps: int | None = None,
                         tokens: int | None = None, namespace: str = "default") -> None:
        """Record how a planning episode ended (success, steps to success, tokens)."""
        ns = _namespace(namespace)
        if not isinstance(success, bool):
            raise StoreError("success must be a boolean", field="success")
        st = None if steps is None else _limit(steps, "steps")
        tk = None if tokens is None else _limit(tokens, "tokens")
        with self._tx() as c:
            cur = c.execute("UPDATE plan_uses SET success = ?, steps = ?, tokens = ? "
                            "WHERE id = ? AND namespace = ?",
                            (int(success), st, tk, _limit(use_id, "use_id", allow_none=False),
                             ns))
            if cur.rowcount == 0:
                raise NotFoundError(f"no plan use {use_id} in namespace {ns!r}"[:300],
                                    field="use_id")

    def plan_uses(self, namespace: str = "default", *, plan_id: int | None = None
                  ) -> builtins.list[dict[str, Any]]:
        """Recorded planning episodes, oldest first (optionally of one plan)."""
        ns = _namespace(namespace)
        where = "" if plan_id is None else " AND plan_id = ?"
        rows = self.conn.execute(
            "SELECT id, plan_id, created_at, task, coverage, decision, status, instantiation, "
            f"success, steps, tokens FROM plan_uses WHERE namespace = ?{where} ORDER BY id",
            (ns,) if plan_id is None else
            (ns, _limit(plan_id, "plan_id", allow_none=False))).fetchall()
        keys = ("id", "plan_id", "created_at", "task", "coverage", "decision", "status",
                "instantiation", "success", "steps", "tokens")
        out = [dict(zip(keys, r, strict=True)) for r in rows]
        for r in out:
            r["instantiation"] = None if r["instantiation"] is None else json.loads(
                r["instantiation"])
            r["success"] = None if r["success"] is None else bool(r["success"])
        return out
