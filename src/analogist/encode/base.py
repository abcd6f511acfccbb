"""What every signature writer returns, and the helpers they share.

Two writers turn episode text into a :class:`~analogist.signature.Signature`:

* the **deterministic encoder** (:mod:`analogist.encode.deterministic`) — the embedded default,
  offline, no LLM;
* the **LLM writer** (:mod:`analogist.encode.llm_writer`) — a structured-output call sequence
  over any :class:`~analogist.llm.LLMProvider`.

Both see only the one episode's text (never another case: the defence against tailoring, seed
000 §4, §9) and both return an :class:`EncodeResult`.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from analogist.errors import AnalogistError, InputTooLargeError
from analogist.signature import Signature

#: Longest episode text a writer accepts (characters); longer input is refused, not truncated.
MAX_EPISODE_CHARS = 20_000


#: Largest share of control or undecodable characters an episode text may have.
MAX_CONTROL_SHARE = 0.01


def check_episode_text(text: Any, *, source: str | None = None,
                       max_control_share: float = MAX_CONTROL_SHARE) -> str:
    """Refuse what no writer can read; return ``text`` with whitespace normalised.

    Not a ``str``, empty or whitespace only, over :data:`MAX_EPISODE_CHARS` (refused, never
    truncated: :class:`~analogist.errors.InputTooLargeError`), binary-looking (a NUL byte, or
    more than ``max_control_share`` control/undecodable characters), or without a single letter —
    each an :class:`~analogist.errors.AnalogistError` naming ``source`` and what was expected.
    """
    src = source or "<text>"
    if not isinstance(text, str):
        raise AnalogistError(f"expected episode text as str, got {type(text).__name__}",
                             source=src)
    if not text.strip():
        raise AnalogistError("episode text is empty; expected at least one sentence",
                             source=src)
    if len(text) > MAX_EPISODE_CHARS:
        raise InputTooLargeError(
            f"episode text is {len(text)} characters, over the limit of {MAX_EPISODE_CHARS}; "
            f"split it into episodes (it is not truncated)", source=src)
    bad = sum(1 for c in text if (unicodedata.category(c) in ("Cc", "Cs", "Co", "Cn")
                                  and c not in "\t\n\r\f") or c == "\ufffd")
    if "\x00" in text or bad > max_control_share * len(text):
        raise AnalogistError(f"episode text looks binary ({bad} control or undecodable "
                             f"characters); expected natural-language text", source=src)
    if not any(c.isalpha() for c in text):
        raise AnalogistError("episode text has no letters; expected natural-language text",
                             source=src)
    return " ".join(text.split())


def source_hash(text: str) -> str:
    """Stable hash of an episode's source text (provenance): ``sha256:`` + 32 hex digits."""
    return "sha256-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Triple:
    """One ``(subject, verb, object)`` relation read from text (lower-case, lemmatised verb)."""

    subject: str
    verb: str
    object: str
    sentence: int = 0
    negated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"subject": self.subject, "verb": self.verb, "object": self.object,
                "sentence": self.sentence, "negated": self.negated}


@dataclass
class EncodeResult:
    """A written signature with the evidence and accounting behind it.

    ``writer`` — ``"deterministic"`` or ``"llm:<model>"``; ``confidence`` — the writer's own
    0–1 estimate (``None`` when it states none); ``proposed_terms`` — relation names the writer
    used that are not in the vocabulary, each with its one-line definition (recorded as
    ``proposed``); ``triples`` — the surface relations read from the text; ``links`` — one record
    per causal edge: the edge, the connective or verb that signalled it, the sentence, and its
    status (``observed`` when the text states it, ``inferred`` when the writer inferred it);
    ``notes`` — warnings and skipped steps; ``usage`` — LLM accounting (``None`` offline).
    """

    signature: Signature
    writer: str
    confidence: float | None = None
    proposed_terms: dict[str, str] = field(default_factory=dict)
    triples: list[Triple] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    usage: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"writer": self.writer, "confidence": self.confidence,
                "signature": self.signature.to_data(),
                "proposed_terms": dict(sorted(self.proposed_terms.items())),
                "triples": [t.to_json() for t in self.triples], "links": list(self.links),
                "notes": list(self.notes), "usage": self.usage}
