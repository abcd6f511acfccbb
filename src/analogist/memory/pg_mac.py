"""The stage-1 (MAC) index of a PostgreSQL store, kept in the database itself.

The SQLite store saves a namespace's :class:`~analogist.index.mac.MacIndex` beside its file
(``<store>.mac/``). A server store has no file beside it and is shared by many processes, so the
index lives in a table of the store, ``mac_index``: one row per namespace holding the index's
state (``generation``, ``rewrites``, rows, highest id, the store's identity) and its arrays
(content CSR/CSC vectors, their column names, the WL fingerprint table and codes — the same files
:meth:`MacIndex.save` writes) packed into one ``bytea``.

Where stage 1 is computed: in-process, over this cached copy. A new process reads one row (no
rebuild), appends the episodes written since (ids above the copy's highest id), and from then on
each query costs one small read of the namespace's generation counter (the trigger-maintained
``namespace_state`` row) before scoring in numpy; a copy whose ``rewrites`` differ (episodes
changed or deleted) is rebuilt. The abstract-text (embedding) channel is not part of this
copy: in-process, or in pgvector's HNSW index where the server has the extension
(:mod:`analogist.memory.pg_vector`).

The unpacked copy goes through :meth:`MacIndex.load` and its checks (format, store identity,
shapes, bounds), so a damaged row is rebuilt with a note, never trusted. Writes of the row are one
``INSERT ... ON CONFLICT`` statement (atomic: a reader sees the old copy or the new one).
"""

from __future__ import annotations

import io
import json
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from analogist.index.content import ContentIndexError
from analogist.index.mac import FORMAT, MacIndex, _key
from analogist.memory.sqlite import StoreError

__all__ = ["applies", "load", "save"]

_DDL = """CREATE TABLE IF NOT EXISTS mac_index (
    namespace TEXT PRIMARY KEY,
    store_id TEXT NOT NULL,
    generation BIGINT NOT NULL,
    rewrites BIGINT NOT NULL,
    rows BIGINT NOT NULL,
    max_id BIGINT NOT NULL,
    data BYTEA NOT NULL
)"""


def applies(memory: Any) -> bool:
    """Whether ``memory`` is a PostgreSQL store (its stage-1 index lives in the database)."""
    return type(memory).__name__ == "PgMemory" and hasattr(memory.conn, "_pg")


def _pg(memory: Any) -> Any:
    return memory.conn._pg


def _ensure(pg: Any) -> None:
    # under the writers' lock: concurrent CREATE TABLE IF NOT EXISTS can collide on PostgreSQL
    with pg.transaction():
        pg.execute("SELECT pg_advisory_xact_lock(%s)", (0x616E616C6F67,))
        pg.execute(_DDL)


def load(memory: Any, namespace: str, store_id: str) -> MacIndex | None:
    """The saved index of ``namespace``, None when there is none; a damaged or foreign copy
    raises :class:`ContentIndexError` (the caller rebuilds)."""
    pg = _pg(memory)
    if pg.execute("SELECT to_regclass('mac_index')").fetchone()[0] is None:
        return None
    row = pg.execute("SELECT store_id, generation, rewrites, rows, max_id, data FROM mac_index "
                     "WHERE namespace = %s", (namespace,)).fetchone()
    if row is None:
        return None
    sid, gen, rew, rows, max_id, data = row
    with tempfile.TemporaryDirectory(prefix="analogist-mac-") as tmp:
        root = Path(tmp)
        try:
            with tarfile.open(fileobj=io.BytesIO(bytes(data)), mode="r:") as tar:
                for m in tar.getmembers():
                    if not (m.isfile() or m.isdir()) or m.name.startswith(("/", ".")) \
                            or ".." in m.name.split("/"):
                        raise ContentIndexError("unexpected member in the stored index",
                                                source="mac_index")
                tar.extractall(root, filter="data")
            d = next(p for p in root.iterdir() if p.is_dir())
        except (tarfile.TarError, OSError, StopIteration, ValueError) as e:
            raise ContentIndexError(f"unreadable stored index: {e}"[:300],
                                    source="mac_index") from None
        # the pointer MacIndex.load reads, made from the row's columns
        meta = {"format": FORMAT, "store_id": sid, "namespace": namespace, "generation": gen,
                "rewrites": rew, "rows": rows, "max_id": max_id, "dir": d.name}
        (root / f"{_key(namespace)}.json").write_text(json.dumps(meta), encoding="utf-8")
        return MacIndex.load(root, namespace, store_id)


def save(memory: Any, idx: MacIndex) -> None:
    """Store ``idx`` as its namespace's row (replacing the previous copy)."""
    pg = _pg(memory)
    with tempfile.TemporaryDirectory(prefix="analogist-mac-") as tmp:
        root = Path(tmp)
        idx.save(root)
        d = next(p for p in root.iterdir() if p.is_dir())
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:") as tar:
            tar.add(d, arcname=d.name)
    try:
        _ensure(pg)
        _upsert(pg, idx, buf.getvalue())
    except Exception as e:  # psycopg is an optional dependency: its errors by module name
        if not type(e).__module__.startswith("psycopg"):
            raise
        raise StoreError(f"cannot save the stage-1 index: {e}"[:300], source="mac_index") from None
    idx.saved_rows = len(idx)


def _upsert(pg: Any, idx: MacIndex, data: bytes) -> None:
    pg.execute(
        "INSERT INTO mac_index(namespace, store_id, generation, rewrites, rows, max_id, data) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (namespace) DO UPDATE SET "
        "store_id = EXCLUDED.store_id, generation = EXCLUDED.generation, "
        "rewrites = EXCLUDED.rewrites, rows = EXCLUDED.rows, max_id = EXCLUDED.max_id, "
        "data = EXCLUDED.data",
        (idx.namespace, idx.store_id, idx.generation, idx.rewrites, len(idx), idx.max_id,
         data))
