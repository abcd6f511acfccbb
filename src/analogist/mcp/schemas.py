"""The tools' argument types and JSON Schemas, and one-line validation messages."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ValidationError, WithJsonSchema

from analogist.app import json_schema

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
