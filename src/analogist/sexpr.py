"""A small, strict S-expression reader with line numbers.

Reads the Lisp subset that the reference SME's ``.dgr`` and ``.vcb`` files use: lists, symbols
(folded to lower case, as the Lisp reader does), strings, integers and floats, ``'x`` quotes,
``;`` line comments and ``#| ... |#`` block comments (nestable). Everything else is a
:class:`~analogist.errors.ParseError` naming the file and line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analogist.errors import ParseError

MAX_DEPTH = 200


class SList(list):  # type: ignore[type-arg]
    """A parsed list; ``line`` is the line of its opening parenthesis."""

    line: int = 0


class LispString(str):
    """A string literal (as opposed to a symbol, which is a plain ``str``)."""

    __slots__ = ()


_DELIMS = set("()\"';")


def parse(text: str, *, source: str | None = None) -> list[Any]:
    """Parse every top-level form in ``text``.

    One pass over the characters with the open lists on a stack; the tokens that span several
    characters are read by named steps: :func:`_after_block_comment`, :func:`_string_literal`
    and :func:`_symbol_end` (then :func:`_atom`)."""
    forms: list[Any] = []
    n = len(text)
    i = 0
    line = 1
    stack: list[SList] = []

    def err(msg: str, at_line: int | None = None) -> ParseError:
        return ParseError(msg, source=source, line=at_line if at_line is not None else line)

    def emit(x: Any) -> None:
        if stack:
            stack[-1].append(x)
        else:
            forms.append(x)

    pending_quote: list[int] = []  # stack depths at which a quote awaits its datum

    def finish_datum(x: Any) -> Any:
        while pending_quote and pending_quote[-1] == len(stack):
            pending_quote.pop()
            q = SList(["quote", x])
            q.line = line
            x = q
        return x

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c in " \t\r\f\v":
            i += 1
        elif c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "#" and i + 1 < n and text[i + 1] == "|":
            i, line = _after_block_comment(text, i, line, err)
        elif c == "(":
            if len(stack) >= MAX_DEPTH:
                raise err(f"nesting deeper than {MAX_DEPTH} levels")
            lst = SList()
            lst.line = line
            stack.append(lst)
            i += 1
        elif c == ")":
            if not stack:
                raise err("unexpected ')' with no open list")
            if pending_quote and pending_quote[-1] == len(stack):
                raise err("quote ' with nothing after it")
            lst = stack.pop()
            emit(finish_datum(lst))
            i += 1
        elif c == "'":
            pending_quote.append(len(stack))
            i += 1
        elif c == '"':
            i, line, s = _string_literal(text, i, line, err)
            emit(finish_datum(s))
        elif c == "#":
            raise err(f"unsupported reader syntax {text[i:i + 2]!r}")
        else:
            j = _symbol_end(text, i, err)
            tok = text[i:j]
            emit(finish_datum(_atom(tok)))
            i = j
    if stack:
        inner, outer = stack[-1].line, stack[0].line
        where = f" (inside the form opened on line {outer})" if outer != inner else ""
        raise err(f"unclosed '(' opened on line {inner}{where}", inner)
    if pending_quote:
        raise err("quote ' with nothing after it")
    return forms


_Err = Callable[..., ParseError]


def _after_block_comment(text: str, i: int, line: int, err: _Err) -> tuple[int, int]:
    """Skip the (nestable) ``#| ... |#`` comment opening at ``i``: the index after it and the
    line there; unterminated is an error on the line it opened."""
    n = len(text)
    depth = 1
    start = line
    i += 2
    while i < n and depth:
        if text.startswith("|#", i):
            depth -= 1
            i += 2
        elif text.startswith("#|", i):
            depth += 1
            i += 2
        else:
            if text[i] == "\n":
                line += 1
            i += 1
    if depth:
        raise err("unterminated block comment #| ... |#", start)
    return i, line


def _string_literal(text: str, i: int, line: int, err: _Err) -> tuple[int, int, LispString]:
    """Read the string literal opening at ``i`` (a backslash takes the next character as it
    is): the index after its closing quote, the line there, and the string; unterminated is an
    error on the line it opened."""
    n = len(text)
    start = line
    i += 1
    buf = []
    while i < n and text[i] != '"':
        if text[i] == "\\" and i + 1 < n:
            i += 1
        if text[i] == "\n":
            line += 1
        buf.append(text[i])
        i += 1
    if i >= n:
        raise err("unterminated string", start)
    i += 1
    return i, line, LispString("".join(buf))


def _symbol_end(text: str, i: int, err: _Err) -> int:
    """The end of the symbol or number token starting at ``i`` (whitespace or a delimiter ends
    it; ``|`` quoting is refused)."""
    n = len(text)
    j = i
    while j < n and not text[j].isspace() and text[j] not in _DELIMS:
        if text[j] == "|":
            raise err("'|' symbol quoting is not supported")
        j += 1
    return j


def _atom(tok: str) -> Any:
    try:
        return int(tok)
    except ValueError:
        pass
    if any(ch.isdigit() for ch in tok):
        try:
            return float(tok)
        except ValueError:
            pass
    return tok.lower()

