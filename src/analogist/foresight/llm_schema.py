"""The parametric generator's reply: its JSON Schema (one Event per proposed analogy, optionally
with the foresight vocabulary as enums) and the helpers that read a reply's names, ids and texts
(see :mod:`analogist.foresight.llm`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from analogist.errors import AnalogistError
from analogist.foresight.event import (
    DOMAINS,
    POSITIONS,
    SCALES,
    mechanism_definitions,
)
from analogist.foresight.filter import normalize_name
from analogist.signature import EDGE_TYPES

MAX_NAME = 200
MAX_NAMES = 8


# -- schema ----------------------------------------------------------------------------------
def _obj(props: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "required": list(props),
                           "additionalProperties": False}
    if description:
        out["description"] = description
    return out


def _str(description: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string"}
    if description:
        out["description"] = description
    return out


def _strs(description: str) -> dict[str, Any]:
    return {"type": "array", "items": _str(), "description": description}


def _enum(values: Iterable[str], description: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "enum": list(values)}
    if description:
        out["description"] = description
    return out


def event_schema(*, vocabulary_enum: bool = True) -> dict[str, Any]:
    """The JSON Schema of one proposed event (OpenAI strict-mode friendly, a fresh dict).

    With ``vocabulary_enum`` (the default) a factor's mechanism is an enum of the foresight
    vocabulary (:func:`mechanism_definitions`), so the client's own validation and repair rounds
    already reject an unknown class; with False it is a free string (for servers that choke on
    long enums) and the unknown classes are dropped after the call with a note.
    """
    mech = (_enum(mechanism_definitions(), "a mechanism class of the vocabulary")
            if vocabulary_enum else _str("a mechanism class of the vocabulary, exactly as written"))
    factor = _obj({
        "id": _str("upper-case factor id: a letter, then letters, digits or '_'"),
        "position": _enum(POSITIONS),
        "mechanism": mech,
        "text": _str("one concrete sentence: who, what, when"),
        "time": {"type": ["string", "null"],
                 "description": "YYYY, YYYY-MM or YYYY-MM-DD when the factor became active, "
                                "or null"},
    })
    link = _obj({"cause": _str("a factor id of this event"), "edge": _enum(EDGE_TYPES),
                 "effect": _str("a factor id of this event")})
    return _obj({
        "name": _str("the event's usual name"),
        "aliases": _strs("other names of the event"),
        "start": _str("YYYY, YYYY-MM or YYYY-MM-DD (leading '-' for BCE)"),
        "end": {"type": ["string", "null"], "description": "YYYY, YYYY-MM or YYYY-MM-DD, or null"},
        "domain": _enum(DOMAINS),
        "scale": _enum(SCALES),
        "place": _strs("countries or cities"),
        "description": _str("two to four concrete sentences: what happened"),
        "part_of_names": _strs("names of larger events this one belongs to"),
        "factors": {"type": "array", "items": factor},
        "links": {"type": "array", "items": link},
    })


def generate_schema(k: int = 3, *, vocabulary_enum: bool = True) -> dict[str, Any]:
    """The answer: ``{"events": [event, ...]}`` with at most ``k`` events (stated in the
    description; extra events are cut after the call)."""
    return _obj({"events": {"type": "array", "items": event_schema(vocabulary_enum=vocabulary_enum),
                            "description": f"at most {k} historical events"}})


# -- helpers ---------------------------------------------------------------------------------
def _s(x: Any, limit: int) -> str:
    return " ".join(x.split())[:limit] if isinstance(x, str) else ""


def _names(raw: Any, limit: int = MAX_NAMES) -> list[str]:
    out: list[str] = []
    for x in raw if isinstance(raw, list) else []:
        s = _s(x, MAX_NAME)
        if s and s not in out:
            out.append(s)
    return out[:limit]


def _factor_id(raw: Any) -> str:
    """``"trust run"`` → ``TRUST_RUN``; an id that cannot be made valid → ``""``."""
    s = "".join(c if c.isascii() and c.isalnum() else "_" for c in str(raw).strip().upper())
    s = "_".join(p for p in s.split("_") if p)
    while s and not s[0].isalpha():
        s = s[1:]
    return s[:64]


def _slug(name: str) -> str:
    return normalize_name(name).replace(" ", "-")[:60].strip("-") or "event"


def parametric_id(name: str) -> str:
    """``parametric-<slug>-<hash8>`` for an event name (stable across rounds and runs)."""
    key = normalize_name(name) or name.casefold().strip()
    return f"parametric-{_slug(name)}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:8]}"


def _vocab_lines(defs: Mapping[str, str]) -> str:
    return "\n".join(f"- {k}: {v}" for k, v in defs.items())


def _error_text(e: ValidationError | AnalogistError) -> str:
    if isinstance(e, ValidationError):
        return "; ".join(str(x.get("msg", "")) for x in e.errors()[:2])[:300]
    return str(e)[:300]
