"""Where the tiny fixtures of the external-benchmark tests live: one folder per set, each file
with the published name, header and quirks, and rows written for these tests."""

from __future__ import annotations

from pathlib import Path

FIX = Path(__file__).resolve().parent / "data" / "external"
#: set → its variants in the fixtures ([None] for a one-file set)
VARIANTS: dict[str, list[str | None]] = {
    "arn": [None], "storyanalogy": [None], "rattermann": [None],
    "parallelparc": ["mc", "binary", "silver-mc", "silver-binary"],
    "analobench": ["t1-full-base", "t1-full-s1", "t1-subset-base", "t1-subset-s1", "t2-base"],
    "historical": ["popular", "general", "pool"],
}
CASES = [(name, v) for name, vs in VARIANTS.items() for v in vs]
