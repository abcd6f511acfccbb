"""``compare_refs``: two builds in isolated venvs, run on one gold set, compared.

The end-to-end tests build two virtual environments and load the embedding model twice, so they
are skipped unless ``ANALOGIST_SLOW_TESTS=1``::

    ANALOGIST_SLOW_TESTS=1 python -m pytest tests/test_harness_refs.py

``test_two_source_trees`` uses source-tree directories (no git); ``test_two_git_refs`` checks
out ``HEAD`` twice with ``git worktree add`` (and removes the worktrees again).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from analogist.bench.harness.goldset import build_goldset, goldset_from_json, save_goldset
from analogist.bench.harness.refs import compare_refs
from analogist.errors import AnalogistError
from analogist.memory.sqlite import Memory
from tests.test_harness_fixtures import NS, SMALL, build_store

ROOT = Path(__file__).resolve().parents[1]
slow = pytest.mark.skipif(os.environ.get("ANALOGIST_SLOW_TESTS") != "1",
                          reason="slow: builds two venvs; set ANALOGIST_SLOW_TESTS=1")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("refs")
    store = build_store(d / "s.db", pick=SMALL)
    with Memory.open(store) as m:
        gold = build_goldset(m, NS)
    data = gold.to_json()
    keep = [q for q in data["queries"] if q["category"] in ("exact_rare", "nonsense")][:3]
    data["queries"] = keep
    path = d / "gold.json"
    save_goldset(goldset_from_json(data), path)
    return path, store


def test_bad_inputs(tiny, tmp_path: Path) -> None:
    gold, store = tiny
    with pytest.raises(AnalogistError) as ei:
        compare_refs(str(tmp_path), str(tmp_path), gold, store)
    assert "pyproject.toml" in str(ei.value)
    with pytest.raises(AnalogistError) as ei:
        compare_refs(str(ROOT), str(ROOT), tmp_path / "none.json", store)
    assert ei.value.field == "gold"
    with pytest.raises(AnalogistError):
        compare_refs(str(ROOT), str(ROOT), gold, store, runs=0)


@slow
def test_two_source_trees(tiny, tmp_path: Path) -> None:
    gold, store = tiny
    cmp = compare_refs(str(ROOT), str(ROOT), gold, store, retriever="surface", runs=1,
                       out_dir=tmp_path)
    assert cmp["net"] == 0 and cmp["verdict"].startswith("no measurable difference")
    for side in ("baseline", "candidate"):
        res = json.loads((tmp_path / f"run_{side}.json").read_text(encoding="utf-8"))
        sut = res["system_under_test"]
        assert Path(sut["analogist_path"]).is_relative_to(ROOT)
        assert sut["install"]


@slow
def test_two_git_refs(tiny) -> None:
    gold, store = tiny
    cmp = compare_refs("HEAD", "HEAD", gold, store, retriever="surface", runs=1, repo=ROOT)
    assert cmp["refs"] == {"baseline": "HEAD", "candidate": "HEAD"}
    assert cmp["net"] == 0
