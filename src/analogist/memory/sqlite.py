"""The default analogical memory: one SQLite file (seed 000 §9).

A :class:`Memory` stores Structural Signatures with the indexes MAC needs — content counts, WL
fingerprints, optional abstract-text embeddings — plus induced schemas, a vocabulary table and a log
of every analogy attempt. It knows nothing of SME; ``retrieve`` joins the two.

The store is one class composed of its parts, each a module of ``memory/``:

* :mod:`~analogist.memory.schema` — the tables (described there) and their migrations;
* :mod:`~analogist.memory.records` — errors, limits, :class:`StoredEpisode` and the validation
  of everything written;
* :mod:`~analogist.memory.episodes` — adding, deleting, superseding and reading episodes;
* :mod:`~analogist.memory.reads` — the reads retrieval makes (stage 1, candidates, decoy probe);
* :mod:`~analogist.memory.logs` — the analogy log, the negative-transfer ledger, outcomes;
* :mod:`~analogist.memory.plan_tables` — plans and their reuse record;
* :mod:`~analogist.memory.consolidation` — schemas, vocabulary and consolidation's write;
* :mod:`~analogist.memory.service_tables` — the HTTP service's API keys and eval runs;
* :mod:`~analogist.memory.service_state` — the service's jobs and viewer sessions, which its
  worker processes share;

and this module: opening, migrating, transactions and snapshots (and the names other modules
import from here).

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

import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from analogist.memory.consolidation import SchemasVocabulary
from analogist.memory.episodes import Episodes, _collector_paused  # noqa: F401 (re-exported)
from analogist.memory.logs import Logs
from analogist.memory.plan_tables import PlanTables
from analogist.memory.reads import RetrievalReads
from analogist.memory.records import (  # noqa: F401 (re-exported: names imported from here)
    MAX_ID,
    OUTCOMES,
    PLAN_STATUSES,
    DuplicateEpisodeError,
    NotFoundError,
    SchemaVersionError,
    StoredEpisode,
    StoreError,
    _namespace,
    _now,
)
from analogist.memory.schema import MIGRATIONS, SCHEMA_VERSION
from analogist.memory.service_state import ServiceState
from analogist.memory.service_tables import ServiceTables

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


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_POSTGRES = re.compile(r"^postgres(ql)?://", re.I)


class Memory(Episodes, RetrievalReads, Logs, PlanTables, SchemasVocabulary, ServiceTables,
             ServiceState):
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
                for stmt in statements:  # SQL, or a data migration (a function)
                    if callable(stmt):
                        stmt(c)
                    else:
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

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ('ok' when sound) plus foreign-key check."""
        res = self.conn.execute("PRAGMA integrity_check").fetchall()
        text = "; ".join(str(r[0]) for r in res)
        if text == "ok" and self.conn.execute("PRAGMA foreign_key_check").fetchall():
            return "foreign key violations"
        return text


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
