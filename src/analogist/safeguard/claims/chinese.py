"""Reading Chinese claims by their function words: causal constructions, negators, placeholders
and topic frames matched as patterns, clause by clause (see :mod:`analogist.safeguard.claims`)."""

from __future__ import annotations

import re
from typing import Any

from analogist.safeguard.claims.model import Claim
from analogist.safeguard.claims.words import (
    _ZH_CAUSAL,
    _ZH_FRAME,
    _ZH_LINK,
    _ZH_NEG,
    _ZH_NONCAUSAL,
    _ZH_PLACEHOLDERS,
    _ZH_TOPIC,
)
from analogist.safeguard.lexicon import _CJK, _SURFACE_PAT, concepts_in


def _zh_content(s: str) -> str:
    for ph in _ZH_PLACEHOLDERS:
        s = s.replace(ph, "")
    s = _ZH_CAUSAL.sub("", s)
    s = _ZH_FRAME.sub("", s)
    return "".join(_CJK.findall(s)) + "".join(re.findall(r"[A-Za-z0-9]+", s))


def _read_zh(text: str) -> list[Claim]:
    out: list[Claim] = []
    for clause in [x for x in re.split(r"[。；;！？!?]", text) if x.strip()]:
        out.append(_read_zh_clause(clause.strip()))
    return out


def _read_zh_clause(clause: str) -> Claim:
    cs = tuple(concepts_in(clause))
    mech = tuple(c for c in cs if c.kind == "mechanism")
    marks = sorted([*_ZH_CAUSAL.finditer(clause), *_ZH_LINK.finditer(clause)],
                   key=lambda m: m.start())
    cases_subject = bool(re.match(r"^(?:两者|二者|两次|它们|双方)?(?:的[\u3400-\u9fff]{1,6})?"
                                  r"(?:也)?都", clause))
    # the first marker that has real participants on both sides (or the cases as subject)
    best = None
    for m in marks:
        lc, rc = _zh_content(clause[:m.start()]), _zh_content(clause[m.end():])
        if len(rc) >= 2 and (len(lc) >= 2 or cases_subject):
            best = m
            break
    m = best or (marks[0] if marks else None)
    left, right = (clause[:m.start()], clause[m.end():]) if m else (clause, "")
    kw: dict[str, Any] = {"verb": m.group(0).strip("，,") if m else None,
                          "cause": left.strip("，, ") or None,
                          "effect": right.strip("，, ") or None, "concepts": cs}
    kw["participants"] = tuple(x for x in (kw["cause"], kw["effect"]) if x)
    if m and _ZH_NEG.search(left[-8:]):
        return Claim(clause, "zh", "negated", negated=True, **kw)
    if _ZH_TOPIC.search(clause):
        return Claim(clause, "zh", "topic", **kw)
    if _SURFACE_PAT.search(clause) and not mech and best is None:
        return Claim(clause, "zh", "surface", **kw)
    if mech:
        return Claim(clause, "zh", "structural", causal=True, relation=mech[0].name,
                     relation_kind="mechanism", **kw)
    if best is not None:
        rel = [c for c in cs if c.kind == "relation"]
        return Claim(clause, "zh", "structural", causal=True,
                     relation=rel[0].name if rel else None,
                     relation_kind="relation" if rel else None, **kw)
    if m:
        return Claim(clause, "zh", "placeholder", **kw)
    if _ZH_NONCAUSAL.search(clause) and len(_zh_content(clause)) >= 4:
        return Claim(clause, "zh", "noncausal", **kw)
    if _SURFACE_PAT.search(clause):
        return Claim(clause, "zh", "surface", **kw)
    return Claim(clause, "zh", "event", **kw)


