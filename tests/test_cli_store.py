"""The store commands of the CLI over a real SQLite file: init, add, find, show, list, delete, log;
bad input exits 2 naming the file and record, and writes nothing of a bad batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analogist.cli import app

SEED = Path(__file__).parent / "data" / "seed_example_signature.json"
runner = CliRunner()


def ledger(eid: str = "ledger") -> dict:
    return {
        "episode_id": eid, "kind": "failure",
        "roles": {"ACC": "bank account", "TOT": "copied ledger total", "CLK": "clerk"},
        "relations": [["derives_from", "TOT", "ACC"], ["trusts_as_authoritative", "CLK", "TOT"],
                      ["skips_check", "CLK", "ACC"]],
        "causal_chain": [],
        "surface": {"domain": "accounting", "entities": ["ledger"]},
    }


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "s.db"


def run(*args: str) -> object:
    return runner.invoke(app, list(args))


def test_round_trip_through_the_commands(store: Path, tmp_path: Path) -> None:
    assert run("init", "--store", str(store)).exit_code == 0
    r = run("add", str(SEED), "--store", str(store))
    assert r.exit_code == 0, r.output
    assert "added 1" in r.output
    many = tmp_path / "many.yaml"
    many.write_text(json.dumps({"episodes": [ledger("l1"), ledger("l2")]}))
    assert run("add", str(many), "--store", str(store)).exit_code == 0
    listed = json.loads(run("list", "--store", str(store), "--json").output)
    assert [x["episode_id"] for x in listed] == ["ep_2026_09_14_0213", "l1", "l2"]
    shown = run("show", "l1", "--store", str(store), "--json")
    assert shown.exit_code == 0 and json.loads(shown.output)["episode_id"] == "l1"
    target = tmp_path / "target.json"
    # the same structure in other words (a stored copy of the query itself is never an answer)
    target.write_text(json.dumps(ledger("probe") | {"surface": {"domain": "bookkeeping",
                                                                "entities": ["journal"]}}))
    found = run("find", str(target), "--store", str(store), "--json", "--k", "2")
    assert found.exit_code == 0, found.output
    data = json.loads(found.output)
    assert data["no_match"] is False
    assert len(data["results"]) == 2
    for key in ("episode_id", "score", "transfer"):
        assert key in data["results"][0]
    scores = [h["score"] for h in data["results"]]
    assert scores == sorted(scores, reverse=True)
    human = run("find", str(target), "--store", str(store))
    assert "ANALOGY" in human.output and "MAPPED" in human.output
    log = json.loads(run("log", "--store", str(store), "--json").output)
    assert len(log) == 2
    assert run("delete", "l2", "--store", str(store)).exit_code == 0
    assert len(json.loads(run("list", "--store", str(store), "--json").output)) == 2


def test_store_from_environment(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANALOGIST_STORE", str(store))
    assert run("add", str(SEED)).exit_code == 0
    assert store.exists()


def test_namespaces_on_the_command_line(store: Path) -> None:
    run("add", str(SEED), "--store", str(store), "--namespace", "a")
    assert json.loads(run("list", "--store", str(store), "--namespace", "b",
                          "--json").output) == []


def test_bad_batch_writes_nothing_and_names_the_record(store: Path, tmp_path: Path) -> None:
    bad = [ledger("ok1"), ledger("ok2"), {**ledger("broken"), "relations": [["derives_from",
                                                                            "NOPE", "ACC"]]}]
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    r = runner.invoke(app, ["add", str(f), "--store", str(store)])
    assert r.exit_code == 2
    assert "bad.json[2]" in r.output and "Traceback" not in r.output
    assert json.loads(run("list", "--store", str(store), "--json").output) == []


@pytest.mark.parametrize(
    ("content", "name", "needle"),
    [("{not json", "t.json", "malformed JSON"),
     ("[1, 2]", "t.json", "t.json[0]"),
     ("roles: [", "t.yaml", "malformed YAML")],
)
def test_bad_files(store: Path, tmp_path: Path, content: str, name: str, needle: str) -> None:
    f = tmp_path / name
    f.write_text(content)
    r = runner.invoke(app, ["add", str(f), "--store", str(store)])
    assert r.exit_code == 2
    assert needle in r.output


def test_missing_episode_and_bad_target(store: Path, tmp_path: Path) -> None:
    assert run("show", "nope", "--store", str(store)).exit_code == 2
    assert run("delete", "7", "--store", str(store)).exit_code == 2
    t = tmp_path / "t.dgr"
    t.write_text("(x)")
    r = run("find", str(t), "--store", str(store))
    assert r.exit_code == 2 and "Signature" in r.output


def test_demo_finds_cross_domain_analogues() -> None:
    r = run("demo", "--json", "--targets", "2", "--k", "2")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert len(data) == 2
    for d in data:
        assert d["best_domain"] != d["target_domain"]
        assert d["same_mechanism"]
        assert d["result"]["results"][0]["episode_id"] == d["best"]
    human = run("demo", "--targets", "1", "--k", "1")
    assert human.exit_code == 0 and "ANALOGY" in human.output


def test_add_refuses_a_wrong_arity(store: Path, tmp_path: Path) -> None:
    rec = {**ledger("arity"), "relations": [["shares", "TOT", "ACC"]]}
    f = tmp_path / "a.json"
    f.write_text(json.dumps(rec))
    r = runner.invoke(app, ["add", str(f), "--store", str(store)])
    assert r.exit_code == 2 and "wrong arity" in r.output
