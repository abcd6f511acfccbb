"""PARB arms (seed 000 §16): the offline arms B, B′, C, C′, H, D, E, G as small objects.

Every arm has a ``name`` and ``run(item, ctx) -> ArmOutput``. An item is turned into one
uniform retrieval problem by :func:`problem_of`: a *query* signature, a *pool* of candidate
episodes (id → signature data), the keyed answer ids (empty for "no true match") and the keyed
role mapping oriented **pool episode (base) → query** — the direction the judge maps in.

* F1, F4, F5: query = the target, pool = [the source] (the task is mapping and transfer).
* F2: query = the target, pool = the four candidates (far analogy + three decoys).
* F3, F6: query = the target, pool = the 40 pool episodes (30 % / 50 % no true match).
* F7, F8: query = the source, pool = [the target, its decoy] (the key's ``answer``).

Arms (A0/A1, the bare-LLM arms, live in :mod:`analogist.bench.parb.llm_arms`; without an LLM
the runner reports them as skipped):

* **B** — surface retrieval: cosine of the default embedder on the L0 text fused with BM25
  (Robertson & Zaragoza 2009, k1 = 1.2, b = 0.75, written here) over L0 tokens,
  ``0.5·cos + 0.5·bm25/max(bm25)``; the top candidate is always proposed, nothing is mapped.
* **B′** — B with its context raised to C's: the ranked list is as long as C's FAC shortlist
  (``RetrieveParams.shortlist``) and the text is every level C's structural channels see
  (L0–L3), so a C-over-B gain cannot come from more context.
* **C** — structural retrieval: :class:`analogist.retrieve.Retriever` (MAC/FAC) over a
  namespace holding the pool's gold signatures; no judge gate: the top result is proposed
  unless the retriever itself reports "no match" (its ``min_score``). Nothing is mapped.
* **C′** — placebo: C over a namespace where the signatures are shuffled across the pool's
  episodes (a seeded derangement; ids and therefore keys stay put). A one-episode pool borrows
  the structure of another item's episode.
* **H** — hybrid: C's and B's ranked lists interleaved (C first), duplicates dropped.
* **D** — C + forced SME mapping: the first of C's results whose mapping covers at least half
  of the source's relations and edges is proposed, with the judge's role map, the fix projected
  through it, and per-part transfer decisions (a part transfers iff the mapping matched it).
* **E** — D + causal-path gate + prediction + decoy probe (+ the independent critic and the
  labelled parametric channel when an LLM is configured): proposes and transfers only when the
  judge transfers the mechanism or a conclusion, the retriever's decoy probe did not accept a
  decoy, and the critic (if any) does not reject it.
* **G** — oracle: the keyed source handed over (nothing on a no-match item), then D's mapping.

On F7/F8 the query is the source, so D, E and G judge the query as the base and the candidate
as the target (the mapping is inverted back to candidate → query for scoring); otherwise the
gate would read a target's missing fix as "nothing transfers". A mapping arm's transferred
conclusions include the judge's candidate inferences (unmapped source structure projected
through the role map) whenever it transfers.

Arms that do not map (B, B′, C, C′, H) cannot carry a fix into target terms; they "transfer"
every part of the source wholesale, which is what copying a retrieved case amounts to.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from analogist.bench.parb.arm_base import (
    ArmContext,
    ArmOutput,
    Problem,
    bm25_scores,
    parametric_records,
    problem_of,
)
from analogist.bench.parb.encoded import skeleton, translate_text
from analogist.bench.parb.llm_arms import LLMArm
from analogist.critic import Critic
from analogist.judge import AnalogyReport, judge
from analogist.llm.base import sum_usage
from analogist.parametric import propose_parametric
from analogist.retrieve import RetrieveParams
from analogist.signature import validate_signature

__all__ = [
    "ARM_NAMES",
    "LLM_ARMS",
    "ArmContext",
    "ArmOutput",
    "Problem",
    "bm25_scores",
    "make_arms",
    "parametric_records",
    "problem_of",
]

ARM_NAMES = ("B", "B'", "C", "C'", "H", "D", "E", "G")
LLM_ARMS = ("A0", "A1")



def _clip(x: float) -> float:
    return float(min(1.0, max(0.0, x))) if np.isfinite(x) else 0.0


def _norm(s: str) -> str:
    return re.sub(r"\s+", "", s)


def _wholesale_parts(item: dict[str, Any]) -> dict[str, bool] | None:
    if item["family"] != "F5":
        return None
    return {p: True for p in item["key"]["parts"]}


def _mapped_parts(item: dict[str, Any], rep: AnalogyReport | None,
                  ctx: ArmContext | None = None, base_id: str | None = None,
                  ) -> dict[str, bool] | None:
    """F5: a part transfers iff the mapping matched it. On the encoded representation the
    likenesses are in the writer's tags: they are translated to gold tags and compared in role
    terms (see :mod:`analogist.bench.parb.encoded`)."""
    if item["family"] != "F5":
        return None
    if rep is None:
        return {p: False for p in item["key"]["parts"]}
    align = ctx.encoded_align.get(base_id or "") if ctx is not None and ctx.encoded_align \
        else None
    if align is None:
        mapped = {_norm(s) for s, _t in rep.likenesses}
        return {p: _norm(v["source"]) in mapped for p, v in item["key"]["parts"].items()}
    mapped = {skeleton(translate_text(s, align)) for s, _t in rep.likenesses}
    return {p: skeleton(v["source"]) in mapped for p, v in item["key"]["parts"].items()}


def _mapping_output(item: dict[str, Any], chosen: str, ranking: list[str],
                    rep: AnalogyReport, confidence: float, gate: bool,
                    reverse: bool = False, ctx: ArmContext | None = None) -> ArmOutput:
    """Output of a mapping arm (D, E, G) for a chosen source and its judged mapping."""
    concl = [c.projected for c in rep.conclusions if c.status == "transfer"]
    if rep.transfer or rep.transfer_mechanism or not gate:
        concl += list(rep.unknowns)        # candidate inferences: unmapped source structure
    role_map = dict(rep.role_map)
    if reverse:
        role_map = {v: k for k, v in role_map.items()}
    return ArmOutput(chosen, ranking, role_map=role_map,
                     fix=rep.mechanism if (rep.transfer_mechanism or not gate) else None,
                     conclusions=concl, parts=_mapped_parts(item, rep, ctx, chosen),
                     transfer=bool(rep.transfer or rep.transfer_mechanism) if gate else True,
                     confidence=_clip(rep.normalized_score))



# -- the arms ----------------------------------------------------------------------------------------
class SurfaceArm:
    def __init__(self, name: str, levels: tuple[str, ...], k: int) -> None:
        self.name, self.levels, self.k = name, levels, k

    def run(self, item: dict[str, Any], ctx: ArmContext) -> ArmOutput:
        ranked = ctx.surface_ranking(self.levels)[: self.k]
        ranking = [e for e, _ in ranked]
        if not ranked:
            return ArmOutput(None, [])
        return ArmOutput(ranking[0], ranking, parts=_wholesale_parts(item), transfer=True,
                         confidence=_clip(ranked[0][1]))


class StructuralArm:
    def __init__(self, name: str, shuffled: bool = False) -> None:
        self.name, self.shuffled = name, shuffled

    def run(self, item: dict[str, Any], ctx: ArmContext) -> ArmOutput:
        res = ctx.find_shuffled() if self.shuffled else ctx.find()
        ranking = [h.episode_id for h in res.results]
        conf = _clip(res.results[0].score) if res.results else 0.0
        if res.no_match or not ranking:
            return ArmOutput(None, ranking, confidence=conf, note="retriever: no match")
        return ArmOutput(ranking[0], ranking, parts=_wholesale_parts(item), transfer=True,
                         confidence=conf)


class HybridArm:
    name = "H"

    def __init__(self, b: SurfaceArm, c: StructuralArm) -> None:
        self.b, self.c = b, c

    def run(self, item: dict[str, Any], ctx: ArmContext) -> ArmOutput:
        ob, oc = self.b.run(item, ctx), self.c.run(item, ctx)
        ranking: list[str] = []
        for i in range(max(len(ob.ranking), len(oc.ranking))):
            for lst in (oc.ranking, ob.ranking):
                if i < len(lst) and lst[i] not in ranking:
                    ranking.append(lst[i])
        chosen = oc.chosen or ob.chosen
        conf = max(ob.confidence, oc.confidence)
        return ArmOutput(chosen, ranking, parts=_wholesale_parts(item),
                         transfer=chosen is not None, confidence=conf)


class MappingArm:
    """D (``gated=False``) and E (``gated=True``).

    E's verification also uses, when an LLM is configured, the independent critic (it sees only
    the two signatures and the role map; a ``reject`` verdict withholds that candidate and the
    strongest disanalogy is noted) and the labelled parametric channel (the model's own
    analogues, tagged ``parametric``, recorded in ``ArmOutput.parametric`` and scored apart from
    U/F/N). Without an LLM both are skipped and the runner says so.
    """

    def __init__(self, name: str, gated: bool, min_coverage: float = 0.5,
                 critic: Any | None = None, parametric: Any | None = None) -> None:
        self.name, self.gated, self.min_coverage = name, gated, min_coverage
        self.critic, self.parametric = critic, parametric
        self._usage: list[dict[str, Any]] = []

    def usage(self) -> dict[str, Any] | None:
        return sum_usage(*self._usage) if self._usage else None

    def run(self, item: dict[str, Any], ctx: ArmContext) -> ArmOutput:
        res = ctx.find()
        ranking = [h.episode_id for h in res.results]
        top_conf = _clip(res.results[0].score) if res.results else 0.0
        if self.gated and res.decoy is not None and res.decoy.judge_transfer:
            return ArmOutput(None, ranking, parts=_mapped_parts(item, None),
                             confidence=min(top_conf, 0.5),
                             note=f"decoy probe accepted {res.decoy.episode_id}")
        pb = ctx.problem
        pool = dict(pb.pool)
        rejected: list[str] = []
        for h in res.results:
            rep = h.report
            if pb.reverse:        # the query is the source: judge it as the base
                rep = judge(validate_signature(pb.query),
                            validate_signature(dict(pool[h.episode_id],
                                                    episode_id=h.episode_id)))
            if rep.coverage < self.min_coverage:
                continue
            if self.gated and not (rep.transfer or rep.transfer_mechanism):
                continue
            critic_note = ""
            if self.gated and self.critic is not None:
                base = validate_signature(dict(pool[h.episode_id], episode_id=h.episode_id))
                q = validate_signature(pb.query)
                v = (self.critic.review(q, base, dict(rep.role_map)) if pb.reverse
                     else self.critic.review(base, q, dict(rep.role_map)))
                if getattr(v, "usage", None):
                    self._usage.append(dict(v.usage))
                critic_note = f"critic {v.verdict}: {v.strongest_disanalogy}"
                if v.verdict == "reject":
                    rejected.append(f"{h.episode_id}: {v.strongest_disanalogy}")
                    continue
            out = _mapping_output(item, h.episode_id, ranking, rep, h.score, self.gated,
                                  reverse=pb.reverse, ctx=ctx)
            out.confidence = _clip(h.score)
            if self.gated and rep.prediction is not None:
                out.note = f"prediction: {rep.prediction.observable}"
            if critic_note:
                out.note = f"{out.note}; {critic_note}".strip("; ")
            out.parametric = self._parametric(ctx)
            return out
        if rejected:
            return ArmOutput(None, ranking, parts=_mapped_parts(item, None),
                             confidence=min(top_conf, 0.5),
                             note="critic rejected " + " | ".join(rejected)[:400],
                             parametric=self._parametric(ctx))
        why = "gate: nothing transfers" if self.gated else "mapping covers < half the source"
        return ArmOutput(None, ranking, parts=_mapped_parts(item, None),
                         confidence=min(top_conf, 0.5), note=why,
                         parametric=self._parametric(ctx) if self.gated else [])

    def _parametric(self, ctx: ArmContext) -> list[dict[str, Any]]:
        """The model's own analogues for the query, labelled ``parametric`` (never scored as
        U/F/N: they are not in the pool and cannot be keyed); not during control reruns."""
        if not self.gated or self.parametric is None or ctx.controls_pass:
            return []
        q = validate_signature(ctx.problem.query)
        res = self.parametric(q)
        if getattr(res, "usage", None):
            self._usage.append(dict(res.usage))
        return parametric_records(res, q)


class OracleArm:
    name = "G"

    def run(self, item: dict[str, Any], ctx: ArmContext) -> ArmOutput:
        pb = ctx.problem
        if not pb.gold:
            return ArmOutput(None, [], parts=_mapped_parts(item, None), confidence=0.0,
                             note="oracle: no keyed source")
        gid = pb.gold[0]
        src = validate_signature(dict(dict(pb.pool)[gid], episode_id=gid))
        q = validate_signature(pb.query)
        rep = judge(q, src) if pb.reverse else judge(src, q)
        out = _mapping_output(item, gid, list(pb.gold), rep, 1.0, gate=False,
                              reverse=pb.reverse, ctx=ctx)
        out.confidence = 1.0
        return out


def make_arms(names: list[str] | tuple[str, ...] = ARM_NAMES,
              params: RetrieveParams | None = None, provider: Any | None = None,
              critic_provider: Any | None = None) -> list[Any]:
    """The requested arms, in the order given. Unknown names raise ValueError.

    ``provider`` (an :class:`~analogist.llm.LLMProvider`) is needed for A0/A1 and feeds E's
    parametric channel; ``critic_provider`` E's critic (default ``provider``)."""
    p = params or RetrieveParams()
    b = SurfaceArm("B", ("L0",), p.k)
    c = StructuralArm("C")
    critic_provider = critic_provider if critic_provider is not None else provider
    critic = parametric = None
    wants_e = any(n.replace("′", "'") == "E" for n in names)
    if critic_provider is not None and wants_e:
        critic = Critic(critic_provider)
    if provider is not None and wants_e:
        def parametric(sig: Any) -> Any:
            return propose_parametric(sig, provider, k=3)
    table: dict[str, Any] = {
        "B": b, "B'": SurfaceArm("B'", ("L0", "L1", "L2", "L3"), p.shortlist), "C": c,
        "C'": StructuralArm("C'", shuffled=True), "H": HybridArm(b, c),
        "D": MappingArm("D", gated=False),
        "E": MappingArm("E", gated=True, critic=critic, parametric=parametric),
        "G": OracleArm(),
    }
    if provider is not None:
        table["A0"] = LLMArm("A0", provider, hint=False)
        table["A1"] = LLMArm("A1", provider, hint=True, parametric=True)
    out = []
    for n in names:
        n = n.replace("′", "'")
        if n not in table:
            known = ", ".join(ARM_NAMES + (LLM_ARMS if provider is not None else ()))
            raise ValueError(f"unknown arm {n!r} (known: {known}"
                             f"{'' if provider is not None else '; A0/A1 need an LLM'})")
        out.append(table[n])
    return out
