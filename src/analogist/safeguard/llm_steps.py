"""The optional LLM steps: the grounded analogy finder and the semantic content-share estimate."""

from __future__ import annotations

from typing import Any

from analogist.safeguard.finder import FoundAnalogy
from analogist.safeguard.lexicon import _CJK, _norm, _stems

# -- the LLM steps ---------------------------------------------------------------------------

def _find_schema() -> dict[str, Any]:
    item = {"type": "object", "additionalProperties": False,
            "required": ["quote", "source", "similarities", "differences"],
            "properties": {
                "quote": {"type": "string", "description": "the passage, copied verbatim"},
                "source": {"type": ["string", "null"],
                           "description": "the historical or classical case invoked"},
                "similarities": {"type": "array", "items": {"type": "string"}},
                "differences": {"type": "array", "items": {"type": "string"}}}}
    return {"type": "object", "additionalProperties": False, "required": ["analogies"],
            "properties": {"analogies": {"type": "array", "items": item}}}


def _share_schema() -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["share", "rationale"],
            "properties": {"share": {"type": "number", "description": "0 to 1"},
                           "rationale": {"type": "string"}}}


def _grounded(item: str, quote: str) -> bool:
    if _norm(item) in _norm(quote):
        return True
    words = set(_stems(item)) | set(_CJK.findall(item))
    if not words:
        return False
    have = set(_stems(quote)) | set(_CJK.findall(quote))
    return len(words & have) / len(words) >= 0.6


def llm_find(text: str, provider: Any, notes: list[str]) -> list[FoundAnalogy]:
    """Analogy passages found by the LLM (prompt ``safeguard_find.v1``), each grounded: the
    quote must occur in ``text`` and every similarity/difference must be grounded in the quote;
    the rest is dropped with a note."""
    from analogist.llm.prompts import load_prompt, wrap_data

    prompt = load_prompt("safeguard_find", "v1")
    msgs = [{"role": "system", "content": prompt.render()},
            {"role": "user", "content": "Find the analogy passages of this debate turn.\n\n"
                + wrap_data("episode", text)}]
    r = provider.complete_json(msgs, _find_schema(), schema_name="safeguard_find")
    out: list[FoundAnalogy] = []
    flat = " ".join(text.split())
    for i, a in enumerate(r.data.get("analogies") or []):
        quote = " ".join(str(a.get("quote") or "").split())
        pos = flat.find(quote) if quote else -1
        if pos < 0:
            notes.append(f"LLM finder: analogy {i} dropped: its quote is not in the text")
            continue
        sims, diffs = [], []
        for kind, items, keep in (("similarity", a.get("similarities") or [], sims),
                                  ("difference", a.get("differences") or [], diffs)):
            for s in items:
                s = str(s).strip()
                if s and _grounded(s, quote):
                    keep.append(s)
                elif s:
                    notes.append(f"LLM finder: analogy {i}: {kind} {s[:60]!r} is not stated in "
                                 "the passage; dropped")
        src = a.get("source")
        out.append(FoundAnalogy(quote, pos, pos + len(quote),
                                str(src).strip()[:200] if src else None, sims, diffs, via="llm"))
    return out


def llm_share(text: str, provider: Any) -> tuple[float, str]:
    """The LLM's semantic estimate of the analogy content share (prompt ``safeguard_share.v1``)."""
    from analogist.llm.prompts import load_prompt, wrap_data

    prompt = load_prompt("safeguard_share", "v1")
    msgs = [{"role": "system", "content": prompt.render()},
            {"role": "user", "content": "Estimate the analogy content share of this debate "
                                        "turn.\n\n" + wrap_data("episode", text)}]
    r = provider.complete_json(msgs, _share_schema(), schema_name="safeguard_share")
    share = r.data.get("share")
    if isinstance(share, bool) or not isinstance(share, (int, float)) or share != share:
        share = 0.0
    return min(1.0, max(0.0, float(share))), str(r.data.get("rationale") or "").strip()
