"""Roles: grouping mentions into entities (stage 4)."""

from __future__ import annotations

from typing import Any

from analogist.encode.clauses import _Mention
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
    def _split_heads(ms: list[_Mention]) -> None:
        """Entities are grouped by head noun, except when one head carries two or more distinct
        noun compounds ("the print job" and "the backup job"): then each compound is its own
        entity, and a shorter one ("the job") joins the first compound it ends. Adjectives and
        participles never split an entity: "the printed timetable", "the outdated timetable"
        and "the timetable" are one participant (coreference by head noun, beyond recency)."""
        by_head: dict[str, list[str]] = {}
        for m in sorted(ms, key=lambda m: m.tok):
            k = m.key or m.head
            if k not in by_head.setdefault(m.head, []):
                by_head[m.head].append(k)
        remap: dict[tuple[str, str], str] = {}
        for h, phs in by_head.items():
            full = [p for p in phs if not any(q != p and q.endswith(" " + p) for q in phs)]
            if len(full) < 2:
                continue
            for p in phs:
                owner = p if p in full else next(q for q in full if q.endswith(" " + p))
                remap[(h, p)] = f"{h}|{owner}"
        for m in ms:
            key = remap.get((m.head, m.key or m.head))
            if key is not None:
                m.head = key
