"""Re-abstraction: the levels an episode lacks, from the encoder's reading of its text and from its
stored structure (step 4 of :mod:`analogist.consolidate`; "the module docstring" below is that
package's)."""

from __future__ import annotations

from typing import Any

from analogist.consolidate.base import _sig
from analogist.errors import AnalogistError
from analogist.signature import Levels, Signature, validate_signature


def structural_l2(sig: Signature) -> str | None:
    """L2 written from the stored structure: atoms and edges over the episode's role tags."""
    parts = [a.text() for a in sig.relations]
    parts += [f"{e.cause.text()} {'not ' if e.sign == -1 else ''}{e.edge} {e.effect.text()}"
              for e in sig.causal_chain]
    return "; ".join(parts)[:4000] or None


def _episode_text(sig: Signature) -> str | None:
    if sig.levels.L0:
        return sig.levels.L0
    parts = [x.strip().rstrip(".") + "." for x in (sig.symptom, sig.violated_invariant,
                                                   sig.fix_operator) if x and x.strip()]
    return " ".join(parts) or None


def reabstract(sig: Signature, encoder: Any | None) -> tuple[Signature | None, list[str]]:
    """Fill the levels ``sig`` lacks (see the module docstring); ``(None, notes)`` when it lacks
    none. ``encoder`` has ``encode(text, episode_id=, domain=)`` → an EncodeResult, or is None
    (then only L2 is written)."""
    sig = _sig(sig, "sig")
    lv = sig.levels
    if lv.L1 and lv.L2 and lv.L3:
        return None, []
    notes: list[str] = []
    text = _episode_text(sig)
    enc_levels = None
    if text is not None and encoder is not None and (not lv.L1 or not lv.L3):
        try:
            res = encoder.encode(text, episode_id=sig.episode_id, domain=sig.surface.domain)
            enc_levels = res.signature.levels
        except AnalogistError as e:
            notes.append(f"{sig.episode_id}: the encoder could not read its text: {e}"[:300])
    elif text is None:
        notes.append(f"{sig.episode_id}: no text to re-abstract; L2 written from structure only")
    elif encoder is None and (not lv.L1 or not lv.L3):
        notes.append(f"{sig.episode_id}: no encoder configured; L1/L3 left missing")
    new = Levels(L0=lv.L0 or text,
                 L1=lv.L1 or (enc_levels.L1 if enc_levels else None),
                 L2=lv.L2 or structural_l2(sig),
                 L3=lv.L3 or (enc_levels.L3 if enc_levels else None))
    if new == lv:
        return None, notes
    data = sig.to_data()
    data["levels"] = new.model_dump(exclude_none=True)
    return validate_signature(data), notes
