"""The surface baseline and the HippoRAG-style associative retriever (issue 8 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analogist.bench.harness.associative import (
    AssociativeParams,
    AssociativeRetriever,
    SurfaceRetriever,
    TextIndex,
)
from analogist.bench.harness.goldset import narrative_text
from analogist.errors import AnalogistError
from analogist.memory.sqlite import Memory
from tests.test_harness_fixtures import NS, build_store


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory):
    from analogist.index.embed import default_embedder

    store = build_store(tmp_path_factory.mktemp("assoc") / "s.db")
    m = Memory.open(store)
    emb = default_embedder()
    yield m, emb, TextIndex(m, NS, emb)
    m.close()


def _groups(m: Memory) -> list[list[str]]:
    rows = {e.id: e.episode_id for e in m.list(NS, include_superseded=True)}
    return [[rows[i] for i in g] for g in m.fingerprint_groups(NS).values() if len(g) > 1]


def test_edges_are_fingerprint_groups_and_supersession(env) -> None:
    m, emb, ix = env
    r = AssociativeRetriever(m, NS, embedder=emb, index=ix)
    for g in _groups(m):
        for a in g:
            assert set(g) - {a} <= r.adjacency[a]
    assert "stale-copy-med-discharge-list-corrected" in \
        r.adjacency["stale-copy-med-discharge-list"]
    off = AssociativeRetriever(m, NS, embedder=emb, index=ix,
                               params=AssociativeParams(use_fingerprint=False,
                                                        use_supersession=False))
    assert off.edges() == 0


def test_walk_reaches_a_neighbour_cosine_alone_ranks_low(env) -> None:
    m, emb, ix = env
    g = next(g for g in _groups(m) if len(g) >= 2)
    seed, other = g[0], g[1]
    text = narrative_text(m.get(seed, NS).signature.to_data())
    surf = SurfaceRetriever(m, NS, embedder=emb, index=ix).search(text, k=20)
    one = AssociativeRetriever(m, NS, embedder=emb, params=AssociativeParams(seed_k=1),
                               index=ix)
    got = one.search(text, k=20)
    assert got.ranked[0] == seed == surf.ranked[0]
    assert other in got.ranked[:len(g)]
    # with no hops nothing beyond the entry point is reached
    none = AssociativeRetriever(m, NS, embedder=emb, params=AssociativeParams(seed_k=1, hops=0),
                                 index=ix)
    assert none.search(text, k=20).ranked == (seed,)


def test_superseded_ranks_below_its_correction(env) -> None:
    m, emb, ix = env
    text = narrative_text(m.get("stale-copy-med-discharge-list", NS).signature.to_data())
    got = AssociativeRetriever(m, NS, embedder=emb, index=ix).search(text)
    pos = {e: i for i, e in enumerate(got.ranked)}
    assert pos["stale-copy-med-discharge-list-corrected"] < pos["stale-copy-med-discharge-list"]


def test_excluded_episodes_are_absent(env) -> None:
    m, emb, ix = env
    g = _groups(m)[0]
    text = narrative_text(m.get(g[0], NS).signature.to_data())
    for r in (SurfaceRetriever(m, NS, embedder=emb, index=ix),
              AssociativeRetriever(m, NS, embedder=emb, index=ix)):
        got = r.search(text, k=30, exclude=(g[0],))
        assert g[0] not in got.ranked


def test_surface_is_deterministic_and_cosine_ordered(env) -> None:
    m, emb, ix = env
    s = SurfaceRetriever(m, NS, embedder=emb, index=ix)
    a, b = s.search("a cache entry expired and requests piled up"), \
        s.search("a cache entry expired and requests piled up")
    assert a == b and not a.no_match and len(a.ranked) == 10
    floor = SurfaceRetriever(m, NS, embedder=emb, min_cosine=0.999, index=ix)
    assert floor.search("qocivoq mopujug").no_match


@pytest.mark.parametrize("kw", [{"seed_k": 0}, {"hops": -1}, {"spread": 0}, {"spread": 1.5},
                                {"min_cosine": 2}, {"seed_k": True}])
def test_bad_params(kw) -> None:
    with pytest.raises(AnalogistError):
        AssociativeParams(**kw)


def test_empty_namespace(env, tmp_path: Path) -> None:
    m, emb, ix = env
    r = AssociativeRetriever(m, "empty", embedder=emb)
    assert r.search("anything").ranked == () and r.search("anything").no_match
