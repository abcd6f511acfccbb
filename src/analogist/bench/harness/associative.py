"""Text retrievers for the harness: a surface-only baseline and a HippoRAG-style associative one.

* :class:`SurfaceRetriever` — ranks every episode by the cosine between an embedding of the
  query text and an embedding of the episode's concrete text (L0 narrative plus surface entity
  names); no structure, no SME, no knowledge of supersession. The "semantic memory" baseline.
* :class:`AssociativeRetriever` — the pattern of HippoRAG (Gutiérrez et al. 2024, "HippoRAG:
  Neurobiologically Inspired Long-Term Memory for Large Language Models") as seed 002 states it:
  "cosine picks where to stand in the graph, the structural-relation walk decides what is
  reachable, and cosine orders what was reached". The query embedding picks ``seed_k`` entry
  points; a breadth-first walk of ``hops`` steps over structural edges — members of one schema,
  episodes with an equal WL fingerprint (:meth:`Memory.fingerprint_groups`), supersession links —
  collects what is reachable; the reached set is ordered by activation
  ``max(cos(q, n), spread · max cos(q, s) over entry points s that reach n)``.

Departures from HippoRAG: no personalized PageRank over an LLM-extracted knowledge graph — the
graph is analogist's own structural edges and the propagation is a bounded walk with a single
decay factor ``spread`` (so a neighbour of a strong entry point is ranked right behind it);
entry points and ordering use the episode text embedding, not named-entity nodes. A superseded
episode ranks directly below its correction when both are reached (as in
:func:`analogist.retrieve.Retriever.find`). Episodes a query excludes (a structural query's own
source) are neither entry points nor walked through: they are treated as absent from memory. Neither retriever ever says "no match" unless
``min_cosine`` is set above 0: seed 002 measured that no absolute cosine floor separates signal
from gibberish.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from analogist.params import bounded, check_bounds

from .goldset import narrative_text


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What every harness retriever returns: ranked episode ids, and whether it said "no match"."""

    ranked: tuple[str, ...]
    no_match: bool
    note: str = ""


@dataclass(frozen=True, slots=True)
class AssociativeParams:
    """HippoRAG-style walk settings (Gutiérrez et al. 2024; seed 002 "Semantic seeding").

    Attributes:
        seed_k: entry points taken by cosine (seed 002: ENGRAM_EMBED_SEED_K = 8), not floored.
        hops: walk depth over structural edges.
        spread: activation passed from an entry point to what it reaches (0 < spread <= 1).
        use_fingerprint, use_schemas, use_supersession: which edge kinds the walk follows.
        min_cosine: below this best cosine the retriever reports no match (0 = never).
    """

    seed_k: int = bounded(8, lo=1, integer=True)
    hops: int = bounded(1, lo=0, integer=True)
    spread: float = bounded(0.95, lo=0.0, hi=1.0, lo_open=True)
    use_fingerprint: bool = True
    use_schemas: bool = True
    use_supersession: bool = True
    min_cosine: float = bounded(0.0, lo=-1.0, hi=1.0)

    def __post_init__(self) -> None:
        check_bounds(self)


class TextIndex:
    """Embeddings of every episode's concrete text in one namespace (live and superseded);
    build once and pass as ``index=`` to share between retrievers of the same namespace."""

    def __init__(self, memory: Any, namespace: str, embedder: Any) -> None:
        self.memory, self.namespace, self.embedder = memory, namespace, embedder
        eps = memory.list(namespace, include_superseded=True)
        self.ids = [e.episode_id for e in eps]
        self.rows = {e.id: e.episode_id for e in eps}
        self.superseded_by = {self.rows[a]: self.rows[b]
                              for a, b in memory.superseded(namespace).items()
                              if a in self.rows and b in self.rows}
        texts = [narrative_text(e.signature.to_data()) or e.episode_id for e in eps]
        self.matrix = (np.asarray(embedder.embed(texts), dtype=np.float64) if texts
                       else np.zeros((0, 1)))

    def cosines(self, text: str) -> np.ndarray:
        if not self.ids:
            return np.zeros(0)
        q = np.asarray(self.embedder.embed([text if text.strip() else "."]),
                       dtype=np.float64)[0]
        return self.matrix @ q


def _order(cands: dict[str, float], own: dict[str, float],
           superseded_by: dict[str, str]) -> list[str]:
    out = sorted(cands, key=lambda e: (-cands[e], -own.get(e, 0.0), e))
    changed = True
    while changed:                     # a superseded episode goes directly below its correction
        changed = False
        pos = {e: i for i, e in enumerate(out)}
        for i, e in enumerate(out):
            r = superseded_by.get(e)
            if r is not None and r in pos and pos[r] > i:
                out.insert(pos[r], out.pop(i))
                changed = True
                break
    return out


class SurfaceRetriever:
    """Cosine of the query text against each episode's concrete text (no structure)."""

    name = "surface"

    def __init__(self, memory: Any, namespace: str = "default", *, embedder: Any,
                 min_cosine: float = 0.0, index: TextIndex | None = None) -> None:
        self.index = index if index is not None else TextIndex(memory, namespace, embedder)
        self.min_cosine = float(min_cosine)

    def search(self, text: str, k: int = 10, exclude: tuple[str, ...] = ()) -> SearchResult:
        sims = self.index.cosines(text)
        own = {e: float(s) for e, s in zip(self.index.ids, sims, strict=True)
               if e not in exclude}
        ranked = _order(own, own, {})[:k]          # pure cosine: no supersession handling
        best = max(own.values(), default=-1.0)
        return SearchResult(tuple(ranked), not ranked or best < self.min_cosine)


class AssociativeRetriever:
    """Embedding-seeded walk over structural edges, cosine-ordered (see the module docstring)."""

    name = "associative"

    def __init__(self, memory: Any, namespace: str = "default", *, embedder: Any,
                 params: AssociativeParams | None = None,
                 index: TextIndex | None = None) -> None:
        self.params = params or AssociativeParams()
        self.index = index if index is not None else TextIndex(memory, namespace, embedder)
        rows = self.index.rows
        adj: dict[str, set[str]] = {e: set() for e in self.index.ids}
        p = self.params

        def link(group: list[str]) -> None:
            for a in group:
                adj[a].update(x for x in group if x != a)

        if p.use_fingerprint:
            for members in memory.fingerprint_groups(namespace).values():
                link([rows[m] for m in members if m in rows])
        if p.use_schemas:
            for row in memory.schemas(namespace):
                link([rows[int(m)] for m in row.get("members") or [] if int(m) in rows])
        if p.use_supersession:
            for a, b in self.index.superseded_by.items():
                adj[a].add(b)
                adj[b].add(a)
        self.adjacency = adj

    def edges(self) -> int:
        return sum(len(v) for v in self.adjacency.values()) // 2

    def search(self, text: str, k: int = 10, exclude: tuple[str, ...] = ()) -> SearchResult:
        p = self.params
        sims = self.index.cosines(text)
        own = {e: float(s) for e, s in zip(self.index.ids, sims, strict=True)}
        order = sorted((e for e in own if e not in exclude), key=lambda e: (-own[e], e))
        seeds = order[:p.seed_k]
        act = {s: own[s] for s in seeds}
        frontier = {s: own[s] for s in seeds}
        for _ in range(p.hops):
            nxt: dict[str, float] = {}
            for s, a in frontier.items():
                for n in self.adjacency.get(s, ()):
                    if n in exclude:
                        continue
                    v = max(own[n], p.spread * a)
                    if v > act.get(n, -2.0):
                        act[n] = v
                        nxt[n] = v
            frontier = nxt
        ranked = _order(act, own, self.index.superseded_by)[:k]
        best = max((own[s] for s in seeds), default=-1.0)
        return SearchResult(tuple(ranked), not ranked or best < p.min_cosine,
                            note=f"{len(act) - len(seeds)} reached beyond {len(seeds)} seeds")
