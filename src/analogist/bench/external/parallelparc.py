"""ParallelPARC / ProPara-Logy (Sultan et al., NAACL 2024) → ``choice`` and ``binary`` items.

Three layouts, told apart by their header:

* **mc** — the published multiple-choice file
  (``evaluation/models_evaluation/proparalogy/experiments/
  data_for_eval_random_distractor_multiple_choice_task.csv``): ``'', sample_id,
  source_paragraph, random_target_paragraph, random_distractor_target_paragraph,
  distractor_target_paragraph, analogous_target_paragraph, shuffled_candidates, analogy_type,
  ground_truth``. The task as the authors define it: given the source paragraph, pick the
  analogous target among the four ``shuffled_candidates`` (a JSON list); ``ground_truth`` is
  ``C1``–``C4``, the 1-based position of the analogue. Cells are the analogy type (``close
  analogy`` / ``far analogy``); the three distractor kinds — ``distractor`` (the analogue's
  events reordered, a challenging distractor), ``random`` (another process) and
  ``random_distractor`` (that process reordered) — are reported as analogue-vs-kind wins.
* **binary** — the published binary file (``data_for_eval_balanced_shuffled_binary_task.csv``):
  ``'', Unnamed: 0, sample_id, source_paragraph, target_paragraph, ground_truth, type``:
  is the target analogous to the source (``ground_truth`` 1/0)? Cells are ``type`` (``close
  analogy``, ``far analogy``, ``distractor``, ``random``); chance 0.5.
* **silver** — the silver set (the project's development copy): positive pairs only, with
  ``source_paragraph, target_paragraph, source_domain, target_domain``. Tasks are **built from
  the rows** (our construction, not the paper's — variants ``silver-mc`` and
  ``silver-binary``): near = equal domains, far = different; distractors are other rows'
  targets from the same (``same_domain``) or another target domain (``other_domain``), never a
  target of the row's own source. Every draw is seeded by ``seed`` and the row; with ``limit``
  the rows are drawn first and the tasks built within them.

Rows missing a paragraph, with an unreadable candidate list or a ground truth out of range are
skipped and counted.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from analogist.bench.external.base import (
    Benchmark,
    BinaryItem,
    ChoiceItem,
    Table,
    choose_variant,
    clean,
    find_files,
    layout_of,
    read_rows,
)
from analogist.bench.external.sample import item_rng, subsample
from analogist.errors import AnalogistError

MC = ("source_paragraph", "random_target_paragraph", "random_distractor_target_paragraph",
      "distractor_target_paragraph", "analogous_target_paragraph", "shuffled_candidates",
      "analogy_type", "ground_truth")
BINARY = ("source_paragraph", "target_paragraph", "ground_truth", "type")
SILVER = ("source_paragraph", "target_paragraph", "source_domain", "target_domain")
LAYOUTS = {"mc": MC, "binary": BINARY, "silver": SILVER}
VARIANTS = ("mc", "binary", "silver-mc", "silver-binary")
#: candidate column → distractor kind (the analogue is "target")
KINDS = {"analogous_target_paragraph": "target", "distractor_target_paragraph": "distractor",
         "random_target_paragraph": "random",
         "random_distractor_target_paragraph": "random_distractor"}


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


def silver_rows(t: Table, skipped: Counter[str]) -> list[ParcRow]:
    rows = []
    for line, r in t.rows:
        vals = [clean(r.get(c)) for c in SILVER]
        if not all(vals):
            skipped["row missing a paragraph or domain"] += 1
            continue
        src, tgt, sd, td = vals
        sid = r.get("source_id", "").strip() or src
        key = r.get("sample_id", "").strip() or f"line{line}"
        rows.append(ParcRow(f"{key}@{line}", sid, src, tgt, sd, td))
    return rows


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
        items.append(ChoiceItem(f"parallelparc-silver-mc-{r.key}", r.source,
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
        items.append(BinaryItem(f"parallelparc-silver-bin-{r.key}+", r.source, r.target, True, cond))
        items.append(BinaryItem(f"parallelparc-silver-bin-{r.key}-", r.source, rng.choice(pool), False,
                                cond))
    return items


def _candidates(raw: str) -> list[str] | None:
    for parse in (json.loads, ast.literal_eval):
        try:
            v = parse(raw)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(v, list) and all(isinstance(c, str) for c in v):
            return v
    return None


def _published_mc(t: Table, skipped: Counter[str]) -> list[ChoiceItem]:
    items = []
    for line, r in t.rows:
        source = clean(r["source_paragraph"])
        cands = _candidates(r["shuffled_candidates"])
        gt = r["ground_truth"].strip().upper()
        if not source or not cands or len(cands) < 2 or not all(clean(c) for c in cands):
            skipped["row missing the source or an unreadable candidate list"] += 1
            continue
        if not (gt[:1] == "C" and gt[1:].isdigit() and 1 <= int(gt[1:]) <= len(cands)):
            skipped["ground_truth not C1..Cn"] += 1
            continue
        texts = tuple(clean(c) for c in cands)
        by_text = {clean(r[col]): kind for col, kind in KINDS.items() if clean(r[col])}
        kinds = tuple(by_text.get(c, "unknown") for c in texts)
        answer = int(gt[1:]) - 1
        if kinds[answer] != "target":
            skipped["ground_truth not the analogous_target_paragraph (kept; ground truth "
                    "used)"] += 1
        cond = r["analogy_type"].strip().lower() or None
        key = r.get("sample_id", "").strip() or f"line{line}"
        items.append(ChoiceItem(f"parallelparc-mc-{key}@{line}", source, texts, answer, cond,
                                kinds))
    return items


def _published_binary(t: Table, skipped: Counter[str]) -> list[BinaryItem]:
    items = []
    for line, r in t.rows:
        s, g = clean(r["source_paragraph"]), clean(r["target_paragraph"])
        gt = r["ground_truth"].strip()
        if not (s and g):
            skipped["row missing a paragraph"] += 1
            continue
        if gt not in ("0", "1"):
            skipped["ground_truth not 0 or 1"] += 1
            continue
        key = r.get("sample_id", "").strip() or f"line{line}"
        items.append(BinaryItem(f"parallelparc-bin-{key}@{line}", s, g, gt == "1",
                                r["type"].strip().lower() or None))
    return items


def variants_in(path: Path) -> dict[str, Path]:
    """Variant → file for the ParallelPARC files at ``path`` (a file or a folder)."""
    path = Path(path)
    found: dict[str, Path] = {}
    for f in find_files(path, ["*.csv"]):
        lay = layout_of(f, LAYOUTS) if path.is_dir() else None
        if path.is_file():
            lay = read_rows(f, LAYOUTS, "ParallelPARC CSV").layout
        if lay == "silver":
            found.setdefault("silver-mc", f)
            found.setdefault("silver-binary", f)
        elif lay is not None:
            found.setdefault(lay, f)
    return found


def resolve(path: Path, variant: str | None) -> tuple[str, Path]:
    """The (variant, file) to load from ``path`` (a file or a folder of ParallelPARC files)."""
    path = Path(path)
    found = variants_in(path)
    if path.is_file() and variant is None and set(found) == {"silver-mc", "silver-binary"}:
        raise AnalogistError("this is the silver set; give --variant silver-mc or "
                             "silver-binary", source=str(path))
    return choose_variant(found, variant, "ParallelPARC", VARIANTS, path)


def load_parallelparc(path: Path, *, seed: int = 0, limit: int | None = None,
                      variant: str | None = None) -> Benchmark:
    """Load one ParallelPARC task (see the module docstring for the variants)."""
    variant, f = resolve(Path(path), variant)
    t = read_rows(f, LAYOUTS, "ParallelPARC CSV")
    skipped: Counter[str] = Counter(t.skipped)
    notes: tuple[str, ...] = ()
    items: list
    if variant == "mc":
        all_mc = _published_mc(t, skipped)
        counts = {"items": len(all_mc)}
        items = subsample(all_mc, limit, seed)
        task = "choice"
    elif variant == "binary":
        all_items = _published_binary(t, skipped)
        counts = {"items": len(all_items), "analogies": sum(i.label for i in all_items)}
        items = subsample(all_items, limit, seed)
        task = "binary"
    else:
        rows = silver_rows(t, skipped)
        counts = {"rows": len(rows)}
        rows = subsample(rows, limit, seed)
        if variant == "silver-mc":
            items = build_mc(rows, seed)
            task = "choice"
            notes = (f"tasks built from {len(rows)} silver rows (our construction); "
                     f"{len(rows) - len(items)} rows without enough distractors left out",)
        else:
            items = build_binary(rows, seed)
            task = "binary"
            notes = (f"tasks built from {len(rows)} silver rows (our construction): one "
                     f"positive and one negative pair per row",)
        counts["items"] = len(items)
    if not items:
        raise AnalogistError("no usable item in this file", source=str(f))
    return Benchmark("parallelparc", task, tuple(items), str(f), notes=notes,  # type: ignore[arg-type]
                     variant=variant, counts=counts, skipped=dict(skipped))
