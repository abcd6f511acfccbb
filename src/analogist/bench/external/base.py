"""Shared data model and file helpers of the external-benchmark loaders (issue 8, item 5).

Every loader turns the files of one public analogy benchmark into a :class:`Benchmark` of one of
three task kinds:

* ``choice`` — :class:`ChoiceItem`: a query story and several candidate stories, one of them the
  analogue (StoryAnalogy multiple choice, AnaloBench T1, ARN, Rattermann trials, ParallelPARC
  multiple choice);
* ``binary`` — :class:`BinaryItem`: a pair of stories labelled analogy or not (ParallelPARC
  binary);
* ``retrieval`` — :class:`RetrievalItem`: a query and a pool of candidate ids, some of them gold
  (AnaloBench T2, the historical-analogy set of Li et al.).

The loaders read only the files the user gives (no downloads). Bad input raises an
:class:`~analogist.errors.AnalogistError` naming the file, the line (CSV/JSONL) or the field
(JSON) and what was expected. Column names are matched after normalisation (lower case; spaces,
hyphens and dots become underscores), so ``"Option 1"`` and ``option_1`` are the same column.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from analogist.errors import AnalogistError
from analogist.io import read_text

#: Largest benchmark file a loader reads (bytes). Public sets are far smaller.
MAX_BENCH_FILE_BYTES = 64 * 1024 * 1024

TaskKind = Literal["choice", "binary", "retrieval"]


@dataclass(frozen=True)
class ChoiceItem:
    """Pick the analogue of ``query`` among ``choices``; ``answer`` is its 0-based index.

    ``choice_types`` optionally labels each choice (e.g. ``target``/``noun``/``random``).
    """

    item_id: str
    query: str
    choices: tuple[str, ...]
    answer: int
    condition: str | None = None
    choice_types: tuple[str, ...] | None = None


@dataclass(frozen=True)
class BinaryItem:
    """Is ``target`` an analogue of ``source``? (``label``)"""

    item_id: str
    source: str
    target: str
    label: bool
    condition: str | None = None


@dataclass(frozen=True)
class RetrievalItem:
    """Rank ``candidates`` (keys of :attr:`Benchmark.pool`) for ``query``; ``gold`` are relevant."""

    item_id: str
    query: str
    candidates: tuple[str, ...]
    gold: frozenset[str]
    condition: str | None = None


Item = ChoiceItem | BinaryItem | RetrievalItem


@dataclass(frozen=True)
class Benchmark:
    """One loaded benchmark: its task kind, items, the retrieval pool (id → text) and notes."""

    name: str
    task: TaskKind
    items: tuple[Item, ...]
    source: str
    pool: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def chance(self) -> float:
        """Accuracy of a uniform random guess, averaged over items (choice: 1/k; binary: 0.5;
        retrieval: the expected hit@1, |gold ∩ candidates| / |candidates|)."""
        if not self.items:
            return 0.0
        if self.task == "choice":
            vals = [1.0 / len(it.choices) for it in self.items]  # type: ignore[union-attr]
        elif self.task == "binary":
            vals = [0.5 for _ in self.items]
        else:
            vals = [len(it.gold & set(it.candidates)) / len(it.candidates)  # type: ignore[union-attr]
                    for it in self.items]
        return sum(vals) / len(vals)


# -- files -------------------------------------------------------------------------------------
def norm_col(name: str) -> str:
    """Normalise a column/key name: lower case, spaces/hyphens/dots → underscores."""
    out = name.strip().lstrip("\ufeff").lower()
    for ch in " -.":
        out = out.replace(ch, "_")
    while "__" in out:
        out = out.replace("__", "_")
    return out.strip("_")


def read_file_text(path: Path) -> str:
    text = read_text(path, max_bytes=MAX_BENCH_FILE_BYTES)
    return text.lstrip("\ufeff")


def find_file(path: Path, patterns: Sequence[str], what: str, *,
              required: bool = True) -> Path | None:
    """``path`` itself when it is a file; else the one file in the folder ``path`` matching the
    first of ``patterns`` (glob, case-sensitive) that matches anything."""
    if not path.exists():
        raise AnalogistError("no such file or folder", source=str(path))
    if path.is_file():
        return path
    for pat in patterns:
        hits = sorted(p for p in path.glob(pat) if p.is_file())
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise AnalogistError(f"several files match {pat!r} for the {what}: "
                                 f"{', '.join(h.name for h in hits)}; give the file itself",
                                 source=str(path))
    if required:
        raise AnalogistError(f"no {what} found in this folder; expected a file matching "
                             f"{' or '.join(repr(p) for p in patterns)}", source=str(path))
    return None


def read_table(path: Path, required: Iterable[str], *, aliases: dict[str, Sequence[str]] | None
               = None, delimiter: str | None = None) -> list[tuple[int, dict[str, str]]]:
    """Rows of a CSV/TSV file as ``(line, {normalised column: value})``.

    ``required`` are canonical column names; ``aliases`` maps a canonical name to other accepted
    spellings (after :func:`norm_col`). The delimiter is a tab for ``.tsv`` files, else a comma.
    A missing column, a ragged row or an empty file is an error naming the file and line.
    """
    text = read_file_text(path)
    if not text.strip():
        raise AnalogistError("the file is empty; expected a header row and data rows",
                             source=str(path))
    if delimiter is None:
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = next(reader)
    except csv.Error as e:
        raise AnalogistError(f"unreadable CSV header: {e}", source=str(path), line=1) from None
    cols = [norm_col(h) for h in header]
    aliases = aliases or {}
    rename: dict[str, str] = {}
    for canon in required:
        options = [canon, *aliases.get(canon, ())]
        found = next((o for o in options if o in cols), None)
        if found is None:
            raise AnalogistError(
                f"missing column {canon!r}" + (f" (or {', '.join(map(repr, options[1:]))})"
                                               if len(options) > 1 else "")
                + f"; the header has {', '.join(repr(h) for h in header)}",
                source=str(path), line=1)
        rename[found] = canon
    for canon, alts in aliases.items():          # optional columns with aliases
        if canon not in rename.values():
            for o in (canon, *alts):
                if o in cols:
                    rename[o] = canon
                    break
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        for rec in reader:
            line = reader.line_num
            if not rec or all(not c.strip() for c in rec):
                continue
            if len(rec) != len(cols):
                raise AnalogistError(f"row has {len(rec)} fields but the header has "
                                     f"{len(cols)}", source=str(path), line=line)
            row = {}
            for c, v in zip(cols, rec, strict=True):
                row[rename.get(c, c)] = v
            rows.append((line, row))
    except csv.Error as e:
        raise AnalogistError(f"malformed CSV: {e}", source=str(path),
                             line=reader.line_num) from None
    if not rows:
        raise AnalogistError("the file has a header but no data rows", source=str(path))
    return rows


def text_of(row: dict[str, Any], col: str, path: Path, line: int | None = None,
            field_prefix: str = "") -> str:
    """A non-empty text field of a row, whitespace-normalised."""
    v = row.get(col)
    if not isinstance(v, str) or not v.strip():
        raise AnalogistError(f"expected non-empty text in {col!r}, got {v!r}"[:200],
                             source=str(path), line=line,
                             field=(field_prefix + col) if line is None else None)
    return " ".join(v.split())


def int_of(row: dict[str, Any], col: str, path: Path, line: int | None = None,
           field_prefix: str = "") -> int:
    v = row.get(col)
    if isinstance(v, bool):
        v = None
    if isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            v = None
    if not isinstance(v, int):
        raise AnalogistError(f"expected an integer in {col!r}, got {row.get(col)!r}"[:200],
                             source=str(path), line=line,
                             field=(field_prefix + col) if line is None else None)
    return v


def read_json(path: Path) -> Any:
    text = read_file_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise AnalogistError(f"not valid JSON: {e.msg}", source=str(path), line=e.lineno) from None


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Objects of a JSON-lines file as ``(line, {normalised key: value})``; blank lines skipped."""
    text = read_file_text(path)
    out = []
    for i, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            raise AnalogistError(f"not valid JSON: {e.msg}", source=str(path), line=i) from None
        if not isinstance(obj, dict):
            raise AnalogistError(f"expected a JSON object per line, got {type(obj).__name__}",
                                 source=str(path), line=i)
        out.append((i, {norm_col(k): v for k, v in obj.items()}))
    if not out:
        raise AnalogistError("the file holds no JSON objects", source=str(path))
    return out


def index_list(value: str, path: Path, line: int, col: str) -> list[int]:
    """``"3,17, 42"`` → ``[3, 17, 42]`` (also accepts brackets: ``"[3, 17]"``)."""
    s = value.strip().strip("[]()")
    try:
        out = [int(x.strip().rstrip(".")) for x in s.split(",") if x.strip()]
    except ValueError:
        raise AnalogistError(f"expected comma-separated integers in {col!r}, got {value!r}"[:200],
                             source=str(path), line=line) from None
    if not out:
        raise AnalogistError(f"expected at least one index in {col!r}", source=str(path),
                             line=line)
    return out
