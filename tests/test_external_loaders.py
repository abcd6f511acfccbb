"""Loaders of the public analogy benchmarks (issue 15): every set and variant from a fixture
with the published header and quirks, the counts ``--check`` reports, quirks skipped and
counted, variant choice, and bad files → one error naming the file and the expected columns.
No models are loaded here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analogist.bench.external import BENCHMARKS, ChoiceItem, RetrievalItem, load_set
from analogist.bench.external.base import MAX_BENCH_FILE_BYTES, read_rows
from analogist.bench.external.bm25 import BM25Scorer
from analogist.bench.external.runner import _pick, _retrieval_metrics
from analogist.bench.external.sample import subsample
from analogist.bench.external.sets import set_folders, variants_present
from analogist.errors import AnalogistError
from tests.external_fixtures import CASES, FIX, VARIANTS

ARN = FIX / "arn" / "Analogical Reasoning on Narratives (ARN) dataset.xlsx - Sheet1.csv"

#: (set, variant) → (counts, skipped) the fixtures must give
EXPECTED = {
    ("arn", None): ({"items": 4}, {"correct_answer not 1 or 2": 1, "empty row": 1,
                                   "repeated row": 1, "row missing a narrative": 1}),
    ("storyanalogy", None): ({"items": 3}, {"answer missing or out of range": 1}),
    ("rattermann", None): ({"sets": 3, "trials": 8}, {"far trial with a story not written": 1}),
    ("parallelparc", "mc"): ({"items": 2},
                             {"row missing the source or an unreadable candidate list": 1}),
    ("parallelparc", "binary"): ({"items": 4, "analogies": 2}, {"row missing a paragraph": 1}),
    ("parallelparc", "silver-mc"): ({"rows": 6, "items": 6}, {}),
    ("parallelparc", "silver-binary"): ({"rows": 6, "items": 12}, {}),
    ("analobench", "t1-full-base"): ({"rows": 6, "items": 12, "lengths": 2},
                                     {"Label and CorrectIndex disagree (CorrectIndex used)": 1}),
    ("analobench", "t1-full-s1"): ({"rows": 6}, {}),
    ("analobench", "t1-subset-base"): ({"rows": 9, "items": 18, "lengths": 2},
                                       {"CorrectIndex not among Options": 1}),
    ("analobench", "t1-subset-s1"): ({"rows": 9}, {}),
    ("analobench", "t2-base"): ({"rows": 9, "items": 18, "lengths": 2},
                                {"Indices not 1-based positions in Options": 1}),
    ("historical", "popular"): ({"targets": 3, "scored targets": 2, "pool events": 4},
                                {"pool event with an empty history_event_text": 1,
                                 "target whose analogue is not in the pool": 1}),
    ("historical", "general"): ({"targets": 2}, {}),
    ("historical", "pool"): ({"events": 4}, {"pool event with an empty history_event_text": 1}),
}


def test_every_set_and_variant_has_a_fixture() -> None:
    assert set(VARIANTS) == set(BENCHMARKS)
    assert set(EXPECTED) == set(CASES)


@pytest.mark.parametrize("name,variant", CASES)
def test_fixture_counts_skips_and_items(name: str, variant: str | None) -> None:
    b = load_set(name, FIX / name, variant=variant)
    counts, skipped = EXPECTED[(name, variant)]
    assert b.counts == counts and b.skipped == skipped
    assert b.variant == variant
    again = load_set(name, FIX / name, variant=variant)
    assert again.items == b.items                      # deterministic
    if not b.scorable:
        assert not b.items
        return
    assert b.items and 0 < b.chance <= 0.5
    for it in b.items:
        if isinstance(it, ChoiceItem):
            assert 0 <= it.answer < len(it.choices) and it.query not in it.choices
        elif isinstance(it, RetrievalItem):
            assert it.gold and it.gold <= set(it.candidates)
            assert all(c in b.pool for c in it.candidates)


def test_arn_cells_and_answers() -> None:
    b = load_set("arn", FIX / "arn")
    assert {it.condition for it in b.items} == {
        "near-analogy/near-disanalogy", "far-analogy/far-disanalogy",
        "far-analogy/near-disanalogy", "near-analogy/far-disanalogy"}
    assert [it.answer for it in b.items] == [0, 1, 0, 0]
    assert b.items[0].query.startswith("Tom rushed the paint job")   # a cell over two lines
    assert load_set("arn", ARN).items == b.items                    # file or folder


def test_parallelparc_mc_kinds_and_binary_types() -> None:
    mc = load_set("parallelparc", FIX / "parallelparc", variant="mc")
    for it in mc.items:
        assert sorted(it.choice_types) == ["distractor", "random", "random_distractor",
                                           "target"]
        assert it.choice_types[it.answer] == "target"
    assert {it.condition for it in mc.items} == {"far analogy", "close analogy"}
    binary = load_set("parallelparc", FIX / "parallelparc", variant="binary")
    assert [(it.label, it.condition) for it in binary.items] == [
        (True, "far analogy"), (True, "close analogy"), (False, "distractor"),
        (False, "random")]


def test_analobench_lengths_and_gold() -> None:
    t1 = load_set("analobench", FIX / "analobench", variant="t1-subset-base")
    assert {it.condition for it in t1.items} == {"S1", "S10"}
    s10 = [it for it in t1.items if it.condition == "S10"]
    assert all("It happened on an ordinary day." in it.query for it in s10)
    full = load_set("analobench", FIX / "analobench", variant="t1-full-base")
    assert all(it.choices[it.answer] != it.query for it in full.items)
    s1 = load_set("analobench", FIX / "analobench", variant="t1-subset-s1")
    sub = [it for it in t1.items if it.condition == "S1"]
    assert [(i.query, i.choices, i.answer) for i in s1.items] == [
        (i.query, i.choices, i.answer) for i in sub]
    t2 = load_set("analobench", FIX / "analobench", variant="t2-base")
    first = t2.items[0]                          # story 0: cluster-mates 1 and 2
    assert first.gold == {"S1:1", "S1:2"} and "S1:0" not in first.candidates


def test_rattermann_trials() -> None:
    b = load_set("rattermann", FIX / "rattermann")
    assert [it.condition for it in b.items][:3] == ["near", "far", "ta-vs-ma"]
    want = {"near": "literal_similarity", "far": "true_analogy", "ta-vs-ma": "true_analogy"}
    for it in b.items:
        assert it.choice_types[it.answer] == want[it.condition]


def test_historical_gold_is_the_named_event() -> None:
    b = load_set("historical", FIX / "historical", variant="popular")
    gold = sorted(b.pool[g] for it in b.items for g in it.gold)
    assert gold[0].startswith("Farmers feared") and gold[1].startswith("Merchants refused")


@pytest.mark.parametrize("name", ["parallelparc", "analobench", "historical"])
def test_several_variants_need_a_choice_and_the_error_lists_them(name: str) -> None:
    with pytest.raises(AnalogistError, match="give --variant, one of") as e:
        load_set(name, FIX / name)
    for v in VARIANTS[name]:
        assert v in str(e.value)
    with pytest.raises(AnalogistError, match="unknown variant 'nope'.*choices are"):
        load_set(name, FIX / name, variant="nope")


def test_variants_present_and_set_folders(tmp_path: Path) -> None:
    assert set_folders(FIX).keys() == set(BENCHMARKS)
    assert variants_present("analobench", FIX / "analobench") == VARIANTS["analobench"]
    shutil.copy(FIX / "parallelparc" / "parallelparc_silver.csv", tmp_path / "a.csv")
    assert variants_present("parallelparc", tmp_path) == ["silver-mc", "silver-binary"]
    with pytest.raises(AnalogistError, match="no benchmark subfolder"):
        set_folders(tmp_path)


@pytest.mark.parametrize("content,needle", [
    (b"", "the file is empty"),
    (b"\x00\x01\x02binary", "NUL bytes"),
    (b"a,b,c\n1,2,3\n", "the header has 'a', 'b', 'c'"),
    (b"id,proverb,query_narrative\n", "the header has"),
])
def test_bad_arn_file_names_file_and_expected_columns(tmp_path: Path, content: bytes,
                                                      needle: str) -> None:
    f = tmp_path / "arn.csv"
    f.write_bytes(content)
    with pytest.raises(AnalogistError) as e:
        load_set("arn", f)
    msg = str(e.value)
    assert str(f) in msg and needle in msg
    assert "query_narrative, first_choice, second_choice" in msg
    assert "\n" not in msg


def test_oversized_file_is_refused_with_the_expected_columns(tmp_path: Path) -> None:
    f = tmp_path / "story_analogies.csv"
    with open(f, "wb") as fh:
        fh.truncate(MAX_BENCH_FILE_BYTES + 1)
    with pytest.raises(AnalogistError, match="over the limit.*True Analogy Story|over the "
                                             "limit.*true_analogy_story"):
        load_set("rattermann", f)


@pytest.mark.parametrize("name,file,needle", [
    ("storyanalogy", "x.json", "source, choices, answer"),
    ("historical", "x.jsonl", "event_name, event_intro, target_event"),
    ("parallelparc", "x.csv", "shuffled_candidates"),
    ("analobench", "AnaloBench-T2-Base.csv", "Options|options"),
])
def test_other_sets_name_their_expected_layout(tmp_path: Path, name: str, file: str,
                                               needle: str) -> None:
    f = tmp_path / file
    f.write_text('{"a": 1}\n' if file.endswith(".jsonl") else "[1, 2]" if file.endswith(
        ".json") else "a,b\n1,2\n")
    with pytest.raises(AnalogistError, match=needle) as e:
        load_set(name, f)
    assert str(f) in str(e.value)


def test_unknown_set_and_missing_path() -> None:
    with pytest.raises(AnalogistError, match="unknown benchmark"):
        load_set("nope", FIX)
    with pytest.raises(AnalogistError, match="no such file"):
        load_set("arn", FIX / "missing")


def test_quirky_json_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    for f in (FIX / "historical").iterdir():
        shutil.copy(f, tmp_path / f.name)
    pool = tmp_path / "event_pool.jsonl"
    pool.write_text(pool.read_text() + "not json\n[1]\n\n")
    b = load_set("historical", tmp_path, variant="pool")
    assert b.skipped["unreadable line"] == 1 and b.skipped["line that is not an object"] == 1


def test_ragged_and_empty_rows_are_counted(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text("a,b\n1,2\n3\n,\n4,5\n")
    t = read_rows(f, {"x": ("a", "b")}, "test CSV")
    assert [r["a"] for _, r in t.rows] == ["1", "4"]
    assert t.skipped == {"row with a wrong number of fields": 1, "empty row": 1}


def test_bm25_prefers_shared_rare_words() -> None:
    bm = BM25Scorer()
    q, a, b = "the kidney filters blood", "a kidney filters waste", "the cat and the dog"
    bm.prepare([q, a, b])
    assert bm.score(a, q) > bm.score(b, q) >= 0
    assert bm.score(q, q) == pytest.approx(1.0)
    assert bm.score("x", "") == 0.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(), min_size=0, max_size=30), st.integers(1, 40),
       st.integers(0, 10))
def test_subsample_is_a_seeded_ordered_subset(xs: list[int], limit: int, seed: int) -> None:
    out = subsample(xs, limit, seed)
    assert out == subsample(xs, limit, seed)
    assert len(out) == min(limit, len(xs))
    it = iter(xs)
    assert all(any(x == y for y in it) for x in out)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.integers(0, 5))
def test_pick_is_a_top_scorer(scores: list[float], seed: int) -> None:
    i, tie = _pick(scores, "k", seed)
    assert scores[i] == max(scores)
    assert tie == (scores.count(max(scores)) > 1)


def test_retrieval_metrics() -> None:
    m = _retrieval_metrics(["a", "g1", "b", "g2"], frozenset({"g1", "g2"}), (1, 5))
    assert m["ap"] == pytest.approx((1 / 2 + 2 / 4) / 2) and m["rr"] == 0.5
    assert m["hit@1"] == 0.0 and m["hit@5"] == 1.0 and m["recall@10"] == 1.0


def test_json_fixture_is_published_shape() -> None:
    data = json.loads((FIX / "storyanalogy" / "storyanalogy_multiple_choice.json").read_text())
    assert set(data[0]) == {"source", "choices", "answer", "types"}
