"""The vocabulary step: synonym merges planned over the store's vocab table, its health, and the
rewrite of episodes that use a merged alias (steps 2 and 3 of :mod:`analogist.consolidate`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from analogist.signature import Signature, validate_signature
from analogist.vocabulary import Vocabulary


def _norm(name: str) -> str:
    words = [w for w in re.split(r"[_\-\s]+", name.lower()) if w]
    return "".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                   for w in words)


def plan_vocabulary(uses: dict[str, int], terms: Sequence[dict[str, Any]], vocab: Vocabulary,
                    arities: dict[str, int] | None = None
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    """The vocab-table rows after a synonym merge, the merge map, and the renames to apply to
    stored episodes (proposed alias → canonical). Pure. ``uses``: predicate → uses in stored
    episodes; ``terms``: the current vocab-table rows; ``arities``: arity of each used name."""
    arities = arities or {}
    rows: dict[str, dict[str, Any]] = {}
    for t in terms:
        r = dict(t)
        if r.get("status") == "merged":  # merges are recomputed from the current uses
            r.update(status="declared" if vocab.get(r["name"]) is not None else "proposed",
                     merged_into=None)
        rows[r["name"]] = r
    for name, n in uses.items():
        p = vocab.get(name)
        r = rows.get(name)
        if r is None:
            r = {"name": name, "definition": "", "count": 0, "merged_into": None}
            rows[name] = r
        if p is not None and p.name == name:
            r.update(kind=str(p.kind), arity=p.arity, definition=p.definition or
                     r.get("definition", ""), status="declared")
        else:
            r.setdefault("kind", "relation" if arities.get(name, 2) >= 2 else "attribute")
            r.setdefault("arity", arities.get(name, 2))
            r["status"] = "proposed" if p is None else "declared"
        r["count"] = n
    for name, r in rows.items():
        if name not in uses:
            r["count"] = 0
        r.setdefault("merged_into", None)
        r.setdefault("definition", "")
    # canonical targets
    merges: list[dict[str, Any]] = []
    renames: dict[str, str] = {}
    declared_by_norm: dict[tuple[str, int], str] = {}
    for p in vocab:
        declared_by_norm.setdefault((_norm(p.name), p.arity), p.name)
    for name in sorted(rows):
        r = rows[name]
        if r["status"] == "merged":
            continue
        p = vocab.get(name)
        target, reason = None, ""
        if p is not None and p.name != name:
            target, reason = p.name, "declared synonym"
        elif p is None and r["status"] == "proposed":
            hit = declared_by_norm.get((_norm(name), int(r["arity"])))
            if hit is not None and hit != name:
                target, reason = hit, "same normalised name as a declared term"
        if target is None:
            continue
        _merge_into(rows, name, target, reason, merges, vocab)
        if reason != "declared synonym":
            renames[name] = target
    # proposed names that normalise alike: merge into the most used (then alphabetical first)
    groups: dict[tuple[str, int], list[str]] = {}
    for name, r in rows.items():
        if r["status"] == "proposed":
            groups.setdefault((_norm(name), int(r["arity"])), []).append(name)
    for names in groups.values():
        if len(names) < 2:
            continue
        keep = sorted(names, key=lambda x: (-rows[x]["count"], x))[0]
        for name in sorted(names):
            if name != keep:
                _merge_into(rows, name, keep, "same normalised name as a proposed term",
                            merges, vocab)
                renames[name] = keep
    out = [{k: rows[n][k] for k in ("name", "kind", "arity", "definition", "status", "count",
                                    "merged_into")} for n in sorted(rows)]
    return out, merges, renames


def _merge_into(rows: dict[str, dict[str, Any]], alias: str, target: str, reason: str,
                merges: list[dict[str, Any]], vocab: Vocabulary) -> None:
    r = rows[alias]
    t = rows.get(target)
    if t is None:
        p = vocab.get(target)
        t = {"name": target, "kind": str(p.kind) if p else r["kind"],
             "arity": p.arity if p else r["arity"],
             "definition": (p.definition if p else "") or "", "status": "declared" if p
             else "proposed", "count": 0, "merged_into": None}
        rows[target] = t
    moved = int(r["count"])
    t["count"] = int(t["count"]) + moved
    r.update(status="merged", merged_into=target, count=0)
    merges.append({"alias": alias, "canonical": target, "count_moved": moved, "reason": reason})


def vocabulary_health(terms: Sequence[dict[str, Any]], uses: dict[str, int]) -> dict[str, Any]:
    """Size, per-relation frequency (uses in stored episodes) and proposed-but-unused terms."""
    by_status = {s: sorted(t["name"] for t in terms if t["status"] == s)
                 for s in ("declared", "proposed", "merged")}
    return {
        "size": len(terms) - len(by_status["merged"]),
        "declared": len(by_status["declared"]),
        "proposed": len(by_status["proposed"]),
        "merged": len(by_status["merged"]),
        "frequency": dict(sorted(uses.items(), key=lambda kv: (-kv[1], kv[0]))),
        "proposed_unused": [t["name"] for t in sorted(terms, key=lambda t: t["name"])
                            if t["status"] == "proposed" and uses.get(t["name"], 0) == 0],
        "singletons": sorted(n for n, c in uses.items() if c == 1),
    }


def _rename(sig: Signature, renames: dict[str, str]) -> Signature | None:
    if not any(a.predicate in renames for _f, a in sig.atoms()):
        return None
    data = sig.to_data()

    def fix(atom: str) -> str:
        pred, rest = atom.split("(", 1)
        return f"{renames.get(pred, pred)}({rest}"

    data["relations"] = [[renames.get(r[0], r[0]), *r[1:]] for r in data.get("relations", [])]
    data["causal_chain"] = [{**e, "cause": fix(e["cause"]), "effect": fix(e["effect"])}
                            for e in data.get("causal_chain", [])]
    return validate_signature(data)
