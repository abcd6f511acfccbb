"""The analogical memory on a PostgreSQL server: the same :class:`~analogist.memory.sqlite.Memory`
over ``postgresql://`` URLs, for many processes sharing one database.

Only the dialect and the connection live here. Every method of the store — validation,
preparation of rows, the public API, the migrations themselves (``MIGRATIONS``, with the same
version numbers) — is the SQLite store's own; :class:`PgMemory` gives it a connection
(:class:`_Connection`) that speaks PostgreSQL through psycopg 3 and translates each statement
once (then caches it):

* ``?`` placeholders become ``%s``; ``LIMIT ?`` takes -1 (SQLite's "no limit") as no limit;
* ``INSERT OR REPLACE`` becomes ``INSERT ... ON CONFLICT (key) DO UPDATE``;
* an ``INSERT`` into a table with an ``id`` column returns it (``cursor.lastrowid``);
* the migrations' column types (``INTEGER`` → ``BIGINT``, ``REAL`` → ``DOUBLE PRECISION``,
  ``BLOB`` → ``BYTEA``, ``INTEGER PRIMARY KEY`` → an identity column), its random store id and
  its generation triggers (one PL/pgSQL function, the same row-level triggers);
* ``BEGIN IMMEDIATE`` (a write) becomes ``BEGIN`` plus a transaction-level advisory lock, so that
  writers are serialised as on SQLite (row ids ``MAX(id) + 1``, the duplicate check and the
  generation counters stay exact); ``BEGIN`` (a snapshot) becomes ``REPEATABLE READ``.

Guarantees, as on SQLite: namespaces are hard partitions (every statement filters by one); one
transaction per batch, so a writer killed mid-batch leaves its batch absent (the server rolls it
back when the connection drops); readers see committed rows only; tables live in the
connection's current schema (``?options=-csearch_path%3Dname`` picks one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from analogist.memory import pg_vector
from analogist.memory.records import _Prepared
from analogist.memory.sqlite import Memory, StoreError, _now

try:  # optional dependency: the 'postgres' extra
    import psycopg
    from psycopg.pq import TransactionStatus
except ImportError:  # pragma: no cover - exercised by an install without the extra
    psycopg = None  # type: ignore[assignment]

__all__ = ["INSTALL_HINT", "PgMemory", "is_postgres_url", "redact_url"]

INSTALL_HINT = "PostgreSQL stores need psycopg: pip install 'analogist[postgres]'"
SCHEMES = ("postgresql://", "postgres://")
_LOCK_KEY = 0x616E616C6F67  # "analog": the advisory lock that serialises writers

# tables with an ``id`` primary key (their single-row INSERTs return it)
_ID_TABLES = frozenset({"signatures", "schemas", "analogy_log", "vocab_merges", "transfer_ledger",
                        "plans", "plan_uses", "analogy_outcomes", "api_eval_runs"})
# the conflict target of each table written with INSERT OR REPLACE
_REPLACE_KEYS = {"vocab": ("namespace", "name"), "vocab_merges": ("namespace", "alias")}
# bytea columns that SQLite also fills with text (content counts): text is sent as UTF-8
_BYTES_COLUMNS = {"sig_vectors": "data"}

_GENERATION_FN = """CREATE OR REPLACE FUNCTION analogist_generation() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    ns text;
    rw bigint := TG_ARGV[0]::bigint;
BEGIN
    IF TG_OP = 'DELETE' THEN ns := OLD.namespace; ELSE ns := NEW.namespace; END IF;
    INSERT INTO namespace_state(namespace, generation, rewrites) VALUES (ns, 1, rw)
    ON CONFLICT (namespace) DO UPDATE
        SET generation = namespace_state.generation + 1,
            rewrites = namespace_state.rewrites + rw;
    RETURN NULL;
END
$fn$"""

# SQLite trigger name -> (timing and event, table, rewrites bump)
_TRIGGERS = {
    "signatures_generation_insert": ("AFTER INSERT", "signatures", 0),
    "signatures_generation_delete": ("AFTER DELETE", "signatures", 1),
    "signatures_generation_rewrite": ("AFTER UPDATE OF namespace, episode_id, kind, json",
                                      "signatures", 1),
    "signatures_generation_update": ("AFTER UPDATE OF superseded_by, verified, source_hash",
                                     "signatures", 0),
    "schemas_generation_insert": ("AFTER INSERT", "schemas", 0),
    "schemas_generation_update": ("AFTER UPDATE", "schemas", 0),
    "schemas_generation_delete": ("AFTER DELETE", "schemas", 0),
}


def is_postgres_url(store: Any) -> bool:
    """Whether ``store`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return isinstance(store, str) and store.lower().startswith(SCHEMES)


def redact_url(url: str) -> str:
    """``url`` without its password (for messages and ``Memory.path``)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    except ValueError:
        return url.split("@")[-1] if "@" in url else url


def _pg_message(e: BaseException) -> str:
    text = (getattr(e, "diag", None) and e.diag.message_primary) or str(e) or type(e).__name__
    return " ".join(str(text).split())[:300]


# -- the dialect ---------------------------------------------------------------------------
_TRIGGER_RE = re.compile(r"^\s*CREATE TRIGGER (\w+)", re.I)
_REPLACE_RE = re.compile(r"^\s*INSERT OR REPLACE INTO (\w+)\s*\(([^)]*)\)(.*)$", re.I | re.S)
_INSERT_RE = re.compile(r"^\s*INSERT INTO (\w+)\s*\(([^)]*)\)", re.I | re.S)
# a plain single-row INSERT ... VALUES (%s, ...) (no ON CONFLICT, no RETURNING): sent as one
# multi-row statement per chunk by executemany
_VALUES_RE = re.compile(r"^(\s*INSERT INTO \w+\s*\([^)]*\)\s*VALUES\s*)(\((?:%s,\s*)*%s\))\s*$",
                        re.I | re.S)
_MULTI_ROWS = 500


def _ddl_types(sql: str) -> str:
    sql = re.sub(r"\bINTEGER PRIMARY KEY\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                 sql)
    sql = re.sub(r"\bINTEGER\b", "BIGINT", sql)
    sql = re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql)
    return re.sub(r"\bBLOB\b", "BYTEA", sql)


@lru_cache(maxsize=1024)
def translate(sql: str) -> tuple[tuple[str, ...], int | None]:
    """The PostgreSQL statements for one SQLite statement of the store, and the index of the
    parameter to send as bytes (None when none). Raises :class:`StoreError` for a statement it
    does not know how to translate (a new SQLite-only construct must be taught here)."""
    head = sql.lstrip()[:40].upper()
    m = _TRIGGER_RE.match(sql)
    if m:
        spec = _TRIGGERS.get(m.group(1))
        if spec is None:
            raise StoreError(f"no PostgreSQL form for trigger {m.group(1)!r}")
        when, table, rw = spec
        return ((_GENERATION_FN,
                 f"CREATE TRIGGER {m.group(1)} {when} ON {table} FOR EACH ROW "
                 f"EXECUTE FUNCTION analogist_generation({rw})"), None)
    if head.startswith("PRAGMA"):
        raise StoreError(f"no PostgreSQL form for {sql.strip()[:60]!r}")
    if head.startswith(("CREATE TABLE", "ALTER TABLE")):
        sql = _ddl_types(sql)
    sql = sql.replace("lower(hex(randomblob(16)))", "md5(random()::text || clock_timestamp()::text)")
    sql = sql.replace("%", "%%").replace("?", "%s")
    sql = re.sub(r"\+namespace\b", "namespace", sql)
    sql = re.sub(r"\bLIMIT %s", "LIMIT NULLIF(%s, -1)", sql)
    m = _REPLACE_RE.match(sql)
    if m:
        table, cols = m.group(1), [c.strip() for c in m.group(2).split(",")]
        keys = _REPLACE_KEYS.get(table)
        if keys is None:
            raise StoreError(f"no PostgreSQL form for INSERT OR REPLACE INTO {table}")
        sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in cols if c not in keys)
        sql = (f"INSERT INTO {table}({', '.join(cols)}){m.group(3)} "
               f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {sets}")
    blob = None
    m = _INSERT_RE.match(sql)
    if m:
        table, cols = m.group(1), [c.strip() for c in m.group(2).split(",")]
        if table in _BYTES_COLUMNS and _BYTES_COLUMNS[table] in cols:
            blob = cols.index(_BYTES_COLUMNS[table])
        if table in _ID_TABLES and "RETURNING" not in sql.upper():
            sql += " RETURNING id"
    return (sql,), blob


class _Cursor:
    """What the store reads from a statement: rows, ``rowcount``, ``lastrowid``."""

    __slots__ = ("_rows", "lastrowid", "rowcount")

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int, lastrowid: int | None
                 ) -> None:
        self._rows, self.rowcount, self.lastrowid = rows, rowcount, lastrowid

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows)


def _bytes_param(params: Sequence[Any], i: int | None) -> Sequence[Any]:
    if i is None or not isinstance(params[i], str):
        return params
    p = list(params)
    p[i] = p[i].encode("utf-8")
    return p


class _Connection:
    """A psycopg connection with the part of ``sqlite3.Connection`` the store uses."""

    def __init__(self, pg: Any, source: str) -> None:
        self._pg = pg
        self._source = source

    @property
    def in_transaction(self) -> bool:
        return self._pg.info.transaction_status != TransactionStatus.IDLE

    def _fail(self, e: BaseException) -> StoreError:
        return StoreError(f"PostgreSQL: {_pg_message(e)}", source=self._source)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        word = sql.strip().upper()
        try:
            if word == "BEGIN IMMEDIATE":
                self._pg.execute("BEGIN")
                self._pg.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                return _Cursor([], -1, None)
            if word == "BEGIN":
                self._pg.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                return _Cursor([], -1, None)
            stmts, blob = translate(sql)
            cur = self._pg.cursor()
            for stmt in stmts[:-1]:
                cur.execute(stmt)
            cur.execute(stmts[-1], _bytes_param(params, blob))
            rows = cur.fetchall() if cur.description is not None else []
            last = rows[0][0] if rows and stmts[-1].endswith(" RETURNING id") else None
            return _Cursor(rows, cur.rowcount, last)
        except psycopg.IntegrityError:
            raise
        except (psycopg.Error, UnicodeEncodeError) as e:
            raise self._fail(e) from None

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> _Cursor:
        stmts, blob = translate(sql)
        stmt = stmts[-1].removesuffix(" RETURNING id")
        rows = [_bytes_param(p, blob) for p in seq]
        if not rows:
            return _Cursor([], 0, None)
        try:
            with self._pg.cursor() as cur:
                m = _VALUES_RE.match(stmt)
                if m is None:
                    cur.executemany(stmt, rows)
                    return _Cursor([], cur.rowcount, None)
                # a plain INSERT: one statement of many rows per chunk (one round trip, and
                # on a partitioned store one remote batch per foreign partition, not one remote
                # statement per row)
                head, one = m.group(1), m.group(2)
                per = max(1, min(_MULTI_ROWS, 60_000 // max(1, len(rows[0]))))
                n = 0
                for start in range(0, len(rows), per):
                    chunk = rows[start:start + per]
                    cur.execute(head + ", ".join([one] * len(chunk)),
                                [v for r in chunk for v in r])
                    n += cur.rowcount
                return _Cursor([], n, None)
        except psycopg.IntegrityError:
            raise
        except (psycopg.Error, UnicodeEncodeError) as e:
            raise self._fail(e) from None

    def close(self) -> None:
        self._pg.close()


class PgMemory(Memory):
    """An analogical memory in a PostgreSQL database (the tables in the connection's current
    schema). Open with :meth:`open` (or :func:`analogist.memory.open_memory`)."""

    _integrity_errors: tuple[type[BaseException], ...] = (
        (psycopg.IntegrityError,) if psycopg is not None else ())

    @classmethod
    def open(cls, path: Any, *, timeout: float = 30.0,
             clock: Callable[[], datetime] | None = None) -> PgMemory:
        url = str(path)
        shown = redact_url(url)
        if psycopg is None:
            raise StoreError(INSTALL_HINT, source=shown)
        try:
            pg = psycopg.connect(url, autocommit=True, connect_timeout=max(1, min(int(timeout),
                                                                                 30)))
        except (psycopg.Error, ValueError) as e:
            raise StoreError(f"cannot connect to PostgreSQL: {_pg_message(e)}",
                             source=shown) from None
        conn = _Connection(pg, shown)
        mem = cls(conn, shown, clock or _now)  # type: ignore[arg-type]
        try:
            pg.execute(f"SET lock_timeout = {int(timeout * 1000)}")
            # a store partitioned across servers (memory/pg_partition.py): joins and
            # aggregates per partition, so that postgres_fdw ships them to the partition's server
            pg.execute("SET enable_partitionwise_join = on")
            pg.execute("SET enable_partitionwise_aggregate = on")
            if pg.execute("SELECT current_schema()").fetchone()[0] is None:
                raise StoreError("the connection has no current schema (check search_path)",
                                 source=shown)
            # migrations (and the first CREATE TABLE) under the writers' lock, held for the
            # session: processes opening a new database at once migrate it once
            pg.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
            try:
                mem._migrate()
                # the embedding channel in pgvector where the server has it (memory/pg_vector.py)
                mem.pgvector_note = pg_vector.attach(mem)
            finally:
                pg.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
        except BaseException:
            pg.close()
            raise
        return mem

    _service_ready = False
    #: the store's pgvector side (memory/pg_vector.py), None when the channel is in-process
    _pgvector: pg_vector.PgVector | None = None
    #: why the embedding channel is in-process (None when pgvector is used)
    pgvector_note: str | None = None

    def _insert_batch(self, batch: Sequence[_Prepared], namespace: str, now: str) -> list[int]:
        sids = super()._insert_batch(batch, namespace, now)
        if self._pgvector is not None:  # the level vectors too, in the batch's transaction
            self._pgvector.write_prepared(sids, batch, namespace)
        return sids

    def _rewrite(self, c: Any, p: _Prepared, ns: str) -> int:
        sid = super()._rewrite(c, p, ns)
        if self._pgvector is not None:
            self._pgvector.write_prepared([sid], [p], ns)
        return sid

    def ensure_service_tables(self) -> None:
        """Create the HTTP service's tables when missing (once per connection, under the
        writers' lock: concurrent ``CREATE TABLE IF NOT EXISTS`` can collide on PostgreSQL)."""
        if self._service_ready:
            return
        with self._tx() as c:
            for stmt in self._SERVICE_DDL:
                c.execute(stmt)
        self._service_ready = True

    def integrity_check(self) -> str:
        """'ok' when the server answers and every table of the schema is present (PostgreSQL
        enforces foreign keys and checks its own pages)."""
        want = {"signatures", "sig_relations", "sig_vectors", "sig_fingerprint", "schemas",
                "vocab", "analogy_log", "namespace_state", "store_meta"}
        rows = self.conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()").fetchall()
        missing = sorted(want - {r[0] for r in rows})
        return "ok" if not missing else "missing tables: " + ", ".join(missing)

