"""API keys for the HTTP service, stored hashed in the store's own SQLite file.

A key is shown once, when it is made: ``ak_<key id>.<secret>`` (the key id is public and picks
the row; the secret is 32 random bytes, URL-safe base64). At rest only an HMAC-SHA256 of the
secret under a per-key random salt is kept, compared in constant time. Each key is bound to one
or more namespaces; the server refuses (403) any request naming another namespace.

The table ``api_keys`` is created here (``CREATE TABLE IF NOT EXISTS``) — the memory's own
migrations (:mod:`analogist.memory.sqlite`) know nothing of it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError

__all__ = ["ApiKey", "KeyError_", "KeyStore", "TOKEN_PREFIX"]

TOKEN_PREFIX = "ak_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
_TOKEN = re.compile(r"^ak_([0-9a-f]{16})\.([A-Za-z0-9_\-]{20,100})$")

_DDL = (
    """CREATE TABLE IF NOT EXISTS api_keys (
        key_id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        salt BLOB NOT NULL,
        digest BLOB NOT NULL,
        namespaces TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    )""",
)


class KeyError_(AnalogistError):  # noqa: N801 - avoid shadowing the builtin KeyError
    """A bad key name, namespace, or an unknown key."""


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One key as the server sees it after verification (never the secret)."""

    key_id: str
    name: str
    namespaces: frozenset[str]
    created_at: str
    revoked_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "key_id": self.key_id, "namespaces": sorted(self.namespaces),
                "created_at": self.created_at, "revoked": self.revoked_at is not None,
                "revoked_at": self.revoked_at}


def check_namespace(ns: Any, field: str = "namespace") -> str:
    if not isinstance(ns, str) or not _NAMESPACE.match(ns):
        raise KeyError_("a namespace is 1 to 100 characters of letters, digits, '_', '.', '-' "
                        f"starting with a letter or digit; got {ns!r}"[:200], field=field)
    return ns


def _digest(salt: bytes, secret: str) -> bytes:
    return hmac.new(salt, secret.encode("ascii"), hashlib.sha256).digest()


class KeyStore:
    """The ``api_keys`` table of one SQLite file. One instance per thread (sqlite3
    connections are not shared across threads)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            self.conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self.conn.execute("PRAGMA busy_timeout = 30000")
            for stmt in _DDL:
                self.conn.execute(stmt)
        except sqlite3.Error as e:
            raise KeyError_(f"cannot open the key table: {e}", source=self.path) from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> KeyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, name: str, namespaces: list[str] | tuple[str, ...]) -> str:
        """Make a key bound to ``namespaces``; returns the token (shown once, never stored)."""
        if not isinstance(name, str) or not _NAME.match(name):
            raise KeyError_("a key name is 1 to 64 characters of letters, digits, '_', '.', '-' "
                            f"starting with a letter or digit; got {name!r}"[:200], field="name")
        if not namespaces:
            raise KeyError_("a key needs at least one namespace", field="namespace")
        nss = sorted({check_namespace(n) for n in namespaces})
        key_id = secrets.token_hex(8)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        now = datetime.now(UTC).isoformat()
        try:
            self.conn.execute(
                "INSERT INTO api_keys(key_id, name, salt, digest, namespaces, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (key_id, name, salt, _digest(salt, secret), json.dumps(nss), now))
        except sqlite3.IntegrityError:
            raise KeyError_(f"a key named {name!r} already exists (revoke it first or pick "
                            "another name)", field="name") from None
        return f"{TOKEN_PREFIX}{key_id}.{secret}"

    def list(self) -> list[ApiKey]:
        rows = self.conn.execute("SELECT key_id, name, namespaces, created_at, revoked_at "
                                 "FROM api_keys ORDER BY created_at, name").fetchall()
        return [ApiKey(r[0], r[1], frozenset(json.loads(r[2])), r[3], r[4]) for r in rows]

    def revoke(self, name: str) -> None:
        cur = self.conn.execute(
            "UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
            (datetime.now(UTC).isoformat(), name))
        if cur.rowcount == 0:
            raise KeyError_(f"no active key named {name!r}", field="name")

    def verify(self, token: str | None) -> ApiKey | None:
        """The active key for ``token``, or None (malformed, unknown, wrong secret, revoked)."""
        if not token:
            return None
        m = _TOKEN.match(token)
        if m is None:
            return None
        row = self.conn.execute(
            "SELECT key_id, name, salt, digest, namespaces, created_at, revoked_at "
            "FROM api_keys WHERE key_id = ?", (m.group(1),)).fetchone()
        if row is None or row[6] is not None:
            return None
        if not hmac.compare_digest(_digest(row[2], m.group(2)), row[3]):
            return None
        return ApiKey(row[0], row[1], frozenset(json.loads(row[4])), row[5], None)


def keys_add(store: str | Path, name: str, namespaces: list[str]) -> str:
    """``analogist keys add``: make a key; returns the token."""
    from analogist.memory.sqlite import Memory

    Memory.open(store).close()          # create / migrate the store first
    with KeyStore(store) as ks:
        return ks.add(name, namespaces)


def keys_list(store: str | Path) -> list[dict[str, Any]]:
    """``analogist keys list``: every key (never a secret or a hash)."""
    with KeyStore(store) as ks:
        return [k.to_json() for k in ks.list()]


def keys_revoke(store: str | Path, name: str) -> None:
    """``analogist keys revoke``."""
    with KeyStore(store) as ks:
        ks.revoke(name)
