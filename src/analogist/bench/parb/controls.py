"""PARB attribution controls (seed 000 §2 "Distinguishing 'the LLM already knew this' from
discovery", controls 2 and 4; issue 4 item 7).

Run on the items that hand the arm a source — F1 (mapping + inference), F4 (fix transfer),
F5 (partial transfer) — for the mapping arms D, E, G and, when an LLM is configured, A1.
Every condition re-runs the arm's whole mapping/transfer step on a variant of the item (its
own item id, so nothing is shared through the per-item caches).

**Source dependence Δ** (control 2). Three conditions per item:

* *correct* — the item as generated (the keyed source);
* *none* — no source at all (the pool is empty: nothing to map; a mapping arm must abstain);
* *wrong* — a structurally different source of matched surface similarity: a surface decoy
  drawn with the generator's own machinery (:func:`analogist.bench.parb.decoys.surface_decoy`:
  another template of the item's split rendered in the *source's* domain), seeded from the
  item id (``random.Random("parb-control-wrong:<item id>")``). It is handed over exactly where
  the keyed source was (G maps it as if it were gold).

Accuracy in every condition is **answer correctness against the item's key, judged on the
output alone** (not on which source was named), so an arm that knows the answer without the
source is credited for it: F1 — the held-back inference is among the transferred conclusions;
F4 — the fix in target terms equals the keyed fix; F5 — every part's transfer/withhold decision
equals the key (no proposal = everything withheld). An LLM arm that names no source but still
states conclusions/fix/parts (``ArmOutput.unsourced``) is judged on those, so a model that
"already knew" is credited without a source. Reported per arm: Δ_none =
acc(correct) − acc(none) and Δ_wrong = acc(correct) − acc(wrong), each with a seeded paired
bootstrap 95 % CI (:func:`analogist.bench.parb.stats.paired_bootstrap_ci`, items resampled
jointly) and n. Δ_none ≈ 0: the arm "already knew"; Δ_wrong ≈ 0 while Δ_none > 0: any source
primes it.

**Mapping-lesion test** (control 4). On every item where the arm, given the correct source,
proposed that source and transferred something (F1: a conclusion; F4: a fix; F5: at least one
part), the *focal* transferred conclusion is fixed — F1: the keyed inference if transferred,
else the first transferred conclusion (sorted); F4: the fix; F5: the first transferred part
(sorted) — and ONE source element the arm's own mapping claims is load-bearing for it is
deleted from the source:

* F5: the transferred part itself (a relation or causal edge of the source);
* F1: the first element of the conclusion's supporting causal path in the source — the source
  edge(s) whose image under the arm's role map is the conclusion (sorted by text), then the
  positive causal edges into the conclusion's effect, then their ancestors (sorted); if the
  conclusion cannot be traced, as F4;
* F4: the fix counters the source's mechanism, so the first (sorted by text) causal edge into
  a sink of the source's causal chain (the mechanism's conclusion); a source without edges:
  the first source relation matched by the mapping (its image under the role map is a target
  relation) among the roles the fix names, else any matched relation.

The role map is the arm's (chosen source → target); an arm that reports none is traced through
the keyed mapping and the record says so. The arm is re-run on the lesioned source and the
focal conclusion compared: it *changed* when it is no longer transferred (withheld, abstained
or different). **Lesion sensitivity** = changed / lesions; a lesion that leaves the conclusion
unchanged flags the mapping as a post-hoc rationalisation (its item id is listed).
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from analogist.bench.parb import stats as S
from analogist.bench.parb.arms import ArmContext, ArmOutput
from analogist.bench.parb.decoys import surface_decoy
from analogist.bench.parb.templates import TEMPLATES, templates_for
from analogist.errors import AnalogistError
from analogist.signature import validate_signature

__all__ = ["CONTROL_ARMS", "CONTROL_FAMILIES", "answer_correct", "lesion_target",
           "run_controls", "summarize_controls", "wrong_source"]

CONTROL_ARMS = ("D", "E", "G", "A1")
CONTROL_FAMILIES = ("F1", "F4", "F5")
N_BOOT = 2000


def _norm(s: str | None) -> str:
    return "".join((s or "").split())


def _key_inference(item: dict[str, Any]) -> str:
    ti = item["key"]["transferred_inference"]
    return f"{ti['cause']} {ti['edge']} {ti['effect']}"


def answer_correct(item: dict[str, Any], out: ArmOutput) -> bool:
    """The item's transfer key passes on the output alone (see the module docstring)."""
    fam, key = item["family"], item["key"]
    concl, fix, parts = out.conclusions, out.fix, (out.parts or {}) if out.chosen else {}
    if out.chosen is None and out.unsourced:          # asserted without naming a source
        concl = out.unsourced.get("conclusions") or []
        fix = out.unsourced.get("fix")
        parts = out.unsourced.get("parts") or {}
    if fam == "F1":
        return any(_norm(c) == _norm(_key_inference(item)) for c in concl)
    if fam == "F4":
        return fix is not None and _norm(fix) == _norm(key["fix_operator"])
    if fam == "F5":
        return all(bool(parts.get(p, False)) == (v["decision"] == "transfer")
                   for p, v in key["parts"].items())
    raise AnalogistError(f"attribution controls cover F1/F4/F5, not {fam}")


def wrong_source(item: dict[str, Any]) -> dict[str, Any]:
    """A surface decoy of the item's source: another template of the item's split rendered in
    the source's domain, seeded from the item id (deterministic)."""
    t = TEMPLATES[item["template"]]
    dom = (item.get("meta") or {}).get("source_domain") or item["source"]["surface"]["domain"]
    rng = random.Random(f"parb-control-wrong:{item['item_id']}")
    sig, _other = surface_decoy(t, dom, templates_for(item["split"]), rng,
                                f"{item['item_id']}-w")
    return sig.to_data()


def _variant(item: dict[str, Any], tag: str, source: dict[str, Any] | None) -> dict[str, Any]:
    v = dict(item)
    v["item_id"] = f"{item['item_id']}~{tag}"
    v["source"] = source
    return v


# -- lesion ------------------------------------------------------------------------------------
_ATOM = re.compile(r"[A-Za-z0-9_]+")


def _project(text: str, m: dict[str, str]) -> str:
    return _ATOM.sub(lambda g: m.get(g.group(0), g.group(0)), text)


def _edge_text(e: dict[str, Any]) -> str:
    return f"{e['cause']} {e['edge']} {e['effect']}"


def _rel_text(r: Sequence[str]) -> str:
    return f"{r[0]}({','.join(r[1:])})"


def _focal(item: dict[str, Any], out: ArmOutput) -> str | None:
    fam = item["family"]
    if fam == "F1":
        if not out.conclusions:
            return None
        ki = _key_inference(item)
        hit = [c for c in out.conclusions if _norm(c) == _norm(ki)]
        return hit[0] if hit else sorted(out.conclusions)[0]
    if fam == "F4":
        return out.fix
    parts = sorted(p for p, v in (out.parts or {}).items() if v)
    return parts[0] if parts else None


def lesion_target(item: dict[str, Any], out: ArmOutput
                  ) -> tuple[str, int, str, str] | None:
    """``(kind, index, text, mapping_used)`` of the source element to delete (``kind`` is
    ``relation`` or ``edge``; ``index`` into the source's list), or None when the arm did not
    propose the source or transferred nothing."""
    src = item["source"]
    if out.chosen is None or out.chosen != src["episode_id"]:
        return None
    focal = _focal(item, out)
    if focal is None:
        return None
    rels = [list(r) for r in src.get("relations") or []]
    edges = list(src.get("causal_chain") or [])
    if item["family"] == "F5":
        txt = item["key"]["parts"][focal]["source"]
        for i, r in enumerate(rels):
            if _norm(_rel_text(r)) == _norm(txt):
                return ("relation", i, _rel_text(r), "part")
        for i, e in enumerate(edges):
            if _norm(_edge_text(e)) == _norm(txt):
                return ("edge", i, _edge_text(e), "part")
        return None
    used = "arm"
    fwd = dict(out.role_map or {})
    if not fwd:
        fwd, used = dict(item["key"]["role_mapping"]), "key"
    inv = {v: k for k, v in fwd.items()}
    if item["family"] == "F1":
        back = _project(focal, inv)
        direct = sorted((_edge_text(e), i) for i, e in enumerate(edges)
                        if _norm(_edge_text(e)) == _norm(back))
        if direct:
            t, i = direct[0]
            return ("edge", i, t, used)
        parts = back.split()
        if len(parts) == 3:
            effect = parts[2]
            into = sorted((_edge_text(e), i) for i, e in enumerate(edges)
                          if e["effect"] == effect)
            if into:
                t, i = into[0]
                return ("edge", i, t, used)
    if item["family"] == "F4":          # the fix counters the mechanism: its causal path
        causes = {e["cause"] for e in edges}
        sink_edges = sorted((_edge_text(e), i) for i, e in enumerate(edges)
                            if e["effect"] not in causes)
        if sink_edges:
            t, i = sink_edges[0]
            return ("edge", i, t, used)
    # untraceable F1/F4: matched relations, preferring those among the roles named
    target_rels = {_norm(_rel_text(r)) for r in item["target"].get("relations") or []}
    matched = sorted((_rel_text(r), i) for i, r in enumerate(rels)
                     if _norm(_project(_rel_text(r), fwd)) in target_rels)
    named = set(_ATOM.findall(_project(focal, inv))) & set(src.get("roles") or {})
    pref = [(t, i) for t, i in matched if set(rels[i][1:]) <= named]
    pick = (pref or matched)
    if pick:
        t, i = pick[0]
        return ("relation", i, t, used)
    return None


def _lesioned(src: dict[str, Any], kind: str, index: int) -> dict[str, Any]:
    s = copy.deepcopy(src)
    if kind == "relation":
        del s["relations"][index]
    else:
        del s["causal_chain"][index]
    validate_signature(s)
    return s


def _changed(item: dict[str, Any], before: ArmOutput, after: ArmOutput) -> bool:
    focal = _focal(item, before)
    if after.chosen is None:
        return True
    fam = item["family"]
    if fam == "F1":
        return not any(_norm(c) == _norm(focal) for c in after.conclusions)
    if fam == "F4":
        return after.fix is None or _norm(after.fix) != _norm(focal)
    return not bool((after.parts or {}).get(str(focal), False))


# -- running -------------------------------------------------------------------------------------
def _run(arm: Any, item: dict[str, Any], ctx: ArmContext) -> ArmOutput:
    ctx.begin(item)
    ctx.controls_pass = True          # reruns: no parametric channel (it is scored once)
    try:
        return arm.run(item, ctx)
    finally:
        ctx.controls_pass = False


def run_controls(items: Sequence[dict[str, Any]], arms: Sequence[Any], ctx: ArmContext,
                 correct_outputs: dict[str, dict[str, ArmOutput]] | None = None,
                 ) -> dict[str, list[dict[str, Any]]]:
    """Per arm, one record per F1/F4/F5 item: answer correctness with the correct source, no
    source and the wrong source, and the lesion (or None). ``correct_outputs[arm][item_id]``
    reuses the main run's outputs (same representation, oracle); missing ones are re-run."""
    out: dict[str, list[dict[str, Any]]] = {a.name: [] for a in arms}
    correct_outputs = correct_outputs or {}
    for item in items:
        if item["family"] not in CONTROL_FAMILIES or item.get("source") is None:
            continue
        wrong = wrong_source(item)
        for arm in arms:
            o_c = correct_outputs.get(arm.name, {}).get(item["item_id"])
            if o_c is None:
                o_c = _run(arm, item, ctx)
            o_n = _run(arm, _variant(item, "none", None), ctx)
            o_w = _run(arm, _variant(item, "wrong", wrong), ctx)
            rec: dict[str, Any] = {"item_id": item["item_id"], "family": item["family"],
                                   "split": item["split"], "correct": answer_correct(item, o_c),
                                   "none": answer_correct(item, o_n),
                                   "wrong": answer_correct(item, o_w), "lesion": None}
            tgt = lesion_target(item, o_c)
            if tgt is not None:
                kind, idx, text, used = tgt
                try:
                    les_src = _lesioned(item["source"], kind, idx)
                except AnalogistError as e:
                    rec["lesion"] = {"deleted": f"{kind} {text}", "error": str(e)[:200]}
                else:
                    o_l = _run(arm, _variant(item, "lesion", les_src), ctx)
                    rec["lesion"] = {"deleted": f"{kind} {text}", "mapping": used,
                                     "focal": _focal(item, o_c),
                                     "changed": _changed(item, o_c, o_l)}
            out[arm.name].append(rec)
    return out


def _delta(a: list[float], b: list[float], seed: int) -> dict[str, Any]:
    d = S.paired_bootstrap_ci(np.array(a, float), np.array(b, float), n_boot=N_BOOT, seed=seed)
    return {"estimate": d["estimate"], "ci": [d["lo"], d["hi"]], "n": d["n"]}


def summarize_controls(recs: list[dict[str, Any]], seed: int = 0) -> dict[str, Any]:
    """Δ_none, Δ_wrong (paired bootstrap CIs) and lesion sensitivity of one arm's records."""
    if not recs:
        return {"n": 0, "note": "no F1/F4/F5 items"}
    c = [float(r["correct"]) for r in recs]
    n = [float(r["none"]) for r in recs]
    w = [float(r["wrong"]) for r in recs]
    les = [r for r in recs if r["lesion"] is not None and "changed" in r["lesion"]]
    changed = sum(r["lesion"]["changed"] for r in les)
    by_fam: dict[str, Any] = {}
    for fam in CONTROL_FAMILIES:
        lf = [r for r in les if r["family"] == fam]
        if lf:
            ch = sum(r["lesion"]["changed"] for r in lf)
            by_fam[fam] = {"n": len(lf), "changed": ch, "sensitivity": ch / len(lf)}
    return {
        "n": len(recs),
        "accuracy": {"correct": sum(c) / len(c), "none": sum(n) / len(n),
                     "wrong": sum(w) / len(w)},
        "delta_vs_none": _delta(c, n, seed),
        "delta_vs_wrong": _delta(c, w, seed),
        "lesion": {"n": len(les), "changed": changed,
                   "sensitivity": changed / len(les) if les else None,
                   "by_family": by_fam,
                   "rationalisations": [r["item_id"] for r in les
                                        if not r["lesion"]["changed"]],
                   "errors": [r["item_id"] for r in recs
                              if r["lesion"] is not None and "error" in r["lesion"]]},
    }
