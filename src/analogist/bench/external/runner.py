"""Score a public analogy benchmark with analogist's embedded default and two surface baselines.

**analogist** (the embedded default; seed 000 §4, §7; the FAC stage of
:mod:`analogist.retrieve`): every distinct text is encoded once with the offline deterministic
encoder (:class:`~analogist.encode.deterministic.DeterministicEncoder`) and compiled to a
Description; a candidate (SME base) is mapped onto the query (SME target) with
:func:`analogist.sme.match`, and its score is the normalised structural score of
:class:`~analogist.retrieve.Retriever` — the best mapping's score over the query's self-match
score (:func:`analogist.judge.self_score`), capped at 1.

**embedder** (surface baseline): the cosine of the bundled offline text embedder
(:func:`analogist.index.embed.default_embedder`). **bm25** (lexical surface baseline):
:class:`~analogist.bench.external.bm25.BM25Scorer`, document frequencies from the benchmark's
own texts.

* choice: the candidate with the highest score is picked;
* binary: the pair is called an analogy when the score reaches the system's threshold —
  analogist's is ``RetrieveParams().min_score`` (chosen on the development casebook), the
  baselines' were chosen on the project's casebook by :func:`calibrate_threshold` (never on
  these sets); the threshold-free ROC AUC is reported beside;
* retrieval: candidates are ranked by score (MAP, MRR, hit@k, recall@10).

Ties at the top are broken by a generator seeded with ``seed``, the system and the item, so a
tie scores chance on average; the number of ties is reported. Texts the encoder refuses count as
structureless (score 0); texts over the encoder's limit are cut to
:attr:`ExternalParams.max_chars` characters; both are counted.

Paired comparison (seed 000 §15), analogist against each baseline: exact McNemar on per-item
correctness (retrieval: hit@1) and a seeded paired bootstrap CI of the difference in the
primary metric (accuracy; retrieval: average precision), from
:mod:`analogist.bench.parb.stats`. Nothing here is tuned on the evaluated set.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from analogist.bench.external.base import Benchmark, BinaryItem, ChoiceItem, RetrievalItem
from analogist.bench.external.bm25 import BM25Scorer
from analogist.bench.external.metrics import (
    _auc,
    _pick,
    _rank,
    _retrieval_metrics,
)
from analogist.bench.external.sets import BENCHMARKS, is_development, load_set
from analogist.bench.external.systems import (
    BASELINES,
    SURFACE_THRESHOLD,
    SYSTEMS,
    CachingEncoder,
    ExternalParams,
    StructureScorer,
    SurfaceScorer,
)
from analogist.bench.parb.stats import mcnemar_from_outcomes, paired_bootstrap_ci
from analogist.casebook import load_casebook
from analogist.encode.deterministic import DeterministicEncoder
from analogist.errors import AnalogistError
from analogist.index.embed import default_embedder


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



@dataclass
class ExternalResult:
    """Per-item outcomes of every system on one benchmark, with summaries and paired tests."""

    bench: Benchmark
    params: ExternalParams
    outcomes: list[dict[str, Any]]
    notes: list[str]
    timings: dict[str, float]
    thresholds: dict[str, float] = field(default_factory=dict)

    @property
    def retrieval(self) -> bool:
        return self.bench.task == "retrieval"

    @property
    def systems(self) -> list[str]:
        return [s for s in SYSTEMS if self.outcomes and s in self.outcomes[0]]

    def _agg(self, rows: list[dict[str, Any]], system: str) -> dict[str, float]:
        if self.retrieval:
            out = {"map": float(np.mean([r[system]["ap"] for r in rows])),
                   "mrr": float(np.mean([r[system]["rr"] for r in rows])),
                   "recall@10": float(np.mean([r[system]["recall@10"] for r in rows]))}
            for k in self.params.ks:
                out[f"hit@{k}"] = float(np.mean([r[system][f"hit@{k}"] for r in rows]))
            return out
        return {"accuracy": float(np.mean([r[system]["correct"] for r in rows]))}

    def conditions(self) -> list[str]:
        return sorted({r["condition"] for r in self.outcomes if r["condition"] is not None})

    def _chance(self, rows: list[dict[str, Any]]) -> float:
        return float(np.mean([r["chance"] for r in rows]))

    def summary(self) -> dict[str, Any]:
        """benchmark, variant, n, chance, development flag, and per system its metrics overall
        and per cell (``conditions``: n, chance and the metrics)."""
        out: dict[str, Any] = {"benchmark": self.bench.name, "variant": self.bench.variant,
                               "n": len(self.outcomes), "chance": self._chance(self.outcomes),
                               "development": is_development(self.bench), "systems": {}}
        for s in self.systems:
            block: dict[str, Any] = self._agg(self.outcomes, s)
            block["conditions"] = {}
            for c in self.conditions():
                rows = [r for r in self.outcomes if r["condition"] == c]
                block["conditions"][c] = {"n": len(rows), "chance": self._chance(rows),
                                          **self._agg(rows, s)}
            out["systems"][s] = block
        return out

    def _paired(self, rows: list[dict[str, Any]], base: str) -> dict[str, Any]:
        key = "hit@1" if self.retrieval else "correct"
        a = [bool(r["analogist"][key]) for r in rows]
        b = [bool(r[base][key]) for r in rows]
        out = mcnemar_from_outcomes(a, b)
        metric = "ap" if self.retrieval else "correct"
        ci = paired_bootstrap_ci([float(r["analogist"][metric]) for r in rows],
                                 [float(r[base][metric]) for r in rows],
                                 n_boot=self.params.n_boot, seed=self.params.seed)
        out["diff"] = ci["estimate"]
        out["diff_ci95"] = [ci["lo"], ci["hi"]]
        return out

    def paired(self) -> dict[str, Any]:
        """analogist (A) against each baseline (B): exact McNemar on correctness (retrieval:
        hit@1) and the paired bootstrap CI of the difference in accuracy (retrieval: AP),
        overall and per cell."""
        res: dict[str, Any] = {"mcnemar_on": "hit@1" if self.retrieval else "accuracy",
                               "ci_on": "average precision" if self.retrieval else "accuracy"}
        for base in [s for s in self.systems if s != "analogist"]:
            res[base] = {"all": self._paired(self.outcomes, base), "conditions": {
                c: self._paired([r for r in self.outcomes if r["condition"] == c], base)
                for c in self.conditions()}}
        return res

    def extras(self) -> dict[str, Any]:
        """Ties, the choice items on which analogist mapped no structure of any choice (every
        score 0), binary AUCs, and how often the analogue outscores each distractor type."""
        out: dict[str, Any] = {}
        if self.bench.task == "choice":
            out["ties_at_top"] = {s: int(sum(r[s].get("tie", False) for r in self.outcomes))
                                  for s in self.systems}
            # analogist maps no structure of any choice onto the query: every score is 0
            out["no_mapped_structure"] = int(sum(
                not any(x > 0 for x in r["analogist"]["scores"]) for r in self.outcomes))
        if self.bench.task == "binary":
            labels = [r["label"] for r in self.outcomes]
            out["thresholds"] = self.thresholds
            out["auc"] = {s: _auc([r[s]["score"] for r in self.outcomes], labels)
                          for s in self.systems}
            out["called_analogy"] = {s: int(sum(r[s]["pred"] for r in self.outcomes))
                                     for s in self.systems}
        if self.bench.task == "choice":
            items = {it.item_id: it for it in self.bench.items}
            prefs: dict[str, dict[str, dict[str, int]]] = {}
            for r in self.outcomes:
                it = items[r["item_id"]]
                if not isinstance(it, ChoiceItem) or it.choice_types is None:
                    continue
                for s in self.systems:
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
                "params": p, "source": self.bench.source, "counts": self.bench.counts,
                "skipped": self.bench.skipped,
                "notes": [*self.bench.notes, *self.notes], "timings_s": self.timings,
                "items": self.outcomes}


def _item_chance(it: ChoiceItem | BinaryItem | RetrievalItem) -> float:
    if isinstance(it, ChoiceItem):
        return 1.0 / len(it.choices)
    if isinstance(it, BinaryItem):
        return 0.5
    return len(it.gold & set(it.candidates)) / len(it.candidates)


@dataclass
class Systems:
    """The scorers of one run, built once so texts shared by several sets are encoded once."""

    scorers: dict[str, Any]
    thresholds: dict[str, float]

    @classmethod
    def build(cls, params: ExternalParams | None = None, *, encoder: Any = None,
              embedder: Any = None) -> Systems:
        params = params or ExternalParams()
        if embedder is None:
            embedder = default_embedder()
        if encoder is None:
            encoder = CachingEncoder(DeterministicEncoder(embedder=embedder))
        bm25_t = params.bm25_threshold
        if bm25_t is None:
            bm25_t = calibrate_threshold(BM25Scorer())["threshold"]
        return cls({"analogist": StructureScorer(encoder, params),
                    "embedder": SurfaceScorer(embedder), "bm25": BM25Scorer()},
                   {"analogist": params.min_score, "embedder": params.surface_threshold,
                    "bm25": bm25_t})


def run_benchmark(bench: Benchmark, *, params: ExternalParams | None = None,
                  systems: Systems | None = None, encoder: Any = None, embedder: Any = None,
                  progress: Callable[[int], None] | None = None) -> ExternalResult:
    """Score every item of ``bench`` with every system (see the module docstring).

    ``progress`` is called with the number of items just scored (for a progress bar).
    """
    params = params or ExternalParams()
    if not bench.scorable or not bench.items:
        raise AnalogistError(f"{bench.label} is counted, not scored: "
                             + ("; ".join(bench.notes) or "it holds no items"),
                             source=bench.source)
    systems = systems or Systems.build(params, encoder=encoder, embedder=embedder)
    texts = texts_of(bench)
    timings: dict[str, float] = {}
    for name, sc in systems.scorers.items():
        t0 = time.process_time()
        sc.prepare(texts)
        timings[f"{name}_prepare_cpu"] = time.process_time() - t0
    t0 = time.process_time()
    outcomes = []
    for it in bench.items:
        row: dict[str, Any] = {"item_id": it.item_id, "condition": it.condition,
                               "chance": _item_chance(it)}
        for name, sys_ in systems.scorers.items():
            if isinstance(it, ChoiceItem):
                scores = [sys_.score(c, it.query) for c in it.choices]
                pick, tie = _pick(scores, f"{name}:{it.item_id}", params.seed)
                row[name] = {"scores": scores, "pick": pick, "tie": tie,
                             "correct": pick == it.answer}
            elif isinstance(it, BinaryItem):
                s = sys_.score(it.target, it.source)
                pred = s >= systems.thresholds[name]
                row[name] = {"score": s, "pred": pred, "correct": pred == it.label}
            else:
                scores = [sys_.score(bench.pool[c], it.query) for c in it.candidates]
                ranked = _rank(it.candidates, scores, f"{name}:{it.item_id}", params.seed)
                row[name] = _retrieval_metrics(ranked, it.gold, params.ks)
        if isinstance(it, ChoiceItem):
            row["answer"] = it.answer
        elif isinstance(it, BinaryItem):
            row["label"] = it.label
        outcomes.append(row)
        if progress is not None:
            progress(1)
    timings["score_cpu"] = time.process_time() - t0
    structure = systems.scorers["analogist"]
    notes = [f"{len(texts)} distinct texts"]
    if getattr(structure, "refused", 0):
        notes.append(f"{structure.refused} texts refused by the encoder so far in this run "
                     f"(scored as structureless)")
    if getattr(structure, "cut", 0):
        notes.append(f"{structure.cut} texts cut to {params.max_chars} characters before "
                     f"encoding so far in this run")
    return ExternalResult(bench, params, outcomes, notes, timings, dict(systems.thresholds))


def render_summary(summary: dict[str, Any]) -> str:
    """A plain-text table of :meth:`ExternalResult.summary`."""
    systems = list(summary["systems"])
    first = summary["systems"][systems[0]]
    metrics = [k for k in first if k != "conditions"]
    label = summary["benchmark"] + (f"/{summary['variant']}" if summary["variant"] else "")
    dev = " (development data)" if summary["development"] else ""
    lines = [f"{label}{dev}: n={summary['n']}  chance={summary['chance']:.3f}",
             f"{'cell':30s} {'n':>5s} {'chance':>6s}  " + "  ".join(
                 f"{s + ' ' + m:>18s}" for m in metrics for s in systems)]
    lines.append(f"{'all':30s} {summary['n']:5d} {summary['chance']:6.3f}  " + "  ".join(
        f"{summary['systems'][s][m]:18.3f}" for m in metrics for s in systems))
    for c, cell in first["conditions"].items():
        lines.append(f"{c[:30]:30s} {cell['n']:5d} {cell['chance']:6.3f}  " + "  ".join(
            f"{summary['systems'][s]['conditions'][c][m]:18.3f}" for m in metrics
            for s in systems))
    return "\n".join(lines) + "\n"


def calibrate_threshold(scorer: Any) -> dict[str, Any]:
    """Choose a baseline's binary threshold on the bundled casebook (development data).

    Pairs of L0 narratives: positives are two real entries of the same mechanism; negatives are
    a decoy with the entry whose surface it copies, and real entries of different mechanisms.
    The threshold is the midpoint between adjacent sorted scores that maximises balanced
    accuracy (the lowest such midpoint on ties).
    """
    cases = [c for c in load_casebook() if c.signature.levels.L0]
    by_id = {c.id: c for c in cases}
    texts = [c.signature.levels.L0 for c in cases]
    sc = scorer
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



def calibrate_surface_threshold(embedder: Any) -> dict[str, Any]:
    """:func:`calibrate_threshold` for the embedder baseline (cosine of ``embedder``)."""
    return calibrate_threshold(SurfaceScorer(embedder))


def check_summary(bench: Benchmark) -> dict[str, Any]:
    """What ``--check`` reports: the counts and the skipped rows, without scoring."""
    return {"benchmark": bench.name, "variant": bench.variant, "source": bench.source,
            "counts": bench.counts, "skipped": bench.skipped, "scorable": bench.scorable,
            "development": is_development(bench)}


def render_check(c: dict[str, Any]) -> str:
    label = c["benchmark"] + (f"/{c['variant']}" if c["variant"] else "")
    counts = ", ".join(f"{v} {k}" for k, v in c["counts"].items())
    skipped = "; ".join(f"{v} {k}" for k, v in sorted(c["skipped"].items())) or "none"
    extra = "" if c["scorable"] else " (counted, not scored)"
    return f"{label}: {counts}{extra}; skipped: {skipped} [{c['source']}]\n"


def external_command(name: str, path: str | Path, *, variant: str | None = None,
                     limit: int | None = None, seed: int = 0, check: bool = False,
                     as_json: bool = False, details: str | Path | None = None,
                     encoder: Any = None, embedder: Any = None,
                     progress: Callable[[int], None] | None = None) -> str:
    """What ``analogist bench external NAME PATH`` prints (the CLI is a thin wrapper).

    ``check`` → load and count only (no model is loaded). ``as_json`` → the summary JSON only;
    else a table with one paired McNemar line per baseline. ``details`` also writes
    :meth:`ExternalResult.details` as JSON to that file. Bad input raises
    :class:`~analogist.errors.AnalogistError` before any model is loaded. ``progress`` is
    called with the number of items just scored (the CLI's progress bar).
    """
    if details is not None:
        parent = Path(details).parent
        if not parent.is_dir():
            raise AnalogistError("the folder for --details does not exist", source=str(parent))
    params = ExternalParams(seed=seed, limit=limit)
    bench = load_set(name, path, variant=variant, seed=seed, limit=limit)
    if check:
        c = check_summary(bench)
        return json.dumps(c, indent=2) + "\n" if as_json else render_check(c)
    res = run_benchmark(bench, params=params, encoder=encoder, embedder=embedder,
                        progress=progress)
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
    lines = [render_summary(summary).rstrip("\n")]
    for base in BASELINES:
        m = paired[base]["all"]
        lines.append(f"paired McNemar on {paired['mcnemar_on']} (analogist vs {base}): "
                     f"analogist only {m['a_only']}, {base} only {m['b_only']}, "
                     f"p = {m['p']:.3g}")
    return "\n".join(lines) + "\n"


__all__ = ["BASELINES", "BENCHMARKS", "SURFACE_THRESHOLD", "SYSTEMS", "ExternalParams", "ExternalResult", "Systems",
           "calibrate_threshold", "check_summary", "external_command", "render_summary",
           "run_benchmark", "texts_of"]
