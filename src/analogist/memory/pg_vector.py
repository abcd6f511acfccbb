"""The abstract-text (embedding) channel of a PostgreSQL store in pgvector, where the server has it.

Stage 1's embedding channel scores the cosine of the query's L1–L3 abstract-text embeddings with
the stored ones. In-process (the SQLite store, or a server without pgvector) that means reading
every stored vector of the namespace into the process and one matrix–vector product per level.
On a PostgreSQL server where ``CREATE EXTENSION vector`` succeeds (tried once when the store is
opened, under the writers' lock), the vectors are also kept in the database:

* **The tables** ``sig_embedding_l1`` … ``sig_embedding_l3`` (``signature_id``, ``namespace``,
  ``emb vector(d)``), one row per level vector of ``sig_vectors``, each created by the first
  write of its level with ``d`` from that write's vectors (the embedder's dimension; a level's
  size is its own, as on SQLite). A vector of another size is refused with one line naming both
  sizes and the batch is not written: a level never mixes two embedders' vectors (re-embed the
  store with one embedder, or use a new store).
* **Namespaces as hard partitions:** one HNSW index (``vector_cosine_ops``) per namespace and
  level, a partial index ``WHERE namespace = '<ns>'`` on the level's table, created when the
  first vector of that namespace and level is written; every search names one namespace (a
  literal, so the planner proves the index's predicate) and runs with sequential scans and sorts
  disabled, so the index walked is that namespace's HNSW graph (:meth:`PgVector.plan` shows it).
* **Same transaction as the episode:** the rows are written by the store's own batch insert and
  in-place rewrite (:meth:`PgMemory._insert_batch`, :meth:`PgMemory._rewrite`), inside the
  batch's transaction; a trigger on ``sig_vectors`` deletes a row's vector when its
  ``sig_vectors`` row goes (delete, rewrite), in the deleting transaction. Supersession changes no
  vector (a superseded episode stays retrievable, as in-process).
* **Read by stage 1** (:func:`channel_scores`, called by
  :meth:`analogist.retrieve.Retriever.mac`): per level the ``k`` nearest rows from the HNSW index
  (``hnsw.ef_search`` from :class:`PgVectorParams`), plus the exact cosines of the rows the
  other stage-1 channels rank highest (``rescore``, read by primary key), each row's score the
  mean of its cosines over the levels it has, as in-process; a row in neither set scores 0 in
  this channel — a departure from exact search like the in-process HNSW option's
  (:mod:`analogist.index.ann`), measured by ``benchmarks/pg_vector_channel.py``. The process then never reads the namespace's
  vectors (no per-process copy of them). Below :attr:`PgVectorParams.min_rows` vectors the
  channel stays exact and in-process.

Without the extension (or on a store partitioned across servers, :mod:`pg_partition`, whose
foreign partitions carry no HNSW index) nothing here is used and the store behaves exactly as
before. A store opened when the extension appears, or after a process without it wrote episodes,
fills the tables from ``sig_vectors`` on open (the rows they lack).
"""

from __future__ import annotations

import hashlib
import logging
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from analogist.memory.records import StoreError, _Prepared
from analogist.params import bounded, check_bounds, flag

# psycopg (the 'postgres' extra, optional) is imported by the first PgVector, not here: every
# store imports this module through retrieval, and an SQLite store never needs the import
sql: Any = None
TypeInfo: Any = None
_VecDumper: Any = None

__all__ = ["CHANNELS", "PgVector", "PgVectorParams", "attach", "channel_scores", "channels_for"]

CHANNELS = ("L1", "L2", "L3")
"""The levels the embedding channel scores (``analogist.retrieve.LEVEL_CHANNELS``)."""
TABLE = "sig_embedding"
"""The tables' prefix: ``sig_embedding_l1``, ``sig_embedding_l2``, ``sig_embedding_l3``."""
_log = logging.getLogger("analogist.memory")

_DELETE_FN = """CREATE OR REPLACE FUNCTION analogist_embedding_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    EXECUTE format('DELETE FROM %I WHERE signature_id = $1', TG_ARGV[0]) USING OLD.signature_id;
    RETURN NULL;
END
$fn$"""


def table(channel: str) -> str:
    """The table of one level's vectors."""
    return f"{TABLE}_{channel.lower()}"


@dataclass(frozen=True, slots=True)
class PgVectorParams:
    """The embedding channel on a PostgreSQL store with pgvector.

    Attributes:
        enabled: take the channel from the database's HNSW index when the store has one (False:
            always exact and in-process).
        min_rows: the namespace's vectors (in its largest level) from which the index is used;
            below it the channel is exact and in-process, as on SQLite.
        k: rows per level the index returns.
        rescore: the rows best by the other stage-1 channels (content, fingerprint) whose
            cosines are also read, exactly, by primary key: a row neither among the ``k``
            nearest nor among these scores 0 in this channel.
        ef_search: pgvector's ``hnsw.ef_search``, the candidate list of the graph search (at
            least ``k`` is used: pgvector returns at most ``ef_search`` rows).
    """

    enabled: bool = flag(True)
    min_rows: int = bounded(20_000, lo=1, integer=True)
    k: int = bounded(200, lo=1, hi=1000, integer=True)
    rescore: int = bounded(1000, lo=0, hi=100_000, integer=True)
    ef_search: int = bounded(200, lo=1, hi=1000, integer=True)

    def __post_init__(self) -> None:
        check_bounds(self)


class _Vec:
    """A float32 vector sent to the server in pgvector's binary format."""

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray) -> None:
        self.a = a


def _load_psycopg() -> None:
    """Import psycopg's names this module uses and make the vector dumper (once)."""
    global sql, TypeInfo, _VecDumper
    if _VecDumper is not None:
        return
    from psycopg import sql as psycopg_sql  # optional and heavy: see the note at the top
    from psycopg.adapt import Dumper
    from psycopg.pq import Format
    from psycopg.types import TypeInfo as psycopg_type_info

    class VecDumper(Dumper):  # type: ignore[misc,valid-type]
        format = Format.BINARY

        def dump(self, obj: _Vec) -> bytes:
            a = np.asarray(obj.a, dtype=">f4")
            return struct.pack(">HH", a.size, 0) + a.tobytes()

    sql, TypeInfo, _VecDumper = psycopg_sql, psycopg_type_info, VecDumper


def _index_name(namespace: str, channel: str) -> str:
    key = hashlib.sha256(f"{namespace}\x00{channel}".encode()).hexdigest()[:16]
    return f"{TABLE}_hnsw_{key}"


def _message(e: BaseException) -> str:
    text = (getattr(e, "diag", None) and e.diag.message_primary) or str(e) or type(e).__name__
    return " ".join(str(text).split())[:200]


def _psycopg_error(e: BaseException) -> bool:
    return type(e).__module__.startswith("psycopg")


class PgVector:
    """The pgvector side of one open store (its connection has the vector type registered)."""

    def __init__(self, pg: Any) -> None:
        _load_psycopg()
        self._pg = pg
        # the extension lives in one schema of the database (the one it was created in), maybe
        # not on this store's search path: its type, operator and operator class are qualified
        row = pg.execute("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                         "ON n.oid = e.extnamespace WHERE e.extname = 'vector'").fetchone()
        if row is None:
            raise StoreError("the vector extension is missing after CREATE EXTENSION vector")
        self._schema = sql.Identifier(row[0])
        info = TypeInfo.fetch(pg, sql.SQL("{}.vector").format(self._schema).as_string(pg))
        if info is None:
            raise StoreError("the vector type is missing after CREATE EXTENSION vector")
        pg.adapters.register_dumper(_Vec, type("_VectorDumper", (_VecDumper,), {"oid": info.oid}))
        self._dist = sql.SQL("OPERATOR({}.<=>)").format(self._schema)

    # -- state -------------------------------------------------------------------------------
    def dim(self, channel: str) -> int | None:
        """The dimension of one level's column, None before its first vector is written."""
        row = self._pg.execute(
            "SELECT a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass(%s) "
            "AND a.attname = 'emb'", (table(channel),)).fetchone()
        return None if row is None else int(row[0])

    def usable(self) -> bool:
        """False once the store has been partitioned across servers (no index there)."""
        row = self._pg.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass("
                               "'signatures')").fetchone()
        return row is not None and row[0] != "p"

    # -- writing (inside the caller's transaction) ------------------------------------------
    def _create(self, channel: str, d: int) -> None:
        t = sql.Identifier(table(channel))
        self._pg.execute(sql.SQL(
            "CREATE TABLE {} (signature_id BIGINT PRIMARY KEY, namespace TEXT NOT NULL, "
            "emb {}.vector({}) NOT NULL)").format(t, self._schema, sql.Literal(int(d))))
        self._pg.execute(sql.SQL("CREATE INDEX {} ON {}(namespace)").format(
            sql.Identifier(f"{table(channel)}_ns"), t))
        self._pg.execute(_DELETE_FN)
        self._pg.execute(sql.SQL(
            "CREATE TRIGGER {} AFTER DELETE ON sig_vectors FOR EACH ROW WHEN (OLD.channel = {}) "
            "EXECUTE FUNCTION analogist_embedding_delete({})").format(
                sql.Identifier(f"sig_vectors_{table(channel)}_delete"), sql.Literal(channel),
                sql.Literal(table(channel))))

    def write(self, rows: Sequence[tuple[int, str, str, np.ndarray]], what: str = "") -> None:
        """Write ``(signature id, level, namespace, vector)`` rows (replacing a row's earlier
        vector of that level), creating the level's table and the namespace's index when
        missing. Raises :class:`StoreError` for a vector whose size is not its level's, or when
        the server refuses the rows."""
        if not rows:
            return
        try:
            self._write(rows, what)
        except Exception as e:
            if not _psycopg_error(e):
                raise
            raise StoreError(f"PostgreSQL (pgvector): {_message(e)}", source=TABLE) from None

    def _write(self, rows: Sequence[tuple[int, str, str, np.ndarray]], what: str) -> None:
        if not self.usable():
            return
        for ch in CHANNELS:
            mine = [r for r in rows if r[1] == ch]
            if not mine:
                continue
            d = self.dim(ch)
            if d is None:
                d = int(mine[0][3].size)
                self._create(ch, d)
            for sid, _ch, _ns, v in mine:
                if v.size != d:
                    raise StoreError(
                        f"embedding {ch} of {what or f'row {sid}'} has {v.size} dimensions, "
                        f"the store's {ch} vectors have {d} (pgvector column "
                        f"{table(ch)}.emb): embed with the embedder the store was written "
                        "with, or use a new store", field=f"embeddings.{ch}")
            for ns in sorted({r[2] for r in mine}):
                name = _index_name(ns, ch)
                if self._pg.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is None:
                    self._pg.execute(sql.SQL(
                        "CREATE INDEX {} ON {} USING hnsw (emb {}.vector_cosine_ops) "
                        "WHERE namespace = {}").format(
                            sql.Identifier(name), sql.Identifier(table(ch)), self._schema,
                            sql.Literal(ns)))
            with self._pg.cursor() as cur:
                cur.executemany(sql.SQL(
                    "INSERT INTO {}(signature_id, namespace, emb) VALUES (%s, %s, %b) "
                    "ON CONFLICT (signature_id) DO UPDATE SET namespace = EXCLUDED.namespace, "
                    "emb = EXCLUDED.emb").format(sql.Identifier(table(ch))),
                    [(sid, ns, _Vec(v)) for sid, _ch, ns, v in mine])

    def write_prepared(self, sids: Sequence[int], batch: Sequence[_Prepared],
                       namespace: str) -> None:
        """The level vectors of a batch the store has just inserted (or rewritten)."""
        rows = []
        for sid, p in zip(sids, batch, strict=True):
            for ch, fmt, data in p.vectors:
                if ch in CHANNELS and fmt == "float32":
                    rows.append((int(sid), ch, namespace, np.frombuffer(data, dtype="<f4")))
        first = next(iter(batch), None)
        what = f"episode {first.episode_id!r}" if len(batch) == 1 and first else ""
        self.write(rows, what)

    def fill(self) -> int:
        """Copy the level vectors of ``sig_vectors`` the tables lack (in this transaction);
        returns how many. A level whose stored vectors mix sizes raises :class:`StoreError`."""
        n = 0
        for ch in CHANNELS:
            sizes = self._pg.execute(
                "SELECT DISTINCT length(data) FROM sig_vectors WHERE channel = %s "
                "AND format = 'float32'", (ch,)).fetchall()
            if len(sizes) > 1:
                raise StoreError(f"the stored {ch} vectors mix sizes ("
                                 f"{', '.join(str(s[0] // 4) for s in sorted(sizes))} "
                                 "dimensions)")
            if not sizes:
                continue
            t = sql.Identifier(table(ch))
            have = self.dim(ch) is not None
            if have:
                n_vec = self._pg.execute("SELECT count(*) FROM sig_vectors WHERE channel = %s "
                                         "AND format = 'float32'", (ch,)).fetchone()[0]
                n_emb = self._pg.execute(sql.SQL("SELECT count(*) FROM {}").format(t)
                                         ).fetchone()[0]
                if n_vec == n_emb:
                    continue
            missing = sql.SQL(" AND NOT EXISTS (SELECT 1 FROM {} e WHERE "
                              "e.signature_id = v.signature_id)").format(t) if have \
                else sql.SQL("")
            last = 0
            while True:
                got = self._pg.execute(sql.SQL(
                    "SELECT v.signature_id, s.namespace, v.data FROM sig_vectors v "
                    "JOIN signatures s ON s.id = v.signature_id WHERE v.channel = %s "
                    "AND v.format = 'float32' AND v.signature_id > %s{} "
                    "ORDER BY v.signature_id LIMIT 5000").format(missing), (ch, last)).fetchall()
                if not got:
                    break
                self.write([(int(sid), ch, ns, np.frombuffer(bytes(data), dtype="<f4"))
                            for sid, ns, data in got])
                n += len(got)
                last = int(got[-1][0])
        return n

    # -- reading -----------------------------------------------------------------------------
    def counts(self, namespace: str) -> dict[str, int]:
        """Vectors per level of ``namespace``."""
        out = {}
        for ch in CHANNELS:
            if self.dim(ch) is not None:
                c = self._pg.execute(sql.SQL("SELECT count(*) FROM {} WHERE namespace = %s"
                                             ).format(sql.Identifier(table(ch))),
                                     (namespace,)).fetchone()[0]
                if c:
                    out[ch] = int(c)
        return out

    def query(self, namespace: str, channel: str) -> Any:
        """The nearest-rows statement of one namespace and level (its literal namespace
        matches the partial index's predicate)."""
        return sql.SQL(
            "SELECT signature_id, 1 - (emb {dist} %b) FROM {table} WHERE namespace = {ns} "
            "ORDER BY emb {dist} %b LIMIT %s").format(
                dist=self._dist, table=sql.Identifier(table(channel)),
                ns=sql.Literal(namespace))

    def _settings(self, k: int, ef_search: int) -> None:
        # pgvector returns at most ef_search rows; the HNSW index, never a scan and sort of
        # the namespace's rows by the namespace's B-tree (its plans all have a sort)
        self._pg.execute(f"SET LOCAL hnsw.ef_search = {max(int(ef_search), int(k))}")
        self._pg.execute("SET LOCAL enable_seqscan = off")
        self._pg.execute("SET LOCAL enable_sort = off")

    def plan(self, namespace: str, channel: str, q: np.ndarray, k: int, ef_search: int) -> str:
        """The server's plan (EXPLAIN) of :meth:`search`'s statement, under its settings."""
        v = _Vec(np.asarray(q, dtype=np.float32))
        with self._pg.transaction():
            self._settings(k, ef_search)
            rows = self._pg.execute(sql.SQL("EXPLAIN ") + self.query(namespace, channel),
                                    (v, v, int(k))).fetchall()
        return "\n".join(r[0] for r in rows)

    def search(self, namespace: str, channel: str, q: np.ndarray, k: int, ef_search: int
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(signature ids, cosines)`` of the ``k`` nearest vectors of one namespace and level
        by the HNSW index, nearest first."""
        v = _Vec(np.asarray(q, dtype=np.float32))
        with self._pg.transaction():
            self._settings(k, ef_search)
            rows = self._pg.execute(self.query(namespace, channel), (v, v, int(k))).fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        ids, sims = zip(*rows, strict=True)
        return np.asarray(ids, dtype=np.int64), np.asarray(sims, dtype=np.float64)

    def cosines(self, namespace: str, channel: str, q: np.ndarray, ids: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """``(signature ids, cosines)`` of the vectors of ``ids`` (those that have one in this
        level and namespace), exactly, found by the primary key."""
        v = _Vec(np.asarray(q, dtype=np.float32))
        rows = self._pg.execute(sql.SQL(
            "SELECT signature_id, 1 - (emb {} %b) FROM {} WHERE namespace = %s "
            "AND signature_id = ANY(%s)").format(self._dist, sql.Identifier(table(channel))),
            (v, namespace, [int(i) for i in ids])).fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        got, sims = zip(*rows, strict=True)
        return np.asarray(got, dtype=np.int64), np.asarray(sims, dtype=np.float64)

    def levels_of(self, namespace: str, channels: Sequence[str], ids: np.ndarray
                  ) -> dict[int, int]:
        """How many of ``channels`` each of ``ids`` has a vector in."""
        out: dict[int, int] = {}
        want = [int(i) for i in ids]
        for ch in channels:
            if self.dim(ch) is None:
                continue
            for (sid,) in self._pg.execute(sql.SQL(
                    "SELECT signature_id FROM {} WHERE namespace = %s AND signature_id = ANY(%s)"
                    ).format(sql.Identifier(table(ch))), (namespace, want)):
                out[int(sid)] = out.get(int(sid), 0) + 1
        return out


def attach(memory: Any) -> str | None:
    """On opening a PostgreSQL store (under the writers' lock): create the extension when the
    server has it and give the store its :class:`PgVector` (``memory._pgvector``), filling the
    table with the vectors it lacks. Returns a one-line note when the channel stays in-process
    (no extension, a partitioned store, vectors of mixed sizes), None otherwise."""
    pg = memory.conn._pg
    memory._pgvector = None
    try:
        if pg.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
                      ).fetchone() is None:
            return "the server has no pgvector extension: the embedding channel is in-process"
        with pg.transaction():
            pg.execute("CREATE EXTENSION IF NOT EXISTS vector")
        vec = PgVector(pg)
        if not vec.usable():
            return "a store partitioned across servers: the embedding channel is in-process"
        with pg.transaction():
            n = vec.fill()
    except StoreError as e:
        return f"pgvector not used ({e}): the embedding channel is in-process"
    except Exception as e:
        if not _psycopg_error(e):
            raise
        return f"pgvector not used ({_message(e)}): the embedding channel is in-process"
    if n:
        _log.info("analogist: copied %d abstract-text vectors into the %s tables", n, TABLE)
    memory._pgvector = vec
    return None


def channels_for(memory: Any, namespace: str, params: PgVectorParams) -> dict[str, int] | None:
    """The levels of ``namespace`` in the database (level → vectors) when stage 1 should take
    its embedding channel from there, None when it stays in-process."""
    vec = getattr(memory, "_pgvector", None)
    if vec is None or not params.enabled or not vec.usable():
        return None
    counts = vec.counts(namespace)
    if not counts or max(counts.values()) < params.min_rows:
        return None
    return counts


def channel_scores(memory: Any, namespace: str, ids: np.ndarray, channels: Sequence[str],
                   queries: np.ndarray, params: PgVectorParams,
                   prior: np.ndarray | None = None) -> np.ndarray:
    """The embedding channel over the stage-1 rows ``ids`` (sorted): per level in ``channels``
    the ``k`` nearest stored vectors to that level's query vector, and the exact cosines of the
    ``params.rescore`` rows best by ``prior`` (the other channels' fused score, aligned with
    ``ids``; positive ones only); a row's score is the mean of its cosines over the levels it has
    among ``channels`` (0 for a row neither near nor rescored)."""
    vec: PgVector = memory._pgvector
    for ch, q in zip(channels, queries, strict=True):
        d = vec.dim(ch)
        if d is not None and q.shape[0] != d:
            raise StoreError(f"the query's {ch} vector has {q.shape[0]} dimensions, the "
                             f"store's {d} (pgvector column {table(ch)}.emb): embed with the "
                             "embedder the store was written with", field="embedder")
    emb = np.zeros(len(ids), dtype=np.float64)
    found: list[np.ndarray] = []
    extra = np.zeros(0, dtype=np.int64)
    if prior is not None and params.rescore and len(ids):
        r = min(params.rescore, len(ids))
        top = np.argpartition(-prior, r - 1)[:r]
        extra = ids[top[prior[top] > 0]]
    for ch, q in zip(channels, queries, strict=True):
        near, sims = vec.search(namespace, ch, q, params.k, params.ef_search)
        more = np.setdiff1d(extra, near)
        if len(more):  # the rows the other channels rank high: their exact cosines
            m_ids, m_sims = vec.cosines(namespace, ch, q, more)
            near, sims = np.concatenate([near, m_ids]), np.concatenate([sims, m_sims])
        pos = np.minimum(np.searchsorted(ids, near), max(len(ids) - 1, 0))
        ok = (ids[pos] == near) if len(ids) else np.zeros(len(near), dtype=bool)
        np.add.at(emb, pos[ok], sims[ok])
        found.append(near[ok])
    hit = np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)
    if len(hit) and len(channels) > 1:
        have = vec.levels_of(namespace, channels, hit)
        cnt = np.asarray([have.get(int(s), 1) for s in hit], dtype=np.float64)
        emb[np.searchsorted(ids, hit)] /= cnt
    return emb
