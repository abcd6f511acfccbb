"""ParallelPARC / ProPara-Logy (Sultan et al., NAACL 2024) → ``choice`` and ``binary`` items.

Format (CSV, as in the silver set): one row per analogy with at least ``source_paragraph``,
``target_paragraph``, ``source_domain`` and ``target_domain``; ``source_id``, ``sample_id``,
``source_subject``, ``target_subject``, ``target_field`` and ``relations`` are read when present
(other columns, such as the unnamed pandas index, are ignored).

The silver rows hold only positive pairs, so the tasks are **built from the rows** (our
construction, not the paper's; the paper's gold set has generated distractors which this loader
does not expect):

* a row is **near** when its source and target domains are equal, else **far**;
* the distractors of a row are target paragraphs of *other* rows whose source differs
  (different ``source_id`` — or source paragraph when there is no id), whose text differs from
  the row's own target and from any target paired with the row's source; a **same-domain**
  distractor has the row's target domain, an **other-domain** one a different domain;
* ``parallelparc-mc``: the query is the source paragraph; the choices are the true target, one
  same-domain distractor (an other-domain one when none exists) and two further distractors
  drawn uniformly, shuffled; condition = near/far;
* ``parallelparc-binary``: each row gives one positive pair (source, its target) and one
  negative pair (source, a distractor) whose kind — same-domain or other-domain — is drawn with
  probability 1/2; both pairs carry the condition ``near|far`` / ``same_domain|other_domain``,
  so every condition is balanced (chance 0.5).

Every draw uses a generator seeded by ``seed`` and the row, so a task is reproducible. When
``limit`` is given, ``limit`` rows are drawn first (seeded) and the tasks are built *within*
those rows (distractors come from the sampled rows only), which keeps the number of distinct
paragraphs — and so the encoding cost — bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analogist.bench.external.base import (
    Benchmark,
    BinaryItem,
    ChoiceItem,
    find_file,
    read_table,
    text_of,
)
from analogist.bench.external.sample import item_rng, subsample
from analogist.errors import AnalogistError

REQUIRED = ("source_paragraph", "target_paragraph", "source_domain", "target_domain")


@dataclass(frozen=True)
class ParcRow:
    key: str
    source_key: str
    source: str
    target: str
    source_domain: str
    target_domain: str

    @property
    def near(self) -> bool:
        return self.source_domain.strip().lower() == self.target_domain.strip().lower()


def load_rows(path: Path) -> tuple[Path, list[ParcRow]]:
    f = find_file(Path(path), ["parallelparc*.csv", "*propara*logy*.csv", "*.csv"],
                  "ParallelPARC CSV file")
    assert f is not None
    rows = []
    for line, r in read_table(f, REQUIRED):
        src = text_of(r, "source_paragraph", f, line)
        tgt = text_of(r, "target_paragraph", f, line)
        sd = text_of(r, "source_domain", f, line)
        td = text_of(r, "target_domain", f, line)
        sid = (r.get("source_id") or "").strip() or src
        key = (r.get("sample_id") or "").strip() or f"line{line}"
        rows.append(ParcRow(f"{key}@{line}", sid, src, tgt, sd, td))
    return f, rows


def _distractor_pools(rows: list[ParcRow]) -> dict[str, tuple[list[str], list[str]]]:
    """Row key → (same-domain distractor texts, other-domain distractor texts), in file order."""
    targets_of_source: dict[str, set[str]] = {}
    for r in rows:
        targets_of_source.setdefault(r.source_key, set()).add(r.target)
        targets_of_source.setdefault(r.source, set()).add(r.target)
    out = {}
    for r in rows:
        banned = targets_of_source[r.source_key] | targets_of_source[r.source]
        same: list[str] = []
        other: list[str] = []
        seen: set[str] = set()
        for o in rows:
            if (o.source_key == r.source_key or o.source == r.source or o.target in banned
                    or o.target in seen):
                continue
            seen.add(o.target)
            (same if o.target_domain.strip().lower() == r.target_domain.strip().lower()
             else other).append(o.target)
        out[r.key] = (same, other)
    return out


def build_mc(rows: list[ParcRow], seed: int, n_choices: int = 4) -> list[ChoiceItem]:
    pools = _distractor_pools(rows)
    items = []
    for r in rows:
        same, other = pools[r.key]
        if len(same) + len(other) < n_choices - 1:
            continue
        rng = item_rng(seed, "mc:" + r.key)
        picked: list[tuple[str, str]] = []
        if same:
            picked.append((rng.choice(same), "same_domain"))
        rest = [(t, "same_domain") for t in same] + [(t, "other_domain") for t in other]
        rest = [x for x in rest if x[0] not in {p[0] for p in picked}]
        picked += rng.sample(rest, n_choices - 1 - len(picked))
        choices = [(r.target, "target"), *picked]
        rng.shuffle(choices)
        answer = next(i for i, c in enumerate(choices) if c[1] == "target")
        items.append(ChoiceItem(f"parallelparc-mc-{r.key}", r.source,
                                tuple(c[0] for c in choices), answer,
                                "near" if r.near else "far", tuple(c[1] for c in choices)))
    return items


def build_binary(rows: list[ParcRow], seed: int) -> list[BinaryItem]:
    pools = _distractor_pools(rows)
    items = []
    for r in rows:
        same, other = pools[r.key]
        rng = item_rng(seed, "bin:" + r.key)
        kind = "same_domain" if rng.random() < 0.5 else "other_domain"
        pool = same if kind == "same_domain" else other
        if not pool:                              # fall back to the kind that exists
            kind = "other_domain" if kind == "same_domain" else "same_domain"
            pool = same if kind == "same_domain" else other
        if not pool:
            continue
        cond = f"{'near' if r.near else 'far'}/{kind}"
        items.append(BinaryItem(f"parallelparc-bin-{r.key}+", r.source, r.target, True, cond))
        items.append(BinaryItem(f"parallelparc-bin-{r.key}-", r.source, rng.choice(pool), False,
                                cond))
    return items


def load_parallelparc_mc(path: Path, *, seed: int = 0, limit: int | None = None) -> Benchmark:
    """The multiple-choice task built from ParallelPARC rows (see the module docstring)."""
    f, rows = load_rows(path)
    rows = subsample(rows, limit, seed)
    items = build_mc(rows, seed)
    if not items:
        raise AnalogistError("too few rows to build multiple-choice items (each needs three "
                             "distractors from rows with another source)", source=str(f))
    notes = (f"{len(rows)} rows; {len(rows) - len(items)} without enough distractors skipped",)
    return Benchmark("parallelparc-mc", "choice", tuple(items), str(f), notes=notes)


def load_parallelparc_binary(path: Path, *, seed: int = 0,
                             limit: int | None = None) -> Benchmark:
    """The binary task built from ParallelPARC rows (see the module docstring)."""
    f, rows = load_rows(path)
    rows = subsample(rows, limit, seed)
    items = build_binary(rows, seed)
    if not items:
        raise AnalogistError("too few rows to build binary items (each needs a distractor from "
                             "a row with another source)", source=str(f))
    notes = (f"{len(rows)} rows → {len(items)} pairs (one positive, one negative per row)",)
    return Benchmark("parallelparc-binary", "binary", tuple(items), str(f), notes=notes)
