"""The default analogical memory: one SQLite file (seed 000 §9).

A :class:`Memory` stores Structural Signatures with the indexes MAC needs — content counts, WL
fingerprints, optional abstract-text embeddings — plus induced schemas, a vocabulary table and a log
of every analogy attempt. It knows nothing of SME; ``retrieve`` joins the two.

Tables (schema version 5; versions 2 to 5 add the columns and tables marked "v2" ... "v5")
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
  namespace, so that the four episode tables can be partitioned by namespace; reads join on it).

Every child row references ``signatures`` with ``ON DELETE CASCADE``; :meth:`Memory.delete` also
removes them (and clears ``superseded_by`` pointers) itself, for stores partitioned across
servers, which have no foreign keys between partitions.

Guarantees
----------
* Namespaces are hard partitions: every read and write names one namespace and filters by it; an
  id from another namespace is "not found". Build a content index per namespace
  (:meth:`Memory.content_rows`) so that IDF never crosses namespaces.
* Every write is one transaction (``BEGIN IMMEDIATE``); :meth:`Memory.add_many` commits one
  transaction per batch. Records are validated (and their features computed) before the batch's
  transaction starts, so a bad record rejects its whole batch with an error naming the record
  index and field, and nothing of that batch is written; earlier batches stay. A writer killed
  mid-batch leaves the file intact and the batch absent (SQLite's journal).
* WAL mode: readers do not block the writer nor see its uncommitted rows; use
  :meth:`Memory.snapshot` to make several reads see one consistent state.
* All SQL is parameterised; hostile text is stored verbatim, never executed.
* Forward-only migrations run inside a transaction on open; a file written by a newer version is
  refused.
"""

from __future__ import annotations

import builtins
import gc
import json
import math
import re
import sqlite3
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from analogist.errors import AnalogistError, SignatureError
from analogist.index.features import (
    EpisodeFeatures,
    extract_features,
    surface_tokens,
    surface_tokens_of_data,
)
from analogist.index.mac import ContentMatrix
from analogist.signature import (
    MAX_TEXT,
    Signature,
    loads_signature,
    validate_signature,
)

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "DuplicateEpisodeError",
    "Memory",
    "NotFoundError",
    "SchemaVersionError",
    "StoreError",
    "OUTCOMES",
    "PLAN_STATUSES",
    "StoredEpisode",
]


class StoreError(AnalogistError):
    """A store-level problem: bad arguments, an unreadable file, a failed write."""


class DuplicateEpisodeError(StoreError):
    """An episode id already present in the namespace."""


class NotFoundError(StoreError):
    """No such episode (in this namespace)."""


class SchemaVersionError(StoreError):
    """The file's schema is newer than this version of analogist understands."""


# -- schema --------------------------------------------------------------------------------
MIGRATIONS: list[tuple[int, str, tuple[str, ...]]] = [
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
]
"""Forward-only migrations: (version, description, statements). Never edit a released entry;
append a new one."""

SCHEMA_VERSION = MIGRATIONS[-1][0]

# -- limits --------------------------------------------------------------------------------
MAX_NAMESPACE = 100
MAX_FEATURES = 20_000
MAX_FEATURE_NAME = 1_000
MAX_EMBEDDING_DIM = 65_536
MAX_JSON_BYTES = 1_000_000
MAX_JSON_DEPTH = 64
MAX_LIST = 1_000_000
_CHANNEL = re.compile(r"^[A-Za-z][A-Za-z0-9_.:\-]{0,63}$")
_HEX = re.compile(r"^[0-9a-f]{16,128}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    """One stored signature with its bookkeeping."""

    id: int
    namespace: str
    episode_id: str
    kind: str
    signature: Signature
    source_hash: str | None
    created_at: str
    superseded_by: int | None
    verified: bool

    @property
    def is_superseded(self) -> bool:
        return self.superseded_by is not None


@dataclass(frozen=True, slots=True)
class _Prepared:
    sig: Signature
    text: str
    features: EpisodeFeatures
    vectors: tuple[tuple[str, str, bytes | str], ...]
    surface: str


# -- validation helpers --------------------------------------------------------------------
def _namespace(ns: Any) -> str:
    if not isinstance(ns, str) or not 1 <= len(ns) <= MAX_NAMESPACE or _CONTROL.search(ns):
        raise StoreError(
            f"namespace must be a string of 1 to {MAX_NAMESPACE} characters without control "
            f"characters, got {ns!r}"[:200], field="namespace")
    return ns


def _check_depth(value: Any, field: str) -> None:
    """Reject JSON nested deeper than MAX_JSON_DEPTH (iteratively: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        v, d = stack.pop()
        seen += 1
        if seen > MAX_LIST:
            raise StoreError(f"more than {MAX_LIST} JSON values", field=field)
        if isinstance(v, (dict, list, tuple)):
            if d >= MAX_JSON_DEPTH:
                raise StoreError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", field=field)
            items = v.values() if isinstance(v, dict) else v
            if isinstance(v, dict) and not all(isinstance(k, str) for k in v):
                raise StoreError("JSON object keys must be strings", field=field)
            stack.extend((x, d + 1) for x in items)


def _json_text(value: Any, field: str, *, nullable: bool = False) -> str | None:
    if value is None:
        if nullable:
            return None
        raise StoreError("a value is required", field=field)
    if isinstance(value, Signature):
        value = value.to_data()
    _check_depth(value, field)
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False,
                          separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise StoreError(f"not JSON-serialisable: {e}"[:300], field=field) from None
    if len(text.encode("utf-8", errors="surrogatepass")) > MAX_JSON_BYTES:
        raise StoreError(f"JSON text over {MAX_JSON_BYTES} bytes", field=field)
    return text


def _check_features(f: Any) -> EpisodeFeatures:
    if not isinstance(f, EpisodeFeatures):
        raise StoreError(f"expected EpisodeFeatures, got {type(f).__name__}", field="features")
    if not isinstance(f.content, Mapping) or len(f.content) > MAX_FEATURES:
        raise StoreError(f"content must be a mapping of at most {MAX_FEATURES} features",
                         field="features.content")
    for k, v in f.content.items():
        if not isinstance(k, str) or not 1 <= len(k) <= MAX_FEATURE_NAME:
            raise StoreError(f"feature names must be strings of 1 to {MAX_FEATURE_NAME} "
                             f"characters, got {k!r}"[:200], field="features.content")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or v < 0:
            raise StoreError(f"count of {k[:80]!r} must be a finite number >= 0, got {v!r}"[:200],
                             field="features.content")
    if not isinstance(f.fingerprint, str) or not _HEX.match(f.fingerprint):
        raise StoreError("fingerprint must be a lower-case hex digest", field="features.fingerprint")
    if isinstance(f.fingerprint_depth, bool) or not isinstance(f.fingerprint_depth, int) \
            or not 0 <= f.fingerprint_depth <= 16:
        raise StoreError("fingerprint_depth must be an integer from 0 to 16",
                         field="features.fingerprint_depth")
    return f


def _embedding_rows(embeddings: Any) -> list[tuple[str, str, bytes]]:
    if embeddings is None:
        return []
    if not isinstance(embeddings, Mapping):
        raise StoreError("embeddings must map a channel name to a vector", field="embeddings")
    rows = []
    for ch in sorted(embeddings):
        if not isinstance(ch, str) or not _CHANNEL.match(ch) or ch == "content":
            raise StoreError(f"bad embedding channel {ch!r}: a letter then letters, digits or "
                             f"_.:- (at most 64), not 'content'"[:200], field="embeddings")
        try:
            a = np.asarray(embeddings[ch], dtype=np.float64)
        except (TypeError, ValueError):
            raise StoreError("embedding is not a numeric vector", field=f"embeddings.{ch}") from None
        if a.ndim != 1 or not 1 <= a.size <= MAX_EMBEDDING_DIM:
            raise StoreError(f"embedding must be a 1-D vector of 1 to {MAX_EMBEDDING_DIM} "
                             f"numbers, got shape {a.shape}", field=f"embeddings.{ch}")
        if not np.all(np.isfinite(a)):
            raise StoreError("embedding has NaN or infinite values", field=f"embeddings.{ch}")
        rows.append((ch, "float32", a.astype("<f4").tobytes()))
    return rows


def _validated(record: Any) -> Signature:
    if isinstance(record, Signature):
        try:
            data = record.to_data()
        except AnalogistError:
            raise
        except Exception as e:  # a model_construct()ed object with bad fields
            raise SignatureError(f"not a valid Signature: {type(e).__name__}") from None
        return validate_signature(data)
    if isinstance(record, Mapping):
        return validate_signature(dict(record))
    raise SignatureError(f"expected a Signature or a mapping, got {type(record).__name__}")


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""What ``json.dumps(x, ensure_ascii=False, separators=(",", ":"))`` writes, without making an
encoder per call."""


def _prepare(record: Any, features: Any = None, embeddings: Any = None) -> _Prepared:
    sig = _validated(record)
    if features is None:  # extract_features gives float counts with their keys sorted
        feats = extract_features(sig)
        counts = _COMPACT.encode(feats.content)
    else:
        feats = _check_features(features)
        counts = _COMPACT.encode({k: float(v) for k, v in sorted(feats.content.items())})
    vectors: list[tuple[str, str, bytes | str]] = [("content", "json-counts", counts)]
    vectors.extend(_embedding_rows(embeddings))
    # compact canonical JSON: one encode call (the pretty text is for people, not for the store)
    text = _COMPACT.encode(sig.to_data())
    return _Prepared(sig, text, feats, tuple(vectors), " ".join(sorted(surface_tokens(sig))))


def _with_embeddings(p: _Prepared, embeddings: Any) -> _Prepared:
    """``p`` with the vectors of ``embeddings`` beside its content counts (its signature is
    already validated)."""
    return _Prepared(p.sig, p.text, p.features, (p.vectors[0], *_embedding_rows(embeddings)),
                     p.surface)


MAX_ID = 2 ** 63 - 1
"""Largest integer SQLite stores (ids, limits, offsets, counts beyond it are refused)."""


def _limit(value: Any, field: str, *, allow_none: bool = True) -> int:
    if value is None and allow_none:
        return -1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ID:
        raise StoreError(f"expected an integer from 0 to {MAX_ID}, got {value!r}"[:200],
                         field=field)
    return value


def _now() -> datetime:
    return datetime.now(UTC)


OUTCOMES: tuple[str, ...] = ("useful", "not_useful", "negative")
"""What a logged analogy attempt led to: a useful analogy, one that did not help, or a negative
transfer (worse than acting without it)."""

PLAN_STATUSES: tuple[str, ...] = ("plan", "macro", "retired")


def _term_row(ns: str, name: Any, kind: Any, arity: Any, definition: Any, status: Any,
              count: Any, merged_into: Any) -> tuple[Any, ...]:
    for f, v, n in (("name", name, 200), ("kind", kind, 50), ("definition", definition,
                                                               MAX_TEXT)):
        if not isinstance(v, str) or len(v) > n or (f != "definition" and not v):
            raise StoreError(f"{f} must be a string of at most {n} characters", field=f)
    if status not in ("declared", "proposed", "merged"):
        raise StoreError("status must be declared, proposed or merged", field="status")
    for f, v in (("arity", arity), ("count", count)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise StoreError(f"{f} must be a non-negative integer", field=f)
    if merged_into is not None and (not isinstance(merged_into, str)
                                    or not 1 <= len(merged_into) <= 200):
        raise StoreError("merged_into must be null or a term name", field="merged_into")
    if (status == "merged") != (merged_into is not None):
        raise StoreError("a merged term names the term it was merged into (and only a merged "
                         "term does)", field="merged_into")
    return (ns, name, kind, arity, definition, status, count, merged_into)


def _trigger_fields(trigger: Any, tier: Any, tokens: Any
                    ) -> tuple[str | None, int | None, int | None]:
    trig = _json_text(trigger, "trigger", nullable=True)
    if tier is not None and (isinstance(tier, bool) or tier not in (0, 1, 2)):
        raise StoreError(f"tier must be 0, 1 or 2, got {tier!r}"[:200], field="tier")
    tok = None if tokens is None else _limit(tokens, "tokens")
    return trig, tier, tok


def _transfer_values(item: Any, action: Any, analogy_result: Any, counterfactual_result: Any,
                     higher_is_better: Any) -> tuple[str, str, float, float | None, bool, str]:
    """Validated ledger values and the verdict (``better``/``same``/``worse``/``unknown``)."""
    for f, v in (("item", item), ("action", action)):
        if not isinstance(v, str) or not 1 <= len(v) <= MAX_TEXT:
            raise StoreError(f"{f} must be a string of 1 to {MAX_TEXT} characters", field=f)
    vals: list[float | None] = []
    for f, v in (("analogy_result", analogy_result),
                 ("counterfactual_result", counterfactual_result)):
        if v is None and f == "counterfactual_result":
            vals.append(None)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise StoreError(f"{f} must be a finite number, got {v!r}"[:200], field=f)
        vals.append(float(v))
    if not isinstance(higher_is_better, bool):
        raise StoreError("higher_is_better must be a boolean", field="higher_is_better")
    a, cf = vals
    assert a is not None
    if cf is None:
        verdict = "unknown"
    elif a == cf:
        verdict = "same"
    else:
        verdict = "better" if (a > cf) == higher_is_better else "worse"
    return item, action, a, cf, higher_is_better, verdict


# -- collector pauses ----------------------------------------------------------------------
_GC_LOCK = threading.Lock()
_GC_PAUSES = 0


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a bulk add prepares a batch.

    A batch holds thousands of freshly validated signatures (acyclic objects: nothing for the
    collector to free), and with the collector on, its full passes rescan them again and again,
    which costs more than the validation. Pauses nest and overlap across threads; the collector
    comes back on when the last pause ends, if it was on before the first."""
    global _GC_PAUSES
    with _GC_LOCK:
        if _GC_PAUSES == 0:
            _collector_paused.was_enabled = gc.isenabled()  # type: ignore[attr-defined]
            gc.disable()
        _GC_PAUSES += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES -= 1
            if _GC_PAUSES == 0 and _collector_paused.was_enabled:  # type: ignore[attr-defined]
                gc.enable()


# -- the store -----------------------------------------------------------------------------
_RELATIONS_SQL = ("INSERT INTO sig_relations(signature_id, position, predicate, args, "
                  "in_causal_chain{ns}) VALUES (?, ?, ?, ?, ?{nsq})")
_NS_VERSION = 5  # the schema version from which the episode child tables carry the namespace


def _child_sql(sql: str, with_ns: bool) -> str:
    """An INSERT into a child table, with the namespace column (schema v5) or without (a file
    at an older schema: only while tests pose as an older release)."""
    return sql.format(ns=", namespace" if with_ns else "", nsq=", ?" if with_ns else "")


def _relation_rows(sid: int, sig: Signature, ns: tuple[str, ...] = ()
                   ) -> builtins.list[tuple[Any, ...]]:
    """The relation rows of one stored signature (marking those its causal chain uses); ``args``
    is the JSON list of role tags exactly as ``json.dumps`` writes it (role tags are plain
    ASCII identifiers, so no escaping is needed); ``ns``: ``(namespace,)`` appended to each
    row, or ``()``."""
    chain_atoms = {(a.predicate, a.args) for e in sig.causal_chain for a in e.atoms()}
    return [(sid, i, a.predicate, "[" + ", ".join(f'"{t}"' for t in a.args) + "]",
             int((a.predicate, a.args) in chain_atoms), *ns)
            for i, a in enumerate(sig.relations)]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_POSTGRES = re.compile(r"^postgres(ql)?://", re.I)


class Memory:
    """An analogical memory in one SQLite file. Open with :meth:`open`; close with
    :meth:`close` or use it as a context manager.

    Args (of :meth:`open`):
        path: the database file (created when missing); ``":memory:"`` for a private in-memory
            store (no WAL).
        timeout: seconds to wait for another writer's lock (``busy_timeout``).
        clock: returns the current time (UTC) for ``created_at``; for reproducible tests.
    """

    def __init__(self, conn: sqlite3.Connection, path: str,
                 clock: Callable[[], datetime] = _now) -> None:
        self._conn: sqlite3.Connection | None = conn
        self.path = path
        self._clock = clock
        self._version = SCHEMA_VERSION

    _integrity_errors: tuple[type[BaseException], ...] = (sqlite3.IntegrityError,)
    """What a unique-constraint violation raises on this backend."""

    @classmethod
    def open(cls, path: str | Path, *, timeout: float = 30.0,
             clock: Callable[[], datetime] | None = None) -> Memory:
        p = str(path)
        if _URL.match(p):
            where = p.split("@")[-1][:200]
            if _POSTGRES.match(p):
                raise StoreError("a PostgreSQL URL: open it with analogist.memory.open_memory "
                                 "(Memory.open takes SQLite file paths)", source=where)
            raise StoreError("unknown store URL scheme: expected a SQLite file path or a "
                             "postgresql:// URL", source=where)
        if p != ":memory:" and Path(p).is_dir():
            raise StoreError("is a directory, expected a database file", source=p)
        try:
            conn = sqlite3.connect(p, timeout=timeout, isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open database: {e}", source=p) from None
        mem = cls(conn, p, clock or _now)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute("PRAGMA synchronous = NORMAL")
            mem._migrate()
        except sqlite3.DatabaseError as e:
            conn.close()
            raise StoreError(f"not a usable analogist database: {e}", source=p) from None
        except BaseException:
            conn.close()
            raise
        return mem

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("the memory is closed", source=self.path)
        return self._conn

    def _migrate(self) -> None:
        c = self.conn
        c.execute("""CREATE TABLE IF NOT EXISTS schema_version (
            version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL, description TEXT NOT NULL)""")
        self._version = self.schema_version()
        if self._version == SCHEMA_VERSION:
            return
        with self._tx():
            current = self.schema_version()  # re-read under the write lock
            if current > SCHEMA_VERSION:
                raise SchemaVersionError(
                    f"database schema version {current} is newer than this analogist "
                    f"supports ({SCHEMA_VERSION})", source=self.path)
            for version, description, statements in MIGRATIONS:
                if version <= current:
                    continue
                for stmt in statements:
                    c.execute(stmt)
                c.execute("INSERT INTO schema_version(version, applied_at, description) "
                          "VALUES (?, ?, ?)", (version, self._clock().isoformat(), description))
        self._version = self.schema_version()

    def schema_version(self) -> int:
        """The highest applied migration (0 for an empty file)."""
        row = self.conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()
        return int(row[0])

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        c = self.conn
        if c.in_transaction:
            raise StoreError("cannot write inside a snapshot or another transaction")
        c.execute("BEGIN IMMEDIATE")
        try:
            yield c
        except BaseException:
            c.execute("ROLLBACK")
            raise
        c.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[Memory]:
        """Make the reads inside the block see one consistent state (a read transaction)."""
        c = self.conn
        if c.in_transaction:
            raise StoreError("a snapshot is already open")
        c.execute("BEGIN")
        c.execute("SELECT 1 FROM signatures LIMIT 1").fetchall()  # start the read snapshot
        try:
            yield self
        finally:
            c.execute("COMMIT")

    # -- writing ---------------------------------------------------------------------------
    def _insert_batch(self, batch: Sequence[_Prepared], namespace: str, now: str
                      ) -> builtins.list[int]:
        """Insert prepared records inside the caller's write transaction: one ``executemany``
        per table. Row ids are assigned here (the write lock is held, so ``MAX(id) + 1 ...``
        is ours). The caller has checked the episode ids (:meth:`_first_stored`)."""
        c = self.conn
        if not batch:
            return []
        first = int(c.execute("SELECT COALESCE(MAX(id), 0) FROM signatures").fetchone()[0]) + 1
        sids = builtins.list(range(first, first + len(batch)))
        # (a file at an older schema — only while tests pose as an older release — has no
        # surface column)
        surface = self._version >= 3
        c.executemany(
            "INSERT INTO signatures(id, namespace, episode_id, kind, json, source_hash, "
            f"created_at, verified{', surface' if surface else ''}) VALUES "
            f"(?, ?, ?, ?, ?, ?, ?, ?{', ?' if surface else ''})",
            [(sid, namespace, p.sig.episode_id, p.sig.kind, p.text,
              p.sig.provenance.source_hash, now, int(p.sig.verified),
              *((p.surface,) if surface else ())) for sid, p in zip(sids, batch, strict=True)])
        # the child rows carry the namespace (schema v5): the tables are partitioned by it
        with_ns = self._version >= _NS_VERSION
        ns = (namespace,) if with_ns else ()
        c.executemany(_child_sql(_RELATIONS_SQL, with_ns),
                      [r for sid, p in zip(sids, batch, strict=True)
                       for r in _relation_rows(sid, p.sig, ns)])
        c.executemany(
            _child_sql("INSERT INTO sig_vectors(signature_id, channel, format, data{ns}) "
                       "VALUES (?, ?, ?, ?{nsq})", with_ns),
            [(sid, ch, fmt, data, *ns) for sid, p in zip(sids, batch, strict=True)
             for ch, fmt, data in p.vectors])
        c.executemany(
            _child_sql("INSERT INTO sig_fingerprint(signature_id, fingerprint, depth{ns}) "
                       "VALUES (?, ?, ?{nsq})", with_ns),
            [(sid, p.features.fingerprint, p.features.fingerprint_depth, *ns)
             for sid, p in zip(sids, batch, strict=True)])
        return sids

    def _first_stored(self, batch: Sequence[_Prepared], namespace: str) -> None:
        """Raise :class:`DuplicateEpisodeError` (its ``position``: the index in ``batch``) for
        the first record whose episode id is already stored in ``namespace``."""
        eids = [p.sig.episode_id for p in batch]
        taken: set[str] = set()
        for start in range(0, len(eids), 500):
            chunk = eids[start:start + 500]
            taken.update(r[0] for r in self.conn.execute(
                f"SELECT episode_id FROM signatures WHERE namespace = ? AND episode_id IN "
                f"({','.join('?' * len(chunk))})", (namespace, *chunk)))
        if taken:
            j = next(j for j, e in enumerate(eids) if e in taken)
            err = DuplicateEpisodeError(
                f"episode {eids[j]!r} is already stored in namespace {namespace!r}",
                field="episode_id")
            err.position = j  # type: ignore[attr-defined]
            raise err

    def check_new(self, episode_ids: Iterable[str], *, namespace: str = "default") -> None:
        """Raise :class:`DuplicateEpisodeError` naming the first (in sorted order) of
        ``episode_ids`` already stored in ``namespace``: for a caller that wants to refuse a
        whole input before any of its batches is written."""
        ns = _namespace(namespace)
        want = sorted(set(episode_ids))
        for start in range(0, len(want), 500):
            chunk = want[start:start + 500]
            row = self.conn.execute(
                f"SELECT MIN(episode_id) FROM signatures WHERE namespace = ? AND episode_id IN "
                f"({','.join('?' * len(chunk))})", (ns, *chunk)).fetchone()
            if row[0] is not None:
                raise DuplicateEpisodeError(
                    f"episode {row[0]!r} is already stored in namespace {ns!r}"[:300],
                    field="episode_id")

    def add(self, sig: Signature | Mapping[str, Any], *, namespace: str = "default",
            features: EpisodeFeatures | None = None,
            embeddings: Mapping[str, np.ndarray] | None = None) -> int:
        """Store one signature; returns its id. ``features`` are computed with
        :func:`~analogist.index.features.extract_features` when None; ``embeddings`` maps a
        channel name (e.g. ``"L2"``) to a vector."""
        ns = _namespace(namespace)
        p = _prepare(sig, features, embeddings)
        with self._tx():
            self._first_stored([p], ns)
            return self._insert_batch([p], ns, self._clock().isoformat())[0]

    def add_many(self, sigs: Iterable[Signature | Mapping[str, Any]], *,
                 namespace: str = "default", batch_size: int = 500,
                 progress: Callable[[int], None] | None = None,
                 embed: Callable[[Signature], Mapping[str, np.ndarray]] | None = None
                 ) -> list[int]:
        """Store many signatures, one transaction per batch of ``batch_size``.

        ``embed``, when given, maps each validated signature to its embeddings (channel → vector,
        as for :meth:`add`); it is called before the record's batch is written.

        A bad record (invalid, or an episode id already stored or repeated) raises an
        :class:`AnalogistError` naming ``records[i].<field>`` (``i`` counts from 0 over all of
        ``sigs``); nothing of its batch is written, earlier batches stay, later records are not
        tried. ``progress(n)`` is called after each committed batch with the number stored so far.
        """
        ns = _namespace(namespace)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise StoreError(f"batch_size must be a positive integer, got {batch_size!r}",
                             field="batch_size")
        ids: list[int] = []
        batch: list[tuple[int, _Prepared]] = []

        def flush() -> None:
            if not batch:
                return
            now = self._clock().isoformat()
            prepared = [p for _i, p in batch]
            with self._tx():
                try:
                    self._first_stored(prepared, ns)
                except DuplicateEpisodeError as e:
                    raise _at(e, batch[e.position][0]) from None  # type: ignore[attr-defined]
                new = self._insert_batch(prepared, ns, now)
            ids.extend(new)
            batch.clear()
            if progress is not None:
                progress(len(ids))

        seen: dict[str, int] = {}
        with _collector_paused():
            for i, rec in enumerate(sigs):
                try:
                    p = _prepare(rec)
                    if embed is not None:
                        p = _with_embeddings(p, embed(p.sig))
                except AnalogistError as e:
                    raise _at(e, i) from None
                first = seen.get(p.sig.episode_id)
                if first is not None:
                    raise DuplicateEpisodeError(
                        f"record {i}: episode {p.sig.episode_id!r} repeats record {first}",
                        field=f"records[{i}].episode_id")
                seen[p.sig.episode_id] = i
                batch.append((i, p))
                if len(batch) >= batch_size:
                    flush()
            flush()
        return ids

    def delete(self, key: int | str, namespace: str = "default") -> bool:
        """Delete an episode (and its relations, vectors, fingerprint); False when absent."""
        ns = _namespace(namespace)
        with self._tx() as c:
            sid = self._find(key, ns)
            if sid is None:
                return False
            # explicitly, not only by the foreign keys' ON DELETE actions: a partitioned
            # PostgreSQL store (memory/pg_partition.py) has no foreign keys across its partitions
            c.execute("UPDATE signatures SET superseded_by = NULL WHERE superseded_by = ? "
                      "AND namespace = ?", (sid, ns))
            for table in ("sig_relations", "sig_vectors", "sig_fingerprint"):
                c.execute(f"DELETE FROM {table} WHERE signature_id = ?{self._and_ns()}",
                          (sid, *self._ns_param(ns)))
            c.execute("DELETE FROM signatures WHERE id = ? AND namespace = ?", (sid, ns))
            return True

    def _and_ns(self, alias: str = "") -> str:
        """`` AND namespace = ?`` for a child table (schema v5), else nothing."""
        return f" AND {alias}namespace = ?" if self._version >= _NS_VERSION else ""

    def _join_ns(self, alias: str) -> str:
        """``AND <alias>.namespace = s.namespace `` (a child table joined to ``signatures s``,
        schema v5: lets the planner prune a partitioned store to the namespace's partition)."""
        return f"AND {alias}.namespace = s.namespace " if self._version >= _NS_VERSION else ""

    def _ns_param(self, ns: str) -> tuple[str, ...]:
        return (ns,) if self._version >= _NS_VERSION else ()

    def supersede(self, old: int | str, new: int | str, namespace: str = "default") -> None:
        """Mark ``old`` as superseded by ``new`` (both in ``namespace``). A superseded episode
        stays stored and retrievable but ranks below its replacement."""
        ns = _namespace(namespace)
        with self._tx() as c:
            o, n = self._require(old, ns, "old"), self._require(new, ns, "new")
            if o == n:
                raise StoreError("an episode cannot supersede itself", field="new")
            cur: int | None = n
            hops = 0
            while cur is not None:
                if cur == o:
                    raise StoreError("supersession would form a cycle", field="new")
                row = c.execute("SELECT superseded_by FROM signatures WHERE id = ? "
                                "AND namespace = ?", (cur, ns)).fetchone()
                cur = row[0] if row else None
                hops += 1
                if hops > 1_000_000:
                    raise StoreError("supersession chain too long", field="new")
            c.execute("UPDATE signatures SET superseded_by = ? WHERE id = ? AND namespace = ?",
                      (n, o, ns))

    # -- reading ---------------------------------------------------------------------------
    def _find(self, key: Any, ns: str) -> int | None:
        if isinstance(key, bool):
            raise StoreError("expected an id (int) or an episode id (str), got a boolean",
                             field="key")
        if isinstance(key, (int, np.integer)):
            row = self.conn.execute("SELECT id FROM signatures WHERE id = ? AND namespace = ?",
                                    (_limit(int(key), "key", allow_none=False), ns)).fetchone()
        elif isinstance(key, str):
            row = self.conn.execute(
                "SELECT id FROM signatures WHERE episode_id = ? AND namespace = ?",
                (key, ns)).fetchone()
        else:
            raise StoreError(f"expected an id (int) or an episode id (str), got "
                             f"{type(key).__name__}", field="key")
        return None if row is None else int(row[0])

    def _require(self, key: Any, ns: str, field: str) -> int:
        sid = self._find(key, ns)
        if sid is None:
            raise NotFoundError(f"no episode {key!r} in namespace {ns!r}"[:300], field=field)
        return sid

    _COLS = ("id, namespace, episode_id, kind, json, source_hash, created_at, superseded_by, "
             "verified")

    @staticmethod
    def _row(r: Sequence[Any]) -> StoredEpisode:
        return StoredEpisode(id=int(r[0]), namespace=r[1], episode_id=r[2], kind=r[3],
                             signature=loads_signature(r[4], source=f"signatures.id={r[0]}"),
                             source_hash=r[5], created_at=r[6], superseded_by=r[7],
                             verified=bool(r[8]))

    def get(self, key: int | str, namespace: str = "default") -> StoredEpisode | None:
        """The episode with row id ``key`` (int) or episode id ``key`` (str), or None."""
        ns = _namespace(namespace)
        sid = self._find(key, ns)
        if sid is None:
            return None
        r = self.conn.execute(f"SELECT {self._COLS} FROM signatures WHERE id = ? "
                              "AND namespace = ?", (sid, ns)).fetchone()
        return None if r is None else self._row(r)

    def list(self, namespace: str = "default", *, include_superseded: bool = False,
             limit: int | None = None, offset: int = 0) -> builtins.list[StoredEpisode]:
        """Episodes in id order."""
        ns = _namespace(namespace)
        lim, off = _limit(limit, "limit"), _limit(offset, "offset", allow_none=False)
        where = "" if include_superseded else " AND superseded_by IS NULL"
        rows = self.conn.execute(
            f"SELECT {self._COLS} FROM signatures WHERE namespace = ?{where} "
            "ORDER BY id LIMIT ? OFFSET ?", (ns, lim, off)).fetchall()
        return [self._row(r) for r in rows]

    def count(self, namespace: str = "default", *, include_superseded: bool = True) -> int:
        ns = _namespace(namespace)
        where = "" if include_superseded else " AND superseded_by IS NULL"
        return int(self.conn.execute(
            f"SELECT COUNT(*) FROM signatures WHERE namespace = ?{where}", (ns,)).fetchone()[0])

    def is_superseded(self, key: int | str, namespace: str = "default") -> bool:
        ns = _namespace(namespace)
        sid = self._require(key, ns, "key")
        row = self.conn.execute("SELECT superseded_by FROM signatures WHERE id = ? "
                                "AND namespace = ?", (sid, ns)).fetchone()
        return row[0] is not None

    def superseded(self, namespace: str = "default") -> dict[int, int]:
        """Superseded id → the id that replaces it."""
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT id, superseded_by FROM signatures WHERE namespace = ? "
            "AND superseded_by IS NOT NULL ORDER BY id", (ns,)).fetchall()
        return {int(a): int(b) for a, b in rows}

    def content_rows(self, namespace: str = "default", *, include_superseded: bool = True
                     ) -> tuple[builtins.list[int], builtins.list[dict[str, float]]]:
        """``(ids, content counts)`` of one namespace in id order — the input of
        :class:`~analogist.index.content.ContentIndex` (so its IDF stays in the namespace)."""
        ns = _namespace(namespace)
        where = "" if include_superseded else " AND s.superseded_by IS NULL"
        rows = self.conn.execute(
            "SELECT s.id, v.data FROM signatures s JOIN sig_vectors v ON v.signature_id = s.id "
            f"{self._join_ns('v')}"
            f"WHERE s.namespace = ? AND v.channel = 'content'{where} ORDER BY s.id",
            (ns,)).fetchall()
        return [int(r[0]) for r in rows], [json.loads(r[1]) for r in rows]

    def embeddings(self, channel: str, namespace: str = "default"
                   ) -> tuple[builtins.list[int], np.ndarray]:
        """``(ids, matrix)`` of the episodes of ``namespace`` that have a ``channel`` vector."""
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT s.id, v.format, v.data FROM signatures s JOIN sig_vectors v "
            f"ON v.signature_id = s.id {self._join_ns('v')}"
            "WHERE s.namespace = ? AND v.channel = ? ORDER BY s.id",
            (ns, channel)).fetchall()
        vecs = []
        for sid, fmt, data in rows:
            if fmt != "float32":
                raise StoreError(f"channel {channel!r} of id {sid} has format {fmt!r}, "
                                 "not float32", field="channel")
            vecs.append(np.frombuffer(data, dtype="<f4"))
        if not vecs:
            return [], np.zeros((0, 0), dtype=np.float32)
        if len({v.size for v in vecs}) != 1:
            raise StoreError(f"channel {channel!r} mixes vector sizes", field="channel")
        return [int(r[0]) for r in rows], np.vstack(vecs).astype(np.float32)

    def fingerprint_groups(self, namespace: str = "default", *, depth: int = 2,
                           min_size: int = 1, include_superseded: bool = True
                           ) -> dict[str, builtins.list[int]]:
        """WL fingerprint → ids sharing it (largest groups first, then by fingerprint)."""
        ns = _namespace(namespace)
        where = "" if include_superseded else " AND s.superseded_by IS NULL"
        rows = self.conn.execute(
            "SELECT f.fingerprint, s.id FROM signatures s JOIN sig_fingerprint f "
            f"ON f.signature_id = s.id {self._join_ns('f')}"
            f"WHERE s.namespace = ? AND f.depth = ?{where} "
            "ORDER BY f.fingerprint, s.id", (ns, depth)).fetchall()
        groups: dict[str, list[int]] = {}
        for fp, sid in rows:
            groups.setdefault(fp, []).append(int(sid))
        ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return {fp: ids for fp, ids in ordered if len(ids) >= min_size}

    # -- reads for retrieval (stage 1, candidates, decoy probe) ------------------------------
    def store_id(self) -> str:
        """This store's random identity (schema version 3), for files derived from it."""
        row = self.conn.execute("SELECT value FROM store_meta WHERE key = 'store_id'").fetchone()
        if row is None:
            raise StoreError("the store has no identity row", source=self.path)
        return str(row[0])

    def generation(self, namespace: str = "default") -> tuple[int, int]:
        """``(generation, rewrites)`` of ``namespace``: bumped in the same transaction as every
        write to its episodes or schemas (``rewrites`` only by changes to or removals of stored
        episodes). ``(0, 0)`` for a namespace never written."""
        ns = _namespace(namespace)
        row = self.conn.execute("SELECT generation, rewrites FROM namespace_state "
                                "WHERE namespace = ?", (ns,)).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def extent(self, namespace: str = "default") -> tuple[int, int]:
        """``(number of episodes, highest row id)`` of ``namespace`` (``(0, 0)`` when empty)."""
        ns = _namespace(namespace)
        row = self.conn.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM signatures "
                                "WHERE namespace = ?", (ns,)).fetchone()
        return int(row[0]), int(row[1])

    def content_matrix(self, namespace: str = "default", *, after_id: int = 0,
                       depth: int = 2) -> ContentMatrix:
        """The content counts of the episodes of ``namespace`` with row id above ``after_id``,
        in id order, streamed into a CSR matrix (one row's counts in memory at a time), with
        each row's WL fingerprint of ``depth`` (None when it has none)."""
        ns = _namespace(namespace)
        ids = array("q")
        indptr = array("q", [0])
        indices = array("q")
        counts = array("d")
        names: dict[str, int] = {}
        fps: builtins.list[str | None] = []
        if after_id > 0 and self.conn.execute(
                # any row after a saved index's last one? By row id (``+`` keeps SQLite off the
                # namespace index, which would walk every episode of the namespace)
                "SELECT 1 FROM signatures WHERE id > ? AND +namespace = ? LIMIT 1",
                (int(after_id), ns)).fetchone() is None:
            return ContentMatrix(np.zeros(0, dtype=np.int64), [], np.zeros(1, dtype=np.int64),
                                 np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), [])
        cur = self.conn.execute(
            "SELECT s.id, v.data, f.fingerprint FROM signatures s "
            f"JOIN sig_vectors v ON v.signature_id = s.id {self._join_ns('v')}"
            "AND v.channel = 'content' "
            f"LEFT JOIN sig_fingerprint f ON f.signature_id = s.id {self._join_ns('f')}"
            "AND f.depth = ? "
            "WHERE s.id > ? AND s.namespace = ? ORDER BY s.id",
            (int(depth), int(after_id), ns))
        for sid, data, fp in cur:
            try:
                row = json.loads(data)
                cols = sorted((names.setdefault(k, len(names)), float(v))
                              for k, v in row.items())
            except (ValueError, TypeError, AttributeError):
                raise StoreError("stored content counts are not a JSON object of numbers",
                                 source=f"signatures.id={sid}") from None
            for c, v in cols:
                indices.append(c)
                counts.append(v)
            ids.append(int(sid))
            indptr.append(len(indices))
            fps.append(fp)

        def arr(a: array, dtype: Any) -> np.ndarray:
            return np.frombuffer(a, dtype=dtype).copy() if len(a) else np.zeros(0, dtype=dtype)

        return ContentMatrix(arr(ids, np.int64), builtins.list(names),
                             np.frombuffer(indptr, dtype=np.int64).copy(), arr(indices, np.int64),
                             arr(counts, np.float64), fps)

    def has_embeddings(self, channels: Sequence[str], namespace: str = "default") -> bool:
        """Whether any episode of ``namespace`` has a vector in one of ``channels``."""
        ns = _namespace(namespace)
        chans = builtins.list(channels)
        if not chans:
            return False
        # from the channel's vectors to their episodes: the other way round walks every
        # episode of the namespace when none has such a vector
        return self.conn.execute(
            f"SELECT 1 FROM sig_vectors v WHERE v.channel IN ({','.join('?' * len(chans))})"
            f"{self._and_ns('v.')} AND EXISTS (SELECT 1 FROM signatures s "
            "WHERE s.id = v.signature_id AND s.namespace = ?) LIMIT 1",
            (*chans, *self._ns_param(ns), ns)).fetchone() is not None

    def get_many(self, ids: Iterable[int], namespace: str = "default"
                 ) -> dict[int, StoredEpisode]:
        """The episodes of ``namespace`` among row ids ``ids`` (absent ones are left out), read
        in one query per 500 ids.

        (Here and in :meth:`heads` and :meth:`surface_words`, ``+namespace`` keeps SQLite off the
        ``(namespace, superseded_by)`` index, which it would otherwise pick for a bound namespace
        and walk every row of the namespace; the ids go by primary key.)"""
        ns = _namespace(namespace)
        want = builtins.list(dict.fromkeys(int(i) for i in ids))
        out: dict[int, StoredEpisode] = {}
        for start in range(0, len(want), 500):
            chunk = want[start:start + 500]
            for r in self.conn.execute(
                    f"SELECT {self._COLS} FROM signatures WHERE +namespace = ? AND id IN "
                    f"({','.join('?' * len(chunk))})", (ns, *chunk)):
                out[int(r[0])] = self._row(r)
        return out

    def heads(self, ids: Iterable[int], namespace: str = "default"
              ) -> dict[int, tuple[str, int | None]]:
        """Row id → ``(episode id, superseded_by)`` for the episodes of ``namespace`` among
        ``ids`` (absent ones left out)."""
        ns = _namespace(namespace)
        want = builtins.list(dict.fromkeys(int(i) for i in ids))
        out: dict[int, tuple[str, int | None]] = {}
        for start in range(0, len(want), 500):
            chunk = want[start:start + 500]
            for sid, eid, sup in self.conn.execute(
                    f"SELECT id, episode_id, superseded_by FROM signatures WHERE +namespace = ? "
                    f"AND id IN ({','.join('?' * len(chunk))})", (ns, *chunk)):
                out[int(sid)] = (eid, None if sup is None else int(sup))
        return out

    def surface_words(self, ids: Iterable[int] | None = None, namespace: str = "default"
                      ) -> dict[int, frozenset[str]]:
        """Row id → the surface words (:func:`~analogist.index.features.surface_tokens`) of the
        episodes of ``namespace`` among ``ids`` (every episode when None), from the stored
        ``surface`` column (computed from the JSON for rows written before it existed)."""
        ns = _namespace(namespace)
        out: dict[int, frozenset[str]] = {}

        def take(rows: Iterable[Sequence[Any]]) -> None:
            for sid, surface, text in rows:
                if surface is not None:
                    out[int(sid)] = frozenset(surface.split())
                    continue
                try:
                    data = json.loads(text)
                except ValueError:
                    continue
                if isinstance(data, dict):
                    out[int(sid)] = frozenset(surface_tokens_of_data(data))

        # the JSON is read only for rows that lack the column (CASE keeps it out otherwise)
        cols = "id, surface, CASE WHEN surface IS NULL THEN json END"
        if ids is None:
            take(self.conn.execute(f"SELECT {cols} FROM signatures WHERE namespace = ?",
                                   (ns,)))
            return out
        want = builtins.list(dict.fromkeys(int(i) for i in ids))
        for start in range(0, len(want), 500):
            chunk = want[start:start + 500]
            take(self.conn.execute(
                f"SELECT {cols} FROM signatures WHERE +namespace = ? AND id IN "
                f"({','.join('?' * len(chunk))})", (ns, *chunk)))
        return out

    def namespaces(self) -> builtins.list[str]:
        """Every namespace that holds anything."""
        rows = self.conn.execute(
            "SELECT namespace FROM signatures UNION SELECT namespace FROM analogy_log "
            "UNION SELECT namespace FROM schemas UNION SELECT namespace FROM vocab "
            "UNION SELECT namespace FROM plans UNION SELECT namespace FROM transfer_ledger "
            "ORDER BY 1").fetchall()
        return [r[0] for r in rows]

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
        sid = self._find(p.sig.episode_id, ns)
        if sid is None:
            raise NotFoundError(f"no episode {p.sig.episode_id!r} in namespace {ns!r}"[:300],
                                field="episode_id")
        sig = p.sig
        c.execute("UPDATE signatures SET kind = ?, json = ?, source_hash = ?, verified = ? "
                  "WHERE id = ? AND namespace = ?", (sig.kind, p.text, sig.provenance.source_hash,
                                                     int(sig.verified), sid, ns))
        if self._version >= 3:
            c.execute("UPDATE signatures SET surface = ? WHERE id = ? AND namespace = ?",
                      (p.surface, sid, ns))
        with_ns = self._version >= _NS_VERSION
        nsp = self._ns_param(ns)
        c.execute(f"DELETE FROM sig_relations WHERE signature_id = ?{self._and_ns()}", (sid, *nsp))
        c.executemany(_child_sql(_RELATIONS_SQL, with_ns), _relation_rows(sid, sig, nsp))
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
                  (sid, p.features.fingerprint, p.features.fingerprint_depth, *nsp))
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

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ('ok' when sound) plus foreign-key check."""
        res = self.conn.execute("PRAGMA integrity_check").fetchall()
        text = "; ".join(str(r[0]) for r in res)
        if text == "ok" and self.conn.execute("PRAGMA foreign_key_check").fetchall():
            return "foreign key violations"
        return text

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


def copy_store(src: str | Path, dst: str | Path) -> None:
    """A consistent copy of the store file ``src`` at ``dst`` (SQLite's online backup; the
    source is opened read-only)."""
    if not Path(src).is_file():
        raise StoreError("store file not found", source=str(src))
    try:
        with sqlite3.connect(f"file:{src}?mode=ro", uri=True) as a, sqlite3.connect(dst) as b:
            a.backup(b)
    except sqlite3.DatabaseError as e:
        raise StoreError(f"not a readable SQLite store: {e}", source=str(src)) from None


def _at(e: AnalogistError, i: int) -> AnalogistError:
    """The same error, located at record ``i`` of a bulk add."""
    field = f"records[{i}]" + (f".{e.field}" if e.field else "")
    out = type(e)(f"record {i}: {e.message}", source=e.source, line=e.line, field=field)
    return out
