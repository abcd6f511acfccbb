"""Bulk signature files read as a stream, one record at a time, with a per-record size limit.

Accepted shapes (by file suffix):

* ``.json`` — one signature object, a JSON array of them, or ``{"episodes": [...]}`` (other keys
  of that object are checked as JSON and ignored);
* ``.jsonl`` / ``.ndjson`` — JSON Lines: one signature object per line (blank lines skipped);
* ``.yaml`` / ``.yml`` — a YAML stream: each document one signature, a list of them or
  ``{episodes: [...]}``.

A file is never read whole: JSON is decoded record by record from a buffer refilled in chunks,
so a file of any size is accepted while each record is held to :data:`MAX_RECORD_BYTES`
(for YAML, whose documents are parsed whole, the limit applies to each record's JSON form).
Errors are :class:`~analogist.errors.ParseError` / :class:`~analogist.errors.InputTooLargeError`
naming the file, the record and the line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import yaml

from analogist.errors import AnalogistError, InputTooLargeError, ParseError
from analogist.io import MAX_DEPTH, check_depth

__all__ = ["BULK_SUFFIXES", "MAX_RECORD_BYTES", "iter_records"]

MAX_RECORD_BYTES = 1_000_000
"""Largest accepted record (the text of one signature), in bytes of its text."""

BULK_SUFFIXES = (".json", ".jsonl", ".ndjson", ".yaml", ".yml")
_CHUNK = 1 << 16
_WS = re.compile(r"[ \t\r\n]*")
_EPISODES = re.compile(r'\{[ \t\r\n]*"episodes"[ \t\r\n]*:[ \t\r\n]*\[')
_DECODER = json.JSONDecoder()


def iter_records(path: str | Path, *, max_record_bytes: int = MAX_RECORD_BYTES
                 ) -> Iterator[tuple[str, Any]]:
    """Yield ``(where, record)`` for each record of a bulk file (``where``: ``path`` for a file
    of one signature, else ``path[i]``), parsed but not validated."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in BULK_SUFFIXES:
        raise AnalogistError(f"expected a .json, .jsonl, .ndjson, .yaml or .yml file of "
                             f"signatures, got {suffix or 'no extension'!r}", source=str(p))
    if p.is_dir():
        raise AnalogistError("is a directory, expected a file", source=str(p))
    try:
        f = p.open(encoding="utf-8", newline="")
    except FileNotFoundError:
        raise AnalogistError("file not found", source=str(p)) from None
    except OSError as e:
        raise AnalogistError(f"cannot read file: {e.strerror}", source=str(p)) from None
    with f:
        try:
            if suffix == ".json":
                yield from _JsonStream(f, str(p), max_record_bytes).records()
            elif suffix in (".jsonl", ".ndjson"):
                yield from _json_lines(f, str(p), max_record_bytes)
            else:
                yield from _yaml_stream(f, str(p), max_record_bytes)
        except UnicodeDecodeError:
            raise ParseError("not valid UTF-8 text", source=str(p)) from None


def _too_large(source: str, i: int, line: int | None, size: int, limit: int) -> AnalogistError:
    return InputTooLargeError(f"record {i} is {size} bytes or more, over the limit of {limit} "
                              "bytes per record", source=source, line=line)


def _check_text(text: str, source: str, line: int) -> None:
    if "\x00" in text:
        raise ParseError("contains NUL bytes; expected text", source=source,
                         line=line + text[: text.index("\x00")].count("\n"))


class _JsonStream:
    """Record-by-record JSON decoding over a buffer refilled from the file."""

    def __init__(self, f: IO[str], source: str, limit: int) -> None:
        self.f, self.source, self.limit = f, source, limit
        self.buf = ""
        self.pos = 0
        self.line = 1  # line number of buf[0]
        self.eof = False

    def _more(self) -> bool:
        if self.eof:
            return False
        # chunks as large as a record may be: the buffer (kept a record ahead of the position)
        # is copied once per such chunk, not once per 64 KiB
        chunk = self.f.read(max(_CHUNK, self.limit))
        if not chunk:
            self.eof = True
            return False
        if "\x00" in chunk:  # (the line is counted only when there is one to name)
            _check_text(chunk, self.source, self.line + self.buf.count("\n"))
        # drop what has been consumed, keeping line numbers right
        self.line += self.buf.count("\n", 0, self.pos)
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        return True

    def _line_at(self, pos: int) -> int:
        return self.line + self.buf.count("\n", 0, pos)

    def _skip_ws(self) -> str:
        """The next non-blank character ('' at the end of the file)."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def _malformed(self, msg: str, pos: int) -> ParseError:
        line = self._line_at(pos)
        col = pos - (self.buf.rfind("\n", 0, pos) + 1) + 1
        return ParseError(f"malformed JSON: {msg} (column {col})", source=self.source, line=line)

    def _value(self, i: int) -> Any:
        """Decode one value at the current position. The buffer is first filled to more than
        the per-record limit past it (or to the end of the file), so a record within the limit
        is whole in it and a failure is either malformed text or a record over the limit."""
        while len(self.buf) - self.pos <= self.limit and self._more():
            pass
        try:
            value, end = _DECODER.raw_decode(self.buf, self.pos)
        except json.JSONDecodeError as e:
            if not self.eof and (e.pos >= len(self.buf) - 1 or e.msg.startswith("Unterminated")):
                raise _too_large(self.source, i, self._line_at(self.pos),
                                 len(self.buf) - self.pos, self.limit) from None
            raise self._malformed(e.msg, e.pos) from None
        except RecursionError:
            raise ParseError("JSON nested too deeply", source=self.source,
                             line=self._line_at(self.pos)) from None
        if end - self.pos > self.limit:
            raise _too_large(self.source, i, self._line_at(self.pos), end - self.pos,
                             self.limit)
        self.pos = end
        return value

    def _array(self, first: int) -> Iterator[Any]:
        """The elements of the array whose '[' was just consumed."""
        i = first
        if self._skip_ws() == "]":
            self.pos += 1
            return
        while True:
            if self._skip_ws() == "":
                raise self._malformed("unterminated array", self.pos)
            yield self._value(i)
            i += 1
            c = self._skip_ws()
            if c == ",":
                self.pos += 1
            elif c == "]":
                self.pos += 1
                return
            else:
                raise self._malformed("expected ',' or ']' after an array element", self.pos)

    def _end(self) -> None:
        if self._skip_ws() != "":
            raise self._malformed("extra data after the top-level value", self.pos)

    def records(self) -> Iterator[tuple[str, Any]]:
        c = self._skip_ws()
        if c == "[":
            self.pos += 1
            for i, rec in enumerate(self._array(0)):
                yield f"{self.source}[{i}]", rec
            self._end()
            return
        while len(self.buf) - self.pos < 64 and self._more():
            pass
        m = _EPISODES.match(self.buf, self.pos)
        if m is None:
            value = self._value(0)
            self._end()
            if isinstance(value, dict) and isinstance(value.get("episodes"), list):
                # {"other": ..., "episodes": [...]}: held whole, under the per-record limit
                for i, rec in enumerate(value["episodes"]):
                    yield f"{self.source}[{i}]", rec
                return
            if not isinstance(value, dict):
                raise AnalogistError("expected a signature object, a list of them or "
                                     "{\"episodes\": [...]}", source=self.source)
            yield self.source, value
            return
        self.pos = m.end()
        for i, rec in enumerate(self._array(0)):
            yield f"{self.source}[{i}]", rec
        # the rest of the object ("}" or ", ...}") must be JSON too; its other keys are ignored
        c = self._skip_ws()
        if c == ",":
            self.pos += 1
            start = self.pos
            self.buf = self.buf[:start - 1] + "{" + self.buf[start:]
            self.pos = start - 1
            rest = self._value(0)
            if not isinstance(rest, dict):
                raise self._malformed("expected the rest of the object", self.pos)
        elif c == "}":
            self.pos += 1
        else:
            raise self._malformed("expected ',' or '}' after the episodes list", self.pos)
        self._end()


def _json_lines(f: IO[str], source: str, limit: int) -> Iterator[tuple[str, Any]]:
    i = 0
    for n, line in enumerate(f, 1):
        _check_text(line, source, n)
        if not line.strip():
            continue
        if len(line.encode("utf-8", errors="surrogatepass")) > limit:
            raise _too_large(source, i, n, len(line), limit)
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise ParseError(f"malformed JSON: {e.msg} (column {e.colno})", source=source,
                             line=n) from None
        except RecursionError:
            raise ParseError("JSON nested too deeply", source=source, line=n) from None
        yield f"{source}[{i}]", value
        i += 1


def _yaml_stream(f: IO[str], source: str, limit: int) -> Iterator[tuple[str, Any]]:
    i = 0
    docs = yaml.safe_load_all(f)
    while True:
        try:
            doc = next(docs)
        except StopIteration:
            return
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            problem = getattr(e, "problem", None) or str(e).splitlines()[0]
            raise ParseError(f"malformed YAML: {problem}", source=source,
                             line=(mark.line + 1) if mark is not None else None) from None
        except RecursionError:
            raise ParseError(f"nested deeper than {MAX_DEPTH} levels of arrays/objects",
                             source=source) from None
        if doc is None:
            continue
        check_depth(doc, source=source)
        if isinstance(doc, dict) and isinstance(doc.get("episodes"), list):
            doc = doc["episodes"]
        recs = doc if isinstance(doc, list) else [doc]
        for rec in recs:
            try:
                size = len(json.dumps(rec, ensure_ascii=False, default=str))
            except (TypeError, ValueError, RecursionError):
                size = 0  # validation will say what is wrong with it
            if size > limit:
                raise _too_large(source, i, None, size, limit)
            yield f"{source}[{i}]", rec
            i += 1
