"""API keys for the HTTP service, stored hashed in the store's own SQLite file.

A key is shown once, when it is made: ``ak_<key id>.<secret>`` (the key id is public and picks
the row; the secret is 32 random bytes, URL-safe base64). At rest only an HMAC-SHA256 of the
secret under a per-key random salt is kept, compared in constant time. Each key is bound to one
or more namespaces; the server refuses (403) any request naming another namespace.

The keys live in the store's ``api_keys`` table, which the memory owns
(:meth:`~analogist.memory.sqlite.Memory.add_api_key` and its neighbours); this module knows the
token format, the hashing and the namespace rules.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError
from analogist.memory import open_memory
from analogist.memory.sqlite import Memory, StoreError

__all__ = ["ADMIN_SCOPE", "ApiKey", "KeyError_", "KeyStore", "TOKEN_PREFIX"]

TOKEN_PREFIX = "ak_"
ADMIN_SCOPE = "@admin"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
_TOKEN = re.compile(r"^ak_([0-9a-f]{16})\.([A-Za-z0-9_\-]{20,100})$")

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
    admin: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "key_id": self.key_id, "namespaces": sorted(self.namespaces),
                "admin": self.admin, "created_at": self.created_at,
                "revoked": self.revoked_at is not None, "revoked_at": self.revoked_at}

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ApiKey:
        nss = frozenset(row["namespaces"])
        return cls(row["key_id"], row["name"], nss - {ADMIN_SCOPE}, row["created_at"],
                   row["revoked_at"], ADMIN_SCOPE in nss)


def check_namespace(ns: Any, field: str = "namespace") -> str:
    if not isinstance(ns, str) or not _NAMESPACE.match(ns):
        raise KeyError_("a namespace is 1 to 100 characters of letters, digits, '_', '.', '-' "
                        f"starting with a letter or digit; got {ns!r}"[:200], field=field)
    return ns


def _check_new(name: Any, namespaces: Any, admin: Any) -> list[str]:
    """The stored namespace list of a new key, or the error naming what is wrong with it."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise KeyError_("a key name is 1 to 64 characters of letters, digits, '_', '.', '-' "
                        f"starting with a letter or digit; got {name!r}"[:200], field="name")
    if not isinstance(admin, bool):
        raise KeyError_("admin must be true or false", field="admin")
    if not namespaces and not admin:
        raise KeyError_("a key needs at least one namespace", field="namespace")
    nss = sorted({check_namespace(n) for n in namespaces or ()})
    return [*nss, ADMIN_SCOPE] if admin else nss


def _digest(salt: bytes, secret: str) -> bytes:
    return hmac.new(salt, secret.encode("ascii"), hashlib.sha256).digest()


class KeyStore:
    """The API keys of one store, through the memory's key methods. One instance per thread
    (SQLite connections belong to the thread that opened them)."""

    def __init__(self, store: str | Path | Memory) -> None:
        if isinstance(store, Memory):
            self.memory, self._owned = store, False
        else:
            self.memory, self._owned = open_memory(store), True
        self.path = self.memory.path
        self.conn = self.memory.conn
        self.memory.ensure_service_tables()

    def close(self) -> None:
        if self._owned:
            self.memory.close()

    def __enter__(self) -> KeyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, name: str, namespaces: list[str] | tuple[str, ...], *,
            admin: bool = False) -> str:
        """Make a key bound to ``namespaces`` (none is allowed for an ``admin`` key, which reads
        every namespace's metrics); returns the token (shown once, never stored)."""
        nss = _check_new(name, namespaces, admin)
        key_id = secrets.token_hex(8)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        try:
            self.memory.add_api_key(key_id=key_id, name=name, salt=salt,
                                    digest=_digest(salt, secret), namespaces=nss)
        except StoreError as e:
            raise KeyError_(e.message, field=e.field) from None
        return f"{TOKEN_PREFIX}{key_id}.{secret}"

    def list(self) -> list[ApiKey]:
        return [ApiKey.from_row(r) for r in self.memory.api_keys()]

    def revoke(self, name: str) -> None:
        if not self.memory.revoke_api_key(name):
            raise KeyError_(f"no active key named {name!r}", field="name")

    def verify(self, token: str | None) -> ApiKey | None:
        """The active key for ``token``, or None (malformed, unknown, wrong secret, revoked)."""
        if not token:
            return None
        m = _TOKEN.match(token)
        if m is None:
            return None
        row = self.memory.api_key(m.group(1))
        if row is None or row["revoked_at"] is not None:
            return None
        if not hmac.compare_digest(_digest(row["salt"], m.group(2)), row["digest"]):
            return None
        return ApiKey.from_row(row)

    def active(self, key_id: str) -> ApiKey | None:
        """The key ``key_id`` as it stands now (None when unknown or revoked): what a signed-in
        session re-reads on every request, so a revoked key ends its sessions."""
        row = self.memory.api_key(key_id) if isinstance(key_id, str) else None
        if row is None or row["revoked_at"] is not None:
            return None
        return ApiKey.from_row(row)


def keys_add(store: str | Path, name: str, namespaces: list[str], *, admin: bool = False
             ) -> str:
    """``analogist keys add``: make a key; returns the token. The name and namespaces are
    checked before the store is opened, so a refused key leaves the store untouched."""
    _check_new(name, namespaces, admin)
    with KeyStore(store) as ks:
        return ks.add(name, namespaces, admin=admin)


def keys_list(store: str | Path) -> list[dict[str, Any]]:
    """``analogist keys list``: every key (never a secret or a hash)."""
    with KeyStore(store) as ks:
        return [k.to_json() for k in ks.list()]


def keys_revoke(store: str | Path, name: str) -> None:
    """``analogist keys revoke``."""
    with KeyStore(store) as ks:
        ks.revoke(name)
