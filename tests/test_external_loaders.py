"""Loaders for public analogy benchmarks (issue 8, item 5): every format from a tiny fixture
written in the project's own words, seeded task construction, and bad input → AnalogistError
naming the file and the line or field. No models are loaded here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analogist.bench.external import (
    BENCHMARKS,
    BinaryItem,
    ChoiceItem,
    RetrievalItem,
    load_benchmark,
)
from analogist.bench.external.runner import _pick, _retrieval_metrics
from analogist.bench.external.sample import subsample
from analogist.errors import AnalogistError
from tests.external_fixtures import FIX, FOLDER


def test_every_benchmark_has_a_fixture() -> None:
    assert set(FOLDER) == set(BENCHMARKS)


@pytest.mark.parametrize("name", sorted(FOLDER))
def test_fixture_loads_from_folder_deterministically(name: str) -> None:
    a = load_benchmark(name, FIX / FOLDER[name])
    b = load_benchmark(name, FIX / FOLDER[name])
    assert a.items and a.items == b.items
    assert 0 < a.chance <= 0.5
    for it in a.items:
        if isinstance(it, ChoiceItem):
            assert 0 <= it.answer < len(it.choices) and len(set(it.choices)) == len(it.choices)
            assert it.query not in it.choices
        elif isinstance(it, RetrievalItem):
            assert it.gold and it.gold <= set(it.candidates)
            assert all(c in a.pool for c in it.candidates)


def test_storyanalogy_fields() -> None:
    b = load_benchmark("storyanalogy", FIX / "storyanalogy" / "storyanalogy_mc.json")
    assert [it.answer for it in b.items] == [1, 0, 2]
    assert all(it.choice_types[it.answer] == "target" for it in b.items)
    assert b.chance == 0.25


def test_arn_conditions_and_shuffle_keep_the_analogy() -> None:
    b = load_benchmark("arn", FIX / "arn")
    conds = {it.condition for it in b.items}
    assert conds == {"far-analogy/near-disanalogy", "near-analogy/near-disanalogy",
                     "far-analogy/far-disanalogy", "near-analogy/far-disanalogy"}
    first = b.items[0]
    assert first.choices[first.answer].startswith("The budget absorbed")


def test_arn_option_layout(tmp_path: Path) -> None:
    f = tmp_path / "arn.csv"
    f.write_text("Query,Option 1,Option 2,Label\nq text,first option,second option,2\n")
    (it,) = load_benchmark("arn", f).items
    assert it.choices == ("first option", "second option") and it.answer == 1


def test_analobench_uses_stories_file_and_gold() -> None:
    t1 = load_benchmark("analobench-t1", FIX / "analobench")
    assert t1.items[0].query.startswith("The lamp in the hall")       # from stories-10.csv
    assert [it.answer for it in t1.items] == [0, 2, 3]
    t2 = load_benchmark("analobench-t2", FIX / "analobench")
    assert [set(it.gold) for it in t2.items] == [{"1"}, {"3"}, {"5"}]
    assert all(it.item_id.split("-")[-1] not in it.candidates for it in t2.items)


def test_analobench_t2_gold_from_clusters_when_no_indices(tmp_path: Path) -> None:
    shutil.copy(FIX / "analobench" / "clusters.tsv", tmp_path / "clusters.tsv")
    (tmp_path / "T2.csv").write_text(
        'Index,Sentence,Options\n0,"lamp","1,2,3,4,5"\n')
    (it,) = load_benchmark("analobench-t2", tmp_path).items
    assert it.gold == frozenset({"1"})


def test_analobench_file_alone_uses_its_own_sentences(tmp_path: Path) -> None:
    f = tmp_path / "AnaloBench-T1-x.csv"
    f.write_text('Index,Sentence,Options,CorrectIndex,Label\n0,"zero","1,2",1,A\n'
                 '1,"one","0,2",0,A\n2,"two","0,1",0,A\n')
    b = load_benchmark("analobench-t1", f)
    assert b.items[0].choices == ("one", "two")


def test_parallelparc_tasks() -> None:
    mc = load_benchmark("parallelparc-mc", FIX / "parallelparc")
    assert {it.condition for it in mc.items} == {"near", "far"}
    for it in mc.items:
        assert it.choice_types is not None and it.choice_types[it.answer] == "target"
        assert len(it.choices) == 4
    binary = load_benchmark("parallelparc-binary", FIX / "parallelparc")
    assert sum(it.label for it in binary.items) * 2 == len(binary.items)
    for it in binary.items:
        assert isinstance(it, BinaryItem)
        near = it.condition.split("/")[0]
        assert near in ("near", "far")
    other = load_benchmark("parallelparc-binary", FIX / "parallelparc", seed=7)
    assert [i.source for i in other.items] == [i.source for i in binary.items]


def test_parallelparc_distractor_never_from_same_source(tmp_path: Path) -> None:
    src = (FIX / "parallelparc" / "parallelparc_silver.csv").read_text().splitlines()
    # a second row with the source of row a1 and another target: never a distractor of a1
    extra = ('6,a7,1,How do kidneys clean blood?,Biomedical and Health Sciences,Engineering,'
             'x,y,z,"The kidneys remove waste from the blood. Clean blood returns to the body.",'
             '"A sieve keeps stones out of the sand."')
    f = tmp_path / "parallelparc_silver.csv"
    f.write_text("\n".join([*src, extra]) + "\n")
    mc = load_benchmark("parallelparc-mc", f)
    for it in mc.items:
        if it.query.startswith("The kidneys"):
            wrong = [c for j, c in enumerate(it.choices) if j != it.answer]
            assert not any(c.startswith(("A water filter", "A sieve")) for c in wrong)


def test_rattermann_near_and_far() -> None:
    b = load_benchmark("rattermann", FIX / "rattermann")
    assert [it.condition for it in b.items] == ["near", "far", "near", "far"]
    for it in b.items:
        want = "literally_similar" if it.condition == "near" else "true_analogy"
        assert it.choice_types[it.answer] == want


def test_historical_gold_and_skips() -> None:
    b = load_benchmark("historical", FIX / "historical")
    assert len(b.items) == 2 and "1 targets" in b.notes[0]
    gold_texts = [b.pool[g] for it in b.items for g in it.gold]
    assert gold_texts[0].startswith("Depositors feared")
    one = load_benchmark("historical", FIX / "historical" / "popular_analogy.jsonl")
    assert one.items == b.items


def test_limit_subsamples_with_seed() -> None:
    a = load_benchmark("parallelparc-mc", FIX / "parallelparc", limit=4, seed=1)
    b = load_benchmark("parallelparc-mc", FIX / "parallelparc", limit=4, seed=1)
    assert a.items == b.items and len(a.items) == 4


# -- bad input ------------------------------------------------------------------------------------
def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("name,fname,text,needle", [
    ("arn", "arn.csv", "query,analogy\nq,a\n", "'disanalogy'"),
    ("arn", "arn.csv", "query,option_1,option_2,label\nq,a,b,0\n", "line 2"),
    ("arn", "arn.csv", "query,analogy,disanalogy\n,a,b\n", "line 2"),
    ("analobench-t1", "T1.csv", "Index,Sentence,Options,CorrectIndex\n0,s,\"1,2\",1\n",
     "story index 1 has no text"),
    ("analobench-t1", "T1.csv", "Index,Sentence,Options,CorrectIndex\n0,s,\"0,x\",0\n",
     "comma-separated integers"),
    ("analobench-t1", "T1.csv",
     "Index,Sentence,Options,CorrectIndex\n0,a,\"1\",1\n1,b,\"0\",7\n", "not among Options"),
    ("analobench-t2", "T2.csv", "Index,Sentence,Options\n0,s,\"0\"\n", "Indices"),
    ("storyanalogy", "s.json", '[{"source": "s", "choices": ["a", "b"], "answer": 5}]',
     "[0].answer"),
    ("storyanalogy", "s.json", '{"x": 1}', "JSON list"),
    ("storyanalogy", "s.json", '[{"source": "s", "choices": ["a"', "not valid JSON"),
    ("storyanalogy", "s.json", '[{"source": "", "choices": ["a", "b"], "answer": 0}]',
     "[0].source"),
    ("parallelparc-mc", "p.csv", "source_paragraph,target_paragraph\na,b\n", "source_domain"),
    ("parallelparc-mc", "p.csv",
     "source_paragraph,target_paragraph,source_domain,target_domain\na,b,x,y\n",
     "too few rows"),
    ("parallelparc-binary", "p.csv",
     "source_paragraph,target_paragraph,source_domain,target_domain\na,b,x\n", "line 2"),
    ("rattermann", "r.csv", "base,true_analogy\nb,t\n", "literally_similar"),
    ("historical", "popular_analogy.jsonl", '{"event_name": "x"}\n', "event pool"),
])
def test_bad_input_names_file_and_place(tmp_path: Path, name: str, fname: str, text: str,
                                        needle: str) -> None:
    f = _write(tmp_path, fname, text)
    with pytest.raises(AnalogistError) as e:
        load_benchmark(name, f)
    assert needle in str(e.value)
    assert str(f) in str(e.value) or str(tmp_path) in str(e.value)


def test_historical_bad_lines(tmp_path: Path) -> None:
    _write(tmp_path, "event_pool.jsonl", '{"history_event_text": "A", "url": "u"}\nnot json\n')
    _write(tmp_path, "t.jsonl", '{"event_name": "x", "event_intro": "y", "target_event": "A"}\n')
    with pytest.raises(AnalogistError, match="line 2"):
        load_benchmark("historical", tmp_path)
    _write(tmp_path, "event_pool.jsonl", '{"history_event_text": "A", "url": "u"}\n')
    _write(tmp_path, "t.jsonl", '{"event_name": "x", "event_intro": "y", "target_event": 3}\n')
    with pytest.raises(AnalogistError, match="target_event"):
        load_benchmark("historical", tmp_path)


def test_unknown_name_missing_path_empty_file_and_ambiguous_folder(tmp_path: Path) -> None:
    with pytest.raises(AnalogistError, match="unknown benchmark"):
        load_benchmark("nope", FIX)
    with pytest.raises(AnalogistError, match="no such file"):
        load_benchmark("arn", tmp_path / "missing.csv")
    with pytest.raises(AnalogistError, match="empty"):
        load_benchmark("arn", _write(tmp_path, "arn.csv", "  \n"))
    _write(tmp_path, "arn2.csv", "query\n")
    with pytest.raises(AnalogistError, match="several files"):
        load_benchmark("arn", tmp_path)
    with pytest.raises(AnalogistError, match="no StoryAnalogy"):
        load_benchmark("storyanalogy", tmp_path)
    with pytest.raises(AnalogistError, match="limit"):
        load_benchmark("storyanalogy", FIX / "storyanalogy", limit=0)


def test_ragged_row_and_non_utf8(tmp_path: Path) -> None:
    f = _write(tmp_path, "arn.csv", "query,analogy,disanalogy\nq,a,b,extra\n")
    with pytest.raises(AnalogistError, match="line 2"):
        load_benchmark("arn", f)
    g = tmp_path / "s.json"
    g.write_bytes(b'[{"source": "\xff"}]')
    with pytest.raises(AnalogistError, match="UTF-8"):
        load_benchmark("storyanalogy", g)
    json.loads((FIX / "storyanalogy" / "storyanalogy_mc.json").read_text())


# -- invariants -----------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(), max_size=40), st.integers(1, 50), st.integers(0, 10**6))
def test_subsample_keeps_order_and_size(xs: list[int], limit: int, seed: int) -> None:
    items = list(enumerate(xs))
    out = subsample(items, limit, seed)
    assert len(out) == min(limit, len(items))
    assert out == sorted(out) and set(out) <= set(items)
    assert out == subsample(items, limit, seed)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0]), min_size=1, max_size=6),
       st.integers(0, 1000))
def test_pick_is_always_a_top_score(scores: list[float], seed: int) -> None:
    i, tie = _pick(scores, "k", seed)
    assert scores[i] == max(scores)
    assert tie == (scores.count(max(scores)) > 1)


@settings(max_examples=60, deadline=None)
@given(st.permutations(list("abcdefgh")), st.sets(st.sampled_from(list("abcdefgh")), min_size=1))
def test_retrieval_metrics_bounds(ranked: list[str], gold: set[str]) -> None:
    m = _retrieval_metrics(list(ranked), frozenset(gold), (1, 3, 8))
    assert 0 < m["ap"] <= 1 and 0 < m["rr"] <= 1
    assert m["hit@1"] <= m["hit@3"] <= m["hit@8"] == 1.0
    assert (m["rr"] == 1.0) == (ranked[0] in gold) == (m["hit@1"] == 1.0)
    if set(ranked[: len(gold)]) == gold:
        assert m["ap"] == 1.0
