"""Stores for the analogical memory: SQLite (default)."""

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
]
