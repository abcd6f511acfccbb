"""The analogy log (triggers, tiers, tokens), the negative-transfer ledger and recorded
outcomes.

A part of :class:`~analogist.memory.sqlite.Memory`, which composes it with the store's
other parts and supplies the connection (``conn``), the write transaction (``_tx``) and
the schema version.
"""

from __future__ import annotations

import builtins
import json
import math
from collections.abc import Mapping
from typing import Any

from analogist.memory.records import (
    _CONTROL,
    OUTCOMES,
    NotFoundError,
    StoreError,
    _json_text,
    _limit,
    _namespace,
    _transfer_values,
    _trigger_fields,
)
from analogist.signature import MAX_TEXT


class Logs:
    """The analogy log, the negative-transfer ledger and recorded outcomes."""

    # -- analogy log -----------------------------------------------------------------------
    def log_analogy(self, namespace: str = "default", *, target: Any, candidates: Any,
                    mapping: Any = None, score: float | None = None, verdict: str | None = None,
                    transferred: bool | None = None, prediction: Any = None,
                    trigger: Any = None, tier: int | None = None,
                    tokens: int | None = None) -> int:
        """Record one analogy attempt (any JSON-able values); returns its log id.

        ``trigger`` (JSON, normally the list of trigger names that fired the attempt), ``tier``
        (0, 1 or 2) and ``tokens`` (spent on the attempt) are optional (schema version 2)."""
        ns = _namespace(namespace)
        trig, tier_v, tok = _trigger_fields(trigger, tier, tokens)
        t = _json_text(target, "target")
        cands = _json_text(candidates, "candidates")
        m = _json_text(mapping, "mapping", nullable=True)
        pred = _json_text(prediction, "prediction", nullable=True)
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                                  or not math.isfinite(score)):
            raise StoreError(f"score must be a finite number, got {score!r}"[:200], field="score")
        if verdict is not None and (not isinstance(verdict, str) or len(verdict) > MAX_TEXT):
            raise StoreError(f"verdict must be a string of at most {MAX_TEXT} characters",
                             field="verdict")
        if transferred is not None and not isinstance(transferred, bool):
            raise StoreError("transferred must be a boolean", field="transferred")
        with self._tx() as c:
            cur = c.execute(
                "INSERT INTO analogy_log(namespace, created_at, target, candidates, mapping, "
                "score, verdict, transferred, prediction, trigger, tier, tokens) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (ns, self._clock().isoformat(), t, cands, m,
                 None if score is None else float(score), verdict,
                 None if transferred is None else int(transferred), pred, trig, tier_v, tok))
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def log(self, namespace: str = "default", limit: int = 100) -> builtins.list[dict[str, Any]]:
        """The latest analogy attempts, newest first."""
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT id, namespace, created_at, target, candidates, mapping, score, verdict, "
            "transferred, prediction, trigger, tier, tokens, outcome FROM analogy_log "
            "WHERE namespace = ? ORDER BY id DESC LIMIT ?",
            (ns, _limit(limit, "limit"))).fetchall()

        def j(x: str | None) -> Any:
            return None if x is None else json.loads(x)

        return [{"id": r[0], "namespace": r[1], "created_at": r[2], "target": j(r[3]),
                 "candidates": j(r[4]), "mapping": j(r[5]), "score": r[6], "verdict": r[7],
                 "transferred": None if r[8] is None else bool(r[8]), "prediction": j(r[9]),
                 "trigger": j(r[10]), "tier": r[11], "tokens": r[12], "outcome": r[13]}
                for r in rows]

    def tag_analogy(self, log_id: int, *, trigger: Any, tier: int | None = None,
                    tokens: int | None = None, namespace: str = "default") -> None:
        """Record the trigger (and tier, tokens) of an already logged attempt."""
        ns = _namespace(namespace)
        trig, tier_v, tok = _trigger_fields(trigger, tier, tokens)
        if trig is None:
            raise StoreError("a trigger is required", field="trigger")
        with self._tx() as c:
            cur = c.execute("UPDATE analogy_log SET trigger = ?, tier = ?, tokens = ? "
                            "WHERE id = ? AND namespace = ?",
                            (trig, tier_v, tok, _limit(log_id, "log_id", allow_none=False), ns))
            if cur.rowcount == 0:
                raise NotFoundError(f"no analogy log entry {log_id} in namespace {ns!r}"[:300],
                                    field="log_id")

    def set_outcome(self, log_id: int, outcome: str, *, namespace: str = "default") -> None:
        """Record what a logged analogy attempt led to: one of :data:`OUTCOMES`."""
        ns = _namespace(namespace)
        if outcome not in OUTCOMES:
            raise StoreError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}"
                             [:200], field="outcome")
        with self._tx() as c:
            cur = c.execute("UPDATE analogy_log SET outcome = ? WHERE id = ? AND namespace = ?",
                            (outcome, _limit(log_id, "log_id", allow_none=False), ns))
            if cur.rowcount == 0:
                raise NotFoundError(f"no analogy log entry {log_id} in namespace {ns!r}"[:300],
                                    field="log_id")

    def firings(self, namespace: str = "default") -> builtins.list[dict[str, Any]]:
        """Every logged attempt that records its trigger, oldest first (with its outcome and, when
        recorded, its negative-transfer ledger verdicts)."""
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT id, created_at, trigger, tier, tokens, outcome FROM analogy_log "
            "WHERE namespace = ? AND trigger IS NOT NULL ORDER BY id", (ns,)).fetchall()
        verdicts: dict[int, builtins.list[str]] = {}
        for lid, v in self.conn.execute(
                "SELECT log_id, verdict FROM transfer_ledger WHERE namespace = ? AND log_id "
                "IS NOT NULL ORDER BY id", (ns,)).fetchall():
            verdicts.setdefault(int(lid), []).append(v)
        return [{"id": r[0], "created_at": r[1], "trigger": json.loads(r[2]), "tier": r[3],
                 "tokens": r[4], "outcome": r[5], "ledger": verdicts.get(int(r[0]), [])}
                for r in rows]

    def tokens_spent(self, namespace: str = "default", *, tier: int, since: str) -> int:
        """Tokens recorded on attempts of ``tier`` logged at or after ``since`` (ISO time)."""
        ns = _namespace(namespace)
        if not isinstance(since, str):
            raise StoreError("since must be an ISO time string", field="since")
        row = self.conn.execute(
            "SELECT COALESCE(SUM(tokens), 0) FROM analogy_log WHERE namespace = ? AND tier = ? "
            "AND created_at >= ?", (ns, int(tier), since)).fetchone()
        return int(row[0])

    # -- the negative-transfer ledger --------------------------------------------------------
    def record_transfer(self, *, item: str, action: str, analogy_result: float,
                        counterfactual_result: float | None = None,
                        higher_is_better: bool = True, log_id: int | None = None,
                        namespace: str = "default") -> dict[str, Any]:
        """Record one analogy-driven action's result against the no-analogy counterfactual on
        the same item (when recorded). The verdict is ``better``, ``same`` or ``worse`` (a
        negative transfer) than the counterfactual, or ``unknown`` without one."""
        ns = _namespace(namespace)
        item, action, a, cf, higher_is_better, verdict = _transfer_values(
            item, action, analogy_result, counterfactual_result, higher_is_better)
        with self._tx() as c:
            if log_id is not None:
                lid = _limit(log_id, "log_id", allow_none=False)
                if c.execute("SELECT 1 FROM analogy_log WHERE id = ? AND namespace = ?",
                             (lid, ns)).fetchone() is None:
                    raise NotFoundError(f"no analogy log entry {log_id} in namespace {ns!r}"
                                        [:300], field="log_id")
            cur = c.execute(
                "INSERT INTO transfer_ledger(namespace, created_at, log_id, item, action, "
                "analogy_result, counterfactual_result, higher_is_better, verdict) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (ns, self._clock().isoformat(), log_id, item, action, a, cf,
                 int(higher_is_better), verdict))
            return {"id": int(cur.lastrowid), "verdict": verdict}  # type: ignore[arg-type]

    def ledger(self, namespace: str = "default") -> builtins.list[dict[str, Any]]:
        """The negative-transfer ledger of ``namespace``, oldest first."""
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT id, created_at, log_id, item, action, analogy_result, counterfactual_result, "
            "higher_is_better, verdict FROM transfer_ledger WHERE namespace = ? ORDER BY id",
            (ns,)).fetchall()
        keys = ("id", "created_at", "log_id", "item", "action", "analogy_result",
                "counterfactual_result", "higher_is_better", "verdict")
        out = [dict(zip(keys, r, strict=True)) for r in rows]
        for r in out:
            r["higher_is_better"] = bool(r["higher_is_better"])
        return out

    # -- recorded outcomes (schema version 4) ------------------------------------------------
    def record_outcome(self, log_id: int | None, outcome: str, *, used: str | None = None,
                       note: str | None = None, transfer: Mapping[str, Any] | None = None,
                       namespace: str = "default") -> dict[str, Any]:
        """Record what an analogy attempt led to, in one transaction: an ``analogy_outcomes`` row
        (``outcome`` one of :data:`OUTCOMES`; ``used`` the analogue acted on; ``note``), the log
        entry's ``outcome`` set to it, and — with ``transfer`` (the keyword arguments of
        :meth:`record_transfer` but ``log_id``) — a negative-transfer ledger entry for it.

        ``log_id`` None writes a new log entry first (an analogy used outside ``find``; its
        candidates are ``[used]``). Returns ``{"id", "log_id", "ledger": {"id", "verdict"} |
        None}``. Everything is validated before anything is written."""
        ns = _namespace(namespace)
        if outcome not in OUTCOMES:
            raise StoreError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}"
                             [:200], field="outcome")
        for f, v in (("used", used), ("note", note)):
            if v is not None and (not isinstance(v, str) or not 1 <= len(v) <= MAX_TEXT
                                  or _CONTROL.search(v.replace("\n", " "))):
                raise StoreError(f"{f} must be a string of 1 to {MAX_TEXT} characters",
                                 field=f)
        lid = None if log_id is None else _limit(log_id, "log_id", allow_none=False)
        if lid is None and used is None:
            raise StoreError("give the log entry of the attempt, or the analogue used",
                             field="log_id")
        tv = None
        if transfer is not None:
            if not isinstance(transfer, Mapping):
                raise StoreError("transfer must be a mapping", field="transfer")
            extra = sorted(set(transfer) - {"item", "action", "analogy_result",
                                            "counterfactual_result", "higher_is_better"})
            if extra:
                raise StoreError(f"unexpected key(s) {', '.join(map(str, extra))}",
                                 field="transfer")
            tv = _transfer_values(transfer.get("item"), transfer.get("action"),
                                  transfer.get("analogy_result"),
                                  transfer.get("counterfactual_result"),
                                  transfer.get("higher_is_better", True))
        now = self._clock().isoformat()
        with self._tx() as c:
            if lid is None:
                cur = c.execute(
                    "INSERT INTO analogy_log(namespace, created_at, target, candidates, verdict) "
                    "VALUES (?, ?, ?, ?, ?)", (ns, now, "{}", _json_text([used], "used"),
                                               "used"))
                lid = int(cur.lastrowid)  # type: ignore[arg-type]
            elif c.execute("SELECT 1 FROM analogy_log WHERE id = ? AND namespace = ?",
                           (lid, ns)).fetchone() is None:
                raise NotFoundError(f"no analogy log entry {lid} in namespace {ns!r}"[:300],
                                    field="log_id")
            ledger = None
            if tv is not None:
                item, action, a, cf, hib, verdict = tv
                cur = c.execute(
                    "INSERT INTO transfer_ledger(namespace, created_at, log_id, item, action, "
                    "analogy_result, counterfactual_result, higher_is_better, verdict) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (ns, now, lid, item, action, a, cf, int(hib), verdict))
                ledger = {"id": int(cur.lastrowid), "verdict": verdict}  # type: ignore[arg-type]
            cur = c.execute(
                "INSERT INTO analogy_outcomes(namespace, created_at, log_id, used, outcome, "
                "ledger_id, note) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (ns, now, lid, used, outcome, None if ledger is None else ledger["id"], note))
            oid = int(cur.lastrowid)  # type: ignore[arg-type]
            c.execute("UPDATE analogy_log SET outcome = ? WHERE id = ? AND namespace = ?",
                      (outcome, lid, ns))
        return {"id": oid, "log_id": lid, "ledger": ledger}

    def outcomes(self, namespace: str = "default") -> builtins.list[dict[str, Any]]:
        """Recorded outcomes of ``namespace``, oldest first, each with its log entry's trigger
        (None when the attempt recorded none) and its ledger verdict (None without one)."""
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT o.id, o.created_at, o.log_id, o.used, o.outcome, o.note, l.trigger, "
            "t.verdict FROM analogy_outcomes o JOIN analogy_log l ON l.id = o.log_id "
            "LEFT JOIN transfer_ledger t ON t.id = o.ledger_id WHERE o.namespace = ? "
            "ORDER BY o.id", (ns,)).fetchall()
        return [{"id": r[0], "created_at": r[1], "log_id": r[2], "used": r[3], "outcome": r[4],
                 "note": r[5], "trigger": None if r[6] is None else json.loads(r[6]),
                 "ledger_verdict": r[7]} for r in rows]
