"""The store's tables and their forward-only migrations (DDL: SQLite's dialect;
``memory/postgres.py`` translates it).

Tables (schema version 7; versions 2 to 7 add the columns and tables marked "v2" ... "v7")
---------------------------------------------------------------------------------------
* ``schema_version(version, applied_at, description)`` — one row per applied migration;
* ``signatures(id, namespace, episode_id, kind, json, source_hash, created_at, superseded_by,
  verified, surface)`` — ``json`` is the signature's canonical data
  (:meth:`~analogist.signature.Signature.to_data`) as compact JSON (files written before v3 hold
  the pretty-printed :func:`~analogist.signature.dump_signature` text; both read the same);
  ``UNIQUE(namespace, episode_id)``; ``superseded_by`` → ``signatures.id`` (``ON DELETE SET
  NULL``); v3: ``surface`` — the episode's surface words
  (:func:`~analogist.index.features.surface_tokens`, sorted, space-separated; NULL in rows
  written before v3, which readers compute from ``json``);
* ``sig_relations(signature_id, position, predicate, args, in_causal_chain)`` — the relations in
  canonical order, ``args`` a JSON list of role tags (for exact lookups and counting);
* ``sig_vectors(signature_id, channel, format, data)`` — channel ``content``: the content counts as
  JSON text (format ``json-counts``); any other channel: an embedding as little-endian float32
  bytes (format ``float32``);
* ``sig_fingerprint(signature_id, fingerprint, depth)`` — WL hashes (failure-class counting);
* ``schemas(id, namespace, name, description, members, times_used, times_verified)``;
* ``vocab(namespace, name, kind, arity, definition, status, count)``;
* ``analogy_log(id, namespace, created_at, target, candidates, mapping, score, verdict,
  transferred, prediction, trigger, tier, tokens, outcome)`` — v2: the trigger(s) that fired the
  attempt (seed 000 §10), its tier, tokens spent and what it led to (:data:`OUTCOMES`);
* v2: ``schemas.meta`` (how a schema was induced), ``vocab.merged_into``,
  ``vocab_merges(namespace, alias, canonical, count_moved, reason, merged_at)`` (the merge map);
* v2: ``transfer_ledger(id, namespace, created_at, log_id, item, action, analogy_result,
  counterfactual_result, higher_is_better, verdict)`` — the negative-transfer ledger;
* v2: ``plans(id, namespace, name, json, status, created_at, status_changed_at)`` and
  ``plan_uses(id, namespace, plan_id, created_at, task, coverage, decision, status,
  instantiation, success, steps, tokens)`` — role-parameterised plans and their reuse record;
* v3: ``store_meta(key, value)`` (``store_id``: a random identity, so that files derived from a
  store — its saved index — are never taken for another store's) and ``namespace_state(namespace,
  generation, rewrites)``: triggers bump ``generation`` in the same transaction as every write
  to a namespace's episodes or schemas, and ``rewrites`` as well when an existing episode is
  changed or deleted (so an index that has seen generation ``g`` knows whether it may simply
  append the rows added since).

* v4: ``analogy_outcomes(id, namespace, created_at, log_id, used, outcome, ledger_id, note)``;
* v5: ``namespace`` on ``sig_relations``, ``sig_vectors`` and ``sig_fingerprint`` (the episode's
  namespace, so that the four episode tables can be partitioned by namespace; reads join on it);
* v6: no table changes: the stored fingerprints move to version 2 of the WL fingerprint
  (:func:`_refingerprint`).
* v7: the HTTP service's state that every worker process shares
  (:mod:`analogist.memory.service_state`): ``api_jobs(seq, id, namespace, kind, status,
  created_at, finished_at, result, error, owner, lease_until)`` — background jobs, their JSON
  result or error, the worker running them and how long its lease lasts (seconds since the
  epoch); ``api_sessions(seq, digest, key_id, name, namespaces, csrf, expires)`` — viewer
  sessions by the SHA-256 of their cookie value.

Every child row references ``signatures`` with ``ON DELETE CASCADE``;
:meth:`~analogist.memory.sqlite.Memory.delete` also removes them (and clears ``superseded_by``
pointers) itself, for stores partitioned across servers, which have no foreign keys between
partitions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from analogist.errors import AnalogistError
from analogist.index.features import _wl_v1, wl_fingerprints
from analogist.signature import validate_signature

_CHUNK = 2000


def _refingerprint(c: Any) -> None:
    """v6: every fingerprint this library computed at version 1 (string labels) replaced by
    version 2 of :func:`~analogist.index.features.wl_fingerprint`, which queries now compute
    (so that exact-shape matches keep matching). A stored fingerprint that is not the version-1
    fingerprint of its episode was supplied by the caller and stays; an episode whose stored
    JSON no longer validates keeps its row as it is. Every namespace's ``generation`` and
    ``rewrites`` are bumped, so that a saved stage-1 index (which holds fingerprint codes) is
    rebuilt, not reused. Reads in chunks of ids, all inside the migration's transaction."""
    top = c.execute("SELECT COALESCE(MAX(signature_id), 0) FROM sig_fingerprint").fetchone()[0]
    changed = 0
    for lo in range(0, int(top), _CHUNK):
        rows = c.execute(
            "SELECT f.signature_id, f.depth, f.fingerprint, s.json FROM sig_fingerprint f "
            "JOIN signatures s ON s.id = f.signature_id WHERE f.signature_id > ? "
            "AND f.signature_id <= ? ORDER BY f.signature_id, f.depth",
            (lo, lo + _CHUNK)).fetchall()
        by_depth: dict[int, list[tuple[int, Any]]] = {}
        for sid, depth, fp, text in rows:
            try:
                sig = validate_signature(json.loads(text))
            except (AnalogistError, ValueError, RecursionError):
                continue  # not readable as a signature: left as it is
            if not (isinstance(depth, int) and 0 <= depth <= 16) or fp != _wl_v1(sig, depth):
                continue
            by_depth.setdefault(depth, []).append((sid, sig))
        for depth, items in by_depth.items():
            new = wl_fingerprints([sig for _sid, sig in items], depth)
            c.executemany("UPDATE sig_fingerprint SET fingerprint = ? WHERE signature_id = ? "
                          "AND depth = ?",
                          [(fp, sid, depth) for (sid, _sig), fp in zip(items, new, strict=True)])
            changed += len(items)
    if changed:
        c.execute("UPDATE namespace_state SET generation = generation + 1, "
                  "rewrites = rewrites + 1")


Step = str | Callable[[Any], None]
"""A migration step: one SQL statement, or a function of the connection (data migrations that
SQL cannot express; the same code on SQLite and PostgreSQL)."""

# -- schema --------------------------------------------------------------------------------
MIGRATIONS: list[tuple[int, str, tuple[Step, ...]]] = [
    (1, "signatures, relations, vectors, fingerprints, schemas, vocab, analogy log", (
        """CREATE TABLE signatures (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            episode_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            json TEXT NOT NULL,
            source_hash TEXT,
            created_at TEXT NOT NULL,
            superseded_by INTEGER REFERENCES signatures(id) ON DELETE SET NULL,
            verified INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
            UNIQUE (namespace, episode_id)
        )""",
        "CREATE INDEX signatures_ns_superseded ON signatures(namespace, superseded_by)",
        "CREATE INDEX signatures_superseded_by ON signatures(superseded_by)",
        """CREATE TABLE sig_relations (
            signature_id INTEGER NOT NULL REFERENCES signatures(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            predicate TEXT NOT NULL,
            args TEXT NOT NULL,
            in_causal_chain INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (signature_id, position)
        )""",
        "CREATE INDEX sig_relations_predicate ON sig_relations(predicate)",
        """CREATE TABLE sig_vectors (
            signature_id INTEGER NOT NULL REFERENCES signatures(id) ON DELETE CASCADE,
            channel TEXT NOT NULL,
            format TEXT NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (signature_id, channel)
        )""",
        "CREATE INDEX sig_vectors_channel ON sig_vectors(channel)",
        """CREATE TABLE sig_fingerprint (
            signature_id INTEGER NOT NULL REFERENCES signatures(id) ON DELETE CASCADE,
            fingerprint TEXT NOT NULL,
            depth INTEGER NOT NULL,
            PRIMARY KEY (signature_id, depth)
        )""",
        "CREATE INDEX sig_fingerprint_hash ON sig_fingerprint(fingerprint)",
        """CREATE TABLE schemas (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            members TEXT NOT NULL,
            times_used INTEGER NOT NULL DEFAULT 0,
            times_verified INTEGER NOT NULL DEFAULT 0,
            UNIQUE (namespace, name)
        )""",
        """CREATE TABLE vocab (
            namespace TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            arity INTEGER NOT NULL,
            definition TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'declared',
            count INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (namespace, name)
        )""",
        """CREATE TABLE analogy_log (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            created_at TEXT NOT NULL,
            target TEXT NOT NULL,
            candidates TEXT NOT NULL,
            mapping TEXT,
            score REAL,
            verdict TEXT,
            transferred INTEGER,
            prediction TEXT
        )""",
        "CREATE INDEX analogy_log_ns ON analogy_log(namespace, id)",
    )),
    (2, "consolidation, triggers, plans and the negative-transfer ledger", (
        # analogy_log: the trigger that fired the attempt, its tier, tokens spent, the outcome
        "ALTER TABLE analogy_log ADD COLUMN trigger TEXT",
        "ALTER TABLE analogy_log ADD COLUMN tier INTEGER",
        "ALTER TABLE analogy_log ADD COLUMN tokens INTEGER",
        "ALTER TABLE analogy_log ADD COLUMN outcome TEXT",
        "ALTER TABLE schemas ADD COLUMN meta TEXT",
        "ALTER TABLE vocab ADD COLUMN merged_into TEXT",
        """CREATE TABLE vocab_merges (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            alias TEXT NOT NULL,
            canonical TEXT NOT NULL,
            count_moved INTEGER NOT NULL,
            reason TEXT NOT NULL,
            merged_at TEXT NOT NULL,
            UNIQUE (namespace, alias)
        )""",
        """CREATE TABLE transfer_ledger (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            created_at TEXT NOT NULL,
            log_id INTEGER REFERENCES analogy_log(id) ON DELETE SET NULL,
            item TEXT NOT NULL,
            action TEXT NOT NULL,
            analogy_result REAL NOT NULL,
            counterfactual_result REAL,
            higher_is_better INTEGER NOT NULL DEFAULT 1,
            verdict TEXT NOT NULL CHECK (verdict IN ('better', 'same', 'worse', 'unknown'))
        )""",
        "CREATE INDEX transfer_ledger_ns ON transfer_ledger(namespace, id)",
        """CREATE TABLE plans (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            name TEXT NOT NULL,
            json TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'plan' CHECK (status IN ('plan', 'macro', 'retired')),
            created_at TEXT NOT NULL,
            status_changed_at TEXT,
            UNIQUE (namespace, name)
        )""",
        """CREATE TABLE plan_uses (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            plan_id INTEGER REFERENCES plans(id) ON DELETE CASCADE,
            created_at TEXT NOT NULL,
            task TEXT NOT NULL,
            coverage REAL,
            decision TEXT NOT NULL CHECK (decision IN ('adapted', 'from_scratch')),
            status TEXT NOT NULL CHECK (status IN ('offered', 'rejected', 'unoffered')),
            instantiation TEXT,
            success INTEGER CHECK (success IN (0, 1)),
            steps INTEGER,
            tokens INTEGER
        )""",
        "CREATE INDEX plan_uses_ns ON plan_uses(namespace, plan_id)",
    )),
    (3, "store identity, per-namespace generation counters, stored surface tokens", (
        """CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        "INSERT INTO store_meta(key, value) VALUES ('store_id', lower(hex(randomblob(16))))",
        # generation: bumped by every write to a namespace's episodes or schemas (in the same
        # transaction, by the triggers below); rewrites: bumped by the writes that change or
        # remove an existing episode (an index may append new rows only while it is unchanged)
        """CREATE TABLE namespace_state (
            namespace TEXT PRIMARY KEY,
            generation INTEGER NOT NULL DEFAULT 0,
            rewrites INTEGER NOT NULL DEFAULT 0
        )""",
        "INSERT INTO namespace_state(namespace, generation) "
        "SELECT namespace, COUNT(*) FROM signatures GROUP BY namespace",
        "ALTER TABLE signatures ADD COLUMN surface TEXT",
        """CREATE TRIGGER signatures_generation_insert AFTER INSERT ON signatures BEGIN
            INSERT INTO namespace_state(namespace, generation) VALUES (NEW.namespace, 1)
            ON CONFLICT(namespace) DO UPDATE SET generation = generation + 1;
        END""",
        """CREATE TRIGGER signatures_generation_delete AFTER DELETE ON signatures BEGIN
            INSERT INTO namespace_state(namespace, generation, rewrites)
            VALUES (OLD.namespace, 1, 1) ON CONFLICT(namespace)
            DO UPDATE SET generation = generation + 1, rewrites = rewrites + 1;
        END""",
        """CREATE TRIGGER signatures_generation_rewrite
            AFTER UPDATE OF namespace, episode_id, kind, json ON signatures BEGIN
            INSERT INTO namespace_state(namespace, generation, rewrites)
            VALUES (NEW.namespace, 1, 1) ON CONFLICT(namespace)
            DO UPDATE SET generation = generation + 1, rewrites = rewrites + 1;
        END""",
        """CREATE TRIGGER signatures_generation_update
            AFTER UPDATE OF superseded_by, verified, source_hash ON signatures BEGIN
            INSERT INTO namespace_state(namespace, generation) VALUES (NEW.namespace, 1)
            ON CONFLICT(namespace) DO UPDATE SET generation = generation + 1;
        END""",
        *(f"""CREATE TRIGGER schemas_generation_{op.lower()} AFTER {op} ON schemas BEGIN
            INSERT INTO namespace_state(namespace, generation) VALUES ({row}.namespace, 1)
            ON CONFLICT(namespace) DO UPDATE SET generation = generation + 1;
        END""" for op, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))),
    )),
    (4, "recorded outcomes of analogy attempts (the loop that feeds triggers and the ledger)", (
        # one row per outcome report; the log entry's outcome column keeps the latest
        """CREATE TABLE analogy_outcomes (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            created_at TEXT NOT NULL,
            log_id INTEGER NOT NULL REFERENCES analogy_log(id) ON DELETE CASCADE,
            used TEXT,
            outcome TEXT NOT NULL CHECK (outcome IN ('useful', 'not_useful', 'negative')),
            ledger_id INTEGER REFERENCES transfer_ledger(id) ON DELETE SET NULL,
            note TEXT
        )""",
        "CREATE INDEX analogy_outcomes_ns ON analogy_outcomes(namespace, log_id)",
    )),
    (5, "namespace column on the episode child tables (partitioning by namespace)", (
        # every row of an episode carries its namespace, so that the four episode tables can be
        # partitioned by it (PostgreSQL, memory/pg_partition.py) and stay together per namespace
        *(stmt for table in ("sig_relations", "sig_vectors", "sig_fingerprint") for stmt in (
            f"ALTER TABLE {table} ADD COLUMN namespace TEXT NOT NULL DEFAULT ''",
            f"UPDATE {table} SET namespace = (SELECT s.namespace FROM signatures s "
            f"WHERE s.id = {table}.signature_id)",
        )),
    )),
    (6, "WL fingerprints version 2 (interned integer labels, 64-bit hashes)", (
        _refingerprint,
    )),
    (7, "background jobs and viewer sessions shared by the service's worker processes", (
        """CREATE TABLE api_jobs (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL
                CHECK (status IN ('queued', 'running', 'done', 'skipped', 'failed')),
            created_at TEXT NOT NULL,
            finished_at TEXT,
            result TEXT,
            error TEXT,
            owner TEXT NOT NULL,
            lease_until REAL NOT NULL
        )""",
        "CREATE INDEX api_jobs_owner ON api_jobs(owner, status)",
        """CREATE TABLE api_sessions (
            seq INTEGER PRIMARY KEY,
            digest TEXT NOT NULL UNIQUE,
            key_id TEXT NOT NULL,
            name TEXT NOT NULL,
            namespaces TEXT NOT NULL,
            csrf TEXT NOT NULL,
            expires REAL NOT NULL
        )""",
        "CREATE INDEX api_sessions_key ON api_sessions(key_id)",
    )),
]
"""Forward-only migrations: (version, description, statements). Never edit a released entry;
append a new one."""

SCHEMA_VERSION = MIGRATIONS[-1][0]
