"""``analogist mcp``: the analogical memory as an MCP server for agents.

Built on the official Python ``mcp`` SDK (its high-level :class:`mcp.server.mcpserver.MCPServer`),
served over stdio or streamable HTTP. One server process serves **one namespace** of one store,
fixed at start: no tool or resource takes a namespace argument, every read and write names the
server's namespace, and an episode id from another namespace is "not found".

Tools (each a thin call of the application layer, :class:`analogist.app.Analogist`, which the CLI
and the HTTP API call too):

* ``remember_episode`` — store a Signature, a foresight Event (stored as its kind-``event``
  Signature), or text written into a Signature by the offline encoder;
* ``find_analogy`` — retrieval by structure over the namespace, each analogue judged, plus a
  decoy probe (:meth:`Analogist.find`);
* ``map_cases`` — two cases mapped and judged (:meth:`Analogist.map`);
* ``foresight_brief`` — historical analogies for an unfolding event (:meth:`Analogist.brief`);
* ``check_analogy`` — the analogy safeguard on a debate turn or plain text
  (:meth:`Analogist.check`);
* ``list_episodes`` and ``delete_episode`` — the namespace's episodes, a page at a time, and
  deleting one;
* ``record_outcome`` — what an analogy led to (:meth:`Analogist.record_outcome`), the data
  ``analogist triggers fit`` and ``analogist ledger`` read.

Arguments are typed: a Signature argument's JSON Schema is the one ``analogist schema`` prints
(:func:`analogist.app.json_schema`), carried in the tool's ``inputSchema`` under ``$defs``;
likewise Event and debate-turn arguments. Episode ids may be given as the episode id (text) or
the row id (an integer, or its digits as text) everywhere.

Annotations: ``readOnlyHint`` is true on ``map_cases``, ``foresight_brief``, ``check_analogy``
and ``list_episodes``. ``find_analogy`` appends one row to the namespace's analogy log (the
``analogist://reports/log`` resource), so it is read-only only when the server runs with
``log_finds=False``; the hint follows that setting. ``remember_episode`` and ``record_outcome``
write (not idempotent: storing the same episode id twice is refused, each outcome is a new row);
``delete_episode`` is the one destructive tool.

Resources: ``analogist://episodes`` (the list), ``analogist://episodes/{episode_id}`` (one
episode: row id or episode id), ``analogist://reports/log`` (the latest analogy attempts),
``analogist://reports/last-brief`` (the last foresight brief of this server process).

Bad input is a tool error (``isError``) of one line naming the argument and what was expected —
an unknown argument names the valid ones, a wrong type names the argument — and the store is
unchanged (every write is one transaction). Over stdio a line that is not a JSON-RPC message gets
a JSON-RPC error reply (``-32700`` parse error, ``-32600`` invalid request; with the request's id
when one can be read from the line) instead of silence.

Threading: the SDK runs synchronous tools on worker threads; the application layer gives each
thread its own store connection, and one lock serialises the tool bodies (the encoder, the
retriever caches and the last-brief slot are shared).
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import anyio
from pydantic import Field, ValidationError, WithJsonSchema

from analogist import __version__
from analogist.app import LIMITS, Analogist, Settings, json_schema
from analogist.errors import AnalogistError
from analogist.params import bounded, check_bounds
from analogist.signature import dump_signature

__all__ = ["MCPParams", "AnalogistMCP", "build_server", "run_mcp", "client_config",
           "tool_input_schemas"]

EPISODE_URI = "analogist://episodes/{episode_id}"
EPISODES_URI = "analogist://episodes"
LOG_URI = "analogist://reports/log"
BRIEF_URI = "analogist://reports/last-brief"
LIST_LIMIT = 1000
"""Most episodes one ``list_episodes`` call returns."""


@dataclass(frozen=True, slots=True)
class MCPParams:
    """Settings of one MCP server.

    Attributes:
        k: analogues ``find_analogy`` reports when the call gives none (within
            :data:`analogist.app.LIMITS`).
        log_finds: whether ``find_analogy`` records each attempt in the analogy log (as
            ``analogist find`` does); when False the tool is read-only and says so.
        text_embedding: use the offline text embedder (:func:`analogist.index.embed.default_embedder`)
            as a retrieval channel in find and foresight, and store each remembered episode's
            abstract-level embeddings (as ``analogist add`` does). Off, retrieval is structural
            only (faster to start: embedding the 133-event corpus for the first foresight call
            takes ~20 s on a loaded 2-core machine; the stdio tests use this).
        llm: ask the configured LLM (if any) for the critic (find), the safeguard and the
            foresight parametric candidates; without one those steps are reported as skipped.
        log_limit: rows in the ``analogist://reports/log`` resource.
        foresight_rounds, foresight_per_round, foresight_carryover: the defaults of the
            foresight loop's rounds, candidates per round and carry-over, as in
            ``analogist foresight brief``.
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


# -- argument checks (the tools' arguments arrive as plain JSON values) -----------------------

def _one_of(field_names: tuple[str, ...], values: tuple[Any, ...]) -> int:
    given = [i for i, v in enumerate(values) if v is not None]
    if len(given) != 1:
        names = ", ".join(field_names)
        got = ", ".join(field_names[i] for i in given) or "none"
        raise AnalogistError(f"give exactly one of {names} (got {got})", field=field_names[0])
    return given[0]


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "text",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def _text(value: Any, field: str, *, optional: bool = True, max_chars: int = 1000) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise AnalogistError(f"expected non-empty text, got {_kind(value)}", field=field)
    if len(value) > max_chars:
        raise AnalogistError(f"text of {len(value)} characters is over the limit of "
                             f"{max_chars}", field=field)
    return value


def _flag(value: Any, field: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise AnalogistError(f"expected true or false, got {_kind(value)}", field=field)
    return value


def _number(value: Any, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value):
        raise AnalogistError(f"expected a finite number, got {_kind(value)}", field=field)
    return float(value)


def _integer(value: Any, field: str, lo: int, hi: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        shown = repr(value) if isinstance(value, int) and len(str(value)) < 30 else _kind(value)
        raise AnalogistError(f"expected an integer from {lo} to {hi}, got {shown}", field=field)
    return value


def _case(value: Any, field: str) -> Any:
    """A Signature object or an episode id (text, or a row id as an integer)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise AnalogistError("expected a Signature object or an episode id (text or a row id), "
                         f"got {_kind(value)}", field=field)


def _log_id(value: Any) -> int | None:
    if isinstance(value, str) and value.isdigit() and len(value) <= 18:
        value = int(value)
    return _integer(value, "log_id", 0, 2 ** 63 - 1)


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

    def _episode_json(self, row: Any, *, signature: bool = False) -> dict[str, Any]:
        out = {"id": row.id, "episode_id": row.episode_id, "kind": row.kind,
               "namespace": self.namespace, "uri": f"analogist://episodes/{row.episode_id}",
               "domain": row.signature.surface.domain, "created_at": row.created_at,
               "superseded_by": row.superseded_by, "verified": row.verified}
        if signature:
            out["signature"] = json.loads(_dump(row.signature))
        return out

    # -- tools ---------------------------------------------------------------------------
    def remember_episode(self, signature: Any = None, from_text: Any = None, event: Any = None,
                         episode_id: Any = None, domain: Any = None) -> dict[str, Any]:
        which = _one_of(("signature", "from_text", "event"), (signature, from_text, event))
        episode_id = _text(episode_id, "episode_id", max_chars=200)
        domain = _text(domain, "domain", max_chars=200)
        notes: list[str] = []
        with self._lock:
            if which == 0:
                if not isinstance(signature, dict):
                    raise AnalogistError("expected a Signature object (its JSON Schema is in "
                                         f"this tool's input schema), got {_kind(signature)}",
                                         field="signature")
                row = self.app.add(signature, episode_id=episode_id)
            elif which == 1:
                res = self.app.encode(LIMITS.text(from_text, "from_text"),
                                      episode_id=episode_id, domain=domain, source="from_text")
                notes = [str(n) for n in getattr(res, "notes", ())][:20]
                row = self.app.add(res.signature)
            else:
                if not isinstance(event, dict):
                    raise AnalogistError(f"expected an Event object, got {_kind(event)}",
                                         field="event")
                row = self.app.add(event=event)
        out = self._episode_json(row, signature=True)
        if notes:
            out["encoder_notes"] = notes
        return out

    def find_analogy(self, target: Any = None, from_text: Any = None, k: Any = None
                     ) -> dict[str, Any]:
        which = _one_of(("target", "from_text"), (target, from_text))
        LIMITS.check("k", k)
        with self._lock:
            if which == 0:
                res = self.app.find(_case(target, "target"), k=k)
            else:
                res = self.app.find(text=LIMITS.text(from_text, "from_text"), k=k)
        return res.to_json()

    def map_cases(self, source: Any, target: Any) -> dict[str, Any]:
        with self._lock:
            s = self.app.signature(_case(source, "source"), field="source")
            t = self.app.signature(_case(target, "target"), field="target")
        outcome = self.app.map(s, t)
        out = outcome.report.to_json()
        out["candidate_inferences"] = out["conclusions"]
        out["report"] = outcome.report.render()
        best = outcome.result.best
        out["mapping"] = None if best is None else best.to_json()
        return out

    def foresight_brief(self, target: Any, cutoff: Any = None, rounds: Any = None,
                        per_round: Any = None) -> dict[str, Any]:
        if not isinstance(target, (dict, str)):
            raise AnalogistError("expected an Event object or the id, name or alias of an "
                                 f"event, got {_kind(target)}", field="target")
        cutoff = _text(cutoff, "cutoff", max_chars=10)
        with self._lock:
            data = self.app.brief(target, cutoff=cutoff, rounds=rounds, per_round=per_round)
            self.last_brief = data
        return data

    def check_analogy(self, turn: Any = None, text: Any = None, mode: Any = None
                      ) -> dict[str, Any]:
        from analogist.safeguard import parse_turn  # spaCy and the lexicons, loaded on use

        which = _one_of(("turn", "text"), (turn, text))
        if mode is not None and mode not in ("strict", "advisory"):
            raise AnalogistError(f"mode must be strict or advisory, got {_kind(mode)}"
                                 + (f" {mode[:40]!r}" if isinstance(mode, str) else ""),
                                 field="mode")
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

    def list_episodes(self, limit: Any = None, offset: Any = None,
                      include_superseded: Any = None) -> dict[str, Any]:
        lim = _integer(limit, "limit", 1, LIST_LIMIT) or 100
        off = _integer(offset, "offset", 0, 2 ** 63 - 1) or 0
        sup = bool(_flag(include_superseded, "include_superseded"))
        with self._lock:
            rows = self.app.episodes(include_superseded=sup, limit=lim, offset=off)
            total = self.memory().count(self.namespace, include_superseded=sup)
        return {"namespace": self.namespace, "total": total, "offset": off,
                "count": len(rows), "episodes": [self._episode_json(r) for r in rows]}

    def delete_episode(self, episode: Any) -> dict[str, Any]:
        if isinstance(episode, dict):
            raise AnalogistError("expected an episode id (text or a row id), got an object",
                                 field="episode")
        _case(episode, "episode")
        with self._lock:
            row = self.app.delete(episode)
        return {"deleted": self._episode_json(row)}

    def record_outcome(self, log_id: Any = None, helped: Any = None, negative: Any = None,
                       used: Any = None, note: Any = None, result: Any = None,
                       counterfactual: Any = None, lower_is_better: Any = None,
                       item: Any = None) -> dict[str, Any]:
        with self._lock:
            return self.app.record_outcome(
                _log_id(log_id), helped=_flag(helped, "helped"),
                negative=bool(_flag(negative, "negative")),
                used=_text(used, "used", max_chars=200), note=_text(note, "note", max_chars=2000),
                result=_number(result, "result"),
                counterfactual=_number(counterfactual, "counterfactual"),
                higher_is_better=not _flag(lower_is_better, "lower_is_better"),
                item=_text(item, "item", max_chars=200))

    # -- resources -----------------------------------------------------------------------
    def episodes(self) -> dict[str, Any]:
        with self._lock:
            rows = self.app.episodes(include_superseded=True)
        return {"namespace": self.namespace, "count": len(rows),
                "episodes": [self._episode_json(r) for r in rows]}

    def episode(self, episode_id: str) -> dict[str, Any]:
        with self._lock:
            row = self.app.episode(episode_id, field="episode_id")
        return self._episode_json(row, signature=True)

    def analogy_log(self) -> dict[str, Any]:
        with self._lock:
            rows = self.memory().log(self.namespace, limit=self.params.log_limit)
        return {"namespace": self.namespace, "count": len(rows), "log": rows}


def _dump(sig: Any) -> str:
    return dump_signature(sig)


# -- argument schemas --------------------------------------------------------------------------
# A tool's input schema is generated from its function's annotations; the shared formats
# (Signature, Event, debate turn) are marked with a placeholder there and replaced, after the
# tool is built, by a reference into the tool's own "$defs" (pydantic cannot resolve a "$ref"
# it did not write).

_PLACEHOLDER = "x-analogist-format"
_FORMATS = {"signature": "Signature", "event": "Event", "turn": "Turn"}


def _fmt(name: str) -> dict[str, str]:
    return {_PLACEHOLDER: name}


def _schema(schema: dict[str, Any]) -> WithJsonSchema:
    return WithJsonSchema(schema)


_ID = {"type": "string", "minLength": 1, "maxLength": 200}
_ROW = {"type": "integer", "minimum": 0}
_CASE = {"anyOf": [_fmt("signature"), _ID, _ROW]}

SignatureArg = Annotated[Any, _schema(_fmt("signature"))]
CaseArg = Annotated[Any, _schema(_CASE)]
EpisodeArg = Annotated[Any, _schema({"anyOf": [_ID, _ROW]})]
EventArg = Annotated[Any, _schema({"anyOf": [_fmt("event"), _ID]})]
TurnArg = Annotated[Any, _schema(_fmt("turn"))]
TextArg = Annotated[Any, _schema({"type": "string", "minLength": 1})]
ShortText = Annotated[Any, _schema({"type": "string", "minLength": 1, "maxLength": 200})]
FlagArg = Annotated[Any, _schema({"type": "boolean"})]
NumberArg = Annotated[Any, _schema({"type": "number"})]
LogIdArg = Annotated[Any, _schema({"anyOf": [_ROW, {"type": "string", "pattern": "^[0-9]+$"}]})]


def _int_arg(lo: int, hi: int | None = None) -> WithJsonSchema:
    s: dict[str, Any] = {"type": "integer", "minimum": lo}
    if hi is not None:
        s["maximum"] = hi
    return _schema(s)


def _format_defs(name: str) -> dict[str, Any]:
    """``{Title: schema, ...}``: the format's schema and its own definitions, for ``$defs``."""
    s = json_schema(name)
    defs = dict(s.pop("$defs", {}))
    s.pop("$schema", None)
    defs[_FORMATS[name]] = s
    return defs


def _resolve_formats(parameters: dict[str, Any], defs: dict[str, dict[str, Any]]) -> None:
    """Replace the placeholders in a tool's input schema by ``$ref``s and add the formats'
    definitions it uses under ``$defs``."""
    used: set[str] = set()

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) >= {_PLACEHOLDER}:
                name = node[_PLACEHOLDER]
                used.add(name)
                rest = {k: walk(v) for k, v in node.items() if k != _PLACEHOLDER}
                return {"$ref": f"#/$defs/{_FORMATS[name]}", **rest}
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(x) for x in node]
        return node

    new = walk(parameters)
    parameters.clear()
    parameters.update(new)
    if used:
        out: dict[str, Any] = dict(parameters.get("$defs", {}))
        for name in sorted(used):
            for k, v in defs[name].items():
                if k in out and out[k] != v:
                    raise AssertionError(f"two formats define {k!r} differently")
                out[k] = v
        parameters["$defs"] = out


def tool_input_schemas() -> dict[str, dict[str, Any]]:
    """Every tool's input schema, as ``tools/list`` gives it (built without a store)."""
    return {t.name: t.parameters for t in _tools(None)}


def _one_line_validation(e: ValidationError) -> str:
    errs = e.errors()
    first = errs[0] if errs else {"loc": (), "msg": "invalid arguments"}
    loc = ".".join(str(x) for x in first.get("loc", ())) or "arguments"
    msg = first.get("msg", "invalid value")
    if first.get("type") == "missing":
        msg = "required argument missing"
    elif first.get("type") in ("string_type", "str_type"):
        msg = "expected text"
    more = f" (and {len(errs) - 1} more problem(s))" if len(errs) > 1 else ""
    return f"field {loc}: {msg}{more}"


# -- the MCP surface -------------------------------------------------------------------------

_SIG = ("a Signature object (the episode's roles, relations, causal chain and abstraction "
        "levels; its JSON Schema is $defs.Signature here and is printed by `analogist schema`), "
        "or the id of a stored episode (its episode id, or its row id as an integer)")


def _tools(body: AnalogistMCP | None) -> list[Any]:
    """The tools over ``body`` (None: for their schemas only)."""
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


# -- stdio with parse-error replies ------------------------------------------------------------

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')


def _request_id(line: str) -> int | str | None:
    """The top-level ``"id"`` of a JSON-RPC line that may not parse (None when none is seen);
    a scan over tokens, no recursion."""
    depth = 0
    prev: list[str] = []
    for m in _TOKEN.finditer(line):
        t = m.group()
        if t in "[{":
            depth += 1
        elif t in "]}":
            depth -= 1
        elif depth == 1 and len(prev) >= 2 and prev[-1] == ":" and prev[-2] == '"id"' \
                and t not in ":,":
            if t.startswith('"'):
                return str(json.loads(t))[:200]
            return int(t) if re.fullmatch(r"-?\d{1,18}", t) else None
        prev = (prev + [t])[-2:]
    return None


def bad_line_reply(line: str) -> dict[str, Any] | None:
    """The JSON-RPC error reply to a stdio line that is not a JSON-RPC message (None when it is
    one): ``-32700`` when it is not JSON this server can read, ``-32600`` when it is JSON but
    not a request, notification or response."""
    import mcp_types as types  # the MCP SDK, on use

    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValidationError as e:
        errs = e.errors()
        invalid_json = any(x.get("type") == "json_invalid" for x in errs)
        detail = " ".join(str(errs[0].get("msg", "")).split())[:200] if errs else ""
    if invalid_json:
        code, msg = -32700, "Parse error: the line is not valid JSON"
        if "recursion" in detail.lower():
            msg = "Parse error: the line's JSON is nested too deeply"
    else:
        code, msg = -32600, "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
    return {"jsonrpc": "2.0", "id": _request_id(line),
            "error": {"code": code, "message": msg + (f" ({detail})" if detail else "")}}


class _CheckedLines:
    """stdin's lines for the SDK's stdio reader; a line that is not a JSON-RPC message is
    answered here with an error reply (the SDK would drop it silently) and not passed on."""

    def __init__(self, inner: Any) -> None:
        self._lines = inner.__aiter__()
        self.write: Any = None
        self.ready = anyio.Event()

    def __aiter__(self) -> _CheckedLines:
        return self

    async def __anext__(self) -> str:
        import mcp_types as types  # the MCP SDK, on use
        from mcp.shared.message import SessionMessage

        while True:
            line = await self._lines.__anext__()
            if not line.strip():
                continue
            reply = bad_line_reply(line)
            if reply is None:
                return str(line)
            await self.ready.wait()
            msg = types.jsonrpc_message_adapter.validate_python(reply)
            await self.write.send(SessionMessage(msg))


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server  # the MCP SDK, on use

    text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    lines = _CheckedLines(anyio.wrap_file(text))
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.write = write_stream
        lines.ready.set()
        # the SDK's own run_stdio_async does exactly this, over its unchecked reader
        low = server._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())


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
            anyio.run(_serve_stdio, server)
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
