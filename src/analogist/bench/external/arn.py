"""ARN — Analogical Reasoning on Narratives (Sourati et al., TACL 2024) → ``choice`` items.

ARN asks which of two narratives is analogous to a query narrative; the analogy is near
(within-domain) or far (cross-domain) and the disanalogy (distractor) is near or far, giving four
conditions. Column names of the public CSV were not available to us; this loader accepts either
layout below (an assumption, stated here and checked against the fixture only):

* ``query``, ``analogy``, ``disanalogy`` — the two candidates are shuffled per item with a seeded
  generator; or
* ``query``, ``option_1``, ``option_2``, ``label`` — ``label`` names the analogous option:
  ``1``/``A`` → the first, ``2``/``B`` → the second (0-based labels are refused, not guessed).

Conditions come from ``analogy_type`` (``near``/``far``; also ``analogy_distance``) and
``disanalogy_type`` (also ``distractor_type``/``disanalogy_distance``) when present, as
``"<analogy>-analogy/<disanalogy>-disanalogy"``. Chance is 0.5.
"""

from __future__ import annotations

from pathlib import Path

from analogist.bench.external.base import Benchmark, ChoiceItem, find_file, read_table, text_of
from analogist.bench.external.sample import item_rng, subsample
from analogist.errors import AnalogistError

OPTIONAL = {
    "analogy_type": ("analogy_distance",),
    "disanalogy_type": ("distractor_type", "disanalogy_distance"),
    "analogy": ("analogous", "positive"),
    "disanalogy": ("distractor", "negative"),
    "option_1": ("option1", "candidate_1"),
    "option_2": ("option2", "candidate_2"),
    "label": ("answer", "correct"),
}


def _label(v: str, f: Path, line: int) -> int:
    s = v.strip().lower()
    if s in ("1", "a", "option_1", "option 1"):
        return 0
    if s in ("2", "b", "option_2", "option 2"):
        return 1
    raise AnalogistError(f"expected label 1/2 (or A/B), got {v!r}", source=str(f), line=line)


def load_arn(path: Path, *, seed: int = 0, limit: int | None = None) -> Benchmark:
    """Load ARN two-way items from its CSV (or the folder holding it)."""
    f = find_file(Path(path), ["arn*.csv", "ARN*.csv", "*.csv"], "ARN CSV file")
    assert f is not None
    rows = read_table(f, ("query",), aliases=OPTIONAL)
    cols = set(rows[0][1])
    pair_layout = {"analogy", "disanalogy"} <= cols
    if not pair_layout and not {"option_1", "option_2", "label"} <= cols:
        raise AnalogistError("expected columns 'analogy' and 'disanalogy', or 'option_1', "
                             "'option_2' and 'label'", source=str(f), line=1)
    rows = subsample(rows, limit, seed)
    items = []
    for line, r in rows:
        iid = (r.get("id") or "").strip() or f"line{line}"
        query = text_of(r, "query", f, line)
        if pair_layout:
            pair = [(text_of(r, "analogy", f, line), True),
                    (text_of(r, "disanalogy", f, line), False)]
            item_rng(seed, iid).shuffle(pair)
            choices = (pair[0][0], pair[1][0])
            answer = 0 if pair[0][1] else 1
        else:
            choices = (text_of(r, "option_1", f, line), text_of(r, "option_2", f, line))
            answer = _label(r.get("label", ""), f, line)
        a = (r.get("analogy_type") or "").strip().lower()
        d = (r.get("disanalogy_type") or "").strip().lower()
        cond = f"{a}-analogy/{d}-disanalogy" if a and d else (a or d or None)
        items.append(ChoiceItem(f"arn-{iid}", query, choices, answer, cond))
    return Benchmark("arn", "choice", tuple(items), str(f))
