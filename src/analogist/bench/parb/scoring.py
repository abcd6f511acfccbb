"""PARB per-item scoring: one arm's output on one item against the item's key (the rules U, F, N,
per-item correctness and the mapping and transfer checks are listed in
:mod:`analogist.bench.parb.runner`)."""

from __future__ import annotations

from typing import Any

from analogist.bench.parb.arms import ArmOutput


def _norm(s: str | None) -> str:
    return "".join((s or "").split())


def score_item(item: dict[str, Any], problem: Any, out: ArmOutput,
               forms: dict[str, str] | None = None) -> dict[str, Any]:
    """Score one arm output against the item's key. ``forms`` (encoded representation): the
    keyed F1 inference and F4 fix in the role-term form of
    :func:`analogist.bench.parb.encoded.gold_forms`; ``out`` must then be translated already."""
    fam, key = item["family"], item["key"]
    gold = set(problem.gold)
    chosen = out.chosen
    src_ok = chosen is not None and chosen in gold
    rec: dict[str, Any] = {"item_id": item["item_id"], "family": fam, "split": item["split"],
                           "proposed": chosen is not None, "chosen": chosen,
                           "source_correct": src_ok, "no_match": problem.no_match,
                           "ranking": out.ranking, "confidence": out.confidence}
    # mapping
    mapping_ok: bool | None = None
    if problem.role_mapping is not None:
        pm = out.role_map if (src_ok and out.role_map) else {}
        if chosen is not None and not src_ok and out.role_map:
            pm = {f"wrong:{k}": v for k, v in out.role_map.items()}   # all false positives
        rec["pred_map"] = sorted(pm.items())
        rec["gold_map"] = sorted(problem.role_mapping.items())
        mapping_ok = src_ok and bool(out.role_map) and \
            any(out.role_map == m for m in problem.all_role_mappings)
    rec["mapping_correct"] = mapping_ok
    # transfer
    transfer_ok: bool | None = None
    N = 0
    if fam == "F1":
        ti = key["transferred_inference"]
        inference = f"{ti['cause']} {ti['edge']} {ti['effect']}"
        if forms is not None:
            inference = forms["inference"]
        transfer_ok = chosen is not None and any(_norm(c) == _norm(inference)
                                                 for c in out.conclusions)
    elif fam == "F4":
        fix = key["fix_operator"] if forms is None else forms["fix"]
        transfer_ok = out.fix is not None and _norm(out.fix) == _norm(fix)
    elif fam == "F5":
        parts = out.parts or {p: False for p in key["parts"]}
        if chosen is None:
            parts = {p: False for p in key["parts"]}
        rec["parts"] = [[bool(parts.get(p, False)), v["decision"] == "transfer"]
                        for p, v in sorted(key["parts"].items())]
        transfer_ok = all(a == b for a, b in rec["parts"])
        N = int(any(a and not b for a, b in rec["parts"]))
    rec["transfer_correct"] = transfer_ok
    U = int(src_ok and mapping_ok is not False and transfer_ok is not False)
    F = int(chosen is not None and not src_ok)
    rec.update(U=U, F=F, N=N)
    rec["correct"] = bool(U or (problem.no_match and chosen is None))
    # negative-transfer pairs: analogy-driven action vs the no-analogy arm on the same item
    if out.transfer and chosen is not None:
        if fam == "F5":
            pa = rec["parts"]
            rec["nt_pair"] = [_part_acc(pa), _part_acc([[False, b] for _a, b in pa])]
        else:
            rec["nt_pair"] = [float(U), 1.0 if problem.no_match else 0.0]
    if fam == "F2":
        labels = {c["episode_id"]: c["labels"]["decoy"] for c in item["candidates"]}
        rec["picked_type"] = labels.get(chosen) if chosen else None
    return rec


def _part_acc(pairs: list[list[bool]]) -> float:
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else 0.0

