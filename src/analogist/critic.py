"""The independent critic (seed 000 §7 change 2, §8).

After the mapper has aligned a source with a target, a *separate* LLM call looks for the breaks the
mapper missed. Information separation is the point, not a second opinion (self-critique by the
same model on the same context mostly agrees with itself — Huang et al., ICLR 2024): the critic
sees **only** the two signatures and the role mapping, never the mapper's reasoning, its scores,
the judge's likeness/difference table or the transfer decision. This is enforced by the call
signature — :meth:`Critic.review` takes two :class:`~analogist.signature.Signature` objects and a
``dict[str, str]`` and nothing else.

What the critic sees of each signature (our choice): ``kind``, the roles (tag → generic
description), the relations, the causal chain (edge, sign, status), the violated invariant, the
symptom, the fix operator, and the abstraction levels **L2 and L3**. It does not see L0/L1 or the
``surface`` (domain, entity names), nor ``provenance`` or ``verified``: the question is whether
the *structure* carries over, and surface text would invite the surface-similarity judgement the
design is trying to avoid.

The critic must name the strongest disanalogy: the schema requires a non-empty string, and a
blank one (only whitespace) is re-asked once; a second blank answer is an
:class:`~analogist.llm.base.LLMResponseError`. Without an LLM, :func:`critic_or_skip` returns a
verdict ``skipped`` with :data:`~analogist.llm.base.NO_LLM_REASON`.

Fail closed: a critic that was asked and did not give a verdict — the call errored, timed out,
ran out of budget or answered unparseably — is a verdict ``failed`` (:meth:`CriticVerdict.failed`,
reason ``"critic failed: …"``), and :func:`analogist.judge.with_critic` withholds the transfer on
it exactly as on a ``reject``. Only a critic that was never configured is ``skipped``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from analogist.errors import AnalogistError
from analogist.llm.base import (
    NO_LLM_REASON,
    LLMNotConfigured,
    LLMProvider,
    LLMResponseError,
    LLMResult,
    Message,
    Usage,
)
from analogist.llm.prompts import load_prompt, wrap_data
from analogist.llm.schemas import critic_schema
from analogist.signature import Signature

__all__ = ["FAILED_PREFIX", "Critic", "CriticVerdict", "critic_or_skip", "review_or_fail",
           "signature_view"]

Verdict = Literal["accept", "reject", "uncertain", "skipped", "failed"]
FAILED_PREFIX = "critic failed: "


def signature_view(sig: Signature, levels: tuple[str, ...] = ("L2", "L3")) -> dict[str, Any]:
    """The structural view of ``sig`` an LLM judge is shown: kind, roles, relations, causal
    chain, invariant, symptom, fix and the given abstraction ``levels`` — no surface, no L0/L1,
    no provenance, no episode id."""
    out: dict[str, Any] = {
        "kind": sig.kind,
        "roles": {k: sig.roles[k] for k in sorted(sig.roles)},
        "relations": [a.text() for a in sig.relations],
        "causal_chain": [f"{e.cause.text()} {e.edge} {e.effect.text()}"
                         f" (sign {'+' if e.sign > 0 else '-'}, {e.status})"
                         for e in sig.causal_chain],
    }
    for f in ("violated_invariant", "symptom", "fix_operator"):
        v = getattr(sig, f)
        if v is not None:
            out[f] = v
    for lv in levels:
        v = getattr(sig.levels, lv)
        if v:
            out[lv] = v
    return out


@dataclass
class CriticVerdict:
    """The critic's verdict: ``accept`` | ``reject`` | ``uncertain`` (or ``skipped`` with a
    ``reason`` when no LLM is configured, or ``failed`` with a ``reason`` when the critic was
    asked and gave no verdict), the strongest disanalogy, other breaks, the critic's
    confidence (0–1), the model and the usage of the call(s)."""

    verdict: Verdict
    strongest_disanalogy: str
    breaks: list[str] = field(default_factory=list)
    confidence: float = 0.0
    model: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None

    @classmethod
    def skipped(cls, reason: str = NO_LLM_REASON) -> CriticVerdict:
        return cls(verdict="skipped", strongest_disanalogy="", reason=reason)

    @classmethod
    def failed(cls, error: Exception | str, *, model: str = "",
               usage: dict[str, Any] | None = None) -> CriticVerdict:
        """The critic was asked and gave no verdict; ``reason`` is ``"critic failed: …"``."""
        text = " ".join(str(error).split())[:500] or type(error).__name__
        return cls(verdict="failed", strongest_disanalogy="", model=model,
                   usage=dict(usage or {}), reason=FAILED_PREFIX + text)

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "strongest_disanalogy": self.strongest_disanalogy,
                "breaks": list(self.breaks), "confidence": self.confidence,
                "model": self.model, "usage": dict(self.usage), "reason": self.reason}


def _clip(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x != x:
        return 0.0
    return min(1.0, max(0.0, float(x)))


class Critic:
    """An independent critic over one LLM provider (use a different model or temperature from
    the writer/mapper; the ``critic`` role of the LLM config defaults to temperature 0.7)."""

    def __init__(self, provider: LLMProvider | None, *, prompt_version: str = "v1",
                 temperature: float | None = None, max_tokens: int | None = None) -> None:
        if provider is None:
            raise LLMNotConfigured(NO_LLM_REASON)
        self.provider = provider
        self.prompt = load_prompt("critic", prompt_version)
        self.temperature = temperature
        self.max_tokens = max_tokens

    def messages(self, source: Signature, target: Signature,
                 role_map: dict[str, str]) -> list[Message]:
        """The request: the fixed system prompt, then the two signatures and the mapping."""
        for s, t in role_map.items():
            if s not in source.roles:
                raise AnalogistError(f"role map key {s!r} is not a role of source "
                                     f"{source.episode_id!r}", field="role_map")
            if t not in target.roles:
                raise AnalogistError(f"role map value {t!r} (for {s!r}) is not a role of "
                                     f"target {target.episode_id!r}", field="role_map")
        data = {"SOURCE": signature_view(source), "TARGET": signature_view(target),
                "MAPPING source role -> target role": dict(sorted(role_map.items()))}
        return [
            {"role": "system", "content": self.prompt.render()},
            {"role": "user", "content": "Review this analogy; find where it breaks.\n\n"
                + wrap_data("analogy", json.dumps(data, ensure_ascii=False, indent=1))},
        ]

    def review(self, source: Signature, target: Signature,
               role_map: dict[str, str]) -> CriticVerdict:
        """The critic's verdict on mapping ``source`` onto ``target`` by ``role_map``."""
        msgs = self.messages(source, target, role_map)
        results: list[LLMResult] = []
        schema = critic_schema()
        r = self.provider.complete_json(msgs, schema, schema_name="critic",
                                        temperature=self.temperature, max_tokens=self.max_tokens)
        results.append(r)
        d = r.data
        if not str(d.get("strongest_disanalogy", "")).strip():
            msgs = [*msgs, {"role": "assistant", "content": r.text or json.dumps(d)},
                    {"role": "user", "content":
                        "strongest_disanalogy is empty. Name the single most damaging "
                        "difference between source and target under this mapping (if the "
                        "analogy is sound, its weakest point), in one sentence, and answer "
                        "with the complete JSON again."}]
            r = self.provider.complete_json(msgs, schema, schema_name="critic",
                                            temperature=self.temperature,
                                            max_tokens=self.max_tokens)
            results.append(r)
            d = r.data
            if not str(d.get("strongest_disanalogy", "")).strip():
                raise LLMResponseError("the critic named no strongest disanalogy, even after "
                                       "one repair", field="strongest_disanalogy")
        verdict = d.get("verdict")
        if verdict not in ("accept", "reject", "uncertain"):
            raise LLMResponseError(f"critic verdict {verdict!r} is not accept, reject or "
                                   "uncertain", field="verdict")
        u = Usage()
        for x in results:
            u.add(x)
        breaks = [str(b).strip() for b in d.get("breaks") or [] if str(b).strip()]
        return CriticVerdict(verdict=verdict,
                             strongest_disanalogy=str(d["strongest_disanalogy"]).strip(),
                             breaks=breaks, confidence=_clip(d.get("confidence")),
                             model=r.model or str(self.provider.model), usage=u.to_json())


def review_or_fail(critic: Any, source: Signature, target: Signature,
                   role_map: dict[str, str]) -> CriticVerdict:
    """``critic.review(...)``, or a ``failed`` verdict when it raises an
    :class:`~analogist.errors.AnalogistError` (an LLM error, a timeout, a spent budget, an
    unusable answer) — never an exception and never a silent pass."""
    try:
        return critic.review(source, target, role_map)
    except AnalogistError as e:
        model = str(getattr(getattr(critic, "provider", None), "model", "") or "")
        return CriticVerdict.failed(e, model=model, usage=getattr(e, "usage", None) or {})


def critic_or_skip(provider: LLMProvider | None, source: Signature, target: Signature,
                   role_map: dict[str, str]) -> CriticVerdict:
    """:meth:`Critic.review` when ``provider`` is configured (a ``failed`` verdict when the call
    fails); otherwise a ``skipped`` verdict whose ``reason`` is :data:`NO_LLM_REASON`."""
    if provider is None:
        return CriticVerdict.skipped()
    return review_or_fail(Critic(provider), source, target, role_map)
