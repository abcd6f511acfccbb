"""The labelled parametric channel (seed 000 §7 change 5).

The LLM proposes analogues for a target from its own knowledge (analogical prompting). Every such
analogue is labelled ``parametric`` — always — so that "the model already knew this" stays visible
in every log line, and it is scored separately: it never enters memory hits or retrieval rankings.

Each :class:`ParametricAnalogue` carries a :class:`~analogist.signature.Signature` built from the
model's structured answer (episode id ``parametric-<n>-<hash>``, provenance writer
``llm:<model>``, ``verified`` False), so it can be judged exactly like a retrieved source
(``judge(analogue.signature, target)``). The model sees only the target's structural view
(:func:`analogist.critic.signature_view` with L1–L3: no L0, no surface names), so it must find
analogues by structure. Relations or edges over roles the analogue did not declare, and mapping
pairs naming undeclared roles, are dropped with a note; an analogue without a valid role is
dropped with a note.

Without an LLM, :func:`propose_parametric` returns no analogues and ``skipped`` =
:data:`~analogist.llm.base.NO_LLM_REASON`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from analogist.critic import signature_view
from analogist.encode.base import source_hash
from analogist.encode.llm_writer import ALLOWED_KINDS, usage_of, vocabulary_lines
from analogist.errors import AnalogistError, SignatureError
from analogist.judge import judge
from analogist.llm.base import NO_LLM_REASON, LLMProvider, Message
from analogist.llm.prompts import load_prompt, wrap_data
from analogist.llm.schemas import parametric_schema
from analogist.signature import (
    EDGE_TYPES,
    MAX_TAG,
    TAG_PATTERN,
    Signature,
    default_signature_vocabulary,
    validate_signature,
)
from analogist.vocabulary import Vocabulary

__all__ = ["PARAMETRIC_LABEL", "ParametricAnalogue", "ParametricResult", "judge_analogues",
           "propose_parametric"]

PARAMETRIC_LABEL = "parametric"
MAX_K = 10

_TAG_OK = re.compile(TAG_PATTERN)


@dataclass
class ParametricAnalogue:
    """One analogue from the model's own knowledge. ``label`` is always ``"parametric"``;
    ``mapping`` is target role → analogue role; ``entities`` analogue role → the concrete thing
    playing it; ``signature`` the analogue as a judgeable Signature."""

    title: str
    domain: str
    description: str
    mapping: dict[str, str]
    mechanism: str
    signature: Signature
    entities: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    label: str = PARAMETRIC_LABEL

    def __post_init__(self) -> None:
        if self.label != PARAMETRIC_LABEL:
            raise AnalogistError(f"a parametric analogue is labelled {PARAMETRIC_LABEL!r}, "
                                 f"not {self.label!r}", field="label")

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "title": self.title, "domain": self.domain,
                "description": self.description, "mapping": dict(self.mapping),
                "entities": dict(self.entities), "mechanism": self.mechanism,
                "signature": self.signature.to_data(), "notes": list(self.notes)}


@dataclass
class ParametricResult:
    """The analogues (all labelled parametric), ``skipped`` (a reason, or None), usage, notes."""

    analogues: list[ParametricAnalogue] = field(default_factory=list)
    skipped: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    label: str = PARAMETRIC_LABEL

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "skipped": self.skipped,
                "analogues": [a.to_json() for a in self.analogues], "usage": dict(self.usage),
                "notes": list(self.notes)}


def _s(x: Any, limit: int = 4000) -> str:
    return (x if isinstance(x, str) else "").strip()[:limit]


def _atom(raw: Any, roles: dict[str, str], *, relation: bool) -> str | None:
    if not isinstance(raw, dict):
        return None
    pred = _s(raw.get("predicate"), 100)
    args = [_s(a, 64) for a in raw.get("args") or []]
    if not pred or any(a not in roles for a in args) or (relation and not args):
        return None
    return f"{pred}({','.join(args)})"


def _analogue(raw: dict[str, Any], n: int, target: Signature, model: str, version: str,
              now: datetime) -> ParametricAnalogue:
    notes: list[str] = []
    roles: dict[str, str] = {}
    entities: dict[str, str] = {}
    for r in raw.get("roles") or []:
        tag = _s(r.get("tag"), 200) if isinstance(r, dict) else ""
        if not _TAG_OK.match(tag) or len(tag) > MAX_TAG or tag in roles:
            notes.append(f"role tag {tag[:40]!r} invalid or repeated; dropped")
            continue
        entities[tag] = _s(r.get("entity"), 200)
        roles[tag] = _s(r.get("description")) or entities[tag] or tag
    if not roles:
        raise SignatureError("the analogue has no valid role", field=f"analogues[{n}].roles")
    relations = []
    for i, r in enumerate(raw.get("relations") or []):
        a = _atom(r, roles, relation=True)
        if a is None:
            notes.append(f"relations[{i}] invalid or over undeclared roles; dropped")
        elif a not in relations:
            relations.append(a)
    chain: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for i, e in enumerate(raw.get("causal_chain") or []):
        c = _atom(e.get("cause"), roles, relation=False) if isinstance(e, dict) else None
        f = _atom(e.get("effect"), roles, relation=False) if isinstance(e, dict) else None
        edge = _s(e.get("edge"), 20) if isinstance(e, dict) else ""
        if c is None or f is None or edge not in EDGE_TYPES or (c, edge, f) in seen:
            notes.append(f"causal_chain[{i}] invalid, repeated or over undeclared roles; dropped")
            continue
        seen.add((c, edge, f))
        chain.append({"cause": c, "edge": edge, "effect": f,
                      "sign": -1 if e.get("sign") == -1 else 1,
                      "status": "inferred" if e.get("status") == "inferred" else "observed"})
    mapping: dict[str, str] = {}
    for p in raw.get("mapping") or []:
        t = _s(p.get("target_role"), 64) if isinstance(p, dict) else ""
        a = _s(p.get("analogue_role"), 64) if isinstance(p, dict) else ""
        if t in target.roles and a in roles and t not in mapping:
            mapping[t] = a
        else:
            notes.append(f"mapping {t[:20]!r} -> {a[:20]!r} names an undeclared role; dropped")
    kind = _s(raw.get("kind"), 40).lower()
    if kind not in ALLOWED_KINDS:
        notes.append(f"kind {kind!r} not accepted; set to 'event'")
        kind = "event"
    description = _s(raw.get("description"))
    canon = json.dumps({"roles": roles, "relations": relations, "chain": chain,
                        "description": description}, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(canon.encode("utf-8")).hexdigest()[:12]
    data = {
        "episode_id": f"parametric-{n}-{digest}",
        "kind": kind, "roles": roles, "relations": relations, "causal_chain": chain,
        "violated_invariant": _s(raw.get("violated_invariant")) or None,
        "symptom": _s(raw.get("symptom")) or None,
        "fix_operator": _s(raw.get("fix_operator")) or None,
        "levels": {k: v for k, v in (("L0", description), ("L2", _s(raw.get("L2"))),
                                     ("L3", _s(raw.get("L3")))) if v},
        "surface": {"domain": _s(raw.get("domain"), 200) or None,
                    "entities": [e for e in entities.values() if e]},
        "provenance": {"writer": f"llm:{model}"[:100], "time": now.isoformat(),
                       "source_hash": source_hash(canon), "prompt_version": version},
        "verified": False,
    }
    sig = validate_signature(data, source=f"parametric analogue {n}")
    return ParametricAnalogue(title=_s(raw.get("title"), 300), domain=_s(raw.get("domain"), 200),
                              description=description, mapping=mapping,
                              mechanism=_s(raw.get("mechanism")), signature=sig,
                              entities=entities, notes=notes)


def propose_parametric(target: Signature, provider: LLMProvider | None, *, k: int = 3,
                       vocab: Vocabulary | None = None, prompt_version: str = "v1",
                       temperature: float | None = None,
                       max_tokens: int | None = None) -> ParametricResult:
    """Up to ``k`` analogues for ``target`` from the model's own knowledge, each labelled
    ``parametric`` with a judgeable Signature; ``skipped`` = :data:`NO_LLM_REASON` when
    ``provider`` is None (see the module docstring)."""
    if provider is None:
        return ParametricResult(skipped=NO_LLM_REASON)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise AnalogistError(f"k must be an integer from 1 to {MAX_K}, got {k!r}", field="k")
    vocab = vocab if vocab is not None else default_signature_vocabulary()
    prompt = load_prompt("parametric", prompt_version)
    view = signature_view(target, levels=("L1", "L2", "L3"))
    msgs: list[Message] = [
        {"role": "system", "content": prompt.render(k=k, vocabulary=vocabulary_lines(vocab))},
        {"role": "user", "content": f"Propose up to {k} analogues for this target.\n\n"
            + wrap_data("target", json.dumps(view, ensure_ascii=False, indent=1))},
    ]
    r = provider.complete_json(msgs, parametric_schema(), schema_name="parametric",
                               temperature=temperature, max_tokens=max_tokens)
    model = r.model or str(provider.model)
    now = datetime.now(UTC)
    out = ParametricResult(usage=usage_of([r]))
    raw = r.data.get("analogues") or []
    if len(raw) > k:
        out.notes.append(f"the model proposed {len(raw)} analogues; kept the first {k}")
    for n, a in enumerate(raw[:k]):
        if not isinstance(a, dict):
            out.notes.append(f"analogues[{n}] is not an object; dropped")
            continue
        try:
            out.analogues.append(_analogue(a, n, target, model, prompt.version, now))
        except SignatureError as e:
            out.notes.append(f"analogues[{n}] dropped: {e}")
    return out


def judge_analogues(result: ParametricResult, target: Signature, *,
                    vocab: Vocabulary | None = None, params: Any | None = None,
                    ) -> tuple[list[dict[str, Any]], list[str]]:
    """Judge every analogue of ``result`` as a source for ``target`` (seed 000 §7 change 5:
    labelled ``parametric`` and scored apart from memory hits). Returns one record per judged
    analogue and a note for each that could not be judged."""
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    for a in result.analogues:
        try:
            rep = judge(a.signature, target, vocab=vocab, params=params)
        except AnalogistError as e:
            notes.append(f"parametric analogue {a.title!r}: {e}")
            continue
        out.append({"label": a.label, "title": a.title, "domain": a.domain,
                    "description": a.description, "mechanism": a.mechanism,
                    "similarity": rep.similarity, "score": rep.similarity,
                    "verdict": rep.verdict,
                    "transfer": rep.transfer, "report": rep.to_json(),
                    "signature": a.signature.to_data()})
    return out, notes
