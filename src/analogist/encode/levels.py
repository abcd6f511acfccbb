"""Levels and the fix operator (stages 6-7)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from analogist.encode.lexicon import _EDGE_WORDS, _FIX_OPENERS
from analogist.encode.params import EncoderParams
from analogist.index.embed import Embedder
from analogist.vocabulary import Vocabulary


class _LevelWriter:
    """Mixin of :class:`~analogist.encode.deterministic.DeterministicEncoder`: levels and the fix operator (stages 6-7)."""

    params: EncoderParams
    vocab: Vocabulary
    embedder: Embedder | None
    nlp: Any

    @staticmethod
    def _fix_sentences(sents: list[Any]) -> dict[int, int]:
        """Sentence index → character offset (in the document) where its fix operator starts."""
        out: dict[int, int] = {}
        for si, sent in enumerate(sents):
            for rx in _FIX_OPENERS:
                m = rx.search(sent.text)
                if m and m.end() < len(sent.text.rstrip(" .")):
                    out[si] = sent.start_char + m.end()
                    break
        return out

    def _fix_operator(self, sents: list[Any], fix_at: dict[int, int], tags: dict[str, str],
                      mentions: dict[str, Counter[str]]
                      ) -> tuple[str | None, dict[int, list[tuple[int, int, str]]]]:
        """The first fix sentence's operator with role mentions replaced by tags, and the
        replaced spans per sentence (for L1).

        A role mention is any entity phrase the role was read from in the narrative (matched
        on the surface, case-insensitively, longest first, with a preceding article), so a
        parse error inside the fix sentence does not lose the mention."""
        spans: dict[int, list[tuple[int, int, str]]] = {}
        op: str | None = None
        phrases = sorted({(ph, tags[h]) for h, cnt in mentions.items() if h in tags
                          for ph in cnt if ph.strip()}, key=lambda x: (-len(x[0]), x[0]))
        for si in sorted(fix_at):
            sent, start = sents[si], fix_at[si]
            base = sent.start_char
            text = sent.text
            kept: list[tuple[int, int, str]] = []
            for ph, tg in phrases:
                rx = re.compile(r"(?<![\w-])(?:(?:the|a|an)\s+)?" + re.escape(ph).replace(
                    r"\ ", r"\s+") + r"(?![\w-])", re.I)
                for m in rx.finditer(text, start - base):
                    a, b = m.start() + base, m.end() + base
                    if all(b <= x or a >= y for x, y, _ in kept):
                        kept.append((a, b, tg))
            kept.sort()
            spans[si] = kept
            if op is None:
                parts, pos = [], start
                for a, b, tg in kept:
                    parts.append(text[pos - base:a - base].lower())
                    parts.append(tg)
                    pos = b
                parts.append(text[pos - base:].lower())
                op = " ".join("".join(parts).split()).rstrip(" .;:!") or None
        return op, spans

    @staticmethod
    def _clip_sentences(sents: list[str], limit: int) -> tuple[str, int]:
        out: list[str] = []
        size = 0
        for s in sents:
            add = len(s) + (1 if out else 0)
            if size + add > limit:
                if not out:
                    return s[:limit].rsplit(" ", 1)[0], 1
                return " ".join(out), len(out)
            out.append(s)
            size += add
        return " ".join(out), 0

    def _definition(self, name: str, proposed: dict[str, str]) -> str:
        if name in proposed:
            return "the roles stand in a relation"
        p = self.vocab.get(name)
        return p.definition if p is not None and p.definition else "the roles stand in a relation"

    def _principle(self, chain: list[dict[str, Any]], rels: list[tuple[str, ...]],
                   proposed: dict[str, str]) -> str | None:
        if chain:
            adj: dict[str, list[dict[str, Any]]] = {}
            for e in chain:
                adj.setdefault(e["cause"], []).append(e)
            best: list[dict[str, Any]] = []

            def walk(atom: str, path: list[dict[str, Any]], seen: set[str]) -> None:
                nonlocal best
                if len(path) > len(best):
                    best = list(path)
                if len(path) >= 6:
                    return
                for e in adj.get(atom, []):
                    if e["effect"] not in seen:
                        walk(e["effect"], [*path, e], seen | {e["effect"]})

            for e in chain:
                walk(e["cause"], [], {e["cause"]})
            pred = lambda a: a[:a.index("(")]  # noqa: E731
            text = "a state where " + self._definition(pred(best[0]["cause"]), proposed)
            for e in best:
                verb = _EDGE_WORDS[e["edge"]]
                if e["sign"] == -1:
                    verb = f"fails to {verb.rstrip('s')}" if e["edge"] != "masks" \
                        else "fails to hide"
                text += f" {verb} a state where " + self._definition(pred(e["effect"]),
                                                                        proposed)
            return text[:4000]
        typed = [r for r in rels if r[0] not in proposed]
        if not typed:
            return None
        names = list(dict.fromkeys(r[0] for r in typed))[:2]
        return "a structure in which " + "; and ".join(self._definition(n, proposed)
                                                       for n in names)
