"""An approximate nearest-neighbour index for the embedding channel of stage 1 (optional).

Exact stage 1 takes the cosine of the query's level embedding with every stored one (a matrix–
vector product: linear in the namespace). At scale an HNSW graph (Malkov & Yashunin 2018,
*Efficient and robust approximate nearest neighbor search using Hierarchical Navigable Small
World graphs*, IEEE TPAMI 42) finds the nearest ones in about logarithmic time; the library is
`usearch <https://github.com/unum-cloud/usearch>`_ (a compiled wheel: ``pip install
'analogist[ann]'``), imported only when an index is built.

Departure from exact search, by design and only when asked for
(:attr:`analogist.retrieve.RetrieveParams.embedding_ann`): the channel scores the ``k`` nearest
rows the graph returns and gives every other row 0, so a row outside the ``k`` loses its
embedding term in the fusion. ``benchmarks/ann_recall.py`` measures how often the approximate
``k`` nearest are the exact ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from analogist.errors import AnalogistError
from analogist.params import bounded, check_bounds

__all__ = ["AnnParams", "HnswChannel", "ann_available"]


def ann_available() -> bool:
    """Whether the optional HNSW library is installed."""
    try:
        import usearch.index  # noqa: F401  (heavy optional dependency, imported on demand)
    except ImportError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class AnnParams:
    """HNSW settings, named as in Malkov & Yashunin (2018).

    Attributes:
        M: neighbours per node (``connectivity``).
        ef_construction: candidate list size while building (``expansion_add``).
        ef_search: candidate list size while searching (``expansion_search``); at least ``k``.
        k: rows the channel scores per query.
    """

    M: int = bounded(16, lo=1, integer=True)
    ef_construction: int = bounded(128, lo=1, integer=True)
    ef_search: int = bounded(256, lo=1, integer=True)
    k: int = bounded(200, lo=1, integer=True)

    def __post_init__(self) -> None:
        check_bounds(self)


class HnswChannel:
    """HNSW over one channel's vectors, keyed by row position in the stage-1 index."""

    def __init__(self, rows: np.ndarray, mat: np.ndarray, params: AnnParams | None = None, *,
                 threads: int = 1) -> None:
        from usearch.index import Index  # heavy optional dependency, imported on demand

        self.params = params or AnnParams()
        if mat.ndim != 2 or len(rows) != len(mat):
            raise AnalogistError("rows and vectors must align", field="mat")
        self.dim = int(mat.shape[1])
        self._index: Any = Index(ndim=self.dim, metric="cos", dtype="f32",
                                 connectivity=self.params.M,
                                 expansion_add=self.params.ef_construction,
                                 expansion_search=max(self.params.ef_search, self.params.k))
        if len(rows):
            self._index.add(np.asarray(rows, dtype=np.uint64),
                            np.ascontiguousarray(mat, dtype=np.float32), threads=threads)

    def __len__(self) -> int:
        return len(self._index)

    def search(self, q: np.ndarray, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(row positions, cosines)`` of the (approximately) ``k`` nearest rows, nearest
        first."""
        k = min(k or self.params.k, len(self))
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        m = self._index.search(np.asarray(q, dtype=np.float32), k)
        keys = np.asarray(m.keys, dtype=np.int64)
        sims = (1.0 - np.asarray(m.distances, dtype=np.float64)).astype(np.float32)
        return keys, sims
