"""The application layer: the one place that builds the domain from settings.

Every face — the ``analogist`` command line (:mod:`analogist.cli`), the HTTP API
(:mod:`analogist.server`) and the MCP server (:mod:`analogist.mcp`) — and the Python API call
:class:`Analogist`. It builds the memory, the retriever, the judge, the critic, the parametric
channel, the embedder, the encoder, the foresight pool and the safeguard from one
:class:`Settings`, with one set of defaults and one set of limits (:data:`LIMITS`). The faces
parse, check their own transport's limits and render; they wire nothing of their own.

The common case, in three lines::

    from analogist import Analogist
    with Analogist.open("store.db") as memory:
        memory.add(text="A cache kept serving a stale copy after the source changed.")
        print(memory.find(text="The replica kept answering from an old snapshot.").render())

Settings are read in one place, :meth:`Settings.from_env`: the store path (``ANALOGIST_STORE``,
else ``$XDG_DATA_HOME/analogist/store.db``) and the environment handed to the LLM configuration
(:func:`analogist.llm.config.load_llm_config`, which also reads its config file).

Threads: one :class:`Analogist` may serve many threads (the HTTP API's pool, the MCP SDK's
workers). SQLite connections belong to the thread that opened them, so each thread gets its own
:class:`~analogist.memory.sqlite.Memory` and its own retriever per namespace; the embedder, the
encoder, the corpus, the foresight vector cache and the plain safeguard are shared.

The package, along the sections of :class:`Analogist`: this module holds the settings (the
store's location, the environment, :class:`Settings`) and the application's life cycle;
:mod:`~analogist.app.inputs` the request bounds and input formats;
:mod:`~analogist.app.components` the builders; :mod:`~analogist.app.episodes` signatures
and the memory; :mod:`~analogist.app.analogies` find, map and check;
:mod:`~analogist.app.foresight` foresight. Every name is imported from here.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analogist.app.analogies import Analogies, MapOutcome
from analogist.app.foresight import ForesightOps
from analogist.app.inputs import LIMITS, SCHEMAS, Limits, json_schema
from analogist.errors import AnalogistError
from analogist.llm.base import DEFAULT_WRITER, WRITERS
from analogist.memory import is_postgres_url
from analogist.memory.sqlite import Memory, _namespace
from analogist.params import bounded, check_bounds

if TYPE_CHECKING:
    from analogist.foresight.event import Corpus

__all__ = ["DEFAULT_WRITER", "LIMITS", "SCHEMAS", "WRITERS", "Analogist", "Limits",
           "MapOutcome", "Settings", "default_store_path", "env_store", "json_schema"]

"""The writer every face uses when none is asked for: the offline deterministic encoder."""


_MANGLED_URL = re.compile(r"^(postgres(?:ql)?):/(?!/)", re.I)


def store_location(store: str | Path) -> Path | str:
    """A store as the backends take it: a ``postgresql://`` URL stays a string (a URL that went
    through ``pathlib.Path`` — a CLI option — gets its ``//`` back), anything else is a path."""
    s = str(store)
    if is_postgres_url(s):
        return s
    if isinstance(store, Path) and _MANGLED_URL.match(s):
        return _MANGLED_URL.sub(r"\1://", s)
    return store


def env_store(env: Mapping[str, str] | None = None) -> Path | str | None:
    """``$ANALOGIST_STORE`` (a file path or a ``postgresql://`` URL), or None when it is unset."""
    env = os.environ if env is None else env
    if env.get("ANALOGIST_STORE"):
        return store_location(env["ANALOGIST_STORE"]) if is_postgres_url(
            env["ANALOGIST_STORE"]) else Path(env["ANALOGIST_STORE"])
    return None


def default_store_path(env: Mapping[str, str] | None = None) -> Path | str:
    """``$ANALOGIST_STORE`` (a file path or a ``postgresql://`` URL), else
    ``$XDG_DATA_HOME/analogist/store.db``, else ``~/.local/share/analogist/store.db``."""
    env = os.environ if env is None else env
    store = env_store(env)
    if store is not None:
        return store
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "analogist" / "store.db"


@dataclass(frozen=True)
class Settings:
    """Everything the application layer builds from, with the defaults every face shares.

    Attributes:
        store: the SQLite store file (created when missing); ``":memory:"`` for a private,
            single-thread store; or a ``postgresql://user@host:port/db`` URL (the ``postgres``
            extra).
        namespace: the namespace calls use when they name none.
        embeddings: use the offline text embedder as a MAC channel (when the namespace has
            level embeddings) and store each added episode's L1–L3 embeddings.
        llm: ask the configured LLM (if any) for the critic, the parametric channel, the
            safeguard and foresight's parametric candidates; without one those steps are
            reported as skipped. Off, they are skipped without asking.
        critic: ``find`` asks the independent critic about every analogue that would transfer.
        parametric: ``find`` also asks the LLM for analogues from its own knowledge (labelled
            parametric, judged, reported apart).
        log_finds: ``find`` appends its attempt to the namespace's analogy log.
        k: analogues ``find`` reports when the call gives no ``k``.
        writer: the writer of ``encode``/``add(text=...)`` when the call names none.
        foresight_rounds, foresight_per_round, foresight_carryover: Algorithm 1's R, K and M
            (seed 001) when a call gives none.
        env: the environment the LLM configuration is read from (None: ``os.environ``).
    """

    store: Path | str = ":memory:"
    namespace: str = "default"
    embeddings: bool = True
    llm: bool = True
    critic: bool = True
    parametric: bool = False
    log_finds: bool = True
    k: int = bounded(5, lo=LIMITS.k[0], hi=LIMITS.k[1], integer=True)
    writer: str = DEFAULT_WRITER
    foresight_rounds: int = bounded(3, lo=LIMITS.rounds[0], hi=LIMITS.rounds[1], integer=True)
    foresight_per_round: int = bounded(8, lo=LIMITS.per_round[0], hi=LIMITS.per_round[1],
                                       integer=True)
    foresight_carryover: int = bounded(8, lo=LIMITS.carryover[0], hi=LIMITS.carryover[1],
                                       integer=True)
    env: Mapping[str, str] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "store", store_location(self.store))
        _namespace(self.namespace)
        check_bounds(self)
        if self.writer not in WRITERS:
            raise AnalogistError(f"writer must be one of {', '.join(WRITERS)}, got "
                                 f"{self.writer!r}", field="writer")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from the environment (the one place it is read), then ``overrides``; an
        override of None means "not given"."""
        env = dict(os.environ if env is None else env)
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = set(given) - {f.name for f in fields(cls)}
        if unknown:
            raise AnalogistError(f"unknown setting(s) {', '.join(sorted(unknown))}",
                                 field=sorted(unknown)[0])
        given.setdefault("store", default_store_path(env))
        return cls(**given, env=env)


class Analogist(Analogies, ForesightOps):
    """The analogical memory and everything around it, built from one :class:`Settings`."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._lock = threading.RLock()
        self._local = threading.local()
        self._opened: list[Memory] = []
        self._embedder: Any = None
        self._encoder: Any = None
        self._corpus: Corpus | None = None
        self._vectors: dict[str, Any] = {}

    @classmethod
    def open(cls, store: str | Path | None = None, **settings: Any) -> Analogist:
        """An application over ``store`` (default: :func:`default_store_path`); ``settings``
        are :class:`Settings` fields. The store is created or migrated now, so its errors
        surface here."""
        app = cls(Settings.from_env(store=store, **settings))
        app.memory()
        return app

    def __enter__(self) -> Analogist:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every connection this application opened."""
        with self._lock:
            for m in self._opened:
                # a connection made in another thread may refuse to close here; the OS frees it
                with contextlib.suppress(Exception):
                    m.close()
            self._opened.clear()
            self._local = threading.local()
