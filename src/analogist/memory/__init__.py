"""Stores for the analogical memory: SQLite (default) and PostgreSQL (``postgresql://`` URLs).

:func:`open_memory` picks the backend from the store string: a ``postgresql://`` (or
``postgres://``) URL opens :class:`~analogist.memory.postgres.PgMemory` (needs the ``postgres``
extra), anything else is a SQLite file path (``":memory:"`` for a private in-memory store).
Both are the same :class:`Memory` (one implementation; the PostgreSQL backend supplies only the
dialect and the connection). ``Memory.open`` takes file paths only (and refuses URLs).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from analogist.memory.sqlite import (
    SCHEMA_VERSION,
    DuplicateEpisodeError,
    Memory,
    NotFoundError,
    SchemaVersionError,
    StoredEpisode,
    StoreError,
)

__all__ = [
    "SCHEMA_VERSION",
    "DuplicateEpisodeError",
    "Memory",
    "NotFoundError",
    "SchemaVersionError",
    "StoreError",
    "StoredEpisode",
    "is_postgres_url",
    "open_memory",
]


def is_postgres_url(store: str | Path) -> bool:
    """Whether ``store`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(store, str) and store.lower().startswith(("postgresql://", "postgres://"))


def open_memory(store: str | Path, *, timeout: float = 30.0,
                clock: Callable[[], datetime] | None = None) -> Memory:
    """Open the store named by ``store``: a ``postgresql://user@host:port/db`` URL (PostgreSQL;
    ``pip install 'analogist[postgres]'``) or a SQLite file path (created when missing).
    Errors (an unreachable server, a bad URL, an unreadable file) are one
    :class:`StoreError` naming the store."""
    if is_postgres_url(store):
        # the PostgreSQL backend imports psycopg, an optional dependency
        from analogist.memory.postgres import PgMemory

        return PgMemory.open(str(store), timeout=timeout, clock=clock)
    return Memory.open(store, timeout=timeout, clock=clock)
