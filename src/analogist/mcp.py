"""``analogist mcp``: the analogical memory as an MCP server (issue 9, part B).

Built on the official Python ``mcp`` SDK (its high-level :class:`mcp.server.mcpserver.MCPServer`),
served over stdio or streamable HTTP. One server process serves **one namespace** of one store,
fixed at start: no tool or resource takes a namespace argument, every read and write names the
server's namespace, and an episode id from another namespace is "not found".

Tools (each a thin call of the same library functions the CLI and the HTTP API use):

* ``remember_episode`` — store a Signature, a foresight Event (stored as its kind-``event``
  Signature), or text encoded with the deterministic encoder (:mod:`analogist.encode.deterministic`);
* ``find_analogy`` — :meth:`analogist.retrieve.Retriever.find` (MAC/FAC, judge, decoy probe);
* ``map_cases`` — :func:`analogist.judge.judge` on two Signatures (objects, or episode ids of the
  namespace): the likeness / difference / unknown table and candidate inferences;
* ``foresight_brief`` — :func:`analogist.foresight.loop.run_foresight` then
  :func:`analogist.foresight.brief.brief_data`, the pool being the bundled historical corpus plus
  the namespace's ``event`` episodes;
* ``check_analogy`` — :meth:`analogist.safeguard.Safeguard.check` on a debate turn or plain text.

Annotations: ``readOnlyHint`` is true on ``map_cases``, ``foresight_brief`` and
``check_analogy``. ``find_analogy`` appends one row to the namespace's analogy log (the
``analogist://reports/log`` resource), so it is read-only only when the server runs with
``log_finds=False``; the hint follows that setting. ``remember_episode`` writes
(``readOnlyHint=False, destructiveHint=False, idempotentHint=False``: storing the same episode id
twice is refused).

Resources: ``analogist://episodes`` (the list), ``analogist://episodes/{episode_id}`` (one
episode: row id or episode id), ``analogist://reports/log`` (the latest analogy attempts),
``analogist://reports/last-brief`` (the last foresight brief of this server process).

Bad input is a tool error (``isError``) whose text is the :class:`~analogist.errors.AnalogistError`
message naming the field and what was expected; the store is unchanged (every write is one
transaction of :class:`~analogist.memory.sqlite.Memory`).

Threading: the SDK runs synchronous tools on worker threads. SQLite connections belong to the
thread that opened them, so each worker thread opens its own :class:`Memory` on first use, and one
lock serialises the tool bodies (the encoder, the retriever caches and the last-brief slot are
shared).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from analogist.app import LIMITS, Analogist, Settings
from analogist.errors import AnalogistError
from analogist.params import bounded, check_bounds

__all__ = ["MCPParams", "AnalogistMCP", "build_server", "run_mcp", "client_config"]

EPISODE_URI = "analogist://episodes/{episode_id}"
EPISODES_URI = "analogist://episodes"
LOG_URI = "analogist://reports/log"
BRIEF_URI = "analogist://reports/last-brief"


@dataclass(frozen=True, slots=True)
class MCPParams:
    """Settings of one MCP server.

    Attributes:
        k: analogues ``find_analogy`` reports when the call gives none (within
            :data:`analogist.app.LIMITS`).
        log_finds: whether ``find_analogy`` records each attempt in the analogy log (as
            ``analogist find`` does); when False the tool is read-only and says so.
        text_embedding: use the offline text embedder (:func:`analogist.index.embed.default_embedder`)
            as MAC's text channel in find and foresight, and store each remembered episode's
            abstract-level embeddings (as ``analogist add`` does). Off, MAC is structural only
            (faster to start: embedding the 133-event corpus for the first foresight call takes
            ~20 s on a loaded 2-core machine; the stdio tests use this).
        llm: ask the configured LLM (if any) for the critic (find), the safeguard and the
            foresight parametric candidates; without one those steps are reported as skipped.
        log_limit: rows in the ``analogist://reports/log`` resource.
        foresight_rounds, foresight_per_round, foresight_carryover: the defaults of Algorithm 1's
            R, K and M (seed 001), as in ``analogist foresight brief``.
    """

    k: int = bounded(5, lo=LIMITS.k[0], hi=LIMITS.k[1], integer=True)
    log_finds: bool = True
    text_embedding: bool = True
    llm: bool = True
    log_limit: int = bounded(100, lo=1, integer=True)
    foresight_rounds: int = bounded(3, lo=LIMITS.rounds[0], hi=LIMITS.rounds[1], integer=True)
    foresight_per_round: int = bounded(8, lo=LIMITS.per_round[0], hi=LIMITS.per_round[1],
                                       integer=True)
    foresight_carryover: int = bounded(8, lo=LIMITS.carryover[0], hi=LIMITS.carryover[1],
                                       integer=True)

    def __post_init__(self) -> None:
        check_bounds(self)


def _one_of(field_names: tuple[str, ...], values: tuple[Any, ...]) -> int:
    given = [i for i, v in enumerate(values) if v is not None]
    if len(given) != 1:
        names = ", ".join(field_names)
        got = ", ".join(field_names[i] for i in given) or "none"
        raise AnalogistError(f"give exactly one of {names} (got {got})", field=field_names[0])
    return given[0]


class AnalogistMCP:
    """The protocol-free body of the server: one store, one namespace, plain methods returning
    JSON-able dicts over the application layer (:class:`analogist.app.Analogist`).
    :func:`build_server` exposes them as MCP tools and resources."""

    def __init__(self, store: str | Path, namespace: str, params: MCPParams | None = None
                 ) -> None:
        self.params = p = params or MCPParams()
        self.app = Analogist(Settings.from_env(
            store=str(store), namespace=namespace, embeddings=p.text_embedding, llm=p.llm,
            log_finds=p.log_finds, k=p.k, foresight_rounds=p.foresight_rounds,
            foresight_per_round=p.foresight_per_round,
            foresight_carryover=p.foresight_carryover))
        self.namespace = self.app.settings.namespace
        self.store = self.app.settings.store
        self._lock = threading.RLock()
        self.last_brief: dict[str, Any] | None = None
        self.app.memory()                   # create / migrate now: errors surface at start

    def memory(self) -> Any:
        return self.app.memory()

    def close(self) -> None:
        self.app.close()

    def _episode_json(self, row: Any) -> dict[str, Any]:
        return {"id": row.id, "episode_id": row.episode_id, "kind": row.kind,
                "namespace": self.namespace, "uri": f"analogist://episodes/{row.episode_id}",
                "created_at": row.created_at, "superseded_by": row.superseded_by,
                "verified": row.verified}

    # -- tools ---------------------------------------------------------------------------
    def remember_episode(self, signature: dict[str, Any] | None = None,
                         from_text: str | None = None, event: dict[str, Any] | None = None,
                         episode_id: str | None = None, domain: str | None = None
                         ) -> dict[str, Any]:
        which = _one_of(("signature", "from_text", "event"), (signature, from_text, event))
        notes: list[str] = []
        with self._lock:
            if which == 0:
                if not isinstance(signature, dict):
                    raise AnalogistError("expected a Signature object", field="signature")
                row = self.app.add(signature, episode_id=episode_id)
            elif which == 1:
                res = self.app.encode(LIMITS.text(from_text, "from_text"),
                                      episode_id=episode_id, domain=domain, source="from_text")
                notes = [str(n) for n in getattr(res, "notes", ())][:20]
                row = self.app.add(res.signature)
            else:
                if not isinstance(event, dict):
                    raise AnalogistError("expected an Event object", field="event")
                row = self.app.add(event=event)
        out = self._episode_json(row)
        out["signature"] = json.loads(_dump(row.signature))
        if notes:
            out["encoder_notes"] = notes
        return out

    def find_analogy(self, target: dict[str, Any] | str | None = None,
                     from_text: str | None = None, k: int | None = None) -> dict[str, Any]:
        which = _one_of(("target", "from_text"), (target, from_text))
        LIMITS.check("k", k)
        with self._lock:
            if which == 0:
                res = self.app.find(self.app.signature(target, field="target"), k=k)  # type: ignore[arg-type]
            else:
                res = self.app.find(text=LIMITS.text(from_text, "from_text"), k=k)
        return res.to_json()

    def map_cases(self, source: dict[str, Any] | str, target: dict[str, Any] | str
                  ) -> dict[str, Any]:
        with self._lock:
            s = self.app.signature(source, field="source")
            t = self.app.signature(target, field="target")
        outcome = self.app.map(s, t)
        out = outcome.report.to_json()
        out["candidate_inferences"] = out["conclusions"]
        out["report"] = outcome.report.render()
        best = outcome.result.best
        out["mapping"] = None if best is None else best.to_json()
        return out

    def foresight_brief(self, target: dict[str, Any] | str, cutoff: str | None = None,
                        rounds: int | None = None, per_round: int | None = None
                        ) -> dict[str, Any]:
        with self._lock:
            data = self.app.brief(target, cutoff=cutoff, rounds=rounds, per_round=per_round)
            self.last_brief = data
        return data

    def check_analogy(self, turn: dict[str, Any] | None = None, text: str | None = None,
                      mode: Literal["strict", "advisory"] | None = None) -> dict[str, Any]:
        from analogist.safeguard import parse_turn  # spaCy and the lexicons, loaded on use

        which = _one_of(("turn", "text"), (turn, text))
        notes: list[str] = []
        with self._lock:
            arg: Any = (parse_turn(turn, source="turn") if which == 0
                        else LIMITS.text(text, "text"))
            self.app.provider("safeguard", notes, "safeguard LLM")
            rep = self.app.check(arg, mode=mode)
        out = rep.to_json()
        out["all_pass"] = rep.all_pass
        if notes:
            out["notes"] = notes
        return out

    # -- resources -----------------------------------------------------------------------
    def episodes(self) -> dict[str, Any]:
        with self._lock:
            rows = self.memory().list(self.namespace, include_superseded=True)
        return {"namespace": self.namespace, "count": len(rows),
                "episodes": [self._episode_json(r) for r in rows]}

    def episode(self, episode_id: str) -> dict[str, Any]:
        with self._lock:
            row = self.memory().get(episode_id, self.namespace)
            if row is None and episode_id.isdigit():
                row = self.memory().get(int(episode_id), self.namespace)
        if row is None:
            raise AnalogistError(f"no episode {episode_id!r} in this namespace",
                                 field="episode_id")
        out = self._episode_json(row)
        out["signature"] = json.loads(_dump(row.signature))
        return out

    def analogy_log(self) -> dict[str, Any]:
        with self._lock:
            rows = self.memory().log(self.namespace, limit=self.params.log_limit)
        return {"namespace": self.namespace, "count": len(rows), "log": rows}


def _dump(sig: Any) -> str:
    from analogist.signature import dump_signature

    return dump_signature(sig)


# -- the MCP surface -------------------------------------------------------------------------

_SIG = "a Signature object (see `analogist schema`) or the episode id of a stored episode"


def build_server(store: str | Path, namespace: str, params: MCPParams | None = None
                 ) -> tuple[Any, AnalogistMCP]:
    """The :class:`mcp.server.mcpserver.MCPServer` over one store and namespace, and the
    protocol-free body it calls."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp.types import ToolAnnotations

    from analogist import __version__

    body = AnalogistMCP(store, namespace, params)
    ns = body.namespace
    server: Any = MCPServer(
        "analogist", version=__version__, log_level="WARNING",
        instructions=(f"An analogical memory (namespace {ns!r}): remember episodes as structural "
                      "signatures, find analogues by structure, map two cases, write foresight "
                      "briefs from historical analogies, and check analogies in arguments."),
    )

    def guard(fn: Any, *args: Any, **kw: Any) -> dict[str, Any]:
        try:
            return fn(*args, **kw)
        except AnalogistError as e:
            raise ToolError(str(e)) from None

    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                idempotent_hint=True, open_world_hint=False)

    @server.tool(annotations=ToolAnnotations(title="Remember an episode", read_only_hint=False,
                                             destructive_hint=False, idempotent_hint=False,
                                             open_world_hint=False))
    def remember_episode(
        signature: Annotated[dict[str, Any] | None, Field(
            description="A Signature object to store.")] = None,
        from_text: Annotated[str | None, Field(
            description="Episode text to encode with the deterministic (offline) encoder "
                        "and store.")] = None,
        event: Annotated[dict[str, Any] | None, Field(
            description="A foresight Event (factors at positions, links) to store as an "
                        "'event' episode; foresight_brief draws on these.")] = None,
        episode_id: Annotated[str | None, Field(
            description="Episode id (required with from_text; overrides signature's).")] = None,
        domain: Annotated[str | None, Field(description="Domain, with from_text.")] = None,
    ) -> dict[str, Any]:
        """Store one episode in this server's namespace (give exactly one of signature,
        from_text, event). Refused, with nothing written, when the episode id exists."""
        return guard(body.remember_episode, signature, from_text, event, episode_id, domain)

    lf = body.params.log_finds

    @server.tool(annotations=ToolAnnotations(title="Find analogies", read_only_hint=not lf,
                                             destructive_hint=False, idempotent_hint=not lf,
                                             open_world_hint=False))
    def find_analogy(
        target: Annotated[dict[str, Any] | str | None, Field(description=_SIG)] = None,
        from_text: Annotated[str | None, Field(
            description="Target situation as text (encoded deterministically first).")] = None,
        k: Annotated[int | None, Field(
            description=f"How many analogues ({LIMITS.k[0]}-{LIMITS.k[1]}).")] = None,
    ) -> dict[str, Any]:
        """Have I seen this shape before? MAC/FAC retrieval over this namespace, each analogue
        judged (likeness / difference / unknown, causal gate, transfer) plus a decoy probe.
        Records the attempt in the analogy log unless the server runs without logging."""
        return guard(body.find_analogy, target, from_text, k)

    @server.tool(annotations=ToolAnnotations(title="Map two cases", **_ro(read_only)))
    def map_cases(
        source: Annotated[dict[str, Any] | str, Field(description="The source case: " + _SIG)],
        target: Annotated[dict[str, Any] | str, Field(description="The target case: " + _SIG)],
    ) -> dict[str, Any]:
        """Map SOURCE onto TARGET with the structure-mapping engine and judge it: role map,
        likeness / difference / unknown table, candidate inferences with their transfer status,
        blockers, and a prediction to check."""
        return guard(body.map_cases, source, target)

    @server.tool(annotations=ToolAnnotations(title="Foresight brief", **_ro(read_only)))
    def foresight_brief(
        target: Annotated[dict[str, Any] | str, Field(
            description="An Event object (factors marked observed/hidden, or with a cutoff), or "
                        "the id, name or alias of a corpus event or an event episode here.")],
        cutoff: Annotated[str | None, Field(
            description="Cut the target at this date (YYYY[-MM[-DD]]).")] = None,
        rounds: Annotated[int | None, Field(description=f"R: reflection rounds ({LIMITS.rounds[0]}-{LIMITS.rounds[1]}).")] = None,
        per_round: Annotated[int | None, Field(
            description=f"K: candidates per round ({LIMITS.per_round[0]}-"
                        f"{LIMITS.per_round[1]}).")] = None,
    ) -> dict[str, Any]:
        """The Structural Analogy Brief (seed 001): historical analogies by mechanism from the
        bundled corpus and this namespace's event episodes, hidden factors confirmed across
        independent analogies, invariants, limitations, uncertainties."""
        return guard(body.foresight_brief, target, cutoff, rounds, per_round)

    @server.tool(annotations=ToolAnnotations(title="Check an analogy", **_ro(read_only)))
    def check_analogy(
        turn: Annotated[dict[str, Any] | None, Field(
            description="A debate turn {arguments, historical_wisdom}.")] = None,
        text: Annotated[str | None, Field(description="Plain text to check.")] = None,
        mode: Annotated[Literal["strict", "advisory"] | None, Field(
            description="Force one mode for every analogy.")] = None,
    ) -> dict[str, Any]:
        """Check the analogies of an argument (seed 003): at least two structural, causally
        relevant similarities, at least one substantive difference, content share flagged."""
        return guard(body.check_analogy, turn, text, mode)

    def rguard(fn: Any, *args: Any) -> str:
        try:
            return json.dumps(fn(*args), ensure_ascii=False, indent=2)
        except AnalogistError as e:
            raise ResourceError(str(e)) from None

    @server.resource(EPISODES_URI, name="episodes", mime_type="application/json",
                     description=f"The episodes of namespace {ns!r}.")
    def episodes() -> str:
        return rguard(body.episodes)

    @server.resource(EPISODE_URI, name="episode", mime_type="application/json",
                     description="One episode (episode id or row id) with its signature.")
    def episode(episode_id: str) -> str:
        return rguard(body.episode, episode_id)

    @server.resource(LOG_URI, name="analogy-log", mime_type="application/json",
                     description="The latest analogy attempts (find_analogy), newest first.")
    def analogy_log() -> str:
        return rguard(body.analogy_log)

    @server.resource(BRIEF_URI, name="last-brief", mime_type="application/json",
                     description="The last foresight brief written by this server.")
    def last_brief() -> str:
        return json.dumps({"namespace": ns, "brief": body.last_brief}, ensure_ascii=False,
                          indent=2)

    return server, body


def _ro(a: Any) -> dict[str, Any]:
    return {"read_only_hint": a.read_only_hint, "destructive_hint": a.destructive_hint,
            "idempotent_hint": a.idempotent_hint, "open_world_hint": a.open_world_hint}


def run_mcp(store: str | Path, namespace: str, *, transport: str = "stdio",
            host: str = "127.0.0.1", port: int = 8765, params: MCPParams | None = None) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (http)."""
    if transport not in ("stdio", "http"):
        raise AnalogistError(f"transport must be stdio or http, got {transport!r}",
                             field="transport")
    if not 0 < port < 65536:
        raise AnalogistError(f"port must be 1-65535, got {port}", field="port")
    server, body = build_server(store, namespace, params)
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=host, port=port)
    finally:
        body.close()


def client_config(store: str | Path, namespace: str) -> dict[str, Any]:
    """The ``mcpServers`` entry that adds this server to an MCP client (Claude Desktop's
    ``claude_desktop_config.json``, an editor's ``mcp.json``)."""
    return {"mcpServers": {f"analogist-{namespace}": {
        "command": "analogist",
        "args": ["mcp", "--store", str(store), "--namespace", namespace]}}}
