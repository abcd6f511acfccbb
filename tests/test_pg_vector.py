"""The embedding channel in pgvector (memory/pg_vector.py), on a real server with the extension.

The server is tests/pg.py's ``pgvector_server`` (``ANALOGIST_TEST_PGVECTOR_URL``, or one started
from the ``pgserver`` wheel's PostgreSQL 16; skipped with the reason otherwise, an error under
``CI=true``). The embedder is a real, if crude, one: letter counts of the abstract texts,
L2-normalised (deterministic, 26-d), so that the tests need no model weights.
"""

from __future__ import annotations

import numpy as np
import pytest

from analogist.casebook import load_casebook
from analogist.index.embed import abstract_texts
from analogist.memory import StoreError, open_memory
from analogist.memory.pg_vector import CHANNELS, PgVectorParams, _index_name, _Vec, table
from analogist.retrieve import LEVEL_CHANNELS, RetrieveParams, Retriever

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed "
                              "(pip install 'analogist[postgres]')")


class Letters:
    """Letter counts of a text, L2-normalised: a deterministic embedder of ``dim`` numbers."""

    name = "letters"

    def __init__(self, dim: int = 26) -> None:
        self.dim = dim

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for c in t.lower():
                if "a" <= c <= "z":
                    out[i, (ord(c) - 97) % self.dim] += 1.0
        out[:, 0] += 1e-3  # never a zero vector
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _levels(embedder):
    def embed(sig):
        texts = abstract_texts(sig)
        chans = [ch for ch in LEVEL_CHANNELS if ch in texts]
        return dict(zip(chans, embedder.embed([texts[c] for c in chans]), strict=True))
    return embed


@pytest.fixture(scope="module")
def cases():
    return [c.signature for c in load_casebook() if c.decoy_of is None]


def _retrievers(mem, embedder, namespace="default", **kw):
    db = Retriever(mem, namespace, embedder=embedder, log=False,
                   params=RetrieveParams(pgvector=PgVectorParams(min_rows=1), **kw))
    local = Retriever(mem, namespace, embedder=embedder, log=False,
                      params=RetrieveParams(pgvector=PgVectorParams(enabled=False), **kw))
    return db, local


def _rows(mem, where="", params=()):
    """Rows of the three level tables (those that exist)."""
    pg, n = mem.conn._pg, 0
    for ch in LEVEL_CHANNELS:
        if pg.execute("SELECT to_regclass(%s)", (table(ch),)).fetchone()[0] is not None:
            n += pg.execute(f"SELECT count(*) FROM {table(ch)} {where}", params).fetchone()[0]
    return n


def test_levels_are_the_retrievers():
    assert CHANNELS == LEVEL_CHANNELS


def test_the_channel_comes_from_the_database_and_answers_as_in_process(pgvector_url, cases):
    emb = Letters()
    mem = open_memory(pgvector_url)
    try:
        assert mem.pgvector_note is None and mem._pgvector is not None
        mem.add_many(cases[1:], embed=_levels(emb))
        n_levels = sum(len([c for c in LEVEL_CHANNELS if c in abstract_texts(s)])
                       for s in cases[1:])
        assert _rows(mem) == n_levels  # one row per stored level vector
        db, local = _retrievers(mem, emb, shortlist=8, k=5)
        for target in cases[:6]:
            a, b = db.mac(target), local.mac(target)
            # the database side read no vector into the process; the in-process one read them
            assert db._pgv and not db._embeddings and local._embeddings and not local._pgv
            assert np.array_equal(a[0], b[0])
            np.testing.assert_allclose(a[2]["embedding"], b[2]["embedding"], atol=1e-5)
            fa, fb = db.find(target), local.find(target)
            assert [h.episode_id for h in fa.results] == [h.episode_id for h in fb.results]
            assert [round(h.score, 9) for h in fa.results] == \
                [round(h.score, 9) for h in fb.results]
            assert "embedding" in fa.channels_used
    finally:
        mem.close()


def test_the_query_walks_the_namespaces_hnsw_index(pgvector_url, cases):
    emb = Letters()
    mem = open_memory(pgvector_url)
    try:
        mem.add_many(cases[:30], embed=_levels(emb))
        pg, vec = mem.conn._pg, mem._pgvector
        q = _Vec(emb.embed(["a derived copy trusted as the source"])[0])
        plan = vec.plan("default", "L2", q.a, 10, 40)
        assert f"Index Scan using {_index_name('default', 'L2')}" in plan
        idx = pg.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s",
                         (_index_name("default", "L2"),)).fetchone()[0]
        assert "USING hnsw (emb " in idx and "vector_cosine_ops)" in idx
        assert "'default'::text" in idx and table("L2") in idx
        ids, sims = vec.search("default", "L2", q.a, 5, 40)
        assert len(ids) == 5 and np.all(np.diff(sims) <= 1e-12)
    finally:
        mem.close()


def test_supersede_delete_and_rewrite_keep_it_in_sync(pgvector_url, cases):
    emb = Letters()
    mem = open_memory(pgvector_url)
    try:
        ids = mem.add_many(cases[:20], embed=_levels(emb))
        before = _rows(mem)
        mem.supersede(ids[2], ids[3])
        db, local = _retrievers(mem, emb)
        target = cases[2]
        np.testing.assert_allclose(db.mac(target)[2]["embedding"],
                                   local.mac(target)[2]["embedding"], atol=1e-5)
        assert _rows(mem) == before  # supersession changes no vector
        gone = cases[5].episode_id
        n_gone = _rows(mem, "WHERE signature_id = %s", (ids[5],))
        assert n_gone > 0 and mem.delete(gone)
        assert _rows(mem) == before - n_gone
        assert _rows(mem, "WHERE signature_id = %s", (ids[5],)) == 0
        a, b = db.mac(cases[5]), local.mac(cases[5])
        assert ids[5] not in a[0]
        np.testing.assert_allclose(a[2]["embedding"], b[2]["embedding"], atol=1e-5)
        # an in-place rewrite with a new L2 vector replaces the row's L2, keeps the others
        new = np.zeros(26, dtype=np.float32)
        new[7] = 1.0
        mem.update_signature(cases[6], embeddings={"L2": new})
        got = mem.conn._pg.execute(
            f"SELECT emb::text FROM {table('L2')} WHERE signature_id = %s",
            (ids[6],)).fetchone()[0]
        assert got == "[" + ",".join("1" if i == 7 else "0" for i in range(26)) + "]"
        assert _rows(mem) == before - n_gone
        a, b = db.mac(cases[6]), local.mac(cases[6])
        np.testing.assert_allclose(a[2]["embedding"], b[2]["embedding"], atol=1e-5)
    finally:
        mem.close()


def test_namespaces_are_hard_partitions(pgvector_url, cases):
    emb = Letters()
    mem = open_memory(pgvector_url)
    try:
        a_ids = set(mem.add_many(cases[:15], namespace="a", embed=_levels(emb)))
        b_ids = set(mem.add_many(cases[:15], namespace="b", embed=_levels(emb)))
        vec = mem._pgvector
        for ns, own in (("a", a_ids), ("b", b_ids)):
            for ch in LEVEL_CHANNELS:
                q = emb.embed(["a derived copy trusted as the source"])[0]
                found, _sims = vec.search(ns, ch, q, 100, 200)
                assert set(found.tolist()) <= own and len(found) > 0
        assert vec.counts("a") == vec.counts("b")
        assert _index_name("a", "L1") != _index_name("b", "L1")
        mem.delete(cases[0].episode_id, namespace="a")
        assert sum(vec.counts("a").values()) < sum(vec.counts("b").values())
        db, local = _retrievers(mem, emb, namespace="b")
        np.testing.assert_allclose(db.mac(cases[0])[2]["embedding"],
                                   local.mac(cases[0])[2]["embedding"], atol=1e-5)
    finally:
        mem.close()


def test_levels_of_different_sizes_are_kept_apart(pgvector_url, cases):
    mem = open_memory(pgvector_url)
    try:  # as on SQLite, a level's size is its own (the store suite stores L2 4-d, L3 3-d)
        mem.add(cases[0], embeddings={"L2": np.arange(1.0, 5.0), "L3": np.ones(3)})
        assert (mem._pgvector.dim("L2"), mem._pgvector.dim("L3")) == (4, 3)
    finally:
        mem.close()


def test_a_vector_of_another_size_is_refused_in_one_line(pgvector_url, cases):
    mem = open_memory(pgvector_url)
    try:
        mem.add_many(cases[:5], embed=_levels(Letters(26)))
        rows, episodes = _rows(mem), mem.count()
        with pytest.raises(StoreError) as e:
            mem.add_many(cases[5:8], embed=_levels(Letters(16)))
        msg = str(e.value)
        assert "\n" not in msg and "16 dimensions" in msg and "vectors have 26" in msg
        assert (_rows(mem), mem.count()) == (rows, episodes)  # the batch is not written
        db = Retriever(mem, embedder=Letters(16), log=False,
                       params=RetrieveParams(pgvector=PgVectorParams(min_rows=1)))
        with pytest.raises(StoreError, match="vector has 16 dimensions, the store's 26"):
            db.find(cases[9])
    finally:
        mem.close()


def test_a_reopened_store_fills_the_vectors_it_lacks(pgvector_url, cases):
    emb = Letters()
    mem = open_memory(pgvector_url)
    try:
        mem.add_many(cases[:10], embed=_levels(emb))
        full = _rows(mem)
        # as if a process without the extension had written: the vector rows are missing
        for ch in LEVEL_CHANNELS:
            mem.conn._pg.execute(f"DELETE FROM {table(ch)} WHERE signature_id > 4")
        assert _rows(mem) < full
    finally:
        mem.close()
    mem = open_memory(pgvector_url)
    try:
        assert _rows(mem) == full
    finally:
        mem.close()


def test_a_role_that_cannot_create_the_extension_stays_in_process(pgvector_module_db, cases):
    role = "analogist_plain_user"
    with psycopg.connect(pgvector_module_db, autocommit=True) as c:
        c.execute(f"DROP OWNED BY {role}") if c.execute(
            "SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() else None
        c.execute(f"DROP ROLE IF EXISTS {role}")
        c.execute(f"CREATE ROLE {role} LOGIN")
        c.execute(f"CREATE SCHEMA plain AUTHORIZATION {role}")
    parts = pgvector_module_db.split("://postgres@", 1)
    url = f"{parts[0]}://{role}@{parts[1]}?options=-csearch_path%3Dplain"
    _stays_in_process(url, cases, "pgvector not used")


def test_a_server_without_the_extension_stays_in_process(pg_url, cases):
    with psycopg.connect(pg_url, autocommit=True) as c:
        if c.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
            pytest.skip("this PostgreSQL server has pgvector installed (covered above)")
    _stays_in_process(pg_url, cases, "no pgvector extension")


def _stays_in_process(url, cases, note, emb=None):
    emb = emb or Letters()
    mem = open_memory(url)
    try:
        assert mem._pgvector is None and note in mem.pgvector_note
        assert "\n" not in mem.pgvector_note
        mem.add_many(cases[1:12], embed=_levels(emb))
        assert all(mem.conn._pg.execute("SELECT to_regclass(%s)", (table(ch),)).fetchone()[0]
                   is None for ch in LEVEL_CHANNELS)
        r = Retriever(mem, embedder=emb, log=False,
                      params=RetrieveParams(pgvector=PgVectorParams(min_rows=1)))
        res = r.find(cases[0])
        assert r._pgv is None and r._embeddings and "embedding" in res.channels_used
        assert res.results
    finally:
        mem.close()


def test_rows_the_other_channels_favour_get_their_exact_cosines(pgvector_url, cases):
    emb = Letters()
    mem = open_memory(pgvector_url)
    try:
        mem.add_many(cases[1:], embed=_levels(emb))
        target = cases[0]
        local = _retrievers(mem, emb)[1]
        exact = local.mac(target)[2]["embedding"]
        for rescore in (0, 1000):
            r = Retriever(mem, embedder=emb, log=False, params=RetrieveParams(
                pgvector=PgVectorParams(min_rows=1, k=3, rescore=rescore)))
            ids, _fused, ch, _sk = r.mac(target)
            prior = ch["content"] + 0.25 * ch["fingerprint"]
            got = ch["embedding"]
            near = got > 0
            if rescore == 0:  # only the 3 nearest per level score
                assert 3 <= near.sum() <= 3 * len(LEVEL_CHANNELS) < len(ids)
            else:  # and every row content or fingerprint ranks positive, exactly
                assert np.all(near[prior > 0])
                np.testing.assert_allclose(got[prior > 0], exact[prior > 0], atol=1e-5)
    finally:
        mem.close()
