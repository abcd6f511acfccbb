"""Warnings a person sees as one-line notes.

analogist warns (:class:`~analogist.vocabulary.ProposedTermWarning`) where a run goes on but the
user should know something: an unknown predicate accepted as a proposed term. Python's default
display prints the file and source line of the ``warnings.warn`` call, which says nothing to a
user; :func:`show_warnings_as_notes` makes a face (the command line) print those warnings as
``note: <message>`` on one line instead. Other warnings keep Python's display, and the warning
filters (``-W``, ``PYTHONWARNINGS``, "once per location") still decide what is shown.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Any, TextIO

from analogist.vocabulary import ProposedTermWarning

NOTE_CATEGORIES: tuple[type[Warning], ...] = (ProposedTermWarning,)
"""Warning classes shown as notes."""


def as_note(message: Warning | str) -> str:
    """The one-line note for a warning message."""
    text = " ".join(str(message).split())
    return f"note: {text}"


def show_warnings_as_notes(stream: TextIO | None = None) -> None:
    """Display :data:`NOTE_CATEGORIES` warnings as one-line notes on ``stream`` (default:
    stderr at the time of the warning). Idempotent; other warnings go to the previous
    display."""
    current = warnings.showwarning
    if getattr(current, "_analogist_notes", False):
        return
    previous = current

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:
        if isinstance(category, type) and issubclass(category, NOTE_CATEGORIES):
            out = stream or file or sys.stderr
            with contextlib.suppress(OSError, ValueError):   # a closed stream loses the note
                out.write(as_note(message) + "\n")
            return
        previous(message, category, filename, lineno, file, line)

    show_any: Any = show
    show_any._analogist_notes = True
    warnings.showwarning = show_any
