"""``analogist eval``: the retrieval evaluation harness (seed 002)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from analogist.cli.base import (
    NAMESPACE_HELP,
    _fail,
    app,
    progress_bar,
    working,
)
from analogist.errors import AnalogistError

# -- retrieval evaluation harness (issue 8; seed 002) ------------------------------------------
eval_app = typer.Typer(help="Retrieval evaluation harness: pinned gold sets, repeated "
                            "runs, paired comparison with a stated noise floor.",
                       no_args_is_help=True)
app.add_typer(eval_app, name="eval")


def _store(store: Path | None) -> Path | None:
    """``--store``, else ``$ANALOGIST_STORE`` (as every other command reads it), else None."""
    if store is not None:
        return store
    from analogist.app import env_store  # the library, loaded on use

    found = env_store()
    return None if found is None else Path(found)


@eval_app.command("build")
def eval_build_command(
    store: Path | None = typer.Option(None, "--store", help="The SQLite store to derive from."),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    out: Path = typer.Option(..., "--out", help="Where to write the gold set (JSON)."),
    paraphrases: Path | None = typer.Option(None, "--paraphrases",
                                            help="Hand-written paraphrase queries: a JSON/YAML "
                                                 "list of {target, text}; machine-checked."),
) -> None:
    """Derive a pinned gold set (the seven query categories, adapted to analogy) from a store."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.bench.harness.cli import eval_build

    try:
        with progress_bar() as bar:
            task = bar.add_task("structural queries: episodes examined", total=None)
            gold = eval_build(_store(store), namespace, out, paraphrases,
                              progress=lambda i, n: bar.update(task, completed=i, total=n))
    except AnalogistError as e:
        _fail(str(e))
    counts = ", ".join(f"{k} {v}" for k, v in gold.counts().items())
    typer.echo(f"wrote {out}: {len(gold.queries)} queries ({counts})")


@eval_app.command("check")
def eval_check_command(
    gold: Path = typer.Argument(..., help="The gold set (JSON)."),
    store: Path | None = typer.Option(None, "--store", help="The SQLite store to check against."),
    namespace: str | None = typer.Option(None, "--namespace",
                                         help="Namespace (default: the gold set's)."),
) -> None:
    """Re-validate winnability; exit 1 when a query became unwinnable or leaky."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.bench.harness.cli import eval_check

    try:
        problems = eval_check(gold, _store(store), namespace)
    except AnalogistError as e:
        _fail(str(e))
    for line in problems:
        typer.echo(line)
    if problems:
        typer.echo(f"{len(problems)} query(ies) no longer winnable", err=True)
        raise typer.Exit(1)
    typer.echo("ok: every query is still winnable")


@eval_app.command("run")
def eval_run_command(
    gold: Path = typer.Argument(..., help="The gold set (JSON)."),
    store: Path | None = typer.Option(None, "--store", help="The SQLite store to query."),
    runs: int = typer.Option(3, "--runs", min=1, help="Repeated runs (drift is measured)."),
    retriever: str = typer.Option("fused", "--retriever",
                                  help="fused, structural, surface or associative."),
    out: Path = typer.Option(..., "--out", help="Where to write the results (JSON)."),
    namespace: str | None = typer.Option(None, "--namespace",
                                         help="Namespace (default: the gold set's)."),
) -> None:
    """Run the gold set N times against one retriever; hit@5, recall, precision, MRR, latency."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.bench.harness.cli import eval_run

    try:
        with working(f"running the gold set {runs} time(s) with the {retriever} retriever"):
            res = eval_run(gold, _store(store), runs, retriever, out, namespace)
    except AnalogistError as e:
        _fail(str(e))
    for r in res["runs"]:
        s = r["summary"]
        typer.echo(f"run {r['run']}: hit@5 {s['hit@5']:.1%}  recall@5 {s['recall@5']:.1%}  "
                   f"precision@5 {s['precision@5']:.1%}  MRR@10 {s['mrr@10']:.3f}  "
                   f"p50 {s['latency_ms']['p50']:.1f} ms")
    typer.echo(f"wrote {out}")


@eval_app.command("compare")
def eval_compare_command(
    a: Path | None = typer.Argument(None, help="Baseline result file."),
    b: Path | None = typer.Argument(None, help="Candidate result file."),
    baseline: str | None = typer.Option(None, "--baseline",
                                        help="Git ref (or source-tree directory) to build as "
                                             "the baseline."),
    candidate: str | None = typer.Option(None, "--candidate",
                                         help="Git ref (or source-tree directory) to build as "
                                              "the candidate."),
    gold: Path | None = typer.Option(None, "--gold", help="With refs: the gold set."),
    store: Path | None = typer.Option(None, "--store", help="With refs: the store."),
    retriever: str = typer.Option("fused", "--retriever", help="With refs: the retriever."),
    runs: int = typer.Option(3, "--runs", min=1, help="With refs: runs per side."),
    repo: Path = typer.Option(Path("."), "--repo", help="With refs: the git repository."),
    out: Path | None = typer.Option(None, "--out", help="Also write the comparison (JSON)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Paired comparison: McNemar, minimum detectable swing, drift, noise floor, verdict."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.bench.harness.cli import eval_compare

    try:
        cmp, text = eval_compare(a, b, baseline=baseline, candidate=candidate, gold=gold,
                                 store=_store(store), retriever=retriever, runs=runs, repo=repo,
                                 out=out)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(cmp, indent=2, sort_keys=True) + "\n")
    else:
        typer.echo(text)
