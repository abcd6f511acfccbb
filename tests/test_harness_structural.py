"""``eval build`` on a user's store of analogue pairs and decoys (issue 21, build item 7): it
derives structural queries from pairs the store makes plausible, honours ``ANALOGIST_STORE``, and
the default retriever beats the surface baseline on them (paired, through the CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analogist.casebook import load_casebook
from analogist.cli import app
from analogist.memory.sqlite import Memory

runner = CliRunner()
MECHANISMS = ("deadlock", "goodhart", "stale-copy", "retry-storm", "cascade", "masking",
              "common-cause", "prio-inversion", "alarm-fatigue")


def pair_store(path: Path) -> tuple[Path, dict[str, str]]:
    """Per mechanism two episodes of different domains — the second not isomorphic to the
    first (its last relation dropped, so no WL fingerprint is shared) — a decoy of the first
    with its last causal edge reversed, and the casebook's surface decoys of either. Returns
    the store and reversed decoy -> original."""
    entries = load_casebook()
    real = [e for e in entries if not e.is_decoy]
    sigs: list[dict[str, Any]] = []
    rev: dict[str, str] = {}
    for mech in MECHANISMS:
        a, b = [e for e in real if e.id.startswith(mech + "-")][:2]
        sigs.append(a.signature.to_data())
        d = b.signature.to_data()
        d["relations"] = d["relations"][:-1]
        sigs.append(d)
        r = a.signature.to_data()
        r["episode_id"] = "reversed-" + a.id
        e = r["causal_chain"][-1]
        r["causal_chain"][-1] = {**e, "cause": e["effect"], "effect": e["cause"]}
        sigs.append(r)
        rev[r["episode_id"]] = a.id
    ids = {s["episode_id"] for s in sigs}
    sigs += [e.signature.to_data() for e in entries if e.is_decoy and e.decoy_of in ids]
    with Memory.open(path) as m:
        m.add_many(sigs)
    return path, rev


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("structural")
    store, rev = pair_store(d / "pairs.db")
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
