"""Episodes: adding them (one transaction per batch, with their relation, vector and
fingerprint rows), deleting, superseding and reading them.

A part of :class:`~analogist.memory.sqlite.Memory`, which composes it with the store's
other parts and supplies the connection (``conn``), the write transaction (``_tx``) and
the schema version.
"""

from __future__ import annotations

import builtins
import gc
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from analogist.errors import AnalogistError
from analogist.index.features import EpisodeFeatures
from analogist.io import parse_structured
from analogist.memory.records import (
    DuplicateEpisodeError,
    NotFoundError,
    StoredEpisode,
    StoreError,
    _at,
    _embedding_rows,
    _limit,
    _namespace,
    _plain_record,
    _prepare,
    _prepare_many,
    _Prepared,
    _validated,
)
from analogist.signature import (
    Signature,
    _fast_plain,
    _Plain,
    _plain_of,
    _signature_of,
    validate_signature,
)

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


class Episodes:
    """The episode writes and reads of the store."""

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
        if self._version >= 3:
            c.executemany(
                "INSERT INTO signatures(id, namespace, episode_id, kind, json, source_hash, "
                "created_at, verified, surface) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(sid, namespace, p.episode_id, p.kind, p.text, p.source_hash, now,
                  int(p.verified), p.surface) for sid, p in zip(sids, batch, strict=True)])
        else:  # (a file at an older schema — only while tests pose as an older release)
            c.executemany(
                "INSERT INTO signatures(id, namespace, episode_id, kind, json, source_hash, "
                "created_at, verified) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(sid, namespace, p.episode_id, p.kind, p.text, p.source_hash, now,
                  int(p.verified)) for sid, p in zip(sids, batch, strict=True)])
        # the child rows carry the namespace (schema v5): the tables are partitioned by it
        with_ns = self._version >= _NS_VERSION
        ns = (namespace,) if with_ns else ()
        if with_ns:
            rel_rows = [(sid, i, q, a, u, namespace) for sid, p in zip(sids, batch, strict=True)
                        for i, q, a, u in p.relations]
        else:
            rel_rows = [(sid, *r) for sid, p in zip(sids, batch, strict=True)
                        for r in p.relations]
        c.executemany(_child_sql(_RELATIONS_SQL, with_ns), rel_rows)
        c.executemany(
            _child_sql("INSERT INTO sig_vectors(signature_id, channel, format, data{ns}) "
                       "VALUES (?, ?, ?, ?{nsq})", with_ns),
            [(sid, ch, fmt, data, *ns) for sid, p in zip(sids, batch, strict=True)
             for ch, fmt, data in p.vectors])
        c.executemany(
            _child_sql("INSERT INTO sig_fingerprint(signature_id, fingerprint, depth{ns}) "
                       "VALUES (?, ?, ?{nsq})", with_ns),
            [(sid, p.fingerprint, p.fingerprint_depth, *ns)
             for sid, p in zip(sids, batch, strict=True)])
        return sids

    def _first_stored(self, batch: Sequence[_Prepared], namespace: str) -> None:
        """Raise :class:`DuplicateEpisodeError` (its ``position``: the index in ``batch``) for
        the first record whose episode id is already stored in ``namespace``."""
        eids = [p.episode_id for p in batch]
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
                 embed: Callable[[Signature], Mapping[str, np.ndarray]] | None = None,
                 validated: bool = False) -> list[int]:
        """Store many signatures, one transaction per batch of ``batch_size``.

        ``embed``, when given, maps each validated signature to its embeddings (channel → vector,
        as for :meth:`add`); it is called before the record's batch is written.

        ``validated=True``: the :class:`Signature` objects among ``sigs`` were made by
        :func:`~analogist.signature.validate_signature` in this process (a caller that checked
        a whole input before storing it), and the plain values among them by
        ``analogist.signature._validate_plain``; they are stored as they are, not validated
        again; mappings are validated as always.

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
        # the batch's records, consecutive from record ``first[0]``: validated signatures as
        # plain values and their embedding rows; features at the flush
        plains: builtins.list[_Plain] = []
        embedded: builtins.list[Sequence[tuple[str, str, bytes]]] = []
        first = [0]

        def flush() -> None:
            if not plains:
                return
            now = self._clock().isoformat()
            prepared = _prepare_many(plains, embedded)
            with self._tx():
                try:
                    self._first_stored(prepared, ns)
                except DuplicateEpisodeError as e:
                    raise _at(e, first[0] + e.position) from None  # type: ignore[attr-defined]
                new = self._insert_batch(prepared, ns, now)
            ids.extend(new)
            first[0] += len(plains)
            plains.clear()
            embedded.clear()
            if progress is not None:
                progress(len(ids))

        seen: dict[str, int] = {}
        plain_only = embed is None and not validated  # the usual bulk add: the fast path first
        with _collector_paused():
            for i, rec in enumerate(sigs):
                try:
                    rows: Sequence[tuple[str, str, bytes]] = ()
                    if plain_only:  # no model objects built for a record the fast path reads
                        p = _fast_plain(rec) if type(rec) is dict else None
                        if p is None:
                            p = _plain_record(rec)
                    elif validated and type(rec) is _Plain:
                        p = rec
                        if embed is not None:
                            rows = _embedding_rows(embed(_signature_of(p)))
                    elif validated and isinstance(rec, Signature):
                        p = _plain_of(rec)
                        if embed is not None:
                            rows = _embedding_rows(embed(rec))
                    elif embed is not None:  # the embedder reads a Signature
                        sig = _validated(rec)
                        p, rows = _plain_of(sig), _embedding_rows(embed(sig))
                    else:
                        p = _plain_record(rec)
                except AnalogistError as e:
                    raise _at(e, i) from None
                eid = p.episode_id
                was = seen.get(eid)
                if was is not None:
                    raise DuplicateEpisodeError(
                        f"record {i}: episode {eid!r} repeats record {was}",
                        field=f"records[{i}].episode_id")
                seen[eid] = i
                plains.append(p)
                embedded.append(rows)
                if len(plains) >= batch_size:
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
                             signature=_stored_signature(r[4], f"signatures.id={r[0]}"),
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

    def row_id(self, key: int | str, namespace: str = "default") -> int | None:
        """The row id of the episode with row id ``key`` (int) or episode id ``key`` (str),
        or None: :meth:`get` without reading the episode."""
        return self._find(key, _namespace(namespace))

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
        return _decode_vectors(channel, rows)

    def embeddings_of(self, channel: str, ids: Sequence[int], namespace: str = "default"
                      ) -> tuple[builtins.list[int], np.ndarray]:
        """:meth:`embeddings` restricted to the row ids ``ids`` of ``namespace`` (ids without a
        ``channel`` vector are left out), in id order, by primary key in chunks of 500 ids."""
        ns = _namespace(namespace)
        want = sorted({int(i) for i in ids})
        found: builtins.list[tuple[int, Any, Any]] = []
        for start in range(0, len(want), 500):
            chunk = want[start:start + 500]
            found += self.conn.execute(
                "SELECT s.id, v.format, v.data FROM sig_vectors v JOIN signatures s "
                f"ON s.id = v.signature_id {self._join_ns('v')}"
                f"WHERE v.signature_id IN ({','.join('?' * len(chunk))}) AND v.channel = ? "
                "AND s.namespace = ? ORDER BY s.id", (*chunk, channel, ns)).fetchall()
        return _decode_vectors(channel, found)

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


def _stored_signature(text: str, source: str) -> Signature:
    """The signature of a stored row. Its JSON was size-checked, depth-checked and validated
    when it was written, so it is parsed without the byte count and the depth scans an input
    file gets (:func:`~analogist.signature.loads_signature`) and validated again; a malformed
    row is still refused in one line."""
    return validate_signature(parse_structured(text, source=source, fmt="json", prechecked=True),
                              source=source, text=text)


def _decode_vectors(channel: str, rows: Sequence[Any]) -> tuple[list[int], np.ndarray]:
    """``(ids, matrix)`` from ``(id, format, data)`` rows of one channel: float32 only, one size."""
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
