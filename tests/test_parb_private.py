"""PARB private item sets: file format, validation, the holdout rule, the casebook example."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from analogist.bench.parb import private as P
from analogist.errors import AnalogistError
from analogist.memory.sqlite import Memory

EXAMPLE = Path(__file__).parent / "data" / "parb_private_example.yaml"


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("private")
    P.write_casebook_store(d / "parb_private_example.db")
    shutil.copy(EXAMPLE, d / "example.yaml")
    return d


@pytest.fixture(scope="module")
def example_run(example_dir):
    out = example_dir / "out"
    res = P.run_private(example_dir / "example.yaml", ["B", "C", "D", "E", "A1"],
                        out_dir=out, seed=3)
    return res, out


def test_example_runs_and_reports(example_run):
    res, out = example_run
    d = res["splits"]["private"]
    assert d["n_items"] == 4 and set(d["arms"]) == {"B", "C", "D", "E"}
    assert res["skipped"]["A1"].startswith("skipped: no LLM")
    for m in d["arms"].values():
        assert m["recall_at_k_all"]["5"] is not None
        assert m["no_match_specificity"] is not None
        assert "cost" in m
    # the structural arm finds a keyed source for most keyed targets
    assert d["arms"]["C"]["recall_at_k_all"]["5"] >= 2 / 3
    assert (out / "report.md").read_text().startswith("# PARB private set")
    rows = [json.loads(x) for x in (out / "per_item.jsonl").read_text().splitlines()]
    assert len(rows) == 4


def test_holdout_excludes_target_and_derived(example_run, example_dir):
    res, out = example_run
    held = res["holdout"]["held_out_per_item"]
    assert set(held["private-0000"]) == {"stale-copy-sw-deploy-summary",
                                         "decoy-stale-copy-sw-deploy-summary"}
    spec = P.load_private(example_dir / "example.yaml")
    items, h = P._build_items(spec)
    for it in items:
        ids = {p["episode_id"] for p in it["pool"]}
        assert it["meta"]["target_id"] not in ids
        assert not ids & set(h[it["item_id"]])
        assert set(it["key"]["match_ids"]) <= ids
    for row in (json.loads(x) for x in (out / "per_item.jsonl").read_text().splitlines()):
        for a in row["arms"].values():
            assert not set(a["ranking"]) & set(row["held_out"])


def test_holdout_follows_source_hash_and_supersession(tmp_path):
    from analogist.casebook import load_casebook

    cb = {e.id: e.signature for e in load_casebook()}
    tgt = cb["masking-sw-autoscaler-leak"].to_data()
    tgt["provenance"] = {"source_hash": "a" * 64}
    same = dict(cb["masking-med-compensated-shock"].to_data(), episode_id="rewrite-of-target",
                provenance={"source_hash": "a" * 64})
    newer = dict(cb["starvation-sw-batch-queue"].to_data() if "starvation-sw-batch-queue" in cb
                 else next(iter(cb.values())).to_data(), episode_id="target-v2")
    others = [cb[k].to_data() for k in ("masking-med-compensated-shock",
                                         "stale-copy-fin-cash-extract")]
    with Memory.open(tmp_path / "s.db") as mem:
        mem.add_many([tgt, same, newer, *others], namespace="n")
        mem.supersede("masking-sw-autoscaler-leak", "target-v2", namespace="n")
    spec = {"store": "s.db", "namespace": "n", "items": [
        {"target": "masking-sw-autoscaler-leak", "keyed": ["masking-med-compensated-shock"]}]}
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(spec))
    items, held = P._build_items(P.load_private(tmp_path / "p.yaml"))
    assert set(held["private-0000"]) == {"masking-sw-autoscaler-leak", "rewrite-of-target",
                                         "target-v2"}
    assert {p["episode_id"] for p in items[0]["pool"]} == {"masking-med-compensated-shock",
                                                          "stale-copy-fin-cash-extract"}
    with pytest.raises(AnalogistError, match="holdout violated"):
        P.check_holdout(["target-v2"], set(held["private-0000"]), "a snapshot")
    # a keyed id that is derived from the target is refused
    spec["items"][0]["keyed"] = ["target-v2"]
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(AnalogistError, match="derived from the target") as e:
        P._build_items(P.load_private(tmp_path / "p.yaml"))
    assert e.value.field == "items[0].keyed[0]"


@pytest.mark.parametrize(("body", "field", "msg"), [
    ("store: s.db\nitems: []\n", "items", "non-empty"),
    ("store: s.db\nitems: [{target: a, keyed: [a]}]\n", "items[0].keyed[0]", "target itself"),
    ("store: s.db\nitems: [{target: a, keyed: []}]\n", "items[0].keyed", "empty"),
    ("store: s.db\nitems: [{target: a, keyed: [b], no_match: true}]\n", "items[0].keyed",
     "no_match"),
    ("store: s.db\nitems: [{target: a, keyed: [b], colour: red}]\n", "items[0].colour",
     "unknown"),
    ("items: [{target: a, keyed: [b]}]\n", "store", "store"),
    ("store: s.db\nitems: [{target: a, keyed: [b]\n", None, "malformed YAML"),
])
def test_bad_files_name_file_and_field(tmp_path, body, field, msg):
    p = tmp_path / "bad.yaml"
    p.write_text(body)
    with pytest.raises(AnalogistError, match=msg) as e:
        P.load_private(p)
    assert e.value.field == field
    assert "bad.yaml" in str(e.value)


def test_unknown_episode_id_is_named(example_dir):
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["items"][1]["keyed"][1] = "no-such-episode"
    p = example_dir / "unknown.yaml"
    p.write_text(yaml.safe_dump(spec))
    with pytest.raises(AnalogistError, match="unknown episode id 'no-such-episode'") as e:
        P.run_private(p, ["B"], out_dir=example_dir / "never")
    assert e.value.field == "items[1].keyed[1]"
    assert not (example_dir / "never").exists()


def test_casebook_as_private_set(tmp_path):
    p = P.write_casebook_private(tmp_path, max_items=4)
    spec = P.load_private(p)
    assert len(spec["items"]) == 4
    assert any(it["no_match"] for it in spec["items"])
    from analogist.casebook import load_casebook
    cb = {e.id: e for e in load_casebook()}
    for it in spec["items"]:
        t = cb[it["target"]]
        for k in it["keyed"]:
            assert cb[k].mechanism == t.mechanism and not cb[k].is_decoy
        assert it["no_match"] == t.is_decoy
    full = P.load_private(P.write_casebook_private(tmp_path / "full"))
    assert len(full["items"]) >= 60
