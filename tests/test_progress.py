"""Progress on the long commands: a rich bar on stderr when stderr is a terminal (a real
pseudo-terminal here), nothing when it is not, and stdout — JSON included — exactly the
command's output either way. Each command runs in its own process, as a user runs it."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from analogist.casebook import load_casebook
from analogist.memory.sqlite import Memory
from tests.test_cli_encode import TEXT_A, TEXT_B


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not (k in ("OPENAI_API_KEY", "ANALOGIST_CONFIG", "ANALOGIST_STORE")
                   or (k.startswith("ANALOGIST_")
                       and k.endswith(("_BASE_URL", "_MODEL", "_API_KEY"))))}
    env.update(XDG_CONFIG_HOME=str(tmp / "xdg"), COLUMNS="120")
    env.pop("TTY_COMPATIBLE", None)
    env.pop("FORCE_COLOR", None)
    return env


def run(args: list[str], tmp: Path, *, tty: bool) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``analogist ARGS``; stderr a pseudo-terminal when
    ``tty``, else a pipe; stdout always a pipe."""
    cmd = [sys.executable, "-m", "analogist", *args]
    if not tty:
        p = subprocess.run(cmd, env=_env(tmp), capture_output=True, text=True, timeout=900)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                b = os.read(master, 4096)
            except OSError:           # the child closed the terminal
                return
            if not b:
                return
            chunks.append(b)
    t = threading.Thread(target=drain, daemon=True)
    t.start()
    try:
        p = subprocess.run(cmd, env=_env(tmp), stdout=subprocess.PIPE, stderr=slave,
                           stdin=subprocess.DEVNULL, timeout=900)
    finally:
        os.close(slave)
        t.join(timeout=30)
        os.close(master)
    return p.returncode, p.stdout.decode(), b"".join(chunks).decode(errors="replace")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("progress")
    store = d / "s.db"
    cases = load_casebook()[:10]
    with Memory.open(store) as m:
        m.add_many([c.signature for c in cases])
    a, b = d / "a.txt", d / "b.txt"
    a.write_text(TEXT_A, encoding="utf-8")
    b.write_text(TEXT_B, encoding="utf-8")
    return {"dir": d, "store": store, "texts": [a, b]}


def _cases(w: dict[str, Any]) -> dict[str, tuple[list[str], str, str]]:
    """command → (args, text its bar shows, what stdout must be: 'json' or a prefix)."""
    d, s = w["dir"], str(w["store"])
    return {
        "consolidate": (["consolidate", "--store", s, "--dry-run", "--json"], "pairs compared",
                        "json"),
        "eval build": (["eval", "build", "--store", s, "--out", str(d / "gold.json")],
                       "episodes examined", f"wrote {d / 'gold.json'}:"),
        "add --from-text": (["add", "--from-text", *map(str, w["texts"]), "--store",
                             str(d / "t.db"), "--no-embed"], "encoding", "added 2 episode(s)"),
    }


@pytest.mark.parametrize("name", ["consolidate", "eval build", "add --from-text"])
def test_progress_reaches_a_terminal_stderr_and_never_stdout(world: dict[str, Any],
                                                               name: str) -> None:
    args, bar_text, want = _cases(world)[name]
    for tty in (True, False):
        if name == "add --from-text":
            (world["dir"] / "t.db").unlink(missing_ok=True)
        code, out, err = run(args, world["dir"], tty=tty)
        assert code == 0, (tty, err)
        if want == "json":
            json.loads(out)                 # stdout is the JSON and nothing else
        else:
            assert out.startswith(want) and len(out.strip().splitlines()) == 1, out
        assert bar_text not in out and "\x1b" not in out
        if tty:
            assert bar_text in err, err[-500:]
        else:
            assert bar_text not in err, err          # not a terminal: no bar
            assert "\x1b" not in err
