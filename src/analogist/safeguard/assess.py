"""Assessment: whether one stated similarity, difference or applicability caveat counts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from analogist.safeguard.claims import Claim, read_claims
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
from analogist.safeguard.rules import MIN_CAVEAT_CHARS_ZH, MIN_CAVEAT_WORDS, MIN_ZH_CONTRAST


@dataclass(frozen=True)
class ItemAssessment:
    """How one stated similarity or difference was read: ``ok`` whether it counts, ``concepts``
    the vocabulary terms it names explicitly, ``reason`` why it does (not) count, ``claims`` the
    relational claims read from it (:func:`analogist.safeguard.claims.read_claims`)."""

    text: str
    ok: bool
    concepts: tuple[Concept, ...]
    reason: str
    claims: tuple[Claim, ...] = ()

    def names(self) -> str:
        named = [c.name for c in self.concepts if c.kind != "institution"]
        if named:
            return ", ".join(named)
        mapped = [f"≈{c.relation}" for c in self.claims if c.counts and c.relation]
        return ", ".join(dict.fromkeys(mapped)) or "-"


_VAGUE = ("too vague: names no relation between roles and no causal mechanism (like 'both "
          "involve money')")
_SURFACE = ("a surface resemblance (time, place, size, names or topic), not a structural "
            "parallel")


def assess_similarity(text: str) -> ItemAssessment:
    """Whether a stated similarity is structural and causally relevant: it counts when one of
    its claims states a relation between real participants or names a mechanism class (see
    :mod:`analogist.safeguard.claims`); cue words alone, topics, negated relations, non-causal
    relations and surface features do not count."""
    t = (text or "").strip()
    if not t:
        return ItemAssessment(t, False, (), "empty")
    cs = tuple(c for c in concepts_in(t) if c.kind != "institution")
    if _LABEL_PAT.search(t):
        return ItemAssessment(t, False, cs, "shares only a word or label, not a relation "
                                            "between roles")
    claims = tuple(read_claims(t))
    structural = tuple(c for c in claims if c.counts)
    if structural:
        named = tuple(sorted({c for cl in structural for c in cl.concepts
                              if c.kind != "institution" and c.causal}))
        return ItemAssessment(t, True, named, "names " + "; ".join(
            _describe(cl) for cl in structural), structural)
    status = {c.status for c in claims}
    if "negated" in status:
        neg = next(c for c in claims if c.negated)
        return ItemAssessment(t, False, cs, f"states that a relation did not hold ({neg.verb} is "
                                            "negated), not a relation both cases share", claims)
    if "topic" in status:
        return ItemAssessment(t, False, cs, "a surface resemblance (a shared topic, not a "
                                            "relation between roles)", claims)
    if "placeholder" in status:
        return ItemAssessment(t, False, cs, "too vague: cue words without participants (like "
                                            "'one thing caused another'): names no relation "
                                            "between roles", claims)
    if "noncausal" in status:
        rel = [c.name for c in cs if c.kind == "relation"]
        verb = next(c.verb for c in claims if c.status == "noncausal")
        return ItemAssessment(t, False, cs, f"names a relation ({rel[0] if rel else verb}) that "
                                            "is not causal", claims)
    if "surface" in status or _SURFACE_PAT.search(t):
        return ItemAssessment(t, False, (), _SURFACE, claims)
    acts = [c.verb for c in claims if c.status == "event" and c.verb and c.participants]
    if acts:
        return ItemAssessment(t, False, (), f"too vague: names an act or event ({acts[0]}) that "
                                            "maps onto no relation or mechanism, not a causal "
                                            "relation between roles", claims)
    return ItemAssessment(t, False, (), _VAGUE, claims)


def _describe(c: Claim) -> str:
    named = [x for x in c.concepts if x.kind != "institution" and x.causal]
    if named:
        return ", ".join(f"{x.name} ({'mechanism' if x.kind == 'mechanism' else 'causal relation'})"
                         for x in named)
    return f"a causal relation ({c.describe()})"


# words that name structure in general, not a structure: not a substantive difference alone
_GENERIC = re.compile(r"\b(?:mechanisms?|structures?|structural|causal(?:ity)?|institutions?|"
                      r"institutional|factors?|dynamics?|context)\b|机制|结构|因素|情况",
                      re.IGNORECASE)


def assess_difference(text: str) -> ItemAssessment:
    """Whether a stated difference is substantive: it names a mechanism, a causal relation or a
    structural institution, states a causal contrast, or states a relation between real
    participants; token acknowledgements, surface differences and generic words ("the mechanism
    is different") are not substantive."""
    t = (text or "").strip()
    if not t:
        return ItemAssessment(t, False, (), "empty")
    low = _norm(t).strip(" .!;。！")
    if any(low == tok or (tok in low and len(_TOKEN.findall(low)) <= len(_TOKEN.findall(tok)) + 3)
           for tok in _TOKEN_DIFFS):
        return ItemAssessment(t, False, (), "a token acknowledgement, not a substantive "
                                            "difference")
    # "capital city", "reserve team": surface phrases that would otherwise read as institutions
    cs = concepts_in(_GENERIC.sub(" ", re.sub(r"\bcapital cit(?:y|ies)\b", "city", t,
                                              flags=re.IGNORECASE)))
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
    claims = tuple(read_claims(_GENERIC.sub(" ", t)))
    stated = tuple(c for c in claims if c.status in ("structural", "noncausal", "negated") or (
        c.lang == "zh" and c.status == "event" and len(_CJK.findall(c.text)) >= MIN_ZH_CONTRAST))
    if stated:
        return ItemAssessment(t, True, (), "states a structural contrast (" + "; ".join(
            c.describe() for c in stated) + ")", claims)
    return ItemAssessment(t, False, (), "not substantive: names no structural or causal "
                                        "difference", claims)


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
