"""An SQLite cache of validated LLM responses, keyed by everything that shapes the reply.

One table, ``llm_cache(key TEXT PRIMARY KEY, response TEXT, model TEXT, created REAL)``, in WAL
mode so several processes can share one cache file. ``key`` is :func:`cache_key` — the SHA-256 of
the canonical JSON of (base_url, model, messages, schema, schema_name, temperature, max_tokens,
structured mode); ``response`` the JSON of what the client stored (the validated object, the raw
text, the token counts of the original call).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def cache_key(*, base_url: str, model: str, messages: Sequence[Mapping[str, Any]],
              schema: Mapping[str, Any], schema_name: str, temperature: float | None,
              max_tokens: int | None, structured: str) -> str:
    """SHA-256 hex of the canonical JSON of every request input that shapes the reply."""
    payload = {"base_url": base_url.rstrip("/"), "model": model,
               "messages": [dict(m) for m in messages], "schema": schema,
               "schema_name": schema_name, "temperature": temperature,
               "max_tokens": max_tokens, "structured": structured}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class ResponseCache:
    """A response cache in one SQLite file; open it, use it, close it (or use ``with``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db: sqlite3.Connection | None = sqlite3.connect(
                str(self.path), timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS llm_cache (key TEXT PRIMARY KEY, "
                             "response TEXT NOT NULL, model TEXT, created REAL NOT NULL)")
            self._db.execute("SELECT count(*) FROM llm_cache").fetchone()
        except (sqlite3.Error, OSError) as e:
            self._db = None
            raise self._error(e) from None

    def _error(self, e: Exception) -> AnalogistError:
        return AnalogistError(f"LLM response cache is unreadable ({e}); expected an SQLite "
                              "database written by analogist — delete the file to start a "
                              "fresh cache, or set ANALOGIST_LLM_CACHE=off",
                              source=str(self.path))

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise AnalogistError("LLM response cache is closed", source=str(self.path))
        return self._db

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for ``key``, or ``None``."""
        with self._lock:
            try:
                row = self._conn().execute("SELECT response FROM llm_cache WHERE key = ?",
                                           (key,)).fetchone()
            except sqlite3.Error as e:
                raise self._error(e) from None
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except ValueError as e:
            raise self._error(e) from None
        if not isinstance(value, dict):
            raise self._error(ValueError(f"entry {key[:12]}… is not a JSON object"))
        return value

    def put(self, key: str, response: Mapping[str, Any], *, model: str = "") -> None:
        """Store (or replace) the response for ``key``."""
        data = canonical_json(dict(response))
        with self._lock:
            try:
                self._conn().execute(
                    "INSERT OR REPLACE INTO llm_cache (key, response, model, created) "
                    "VALUES (?, ?, ?, ?)", (key, data, model, time.time()))
            except sqlite3.Error as e:
                raise self._error(e) from None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn().execute("SELECT count(*) FROM llm_cache").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
