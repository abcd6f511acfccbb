"""The typer app every command module registers on, and what the commands share: one-line errors,
store and namespace options, input loaders, the LLM provider and the episode writers."""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
import typer.core
from typer._click import exceptions as click_errors  # typer's own copy of click's errors

from analogist import __version__
from analogist.errors import AnalogistError
from analogist.llm.base import NO_LLM_REASON

if TYPE_CHECKING:
    from analogist.description import Description
    from analogist.vocabulary import Vocabulary

# -- help without rich's Markdown and Traceback modules -------------------------------------------
# typer renders help and usage errors with rich in ``typer.rich_utils`` (imported when one is
# shown), whose top imports ``rich.markdown`` (markdown-it) and ``rich.traceback`` (pygments) for
# markdown markup and pretty tracebacks: this CLI uses neither (plain markup, pretty exceptions
# off), yet they are a third of what ``analogist --help`` costs. While ``typer.rich_utils`` is
# being imported those two names are stand-ins whose classes load the real ones on first use, so
# nothing changes but when (if ever) they load; once it is imported the stand-ins are gone.


class _Deferred(type):
    """A stand-in class: calls, attributes and isinstance go to the real class, loaded on first
    use from ``cls._module``."""

    def _real(cls) -> Any:
        return getattr(importlib.import_module(cls._module), cls.__name__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls._real(), name)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._real())


class _StandIn(types.ModuleType):
    """A module whose every public name is a :class:`_Deferred` class of the real module."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Deferred(name, (), {"_module": self.__name__})


class _RichUtilsFinder:
    """Finds ``typer.rich_utils`` as usual and imports it with the two stand-ins in place."""

    DEFERRED = ("rich.markdown", "rich.traceback")

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "typer.rich_utils":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        exec_module = getattr(getattr(spec, "loader", None), "exec_module", None)
        if exec_module is None:
            return spec

        def exec_with_stand_ins(module: types.ModuleType) -> None:
            placed = [n for n in cls.DEFERRED if n not in sys.modules]
            for n in placed:
                sys.modules[n] = _StandIn(n)
            try:
                exec_module(module)
            finally:
                for n in placed:
                    if isinstance(sys.modules.get(n), _StandIn):
                        del sys.modules[n]

        spec.loader.exec_module = exec_with_stand_ins  # type: ignore[union-attr]
        return spec


if "typer.rich_utils" not in sys.modules and not any(
        isinstance(f, type) and f.__name__ == "_RichUtilsFinder" for f in sys.meta_path):
    sys.meta_path.insert(0, _RichUtilsFinder)

_LABELS = {"<str>": "TEXT", "<int>": "INTEGER", "<float>": "NUMBER", "<path>": "PATH",
           "<file>": "FILE", "<directory>": "DIR"}


def _plain_help(command: Any) -> None:
    """Help without typer's type placeholders: flags show no type, a value shows a plain
    upper-case name (TEXT, INTEGER, PATH), an argument its name (GOLD, not {gold})."""
    for param in getattr(command, "params", ()):
        if isinstance(param, typer.core.TyperArgument):
            name = param.metavar or (param.name or "arg").upper()
            usage = name if param.metavar and param.metavar.startswith("[") else (
                name if param.required else f"[{name}]")
            usage += "..." if param.nargs != 1 else ""
            param.metavar = name
            param._usage_display_name = lambda usage=usage: usage  # type: ignore[method-assign]
            param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
        elif isinstance(param, typer.core.TyperOption):
            if param.is_flag or param.name == "help":
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
            else:
                def plain(ctx: Any, param: Any = param) -> str | None:
                    label = typer.core.TyperOption.display_type(param, ctx)
                    return _LABELS.get(label, label.strip("<>").upper())
                param.display_type_rich = plain  # type: ignore[method-assign]
    make_help = command.get_help_option

    def help_option(ctx: Any, make_help: Any = make_help) -> Any:
        opt = make_help(ctx)
        if opt is not None:
            opt.display_type_rich = lambda ctx: None
        return opt
    command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        _plain_help(sub)


class _Group(typer.core.TyperGroup):
    """The command tree, its help rendered by :func:`_plain_help`, and click's own usage
    errors (an unknown option or command, a missing argument, a bad choice or value) printed
    as one line on stderr with exit status 2 instead of click's boxed usage block."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_help(self)

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click_errors.NoArgsIsHelpError as e:   # the help was printed: just exit
            sys.exit(e.exit_code)
        except click_errors.ClickException as e:
            typer.echo(f"error: {_usage_line(e)}", err=True)
            sys.exit(e.exit_code)
        except typer.Abort:
            typer.echo("error: aborted", err=True)
            sys.exit(1)
        # standalone click exits 0 after a command returns; an Exit raised inside a command
        # (typer.Exit) comes back as its exit code
        sys.exit(rv if isinstance(rv, int) and not isinstance(rv, bool) else 0)


def _usage_line(e: click_errors.ClickException) -> str:
    """A click error as one line: the command, the message, where help is."""
    msg = " ".join(e.format_message().split()).rstrip(".")
    ctx = getattr(e, "ctx", None)
    if ctx is None:
        return msg
    return f"{ctx.command_path}: {msg} (see '{ctx.command_path} --help')"


app = typer.Typer(
    cls=_Group,
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
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.notes import show_warnings_as_notes

    show_warnings_as_notes()


# -- loading inputs --------------------------------------------------------------------------

def load_description(path: Path, vocabulary: Vocabulary | None) -> Description:
    """Read a ``.dgr`` description or a Signature (``.json``/``.yaml``/``.yml``) file."""
    suffix = path.suffix.lower()
    if suffix in DGR_SUFFIXES:
        # the library loads inside the command, so that `analogist --help` starts at once
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
            # the library loads inside the command, so that `analogist --help` starts at once
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



# -- the analogical memory ------------------------------------------------------------------

STORE_HELP = ("SQLite store file (default: $ANALOGIST_STORE, else "
              "$XDG_DATA_HOME/analogist/store.db or ~/.local/share/analogist/store.db).")
NAMESPACE_HELP = "Namespace: a hard partition of the store."


def make_app(store: Path | None = None, **settings: Any) -> Any:
    """The application layer (:class:`analogist.app.Analogist`) over ``store`` (default: the
    environment's), with these :class:`~analogist.app.Settings` (None: not given)."""
    # the library loads only inside the commands that use it, so that --help starts at once
    from analogist.app import Analogist, Settings

    return Analogist(Settings.from_env(store=store, **settings))


def default_store_path() -> Path:
    from analogist.app import default_store_path as from_env  # the library, loaded on use

    return from_env()


def _open_store(store: Path | None) -> Any:
    """This command's connection to the store (a context manager: closed on exit)."""
    return make_app(store).memory()


def _with_store(store: Path | None, fn: Any) -> Any:
    """``fn(memory)`` on the opened store; an AnalogistError exits 2 with its message."""
    try:
        with _open_store(store) as m:
            return fn(m)
    except AnalogistError as e:
        _fail(str(e))


def _load_target(path: Path) -> Any:
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.signature import load_signature

    if path.suffix.lower() not in SIGNATURE_SUFFIXES:
        raise AnalogistError("the target must be a Signature .json, .yaml or .yml file",
                             source=str(path))
    return load_signature(path)


# -- LLM and writers -------------------------------------------------------------------------------

def _provider(role: str = "writer") -> Any:
    """The configured LLM provider for ``role``, or None (the LLM is optional)."""
    return make_app().provider(role)


def _no_llm_reason() -> str:
    return NO_LLM_REASON


def _make_writer(writer: str, app: Any = None) -> Any:
    if writer not in ("deterministic", "llm"):
        raise AnalogistError(f"--writer must be 'deterministic' or 'llm', got {writer!r}")
    app = app or make_app()
    if writer == "llm" and app.provider("writer") is None:
        raise AnalogistError("--writer llm: " + _no_llm_reason())
    return app.writer(writer)


def _read_episode_text(arg: str) -> tuple[str, str]:
    """``arg`` is a file path (read, size-capped) or the episode text itself."""
    # the library loads inside the command, so that `analogist --help` starts at once
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



def _episode_id_for(path: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9_\-]+", "_", path.stem).strip("_") or "episode"
    return stem if stem[0].isalpha() else f"ep_{stem}"


def progress_bar(*, enabled: bool = True, transient: bool = True) -> Any:
    """A rich progress bar for a long command: on stderr (stdout stays the command's output,
    JSON included: the bar never redirects it), with the count, the elapsed and the remaining
    time; silent when stderr is not a terminal or ``enabled`` is False (``--no-progress``)."""
    if not enabled or not _stderr_is_terminal():
        return _Silent()
    # rich loads only when there is a display to draw
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                    MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                    console=console, transient=transient, redirect_stdout=False,
                    redirect_stderr=False, disable=not enabled or not console.is_terminal)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


class _Silent:
    """What :func:`progress_bar` gives when there is no display: the calls of a rich
    ``Progress`` that the commands make, doing nothing (rich is not loaded for it)."""

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, *args: Any, **kwargs: Any) -> int:
        return 0

    def update(self, task: int, *args: Any, **kwargs: Any) -> None:
        return None

    def advance(self, task: int, advance: float = 1) -> None:
        return None


@contextlib.contextmanager
def working(what: str, *, enabled: bool = True) -> Iterator[None]:
    """A progress indicator on stderr (a spinner and the time elapsed) while a long step whose
    length is not known ahead runs; gone when it ends (silent as :func:`progress_bar` is)."""
    # rich loads only when there is a display to draw
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True, redirect_stdout=False, redirect_stderr=False,
                  disable=not enabled or not console.is_terminal) as bar:
        bar.add_task(what, total=None)
        yield
