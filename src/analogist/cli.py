"""The ``analogist`` command line: a thin shell over the library (no algorithm here).

Every :class:`~analogist.errors.AnalogistError` is printed on stderr as one message naming the file
(and line or field) and the command exits with status 2, without a traceback.
"""

from __future__ import annotations

import json
import re
import sys
import time
import warnings
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
    warnings.showwarning = _note_warning


def _note_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """A Python warning reaches a user as one line, ``note: …`` (never a source excerpt)."""
    typer.echo(f"note: {str(message).splitlines()[0] if str(message) else category.__name__}",
               err=True)


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


def _with_store(store: Path | None, fn: Any) -> Any:
    """``fn(memory)`` on the opened store; an AnalogistError exits 2 with its message."""
    try:
        with _open_store(store) as m:
            return fn(m)
    except AnalogistError as e:
        _fail(str(e))


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


# -- LLM and writers -------------------------------------------------------------------------------

def _provider(role: str = "writer") -> Any:
    """The configured LLM provider for ``role``, or None (the LLM is optional)."""
    from analogist.llm.client import default_provider

    return default_provider(role)


def _no_llm_reason() -> str:
    from analogist.llm.base import NO_LLM_REASON

    return NO_LLM_REASON


def _make_writer(writer: str) -> Any:
    if writer == "deterministic":
        from analogist.encode.deterministic import DeterministicEncoder

        return DeterministicEncoder()
    if writer == "llm":
        provider = _provider()
        if provider is None:
            raise AnalogistError("--writer llm: " + _no_llm_reason())
        from analogist.encode.llm_writer import LLMWriter

        return LLMWriter(provider)
    raise AnalogistError(f"--writer must be 'deterministic' or 'llm', got {writer!r}")


def _read_episode_text(arg: str) -> tuple[str, str]:
    """``arg`` is a file path (read, size-capped) or the episode text itself."""
    from analogist.io import read_text

    p = Path(arg)
    looks_like_path = len(arg) < 4096 and "\n" not in arg
    try:
        is_file = looks_like_path and p.is_file()
    except OSError:                     # e.g. a name too long to be a path: it is the text
        is_file = False
    if is_file:
        return read_text(p), str(p)
    if looks_like_path and (p.suffix.lower() in (".txt", ".md") or "/" in arg) and \
            len(arg.split()) == 1:
        raise AnalogistError("no such file (give a path to a text file, or the text itself)",
                             source=arg)
    return arg, "<text>"


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
    writer: str = typer.Option("deterministic", "--writer",
                               help="With --from-text: deterministic (offline default) or llm."),
    domain: str | None = typer.Option(None, "--domain",
                                      help="With --from-text: the episodes' surface domain."),
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
        records: list[tuple[str, Any]] = []
        proposed: dict[str, dict[str, Any]] = {}
        if from_text:
            records = _encode_files(files, writer, domain, proposed)
        else:
            for f in files:
                records.extend(_records(f))
        for where, rec in records:
            try:
                sig = validate_signature(rec, source=where)
                # unknown relations become proposed terms (with a warning; the writers' own
                # proposals are recorded below instead); a wrong arity is an error here,
                # before anything is stored
                with warnings.catch_warnings():
                    if from_text:
                        warnings.simplefilter("ignore")
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
            n_terms = _record_proposed(m, proposed, namespace) if proposed else 0
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"added {len(ids)} episode(s) to namespace {namespace!r}"
               + (f"; {n_terms} proposed term(s) recorded in the vocabulary" if n_terms else ""))


def _episode_id_for(path: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9_\-]+", "_", path.stem).strip("_") or "episode"
    return stem if stem[0].isalpha() else f"ep_{stem}"


def _encode_files(files: list[Path], writer: str, domain: str | None,
                  proposed: dict[str, dict[str, Any]] | None = None) -> list[tuple[str, Any]]:
    """Write a signature for each text file (each seen alone); all before anything is stored.

    ``proposed`` collects the writers' proposed terms: name → {definition, arity, uses}."""
    from rich.progress import Progress

    from analogist.io import read_text

    w = _make_writer(writer)
    out: list[tuple[str, Any]] = []
    refused: list[str] = []
    t0 = time.perf_counter()
    with Progress(transient=True) as bar:
        task = bar.add_task("encoding", total=len(files))
        for f in files:
            try:        # every file is read; each bad one is named, and then nothing is stored
                res = w.encode(read_text(f), episode_id=_episode_id_for(f), domain=domain,
                               source=str(f))
            except AnalogistError as e:
                refused.append(str(e) if e.source else f"{f}: {e}")
                bar.update(task, advance=1)
                continue
            out.append((str(f), res.signature.to_data()))
            if proposed is not None:
                arity = {a.predicate: len(a.args) for _w, a in res.signature.atoms()}
                for name, definition in res.proposed_terms.items():
                    t = proposed.setdefault(name, {"definition": definition,
                                                   "arity": arity.get(name, 2), "uses": 0})
                    t["uses"] += 1
            bar.update(task, advance=1)
    if refused:
        raise AnalogistError(f"{len(refused)} of {len(files)} text(s) refused, nothing stored:\n"
                             + "\n".join(f"  {r}" for r in refused))
    dt = time.perf_counter() - t0
    typer.echo(f"note: encoded {len(files)} text(s) in {dt:.1f} s "
               f"({len(files) / max(dt, 1e-9):.2f} texts/s)", err=True)
    return out


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


def _abstraction_checks(text: str, sig: Any, domain: str | None) -> dict[str, Any]:
    """Seed 000 §9's two checks for one episode, against the bundled casebook.

    Faithfulness: given only L2, the judge picks the episode's text among it and five casebook
    texts (seeded). De-surfacing: given only L2, the judge guesses a domain among the casebook's
    domains (and ``domain``, if given). Both with the offline embedding judge, and with the LLM
    judge when one is configured (else reported skipped)."""
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
    writer: str = typer.Option("deterministic", "--writer",
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
    rows = _with_store(store, lambda m: m.log(namespace, limit))
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
                                       help="oracle (gold signatures) or encoded (every "
                                            "episode re-written from its text)."),
    writer: str = typer.Option("deterministic", "--writer",
                               help="encoded representation: deterministic or llm."),
    split: str = typer.Option("both", "--split", help="dev, test or both."),
    seed: int = typer.Option(0, "--seed", help="Item-generation and bootstrap seed."),
    out: Path = typer.Option(Path("parb_out"), "--out", help="Output directory."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    llm: bool = typer.Option(True, "--llm/--no-llm",
                             help="Use the configured LLM (if any) for A0/A1 and E's critic."),
) -> None:
    """Run the PARB benchmark: every arm on every item; writes results.json and report.md."""
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


# -- foresight (seed 001, issue 6) -----------------------------------------------------------
foresight_app = typer.Typer(help="Foresight with historical analogies (seed 001, CANA): "
                                 "find analogies by mechanism, confirm hidden factors across "
                                 "independent analogies, write the Structural Analogy Brief.",
                            no_args_is_help=True)
app.add_typer(foresight_app, name="foresight")


def _foresight_params(rounds: int, per_round: int, carryover: int, pi: float | None,
                      q: float | None, p: float | None, delta: float, min_fidelity: float,
                      calibration: str) -> Any:
    """Loop settings: the bundled calibration unless π, q or p is given or --calibration says
    otherwise (``none`` or a calibration JSON file)."""
    from analogist.foresight.calibrate import bundled_calibration, load_calibration
    from analogist.foresight.confirm import ConfirmParams
    from analogist.foresight.loop import ForesightParams

    homogeneous = any(x is not None for x in (pi, q, p))
    if homogeneous and calibration not in ("bundled", "none"):
        raise AnalogistError("give either --calibration FILE or --pi/--q/--p, not both")
    cal = None
    if not homogeneous and calibration == "bundled":
        cal = bundled_calibration("cana")
    elif not homogeneous and calibration != "none":
        cal = load_calibration(Path(calibration), "cana")
    confirm = ConfirmParams(pi=0.5 if pi is None else pi, q=0.9 if q is None else q,
                            p=0.2 if p is None else p, delta=delta)
    return ForesightParams(rounds=rounds, per_round=per_round, carryover=carryover,
                           min_fidelity=min_fidelity, confirm=confirm, calibration=cal)


def _foresight_embedder() -> Any:
    """The offline text embedder for MAC's text channel (numpy-only, bundled weights)."""
    from analogist.index.embed import default_embedder

    return default_embedder()


def _resolve_target(target: str, corpus_path: Path | None) -> Any:
    """(event, corpus): a path to an event file (read first, so its errors come first), or the
    id, name or alias of a corpus event."""
    from analogist.foresight.event import load_corpus, load_event

    path = Path(target)
    if path.suffix.lower() in (".yaml", ".yml", ".json") or path.exists():
        ev = load_event(path)
        return ev, load_corpus(corpus_path)
    corpus = load_corpus(corpus_path)
    ev = corpus.lookup(target)
    if ev is None:
        close = corpus.search(target)
        if len(close) == 1:
            return close[0], corpus
        hint = (" — did you mean " + ", ".join(f"{e.event_id} ({e.name})" for e in close) + "?"
                if close else " (see 'analogist foresight events')")
        raise AnalogistError(f"{target!r} is neither an event file nor the id, name or alias of "
                             f"an event in the corpus{hint}")
    return ev, corpus


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
    llm: bool = typer.Option(True, "--llm/--no-llm", help="Ask the configured LLM (if any) for "
                                                          "candidate analogies from its own "
                                                          "knowledge (labelled parametric)."),
    rounds: int = typer.Option(3, "--rounds", min=0, help="R: reflection rounds after round 0."),
    per_round: int = typer.Option(8, "--per-round", min=1, help="K: candidates per round."),
    carryover: int = typer.Option(8, "--carryover", min=0, help="M: analogies carried over."),
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
    from analogist.foresight.brief import brief_json, brief_markdown, write_brief
    from analogist.foresight.event import event_from_signature
    from analogist.foresight.loop import run_foresight

    notes: list[str] = []
    try:
        params = _foresight_params(rounds, per_round, carryover, pi, q, p, delta, min_fidelity,
                                   calibration)
        tev, corpus = _resolve_target(target, corpus_path)
        tv = tev.at_cutoff(cutoff)
        pool = [e for e in corpus.events if e.event_id != tev.event_id]
        if store is not None:
            if not store.exists():
                raise AnalogistError("store file not found", source=str(store))
            with _open_store(store) as m:
                for row in m.list(namespace):
                    ev = event_from_signature(row.signature)
                    if ev is not None and ev.event_id not in {x.event_id for x in pool}:
                        pool.append(ev)
        gen = None
        if llm:
            prov = _provider("parametric")
            if prov is None:
                notes.append("parametric candidates: " + _no_llm_reason())
            else:
                from analogist.foresight.llm import ParametricGenerator

                gen = ParametricGenerator(prov, corpus=corpus)
        from rich.progress import Progress

        with Progress(transient=True, disable=as_json) as bar:
            task = bar.add_task("foresight rounds", total=rounds + 1)
            res = run_foresight(tv, pool, params=params, corpus=corpus, generate=gen,
                                progress=lambda i, n: bar.update(task, completed=i),
                                embedder=_foresight_embedder())
        if notes:
            from dataclasses import replace

            res = replace(res, skipped=(*res.skipped, *notes))
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
    try:
        ev, _ = _resolve_target(event, corpus_path)
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
        from rich.progress import Progress

        with Progress(disable=not progress) as bar:
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
        from rich.progress import Progress

        with Progress(disable=not progress) as bar:
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


# -- the analogy safeguard (issue 7) ---------------------------------------------------------------

@app.command("check")
def check_command(
    input_path: str = typer.Argument(..., metavar="INPUT",
                                     help="A debate turn: a JSON file ({arguments, "
                                          "historical_wisdom}), a plain-text file, or - for "
                                          "stdin."),
    mode: str | None = typer.Option(None, "--mode", help="strict or advisory: force one mode "
                                                         "for every analogy (default: strict "
                                                         "for arguments, advisory for "
                                                         "historical_wisdom)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
    as_text: bool = typer.Option(False, "--text", help="Read INPUT as plain text even when it "
                                                       "looks like JSON."),
    llm: bool = typer.Option(True, "--llm/--no-llm", help="Use the configured LLM (role "
                                                          "'safeguard'), if any, to find "
                                                          "analogies in plain text and to "
                                                          "estimate the content share."),
) -> None:
    """Check the historical and classical analogies of a debate turn (seed 003): at least two
    structural, causally relevant similarities, at least one substantive difference, analogy
    content under ~15% (flagged, not failed). Exit status: 0 when every analogy passes (or there
    is none), 1 when at least one fails, 2 on bad input. A content-share flag alone does not
    change the exit status."""
    from analogist.io import MAX_FILE_BYTES, read_text
    from analogist.safeguard import Safeguard, load_turn

    if mode is not None and mode not in ("strict", "advisory"):
        _fail(f"--mode must be strict or advisory, got {mode!r}")
    try:
        if input_path == "-":
            raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
            if len(raw) > MAX_FILE_BYTES:
                raise AnalogistError(f"input is over the limit of {MAX_FILE_BYTES} bytes",
                                     source="<stdin>")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise AnalogistError("not valid UTF-8 text", source="<stdin>",
                                     line=raw[: e.start].count(b"\n") + 1) from None
            source = "<stdin>"
        else:
            text = read_text(Path(input_path))
            source = input_path
        if not text.strip():
            raise AnalogistError("the input is empty; expected a debate turn (JSON or text)",
                                 source=source)
        turn = text if as_text else load_turn(text, source=source)
        provider = _provider("safeguard") if llm else None
        report = Safeguard(provider).check(turn, mode=mode)  # type: ignore[arg-type]
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")
        for s in report.skipped:
            typer.echo(s, err=True)
    else:
        sys.stdout.write(report.render())
    raise typer.Exit(0 if report.all_pass else 1)


# -- issue 10: consolidation, triggers, plans (appended block) -----------------------------

@app.command("consolidate")
def consolidate_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help="Compute without writing."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Induce schemas from episodes that map well, merge vocabulary synonyms, report vocabulary
    health and re-abstract episodes lacking levels (seed 000 §9), in one transaction."""
    from analogist.consolidate import consolidate

    rep = _with_store(store, lambda m: consolidate(m, namespace, dry_run=dry_run))
    if as_json:
        typer.echo(json.dumps(rep.to_json(), ensure_ascii=False, indent=2))
    else:
        typer.echo(rep.render())


triggers_app = typer.Typer(help="Trigger policy for analogy (seed 000 §10).",
                           no_args_is_help=True)
app.add_typer(triggers_app, name="triggers")


@triggers_app.command("check")
def triggers_check_command(
    action_log: Path = typer.Argument(..., help="Action log (JSON or YAML)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    record: bool = typer.Option(False, "--record",
                                help="Record the firing in the store's analogy log (and read "
                                     "today's tier-2 spending from it)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Which tier (0/1/2) the action log calls for, and the triggers that fired."""
    from analogist.triggers import decide, decide_and_record, load_action_log

    try:
        log = load_action_log(action_log)
        log_id = None
        if record:
            with _open_store(store) as m:
                d, log_id = decide_and_record(m, log, namespace=namespace)
        else:
            d = decide(log)
    except AnalogistError as e:
        _fail(str(e))
    out = {**d.to_json(), "log_id": log_id}
    if as_json:
        typer.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    typer.echo(f"tier: {'none' if d.tier is None else d.tier}"
               + (" (tier 2 blocked by the daily token budget)" if d.budget_blocked else ""))
    for t, why in sorted(d.fired.items()):
        typer.echo(f"  {t}: {why}")
    for t, why in sorted(d.weak.items()):
        typer.echo(f"  (weak, no tier) {t}: {why}")


@triggers_app.command("fit")
def triggers_fit_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Per-trigger useful-analogy and negative-transfer rates from logged outcomes."""
    from analogist.triggers import fit_triggers

    res = _with_store(store, lambda m: fit_triggers(m, namespace))
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False, indent=2))
        return
    typer.echo(f"{res['firings']} firing(s) in namespace {namespace!r}")
    for t, s in res["triggers"].items():
        ur = "n/a" if s["useful_rate"] is None else f"{s['useful_rate']:.2f}"
        nr = "n/a" if s["negative_rate"] is None else f"{s['negative_rate']:.2f}"
        typer.echo(f"  {t}{' (weak)' if s['weak'] else ''}: {s['firings']} firing(s), "
                   f"{s['with_outcome']} with outcome; useful {ur}, negative transfer {nr}")


plans_app = typer.Typer(help="Role-parameterised plans and macros (seed 000 §12).",
                        no_args_is_help=True)
app.add_typer(plans_app, name="plans")


@plans_app.command("add")
def plans_add_command(
    plan_file: Path = typer.Argument(..., help="Plan (JSON or YAML)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
) -> None:
    """Store a role-parameterised plan."""
    from analogist.plans import load_plan, store_plan

    try:
        plan = load_plan(plan_file)
        with _open_store(store) as m:
            pid = store_plan(m, plan, namespace=namespace)
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"stored plan {plan.name!r} as id {pid}")


@plans_app.command("list")
def plans_list_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """List stored plans and macros with their reuse record."""
    from analogist.plans import review_plans

    res = _with_store(store, lambda m: review_plans(m, namespace=namespace, apply=False))
    if as_json:
        typer.echo(json.dumps(res["plans"], ensure_ascii=False, indent=2))
        return
    for p in res["plans"]:
        rate = "n/a" if p["reuse_success_rate"] is None else f"{p['reuse_success_rate']:.2f}"
        typer.echo(f"{p['id']}  {p['name']}  [{p['status']}]  independent successes "
                   f"{p['independent_successes']}, reuse success {rate} "
                   f"({p['reuse_outcomes']} outcome(s))")


@plans_app.command("match")
def plans_match_command(
    target_file: Path = typer.Argument(..., help="Target signature (JSON or YAML)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    task: str | None = typer.Option(None, "--task",
                                    help="Log the offer of the best plan for this task id."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Instantiate the best-matching plan for a target, gaps marked (or say: plan from
    scratch)."""
    from analogist.plans import instantiate, offer, retrieve_plans
    from analogist.signature import load_signature

    try:
        target = load_signature(target_file)
        with _open_store(store) as m:
            found = retrieve_plans(m, target, namespace=namespace, k=1)
            inst = instantiate(found[0].plan, target) if found else None
            use_id = (offer(m, found[0].plan_id, inst, task=task, namespace=namespace)
                      if found and inst is not None and task else None)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps({"plan": found[0].to_json() if found else None,
                               "instantiation": inst.to_json() if inst else None,
                               "use_id": use_id}, ensure_ascii=False, indent=2))
        return
    typer.echo(inst.render() if inst else "no stored plan maps onto this target: plan from "
               "scratch")


@plans_app.command("review")
def plans_review_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Promote plans with two independent successful reuses to macros; retire macros that do
    worse than planning from scratch."""
    from analogist.plans import review_plans

    res = _with_store(store, lambda m: review_plans(m, namespace=namespace))
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False, indent=2))
        return
    typer.echo(f"promoted: {', '.join(res['promoted']) or 'none'}; "
               f"retired: {', '.join(res['retired']) or 'none'}")


@app.command("ledger")
def ledger_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """The negative-transfer ledger: analogy-driven actions against the no-analogy
    counterfactual."""
    from analogist.triggers import ledger_summary

    res = _with_store(store, lambda m: ledger_summary(m, namespace))
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False, indent=2))
        return
    rate = "n/a" if res["negative_transfer_rate"] is None else \
        f"{res['negative_transfer_rate']:.2f}"
    typer.echo(f"{res['entries']} entr(ies); with a counterfactual {res['with_counterfactual']}: "
               f"better {res['better']}, same {res['same']}, worse {res['worse']}; "
               f"negative-transfer rate {rate}")


# -- external analogy benchmarks (issue 8, item 5) ---------------------------------------------
@bench_app.command("external")
def bench_external_command(
    name: str = typer.Argument(..., metavar="NAME",
                               help="arn, analobench-t1, analobench-t2, storyanalogy, "
                                    "parallelparc-mc, parallelparc-binary, rattermann or "
                                    "historical."),
    path: str = typer.Argument(..., metavar="PATH",
                               help="The set's file, or the folder holding its files."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON only."),
    limit: int | None = typer.Option(None, "--limit", min=1,
                                     help="Evaluate a seeded subsample of this many items "
                                          "(rows for ParallelPARC)."),
    seed: int = typer.Option(0, "--seed", help="Subsampling, task-building and tie seed."),
    details: str | None = typer.Option(None, "--details",
                                       help="Also write per-item outcomes and paired "
                                            "statistics (JSON) to this file."),
) -> None:
    """Run a public analogy benchmark through analogist's pipeline (deterministic encoder + SME)
    and the surface baseline (embedding cosine); print accuracy (retrieval sets: MAP, MRR,
    hit@k) per condition with n and chance. No downloads: PATH holds the set's files."""
    from analogist.bench.external import external_command

    try:
        out = external_command(name, path, limit=limit, seed=seed, as_json=as_json,
                               details=details)
    except AnalogistError as e:
        _fail(str(e))
    sys.stdout.write(out)


# -- retrieval evaluation harness (issue 8; seed 002) ------------------------------------------
eval_app = typer.Typer(help="Retrieval evaluation harness (seed 002): pinned gold sets, repeated "
                            "runs, paired comparison with a stated noise floor.",
                       no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@eval_app.command("build")
def eval_build_command(
    store: Path | None = typer.Option(None, "--store", help="The SQLite store to derive from."),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    out: Path = typer.Option(..., "--out", help="Where to write the gold set (JSON)."),
    paraphrases: Path | None = typer.Option(None, "--paraphrases",
                                            help="Hand-written paraphrase queries: a JSON/YAML "
                                                 "list of {target, text}; machine-checked."),
) -> None:
    """Derive a pinned gold set (categories of seed 002 adapted to analogy) from a store."""
    from analogist.bench.harness.cli import eval_build

    try:
        gold = eval_build(store, namespace, out, paraphrases)
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
    from analogist.bench.harness.cli import eval_check

    try:
        problems = eval_check(gold, store, namespace)
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
    from analogist.bench.harness.cli import eval_run

    try:
        res = eval_run(gold, store, runs, retriever, out, namespace)
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
    from analogist.bench.harness.cli import eval_compare

    try:
        cmp, text = eval_compare(a, b, baseline=baseline, candidate=candidate, gold=gold,
                                 store=store, retriever=retriever, runs=runs, repo=repo,
                                 out=out)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(cmp, indent=2, sort_keys=True) + "\n")
    else:
        typer.echo(text)


# -- issue 9 (A): the HTTP API and its keys (appended block) -------------------------------

@app.command("serve")
def serve_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="TCP port."),
    max_body: int = typer.Option(1_000_000, "--max-body", min=1,
                                 help="Largest request body in bytes (413 above)."),
    rate: float = typer.Option(600.0, "--rate", help="Requests per minute per API key (429 "
                                                     "above); 0 turns the limit off."),
) -> None:
    """Serve the HTTP API (OpenAPI at /docs) over the store; keys from 'analogist keys add'."""
    from analogist.server import serve

    try:
        path = store or default_store_path()
        typer.echo(f"analogist API on http://{host}:{port} (store {path}; docs at /docs)",
                   err=True)
        serve(path, host=host, port=port, max_body_bytes=max_body, rate_per_minute=rate)
    except AnalogistError as e:
        _fail(str(e))


keys_app = typer.Typer(help="API keys of the HTTP API (hashed at rest, bound to namespaces).",
                       no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@keys_app.command("add")
def keys_add_command(
    name: str = typer.Argument(..., help="A name for the key (to list and revoke it)."),
    namespace: list[str] = typer.Option(..., "--namespace",
                                        help="A namespace the key may read and write "
                                             "(repeat for several)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Make an API key; the key is printed once and stored only as a salted hash."""
    from analogist.service.keys import keys_add

    try:
        path = store or default_store_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        token = keys_add(path, name, namespace)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps({"name": name, "namespaces": sorted(set(namespace)),
                               "key": token}))
    else:
        typer.echo(token)
        typer.echo(f"key {name!r} for namespace(s) {', '.join(sorted(set(namespace)))}; it is "
                   "shown only now — keep it safe", err=True)


@keys_app.command("list")
def keys_list_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """List API keys (names, namespaces, status; never the keys)."""
    from analogist.service.keys import keys_list

    try:
        rows = keys_list(store or default_store_path())
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        typer.echo(f"{r['name']}\t{','.join(r['namespaces'])}\t"
                   f"{'revoked ' + r['revoked_at'] if r['revoked'] else 'active'}\t"
                   f"{r['created_at']}")


@keys_app.command("revoke")
def keys_revoke_command(
    name: str = typer.Argument(..., help="The key's name."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """Revoke an API key (requests with it get 401 from then on)."""
    from analogist.service.keys import keys_revoke

    try:
        keys_revoke(store or default_store_path(), name)
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"revoked {name!r}")


# -- issue 9 (B): the MCP server (appended block) -------------------------------------------

@app.command("mcp")
def mcp_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace",
                                  help="The one namespace this server reads and writes."),
    transport: str = typer.Option("stdio", "--transport", help="stdio or http (streamable "
                                                               "HTTP at /mcp)."),
    host: str = typer.Option("127.0.0.1", "--host", help="With --transport http."),
    port: int = typer.Option(8765, "--port", help="With --transport http."),
    text_embedding: bool = typer.Option(True, "--text-embedding/--no-text-embedding",
                                        help="Use the offline text embedder as a MAC channel."),
    log_finds: bool = typer.Option(True, "--log-finds/--no-log-finds",
                                   help="Record find_analogy attempts in the analogy log "
                                        "(off: find_analogy is read-only)."),
    llm: bool = typer.Option(True, "--llm/--no-llm", help="Use the configured LLM, if any."),
    print_config: bool = typer.Option(False, "--print-config",
                                      help="Print the mcpServers entry for an MCP client and "
                                           "exit."),
) -> None:
    """Serve the memory to agents over MCP (stdio or streamable HTTP), scoped to one
    namespace: tools remember_episode, find_analogy, map_cases, foresight_brief,
    check_analogy; resources analogist://episodes, analogist://episodes/ID and
    analogist://reports/log, analogist://reports/last-brief."""
    from analogist.mcp import MCPParams, client_config, run_mcp

    path = store or default_store_path()
    if print_config:
        typer.echo(json.dumps(client_config(path.resolve(), namespace)))
        return
    try:
        run_mcp(path, namespace, transport=transport, host=host, port=port,
                params=MCPParams(text_embedding=text_embedding, log_finds=log_finds, llm=llm))
    except AnalogistError as e:
        _fail(str(e))
