"""``analogist encode``: text → Signature (and the abstraction checks of seed 000 §9)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer

from analogist.cli.base import (
    _episode_id_for,
    _fail,
    _make_writer,
    _provider,
    _read_episode_text,
    app,
    progress_bar,
)
from analogist.errors import AnalogistError
from analogist.llm.base import DEFAULT_WRITER


def _encode_files(files: list[Path], writer: str, domain: str | None,
                  proposed: dict[str, dict[str, Any]] | None = None) -> list[tuple[str, Any]]:
    """Write a signature for each text file (each seen alone); all before anything is stored.

    ``proposed`` collects the writers' proposed terms: name → {definition, arity, uses}.
    Prints one line to stderr with the texts encoded per second (wall and CPU time)."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.io import read_text

    w = _make_writer(writer)
    out: list[tuple[str, Any]] = []
    wall0, cpu0 = time.perf_counter(), time.process_time()
    with progress_bar() as bar:
        task = bar.add_task("encoding", total=len(files))
        for f in files:
            res = w.encode(read_text(f), episode_id=_episode_id_for(f), domain=domain,
                           source=str(f))
            out.append((str(f), res.signature.to_data()))
            if proposed is not None:
                arity = {a.predicate: len(a.args) for _w, a in res.signature.atoms()}
                for name, definition in res.proposed_terms.items():
                    t = proposed.setdefault(name, {"definition": definition,
                                                   "arity": arity.get(name, 2), "uses": 0})
                    t["uses"] += 1
            bar.update(task, advance=1)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    typer.echo(f"encoded {len(out)} text(s) in {wall:.1f} s wall, {cpu:.1f} s CPU "
               f"({len(out) / max(wall, 1e-9):.2f} texts/s)", err=True)
    return out

def _abstraction_checks(text: str, sig: Any, domain: str | None) -> dict[str, Any]:
    """Seed 000 §9's two checks for one episode, against the bundled casebook.

    Faithfulness: given only L2, the judge picks the episode's text among it and five casebook
    texts (seeded). De-surfacing: given only L2, the judge guesses a domain among the casebook's
    domains (and ``domain``, if given). Both with the offline embedding judge, and with the LLM
    judge when one is configured (else reported skipped)."""
    # random and the library load inside the command, so that `analogist --help` starts at once
    import random as _random

    from analogist.casebook import load_casebook
    from analogist.encode.checks import EmbeddingJudge, LLMJudge
    from analogist.index.embed import default_embedder

    l2 = sig.levels.L2 or ""
    if not l2.strip():
        return {"skipped": "the signature has no L2 level to check"}
    cases = [c for c in load_casebook() if not c.is_decoy and c.signature.levels.L0]
    rng = _random.Random(0)
    distractors = [c.signature.levels.L0 for c in rng.sample(cases, 5)]
    cands = [text, *distractors]
    order = list(range(len(cands)))
    rng.shuffle(order)
    domains = sorted({c.domain for c in cases} | ({domain} if domain else set()))
    judges: list[Any] = [EmbeddingJudge(default_embedder()), LLMJudge(_provider("checks"))]
    out: dict[str, Any] = {}
    for j in judges:
        if getattr(j, "skipped", None):
            out[j.name] = {"skipped": j.skipped}
            continue
        pick = j.choose(l2, [cands[i] for i in order])
        guess = domains[j.guess(l2, domains, [""] * len(domains))]
        out[j.name] = {
            "faithfulness": {"picked_original": order[pick] == 0, "chance": 1 / len(cands)},
            "de_surfacing": {"guessed_domain": guess, "true_domain": domain,
                             "guessed_right": (guess == domain) if domain else None,
                             "chance": round(1 / len(domains), 4)},
        }
    return out


@app.command("encode")
def encode_command(
    text: str = typer.Argument(..., help="The episode: a path to a text file, or the text."),
    writer: str = typer.Option(DEFAULT_WRITER, "--writer",
                               help="deterministic (offline, the default) or llm (needs "
                                    "ANALOGIST_LLM_BASE_URL and ANALOGIST_LLM_MODEL)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    episode_id: str | None = typer.Option(None, "--id", help="Episode id (default: from the "
                                                             "file name, or 'episode')."),
    domain: str | None = typer.Option(None, "--domain", help="The episode's surface domain."),
    check: bool = typer.Option(False, "--check",
                               help="Also run the abstraction checks on L2 (faithfulness among "
                                    "five casebook distractors; de-surfacing over the casebook "
                                    "domains)."),
    out: Path | None = typer.Option(None, "--out", help="Also write the signature (.json or "
                                                        ".yaml) to this file."),
) -> None:
    """Write a structural Signature for one episode text (seen alone, never with other cases)."""
    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.table import Table

    from analogist.signature import dump_signature

    try:
        body, where = _read_episode_text(text)
        eid = episode_id or (_episode_id_for(Path(where)) if where != "<text>" else "episode")
        res = _make_writer(writer).encode(body, episode_id=eid, domain=domain, source=where)
        checks = _abstraction_checks(body, res.signature, domain) if check else None
        if out is not None:
            fmt = "yaml" if out.suffix.lower() in (".yaml", ".yml") else "json"
            out.write_text(dump_signature(res.signature, fmt), encoding="utf-8")
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        data = res.to_json()
        if checks is not None:
            data["checks"] = checks
        typer.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    console = Console()
    conf = "—" if res.confidence is None else f"{res.confidence:.2f}"
    console.print(f"[bold]{res.signature.episode_id}[/bold]  writer={res.writer}  "
                  f"confidence={conf}  kind={res.signature.kind}")
    typer.echo(dump_signature(res.signature, "yaml").rstrip())
    if res.links:
        t = Table(title="causal links read from the text")
        for col in ("edge", "signal", "status"):
            t.add_column(col)
        for lk in res.links:
            t.add_row(str(lk.get("edge", "")), str(lk.get("connective", "")),
                      str(lk.get("status", "")))
        console.print(t)
    for term, d in sorted(res.proposed_terms.items()):
        console.print(f"proposed term [bold]{term}[/bold]: {d}", markup=True, highlight=False)
    for n in res.notes:
        console.print(f"note: {n}", markup=False, highlight=False)
    if checks is not None:
        for name, c in checks.items():
            typer.echo(f"check {name}: {json.dumps(c, sort_keys=True)}")
