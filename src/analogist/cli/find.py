"""``analogist find``: MAC/FAC retrieval plus the judge on one target."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from analogist.cli.base import (
    NAMESPACE_HELP,
    STORE_HELP,
    _episode_id_for,
    _fail,
    _load_target,
    _make_writer,
    app,
    make_app,
)
from analogist.errors import AnalogistError
from analogist.llm.base import DEFAULT_WRITER


@app.command("find")
def find_command(
    target: Path = typer.Argument(..., help="The target situation: a Signature file (or, with "
                                            "--from-text, a text file)."),
    k: int = typer.Option(5, "--k", min=1, max=50, help="How many analogues to report."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON only."),
    from_text: bool = typer.Option(False, "--from-text",
                                   help="The target is a text file: write its signature first "
                                        "(see --writer)."),
    writer: str = typer.Option(DEFAULT_WRITER, "--writer",
                               help="With --from-text: deterministic (offline) or llm."),
    critic: bool = typer.Option(True, "--critic/--no-critic",
                                help="Ask the independent critic (an LLM; skipped when none is "
                                     "configured) about every analogue that would transfer."),
    parametric: bool = typer.Option(False, "--parametric/--no-parametric",
                                    help="Also ask the LLM for analogues from its own knowledge "
                                         "(labelled parametric, judged, reported apart)."),
) -> None:
    """Have I seen this shape before, and what follows? MAC/FAC retrieval plus the judge."""
    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.text import Text
    try:
        with make_app(store, namespace=namespace) as app:
            if from_text:
                # the library loads inside the command, so that `analogist --help` starts at once
                from analogist.io import read_text

                sig = _make_writer(writer, app).encode(read_text(target),
                                                       episode_id=_episode_id_for(target),
                                                       source=str(target)).signature
            else:
                sig = _load_target(target)
            res = app.find(sig, k=k, critic=critic, parametric=parametric)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(res.to_json(), indent=2) + "\n")
    else:
        Console().print(Text(res.render()))
