"""The Rattermann / Gentner story sets (Rattermann & Gentner; used by Webb et al. 2023) →
``choice`` items.

Format (CSV): one row per base story with the columns ``base``, ``literally_similar``,
``true_analogy``, ``false_analogy`` and ``mere_appearance`` (spellings such as
``literal_similarity``/``LS``, ``TA``, ``FA``, ``MA`` are accepted); an ``id`` column is used when
present. Each row gives two two-way trials (our reading of the standard design, stated as an
assumption):

* **near**: literally similar (correct) vs mere appearance — both share the base's surface, only
  the first shares its relational structure;
* **far**: true analogy (correct) vs false analogy — neither shares the surface, only the first
  shares the higher-order (causal) structure.

The order of the two choices is drawn per trial with a seeded generator. Chance is 0.5.
"""

from __future__ import annotations

from pathlib import Path

from analogist.bench.external.base import Benchmark, ChoiceItem, find_file, read_table, text_of
from analogist.bench.external.sample import item_rng, subsample

ALIASES = {
    "base": ("base_story", "source"),
    "literally_similar": ("literal_similarity", "literal", "ls"),
    "true_analogy": ("ta",),
    "false_analogy": ("fa",),
    "mere_appearance": ("ma",),
}


def load_rattermann(path: Path, *, seed: int = 0, limit: int | None = None) -> Benchmark:
    """Load near and far two-way trials from a Rattermann/Gentner story CSV."""
    f = find_file(Path(path), ["rattermann*.csv", "*gentner*.csv", "*.csv"],
                  "Rattermann story CSV file")
    assert f is not None
    rows = read_table(f, tuple(ALIASES), aliases={k: v for k, v in ALIASES.items()})
    rows = subsample(rows, limit, seed)
    items = []
    for line, r in rows:
        rid = (r.get("id") or r.get("story") or "").strip() or f"line{line}"
        base = text_of(r, "base", f, line)
        for cond, good, bad in (("near", "literally_similar", "mere_appearance"),
                                ("far", "true_analogy", "false_analogy")):
            pair = [(text_of(r, good, f, line), True), (text_of(r, bad, f, line), False)]
            item_rng(seed, f"{rid}:{cond}").shuffle(pair)
            answer = 0 if pair[0][1] else 1
            types = tuple(good if ok else bad for _, ok in pair)
            items.append(ChoiceItem(f"rattermann-{rid}-{cond}", base,
                                    tuple(t for t, _ in pair), answer, cond, types))
    return Benchmark("rattermann", "choice", tuple(items), str(f))
