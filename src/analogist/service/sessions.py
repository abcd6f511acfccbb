"""Browser sessions for the viewer: signing in with an API key once, then a cookie.

A person signs in on the viewer's page with an API key; the server answers with a session
cookie and the page never holds the key again. The server keeps its sessions in the store's
``api_sessions`` table (:mod:`analogist.memory.service_state`), so that every worker process of
``serve --workers N`` knows every session and a sign-out through one ends it on all; without a
store (``":memory:"``, or a table built for one process) they are kept in the process. The
cookie carries only a random session id (32 bytes), and the table keeps its SHA-256, the key's
id, the namespaces the key had at sign-in, a CSRF token and the expiry.

Binding to the key: every request through a session re-reads the key (:meth:`KeyStore.active
<analogist.service.keys.KeyStore.active>`), so a revoked key ends its sessions at once, and the
namespaces a session reaches are those it signed in with *and* the key still has.

Cookie: ``HttpOnly`` (no script reads it), ``SameSite=Strict`` (a request another site starts
carries no cookie at all — the viewer is opened by typing or bookmarking its address, so Lax's
top-level-link allowance buys nothing), ``Path=/viewer`` (the ``/v1`` API never sees it; it
authenticates by header only), ``Secure`` when the request came over HTTPS, and ``Max-Age`` the
session's remaining life.

CSRF: the only state-changing requests a session cookie can make are signing in and out. Both
are refused unless the request is same-origin (``Origin``, else ``Sec-Fetch-Site``, must not
name another site); sign-in takes only a JSON body (a cross-site form cannot send one without a
CORS preflight, which this server never grants) and sign-out needs the session's CSRF token in
the ``X-CSRF-Token`` header (the page reads it from ``GET /viewer/session``, which another
site's script cannot). Everything else the viewer does is a read (GET).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = ["COOKIE", "CSRF_HEADER", "DEFAULT_TTL", "Session", "Sessions", "same_origin"]

COOKIE = "analogist_session"
CSRF_HEADER = "x-csrf-token"
DEFAULT_TTL = 8 * 3600
"""A session's life in seconds (absolute, from sign-in)."""


@dataclass(frozen=True, slots=True)
class Session:
    """One signed-in browser session (never the API key itself)."""

    key_id: str
    name: str
    namespaces: frozenset[str]
    csrf: str
    expires: float

    def to_json(self, namespaces: Collection[str]) -> dict[str, Any]:
        return {"signed_in": True, "name": self.name, "namespaces": sorted(namespaces),
                "csrf_token": self.csrf,
                "expires_at": datetime.fromtimestamp(self.expires, UTC).isoformat()}


def _digest(sid: str) -> str:
    return hashlib.sha256(sid.encode("utf-8", "replace")).hexdigest()


class Sessions:
    """The server's session table (thread-safe; at most ``max_sessions``, the oldest dropped
    first). With ``store`` (a function returning this thread's connection to the store) the
    table is the store's, shared by every process serving it; without, this process's."""

    def __init__(self, ttl: float = DEFAULT_TTL, max_sessions: int = 10_000,
                 clock: Callable[[], float] = time.time,
                 store: Callable[[], Any] | None = None) -> None:
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl <= 0:
            raise ValueError("ttl must be a positive number of seconds")
        self.ttl = float(ttl)
        self.max_sessions = max_sessions
        self.clock = clock
        self.store = store
        self._by_digest: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, key_id: str, name: str, namespaces: Collection[str]) -> tuple[str, Session]:
        """A new session for a verified key: (the cookie value, the session)."""
        sid = secrets.token_urlsafe(32)
        s = Session(key_id, name, frozenset(namespaces), secrets.token_urlsafe(32),
                    self.clock() + self.ttl)
        if self.store is not None:
            self.store().add_session(digest=_digest(sid), key_id=s.key_id, name=s.name,
                                     namespaces=s.namespaces, csrf=s.csrf, expires=s.expires,
                                     keep=self.max_sessions)
            return sid, s
        with self._lock:
            self._by_digest[_digest(sid)] = s
            while len(self._by_digest) > self.max_sessions:
                self._by_digest.popitem(last=False)
        return sid, s

    def get(self, sid: str | None) -> Session | None:
        """The live session of cookie value ``sid`` (None: absent, unknown or expired)."""
        if not sid or len(sid) > 200:
            return None
        d = _digest(sid)
        if self.store is not None:
            row = self.store().session(d, now=self.clock())
            if row is None:
                return None
            return Session(row["key_id"], row["name"], frozenset(row["namespaces"]),
                           row["csrf"], float(row["expires"]))
        with self._lock:
            s = self._by_digest.get(d)
            if s is not None and s.expires <= self.clock():
                del self._by_digest[d]
                return None
            return s

    def end(self, sid: str | None) -> bool:
        """Sign a session out; False when there was none."""
        if not sid:
            return False
        if self.store is not None:
            return bool(self.store().end_session(_digest(sid)))
        with self._lock:
            return self._by_digest.pop(_digest(sid), None) is not None

    def end_key(self, key_id: str) -> int:
        """End every session of one key (its revocation); returns how many."""
        if self.store is not None:
            return int(self.store().end_key_sessions(key_id))
        with self._lock:
            gone = [d for d, s in self._by_digest.items() if s.key_id == key_id]
            for d in gone:
                del self._by_digest[d]
        return len(gone)

    def check_csrf(self, session: Session, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(session.csrf.encode(),
                                                   str(token).encode("utf-8", "replace"))

    def __len__(self) -> int:
        if self.store is not None:
            return int(self.store().session_count(now=self.clock()))
        with self._lock:
            return len(self._by_digest)


def same_origin(headers: Any, scheme: str, host: str | None) -> bool:
    """Whether a request comes from this server's own pages: its ``Origin`` names this scheme
    and host; without ``Origin``, ``Sec-Fetch-Site`` (when sent) says same-origin or none."""
    origin = headers.get("origin")
    if origin is not None:
        return bool(host) and origin.lower() == f"{scheme}://{host}".lower()
    site = headers.get("sec-fetch-site")
    return site is None or site in ("same-origin", "none")
