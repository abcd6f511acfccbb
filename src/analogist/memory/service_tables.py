"""The HTTP service's tables: API keys and stored eval runs, created on first use.

A part of :class:`~analogist.memory.sqlite.Memory`, which composes it with the store's
other parts and supplies the connection (``conn``), the write transaction (``_tx``) and
the schema version.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from typing import Any

from analogist.memory.records import StoreError, _namespace


class ServiceTables:
    """The service's API keys and stored eval runs."""

    # -- the service's tables: API keys and stored eval runs ----------------------------------
    # Created on first use (CREATE TABLE IF NOT EXISTS, the layout stores made before them
    # already have), outside the versioned migrations: a store that never serves has neither.
    _SERVICE_DDL = (
        """CREATE TABLE IF NOT EXISTS api_keys (
            key_id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            salt BLOB NOT NULL,
            digest BLOB NOT NULL,
            namespaces TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )""",
        """CREATE TABLE IF NOT EXISTS api_eval_runs (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            created_at TEXT NOT NULL,
            retriever TEXT NOT NULL,
            runs INTEGER NOT NULL,
            summary TEXT NOT NULL,
            result TEXT NOT NULL
        )""",
    )

    def ensure_service_tables(self) -> None:
        """Create the HTTP service's tables (API keys, eval runs) when missing."""
        for stmt in self._SERVICE_DDL:
            self.conn.execute(stmt)

    def add_api_key(self, *, key_id: str, name: str, salt: bytes, digest: bytes,
                    namespaces: Sequence[str]) -> None:
        """Store one API key (its salted digest, never the secret); a taken name is refused."""
        self.ensure_service_tables()
        try:
            with self._tx() as c:
                c.execute("INSERT INTO api_keys(key_id, name, salt, digest, namespaces, "
                          "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                          (key_id, name, salt, digest, json.dumps(sorted(namespaces)),
                           self._clock().isoformat()))
        except self._integrity_errors:
            raise StoreError(f"a key named {name!r} already exists (revoke it first or pick "
                             "another name)", field="name") from None

    def api_keys(self) -> builtins.list[dict[str, Any]]:
        """Every API key's row without its salt or digest, oldest first."""
        self.ensure_service_tables()
        rows = self.conn.execute("SELECT key_id, name, namespaces, created_at, revoked_at "
                                 "FROM api_keys ORDER BY created_at, name").fetchall()
        return [{"key_id": r[0], "name": r[1], "namespaces": json.loads(r[2]),
                 "created_at": r[3], "revoked_at": r[4]} for r in rows]

    def api_key(self, key_id: str) -> dict[str, Any] | None:
        """One API key's row, salt and digest included (for verification), or None."""
        self.ensure_service_tables()
        r = self.conn.execute("SELECT key_id, name, salt, digest, namespaces, created_at, "
                              "revoked_at FROM api_keys WHERE key_id = ?", (key_id,)).fetchone()
        if r is None:
            return None
        return {"key_id": r[0], "name": r[1], "salt": r[2], "digest": r[3],
                "namespaces": json.loads(r[4]), "created_at": r[5], "revoked_at": r[6]}

    def revoke_api_key(self, name: str) -> bool:
        """Revoke the active key named ``name``; False when there is none."""
        self.ensure_service_tables()
        with self._tx() as c:
            cur = c.execute("UPDATE api_keys SET revoked_at = ? WHERE name = ? AND "
                            "revoked_at IS NULL", (self._clock().isoformat(), name))
        return cur.rowcount > 0

    def add_eval_run(self, namespace: str, *, retriever: str, runs: int, summary: Any,
                     result: Any) -> int:
        """Store one evaluation run's summary and full result; returns its id."""
        ns = _namespace(namespace)
        self.ensure_service_tables()
        with self._tx() as c:
            cur = c.execute("INSERT INTO api_eval_runs(namespace, created_at, retriever, runs, "
                            "summary, result) VALUES (?, ?, ?, ?, ?, ?)",
                            (ns, self._clock().isoformat(), retriever, runs,
                             json.dumps(summary), json.dumps(result)))
        return int(cur.lastrowid or 0)

    def eval_runs(self, namespace: str) -> builtins.list[dict[str, Any]]:
        """The stored evaluation runs of ``namespace`` (summaries), oldest first."""
        self.ensure_service_tables()
        rows = self.conn.execute("SELECT id, created_at, retriever, runs, summary FROM "
                                 "api_eval_runs WHERE namespace = ? ORDER BY id",
                                 (namespace,)).fetchall()
        return [{"id": r[0], "created_at": r[1], "retriever": r[2], "runs": r[3],
                 "summary": json.loads(r[4])} for r in rows]

    def eval_run(self, namespace: str, run_id: int) -> Any | None:
        """One stored evaluation run's full result, or None."""
        self.ensure_service_tables()
        r = self.conn.execute("SELECT result FROM api_eval_runs WHERE namespace = ? AND id = ?",
                              (namespace, run_id)).fetchone()
        return None if r is None else json.loads(r[0])
