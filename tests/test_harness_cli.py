"""``analogist eval build|check|run|compare`` end to end on a real store, and their bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analogist.cli import app
from analogist.memory.sqlite import Memory
from tests.test_harness_fixtures import NS, PARAPHRASE, SMALL, build_store

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli")
    store = build_store(d / "s.db", pick=SMALL)
    para = d / "para.json"
    para.write_text(json.dumps([PARAPHRASE]), encoding="utf-8")
    gold = d / "gold.json"
    r = runner.invoke(app, ["eval", "build", "--store", str(store), "--namespace", NS,
                            "--out", str(gold), "--paraphrases", str(para)])
    assert r.exit_code == 0, r.output
    assert "paraphrase 1" in r.output
    return {"dir": d, "store": store, "gold": gold}


def test_check_passes_then_fails_after_the_store_changes(files) -> None:
    r = runner.invoke(app, ["eval", "check", str(files["gold"]), "--store", str(files["store"])])
    assert r.exit_code == 0 and "still winnable" in r.output
    copy = files["dir"] / "changed.db"
    shutil.copy(files["store"], copy)
    gold = json.loads(files["gold"].read_text(encoding="utf-8"))
    target = next(q for q in gold["queries"] if q["category"] == "paraphrase")["expected"][0]
    with Memory.open(copy) as m:
        assert m.delete(target, NS)
    r = runner.invoke(app, ["eval", "check", str(files["gold"]), "--store", str(copy)])
    assert r.exit_code == 1
    assert "paraphrase" in r.output and target in r.output


def test_run_and_compare(files) -> None:
    out = files["dir"] / "run_surface.json"
    r = runner.invoke(app, ["eval", "run", str(files["gold"]), "--store", str(files["store"]),
                            "--runs", "2", "--retriever", "surface", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert r.output.count("hit@5") == 2
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["retriever"] == "surface" and len(res["runs"]) == 2
    r = runner.invoke(app, ["eval", "compare", str(out), str(out), "--json"])
    assert r.exit_code == 0
    cmp = json.loads(r.output)
    assert cmp["net"] == 0 and cmp["verdict"].startswith("no measurable difference")
    r = runner.invoke(app, ["eval", "compare", str(out), str(out)])
    assert r.exit_code == 0 and "verdict: no measurable difference" in r.output


@pytest.mark.parametrize("args,needle", [
    (["eval", "build", "--store", "{dir}/none.db", "--out", "{dir}/g.json"], "not found"),
    (["eval", "build", "--out", "{dir}/g.json"], "--store"),
    (["eval", "build", "--store", "{store}", "--namespace", "nothing", "--out", "{dir}/g.json"],
     "no episodes"),
    (["eval", "build", "--store", "{store}", "--namespace", NS, "--out", "{dir}/g.json",
      "--paraphrases", "{dir}/bad_para.json"], "bad_para.json"),
    (["eval", "build", "--store", "{store}", "--namespace", NS, "--out", "{dir}/g.json",
      "--paraphrases", "{gold}"], "list of {target, text}"),
    (["eval", "check", "{dir}/missing.json", "--store", "{store}"], "not found"),
    (["eval", "run", "{gold}", "--store", "{store}", "--retriever", "magic", "--out",
      "{dir}/r.json"], "retriever"),
    (["eval", "run", "{dir}/bad.json", "--store", "{store}", "--out", "{dir}/r.json"],
     "not JSON"),
    (["eval", "compare", "{gold}"], "two result files"),
    (["eval", "compare", "{gold}", "{gold}"], "format"),
    (["eval", "compare", "--baseline", "main"], "go together"),
    (["eval", "compare", "--baseline", "a", "--candidate", "b"], "--gold"),
])
def test_bad_input_exits_2_with_a_message(files, args: list[str], needle: str) -> None:
    d = files["dir"]
    (d / "bad.json").write_text("{oops", encoding="utf-8")
    (d / "bad_para.json").write_text(json.dumps([{"target": "deadlock-sw-lock-ordering",
                                                   "text": "threads and locks"}]),
                                     encoding="utf-8")
    argv = [a.format(dir=d, store=files["store"], gold=files["gold"]) for a in args]
    r = runner.invoke(app, argv)
    assert r.exit_code == 2, r.output
    assert needle in r.output
