"""``analogist find``: MAC/FAC retrieval plus the judge on one target."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from analogist.cli.base import (
    NAMESPACE_HELP,
    STORE_HELP,
    _episode_id_for,
    _fail,
    _load_target,
    _make_writer,
    _no_llm_reason,
    _open_store,
    _provider,
    app,
)
from analogist.errors import AnalogistError


@app.command("find")
def find_command(
    target: Path = typer.Argument(..., help="The target situation: a Signature file (or, with "
                                            "--from-text, a text file)."),
    k: int = typer.Option(5, "--k", min=1, help="How many analogues to report."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON only."),
    from_text: bool = typer.Option(False, "--from-text",
                                   help="The target is a text file: write its signature first "
                                        "(see --writer)."),
    writer: str = typer.Option("deterministic", "--writer",
                               help="With --from-text: deterministic (offline) or llm."),
    critic: bool = typer.Option(True, "--critic/--no-critic",
                                help="Ask the independent critic (an LLM; skipped when none is "
                                     "configured) about every analogue that would transfer."),
    parametric: bool = typer.Option(False, "--parametric/--no-parametric",
                                    help="Also ask the LLM for analogues from its own knowledge "
                                         "(labelled parametric, judged, reported apart)."),
) -> None:
    """Have I seen this shape before, and what follows? MAC/FAC retrieval plus the judge."""
    from dataclasses import replace

    from analogist.retrieve import RetrieveParams, Retriever

    try:
        if from_text:
            from analogist.io import read_text

            sig = _make_writer(writer).encode(read_text(target),
                                              episode_id=_episode_id_for(target),
                                              source=str(target)).signature
        else:
            sig = _load_target(target)
        notes: list[str] = []
        critic_obj = par_fn = None
        if critic:
            cp = _provider("critic")
            if cp is None:
                notes.append("critic: " + _no_llm_reason())
            else:
                from analogist.critic import Critic

                critic_obj = Critic(cp)
        if parametric:
            pp = _provider("parametric")
            if pp is None:
                notes.append("parametric channel: " + _no_llm_reason())
            else:
                from analogist.parametric import propose_parametric

                def par_fn(t: Any) -> Any:
                    return propose_parametric(t, pp, k=3)
        with _open_store(store) as m:
            res = Retriever(m, namespace, params=RetrieveParams(k=k),
                            embedder="auto").find(sig, critic=critic_obj, parametric=par_fn)
        if notes:
            res = replace(res, skipped=(*res.skipped, *notes))
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(res.to_json(), indent=2) + "\n")
    else:
        Console().print(Text(res.render()))
