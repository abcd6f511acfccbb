"""The surface words of a namespace's episodes as an inverted index, for the decoy probe of
retrieval: which stored row's surface is most like a target's (Jaccard similarity of the two word
sets), found from the rows that share a word with the target instead of a set intersection with
every row."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Set

import numpy as np

__all__ = ["SurfaceIndex"]


class SurfaceIndex:
    """Rows ``0 .. n-1`` (positions, appended in order), each with a set of surface words:
    ``word → rows holding it`` and each row's number of words."""

    __slots__ = ("_postings", "_sizes")

    def __init__(self) -> None:
        self._postings: dict[str, array[int]] = {}
        self._sizes: array[int] = array("q")

    def __len__(self) -> int:
        return len(self._sizes)

    def append(self, word_sets: Iterable[Set[str] | None]) -> None:
        """Add rows after the last one, each with its words (None or empty: a row without a
        surface, which is never the most similar)."""
        for words in word_sets:
            row = len(self._sizes)
            self._sizes.append(len(words) if words else 0)
            for w in words or ():
                got = self._postings.get(w)
                if got is None:
                    self._postings[w] = array("q", (row,))
                else:
                    got.append(row)

    def most_similar(self, words: Set[str], excluded: Iterable[int] = (),
                     among: Iterable[int] | None = None) -> tuple[float, int] | None:
        """``(similarity, row)`` of the row whose words are most like ``words`` by Jaccard
        similarity (``|A ∩ B| / |A ∪ B|``), the lowest row among equals, leaving out the rows
        ``excluded`` (and, when ``among`` is given, every row not in it); None when no such row
        shares a word with ``words``. The similarity is the same float as
        ``len(a & b) / len(a | b)``: both sizes are exact whole numbers, divided once."""
        n = len(self._sizes)
        lists = [self._postings[w] for w in words if w in self._postings]
        if not n or not lists:
            return None
        hits = np.concatenate([np.frombuffer(a, dtype=np.int64) for a in lists])
        del lists  # the buffer views go with it, so that rows can be appended again
        inter = np.bincount(hits, minlength=n)
        if among is not None:
            keep = np.zeros(n, dtype=bool)
            rows_in = np.fromiter((r for r in among if 0 <= r < n), dtype=np.int64)
            keep[rows_in] = True
            inter[~keep] = 0
        out = [int(r) for r in excluded if 0 <= r < n]
        if out:
            inter[out] = 0
        rows = np.flatnonzero(inter)
        if not len(rows):
            return None
        shared = inter[rows].astype(np.float64)
        sizes = np.frombuffer(self._sizes, dtype=np.int64)[rows]
        sims = shared / (len(words) + sizes - shared)
        best = int(np.argmax(sims))  # the first of the largest: the lowest row
        return float(sims[best]), int(rows[best])
