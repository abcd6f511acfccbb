"""Warnings a user meets are one-line notes (issue 21, build item 5, the library part)."""

from __future__ import annotations

import io
import subprocess
import sys
import warnings
from pathlib import Path

from analogist.notes import show_warnings_as_notes
from analogist.vocabulary import ProposedTermWarning

EPISODE = """episode_id: unk-1
kind: failure
roles: {A: a copy, B: the source}
relations:
  - [frobnicates, A, B]
"""


def test_proposed_terms_are_one_line_notes_and_others_untouched() -> None:
    buf = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        seen: list[str] = []
        warnings.showwarning = lambda m, c, f, n, file=None, line=None: seen.append(str(m))
        show_warnings_as_notes(buf)
        show_warnings_as_notes(buf)                      # idempotent: one note, not two
        warnings.warn("relation 'x' is not\n  declared", ProposedTermWarning, stacklevel=1)
        warnings.warn("something else", RuntimeWarning, stacklevel=1)
    assert buf.getvalue() == "note: relation 'x' is not declared\n"
    assert seen == ["something else"]


def test_the_command_line_prints_a_note_not_a_source_line(tmp_path: Path) -> None:
    f = tmp_path / "unk.yaml"
    f.write_text(EPISODE, encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "analogist", "map", str(f), str(f)],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines() == [
        "note: relation 'frobnicates' is not in vocabulary 'signature'; accepted as a "
        "proposed term"]
