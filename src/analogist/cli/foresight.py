"""``analogist foresight``: briefs, the corpus, evaluation and calibration (seed 001)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from analogist import __version__
from analogist.cli.base import (
    NAMESPACE_HELP,
    STORE_HELP,
    _fail,
    _open_store,
    app,
    make_app,
    progress_bar,
)
from analogist.errors import AnalogistError

# -- foresight (seed 001, issue 6) -----------------------------------------------------------
foresight_app = typer.Typer(help="Foresight with historical analogies: "
                                 "find analogies by mechanism, confirm hidden factors across "
                                 "independent analogies, write the Structural Analogy Brief.",
                            no_args_is_help=True)
app.add_typer(foresight_app, name="foresight")


def _resolve_target(target: str, corpus_path: Path | None, api: Any) -> Any:
    """(event, corpus): a path to an event file (read first, so its errors come first), or the
    id, name or alias of a corpus event."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.foresight.event import load_corpus, load_event

    path = Path(target)
    if path.suffix.lower() in (".yaml", ".yml", ".json") or path.exists():
        ev = load_event(path)
        return ev, load_corpus(corpus_path) if corpus_path is not None else api.corpus()
    corpus = load_corpus(corpus_path) if corpus_path is not None else api.corpus()
    return api.resolve_event(target, corpus=corpus, use_store=False, files_too=True), corpus


@foresight_app.command("brief")
def foresight_brief_command(
    target: str = typer.Argument(..., help="The target: an event file (YAML/JSON; its factors "
                                           "marked observed/hidden or cut at its cutoff), or the "
                                           "id, name or alias of a corpus event (cut at its own "
                                           "cutoff, left out of the pool)."),
    cutoff: str | None = typer.Option(None, "--cutoff", help="Cut the target at this date "
                                                             "(YYYY[-MM[-DD]]) instead."),
    corpus_path: Path | None = typer.Option(None, "--corpus",
                                            help="A folder of event files (default: the "
                                                 "bundled historical corpus)."),
    store: Path | None = typer.Option(None, "--store", help="Also draw candidate events from "
                                                            "this memory store (episodes of "
                                                            "kind 'event')."),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    out: Path | None = typer.Option(None, "--out", help="Write brief-<id>.md/.json/.png here."),
    as_json: bool = typer.Option(False, "--json", help="Print the brief as JSON only."),
    embedding: bool = typer.Option(True, "--embedding/--no-embedding",
                                   help="Use the offline text embedder as a MAC channel."),
    llm: bool = typer.Option(True, "--llm/--no-llm", help="Ask the configured LLM (if any) for "
                                                          "candidate analogies from its own "
                                                          "knowledge (labelled parametric)."),
    rounds: int = typer.Option(3, "--rounds", min=0, max=10,
                               help="R: reflection rounds after round 0."),
    per_round: int = typer.Option(8, "--per-round", min=1, max=20,
                                  help="K: candidates per round."),
    carryover: int = typer.Option(8, "--carryover", min=0, max=20,
                                  help="M: analogies carried over."),
    calibration: str = typer.Option("bundled", "--calibration",
                                    help="bundled (π per position and (q, p) per analogy "
                                         "strength, counted on the corpus's dev targets), "
                                         "none (homogeneous --pi/--q/--p) or a JSON file from "
                                         "'analogist foresight calibrate'."),
    pi: float | None = typer.Option(None, "--pi", help="Homogeneous prior (default 0.5); "
                                                       "replaces the calibration."),
    q: float | None = typer.Option(None, "--q", help="Homogeneous P(confirm | true) "
                                                     "(default 0.9)."),
    p: float | None = typer.Option(None, "--p", help="Homogeneous P(confirm | coincidence) "
                                                     "(default 0.2)."),
    delta: float = typer.Option(0.05, "--delta", help="Assert at posterior ≥ 1 − delta."),
    min_fidelity: float = typer.Option(0.05, "--min-fidelity",
                                       help="Reject analogies mapping less of the target."),
) -> None:
    """Find historical analogies for TARGET by mechanism and write the Structural Analogy
    Brief: predicted hidden factors with posteriors, invariants, limitations, uncertainties."""
    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.text import Text

    from analogist.foresight.brief import brief_json, brief_markdown, write_brief

    try:
        if store is not None and not store.exists():
            raise AnalogistError("store file not found", source=str(store))
        with make_app(store, namespace=namespace, llm=llm) as api:
            params = api.foresight_params(rounds=rounds, per_round=per_round,
                                          carryover=carryover, calibration=calibration, pi=pi,
                                          q=q, p=p, delta=delta, min_fidelity=min_fidelity)
            tev, corpus = _resolve_target(target, corpus_path, api)
            with progress_bar() as bar:
                task = bar.add_task("foresight rounds", total=rounds + 1)
                res, _ = api.foresight(tev, cutoff=cutoff, params=params, corpus=corpus,
                                       use_store=store is not None, embedding=embedding,
                                       progress=lambda i, n: bar.update(task, completed=i))
        paths = write_brief(res, out) if out is not None else None
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(brief_json(res))
        return
    Console().print(Text(brief_markdown(res)))
    if paths:
        for k_, v in paths.items():
            typer.echo(f"{k_}: {v}")


@foresight_app.command("events")
def foresight_events_command(
    domain: str | None = typer.Option(None, "--domain", help="Only this domain."),
    corpus_path: Path | None = typer.Option(None, "--corpus", help="A folder of event files."),
) -> None:
    """List the events of the historical corpus."""
    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.table import Table

    from analogist.foresight.event import DOMAINS, load_corpus

    if domain is not None and domain not in DOMAINS:
        _fail(f"--domain must be one of {', '.join(DOMAINS)}, got {domain!r}")
    try:
        corpus = load_corpus(corpus_path)
    except AnalogistError as e:
        _fail(str(e))
    table = Table("id", "name", "start", "domain", "scale", "factors", "cutoff")
    for e in corpus.events:
        if domain and e.domain != domain:
            continue
        table.add_row(e.event_id, e.name, e.start, e.domain, e.scale, str(len(e.factors)),
                      e.cutoff.date if e.cutoff else "")
    Console(width=160).print(table)


@foresight_app.command("show")
def foresight_show_command(
    event: str = typer.Argument(..., help="Id, name or alias of a corpus event, or a file."),
    corpus_path: Path | None = typer.Option(None, "--corpus", help="A folder of event files."),
    as_json: bool = typer.Option(False, "--json", help="Print the event as JSON."),
) -> None:
    """Show one event's decomposition: factors at positions, mechanisms, links, cutoff."""
    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.text import Text
    try:
        ev, _ = _resolve_target(event, corpus_path, make_app())
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(ev.model_dump_json(indent=2, exclude_none=True) + "\n")
        return
    lines = [f"{ev.name} ({ev.event_id}) — {ev.domain}, {ev.scale}, {ev.start}…{ev.end or ''}",
             f"aliases: {', '.join(ev.aliases) or '-'}", ev.description, "", "factors:"]
    lines += [f"  {f.position:13s} {f.mechanism:28s} {f.id}  [{f.time or ev.start}] {f.text}"
              for f in ev.factors]
    lines += ["links:"] + [f"  {ln.cause} -{ln.edge}-> {ln.effect}" for ln in ev.links]
    if ev.cutoff:
        lines += [f"cutoff {ev.cutoff.date}: {ev.cutoff.rationale}", f"brief: {ev.cutoff.brief}"]
    lines.append(f"source: {ev.source}")
    Console().print(Text("\n".join(lines)))


@foresight_app.command("add")
def foresight_add_command(
    files: list[Path] = typer.Argument(..., help="Event files (YAML/JSON) to store."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
) -> None:
    """Store events (as Signatures of kind 'event') in memory, all or nothing."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.foresight.event import load_event

    try:
        sigs = [load_event(f).to_signature() for f in files]
        with _open_store(store) as m:
            ids = m.add_many(sigs, namespace=namespace)
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"stored {len(ids)} event(s) in namespace {namespace!r}")


@foresight_app.command("eval")
def foresight_eval_command(
    pool: str = typer.Option("loo", "--pool", help="loo (every other event) or past (only "
                                                   "events that began before the cutoff)."),
    out: Path = typer.Option(Path("foresight_eval"), "--out", help="Output directory."),
    targets: str | None = typer.Option(None, "--targets", help="Comma-separated target ids."),
    arms: str = typer.Option("cana,cana_r0,single,surface", "--arms", help="Arms to run."),
    corpus_path: Path | None = typer.Option(None, "--corpus", help="A folder of event files."),
    calibration: str = typer.Option("bundled", "--calibration",
                                    help="bundled, none (homogeneous π=0.5, q=0.9, p=0.2) or a "
                                         "JSON file from 'analogist foresight calibrate'."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Hidden-factor recall and precision at 1 − δ over corpus targets (leave-one-out), for
    CANA and the surface-only baseline in the same run."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.foresight.calibrate import bundled_calibration, load_calibration
    from analogist.foresight.evaluate import evaluate
    from analogist.foresight.event import load_corpus
    from analogist.foresight.loop import ForesightParams

    try:
        if calibration == "bundled":
            cal, scal = bundled_calibration("cana"), bundled_calibration("surface")
        elif calibration == "none":
            cal = scal = None
        else:
            cal = load_calibration(Path(calibration), "cana")
            scal = load_calibration(Path(calibration), "surface")
        corpus = load_corpus(corpus_path)
        names = [a.strip() for a in arms.split(",") if a.strip()]
        tl = [t.strip() for t in targets.split(",")] if targets else None
        with progress_bar(enabled=progress) as bar:
            task = bar.add_task("targets", total=None)
            res = evaluate(corpus, params=ForesightParams(calibration=cal), arms=names,
                           pool=pool, targets=tl, surface_calibration=scal,
                           progress=lambda i, n: bar.update(task, completed=i, total=n))
    except AnalogistError as e:
        _fail(str(e))
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(res, indent=2, sort_keys=True) + "\n",
                                      encoding="utf-8")
    for sp, s in res["summary"].items():
        for a, m in s.get("arms", {}).items():
            r = "-" if m["recall"] is None else f"{m['recall']:.3f}"
            pr = "-" if m["precision"] is None else f"{m['precision']:.3f}"
            typer.echo(f"{sp:4s} {a:8s} recall {r} precision {pr} "
                       f"({m['tp']}/{m['hidden']} hidden, {m['asserted']} asserted)")
    typer.echo(f"wrote {out}/results.json")


@foresight_app.command("calibrate")
def foresight_calibrate_command(
    out: Path = typer.Option(..., "--out", help="Write the calibration JSON here."),
    split: str = typer.Option("dev", "--split", help="dev (default), test or all targets."),
    corpus_path: Path | None = typer.Option(None, "--corpus", help="A folder of event files."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Count Theorem 5's π per position and (q, p) per analogy strength on the corpus's
    development targets, for the CANA arm and the surface baseline."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.foresight.calibrate import calibrate
    from analogist.foresight.evaluate import eval_targets, split_of
    from analogist.foresight.event import load_corpus
    from analogist.foresight.loop import ForesightParams

    if split not in ("dev", "test", "all"):
        _fail(f"--split must be dev, test or all, got {split!r}")
    try:
        corpus = load_corpus(corpus_path)
        targets = [e for e in eval_targets(corpus)
                   if split == "all" or split_of(e.event_id) == split]
        if not targets:
            raise AnalogistError(f"no evaluation targets in split {split!r}")
        src = (f"{split} split ({len(targets)} targets) of {corpus.name} ({len(corpus)} "
               f"events); analogist {__version__}; 'analogist foresight calibrate --split "
               f"{split}'")
        data = {}
        with progress_bar(enabled=progress) as bar:
            for arm in ("cana", "surface"):
                task = bar.add_task(arm, total=len(targets))
                data[arm] = calibrate(corpus, targets, params=ForesightParams(), arm=arm,
                                      source=src,
                                      progress=lambda i, n, t=task: bar.update(t, completed=i)
                                      ).to_json()
    except AnalogistError as e:
        _fail(str(e))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for arm, d in data.items():
        typer.echo(f"{arm}: rates {d['rates']}  pi {d['pi']}")
    typer.echo(f"wrote {out}")
