"""Assessment: whether one stated similarity, difference or applicability caveat counts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from analogist.safeguard.lexicon import (
    _BOILERPLATE_CAVEATS,
    _CJK,
    _CONDITION_PAT,
    _LABEL_PAT,
    _SURFACE_PAT,
    _TOKEN,
    _TOKEN_DIFFS,
    _WORD,
    Concept,
    _has_connective,
    _norm,
    concepts_in,
)
from analogist.safeguard.rules import MIN_CAVEAT_CHARS_ZH, MIN_CAVEAT_WORDS


@dataclass(frozen=True)
class ItemAssessment:
    """How one stated similarity or difference was read: ``ok`` whether it counts, ``concepts``
    what it names, ``reason`` why it does (not) count."""

    text: str
    ok: bool
    concepts: tuple[Concept, ...]
    reason: str

    def names(self) -> str:
        return ", ".join(c.name for c in self.concepts if c.kind != "institution") or "-"


def assess_similarity(text: str) -> ItemAssessment:
    """Whether a stated similarity is structural and causally relevant (see the module doc)."""
    t = (text or "").strip()
    if not t:
        return ItemAssessment(t, False, (), "empty")
    cs = tuple(c for c in concepts_in(t) if c.kind != "institution")
    if _LABEL_PAT.search(t):
        return ItemAssessment(t, False, cs, "shares only a word or label, not a relation "
                                            "between roles")
    causal = tuple(c for c in cs if c.causal)
    if causal:
        return ItemAssessment(t, True, causal, "names " + ", ".join(
            f"{c.name} ({'mechanism' if c.kind == 'mechanism' else 'causal relation'})"
            for c in causal))
    if cs:
        return ItemAssessment(t, False, cs, f"names a relation ({cs[0].name}) that is not "
                                            "causal")
    if _SURFACE_PAT.search(t):
        return ItemAssessment(t, False, (), "a surface resemblance (time, place, size, names "
                                            "or topic), not a structural parallel")
    return ItemAssessment(t, False, (), "too vague: names no relation between roles and no "
                                        "causal mechanism (like 'both involve money')")


def assess_difference(text: str) -> ItemAssessment:
    """Whether a stated difference is substantive (see the module docstring)."""
    t = (text or "").strip()
    if not t:
        return ItemAssessment(t, False, (), "empty")
    low = _norm(t).strip(" .!;。！")
    if any(low == tok or (tok in low and len(_TOKEN.findall(low)) <= len(_TOKEN.findall(tok)) + 3)
           for tok in _TOKEN_DIFFS):
        return ItemAssessment(t, False, (), "a token acknowledgement, not a substantive "
                                            "difference")
    # "capital city", "reserve team": surface phrases that would otherwise read as institutions
    cs = concepts_in(re.sub(r"\bcapital cit(?:y|ies)\b", "city", t, flags=re.IGNORECASE))
    if _LABEL_PAT.search(t) and not cs:
        return ItemAssessment(t, False, (), "trivial: differs only in a name or label")
    if cs:
        return ItemAssessment(t, True, tuple(cs), "names " + ", ".join(
            f"{c.name} ({c.kind})" if c.kind != "institution" else "a structural institution"
            for c in cs))
    if _has_connective(t) and len(_TOKEN.findall(t)) >= 6:
        return ItemAssessment(t, True, (), "states a causal contrast")
    if _SURFACE_PAT.search(t):
        return ItemAssessment(t, False, (), "trivial: a surface difference (time, place or "
                                            "names), not where the causal structure breaks")
    return ItemAssessment(t, False, (), "not substantive: names no structural or causal "
                                        "difference")


def _caveat_ok(text: str | None) -> tuple[bool, str]:
    t = (text or "").strip()
    if not t:
        return False, "applicability_caveat is missing"
    low = _norm(t).strip(" .!。")
    if any(low == b or (b in low and len(_TOKEN.findall(low)) <= len(_TOKEN.findall(b)) + 2)
           for b in _BOILERPLATE_CAVEATS):
        return False, f"applicability_caveat {t!r} is boilerplate, not a stated limit"
    n_zh = len(_CJK.findall(t))
    n_en = len(_WORD.findall(t.lower()))
    if n_en < MIN_CAVEAT_WORDS and n_zh < MIN_CAVEAT_CHARS_ZH:
        return False, f"applicability_caveat {t!r} is too short to state when the parallel holds"
    if not (_CONDITION_PAT.search(t) or concepts_in(t)):
        return False, (f"applicability_caveat {t!r} states no condition or mechanism under "
                       "which the parallel holds or fails")
    return True, "applicability_caveat states when the parallel holds"
