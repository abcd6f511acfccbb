"""The registry of public analogy benchmarks: names, variants, the folder names ``all`` looks
for, and which sets are development data.

``analogist bench external all FOLDER`` expects one subfolder per set, holding that set's files
as published (names matched case-insensitively; the first name is the documented one):

========================  ==============================================================
subfolder                 files
========================  ==============================================================
``arn``                   the ARN CSV
``storyanalogy``          ``storyanalogy_multiple_choice.json`` (or the dev copy)
``parallelparc``          the multiple-choice and/or binary CSV, and/or the silver CSV
``analobench``            the repository's ``data/`` files (T1/T2 CSVs, clusters, stories)
``rattermann``            ``story_analogies.csv``
``historical``            ``event_pool.jsonl``, ``popular_analogy.jsonl``,
                          ``general_analogy.jsonl``
========================  ==============================================================

Development data (issue 15, item 4): StoryAnalogy multiple choice and the ParallelPARC silver
rows — the two sets under the project's ``dev`` data folder. Everything else is evaluation
data: nothing is fitted or tuned on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from analogist.bench.external import analobench, historical, parallelparc
from analogist.bench.external.arn import COLUMNS as ARN_COLUMNS
from analogist.bench.external.arn import load_arn
from analogist.bench.external.base import Benchmark, describe_layouts, find_files, layout_of
from analogist.bench.external.rattermann import COLUMNS as RATTERMANN_COLUMNS
from analogist.bench.external.rattermann import load_rattermann
from analogist.bench.external.storyanalogy import load_storyanalogy
from analogist.errors import AnalogistError


@dataclass(frozen=True)
class SetInfo:
    """One benchmark: its loader, its variants (empty: one file), folder names for ``all``."""

    name: str
    title: str
    loader: Callable[..., Benchmark]
    variants: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    #: for a one-file set: glob patterns and, for CSVs, the header the file must have
    patterns: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()


SETS: dict[str, SetInfo] = {s.name: s for s in (
    SetInfo("arn", "ARN (Sourati et al., TACL 2024)", load_arn, (),
            ("arn", "narrative-analogy"), ("*.csv",), ARN_COLUMNS),
    SetInfo("storyanalogy", "StoryAnalogy multiple choice (Jiayang et al., EMNLP 2023)",
            load_storyanalogy, (), ("storyanalogy",), ("*.json",)),
    SetInfo("parallelparc", "ParallelPARC / ProPara-Logy (Sultan et al., NAACL 2024)",
            parallelparc.load_parallelparc, parallelparc.VARIANTS, ("parallelparc",)),
    SetInfo("analobench", "AnaloBench (Ye et al., 2024)", analobench.load_analobench,
            analobench.VARIANTS, ("analobench", "data")),
    SetInfo("rattermann", "Rattermann & Gentner stories (as used by Webb, Holyoak & Lu 2023)",
            load_rattermann, (), ("rattermann", "story_analogies", "abstractanalogies"),
            ("*.csv",), RATTERMANN_COLUMNS),
    SetInfo("historical", "Historical analogies (Li et al., 2024)",
            historical.load_historical, historical.VARIANTS,
            ("historical", "historical-analogy-of-llms", "dataset")),
)}
BENCHMARKS = tuple(SETS)


def is_development(bench: Benchmark) -> bool:
    """StoryAnalogy MC and the ParallelPARC silver rows are the project's development data."""
    return bench.name == "storyanalogy" or (bench.variant or "").startswith("silver")


def _one_file(info: SetInfo, folder: Path) -> Path:
    files = find_files(folder, info.patterns)
    if info.columns and folder.is_dir():
        files = [f for f in files if layout_of(f, {"x": info.columns}) is not None]
    if len(files) == 1:
        return files[0]
    what = (f"a CSV with the columns ({', '.join(info.columns)})" if info.columns
            else f"a file matching {' or '.join(info.patterns)}")
    if not files:
        raise AnalogistError(f"no {info.name} file here; expected {what}", source=str(folder))
    raise AnalogistError(f"several {info.name} files here ({', '.join(f.name for f in files)});"
                         " give the file itself", source=str(folder))


def load_set(name: str, path: str | Path, *, variant: str | None = None, seed: int = 0,
             limit: int | None = None) -> Benchmark:
    """Load benchmark ``name`` (one of :data:`BENCHMARKS`) from ``path`` (a file or folder)."""
    if name not in SETS:
        raise AnalogistError(f"unknown benchmark {name!r}; expected one of "
                             f"{', '.join(BENCHMARKS)} or all")
    info = SETS[name]
    p = Path(path)
    if not p.exists():
        raise AnalogistError("no such file or folder", source=str(p))
    if not info.variants:
        if variant is not None:
            raise AnalogistError(f"{name} has no variants", field="variant")
        if p.is_dir():
            p = _one_file(info, p)
        return info.loader(p, seed=seed, limit=limit)
    return info.loader(p, seed=seed, limit=limit, variant=variant)


def variants_present(name: str, folder: Path) -> list[str | None]:
    """The variants of set ``name`` whose files are in ``folder`` ([None] for a one-file set),
    in the registry's order."""
    info = SETS[name]
    if not info.variants:
        return [None]
    mod = {"parallelparc": parallelparc, "analobench": analobench,
           "historical": historical}[name]
    here = mod.variants_in(folder)
    return [v for v in info.variants if v in here]


def set_folders(root: Path) -> dict[str, Path]:
    """Set name → its subfolder of ``root`` (see the module docstring for the names)."""
    if not root.is_dir():
        raise AnalogistError("expected a folder holding one subfolder per set",
                             source=str(root))
    subs = {p.name.lower(): p for p in sorted(root.iterdir()) if p.is_dir()}
    found = {}
    for name, info in SETS.items():
        for alias in info.folders:
            if alias in subs:
                found[name] = subs[alias]
                break
    if not found:
        names = ", ".join(info.folders[0] for info in SETS.values())
        raise AnalogistError(f"no benchmark subfolder here; expected some of {names}",
                             source=str(root))
    return found


__all__ = ["BENCHMARKS", "SETS", "SetInfo", "describe_layouts", "is_development", "load_set",
           "set_folders", "variants_present"]
