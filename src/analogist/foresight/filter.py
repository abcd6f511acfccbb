"""The self-analogy filter (seed 001, Algorithm 1 line 9 and the five hard rejection rules of
line 18).

A candidate analogy must reside in U \\ {E_T} in the strict sense: it may not collapse to the
target. The five hard rules, read from names, aliases, time spans and part-of links:

1. ``alias`` — the candidate *is* the target under another name: some name or alias of one equals
   (case, punctuation and a leading article folded) a name or alias of the other, or the two name
   sets have the same content words;
2. ``sub_event`` — the candidate is (transitively) part of the target (Tunisian Revolution for the
   Arab Spring);
3. ``super_set`` — the target is (transitively) part of the candidate (the Iraq War for the 2003
   invasion);
4. ``generic_descriptor`` — the candidate names a category, not an event ("a banking crisis",
   "financial contagion"): every content word is a generic category word and nothing marks a
   particular event (no year, no capitalised proper noun after the first word);
5. ``scope_mismatch`` — the candidate's scale class (incident … era) is two or more classes away
   from the target's (one battle for a whole war).

One rule beyond Algorithm 1, because seed 001 Table 5 names its failures ("same-war echo",
"proximity bias") and Theorem 5 needs independent analogies:

6. ``same_history`` — the candidate shares a larger event with the target (two battles of one war)
   or is a direct causal precursor or consequence of it (``related``): it is part of the target's
   own history, not an independent case.

Rule 5 is not applied when either scale is unknown (events read back from a memory store).
Events from an LLM's own knowledge carry no part-of links; for them rules 2, 3 and 6 can only fire
through names that resolve to corpus events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from analogist.errors import AnalogistError
from analogist.foresight.event import SCALES, Corpus, Event, normalize_name

__all__ = ["RULES", "Rejection", "check_candidate", "independence_groups", "is_generic_descriptor",
           "normalize_name"]

RULES: tuple[str, ...] = ("alias", "sub_event", "super_set", "generic_descriptor",
                          "scope_mismatch", "same_history")

_STOP = {"the", "a", "an", "of", "in", "and", "on", "at", "to", "for", "s"}
GENERIC_WORDS = frozenset(["crisis", "crises", "crash", "collapse", "panic", "bubble", "boom", "bust", "mania", "war", "wars", "conflict", "battle", "revolution", "revolutions", "uprising", "rebellion", "revolt", "protest", "protests", "riot", "riots", "coup", "pandemic", "epidemic", "outbreak", "recession", "depression", "downturn", "default", "financial", "economic", "banking", "bank", "banks", "currency", "debt", "fiscal", "monetary", "market", "markets", "stock", "civil", "political", "military", "social", "sovereign", "credit", "liquidity", "contagion", "shock", "shocks", "disaster", "accident", "failure", "failures", "scandal", "famine", "insurgency", "invasion", "occupation", "regime", "change", "succession", "assassination", "strike", "strikes", "movement", "unrest", "instability", "inflation", "hyperinflation", "deflation", "run", "runs", "bailout", "reform", "reforms", "great", "major", "global", "world", "regional", "local", "national", "international", "modern", "historical", "typical", "classic", "generic", "some", "any", "similar", "other", "event", "events", "case", "cases", "situation", "episode", "period", "era", "wave"])


def _content_words(name: str) -> frozenset[str]:
    return frozenset(w for w in normalize_name(name).split() if w not in _STOP)


def is_generic_descriptor(name: str) -> bool:
    """True when ``name`` names a category rather than one event (see rule 4)."""
    words = re.findall(r"[A-Za-z]+|\d+", name)
    if not words:
        return True
    if any(w.isdigit() for w in words):
        return False
    content = [w for w in words if w.lower() not in _STOP]
    if not content:
        return True
    if any(w[0].isupper() for w in content[1:]) or (content[0][0].isupper()
                                                      and content[0] != words[0]):
        return False
    return all(w.lower() in GENERIC_WORDS for w in content)


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a candidate was discarded."""

    candidate: str
    rule: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"candidate": self.candidate, "rule": self.rule, "reason": self.reason}


def _ancestors(ev: Event, corpus: Corpus | None) -> set[str]:
    if corpus is None:
        return set(ev.part_of)
    known = set(corpus.ids())
    out = set(ev.part_of)
    for p in list(ev.part_of):
        if p in known:
            out |= corpus.ancestors(p)
    return out


def check_candidate(target: Event, cand: Event, corpus: Corpus | None = None, *,
                    rules: Iterable[str] = RULES) -> Rejection | None:
    """The first rule (in :data:`RULES` order) that rejects ``cand`` for ``target``, or None."""
    active = set(rules)
    unknown = active - set(RULES)
    if unknown:
        raise AnalogistError(f"unknown filter rule(s) {', '.join(sorted(unknown))}; expected "
                             f"some of {', '.join(RULES)}")
    cid = cand.event_id
    if "alias" in active:
        if cid == target.event_id:
            return Rejection(cid, "alias", "the candidate is the target itself")
        tn = {normalize_name(n) for n in target.names()}
        cn = {normalize_name(n) for n in cand.names()}
        common = tn & cn
        if common:
            return Rejection(cid, "alias", f"shares the name {sorted(common)[0]!r} with the target")
        tw = {_content_words(n) for n in target.names()}
        for n in cand.names():
            w = _content_words(n)
            if w and w in tw:
                return Rejection(cid, "alias", f"{n!r} has the same words as a name of the target")
    t_anc = _ancestors(target, corpus)
    c_anc = _ancestors(cand, corpus)
    if "sub_event" in active and target.event_id in c_anc:
        return Rejection(cid, "sub_event", f"{cand.name} is part of {target.name}")
    if "super_set" in active and cid in t_anc:
        return Rejection(cid, "super_set", f"{target.name} is part of {cand.name}")
    if "generic_descriptor" in active and is_generic_descriptor(cand.name):
        return Rejection(cid, "generic_descriptor",
                         f"{cand.name!r} names a category of events, not one event")
    if "scope_mismatch" in active and cand.scale is not None and target.scale is not None:
        gap = abs(SCALES.index(cand.scale) - SCALES.index(target.scale))
        if gap >= 2:
            return Rejection(cid, "scope_mismatch",
                             f"scale {cand.scale!r} is {gap} classes from the target's "
                             f"{target.scale!r}")
    if "same_history" in active:
        shared = t_anc & c_anc
        if shared:
            return Rejection(cid, "same_history",
                             f"both are part of {sorted(shared)[0]}: not an independent case")
        if cid in target.related or target.event_id in cand.related:
            return Rejection(cid, "same_history", f"{cand.name} is a direct precursor or "
                             f"consequence of {target.name}: not an independent case")
    return None


def independence_groups(events: Iterable[Event], corpus: Corpus | None = None) -> dict[str, str]:
    """Group analogies that may not count as independent of one another: aliases, part-of
    chains, shared larger events and direct ``related`` links are merged (union-find); each
    event id maps to its group's representative (the smallest id in the group)."""
    evs = list(events)
    parent = {e.event_id: e.event_id for e in evs}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for i, a in enumerate(evs):
        for b in evs[i + 1:]:
            rej = check_candidate(a, b, corpus, rules=("alias", "sub_event", "super_set",
                                                       "same_history"))
            if rej is not None:
                union(a.event_id, b.event_id)
    return {e.event_id: find(e.event_id) for e in evs}
