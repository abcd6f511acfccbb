"""Versioned prompt files: load by name and version, render with safe substitution.

Prompts live in ``analogist/llm/prompts/<name>.<version>.md`` (they ship in the wheel). The first
line of each file is ``version: <id>`` (e.g. ``version: writer_roles.v1``); the rest is the
prompt text. The id is recorded in provenance, so a signature says which prompt wrote it.

Rendering replaces ``{name}`` placeholders (identifiers only) in one pass, and turns ``{{`` /
``}}`` into literal braces, as :meth:`str.format` does. Unlike ``str.format`` it never interprets
anything inside a substituted value (a value containing ``{x}`` stays as it is), never evaluates
attribute or index lookups, and leaves any other brace (JSON examples) untouched. A placeholder
without a value is an :class:`~analogist.errors.AnalogistError` naming the prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from analogist.errors import AnalogistError

__all__ = ["DATA_TAGS", "Prompt", "available_prompts", "load_prompt", "neutralise", "render",
           "wrap_data"]

_VERSION_LINE = re.compile(r"^version:\s*(\S+)\s*$")
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_VERSION = re.compile(r"^v[0-9][a-z0-9_.-]*$")

DATA_TAGS: tuple[str, ...] = ("episode", "previous_level", "analogy", "target", "abstract",
                              "candidate")
"""Tag names that delimit untrusted DATA in user messages (see :func:`wrap_data`)."""
_DATA_TAG = re.compile(r"<\s*/?\s*(?:" + "|".join(DATA_TAGS) + r")\b[^<>]*>?", re.IGNORECASE)


def neutralise(text: str) -> str:
    """``text`` with every opening or closing data delimiter (``<episode>``, ``</episode>``,
    ``< /Episode >``, ``<candidate n="2">`` …) made inert: its angle brackets become ``&lt;`` and
    ``&gt;``, so untrusted text can never close (or open) a delimited block."""
    return _DATA_TAG.sub(lambda m: m.group(0).replace("<", "&lt;").replace(">", "&gt;"), text)


def wrap_data(tag: str, text: str, **attrs: str | int) -> str:
    """``<tag ...>`` + newline + the neutralised text + newline + ``</tag>``."""
    if tag not in DATA_TAGS:
        raise AnalogistError(f"unknown data tag {tag!r}; expected one of {', '.join(DATA_TAGS)}")
    extra = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f"<{tag}{extra}>\n{neutralise(text)}\n</{tag}>"


@dataclass(frozen=True)
class Prompt:
    """One prompt file: ``name`` (``writer_roles``), ``version`` (the file's id line, e.g.
    ``writer_roles.v1``) and the raw ``text`` (placeholders not yet filled)."""

    name: str
    version: str
    text: str

    def render(self, **values: Any) -> str:
        return render(self.text, values, source=f"prompt {self.version}")


def render(template: str, values: dict[str, Any], *, source: str = "prompt") -> str:
    """Fill ``{name}`` placeholders of ``template`` from ``values`` in one pass (see module doc)."""

    def sub(m: re.Match[str]) -> str:
        tok = m.group(0)
        if tok == "{{":
            return "{"
        if tok == "}}":
            return "}"
        key = m.group(1)
        if key not in values:
            raise AnalogistError(f"no value for placeholder {{{key}}}", source=source)
        return str(values[key])

    return _PLACEHOLDER.sub(sub, template)


@lru_cache(maxsize=64)
def load_prompt(name: str, version: str = "v1") -> Prompt:
    """The prompt ``name`` at ``version`` (``v1`` …) from the bundled prompt files."""
    if not _NAME.match(name) or not _VERSION.match(version):
        raise AnalogistError(f"bad prompt name or version {name!r}, {version!r}: expected a "
                             f"lower-case name and a version such as 'v1'")
    fname = f"{name}.{version}.md"
    res = resources.files("analogist.llm").joinpath("prompts", fname)
    if not res.is_file():
        have = ", ".join(available_prompts()) or "none"
        raise AnalogistError(f"no prompt file {fname} (available: {have})",
                             source="analogist/llm/prompts")
    raw = res.read_text(encoding="utf-8")
    first, _, body = raw.partition("\n")
    m = _VERSION_LINE.match(first)
    if m is None:
        raise AnalogistError("the first line must be 'version: <id>'",
                             source=f"analogist/llm/prompts/{fname}", line=1)
    return Prompt(name=name, version=m.group(1), text=body.strip() + "\n")


def available_prompts() -> list[str]:
    """``name.version`` of every bundled prompt file, sorted."""
    d = resources.files("analogist.llm").joinpath("prompts")
    if not d.is_dir():
        return []
    return sorted(p.name[:-3] for p in d.iterdir() if p.name.endswith(".md"))
