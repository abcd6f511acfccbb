"""The MCP server's body: its settings, the checks of the tools' JSON arguments, and
:class:`AnalogistMCP`, the protocol-free tool and resource bodies over the application layer."""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analogist.app import LIMITS, Analogist, Settings
from analogist.errors import AnalogistError
from analogist.params import bounded, check_bounds
from analogist.signature import dump_signature

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
