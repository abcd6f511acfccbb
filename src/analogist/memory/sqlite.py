"""The default analogical memory: one SQLite file (seed 000 §9).

A :class:`Memory` stores Structural Signatures with the indexes MAC needs — content counts, WL
fingerprints, optional abstract-text embeddings — plus induced schemas, a vocabulary table and a log
of every analogy attempt. It knows nothing of SME; ``retrieve`` joins the two.

Tables (schema version 1)
-------------------------
* ``schema_version(version, applied_at, description)`` — one row per applied migration;
* ``signatures(id, namespace, episode_id, kind, json, source_hash, created_at, superseded_by,
  verified)`` — ``json`` is the canonical text of :func:`~analogist.signature.dump_signature`;
  ``UNIQUE(namespace, episode_id)``; ``superseded_by`` → ``signatures.id`` (``ON DELETE SET
  NULL``);
* ``sig_relations(signature_id, position, predicate, args, in_causal_chain)`` — the relations in
  canonical order, ``args`` a JSON list of role tags (for exact lookups and counting);
* ``sig_vectors(signature_id, channel, format, data)`` — channel ``content``: the content counts as
  JSON text (format ``json-counts``); any other channel: an embedding as little-endian float32
  bytes (format ``float32``);
* ``sig_fingerprint(signature_id, fingerprint, depth)`` — WL hashes (failure-class counting);
* ``schemas(id, namespace, name, description, members, times_used, times_verified)``;
* ``vocab(namespace, name, kind, arity, definition, status, count)``;
* ``analogy_log(id, namespace, created_at, target, candidates, mapping, score, verdict,
  transferred, prediction)``.

Every child row references ``signatures`` with ``ON DELETE CASCADE``.

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
import json
import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from analogist.errors import AnalogistError, SignatureError
from analogist.index.features import EpisodeFeatures, extract_features
from analogist.signature import (
    MAX_TEXT,
    Signature,
    dump_signature,
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


def _prepare(record: Any, features: Any = None, embeddings: Any = None) -> _Prepared:
    sig = _validated(record)
    feats = extract_features(sig) if features is None else _check_features(features)
    counts = json.dumps({k: float(v) for k, v in sorted(feats.content.items())},
                        ensure_ascii=False, separators=(",", ":"))
    vectors: list[tuple[str, str, bytes | str]] = [("content", "json-counts", counts)]
    vectors.extend(_embedding_rows(embeddings))
    return _Prepared(sig, dump_signature(sig), feats, tuple(vectors))


def _limit(value: Any, field: str, *, allow_none: bool = True) -> int:
    if value is None and allow_none:
        return -1
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StoreError(f"expected a non-negative integer, got {value!r}"[:200], field=field)
    return value


def _now() -> datetime:
    return datetime.now(UTC)


# -- the store -----------------------------------------------------------------------------
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

    @classmethod
    def open(cls, path: str | Path, *, timeout: float = 30.0,
             clock: Callable[[], datetime] | None = None) -> Memory:
        p = str(path)
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
        if self.schema_version() == SCHEMA_VERSION:
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
    def _insert(self, p: _Prepared, namespace: str, now: str) -> int:
        c = self.conn
        sig = p.sig
        try:
            cur = c.execute(
                "INSERT INTO signatures(namespace, episode_id, kind, json, source_hash, "
                "created_at, verified) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (namespace, sig.episode_id, sig.kind, p.text, sig.provenance.source_hash, now,
                 int(sig.verified)))
        except sqlite3.IntegrityError:
            raise DuplicateEpisodeError(
                f"episode {sig.episode_id!r} is already stored in namespace {namespace!r}",
                field="episode_id") from None
        sid = int(cur.lastrowid)  # type: ignore[arg-type]
        chain_atoms = {a for e in sig.causal_chain for a in e.atoms()}
        c.executemany(
            "INSERT INTO sig_relations(signature_id, position, predicate, args, in_causal_chain) "
            "VALUES (?, ?, ?, ?, ?)",
            [(sid, i, a.predicate, json.dumps(list(a.args)), int(a in chain_atoms))
             for i, a in enumerate(sig.relations)])
        c.executemany(
            "INSERT INTO sig_vectors(signature_id, channel, format, data) VALUES (?, ?, ?, ?)",
            [(sid, ch, fmt, data) for ch, fmt, data in p.vectors])
        c.execute("INSERT INTO sig_fingerprint(signature_id, fingerprint, depth) VALUES (?, ?, ?)",
                  (sid, p.features.fingerprint, p.features.fingerprint_depth))
        return sid

    def add(self, sig: Signature | Mapping[str, Any], *, namespace: str = "default",
            features: EpisodeFeatures | None = None,
            embeddings: Mapping[str, np.ndarray] | None = None) -> int:
        """Store one signature; returns its id. ``features`` are computed with
        :func:`~analogist.index.features.extract_features` when None; ``embeddings`` maps a
        channel name (e.g. ``"L2"``) to a vector."""
        ns = _namespace(namespace)
        p = _prepare(sig, features, embeddings)
        with self._tx():
            return self._insert(p, ns, self._clock().isoformat())

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
            with self._tx():
                new = []
                for i, p in batch:
                    try:
                        new.append(self._insert(p, ns, now))
                    except AnalogistError as e:
                        raise _at(e, i) from None
            ids.extend(new)
            batch.clear()
            if progress is not None:
                progress(len(ids))

        seen: dict[str, int] = {}
        for i, rec in enumerate(sigs):
            try:
                p = _prepare(rec)
                if embed is not None:
                    p = _prepare(p.sig, p.features, embed(p.sig))
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
            c.execute("DELETE FROM signatures WHERE id = ? AND namespace = ?", (sid, ns))
            return True

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
                row = c.execute("SELECT superseded_by FROM signatures WHERE id = ?",
                                (cur,)).fetchone()
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
                                    (int(key), ns)).fetchone()
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
        r = self.conn.execute(f"SELECT {self._COLS} FROM signatures WHERE id = ?",
                              (sid,)).fetchone()
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
        row = self.conn.execute("SELECT superseded_by FROM signatures WHERE id = ?",
                                (sid,)).fetchone()
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
            f"WHERE s.namespace = ? AND v.channel = 'content'{where} ORDER BY s.id",
            (ns,)).fetchall()
        return [int(r[0]) for r in rows], [json.loads(r[1]) for r in rows]

    def embeddings(self, channel: str, namespace: str = "default"
                   ) -> tuple[builtins.list[int], np.ndarray]:
        """``(ids, matrix)`` of the episodes of ``namespace`` that have a ``channel`` vector."""
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT s.id, v.format, v.data FROM signatures s JOIN sig_vectors v "
            "ON v.signature_id = s.id WHERE s.namespace = ? AND v.channel = ? ORDER BY s.id",
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
            f"ON f.signature_id = s.id WHERE s.namespace = ? AND f.depth = ?{where} "
            "ORDER BY f.fingerprint, s.id", (ns, depth)).fetchall()
        groups: dict[str, list[int]] = {}
        for fp, sid in rows:
            groups.setdefault(fp, []).append(int(sid))
        ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return {fp: ids for fp, ids in ordered if len(ids) >= min_size}

    def namespaces(self) -> builtins.list[str]:
        """Every namespace that holds anything."""
        rows = self.conn.execute(
            "SELECT namespace FROM signatures UNION SELECT namespace FROM analogy_log "
            "UNION SELECT namespace FROM schemas UNION SELECT namespace FROM vocab "
            "ORDER BY 1").fetchall()
        return [r[0] for r in rows]

    # -- analogy log -----------------------------------------------------------------------
    def log_analogy(self, namespace: str = "default", *, target: Any, candidates: Any,
                    mapping: Any = None, score: float | None = None, verdict: str | None = None,
                    transferred: bool | None = None, prediction: Any = None) -> int:
        """Record one analogy attempt (any JSON-able values); returns its log id."""
        ns = _namespace(namespace)
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
                "score, verdict, transferred, prediction) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (ns, self._clock().isoformat(), t, cands, m,
                 None if score is None else float(score), verdict,
                 None if transferred is None else int(transferred), pred))
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def log(self, namespace: str = "default", limit: int = 100) -> builtins.list[dict[str, Any]]:
        """The latest analogy attempts, newest first."""
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT id, namespace, created_at, target, candidates, mapping, score, verdict, "
            "transferred, prediction FROM analogy_log WHERE namespace = ? ORDER BY id DESC "
            "LIMIT ?", (ns, _limit(limit, "limit"))).fetchall()

        def j(x: str | None) -> Any:
            return None if x is None else json.loads(x)

        return [{"id": r[0], "namespace": r[1], "created_at": r[2], "target": j(r[3]),
                 "candidates": j(r[4]), "mapping": j(r[5]), "score": r[6], "verdict": r[7],
                 "transferred": None if r[8] is None else bool(r[8]), "prediction": j(r[9])}
                for r in rows]

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
            except sqlite3.IntegrityError:
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
                (int(bool(verified)), int(schema_id), ns))
            if cur.rowcount == 0:
                raise NotFoundError(f"no schema {schema_id} in namespace {ns!r}"[:300],
                                    field="schema_id")

    def schemas(self, namespace: str = "default") -> builtins.list[dict[str, Any]]:
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT id, name, description, members, times_used, times_verified FROM schemas "
            "WHERE namespace = ? ORDER BY id", (ns,)).fetchall()
        return [{"id": r[0], "name": r[1], "description": json.loads(r[2]),
                 "members": json.loads(r[3]), "times_used": r[4], "times_verified": r[5]}
                for r in rows]

    def put_term(self, name: str, *, kind: str, arity: int, definition: str = "",
                 status: str = "declared", count: int = 0, namespace: str = "default") -> None:
        """Insert or replace one vocabulary term of ``namespace``."""
        ns = _namespace(namespace)
        for f, v, n in (("name", name, 200), ("kind", kind, 50), ("definition", definition,
                                                                   MAX_TEXT)):
            if not isinstance(v, str) or len(v) > n or (f != "definition" and not v):
                raise StoreError(f"{f} must be a string of at most {n} characters", field=f)
        if status not in ("declared", "proposed", "merged"):
            raise StoreError("status must be declared, proposed or merged", field="status")
        for f, v in (("arity", arity), ("count", count)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise StoreError(f"{f} must be a non-negative integer", field=f)
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO vocab(namespace, name, kind, arity, definition, "
                      "status, count) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (ns, name, kind, arity, definition, status, count))

    def terms(self, namespace: str = "default") -> builtins.list[dict[str, Any]]:
        ns = _namespace(namespace)
        rows = self.conn.execute(
            "SELECT name, kind, arity, definition, status, count FROM vocab WHERE namespace = ? "
            "ORDER BY name", (ns,)).fetchall()
        return [dict(zip(("name", "kind", "arity", "definition", "status", "count"), r,
                         strict=True)) for r in rows]

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ('ok' when sound) plus foreign-key check."""
        res = self.conn.execute("PRAGMA integrity_check").fetchall()
        text = "; ".join(str(r[0]) for r in res)
        if text == "ok" and self.conn.execute("PRAGMA foreign_key_check").fetchall():
            return "foreign key violations"
        return text


def _at(e: AnalogistError, i: int) -> AnalogistError:
    """The same error, located at record ``i`` of a bulk add."""
    field = f"records[{i}]" + (f".{e.field}" if e.field else "")
    out = type(e)(f"record {i}: {e.message}", source=e.source, line=e.line, field=field)
    return out
