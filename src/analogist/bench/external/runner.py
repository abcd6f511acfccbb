"""Run a public analogy benchmark through analogist's pipeline and the surface baseline.

**analogist's pipeline** (seed 000 §4, §7; the FAC stage of :mod:`analogist.retrieve`): every
distinct text is encoded once with the offline deterministic encoder
(:class:`~analogist.encode.deterministic.DeterministicEncoder`) and compiled to a Description; a
candidate (SME base) is mapped onto the query (SME target) with :func:`analogist.sme.match`, and
its score is the normalised structural score of :class:`~analogist.retrieve.Retriever` — the
best mapping's score over the query's self-match score (:func:`analogist.judge.self_score`),
capped at 1.

* choice: the candidate with the highest score is picked;
* binary: the pair (source → target) is called an analogy when the score reaches
  :attr:`ExternalParams.min_score`, which is ``RetrieveParams().min_score`` — the threshold
  chosen on the project's development casebook, never on these sets;
* retrieval: candidates are ranked by score.

**The surface baseline**: the cosine of the offline default text embedder
(:func:`analogist.index.embed.default_embedder`) between the two texts, used the same way; its
binary threshold :attr:`ExternalParams.surface_threshold` was chosen once on the project's own
casebook (:func:`calibrate_surface_threshold`: same-mechanism L0 narratives vs decoys and
other-mechanism pairs, the midpoint maximising balanced accuracy) and is fixed here.

Ties at the top (a frequent case when the encoder finds no shared structure) are broken by a
generator seeded with ``seed``, the system and the item, so a tie scores chance on average and
never favours a position; the number of ties is reported. Texts the encoder refuses count as
structureless (score 0) and are counted in the notes; texts over the encoder's limit are cut to
:attr:`ExternalParams.max_chars` characters, also counted.

Paired comparison (seed 000 §15): exact McNemar on per-item correctness (retrieval: hit@1) and a
seeded paired bootstrap CI of the accuracy difference, both from
:mod:`analogist.bench.parb.stats`. Nothing here is tuned on the evaluated set.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from analogist.bench.external.analobench import load_analobench_t1, load_analobench_t2
from analogist.bench.external.arn import load_arn
from analogist.bench.external.base import Benchmark, BinaryItem, ChoiceItem, RetrievalItem
from analogist.bench.external.historical import load_historical
from analogist.bench.external.parallelparc import (
    load_parallelparc_binary,
    load_parallelparc_mc,
)
from analogist.bench.external.rattermann import load_rattermann
from analogist.bench.external.sample import item_rng
from analogist.bench.external.storyanalogy import load_storyanalogy
from analogist.bench.parb.stats import mcnemar_from_outcomes, paired_bootstrap_ci
from analogist.encode.base import MAX_EPISODE_CHARS
from analogist.errors import AnalogistError
from analogist.retrieve import RetrieveParams

LOADERS: dict[str, Callable[..., Benchmark]] = {
    "arn": load_arn,
    "analobench-t1": load_analobench_t1,
    "analobench-t2": load_analobench_t2,
    "storyanalogy": load_storyanalogy,
    "parallelparc-mc": load_parallelparc_mc,
    "parallelparc-binary": load_parallelparc_binary,
    "rattermann": load_rattermann,
    "historical": load_historical,
}
BENCHMARKS = tuple(LOADERS)

#: The surface baseline's binary threshold, from :func:`calibrate_surface_threshold` on the
#: bundled casebook with the default (USE) embedder (balanced accuracy 0.596 on 90 same-mechanism
#: and 1695 other pairs; recomputed in benchmarks/results/external/calibration.json).
SURFACE_THRESHOLD = 0.157


@dataclass(frozen=True)
class ExternalParams:
    """Settings of an external-benchmark run.

    Sources: the normalised structural score and ``min_score`` are those of MAC/FAC's FAC stage
    (Forbus, Gentner & Law 1995) as implemented in :mod:`analogist.retrieve`; the paired test is
    McNemar's (1947) exact form; MAP/MRR/hit@k follow the AnaloBench T2 evaluation (Ye et al.
    2024). Departures: a seeded tie-break (the references do not say how ties are resolved) and
    the baseline threshold calibrated on the casebook (ours).

    Attributes:
        seed: subsampling, task construction and tie-breaking seed.
        limit: evaluate a seeded subsample of this many items (rows for ParallelPARC); None = all.
        min_score: analogist's binary threshold on the normalised structural score
            (``RetrieveParams().min_score``, chosen on the development casebook).
        surface_threshold: the baseline's binary threshold on the cosine (casebook-calibrated).
        ks: the k of hit@k for retrieval sets.
        max_chars: texts longer than this are cut before encoding (the encoder's limit).
        n_boot: bootstrap resamples for the paired CI.
    """

    seed: int = 0
    limit: int | None = None
    min_score: float = field(default_factory=lambda: RetrieveParams().min_score)
    surface_threshold: float = SURFACE_THRESHOLD
    ks: tuple[int, ...] = (1, 5, 10)
    max_chars: int = MAX_EPISODE_CHARS
    n_boot: int = 2000

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise AnalogistError("seed must be an integer", field="seed")
        if self.limit is not None and (isinstance(self.limit, bool)
                                       or not isinstance(self.limit, int) or self.limit < 1):
            raise AnalogistError("limit must be a positive integer", field="limit")
        for name in ("min_score", "surface_threshold"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                raise AnalogistError(f"{name} must be a finite number", field=name)
        if not self.ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1
                              for k in self.ks):
            raise AnalogistError("ks must be positive integers", field="ks")
        if self.max_chars < 1 or self.n_boot < 1:
            raise AnalogistError("max_chars and n_boot must be positive", field="max_chars")


def load_benchmark(name: str, path: str | Path, *, seed: int = 0,
                   limit: int | None = None) -> Benchmark:
    """Load benchmark ``name`` (one of :data:`BENCHMARKS`) from ``path`` (a file or folder)."""
    if name not in LOADERS:
        raise AnalogistError(f"unknown benchmark {name!r}; expected one of "
                             f"{', '.join(BENCHMARKS)}")
    return LOADERS[name](Path(path), seed=seed, limit=limit)


def texts_of(bench: Benchmark) -> list[str]:
    """Every distinct text the benchmark needs, in first-use order."""
    seen: dict[str, None] = {}
    for it in bench.items:
        if isinstance(it, ChoiceItem):
            seen.setdefault(it.query)
            for c in it.choices:
                seen.setdefault(c)
        elif isinstance(it, BinaryItem):
            seen.setdefault(it.source)
            seen.setdefault(it.target)
        else:
            seen.setdefault(it.query)
            for c in it.candidates:
                seen.setdefault(bench.pool[c])
    return list(seen)


# -- the two systems ------------------------------------------------------------------------------
class CachingEncoder:
    """Wraps an encoder so a text shared by several benchmarks is encoded once per process."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.vocab = getattr(encoder, "vocab", None)
        self._cache: dict[str, Any] = {}

    def encode(self, text: str) -> Any:
        if text not in self._cache:
            try:
                self._cache[text] = self.encoder.encode(text)
            except AnalogistError as e:
                self._cache[text] = e
        hit = self._cache[text]
        if isinstance(hit, AnalogistError):
            raise hit
        return hit


class StructureScorer:
    """analogist's pipeline: encode once per text, SME-map base onto target, normalise."""

    def __init__(self, encoder: Any, params: ExternalParams) -> None:
        from analogist.judge import JudgeParams

        self.encoder = encoder
        self.params = params
        self.sme = JudgeParams().sme
        self._desc: dict[str, Any] = {}
        self._total: dict[str, float] = {}
        self.refused = 0
        self.cut = 0

    def prepare(self, texts: Sequence[str]) -> None:
        from analogist.judge import self_score
        from analogist.signature import compile_signature

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for t in texts:
                if t in self._desc:
                    continue
                src = t
                if len(src) > self.params.max_chars:
                    src = src[: self.params.max_chars]
                    self.cut += 1
                try:
                    sig = self.encoder.encode(src).signature
                    desc = compile_signature(sig, getattr(self.encoder, "vocab", None))
                except AnalogistError:
                    self.refused += 1
                    desc = None
                self._desc[t] = desc
                self._total[t] = self_score(desc, self.sme) if desc is not None else 0.0

    def score(self, base: str, target: str) -> float:
        from analogist.sme import match

        bd, td, total = self._desc.get(base), self._desc.get(target), self._total.get(target, 0.0)
        if bd is None or td is None or total <= 0:
            return 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            best = match(bd, td, self.sme).best
        return min(1.0, best.score / total) if best is not None else 0.0


class SurfaceScorer:
    """The surface baseline: cosine of the default text embedder."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self._vec: dict[str, np.ndarray] = {}

    def prepare(self, texts: Sequence[str], batch: int = 64) -> None:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vec]
        for i in range(0, len(todo), batch):
            chunk = todo[i: i + batch]
            v = np.asarray(self.embedder.embed(chunk), dtype=np.float64)
            v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            for t, row in zip(chunk, v, strict=True):
                self._vec[t] = row

    def score(self, base: str, target: str) -> float:
        return float(self._vec[base] @ self._vec[target])


# -- metrics ---------------------------------------------------------------------------------------
def _pick(scores: list[float], rng_key: str, seed: int) -> tuple[int, bool]:
    top = max(scores)
    best = [i for i, s in enumerate(scores) if s >= top - 1e-12]
    if len(best) == 1:
        return best[0], False
    return item_rng(seed, rng_key).choice(best), True


def _rank(cands: Sequence[str], scores: list[float], rng_key: str, seed: int) -> list[str]:
    order = list(range(len(cands)))
    item_rng(seed, rng_key).shuffle(order)            # random order within ties
    order.sort(key=lambda i: -scores[i])
    return [cands[i] for i in order]


def _retrieval_metrics(ranked: list[str], gold: frozenset[str], ks: Sequence[int]) -> dict:
    hits, ap, rr = 0, 0.0, 0.0
    for pos, c in enumerate(ranked, start=1):
        if c in gold:
            hits += 1
            ap += hits / pos
            if rr == 0.0:
                rr = 1.0 / pos
    out = {"ap": ap / len(gold), "rr": rr}
    for k in ks:
        out[f"hit@{k}"] = float(any(c in gold for c in ranked[:k]))
    return out


def _auc(scores: list[float], labels: list[bool]) -> float | None:
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


@dataclass
class ExternalResult:
    """Per-item outcomes of both systems on one benchmark, with summaries and paired tests."""

    bench: Benchmark
    params: ExternalParams
    outcomes: list[dict[str, Any]]
    notes: list[str]
    timings: dict[str, float]

    @property
    def retrieval(self) -> bool:
        return self.bench.task == "retrieval"

    def _metric_names(self) -> list[str]:
        return (["map", "mrr", *(f"hit@{k}" for k in self.params.ks)] if self.retrieval
                else ["accuracy"])

    def _agg(self, rows: list[dict[str, Any]], system: str) -> dict[str, float]:
        if self.retrieval:
            out = {"map": float(np.mean([r[system]["ap"] for r in rows])),
                   "mrr": float(np.mean([r[system]["rr"] for r in rows]))}
            for k in self.params.ks:
                out[f"hit@{k}"] = float(np.mean([r[system][f"hit@{k}"] for r in rows]))
            return out
        return {"accuracy": float(np.mean([r[system]["correct"] for r in rows]))}

    def _system(self, system: str) -> dict[str, Any]:
        out: dict[str, Any] = self._agg(self.outcomes, system)
        conds: dict[str, Any] = {}
        for c in sorted({r["condition"] for r in self.outcomes if r["condition"] is not None}):
            rows = [r for r in self.outcomes if r["condition"] == c]
            conds[c] = {"n": len(rows), **self._agg(rows, system)}
        out["conditions"] = conds
        return out

    def summary(self) -> dict[str, Any]:
        """The JSON of issue 8: benchmark, n, chance, and per-system metrics with conditions."""
        return {"benchmark": self.bench.name, "n": len(self.outcomes),
                "chance": self.bench.chance,
                "analogist": self._system("analogist"), "baseline": self._system("baseline")}

    def _correct(self, system: str, rows: list[dict[str, Any]]) -> list[bool]:
        key = "hit@1" if self.retrieval else "correct"
        return [bool(r[system][key]) for r in rows]

    def paired(self) -> dict[str, Any]:
        """Exact McNemar (analogist = A, baseline = B) and a paired bootstrap CI of the
        difference, overall and per condition (retrieval: on hit@1)."""
        def one(rows: list[dict[str, Any]]) -> dict[str, Any]:
            a, b = self._correct("analogist", rows), self._correct("baseline", rows)
            out = mcnemar_from_outcomes(a, b)
            ci = paired_bootstrap_ci([float(x) for x in a], [float(x) for x in b],
                                     n_boot=self.params.n_boot, seed=self.params.seed)
            out["diff"] = ci["estimate"]
            out["diff_ci95"] = [ci["lo"], ci["hi"]]
            return out

        res = {"on": "hit@1" if self.retrieval else "accuracy", "all": one(self.outcomes),
               "conditions": {}}
        for c in sorted({r["condition"] for r in self.outcomes if r["condition"] is not None}):
            res["conditions"][c] = one([r for r in self.outcomes if r["condition"] == c])
        return res

    def extras(self) -> dict[str, Any]:
        """Ties, binary AUCs, and how often the analogue outscores each distractor type."""
        out: dict[str, Any] = {}
        if self.bench.task == "choice":
            out["ties_at_top"] = {s: int(sum(r[s].get("tie", False) for r in self.outcomes))
                                  for s in ("analogist", "baseline")}
        if self.bench.task == "binary":
            labels = [r["label"] for r in self.outcomes]
            out["auc"] = {s: _auc([r[s]["score"] for r in self.outcomes], labels)
                          for s in ("analogist", "baseline")}
            conds = sorted({r["condition"] for r in self.outcomes if r["condition"]})
            out["auc_conditions"] = {
                c: {s: _auc([r[s]["score"] for r in self.outcomes if r["condition"] == c],
                            [r["label"] for r in self.outcomes if r["condition"] == c])
                    for s in ("analogist", "baseline")} for c in conds}
        if self.bench.task == "choice":
            items = {it.item_id: it for it in self.bench.items}
            prefs: dict[str, dict[str, dict[str, int]]] = {}
            for r in self.outcomes:
                it = items[r["item_id"]]
                if not isinstance(it, ChoiceItem) or it.choice_types is None:
                    continue
                for s in ("analogist", "baseline"):
                    sc = r[s]["scores"]
                    for j, t in enumerate(it.choice_types):
                        if j == it.answer:
                            continue
                        d = prefs.setdefault(s, {}).setdefault(
                            t, {"n": 0, "wins": 0, "ties": 0, "losses": 0})
                        d["n"] += 1
                        a, b = sc[it.answer], sc[j]
                        d["wins" if a > b else "ties" if a == b else "losses"] += 1
            if prefs:
                out["analogue_vs_distractor_type"] = prefs
        return out

    def details(self) -> dict[str, Any]:
        p = asdict(self.params)
        p["ks"] = list(self.params.ks)
        return {"summary": self.summary(), "paired": self.paired(), "extras": self.extras(),
                "params": p, "source": self.bench.source,
                "notes": [*self.bench.notes, *self.notes], "timings_s": self.timings,
                "items": self.outcomes}


def run_benchmark(bench: Benchmark, *, params: ExternalParams | None = None,
                  encoder: Any = None, embedder: Any = None) -> ExternalResult:
    """Score every item of ``bench`` with both systems (see the module docstring)."""
    params = params or ExternalParams()
    if embedder is None:
        from analogist.index.embed import default_embedder

        embedder = default_embedder()
    if encoder is None:
        from analogist.encode.deterministic import DeterministicEncoder

        encoder = DeterministicEncoder(embedder=embedder)
    texts = texts_of(bench)
    t0 = time.process_time()
    structure = StructureScorer(encoder, params)
    structure.prepare(texts)
    t1 = time.process_time()
    surface = SurfaceScorer(embedder)
    surface.prepare(texts)
    t2 = time.process_time()
    systems: dict[str, StructureScorer | SurfaceScorer] = {"analogist": structure,
                                                           "baseline": surface}
    thresholds = {"analogist": params.min_score, "baseline": params.surface_threshold}
    outcomes = []
    for it in bench.items:
        row: dict[str, Any] = {"item_id": it.item_id, "condition": it.condition}
        for name, sys_ in systems.items():
            if isinstance(it, ChoiceItem):
                scores = [sys_.score(c, it.query) for c in it.choices]
                pick, tie = _pick(scores, f"{name}:{it.item_id}", params.seed)
                row[name] = {"scores": scores, "pick": pick, "tie": tie,
                             "correct": pick == it.answer}
            elif isinstance(it, BinaryItem):
                s = sys_.score(it.source, it.target)
                pred = s >= thresholds[name]
                row[name] = {"score": s, "pred": pred, "correct": pred == it.label}
            else:
                assert isinstance(it, RetrievalItem)
                scores = [sys_.score(bench.pool[c], it.query) for c in it.candidates]
                ranked = _rank(it.candidates, scores, f"{name}:{it.item_id}", params.seed)
                row[name] = _retrieval_metrics(ranked, it.gold, params.ks)
        if isinstance(it, ChoiceItem):
            row["answer"] = it.answer
        elif isinstance(it, BinaryItem):
            row["label"] = it.label
        outcomes.append(row)
    t3 = time.process_time()
    notes = [f"{len(texts)} distinct texts encoded"]
    if structure.refused:
        notes.append(f"{structure.refused} texts refused by the encoder (scored as "
                     f"structureless)")
    if structure.cut:
        notes.append(f"{structure.cut} texts cut to {params.max_chars} characters before "
                     f"encoding")
    timings = {"encode_cpu": t1 - t0, "embed_cpu": t2 - t1, "score_cpu": t3 - t2}
    return ExternalResult(bench, params, outcomes, notes, timings)


def run_external(name: str, path: str | Path, *, params: ExternalParams | None = None,
                 encoder: Any = None, embedder: Any = None) -> ExternalResult:
    """Load benchmark ``name`` from ``path`` and run both systems on it."""
    params = params or ExternalParams()
    bench = load_benchmark(name, path, seed=params.seed, limit=params.limit)
    return run_benchmark(bench, params=params, encoder=encoder, embedder=embedder)


def render_summary(summary: dict[str, Any]) -> str:
    """A plain-text table of :meth:`ExternalResult.summary`."""
    a, b = summary["analogist"], summary["baseline"]
    metrics = [k for k in a if k != "conditions"]
    lines = [f"{summary['benchmark']}: n={summary['n']}  chance={summary['chance']:.3f}",
             f"{'condition':28s} {'n':>5s}  " + "  ".join(
                 f"{'analogist ' + m:>16s} {'baseline ' + m:>16s}" for m in metrics)]
    lines.append(f"{'all':28s} {summary['n']:5d}  " + "  ".join(
        f"{a[m]:16.3f} {b[m]:16.3f}" for m in metrics))
    for c, ca in a["conditions"].items():
        cb = b["conditions"][c]
        lines.append(f"{c:28s} {ca['n']:5d}  " + "  ".join(
            f"{ca[m]:16.3f} {cb[m]:16.3f}" for m in metrics))
    return "\n".join(lines) + "\n"


def calibrate_surface_threshold(embedder: Any) -> dict[str, Any]:
    """Choose the baseline's binary cosine threshold on the bundled casebook (development data).

    Pairs of L0 narratives: positives are two real entries of the same mechanism; negatives are
    a decoy with the entry whose surface it copies, and real entries of different mechanisms.
    The threshold is the midpoint between adjacent sorted scores that maximises balanced
    accuracy (the lowest such midpoint on ties).
    """
    from analogist.casebook import load_casebook

    cases = [c for c in load_casebook() if c.signature.levels.L0]
    by_id = {c.id: c for c in cases}
    texts = [c.signature.levels.L0 for c in cases]
    sc = SurfaceScorer(embedder)
    sc.prepare(texts)
    pos, neg = [], []
    real = [c for c in cases if c.decoy_of is None]
    for i, x in enumerate(real):
        for y in real[i + 1:]:
            s = sc.score(x.signature.levels.L0, y.signature.levels.L0)
            (pos if x.mechanism == y.mechanism else neg).append(s)
    for c in cases:
        if c.decoy_of is not None and c.decoy_of in by_id:
            neg.append(sc.score(c.signature.levels.L0, by_id[c.decoy_of].signature.levels.L0))
    allv = sorted(set(pos + neg))
    best = (-1.0, 0.0)
    for lo, hi in zip(allv, allv[1:], strict=False):
        t = (lo + hi) / 2
        bal = (np.mean([p >= t for p in pos]) + np.mean([q < t for q in neg])) / 2
        if bal > best[0] + 1e-12:
            best = (float(bal), float(t))
    return {"threshold": round(best[1], 4), "balanced_accuracy": best[0],
            "n_pos": len(pos), "n_neg": len(neg)}


def external_command(name: str, path: str | Path, *, limit: int | None = None, seed: int = 0,
                     as_json: bool = False, details: str | Path | None = None,
                     encoder: Any = None, embedder: Any = None) -> str:
    """What ``analogist bench external NAME PATH`` prints (the CLI is a thin wrapper).

    ``as_json`` → the issue's JSON only; else a table with the paired McNemar line. ``details``
    also writes :meth:`ExternalResult.details` as JSON to that file. Bad input raises
    :class:`~analogist.errors.AnalogistError` before any model is loaded.
    """
    import json

    if details is not None:
        parent = Path(details).parent
        if not parent.is_dir():
            raise AnalogistError("the folder for --details does not exist", source=str(parent))
    params = ExternalParams(seed=seed, limit=limit)
    res = run_external(name, path, params=params, encoder=encoder, embedder=embedder)
    if details is not None:
        try:
            Path(details).write_text(json.dumps(res.details(), indent=1) + "\n")
        except OSError as e:
            raise AnalogistError(f"cannot write details: {e.strerror}",
                                 source=str(details)) from None
    summary = res.summary()
    if as_json:
        return json.dumps(summary, indent=2) + "\n"
    paired = res.paired()
    m = paired["all"]
    return (render_summary(summary)
            + f"paired McNemar on {paired['on']} (analogist vs baseline): analogist only "
              f"{m['a_only']}, baseline only {m['b_only']}, p = {m['p']:.3g}\n")
