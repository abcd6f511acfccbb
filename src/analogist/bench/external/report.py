"""``analogist bench external all FOLDER``: every public benchmark found in FOLDER (one
subfolder per set, see :mod:`analogist.bench.external.sets`), scored in one run, written as one
report — ``report.md``, ``report.json`` and ``report.png``.

Per set and cell the report gives analogist's embedded default, the two surface baselines of the
same run (embedder cosine, BM25), chance, the published human and language-model figures with
their source (:mod:`analogist.bench.external.published`; "not reported" otherwise), and, for
each baseline, the exact McNemar counts and p and the paired bootstrap CI of the difference. It
says which sets are development data. A set whose files fail to load is reported with its
one-line error and the others still run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from analogist.bench.external.published import anchors, render
from analogist.bench.external.runner import (
    BASELINES,
    SYSTEMS,
    ExternalParams,
    Systems,
    check_summary,
    run_benchmark,
)
from analogist.bench.external.sets import SETS, load_set, set_folders, variants_present
from analogist.errors import AnalogistError


def _primary(task: str) -> str:
    return "map" if task == "retrieval" else "accuracy"


def collect(root: Path, *, seed: int = 0, limit: int | None = None
            ) -> tuple[list[Any], list[str]]:
    """Load every set and variant under ``root``: (benchmarks, one-line load errors)."""
    benches, errors = [], []
    for name, folder in set_folders(Path(root)).items():
        for v in variants_present(name, folder) or [None]:
            try:
                benches.append(load_set(name, folder, variant=v, seed=seed, limit=limit))
            except AnalogistError as e:
                errors.append(f"{name}{'/' + v if v else ''}: {e}")
    return benches, errors


def run_all(root: str | Path, out: str | Path, *, seed: int = 0, limit: int | None = None,
            check: bool = False, encoder: Any = None, embedder: Any = None,
            show_progress: bool = True) -> dict[str, Any]:
    """Run (or with ``check`` only count) every set under ``root``; write the report to
    ``out`` and return its JSON."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise AnalogistError("the report folder is a file", source=str(out))
    benches, errors = collect(Path(root), seed=seed, limit=limit)
    report: dict[str, Any] = {"root": str(root), "seed": seed, "limit": limit,
                              "check": check, "errors": errors,
                              "sets": [check_summary(b) for b in benches], "results": []}
    if not check:
        params = ExternalParams(seed=seed, limit=limit)
        t0 = time.process_time()
        systems = Systems.build(params, encoder=encoder, embedder=embedder)
        report["thresholds"] = systems.thresholds
        scored = [b for b in benches if b.scorable and b.items]
        with _progress(show_progress, sum(len(b.items) for b in scored)) as advance:
            for b in scored:
                res = run_benchmark(b, params=params, systems=systems, progress=advance)
                det = res.details()
                det.pop("items")
                report["results"].append(det)
        report["process_cpu_s"] = round(time.process_time() - t0, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "report.md").write_text(render_markdown(report))
    if report["results"]:
        plot(report, out / "report.png")
    return report


class _progress:
    """A rich progress bar over items (silent when ``show`` is False)."""

    def __init__(self, show: bool, total: int) -> None:
        self.show, self.total, self.bar, self.task = show, total, None, None

    def __enter__(self) -> Any:
        if not self.show:
            return lambda n: None

        # on stderr, never redirecting stdout (the report, JSON included, stays clean); silent
        # when stderr is not a terminal
        console = Console(stderr=True)
        self.bar = Progress(transient=True, console=console, redirect_stdout=False,
                            redirect_stderr=False, disable=not console.is_terminal)
        self.bar.start()
        self.task = self.bar.add_task("scoring items", total=self.total)
        return lambda n: self.bar.advance(self.task, n)  # type: ignore[union-attr]

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}"


def _pair(m: dict[str, Any]) -> str:
    lo, hi = m["diff_ci95"]
    return (f"{m['a_only']}/{m['b_only']}, p={m['p']:.2g}, "
            f"{100 * m['diff']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]")


def _rows(det: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(cell, per-system metrics incl. n and chance, per-baseline paired stats)."""
    s, pr = det["summary"], det["paired"]
    sysm = s["systems"]
    out = [("all", {"n": s["n"], "chance": s["chance"],
                    **{k: v for k, v in sysm.items()}},
            {b: pr[b]["all"] for b in BASELINES if b in pr})]
    for c, cell in sysm["analogist"]["conditions"].items():
        out.append((c, {"n": cell["n"], "chance": cell["chance"],
                        **{k: v["conditions"][c] for k, v in sysm.items()}},
                    {b: pr[b]["conditions"][c] for b in BASELINES if b in pr}))
    return out


def render_markdown(report: dict[str, Any]) -> str:
    """The Markdown of the report (counts only when it is a ``--check`` report)."""
    lines = ["# Public analogy benchmarks", ""]
    dev = [c for c in report["sets"] if c["development"]]
    lines += ["Development data (the project's `dev` folder; may have been used while "
              "developing analogist): " + (", ".join(
                  c["benchmark"] + (f"/{c['variant']}" if c["variant"] else "")
                  for c in dev) or "none in this run") + ". Every other set is evaluation "
              "data: nothing was fitted or tuned on it.", ""]
    lines += ["## Files", "", "| set | counts | skipped (real-data quirks) | scored | file |",
              "|---|---|---|---|---|"]
    for c in report["sets"]:
        counts = ", ".join(f"{v} {k}" for k, v in c["counts"].items())
        sk = "; ".join(f"{v} {k}" for k, v in sorted(c["skipped"].items())) or "none"
        label = c["benchmark"] + (f"/{c['variant']}" if c["variant"] else "")
        lines.append(f"| {label} | {counts} | {sk} | {'yes' if c['scorable'] else 'no'} | "
                     f"`{Path(c['source']).name}` |")
    for e in report["errors"]:
        lines.append(f"\nNot loaded — {e}")
    lines.append("")
    if report["check"]:
        return "\n".join(lines) + "\n"
    th = report.get("thresholds", {})
    lines += [
        "## Scores", "",
        "Systems: **analogist** = the embedded default (offline deterministic encoder → "
        "Signature → SME; score = best mapping of candidate onto query over the query's "
        "self-score); **embedder** = cosine of the bundled offline embedder; **bm25** = Okapi "
        "BM25 (k1 1.2, b 0.75) over the set's own texts. Choice: highest score wins (seeded "
        "tie-break). Binary thresholds: " + ", ".join(f"{k} {v:.3g}" for k, v in th.items())
        + " (analogist's from the retrieval defaults, the baselines' calibrated on the "
        "project's casebook). Values are % (accuracy; retrieval: MAP). Paired columns: "
        "analogist-only/baseline-only items (McNemar on accuracy; retrieval: hit@1), exact p, "
        "and the difference analogist − baseline with its 95% paired bootstrap CI (retrieval: "
        "in AP). Published figures come from the papers' own protocols (prompted models, "
        "human raters), not from this run.",
        ""]
    for det in report["results"]:
        s = det["summary"]
        label = s["benchmark"] + (f"/{s['variant']}" if s["variant"] else "")
        title = SETS[s["benchmark"]].title
        lines += [f"### {label} — {title}" + (" (development data)" if s["development"]
                                               else ""), ""]
        task = "retrieval" if "map" in s["systems"]["analogist"] else "choice"
        m = _primary(task)
        extra = " | analogist R@10 | embedder R@10 | bm25 R@10" if task == "retrieval" else ""
        lines += ["| cell | n | chance | analogist | embedder | bm25" + extra
                  + " | humans (published) | LLMs (published) | vs embedder | vs bm25 |",
                  "|---" * (10 + (3 if extra else 0)) + "|"]
        sources = set()
        for cell, vals, pairs in _rows(det):
            found = anchors(s["benchmark"], s["variant"], cell)
            sources |= {a.source for a in found}
            r10 = ("".join(f" | {_pct(vals[x]['recall@10'])}" for x in SYSTEMS)
                   if extra else "")
            lines.append(f"| {cell} | {vals['n']} | {_pct(vals['chance'])} | "
                         + " | ".join(_pct(vals[x][m]) for x in SYSTEMS) + r10
                         + f" | {render(found, 'human')} | {render(found, 'llm')} | "
                         + " | ".join(_pair(pairs[b]) for b in BASELINES) + " |")
        lines.append("")
        for src in sorted(sources):
            lines.append(f"Source of the published figures: {src}.")
        ex = det["extras"]
        if "auc" in ex:
            lines.append("ROC AUC (threshold-free): " + ", ".join(
                f"{k} {_pct(v)}" for k, v in ex["auc"].items()) + "; pairs called analogies: "
                + ", ".join(f"{k} {v}" for k, v in ex["called_analogy"].items())
                + f" of {s['n']}.")
        if "ties_at_top" in ex:
            lines.append("Ties at the top (seeded tie-break): " + ", ".join(
                f"{k} {v}" for k, v in ex["ties_at_top"].items()) + f" of {s['n']} items.")
        if "no_mapped_structure" in ex:
            lines.append(f"Items on which analogist maps no structure of any choice onto the "
                         f"query (every score 0): {ex['no_mapped_structure']} of {s['n']}.")
        for sys_, d in ex.get("analogue_vs_distractor_type", {}).items():
            lines.append(f"{sys_}: analogue vs distractor kind — " + "; ".join(
                f"{t}: {v['wins']} wins, {v['ties']} ties, {v['losses']} losses"
                for t, v in sorted(d.items())) + ".")
        if det["notes"]:
            lines.append("Notes: " + "; ".join(det["notes"]) + ".")
        lines.append("")
    if "process_cpu_s" in report:
        lines.append(f"CPU for the whole run (after loading): {report['process_cpu_s']:.0f} s.")
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    """Grouped bars per set and cell: the three systems, chance (black tick) and published
    figures (stars)."""
    import matplotlib  # heavy optional dependency: loaded only when a plot is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after choosing the backend

    groups = []
    for det in report["results"]:
        s = det["summary"]
        label = s["benchmark"] + (f"/{s['variant']}" if s["variant"] else "")
        m = "map" if "map" in s["systems"]["analogist"] else "accuracy"
        for cell, vals, _ in _rows(det):
            pub = [a.value for a in anchors(s["benchmark"], s["variant"], cell)]
            groups.append((f"{label}\n{cell}", [vals[x][m] for x in SYSTEMS], vals["chance"],
                           pub))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(groups) + 2), 4.5))
    w = 0.25
    for j, name in enumerate(SYSTEMS):
        ax.bar([i + (j - 1) * w for i in range(len(groups))], [g[1][j] for g in groups], w,
               label=name)
    for i, (_, _, chance, pub) in enumerate(groups):
        ax.hlines(chance, i - 1.5 * w, i + 1.5 * w, colors="black", linewidth=1.5,
                  label="chance" if i == 0 else None)
        if pub:
            ax.scatter([i] * len(pub), pub, marker="*", s=80, color="crimson", zorder=3,
                       label="published" if not any(g[3] for g in groups[:i]) else None)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize=7, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy (retrieval: MAP)")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
