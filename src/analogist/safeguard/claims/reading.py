"""The claim reader's entry points: a text read as claims (cached), and whether two claims restate
each other (see :mod:`analogist.safeguard.claims`)."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from analogist.safeguard.claims.chinese import _read_zh
from analogist.safeguard.claims.english import _read_en
from analogist.safeguard.claims.mapping import _mapped, _vector
from analogist.safeguard.claims.model import DEFAULT_PARAMS, Claim, ClaimReaderParams
from analogist.safeguard.claims.words import _lang
from analogist.safeguard.lexicon import _LABEL_PAT, concepts_in


def read_claims(text: str, *, params: ClaimReaderParams = DEFAULT_PARAMS) -> list[Claim]:
    """The claims ``text`` states, one per predicate (English) or clause (Chinese); a text with
    no predicate is one claim (a named mechanism, or nothing). Structural claims that name no
    vocabulary term are mapped onto the nearest one by the embedder."""
    return list(_read_cached((text or "").strip(), params))


@lru_cache(maxsize=4096)
def _read_cached(t: str, params: ClaimReaderParams) -> tuple[Claim, ...]:
    if not t:
        return ()
    if _LABEL_PAT.search(t):
        return (Claim(t, _lang(t), "label", concepts=tuple(concepts_in(t))),)
    claims = _read_zh(t) if _lang(t) == "zh" else _read_en(t)
    return tuple(_mapped(c, t, params) for c in claims)


def restates(a: Claim, b: Claim, *, params: ClaimReaderParams = DEFAULT_PARAMS) -> bool:
    """Whether structural claim ``b`` states what ``a`` already states: the same named
    mechanisms, the same participants in the same direction, or near-identical text (cosine of
    the bundled embedder, computed only when the first two do not decide)."""
    if a.mechanisms() and a.mechanisms() == b.mechanisms():
        return True
    if a.mechanisms() != b.mechanisms():
        return False
    if a.cause and a.effect and (_head(a.cause), _head(a.effect)) == (_head(b.cause),
                                                                      _head(b.effect)):
        return True
    return float(np.dot(_vector(a.text), _vector(b.text))) >= params.restate_cosine


def _head(phrase: str | None) -> str:
    words = re.findall(r"[a-z\u3400-\u9fff]+", (phrase or "").lower())
    return words[-1] if words else ""

