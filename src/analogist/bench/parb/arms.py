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

import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analogist.judge import AnalogyReport, judge
from analogist.memory.sqlite import Memory
from analogist.retrieve import FindResult, RetrieveParams, Retriever
from analogist.signature import validate_signature

__all__ = [
    "ARM_NAMES",
    "LLM_ARMS",
    "ArmContext",
    "ArmOutput",
    "Problem",
    "bm25_scores",
    "make_arms",
    "problem_of",
]

ARM_NAMES = ("B", "B'", "C", "C'", "H", "D", "E", "G")
LLM_ARMS = ("A0", "A1")
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass
class Problem:
    query: dict[str, Any]
    pool: list[tuple[str, dict[str, Any]]]
    gold: list[str]
    no_match: bool
    role_mapping: dict[str, str] | None        # base (gold pool episode) → query
    all_role_mappings: list[dict[str, str]]
    reverse: bool = False                      # F7/F8: the query is the source (the base)


@dataclass
class ArmOutput:
    chosen: str | None                       # proposed source id, None = "no match"
    ranking: list[str]
    role_map: dict[str, str] | None = None   # chosen base roles → query roles
    fix: str | None = None                   # the fix carried into target terms
    conclusions: list[str] = field(default_factory=list)  # transferred conclusions (projected)
    parts: dict[str, bool] | None = None     # F5 part id → transferred?
    transfer: bool = False                   # did the arm act on the analogy
    confidence: float = 0.0
    note: str = ""
    parametric: list[dict[str, Any]] = field(default_factory=list)  # labelled, scored apart
    #: what an arm asserted without naming a source (LLM arms answering "none" but still giving
    #: conclusions/fix/parts): never scored as U/F/N, read only by the attribution controls
    unsourced: dict[str, Any] | None = None
    #: why the arm could not answer (an LLM call that failed): scored as a failure, never as
    #: an abstention
    failed: str | None = None

    @property
    def proposed(self) -> bool:
        return self.chosen is not None

    def to_json(self) -> dict[str, Any]:
        return {"chosen": self.chosen, "ranking": self.ranking[:10], "role_map": self.role_map,
                "fix": self.fix, "conclusions": self.conclusions, "parts": self.parts,
                "transfer": self.transfer, "confidence": round(self.confidence, 4),
                "note": self.note, "parametric": self.parametric, "failed": self.failed}


def _invert(m: dict[str, str]) -> dict[str, str]:
    return {v: k for k, v in m.items()}


def problem_of(item: dict[str, Any]) -> Problem:
    fam, key = item["family"], item["key"]
    if fam in ("F1", "F4", "F5") and item.get("source") is None:
        # attribution control "no source" (controls.py): nothing to map
        return Problem(item["target"], [], [], True, None, [])
    if fam in ("F1", "F4", "F5"):
        src = item["source"]
        return Problem(item["target"], [(src["episode_id"], src)], [src["episode_id"]], False,
                       dict(key["role_mapping"]), [dict(m) for m in key["all_role_mappings"]])
    if fam == "F2":
        pool = [(c["episode_id"], c["signature"]) for c in item["candidates"]]
        return Problem(item["target"], pool, [key["answer"]], False,
                       _invert(key["role_mapping"]),
                       [_invert(m) for m in key["all_role_mappings"]])
    if fam in ("F3", "F6", "P"):          # P: a private item (private.py), F3-shaped
        pool = [(p["episode_id"], p["signature"]) for p in item["pool"]]
        return Problem(item["target"], pool, list(key["match_ids"]), bool(key["no_match"]),
                       None, [])
    if fam in ("F7", "F8"):
        tgt = item["target"]
        pool = [(tgt["episode_id"], tgt)] + [(c["episode_id"], c["signature"])
                                             for c in item["candidates"]]
        return Problem(item["source"], pool, [key["answer"]], False,
                       _invert(key["role_mapping"]),
                       [_invert(m) for m in key["all_role_mappings"]], reverse=True)
    raise ValueError(f"unknown family {fam!r}")


# -- context shared by the arms of one item ------------------------------------------------------
class ArmContext:
    """Per-run resources (one Memory file, the embedder) and per-item caches, so that C, D, E,
    H share one retrieval and B, B′ share one embedding batch."""

    def __init__(self, memory: Memory, embedder: Any, seed: int = 0,
                 params: RetrieveParams | None = None) -> None:
        self.memory = memory
        self.embedder = embedder
        self.seed = seed
        self.params = params or RetrieveParams()
        self._item_id: str | None = None
        self._cache: dict[str, Any] = {}
        self._foreign: dict[str, Any] | None = None     # an episode of the previous item
        #: encoded representation: episode id → (writer's tag → gold tag) for the current item
        self.encoded_align: dict[str, dict[str, str]] | None = None
        #: True while the attribution controls rerun an arm (the parametric channel is skipped)
        self.controls_pass = False

    def begin(self, item: dict[str, Any]) -> Problem:
        if self._item_id is not None and self._cache.get("problem") is not None:
            prev = self._cache["problem"]
            if prev.pool:
                self._foreign = prev.pool[0][1]
        self._item_id = item["item_id"]
        self._cache = {"problem": problem_of(item), "item": item}
        return self._cache["problem"]

    @property
    def problem(self) -> Problem:
        return self._cache["problem"]

    # -- structural retrieval -------------------------------------------------------------------
    def _retrieve(self, shuffled: bool) -> FindResult:
        key = "find_shuf" if shuffled else "find"
        if key in self._cache:
            return self._cache[key]
        pb = self.problem
        if not pb.pool:                                # "no source" control: nothing stored
            res = FindResult(target_id=str(pb.query.get("episode_id")), no_match=True,
                             results=(), decoy=None, channels_used=(), skipped=(), timings={},
                             log_id=None)
            self._cache[key] = res
            return res
        ns = f"{self._item_id}{'#shuf' if shuffled else ''}"
        sigs = [dict(s, episode_id=eid) for eid, s in pb.pool]
        if shuffled:
            sigs = self._shuffle(sigs)
        if self.memory.count(ns) == 0:
            self.memory.add_many(sigs, namespace=ns)
        r = Retriever(self.memory, ns, params=self.params, embedder=None, log=False)
        res = r.find(validate_signature(pb.query), k=self.params.shortlist)
        self._cache[key] = res
        return res

    def find(self) -> FindResult:
        return self._retrieve(False)

    def find_shuffled(self) -> FindResult:
        return self._retrieve(True)

    def _shuffle(self, sigs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        ids = [s["episode_id"] for s in sigs]
        if len(sigs) < 2:
            other = self._foreign or sigs[0]
            return [dict(other, episode_id=ids[0])]
        rng = random.Random(f"parb-placebo:{self.seed}:{self._item_id}")
        perm = list(range(len(sigs)))
        while True:                                    # a derangement: nobody keeps its own
            rng.shuffle(perm)
            if all(i != p for i, p in enumerate(perm)):
                break
        return [dict(sigs[p], episode_id=ids[i]) for i, p in enumerate(perm)]

    # -- surface retrieval ------------------------------------------------------------------------
    def surface_ranking(self, levels: tuple[str, ...]) -> list[tuple[str, float]]:
        key = "surface:" + ",".join(levels)
        if key in self._cache:
            return self._cache[key]
        pb = self.problem

        def text(sig: dict[str, Any]) -> str:
            lv = sig.get("levels") or {}
            return " ".join(str(lv.get(x) or "") for x in levels).strip()

        q = text(pb.query)
        docs = [text(s) for _eid, s in pb.pool]
        if not docs:
            self._cache[key] = []
            return []
        vecs = self.embedder.embed([q, *docs])
        cos = (vecs[1:] @ vecs[0]).astype(float)
        bm = bm25_scores(_tokens(q), [_tokens(d) for d in docs])
        mx = max(bm) if len(bm) and max(bm) > 0 else 1.0
        fused = [0.5 * float(c) + 0.5 * float(b) / mx for c, b in zip(cos, bm, strict=True)]
        ranked = sorted(zip([e for e, _ in pb.pool], fused, strict=True),
                        key=lambda x: (-x[1], x[0]))
        self._cache[key] = ranked
        return ranked


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def bm25_scores(query: list[str], docs: list[list[str]], k1: float = 1.2,
                b: float = 0.75) -> list[float]:
    """Okapi BM25 of ``query`` against each of ``docs`` (token lists), IDF
    ``ln(1 + (N − n + 0.5)/(n + 0.5))`` over ``docs`` (Robertson & Zaragoza 2009)."""
    n = len(docs)
    if n == 0:
        return []
    avg = sum(len(d) for d in docs) / n or 1.0
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t in set(query):
            f = tf.get(t, 0)
            if not f:
                continue
            idf = math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))
            s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avg))
        out.append(s)
    return out


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
    from analogist.bench.parb.encoded import skeleton, translate_text
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
        role_map = _invert(role_map)
    return ArmOutput(chosen, ranking, role_map=role_map,
                     fix=rep.mechanism if (rep.transfer_mechanism or not gate) else None,
                     conclusions=concl, parts=_mapped_parts(item, rep, ctx, chosen),
                     transfer=bool(rep.transfer or rep.transfer_mechanism) if gate else True,
                     confidence=_clip(rep.normalized_score))


def parametric_records(res: Any, query: Any) -> list[dict[str, Any]]:
    """The labelled parametric channel's analogues, each judged against the query (seed 000
    §7 change 5: tagged ``parametric`` and scored apart — never counted in U/F/N); the compact
    per-item form of :func:`analogist.parametric.judge_analogues`."""
    from analogist.parametric import judge_analogues

    recs, _notes = judge_analogues(res, query)
    return [{k: (round(r[k], 4) if k == "score" else r[k])
             for k in ("label", "title", "domain", "verdict", "transfer", "score")}
            for r in recs]


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
        from analogist.llm.base import sum_usage

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
        from analogist.critic import Critic
        critic = Critic(critic_provider)
    if provider is not None and wants_e:
        from analogist.parametric import propose_parametric

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
        from analogist.bench.parb.llm_arms import LLMArm
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
