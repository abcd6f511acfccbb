"""The MCP surface: the tools over an :class:`~analogist.mcp.body.AnalogistMCP`, their
schemas, and the server with its resources."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationError

from analogist import __version__
from analogist.app import LIMITS
from analogist.errors import AnalogistError
from analogist.mcp.body import (
    BRIEF_URI,
    EPISODE_URI,
    EPISODES_URI,
    LIST_LIMIT,
    LOG_URI,
    AnalogistMCP,
    MCPParams,
)
from analogist.mcp.schemas import (
    _FORMATS,
    CaseArg,
    EpisodeArg,
    EventArg,
    FlagArg,
    LogIdArg,
    NumberArg,
    ShortText,
    SignatureArg,
    TextArg,
    TurnArg,
    _format_defs,
    _int_arg,
    _one_line_validation,
    _resolve_formats,
    _schema,
)

# -- the MCP surface -------------------------------------------------------------------------

_SIG = ("a Signature object (the episode's roles, relations, causal chain and abstraction "
        "levels; its JSON Schema is $defs.Signature here and is printed by `analogist schema`), "
        "or the id of a stored episode (its episode id, or its row id as an integer)")


def _tools(body: AnalogistMCP | None) -> list[Any]:
    """The tools over ``body`` (None: for their schemas only).

    In named steps: ``call`` (a tool's body method, its errors as the SDK's ``ToolError``) and
    ``ann`` (a tool's annotations); the tool functions of :func:`_episode_tools` (remember,
    list, delete, record an outcome) and :func:`_analogy_tools` (find, map, foresight brief,
    check); then each made into an MCP tool with its annotations, in the order clients list
    them."""
    # the MCP SDK (about 1 s to import) loads only when a server is built
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.tools.base import Tool
    from mcp.types import ToolAnnotations

    def call(name: str) -> Callable[..., dict[str, Any]]:
        def run(*args: Any) -> dict[str, Any]:
            if body is None:
                raise ToolError("this server has no store")
            try:
                return getattr(body, name)(*args)
            except AnalogistError as e:
                raise ToolError(" ".join(str(e).split())[:1000]) from None
        return run

    def ann(title: str, *, read_only: bool = False, destructive: bool = False,
            idempotent: bool | None = None) -> ToolAnnotations:
        return ToolAnnotations(title=title, read_only_hint=read_only,
                               destructive_hint=destructive,
                               idempotent_hint=read_only if idempotent is None else idempotent,
                               open_world_hint=False)

    remember_episode, list_episodes, delete_episode, record_outcome = _episode_tools(call)
    find_analogy, map_cases, foresight_brief, check_analogy = _analogy_tools(call)

    lf = True if body is None else body.params.log_finds
    specs: list[tuple[Callable[..., Any], Any]] = [
        (remember_episode, ann("Remember an episode")),
        (find_analogy, ann("Find analogies", read_only=not lf)),
        (map_cases, ann("Map two cases", read_only=True)),
        (foresight_brief, ann("Foresight brief", read_only=True)),
        (check_analogy, ann("Check an analogy", read_only=True)),
        (list_episodes, ann("List episodes", read_only=True)),
        (delete_episode, ann("Delete an episode", destructive=True, idempotent=True)),
        (record_outcome, ann("Record an outcome")),
    ]
    defs = {name: _format_defs(name) for name in _FORMATS}
    tools = []
    for fn, a in specs:
        t = Tool.from_function(fn, annotations=a)
        t.description = " ".join((t.description or "").split())
        _resolve_formats(t.parameters, defs)
        tools.append(t)
    return tools


_Call = Callable[[str], Callable[..., dict[str, Any]]]
_ToolFns = tuple[Callable[..., dict[str, Any]], Callable[..., dict[str, Any]],
                 Callable[..., dict[str, Any]], Callable[..., dict[str, Any]]]


def _episode_tools(call: _Call) -> _ToolFns:
    """The tools over this namespace's episodes — ``remember_episode``, ``list_episodes``,
    ``delete_episode`` and ``record_outcome`` — each an annotated signature (its arguments'
    schemas and descriptions) and a docstring (its description) over ``call``."""
    def remember_episode(
        signature: Annotated[SignatureArg, Field(description="A Signature object to store.")
                             ] = None,
        from_text: Annotated[TextArg, Field(
            description="Instead: the episode as text, written into a Signature by the offline "
                        "encoder and stored.")] = None,
        event: Annotated[EventArg, Field(
            description="Instead: a foresight Event (factors at positions, with links) to "
                        "store as an 'event' episode; foresight_brief draws on these.")] = None,
        episode_id: Annotated[ShortText, Field(
            description="The episode id (with from_text; overrides the signature's own).")
                              ] = None,
        domain: Annotated[ShortText, Field(
            description="The episode's surface domain, with from_text.")] = None,
    ) -> dict[str, Any]:
        """Store one episode in this server's namespace: give exactly one of signature,
        from_text, event. Refused, with nothing written, when the episode id exists."""
        return call("remember_episode")(signature, from_text, event, episode_id, domain)

    def list_episodes(
        limit: Annotated[Any, _int_arg(1, LIST_LIMIT), Field(
            description=f"At most this many episodes (1-{LIST_LIMIT}; default 100).")] = None,
        offset: Annotated[Any, _int_arg(0), Field(
            description="Skip this many first (default 0).")] = None,
        include_superseded: Annotated[FlagArg, Field(
            description="Also list episodes replaced by a newer version.")] = None,
    ) -> dict[str, Any]:
        """List the episodes stored in this server's namespace, oldest first (ids, kinds,
        domains), with the total count for paging."""
        return call("list_episodes")(limit, offset, include_superseded)

    def delete_episode(
        episode: Annotated[EpisodeArg, Field(
            description="The episode to delete: its episode id, or its row id.")],
    ) -> dict[str, Any]:
        """Delete one stored episode of this namespace for good (its relations and index
        entries go with it). Returns what was deleted."""
        return call("delete_episode")(episode)

    def record_outcome(
        log_id: Annotated[LogIdArg, Field(
            description="The analogy attempt: find_analogy's log_id. Without it, name the "
                        "analogue acted on in 'used'.")] = None,
        helped: Annotated[FlagArg, Field(
            description="Whether acting on the analogy helped.")] = None,
        negative: Annotated[FlagArg, Field(
            description="Instead of helped: a negative transfer (acting on the analogy did "
                        "worse than acting without it).")] = None,
        used: Annotated[ShortText, Field(
            description="The analogue acted on (an episode id).")] = None,
        note: Annotated[TextArg, Field(description="A free-text note.")] = None,
        result: Annotated[NumberArg, Field(
            description="The analogy-driven action's result (also writes a negative-transfer "
                        "ledger entry).")] = None,
        counterfactual: Annotated[NumberArg, Field(
            description="With result: the result without the analogy on the same item.")
                                  ] = None,
        lower_is_better: Annotated[FlagArg, Field(
            description="With result: a lower result is better.")] = None,
        item: Annotated[ShortText, Field(description="With result: the item acted on.")
                        ] = None,
    ) -> dict[str, Any]:
        """Say what an analogy led to — it helped, it did not, or it was a negative transfer —
        so that the memory learns which analogies to offer ('analogist triggers fit' and
        'analogist ledger' read these). Give helped, or negative=true."""
        return call("record_outcome")(log_id, helped, negative, used, note, result,
                                      counterfactual, lower_is_better, item)

    return remember_episode, list_episodes, delete_episode, record_outcome


def _analogy_tools(call: _Call) -> _ToolFns:
    """The analogy tools — ``find_analogy``, ``map_cases``, ``foresight_brief`` and
    ``check_analogy`` — each an annotated signature (its arguments' schemas and descriptions)
    and a docstring (its description) over ``call``."""
    def find_analogy(
        target: Annotated[CaseArg, Field(description="The target situation: " + _SIG)] = None,
        from_text: Annotated[TextArg, Field(
            description="Instead: the target situation as text (written into a Signature by "
                        "the offline encoder first).")] = None,
        k: Annotated[Any, _int_arg(*LIMITS.k), Field(
            description=f"How many analogues to report ({LIMITS.k[0]}-{LIMITS.k[1]}; default "
                        f"{MCPParams().k}).")] = None,
    ) -> dict[str, Any]:
        """Have I seen this shape before? Finds the stored episodes whose structure matches
        the target's (never the target itself), judges each one (likeness, difference,
        unknown; whether its conclusions transfer) and probes one look-alike decoy. Records the
        attempt in the analogy log (its log_id is what record_outcome takes) unless the server
        runs without logging."""
        return call("find_analogy")(target, from_text, k)

    def map_cases(
        source: Annotated[CaseArg, Field(description="The source case: " + _SIG)],
        target: Annotated[CaseArg, Field(description="The target case: " + _SIG)],
    ) -> dict[str, Any]:
        """Map the source case onto the target case by structure and judge the mapping: which
        role corresponds to which, what is alike, what differs, what is unknown, the
        conclusions that would carry over with their transfer status, what blocks them, and a
        prediction to check."""
        return call("map_cases")(source, target)

    def foresight_brief(
        target: Annotated[EventArg, Field(
            description="The unfolding situation: an Event object (factors marked observed or "
                        "hidden, or with a cutoff), or the id, name or alias of an event of the "
                        "bundled historical corpus or of an event episode stored here.")],
        cutoff: Annotated[Any, _schema({"type": "string",
                                        "pattern": r"^\d{4}(-\d{2}(-\d{2})?)?$"}), Field(
            description="Look at the target only as known on this date (YYYY, YYYY-MM or "
                        "YYYY-MM-DD).")] = None,
        rounds: Annotated[Any, _int_arg(*LIMITS.rounds), Field(
            description=f"Rounds of reflection ({LIMITS.rounds[0]}-{LIMITS.rounds[1]}).")
                          ] = None,
        per_round: Annotated[Any, _int_arg(*LIMITS.per_round), Field(
            description=f"Candidate analogies per round ({LIMITS.per_round[0]}-"
                        f"{LIMITS.per_round[1]}).")] = None,
    ) -> dict[str, Any]:
        """A foresight brief for an unfolding situation: historical analogies by mechanism
        (from the bundled corpus and this namespace's event episodes), the hidden factors that
        independent analogies agree on, what holds across them, their limits and the open
        questions."""
        return call("foresight_brief")(target, cutoff, rounds, per_round)

    def check_analogy(
        turn: Annotated[TurnArg, Field(
            description="A debate turn: {arguments: [{text, analogies}], historical_wisdom: "
                        "[...]}.")] = None,
        text: Annotated[TextArg, Field(description="Instead: plain text to check.")] = None,
        mode: Annotated[Any, _schema({"enum": ["strict", "advisory"]}), Field(
            description="Judge every analogy in this mode (default: strict for arguments, "
                        "advisory for historical wisdom).")] = None,
    ) -> dict[str, Any]:
        """Check the analogies an argument draws: each needs at least two structural,
        causally relevant similarities and at least one substantive difference; arguments that
        lean mostly on analogy are flagged."""
        return call("check_analogy")(turn, text, mode)

    return find_analogy, map_cases, foresight_brief, check_analogy


def build_server(store: str | Path, namespace: str, params: MCPParams | None = None
                 ) -> tuple[Any, AnalogistMCP]:
    """The :class:`mcp.server.mcpserver.MCPServer` over one store and namespace, and the
    protocol-free body it calls."""
    # the MCP SDK (about 1 s to import) loads only when a server is built
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    body = AnalogistMCP(store, namespace, params)
    ns = body.namespace
    tools = _tools(body)
    allowed = {t.name: sorted(t.parameters.get("properties", {})) for t in tools}

    class Server(MCPServer):  # type: ignore[misc]
        """Unknown arguments and wrongly typed ones are one-line tool errors."""

        async def call_tool(self, name: str, arguments: dict[str, Any],
                            context: Any = None) -> Any:
            if name in allowed:
                unknown = [str(k) for k in arguments if k not in allowed[name]]
                if unknown:
                    raise ToolError(f"unknown argument {unknown[0][:100]!r}; {name} takes "
                                    + (", ".join(allowed[name]) or "no arguments"))
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as e:
                if isinstance(e.__cause__, ValidationError):
                    raise ToolError(_one_line_validation(e.__cause__)) from None
                raise

    server: Any = Server(
        "analogist", version=__version__, log_level="WARNING", tools=tools,
        instructions=(f"An analogical memory (namespace {ns!r}): remember episodes as structural "
                      "signatures, find analogues by structure, map two cases, write foresight "
                      "briefs from historical analogies, check analogies in arguments, and "
                      "record what an analogy led to."),
    )

    def rguard(fn: Any, *args: Any) -> str:
        try:
            return json.dumps(fn(*args), ensure_ascii=False, indent=2)
        except AnalogistError as e:
            raise ResourceError(" ".join(str(e).split())) from None

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


def tool_input_schemas() -> dict[str, dict[str, Any]]:
    """Every tool's input schema, as ``tools/list`` gives it (built without a store)."""
    return {t.name: t.parameters for t in _tools(None)}
