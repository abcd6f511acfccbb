"""The MAC content channel: TF-IDF content vectors and vectorised cosine retrieval.

MAC (Forbus, Gentner & Law 1995, *MAC/FAC: A model of similarity-based retrieval*, Cognitive
Science 19) scores every stored episode by the dot product of content vectors (counts of
functors) against the probe, cheaply and in parallel, and passes a shortlist to SME. We depart
from the plain count dot product in two ways, as seed 000 §11 recommends: counts are weighted by an
inverse document frequency over the corpus (so a shared rare motif counts for more than a shared
"A causes B") and rows are L2-normalised (cosine), so large episodes do not dominate.

The index is built over **one namespace's** episodes: the caller passes only those, so an IDF never
crosses a namespace. Rows are held as a CSR matrix in plain numpy arrays (``indptr``, ``indices``,
``data``); a column-sorted copy (CSC) serves queries, which touch only the query's nonzero
columns: a query is a sparse matrix–vector product over those columns (one vectorised
scatter-add per query feature; no Python loop over episodes). Rows added later (ids above every
stored one) are merged into the column order without re-sorting (:meth:`ContentIndex.append`),
and the whole index saves to and loads from a directory of ``.npy`` files
(:meth:`ContentIndex.save`, :meth:`ContentIndex.load`). :meth:`ContentIndex.top` finds the best
rows of a query exactly without scoring every row: it bounds what each query column can add,
reads the rare columns whole and the common ones only for the rows still in the running.

IDF is the smoothed ``log((1 + N) / (1 + df)) + 1`` (a feature in every row gets weight 1, rarer
ones more); term frequency is the raw count, or ``1 + log(count)`` with ``sublinear_tf``. A
query's features that no row has get ``df = 0`` and count in the query's norm (so only an
identical structure scores 1.0). Ties are broken by id ascending; results are deterministic.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from analogist.errors import AnalogistError

__all__ = ["ContentIndex", "ContentIndexError"]

SEED_AT = 0.25
""":meth:`ContentIndex.top` scores its first candidates exactly once the columns not yet added
could add at most this much to a cosine."""
DENSE_SHARE = 8
"""A column in at least one row of this many has a dense copy for :meth:`ContentIndex.top`."""


class ContentIndexError(AnalogistError):
    """Bad input to an index: duplicate or unknown ids, bad feature values."""


def _check_features(f: Mapping[str, float], where: str) -> dict[str, float]:
    if not isinstance(f, Mapping):
        raise ContentIndexError(f"expected a mapping of feature name to count, got {type(f).__name__}",
                          field=where)
    out: dict[str, float] = {}
    for k, v in f.items():
        if not isinstance(k, str) or not k:
            raise ContentIndexError(f"feature names must be non-empty strings, got {k!r}"[:200],
                              field=where)
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise ContentIndexError(f"count of {k[:80]!r} must be a number, got {type(v).__name__}",
                              field=where)
        x = float(v)
        if not math.isfinite(x) or x < 0:
            raise ContentIndexError(f"count of {k[:80]!r} must be finite and >= 0, got {x}", field=where)
        if x > 0:
            out[k] = x
    return out


class ContentIndex:
    """TF-IDF cosine index over episodes' content counts (see the module docstring).

    Args:
        ids: one integer id per row (unique).
        features: feature name → count, one mapping per id.
        sublinear_tf: use ``1 + log(count)`` instead of the raw count.
    """

    def __init__(self, ids: Sequence[int] = (), features: Sequence[Mapping[str, float]] = (),
                 *, sublinear_tf: bool = False) -> None:
        self.sublinear_tf = bool(sublinear_tf)
        self._vocab: dict[str, int] = {}
        self._names: list[str] = []
        self._ids = np.zeros(0, dtype=np.int64)
        self._row_map: dict[int, int] | None = {}
        self._indptr = np.zeros(1, dtype=np.int64)
        self._indices = np.zeros(0, dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.float64)
        # column → its largest weight (the bound of :meth:`top`), filled per queried column
        self._colmax: dict[int, float] = {}
        # column → its dense copy (:meth:`_dense`), made on first use
        self._dense_cols: dict[int, np.ndarray] = {}
        self._dense_asks: dict[int, int] = {}  # column → queries that asked for it so far
        # zeroed row-length buffers for :meth:`top`, one per concurrent query
        self._scratch: list[np.ndarray] = []
        self.add_many(ids, features)

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, ids: Sequence[int] | np.ndarray, names: Sequence[str],
                    indptr: np.ndarray, indices: np.ndarray, counts: np.ndarray, *,
                    sublinear_tf: bool = False, _csc_src: np.ndarray | None = None
                    ) -> ContentIndex:
        """Build from a raw-count CSR matrix (columns named by ``names``) without Python loops
        over rows: for large corpora and benchmarks."""
        self = cls(sublinear_tf=sublinear_tf)
        ids_a = np.asarray(ids, dtype=np.int64)
        indptr = np.asarray(indptr, dtype=np.int64)
        indices = np.asarray(indices, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.float64)
        n = len(ids_a)
        if indptr.shape != (n + 1,) or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
            raise ContentIndexError("indptr must be non-decreasing, start at 0, length len(ids)+1",
                              field="indptr")
        if len(indices) != indptr[-1] or len(counts) != indptr[-1]:
            raise ContentIndexError("indices and counts must have indptr[-1] entries", field="indices")
        if len(indices) and (indices.min() < 0 or indices.max() >= len(names)):
            raise ContentIndexError("a column index is out of range of names", field="indices")
        starts = np.zeros(len(indices), dtype=bool)
        starts[indptr[:-1][np.diff(indptr) > 0]] = True
        if len(indices) > 1 and np.any((np.diff(indices) <= 0) & ~starts[1:]):
            raise ContentIndexError("column indices must increase strictly within each row",
                                    field="indices")
        if not np.all(np.isfinite(counts)) or np.any(counts < 0):
            raise ContentIndexError("counts must be finite and >= 0", field="counts")
        if len(set(names)) != len(names):
            raise ContentIndexError("feature names repeat", field="names")
        if n > 1 and not np.all(np.diff(ids_a) > 0) and len(np.unique(ids_a)) != n:
            raise ContentIndexError("ids repeat", field="ids")
        self._names = list(names)
        self._vocab = {k: i for i, k in enumerate(self._names)}
        self._ids = ids_a
        self._row_map = None
        self._indptr, self._indices, self._counts = indptr, indices, counts
        if _csc_src is not None:
            _check_csc(_csc_src, indices)
        self._reweight(csc_src=_csc_src)
        return self

    def append(self, ids: Sequence[int] | np.ndarray, names: Sequence[str],
               indptr: np.ndarray, indices: np.ndarray, counts: np.ndarray) -> None:
        """Append rows given as a raw-count CSR matrix whose columns are named by ``names`` (the
        caller's own numbering; names new to the index become new columns). Every id must be
        greater than every id in the index, so that rows stay in id order.

        The result equals an index built from all rows at once (same column numbering, same
        weights, bit for bit): the new rows' entries are merged into the column-sorted copy
        without re-sorting it, and the weights are recomputed (every IDF changes with N)."""
        new = ContentIndex.from_arrays(ids, names, indptr, indices, counts,
                                       sublinear_tf=self.sublinear_tf)
        if len(new) == 0:
            return
        if len(self._ids) and int(new._ids[0]) <= int(self._ids[-1]):
            raise ContentIndexError("appended ids must be greater than every id in the index",
                                    field="ids")
        if len(new._ids) > 1 and np.any(np.diff(new._ids) <= 0):
            raise ContentIndexError("appended ids must increase", field="ids")
        remap = np.asarray([self._col(k) for k in new._names], dtype=np.int64)
        cols = remap[new._indices] if len(new._indices) else new._indices
        # keep each row's columns increasing in the index's own numbering
        lengths = np.diff(new._indptr)
        rows = np.repeat(np.arange(len(new._ids), dtype=np.int64), lengths)
        order = np.lexsort((cols, rows))
        cols, vals = cols[order], new._counts[order]
        nnz_old, v = len(self._indices), len(self._names)
        df_old = np.bincount(self._indices, minlength=v) if nnz_old else np.zeros(v, np.int64)
        df_add = np.bincount(cols, minlength=v)
        old_ptr = np.concatenate([[0], np.cumsum(df_old)]).astype(np.int64)
        new_ptr = np.concatenate([[0], np.cumsum(df_old + df_add)]).astype(np.int64)
        csc_src = np.empty(nnz_old + len(cols), dtype=np.int64)
        # old entries move right by the number of new entries in earlier columns
        shift = np.repeat(new_ptr[:-1] - old_ptr[:-1], df_old)
        csc_src[np.arange(nnz_old, dtype=np.int64) + shift] = self._csc_src
        # new entries go after the old ones of their column, in row order
        by_col = np.argsort(cols, kind="stable")
        sc = cols[by_col]
        first = np.searchsorted(sc, sc, side="left")
        rank = np.arange(len(sc), dtype=np.int64) - first
        csc_src[new_ptr[sc] + df_old[sc] + rank] = nnz_old + by_col
        self._ids = np.concatenate([self._ids, new._ids])
        self._row_map = None
        self._indptr = np.concatenate([self._indptr, self._indptr[-1] + new._indptr[1:]])
        self._indices = np.concatenate([self._indices, cols])
        self._counts = np.concatenate([self._counts, vals])
        self._reweight(csc_src=csc_src)

    # -- persistence ----------------------------------------------------------------------
    _FILES = ("ids", "indptr", "indices", "counts", "csc_src")
    # derived from the above, saved so that a load recomputes nothing over all entries
    _DERIVED = ("df", "csc_rows", "csc_data")
    FORMAT = 2
    """Version of the directory layout (1: raw arrays only, checked entry by entry on load)."""

    def save(self, directory: str | Path) -> None:
        """Write the index into ``directory`` (created; files ``*.npy`` and ``names.json``, which
        also holds the CRC-32 of every array's data)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        crcs = {}
        for name in self._FILES + self._DERIVED:
            a = np.ascontiguousarray(getattr(self, f"_{name}"))
            np.save(d / f"{name}.npy", a, allow_pickle=False)
            crcs[name] = _crc(a)
        (d / "names.json").write_text(
            json.dumps({"format": self.FORMAT, "names": self._names,
                        "sublinear_tf": self.sublinear_tf, "crc32": crcs},
                       ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path) -> ContentIndex:
        """Read an index written by :meth:`save`. The arrays are memory-mapped (a query reads
        only its own columns' pages) and each is checked against the CRC-32 :meth:`save`
        recorded, besides its shape and type and the lengths that tie them together: a missing,
        truncated, altered or inconsistent file is a :class:`ContentIndexError`, never a
        silently wrong index. Nothing is recomputed over all entries (the weights in column
        order are saved; the row-order weights are derived on first use)."""
        d = Path(directory)
        try:
            meta = json.loads((d / "names.json").read_text(encoding="utf-8"))
            arrays = {name: _load_array(d / f"{name}.npy")
                      for name in cls._FILES + cls._DERIVED}
        except (OSError, ValueError, EOFError) as e:
            raise ContentIndexError(f"unreadable index file: {e}"[:300], source=str(d)) from None
        if not isinstance(meta, dict) or meta.get("format") != cls.FORMAT:
            raise ContentIndexError("index files of an unknown format", source=str(d))
        names, crcs = meta.get("names"), meta.get("crc32")
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
            raise ContentIndexError("names.json is not a list of feature names", source=str(d))
        if len(set(names)) != len(names):
            raise ContentIndexError("feature names repeat", source=str(d))
        if not isinstance(crcs, dict):
            raise ContentIndexError("names.json has no checksums", source=str(d))
        for name, a in arrays.items():
            want = np.float64 if name in ("counts", "df", "csc_data") else np.int64
            if a.ndim != 1 or a.dtype != want:
                raise ContentIndexError(f"{name}.npy has the wrong shape or type", source=str(d))
            if _crc(a) != crcs.get(name):
                raise ContentIndexError(f"{name}.npy does not match its checksum",
                                        source=str(d))
        ids, indptr, df = arrays["ids"], arrays["indptr"], arrays["df"]
        n, nnz, v = len(ids), len(arrays["indices"]), len(names)
        if indptr.shape != (n + 1,) or indptr[0] != 0 or indptr[-1] != nnz or len(df) != v \
                or any(len(arrays[k]) != nnz for k in ("counts", "csc_src", "csc_rows",
                                                       "csc_data")):
            raise ContentIndexError("the index arrays do not fit together", source=str(d))
        self = cls(sublinear_tf=bool(meta.get("sublinear_tf", False)))
        self._names = list(names)
        self._vocab = {k: i for i, k in enumerate(self._names)}
        self._ids, self._row_map = ids, None
        self._indptr, self._indices, self._counts = indptr, arrays["indices"], arrays["counts"]
        self._df = df
        self._idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        self._col_ptr = np.concatenate([[0], np.cumsum(df.astype(np.int64))]).astype(np.int64)
        if self._col_ptr[-1] != nnz:
            raise ContentIndexError("the document frequencies do not fit the matrix",
                                    source=str(d))
        # plain views of the mapped files: slicing a memmap goes through Python on every call
        self._csc_src, self._csc_rows, self._csc_data = (
            np.asarray(arrays["csc_src"]), np.asarray(arrays["csc_rows"]),
            np.asarray(arrays["csc_data"]))
        self._row_of_a = self._data_a = None  # derived on first use (queries never need them)
        self._colmax, self._dense_cols, self._dense_asks, self._scratch = {}, {}, {}, []
        return self

    def add_many(self, ids: Iterable[int], features: Iterable[Mapping[str, float]]) -> None:
        """Add rows (ids must be new); IDF and weights are recomputed (vectorised)."""
        ids = list(ids)
        features = list(features)
        if len(ids) != len(features):
            raise ContentIndexError(f"{len(ids)} ids but {len(features)} feature rows", field="features")
        new_ids: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        lengths: list[int] = []
        seen: set[int] = set()
        for i, (id_, f) in enumerate(zip(ids, features, strict=True)):
            if isinstance(id_, bool) or not isinstance(id_, (int, np.integer)):
                raise ContentIndexError(f"id must be an integer, got {id_!r}"[:200], field=f"ids[{i}]")
            id_ = int(id_)
            if id_ in self._row or id_ in seen:
                raise ContentIndexError(f"id {id_} is already in the index", field=f"ids[{i}]")
            seen.add(id_)
            row = _check_features(f, f"features[{i}]")
            items = sorted((self._col(k), v) for k, v in row.items())
            cols.extend(c for c, _v in items)
            vals.extend(v for _c, v in items)
            lengths.append(len(items))
            new_ids.append(id_)
        if not new_ids:
            if not hasattr(self, "_csc_data"):
                self._reweight()
            return
        start = len(self._ids)
        row = self._row
        self._ids = np.concatenate([self._ids, np.asarray(new_ids, dtype=np.int64)])
        for j, id_ in enumerate(new_ids):
            row[id_] = start + j
        self._row_map = row
        self._indptr = np.concatenate(
            [self._indptr, self._indptr[-1] + np.cumsum(np.asarray(lengths, dtype=np.int64))])
        self._indices = np.concatenate([self._indices, np.asarray(cols, dtype=np.int64)])
        self._counts = np.concatenate([self._counts, np.asarray(vals, dtype=np.float64)])
        self._reweight()

    def add(self, id: int, features: Mapping[str, float]) -> None:
        """Add one row."""
        self.add_many([id], [features])

    def remove(self, id: int) -> None:
        """Remove a row; IDF and weights are recomputed."""
        self.remove_many([id])

    def remove_many(self, ids: Iterable[int]) -> None:
        drop = []
        for id_ in ids:
            if int(id_) not in self._row:
                raise ContentIndexError(f"id {id_} is not in the index", field="id")
            drop.append(self._row[int(id_)])
        if not drop:
            return
        keep_rows = np.ones(len(self._ids), dtype=bool)
        keep_rows[drop] = False
        lengths = np.diff(self._indptr)
        keep_nnz = np.repeat(keep_rows, lengths)
        self._indices = self._indices[keep_nnz]
        self._counts = self._counts[keep_nnz]
        self._indptr = np.concatenate([[0], np.cumsum(lengths[keep_rows])]).astype(np.int64)
        self._ids = self._ids[keep_rows]
        self._row_map = None
        self._reweight()

    @property
    def _row(self) -> dict[int, int]:
        """id → row position (built on first use: queries never need it)."""
        if self._row_map is None:
            self._row_map = {int(x): i for i, x in enumerate(self._ids.tolist())}
        return self._row_map

    def _col(self, name: str) -> int:
        c = self._vocab.get(name)
        if c is None:
            c = self._vocab[name] = len(self._names)
            self._names.append(name)
        return c

    def _tf(self, counts: np.ndarray) -> np.ndarray:
        return 1.0 + np.log(counts) if self.sublinear_tf else counts

    def _reweight(self, csc_src: np.ndarray | None = None) -> None:
        """Recompute IDF, weights and the column-sorted copy. ``csc_src`` (the CSR positions in
        column order, stable within a column) is computed with a sort when not given."""
        v = len(self._names)
        self._df = np.bincount(self._indices, minlength=v).astype(np.float64)
        self._idf = np.log((1.0 + len(self._ids)) / (1.0 + self._df)) + 1.0
        self._row_of_a = self._data_a = None
        self._colmax, self._dense_cols, self._dense_asks, self._scratch = {}, {}, {}, []
        self._csc_src = np.argsort(self._indices, kind="stable") if csc_src is None else csc_src
        self._col_ptr = np.concatenate([[0], np.cumsum(self._df.astype(np.int64))]).astype(
            np.int64)
        self._csc_rows = self._row_of[self._csc_src]
        self._csc_data = self._data[self._csc_src]

    @property
    def _row_of(self) -> np.ndarray:
        """The row of every CSR entry."""
        if self._row_of_a is None:
            lengths = np.diff(self._indptr)
            self._row_of_a = np.repeat(np.arange(len(self._ids), dtype=np.int64), lengths)
        return self._row_of_a

    @property
    def _data(self) -> np.ndarray:
        """The L2-normalised TF-IDF weights in CSR order."""
        if self._data_a is None:
            n = len(self._ids)
            w = self._tf(self._counts) * self._idf[self._indices] if len(self._indices) else \
                np.zeros(0)
            norms = np.sqrt(np.bincount(self._row_of, weights=w * w, minlength=n))
            safe = np.where(norms > 0, norms, 1.0)
            self._data_a = w / safe[self._row_of] if len(w) else np.zeros(0)
        return self._data_a

    # -- views -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, id: object) -> bool:
        return isinstance(id, (int, np.integer)) and int(id) in self._row

    @property
    def ids(self) -> np.ndarray:
        return self._ids.copy()

    @property
    def feature_names(self) -> list[str]:
        return list(self._names)

    @property
    def indptr(self) -> np.ndarray:
        return self._indptr

    @property
    def indices(self) -> np.ndarray:
        return self._indices

    @property
    def data(self) -> np.ndarray:
        """The L2-normalised TF-IDF weights (CSR order)."""
        return self._data

    def idf(self, name: str) -> float:
        """The IDF of feature ``name`` in this corpus (``df = 0`` when unseen)."""
        c = self._vocab.get(name)
        df = 0.0 if c is None else float(self._df[c])
        return math.log((1.0 + len(self._ids)) / (1.0 + df)) + 1.0

    def vector(self, id: int) -> dict[str, float]:
        """The weighted, normalised row of ``id`` as feature → weight."""
        r = self._row.get(int(id))
        if r is None:
            raise ContentIndexError(f"id {id} is not in the index", field="id")
        a, b = self._indptr[r], self._indptr[r + 1]
        return {self._names[c]: float(x) for c, x in zip(self._indices[a:b].tolist(),
                                                          self._data[a:b].tolist(), strict=True)}

    # -- queries ---------------------------------------------------------------------------
    def _query_weights(self, features: Mapping[str, float]
                       ) -> tuple[np.ndarray, np.ndarray, float] | None:
        """The query's known columns (increasing), their weights and the query's squared norm
        (its unknown features included); None for an empty query or index."""
        q = _check_features(features, "query")
        n = len(self._ids)
        if not q or n == 0:
            return None
        known = sorted((self._vocab[k], v) for k, v in q.items() if k in self._vocab)
        unknown = np.asarray([v for k, v in q.items() if k not in self._vocab], dtype=np.float64)
        unseen_idf = math.log(1.0 + n) + 1.0
        qn2 = float(np.sum((self._tf(unknown) * unseen_idf) ** 2)) if len(unknown) else 0.0
        cols = np.asarray([c for c, _v in known], dtype=np.int64)
        qw = self._tf(np.asarray([v for _c, v in known], dtype=np.float64)) * self._idf[cols]
        if known:
            qn2 += float(np.sum(qw * qw))
        return cols, qw, qn2

    def scores(self, features: Mapping[str, float]) -> np.ndarray:
        """Cosine of the query against every row, aligned with :attr:`ids`."""
        n = len(self._ids)
        scores = np.zeros(n, dtype=np.float64)
        got = self._query_weights(features)
        if got is None:
            return scores
        cols, qw, qn2 = got
        ptr, rows, data = self._col_ptr, self._csc_rows, self._csc_data
        # the sparse product over the query's columns, one scatter-add per column, in column
        # order (each row's sum is accumulated in the same order as a bincount over the
        # concatenated columns would: the scores are the same to the last bit)
        for c, w in zip(cols.tolist(), qw.tolist(), strict=True):
            a, b = int(ptr[c]), int(ptr[c + 1])
            if a < b:  # unbuffered, in entry order: as ``scores[r] += ...``, but faster
                np.add.at(scores, rows[a:b], data[a:b] * w)
        if qn2 <= 0:
            return np.zeros(n, dtype=np.float64)
        # in place: a fresh array per step costs more than the arithmetic (each one's pages
        # are faulted in anew at a million rows)
        np.divide(scores, math.sqrt(qn2), out=scores)
        return np.minimum(scores, 1.0, out=scores)

    def scores_at(self, positions: np.ndarray, features: Mapping[str, float]) -> np.ndarray:
        """:meth:`scores` of the rows at ``positions`` (increasing, unique) only: the same
        numbers to the last bit (each row's products added in the same column order), found
        by binary search in each query column instead of a pass over every row."""
        got = self._query_weights(features)
        pos = np.asarray(positions, dtype=np.int64)
        if got is None or got[2] <= 0:
            return np.zeros(len(pos), dtype=np.float64)
        return self._cosines_at(pos, *got)

    def _cosines_at(self, pos: np.ndarray, cols: np.ndarray, qw: np.ndarray,
                    qn2: float) -> np.ndarray:
        out = np.zeros(len(pos), dtype=np.float64)
        ptr, rows, data = self._col_ptr, self._csc_rows, self._csc_data
        if len(pos):
            for c, w in zip(cols.tolist(), qw.tolist(), strict=True):
                dense = self._dense(c)
                if dense is not None:  # 0.0 for a row without the feature: x + 0.0 is x
                    out += dense[pos] * w
                    continue
                a, b = int(ptr[c]), int(ptr[c + 1])
                if a == b:
                    continue
                r = rows[a:b]  # the column's rows, increasing
                i = np.searchsorted(r, pos)
                np.minimum(i, b - a - 1, out=i)
                hit = r[i] == pos
                out[hit] += data[a:b][i[hit]] * w
        np.divide(out, math.sqrt(qn2), out=out)
        return np.minimum(out, 1.0, out=out)

    def _dense(self, c: int) -> np.ndarray | None:
        """Column ``c`` as a row-length array (0.0 where a row lacks the feature), for a
        column in at least 1/:data:`DENSE_SHARE` of the rows that queries have asked for before
        (kept once made); else None (the caller searches the column instead)."""
        ptr = self._col_ptr
        a, b = int(ptr[c]), int(ptr[c + 1])
        n = len(self._ids)
        if (b - a) * DENSE_SHARE < n or n == 0:
            return None
        got = self._dense_cols.get(c)
        if got is None:
            # made on a column's second query: a process that asks once does not pay for it
            seen = self._dense_asks.get(c, 0) + 1
            self._dense_asks[c] = seen
            if seen < 2:
                return None
            got = np.zeros(n, dtype=np.float64)
            got[self._csc_rows[a:b]] = self._csc_data[a:b]
            self._dense_cols[c] = got
        return got

    def _column_max(self, cols: np.ndarray) -> np.ndarray:
        """The largest weight of each of ``cols`` (computed once per column and weighting)."""
        have, ptr, data = self._colmax, self._col_ptr, self._csc_data
        out = np.empty(len(cols), dtype=np.float64)
        for i, c in enumerate(cols.tolist()):
            m = have.get(c)
            if m is None:
                a, b = int(ptr[c]), int(ptr[c + 1])
                m = have[c] = float(data[a:b].max()) if a < b else 0.0
            out[i] = m
        return out

    def top(self, features: Mapping[str, float], k: int, *, weight: float = 1.0,
            bonus_rows: np.ndarray | None = None, bonus: float = 0.0
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The ``k`` best rows by ``fused = weight * cosine + bonus * [row in bonus_rows]``,
        exactly as a pass over every row would rank them (ties by position ascending), without
        scoring every row: ``(positions best first, their cosines, their fused scores)``, the
        numbers equal to the last bit to those of :meth:`scores`. None when the answer would
        hold a row whose fused score is not positive, when no row shares a feature with the
        query, when ``k`` covers every row or a weight is not positive: the caller then scores
        every row. ``bonus_rows``: increasing positions.

        How (an exact max-score top-k): a query column can add at most its weight times the
        column's largest entry to a row's cosine. Columns are added into a row-length buffer
        rarest first. Once what the columns not yet added could still give is at most
        :data:`SEED_AT`, the ``k`` best rows so far (and every bonus row) are scored exactly:
        their ``k``-th fused score is a floor the answer's cannot be below. Columns are added
        until the bound of the rest is below the floor, so that no row outside the added ones
        can reach it; of the rows inside, those whose partial sum plus that rest is below the
        floor are dropped, and the common columns left are read for the remaining rows only
        (from a dense copy of each), dropping rows as their bound falls below the floor. The
        survivors are scored exactly (each row's products added in column order, as
        :meth:`scores` adds them)."""
        n = len(self._ids)
        if k <= 0 or k >= n or weight <= 0 or bonus < 0 or self.sublinear_tf:
            return None
        got = self._query_weights(features)
        if got is None or got[2] <= 0 or not len(got[0]):
            return None
        cols, qw, qn2 = got
        qn = math.sqrt(qn2)
        brows = np.zeros(0, dtype=np.int64) if bonus_rows is None or bonus <= 0 else \
            np.asarray(bonus_rows, dtype=np.int64)
        ptr, rows, data = self._col_ptr, self._csc_rows, self._csc_data
        # bounds on each column's share of a cosine, rounded up (a margin far above the
        # rounding error of any sum of them)
        ub = qw * self._column_max(cols) / qn * (1.0 + 1e-9) + 1e-12
        # the columns that bound most per entry first: the common ones, whose weights are
        # small, are left for last (and, with luck, read for a few rows only)
        order = np.lexsort((cols, -(ub / np.maximum(np.diff(ptr)[cols], 1))))
        # rest[t]: the bound of the columns from the t-th of ``order`` on
        rest = np.concatenate([np.cumsum(ub[order][::-1])[::-1], [0.0]]).tolist()

        def exact(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            cos = self._cosines_at(pos, cols, qw, qn2)
            fused = np.multiply(cos, weight)
            if len(brows):
                flag = np.isin(pos, brows, assume_unique=True).astype(np.float64)
                fused += bonus * flag
            return cos, fused

        def floor_of(pos: np.ndarray) -> float:
            """The k-th best fused score among ``pos`` and the bonus rows (-1: fewer)."""
            cand = np.union1d(pos, brows)
            if len(cand) < k:
                return -1.0
            fused = exact(cand)[1]
            return float(np.partition(fused, len(fused) - k)[len(fused) - k])

        try:
            buf = self._scratch.pop()
        except IndexError:
            buf = None
        if buf is None or len(buf) != n:
            buf = np.zeros(n, dtype=np.float64)
        try:
            floor, t = -1.0, 0
            while t < len(order):
                if floor > 0 and weight * min(1.0, rest[t]) < floor:
                    break
                j = int(order[t])
                c = int(cols[j])
                a, b = int(ptr[c]), int(ptr[c + 1])
                if a < b:
                    np.add.at(buf, rows[a:b], data[a:b] * float(qw[j]))
                t += 1
                if floor <= 0 and (rest[t] <= SEED_AT or t == len(order)):
                    # no floor while fewer than k rows score above 0 (tried again after the
                    # next column)
                    floor = floor_of(_top_rows(buf, k))
            if floor <= 0:
                return None
            # rows whose best possible fused score (without the bonus) reaches the floor: a
            # partial sum of at least ``tau`` (rows outside the added columns cannot)
            tau = (floor / weight - rest[t] - 2e-9) * qn
            surv = np.flatnonzero(buf >= tau) if tau > 0 else np.flatnonzero(buf)
            part = buf[surv] / qn
            keep = weight * np.minimum(1.0, part + (rest[t] + 1e-9)) >= floor
            surv, part = surv[keep], part[keep]
            for u in range(t, len(order)):
                if not len(surv):
                    break
                j = int(order[u])
                c = int(cols[j])
                w = float(qw[j]) / qn
                dense = self._dense(c)
                if dense is not None:
                    part += dense[surv] * w
                else:
                    a, b = int(ptr[c]), int(ptr[c + 1])
                    if a < b:
                        r = rows[a:b]
                        i = np.searchsorted(r, surv)
                        np.minimum(i, b - a - 1, out=i)
                        hit = r[i] == surv
                        part[hit] += data[a:b][i[hit]] * w
                keep = weight * np.minimum(1.0, part + (rest[u + 1] + 1e-9)) >= floor
                surv, part = surv[keep], part[keep]
            # every column is in ``part`` now: its best rows raise the floor close to the
            # answer's own k-th score
            if len(surv) > k:
                floor = max(floor, floor_of(_best(surv, part, k)))
                surv = surv[weight * np.minimum(1.0, part + 1e-9) >= floor]
            final = np.union1d(surv, brows)
            cos, fused = exact(final)
            best = np.lexsort((final, -fused))[:k]
            if len(best) < k or fused[best[-1]] <= 0:
                return None
            return final[best], cos[best], fused[best]
        finally:
            buf.fill(0.0)
            self._scratch.append(buf)

    def query(self, features: Mapping[str, float], k: int = 10) -> list[tuple[int, float]]:
        """The ``k`` best rows by cosine (only rows with a positive score), as ``(id, score)``,
        best first, ties broken by id ascending."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ContentIndexError(f"k must be a non-negative integer, got {k!r}", field="k")
        s = self.scores(features)
        pos = np.nonzero(s > 0)[0]
        if k == 0 or len(pos) == 0:
            return []
        if len(pos) > k:
            kth = np.partition(-s[pos], k - 1)[k - 1]
            pos = pos[-s[pos] <= kth]  # keeps every row tied at the k-th score
        order = np.lexsort((self._ids[pos], -s[pos]))[:k]
        return [(int(self._ids[pos[i]]), float(s[pos[i]])) for i in order]


def _best(pos: np.ndarray, score: np.ndarray, k: int) -> np.ndarray:
    """The (at most) ``k`` of ``pos`` with the highest ``score``, in increasing order."""
    if len(pos) <= k:
        return pos
    return np.sort(pos[np.argpartition(-score, k - 1)[:k]])


def _best(pos: np.ndarray, score: np.ndarray, k: int) -> np.ndarray:
    """The (at most) ``k`` of ``pos`` with the highest ``score``, in increasing order."""
    if len(pos) <= k:
        return pos
    return np.sort(pos[np.argpartition(-score, k - 1)[:k]])


def _top_rows(buf: np.ndarray, k: int) -> np.ndarray:
    """Positions of (about, at least when there are) the ``k`` largest entries of ``buf``, in
    increasing order: a threshold from a sample of every 16th entry, checked against the
    whole (the exact k-th value when the sample's falls short)."""
    n = len(buf)
    sample = buf[::16]
    r = min(len(sample), max(1, (2 * k) // 16))
    v = float(np.partition(sample, len(sample) - r)[len(sample) - r])
    pos = np.flatnonzero(buf >= v) if v > 0 else np.zeros(0, dtype=np.int64)
    if len(pos) < k:
        v = float(np.partition(buf, n - k)[n - k])
        pos = np.flatnonzero(buf >= v) if v > 0 else np.flatnonzero(buf)
    return _best(pos, buf[pos], k)


def _crc(a: np.ndarray) -> int:
    """CRC-32 of an array's data (C order)."""
    return zlib.crc32(memoryview(np.ascontiguousarray(a)).cast("B"))


def _load_array(path: Path) -> np.ndarray:
    """A saved array, memory-mapped when it is large (read-only either way)."""
    mmap = path.stat().st_size > 1 << 20
    a = np.load(path, allow_pickle=False, mmap_mode="r" if mmap else None)
    if not mmap:
        a.flags.writeable = False
    return a


def _check_csc(csc_src: np.ndarray, indices: np.ndarray) -> None:
    """``csc_src`` must be a permutation of the CSR positions that lists them column by column,
    in increasing position within each column."""
    m = len(indices)
    if csc_src.shape != (m,):
        raise ContentIndexError("the column order has the wrong length", field="csc_src")
    if m == 0:
        return
    if csc_src.min() < 0 or csc_src.max() >= m:
        raise ContentIndexError("the column order points outside the matrix", field="csc_src")
    cols = indices[csc_src]
    dc = np.diff(cols)
    if np.any(dc < 0) or np.any((dc == 0) & (np.diff(csc_src) <= 0)):
        raise ContentIndexError("the column order is not sorted", field="csc_src")
