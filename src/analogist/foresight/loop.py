"""The reflective loop of CANA (seed 001, Algorithm 1) over a pool of candidate events.

::

    A(0)  = Gen(pattern, K)                         MAC: content cosine over the pool
    for t in 0..R:
        E(t) = { (E_k, Align(T, E_k)) : E_k in A(t), not Filter(T, E_k) }  ∪ carry-over
        D(t) = Decide(E(t))     prune (hard rules, surface-only, reversed direction), rank by
                                mapping fidelity, posterior per hypothesis (Theorem 5),
                                is_sufficient, common_gap, next_focus
        stop if D(t).is_sufficient
        carry-over = D(t).top_M
        A(t+1) = Gen(pattern, common_gap, next_focus) \\ tried     stop if empty

**Candidates** come from the pool: the bundled corpus, events read from the user's memory, and
(when an LLM is configured) events the model proposes from its own knowledge, labelled
``parametric`` (:mod:`analogist.foresight.llm`). **Gen** ranks the untried pool by the content
cosine of compiled signatures (the MAC stage) and, after round 0, adds a bonus for every
under-confirmed hypothesis the candidate exhibits (the reflection: generation conditioned on the
common gap). **Align** is SME (:mod:`analogist.foresight.align`); **Decide** computes posteriors
with :func:`analogist.foresight.confirm.posterior` over independence groups.

Departures from Algorithm 1, stated: Repr and Abs are given (events are already decomposed; the
pattern's positions are the seven of :data:`POSITIONS` and the hypotheses are (position,
mechanism) pairs); the filter's rules run before alignment, the structural gates (fidelity,
mechanism matches, direction) in Decide; the result keeps the whole ranking, not only E*.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analogist.errors import AnalogistError
from analogist.foresight.align import Alignment, AlignParams, Hypothesis, align, compile_event
from analogist.foresight.calibration import Calibration, bundled_calibration, strength_bin
from analogist.foresight.confirm import ConfirmParams, Posterior, posterior
from analogist.foresight.event import POSITIONS, Corpus, Event, TargetView, foresight_vocabulary
from analogist.foresight.filter import RULES, Rejection, check_candidate, independence_groups
from analogist.index.content import ContentIndex
from analogist.index.features import content_features
from analogist.params import bounded, check_bounds, one_of

__all__ = ["Decision", "ForesightParams", "ForesightResult", "RoundLog", "decide", "run_foresight"]


@dataclass(frozen=True, slots=True)
class ForesightParams:
    """Settings of the loop (names after Algorithm 1).

    Attributes:
        rounds: R, the most reflection rounds after round 0.
        per_round: K, candidates aligned per round.
        carryover: M, the top analogies carried into the next round's decision.
        min_fidelity: an analogy whose mapping covers less of the target's observed structure is
            rejected as ``surface_only``.
        min_matches: and so is one with fewer factors matched on position and mechanism.
        gap_weight: the bonus per under-confirmed hypothesis a candidate exhibits, in Gen.
        w_embedding: the weight of the text-embedding channel in MAC when an embedder is given.
        negative_evidence: ``"position"`` — an analogy that reaches a position with other
            mechanisms counts against (X = 0) a hypothesis there; ``"none"`` — only confirmations
            count (silence and difference alike are no evidence).
        rules: the filter rules in force.
        confirm: Theorem 5's π, q, p, δ (δ always; π, q, p when there is no calibration).
        calibration: per-position priors π_s and per-strength-bin (q, p) counted on development
            targets (:mod:`analogist.foresight.calibrate`); None uses ``confirm``'s homogeneous
            values. :meth:`calibrated` gives the defaults with the bundled calibration.
        align: alignment settings.
    """

    rounds: int = bounded(3, lo=0, integer=True)
    per_round: int = bounded(8, lo=1, integer=True)
    carryover: int = bounded(8, lo=0, integer=True)
    min_fidelity: float = bounded(0.05, lo=0.0, hi=1.0)
    min_matches: int = bounded(1, lo=0, integer=True)
    gap_weight: float = bounded(0.25, lo=0.0)
    w_embedding: float = bounded(0.5, lo=0.0)
    negative_evidence: str = one_of("position", ("position", "none"))
    rules: tuple[str, ...] = one_of(RULES, RULES, each=True)
    confirm: ConfirmParams = field(default_factory=ConfirmParams)
    align: AlignParams = field(default_factory=AlignParams)
    calibration: Calibration | None = None

    @classmethod
    def calibrated(cls, **kw: Any) -> ForesightParams:
        """These settings with the calibration bundled with the corpus (when there is one)."""
        kw.setdefault("calibration", bundled_calibration("cana"))
        return cls(**kw)

    def __post_init__(self) -> None:
        check_bounds(self)


@dataclass(frozen=True)
class Decision:
    """Decide(E(t)): the ranking, the posteriors and what is still missing."""

    ranked: tuple[Alignment, ...]
    rejected: tuple[Rejection, ...]
    posteriors: dict[Hypothesis, Posterior]
    support: dict[Hypothesis, tuple[str, ...]]
    groups: dict[str, str]
    is_sufficient: bool
    common_gap: tuple[Hypothesis, ...]
    next_focus: Hypothesis | None

    @property
    def best(self) -> Alignment | None:
        return self.ranked[0] if self.ranked else None

    def top(self, m: int) -> tuple[Alignment, ...]:
        return self.ranked[:m]


@dataclass(frozen=True)
class RoundLog:
    round: int
    generated: tuple[str, ...]
    filtered: tuple[Rejection, ...]
    aligned: tuple[str, ...]
    eligible: tuple[str, ...]
    sufficient: bool
    common_gap: tuple[Hypothesis, ...]

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "generated": list(self.generated),
                "filtered": [r.to_json() for r in self.filtered], "aligned": list(self.aligned),
                "eligible": list(self.eligible), "sufficient": self.sufficient,
                "common_gap": [list(h) for h in self.common_gap]}


@dataclass(frozen=True)
class ForesightResult:
    """What the loop returns: the target, the final decision, every round and the events."""

    target: TargetView
    decision: Decision
    rounds: tuple[RoundLog, ...]
    events: dict[str, Event]
    params: ForesightParams
    stop_reason: str
    skipped: tuple[str, ...] = ()

    def observed(self) -> set[Hypothesis]:
        return self.target.view.hypotheses()

    def predicted(self) -> list[tuple[Hypothesis, Posterior]]:
        """Hidden factors asserted at 1 − δ (not already observed), highest posterior first."""
        obs = self.observed()
        out = [(h, p) for h, p in self.decision.posteriors.items() if p.asserted and h not in obs]
        return sorted(out, key=lambda x: (-x[1].log_odds, x[0]))

    def candidates(self) -> list[tuple[Hypothesis, Posterior]]:
        """Hidden-factor hypotheses with some support but below 1 − δ."""
        obs = self.observed()
        out = [(h, p) for h, p in self.decision.posteriors.items()
               if not p.asserted and h not in obs and p.confirmations > 0]
        return sorted(out, key=lambda x: (-x[1].log_odds, x[0]))


# -- decide ----------------------------------------------------------------------------------
def decide(target: Event, alignments: Iterable[Alignment], events: dict[str, Event],
           params: ForesightParams, corpus: Corpus | None = None) -> Decision:
    """Prune, rank and confirm (Algorithm 1 line 18)."""
    ranked: list[Alignment] = []
    rejected: list[Rejection] = []
    seen: set[str] = set()
    for a in alignments:
        if a.candidate in seen:
            continue
        seen.add(a.candidate)
        if a.direction_reversed:
            rejected.append(Rejection(a.candidate, "direction_reversed",
                                      f"the reversed causal story aligns better "
                                      f"({a.reversed_fidelity:.2f} vs {a.fidelity:.2f})"))
        elif a.fidelity < params.min_fidelity or a.mechanism_matches < params.min_matches:
            rejected.append(Rejection(a.candidate, "surface_only",
                                      f"fidelity {a.fidelity:.2f}, {a.mechanism_matches} "
                                      f"mechanism match(es): no mechanism-level alignment"))
        else:
            ranked.append(a)
    ranked.sort(key=lambda a: (-a.fidelity, a.candidate))
    groups = independence_groups([events[a.candidate] for a in ranked], corpus)
    hyps: set[Hypothesis] = set(target.hypotheses())
    for a in ranked:
        hyps |= set(a.evidence)
    cal = params.calibration
    rates: dict[str, tuple[float, float]] | None = None
    usable = list(ranked)
    if cal is not None:
        rates = {a.candidate: cal.rates[b] for a in ranked
                 if (b := strength_bin(a.mechanism_matches)) in cal.rates}
        usable = [a for a in ranked if a.candidate in rates]

    def prior_of(h: Hypothesis) -> float:
        return cal.prior(h[0], params.confirm.pi) if cal is not None else params.confirm.pi

    posts: dict[Hypothesis, Posterior] = {}
    support: dict[Hypothesis, tuple[str, ...]] = {}
    for h in sorted(hyps):
        ev = {a.candidate: x for a in usable if (x := a.x(h)) is not None}
        if params.negative_evidence == "none":
            ev = {k: v for k, v in ev.items() if v == 1}
        posts[h] = posterior(ev, params.confirm, groups, rates=rates, pi=prior_of(h))
        support[h] = tuple(k for k, v in ev.items() if v == 1)
    obs = target.hypotheses()
    gap = [h for h, p in posts.items()
           if not p.asserted and (h in obs or (p.confirmations > 0
                                               and p.probability > prior_of(h)))]
    # positions of the pattern no aligned analogy reaches at all
    reached = {h[0] for h, p in posts.items() if p.confirmations > 0}
    gap += [(s, "") for s in POSITIONS if s not in reached]
    gap_t = tuple(sorted(gap, key=lambda h: (-posts[h].probability if h in posts else 0.0, h)))
    focus = next((h for h in gap_t if h[1]), None)
    return Decision(tuple(ranked), tuple(rejected), posts, support, groups,
                    not gap_t, gap_t, focus)


# -- the loop --------------------------------------------------------------------------------
def _pool_features(pool: Sequence[Event]) -> tuple[ContentIndex, list[dict[str, float]]]:
    feats = [content_features(e.to_signature()) for e in pool]
    return ContentIndex(list(range(len(pool))), feats), feats


def _embedding_scores(tv: TargetView, pool: list[Event], embedder: Any,
                      cache: dict[str, Any]) -> np.ndarray:
    """The cosine of the target's brief and each pool event's surface text (unit vectors;
    event vectors missing from ``cache`` are embedded and added to it)."""
    missing = [e for e in pool if e.event_id not in cache]
    if missing:
        mat = embedder.embed([e.surface_text() for e in missing])
        for i, e in enumerate(missing):
            cache[e.event_id] = np.asarray(mat[i], dtype=float)
    qv = np.asarray(embedder.embed([tv.brief_text()])[0], dtype=float)
    return np.array([float(cache[e.event_id] @ qv) for e in pool])


def _gap_scores(base_scores: np.ndarray, pool: list[Event], gap: tuple[Hypothesis, ...],
                params: ForesightParams) -> np.ndarray:
    """``base_scores`` plus the gap bonus: each event's hypotheses in the common gap (half
    for a gap position it reaches with another mechanism), times ``params.gap_weight``."""
    scores = base_scores.copy()
    want = {h for h in gap if h[1]}
    want_pos = {h[0] for h in gap if not h[1]}
    for i, e in enumerate(pool):
        hs = e.hypotheses()
        bonus = len(hs & want) + 0.5 * len({s for s, _ in hs} & want_pos)
        scores[i] += params.gap_weight * bonus
    return scores


def _pick_from_pool(order: list[int], pool: list[Event], tev: Event, links: Corpus,
                    tried: set[str], params: ForesightParams
                    ) -> tuple[list[Event], list[Rejection]]:
    """Up to ``params.per_round`` pool events, best first, that pass the candidate filter
    (each one looked at is added to ``tried``), and the rejections on the way."""
    generated: list[Event] = []
    filtered: list[Rejection] = []
    for i in order:
        if len(generated) >= params.per_round:
            break
        e = pool[i]
        tried.add(e.event_id)
        rej = check_candidate(tev, e, links, rules=params.rules)
        if rej is not None:
            filtered.append(rej)
            continue
        generated.append(e)
    return generated, filtered


def run_foresight(target: Event | TargetView, pool: Iterable[Event], *,
                  params: ForesightParams | None = None, corpus: Corpus | None = None,
                  generate: Callable[[TargetView, tuple[Hypothesis, ...], set[str]],
                                     list[Event]] | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  embedder: Any = None,
                  vectors: dict[str, Any] | None = None) -> ForesightResult:
    """Run Algorithm 1 for ``target`` over ``pool``.

    Args:
        target: an Event (cut at its own cutoff, if it has one) or an explicit TargetView.
        pool: candidate events (the target itself and its aliases are removed by the filter).
        params: loop settings.
        corpus: the corpus whose part-of links the filter and independence groups read
            (default: the pool itself).
        generate: an optional extra generator (the LLM's parametric proposals): called each
            round with the target, the common gap and the tried ids; returns new Events.
        progress: called with (round, rounds) as rounds complete.
        embedder: adds the text-embedding channel to MAC (``params.w_embedding`` × the cosine of
            the target's brief and each event's description), as in
            :mod:`analogist.retrieve`; None leaves MAC structural only.
        vectors: precomputed unit vectors of event surface texts (event id → vector), reused
            across calls; missing ones are embedded.
    """
    params = params or ForesightParams()
    tv = target if isinstance(target, TargetView) else target.at_cutoff()
    tev = tv.view
    pool_l = list(pool)
    ids = [e.event_id for e in pool_l]
    if len(set(ids)) != len(ids):
        raise AnalogistError("the candidate pool lists an event id twice")
    links = corpus if corpus is not None else Corpus(tuple(pool_l), "pool")
    vocab = foresight_vocabulary()
    tdesc = compile_event(tev, vocab)
    index, feats = _pool_features(pool_l)
    base_scores = index.scores(content_features(tev.to_signature()))
    if embedder is not None and params.w_embedding > 0 and pool_l:
        base_scores = base_scores + params.w_embedding * _embedding_scores(
            tv, pool_l, embedder, vectors if vectors is not None else {})
    events: dict[str, Event] = {e.event_id: e for e in pool_l}
    tried: set[str] = set()
    carry: tuple[Alignment, ...] = ()
    logs: list[RoundLog] = []
    decision: Decision | None = None
    stop = "rounds exhausted"
    gap: tuple[Hypothesis, ...] = ()
    skipped: list[str] = []
    total_rounds = params.rounds + 1
    for t in range(total_rounds):
        # Gen
        scores = (_gap_scores(base_scores, pool_l, gap, params) if t > 0 and gap
                  else base_scores.copy())
        order = sorted((i for i in range(len(pool_l)) if ids[i] not in tried),
                       key=lambda i: (-scores[i], ids[i]))
        generated, filtered = _pick_from_pool(order, pool_l, tev, links, tried, params)
        if generate is not None:
            try:
                extra = generate(tv, gap, set(tried))
            except AnalogistError as err:
                skipped.append(f"round {t}: parametric candidates skipped: {err}")
                extra = []
            for e in extra:
                if e.event_id in tried or e.event_id in events and events[e.event_id] is not e:
                    continue
                tried.add(e.event_id)
                rej = check_candidate(tev, e, links, rules=params.rules)
                if rej is not None:
                    filtered.append(rej)
                    continue
                events[e.event_id] = e
                generated.append(e)
        if not generated and t > 0:
            stop = "no new candidates"
            break
        # Align
        aligned = [align(tev, e, params.align, vocab=vocab, target_desc=tdesc)
                   for e in generated]
        # Decide
        decision = decide(tev, [*aligned, *carry], events, params, links)
        gap = decision.common_gap
        logs.append(RoundLog(t, tuple(e.event_id for e in generated), tuple(filtered),
                             tuple(a.candidate for a in aligned),
                             tuple(a.candidate for a in decision.ranked), decision.is_sufficient,
                             gap))
        if progress is not None:
            progress(t + 1, total_rounds)
        if decision.is_sufficient:
            stop = "sufficient"
            break
        carry = decision.top(params.carryover)
    if decision is None:
        decision = decide(tev, [], events, params, links)
    return ForesightResult(tv, decision, tuple(logs), events, params, stop, tuple(skipped))

