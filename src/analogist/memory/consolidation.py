"""Induced schemas, the vocabulary and its merge map, and consolidation's write
(rewritten episodes, schemas, terms and merges in one transaction).

A part of :class:`~analogist.memory.sqlite.Memory`, which composes it with the store's
other parts and supplies the connection (``conn``), the write transaction (``_tx``) and
the schema version.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from analogist.errors import AnalogistError
from analogist.memory.episodes import _NS_VERSION, _RELATIONS_SQL, _child_sql
from analogist.memory.records import (
    NotFoundError,
    StoreError,
    _at,
    _json_text,
    _limit,
    _namespace,
    _prepare,
    _Prepared,
    _term_row,
)
from analogist.signature import MAX_TEXT, Signature


class SchemasVocabulary:
    """Schemas, vocabulary and the consolidation write."""

    # -- schemas and vocabulary ------------------------------------------------------------
    def add_schema(self, name: str, description: Any, members: Sequence[int], *,
                   namespace: str = "default") -> int:
        """Store an induced schema over member episodes (ids in ``namespace``)."""
        ns = _namespace(namespace)
        if not isinstance(name, str) or not 1 <= len(name) <= 200:
            raise StoreError("name must be a string of 1 to 200 characters", field="name")
        desc = _json_text(description, "description")
        with self._tx() as c:
            ids = [self._require(m, ns, f"members[{i}]") for i, m in enumerate(members)]
            try:
                cur = c.execute(
                    "INSERT INTO schemas(namespace, name, description, members) "
                    "VALUES (?, ?, ?, ?)", (ns, name, desc, json.dumps(ids)))
            except self._integrity_errors:
                raise StoreError(f"schema {name!r} already exists in namespace {ns!r}"[:300],
                                 field="name") from None
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def use_schema(self, schema_id: int, *, verified: bool = False,
                   namespace: str = "default") -> None:
        """Count one use (and, when ``verified``, one verified use) of a schema."""
        ns = _namespace(namespace)
        with self._tx() as c:
            cur = c.execute(
                "UPDATE schemas SET times_used = times_used + 1, "
                "times_verified = times_verified + ? WHERE id = ? AND namespace = ?",
                (int(bool(verified)), _limit(schema_id, "schema_id", allow_none=False), ns))
            if cur.rowcount == 0:
                raise NotFoundError(f"no schema {schema_id} in namespace {ns!r}"[:300],
                                    field="schema_id")

    def schemas(self, namespace: str = "default") -> builtins.list[dict[str, Any]]:
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT id, name, description, members, times_used, times_verified, meta "
            "FROM schemas WHERE namespace = ? ORDER BY id", (ns,)).fetchall()
        return [{"id": r[0], "name": r[1], "description": json.loads(r[2]),
                 "members": json.loads(r[3]), "times_used": r[4], "times_verified": r[5],
                 "meta": None if r[6] is None else json.loads(r[6])}
                for r in rows]

    def put_term(self, name: str, *, kind: str, arity: int, definition: str = "",
                 status: str = "declared", count: int = 0, namespace: str = "default",
                 merged_into: str | None = None) -> None:
        """Insert or replace one vocabulary term of ``namespace``."""
        ns = _namespace(namespace)
        row = _term_row(ns, name, kind, arity, definition, status, count, merged_into)
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO vocab(namespace, name, kind, arity, definition, "
                      "status, count, merged_into) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)

    def terms(self, namespace: str = "default") -> builtins.list[dict[str, Any]]:
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT name, kind, arity, definition, status, count, merged_into FROM vocab "
            "WHERE namespace = ? ORDER BY name", (ns,)).fetchall()
        return [dict(zip(("name", "kind", "arity", "definition", "status", "count",
                          "merged_into"), r, strict=True)) for r in rows]

    def merges(self, namespace: str = "default") -> builtins.list[dict[str, Any]]:
        """The vocabulary merge map of ``namespace``: alias → canonical, with the count moved."""
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT alias, canonical, count_moved, reason, merged_at FROM vocab_merges "
            "WHERE namespace = ? ORDER BY id", (ns,)).fetchall()
        return [dict(zip(("alias", "canonical", "count_moved", "reason", "merged_at"), r,
                         strict=True)) for r in rows]

    def predicate_uses(self, namespace: str = "default", *, include_superseded: bool = False
                       ) -> dict[str, int]:
        """How often each predicate (relations, causal-chain atoms and edge types) is used by
        the episodes of ``namespace``."""
        out: dict[str, int] = {}
        for ep in self.list(namespace, include_superseded=include_superseded):
            for a in ep.signature.relations:
                out[a.predicate] = out.get(a.predicate, 0) + 1
            chain_atoms = {x for e in ep.signature.causal_chain for x in e.atoms()}
            for a in chain_atoms - set(ep.signature.relations):
                out[a.predicate] = out.get(a.predicate, 0) + 1
            for e in ep.signature.causal_chain:
                out[e.edge] = out.get(e.edge, 0) + 1
        return dict(sorted(out.items()))

    # -- consolidation -----------------------------------------------------------------------
    def _rewrite(self, c: sqlite3.Connection, p: _Prepared, ns: str) -> int:
        sid = self._find(p.episode_id, ns)
        if sid is None:
            raise NotFoundError(f"no episode {p.episode_id!r} in namespace {ns!r}"[:300],
                                field="episode_id")
        c.execute("UPDATE signatures SET kind = ?, json = ?, source_hash = ?, verified = ? "
                  "WHERE id = ? AND namespace = ?", (p.kind, p.text, p.source_hash,
                                                     int(p.verified), sid, ns))
        if self._version >= 3:
            c.execute("UPDATE signatures SET surface = ? WHERE id = ? AND namespace = ?",
                      (p.surface, sid, ns))
        with_ns = self._version >= _NS_VERSION
        nsp = self._ns_param(ns)
        c.execute(f"DELETE FROM sig_relations WHERE signature_id = ?{self._and_ns()}", (sid, *nsp))
        c.executemany(_child_sql(_RELATIONS_SQL, with_ns),
                      [(sid, *r, *nsp) for r in p.relations])
        for ch, fmt, data in p.vectors:  # other channels stay unless replaced
            # delete and insert (not INSERT OR REPLACE: a foreign partition has no upsert)
            c.execute(f"DELETE FROM sig_vectors WHERE signature_id = ? AND channel = ?"
                      f"{self._and_ns()}", (sid, ch, *nsp))
            c.execute(_child_sql("INSERT INTO sig_vectors(signature_id, channel, format, "
                                 "data{ns}) VALUES (?, ?, ?, ?{nsq})", with_ns),
                      (sid, ch, fmt, data, *nsp))
        c.execute(f"DELETE FROM sig_fingerprint WHERE signature_id = ?{self._and_ns()}",
                  (sid, *nsp))
        c.execute(_child_sql("INSERT INTO sig_fingerprint(signature_id, fingerprint, depth{ns}) "
                             "VALUES (?, ?, ?{nsq})", with_ns),
                  (sid, p.fingerprint, p.fingerprint_depth, *nsp))
        return sid

    def update_signature(self, sig: Signature | Mapping[str, Any], *,
                         namespace: str = "default",
                         embeddings: Mapping[str, np.ndarray] | None = None) -> int:
        """Rewrite a stored episode in place (found by its episode id): its JSON, relations,
        content counts and fingerprint; embedding channels are kept unless ``embeddings``
        replaces them. Returns the row id."""
        ns = _namespace(namespace)
        p = _prepare(sig, None, embeddings)
        with self._tx() as c:
            return self._rewrite(c, p, ns)

    def write_consolidation(self, *, namespace: str = "default",
                            schemas: Sequence[Mapping[str, Any]] = (),
                            terms: Sequence[Mapping[str, Any]] = (),
                            merges: Sequence[Mapping[str, Any]] = (),
                            signatures: Sequence[Signature | Mapping[str, Any]] = ()
                            ) -> dict[str, int]:
        """Write one consolidation's results in **one** transaction (all or nothing).

        ``schemas``: ``{name, description, members (episode ids or row ids), meta}`` — a schema
        whose name exists is updated (description, meta; members become the union; its
        use counts are kept); ``terms``: rows for :meth:`put_term` (``name, kind, arity,
        definition, status, count, merged_into``); ``merges``: ``{alias, canonical, count_moved,
        reason}`` for the merge map; ``signatures``: stored episodes rewritten in place
        (:meth:`update_signature`). Everything is validated before the transaction starts.
        """
        ns = _namespace(namespace)
        sch_rows = []
        for i, s in enumerate(schemas):
            if not isinstance(s, Mapping):
                raise StoreError("expected a mapping", field=f"schemas[{i}]")
            name = s.get("name")
            if not isinstance(name, str) or not 1 <= len(name) <= 200:
                raise StoreError("name must be a string of 1 to 200 characters",
                                 field=f"schemas[{i}].name")
            members = s.get("members")
            if not isinstance(members, Sequence) or isinstance(members, (str, bytes)):
                raise StoreError("members must be a list", field=f"schemas[{i}].members")
            sch_rows.append((name, _json_text(s.get("description"), f"schemas[{i}].description"),
                             list(members), _json_text(s.get("meta"), f"schemas[{i}].meta",
                                                       nullable=True)))
        term_rows = []
        for i, t in enumerate(terms):
            if not isinstance(t, Mapping):
                raise StoreError("expected a mapping", field=f"terms[{i}]")
            try:
                term_rows.append(_term_row(ns, t.get("name"), t.get("kind"), t.get("arity"),
                                           t.get("definition", ""), t.get("status", "declared"),
                                           t.get("count", 0), t.get("merged_into")))
            except StoreError as e:
                raise StoreError(e.message, field=f"terms[{i}].{e.field}") from None
        merge_rows = []
        for i, m in enumerate(merges):
            if not isinstance(m, Mapping):
                raise StoreError("expected a mapping", field=f"merges[{i}]")
            for f in ("alias", "canonical", "reason"):
                if not isinstance(m.get(f), str) or not 1 <= len(m[f]) <= MAX_TEXT:
                    raise StoreError("expected a non-empty string", field=f"merges[{i}].{f}")
            cm = m.get("count_moved")
            if isinstance(cm, bool) or not isinstance(cm, int) or cm < 0:
                raise StoreError("expected a non-negative integer",
                                 field=f"merges[{i}].count_moved")
            merge_rows.append((m["alias"], m["canonical"], cm, m["reason"]))
        prepared = []
        for i, sig in enumerate(signatures):
            try:
                prepared.append(_prepare(sig))
            except AnalogistError as e:
                raise _at(e, i) from None
        now = self._clock().isoformat()
        with self._tx() as c:
            for i, p in enumerate(prepared):
                try:
                    self._rewrite(c, p, ns)
                except AnalogistError as e:
                    raise _at(e, i) from None
            for i, (name, desc, members, meta) in enumerate(sch_rows):
                ids = [self._require(m, ns, f"schemas[{i}].members[{j}]")
                       for j, m in enumerate(members)]
                old = c.execute("SELECT id, members FROM schemas WHERE namespace = ? AND "
                                "name = ?", (ns, name)).fetchone()
                if old is None:
                    c.execute("INSERT INTO schemas(namespace, name, description, members, meta) "
                              "VALUES (?, ?, ?, ?, ?)", (ns, name, desc, json.dumps(ids), meta))
                else:
                    union = sorted(set(json.loads(old[1])) | set(ids))
                    c.execute("UPDATE schemas SET description = ?, members = ?, meta = ? "
                              "WHERE id = ?", (desc, json.dumps(union), meta, old[0]))
            c.executemany("INSERT OR REPLACE INTO vocab(namespace, name, kind, arity, "
                          "definition, status, count, merged_into) VALUES (?, ?, ?, ?, ?, ?, ?, "
                          "?)", term_rows)
            c.executemany("INSERT OR REPLACE INTO vocab_merges(namespace, alias, canonical, "
                          "count_moved, reason, merged_at) VALUES (?, ?, ?, ?, ?, ?)",
                          [(ns, *r, now) for r in merge_rows])
        return {"signatures": len(prepared), "schemas": len(sch_rows), "terms": len(term_rows),
                "merges": len(merge_rows)}
