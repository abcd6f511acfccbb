"""`analogist foresight brief|events|show|add|eval` on the bundled corpus and on event folders,
with a real SQLite store, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from analogist.cli import app
from tests.foresight_fixtures import crisis, unrelated


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def _write(folder: Path, *events) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for e in events:
        (folder / f"{e.event_id}.yaml").write_text(
            yaml.safe_dump(e.model_dump(mode="json", exclude_none=True), sort_keys=False))
    return folder


@pytest.fixture
def small_corpus(tmp_path):
    return _write(tmp_path / "corpus",
                  crisis("target-crisis", "2000", cutoff="2000-06-15", name="Target Crisis"),
                  crisis("panic-east", "1850", name="Panic in the East"),
                  crisis("panic-west", "1950", name="Panic in the West", drop=("RESCUE",)),
                  unrelated("plague-one", name="Plague One"))


def test_brief_on_a_folder_corpus_writes_files(small_corpus, tmp_path, no_llm):
    out = tmp_path / "out"
    r = run("foresight", "brief", "Target Crisis", "--corpus", str(small_corpus),
            "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "Predicted hidden factors" in r.output
    assert "bank_run" in r.output
    assert "skipped: no LLM configured" in r.output  # the LLM step says it was skipped
    for suffix in (".md", ".json", ".png"):
        assert (out / f"brief-target-crisis{suffix}").is_file()


def test_brief_json_is_deterministic(small_corpus, no_llm):
    a = run("foresight", "brief", "target-crisis", "--corpus", str(small_corpus), "--json",
            "--no-llm")
    b = run("foresight", "brief", "target-crisis", "--corpus", str(small_corpus), "--json",
            "--no-llm")
    assert a.exit_code == 0, a.output
    assert a.output == b.output
    data = json.loads(a.output)
    assert data["target"]["cutoff"] == "2000-06-15"
    assert "target-crisis" not in {x["event_id"] for x in data["analogies"]}


def test_brief_with_a_target_file_and_explicit_cutoff(small_corpus, tmp_path, no_llm):
    t = crisis("new-situation", "2020", name="New Situation")
    f = tmp_path / "target.yaml"
    f.write_text(yaml.safe_dump(t.model_dump(mode="json", exclude_none=True)))
    r = run("foresight", "brief", str(f), "--corpus", str(small_corpus), "--cutoff",
            "2020-06-15", "--json", "--no-llm", "--q", "1.0")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert {o["id"] for o in data["target"]["observed"]} == {"BOOM", "SHADOW", "BET"}
    assert data["parameters"]["q"] == 1.0


def test_memory_events_join_the_pool(small_corpus, tmp_path, no_llm):
    store = tmp_path / "store.db"
    extra = _write(tmp_path / "mine", crisis("my-panic", "1970", name="My Own Panic"))
    r = run("foresight", "add", str(extra / "my-panic.yaml"), "--store", str(store))
    assert r.exit_code == 0, r.output
    r = run("foresight", "brief", "target-crisis", "--corpus", str(small_corpus), "--store",
            str(store), "--json", "--no-llm")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    labels = {a["event_id"]: a["label"] for a in data["analogies"]}
    assert labels.get("my-panic") == "memory"


def test_events_and_show_on_the_bundled_corpus(no_llm):
    r = run("foresight", "events", "--domain", "finance")
    assert r.exit_code == 0, r.output
    assert "panic-of-1907" in r.output
    r = run("foresight", "show", "Knickerbocker Crisis")
    assert r.exit_code == 0, r.output
    assert "TRUST_RUN" in r.output and "cutoff 1907-10-18" in r.output
    r = run("foresight", "show", "panic-of-1907", "--json")
    assert json.loads(r.output)["event_id"] == "panic-of-1907"


def test_eval_on_a_folder(small_corpus, tmp_path, no_llm):
    out = tmp_path / "ev"
    r = run("foresight", "eval", "--corpus", str(small_corpus), "--out", str(out),
            "--arms", "cana,single", "--no-progress")
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    assert res["summary"]["all"]["n_targets"] == 1
    assert res["rows"][0]["target"] == "target-crisis"


@pytest.mark.parametrize(("args", "needle"), [
    (["foresight", "brief", "no-such-event"], "neither an event file"),
    (["foresight", "brief", "missing.yaml"], "file not found"),
    (["foresight", "brief", "panic-of-1907", "--pi", "1.5"], "pi must be"),
    (["foresight", "brief", "panic-of-1907", "--q", "0.1"], "q must exceed p"),
    (["foresight", "brief", "panic-of-1907", "--cutoff", "next week"], "expected a date"),
    (["foresight", "brief", "panic-of-1907", "--cutoff", "1800"], "no factor"),
    (["foresight", "brief", "panic-of-1907", "--store", "nope.db"], "store file not found"),
    (["foresight", "events", "--domain", "astrology"], "--domain must be"),
    (["foresight", "show", "nothing-like-this"], "neither an event file"),
    (["foresight", "eval", "--pool", "future"], "pool must be"),
    (["foresight", "eval", "--arms", "cana,oracle"], "unknown arm"),
    (["foresight", "eval", "--targets", "no-such-target"], "not evaluation targets"),
])
def test_bad_input_exits_2_with_a_message(args, needle, no_llm, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert needle in r.output


def test_bad_target_file_names_the_file(tmp_path, no_llm):
    f = tmp_path / "broken.yaml"
    f.write_text("event_id: x\nfactors: [\n")
    r = run("foresight", "brief", str(f))
    assert r.exit_code == 2
    assert "broken.yaml" in r.output and "malformed YAML" in r.output
    g = tmp_path / "wrong.yaml"
    d = crisis("wrong-one", name="Wrong One").model_dump(mode="json", exclude_none=True)
    d["factors"][0]["mechanism"] = "vibes"
    g.write_text(yaml.safe_dump(d))
    r = run("foresight", "brief", str(g))
    assert r.exit_code == 2
    assert "wrong.yaml" in r.output and "factors[0].mechanism" in r.output


def test_add_is_all_or_nothing(tmp_path, no_llm):
    good = _write(tmp_path / "ok", crisis("good-one", name="Good One")) / "good-one.yaml"
    bad = tmp_path / "bad.yaml"
    bad.write_text("event_id: [\n")
    store = tmp_path / "s.db"
    r = run("foresight", "add", str(good), str(bad), "--store", str(store))
    assert r.exit_code == 2
    r = run("list", "--store", str(store))
    assert "good-one" not in r.output


def test_calibrate_command(small_corpus, tmp_path, no_llm):
    out = tmp_path / "cal.json"
    r = run("foresight", "calibrate", "--corpus", str(small_corpus), "--split", "all",
            "--out", str(out), "--no-progress")
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert set(data) == {"cana", "surface"}
    r = run("foresight", "brief", "target-crisis", "--corpus", str(small_corpus),
            "--calibration", str(out), "--json", "--no-llm")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["parameters"]["calibration"] is not None
    r = run("foresight", "calibrate", "--out", str(out), "--split", "holdout")
    assert r.exit_code == 2 and "--split must be" in r.output
    r = run("foresight", "brief", "target-crisis", "--corpus", str(small_corpus),
            "--calibration", str(out), "--q", "0.8")
    assert r.exit_code == 2 and "not both" in r.output
