"""The external-benchmark runner, ``bench external`` and the ``all`` report: every system on
the tiny fixtures with the real offline encoder and embedder (no mocks), the summary shape,
paired statistics against each baseline, determinism, the one-report folder mode, and bad input
→ exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analogist.bench.external import (
    BASELINES,
    SYSTEMS,
    Benchmark,
    BinaryItem,
    ChoiceItem,
    ExternalParams,
    Systems,
    external_command,
    load_set,
    run_benchmark,
)
from analogist.bench.external.report import run_all
from analogist.cli import app
from analogist.errors import AnalogistError
from tests.external_fixtures import CASES, FIX

try:
    runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
except TypeError:
    runner = CliRunner()


@pytest.fixture(scope="module")
def models() -> dict[str, Any]:
    from analogist.bench.external.runner import CachingEncoder
    from analogist.encode.deterministic import DeterministicEncoder
    from analogist.index.embed import default_embedder

    emb = default_embedder()
    return {"embedder": emb, "encoder": CachingEncoder(DeterministicEncoder(embedder=emb))}


@pytest.fixture(scope="module")
def systems(models: dict[str, Any]) -> Systems:
    return Systems.build(**models)


def _check_shape(s: dict[str, Any]) -> None:
    assert set(s) == {"benchmark", "variant", "n", "chance", "development", "systems"}
    assert list(s["systems"]) == list(SYSTEMS)
    retrieval = "map" in s["systems"]["analogist"]
    metrics = ({"map", "mrr", "recall@10", "hit@1", "hit@5", "hit@10"} if retrieval
               else {"accuracy"})
    for block in s["systems"].values():
        assert set(block) == metrics | {"conditions"}
        assert all(0.0 <= block[m] <= 1.0 for m in metrics)
        assert sum(c["n"] for c in block["conditions"].values()) in (0, s["n"])
        for c in block["conditions"].values():
            assert set(c) == metrics | {"n", "chance"}


#: one variant per task kind and per file layout family; every variant's loading is pinned
#: (without models) in test_external_loaders.py. One item each keeps the encoding cost small.
SCORED = [("arn", None), ("rattermann", None), ("parallelparc", "binary"),
          ("analobench", "t2-base"), ("historical", "popular")]
assert set(SCORED) <= set(CASES)


@pytest.mark.parametrize("name,variant", SCORED)
def test_every_scorable_variant_runs(name: str, variant: str | None,
                                     systems: Systems) -> None:
    b = load_set(name, FIX / name, variant=variant, limit=1)
    res = run_benchmark(b, systems=systems)
    s = res.summary()
    _check_shape(s)
    assert s["n"] == len(b.items) and s["variant"] == variant
    assert s["development"] == (name == "storyanalogy" or (variant or "").startswith("silver"))
    pr = json.loads(json.dumps(res.paired()))
    for base in BASELINES:
        assert pr[base]["all"]["n"] == s["n"] and 0.0 <= pr[base]["all"]["p"] <= 1.0
        lo, hi = pr[base]["all"]["diff_ci95"]
        assert lo <= pr[base]["all"]["diff"] + 1e-9 and pr[base]["all"]["diff"] <= hi + 1e-9


def test_counted_only_files_are_not_scored(systems: Systems) -> None:
    b = load_set("historical", FIX / "historical", variant="general")
    with pytest.raises(AnalogistError, match="counted, not scored"):
        run_benchmark(b, systems=systems)


def test_structure_picks_the_structural_copy(systems: Systems) -> None:
    q = "The storm knocked down the power line, so the town lost electricity."
    item = ChoiceItem("x", q, ("A student read a book.", q.replace("storm", "gale")), 1)
    res = run_benchmark(Benchmark("t", "choice", (item,), "test"), systems=systems)
    row = res.outcomes[0]
    assert row["analogist"]["pick"] == 1 and not row["analogist"]["tie"]
    assert row["bm25"]["scores"][1] > row["bm25"]["scores"][0]
    assert res.summary()["systems"]["analogist"]["accuracy"] == 1.0


def test_choice_items_without_mapped_structure_are_counted(systems: Systems) -> None:
    q = "The storm knocked down the power line, so the town lost electricity."
    mapped = ChoiceItem("m", q, ("A student read a book.", q.replace("storm", "gale")), 1)
    blank = ChoiceItem("b", "Snow.", ("Rain.", "Fog."), 0)
    res = run_benchmark(Benchmark("t", "choice", (mapped, blank), "test"), systems=systems)
    assert [max(r["analogist"]["scores"]) > 0 for r in res.outcomes] == [True, False]
    assert res.extras()["no_mapped_structure"] == 1


def test_binary_threshold_and_auc(systems: Systems) -> None:
    a = "The heater warmed the room, so the ice on the window melted."
    items = (BinaryItem("p", a, a, True, "c"), BinaryItem("n", a, "Snow.", False, "c"))
    res = run_benchmark(Benchmark("t", "binary", items, "test"), systems=systems)
    pos, neg = res.outcomes
    assert pos["analogist"]["score"] == pytest.approx(1.0) and pos["analogist"]["pred"]
    assert neg["analogist"]["score"] == 0.0 and not neg["analogist"]["pred"]
    assert pos["bm25"]["score"] == pytest.approx(1.0) and neg["bm25"]["score"] == 0.0
    ex = res.extras()
    assert ex["auc"]["analogist"] == 1.0 and set(ex["thresholds"]) == set(SYSTEMS)
    cell = res.summary()["systems"]["analogist"]["conditions"]["c"]
    assert cell == {"n": 2, "chance": 0.5, "accuracy": 1.0}


def test_run_is_deterministic(systems: Systems) -> None:
    b = load_set("rattermann", FIX / "rattermann", limit=1)
    a = run_benchmark(b, systems=systems).details()
    c = run_benchmark(b, systems=systems).details()
    for d in (a, c):
        d.pop("timings_s")
        d.pop("notes")
    assert json.dumps(a, sort_keys=True) == json.dumps(c, sort_keys=True)


def test_external_command_check_text_json_and_details(tmp_path: Path,
                                                      models: dict[str, Any]) -> None:
    check = external_command("arn", FIX / "arn", check=True)
    assert check.startswith("arn: 4 items; skipped: 1 correct_answer not 1 or 2")
    out = external_command("arn", FIX / "arn", as_json=True, limit=1, **models)
    _check_shape(json.loads(out))
    d = tmp_path / "d.json"
    text = external_command("historical", FIX / "historical", variant="popular", details=d,
                            limit=1, **models)
    assert "paired McNemar on hit@1 (analogist vs bm25)" in text
    assert json.loads(d.read_text())["summary"]["variant"] == "popular"
    with pytest.raises(AnalogistError, match="does not exist"):
        external_command("arn", FIX / "arn", details=tmp_path / "no" / "d.json", **models)


@pytest.mark.parametrize("kw", [{"seed": 1.5}, {"limit": 0}, {"min_score": float("nan")},
                                {"bm25_threshold": float("inf")}, {"ks": ()}, {"ks": (0,)}])
def test_params_refuse_bad_values(kw: dict[str, Any]) -> None:
    with pytest.raises(AnalogistError):
        ExternalParams(**kw)


def _small_root(tmp_path: Path) -> Path:
    root = tmp_path / "sets"
    for name in ("arn", "storyanalogy", "historical"):
        shutil.copytree(FIX / name, root / name)
    (root / "rattermann").mkdir()                      # a set whose file is broken
    (root / "rattermann" / "story_analogies.csv").write_text("a,b\n1,2\n")
    return root


def test_all_writes_one_report(tmp_path: Path, models: dict[str, Any]) -> None:
    root = _small_root(tmp_path)
    rep = run_all(root, tmp_path / "out", limit=1, show_progress=False, **models)
    labels = [(r["summary"]["benchmark"], r["summary"]["variant"]) for r in rep["results"]]
    assert labels == [("arn", None), ("storyanalogy", None), ("historical", "popular")]
    assert len(rep["errors"]) == 1 and "rattermann" in rep["errors"][0]
    md = (tmp_path / "out" / "report.md").read_text()
    assert "Development data" in md and "storyanalogy" in md.split("Every other")[0]
    assert "| all | 1 | 25.0 |" in md and "humans 85.7%" in md and "ChatGPT 35.8%" in md
    assert "not reported" in md and "Source of the published figures: Jiayang et al." in md
    assert "vs embedder" in md and "vs bm25" in md
    assert (tmp_path / "out" / "report.png").stat().st_size > 1000
    assert json.loads((tmp_path / "out" / "report.json").read_text())["results"]


def test_cli_all_check_counts_every_fixture(tmp_path: Path) -> None:
    r = runner.invoke(app, ["bench", "external", "all", str(FIX), "--check", "--out",
                            str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    assert "15 files, 0 scored, 0 not loaded" in r.stdout
    # each file's count line, as the one-set --check prints it, before the summary line
    lines = r.stdout.splitlines()
    assert len(lines) == 16 and lines[-1].startswith("wrote ")
    assert any(ln.startswith("historical/pool: 4 events (counted, not scored); skipped: "
                             "1 pool event with an empty history_event_text [") for ln in lines)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| historical/pool | 4 events | 1 pool event with an empty history_event_text |" in md


def test_cli_variant_and_check() -> None:
    r = runner.invoke(app, ["bench", "external", "parallelparc", str(FIX / "parallelparc"),
                            "--variant", "binary", "--check", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["counts"] == {"items": 4, "analogies": 2}


@pytest.mark.parametrize("args,needle", [
    (["nope", str(FIX)], "unknown benchmark"),
    (["arn", str(FIX / "missing.csv")], "missing.csv"),
    (["arn", str(FIX / "rattermann" / "story_analogies.csv")], "query_narrative"),
    (["analobench", str(FIX / "analobench")], "give --variant, one of t1-full-base"),
    (["all", str(FIX / "arn")], "no benchmark subfolder"),
])
def test_cli_bad_input_exits_2(args: list[str], needle: str) -> None:
    r = runner.invoke(app, ["bench", "external", *args, "--check"])
    assert r.exit_code == 2
    err = r.stderr if hasattr(r, "stderr") else r.output
    assert "error:" in err and needle in err
    assert "Traceback" not in err and err.count("\n") == 1
