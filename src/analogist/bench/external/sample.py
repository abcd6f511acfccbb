"""Seeded subsampling shared by the loaders."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from analogist.errors import AnalogistError

T = TypeVar("T")


def subsample(items: Sequence[T], limit: int | None, seed: int) -> list[T]:
    """``limit`` items drawn without replacement with ``random.Random(seed)``, kept in file order;
    all items when ``limit`` is None or not smaller than their number."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                              or limit < 1):
        raise AnalogistError(f"limit must be a positive integer, got {limit!r}", field="limit")
    if limit is None or limit >= len(items):
        return list(items)
    keep = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in keep]


def item_rng(seed: int, key: str) -> random.Random:
    """A generator for one item, stable across runs and independent of the other items."""
    return random.Random(f"{seed}:{key}")
