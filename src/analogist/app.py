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
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from analogist.errors import AnalogistError
from analogist.judge import AnalogyReport, JudgeParams, judge_mapping
from analogist.llm.base import DEFAULT_WRITER, NO_LLM_REASON, WRITERS
from analogist.memory import is_postgres_url, open_memory
from analogist.memory.sqlite import Memory, StoredEpisode, _namespace
from analogist.params import bounded, check_bounds
from analogist.retrieve import FindResult, RetrieveParams, Retriever, level_embeddings
from analogist.signature import (
    Signature,
    compile_signature,
    signature_json_schema,
    validate_signature,
)
from analogist.sme import MatchResult, match
from analogist.triggers import record_outcome

if TYPE_CHECKING:
    from analogist.encode.base import EncodeResult
    from analogist.foresight.event import Corpus, Event
    from analogist.foresight.loop import ForesightParams, ForesightResult
    from analogist.safeguard import Safeguard, SafeguardReport, Turn

__all__ = ["DEFAULT_WRITER", "LIMITS", "SCHEMAS", "WRITERS", "Analogist", "Limits",
           "MapOutcome", "Settings", "default_store_path", "env_store", "json_schema"]

"""The writer every face uses when none is asked for: the offline deterministic encoder."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds every face enforces on a request (one set for the CLI, HTTP and MCP)."""

    k: tuple[int, int] = (1, 50)
    rounds: tuple[int, int] = (0, 10)
    per_round: tuple[int, int] = (1, 20)
    carryover: tuple[int, int] = (0, 20)
    text_chars: int = 200_000

    def check(self, name: str, value: int | None) -> int | None:
        """``value`` when it is within the bound named ``name`` (None passes), else an error
        naming the field."""
        if value is None:
            return None
        lo, hi = getattr(self, name)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise AnalogistError(f"{name} must be an integer between {lo} and {hi}, got "
                                 f"{value!r}", field=name)
        return value

    def text(self, text: Any, field: str) -> str:
        """Non-empty text within :attr:`text_chars`."""
        if not isinstance(text, str) or not text.strip():
            raise AnalogistError("expected non-empty text", field=field)
        if len(text) > self.text_chars:
            raise AnalogistError(f"text of {len(text)} characters is over the limit of "
                                 f"{self.text_chars}", field=field)
        return text


LIMITS = Limits()


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


SCHEMAS: tuple[str, ...] = ("signature", "event", "turn")
"""The input formats :func:`json_schema` describes (``analogist schema NAME``)."""


def json_schema(name: str = "signature") -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one input format every face accepts: ``signature``
    (an episode's structural signature), ``event`` (a foresight event) or ``turn`` (a debate
    turn for the analogy check). ``analogist schema``, the MCP tools and the HTTP API's
    OpenAPI document all describe their arguments with these."""
    if name == "signature":
        return signature_json_schema()
    if name == "event":
        from analogist.foresight.event import Event  # foresight, loaded on use

        schema = Event.model_json_schema(mode="validation")
    elif name == "turn":
        from analogist.safeguard.turn import Turn  # the safeguard, loaded on use

        schema = Turn.model_json_schema(mode="validation")
        schema["additionalProperties"] = False      # an unknown top-level key is refused
    else:
        raise AnalogistError(f"unknown schema {name!r}; expected one of {', '.join(SCHEMAS)}",
                             field="schema")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


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


@dataclass(frozen=True, slots=True)
class MapOutcome:
    """Two cases mapped with SME and judged: the judge's report and SME's match result."""

    report: AnalogyReport
    result: MatchResult

    def to_json(self) -> dict[str, Any]:
        best = self.result.best
        return {"report": self.report.to_json(), "rendered": self.report.render(),
                "mapping": None if best is None else best.to_json(),
                "mappings": len(self.result.mappings)}


class Analogist:
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

    # -- components ------------------------------------------------------------------------
    def memory(self) -> Memory:
        """This thread's connection to the store."""
        m = getattr(self._local, "memory", None)
        if m is None:
            store = str(self.settings.store)
            if store != ":memory:" and not is_postgres_url(store) and not Path(store).is_dir():
                Path(store).parent.mkdir(parents=True, exist_ok=True)
            m = open_memory(store)
            self._local.memory = m
            self._local.retrievers = {}
            with self._lock:
                self._opened.append(m)
        return m

    def namespace(self, namespace: str | None) -> str:
        return self.settings.namespace if namespace is None else _namespace(namespace)

    def retriever(self, namespace: str | None = None) -> Retriever:
        """This thread's retriever over ``namespace`` (its caches live as long as the app)."""
        ns = self.namespace(namespace)
        mem = self.memory()
        r = self._local.retrievers.get(ns)
        if r is None:
            r = Retriever(mem, ns, params=RetrieveParams(k=self.settings.k),
                          embedder="auto" if self.settings.embeddings else None,
                          log=self.settings.log_finds)
            self._local.retrievers[ns] = r
        return r

    def embedder(self) -> Any:
        """The offline text embedder (shared), or None when embeddings are off."""
        if not self.settings.embeddings:
            return None
        with self._lock:
            if self._embedder is None:
                # the embedder's model code and tokenizers load only when embeddings are wanted
                from analogist.index.embed import default_embedder

                self._embedder = default_embedder()
            return self._embedder

    def provider(self, role: str, notes: list[str] | None = None, what: str | None = None
                 ) -> Any:
        """The configured LLM provider for ``role``, or None; when None and ``notes`` is given,
        one line saying why is appended (``what: reason``)."""
        if not self.settings.llm:
            if notes is not None:
                notes.append(f"{what or role}: the LLM is off")
            return None
        # the LLM configuration (tomllib, the config file) loads only when an LLM step is asked for
        from analogist.llm.config import load_llm_config

        config = load_llm_config(role, env=self.settings.env)
        if config is None:
            if notes is not None:
                notes.append(f"{what or role}: {NO_LLM_REASON}")
            return None
        # the HTTP client (httpx) and the local back-end load only when an LLM is configured
        from analogist.llm.client import make_provider

        return make_provider(config)

    def writer(self, writer: str | None = None) -> Any:
        """The episode writer: the shared deterministic encoder, or an LLM writer."""
        name = self.settings.writer if writer is None else writer
        if name == "deterministic":
            # spaCy and the lexicons load only for commands that write signatures
            from analogist.encode.deterministic import DeterministicEncoder

            with self._lock:
                if self._encoder is None:
                    emb = self.embedder()
                    self._encoder = DeterministicEncoder(embedder="auto" if emb is None else emb)
                return self._encoder
        if name == "llm":
            if not self.settings.llm:
                raise AnalogistError("writer llm: the LLM is off", field="writer")
            prov = self.provider("writer")
            if prov is None:
                raise AnalogistError("writer llm: " + NO_LLM_REASON, field="writer")
            from analogist.encode.llm_writer import LLMWriter  # the LLM path, loaded on use

            return LLMWriter(prov)
        raise AnalogistError(f"writer must be one of {', '.join(WRITERS)}, got {name!r}",
                             field="writer")

    def corpus(self) -> Corpus:
        """The bundled historical corpus (loaded once)."""
        with self._lock:
            if self._corpus is None:
                from analogist.foresight.event import load_corpus  # foresight, loaded on use

                self._corpus = load_corpus()
            return self._corpus

    def safeguard(self) -> Safeguard:
        """The analogy safeguard, with the LLM (role ``safeguard``) when one is configured."""
        # the safeguard's concept lexicons and spaCy load only for checks
        from analogist.safeguard import Safeguard

        prov = self.provider("safeguard")
        if prov is not None:
            return Safeguard(prov)
        sg = getattr(self._local, "safeguard", None)
        if sg is None:     # one per thread, so that checks run at once without sharing state
            sg = self._local.safeguard = Safeguard()
        return sg

    def level_embedder(self) -> Callable[[Signature], Any] | None:
        """``signature -> {level: vector}`` for storing, or None when embeddings are off."""
        emb = self.embedder()
        if emb is None:
            return None
        return lambda sig: level_embeddings(sig, emb)

    # -- signatures --------------------------------------------------------------------------
    def signature(self, value: Signature | Mapping[str, Any] | int | str, *,
                  namespace: str | None = None, field: str = "signature") -> Signature:
        """A Signature from an object, or from a stored episode (row id or episode id) of
        ``namespace``."""
        if isinstance(value, Signature):
            return value
        if isinstance(value, Mapping):
            return validate_signature(dict(value), source=field)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return self.episode(value, namespace=namespace, field=field).signature
        raise AnalogistError("expected a Signature object or an episode id", field=field)

    def encode(self, text: str, *, writer: str | None = None, episode_id: str | None = None,
               domain: str | None = None, source: str = "<text>") -> EncodeResult:
        """Write a Signature for one episode text (seen alone)."""
        return self.writer(writer).encode(text, episode_id=episode_id, domain=domain,
                                          source=source)

    # -- the memory --------------------------------------------------------------------------
    def add(self, signature: Signature | Mapping[str, Any] | None = None, *,
            text: str | None = None, event: Event | Mapping[str, Any] | None = None,
            episode_id: str | None = None, domain: str | None = None,
            namespace: str | None = None, writer: str | None = None) -> StoredEpisode:
        """Store one episode — a Signature, an episode text (encoded first) or a foresight
        Event (as its kind-``event`` Signature) — with its level embeddings when embeddings are
        on. Returns the stored row; refused, with nothing written, when the episode id exists.
        """
        given = [n for n, v in (("signature", signature), ("text", text), ("event", event))
                 if v is not None]
        if len(given) != 1:
            raise AnalogistError("give exactly one of signature, text, event (got "
                                 f"{', '.join(given) or 'none'})", field="signature")
        if signature is not None:
            data = signature if isinstance(signature, Signature) else dict(signature)
            if episode_id is not None:
                data = (data.model_copy(update={"episode_id": episode_id})
                        if isinstance(data, Signature) else {**data, "episode_id": episode_id})
            sig = self.signature(data)
        elif text is not None:
            sig = self.encode(text, writer=writer, episode_id=episode_id, domain=domain,
                              source="text").signature
        else:
            from analogist.foresight.event import Event, validate_event  # foresight, on use

            ev = event if isinstance(event, Event) else validate_event(dict(event),  # type: ignore[arg-type]
                                                                       source="event")
            sig = ev.to_signature()
        embed = self.level_embedder()
        ns = self.namespace(namespace)
        m = self.memory()
        sid = m.add(sig, namespace=ns, embeddings=None if embed is None else embed(sig))
        row = m.get(sid, ns)
        assert row is not None
        return row

    def episodes(self, namespace: str | None = None, *, include_superseded: bool = False,
                 limit: int | None = None, offset: int = 0) -> list[StoredEpisode]:
        """The stored episodes of ``namespace`` in id order (a page of them with ``limit`` /
        ``offset``)."""
        return self.memory().list(self.namespace(namespace),
                                  include_superseded=include_superseded, limit=limit,
                                  offset=offset)

    def delete(self, episode: int | str, *, namespace: str | None = None) -> StoredEpisode:
        """Delete one stored episode (row id or episode id; a string of digits is tried as an
        episode id, then as a row id). Returns the deleted row; an error naming ``episode``
        when ``namespace`` has no such episode (nothing is deleted)."""
        ns = self.namespace(namespace)
        m = self.memory()
        row = self.episode(episode, namespace=ns)
        m.delete(row.id, ns)
        return row

    def episode(self, value: int | str, *, namespace: str | None = None,
                field: str = "episode") -> StoredEpisode:
        """The stored episode with this episode id or row id (a string of digits is tried as an
        episode id, then as a row id), else an error naming ``field``."""
        ns = self.namespace(namespace)
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise AnalogistError("expected an episode id (text) or a row id (integer)",
                                 field=field)
        if isinstance(value, int) and not 0 <= value < 2 ** 63:
            raise AnalogistError(f"no episode {value} in namespace {ns!r}"[:300], field=field)
        m = self.memory()
        row = m.get(value, ns)
        if row is None and isinstance(value, str) and value.isdigit() and len(value) < 19:
            row = m.get(int(value), ns)
        if row is None:
            raise AnalogistError(f"no episode {value!r} in namespace {ns!r}"[:300], field=field)
        return row

    def record_outcome(self, log_id: int | None = None, *, helped: bool | None = None,
                       negative: bool = False, used: str | None = None,
                       note: str | None = None, result: float | None = None,
                       counterfactual: float | None = None, higher_is_better: bool = True,
                       item: str | None = None, action: str | None = None,
                       namespace: str | None = None) -> dict[str, Any]:
        """Close the loop: record what the analogy attempt ``log_id`` (a ``find``'s
        ``FindResult.log_id``, or a recorded trigger firing) led to — ``helped`` True or False,
        or ``negative=True`` for a negative transfer — so that ``triggers fit`` and ``ledger``
        have data. ``used`` names the analogue acted on (required without ``log_id``: an
        analogy used outside ``find`` gets its own log entry); ``result`` with
        ``counterfactual`` (the no-analogy result on the same item) also writes a ledger entry.
        One transaction; nothing is written when any value is bad. Returns ``{"id", "log_id",
        "ledger", "outcome", "verdict"}`` (see :func:`analogist.triggers.record_outcome`)."""
        return record_outcome(self.memory(), log_id, helped=helped, negative=negative,
                              used=used, note=note, result=result,
                              counterfactual=counterfactual, higher_is_better=higher_is_better,
                              item=item, action=action, namespace=self.namespace(namespace))

    def add_many(self, signatures: Iterable[Signature | Mapping[str, Any]], *,
                 namespace: str | None = None, batch_size: int = 500,
                 progress: Callable[[int], None] | None = None) -> list[int]:
        """Store many episodes, one transaction per batch (a bad record rejects its batch)."""
        return self.memory().add_many(signatures, namespace=self.namespace(namespace),
                                      batch_size=batch_size, progress=progress,
                                      embed=self.level_embedder())

    # -- find, map ---------------------------------------------------------------------------
    def find(self, target: Signature | Mapping[str, Any] | int | str | None = None, *,
             text: str | None = None, namespace: str | None = None, k: int | None = None,
             critic: bool | None = None, parametric: bool | None = None,
             writer: str | None = None) -> FindResult:
        """Have I seen this shape before? MAC/FAC retrieval plus the judge over ``namespace``,
        with the critic and the parametric channel as :class:`Settings` (or the call) say.

        ``target`` is a Signature, its data, or a stored episode's id; ``text`` an episode text
        written by ``writer`` first. Steps skipped for want of an LLM are listed in
        ``FindResult.skipped``.
        """
        if (target is None) == (text is None):
            raise AnalogistError("give exactly one of target and text", field="target")
        LIMITS.check("k", k)
        if text is not None:
            sig = self.encode(text, writer=writer, source="text").signature
        else:
            sig = self.signature(target, namespace=namespace, field="target")  # type: ignore[arg-type]
        s = self.settings
        notes: list[str] = []
        critic_obj = None
        if s.critic if critic is None else critic:
            cp = self.provider("critic", notes, "critic")
            if cp is not None:
                from analogist.critic import Critic  # the LLM path (prompts, schemas), on use

                critic_obj = Critic(cp)
        par_fn = None
        if s.parametric if parametric is None else parametric:
            pp = self.provider("parametric", notes, "parametric channel")
            if pp is not None:
                from analogist.parametric import propose_parametric  # the LLM path, on use

                def par_fn(t: Signature) -> Any:
                    return propose_parametric(t, pp, k=3)
        res = self.retriever(namespace).find(sig, k=k, critic=critic_obj, parametric=par_fn)
        if notes:
            res = replace(res, skipped=(*res.skipped, *notes))
        return res

    def map(self, source: Signature | Mapping[str, Any] | int | str,
            target: Signature | Mapping[str, Any] | int | str, *,
            namespace: str | None = None, params: JudgeParams | None = None) -> MapOutcome:
        """Map ``source`` onto ``target`` with SME and judge the best mapping (likeness /
        difference / unknown, candidate inferences and their transfer status, blockers,
        prediction)."""
        s = self.signature(source, namespace=namespace, field="source")
        t = self.signature(target, namespace=namespace, field="target")
        params = params or JudgeParams()
        sd, td = compile_signature(s), compile_signature(t)
        result = match(sd, td, params.sme)
        return MapOutcome(judge_mapping(s, t, sd, td, result, params=params), result)

    # -- foresight ---------------------------------------------------------------------------
    def namespace_events(self, namespace: str | None = None) -> list[Event]:
        """The foresight Events stored (as kind-``event`` episodes) in ``namespace``."""
        from analogist.foresight.event import event_from_signature  # foresight, on use

        out = []
        for row in self.memory().list(self.namespace(namespace)):
            ev = event_from_signature(row.signature)
            if ev is not None:
                out.append(ev)
        return out

    def resolve_event(self, target: Event | Mapping[str, Any] | str, *,
                      corpus: Corpus | None = None, namespace: str | None = None,
                      use_store: bool = True, files_too: bool = False) -> Event:
        """An Event from an object, or the id, name or alias of a corpus event or of an event
        episode of ``namespace`` (a single close match of the corpus is taken)."""
        from analogist.foresight.event import Event, validate_event  # foresight, on use

        if isinstance(target, Event):
            return target
        if isinstance(target, Mapping):
            return validate_event(dict(target), source="target")
        if not isinstance(target, str) or not target.strip():
            raise AnalogistError("expected an Event object or an event id", field="target")
        corpus = corpus or self.corpus()
        ev = corpus.lookup(target)
        if ev is None and use_store:
            ev = next((e for e in self.namespace_events(namespace) if e.event_id == target),
                      None)
        if ev is not None:
            return ev
        close = corpus.search(target)
        if len(close) == 1:
            return close[0]
        hint = (" — did you mean " + ", ".join(f"{e.event_id} ({e.name})" for e in close) + "?"
                if close else " (see 'analogist foresight events')")
        what = ("an event file nor the id, name or alias of an event in the corpus" if files_too
                else "an event of the corpus (its id, name or alias)")
        where = " nor an event episode of the namespace" if use_store else ""
        raise AnalogistError(f"{target!r} is neither {what}{where}{hint}",
                             field="target")

    def foresight_params(self, *, rounds: int | None = None, per_round: int | None = None,
                         carryover: int | None = None, calibration: str = "bundled",
                         pi: float | None = None, q: float | None = None, p: float | None = None,
                         delta: float = 0.05, min_fidelity: float = 0.05) -> ForesightParams:
        """Algorithm 1's settings within :data:`LIMITS`: the bundled calibration unless π, q or
        p is given or ``calibration`` says otherwise (``none`` or a calibration JSON file)."""
        # foresight, loaded on use
        from analogist.foresight.calibration import bundled_calibration, load_calibration
        from analogist.foresight.confirm import ConfirmParams
        from analogist.foresight.loop import ForesightParams

        s = self.settings
        rounds = LIMITS.check("rounds", rounds) if rounds is not None else s.foresight_rounds
        per_round = (LIMITS.check("per_round", per_round) if per_round is not None
                     else s.foresight_per_round)
        carryover = (LIMITS.check("carryover", carryover) if carryover is not None
                     else s.foresight_carryover)
        homogeneous = any(x is not None for x in (pi, q, p))
        if homogeneous and calibration not in ("bundled", "none"):
            raise AnalogistError("give either --calibration FILE or --pi/--q/--p, not both",
                                 field="calibration")
        cal = None
        if not homogeneous and calibration == "bundled":
            cal = bundled_calibration("cana")
        elif not homogeneous and calibration != "none":
            cal = load_calibration(Path(calibration), "cana")
        confirm = ConfirmParams(pi=0.5 if pi is None else pi, q=0.9 if q is None else q,
                                p=0.2 if p is None else p, delta=delta)
        return ForesightParams(rounds=rounds, per_round=per_round, carryover=carryover,
                               min_fidelity=min_fidelity, confirm=confirm, calibration=cal)

    def foresight_pool(self, target: Event, *, corpus: Corpus | None = None,
                       namespace: str | None = None, use_store: bool = True) -> list[Event]:
        """The candidates: the corpus's events and ``namespace``'s event episodes (when
        ``use_store``), the target left out, each event id once."""
        corpus = corpus or self.corpus()
        pool = [e for e in corpus.events if e.event_id != target.event_id]
        if use_store:
            seen = {e.event_id for e in pool} | {target.event_id}
            for ev in self.namespace_events(namespace):
                if ev.event_id not in seen:
                    pool.append(ev)
                    seen.add(ev.event_id)
        return pool

    def foresight(self, target: Event | Mapping[str, Any] | str, *, cutoff: str | None = None,
                  namespace: str | None = None, params: ForesightParams | None = None,
                  rounds: int | None = None, per_round: int | None = None,
                  carryover: int | None = None, corpus: Corpus | None = None,
                  use_store: bool = True, embedding: bool | None = None,
                  llm: bool | None = None,
                  progress: Callable[[int, int], None] | None = None
                  ) -> tuple[ForesightResult, int]:
        """Foresight for ``target`` (Algorithm 1 of seed 001): historical analogies by
        mechanism from ``corpus`` (default: the bundled one) and the namespace's event
        episodes, hidden factors confirmed across independent analogies. The LLM's own
        candidates are asked for when ``llm`` (default: :attr:`Settings.llm`) and one is
        configured. Returns the result and the size of the pool."""
        from analogist.foresight.loop import run_foresight  # foresight, loaded on use

        corpus = corpus or self.corpus()
        ev = self.resolve_event(target, corpus=corpus, namespace=namespace, use_store=use_store)
        if params is None:
            params = self.foresight_params(rounds=rounds, per_round=per_round,
                                           carryover=carryover)
        pool = self.foresight_pool(ev, corpus=corpus, namespace=namespace, use_store=use_store)
        notes: list[str] = []
        gen = None
        if self.settings.llm if llm is None else llm:
            prov = self.provider("parametric", notes, "parametric candidates")
            if prov is not None:
                from analogist.foresight.llm import ParametricGenerator  # the LLM path

                gen = ParametricGenerator(prov, corpus=corpus)
        else:
            notes.append("parametric candidates: the LLM is off")
        use_emb = self.settings.embeddings if embedding is None else embedding
        res = run_foresight(ev.at_cutoff(cutoff), pool, params=params, corpus=corpus,
                            generate=gen, progress=progress,
                            embedder=self.embedder() if use_emb else None,
                            vectors=self._vectors if corpus is self._corpus else None)
        if notes:
            res = replace(res, skipped=(*res.skipped, *notes))
        return res, len(pool)

    def brief(self, target: Event | Mapping[str, Any] | str, **kw: Any) -> dict[str, Any]:
        """:meth:`foresight`'s Structural Analogy Brief as JSON-able data (``skipped``
        included)."""
        from analogist.foresight.brief import brief_data  # foresight, loaded on use

        res, n = self.foresight(target, **kw)
        return {"pool_size": n, **brief_data(res), "skipped": list(res.skipped)}

    # -- the safeguard -----------------------------------------------------------------------
    def check(self, turn: Turn | Mapping[str, Any] | str, *,
              mode: Literal["strict", "advisory"] | None = None) -> SafeguardReport:
        """Check the analogies of a debate turn (a :class:`~analogist.safeguard.Turn` or its
        data: ``{arguments, historical_wisdom}``) or of plain text (seed 003)."""
        sg = self.safeguard()
        if isinstance(turn, Mapping):
            from analogist.safeguard import parse_turn  # spaCy and the lexicons, on use

            turn = parse_turn(dict(turn), source="turn")
        return sg.check(turn, mode=mode)
