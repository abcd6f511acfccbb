"""``analogist map``: the structure-mapping engine on two description files, rendered as
tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from analogist.cli.base import (
    SIGNATURE_SUFFIXES,
    _fail,
    app,
    load_description,
)
from analogist.errors import AnalogistError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from analogist.description import Description


def load_vocabulary(path: Path) -> Any:
    """A vocabulary file: ``.vcb`` (the reference SME's format), ``.json`` or ``.yaml``."""
    if path.suffix.lower() == ".vcb":
        # the library loads inside the command, so that `analogist --help` starts at once
        from analogist.sme.formats import read_vcb

        return read_vcb(path)
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.vocabulary import Vocabulary

    return Vocabulary.load(path)


# -- rendering -------------------------------------------------------------------------------

def _sx(x: Any) -> str:
    return x.sexpr() if hasattr(x, "sexpr") and callable(x.sexpr) else str(x)


def _pairs_table(title: str, rows: list[tuple[str, str]], *, base: str, target: str) -> Table:
    from rich.table import Table  # rich only for terminal output: --json skips it
    from rich.text import Text
    t = Table(title=title, title_justify="left", show_lines=False, expand=False)
    t.add_column(f"base ({base})", overflow="fold")
    t.add_column(f"target ({target})", overflow="fold")
    for b, tg in rows:
        t.add_row(Text(b), Text(tg))
    return t


def render_result(console: Console, result: Any, base: Description, target: Description) -> None:
    """Print a :class:`~analogist.sme.MatchResult` as rich tables."""
    from rich.table import Table  # rich only for terminal output: --json skips it
    from rich.text import Text
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("base", Text(f"{base.name} ({len(base.entities)} entities, "
                              f"{len(base.expressions)} expressions)"))
    head.add_row("target", Text(f"{target.name} ({len(target.entities)} entities, "
                                f"{len(target.expressions)} expressions)"))
    head.add_row("match hypotheses (MH count)", str(result.mh_count))
    head.add_row("kernels (kernel count)", str(result.kernel_count))
    head.add_row("global mappings", str(len(result.mappings)))
    console.print(head)
    if not result.mappings:
        console.print("no mapping found: the descriptions share no alignable structure")
        return
    for i, m in enumerate(result.mappings, 1):
        console.print()
        console.rule(Text(f"mapping {i}: raw SES {m.score:.4f}, {m.mh_count} match hypotheses"),
                     align="left")
        console.print(Text(f"raw SES (SME's structural evaluation score, unbounded): "
                           f"{m.score:.6g}"))
        corr = Table(title="correspondences", title_justify="left")
        corr.add_column("kind")
        corr.add_column(f"base ({base.name})", overflow="fold")
        corr.add_column(f"target ({target.name})", overflow="fold")
        for b, t in m.entity_pairs:
            corr.add_row("entity", Text(str(b)), Text(str(t)))
        for b, t in m.expression_pairs:
            corr.add_row("expression", Text(_sx(b)), Text(_sx(t)))
        console.print(corr)
        console.print(_pairs_table("root matches", [(_sx(b), _sx(t)) for b, t in m.root_pairs],
                                   base=base.name, target=target.name))
        cis = Table(title="candidate inferences (base → target)", title_justify="left")
        cis.add_column("#", justify="right")
        cis.add_column("inference", overflow="fold")
        for j, ci in enumerate(m.inferences, 1):
            cis.add_row(str(j), Text(ci.sexpr))
        if not m.inferences:
            cis.add_row("", Text("(none)"))
        console.print(cis)
        diffs = [(_sx(b), _sx(t)) for b, t in m.alignable_differences]
        if diffs:
            console.print(_pairs_table("alignable differences", diffs, base=base.name,
                                       target=target.name))
        else:
            console.print(Text("alignable differences: (none)"))


# -- commands --------------------------------------------------------------------------------

@app.command("map")
def map_command(
    base: Path | None = typer.Argument(None, help="Base description: .dgr, or a Signature "
                                                  ".json/.yaml/.yml file."),
    target: Path | None = typer.Argument(None, help="Target description (same formats)."),
    vocab: Path | None = typer.Option(None, "--vocab", help="Vocabulary (.vcb/.json/.yaml); default: "
                                      "the bundled sys2lang.vcb for .dgr files and the bundled "
                                      "signature vocabulary for Signature files."),
    example: str | None = typer.Option(None, "--example",
                                       help="Map a bundled example instead of files."),
    list_examples: bool = typer.Option(False, "--list-examples",
                                       help="List the bundled examples and exit."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON only."),
) -> None:
    """Map BASE onto TARGET with the structure-mapping engine and show the global mappings."""
    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.table import Table

    from analogist.examples import EXAMPLES, load_example

    if list_examples:
        if as_json:
            typer.echo(json.dumps({n: {"base": e.base_file, "target": e.target_file,
                                       "title": e.title} for n, e in EXAMPLES.items()},
                                  indent=2))
        else:
            t = Table(title="bundled examples", title_justify="left")
            for col in ("name", "base", "target", "title"):
                t.add_column(col)
            for n, e in EXAMPLES.items():
                t.add_row(n, e.base_file, e.target_file, e.title)
            Console().print(t)
        return
    try:
        if example is not None:
            if base is not None or target is not None:
                _fail("give either --example NAME or BASE and TARGET files, not both")
            b, t = load_example(example)
        else:
            if base is None or target is None:
                _fail("expected BASE and TARGET files (or --example NAME; see --list-examples)")
            vocabulary = load_vocabulary(vocab) if vocab is not None else None
            b = load_description(base, vocabulary)
            t = load_description(target, vocabulary)
        # the library loads inside the command, so that `analogist --help` starts at once
        from analogist.sme import match

        result = match(b, t)
        report = None
        if example is None and _is_signature(base) and _is_signature(target):
            # two Signatures: the judge's report on the same mapping, with its one named score
            from analogist.judge import judge_mapping
            from analogist.signature import load_signature

            report = judge_mapping(load_signature(base), load_signature(target), b, t, result)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        data = result.to_json()
        if report is not None:
            data["report"] = report.to_json()
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    from rich.text import Text  # rich only for terminal output: --json skips it

    console = Console()
    render_result(console, result, b, t)
    if report is not None:
        console.print()
        console.print(Text(report.render()))


def _is_signature(path: Path | None) -> bool:
    return path is not None and path.suffix.lower() in SIGNATURE_SUFFIXES
