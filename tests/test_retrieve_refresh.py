"""The embedding channel kept in step with the store after writes: one long-lived retriever that
has already answered queries sees exactly the episodes a fresh one would after an add, a
supersession and a delete (on each backend, conftest's ``store``), and never the vectors of an
episode that is gone. Also the LRU cache of query-text embeddings."""

from __future__ import annotations

import numpy as np
import pytest

from analogist.casebook import load_casebook
from analogist.index.embed import default_embedder
from analogist.memory import open_memory
from analogist.retrieve import QUERY_EMBEDDINGS, RetrieveParams, Retriever, level_embeddings
from analogist.signature import Signature, validate_signature

CASES = [c.signature for c in load_casebook()]
EMB = default_embedder()


def _renamed(sig: Signature, eid: str) -> Signature:
    d = sig.to_data()
    d["episode_id"] = eid
    return validate_signature(d)


def _embed(s: Signature) -> dict[str, np.ndarray]:
    return level_embeddings(s, EMB)


def _channel(r: Retriever, q: Signature) -> dict[int, float]:
    """Episode row id → its embedding-channel score for ``q`` (episodes the channel scored)."""
    ids, _fused, channels, _skipped = r.mac(q)
    emb = channels["embedding"]
    return {int(i): float(v) for i, v in zip(ids, emb, strict=True) if v != 0.0}


def _fresh(m, q: Signature) -> dict[int, float]:
    return _channel(Retriever(m, embedder=EMB, log=False), q)


def _same(a: dict[int, float], b: dict[int, float]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == pytest.approx(b[k], abs=1e-6)


def test_embedding_channel_follows_add_supersede_delete(store: str) -> None:
    q = _renamed(CASES[30], "query")
    with open_memory(store) as m:
        m.add_many(CASES[:8], embed=_embed)
        r = Retriever(m, embedder=EMB, log=False)
        before = _channel(r, q)
        assert len(before) == 8
        # added: the query's own levels under another id score (about) 1 in the embedding
        # channel; an index read before the write has no row for it at all
        twin = m.add(_renamed(CASES[30], "twin"), embeddings=_embed(CASES[30]))
        m.add(CASES[9])  # an episode without level embeddings: no channel row
        after_add = _channel(r, q)
        assert twin in after_add and after_add[twin] == pytest.approx(1.0, abs=1e-5)
        assert after_add[twin] > max(before.values())
        _same(after_add, _fresh(m, q))
        # superseded: the old one keeps its vectors (it stays retrievable), the new one scores
        old = min(before)
        newer = m.add(_renamed(CASES[31], "newer"), embeddings=_embed(CASES[31]))
        m.supersede(old, newer)
        after_sup = _channel(r, q)
        assert old in after_sup and newer in after_sup
        _same(after_sup, _fresh(m, q))
        res = r.find(q)
        by_id = {h.id: h for h in res.results}
        if old in by_id:
            assert by_id[old].superseded_by == newer
        # deleted: the twin's vectors are gone from the channel, and the rows after it moved up
        assert m.delete(twin)
        after_del = _channel(r, q)
        assert twin not in after_del and newer in after_del
        _same(after_del, _fresh(m, q))
        assert all(h.id != twin for h in r.find(q).results)
        # and adding after the delete appends again from the rebuilt state
        again = m.add(_renamed(CASES[30], "twin-again"), embeddings=_embed(CASES[30]))
        after_again = _channel(r, q)
        assert after_again[again] == pytest.approx(1.0, abs=1e-5)
        _same(after_again, _fresh(m, q))


def test_a_find_after_each_of_many_adds_sees_every_new_vector(store: str) -> None:
    q = _renamed(CASES[12], "query")
    with open_memory(store) as m:
        m.add_many(CASES[:3], embed=_embed)
        r = Retriever(m, embedder=EMB, log=False)
        _channel(r, q)
        for i, case in enumerate(CASES[3:40]):  # grows past the channel's first buffer
            sid = m.add(case, embeddings=_embed(case))
            got = _channel(r, q)
            assert sid in got and len(got) == 4 + i
        _same(got, _fresh(m, q))


def test_query_embeddings_are_cached_by_embedder_and_text(tmp_path) -> None:
    q = _renamed(CASES[5], "query")
    with open_memory(str(tmp_path / "m.db")) as m:
        m.add_many(CASES[:6], embed=_embed)
        r = Retriever(m, embedder=EMB, log=False)
        first = _channel(r, q)
        assert r.stats["query_embeddings"] == {"hits": 0, "misses": 3, "size": 3}
        # the same texts under another episode id: no embedder call, the same scores
        _same(_channel(r, _renamed(CASES[5], "again")), first)
        assert r.stats["query_embeddings"] == {"hits": 3, "misses": 3, "size": 3}
        other = _channel(r, _renamed(CASES[7], "other"))
        assert r.stats["query_embeddings"]["misses"] == 6
        _same(other, _fresh(m, _renamed(CASES[7], "other")))
        small = Retriever(m, embedder=EMB, log=False,
                          params=RetrieveParams(query_embedding_cache=2))
        _channel(small, q)
        assert small.stats["query_embeddings"]["size"] == 2  # bounded: oldest dropped
        none = Retriever(m, embedder=EMB, log=False,
                         params=RetrieveParams(query_embedding_cache=0))
        _same(_channel(none, q), first)
        _channel(none, q)
        assert none.stats["query_embeddings"] == {"hits": 0, "misses": 6, "size": 0}
    assert RetrieveParams().query_embedding_cache == QUERY_EMBEDDINGS
