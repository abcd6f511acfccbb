"""PARB runner: every arm on every item (paired), scored per split and family (issue 4, item 9).

Scoring rules (per item, per arm; ``chosen`` is the proposed source or None):

* **U** (verified useful) — the chosen source is keyed, and, where keyed, the role mapping is
  one of the keyed structure-preserving mappings (F1, F2, F4, F5, F7, F8), the transfer passes
  its key (F1: the held-back causal edge is among the transferred candidate inferences; F4: the fix carried into target terms
  equals the keyed fix; F5: every part's transfer/withhold decision equals the key).
* **F** (accepted false analogy) — something was proposed and it is not a keyed source: an
  accepted decoy, or any proposal on a no-true-match item.
* **N** (negative transfer) — a part the key says to withhold was transferred (F5).
* NAV = (U − αF − βN)/O with α = 1, β = 2; item contribution U − αF − βN, so NAV is the mean.
* Per-item correctness (McNemar): U, or a no-match item on which nothing was proposed.
* recall@k "far": F3 and F6 items with a true match (the match is always in another domain than
  the target, next to same-domain decoys in a pool of 40); recall@k curves also over all items.
* d′ on F2: one signal and one noise trial per item; hit = picks the far analogy, false alarm =
  picks any decoy; log-linear correction (Hautus 1995: +0.5 per cell). d′ per decoy type counts
  a false alarm only when the picked decoy is of that type.
* **Verification survival** (seed 000 §15, stage F) — defined for the verifying arm E only:
  over the items on which D (the same retrieval and mapping, no verification) proposed a
  source, the share on which E proposed *that same source*, i.e. D's proposal passed E's
  causal-path gate, the decoy probe and — when configured — the critic. Reported with n and
  split into ``useful_kept`` (share of D's U proposals E kept) and ``false_killed`` (share of
  D's F proposals E withheld). Arms without a verification stage report None.
* **Cost** (seed 000 §15) — wall seconds of the arm's ``run`` per item and per useful analogy
  (U); tokens (``total_tokens`` of the arm's ``usage()`` deltas) per item and per U when the arm
  reports LLM usage, else None. Retrieval shared through the per-item cache is charged to the
  first arm that calls it (C before H, D, E in the default order). Wall time is noisy on a
  shared machine: read ratios between arms of one run, never absolute values across runs.
* **Attribution controls** (seed 000 §2; :mod:`analogist.bench.parb.controls`) — with
  ``controls=True`` and the oracle representation, source dependence Δ (vs no source and vs a
  wrong source of matched surface) and the mapping-lesion test for D, E, G and A1 on F1/F4/F5
  items, in ``results["splits"][split]["controls"][arm]``.
* **Private items** (seed 000 §14 holdout rule) run through a separate entry point,
  :func:`analogist.bench.parb.private.run_private`, which reuses :func:`score_item`,
  :func:`arm_metrics` and :func:`comparisons` on F3-shaped items whose pool is a store snapshot
  without the target and anything derived from it.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from analogist.bench.parb.aggregate import (
    arm_metrics,
    comparisons,
    cost_metrics,
    family_table,
    hypotheses,
    verification_survival,
)
from analogist.bench.parb.arms import ARM_NAMES, LLM_ARMS, ArmContext, ArmOutput, make_arms
from analogist.bench.parb.controls import CONTROL_ARMS, run_controls, summarize_controls
from analogist.bench.parb.encoded import encode_items, gold_forms, translate_output
from analogist.bench.parb.items import generate, write_jsonl
from analogist.bench.parb.report import write_report as _write_report
from analogist.bench.parb.scoring import score_item
from analogist.encode.deterministic import DeterministicEncoder
from analogist.errors import AnalogistError
from analogist.index.embed import default_embedder
from analogist.llm.base import NO_LLM_REASON
from analogist.memory.sqlite import Memory

__all__ = ["arm_metrics", "comparisons", "cost_metrics", "run_parb", "score_item",
           "verification_survival"]


# -- the run ------------------------------------------------------------------------------------
def _json_safe(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, (np.floating, np.integer)):
        return _json_safe(x.item())
    return x


def _arm_names(representation: str, arms: Sequence[str] | None) -> list[str]:
    """Check ``representation`` and the requested arms; return the arm names (prime-normalised)."""
    if representation not in ("oracle", "encoded"):
        raise AnalogistError(f"representation must be 'oracle' or 'encoded', got "
                             f"{representation!r}")
    names = [a.replace("′", "'") for a in (arms or list(ARM_NAMES) + list(LLM_ARMS))]
    unknown = [a for a in names if a not in ARM_NAMES and a not in LLM_ARMS]
    if unknown:
        raise AnalogistError(f"unknown arm(s) {', '.join(unknown)}; known: "
                             f"{', '.join(ARM_NAMES + LLM_ARMS)}")
    return names


def _llm_skips(names: list[str], provider: Any | None,
               critic_provider: Any | None) -> dict[str, str]:
    """The arms and arm channels skipped for want of an LLM, each with the reason."""
    skipped: dict[str, str] = {}
    if provider is None:
        skipped.update({a: NO_LLM_REASON for a in LLM_ARMS if a in names})
    if "E" in names and critic_provider is None:
        skipped["E.critic"] = NO_LLM_REASON
    if "E" in names and provider is None:
        skipped["E.parametric"] = NO_LLM_REASON
    return skipped


def _write_items(out: Path, itemset: Any, items: list[dict[str, Any]],
                 seed: int) -> dict[str, Any]:
    """Write ``items.jsonl`` (generated items only) and ``manifest.json``; return the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    if itemset is not None:
        manifest = write_jsonl(itemset, out / "items.jsonl")
    else:
        manifest = {"n_items": len(items), "seed": seed, "source": "given items"}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n",
                                       encoding="utf-8")
    return manifest


def _encode_all(items: list[dict[str, Any]], encoder: Any, progress: bool) -> Any:
    """Re-write every item's episodes from their text with ``encoder``, under a progress bar."""
    bar = _progress(progress)
    with bar:
        task = bar.add_task("encoding", total=len(items))
        return encode_items(items, encoder, progress=lambda n: bar.update(task, advance=n))


def _run_arm(arm: Any, item: dict[str, Any], run_item: dict[str, Any], pb: Any,
             ctx: ArmContext, enc: Any) -> tuple[ArmOutput, dict[str, Any], float]:
    """Run one arm on one item and score it; return the output, the record and the seconds."""
    tok0 = _tokens(arm)
    t0 = time.perf_counter()
    o = arm.run(run_item, ctx)
    dt = time.perf_counter() - t0
    tok1 = _tokens(arm)
    if enc is not None:
        o_s = translate_output(o, item, pb.query["episode_id"], enc.align[item["item_id"]])
        rec = score_item(item, pb, o_s, forms=gold_forms(item))
    else:
        rec = score_item(item, pb, o)
    if o.failed:     # an LLM failure is a failure, not an abstention
        rec.update(failed=True, correct=False)
    rec["_gold"] = list(pb.gold)
    rec["output"] = o.to_json()
    rec["wall_s"] = dt
    rec["tokens"] = None if tok1 is None else tok1 - (tok0 or 0)
    return o, rec, dt


def _write_per_item(path: Path, items: list[dict[str, Any]],
                    per_arm: dict[str, list[dict[str, Any]]]) -> None:
    """Write the per-item records (paired by construction: same item order for every arm)."""
    with open(path, "w", encoding="utf-8") as fh:
        for i, item in enumerate(items):
            fh.write(json.dumps(_json_safe({
                "item_id": item["item_id"], "family": item["family"], "split": item["split"],
                "arms": {a: {k: v for k, v in per_arm[a][i].items()
                             if k not in ("item_id", "family", "split")} for a in per_arm}}),
                sort_keys=True) + "\n")


def _split_results(per_arm: dict[str, list[dict[str, Any]]], split: str, seed: int,
                   skipped: dict[str, str],
                   ctl_recs: dict[str, list[dict[str, Any]]] | None) -> dict[str, Any]:
    """Metrics, family tables, comparisons, hypotheses and controls for each split present."""
    splits_present = ["dev", "test"] if split == "both" else [split]
    res_splits: dict[str, Any] = {}
    for sp in splits_present:
        sub = {a: [r for r in rs if r["split"] == sp] for a, rs in per_arm.items()}
        if not any(sub.values()) or not next(iter(sub.values())):
            res_splits[sp] = {"arms": {}, "hypotheses": {}, "note": "no items"}
            continue
        arms_m = {a: arm_metrics(rs, seed) for a, rs in sub.items()}
        if "E" in sub and "D" in sub:
            arms_m["E"]["verification_survival"] = verification_survival(sub["E"], sub["D"])
        res_splits[sp] = {
            "n_items": len(next(iter(sub.values()))),
            "arms": arms_m,
            "families": {a: family_table(rs) for a, rs in sub.items()},
            "comparisons": comparisons(sub, seed),
            "hypotheses": hypotheses(sub, seed, skipped),
        }
        if ctl_recs is not None:
            res_splits[sp]["controls"] = {
                a: summarize_controls([r for r in rs if r["split"] == sp], seed)
                for a, rs in ctl_recs.items()}
    return res_splits


def _definitions() -> dict[str, str]:
    """What each reported quantity means (written into ``results.json``)."""
    return {
        "U": "keyed source chosen, keyed role mapping (where keyed), transfer passes its key",
        "F": "proposal that is not a keyed source (accepted decoy / no-match item)",
        "N": "a part keyed 'withhold' was transferred (F5)",
        "nav": "(U - 1*F - 2*N)/O; nav_ci: seeded percentile bootstrap of the item mean",
        "far_items": "F3/F6 items with a true match (other domain, same-domain decoys in "
                     "a pool of 40)",
        "d_prime": "F2: hit = picks the far analogy, false alarm = picks a decoy; "
                   "loglinear correction (+0.5 per cell)",
        "correct": "U, or nothing proposed on a no-match item (McNemar unit); an item the "
                   "arm failed on (an LLM error) is never correct",
        "failed": "items on which the arm could not answer because an LLM call failed "
                  "(counted as failures, never as abstentions); llm_usage: per arm calls, "
                  "failures, tokens and seconds",
        "noise_band": "seed 002: noise_floor(6 items, drift 0) / n",
        "verification_survival": "E only: of the items where D proposed a source, the share "
                                 "where E proposed that same source (it passed the causal-"
                                 "path gate, the decoy probe and, when configured, the "
                                 "critic); useful_kept / false_killed split it by D's U / F",
        "cost": "wall seconds of the arm's run() per item and per U (shared retrieval is "
                "charged to the first arm calling it); tokens (usage() total_tokens deltas) "
                "per item and per U when the arm reports LLM usage",
        "source_dependence": "controls.py: answer correct on the item's key (F1 inference "
                             "transferred, F4 fix equal, F5 all part decisions equal) with "
                             "the correct source minus with no source / with a surface "
                             "decoy of the source (another template, source's domain, "
                             "seeded by item id); paired bootstrap 95% CI",
        "lesion_sensitivity": "controls.py: share of lesions (one load-bearing source "
                              "relation/edge deleted: F5 the transferred part, F1 the first "
                              "edge of the conclusion's supporting path, F4 the first edge "
                              "into the mechanism's sink) after which the focal transferred "
                              "conclusion is no longer transferred; unchanged = "
                              "rationalisation",
    }


def run_parb(n_items: int, arms: Sequence[str] | None = None, representation: str = "oracle",
             split: str = "both", seed: int = 0, out_dir: str | Path = "parb_out",
             progress: bool = True, embedder: Any | None = None,
             write_report: bool = True, encoder: Any | None = None,
             provider: Any | None = None, critic_provider: Any | None = None,
             items: list[dict[str, Any]] | None = None,
             controls: bool = True) -> dict[str, Any]:
    """Generate ``n_items`` items, run every arm on every item, score, write results.

    ``representation``: ``"oracle"`` (the generator's gold signatures) or ``"encoded"`` (every
    episode re-written from its text by ``encoder``, default the deterministic encoder; see
    :mod:`analogist.bench.parb.encoded`). ``provider``: an LLM for arms A0/A1 and E's parametric
    channel; ``critic_provider``: the independent critic used by arm E (default: ``provider``).
    Without an LLM, A0/A1 are reported as skipped and E runs without critic and parametric
    channel, and says so in ``results["skipped"]``. ``controls``: run the attribution controls
    (:mod:`analogist.bench.parb.controls`) for D, E, G and A1 on F1/F4/F5 items (oracle
    representation only; under ``encoded`` they are reported as skipped).
    """
    names = _arm_names(representation, arms)
    critic_provider = critic_provider if critic_provider is not None else provider
    skipped = _llm_skips(names, provider, critic_provider)
    run_names = [a for a in names if a not in LLM_ARMS or provider is not None]
    arm_objs = make_arms(run_names, provider=provider, critic_provider=critic_provider)
    itemset = generate(n_items, seed, split) if items is None else None
    all_items = itemset.items if itemset is not None else items
    out = Path(out_dir)
    manifest = _write_items(out, itemset, all_items, seed)
    if embedder is None:
        embedder = default_embedder()

    enc = None
    if representation == "encoded":
        if encoder is None:
            encoder = DeterministicEncoder(embedder=embedder)
        enc = _encode_all(all_items, encoder, progress)
    per_arm: dict[str, list[dict[str, Any]]] = {a.name: [] for a in arm_objs}
    ctl_out: dict[str, dict[str, ArmOutput]] = {a.name: {} for a in arm_objs
                                                if a.name in CONTROL_ARMS}
    ctl_recs: dict[str, list[dict[str, Any]]] | None = None
    if controls and representation != "oracle":
        skipped["controls"] = ("attribution controls need the oracle representation (the wrong "
                               "and lesioned sources are generated signatures)")
    timings = {a.name: 0.0 for a in arm_objs}
    usage: dict[str, Any] = {}
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parb-") as tmp:
        mem = Memory.open(Path(tmp) / "parb.db")
        try:
            ctx = ArmContext(mem, embedder, seed=seed)
            bar = _progress(progress)
            with bar:
                task = bar.add_task("PARB", total=len(all_items))
                for i, item in enumerate(all_items):
                    run_item = enc.items[i] if enc is not None else item
                    ctx.encoded_align = enc.align[item["item_id"]] if enc is not None else None
                    pb = ctx.begin(run_item)
                    for arm in arm_objs:
                        o, rec, dt = _run_arm(arm, item, run_item, pb, ctx, enc)
                        timings[arm.name] += dt
                        if arm.name in ctl_out and enc is None:
                            ctl_out[arm.name][item["item_id"]] = o
                        per_arm[arm.name].append(rec)
                    bar.update(task, advance=1)
            for a in arm_objs:
                u = getattr(a, "usage", None)
                if u is not None:
                    usage[a.name] = u()
            if controls and representation == "oracle" and ctl_out:
                c_arms = [a for a in arm_objs if a.name in ctl_out]
                ctl_recs = run_controls(all_items, c_arms, ArmContext(mem, embedder, seed=seed),
                                        correct_outputs=ctl_out)
        finally:
            mem.close()
    elapsed = time.perf_counter() - t_start
    _write_per_item(out / "per_item.jsonl", all_items, per_arm)
    results = {
        "manifest": {k: v for k, v in manifest.items()},
        "representation": representation,
        "arms_run": [a.name for a in arm_objs],
        "arms_requested": names,
        "splits": _split_results(per_arm, split, seed, skipped, ctl_recs),
        "skipped": skipped,
        "paired": all(len(rs) == len(all_items) for rs in per_arm.values()),
        "encoder": enc.stats if enc is not None else None,
        "llm_usage": usage,
        "timing_s": {"total": elapsed, **timings},
        "definitions": _definitions(),
    }
    results = _json_safe(results)
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=False) + "\n",
                                      encoding="utf-8")
    if write_report:
        _write_report(results, out)
    return results


def _tokens(arm: Any) -> int | None:
    u = getattr(arm, "usage", None)
    if u is None:
        return None
    d = u()
    if not d or d.get("total_tokens") is None:
        return None
    return int(d["total_tokens"])


class _NullBar:
    def __enter__(self) -> _NullBar:
        return self

    def __exit__(self, *a: object) -> None:
        return None

    def add_task(self, *a: Any, **k: Any) -> int:
        return 0

    def update(self, *a: Any, **k: Any) -> None:
        return None


def _progress(enabled: bool) -> Any:
    if not enabled:
        return _NullBar()
    # on stderr, never redirecting stdout (the report, JSON included, stays clean); silent
    # when stderr is not a terminal
    console = Console(stderr=True)
    return Progress("[progress.description]{task.description}", BarColumn(),
                    MofNCompleteColumn(), TimeRemainingColumn(), console=console,
                    redirect_stdout=False, redirect_stderr=False,
                    disable=not console.is_terminal)
