"""Shared data model and file helpers of the external-benchmark loaders (issues 8 and 15).

Every loader turns the files of one public analogy benchmark, exactly as its authors publish
them, into a :class:`Benchmark` of one of three task kinds:

* ``choice`` — :class:`ChoiceItem`: a query story and several candidate stories, one of them the
  analogue (ARN, StoryAnalogy multiple choice, AnaloBench T1, ParallelPARC multiple choice, the
  Rattermann/Gentner trials);
* ``binary`` — :class:`BinaryItem`: a pair of stories labelled analogy or not (ParallelPARC
  binary);
* ``retrieval`` — :class:`RetrievalItem`: a query and a pool of candidate ids, some of them gold
  (AnaloBench T2, the historical-analogy set of Li et al.).

The loaders read only the files the user gives (no downloads). A file's layout is detected from
its header (:func:`read_rows`); a stray pandas index column (an empty name, ``Unnamed: 0``) is
ignored. A file that is not the expected kind at all — wrong header, binary, empty, oversized —
raises an :class:`~analogist.errors.AnalogistError` naming the file and the expected columns.
Quirks of real data inside an otherwise good file (an empty or ragged row, a duplicated row, a
missing field) never abort a load: the row is skipped and counted in
:attr:`Benchmark.skipped`. Column names are matched after normalisation (lower case; spaces,
hyphens, dots and ``#`` become underscores), so ``"Set #"`` is ``set``.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from analogist.errors import AnalogistError
from analogist.io import json_depth_check, read_text

#: Largest benchmark file a loader reads (bytes). The largest published file (AnaloBench T1
#: Full Base) is about 3 MB.
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
    """One loaded benchmark.

    ``name`` is the set (``arn``, ``analobench``, …) and ``variant`` the file variant when the
    set has several; ``counts`` are what ``--check`` reports (rows, sets, events …);
    ``skipped`` counts rows or fields left out and why; ``scorable`` is False for a file the
    authors score with a judge we do not have (it is counted, not scored).
    """

    name: str
    task: TaskKind
    items: tuple[Item, ...]
    source: str
    pool: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    variant: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    scorable: bool = True

    @property
    def label(self) -> str:
        return f"{self.name}/{self.variant}" if self.variant else self.name

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
    """Normalise a column/key name: lower case, spaces/hyphens/dots/``#`` → underscores."""
    out = name.strip().lstrip("\ufeff").lower()
    for ch in " -.#:":
        out = out.replace(ch, "_")
    while "__" in out:
        out = out.replace("__", "_")
    return out.strip("_")


def is_index_column(name: str) -> bool:
    """A stray pandas index column: an empty header cell or ``Unnamed: N``."""
    n = norm_col(name)
    return n == "" or (n.startswith("unnamed_") and n[8:].isdigit())


def read_file_text(path: Path, expected: str = "") -> str:
    """The text of a benchmark file; a binary, empty or oversized file is one error naming the
    file and, when given, what was ``expected`` in it."""
    try:
        text = read_text(path, max_bytes=MAX_BENCH_FILE_BYTES).lstrip("\ufeff")
    except AnalogistError as e:
        raise type(e)(e.message.split("; expected")[0] + (f"; expected {expected}" if expected
                                                            else ""),
                      source=e.source, line=e.line) from None
    if not text.strip():
        raise AnalogistError("the file is empty" + (f"; expected {expected}" if expected
                                                   else ""), source=str(path))
    return text


def find_files(path: Path, patterns: Sequence[str]) -> list[Path]:
    """Files in the folder ``path`` matching any of ``patterns`` (glob, case-insensitive on
    the name), sorted and without repeats; ``[path]`` when ``path`` is a file."""
    if not path.exists():
        raise AnalogistError("no such file or folder", source=str(path))
    if path.is_file():
        return [path]
    out = []
    for p in sorted(path.iterdir()):
        if p.is_file() and any(fnmatch.fnmatch(p.name.lower(), pat.lower()) for pat in patterns):
            out.append(p)
    return out


def describe_layouts(layouts: Mapping[str, Sequence[str]]) -> str:
    return " or ".join("(" + ", ".join(cols) + ")" for cols in layouts.values())


@dataclass
class Table:
    """Rows of a CSV/TSV file under its detected ``layout``; ``skipped`` counts bad rows."""

    path: Path
    layout: str
    columns: list[str]
    rows: list[tuple[int, dict[str, str]]]
    skipped: Counter[str]


def read_rows(path: Path, layouts: Mapping[str, Sequence[str]], what: str, *,
              delimiter: str | None = None) -> Table:
    """Read a CSV/TSV file and detect its layout from the header.

    ``layouts`` maps a layout name to its required (normalised) column names; the first layout
    whose columns are all in the header wins. A header matching none is one error naming the
    file, the header and every expected column list. Empty rows and rows whose field count
    differs from the header's are skipped and counted.
    """
    expected = f"{what} with the columns {describe_layouts(layouts)}"
    text = read_file_text(path, expected)
    if delimiter is None:
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = next(reader)
    except (csv.Error, StopIteration):
        raise AnalogistError(f"unreadable header; expected {expected}", source=str(path),
                             line=1) from None
    cols = [norm_col(h) for h in header]
    layout = next((name for name, req in layouts.items() if set(req) <= set(cols)), None)
    if layout is None:
        shown = ", ".join(repr(h) for h in header[:12]) + (" …" if len(header) > 12 else "")
        raise AnalogistError(f"not {expected}; the header has {shown}"[:600], source=str(path),
                             line=1)
    rows: list[tuple[int, dict[str, str]]] = []
    skipped: Counter[str] = Counter()
    while True:
        try:
            rec = next(reader)
        except StopIteration:
            break
        except csv.Error:
            skipped["unreadable row"] += 1
            continue
        line = reader.line_num
        if not rec or all(not c.strip() for c in rec):
            skipped["empty row"] += 1
            continue
        if len(rec) != len(cols):
            skipped["row with a wrong number of fields"] += 1
            continue
        rows.append((line, {c: v for c, v in zip(cols, rec, strict=True)
                            if not is_index_column(c)}))
    if not rows:
        raise AnalogistError(f"the file has a header but no data rows; expected {expected}",
                             source=str(path))
    return Table(path, layout, cols, rows, skipped)


def clean(v: Any) -> str:
    """A text field, whitespace-normalised; '' for a missing or non-text value."""
    return " ".join(v.split()) if isinstance(v, str) else ""


def read_json(path: Path, expected: str) -> Any:
    text = read_file_text(path, expected)
    json_depth_check(text, source=str(path))     # before the parser recurses into it
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise AnalogistError(f"not valid JSON ({e.msg}); expected {expected}", source=str(path),
                             line=e.lineno) from None


def read_jsonl(path: Path, required: Sequence[str], what: str
               ) -> tuple[list[tuple[int, dict[str, Any]]], Counter[str]]:
    """Objects of a JSON-lines file as ``(line, {normalised key: value})``.

    The file must hold JSON objects with the ``required`` keys (checked on the first object: a
    file of another kind is one error naming the expected keys). Blank lines, unreadable lines
    and objects missing a required key are skipped and counted.
    """
    expected = f"{what} (JSON lines with the keys {', '.join(required)})"
    text = read_file_text(path, expected)
    json_depth_check(text, source=str(path))     # before the parser recurses into a line
    out: list[tuple[int, dict[str, Any]]] = []
    skipped: Counter[str] = Counter()
    first = True
    for i, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            if first:
                raise AnalogistError(f"not JSON lines; expected {expected}", source=str(path),
                                     line=i) from None
            skipped["unreadable line"] += 1
            continue
        if not isinstance(obj, dict):
            if first:
                raise AnalogistError(f"not a JSON object; expected {expected}",
                                     source=str(path), line=i)
            skipped["line that is not an object"] += 1
            continue
        rec = {norm_col(k): v for k, v in obj.items()}
        if first and not set(required) <= set(rec):
            raise AnalogistError(f"missing key(s) {', '.join(k for k in required if k not in rec)}"
                                 f"; expected {expected}", source=str(path), line=i)
        first = False
        out.append((i, rec))
    if not out:
        raise AnalogistError(f"the file holds no JSON objects; expected {expected}",
                             source=str(path))
    return out, skipped


def index_list(value: str) -> list[int] | None:
    """``"3,17, 42"`` → ``[3, 17, 42]`` (brackets accepted); None when not integers."""
    s = value.strip().strip("[]()")
    try:
        out = [int(x.strip().rstrip(".")) for x in s.split(",") if x.strip()]
    except ValueError:
        return None
    return out or None


def sniff_header(path: Path, delimiter: str | None = None) -> list[str] | None:
    """The normalised header of a CSV/TSV file, or None when the file cannot be one (binary,
    empty, unreadable). Reads only the start of the file."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
        text = head.decode("utf-8", errors="strict").lstrip("\ufeff")
    except (OSError, UnicodeDecodeError):
        return None
    if "\x00" in text or not text.strip():
        return None
    if delimiter is None:
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        header = next(csv.reader(io.StringIO(text), delimiter=delimiter))
    except (csv.Error, StopIteration):
        return None
    return [norm_col(h) for h in header]


def layout_of(path: Path, layouts: Mapping[str, Sequence[str]]) -> str | None:
    cols = sniff_header(path)
    if cols is None:
        return None
    return next((name for name, req in layouts.items() if set(req) <= set(cols)), None)


def choose_variant(found: Mapping[str, Path], variant: str | None, what: str,
                   all_variants: Sequence[str], folder: Path) -> tuple[str, Path]:
    """Pick the file of ``variant`` among ``found`` (variant → file). Without ``variant`` the
    one variant present is taken; several present is an error listing the choices."""
    if variant is not None:
        if variant not in all_variants:
            raise AnalogistError(f"unknown variant {variant!r} for {what}; the choices are "
                                 f"{', '.join(all_variants)}", field="variant")
        if variant not in found:
            have = ", ".join(found) or "none"
            raise AnalogistError(f"no file of variant {variant!r} for {what} here (found: "
                                 f"{have})", source=str(folder))
        return variant, found[variant]
    if not found:
        raise AnalogistError(f"no {what} file found here", source=str(folder))
    if len(found) > 1:
        order = [v for v in all_variants if v in found]
        raise AnalogistError(f"this folder holds several {what} variants; give --variant, "
                             f"one of {', '.join(order)}", source=str(folder))
    (v, f), = found.items()
    return v, f
