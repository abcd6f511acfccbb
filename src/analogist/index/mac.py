"""The persistent stage-1 (MAC) index of one namespace: content vectors, WL fingerprint codes and
the store state they reflect, saved beside the store and brought up to date by appending.

A :class:`MacIndex` holds a :class:`~analogist.index.content.ContentIndex` (rows in id order),
one integer fingerprint code per row (its position in a sorted table of the namespace's distinct
WL fingerprints, ``-1`` for a row without one) and the namespace's ``(generation, rewrites)``
counters and the store's identity at the time it was built (see
:mod:`analogist.memory.sqlite`, schema version 3). It knows nothing of SQLite: the caller feeds it
the raw-count rows (:meth:`MacIndex.build`, :meth:`MacIndex.append`).

On disk (:meth:`MacIndex.save`, :meth:`MacIndex.load`) an index lives in ``<store>.mac/``: a
pointer file ``<key>.json`` per namespace (``key``: a hash of the namespace name) naming a
directory of ``.npy`` files written before the pointer is replaced (atomically, so a reader sees
either the old index or the new one). A loaded index is checked — format, store identity,
namespace, array shapes, types and bounds, column order — and anything that does not fit is a
:class:`~analogist.index.content.ContentIndexError`, so that the caller rebuilds instead of
trusting it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analogist.index.content import ContentIndex, ContentIndexError

__all__ = ["FORMAT", "ContentMatrix", "MacIndex", "index_root"]

FORMAT = 2
"""Version of the on-disk layout (2: derived arrays and checksums saved); an index of another
format is rebuilt."""

_DIR = re.compile(r"^[0-9a-f]{16}-[0-9]{1,19}-[0-9a-f]{8}$")


@dataclass(frozen=True, slots=True)
class ContentMatrix:
    """Raw-count rows of a namespace in id order, as a CSR matrix with named columns, and each
    row's WL fingerprint (None when it has none)."""

    ids: np.ndarray
    names: list[str]
    indptr: np.ndarray
    indices: np.ndarray
    counts: np.ndarray
    fingerprints: list[str | None]


def index_root(store_path: str) -> Path | None:
    """Where the indexes of the store at ``store_path`` live (None for an in-memory store)."""
    if not store_path or store_path == ":memory:" or store_path.startswith("file:") \
            or "://" in store_path:  # a server's store (PostgreSQL): no index files beside it
        return None
    return Path(store_path + ".mac")


def _key(namespace: str) -> str:
    return hashlib.sha256(namespace.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]


def _fp_array(fps: list[str | None]) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct fingerprints as bytes, code per row; -1 for None)."""
    known = [f for f in fps if f is not None]
    if not known:
        return np.zeros(0, dtype="S1"), np.full(len(fps), -1, dtype=np.int64)
    width = max(len(f) for f in known)
    arr = np.array([f.encode("ascii") if f is not None else b"" for f in fps], dtype=f"S{width}")
    has = np.array([f is not None for f in fps], dtype=bool)
    table, inverse = np.unique(arr[has], return_inverse=True)
    codes = np.full(len(fps), -1, dtype=np.int64)
    codes[has] = inverse
    return table, codes


def _recode(codes: np.ndarray, remap: np.ndarray) -> np.ndarray:
    out = codes.copy()
    has = out >= 0
    out[has] = remap[out[has]]
    return out


class MacIndex:
    """Stage-1 index of one namespace (see the module docstring)."""

    def __init__(self, namespace: str, store_id: str, generation: int, rewrites: int,
                 content: ContentIndex, fp_table: np.ndarray, fp_codes: np.ndarray) -> None:
        self.namespace = namespace
        self.store_id = store_id
        self.generation = generation
        self.rewrites = rewrites
        self.content = content
        self.fp_table = fp_table
        self.fp_codes = fp_codes
        self.saved_rows = 0  # rows of the copy on disk (0: none)
        # (the codes it was made from, positions by code, the codes in that order)
        self._by_code: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._by_code_asks: np.ndarray | None = None  # the codes asked about once

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def build(cls, namespace: str, store_id: str, state: tuple[int, int],
              m: ContentMatrix) -> MacIndex:
        content = ContentIndex.from_arrays(m.ids, m.names, m.indptr, m.indices, m.counts)
        table, codes = _fp_array(m.fingerprints)
        return cls(namespace, store_id, state[0], state[1], content, table, codes)

    def append(self, state: tuple[int, int], m: ContentMatrix) -> None:
        """Add the rows written since (ids above :attr:`max_id`) and take the new state."""
        if len(m.ids):
            self.content.append(m.ids, m.names, m.indptr, m.indices, m.counts)
            new_table, new_codes = _fp_array(m.fingerprints)
            if len(new_table):
                width = max(self.fp_table.dtype.itemsize, new_table.dtype.itemsize)
                merged = np.unique(np.concatenate([self.fp_table.astype(f"S{width}"),
                                                   new_table.astype(f"S{width}")]))
                old = _recode(self.fp_codes, np.searchsorted(
                    merged, self.fp_table.astype(f"S{width}")))
                add = _recode(new_codes, np.searchsorted(merged, new_table.astype(f"S{width}")))
                self.fp_table, self.fp_codes = merged, np.concatenate([old, add])
            else:
                self.fp_codes = np.concatenate([self.fp_codes, new_codes])
        self.generation, self.rewrites = state

    # -- views -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.content)

    @property
    def ids(self) -> np.ndarray:
        """Row ids in increasing order (a read-only view)."""
        v = self.content._ids.view()
        v.flags.writeable = False
        return v

    @property
    def max_id(self) -> int:
        ids = self.content._ids
        return int(ids[-1]) if len(ids) else 0

    def fingerprint_code(self, fingerprint: str) -> int:
        """The code of ``fingerprint`` (-2, matching no row, when no row has it)."""
        try:
            b = fingerprint.encode("ascii")
        except UnicodeEncodeError:
            return -2
        t = self.fp_table
        if not len(t) or len(b) > t.dtype.itemsize:
            return -2
        i = int(np.searchsorted(t, np.array(b, dtype=t.dtype)))
        return i if i < len(t) and t[i] == b else -2

    def rows_with_code(self, code: int) -> np.ndarray:
        """The positions (increasing) of the rows whose fingerprint code is ``code``: a pass
        over the codes for the first query, from the codes sorted once after that."""
        got = self._by_code
        if got is None or got[0] is not self.fp_codes:
            codes = self.fp_codes
            if self._by_code_asks is not codes:  # the first ask of these codes
                self._by_code_asks = codes
                return np.flatnonzero(codes == code)
            order = np.argsort(codes, kind="stable")
            got = self._by_code = (codes, order, codes[order])
        _codes, order, by = got
        a, b = np.searchsorted(by, code, side="left"), np.searchsorted(by, code, side="right")
        return order[a:b]

    # -- persistence -----------------------------------------------------------------------
    def save(self, root: Path) -> None:
        """Write the index under ``root`` (see the module docstring); replaces the previous
        copy of this namespace. Errors are the caller's to report (OSError)."""
        root.mkdir(parents=True, exist_ok=True)
        key = _key(self.namespace)
        name = f"{key}-{self.generation}-{secrets.token_hex(4)}"
        tmp = root / f".{name}.tmp"
        self.content.save(tmp)
        np.save(tmp / "fp_table.npy", self.fp_table, allow_pickle=False)
        np.save(tmp / "fp_codes.npy", self.fp_codes, allow_pickle=False)
        os.replace(tmp, root / name)
        meta = {"format": FORMAT, "store_id": self.store_id, "namespace": self.namespace,
                "generation": self.generation, "rewrites": self.rewrites,
                "rows": len(self), "max_id": self.max_id, "dir": name}
        ptr_tmp = root / f".{key}.{secrets.token_hex(4)}.json.tmp"
        ptr_tmp.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        os.replace(ptr_tmp, root / f"{key}.json")
        self.saved_rows = len(self)
        # older copies go; the one the pointer names now stays even if another process wrote it
        keep = {name}
        with suppress(OSError, ValueError, KeyError, TypeError):
            keep.add(str(json.loads((root / f"{key}.json").read_text(encoding="utf-8"))["dir"]))
        for old in root.glob(f"{key}-*"):
            if old.name not in keep and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)

    @classmethod
    def load(cls, root: Path, namespace: str, store_id: str) -> MacIndex | None:
        """The saved index of ``namespace`` under ``root``, or None when there is none; a copy
        that is unreadable, inconsistent or another store's raises ContentIndexError."""
        ptr = root / f"{_key(namespace)}.json"
        if not ptr.exists():
            return None
        try:
            meta = json.loads(ptr.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ContentIndexError(f"unreadable index pointer: {e}"[:300],
                                    source=str(ptr)) from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ContentIndexError("index of an unknown format", source=str(ptr))
        if meta.get("store_id") != store_id or meta.get("namespace") != namespace:
            raise ContentIndexError("the index belongs to another store or namespace",
                                    source=str(ptr))
        d = meta.get("dir")
        gen, rew, rows, max_id = (meta.get(k) for k in ("generation", "rewrites", "rows",
                                                        "max_id"))
        if not isinstance(d, str) or not _DIR.match(d) or not all(
                isinstance(x, int) and not isinstance(x, bool) and x >= 0
                for x in (gen, rew, rows, max_id)):
            raise ContentIndexError("malformed index pointer", source=str(ptr))
        content = ContentIndex.load(root / d)
        try:
            table = np.load(root / d / "fp_table.npy", allow_pickle=False)
            codes = np.load(root / d / "fp_codes.npy", allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise ContentIndexError(f"unreadable index file: {e}"[:300],
                                    source=str(root / d)) from None
        if table.ndim != 1 or table.dtype.kind != "S" or codes.ndim != 1 \
                or codes.dtype != np.int64 or len(codes) != len(content):
            raise ContentIndexError("fingerprint arrays have the wrong shape or type",
                                    source=str(root / d))
        if len(codes) and (codes.min() < -1 or codes.max() >= len(table)):
            raise ContentIndexError("a fingerprint code is out of range", source=str(root / d))
        if len(table) > 1 and not np.all(table[1:] > table[:-1]):
            raise ContentIndexError("the fingerprint table is not sorted", source=str(root / d))
        out = cls(namespace, store_id, gen, rew, content, table, codes)
        if len(out) != rows or out.max_id != max_id:
            raise ContentIndexError("the index files do not match their pointer",
                                    source=str(root / d))
        out.saved_rows = rows
        return out
