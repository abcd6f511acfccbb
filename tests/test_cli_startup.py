"""What the command line loads at start-up: `analogist --help` renders typer's rich help without
rich's Markdown and traceback modules (markdown-it, pygments), and loading the command modules
loads neither rich nor the library (numpy, pydantic)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("rich.markdown", "rich.traceback", "rich.syntax", "pygments", "markdown_it", "numpy",
         "pydantic", "httpx", "yaml")


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "COLUMNS": "100"}).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_help_loads_neither_markdown_nor_traceback_nor_the_library() -> None:
    got = _run(f"""
import contextlib, io, json, sys
from analogist.cli import app
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        app(["--help"], prog_name="analogist")
    except SystemExit:
        pass
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r} or m in {HEAVY!r})
print(json.dumps({{"help": buf.getvalue(), "heavy": heavy}}))
""")
    assert "Usage: analogist" in got["help"] and "find" in got["help"]
    assert got["heavy"] == []


def test_the_deferred_classes_are_the_real_ones_on_use() -> None:
    got = _run("""
import json, sys
import typer.rich_utils as ru
md = ru.Markdown("# title")
import rich.markdown, rich.traceback
try:
    raise ValueError("x")
except ValueError as e:
    tb = ru.Traceback.from_exception(type(e), e, e.__traceback__)
print(json.dumps({
    "markdown_real": type(md) is rich.markdown.Markdown,
    "isinstance": isinstance(md, ru.Markdown),
    "module_real": type(sys.modules["rich.markdown"]).__name__ == "module",
    "traceback_real": type(tb) is rich.traceback.Traceback,
}))
""".replace("import typer.rich_utils", "import analogist.cli.base\nimport typer.rich_utils"))
    assert got == {"markdown_real": True, "isinstance": True, "module_real": True,
                   "traceback_real": True}


def test_command_modules_load_without_rich_or_the_library() -> None:
    got = _run("""
import json, sys
import analogist.cli
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("rich", "numpy", "pydantic",
                                                                     "httpx", "yaml"))))
""")
    assert got == []


# what `analogist add` does not need: retrieval, the engine and the judge, the triggers and the
# content index (loaded by the commands that use them)
NOT_FOR_ADD = ("analogist.retrieve", "analogist.judge", "analogist.sme", "analogist.triggers",
               "analogist.stats", "analogist.index.content", "analogist.index.mac")


def test_add_loads_neither_retrieval_nor_the_engine(tmp_path) -> None:
    f = tmp_path / "one.json"
    f.write_text(json.dumps({"episode_id": "e1", "kind": "failure", "roles": {"A": "a task", "B": "a bus"},
                             "relations": [["blocks", "A", "B"]]}), encoding="utf-8")
    got = _run(f"""
import contextlib, io, json, sys
from analogist.cli import app
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        app(["add", {str(f)!r}, "--store", {str(tmp_path / "s.db")!r}, "--no-embed"],
            prog_name="analogist")
    except SystemExit:
        pass
loaded = sorted(m for m in sys.modules if m.startswith({NOT_FOR_ADD!r}))
print(json.dumps({{"out": buf.getvalue(), "loaded": loaded}}))
""")
    assert "added 1 episode(s)" in got["out"]
    assert got["loaded"] == []


def test_the_deferred_names_load_on_use() -> None:
    got = _run("""
import json
import analogist.index as ix
from analogist.index.content import ContentIndex
print(json.dumps({"same": ix.ContentIndex is ContentIndex,
                  "error": ix.ContentIndexError.__name__}))
""")
    assert got == {"same": True, "error": "ContentIndexError"}


def test_the_progress_bar_without_a_terminal_loads_no_rich() -> None:
    got = _run("""
import json, sys
from analogist.cli.base import progress_bar
with progress_bar() as bar:
    t = bar.add_task("adding", total=3)
    bar.update(t, completed=2)
    bar.advance(t)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("rich"))))
""")
    assert got == []
