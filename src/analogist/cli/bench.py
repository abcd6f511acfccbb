"""``analogist bench``: PARB and the public analogy benchmarks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from analogist.cli.base import (
    EXIT_BAD_INPUT,
    _fail,
    _no_llm_reason,
    _provider,
    app,
    progress_bar,
)
from analogist.errors import AnalogistError
from analogist.llm.base import DEFAULT_WRITER

# -- benchmarks ---------------------------------------------------------------------------------
bench_app = typer.Typer(help="Benchmarks: PARB (the project's analogical-reasoning benchmark) and the public analogy benchmarks.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


@bench_app.command("parb")
def bench_parb_command(
    items: int = typer.Option(320, "--items", min=1, help="Number of generated items."),
    arms: str = typer.Option("B,B',C,C',H,D,E,G,A0,A1", "--arms",
                             help="Comma-separated arms (A0/A1 need an LLM: reported skipped)."),
    representation: str = typer.Option("oracle", "--representation",
                                       help="oracle (gold signatures) or encoded (every "
                                            "episode re-written from its text)."),
    writer: str = typer.Option(DEFAULT_WRITER, "--writer",
                               help="encoded representation: deterministic or llm."),
    split: str = typer.Option("both", "--split", help="dev, test or both."),
    seed: int = typer.Option(0, "--seed", help="Item-generation and bootstrap seed."),
    out: Path = typer.Option(Path("parb_out"), "--out", help="Output directory."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    llm: bool = typer.Option(True, "--llm/--no-llm",
                             help="Use the configured LLM (if any) for A0/A1 and E's critic."),
) -> None:
    """Run the PARB benchmark: every arm on every item; writes results.json and report.md."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.bench.parb.runner import run_parb

    if representation not in ("oracle", "encoded"):
        _fail(f"--representation must be 'oracle' or 'encoded', got {representation!r}")
    if writer not in ("deterministic", "llm"):
        _fail(f"--writer must be deterministic or llm, got {writer!r}")
    if split not in ("dev", "test", "both"):
        _fail(f"--split must be dev, test or both, got {split!r}")
    names = [a.strip() for a in arms.split(",") if a.strip()]
    provider = _provider() if llm else None
    encoder = None
    if representation == "encoded" and writer == "llm":
        if provider is None:
            _fail("--writer llm: " + _no_llm_reason())
        # the library loads inside the command, so that `analogist --help` starts at once
        from analogist.encode.llm_writer import LLMWriter
        encoder = LLMWriter(provider)
    try:
        res = run_parb(items, names, representation=representation, split=split, seed=seed,
                       out_dir=out, progress=progress, provider=provider, encoder=encoder)
    except (AnalogistError, ValueError) as e:
        _fail(str(e))
    for k, v in res.get("skipped", {}).items():
        typer.echo(f"{k}: {v}")
    for sp, data in res["splits"].items():
        for a, m in (data.get("arms") or {}).items():
            typer.echo(f"{sp:4s} {a:3s} NAV {m['nav']:+.3f} CI [{m['nav_ci'][0]:+.3f}, "
                       f"{m['nav_ci'][1]:+.3f}]")
        for h, v in (data.get("hypotheses") or {}).items():
            typer.echo(f"{sp:4s} {h}: {v['verdict']}")
    typer.echo(f"wrote {out}/results.json and {out}/report.md")

# -- external analogy benchmarks (issue 8, item 5) ---------------------------------------------
@bench_app.command("external")
def bench_external_command(
    name: str = typer.Argument(..., metavar="NAME",
                               help="arn, storyanalogy, parallelparc, analobench, rattermann, "
                                    "historical — or all (PATH then holds one subfolder per "
                                    "set)."),
    path: str = typer.Argument(..., metavar="PATH",
                               help="The set's file, or the folder holding its files."),
    variant: str | None = typer.Option(None, "--variant",
                                       help="Which file of a set with several (the error "
                                            "lists the choices)."),
    check: bool = typer.Option(False, "--check", help="Load and count items; score nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON only."),
    limit: int | None = typer.Option(None, "--limit", min=1,
                                     help="Evaluate a seeded sample of this many items per "
                                          "set."),
    seed: int = typer.Option(0, "--seed", help="Sampling, task-building and tie seed."),
    details: str | None = typer.Option(None, "--details",
                                       help="Also write per-item outcomes and paired "
                                            "statistics (JSON) to this file."),
    out: str | None = typer.Option(None, "--out",
                                   help="all: the folder for report.md/.json/.png "
                                        "(default: PATH/report)."),
) -> None:
    """Score a public analogy benchmark, as its authors publish it, with analogist's embedded
    default beside the surface baselines (embedder cosine, BM25): accuracy (retrieval: MAP,
    recall@10) per cell with n and chance, paired McNemar per baseline. No downloads."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.bench.external import external_command

    try:
        if name == "all":
            # the library loads inside the command, so that `analogist --help` starts at once
            from analogist.bench.external.report import run_all

            dest = Path(out) if out else Path(path) / "report"
            rep = run_all(path, dest, seed=seed, limit=limit, check=check)
            if as_json:
                sys.stdout.write(json.dumps(rep, indent=1) + "\n")
            else:
                if check:
                    # the library loads inside the command, so that `analogist --help` starts
                    # at once
                    from analogist.bench.external.runner import render_check

                    sys.stdout.write("".join(render_check(c) for c in rep["sets"]))
                sys.stdout.write(f"wrote {dest}/report.md ({len(rep['sets'])} files, "
                                 f"{len(rep['results'])} scored, {len(rep['errors'])} "
                                 f"not loaded)\n")
                for e in rep["errors"]:
                    typer.echo(f"error: {e}", err=True)
            if rep["errors"] and not rep["sets"]:
                raise typer.Exit(EXIT_BAD_INPUT)
            return
        with progress_bar(enabled=not check) as bar:
            task = bar.add_task(f"{name}: items scored", total=None)
            text = external_command(name, path, variant=variant, limit=limit, seed=seed,
                                    check=check, as_json=as_json, details=details,
                                    progress=lambda n: bar.advance(task, n))
    except AnalogistError as e:
        _fail(str(e))
    sys.stdout.write(text)
