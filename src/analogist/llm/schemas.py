"""JSON Schemas of every structured LLM call (OpenAI strict-mode friendly).

Every object schema has ``additionalProperties: false`` and lists all its properties as
``required``; optional values are expressed as ``["string", "null"]``. Only keywords that strict
structured-output modes accept are used (type, enum, items, properties, required,
additionalProperties, minLength, description). Each function returns a fresh dict, so callers may
not share state through them.

The schemas constrain shape, not truth: the callers still check every value (role tags, declared
roles, vocabulary terms, grounding) because a model can return schema-valid nonsense.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analogist.signature import EDGE_TYPES, KNOWN_KINDS

__all__ = [
    "SCHEMA_NAMES",
    "check_desurface_schema",
    "check_faithfulness_schema",
    "critic_schema",
    "parametric_schema",
    "writer_l1_schema",
    "writer_l3_schema",
    "writer_roles_schema",
    "writer_structure_schema",
]

SCHEMA_NAMES: tuple[str, ...] = (
    "writer_roles", "writer_l1", "writer_structure", "writer_l3", "critic", "parametric",
    "check_faithfulness", "check_desurface")
"""The ``schema_name`` each call sends (scripted test replies are routed by it)."""


def _obj(props: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props,
                           "required": list(props), "additionalProperties": False}
    if description:
        out["description"] = description
    return out


def _str(description: str | None = None, *, min_length: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string"}
    if min_length is not None:
        out["minLength"] = min_length
    if description:
        out["description"] = description
    return out


def _nullable_str(description: str) -> dict[str, Any]:
    return {"type": ["string", "null"], "description": description}


def _confidence() -> dict[str, Any]:
    return {"type": "number", "description": "0 to 1"}


def _atom() -> dict[str, Any]:
    return _obj({"predicate": _str("vocabulary term"),
                 "args": {"type": "array", "items": _str("a declared role tag")}})


def _edge() -> dict[str, Any]:
    return _obj({
        "cause": _atom(),
        "edge": {"type": "string", "enum": list(EDGE_TYPES)},
        "effect": _atom(),
        "sign": {"type": "integer", "enum": [1, -1]},
        "status": {"type": "string", "enum": ["observed", "inferred"]},
    })


def _structure_props() -> dict[str, Any]:
    return {
        "relations": {"type": "array", "items": _atom()},
        "causal_chain": {"type": "array", "items": _edge()},
        "violated_invariant": _nullable_str("the broken assumption, with role tags, or null"),
        "symptom": _nullable_str("how the problem showed itself, or null"),
        "fix_operator": _nullable_str("the fix as an operation on roles, or null"),
    }


def writer_roles_schema() -> dict[str, Any]:
    """Call 1 of the writer: kind, domain, roles (+ entity), other entities, L0, confidence."""
    role = _obj({"tag": _str("short role tag, e.g. SRC"),
                 "description": _str("the role's function, no names"),
                 "entity": _str("the thing in the episode playing the role, in its words")})
    return _obj({
        "kind": _str("one of " + ", ".join(KNOWN_KINDS)),
        "domain": _str("two or three words"),
        "roles": {"type": "array", "items": role},
        "entities": {"type": "array", "items": _str()},
        "L0": _str("faithful concrete summary"),
        "confidence": _confidence(),
    })


def writer_l1_schema() -> dict[str, Any]:
    """Call 2: L1, the L0 events with names replaced by role tags."""
    return _obj({"L1": _str("L0 with names replaced by role tags")})


def writer_structure_schema() -> dict[str, Any]:
    """Call 3: L2 text and structure, plus proposed terms with definitions."""
    term = _obj({"name": _str("new predicate name"),
                 "definition": _str("one-line definition"),
                 "arity": {"type": "integer", "description": "number of role arguments"}})
    return _obj({"L2": _str("the mechanism with role tags"), **_structure_props(),
                 "proposed_terms": {"type": "array", "items": term},
                 "confidence": _confidence()})


def writer_l3_schema() -> dict[str, Any]:
    """Call 4: L3, the principle, from L2 only."""
    return _obj({"L3": _str("the principle, no names, no role tags")})


def critic_schema() -> dict[str, Any]:
    """The independent critic's verdict; ``strongest_disanalogy`` may not be empty."""
    return _obj({
        "verdict": {"type": "string", "enum": ["accept", "reject", "uncertain"]},
        "strongest_disanalogy": _str("the most damaging difference, one sentence", min_length=1),
        "breaks": {"type": "array", "items": _str()},
        "confidence": _confidence(),
    })


def parametric_schema() -> dict[str, Any]:
    """Analogues proposed from the model's own knowledge (the parametric channel)."""
    role = _obj({"tag": _str("role tag of the analogue"), "description": _str("function"),
                 "entity": _str("the concrete thing playing the role")})
    pair = _obj({"target_role": _str("a target role tag"),
                 "analogue_role": _str("the analogue role tag playing the same part")})
    analogue = _obj({
        "title": _str(), "domain": _str(), "description": _str("what happened, concretely"),
        "kind": _str("one of " + ", ".join(KNOWN_KINDS)),
        "roles": {"type": "array", "items": role},
        "mapping": {"type": "array", "items": pair},
        **_structure_props(),
        "mechanism": _str("why the analogy holds, one sentence"),
        "L2": _str("the mechanism with role tags"),
        "L3": _str("the principle, no names"),
    })
    return _obj({"analogues": {"type": "array", "items": analogue}})


def check_faithfulness_schema(n_candidates: int) -> dict[str, Any]:
    """Pick the candidate (1-based number) the abstract was written from."""
    return _obj({"choice": {"type": "integer", "enum": list(range(1, n_candidates + 1))}})


def check_desurface_schema(domains: Sequence[str]) -> dict[str, Any]:
    """Guess the domain, one of ``domains``."""
    return _obj({"domain": {"type": "string", "enum": list(domains)}})
