"""StoryAnalogy multiple choice (Jiayang et al., EMNLP 2023) → ``choice`` items.

Format (JSON, as in the project's development copy): a list of objects, each
``{"source": str, "choices": [str, ...], "answer": int, "types": [str, ...]}`` — the query
story, the candidate stories, the 0-based index of the analogous one, and optionally one type
label per choice (``target`` for the analogue, ``noun`` for a distractor sharing nouns with the
source, ``random``). Assumptions: ``answer`` is 0-based; a top-level object holding the list
under ``items``/``data``/``questions`` is accepted too. The set has no conditions; the choice
types are kept so the runner can report how often the analogue outscores each distractor type.
"""

from __future__ import annotations

from pathlib import Path

from analogist.bench.external.base import (
    Benchmark,
    ChoiceItem,
    find_file,
    int_of,
    norm_col,
    read_json,
    text_of,
)
from analogist.bench.external.sample import subsample
from analogist.errors import AnalogistError


def load_storyanalogy(path: Path, *, seed: int = 0, limit: int | None = None) -> Benchmark:
    """Load StoryAnalogy multiple-choice items from a JSON file (or the folder holding it)."""
    f = find_file(Path(path), ["storyanalogy*.json", "*story*analogy*.json", "*.json"],
                  "StoryAnalogy JSON file")
    assert f is not None
    data = read_json(f)
    if isinstance(data, dict):
        for key in ("items", "data", "questions"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
    if not isinstance(data, list):
        raise AnalogistError(f"expected a JSON list of items, got {type(data).__name__}",
                             source=str(f))
    items = []
    for i, raw in enumerate(data):
        pre = f"[{i}]."
        if not isinstance(raw, dict):
            raise AnalogistError(f"expected an object, got {type(raw).__name__}", source=str(f),
                                 field=f"[{i}]")
        obj = {norm_col(k): v for k, v in raw.items()}
        query = text_of(obj, "source", f, field_prefix=pre)
        choices = obj.get("choices")
        if not isinstance(choices, list) or len(choices) < 2:
            raise AnalogistError("expected a list of at least two choice texts",
                                 source=str(f), field=pre + "choices")
        texts = tuple(text_of({"c": c}, "c", f, field_prefix=f"{pre}choices[{j}]")
                      for j, c in enumerate(choices))
        answer = int_of(obj, "answer", f, field_prefix=pre)
        if not 0 <= answer < len(texts):
            raise AnalogistError(f"answer {answer} is out of range for {len(texts)} choices "
                                 f"(0-based)", source=str(f), field=pre + "answer")
        types = obj.get("types")
        ctypes = None
        if types is not None:
            if (not isinstance(types, list) or len(types) != len(texts)
                    or not all(isinstance(t, str) for t in types)):
                raise AnalogistError("expected one type label (string) per choice",
                                     source=str(f), field=pre + "types")
            ctypes = tuple(types)
        items.append(ChoiceItem(f"storyanalogy-{i}", query, texts, answer, None, ctypes))
    if not items:
        raise AnalogistError("the file holds no items", source=str(f))
    return Benchmark("storyanalogy", "choice", tuple(subsample(items, limit, seed)), str(f))
