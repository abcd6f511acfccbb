"""The persistent stage-1 index: generation counters, the saved copy (beside a SQLite file, in
the ``mac_index`` table of a PostgreSQL store), appends, and rebuilds (with a note) of copies that
cannot be trusted. On a real store of each backend (conftest's ``store``); the damaged-copy cases
are about the files beside a SQLite store (a PostgreSQL store's damaged row: test_pg_mac.py)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from analogist.casebook import load_casebook
from analogist.index.content import ContentIndex
from analogist.index.mac import MacIndex, index_root
from analogist.memory import Memory, is_postgres_url, open_memory
from analogist.retrieve import Retriever
from analogist.signature import Signature, validate_signature


def _renamed(sig: Signature, eid: str) -> Signature:
    d = sig.to_data()
    d["episode_id"] = eid
    return validate_signature(d)


CASES = [c.signature for c in load_casebook()]


def _answers(mem: Memory, ns: str = "default") -> list[dict[str, Any]]:
    r = Retriever(mem, ns, log=False)
    out = []
    for q in CASES[:12:3]:
        j = r.find(_renamed(q, "query")).to_json()
        j.pop("timings_ms")
        out.append(j)
    return out


@pytest.fixture
def filled(store: str) -> str:
    """A store of each backend holding 40 casebook episodes."""
    with open_memory(store) as m:
        m.add_many(CASES[:40])
    return store


def _saved(store: str) -> bool:
    """Whether the store has a saved stage-1 index (a file beside it, or a ``mac_index`` row)."""
    if is_postgres_url(store):
        with open_memory(store) as m:
            pg = m.conn._pg
            return pg.execute("SELECT to_regclass('mac_index')").fetchone()[0] is not None and \
                pg.execute("SELECT COUNT(*) FROM mac_index").fetchone()[0] > 0
    root = index_root(store)
    return root is not None and any(root.glob("*.json"))


def _fresh_answers(path: str, tmp: Path) -> list[dict[str, Any]]:
    """The answers of the store built from its episode rows alone, without any saved index (a
    copy of the SQLite file; on PostgreSQL, after removing the stored rows: call it last)."""
    if is_postgres_url(path):
        with open_memory(path) as m:
            m.conn._pg.execute("DELETE FROM mac_index")
            return _answers(m)
    copy = tmp / "copy.db"
    with Memory.open(path) as src, Memory.open(copy) as dst:
        src.conn.backup(dst.conn)
    with Memory.open(copy) as m:
        # the copy has the same store id: keep it from finding an index (there is none)
        assert index_root(str(copy)) is not None and not index_root(str(copy)).exists()
        got = _answers(m)
    shutil.rmtree(str(copy) + ".mac", ignore_errors=True)
    copy.unlink()
    return got


def test_generation_counts_writes_and_rewrites(filled: str) -> None:
    with open_memory(filled) as m:
        g0, r0 = m.generation()
        assert g0 >= 40 and m.generation("elsewhere") == (0, 0)
        m.add(_renamed(CASES[45], "new-1"))
        assert m.generation() == (g0 + 1, r0)
        m.supersede(CASES[0].episode_id, "new-1")
        assert m.generation() == (g0 + 2, r0)  # a supersession is no rewrite
        m.update_signature(_renamed(CASES[46], "new-1"))
        g1, r1 = m.generation()
        assert g1 > g0 + 2 and r1 == r0 + 1
        m.delete("new-1")
        g, r = m.generation()
        assert g > g1 and r == r0 + 2
        m.add_schema("s", {"x": 1}, [1])
        assert m.generation()[0] == g + 1
        assert m.extent() == (40, max(m.content_matrix().ids))


def test_saved_index_is_loaded_not_rebuilt(filled: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with open_memory(filled) as m:
        first = _answers(m)
    assert _saved(filled)
    built: list[int] = []
    orig = MacIndex.build.__func__  # type: ignore[attr-defined]

    def counting(cls: Any, *a: Any) -> MacIndex:
        built.append(1)
        return orig(cls, *a)

    monkeypatch.setattr(MacIndex, "build", classmethod(counting))
    with open_memory(filled) as m:  # as a new process would
        r = Retriever(m, log=False)
        r.refresh()
        assert r.notes == [] and built == []
        assert _answers(m) == first
    monkeypatch.undo()
    assert _fresh_answers(filled, tmp_path) == first


def test_rows_added_later_are_appended(filled: str, tmp_path: Path) -> None:
    with open_memory(filled) as m:
        r = Retriever(m, log=False)
        r.refresh()
        m.add_many(CASES[40:50])
        r.refresh()
        assert r.notes == [] and len(r._index) == 50
        live = _answers(m)
    with open_memory(filled) as m:  # the saved copy (40 rows) plus the 10 added since
        r = Retriever(m, log=False)
        r.refresh()
        assert r.notes == [] and len(r._index) == 50
        assert _answers(m) == live
    assert _fresh_answers(filled, tmp_path) == live


@pytest.mark.parametrize("damage", ["truncated", "garbage pointer", "other store", "columns"])
def test_a_damaged_index_is_rebuilt_with_a_note(filled: str, tmp_path: Path, damage: str) -> None:
    if is_postgres_url(filled):
        pytest.skip("damages the index files beside a SQLite store; a PostgreSQL store keeps its "
                    "copy in a row (damaged-row rebuild: tests/test_pg_mac.py)")
    store = filled
    with Memory.open(store) as m:
        want = _answers(m)
    root = index_root(str(store))
    assert root is not None
    [ptr] = root.glob("*.json")
    meta = json.loads(ptr.read_text())
    d = root / meta["dir"]
    if damage == "truncated":
        (d / "csc_src.npy").write_bytes((d / "csc_src.npy").read_bytes()[:100])
    elif damage == "garbage pointer":
        ptr.write_text("{not json")
    elif damage == "other store":
        ptr.write_text(json.dumps({**meta, "store_id": "0" * 32}))
    else:  # a well-formed file whose column order is wrong
        a = np.load(d / "csc_src.npy")
        np.save(d / "csc_src.npy", a[::-1].copy())
    with Memory.open(store) as m:
        r = Retriever(m, log=False)
        r.refresh()
        assert len(r.notes) == 1 and "rebuilding" in r.notes[0]
        assert "\n" not in r.notes[0]
        assert _answers(m) == want
    with Memory.open(store) as m:  # the rebuilt copy was saved and is trusted again
        r = Retriever(m, log=False)
        r.refresh()
        assert r.notes == []


def test_a_stale_index_after_a_delete_is_rebuilt(filled: str, tmp_path: Path) -> None:
    with open_memory(filled) as m:
        _answers(m)
        gone = CASES[3].episode_id
        assert m.delete(gone)
    with open_memory(filled) as m:
        r = Retriever(m, log=False)
        r.refresh()
        assert len(r.notes) == 1 and "stale" in r.notes[0]
        got = _answers(m)
        ids = {h["episode_id"] for a in got for h in a["results"]}
        assert gone not in ids
    assert _fresh_answers(filled, tmp_path) == got


def test_an_index_that_does_not_match_the_store_is_rebuilt(filled: str) -> None:
    with open_memory(filled) as m:
        _answers(m)  # builds and saves the index
        # rows removed behind the counters' back (as by hand in a SQL shell, triggers off)
        if is_postgres_url(filled):
            m.conn._pg.execute("DROP TRIGGER signatures_generation_delete ON signatures")
        else:
            m.conn.execute("PRAGMA recursive_triggers = OFF")
            m.conn.execute("DROP TRIGGER signatures_generation_delete")
        m.conn.execute("DELETE FROM signatures WHERE id = (SELECT MAX(id) FROM signatures)")
    with open_memory(filled) as m:
        r = Retriever(m, log=False)
        r.refresh()
        assert len(r.notes) == 1 and "does not match" in r.notes[0]
        assert len(r._index) == 39


def test_content_index_append_and_save_equal_a_build(tmp_path: Path) -> None:
    rng = random.Random(3)
    names = [f"f{i}" for i in range(30)]
    rows = [{rng.choice(names): float(rng.randint(1, 4)) for _ in range(rng.randint(0, 8))}
            for _ in range(300)]
    ids = list(range(1, 301))
    whole = ContentIndex(ids, rows)
    part = ContentIndex(ids[:170], rows[:170])
    # the rest as a CSR matrix with its own column numbering (reversed)
    own = {k: i for i, k in enumerate(reversed(names))}
    indptr, ind, cnt = [0], [], []
    for r in rows[170:]:
        cols = sorted((own[k], v) for k, v in r.items())
        ind += [c for c, _v in cols]
        cnt += [v for _c, v in cols]
        indptr.append(len(ind))
    part.append(ids[170:], list(reversed(names)), np.array(indptr), np.array(ind, dtype=np.int64),
                np.array(cnt))
    part.save(tmp_path / "ix")
    loaded = ContentIndex.load(tmp_path / "ix")
    for q in rng.sample(rows, 40):
        s = whole.scores(q).tobytes()
        assert part.scores(q).tobytes() == s and loaded.scores(q).tobytes() == s
    assert list(loaded.ids) == ids
    with pytest.raises(Exception, match="greater"):
        part.append([5], ["f1"], np.array([0, 1]), np.array([0]), np.array([1.0]))


def test_hnsw_channel_finds_the_exact_nearest_on_a_small_set() -> None:
    pytest.importorskip("usearch")
    from analogist.index.ann import AnnParams, HnswChannel

    rng = np.random.default_rng(5)
    mat = rng.standard_normal((300, 24)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    ch = HnswChannel(np.arange(1000, 1300), mat, AnnParams(k=10))
    for q in mat[:20] + 0.05:
        near, sims = ch.search(q)
        exact = np.argsort(-(mat @ q))[:10] + 1000
        assert len(set(near.tolist()) & set(exact.tolist())) >= 9
        assert np.all(np.diff(sims) <= 1e-6) and len(near) == 10


def test_approximate_embedding_channel_in_stage_1(store: str) -> None:
    pytest.importorskip("usearch")
    from analogist.index.ann import AnnParams
    from analogist.index.embed import default_embedder
    from analogist.retrieve import RetrieveParams, level_embeddings

    emb = default_embedder()
    with open_memory(store) as m:
        m.add_many(CASES[:4], embed=lambda s: level_embeddings(s, emb))
        q = _renamed(CASES[30], "query")
        e = Retriever(m, embedder=emb, log=False).mac(q)[2]["embedding"]

        def approx(k: int) -> np.ndarray:
            r = Retriever(m, embedder=emb, log=False, params=RetrieveParams(
                embedding_ann=True, ann_min_rows=1, ann=AnnParams(k=k)))
            got = r.mac(q)[2]["embedding"]
            assert r.notes == [] and len(r._ann) == 3
            return got

        assert np.allclose(approx(50), e, atol=1e-5)  # k over the size: every row, as exact
        few = approx(2)
        assert 0 < np.count_nonzero(few) <= 2 * 3 and not np.allclose(few, e)
        assert int(np.argmax(e)) in np.flatnonzero(few)
