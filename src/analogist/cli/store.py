"""The store commands: ``init``, ``add`` (signatures, or texts with ``--from-text``), ``show``,
``list``, ``delete`` and ``log``; ``store place`` and ``store placements`` (a
PostgreSQL store partitioned across servers)."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path
from typing import Any

import typer

from analogist.cli.base import (
    NAMESPACE_HELP,
    STORE_HELP,
    _fail,
    _open_store,
    _with_store,
    app,
    default_store_path,
    make_app,
    progress_bar,
)
from analogist.cli.encode import _encode_files
from analogist.errors import AnalogistError
from analogist.llm.base import DEFAULT_WRITER


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
    from_text: bool = typer.Option(False, "--from-text",
                                   help="The files are episode texts (one episode per file): "
                                        "write each one's signature first (see --writer)."),
    writer: str = typer.Option(DEFAULT_WRITER, "--writer",
                               help="With --from-text: deterministic (offline default) or llm."),
    domain: str | None = typer.Option(None, "--domain",
                                      help="With --from-text: the episodes' surface domain."),
) -> None:
    """Store episodes (bulk, one transaction per batch, with a progress bar)."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.bulk import iter_records
    from analogist.signature import (
        _validate_plain,
        check_vocabulary,
        default_signature_vocabulary,
    )

    try:
        vocab = default_signature_vocabulary()
        proposed: dict[str, dict[str, Any]] = {}
        encoded = _encode_files(files, writer, domain, proposed) if from_text else None
        # the signatures validated by the check pass are held for the store pass (texts are
        # held anyway): the files within HELD_BYTES, in order; only the files beyond are read
        # (and validated) a second time
        n_held = len(files) if encoded is not None else _files_to_hold(files)

        def checked() -> Any:
            if encoded is not None:
                yield from ((True, where, rec) for where, rec in encoded)
                return
            for k, f in enumerate(files):
                yield from ((k < n_held, where, rec) for where, rec in iter_records(f))

        held: list[Any] = []
        n_records = 0
        episode_ids: set[str] = set()
        for hold, where, rec in checked():
            try:
                # validated as validate_signature validates it, held as plain values
                sig = _validate_plain(rec, source=where)
                # unknown relations become proposed terms (with a warning; the writers' own
                # proposals are recorded below instead); a wrong arity is an error here,
                # before anything is stored
                with warnings.catch_warnings():
                    if from_text:
                        warnings.simplefilter("ignore")
                    check_vocabulary(sig, vocab)
            except AnalogistError as e:
                if e.source is None:
                    e = type(e)(e.message, source=where, line=e.line, field=e.field)
                raise e from None
            if sig.episode_id in episode_ids:
                raise AnalogistError(f"episode {sig.episode_id!r} appears twice in the input",
                                     source=where, field="episode_id")
            n_records += 1
            episode_ids.add(sig.episode_id)
            if hold:
                held.append(sig)
        if not n_records:
            raise AnalogistError("no episodes in the input; expected a signature, a list of "
                                 "them or {episodes: [...]}", source=str(files[0]))
        rest = (rec for f in files[n_held:] for _where, rec in iter_records(f))
        with make_app(store, namespace=namespace, embeddings=embed) as api, \
                progress_bar() as bar:
            api.memory().check_new(episode_ids, namespace=namespace)  # before anything is stored
            task = bar.add_task("adding", total=n_records)
            # the held signatures are stored as validated (not validated again)
            ids = api.add_many(itertools.chain(held, rest), batch_size=batch_size,
                               progress=lambda n: bar.update(task, completed=n),
                               validated=True)
            n_terms = _record_proposed(api.memory(), proposed, namespace) if proposed else 0
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"added {len(ids)} episode(s) to namespace {namespace!r}"
               + (f"; {n_terms} proposed term(s) recorded in the vocabulary" if n_terms else ""))


HELD_BYTES = 16 << 20
"""``analogist add`` holds the signatures it validated of the bulk files up to this many bytes
(in order, whole files) for storing them; files beyond are read and validated again instead
(a validated signature takes about eight times the bytes of its JSON text)."""


def _files_to_hold(files: list[Path]) -> int:
    """How many of ``files``, from the first, fit in :data:`HELD_BYTES` together."""
    total = 0
    for k, f in enumerate(files):
        try:
            total += f.stat().st_size
        except OSError:
            return k  # reading it will say what is wrong
        if total > HELD_BYTES:
            return k
    return len(files)


def _record_proposed(m: Any, proposed: dict[str, dict[str, Any]], namespace: str) -> int:
    """Record writers' new relations in the store's vocab table as ``proposed`` (with their
    one-line definitions); declared terms are left alone, counts accumulate."""
    have = {t["name"]: t for t in m.terms(namespace)}
    n = 0
    for name, t in sorted(proposed.items()):
        old = have.get(name)
        if old is not None and old["status"] != "proposed":
            continue
        m.put_term(name, kind="relation" if t["arity"] >= 2 else "attribute", arity=t["arity"],
                   definition=t["definition"], status="proposed",
                   count=(old["count"] if old else 0) + t["uses"], namespace=namespace)
        n += 1
    return n

@app.command("show")
def show_command(
    episode: str = typer.Argument(..., help="Row id or episode id."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="JSON instead of YAML."),
) -> None:
    """Print one stored episode."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.signature import dump_signature

    try:
        with make_app(store, namespace=namespace) as api:
            ep = api.episode(episode)
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
    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.table import Table
    eps = _with_store(store, lambda m: m.list(namespace, include_superseded=all_))
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
        with make_app(store, namespace=namespace) as api:
            row = api.delete(episode)
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"deleted {row.episode_id} (id {row.id})")


@app.command("log")
def log_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    limit: int = typer.Option(20, "--limit", min=1),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """The latest analogy attempts (every find writes one row)."""
    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.table import Table
    rows = _with_store(store, lambda m: m.log(namespace, limit))
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        return
    t = Table(title=f"analogy log, namespace {namespace!r}", title_justify="left")
    for col in ("id", "created_at", "target", "verdict", "similarity", "transferred"):
        t.add_column(col)
    for r in rows:
        target = r.get("target") or {}
        t.add_row(str(r.get("id")), str(r.get("created_at")),
                  str(target.get("episode_id") if isinstance(target, dict) else target),
                  str(r.get("verdict")), f"{r['score']:.3f}" if r.get("score") is not None
                  else "", str(r.get("transferred")))
    Console().print(t)


store_app = typer.Typer(help="Where a PostgreSQL store's namespaces live: partitions on other "
                             "PostgreSQL servers (declarative partitioning and postgres_fdw).",
                        no_args_is_help=True)
app.add_typer(store_app, name="store")


@store_app.command("place")
def place_command(
    namespace: str = typer.Argument(..., help="The namespace to place."),
    server: list[str] = typer.Option(..., "--server",
                                     help="postgresql:// URL of a database on another server; "
                                          "give it several times to spread the namespace over "
                                          "them by hash of the episode's row id."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP + " Here: the "
                                      "PostgreSQL store (the coordinator)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Put a namespace of a PostgreSQL store on other PostgreSQL servers (its stored episodes
    move there in one transaction; every command keeps using the store's URL)."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.memory.pg_partition import place

    placed = _with_store(store, lambda m: place(m, namespace, server))
    if as_json:
        typer.echo(json.dumps(placed, indent=2))
        return
    how = "by hash over " if len(placed["servers"]) > 1 else "on "
    typer.echo(f"namespace {namespace!r} placed {how}{', '.join(placed['servers'])}")


@store_app.command("placements")
def placements_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Which namespaces of a PostgreSQL store live on other servers (the rest stay in the
    store's own database)."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.memory.pg_partition import placements

    rows = _with_store(store, placements)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.table import Table

    t = Table(title=f"{len(rows)} placed namespace(s)", title_justify="left")
    for col in ("namespace", "servers", "placed_at"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["namespace"], ", ".join(r["servers"]), r["placed_at"])
    Console().print(t)
