"""Roles: grouping mentions into entities (stage 4)."""

from __future__ import annotations

from typing import Any

from analogist.encode.clauses import _Mention
from analogist.encode.lexicon import _singular
from analogist.encode.params import EncoderParams
from analogist.index.embed import Embedder
from analogist.vocabulary import Vocabulary


class _RoleReader:
    """Mixin of :class:`~analogist.encode.deterministic.DeterministicEncoder`: roles: grouping mentions into entities (stage 4)."""

    params: EncoderParams
    vocab: Vocabulary
    embedder: Embedder | None
    nlp: Any

    @staticmethod
    def _split_heads(ms: list[_Mention], coargs: list[list[_Mention]] | None = None) -> None:
        """Mentions are grouped into entities by head noun. Two phrases of one head are two
        entities when their noun modifiers differ ("the print job", "the backup job"), or when
        they are arguments of one clause ("the print job has priority over the backup job": one
        thing does not stand in a relation to itself); adjectives and participles alone ("the
        printed / outdated timetable") describe one entity. A shorter phrase ("the job") joins
        the first full phrase it ends."""
        conflict: set[str] = set()
        for group in coargs or []:
            seen: dict[str, str] = {}
            for m in group:
                if m.resolved:
                    continue
                if m.head in seen and seen[m.head] != m.phrase:
                    conflict.add(m.head)
                seen.setdefault(m.head, m.phrase)
        def key_of(m: _Mention) -> str:
            # one participant in the singular and the plural ("a child", "the children") is
            # one phrase
            if m.head in conflict:
                return m.phrase
            words = m.core.split(" ")
            return " ".join([*words[:-1], _singular(words[-1])])

        by_head: dict[str, list[str]] = {}
        for m in sorted(ms, key=lambda m: m.tok):
            key = key_of(m)
            if key not in by_head.setdefault(m.head, []):
                by_head[m.head].append(key)
        remap: dict[tuple[str, str], str] = {}
        for h, phs in by_head.items():
            full = [p for p in phs if not any(q != p and q.endswith(" " + p) for q in phs)]
            if len(full) < 2:
                continue
            for p in phs:
                owner = p if p in full else next(q for q in full if q.endswith(" " + p))
                remap[(h, p)] = f"{h}|{owner}"
        for m in ms:
            key = remap.get((m.head, key_of(m)))
            if key is not None:
                m.head = key
