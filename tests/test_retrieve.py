"""MAC/FAC retrieval over a real SQLite store: ranking, no match, namespaces, supersession,
decoy probe, logging."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analogist.errors import AnalogistError
from analogist.memory import open_memory
from analogist.memory.sqlite import Memory
from analogist.retrieve import RetrieveParams, Retriever, surface_tokens
from analogist.signature import validate_signature


def sig(eid: str, roles: dict[str, str], relations: list, chain: list, *, domain: str = "",
        entities: tuple[str, ...] = (), l0: str = "", fix: str | None = None):
    return validate_signature({
        "episode_id": eid, "kind": "failure", "roles": roles, "relations": relations,
        "causal_chain": chain, "surface": {"domain": domain, "entities": list(entities)},
        "levels": {"L0": l0} if l0 else {}, **({"fix_operator": fix} if fix else {})})


STALE_CACHE = sig(
    "stale-cache", {"SRC": "database", "DER": "cache", "CON": "status page"},
    [["derives_from", "DER", "SRC"], ["trusts_as_authoritative", "CON", "DER"],
     ["skips_check", "CON", "SRC"], ["diverges_from", "DER", "SRC"]],
    [["diverges_from(DER,SRC)", "causes", "false_claim(CON)"],
     ["skips_check(CON,SRC)", "enables", "false_claim(CON)"]],
    domain="software operations", entities=("cache", "database", "status page"),
    l0="The status page read a stale cache instead of the database.",
    fix="reconcile(CON, DER, SRC) before asserting")
# same mechanism, another domain
LEDGER = sig(
    "ledger-copy", {"ACC": "bank account", "TOT": "copied ledger total", "CLK": "clerk"},
    [["derives_from", "TOT", "ACC"], ["trusts_as_authoritative", "CLK", "TOT"],
     ["skips_check", "CLK", "ACC"], ["diverges_from", "TOT", "ACC"]],
    [["diverges_from(TOT,ACC)", "causes", "false_claim(CLK)"]],
    domain="accounting", entities=("ledger", "bank account", "clerk"),
    l0="The clerk reported the copied ledger total, which had drifted from the account.")
# same surface as the cache episode, another mechanism (retry storm through a dependency)
CACHE_DECOY = sig(
    "cache-retry-storm", {"CLI": "cache clients", "SRV": "database", "Q": "request queue"},
    [["retries", "CLI", "SRV"], ["depends_on", "CLI", "SRV"], ["amplifies", "CLI", "Q"]],
    [["retries(CLI,SRV)", "causes", "overload(SRV)"],
     ["overload(SRV)", "causes", "outage(SRV)"]],
    domain="software operations", entities=("cache", "database", "status page"),
    l0="Cache clients retried the database until the status page went down.")
RETRY = sig(
    "hospital-retry", {"W": "ward phones", "L": "lab", "B": "call backlog"},
    [["retries", "W", "L"], ["depends_on", "W", "L"], ["amplifies", "W", "B"]],
    [["retries(W,L)", "causes", "overload(L)"], ["overload(L)", "causes", "outage(L)"]],
    domain="medicine", entities=("ward", "lab"),
    l0="Wards kept phoning the lab for results until the lab stopped answering.")

TARGET = sig(
    "target-sensor", {"S": "sensor", "C": "cached summary", "R": "health reporter"},
    [["derives_from", "C", "S"], ["trusts_as_authoritative", "R", "C"], ["skips_check", "R", "S"]],
    [], domain="monitoring", entities=("sensor", "summary"),
    l0="The health reporter read the cached summary of the sensor.")


@pytest.fixture
def store(store: str) -> Memory:
    """The four-episode store, on each backend (conftest's parametrised ``store``)."""
    m = open_memory(store)
    for s in (STALE_CACHE, LEDGER, CACHE_DECOY, RETRY):
        m.add(s)
    yield m
    m.close()


def test_structural_analogue_ranks_first_and_mechanism_transfers(store: Memory) -> None:
    res = Retriever(store).find(TARGET)
    assert not res.no_match
    top = [h.episode_id for h in res.results[:2]]
    assert set(top) == {"stale-cache", "ledger-copy"}
    best = res.results[0]
    # the derived copy of the source maps onto the cached summary of the target
    assert "C" in best.report.role_map.values()
    derived = {"stale-cache": "DER", "ledger-copy": "TOT"}[best.episode_id]
    assert best.report.role_map[derived] == "C"
    cache = next(h for h in res.results if h.episode_id == "stale-cache")
    assert cache.report.transfer_mechanism  # it states a fix; the ledger episode does not
    assert cache.report.mechanism == "reconcile(R, C, S) before asserting"
    # the conclusion's cause (divergence) is not observed in the target: withheld
    assert not cache.transfer and not best.transfer
    others = [h for h in res.results if h.episode_id not in ("stale-cache", "ledger-copy")]
    assert all(h.score < best.score for h in others)
    assert any(x.startswith("embedding channel: no embedder") for x in res.skipped)
    data = res.to_json()
    json.dumps(data)
    assert data["results"][0]["episode_id"] == best.episode_id


def test_decoy_probe_maps_the_surface_twin(store: Memory) -> None:
    target = sig("t2", TARGET.roles, [list(a.to_list()) for a in TARGET.relations], [],
                 domain="software operations", entities=("cache", "database", "status page"),
                 l0="The status page read the cache.")
    res = Retriever(store).find(target)
    assert res.decoy is not None
    assert res.decoy.episode_id == "cache-retry-storm"
    assert res.decoy.surface_similarity > 0.3
    assert res.decoy.judge_transfer is False


def test_no_match_for_an_unrelated_shape(store: Memory) -> None:
    odd = sig("odd", {"P": "p", "Q": "q"}, [["incentivises", "P", "Q"]], [])
    res = Retriever(store).find(odd)
    assert res.no_match
    assert all(not h.transfer for h in res.results)
    assert store.log()[0]["verdict"] == "no match"


def test_namespaces_are_partitions(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "ns.db") as m:
        m.add(STALE_CACHE, namespace="team-a")
        m.add(RETRY, namespace="team-b")
        a = Retriever(m, "team-a").find(TARGET)
        b = Retriever(m, "team-b").find(TARGET)
        assert [h.episode_id for h in a.results] == ["stale-cache"]
        assert all(h.episode_id != "stale-cache" for h in b.results)
        assert m.log("team-a") and m.log("team-b")
        assert len(m.log("team-a")) == 1


def test_superseded_episode_ranks_below_its_replacement(store: Memory) -> None:
    newer = STALE_CACHE.model_copy(update={"episode_id": "stale-cache-v2"})
    nid = store.add(newer)
    store.supersede("stale-cache", nid)
    res = Retriever(store).find(TARGET)
    ids = [h.episode_id for h in res.results]
    assert ids.index("stale-cache-v2") < ids.index("stale-cache")
    old = next(h for h in res.results if h.episode_id == "stale-cache")
    assert old.superseded_by == nid


def test_cache_refreshes_after_writes(store: Memory) -> None:
    r = Retriever(store)
    first = r.find(TARGET)
    store.add(sig("late-copy", {"X": "x", "Y": "y", "Z": "z"},
                  [["derives_from", "Y", "X"], ["trusts_as_authoritative", "Z", "Y"],
                   ["skips_check", "Z", "X"]], []))
    second = r.find(TARGET)
    assert "late-copy" not in [h.episode_id for h in first.results]
    assert second.results[0].episode_id == "late-copy"  # identical shape: full score


def test_results_are_deterministic(store: Memory) -> None:
    a = Retriever(store, log=False).find(TARGET).to_json()
    b = Retriever(store, log=False).find(TARGET).to_json()
    a.pop("timings_ms"), b.pop("timings_ms")
    assert a == b


def test_bad_params_and_targets(store: Memory) -> None:
    with pytest.raises(AnalogistError):
        RetrieveParams(k=0)
    with pytest.raises(AnalogistError):
        RetrieveParams(w_content=-1)
    with pytest.raises(AnalogistError):
        Retriever(store).find({"episode_id": "x", "kind": "failure", "roles": {}})


def test_surface_tokens() -> None:
    assert {"cache", "database", "status", "page"} <= surface_tokens(STALE_CACHE)


def test_an_episode_that_does_not_compile_is_skipped_not_fatal(store: Memory) -> None:
    # the store does not know the vocabulary: a relation with the wrong arity can be stored
    bad = sig("bad-arity", {"A": "a", "B": "b", "C": "c"},
              [["derives_from", "B", "A"], ["trusts_as_authoritative", "C", "B"],
               ["shares", "A", "B"]], [])
    store.add(bad)
    res = Retriever(store).find(TARGET)
    assert any("bad-arity" not in h.episode_id for h in res.results)
    assert any("wrong arity" in s for s in res.skipped)


def test_embedding_channel_with_stored_level_embeddings(tmp_path: Path) -> None:
    from analogist.index.embed import default_embedder
    from analogist.retrieve import level_embeddings

    emb = default_embedder()
    leveled = STALE_CACHE.model_copy(update={"levels": STALE_CACHE.levels.model_copy(update={
        "L1": "A status page read a cache copy instead of the database",
        "L2": "CON trusts DER, derived from SRC, without checking SRC",
        "L3": "Proxy mistaken for referent"})})
    with Memory.open(tmp_path / "e.db") as m:
        m.add(leveled, embeddings=level_embeddings(leveled, emb))
        m.add(RETRY)  # no levels: the channel is skipped for it
        target = TARGET.model_copy(update={"levels": TARGET.levels.model_copy(update={
            "L2": "R trusts C, derived from S, without checking S"})})
        res = Retriever(m, embedder="auto").find(target)
        assert "embedding" in res.channels_used
        top = res.results[0]
        assert top.episode_id == "stale-cache" and top.channels["embedding"] > 0.3
        off = Retriever(m).find(target)
        assert "embedding" not in off.channels_used


def test_streamed_content_index_equals_the_direct_one(store: Memory) -> None:
    import numpy as np

    from analogist.index.content import ContentIndex
    from analogist.index.features import extract_features
    from analogist.retrieve import _stream_content_index

    ids, feats = store.content_rows("default")
    direct = ContentIndex(ids, feats)
    streamed = _stream_content_index(store, "default")
    q = extract_features(TARGET).content
    assert list(streamed.ids) == list(direct.ids)
    assert np.allclose(streamed.scores(q), direct.scores(q))
    assert len(_stream_content_index(store, "empty-namespace")) == 0


def test_surface_tokens_from_stored_json_match() -> None:
    from analogist.retrieve import _surface_tokens_of
    from analogist.signature import dump_signature

    for s in (STALE_CACHE, LEDGER, RETRY):
        assert _surface_tokens_of(json.loads(dump_signature(s))) == surface_tokens(s)
