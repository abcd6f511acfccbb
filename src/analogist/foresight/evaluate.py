"""Hidden-factor evaluation over the corpus (issue 6; seed 001 §5.2, "HF@L4").

Every corpus event with a cutoff and at least one hidden factor is a target. Leave-one-out: the
target, its aliases and every event it is part of or that is part of it are removed from the
pool; with ``pool="past"`` every event that starts after the target's cutoff goes too, so only
history the analyst could have known is used.

A target's **hidden factors** are the (position, mechanism) pairs of its factors after the cutoff
that the observed view does not already show. An arm **asserts** a hypothesis when its posterior
clears 1 − δ; **recall** is the share of hidden factors asserted, **precision** the share of
asserted new hypotheses (not observed at the cutoff) that are hidden factors of the target. Both
are micro-averaged over targets, with percentile-bootstrap CIs over targets; arms are paired on
the same targets (paired bootstrap of per-target differences, exact McNemar on per-hidden-factor
hits).

Arms (the same π, q, p, δ, the same filter rules and the same negative-evidence reading for all):

* ``cana`` — the full reflective loop (:func:`run_foresight`): MAC → SME alignment → Decide,
  R rounds;
* ``cana_r0`` — round 0 only (no reflection): the contribution of the loop;
* ``single`` — the best-aligned analogy of round 0 alone; every factor it matches or projects is
  asserted without confirmation (Principle 2 ablated);
* ``surface`` — the surface-only baseline of Theorem 4: the ``k`` events whose descriptions are
  most similar to the target's pre-cutoff brief (sentence embeddings, cosine), filtered by the
  same rules; every factor of an analogy is evidence for its (position, mechanism) with no
  structural alignment; confirmed with the same arithmetic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from analogist.errors import AnalogistError
from analogist.foresight.calibration import Calibration
from analogist.foresight.confirm import posterior
from analogist.foresight.event import Corpus, Event, TargetView, parse_date
from analogist.foresight.filter import check_candidate, independence_groups
from analogist.foresight.loop import ForesightParams, run_foresight
from analogist.stats import mcnemar_from_outcomes, paired_bootstrap_ci, ratio_bootstrap_ci

__all__ = ["ARMS", "embed_corpus", "eval_targets", "evaluate", "loo_pool", "split_of",
           "surface_arm", "surface_evidence"]

ARMS: tuple[str, ...] = ("cana", "cana_r0", "single", "surface")
POOLS: tuple[str, ...] = ("loo", "past", "cross")
"""loo: every other event; past: only events that began before the target's cutoff; cross:
only events of other domains (where a surface match has little to hold on to)."""

Hyp = tuple[str, str]


def eval_targets(corpus: Corpus) -> list[Event]:
    """Corpus events with a cutoff at which something is hidden, in id order."""
    out = []
    for e in corpus.events:
        if e.cutoff is None:
            continue
        try:
            tv = e.at_cutoff()
        except AnalogistError:
            continue
        if tv.hidden_hypotheses():
            out.append(e)
    return sorted(out, key=lambda e: e.event_id)


def split_of(event_id: str) -> str:
    """A fixed dev/test split by hash of the id (about one third test)."""
    h = int(hashlib.sha256(event_id.encode("utf-8")).hexdigest()[:8], 16)
    return "test" if h % 3 == 0 else "dev"


def loo_pool(target: Event, corpus: Corpus, pool: str = "loo") -> list[Event]:
    """The leave-one-out pool for ``target`` (see the module docstring)."""
    if pool not in POOLS:
        raise AnalogistError(f"pool must be one of {', '.join(POOLS)}, got {pool!r}",
                             field="pool")
    cut = parse_date(target.cutoff.date) if target.cutoff else None
    out = []
    for e in corpus.events:
        if e.event_id == target.event_id:
            continue
        rej = check_candidate(target, e, corpus, rules=("alias", "sub_event", "super_set"))
        if rej is not None:
            continue
        if pool == "past" and cut is not None and parse_date(e.start) > cut:
            continue
        if pool == "cross" and e.domain == target.domain:
            continue
        out.append(e)
    return out


def embed_corpus(corpus: Corpus, targets: Sequence[Event], embedder: Any = None
                 ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Sentence vectors of every event's surface text and of every target's pre-cutoff brief."""
    if embedder is None:
        # the embedder package (httpx among it) and its weights, only when asked for
        from analogist.index.embed import default_embedder

        embedder = default_embedder()
    evs = list(corpus.events)
    mat = embedder.embed([e.surface_text() for e in evs])
    vectors = {e.event_id: np.asarray(mat[i], dtype=float) for i, e in enumerate(evs)}
    tl = list(targets)
    qs = embedder.embed([e.at_cutoff().brief_text() for e in tl]) if tl else []
    queries = {e.event_id: np.asarray(qs[i], dtype=float) for i, e in enumerate(tl)}
    return vectors, queries


def surface_evidence(tv: TargetView, pool: Sequence[Event], corpus: Corpus,
                     params: ForesightParams, vectors: dict[str, np.ndarray], query: np.ndarray,
                     k: int) -> tuple[list[Event], set[Hyp], Callable[[Event, Hyp], int | None]]:
    """The surface-only selection: the ``k`` events (passing the filter) whose descriptions are
    most similar to the target's brief; every factor of an analogy is evidence for its
    (position, mechanism). Returns (analogies, their hypotheses, X(analogy, hypothesis))."""
    tev = tv.view
    scored = sorted(pool, key=lambda e: (-float(vectors[e.event_id] @ query), e.event_id))
    chosen: list[Event] = []
    for e in scored:
        if len(chosen) >= k:
            break
        if check_candidate(tev, e, corpus, rules=params.rules) is None:
            chosen.append(e)
    hyps: set[Hyp] = set()
    for e in chosen:
        hyps |= e.hypotheses()

    def x(e: Event, h: Hyp) -> int | None:
        hs = e.hypotheses()
        if h in hs:
            return 1
        if params.negative_evidence == "position" and h[0] in {s for s, _ in hs}:
            return 0
        return None

    return chosen, hyps, x


def surface_arm(tv: TargetView, pool: Sequence[Event], corpus: Corpus, params: ForesightParams,
                vectors: dict[str, np.ndarray], query: np.ndarray, k: int,
                calibration: Calibration | None = None) -> tuple[set[Hyp], list[str]]:
    """The surface-only baseline: :func:`surface_evidence`, then Theorem 5 (with the surface
    arm's own calibration when given). Returns (asserted hypotheses, the analogies used)."""
    chosen, hyps, xf = surface_evidence(tv, pool, corpus, params, vectors, query, k)
    groups = independence_groups(chosen, corpus)
    rates = None
    if calibration is not None:
        rate = calibration.rates.get("surface")
        rates = {e.event_id: rate for e in chosen} if rate is not None else {}
    asserted: set[Hyp] = set()
    for h in hyps:
        ev = {e.event_id: x for e in chosen if (x := xf(e, h)) is not None
              and (rates is None or e.event_id in rates)}
        pi = calibration.prior(h[0], params.confirm.pi) if calibration is not None else None
        if posterior(ev, params.confirm, groups, rates=rates, pi=pi).asserted:
            asserted.add(h)
    return asserted, [e.event_id for e in chosen]


def _scores(asserted: set[Hyp], observed: set[Hyp], hidden: set[Hyp]) -> dict[str, Any]:
    new = asserted - observed
    tp = new & hidden
    return {"asserted": sorted(map(list, new)), "tp": len(tp), "n_asserted": len(new),
            "n_hidden": len(hidden), "hits": sorted(map(list, tp))}


def summarize(rows: list[dict[str, Any]], arms: Sequence[str], *, seed: int = 0,
              n_boot: int = 2000) -> dict[str, Any]:
    """Micro recall/precision per arm with bootstrap CIs, and paired comparisons vs ``surface``
    (and ``cana`` vs ``single`` / ``cana_r0``)."""
    out: dict[str, Any] = {"n_targets": len(rows),
                           "n_hidden": int(sum(r["n_hidden"] for r in rows)), "arms": {}}
    if not rows:
        return out
    for arm in arms:
        rng = np.random.default_rng(seed)
        tp = np.array([r["arms"][arm]["tp"] for r in rows], dtype=float)
        hid = np.array([r["arms"][arm]["n_hidden"] for r in rows], dtype=float)
        ass = np.array([r["arms"][arm]["n_asserted"] for r in rows], dtype=float)
        rec = ratio_bootstrap_ci(tp, hid, rng, n_boot)
        prec = ratio_bootstrap_ci(tp, ass, rng, n_boot)
        out["arms"][arm] = {
            "recall": rec[0], "recall_ci": [rec[1], rec[2]],
            "precision": prec[0], "precision_ci": [prec[1], prec[2]],
            "tp": int(tp.sum()), "asserted": int(ass.sum()), "hidden": int(hid.sum()),
            "targets_with_a_hit": int((tp > 0).sum()),
        }
    pairs = [("cana", "surface"), ("cana", "single"), ("cana", "cana_r0"),
             ("cana_r0", "surface")]
    comps = {}
    for a, b in pairs:
        if a not in arms or b not in arms:
            continue

        def per_target(arm: str, key: str) -> list[float]:
            return [r["arms"][arm][key] / r["n_hidden"] for r in rows]

        rec_ci = paired_bootstrap_ci(per_target(a, "tp"), per_target(b, "tp"), seed=seed,
                                     n_boot=n_boot)
        hits_a, hits_b = [], []
        for r in rows:
            ha = {tuple(h) for h in r["arms"][a]["hits"]}
            hb = {tuple(h) for h in r["arms"][b]["hits"]}
            for h in r["hidden"]:
                hits_a.append(tuple(h) in ha)
                hits_b.append(tuple(h) in hb)
        fp_a = [r["arms"][a]["n_asserted"] - r["arms"][a]["tp"] for r in rows]
        fp_b = [r["arms"][b]["n_asserted"] - r["arms"][b]["tp"] for r in rows]
        fp_ci = paired_bootstrap_ci(fp_a, fp_b, seed=seed, n_boot=n_boot)
        comps[f"{a}-{b}"] = {"macro_recall_diff": rec_ci,
                             "mcnemar_hidden_factors": mcnemar_from_outcomes(hits_a, hits_b),
                             "false_assertions_per_target_diff": fp_ci}
    out["paired"] = comps
    return out


def evaluate(corpus: Corpus, *, params: ForesightParams | None = None,
             arms: Sequence[str] = ARMS, pool: str = "loo", surface_k: int | None = None,
             embedder: Any = None, targets: Sequence[str] | None = None, seed: int = 0,
             surface_calibration: Calibration | None = None, mac_text: bool = True,
             progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Run every arm on every target; returns per-target rows and the summary per split.
    ``params.calibration`` is the CANA arms' calibration, ``surface_calibration`` the surface
    arm's (each None: the homogeneous π, q, p of ``params.confirm``)."""
    params = params or ForesightParams()
    bad = [a for a in arms if a not in ARMS]
    if bad:
        raise AnalogistError(f"unknown arm(s) {', '.join(bad)}; expected some of "
                             f"{', '.join(ARMS)}", field="arms")
    tlist = eval_targets(corpus)
    if targets is not None:
        want = set(targets)
        missing = want - {e.event_id for e in tlist}
        if missing:
            raise AnalogistError(f"not evaluation targets (no cutoff or nothing hidden, or not "
                                 f"in the corpus): {', '.join(sorted(missing))}")
        tlist = [e for e in tlist if e.event_id in want]
    k_surface = surface_k if surface_k is not None else params.per_round
    vectors: dict[str, np.ndarray] = {}
    queries: dict[str, np.ndarray] = {}
    mac_embedder = None
    if "surface" in arms or (params.w_embedding > 0 and mac_text):
        if embedder is None:
            # the embedder package (httpx among it) and its weights, only when asked for
            from analogist.index.embed import default_embedder

            embedder = default_embedder()
        vectors, queries = embed_corpus(corpus, tlist, embedder)
        mac_embedder = embedder if mac_text else None
    rows: list[dict[str, Any]] = []
    r0 = replace(params, rounds=0)
    for n, tgt in enumerate(tlist):
        tv = tgt.at_cutoff()
        obs = tv.view.hypotheses()
        hidden = tv.hidden_hypotheses()
        pool_l = loo_pool(tgt, corpus, pool)
        row: dict[str, Any] = {"target": tgt.event_id, "split": split_of(tgt.event_id),
                               "domain": tgt.domain, "n_hidden": len(hidden),
                               "hidden": sorted(map(list, hidden)), "pool": len(pool_l),
                               "arms": {}}
        if "cana" in arms:
            res = run_foresight(tv, pool_l, params=params, corpus=corpus, embedder=mac_embedder,
                                vectors=vectors)
            row["arms"]["cana"] = _scores({h for h, _ in res.predicted()}, obs, hidden) | {
                "analogies": [a.candidate for a in res.decision.ranked],
                "rounds": len(res.rounds), "stop": res.stop_reason}
        res0 = None
        if "cana_r0" in arms or "single" in arms:
            res0 = run_foresight(tv, pool_l, params=r0, corpus=corpus, embedder=mac_embedder,
                                 vectors=vectors)
        if "cana_r0" in arms and res0 is not None:
            row["arms"]["cana_r0"] = _scores({h for h, _ in res0.predicted()}, obs, hidden) | {
                "analogies": [a.candidate for a in res0.decision.ranked]}
        if "single" in arms and res0 is not None:
            best = res0.decision.best
            single = {h for h, x in best.evidence.items() if x == 1} if best else set()
            row["arms"]["single"] = _scores(single, obs, hidden) | {
                "analogies": [best.candidate] if best else []}
        if "surface" in arms:
            asserted, used = surface_arm(tv, pool_l, corpus, params, vectors,
                                         queries[tgt.event_id], k_surface, surface_calibration)
            row["arms"]["surface"] = _scores(asserted, obs, hidden) | {"analogies": used}
        rows.append(row)
        if progress is not None:
            progress(n + 1, len(tlist))
    summary = {"all": summarize(rows, arms, seed=seed)}
    for sp in ("dev", "test"):
        summary[sp] = summarize([r for r in rows if r["split"] == sp], arms, seed=seed)
    cp = params.confirm
    cals = {"cana": params.calibration.to_json() if params.calibration else None,
            "surface": surface_calibration.to_json() if surface_calibration else None}
    return {"pool": pool, "arms": list(arms), "surface_k": k_surface, "calibration": cals,
            "params": {"pi": cp.pi, "q": cp.q, "p": cp.p, "delta": cp.delta,
                       "rounds": params.rounds, "per_round": params.per_round,
                       "carryover": params.carryover, "min_fidelity": params.min_fidelity,
                       "min_matches": params.min_matches,
                       "negative_evidence": params.negative_evidence},
            "corpus_events": len(corpus), "summary": summary, "rows": rows}
