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
   Without the embedding channel the shortlist is found by an exact top-k over the content
   index (:meth:`~analogist.index.content.ContentIndex.top`): the same rows and scores as
   scoring every episode, without reading every episode's entries.
2. **FAC** (few are chosen): the structure-mapping engine maps each shortlisted episode (base)
   onto the target (at least as many as the ``k`` results asked for); candidates rank by the
   normalized structural score — the mapping's score over the target's self-match score, i.e.
   the systematicity-weighted share of the target's structure that is mapped — and the judge
   (:mod:`analogist.judge`) decides what transfers.

   **A contradicted candidate is not a near-perfect analogue.** When the best mapping of a
   candidate aligns structure that the target states the other way round — a causal edge whose
   mapped ends the target links in the opposite direction, a mapped edge of the opposite sign,
   an edge of the opposite kind over mapped ends, a relation with its roles swapped (the judge's
   ``contradictions``) — the shared structure around it is evidence against the candidate's
   mechanism, not for it: a same-domain twin that tells the story with one causal edge reversed
   maps almost everything and would otherwise outrank every true analogue. The rule is a tier,
   not a weight: every contradicted candidate ranks below every candidate whose mapped causal
   structure is consistent with the target (``RetrieveParams.demote_contradicting``); within
   each tier candidates order by score, a contradicted one's discounted once per contradiction
   (``contradiction_discount``). A proportional penalty was considered and not taken: however
   small the contradicted share, a reversed edge says the mechanism runs the other way, and no
   amount of agreeing surface structure makes up for that. The contradiction is shown in the
   hit's evidence: each contradicted edge or relation is a row of the report's difference table
   (``differences``, listed again in ``contradicted``), never a likeness or an unknown.

"No match" is reported when nothing clears ``min_score``. Schemas (induced by consolidation) are
searched before raw episodes. A **decoy probe** also maps the most surface-similar episode that is
not among the accepted results and reports whether the judge would have let it transfer: if it
would, the other acceptances deserve less trust (seed 000 §8). Every call writes one
``analogy_log`` row.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from contextlib import nullcontext, suppress
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from analogist.description import Description
from analogist.errors import AnalogistError
from analogist.index.ann import AnnParams, HnswChannel, ann_available
from analogist.index.content import ContentIndex, ContentIndexError
from analogist.index.features import (
    EpisodeFeatures,
    extract_features,
    surface_tokens,
    surface_tokens_of_data,
)
from analogist.index.mac import MacIndex, index_root
from analogist.index.surfaces import SurfaceIndex
from analogist.judge import (
    AnalogyReport,
    Conclusion,
    JudgeParams,
    judge_mapping,
    self_score,
    with_critic,
)
from analogist.memory import pg_mac, pg_vector
from analogist.memory.pg_vector import PgVectorParams
from analogist.memory.sqlite import Memory, StoredEpisode
from analogist.params import bounded, check_bounds, flag
from analogist.signature import (
    Signature,
    compile_signature,
    default_signature_vocabulary,
    validate_signature,
)
from analogist.sme import match
from analogist.vocabulary import Vocabulary

LEVEL_CHANNELS = ("L1", "L2", "L3")
EXACT_TOP_MIN_ROWS = 20_000
"""From this many rows stage 1 finds its shortlist by the exact top-k of the content index;
below it scoring every row is as fast (the same answers either way)."""
COMPILED_CACHE = 4096
"""Compiled episodes a retriever keeps (least recently used ones are dropped)."""
SAVE_AFTER_ROWS = 1024
"""Rows a retriever's index grows by, at least, before it is saved again: a small namespace
that gains one row per write would otherwise be written out every few finds (by every thread's
retriever), where a new process appends those rows from the store in a few milliseconds."""
SURFACE_INDEX_ROWS = 20_000
"""Up to this many rows a retriever keeps the namespace's surface words in memory (an inverted
index) for the decoy probe, beyond ``exhaustive_probe_limit`` too, where it ranks only the
probe's pool; larger namespaces read the pool's surfaces from the store per find."""
TARGET_CACHE = 1024
"""Stored episodes a retriever keeps as find targets (their features, abstract texts and surface
words; least recently used ones are dropped)."""
QUERY_EMBEDDINGS = 1024
"""Default of :attr:`RetrieveParams.query_embedding_cache`."""

_log = logging.getLogger("analogist.retrieve")

__all__ = ["COMPILED_CACHE", "DecoyProbe", "FindResult", "Hit", "LEVEL_CHANNELS",
           "QUERY_EMBEDDINGS", "RetrieveParams", "Retriever", "Stage1", "level_embeddings",
           "surface_tokens"]


@dataclass(frozen=True, slots=True)
class RetrieveParams:
    """Retrieval settings (defaults chosen on the development casebook, never on test items).

    Attributes:
        k: results to return.
        shortlist: candidates passed from MAC to FAC (SME); a find asking for more results
            (``k``) maps ``k`` candidates.
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
        embedding_ann: score the embedding channel over an approximate (HNSW) index instead of
            every row, for channels with at least ``ann_min_rows`` vectors — a departure from
            exact MAC, off by default (see :mod:`analogist.index.ann`; needs the ``ann`` extra).
        ann_min_rows: the channel size from which ``embedding_ann`` applies.
        ann: the HNSW settings.
        pgvector: the embedding channel on a PostgreSQL store whose server has pgvector: the
            top ``k`` per level from the database's HNSW index (see
            :mod:`analogist.memory.pg_vector`); elsewhere, or below its ``min_rows``, the
            channel is in-process as above.
        contradiction_discount: factor applied to a candidate's normalized score once per
            contradiction the judge finds (a mapped causal link the target states reversed, of
            the opposite kind or sign, or a relation with its roles swapped). Structure-mapping
            counts such matched-but-opposed structure as an alignable difference, not a
            likeness (Markman & Gentner 1993; Gentner 1983's systematicity: the shared
            higher-order causal relation is what makes an analogy), so a same-domain minimal
            pair that maps most of the story with one edge reversed ranks below a partner
            whose causal structure agrees. 1.0 turns the discount off.
        demote_contradicting: rank every candidate the judge finds contradicting the target
            below every candidate it does not (each group by score). A discount alone lets a
            same-domain minimal pair that maps the whole story but one reversed edge outscore a
            cross-domain partner that maps less of it; a contradicted mechanism is evidence
            against the analogy, not a weaker likeness, so it is a tier, not a factor. False
            orders by the discounted score alone.
        query_embedding_cache: query-text embeddings a retriever keeps, keyed by the
            embedder's name and the text (least recently used dropped; 0: none kept). A level
            text asked again — the same query, or an episode's own levels — is not embedded
            again.
    """

    k: int = bounded(5, lo=1, integer=True)
    shortlist: int = bounded(20, lo=1, integer=True)
    w_content: float = bounded(1.0, lo=0.0)
    w_fingerprint: float = bounded(0.25, lo=0.0)
    w_embedding: float = bounded(0.5, lo=0.0)
    min_score: float = bounded(0.15, lo=0.0)
    decoy_probe: bool = True
    probe_pool: int = bounded(200, lo=1, integer=True)
    exhaustive_probe_limit: int = bounded(2000, lo=1, integer=True)
    judge: JudgeParams = field(default_factory=JudgeParams)
    embedding_ann: bool = flag(False)
    ann_min_rows: int = bounded(50_000, lo=1, integer=True)
    ann: AnnParams = field(default_factory=AnnParams)
    pgvector: PgVectorParams = field(default_factory=PgVectorParams)
    contradiction_discount: float = bounded(0.5, lo=0.0, hi=1.0)
    demote_contradicting: bool = flag(True)
    query_embedding_cache: int = bounded(QUERY_EMBEDDINGS, lo=0, integer=True)

    def __post_init__(self) -> None:
        check_bounds(self)


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
            "similarity": self.score,
            "raw_ses": self.sme_score,
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
class Stage1:
    """The best rows of stage 1 for one target (:meth:`Retriever.stage1`)."""

    ids: np.ndarray
    """Every row's episode id (row position → id), in id order."""
    rows: np.ndarray
    """Positions of the best rows, best first."""
    fused: np.ndarray
    """Their fused stage-1 scores."""
    channels: dict[str, np.ndarray]
    """Channel → each best row's score in it."""
    skipped: list[str]
    """Channels skipped, with the reason."""


@dataclass(frozen=True, slots=True)
class DecoyProbe:
    episode_id: str
    surface_similarity: float
    score: float
    judge_transfer: bool

    def to_json(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "surface_similarity": self.surface_similarity,
                "similarity": self.score, "score": self.score,
                "judge_would_transfer": self.judge_transfer}


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
    #: the analogy-log row of a find asked to leave the writing to its caller
    #: (``Retriever.find(..., defer_log=True)``): :meth:`Memory.log_analogy`'s keyword
    #: arguments but the namespace; not part of the answer
    log_row: dict[str, Any] | None = field(default=None, repr=False, compare=False)

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
            out.append(f"#{i}  {h.episode_id}  similarity {h.score:.3f}  "
                       f"({h.report.verdict}{', superseded' if h.superseded_by else ''})")
            out.append(h.report.render())
            out.append("")
        if self.decoy is not None:
            verdict = ("WOULD have transferred: trust the other acceptances less"
                       if self.decoy.judge_transfer else "rejected, as it should be")
            out.append(f"DECOY PROBE  {self.decoy.episode_id} (surface similarity "
                       f"{self.decoy.surface_similarity:.2f}, structural similarity "
                       f"{self.decoy.score:.3f}): "
                       f"{verdict}")
        if self.parametric:
            out.append("")
            out.append("PARAMETRIC — from the model's own knowledge, not from memory; scored "
                       "apart:")
            for p in self.parametric:
                out.append(f"  [parametric] {p['title']} ({p['domain']}): similarity "
                           f"{p['similarity']:.3f}, {p['verdict']}")
        if self.skipped:
            out.append("skipped: " + "; ".join(self.skipped))
        return "\n".join(out).rstrip()


def level_embeddings(sig: Signature, embedder: Any) -> dict[str, np.ndarray]:
    """The abstract-level embeddings of one episode (channel → vector); levels it lacks are
    skipped, never faked."""
    from analogist.index.embed import abstract_texts  # the embedder package imports httpx


    texts = abstract_texts(sig)
    chans = [ch for ch in LEVEL_CHANNELS if ch in texts]
    if not chans:
        return {}
    vecs = embedder.embed([texts[ch] for ch in chans])
    return {ch: vecs[i] for i, ch in enumerate(chans)}


def _surface_tokens_of(data: dict[str, Any]) -> set[str]:
    """:func:`surface_tokens` of a stored signature's JSON, without validating it again."""
    return surface_tokens_of_data(data)


def _identity(sig: Signature) -> dict[str, Any]:
    """What makes two signatures the same episode: everything but the id, the provenance and
    the verified flag."""
    data = sig.model_dump(mode="json")
    for meta in ("episode_id", "provenance", "verified"):
        data.pop(meta, None)
    return data


class _Target:
    """One find's target and what the find derives from it, each computed once, when first
    asked for: its features, its abstract level texts, its surface words, its identity (what
    :func:`_identity` compares) and its JSON data (the log row's). ``row`` is its stored row
    when the target is a stored episode of the namespace (then the retriever keeps the view
    until an episode is changed or deleted, and reads the target's level vectors from the
    index instead of embedding its texts again)."""

    __slots__ = ("sig", "row", "desc", "total", "_feats", "_levels", "_texts", "_surface",
                 "_identity", "_data")

    def __init__(self, sig: Signature, desc: Description, total: float,
                 row: int | None = None) -> None:
        self.sig, self.desc, self.total, self.row = sig, desc, total, row
        self._feats: EpisodeFeatures | None = None
        self._levels: tuple[str, ...] | None = None
        self._texts: dict[str, str] | None = None
        self._surface: set[str] | None = None
        self._identity: dict[str, Any] | None = None
        self._data: dict[str, Any] | None = None

    def features(self) -> EpisodeFeatures:
        if self._feats is None:
            self._feats = extract_features(self.sig)
        return self._feats

    def levels(self) -> tuple[str, ...]:
        """The levels :meth:`texts` has, without writing the texts (a stored target's vectors
        come from the index: its texts are written only when they must be embedded)."""
        if self._levels is None:
            if self._texts is not None:
                self._levels = tuple(self._texts)
            else:
                from analogist.index.embed import abstract_levels  # the embedder package: httpx

                self._levels = abstract_levels(self.sig)
        return self._levels

    def texts(self) -> dict[str, str]:
        if self._texts is None:
            from analogist.index.embed import abstract_texts  # the embedder package: httpx

            self._texts = abstract_texts(self.sig)
        return self._texts

    def surface(self) -> set[str]:
        if self._surface is None:
            self._surface = surface_tokens(self.sig)
        return self._surface

    def identity(self) -> dict[str, Any]:
        if self._identity is None:
            self._identity = _identity(self.sig)
        return self._identity

    def data(self) -> dict[str, Any]:
        if self._data is None:
            self._data = self.sig.model_dump(mode="json")
        return self._data


def _top(scores: np.ndarray, k: int, *, positive: bool) -> np.ndarray:
    """Positions of the ``k`` best ``scores``, best first, ties by position ascending (rows are
    in id order, so by id); only positive scores when ``positive``. A partial sort
    (``np.partition``) finds the k-th value; only the rows at or above it are sorted."""
    n = len(scores)
    if n == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < n:
        kth = np.partition(scores, n - k)[n - k]
        cand = np.flatnonzero(scores >= kth)
    else:
        cand = np.arange(n, dtype=np.int64)
    if positive:
        cand = cand[scores[cand] > 0]
    return cand[np.lexsort((cand, -scores[cand]))[:k]]


class _Channel:
    """One level's stored embeddings as rows of the stage-1 index: ``rows`` (positions, unique,
    increasing) and ``mat`` (their vectors), kept in buffers that grow by doubling so that the
    rows added after a write are appended without copying the whole matrix each time."""

    __slots__ = ("_rows", "_mat", "n", "version")

    def __init__(self, rows: np.ndarray, mat: np.ndarray) -> None:
        self._rows = np.asarray(rows, dtype=np.int64)
        self._mat = np.asarray(mat, dtype=np.float32)
        self.n = len(self._rows)
        self.version = 0  # bumped by every append (an HNSW index is rebuilt only then)

    @property
    def rows(self) -> np.ndarray:
        return self._rows[:self.n]

    @property
    def mat(self) -> np.ndarray:
        return self._mat[:self.n]

    def append(self, rows: np.ndarray, mat: np.ndarray) -> None:
        """Add rows past every row held (the positions of episodes appended to the index)."""
        if not len(rows):
            return
        if mat.shape[1] != self._mat.shape[1]:
            raise AnalogistError("the embedding channel mixes vector sizes (a new episode's "
                                 f"has {mat.shape[1]}, the stored ones {self._mat.shape[1]})")
        need = self.n + len(rows)
        if need > len(self._rows):
            cap = max(need, 2 * len(self._rows), 64)
            grown_rows = np.empty(cap, dtype=np.int64)
            grown_mat = np.empty((cap, self._mat.shape[1]), dtype=np.float32)
            grown_rows[:self.n] = self._rows[:self.n]
            grown_mat[:self.n] = self._mat[:self.n]
            self._rows, self._mat = grown_rows, grown_mat
        self._rows[self.n:need] = rows
        self._mat[self.n:need] = mat
        self.n = need
        self.version += 1


def _positions(ids: np.ndarray, eids: list[int] | np.ndarray, mat: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """The index positions of the embedded episodes ``eids`` (and their vectors), leaving out
    any the index does not hold."""
    if not len(eids) or not len(ids):
        return np.zeros(0, dtype=np.int64), mat[:0]
    e = np.asarray(eids, dtype=np.int64)
    rows = np.minimum(np.searchsorted(ids, e), len(ids) - 1)
    ok = ids[rows] == e
    return rows[ok], mat[ok]


class Retriever:
    """MAC/FAC over one namespace of a memory.

    Stage 1 runs over a :class:`~analogist.index.mac.MacIndex` kept in step with the store by its
    generation counter (:meth:`Memory.generation`): a new process loads the copy saved beside the
    store (``<store>.mac/``) and appends the rows written since; a copy that is unreadable, of
    another store, or stale after episodes were changed or deleted is rebuilt from the store with
    a one-line note (logged on ``analogist.retrieve`` and kept in :attr:`notes`). Compiled
    episodes are cached (:data:`COMPILED_CACHE`) until an episode is changed or deleted."""

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
        #: one-line notes about the saved index (rebuilt, not saved), oldest first
        self.notes: list[str] = []
        self._state: tuple[int, int] | None = None
        self._index: MacIndex | None = None
        # channel → its stored embeddings as index rows; read in full after a rewrite (or a
        # new index), else only for the rows appended since (_embedded: rows of the index read)
        self._embeddings: dict[str, _Channel] = {}
        self._embedded: tuple[MacIndex, int] | None = None
        # channel → (the channel and its version it was built from, HNSW index)
        self._ann: dict[str, tuple[_Channel, int, HnswChannel]] = {}
        self._pgv: dict[str, int] | None = None  # level → vectors, when read from pgvector
        self._compiled: OrderedDict[int, tuple[StoredEpisode, Description, float]] = \
            OrderedDict()
        self._checked: dict[int, int] = {}  # id → generation its cached head was read at
        # stored row → its view as a find's target (kept, like _compiled, until a rewrite)
        self._targets: OrderedDict[int, _Target] = OrderedDict()
        self._schemas: list[tuple[int, str, Signature, Description]] | None = None
        # the surface words of the index's rows (the decoy probe's, up to exhaustive_probe_limit)
        self._surfaces: SurfaceIndex | None = None
        # the index and its row count whose surfaces _surfaces holds (appended rows read alone)
        self._surfaces_of: tuple[MacIndex, int] | None = None
        # (embedder name, text) → its embedding, least recently used first
        self._query_vecs: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._query_counts = {"hits": 0, "misses": 0}

    @property
    def stats(self) -> dict[str, dict[str, int]]:
        """Counters of the retriever's caches: ``query_embeddings`` (hits, misses, size)."""
        return {"query_embeddings": {**self._query_counts, "size": len(self._query_vecs)}}

    def _embed_queries(self, texts: list[str]) -> list[np.ndarray]:
        """The embeddings of ``texts``, from the query-embedding cache where it has them; the
        others in one call to the embedder."""
        name = str(getattr(self.embedder, "name", "") or type(self.embedder).__qualname__)
        cache, cap = self._query_vecs, self.params.query_embedding_cache
        out: list[np.ndarray | None] = []
        for t in texts:
            got = cache.get((name, t))
            if got is not None:
                cache.move_to_end((name, t))
            out.append(got)
        todo = [i for i, v in enumerate(out) if v is None]
        self._query_counts["hits"] += len(texts) - len(todo)
        self._query_counts["misses"] += len(todo)
        if todo:
            vecs = self.embedder.embed([texts[i] for i in todo])
            for i, v in zip(todo, vecs, strict=True):
                v = np.array(v, dtype=np.float32)  # a copy of its own, never written to
                v.setflags(write=False)
                out[i] = v
                if cap > 0:
                    cache[(name, texts[i])] = v
            while len(cache) > cap:
                cache.popitem(last=False)
        return [v for v in out if v is not None]

    # -- caches ------------------------------------------------------------------------------
    def _note(self, text: str) -> None:
        self.notes.append(text)
        _log.warning("analogist: %s", text)

    def refresh(self) -> None:
        """Bring the caches up to date with the namespace (one small read when unchanged)."""
        state = self.memory.generation(self.namespace)
        if state == self._state:
            return
        conn = self.memory.conn
        with self.memory.snapshot() if not conn.in_transaction else nullcontext():
            state = self.memory.generation(self.namespace)
            rewritten = self._state is None or state[1] != self._state[1]
            self._index = self._current_index(state)
            if self.embedder == "auto":
                # the default embedder when (and only when) the namespace has level embeddings
                if self.memory.has_embeddings(LEVEL_CHANNELS, self.namespace):
                    # the embedder package (httpx among it, ~0.3 s) loads only when it is used
                    from analogist.index.embed import default_embedder

                    self.embedder = default_embedder()
                else:
                    self.embedder = None
            # on PostgreSQL with pgvector the channel is read from the database instead
            self._pgv = None if self.embedder is None else pg_vector.channels_for(
                self.memory, self.namespace, self.params.pgvector)
            if self.embedder is not None and self._pgv is None:
                self._refresh_embeddings(rewritten)
            else:
                self._embeddings, self._embedded = {}, None
            self._ann = self._ann_channels()
        if rewritten:
            self._compiled.clear()
            self._checked.clear()
            self._targets.clear()
            self._surfaces = None  # appended rows only add surfaces (see _probe)
        self._schemas = None
        self._state = state

    def _refresh_embeddings(self, rewritten: bool) -> None:
        """Bring the level embeddings in step with the stage-1 index. The index only ever
        appends rows while ``rewrites`` is unchanged (an added episode, or a supersession, which
        adds one and leaves the old one's vectors as they were), so then only the episodes of
        the appended rows are read; after a rewrite (an episode changed or deleted), or when the
        index was rebuilt, every channel is read again."""
        idx = self._index
        assert idx is not None
        ids = idx.ids
        seen = self._embedded
        if rewritten or seen is None or seen[0] is not idx or seen[1] > len(ids):
            self._embeddings = {}
            for ch in LEVEL_CHANNELS:
                rows, mat = _positions(ids, *self.memory.embeddings(ch, self.namespace))
                if len(rows):
                    self._embeddings[ch] = _Channel(rows, mat)
        elif seen[1] < len(ids):
            start = seen[1]
            new_ids = ids[start:]
            for ch in LEVEL_CHANNELS:
                eids, mat = self.memory.embeddings_of(ch, new_ids.tolist(), self.namespace)
                rows, mat = _positions(ids, eids, mat)
                if not len(rows):
                    continue
                have = self._embeddings.get(ch)
                if have is None:
                    self._embeddings[ch] = _Channel(rows, mat)
                else:
                    have.append(rows, mat)
        self._embedded = (idx, len(ids))

    def _ann_channels(self) -> dict[str, tuple[_Channel, int, HnswChannel]]:
        """HNSW indexes of the channels large enough, when asked for (built again only for a
        channel that changed since)."""
        p = self.params
        big = {ch: v for ch, v in self._embeddings.items() if v.n >= p.ann_min_rows}
        if not p.embedding_ann or not big:
            return {}
        if not ann_available():
            self._note("embedding_ann is set but the HNSW library is not installed "
                       "(pip install 'analogist[ann]'); the embedding channel stays exact")
            return {}
        out: dict[str, tuple[_Channel, int, HnswChannel]] = {}
        for ch, v in big.items():
            had = self._ann.get(ch)
            out[ch] = had if had is not None and had[0] is v and had[1] == v.version \
                else (v, v.version, HnswChannel(v.rows, v.mat, p.ann))
        return out

    def _current_index(self, state: tuple[int, int]) -> MacIndex:
        """The stage-1 index at ``state``: the one in hand or the saved one, with the rows
        added since appended; rebuilt when neither can be trusted. Saved when it was built or
        has grown since it was last saved by more than a 64th and by more than
        :data:`SAVE_AFTER_ROWS` rows (a new process appends the rows written since the save)."""
        mem, ns = self.memory, self.namespace
        root = index_root(mem.path)
        store_id = mem.store_id()
        idx, from_disk = self._index, False
        in_db = pg_mac.applies(mem)  # a PostgreSQL store keeps its index in a table
        if idx is None and (root is not None or in_db):
            try:
                idx = pg_mac.load(mem, ns, store_id) if in_db else MacIndex.load(root, ns,
                                                                                  store_id)
                from_disk = True
            except ContentIndexError as e:
                self._note(f"the saved index of namespace {ns!r} was not used ({e}); "
                           "rebuilding it from the store")
        if idx is not None and idx.rewrites != state[1]:
            if from_disk:
                self._note(f"the saved index of namespace {ns!r} is stale (episodes were "
                           "changed or deleted since it was saved); rebuilding it")
            idx = None
        if idx is not None:
            idx.append(state, mem.content_matrix(ns, after_id=idx.max_id))
            if from_disk and (len(idx), idx.max_id) != mem.extent(ns):
                self._note(f"the saved index of namespace {ns!r} does not match the store; "
                           "rebuilding it")
                idx = None
        if idx is None:
            idx = MacIndex.build(ns, store_id, state, mem.content_matrix(ns))
        grown = len(idx) - idx.saved_rows
        if (root is not None or in_db) and len(idx) and (
                idx.saved_rows == 0 or grown > max(len(idx) // 64, SAVE_AFTER_ROWS)):
            try:
                if in_db:
                    pg_mac.save(mem, idx)
                else:
                    idx.save(root)
            except (OSError, AnalogistError) as e:
                self._note(f"could not save the index of namespace {ns!r}: {getattr(e, 'strerror', None) or e}")
        return idx

    def _prefetch(self, sids: list[int]) -> None:
        """Read the shortlist's episodes in one query (compiling those not cached) and the
        current supersession of the cached ones."""
        gen = self._state[0] if self._state is not None else 0
        misses = [s for s in sids if s not in self._compiled]
        stale = [s for s in sids if s in self._compiled and self._checked.get(s) != gen]
        if misses:
            got: dict[int, StoredEpisode] = {}
            # a row that does not read fails the whole read: then FAC reads each one alone and
            # reports the one that fails (one unreadable episode must not fail the find)
            with suppress(AnalogistError):
                got = self.memory.get_many(misses, self.namespace)
            for sid, ep in got.items():
                # one that does not compile is reported by FAC, which reads it again
                with suppress(AnalogistError):
                    self._remember(sid, ep, gen)
        if stale:
            heads = self.memory.heads(stale, self.namespace)
            for sid in stale:
                head = heads.get(sid)
                if head is None:  # deleted meanwhile: read it again (and fail) on use
                    self._compiled.pop(sid, None)
                    continue
                ep, desc, total = self._compiled[sid]
                if ep.superseded_by != head[1]:
                    self._compiled[sid] = (replace(ep, superseded_by=head[1]), desc, total)
                self._checked[sid] = gen

    def _remember(self, sid: int, ep: StoredEpisode, gen: int
                  ) -> tuple[StoredEpisode, Description, float]:
        desc = compile_signature(ep.signature, self.vocab)
        entry = (ep, desc, self_score(desc, self.params.judge.sme))
        self._compiled[sid] = entry
        self._checked[sid] = gen
        while len(self._compiled) > COMPILED_CACHE:
            old, _e = self._compiled.popitem(last=False)
            self._checked.pop(old, None)
        return entry

    def _episode(self, sid: int) -> tuple[StoredEpisode, Description, float]:
        got = self._compiled.get(sid)
        if got is not None:
            self._compiled.move_to_end(sid)
            return got
        ep = self.memory.get(sid, self.namespace)
        if ep is None:
            raise AnalogistError(f"episode {sid} vanished from namespace {self.namespace!r}")
        return self._remember(sid, ep, self._state[0] if self._state is not None else 0)

    # -- stage 1 -----------------------------------------------------------------------------
    def _embedding_levels(self, target: _Target, skipped: list[str]) -> list[str]:
        """The levels the embedding channel scores ``target`` on (``[]`` when the channel is
        off for it, the reason added to ``skipped``)."""
        if self.embedder is None:
            skipped.append("embedding channel: no embedder configured or no stored level "
                           "embeddings")
            return []
        if not self._embeddings and not self._pgv:
            skipped.append("embedding channel: no stored episode has level embeddings")
            return []
        levels = target.levels()
        have = self._pgv or self._embeddings
        used = [ch for ch in LEVEL_CHANNELS if ch in levels and ch in have]
        if not used:
            skipped.append("embedding channel: the target has no L1-L3 levels")
        return used

    def _target(self, target: Signature | _Target) -> _Target:
        """``target`` as a find's target view (a Signature given inline: compiled now)."""
        if isinstance(target, _Target):
            return target
        desc = compile_signature(target, self.vocab)
        return _Target(target, desc, self_score(desc, self.params.judge.sme))

    def _stored_target(self, sid: int) -> _Target:
        """The stored episode ``sid`` of the namespace as a find's target, its compiled form
        shared with the candidate cache and its view kept until an episode is changed or
        deleted (the caches are current: :meth:`refresh` ran)."""
        got = self._targets.get(sid)
        if got is not None:
            self._targets.move_to_end(sid)
            return got
        ep, desc, total = self._episode(sid)
        t = self._targets[sid] = _Target(ep.signature, desc, total, row=sid)
        while len(self._targets) > TARGET_CACHE:
            self._targets.popitem(last=False)
        return t

    def _query_vectors(self, target: _Target, used: list[str]) -> list[np.ndarray]:
        """The target's vectors on the levels ``used``: a stored target's own stored vectors
        when the index holds one for every level (the vectors its texts were embedded to when it
        was added, which stage 1 already compares every query with), else its texts embedded."""
        idx = self._index
        if target.row is not None and idx is not None and not self._pgv and len(idx.ids):
            pos = int(np.searchsorted(idx.ids, target.row))
            if pos < len(idx.ids) and int(idx.ids[pos]) == target.row:
                out = []
                for ch in used:
                    chan = self._embeddings.get(ch)
                    if chan is None:
                        break
                    rows = chan.rows
                    j = int(np.searchsorted(rows, pos))
                    if j >= len(rows) or int(rows[j]) != pos:
                        break
                    out.append(chan.mat[j])
                else:
                    return out
        texts = target.texts()
        return self._embed_queries([texts[ch] for ch in used])

    def stage1(self, target: Signature | _Target, k: int, *, positive: bool = True) -> Stage1:
        """The ``k`` best rows of stage 1 (ties by id; only positive fused scores when
        ``positive``): the same rows and numbers as :meth:`mac` followed by a partial sort,
        but without scoring every row when the embedding channel is off for the target
        (:meth:`ContentIndex.top <analogist.index.content.ContentIndex.top>`, exact)."""
        self.refresh()
        idx = self._index
        assert idx is not None
        p = self.params
        t = self._target(target)
        skipped: list[str] = []
        used = self._embedding_levels(t, skipped)
        if not used and len(idx) >= EXACT_TOP_MIN_ROWS:
            feats = t.features()
            bonus = idx.rows_with_code(idx.fingerprint_code(feats.fingerprint))
            got = idx.content.top(feats.content, k, weight=p.w_content, bonus_rows=bonus,
                                  bonus=p.w_fingerprint)
            if got is not None:
                rows, cos, fused = got
                fp = np.isin(rows, bonus).astype(np.float64)
                return Stage1(idx.ids, rows, fused, {"content": cos, "fingerprint": fp},
                              skipped)
        ids, fused, channels, skipped = self.mac(t)
        rows = _top(fused, k, positive=positive)
        return Stage1(ids, rows, fused[rows], {name: v[rows] for name, v in channels.items()},
                      skipped)

    def mac(self, target: Signature | _Target) -> tuple[np.ndarray, np.ndarray,
                                                        dict[str, np.ndarray], list[str]]:
        """Stage 1 over every episode: ``(ids, fused, per-channel scores, skipped notes)``."""
        self.refresh()
        idx = self._index
        assert idx is not None
        p = self.params
        ids = idx.ids
        t = self._target(target)
        skipped: list[str] = []
        feats = t.features()
        channels: dict[str, np.ndarray] = {"content": idx.content.scores(feats.content)}
        fp = (idx.fp_codes == idx.fingerprint_code(feats.fingerprint)).astype(np.float64)
        channels["fingerprint"] = fp
        fused = np.multiply(channels["content"], p.w_content)
        fused += p.w_fingerprint * fp  # in place: the same sum as a*x + b*y, one array less
        used = self._embedding_levels(t, skipped)
        if used:
            qv = self._query_vectors(t, used)
            if self._pgv:  # the k nearest per level from the database's HNSW index
                emb = pg_vector.channel_scores(self.memory, self.namespace, ids, used, qv,
                                               p.pgvector, prior=fused)
            else:
                emb = np.zeros(len(ids), dtype=np.float64)
                cnt = np.zeros(len(ids), dtype=np.float64)
                for ch, q in zip(used, qv, strict=True):
                    chan = self._embeddings[ch]
                    rows = chan.rows  # unique positions: a plain += adds each once
                    ann = self._ann.get(ch)
                    if ann is None:
                        emb[rows] += chan.mat @ q.astype(np.float32)
                    else:  # approximate: only the k nearest rows score (see index.ann)
                        near, sims = ann[2].search(q)
                        np.add.at(emb, near, sims)
                    cnt[rows] += 1.0
                emb = np.divide(emb, cnt, out=np.zeros_like(emb), where=cnt > 0)
            channels["embedding"] = emb
            fused += p.w_embedding * emb
        return ids, fused, channels, skipped

    # -- the whole query ---------------------------------------------------------------------
    def find(self, target: Signature | dict[str, Any] | int, *, k: int | None = None,
             critic: Any | None = None, parametric: Any | None = None,
             defer_log: bool = False) -> FindResult:
        """Stage 1, stage 2, judge, decoy probe and log for one target signature.

        ``target``: a Signature, its data, or (an ``int``) the row id of a stored episode of
        the namespace — the same answer as its signature given inline, without reading,
        compiling or embedding it again: its compiled form is shared with the candidate cache,
        its features, abstract texts and surface words are kept until an episode is changed or
        deleted, and its level vectors are the ones stored with it.

        ``critic`` (optional; e.g. :class:`analogist.critic.Critic`): its ``review(source,
        target, role_map)`` is asked about every reported analogue that would transfer, seeing
        only the two signatures and the role map; its verdict is attached to the report and a
        ``reject`` withholds the transfer (:func:`analogist.judge.with_critic`).
        ``parametric`` (optional callable ``target -> ParametricResult``): the labelled
        parametric channel; its analogues are judged like retrieved ones and reported apart, in
        ``FindResult.parametric``, each labelled ``parametric``.
        ``defer_log``: when the retriever logs, the row is returned in ``FindResult.log_row``
        (its ``log_id`` None) for the caller to write — a server writes it after the find has
        given up its slot, so that waiting for the store's write lock holds no core's turn.
        """
        t0 = time.perf_counter()
        stored = isinstance(target, (int, np.integer)) and not isinstance(target, bool)
        if not stored and not isinstance(target, Signature):
            target = validate_signature(target)
        p = self.params
        if k is None:
            k = p.k
        elif isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise AnalogistError(f"find: k must be a positive whole number of results, not {k!r}")
        # stage 2 maps at least as many candidates as are asked for: a shortlist shorter than
        # ``k`` could never return ``k`` results, and an analogue that stage 1 placed below the
        # shortlist would be missing from the answer, not ranked low in it
        shortlist = max(p.shortlist, k)
        # one top-k serves the shortlist and the decoy probe's pool
        self.refresh()
        assert self._index is not None
        t = self._stored_target(int(target)) if stored else self._target(target)  # type: ignore[arg-type]
        target = t.sig
        pooled = p.decoy_probe and len(self._index) > p.exhaustive_probe_limit
        s1 = self.stage1(t, max(shortlist, p.probe_pool) if pooled else shortlist,
                         positive=not pooled)
        ids, ranked, skipped = s1.ids, s1.rows, s1.skipped
        t1 = time.perf_counter()
        target_desc, target_total = t.desc, t.total
        top = np.arange(min(shortlist, len(ranked)))
        if pooled:
            top = top[s1.fused[top] > 0]
        short = [(int(ids[ranked[i]]), int(i)) for i in top]
        hits: list[Hit] = []
        hits += self._schema_hits(target, target_desc, target_total)
        self._prefetch([sid for sid, _i in short])
        for sid, i in short:
            try:
                hits.append(self._fac(sid, target, target_desc, target_total,
                                      float(s1.fused[i]),
                                      {name: float(v[i]) for name, v in s1.channels.items()}))
            except AnalogistError as e:
                # one unreadable episode must not take every query down with it
                skipped.append(f"episode {sid}: {e}")
        # similarity is capped at 1.0 (a candidate with more structure than the target can
        # cover all of it): among equal similarities the one more of whose own structure
        # maps ranks first (the source-side share, report.normalized_score), then stage 1; a
        # candidate the judge finds contradicting the target ranks below every one it does not
        # (RetrieveParams.demote_contradicting)
        demote = p.demote_contradicting
        hits.sort(key=lambda h: (demote and bool(h.report.contradictions), -h.score,
                                 -h.report.normalized_score, -h.stage1, h.id))
        hits = _superseded_below_replacements(hits)
        itself = self._query_itself(t, hits)   # never answer a query with itself
        hits = [h for h in hits if h.schema or h.id not in itself]
        t2 = time.perf_counter()
        no_match = not hits or hits[0].score < p.min_score
        results = tuple(hits[:k])
        decoy = None
        if p.decoy_probe and len(ids):
            decoy = self._probe(t, ids,
                                {h.id for h in results if h.score >= p.min_score} | itself,
                                pool=ranked[:p.probe_pool] if pooled else None)
        t3 = time.perf_counter()
        log_id, log_row = None, None
        if self.log:
            best = results[0] if results else None
            log_row = {
                "target": t.data(),
                "candidates": [{"id": h.id, "episode_id": h.episode_id, "score": h.score,
                                "stage1": h.stage1} for h in results],
                "mapping": None if best is None else best.report.role_map,
                "score": None if best is None else best.score,
                "verdict": "no match" if no_match else (best.report.verdict if best else None),
                "transferred": bool(best and not no_match and best.transfer),
                "prediction": None if best is None or best.report.prediction is None else {
                    "observable": best.report.prediction.observable,
                    "check": best.report.prediction.check}}
            if not defer_log:
                log_id, log_row = self.memory.log_analogy(self.namespace, **log_row), None
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
                          tuple(s1.channels), tuple(skipped), timings, log_id, par, log_row)

    def _query_itself(self, target: _Target, hits: list[Hit]) -> set[int]:
        """The stored rows that are the query itself: the episode with the query's episode id,
        and any retrieved episode whose signature equals the query's but for its id and
        provenance."""
        out: set[int] = set()
        row = target.row if target.row is not None else \
            self.memory.row_id(target.sig.episode_id, self.namespace)
        if row is not None:
            out.add(row)
        sig = target.sig
        for h in hits:
            if h.schema or h.id in out:
                continue
            other = self._episode(h.id)[0].signature
            if len(other.relations) != len(sig.relations) or \
                    len(other.causal_chain) != len(sig.causal_chain):
                continue
            if _identity(other) == target.identity():
                out.add(h.id)
        return out

    def _criticise(self, critic: Any, h: Hit, target: Signature, skipped: list[str]) -> Hit:
        from analogist.critic import CriticVerdict, review_or_fail  # the LLM path, on use


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
        from analogist.parametric import judge_analogues  # the LLM writer's code, on use

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
        norm *= self.params.contradiction_discount ** len(report.contradictions)
        # the report shows the number the hit ranks by: one similarity per hit
        return Hit(sid, ep.episode_id, norm, sme_score, stage1, channels, ep.superseded_by,
                   replace(report, similarity=norm))

    def _schema_hits(self, target: Signature, target_desc: Description,
                     target_total: float) -> list[Hit]:
        """Schema-first lookup: induced schemas that validate as signatures are mapped first."""
        if self._schemas is None:
            self._schemas = []
            for row in self.memory.schemas(self.namespace):
                try:
                    sig = validate_signature(row.get("description"))
                except AnalogistError:
                    continue
                self._schemas.append((int(row["id"]), str(row.get("name")), sig,
                                      compile_signature(sig, self.vocab)))
        out = []
        for schema_id, name, sig, desc in self._schemas:
            res = match(desc, target_desc, self.params.judge.sme)
            best = res.best
            sme = best.score if best is not None else 0.0
            norm = min(1.0, sme / target_total) if target_total > 0 else 0.0
            if norm < self.params.min_score:
                continue
            report = judge_mapping(sig, target, desc, target_desc, res, params=self.params.judge)
            out.append(Hit(-schema_id, f"schema:{name}", norm, sme, 0.0, {}, None,
                           replace(report, similarity=norm), schema=True))
        return out

    def _probe(self, target: _Target, ids: np.ndarray, accepted: set[int], *,
               pool: np.ndarray | None = None) -> DecoyProbe | None:
        """Map the most surface-similar episode not accepted; would the judge take it?
        ``pool``: the positions of the best ``probe_pool`` rows by stage 1, when the caller has
        them already (the shortlist's top-k); the probe of a namespace larger than
        ``exhaustive_probe_limit`` ranks them itself otherwise."""
        p = self.params
        tt = target.surface()
        if not tt:
            return None
        exhaustive = len(ids) <= p.exhaustive_probe_limit
        if not exhaustive and pool is None:  # rank the pool here (the caller has no top-k)
            pool = self.stage1(target, p.probe_pool, positive=False).rows
        if exhaustive or len(ids) <= SURFACE_INDEX_ROWS:
            # every surface, in an inverted index of the index's rows kept until an episode is
            # changed or deleted; after appends only the appended rows are read (a write must
            # not cost the next find a read of every surface); a larger namespace's pool is
            # the best rows by stage 1, ranked among themselves
            idx, seen, surf = self._index, self._surfaces_of, self._surfaces
            if surf is None or seen is None or seen[0] is not idx or seen[1] > len(ids) \
                    or len(surf) != seen[1]:
                words = self.memory.surface_words(None, self.namespace)
                surf = self._surfaces = SurfaceIndex()
                surf.append(words.get(int(x)) for x in ids)
            elif seen[1] < len(ids):
                new = ids[seen[1]:].tolist()
                words = self.memory.surface_words(new, self.namespace)
                surf.append(words.get(x) for x in new)
            self._surfaces_of = (idx, len(ids))  # type: ignore[assignment]
            pos = np.searchsorted(ids, np.fromiter(accepted, dtype=np.int64,
                                                   count=len(accepted)))
            got = surf.most_similar(tt, excluded=(int(j) for j in pos
                                                  if j < len(ids) and int(ids[j]) in accepted),
                                    among=None if exhaustive else (int(j) for j in pool))
            best = None if got is None else (got[0], int(ids[got[1]]))
        else:
            pool_ids = [int(ids[j]) for j in pool]
            words = self.memory.surface_words([s for s in pool_ids if s not in accepted],
                                              self.namespace)
            best = None
            for sid in pool_ids:
                st = words.get(sid)
                if not st or sid in accepted:
                    continue
                sim = len(tt & st) / len(tt | st)
                if best is None or sim > best[0] or (sim == best[0] and sid < best[1]):
                    best = (sim, sid)
        if best is None or best[0] <= 0:
            return None
        try:
            hit = self._fac(best[1], target.sig, target.desc, target.total, 0.0, {})
        except AnalogistError:
            return None
        return DecoyProbe(hit.episode_id, best[0], hit.score,
                          hit.transfer and hit.score >= p.min_score)


def _stream_content_index(memory: Memory, namespace: str) -> ContentIndex:
    """The namespace's content index, built by streaming its rows into CSR arrays (one row's
    counts in memory at a time, so a million episodes do not become a million dicts)."""
    m = memory.content_matrix(namespace)
    return ContentIndex.from_arrays(m.ids, m.names, m.indptr, m.indices, m.counts)


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
    concl = tuple(c if c.status != "transfer" else
                  Conclusion(c.source, c.projected, "withheld",
                             (*c.reasons, "no candidate clears the match threshold"))
                  for c in h.report.conclusions)
    return replace(h, report=replace(h.report, conclusions=concl, transfer_mechanism=False))
