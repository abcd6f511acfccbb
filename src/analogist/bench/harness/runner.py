"""Run a pinned gold set against a retriever, N times (seed 002, "run_eval" and "Metrics").

Each run works on a fresh copy of the store (SQLite online backup into a temporary file), builds
the retriever, answers one untimed warm-up query (model loading is not query latency), then asks
every query once, timing the whole call (for text queries through the MAC/FAC retrievers that
includes writing the target Signature with the deterministic encoder, as ``analogist find
--from-text`` does). Per query and run it records the top 10 episode ids, the "no match" flag and
the latency, and scores:

* ``hit@5`` — an expected episode among the first five; for ``superseded`` the correction must
  also rank above the stale episode (an unranked stale episode counts as below); for
  ``nonsense`` the query is a hit when the retriever reports no match (seed 002: the right
  answer is nothing);
* ``recall@5``, ``recall@10`` — expected episodes found over the number expected;
* ``precision@5`` — expected episodes in the first five over a fixed denominator of 5, so an
  empty answer is punished like a page of junk;
* ``MRR@10`` — reciprocal rank of the first expected episode within ten.

Aggregates (hit@5, recall, precision, MRR) are means over the answerable queries (all but
``nonsense``); ``nonsense_clean`` and ``superseded_outranks`` are counts, as in seed 002; a
per-category hit@5 table and latency p50/p95/max (ms) are reported. Latencies are reported, never
asserted. The retrievers are asked with ``log=False``, so the store copy is only read.

Retriever names: ``fused`` (:class:`~analogist.retrieve.Retriever` with default
:class:`~analogist.retrieve.RetrieveParams` and the default embedder), ``structural`` (the same
with ``w_embedding = 0``: content vectors, WL fingerprint and SME), ``surface`` and
``associative`` (:mod:`.associative`).

This module imports only analogist's public retrieval API besides its own package, so the same
file can drive another build of analogist (see :mod:`.refs`).
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import analogist
from analogist.errors import AnalogistError
from analogist.memory.sqlite import Memory, copy_store
from analogist.signature import validate_signature

from .associative import AssociativeRetriever, SearchResult, SurfaceRetriever
from .goldset import CATEGORIES, GoldQuery, GoldSet, load_goldset

RETRIEVERS = ("fused", "structural", "surface", "associative")
RESULT_FORMAT = "analogist-harness-run/1"
K = 10


class _MacFac:
    """The MAC/FAC retriever behind the harness's find-like interface."""

    def __init__(self, memory: Any, namespace: str, *, structural_only: bool,
                 embedder: Any, encoder: Any) -> None:
        # MAC/FAC (engine, judge, index) loads only for the structural and fused retrievers
        from analogist.retrieve import RetrieveParams, Retriever

        params = RetrieveParams(w_embedding=0.0) if structural_only else RetrieveParams()
        self.name = "structural" if structural_only else "fused"
        self.retriever = Retriever(memory, namespace, params=params,
                                   embedder=None if structural_only else embedder, log=False)
        self.encoder = encoder

    def search_query(self, q: GoldQuery, k: int) -> SearchResult:
        if q.signature is not None:
            sig = validate_signature(q.signature, source=q.id)
        else:
            sig = self.encoder().encode(q.text, episode_id="query", source=q.id).signature
        res = self.retriever.find(sig, k=k + len(q.exclude))
        ranked = tuple(h.episode_id for h in res.results if h.episode_id not in q.exclude)
        return SearchResult(ranked[:k], res.no_match)


class _Text:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name

    def search_query(self, q: GoldQuery, k: int) -> SearchResult:
        return self.inner.search(q.text, k, q.exclude)


def make_retriever(name: str, memory: Any, namespace: str, *, embedder: Callable[[], Any],
                   encoder: Callable[[], Any]) -> Any:
    """A harness retriever by name (see the module docstring); ``embedder``/``encoder`` are
    zero-argument factories so a model is loaded only when a retriever needs it."""
    if name == "fused":
        return _MacFac(memory, namespace, structural_only=False, embedder=embedder(),
                       encoder=encoder)
    if name == "structural":
        return _MacFac(memory, namespace, structural_only=True, embedder=None, encoder=encoder)
    if name == "surface":
        return _Text(SurfaceRetriever(memory, namespace, embedder=embedder()))
    if name == "associative":
        return _Text(AssociativeRetriever(memory, namespace, embedder=embedder()))
    raise AnalogistError(f"retriever must be one of {', '.join(RETRIEVERS)}, got {name!r}",
                         field="retriever")


def score_query(q: GoldQuery, res: SearchResult) -> dict[str, float]:
    """Per-query metrics (see the module docstring)."""
    ranked = list(res.ranked)
    if q.category == "nonsense":
        clean = 1.0 if (res.no_match or not ranked) else 0.0
        return {"hit@5": clean, "recall@5": clean, "recall@10": clean,
                "precision@5": 0.0, "mrr@10": 0.0}
    exp = set(q.expected)
    top5, top10 = ranked[:5], ranked[:10]
    first = next((i for i, e in enumerate(top10) if e in exp), None)
    hit = any(e in exp for e in top5)
    if q.category == "superseded" and hit:
        pos = {e: i for i, e in enumerate(ranked)}
        best_corr = min(pos[e] for e in exp if e in pos)
        hit = all(pos.get(s, math.inf) > best_corr for s in q.stale)
    return {
        "hit@5": 1.0 if hit else 0.0,
        "recall@5": len(exp & set(top5)) / len(exp),
        "recall@10": len(exp & set(top10)) / len(exp),
        "precision@5": len(exp & set(top5)) / 5.0,
        "mrr@10": 0.0 if first is None else 1.0 / (first + 1),
    }


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    i = min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))
    return s[i]


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate one run's per-query rows."""
    ans = [r for r in rows if r["category"] != "nonsense"]
    out: dict[str, Any] = {m: (statistics.fmean(r[m] for r in ans) if ans else 0.0)
                           for m in ("hit@5", "recall@5", "recall@10", "precision@5", "mrr@10")}
    out["answerable"] = len(ans)
    out["no_match_on_answerable"] = sum(1 for r in ans if r["no_match"])
    non = [r for r in rows if r["category"] == "nonsense"]
    out["nonsense_clean"] = [int(sum(r["hit@5"] for r in non)), len(non)]
    sup = [r for r in rows if r["category"] == "superseded"]
    out["superseded_outranks"] = [int(sum(r["hit@5"] for r in sup)), len(sup)]
    cats: dict[str, Any] = {}
    for c in CATEGORIES:
        rs = [r for r in rows if r["category"] == c]
        if rs:
            cats[c] = {"n": len(rs), "hit@5": statistics.fmean(r["hit@5"] for r in rs),
                       "mrr@10": statistics.fmean(r["mrr@10"] for r in rs)}
    out["by_category"] = cats
    lat = [r["latency_ms"] for r in rows]
    out["latency_ms"] = {"p50": _pct(lat, 0.5), "p95": _pct(lat, 0.95),
                         "max": max(lat, default=0.0)}
    return out


def _copy_store(src: Path, dst: Path) -> None:
    """A consistent copy of a SQLite store (online backup; the source is only read)."""
    copy_store(src, dst)


def run_goldset(gold: GoldSet, store: str | Path, retriever: str, *, runs: int = 1,
                namespace: str | None = None, embedder: Any = None, encoder: Any = None,
                progress: Callable[[int, int, int], None] | None = None) -> dict[str, Any]:
    """Run ``gold`` ``runs`` times against ``retriever`` over a fresh copy of ``store`` per run.

    ``embedder`` / ``encoder``: already-loaded instances to reuse (the default embedder and a
    :class:`~analogist.encode.deterministic.DeterministicEncoder` are loaded lazily otherwise).
    Returns the result document (``format``, gold-set identity, one entry per run with per-query
    rows and a summary).
    """
    if retriever not in RETRIEVERS:
        raise AnalogistError(f"retriever must be one of {', '.join(RETRIEVERS)}, got "
                             f"{retriever!r}", field="retriever")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise AnalogistError("runs must be a positive integer", field="runs")
    ns = namespace or gold.namespace
    cache: dict[str, Any] = {"embedder": embedder, "encoder": encoder}

    def get_embedder() -> Any:
        if cache["embedder"] is None:
            # the embedder package (httpx among it) and its weights only when a run needs them
            from analogist.index.embed import default_embedder

            cache["embedder"] = default_embedder()
        return cache["embedder"]

    def get_encoder() -> Any:
        if cache["encoder"] is None:
            from analogist.encode.deterministic import DeterministicEncoder  # spaCy, on use

            cache["encoder"] = DeterministicEncoder(embedder=get_embedder())
        return cache["encoder"]

    out_runs: list[dict[str, Any]] = []
    src = Path(store)
    for r in range(runs):
        with tempfile.TemporaryDirectory(prefix="analogist-harness-") as tmp:
            copy = Path(tmp) / "store.db"
            _copy_store(src, copy)
            with Memory.open(copy) as mem:
                if mem.count(ns) == 0:
                    raise AnalogistError(f"namespace {ns!r} of the store is empty",
                                         source=str(src), field="namespace")
                t0 = time.perf_counter()
                ret = make_retriever(retriever, mem, ns, embedder=get_embedder,
                                     encoder=get_encoder)
                build_ms = (time.perf_counter() - t0) * 1000

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")   # proposed-term warnings of query drafts
                    # warm-up, untimed; a failure here is recorded by the timed pass
                    with contextlib.suppress(AnalogistError):
                        ret.search_query(gold.queries[0], K)
                    rows = []
                    for i, q in enumerate(gold.queries):
                        t = time.perf_counter()
                        err = ""
                        try:
                            res = ret.search_query(q, K)
                        except AnalogistError as e:   # the path failed on this query: a miss
                            res, err = SearchResult((), True), str(e)[:300]
                        ms = (time.perf_counter() - t) * 1000
                        row = {"id": q.id, "category": q.category, "ranked": list(res.ranked),
                               "no_match": res.no_match, "latency_ms": round(ms, 3)}
                        row.update(score_query(q, res))
                        if err:
                            row["error"] = err
                        rows.append(row)
                        if progress is not None:
                            progress(r + 1, i + 1, len(gold.queries))
            shutil.rmtree(tmp, ignore_errors=True)
        out_runs.append({"run": r + 1, "build_ms": round(build_ms, 3), "rows": rows,
                         "summary": summarise(rows)})
    return {
        "format": RESULT_FORMAT, "retriever": retriever, "namespace": ns,
        "gold": {"namespace": gold.namespace, "store_fingerprint": gold.store_fingerprint,
                 "queries": len(gold.queries), "counts": gold.counts(),
                 "ids": [q.id for q in gold.queries]},
        "system_under_test": {"analogist_version": getattr(analogist, "__version__", "?"),
                              "analogist_path": str(Path(analogist.__file__).resolve().parent)},
        "runs": out_runs,
    }


def run_file(gold_path: str | Path, store: str | Path, retriever: str, runs: int,
             out: str | Path, namespace: str | None = None) -> dict[str, Any]:
    """:func:`run_goldset` from a gold-set file, written to ``out`` as JSON."""
    res = run_goldset(load_goldset(gold_path), store, retriever, runs=runs, namespace=namespace)
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(res, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return res
