"""Position-level alignment evidence X_{k,s} (seed 001, Algorithm 1 line 13) from SME.

The candidate's Event (base) is mapped onto the target's observed view with the structure-mapping
engine; both compile through :meth:`Event.to_signature` with the foresight vocabulary, so
mechanism classes and positions are attributes of the factor entities and the links are
higher-order causal expressions over them. From the best global mapping:

* **fidelity** — the mapping's structural score over the target's self-match score (the
  systematicity-weighted share of the target's observed structure that is mapped), as in
  :mod:`analogist.retrieve`;
* **matches** — candidate factors mapped to target factors with the same position and mechanism:
  the confirming match for an *observed* position;
* **differences** — candidate factors mapped to target factors at the same position with another
  mechanism (the alignable differences of the difference table), or across positions;
* **projections** — candidate factors not mapped but *anchored*: reachable forward (cause →
  effect) within ``anchor_hops`` links from a matched factor (same position and mechanism; a
  pairing by position alone is a difference, not an anchor), or a response acting on such a
  factor. A conclusion transfers only along a causal path that starts in mapped structure;
  factors upstream of the match (its preconditions) are not predictions about the target. Each projection predicts a factor with the
  candidate's position and mechanism in the target (an SME-style candidate inference restricted to
  structure connected to the mapping); its anchor is the confirming match and the missing factor
  with its links is the residual gap;
* **evidence** X_{k,h} per hypothesis h = (position, mechanism): 1 when the candidate matches or
  projects h, 0 when it matches or projects something at h's position but never h's mechanism,
  and absent (silent) when nothing of the candidate reaches that position.

A **direction check** maps the candidate with every link reversed as well: when the reversed
candidate aligns markedly better than the candidate as written (``reverse_margin``), the analogy
runs the causal story backwards and is flagged ``direction_reversed`` (seed 001 Table 5, causal
direction error).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analogist.description import Description
from analogist.foresight.event import Event, Link, foresight_vocabulary
from analogist.params import bounded, check_bounds
from analogist.signature import compile_signature
from analogist.sme import SMEParams, identity_score, match
from analogist.vocabulary import Vocabulary

__all__ = ["AlignParams", "Alignment", "Hypothesis", "Projection", "align", "compile_event"]

Hypothesis = tuple[str, str]
"""(position, mechanism)."""


@dataclass(frozen=True, slots=True)
class AlignParams:
    """Alignment settings.

    Attributes:
        anchor_hops: how many links away from a mapped factor an unmapped candidate factor may
            be and still be projected into the target.
        direction_check: run the reversed-links mapping.
        reverse_margin: the reversed mapping must beat the forward one by this much fidelity
            (absolute) to flag ``direction_reversed``.
        sme: the structure-mapping engine's parameters.
    """

    anchor_hops: int = bounded(4, lo=0, integer=True)
    direction_check: bool = True
    reverse_margin: float = bounded(0.10, lo=0.0, hi=1.0)
    sme: SMEParams = field(default_factory=SMEParams)

    def __post_init__(self) -> None:
        check_bounds(self)


@dataclass(frozen=True, slots=True)
class Projection:
    """A candidate factor predicted into the target."""

    factor: str
    position: str
    mechanism: str
    text: str
    anchors: tuple[tuple[str, str], ...]
    """(candidate factor, target factor) pairs of the mapped factors it connects to."""
    path: tuple[str, ...]
    """The candidate links from the factor to its nearest anchor, as ``A -edge-> B`` strings."""

    def to_json(self) -> dict[str, Any]:
        return {"factor": self.factor, "position": self.position, "mechanism": self.mechanism,
                "text": self.text, "anchors": [list(a) for a in self.anchors],
                "path": list(self.path)}


@dataclass(frozen=True)
class Alignment:
    """Everything one candidate says about the target."""

    candidate: str
    fidelity: float
    sme_score: float
    pairs: tuple[tuple[str, str], ...]
    matches: tuple[tuple[str, str], ...]
    differences: tuple[tuple[str, str], ...]
    projections: tuple[Projection, ...]
    evidence: dict[Hypothesis, int]
    reversed_fidelity: float | None = None
    direction_reversed: bool = False
    reach: dict[str, frozenset[str]] = field(default_factory=dict)
    """position → the mechanisms the candidate matches or projects there."""

    def x(self, h: Hypothesis) -> int | None:
        """X_{k,h}: 1 confirms, 0 reaches h's position with other mechanisms only, None silent."""
        ms = self.reach.get(h[0])
        if ms is None:
            return None
        return 1 if h[1] in ms else 0

    @property
    def mechanism_matches(self) -> int:
        return len(self.matches)

    def to_json(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate, "fidelity": round(self.fidelity, 6),
            "sme_score": round(self.sme_score, 6),
            "pairs": [list(p) for p in self.pairs], "matches": [list(p) for p in self.matches],
            "differences": [list(p) for p in self.differences],
            "projections": [p.to_json() for p in self.projections],
            "evidence": [{"position": s, "mechanism": m, "x": x}
                         for (s, m), x in sorted(self.evidence.items())],
            "reversed_fidelity": None if self.reversed_fidelity is None
            else round(self.reversed_fidelity, 6),
            "direction_reversed": self.direction_reversed,
        }


def compile_event(ev: Event, vocab: Vocabulary | None = None) -> Description:
    """The SME Description of an event (through its Signature; strict vocabulary when the
    event's mechanisms are declared, else unknown mechanisms become proposed terms)."""
    vocab = vocab if vocab is not None else foresight_vocabulary()
    sig = ev.to_signature()
    strict = all(f.mechanism in vocab for f in ev.factors)
    return compile_signature(sig, vocab, strict=strict)


def _reversed(ev: Event) -> Event:
    links = tuple(Link(cause=ln.effect, edge=ln.edge, effect=ln.cause, status=ln.status)
                  for ln in ev.links)
    return ev.model_copy(update={"links": links})


def _fidelity(base: Description, target: Description, target_total: float,
              params: SMEParams) -> tuple[float, Any]:
    res = match(base, target, params)
    best = res.best
    score = best.score if best is not None else 0.0
    fid = min(1.0, score / target_total) if target_total > 0 else 0.0
    return fid, best


def _anchor_paths(cand: Event, mapped: set[str], hops: int
                  ) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Unmapped factors that follow from the matched ones: reachable *forward* (cause → effect)
    within ``hops`` links of a matched factor — what the shared mechanism leads to — plus
    responses that act (prevent, delay, …) on a factor so reached or matched. Each maps to
    (its nearest anchor, the link path from the anchor)."""
    fwd: dict[str, list[tuple[str, str]]] = {}
    for ln in cand.links:
        fwd.setdefault(ln.cause, []).append((ln.effect, f"{ln.cause} -{ln.edge}-> {ln.effect}"))
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    frontier: list[tuple[str, str, tuple[str, ...]]] = [(m, m, ()) for m in sorted(mapped)]
    seen = set(mapped)
    for _ in range(hops):
        nxt: list[tuple[str, str, tuple[str, ...]]] = []
        for node, anchor, path in frontier:
            for eff, txt in sorted(fwd.get(node, ())):
                if eff in seen:
                    continue
                seen.add(eff)
                out[eff] = (anchor, (*path, txt))
                nxt.append((eff, anchor, (*path, txt)))
        frontier = nxt
    pos = {f.id: f.position for f in cand.factors}
    reached = set(mapped) | set(out)
    for ln in sorted(cand.links, key=lambda x: (x.cause, x.edge, x.effect)):
        if (pos[ln.cause] == "response" and ln.cause not in reached and ln.effect in reached):
            anchor, path = (ln.effect, ()) if ln.effect in mapped else out[ln.effect]
            out[ln.cause] = (anchor, (*path, f"{ln.cause} -{ln.edge}-> {ln.effect}"))
    return out


def align(target: Event, cand: Event, params: AlignParams | None = None, *,
          vocab: Vocabulary | None = None, target_desc: Description | None = None,
          cand_desc: Description | None = None) -> Alignment:
    """Map ``cand`` onto ``target`` (its observed view) and read off the position evidence."""
    params = params or AlignParams()
    vocab = vocab if vocab is not None else foresight_vocabulary()
    tdesc = target_desc if target_desc is not None else compile_event(target, vocab)
    cdesc = cand_desc if cand_desc is not None else compile_event(cand, vocab)
    t_total = identity_score(tdesc, params.sme)
    fid, best = _fidelity(cdesc, tdesc, t_total, params.sme)
    t_ids = {f.id for f in target.factors}
    c_ids = {f.id for f in cand.factors}
    pairs = tuple(sorted((b, t) for b, t in (best.entity_pairs if best is not None else ())
                         if b in c_ids and t in t_ids))
    tf = {f.id: f for f in target.factors}
    cf = {f.id: f for f in cand.factors}
    matches = tuple(p for p in pairs if cf[p[0]].mechanism == tf[p[1]].mechanism
                    and cf[p[0]].position == tf[p[1]].position)
    differences = tuple(p for p in pairs if p not in matches)
    # only factors matched on position and mechanism anchor projections: a pairing by position
    # alone (an alignable difference) is not a shared mechanism to reason from
    anchored = {b for b, _ in matches}
    corr = dict(matches)
    projections = []
    for fid_, (anchor, path) in sorted(_anchor_paths(cand, anchored,
                                                     params.anchor_hops).items()):
        f = cf[fid_]
        projections.append(Projection(f.id, f.position, f.mechanism, f.text,
                                      ((anchor, corr[anchor]),), path))
    # evidence: which positions the candidate reaches, and with which mechanisms
    reach: dict[str, set[str]] = {}
    for b in anchored:
        reach.setdefault(cf[b].position, set()).add(cf[b].mechanism)
    for p in projections:
        reach.setdefault(p.position, set()).add(p.mechanism)
    hyps: set[Hypothesis] = set(target.hypotheses())
    hyps |= {(s, m) for s, ms in reach.items() for m in ms}
    evidence: dict[Hypothesis, int] = {}
    for s, m in hyps:
        if s in reach:
            evidence[(s, m)] = 1 if m in reach[s] else 0
    rev_fid: float | None = None
    flagged = False
    if params.direction_check and cand.links:
        rdesc = compile_event(_reversed(cand), vocab)
        rev_fid, _ = _fidelity(rdesc, tdesc, t_total, params.sme)
        flagged = rev_fid > fid + params.reverse_margin
    return Alignment(cand.event_id, fid, best.score if best is not None else 0.0, pairs, matches,
                     differences, tuple(projections), evidence, rev_fid, flagged,
                     {s: frozenset(ms) for s, ms in reach.items()})
