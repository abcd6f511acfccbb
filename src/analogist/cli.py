"""The ``analogist`` command line: a thin shell over the library (no algorithm here).

Every :class:`~analogist.errors.AnalogistError` is printed on stderr as one message naming the file
(and line or field) and the command exits with status 2, without a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from analogist import __version__
from analogist.description import Description
from analogist.errors import AnalogistError
from analogist.vocabulary import Vocabulary

app = typer.Typer(
    name="analogist",
    help="Find, map and check analogies by structure.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

DGR_SUFFIXES = (".dgr",)
SIGNATURE_SUFFIXES = (".json", ".yaml", ".yml")
EXIT_BAD_INPUT = 2


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"analogist {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Find, map and check analogies by structure."""


# -- loading inputs --------------------------------------------------------------------------

def load_description(path: Path, vocabulary: Vocabulary | None) -> Description:
    """Read a ``.dgr`` description or a Signature (``.json``/``.yaml``/``.yml``) file."""
    suffix = path.suffix.lower()
    if suffix in DGR_SUFFIXES:
        from analogist.examples import default_sme_vocabulary
        from analogist.sme.formats import read_dgr

        vocab = vocabulary if vocabulary is not None else default_sme_vocabulary()
        return read_dgr(path, vocab)
    if suffix in SIGNATURE_SUFFIXES:
        if not path.is_file():
            # Let the reader name the problem (missing file, directory) consistently.
            from analogist.io import read_text

            read_text(path)
        try:
            from analogist.signature import compile_signature, load_signature
        except ImportError:
            raise AnalogistError("reading Signature files needs analogist.signature, which "
                                 "this installation does not have", source=str(path)) from None
        try:
            return compile_signature(load_signature(path), vocabulary)
        except AnalogistError as e:
            if e.source is None:
                e.source = str(path)
            raise
    raise AnalogistError(
        f"unknown file type {suffix or '(none)'!r}; expected a .dgr description or a Signature "
        f"(.json, .yaml, .yml)", source=str(path))


# -- rendering -------------------------------------------------------------------------------

def _sx(x: Any) -> str:
    return x.sexpr() if hasattr(x, "sexpr") and callable(x.sexpr) else str(x)


def _pairs_table(title: str, rows: list[tuple[str, str]], *, base: str, target: str) -> Table:
    t = Table(title=title, title_justify="left", show_lines=False, expand=False)
    t.add_column(f"base ({base})", overflow="fold")
    t.add_column(f"target ({target})", overflow="fold")
    for b, tg in rows:
        t.add_row(Text(b), Text(tg))
    return t


def render_result(console: Console, result: Any, base: Description, target: Description) -> None:
    """Print a :class:`~analogist.sme.MatchResult` as rich tables."""
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
        console.rule(Text(f"mapping {i}: score {m.score:.4f}, {m.mh_count} match hypotheses"),
                     align="left")
        console.print(Text(f"score: {m.score:.6g}"))
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
            vocabulary = Vocabulary.load(vocab) if vocab is not None else None
            b = load_description(base, vocabulary)
            t = load_description(target, vocabulary)
        from analogist.sme import match

        result = match(b, t)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
        return
    render_result(Console(), result, b, t)


# -- the analogical memory ------------------------------------------------------------------

STORE_HELP = ("SQLite store file (default: $ANALOGIST_STORE, else "
              "$XDG_DATA_HOME/analogist/store.db or ~/.local/share/analogist/store.db).")
NAMESPACE_HELP = "Namespace: a hard partition of the store."


def default_store_path() -> Path:
    import os

    env = os.environ.get("ANALOGIST_STORE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "analogist" / "store.db"


def _open_store(store: Path | None) -> Any:
    from analogist.memory.sqlite import Memory

    path = store or default_store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return Memory.open(path)


def _records(path: Path) -> list[tuple[str, Any]]:
    """Signature records in a JSON/YAML file: one object, a list, or {"episodes": [...]}."""
    from analogist.io import load_structured

    if path.suffix.lower() not in SIGNATURE_SUFFIXES:
        raise AnalogistError(f"expected a .json, .yaml or .yml file of signatures, got "
                             f"{path.suffix or 'no extension'!r}", source=str(path))
    data = load_structured(path)
    if isinstance(data, dict) and isinstance(data.get("episodes"), list):
        data = data["episodes"]
    if isinstance(data, dict):
        return [(str(path), data)]
    if isinstance(data, list):
        return [(f"{path}[{i}]", x) for i, x in enumerate(data)]
    raise AnalogistError("expected a signature object, a list of them or {\"episodes\": [...]}",
                         source=str(path))


def _load_target(path: Path) -> Any:
    from analogist.signature import load_signature

    if path.suffix.lower() not in SIGNATURE_SUFFIXES:
        raise AnalogistError("the target must be a Signature .json, .yaml or .yml file",
                             source=str(path))
    return load_signature(path)


@app.command("init")
def init_command(store: Path | None = typer.Option(None, "--store", help=STORE_HELP)) -> None:
    """Create (or open and migrate) a store."""
    try:
        with _open_store(store) as m:
            typer.echo(f"store {store or default_store_path()} ready "
                       f"(schema version {m.schema_version()})")
    except AnalogistError as e:
        _fail(str(e))


@app.command("add")
def add_command(
    files: list[Path] = typer.Argument(..., help="Signature files (.json/.yaml/.yml): one "
                                                 "signature, a list, or {episodes: [...]}."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    batch_size: int = typer.Option(500, "--batch-size", min=1,
                                   help="Signatures per transaction; a bad record rejects its "
                                        "whole batch."),
    embed: bool = typer.Option(True, "--embed/--no-embed",
                               help="Also store embeddings of the abstract levels L1-L3 (the "
                                    "offline default embedder; levels an episode lacks are "
                                    "skipped)."),
) -> None:
    """Store episodes (bulk, one transaction per batch, with a progress bar)."""
    from rich.progress import Progress

    from analogist.signature import (
        check_vocabulary,
        default_signature_vocabulary,
        validate_signature,
    )

    try:
        sigs = []
        vocab = default_signature_vocabulary()
        for f in files:
            for where, rec in _records(f):
                try:
                    sig = validate_signature(rec, source=where)
                    # unknown relations become proposed terms (with a warning); a wrong arity
                    # is an error here, before anything is stored
                    check_vocabulary(sig, vocab)
                    sigs.append(sig)
                except AnalogistError as e:
                    if e.source is None:
                        e = type(e)(e.message, source=where, line=e.line, field=e.field)
                    raise e from None
        embed_fn = None
        if embed:
            from analogist.index.embed import default_embedder
            from analogist.retrieve import level_embeddings

            embedder = default_embedder()

            def embed_fn(sig: Any) -> Any:
                return level_embeddings(sig, embedder)

        with _open_store(store) as m, Progress(transient=True) as bar:
            task = bar.add_task("adding", total=len(sigs))
            ids = m.add_many(sigs, namespace=namespace, batch_size=batch_size,
                             progress=lambda n: bar.update(task, completed=n), embed=embed_fn)
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"added {len(ids)} episode(s) to namespace {namespace!r}")


@app.command("find")
def find_command(
    target: Path = typer.Argument(..., help="The target situation: a Signature file."),
    k: int = typer.Option(5, "--k", min=1, help="How many analogues to report."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON only."),
) -> None:
    """Have I seen this shape before, and what follows? MAC/FAC retrieval plus the judge."""
    from analogist.retrieve import RetrieveParams, Retriever

    try:
        sig = _load_target(target)
        with _open_store(store) as m:
            res = Retriever(m, namespace, params=RetrieveParams(k=k),
                            embedder="auto").find(sig)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(res.to_json(), indent=2) + "\n")
    else:
        Console().print(Text(res.render()))


@app.command("show")
def show_command(
    episode: str = typer.Argument(..., help="Row id or episode id."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="JSON instead of YAML."),
) -> None:
    """Print one stored episode."""
    from analogist.signature import dump_signature

    try:
        with _open_store(store) as m:
            key: int | str = int(episode) if episode.isdigit() else episode
            ep = m.get(key, namespace)
            if ep is None:
                raise AnalogistError(f"no episode {episode!r} in namespace {namespace!r}")
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(dump_signature(ep.signature, "json" if as_json else "yaml").rstrip())
    if ep.superseded_by is not None:
        typer.echo(f"# superseded by {ep.superseded_by}", err=True)


@app.command("list")
def list_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    all_: bool = typer.Option(False, "--all", help="Include superseded episodes."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """List stored episodes."""
    try:
        with _open_store(store) as m:
            eps = m.list(namespace, include_superseded=all_)
    except AnalogistError as e:
        _fail(str(e))
    rows = [{"id": e.id, "episode_id": e.episode_id, "kind": e.kind,
             "domain": e.signature.surface.domain, "superseded_by": e.superseded_by}
            for e in eps]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    t = Table(title=f"namespace {namespace!r}: {len(rows)} episode(s)", title_justify="left")
    for col in ("id", "episode_id", "kind", "domain", "superseded_by"):
        t.add_column(col)
    for r in rows:
        t.add_row(*(str(r[c]) if r[c] is not None else "" for c in r))
    Console().print(t)


@app.command("delete")
def delete_command(
    episode: str = typer.Argument(..., help="Row id or episode id."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
) -> None:
    """Delete one stored episode."""
    try:
        with _open_store(store) as m:
            key: int | str = int(episode) if episode.isdigit() else episode
            if not m.delete(key, namespace):
                raise AnalogistError(f"no episode {episode!r} in namespace {namespace!r}")
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"deleted {episode}")


@app.command("log")
def log_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    limit: int = typer.Option(20, "--limit", min=1),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """The latest analogy attempts (every find writes one row)."""
    try:
        with _open_store(store) as m:
            rows = m.log(namespace, limit)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        return
    t = Table(title=f"analogy log, namespace {namespace!r}", title_justify="left")
    for col in ("id", "created_at", "target", "verdict", "score", "transferred"):
        t.add_column(col)
    for r in rows:
        target = r.get("target") or {}
        t.add_row(str(r.get("id")), str(r.get("created_at")),
                  str(target.get("episode_id") if isinstance(target, dict) else target),
                  str(r.get("verdict")), f"{r['score']:.3f}" if r.get("score") is not None
                  else "", str(r.get("transferred")))
    Console().print(t)


DEMO_MECHANISMS = ("stale_derived_copy", "retry_storm", "proxy_optimisation",
                   "cascade_shared_dependency", "observer_failure_as_state_failure",
                   "alarm_fatigue")


@app.command("demo")
def demo_command(
    targets: int = typer.Option(4, "--targets", min=1, max=12,
                                help="How many targets to run."),
    k: int = typer.Option(3, "--k", min=1, help="Analogues reported per target."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Load the bundled casebook into a temporary store and find cross-domain analogues.

    For each target (a casebook episode taken out of the store) the retriever must find the
    same mechanism in another domain; the report shows the mapping and what transfers.
    """
    import tempfile

    from rich.progress import Progress

    from analogist.casebook import load_casebook
    from analogist.memory.sqlite import Memory
    from analogist.retrieve import RetrieveParams, Retriever

    console = Console()
    try:
        entries = load_casebook()
        by_mech: dict[str, list[Any]] = {}
        for e in entries:
            if e.decoy_of is None:
                by_mech.setdefault(e.mechanism, []).append(e)
        order = [m for m in DEMO_MECHANISMS if m in by_mech] + sorted(
            m for m in by_mech if m not in DEMO_MECHANISMS)
        picked = [by_mech[m][0] for m in order][:targets]
        out: list[dict[str, Any]] = []
        from analogist.index.embed import default_embedder
        from analogist.retrieve import level_embeddings

        embedder = default_embedder()
        with tempfile.TemporaryDirectory() as tmp, Memory.open(Path(tmp) / "demo.db") as m:
            with Progress(transient=True, console=console) as bar:
                task = bar.add_task("loading the casebook", total=len(entries))
                m.add_many([e.signature for e in entries], namespace="demo", batch_size=25,
                           progress=lambda n: bar.update(task, completed=n),
                           embed=lambda s: level_embeddings(s, embedder))
            domain_of = {e.id: e.domain for e in entries}
            mech_of = {e.id: e.mechanism for e in entries}
            for target in picked:
                m.delete(target.id, "demo")  # the target is the new situation, not a memory
                res = Retriever(m, "demo", params=RetrieveParams(k=k),
                                embedder=embedder).find(target.signature)
                best = res.results[0] if res.results else None
                out.append({
                    "target": target.id, "target_domain": target.domain,
                    "mechanism": target.mechanism,
                    "best": None if best is None else best.episode_id,
                    "best_domain": None if best is None else domain_of.get(best.episode_id),
                    "same_mechanism": bool(best and mech_of.get(best.episode_id)
                                           == target.mechanism),
                    "result": res.to_json()})
                if not as_json:
                    console.rule(f"target {target.id} ({target.domain})")
                    console.print(Text(target.signature.levels.L1 or
                                       target.signature.levels.L0 or ""))
                    if best is not None:
                        console.print(Text(
                            f"best analogue: {best.episode_id} from "
                            f"{domain_of.get(best.episode_id)} "
                            f"(mechanism {mech_of.get(best.episode_id)}; target's: "
                            f"{target.mechanism})"))
                    console.print(Text(res.render()))
                m.add(target.signature, namespace="demo",
                      embeddings=level_embeddings(target.signature, embedder))
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        ok = sum(1 for o in out if o["same_mechanism"] and o["best_domain"] != o["target_domain"])
        console.print(f"\n{ok} of {len(out)} targets: best analogue has the same mechanism in "
                      "another domain.")


if __name__ == "__main__":  # pragma: no cover
    app()


# -- benchmarks ---------------------------------------------------------------------------------
bench_app = typer.Typer(help="Benchmarks (PARB: seed 000 §14–16, issue 4).", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


@bench_app.command("parb")
def bench_parb_command(
    items: int = typer.Option(320, "--items", min=1, help="Number of generated items."),
    arms: str = typer.Option("B,B',C,C',H,D,E,G,A0,A1", "--arms",
                             help="Comma-separated arms (A0/A1 need an LLM: reported skipped)."),
    representation: str = typer.Option("oracle", "--representation",
                                       help="oracle (gold signatures) or encoded."),
    split: str = typer.Option("both", "--split", help="dev, test or both."),
    seed: int = typer.Option(0, "--seed", help="Item-generation and bootstrap seed."),
    out: Path = typer.Option(Path("parb_out"), "--out", help="Output directory."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Run the PARB benchmark: every arm on every item; writes results.json and report.md."""
    from analogist.bench.parb.runner import ENCODED_SKIP_REASON, run_parb

    if representation == "encoded":
        typer.echo(f"error: --representation encoded: {ENCODED_SKIP_REASON}. Nothing written.",
                   err=True)
        raise typer.Exit(EXIT_BAD_INPUT)
    if representation != "oracle":
        _fail(f"--representation must be 'oracle' or 'encoded', got {representation!r}")
    if split not in ("dev", "test", "both"):
        _fail(f"--split must be dev, test or both, got {split!r}")
    names = [a.strip() for a in arms.split(",") if a.strip()]
    try:
        res = run_parb(items, names, representation=representation, split=split, seed=seed,
                       out_dir=out, progress=progress)
    except (AnalogistError, ValueError) as e:
        _fail(str(e))
    for sp, data in res["splits"].items():
        for a, m in (data.get("arms") or {}).items():
            typer.echo(f"{sp:4s} {a:3s} NAV {m['nav']:+.3f} CI [{m['nav_ci'][0]:+.3f}, "
                       f"{m['nav_ci'][1]:+.3f}]")
        for h, v in (data.get("hypotheses") or {}).items():
            typer.echo(f"{sp:4s} {h}: {v['verdict']}")
    typer.echo(f"wrote {out}/results.json and {out}/report.md")
