"""Small helpers of the LLM writer shared with the critic and the parametric channel: the
vocabulary as prompt lines, how well a phrase is grounded in a text, clipping, token usage, and
the text clean-ups (see :mod:`analogist.encode.llm_writer`)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from analogist.llm.base import (
    LLMResult,
    Usage,
)
from analogist.signature import (
    MAX_TEXT,
)
from analogist.vocabulary import Vocabulary

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("""a an the and or but of to in on at by for with from into onto over under
as is are was were be been being it its this that these those there their they them he she his
her we our you your i me my not no yes so than then too very can could would should will shall
may might must do does did done has have had having which who whom whose what when where why how
all any each every some such own same other more most less least only also just about after
before again against between through during above below up down out off""".split())  # noqa: SIM905


def vocabulary_lines(vocab: Vocabulary) -> str:
    """``name/arity: definition`` per line, declared and proposed terms alike, in name order."""
    lines = []
    for p in sorted(vocab, key=lambda p: p.name):
        arity = f"{p.arity}+" if p.n_ary else str(p.arity)
        lines.append(f"- {p.name}/{arity}: {p.definition or '(proposed, no definition)'}")
    return "\n".join(lines)


def _content_words(text: str) -> set[str]:
    out = set()
    for w in _WORD.findall(text.lower()):
        if len(w) < 3 or w in _STOP:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") else w)
    return out


def grounding(phrase: str, text: str) -> float:
    """Share of ``phrase``'s content words that occur in ``text`` (0–1; a trailing plural ``s``
    ignored). A phrase without content words counts as grounded when it occurs verbatim
    (case-insensitive) in ``text``."""
    words = _content_words(phrase)
    if not words:
        return 1.0 if phrase.strip() and phrase.strip().lower() in text.lower() else 0.0
    have = _content_words(text)
    return sum(w in have for w in words) / len(words)


def clip01(x: Any, default: float = 0.0) -> float:
    """``x`` as a float clipped to [0, 1]; ``default`` when it is not a finite number."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return default
    v = float(x)
    if not math.isfinite(v):
        return default
    return min(1.0, max(0.0, v))


def usage_of(results: Sequence[LLMResult]) -> dict[str, Any]:
    """The accounting of ``results`` (the provider usage delta of these calls) as a dict."""
    u = Usage()
    for r in results:
        u.add(r)
    return u.to_json()


def _s(x: Any, limit: int = MAX_TEXT) -> str:
    return (x if isinstance(x, str) else "").strip()[:limit]


def _opt(x: Any) -> str | None:
    s = _s(x)
    return s or None


def _dename(text: str, names: dict[str, str]) -> tuple[str, bool]:
    """Replace each name (case-insensitive, whole words, longest first) by its tag."""
    changed = False
    for name in sorted(names, key=len, reverse=True):
        if len(name) < 3:
            continue
        pat = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])",
                         re.IGNORECASE)
        text, n = pat.subn(names[name], text)
        changed = changed or n > 0
    return text, changed

