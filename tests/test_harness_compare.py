"""Paired comparison, noise floor and verdict wording (issue 8 item 3; seed 002)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analogist.bench.harness.compare import compare_files, compare_results, outcomes, render
from analogist.bench.harness.runner import RESULT_FORMAT, summarise
from analogist.errors import AnalogistError


def result(hits_per_run: list[list[int]], name: str = "x", fp: str = "f") -> dict[str, Any]:
    n = len(hits_per_run[0])
    ids = [f"q{i:02d}" for i in range(n)]
    runs = []
    for r, hits in enumerate(hits_per_run):
        rows = [{"id": ids[i], "category": "phrase", "ranked": [], "no_match": False,
                 "latency_ms": 10.0 + i, "hit@5": float(h), "recall@5": float(h),
                 "recall@10": float(h), "precision@5": h / 5, "mrr@10": float(h)}
                for i, h in enumerate(hits)]
        runs.append({"run": r + 1, "rows": rows, "summary": summarise(rows)})
    return {"format": RESULT_FORMAT, "retriever": name,
            "gold": {"ids": ids, "store_fingerprint": fp}, "runs": runs}


def test_six_unanimous_fixes_are_a_measurable_improvement() -> None:
    base = result([[0] * 6 + [1] * 30])
    cand = result([[1] * 36])
    c = compare_results(base, cand)
    assert c["fixed"] == [f"q{i:02d}" for i in range(6)] and c["broken"] == []
    assert c["mcnemar_p"] == pytest.approx(0.03125)
    assert c["noise_floor_queries"] == 6
    assert c["verdict"] == "candidate better: a measurable improvement"


def test_five_for_five_is_inside_the_noise_band() -> None:
    base = result([[1] * 5 + [0] * 31])
    cand = result([[0] * 36])
    c = compare_results(base, cand)
    assert c["mcnemar_p"] == pytest.approx(0.0625)
    assert c["verdict"].startswith("no measurable difference (directionally worse")
    assert "needs 1 more or a larger gold set" in c["verdict"]
    assert "verdict: no measurable difference" in render(c)


def test_drift_raises_the_noise_floor() -> None:
    # the candidate flips 7 queries between its two runs: floor = drift + 1 = 8
    base = result([[0] * 7 + [0] * 30, [0] * 37])
    cand = result([[1] * 7 + [1] * 30, [0] * 7 + [1] * 30])
    c = compare_results(base, cand)
    assert c["drift"] == {"baseline": 0, "candidate": 7}
    assert c["noise_floor_queries"] == 8
    # majority with a tie goes to run 1: all 37 fixed, far above the floor
    assert c["net"] == 37 and c["verdict"].startswith("candidate better")


def test_significant_p_below_floor_is_not_called() -> None:
    base = result([[0] * 6 + [1] * 30, [0] * 6 + [1] * 30])
    cand = result([[1] * 6 + [1] * 30, [1] * 6 + [0] * 6 + [1] * 24])
    c = compare_results(base, cand)
    assert c["drift"]["candidate"] == 6 and c["noise_floor_queries"] == 7
    assert c["net"] == 6 and c["mcnemar_p"] < 0.05
    assert c["verdict"].startswith("no measurable difference")


def test_latency_is_reported_as_a_ratio() -> None:
    c = compare_results(result([[1, 0]]), result([[1, 0]]))
    assert c["latency"]["p50"]["ratio"] == pytest.approx(1.0)
    assert c["verdict"] == "no measurable difference (no net change; 0 fixed, 0 broken)"


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=60))
def test_counts_are_paired_and_symmetric(pairs: list[tuple[int, int]]) -> None:
    a = result([[x for x, _ in pairs]])
    b = result([[y for _, y in pairs]])
    ab, ba = compare_results(a, b), compare_results(b, a)
    assert ab["fixed"] == ba["broken"] and ab["broken"] == ba["fixed"]
    assert ab["mcnemar_p"] == ba["mcnemar_p"]
    assert ab["net"] == sum(y - x for x, y in pairs)
    assert outcomes(a)[1] == 0


def test_refuses_different_gold_sets_and_bad_files(tmp_path: Path) -> None:
    with pytest.raises(AnalogistError):
        compare_results(result([[1, 0]]), result([[1, 0, 1]]))
    with pytest.raises(AnalogistError):
        compare_results(result([[1, 0]], fp="a"), result([[1, 0]], fp="b"))
    with pytest.raises(AnalogistError) as ei:
        compare_results({"format": "nope"}, result([[1]]))
    assert ei.value.field == "format"
    bad = result([[1, 0]])
    bad["runs"][0]["rows"].pop()
    with pytest.raises(AnalogistError) as ei:
        compare_results(bad, result([[1, 0]]))
    assert ei.value.field == "runs[0].rows"
    with pytest.raises(AnalogistError):
        compare_files(tmp_path / "a.json", tmp_path / "b.json")
    p = tmp_path / "x.json"
    p.write_text("[1,\n", encoding="utf-8")
    with pytest.raises(AnalogistError) as ei:
        compare_files(p, p)
    assert ei.value.source == str(p)


def test_compare_files_round_trip(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(result([[0] * 6 + [1] * 4])), encoding="utf-8")
    b.write_text(json.dumps(result([[1] * 10])), encoding="utf-8")
    c = compare_files(a, b)
    assert c["net"] == 6 and c["queries"] == 10
