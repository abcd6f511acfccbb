"""``eval build`` on a user's store of analogue pairs and decoys (issue 21, build item 7): it
derives structural queries from pairs the store makes plausible, honours ``ANALOGIST_STORE``, and
the default retriever beats the surface baseline on them (paired, through the CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analogist.bench.harness.pairs import analogue_pair_store
from analogist.cli import app

runner = CliRunner()
MECHANISMS = ("deadlock", "proxy_optimisation", "stale_derived_copy", "retry_storm",
              "shared_dependency_cascade", "masking_cause", "common_cause_redundancy",
              "priority_inversion", "alarm_fatigue")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("structural")
    store = d / "pairs.db"
    rev = analogue_pair_store(store, MECHANISMS)
    env = {"ANALOGIST_STORE": str(store)}
    gold = d / "gold.json"
    r = runner.invoke(app, ["eval", "build", "--out", str(gold)], env=env)   # no --store
    assert r.exit_code == 0, r.output
    return {"dir": d, "store": store, "rev": rev, "env": env, "gold": gold,
            "data": json.loads(gold.read_text(encoding="utf-8"))}


def test_build_derives_structural_queries_from_the_store(built) -> None:
    qs = [q for q in built["data"]["queries"] if q["category"] == "structural"]
    assert len(qs) >= 6
    for q in qs:
        src = q["check"]["source"]
        assert q["exclude"] == [src] and q["signature"]["episode_id"] == src
        assert q["expected"] and src not in q["expected"]
        # an episode's reversed-edge decoy is never its structural answer, nor the reverse
        assert all(built["rev"].get(e) != src and built["rev"].get(src) != e
                   for e in q["expected"])
        for e in q["expected"]:
            assert e in q["derivation"]       # every answer's score and overlap are recorded
            score, overlap = q["check"]["answers"][e]
            assert score >= 0.5 and overlap <= 0.1
    r = runner.invoke(app, ["eval", "check", str(built["gold"])], env=built["env"])
    assert r.exit_code == 0, r.output


def test_default_retriever_beats_surface_on_structural_queries(built) -> None:
    d, env = built["dir"], built["env"]
    # the structural queries alone (the word-lookup categories are measured elsewhere)
    data = dict(built["data"])
    data["queries"] = [q for q in data["queries"] if q["category"] == "structural"]
    gold = d / "gold_structural.json"
    gold.write_text(json.dumps(data), encoding="utf-8")
    for name in ("surface", "fused"):
        r = runner.invoke(app, ["eval", "run", str(gold), "--runs", "1",
                                "--retriever", name, "--out", str(d / f"{name}.json")], env=env)
        assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["eval", "compare", str(d / "surface.json"), str(d / "fused.json"),
                            "--json"])
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.output)
    hit = cmp["by_category_hit@5"]["structural"]
    paired = cmp["by_category_paired"]["structural"]
    assert hit["candidate"] > hit["baseline"]
    assert len(paired["fixed"]) > len(paired["broken"])
    assert paired["mcnemar_p"] < 0.05
    text = runner.invoke(app, ["eval", "compare", str(d / "surface.json"),
                               str(d / "fused.json")]).output
    assert "structural" in text and "McNemar exact p" in text


def test_without_store_or_environment_the_error_names_both(tmp_path: Path) -> None:
    r = runner.invoke(app, ["eval", "build", "--out", str(tmp_path / "g.json")],
                      env={"ANALOGIST_STORE": ""})
    assert r.exit_code == 2
    assert "--store" in r.output and "ANALOGIST_STORE" in r.output
