"""Runner and per-query scoring (issue 8 item 2) against the real retrieval path."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analogist.bench.harness.associative import SearchResult
from analogist.bench.harness.goldset import GoldQuery, build_goldset
from analogist.bench.harness.runner import run_goldset, score_query
from analogist.errors import AnalogistError
from analogist.memory.sqlite import Memory
from tests.test_harness_fixtures import NS, PARAPHRASE, build_store


def q(cat: str = "phrase", expected: tuple[str, ...] = ("a", "b"),
      stale: tuple[str, ...] = ()) -> GoldQuery:
    return GoldQuery("q", cat, "text", expected, "test", stale=stale)


def test_scores_with_fixed_precision_denominator() -> None:
    s = score_query(q(), SearchResult(("x", "b", "y"), False))
    assert s == {"hit@5": 1.0, "recall@5": 0.5, "recall@10": 0.5, "precision@5": 0.2,
                 "mrr@10": 0.5}
    empty = score_query(q(), SearchResult((), True))
    assert empty == {"hit@5": 0.0, "recall@5": 0.0, "recall@10": 0.0, "precision@5": 0.0,
                     "mrr@10": 0.0}


def test_rank_six_to_ten_counts_for_recall10_and_mrr_only() -> None:
    s = score_query(q(expected=("a",)), SearchResult(tuple("vwxyz") + ("a",), False))
    assert s["hit@5"] == 0.0 and s["recall@10"] == 1.0 and s["mrr@10"] == pytest.approx(1 / 6)


def test_superseded_needs_the_correction_above_the_stale_episode() -> None:
    qq = q("superseded", ("new",), ("old",))
    assert score_query(qq, SearchResult(("new", "old"), False))["hit@5"] == 1.0
    assert score_query(qq, SearchResult(("old", "new"), False))["hit@5"] == 0.0
    assert score_query(qq, SearchResult(("x", "new"), False))["hit@5"] == 1.0


def test_nonsense_is_right_only_when_nothing_matches() -> None:
    qq = q("nonsense", ())
    assert score_query(qq, SearchResult(("a",), True))["hit@5"] == 1.0
    assert score_query(qq, SearchResult((), False))["hit@5"] == 1.0
    assert score_query(qq, SearchResult(("a",), False))["hit@5"] == 0.0


@given(st.lists(st.sampled_from("abcdefghijkl"), unique=True, max_size=12),
       st.sets(st.sampled_from("abcdefghijkl"), min_size=1, max_size=6))
def test_metric_invariants(ranked: list[str], expected: set[str]) -> None:
    s = score_query(q(expected=tuple(sorted(expected))), SearchResult(tuple(ranked), False))
    assert all(0.0 <= v <= 1.0 for v in s.values())
    assert s["recall@5"] <= s["recall@10"]
    assert (s["hit@5"] == 1.0) == (s["recall@5"] > 0)
    assert s["precision@5"] == pytest.approx(s["recall@5"] * len(expected) / 5)
    assert (s["mrr@10"] > 0) == (s["recall@10"] > 0)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory):
    store = build_store(tmp_path_factory.mktemp("run") / "s.db")
    with Memory.open(store) as m:
        gold = build_goldset(m, NS, paraphrases=[PARAPHRASE])
    return store, gold


@pytest.fixture(scope="module")
def encoder():
    from analogist.encode.deterministic import DeterministicEncoder

    return DeterministicEncoder(embedder=None)


def test_structural_runs_are_repeatable_and_leave_the_store_alone(setup, encoder) -> None:
    store, gold = setup
    before = store.read_bytes()
    res = run_goldset(gold, store, "structural", runs=2, encoder=encoder)
    assert store.read_bytes() == before               # each run works on a copy
    assert [r["run"] for r in res["runs"]] == [1, 2]
    r1, r2 = (r["rows"] for r in res["runs"])
    assert [x["id"] for x in r1] == [x.id for x in gold.queries]
    assert [x["ranked"] for x in r1] == [x["ranked"] for x in r2]   # deterministic
    s = res["runs"][0]["summary"]
    assert s["answerable"] == sum(1 for x in gold.queries if x.category != "nonsense")
    assert set(s["by_category"]) == {x.category for x in gold.queries}
    assert s["latency_ms"]["p50"] <= s["latency_ms"]["p95"] <= s["latency_ms"]["max"]
    # the structural query's own source episode is never ranked
    for qq, row in zip(gold.queries, r1, strict=True):
        assert not set(qq.exclude) & set(row["ranked"])
        assert len(row["ranked"]) <= 10


def test_structural_finds_a_same_shape_analogue(setup, encoder) -> None:
    store, gold = setup
    res = run_goldset(gold, store, "structural", runs=1, encoder=encoder)
    rows = [r for r in res["runs"][0]["rows"] if r["category"] == "structural"]
    assert rows and max(r["mrr@10"] for r in rows) > 0


def test_bad_runner_inputs(setup, tmp_path: Path) -> None:
    store, gold = setup
    with pytest.raises(AnalogistError) as ei:
        run_goldset(gold, store, "magic")
    assert ei.value.field == "retriever"
    with pytest.raises(AnalogistError):
        run_goldset(gold, store, "surface", runs=0)
    with pytest.raises(AnalogistError) as ei:
        run_goldset(gold, tmp_path / "none.db", "surface")
    assert "not found" in str(ei.value)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(AnalogistError) as ei:
        run_goldset(gold, junk, "surface")
    assert "SQLite" in str(ei.value)
    with pytest.raises(AnalogistError) as ei:
        run_goldset(gold, store, "surface", namespace="empty-ns")
    assert ei.value.field == "namespace"
