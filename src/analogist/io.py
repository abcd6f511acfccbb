"""Reading files safely: size limits, JSON/YAML with line numbers, pydantic errors made readable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from analogist.errors import AnalogistError, InputTooLargeError, ParseError

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Default ceiling for any one input file (descriptions, signatures, vocabularies)."""


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


def parse_structured(text: str, *, source: str | None = None, fmt: str | None = None) -> Any:
    """Parse JSON or YAML text (``fmt`` 'json'/'yaml'; guessed from ``source`` when None)."""
    if fmt is None:
        suffix = Path(source).suffix.lower() if source else ""
        fmt = "yaml" if suffix in (".yaml", ".yml") else "json"
    if fmt == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise ParseError(f"malformed JSON: {e.msg} (column {e.colno})", source=source,
                             line=e.lineno) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ParseError(f"malformed YAML: {problem}", source=source,
                         line=(mark.line + 1) if mark is not None else None) from None


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
