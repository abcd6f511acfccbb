"""ARN — Analogical Reasoning on Narratives (Sourati et al., TACL 2024) → ``choice`` items.

The published CSV (``Data/Datasets/Analogical Reasoning on Narratives (ARN) dataset.xlsx -
Sheet1.csv`` in the authors' repository) has the columns ``id, proverb, query_narrative,
first_choice, second_choice, distractor_similarity, analogy_level, correct_answer``. The task,
as the authors define it, is a binary choice: which of the two narratives is analogous to the
query narrative (``correct_answer`` is 1 or 2). Its four cells cross the analogy's distance
(``analogy_level``: ``near`` within-domain, ``far`` cross-domain) with the disanalogy's
(``distractor_similarity``: ``high`` surface similarity = a near disanalogy, ``low`` = far), and
are reported as ``"<near|far>-analogy/<near|far>-disanalogy"``. Chance is 0.5.

Quirks skipped and counted: rows missing a narrative, a ``correct_answer`` other than 1/2, an
unknown level, and exact repeats of an earlier row (same query and choices).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from analogist.bench.external.base import Benchmark, ChoiceItem, clean, read_rows
from analogist.bench.external.sample import subsample

COLUMNS = ("query_narrative", "first_choice", "second_choice", "distractor_similarity",
           "analogy_level", "correct_answer")
DISANALOGY = {"high": "near", "low": "far"}


def load_arn(path: Path, *, seed: int = 0, limit: int | None = None,
             variant: str | None = None) -> Benchmark:
    """Load ARN's binary-choice items from its published CSV."""
    t = read_rows(Path(path), {"published": COLUMNS}, "ARN CSV")
    skipped: Counter[str] = Counter(t.skipped)
    items = []
    seen: set[tuple[str, str, str]] = set()
    for line, r in t.rows:
        q, a, b = clean(r["query_narrative"]), clean(r["first_choice"]), clean(r["second_choice"])
        if not (q and a and b):
            skipped["row missing a narrative"] += 1
            continue
        ans = r["correct_answer"].strip()
        level = r["analogy_level"].strip().lower()
        dis = DISANALOGY.get(r["distractor_similarity"].strip().lower())
        if ans not in ("1", "2"):
            skipped["correct_answer not 1 or 2"] += 1
            continue
        if level not in ("near", "far") or dis is None:
            skipped["unknown analogy_level or distractor_similarity"] += 1
            continue
        if (q, a, b) in seen:
            skipped["repeated row"] += 1
            continue
        seen.add((q, a, b))
        iid = r.get("id", "").strip() or f"line{line}"
        items.append(ChoiceItem(f"arn-{iid}", q, (a, b), int(ans) - 1,
                                f"{level}-analogy/{dis}-disanalogy"))
    counts = {"items": len(items)}
    return Benchmark("arn", "choice", tuple(subsample(items, limit, seed)), str(t.path),
                     counts=counts, skipped=dict(skipped))
