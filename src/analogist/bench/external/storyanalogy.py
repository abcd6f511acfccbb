"""StoryAnalogy multiple choice (Jiayang et al., EMNLP 2023) → ``choice`` items.

The published file (``src/data/storyanalogy_multiple_choice.json`` in the authors' repository;
the project's development copy is the same file) is a JSON list of objects
``{"source": str, "choices": [str × 4], "answer": int, "types": [str × 4]}``: the query story,
the candidates, the 0-based index of the analogue, and one label per choice (``target`` for the
analogue, ``noun`` for a distractor sharing nouns with the source, ``random``). The task is to
pick the analogue; chance is 1/4. The set has no cells; the runner reports how often the
analogue outscores each distractor type. Items with a missing or malformed field are skipped
and counted.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from analogist.bench.external.base import Benchmark, ChoiceItem, clean, norm_col, read_json
from analogist.bench.external.sample import subsample
from analogist.errors import AnalogistError

EXPECTED = "a StoryAnalogy JSON list of objects with the keys source, choices, answer, types"


def load_storyanalogy(path: Path, *, seed: int = 0, limit: int | None = None,
                      variant: str | None = None) -> Benchmark:
    """Load StoryAnalogy multiple-choice items from its published JSON file."""
    f = Path(path)
    data = read_json(f, EXPECTED)
    if not isinstance(data, list) or not data or not isinstance(data[0], dict) \
            or not {"source", "choices", "answer"} <= {norm_col(k) for k in data[0]}:
        raise AnalogistError(f"not {EXPECTED}", source=str(f))
    items = []
    skipped: Counter[str] = Counter()
    for i, raw in enumerate(data):
        obj = {norm_col(k): v for k, v in raw.items()} if isinstance(raw, dict) else {}
        query = clean(obj.get("source"))
        choices = obj.get("choices")
        texts = tuple(clean(c) for c in choices) if isinstance(choices, list) else ()
        answer = obj.get("answer")
        types = obj.get("types")
        if not query or len(texts) < 2 or not all(texts):
            skipped["item missing a story"] += 1
            continue
        if isinstance(answer, bool) or not isinstance(answer, int) \
                or not 0 <= answer < len(texts):
            skipped["answer missing or out of range"] += 1
            continue
        ctypes = None
        if isinstance(types, list) and len(types) == len(texts) \
                and all(isinstance(t, str) for t in types):
            ctypes = tuple(types)
        elif types is not None:
            skipped["types malformed (kept the item without them)"] += 1
        items.append(ChoiceItem(f"storyanalogy-{i}", query, texts, answer, None, ctypes))
    if not items:
        raise AnalogistError(f"no usable item; expected {EXPECTED}", source=str(f))
    return Benchmark("storyanalogy", "choice", tuple(subsample(items, limit, seed)), str(f),
                     counts={"items": len(items)}, skipped=dict(skipped))
