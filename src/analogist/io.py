"""Reading files safely: size limits, JSON/YAML with line numbers and nesting limits, pydantic
errors made readable."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from analogist.errors import AnalogistError, InputTooLargeError, ParseError

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Default ceiling for any one input file (descriptions, signatures, vocabularies)."""

MAX_DEPTH = 64
"""Deepest nesting of arrays/objects accepted in JSON or YAML input (a Signature needs 4)."""

MAX_VALUES = 1_000_000
"""Most values one parsed document may hold (counting each use of a YAML alias again)."""

_YAML_BRACKET = re.compile(r"[\[\]{}\n]")
_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}\n]')


def read_text(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Read a UTF-8 text file, refusing files over ``max_bytes`` and non-text content."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise AnalogistError("file not found", source=str(p)) from None
    except OSError as e:
        raise AnalogistError(f"cannot read file: {e.strerror}", source=str(p)) from None
    if p.is_dir():
        raise AnalogistError("is a directory, expected a file", source=str(p))
    if size > max_bytes:
        raise InputTooLargeError(
            f"file is {size} bytes, over the limit of {max_bytes} bytes", source=str(p))
    data = p.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ParseError("not valid UTF-8 text", source=str(p), line=line) from None
    if "\x00" in text:
        raise ParseError("contains NUL bytes; expected text", source=str(p),
                         line=text[: text.index("\x00")].count("\n") + 1)
    return text


def parse_structured(text: str, *, source: str | None = None, fmt: str | None = None,
                     prechecked: bool = False) -> Any:
    """Parse JSON or YAML text (``fmt`` 'json'/'yaml'; guessed from ``source`` when None).
    ``prechecked`` (JSON only): the text was depth-checked when it was written (a stored row),
    so neither the bracket scan before parsing nor the depth walk after it is made; malformed
    text, or text too deep for the parser, is still refused in one line."""
    if fmt is None:
        suffix = Path(source).suffix.lower() if source else ""
        fmt = "yaml" if suffix in (".yaml", ".yml") else "json"
    too_deep = f"nested deeper than {MAX_DEPTH} levels of arrays/objects"
    if fmt == "json":
        if not prechecked:
            json_depth_check(text, source=source)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ParseError(f"malformed JSON: {e.msg} (column {e.colno})", source=source,
                             line=e.lineno) from None
        except RecursionError:
            raise ParseError(too_deep, source=source) from None
        except TypeError:
            raise ParseError(f"expected JSON text, got {type(text).__name__}",
                             source=source) from None
        if not prechecked:
            check_depth(data, source=source)
        return data
    _yaml_flow_depth_check(text, source)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ParseError(f"malformed YAML: {problem}", source=source,
                         line=(mark.line + 1) if mark is not None else None) from None
    except RecursionError:
        raise ParseError(too_deep, source=source) from None
    check_depth(data, source=source)
    return data


def json_depth_check(text: str, *, source: str | None = None, max_depth: int = MAX_DEPTH
                     ) -> None:
    """Refuse JSON text whose arrays/objects nest deeper than ``max_depth``, naming the line,
    before any parser recurses into it (a scan over brackets outside strings; no recursion)."""
    _bracket_depth_check(_JSON_TOKEN, text, source, max_depth)


def _bracket_depth_check(tokens: re.Pattern[str], text: str, source: str | None,
                         max_depth: int) -> None:
    depth, line = 0, 1
    for m in tokens.finditer(text):
        t = m.group()
        if t == "\n":
            line += 1
        elif t in "[{":
            depth += 1
            if depth > max_depth:
                raise ParseError(f"nested deeper than {max_depth} levels of arrays/objects",
                                 source=source, line=line)
        elif t in "]}" and depth:
            depth -= 1


def _yaml_flow_depth_check(text: str, source: str | None) -> None:
    """Refuse YAML whose brackets nest deeper than :data:`MAX_DEPTH` before the parser sees it
    (its scanner is quadratic in the flow depth). Quotes are not tracked — an apostrophe in a
    plain scalar would derail that — so brackets inside strings count too; text needing 65
    unclosed brackets in a row is not a description."""
    _bracket_depth_check(_YAML_BRACKET, text, source, MAX_DEPTH)


def check_depth(value: Any, *, source: str | None = None, max_depth: int = MAX_DEPTH,
                max_values: int = MAX_VALUES) -> None:
    """Refuse a parsed document nested deeper than ``max_depth`` or holding more than
    ``max_values`` values (YAML aliases are counted at every use, so an alias bomb or a
    self-referencing node is refused too). Iterative: no recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        v, d = stack.pop()
        seen += 1
        if seen > max_values:
            raise ParseError(f"more than {max_values} values (YAML aliases expand at every "
                             "use)", source=source)
        if isinstance(v, (dict, list)):
            if d >= max_depth:
                raise ParseError(f"nested deeper than {max_depth} levels of arrays/objects",
                                 source=source)
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))


def load_structured(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> Any:
    return parse_structured(read_text(path, max_bytes=max_bytes), source=str(path))


def validation_error(e: ValidationError, *, source: str | None = None, prefix: str = "",
                     cls: type[AnalogistError] = AnalogistError) -> AnalogistError:
    """Turn a pydantic ValidationError into one AnalogistError naming the first bad field."""
    errs = e.errors()
    first = errs[0] if errs else {"loc": (), "msg": str(e)}
    loc = ".".join(str(x) for x in first.get("loc", ()))
    field = ".".join(x for x in (prefix, loc) if x) or None
    msg = first.get("msg", "invalid value")
    more = f" (and {len(errs) - 1} more problem(s))" if len(errs) > 1 else ""
    return cls(f"{msg}{more}", source=source, field=field)
