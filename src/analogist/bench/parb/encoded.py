"""PARB's *encoded* representation: every episode re-written from its text by a signature writer.

On the oracle representation the arms see the generator's gold signatures. On the encoded
representation each episode of an item (target, source, candidates, pool) is replaced by what a
writer (the deterministic encoder by default, or the LLM writer) produces from that episode's
**text alone** — the L0 narrative, plus, for an episode that has a fix, one sentence stating the
fix in entity names. The writer never sees another episode, the template, the role tags or the
key. The gap between an arm's numbers on the two representations is the encoder's cost.

Scoring needs the keys, which are written in the generator's role tags. The writer invents its own
tags, so each encoded episode gets an **alignment** encoded tag → gold tag, made by matching role
descriptions (entity phrases) against the gold roles' entity names: exact match after dropping
articles first, then the best token overlap (Jaccard ≥ 0.5), one-to-one. Arm outputs are
translated back to gold tags through the alignments before scoring (:func:`translate_output`);
a role the writer made up that matches no gold entity stays unaligned and can only score as wrong.

Departure from oracle scoring, stated: predicate names are the writer's own (typed against the
vocabulary or proposed), so structure is compared **in role terms** (:func:`skeleton`): an atom
``pred(A,B)`` is compared as ``*(A,B)``, an edge keeps its type and sign. F1's transferred
inference, F5's parts and F4's fix are compared this way (F4: the fix text with tags translated,
lower-cased, articles dropped). This is more lenient about *which* relation holds between two
roles and exactly as strict about *which roles* and *which causal edge*.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from analogist.bench.parb.arm_base import ArmOutput

__all__ = [
    "EncodedItems",
    "align_roles",
    "encode_items",
    "episode_text",
    "skeleton",
    "translate_output",
    "translate_text",
]

_ARTICLES = {"the", "a", "an", "its", "their", "his", "her", "this", "that"}
_WORD = re.compile(r"[a-z0-9]+")
_ATOM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(([^()]*)\)")
_EDGE = re.compile(r"\b(causes|prevents|enables|masks|delays)\b")


def _words(s: str) -> list[str]:
    return [w for w in _WORD.findall(s.lower()) if w not in _ARTICLES]


def episode_text(sig: dict[str, Any]) -> str:
    """The text a writer gets for one generated episode: L0, plus its fix in entity names."""
    text = str((sig.get("levels") or {}).get("L0") or "").strip()
    fix = sig.get("fix_operator")
    if fix:
        roles = sig.get("roles") or {}
        for tag in sorted(roles, key=len, reverse=True):
            fix = re.sub(rf"\b{re.escape(tag)}\b", f"the {roles[tag]}", fix)
        text = f"{text} The fix is to {fix}."
    return text


def align_roles(gold_roles: dict[str, str], enc_roles: dict[str, str]) -> dict[str, str]:
    """Encoded role tag → gold role tag, by entity phrase (exact first, then token Jaccard)."""
    gold = {t: tuple(_words(d)) for t, d in gold_roles.items()}
    enc = {t: tuple(_words(d)) for t, d in enc_roles.items()}
    out: dict[str, str] = {}
    used: set[str] = set()
    for et, ew in sorted(enc.items()):
        for gt, gw in sorted(gold.items()):
            if gt not in used and ew and ew == gw:
                out[et] = gt
                used.add(gt)
                break
    cands = []
    for et, ew in enc.items():
        if et in out or not ew:
            continue
        for gt, gw in gold.items():
            if gt in used or not gw:
                continue
            a, b = set(ew), set(gw)
            j = len(a & b) / len(a | b)
            if j >= 0.5:
                cands.append((-j, et, gt))
    for _j, et, gt in sorted(cands):
        if et not in out and gt not in used:
            out[et] = gt
            used.add(gt)
    return out


def translate_text(text: str, align: dict[str, str]) -> str:
    """Replace whole-word encoded tags by gold tags; unaligned tags become ``?TAG``."""
    def sub(m: re.Match[str]) -> str:
        args = [a.strip() for a in m.group(2).split(",") if a.strip()]
        return f"{m.group(1)}({','.join(align.get(a, '?' + a) for a in args)})"
    out = _ATOM.sub(sub, text)
    for tag in sorted(align, key=len, reverse=True):
        out = re.sub(rf"(?<![?\w]){re.escape(tag)}\b", align[tag], out)
    return out


def skeleton(text: str) -> str:
    """``pred(A,B) causes p2(C)`` → ``*(A,B) causes *(C)``; whitespace dropped."""
    return "".join(_ATOM.sub(lambda m: "*(" + m.group(2).replace(" ", "") + ")", text).split())


def _fix_norm(text: str) -> str:
    return " ".join(w for w in re.findall(r"[A-Za-z0-9_?]+", text.lower()) if w not in _ARTICLES)


@dataclass
class EncodedItems:
    """Items with encoded episodes, plus the per-episode alignment and writer statistics."""

    items: list[dict[str, Any]]
    writer: str
    align: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # item → ep → map
    stats: dict[str, Any] = field(default_factory=dict)


def _episodes(item: dict[str, Any]) -> Iterable[tuple[dict[str, Any], str, Any]]:
    """(container, key, signature dict) for every episode slot of an item."""
    for k in ("source", "target"):
        if item.get(k):
            yield item, k, item[k]
    for lst in ("candidates", "pool"):
        for c in item.get(lst) or []:
            yield c, "signature", c["signature"]


def encode_items(items: list[dict[str, Any]], encoder: Any,
                 progress: Callable[[int], None] | None = None) -> EncodedItems:
    """Replace every episode of every item by ``encoder.encode(episode_text(ep))``.

    Identical texts are encoded once (the writer is a function of the text). Any signature field
    the writer cannot produce from text (for example a fix the text does not state) is absent.
    """
    cache: dict[str, Any] = {}
    out_items = []
    align: dict[str, dict[str, dict[str, str]]] = {}
    n_roles = n_aligned = n_gold = 0
    confs: list[float] = []
    proposed = 0
    t0 = time.perf_counter()
    writer = getattr(encoder, "name", type(encoder).__name__)
    for item in items:
        it = copy.deepcopy(item)
        amap: dict[str, dict[str, str]] = {}
        for holder, key, sig in list(_episodes(it)):
            eid = sig["episode_id"]
            text = episode_text(sig)
            res = cache.get(text)
            if res is None:
                res = encoder.encode(text, episode_id="enc")
                cache[text] = res
                confs.append(float(res.confidence or 0.0))
                proposed += len(res.proposed_terms)
            writer = res.writer
            data = res.signature.to_data()
            data["episode_id"] = eid
            a = align_roles(sig.get("roles") or {}, data["roles"])
            amap[eid] = a
            n_roles += len(data["roles"])
            n_aligned += len(a)
            n_gold += len(sig.get("roles") or {})
            holder[key] = data
        align[it["item_id"]] = amap
        out_items.append(it)
        if progress is not None:
            progress(1)
    stats = {
        "writer": writer, "episodes_encoded": len(cache),
        "encode_seconds": round(time.perf_counter() - t0, 3),
        "mean_confidence": round(sum(confs) / len(confs), 4) if confs else None,
        "proposed_terms": proposed,
        "roles_written": n_roles, "roles_aligned_to_gold": n_aligned, "gold_roles": n_gold,
        "gold_role_recall": round(n_aligned / n_gold, 4) if n_gold else None,
        "role_precision": round(n_aligned / n_roles, 4) if n_roles else None,
    }
    return EncodedItems(out_items, writer, align, stats)


def translate_output(out: ArmOutput, item: dict[str, Any], query_id: str,
                     align: dict[str, dict[str, str]]) -> ArmOutput:
    """An arm's output on encoded episodes, in the gold tags the keys use.

    ``role_map`` (chosen episode's tags → query's tags) goes through both alignments; a pair of
    two unaligned roles is dropped (outside the key); an unaligned tag paired with an aligned one
    gets a ``?`` prefix so it can only count as wrong. Conclusions and the fix are in the
    query's tags; their atoms are reduced to :func:`skeleton` form for F1 and the fix is
    normalised for F4. F5's parts are already decided in gold terms by the arm (see
    ``ArmContext.part_key``).
    """
    if out.chosen is None:
        return out
    qa = align.get(query_id, {})
    ca = align.get(out.chosen, {})
    new = copy.copy(out)
    if out.role_map:
        # a pair of two roles that match no gold entity (a state noun the writer made a role
        # of, say) is outside the key and dropped; a pair with one unaligned side stays wrong
        new.role_map = {ca.get(k, "?" + k): qa.get(v, "?" + v) for k, v in out.role_map.items()
                        if k in ca or v in qa}
    new.conclusions = [skeleton(translate_text(c, qa)) for c in out.conclusions]
    if out.fix is not None:
        new.fix = _fix_norm(translate_text(out.fix, qa))
    return new


def gold_forms(item: dict[str, Any]) -> dict[str, str]:
    """The keyed strings in the form :func:`translate_output` produces (F1 inference, F4 fix)."""
    key = item["key"]
    out: dict[str, str] = {}
    if item["family"] == "F1":
        ti = key["transferred_inference"]
        out["inference"] = skeleton(f"{ti['cause']} {ti['edge']} {ti['effect']}")
    if item["family"] == "F4":
        out["fix"] = _fix_norm(key["fix_operator"])
    return out
