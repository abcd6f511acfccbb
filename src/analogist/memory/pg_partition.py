"""A PostgreSQL store partitioned across servers with PostgreSQL's own machinery.

The store's database (the *coordinator*) keeps every table; the four episode tables —
``signatures``, ``sig_relations``, ``sig_vectors``, ``sig_fingerprint`` (each row carries its
namespace since schema version 5) — become declaratively partitioned tables, ``PARTITION BY LIST
(namespace)``:

* a namespace nobody placed lives in the ``DEFAULT`` partition, which is the original table of
  the coordinator (``<table>_default``: its keys, foreign keys and indexes unchanged);
* :func:`place` puts one namespace on another server: ``postgres_fdw`` foreign partitions
  (``FOR VALUES IN (namespace)``) over tables of the same schema on that server (one schema per
  placed namespace there, ``analogist_<key>``), moving the namespace's existing rows in the same
  transaction;
* placed on several servers, a namespace is itself partitioned ``BY HASH`` of the episode's row
  id (``signatures.id``, ``signature_id`` in the child tables, so an episode and its child rows
  land on the same server), one foreign partition per server.

Everything else is the plain store. All reads and writes go through the coordinator: the
planner prunes to the namespace's partition (every statement of the store filters by namespace;
child-table joins are on ``(signature_id, namespace)``) and ``postgres_fdw`` ships the statement,
joins included, to the server that holds it. No distribution code of ours beyond choosing where
a namespace lives.

What that gives:

* **Stage 1 and ``find``.** The stage-1 index of a namespace is built from all of its partitions
  (a read through the coordinator) and stored, like on one server, in the coordinator's
  ``mac_index`` table; ``find`` scores over it and runs FAC once. The answers are those of one
  server (same rows, same IDF: a namespace's statistics never cross namespaces).
* **Generation counters.** The generation triggers sit on the partitioned ``signatures`` table;
  PostgreSQL clones them onto every partition, foreign ones included, and they run on the
  coordinator, in the writing transaction: ``namespace_state`` stays exact, and a process's
  cached index stays fresh as on one server.
* **Transactions.** A batch is one coordinator transaction; ``postgres_fdw`` runs one remote
  transaction per server it touches and commits them when the coordinator commits. A batch of a
  namespace placed on one server lands on one server: a writer killed mid-batch leaves nothing
  (the coordinator's session ends, its transaction and the remote one roll back). A namespace
  spread by hash over several servers has batches spanning them; ``postgres_fdw`` has no
  two-phase commit, so a crash *of the coordinator server* between two remote commits could
  leave part of such a batch. Writers are serialised by the coordinator's advisory lock.
* **Snapshots.** REPEATABLE READ on the coordinator; ``postgres_fdw`` opens its remote
  transactions at REPEATABLE READ too, each at its first use (consistent per server).

Limits: write through the coordinator only (a row written straight to a remote table bypasses
the generation counters); future migrations that change the episode tables must be applied to
the remote tables too (:func:`remote_ddl` gives their current form); a namespace is placed once
(moving a placed namespace again is not supported).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from analogist.memory import pg_mac
from analogist.memory.sqlite import StoreError, _namespace

__all__ = ["EPISODE_TABLES", "Placement", "place", "placements", "remote_ddl"]

EPISODE_TABLES = ("signatures", "sig_relations", "sig_vectors", "sig_fingerprint")
# the column that names the episode in each table (the hash key within a spread namespace)
_ROW_KEY = {"signatures": "id", "sig_relations": "signature_id", "sig_vectors": "signature_id",
            "sig_fingerprint": "signature_id"}
# keys, foreign keys and indexes of the remote tables (the coordinator's own, minus the
# ``superseded_by`` foreign key: a spread namespace's supersession crosses servers)
_REMOTE_KEYS = {
    "signatures": ("PRIMARY KEY (id)", "UNIQUE (namespace, episode_id)"),
    "sig_relations": ("PRIMARY KEY (signature_id, position)",
                      "FOREIGN KEY (signature_id) REFERENCES {schema}.signatures(id) "
                      "ON DELETE CASCADE"),
    "sig_vectors": ("PRIMARY KEY (signature_id, channel)",
                    "FOREIGN KEY (signature_id) REFERENCES {schema}.signatures(id) "
                    "ON DELETE CASCADE"),
    "sig_fingerprint": ("PRIMARY KEY (signature_id, depth)",
                        "FOREIGN KEY (signature_id) REFERENCES {schema}.signatures(id) "
                        "ON DELETE CASCADE"),
}
_REMOTE_INDEXES = {
    "signatures": ("(namespace, superseded_by)",),
    "sig_relations": ("(predicate)",),
    "sig_vectors": ("(channel)",),
    "sig_fingerprint": ("(fingerprint)",),
}
_PLACEMENT_DDL = """CREATE TABLE IF NOT EXISTS namespace_placement (
    namespace TEXT PRIMARY KEY,
    servers TEXT NOT NULL,
    placed_at TEXT NOT NULL
)"""
_LOCK_KEY = 0x616E616C6F67  # the writers' advisory lock of memory/postgres.py


Placement = dict[str, Any]
"""One placed namespace: ``namespace``, ``servers`` (URLs without passwords, in hash order),
``placed_at``."""


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _message(e: BaseException) -> str:
    from analogist.memory.postgres import _pg_message  # psycopg, on use

    return _pg_message(e)


def _psycopg() -> Any:
    try:  # psycopg is the optional postgres extra
        import psycopg
        from psycopg import sql
    except ImportError:  # pragma: no cover - PgMemory needs psycopg already
        raise StoreError("partitioning needs psycopg: pip install 'analogist[postgres]'") from None
    return psycopg, sql


def _server_params(url: str) -> dict[str, str]:
    from analogist.memory.postgres import is_postgres_url, redact_url  # psycopg, on use

    psycopg, _ = _psycopg()
    if not is_postgres_url(url):
        raise StoreError("expected a postgresql:// URL", field="server")
    try:
        d = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as e:
        raise StoreError(f"not a usable server URL: {_message(e)}"[:300],
                         field="server") from None
    for need in ("host", "dbname"):
        if not d.get(need):
            raise StoreError(f"the server URL {redact_url(url)!r} names no {need}"[:300],
                             field="server")
    return {k: str(v) for k, v in d.items() if v is not None}


def _pg(memory: Any) -> Any:
    if not pg_mac.applies(memory):
        raise StoreError("partitioning across servers needs a PostgreSQL store "
                         "(--store postgresql://...)", field="store")
    if memory.conn.in_transaction:
        raise StoreError("cannot place a namespace inside a snapshot or another transaction")
    return memory.conn._pg


def _columns(pg: Any, table: str) -> list[tuple[str, str, bool]]:
    """``(name, type, not null)`` of the coordinator's ``table``, in column order."""
    return [(r[0], r[1], bool(r[2])) for r in pg.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull "
        "FROM pg_attribute a WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 "
        "AND NOT a.attisdropped ORDER BY a.attnum", (table,)).fetchall()]


def remote_ddl(memory: Any, schema: str, namespace: str) -> list[str]:
    """The statements that create a remote server's tables for ``namespace`` in ``schema``: the
    coordinator's episode tables (their current columns), keys, foreign keys and indexes."""
    _psycopg()
    pg = _pg(memory)
    ns = _namespace(namespace)
    lit = "'" + ns.replace("'", "''") + "'"
    out = [f'CREATE SCHEMA IF NOT EXISTS "{schema}"']
    for t in EPISODE_TABLES:
        cols = [f'"{n}" {typ}{" NOT NULL" if nn else ""}' for n, typ, nn in _columns(pg, t)]
        keys = [k.format(schema=f'"{schema}"') for k in _REMOTE_KEYS[t]]
        check = [f"CHECK (namespace = {lit})"]
        out.append(f'CREATE TABLE IF NOT EXISTS "{schema}".{t} ('
                   + ", ".join(cols + keys + check) + ")")
        out.extend(f'CREATE INDEX IF NOT EXISTS {t}_{i} ON "{schema}".{t} {cols_}'
                   for i, cols_ in enumerate(_REMOTE_INDEXES[t]))
    return out


def _is_partitioned(pg: Any) -> bool:
    row = pg.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass('signatures')"
                     ).fetchone()
    return row is not None and row[0] == "p"


def _partition_tables(pg: Any) -> None:
    """Turn the coordinator's four episode tables into ``PARTITION BY LIST (namespace)`` tables
    whose DEFAULT partition is the original table (inside the caller's transaction)."""
    from analogist.memory.postgres import _TRIGGERS  # psycopg, on use

    if _is_partitioned(pg):
        return
    sig_triggers = {name: spec for name, spec in _TRIGGERS.items() if spec[1] == "signatures"}
    for t in EPISODE_TABLES:
        pg.execute(f"ALTER TABLE {t} RENAME TO {t}_default")
        if t == "signatures":
            pg.execute("ALTER TABLE signatures_default ALTER COLUMN id DROP IDENTITY IF EXISTS")
            for name in sig_triggers:
                pg.execute(f"DROP TRIGGER IF EXISTS {name} ON signatures_default")
        pg.execute(f"CREATE TABLE {t} (LIKE {t}_default INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
                   " PARTITION BY LIST (namespace)")
        pg.execute(f"ALTER TABLE {t} ATTACH PARTITION {t}_default DEFAULT")
    # the generation triggers on the partitioned table: cloned onto every partition
    for name, (when, table, rw) in sig_triggers.items():
        pg.execute(f"CREATE TRIGGER {name} {when} ON {table} FOR EACH ROW "
                   f"EXECUTE FUNCTION analogist_generation({rw})")


def _foreign_server(pg: Any, params: dict[str, str]) -> str:
    """The coordinator's ``postgres_fdw`` server (and user mapping) for ``params``. Row
    estimates come from the remote server (``use_remote_estimate``): a foreign table has no
    statistics of its own, and planned as one row a stage-1 read joins the namespace's tables
    by a nested loop that rescans the remote side once per row (quadratic)."""
    _, sql = _psycopg()
    host, port, db = params["host"], params.get("port", "5432"), params["dbname"]
    name = "analogist_" + _key(f"{host}:{port}/{db}")
    pg.execute(sql.SQL("CREATE SERVER IF NOT EXISTS {} FOREIGN DATA WRAPPER postgres_fdw "
                       "OPTIONS (host {}, port {}, dbname {}, batch_size '500', "
                       "fetch_size '2000', use_remote_estimate 'true')").format(
        sql.Identifier(name), sql.Literal(host), sql.Literal(port), sql.Literal(db)))
    opts = [sql.SQL("user {}").format(sql.Literal(params.get("user") or "postgres"))]
    if params.get("password"):
        opts.append(sql.SQL("password {}").format(sql.Literal(params["password"])))
    pg.execute(sql.SQL("CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER {} "
                       "OPTIONS ({})").format(sql.Identifier(name), sql.SQL(", ").join(opts)))
    return name


def placements(memory: Any) -> list[Placement]:
    """The placed namespaces of a PostgreSQL store (empty for an unpartitioned one)."""
    pg = _pg(memory)
    if pg.execute("SELECT to_regclass('namespace_placement')").fetchone()[0] is None:
        return []
    return [{"namespace": r[0], "servers": json.loads(r[1]), "placed_at": r[2]}
            for r in pg.execute("SELECT namespace, servers, placed_at FROM namespace_placement "
                                "ORDER BY namespace").fetchall()]


def place(memory: Any, namespace: str, servers: Sequence[str]) -> Placement:
    """Put ``namespace`` of the PostgreSQL store ``memory`` on ``servers`` (``postgresql://``
    URLs of databases on other servers): on one server, a foreign partition of each episode
    table; on several, partitions by hash of the episode's row id, one per server, in the order
    given. The namespace's rows already stored move there in the same transaction. Creates what
    is missing on the coordinator (``postgres_fdw``, the partitioned tables, the foreign server
    and the user mapping) and on each server (a schema with the episode tables)."""
    from analogist.memory.postgres import redact_url  # psycopg, on use

    psycopg, sql = _psycopg()
    pg = _pg(memory)
    ns = _namespace(namespace)
    urls = [str(u) for u in servers]
    if not urls:
        raise StoreError("name at least one server", field="server")
    params = [_server_params(u) for u in urls]
    keys = [(p["host"], p.get("port", "5432"), p["dbname"]) for p in params]
    if len(set(keys)) != len(keys):
        raise StoreError("a server is named twice", field="server")
    if any(p["namespace"] == ns for p in placements(memory)):
        raise StoreError(f"namespace {ns!r} is placed already"[:300], field="namespace")
    base = "analogist_" + _key(memory.store_id() + "\0" + ns)
    schemas = [base] if len(urls) == 1 else [f"{base}_h{i}" for i in range(len(urls))]

    # 1. the remote tables (outside the coordinator's transaction; empty until it commits)
    for url, schema in zip(urls, schemas, strict=True):
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as rc:
                for stmt in remote_ddl(memory, schema, ns):
                    rc.execute(stmt)
                if rc.execute(f'SELECT 1 FROM "{schema}".signatures LIMIT 1').fetchone():
                    raise StoreError(f"server {redact_url(url)!r} already holds rows in "
                                     f"{schema}"[:300], field="server")
        except psycopg.Error as e:
            raise StoreError(f"server {redact_url(url)!r}: {_message(e)}"[:300],
                             field="server") from None

    # 2. the coordinator, in one transaction under the writers' lock
    suffix = "_p" + _key(ns)
    lit = sql.Literal(ns)
    try:
        with pg.transaction():
            pg.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            pg.execute("CREATE EXTENSION IF NOT EXISTS postgres_fdw")
            pg.execute(_PLACEMENT_DDL)
            _partition_tables(pg)
            names = [_foreign_server(pg, p) for p in params]
            # the namespace's rows so far, out of the default partitions
            for t in EPISODE_TABLES:
                pg.execute(f"CREATE TEMP TABLE move_{t} ON COMMIT DROP AS "
                           f"SELECT * FROM {t}_default WHERE namespace = %s", (ns,))
            pg.execute("DELETE FROM signatures_default WHERE namespace = %s", (ns,))
            for t in EPISODE_TABLES[1:]:  # (their foreign keys cascade; rows of older files)
                pg.execute(f"DELETE FROM {t}_default WHERE namespace = %s", (ns,))
            for t in EPISODE_TABLES:
                part = sql.Identifier(t + suffix)
                if len(urls) == 1:
                    pg.execute(sql.SQL(
                        "CREATE FOREIGN TABLE {} PARTITION OF {} FOR VALUES IN ({}) SERVER {} "
                        "OPTIONS (schema_name {}, table_name {})").format(
                        part, sql.Identifier(t), lit, sql.Identifier(names[0]),
                        sql.Literal(schemas[0]), sql.Literal(t)))
                    continue
                pg.execute(sql.SQL("CREATE TABLE {} PARTITION OF {} FOR VALUES IN ({}) "
                                   "PARTITION BY HASH ({})").format(
                    part, sql.Identifier(t), lit, sql.Identifier(_ROW_KEY[t])))
                for i, (name, schema) in enumerate(zip(names, schemas, strict=True)):
                    pg.execute(sql.SQL(
                        "CREATE FOREIGN TABLE {} PARTITION OF {} FOR VALUES WITH "
                        "(MODULUS {}, REMAINDER {}) SERVER {} "
                        "OPTIONS (schema_name {}, table_name {})").format(
                        sql.Identifier(f"{t}{suffix}_h{i}"), part, sql.Literal(len(urls)),
                        sql.Literal(i), sql.Identifier(name), sql.Literal(schema),
                        sql.Literal(t)))
            for t in EPISODE_TABLES:  # signatures first: the remote foreign keys
                cols = sql.SQL(", ").join(sql.Identifier(c) for c, _t, _n in _columns(pg, t))
                pg.execute(sql.SQL("INSERT INTO {} ({}) SELECT {} FROM {}").format(
                    sql.Identifier(t), cols, cols, sql.Identifier(f"move_{t}")))
            shown = [redact_url(u) for u in urls]
            placed_at = memory._clock().isoformat()
            pg.execute("INSERT INTO namespace_placement(namespace, servers, placed_at) "
                       "VALUES (%s, %s, %s)", (ns, json.dumps(shown), placed_at))
    except psycopg.Error as e:
        raise StoreError(f"cannot place namespace {ns!r}: {_message(e)}"[:300],
                         field="namespace") from None
    return {"namespace": ns, "servers": shown, "placed_at": placed_at}
