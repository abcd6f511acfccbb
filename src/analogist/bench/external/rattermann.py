"""The Rattermann & Gentner story sets, as used by Webb, Holyoak & Lu (2023) → ``choice`` items.

The file as published (``datasets/story_analogies/story_analogies.csv`` in the AbstractAnalogies
repository) has one row per set: ``Set #, Base, Literally similar story, True Analogy Story,
False Analogy Story, Mere-Appearance Match, New Mere-Appearance Match`` (cells span several
lines; a story not written is ``NONE WRITTEN``). In Gentner's design the four comparison stories
differ in what they share with the base: a *literally similar* story shares objects, first-order
relations and the higher-order (causal) structure; a *mere-appearance* match shares objects and
first-order relations only; a *true analogy* shares the relations and the causal structure but
not the objects; a *false analogy* shares first-order relations only.

Trials per set, each a two-way choice (the order drawn per trial with a seeded generator;
chance 0.5):

* ``near`` (Webb et al.'s near-analogy condition): literally similar (correct) vs
  mere-appearance — both share the base's surface, only one its causal structure;
* ``far`` (their far-analogy condition): true analogy (correct) vs false analogy — neither
  shares the surface, only one the causal structure;
* ``ta-vs-ma`` (Gentner, Rattermann & Forbus's soundness contrast; an addition of ours): true
  analogy (correct) vs mere appearance — structure against surface.

``New Mere-Appearance Match`` is read but not used (it is a later, often unwritten story). A
trial whose story is missing or ``NONE WRITTEN`` is skipped and counted.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from analogist.bench.external.base import Benchmark, ChoiceItem, clean, read_rows
from analogist.bench.external.sample import item_rng, subsample

COLUMNS = ("set", "base", "literally_similar_story", "true_analogy_story",
           "false_analogy_story", "mere_appearance_match")
TRIALS = (("near", "literally_similar_story", "mere_appearance_match"),
          ("far", "true_analogy_story", "false_analogy_story"),
          ("ta-vs-ma", "true_analogy_story", "mere_appearance_match"))
TYPE = {"literally_similar_story": "literal_similarity", "true_analogy_story": "true_analogy",
        "false_analogy_story": "false_analogy", "mere_appearance_match": "mere_appearance"}
MISSING = {"", "none written", "none", "n/a"}


def load_rattermann(path: Path, *, seed: int = 0, limit: int | None = None,
                    variant: str | None = None) -> Benchmark:
    """Load the near, far and true-analogy-vs-mere-appearance trials of every set."""
    t = read_rows(Path(path), {"published": COLUMNS}, "Rattermann/Gentner story CSV")
    skipped: Counter[str] = Counter(t.skipped)
    items = []
    sets = 0
    for line, r in t.rows:
        base = clean(r["base"])
        if base.lower() in MISSING:
            skipped["set without a base story"] += 1
            continue
        sets += 1
        sid = r["set"].strip() or f"line{line}"
        for cond, good, bad in TRIALS:
            a, b = clean(r[good]), clean(r[bad])
            if a.lower() in MISSING or b.lower() in MISSING:
                skipped[f"{cond} trial with a story not written"] += 1
                continue
            pair = [(a, TYPE[good], True), (b, TYPE[bad], False)]
            item_rng(seed, f"{sid}:{cond}").shuffle(pair)
            items.append(ChoiceItem(f"rattermann-{sid}-{cond}", base, (pair[0][0], pair[1][0]),
                                    0 if pair[0][2] else 1, cond, (pair[0][1], pair[1][1])))
    return Benchmark("rattermann", "choice", tuple(subsample(items, limit, seed)), str(t.path),
                     counts={"sets": sets, "trials": len(items)}, skipped=dict(skipped))
