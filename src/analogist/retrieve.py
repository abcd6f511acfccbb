"""MAC/FAC retrieval: "have I seen this shape before, and what follows?"

Forbus, Gentner & Law (1995), MAC/FAC; seed 000 §6–§9. Two stages over one namespace of a
:class:`~analogist.memory.sqlite.Memory`:

1. **MAC** (many are called): cheap, wide, structure-aware scores over *every* stored episode of
   the namespace, fused into a shortlist —
   content vectors (predicate, edge and causal-motif counts, TF-IDF within the namespace, cosine
   computed for all rows at once), an exact-shape bonus when the Weisfeiler–Lehman fingerprint of
   the role–relation graph equals the target's, and, when an :class:`~analogist.index.embed.
   Embedder` is given and the episodes carry level embeddings, the cosine of the abstract-level
   texts. A channel that has nothing to say for an episode is skipped for it, never faked.
2. **FAC** (few are chosen): the structure-mapping engine maps each shortlisted episode (base)
   onto the target; candidates rank by the normalized structural score — the mapping's score over
   the target's self-match score, i.e. the systematicity-weighted share of the target's structure
   that is mapped — and the judge (:mod:`analogist.judge`) decides what transfers.

"No match" is reported when nothing clears ``min_score``. Schemas (induced by consolidation) are
searched before raw episodes. A **decoy probe** also maps the most surface-similar episode that is
not among the accepted results and reports whether the judge would have let it transfer: if it
would, the other acceptances deserve less trust (seed 000 §8). Every call writes one
``analogy_log`` row.
"""

from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analogist.description import Description
from analogist.errors import AnalogistError
from analogist.index.content import ContentIndex
from analogist.index.features import extract_features
from analogist.judge import AnalogyReport, JudgeParams, judge_mapping, self_score
from analogist.memory.sqlite import Memory, StoredEpisode
from analogist.signature import (
    Signature,
    compile_signature,
    default_signature_vocabulary,
    validate_signature,
)
from analogist.sme import match
from analogist.vocabulary import Vocabulary

LEVEL_CHANNELS = ("L1", "L2", "L3")


@dataclass(frozen=True, slots=True)
class RetrieveParams:
    """Retrieval settings (defaults chosen on the development casebook, never on test items).

    Attributes:
        k: results to return.
        shortlist: candidates passed from MAC to FAC (SME).
        w_content: weight of the content-vector cosine in the MAC fusion.
        w_fingerprint: bonus for an exact WL-fingerprint (same shape) match.
        w_embedding: weight of the abstract-text embedding cosine (when available).
        min_score: normalized structural score below which a candidate is not an analogue;
            when no candidate reaches it the answer is "no match".
        decoy_probe: run the runtime decoy probe.
        probe_pool: how many episodes (by content score) the decoy probe considers when the
            namespace is larger than ``exhaustive_probe_limit``.
        exhaustive_probe_limit: up to this many episodes the probe compares surfaces with all.
        judge: the judge's parameters.
    """

    k: int = 5
    shortlist: int = 20
    w_content: float = 1.0
    w_fingerprint: float = 0.25
    w_embedding: float = 0.5
    min_score: float = 0.15
    decoy_probe: bool = True
    probe_pool: int = 200
    exhaustive_probe_limit: int = 2000
    judge: JudgeParams = field(default_factory=JudgeParams)

    def __post_init__(self) -> None:
        for name in ("k", "shortlist", "probe_pool", "exhaustive_probe_limit"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise AnalogistError(f"{name} must be a positive integer", field=name)
        for name in ("w_content", "w_fingerprint", "w_embedding", "min_score"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or v < 0:
                raise AnalogistError(f"{name} must be a non-negative number", field=name)


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved analogue, judged."""

    id: int
    episode_id: str
    score: float
    sme_score: float
    stage1: float
    channels: dict[str, float]
    superseded_by: int | None
    report: AnalogyReport
    schema: bool = False

    @property
    def transfer(self) -> bool:
        return self.report.transfer

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "episode_id": self.episode_id,
            "score": self.score,
            "sme_score": self.sme_score,
            "stage1": self.stage1,
            "channels": dict(self.channels),
            "superseded_by": self.superseded_by,
            "schema": self.schema,
            "transfer": self.transfer,
            "transfer_mechanism": self.report.transfer_mechanism,
            "verdict": self.report.verdict,
            "role_map": dict(self.report.role_map),
            "report": self.report.to_json(),
        }


@dataclass(frozen=True, slots=True)
class DecoyProbe:
    episode_id: str
    surface_similarity: float
    score: float
    judge_transfer: bool

    def to_json(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "surface_similarity": self.surface_similarity,
                "score": self.score, "judge_would_transfer": self.judge_transfer}


@dataclass(frozen=True, slots=True)
class FindResult:
    target_id: str
    no_match: bool
    results: tuple[Hit, ...]
    decoy: DecoyProbe | None
    channels_used: tuple[str, ...]
    skipped: tuple[str, ...]
    timings: dict[str, float]
    log_id: int | None
    #: the labelled parametric channel: the model's own analogues, judged, never memory hits
    parametric: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target_id,
            "no_match": self.no_match,
            "results": [h.to_json() for h in self.results],
            "parametric": [dict(p) for p in self.parametric],
            "decoy_probe": None if self.decoy is None else self.decoy.to_json(),
            "channels_used": list(self.channels_used),
            "skipped": list(self.skipped),
            "timings_ms": {k: round(v * 1000, 3) for k, v in self.timings.items()},
            "log_id": self.log_id,
        }

    def render(self) -> str:
        out = []
        if self.no_match:
            out.append(f"NO MATCH for {self.target_id}: no stored episode maps enough of its "
                       "structure.")
        for i, h in enumerate(self.results, 1):
            out.append(f"#{i}  {h.episode_id}  score {h.score:.3f}  "
                       f"({h.report.verdict}{', superseded' if h.superseded_by else ''})")
            out.append(h.report.render())
            out.append("")
        if self.decoy is not None:
            verdict = ("WOULD have transferred: trust the other acceptances less"
                       if self.decoy.judge_transfer else "rejected, as it should be")
            out.append(f"DECOY PROBE  {self.decoy.episode_id} (surface similarity "
                       f"{self.decoy.surface_similarity:.2f}, score {self.decoy.score:.3f}): "
                       f"{verdict}")
        if self.parametric:
            out.append("")
            out.append("PARAMETRIC — from the model's own knowledge, not from memory; scored "
                       "apart:")
            for p in self.parametric:
                out.append(f"  [parametric] {p['title']} ({p['domain']}): score "
                           f"{p['score']:.3f}, {p['verdict']}")
        if self.skipped:
            out.append("skipped: " + "; ".join(self.skipped))
        return "\n".join(out).rstrip()


_WORD = re.compile(r"[a-z0-9]+")


def surface_tokens(sig: Signature) -> set[str]:
    """Words of an episode's surface: domain, entity names and the concrete L0 narrative."""
    return _content_words(" ".join([sig.surface.domain or "", *sig.surface.entities,
                                    sig.levels.L0 or ""]))


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def level_embeddings(sig: Signature, embedder: Any) -> dict[str, np.ndarray]:
    """The abstract-level embeddings of one episode (channel → vector); levels it lacks are
    skipped, never faked."""
    from analogist.index.embed import abstract_texts

    texts = abstract_texts(sig)
    chans = [ch for ch in LEVEL_CHANNELS if ch in texts]
    if not chans:
        return {}
    vecs = embedder.embed([texts[ch] for ch in chans])
    return {ch: vecs[i] for i, ch in enumerate(chans)}


def _surface_tokens_of(data: dict[str, Any]) -> set[str]:
    """:func:`surface_tokens` of a stored signature's JSON, without validating it again."""
    surface = data.get("surface") or {}
    levels = data.get("levels") or {}
    return _content_words(" ".join([str(surface.get("domain") or ""),
                                    *(str(x) for x in surface.get("entities") or []),
                                    str(levels.get("L0") or "")]))


class Retriever:
    """MAC/FAC over one namespace of a memory. Keeps per-namespace caches, rebuilt when the
    namespace changes (row count or highest id)."""

    def __init__(self, memory: Memory, namespace: str = "default", *,
                 vocab: Vocabulary | None = None, params: RetrieveParams | None = None,
                 embedder: Any | None = None, log: bool = True) -> None:
        self.memory = memory
        self.namespace = namespace
        # one vocabulary for the retriever's life (compile_signature copies it only when a
        # signature proposes a new term)
        self.vocab = vocab if vocab is not None else default_signature_vocabulary()
        self.params = params or RetrieveParams()
        self.embedder = embedder  # an Embedder, None (channel off) or "auto" (see refresh)
        self.log = log
        self._generation: tuple[int, int] | None = None
        self._content: ContentIndex | None = None
        self._fp_codes: np.ndarray = np.zeros(0, dtype=np.int64)
        self._fp_index: dict[str, int] = {}
        self._embeddings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._compiled: OrderedDict[int, tuple[StoredEpisode, Description, float]] = \
            OrderedDict()

    # -- caches ------------------------------------------------------------------------------
    def _current_generation(self) -> tuple[int, int]:
        row = self.memory.conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM signatures WHERE namespace = ?",
            (self.namespace,)).fetchone()
        sup = self.memory.conn.execute(
            "SELECT COUNT(*) FROM signatures WHERE namespace = ? AND superseded_by IS NOT NULL",
            (self.namespace,)).fetchone()
        return (int(row[0]), int(row[1]) * 1_000_003 + int(sup[0]))

    def refresh(self) -> None:
        gen = self._current_generation()
        if gen == self._generation:
            return
        self._content = _stream_content_index(self.memory, self.namespace)
        # fingerprints as integer codes aligned with the content index's rows
        self._fp_index = {}
        code_of_id: dict[int, int] = {}
        for fp, members in self.memory.fingerprint_groups(self.namespace).items():
            code = self._fp_index.setdefault(fp, len(self._fp_index))
            for i in members:
                code_of_id[i] = code
        self._fp_codes = np.fromiter((code_of_id.get(int(i), -1) for i in self._content.ids),
                                     dtype=np.int64, count=len(self._content.ids))
        self._embeddings = {}
        if self.embedder == "auto":
            # use the default embedder when (and only when) the namespace has level embeddings
            has = self.memory.conn.execute(
                "SELECT 1 FROM sig_vectors v JOIN signatures s ON s.id = v.signature_id "
                "WHERE s.namespace = ? AND v.channel IN ('L1', 'L2', 'L3') LIMIT 1",
                (self.namespace,)).fetchone()
            if has:
                from analogist.index.embed import default_embedder

                self.embedder = default_embedder()
            else:
                self.embedder = None
        if self.embedder is not None:
            for ch in LEVEL_CHANNELS:
                eids, mat = self.memory.embeddings(ch, self.namespace)
                if len(eids):
                    self._embeddings[ch] = (np.asarray(eids, dtype=np.int64), mat)
        self._compiled.clear()
        self._generation = gen

    def _episode(self, sid: int) -> tuple[StoredEpisode, Description, float]:
        got = self._compiled.get(sid)
        if got is not None:
            self._compiled.move_to_end(sid)
            return got
        ep = self.memory.get(sid, self.namespace)
        if ep is None:
            raise AnalogistError(f"episode {sid} vanished from namespace {self.namespace!r}")
        desc = compile_signature(ep.signature, self.vocab)
        entry = (ep, desc, self_score(desc, self.params.judge.sme))
        self._compiled[sid] = entry
        if len(self._compiled) > 4096:
            self._compiled.popitem(last=False)
        return entry

    # -- stage 1 -----------------------------------------------------------------------------
    def mac(self, target: Signature) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray],
                                               list[str]]:
        """Stage 1 over every episode: ``(ids, fused, per-channel scores, skipped notes)``."""
        self.refresh()
        assert self._content is not None
        p = self.params
        ids = self._content.ids.astype(np.int64)
        skipped: list[str] = []
        feats = extract_features(target)
        channels: dict[str, np.ndarray] = {"content": self._content.scores(feats.content)}
        code = self._fp_index.get(feats.fingerprint, -2)
        fp = (self._fp_codes == code).astype(np.float64)
        channels["fingerprint"] = fp
        fused = p.w_content * channels["content"] + p.w_fingerprint * fp
        if self.embedder is None:
            skipped.append("embedding channel: no embedder configured or no stored level "
                           "embeddings")
        elif not self._embeddings:
            skipped.append("embedding channel: no stored episode has level embeddings")
        else:
            from analogist.index.embed import abstract_texts

            texts = abstract_texts(target)
            used = [ch for ch in LEVEL_CHANNELS if ch in texts and ch in self._embeddings]
            if not used:
                skipped.append("embedding channel: the target has no L1-L3 levels")
            else:
                qv = self.embedder.embed([texts[ch] for ch in used])
                emb = np.zeros(len(ids), dtype=np.float64)
                cnt = np.zeros(len(ids), dtype=np.float64)
                pos_of = {int(x): j for j, x in enumerate(ids)}
                for ch, q in zip(used, qv, strict=True):
                    eids, mat = self._embeddings[ch]
                    sims = mat @ q.astype(np.float32)
                    rows = np.fromiter((pos_of.get(int(x), -1) for x in eids), dtype=np.int64,
                                       count=len(eids))
                    ok = rows >= 0
                    np.add.at(emb, rows[ok], sims[ok])
                    np.add.at(cnt, rows[ok], 1.0)
                emb = np.divide(emb, cnt, out=np.zeros_like(emb), where=cnt > 0)
                channels["embedding"] = emb
                fused = fused + p.w_embedding * emb
        return ids, fused, channels, skipped

    # -- the whole query ---------------------------------------------------------------------
    def find(self, target: Signature | dict[str, Any], *, k: int | None = None,
             critic: Any | None = None, parametric: Any | None = None) -> FindResult:
        """Stage 1, stage 2, judge, decoy probe and log for one target signature.

        ``critic`` (optional; e.g. :class:`analogist.critic.Critic`): its ``review(source,
        target, role_map)`` is asked about every reported analogue that would transfer, seeing
        only the two signatures and the role map; its verdict is attached to the report and a
        ``reject`` withholds the transfer (:func:`analogist.judge.with_critic`).
        ``parametric`` (optional callable ``target -> ParametricResult``): the labelled
        parametric channel; its analogues are judged like retrieved ones and reported apart, in
        ``FindResult.parametric``, each labelled ``parametric``.
        """
        t0 = time.perf_counter()
        if not isinstance(target, Signature):
            target = validate_signature(target)
        p = self.params
        k = k or p.k
        ids, fused, channels, skipped = self.mac(target)
        t1 = time.perf_counter()
        target_desc = compile_signature(target, self.vocab)
        target_total = self_score(target_desc, p.judge.sme)

        order = np.lexsort((ids, -fused))
        short = [int(ids[j]) for j in order[: p.shortlist] if fused[j] > 0]
        hits: list[Hit] = []
        hits += self._schema_hits(target, target_desc, target_total)
        pos_of = {int(x): j for j, x in enumerate(ids)}
        for sid in short:
            try:
                hits.append(self._fac(sid, target, target_desc, target_total,
                                      float(fused[pos_of[sid]]),
                                      {name: float(v[pos_of[sid]])
                                       for name, v in channels.items()}))
            except AnalogistError as e:
                # one unreadable episode must not take every query down with it
                skipped.append(f"episode {sid}: {e}")
        hits.sort(key=lambda h: (-h.score, -h.stage1, h.id))
        hits = _superseded_below_replacements(hits)
        t2 = time.perf_counter()
        no_match = not hits or hits[0].score < p.min_score
        results = tuple(hits[:k])
        decoy = None
        if p.decoy_probe and len(ids):
            decoy = self._probe(target, target_desc, target_total, ids, fused,
                                {h.id for h in results if h.score >= p.min_score})
        t3 = time.perf_counter()
        log_id = None
        if self.log:
            best = results[0] if results else None
            log_id = self.memory.log_analogy(
                self.namespace, target=target.model_dump(mode="json"),
                candidates=[{"id": h.id, "episode_id": h.episode_id, "score": h.score,
                             "stage1": h.stage1} for h in results],
                mapping=None if best is None else best.report.role_map,
                score=None if best is None else best.score,
                verdict="no match" if no_match else (best.report.verdict if best else None),
                transferred=bool(best and not no_match and best.transfer),
                prediction=None if best is None or best.report.prediction is None else {
                    "observable": best.report.prediction.observable,
                    "check": best.report.prediction.check})
        timings = {"stage1": t1 - t0, "stage2": t2 - t1, "probe": t3 - t2,
                   "total": time.perf_counter() - t0}
        if no_match:
            results = tuple(_no_transfer(h) for h in results)
        if critic is not None and not no_match:
            results = tuple(self._criticise(critic, h, target, skipped) for h in results)
        par: tuple[dict[str, Any], ...] = ()
        if parametric is not None:
            par = self._parametric(parametric, target, skipped)
        return FindResult(target.episode_id, no_match, results, decoy,
                          tuple(channels), tuple(skipped), timings, log_id, par)

    def _criticise(self, critic: Any, h: Hit, target: Signature, skipped: list[str]) -> Hit:
        from dataclasses import replace

        from analogist.critic import CriticVerdict, review_or_fail
        from analogist.judge import with_critic

        if not (h.report.transfer or h.report.transfer_mechanism):
            return h
        if h.schema:
            return h
        try:
            src = self._episode(h.id)[0].signature        # compiled and cached by FAC
        except AnalogistError as e:
            verdict = CriticVerdict.failed(e)
        else:
            verdict = review_or_fail(critic, src, target, dict(h.report.role_map))
        if verdict.verdict == "failed":   # fail closed: withheld, and said so
            skipped.append(f"critic on {h.episode_id}: {verdict.reason}")
        return replace(h, report=with_critic(h.report, verdict))

    def _parametric(self, parametric: Any, target: Signature,
                    skipped: list[str]) -> tuple[dict[str, Any], ...]:
        from analogist.parametric import judge_analogues

        try:
            res = parametric(target)
        except AnalogistError as e:      # asked and did not answer: failed, not skipped
            skipped.append(f"parametric channel failed: {e}")
            return ()
        if getattr(res, "skipped", None):
            skipped.append(f"parametric channel: {res.skipped}")
            return ()
        out, notes = judge_analogues(res, target, vocab=self.vocab, params=self.params.judge)
        skipped.extend(notes)
        return tuple(out)

    def _fac(self, sid: int, target: Signature, target_desc: Description, target_total: float,
             stage1: float, channels: dict[str, float]) -> Hit:
        ep, desc, own_total = self._episode(sid)
        res = match(desc, target_desc, self.params.judge.sme)
        best = res.best
        sme_score = best.score if best is not None else 0.0
        norm = min(1.0, sme_score / target_total) if target_total > 0 else 0.0
        report = judge_mapping(ep.signature, target, desc, target_desc, res,
                               params=self.params.judge, source_self_score=own_total)
        return Hit(sid, ep.episode_id, norm, sme_score, stage1, channels, ep.superseded_by,
                   report)

    def _schema_hits(self, target: Signature, target_desc: Description,
                     target_total: float) -> list[Hit]:
        """Schema-first lookup: induced schemas that validate as signatures are mapped first."""
        out = []
        for row in self.memory.schemas(self.namespace):
            data = row.get("description")
            try:
                sig = validate_signature(data)
            except AnalogistError:
                continue
            desc = compile_signature(sig, self.vocab)
            res = match(desc, target_desc, self.params.judge.sme)
            best = res.best
            sme = best.score if best is not None else 0.0
            norm = min(1.0, sme / target_total) if target_total > 0 else 0.0
            if norm < self.params.min_score:
                continue
            report = judge_mapping(sig, target, desc, target_desc, res, params=self.params.judge)
            out.append(Hit(-int(row["id"]), f"schema:{row.get('name')}", norm, sme, 0.0, {},
                           None, report, schema=True))
        return out

    def _probe(self, target: Signature, target_desc: Description, target_total: float,
               ids: np.ndarray, fused: np.ndarray, accepted: set[int]) -> DecoyProbe | None:
        """Map the most surface-similar episode not accepted; would the judge take it?"""
        p = self.params
        if len(ids) <= p.exhaustive_probe_limit:
            pool = [int(x) for x in ids]
        else:
            order = np.lexsort((ids, -fused))
            pool = [int(ids[j]) for j in order[: p.probe_pool]]
        tt = surface_tokens(target)
        if not tt:
            return None
        best: tuple[float, int] | None = None
        pool = [sid for sid in pool if sid not in accepted]
        for start in range(0, len(pool), 500):
            chunk = pool[start:start + 500]
            rows = self.memory.conn.execute(
                f"SELECT id, json FROM signatures WHERE namespace = ? AND id IN "
                f"({','.join('?' * len(chunk))})", (self.namespace, *chunk)).fetchall()
            for sid, text in rows:
                st = _surface_tokens_of(json.loads(text))
                if not st:
                    continue
                sim = len(tt & st) / len(tt | st)
                if best is None or sim > best[0] or (sim == best[0] and sid < best[1]):
                    best = (sim, int(sid))
        if best is None or best[0] <= 0:
            return None
        try:
            hit = self._fac(best[1], target, target_desc, target_total, 0.0, {})
        except AnalogistError:
            return None
        return DecoyProbe(hit.episode_id, best[0], hit.score,
                          hit.transfer and hit.score >= p.min_score)


def _stream_content_index(memory: Memory, namespace: str) -> ContentIndex:
    """The namespace's content index, built by streaming its rows into CSR arrays (one row's
    counts in memory at a time, so a million episodes do not become a million dicts)."""
    from array import array

    ids = array("q")
    indptr = array("q", [0])
    indices = array("q")
    counts = array("d")
    names: dict[str, int] = {}
    cur = memory.conn.execute(
        "SELECT s.id, v.data FROM signatures s JOIN sig_vectors v ON v.signature_id = s.id "
        "WHERE s.namespace = ? AND v.channel = 'content' ORDER BY s.id", (namespace,))
    for sid, data in cur:
        row = json.loads(data)
        cols = sorted((names.setdefault(k, len(names)), float(v)) for k, v in row.items())
        for c, v in cols:
            indices.append(c)
            counts.append(v)
        ids.append(int(sid))
        indptr.append(len(indices))
    return ContentIndex.from_arrays(np.frombuffer(ids, dtype=np.int64) if ids else [],
                                    list(names), np.frombuffer(indptr, dtype=np.int64),
                                    np.frombuffer(indices, dtype=np.int64) if indices else
                                    np.zeros(0, dtype=np.int64),
                                    np.frombuffer(counts, dtype=np.float64) if counts else
                                    np.zeros(0, dtype=np.float64))


def _superseded_below_replacements(hits: list[Hit]) -> list[Hit]:
    """A superseded episode ranks below its replacement when both are retrieved."""
    out = list(hits)
    changed = True
    while changed:
        changed = False
        pos = {h.id: i for i, h in enumerate(out)}
        for i, h in enumerate(out):
            r = h.superseded_by
            if r is not None and r in pos and pos[r] > i:
                out.insert(pos[r], out.pop(i))
                changed = True
                break
    return out


def _no_transfer(h: Hit) -> Hit:
    """Under "no match" nothing transfers: the report stays, the conclusions are withheld."""
    from dataclasses import replace

    from analogist.judge import Conclusion

    concl = tuple(c if c.status != "transfer" else
                  Conclusion(c.source, c.projected, "withheld",
                             (*c.reasons, "no candidate clears the match threshold"))
                  for c in h.report.conclusions)
    return replace(h, report=replace(h.report, conclusions=concl, transfer_mechanism=False))
