"""The texts the abstract-text channel embeds: levels L1–L3 with surface words replaced by role
tags."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from analogist.signature import Signature

__all__ = ["ABSTRACT_LEVELS", "abstract_levels", "abstract_texts"]

ABSTRACT_LEVELS: tuple[str, ...] = ("L1", "L2", "L3")
"""The levels embedded by the abstract-text channel (L0 is concrete, hence surface)."""

_STOP_WORDS = """
a an the this that these those its it their his her our your my some any each every all both
one ones other another such same own thing things something someone somebody anything whatever
who whom whose which what where when how why and or but nor of for to in on at by from with
without into onto over under about as than then via per between among within across through
is are was were be been being has have had do does did not no
"""
_STOP = frozenset(_STOP_WORDS.split())
_BREAK_WORDS = """
that which who whom whose where when while whilst because if unless until though although
of for to in on at by from with without into onto over under about as than via per between
among within across through against after before during but nor is are was were be been being
around near beside behind along upon inside outside toward towards beyond below above off like
has have had can could will would should may might must
"""
_BREAK = frozenset(_BREAK_WORDS.split())
_DETERMINERS = frozenset(["a", "an", "the", "this", "that", "these", "those", "its", "their", "his", "her", "our", "your", "my", "some", "any", "each", "every", "whose"])
_GENERIC_HEADS_WORDS = """
service system number case part unit process team group arm section line item set level value
state side area type kind form way point thing piece stage step
"""
_GENERIC_HEADS = frozenset(_GENERIC_HEADS_WORDS.split())
"""Heads too generic to stand alone as a role phrase (``chat service`` is replaced; a bare
``service`` is not, since it names other things in the same text as often as the role)."""
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*|[^\sA-Za-z]")


def _singular(word: str) -> str | None:
    """A crude singular of a plural last word (``alarms`` → ``alarm``); None when not plural."""
    low = word.lower()
    if len(low) > 4 and low.endswith("ies"):
        return word[:-3] + "y"
    if len(low) > 3 and low.endswith("s") and not low.endswith(("ss", "us", "is")):
        return word[:-1]
    return None


def _head_phrases(description: str) -> list[str]:
    """The head noun phrase of a role description and its tails ending in the head noun.

    ``"authoritative source"`` → ``["authoritative source", "source"]``;
    ``"consumer that makes a claim"`` → ``["consumer"]``; ``"the bank account"`` →
    ``["bank account", "account"]``; ``"fund holding its bonds"`` → ``["fund"]``. A heuristic
    (no part-of-speech tagger): the first run of words, leading determiners dropped, up to a
    relative pronoun, preposition, auxiliary, determiner or punctuation, or up to an ``-ing`` /
    ``-ed`` word after a plural or before one of those; its last word is taken as the head noun.
    A plural head also yields the singular forms; a lone generic head (``service``, ``system``,
    …) is dropped.
    """
    toks = _TOKEN.findall(description)
    chunk: list[str] = []
    for i, tok in enumerate(toks):
        low = tok.lower()
        if not tok[0].isalpha() or low in _BREAK or (chunk and low in _DETERMINERS):
            if chunk:
                break
            continue
        if low in _STOP and not chunk:
            continue
        if chunk and low.endswith(("ing", "ed")):
            nxt = toks[i + 1].lower() if i + 1 < len(toks) else ""
            if (not nxt or not nxt[0].isalpha() or nxt in _BREAK or nxt in _STOP
                    or _singular(chunk[-1]) is not None):  # "funds holding cash"
                break
        chunk.append(tok)
    while chunk and chunk[-1].lower() in _STOP:
        chunk.pop()
    if not chunk or len(chunk[-1]) < 3:
        return []
    out = [" ".join(chunk[i:]) for i in range(len(chunk)) if chunk[i].lower() not in _STOP]
    sing = _singular(chunk[-1])
    if sing is not None:
        out += [p[: len(p) - len(chunk[-1])] + sing for p in out]
    return [p for p in out if " " in p or _stem(p) not in _GENERIC_HEADS]


def _entity_phrases(name: str) -> list[str]:
    """The entity's name, then (for a multi-word name) its last word, the likely head noun."""
    words = [w for w in _WORD.findall(name) if w.lower() not in _STOP]
    out = [" ".join(name.split())]
    if len(words) > 1 and len(words[-1]) >= 3:
        out.append(words[-1])  # the head: "the feed went stale" for entity "intel feed"
    return [p for p in out if p]


def _stem(word: str) -> str:
    return (_singular(word) or word).lower()


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text) if w.lower() not in _STOP and len(w) >= 3}


def _assign_role(name: str, sig: Signature) -> str | None:
    """The role an entity name most plausibly fills: shared content words with the role's tag
    (split at ``_``/``-``, counted twice) and description; None when no role or a tie."""
    st = _stems(name)
    scores: dict[str, int] = {}
    for tag, desc in sig.roles.items():
        tag_words = {_stem(w) for w in re.split(r"[_\-]+", tag) if len(w) >= 3}
        score = 2 * len(st & tag_words) + len(st & _stems(desc))
        if score:
            scores[tag] = score
    if not scores:
        return None
    best = max(scores.values())
    top = [t for t, v in scores.items() if v == best]
    return top[0] if len(top) == 1 else None


def _replacement_table(sig: Signature, entity_roles: Mapping[str, str] | None
                       ) -> dict[str, str]:
    """lower-cased phrase → tag. Entity names win over role-description phrases; a role phrase
    that heads more than one role is ambiguous and dropped."""
    table: dict[str, str] = {}
    role_phrase: dict[str, set[str]] = {}
    for tag in sorted(sig.roles):
        for p in _head_phrases(sig.roles[tag]):
            role_phrase.setdefault(p.lower(), set()).add(tag)
    for p, tags in role_phrase.items():
        if len(tags) == 1:
            table[p] = next(iter(tags))
    given = {" ".join(k.split()).lower(): v for k, v in (entity_roles or {}).items()}
    n_unassigned = 0
    for name in sig.surface.entities:
        if not name.strip():
            continue
        full, *heads = _entity_phrases(name)
        tag = given.get(full.lower()) or _assign_role(name, sig)
        if tag is None:
            n_unassigned += 1
            tag = f"E{n_unassigned}"
        table[full.lower()] = tag
        for p in heads:
            table.setdefault(p.lower(), tag)
    return table


def abstract_levels(sig: Signature, levels: Sequence[str] = ABSTRACT_LEVELS
                    ) -> tuple[str, ...]:
    """The levels among ``levels`` that :func:`abstract_texts` gives a text for (those the
    signature has, not blank), in the order of ``levels``, without writing the texts."""
    return tuple(lv for lv in levels
                 if (text := getattr(sig.levels, lv, None)) is not None and text.strip())


def _occurring(table: Mapping[str, str], texts: Sequence[str]) -> list[str]:
    """The phrases of ``table`` (lower-cased) that may occur in ``texts``: an ASCII phrase
    whose lower-cased form is in no ASCII text's lower-cased form cannot match there
    case-insensitively, so it is left out of the pattern (which then matches exactly as the
    pattern of every phrase would: a left-out alternative never matches). When a text is not
    ASCII, every phrase is kept (Unicode case folding relates some non-ASCII letters to ASCII
    ones)."""
    if not all(t.isascii() for t in texts):
        return list(table)
    low = [t.lower() for t in texts]
    return [p for p in table if not p.isascii() or any(p in t for t in low)]


def abstract_texts(sig: Signature, *, levels: Sequence[str] = ABSTRACT_LEVELS,
                   entity_roles: Mapping[str, str] | None = None) -> dict[str, str]:
    """The episode's abstract level texts with surface words replaced by role tags.

    Returns ``{level: text}`` for each of ``levels`` (default L1, L2, L3) that the signature has
    (absent or blank levels are skipped, not faked). In each text, whole-word and
    case-insensitively (plural ``s``/``es`` and possessive ``'s`` included):

    * each surface entity name (``sig.surface.entities``) becomes a role tag: the tag given for
      it in ``entity_roles`` (name → tag), else the one role whose description shares a content
      word with the name, else a placeholder ``E1``, ``E2``, … in surface order;
    * a multi-word entity's head word (its last word) is replaced the same way;
    * each role description's head noun phrase and its tails ending in the head noun (see
      :func:`_head_phrases`: ``"derived representation"`` → ``derived representation``,
      ``representation``) become that role's tag, unless the phrase heads more than one role.

    Longer phrases are replaced first. Pure and deterministic.
    """
    present = {lv: getattr(sig.levels, lv) for lv in abstract_levels(sig, levels)}
    if not present:
        return {}
    table = _replacement_table(sig, entity_roles)
    # only the phrases that occur go into the pattern: compiling one alternative per phrase of
    # the table cost more than the substitutions themselves
    phrases = _occurring(table, list(present.values()))
    if not phrases:
        return {lv: text.strip() for lv, text in present.items()}
    alts = "|".join(re.escape(p) for p in sorted(phrases, key=lambda s: (-len(s), s)))
    pattern = re.compile(rf"(?<![\w\-])({alts})(?:'s|es|s)?(?![\w\-])", re.IGNORECASE)

    def tag(m: re.Match[str]) -> str:
        return table.get(m.group(1).lower(), m.group(0))

    return {lv: pattern.sub(tag, text).strip() for lv, text in present.items()}
