"""The reads retrieval makes: the store's identity and generation, stage 1's content
matrix, candidates' signatures, heads and surface words, namespaces.

A part of :class:`~analogist.memory.sqlite.Memory`, which composes it with the store's
other parts and supplies the connection (``conn``), the write transaction (``_tx``) and
the schema version.
"""

from __future__ import annotations

import builtins
import json
from array import array
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from analogist.index.features import surface_tokens_of_data
from analogist.memory.records import StoredEpisode, StoreError, _namespace

if TYPE_CHECKING:
    from analogist.index.mac import ContentMatrix


class RetrievalReads:
    """The reads for retrieval (stage 1, candidates, decoy probe)."""

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
        from analogist.index.mac import ContentMatrix  # the stage-1 index, loaded on use

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
        # CROSS JOIN: SQLite keeps ``signatures`` outside (the namespace's rows, then each
        # one's content vector by primary key) instead of walking every content vector of the
        # store by the channel index — 27 ms at 10k episodes for the one row an append reads
        cur = self.conn.execute(
            "SELECT s.id, v.data, f.fingerprint FROM signatures s CROSS JOIN sig_vectors v "
            f"LEFT JOIN sig_fingerprint f ON f.signature_id = s.id {self._join_ns('f')}"
            "AND f.depth = ? "
            f"WHERE v.signature_id = s.id {self._join_ns('v')}AND v.channel = 'content' "
            "AND s.id > ? AND s.namespace = ? ORDER BY s.id",
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
