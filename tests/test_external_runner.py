"""The external-benchmark runner and ``analogist bench external``: both systems on the tiny
fixtures with the real offline encoder and embedder (no mocks), the issue's JSON shape, paired
statistics, determinism, and bad input → exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analogist.bench.external import (
    BENCHMARKS,
    Benchmark,
    BinaryItem,
    ChoiceItem,
    ExternalParams,
    external_command,
    run_benchmark,
    run_external,
)
from analogist.cli import app
from analogist.errors import AnalogistError
from tests.external_fixtures import FIX, FOLDER

TOP_KEYS = {"benchmark", "n", "chance", "analogist", "baseline"}

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


def _check_shape(s: dict[str, Any], retrieval: bool) -> None:
    assert set(s) == TOP_KEYS
    assert isinstance(s["n"], int) and s["n"] > 0 and 0 < s["chance"] < 1
    for sys_ in ("analogist", "baseline"):
        block = s[sys_]
        metrics = {"map", "mrr", "hit@1", "hit@5", "hit@10"} if retrieval else {"accuracy"}
        assert set(block) == metrics | {"conditions"}
        for m in metrics:
            assert 0.0 <= block[m] <= 1.0
        assert sum(c["n"] for c in block["conditions"].values()) in (0, s["n"])
        for c in block["conditions"].values():
            assert set(c) == metrics | {"n"}


@pytest.mark.parametrize("name", sorted(FOLDER))
def test_every_format_runs_end_to_end(name: str, models: dict[str, Any]) -> None:
    # a seeded subsample keeps the number of texts to encode small (rows for ParallelPARC)
    limit = 4 if name.startswith("parallelparc") else 2
    res = run_external(name, FIX / FOLDER[name], params=ExternalParams(limit=limit), **models)
    s = res.summary()
    _check_shape(s, retrieval=name in ("analobench-t2", "historical"))
    assert s["benchmark"] == name and s["n"] == len(res.bench.items)
    det = json.loads(json.dumps(res.details()))
    assert det["paired"]["all"]["n"] == s["n"]
    assert 0.0 <= det["paired"]["all"]["p"] <= 1.0


def test_conditions_are_reported_per_condition(models: dict[str, Any]) -> None:
    s = run_external("rattermann", FIX / "rattermann", **models).summary()
    assert set(s["analogist"]["conditions"]) == {"near", "far"}
    assert s["analogist"]["conditions"]["far"]["n"] == 2 and s["chance"] == 0.5


def test_structure_picks_the_structural_copy(models: dict[str, Any]) -> None:
    q = "The storm knocked down the power line, so the town lost electricity."
    item = ChoiceItem("x", q, ("A student read a book.", q.replace("storm", "gale")), 1)
    res = run_benchmark(Benchmark("t", "choice", (item,), "test"), **models)
    row = res.outcomes[0]
    assert row["analogist"]["pick"] == 1 and not row["analogist"]["tie"]
    assert row["analogist"]["scores"][1] > row["analogist"]["scores"][0]
    assert res.summary()["analogist"]["accuracy"] == 1.0


def test_binary_threshold_and_auc(models: dict[str, Any]) -> None:
    a = "The heater warmed the room, so the ice on the window melted."
    items = (BinaryItem("p", a, a, True, "c"),
             BinaryItem("n", a, "Snow.", False, "c"))
    res = run_benchmark(Benchmark("t", "binary", items, "test"), **models)
    pos, neg = res.outcomes
    assert pos["analogist"]["score"] == pytest.approx(1.0) and pos["analogist"]["pred"]
    assert neg["analogist"]["score"] == 0.0 and not neg["analogist"]["pred"]
    assert res.extras()["auc"]["analogist"] == 1.0
    assert res.summary()["analogist"]["conditions"]["c"] == {"n": 2, "accuracy": 1.0}


def test_refused_text_scores_zero_and_is_counted(models: dict[str, Any]) -> None:
    item = ChoiceItem("x", "12345 678", ("The cat sat on the mat.", "The dog ran."), 0)
    res = run_benchmark(Benchmark("t", "choice", (item,), "test"), **models)
    assert res.outcomes[0]["analogist"]["scores"] == [0.0, 0.0]
    assert res.outcomes[0]["analogist"]["tie"]
    assert any("refused" in n for n in res.notes)


def test_run_is_deterministic(models: dict[str, Any]) -> None:
    p = ExternalParams(limit=2)
    a = run_external("storyanalogy", FIX / "storyanalogy", params=p, **models).details()
    b = run_external("storyanalogy", FIX / "storyanalogy", params=p, **models).details()
    a.pop("timings_s")
    b.pop("timings_s")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_external_command_text_json_and_details(tmp_path: Path, models: dict[str, Any]) -> None:
    out = external_command("arn", FIX / "arn", as_json=True, **models)
    _check_shape(json.loads(out), retrieval=False)
    d = tmp_path / "d.json"
    text = external_command("historical", FIX / "historical", details=d, **models)
    assert "paired McNemar on hit@1" in text and "map" in text
    assert json.loads(d.read_text())["summary"]["benchmark"] == "historical"
    with pytest.raises(AnalogistError, match="does not exist"):
        external_command("arn", FIX / "arn", details=tmp_path / "no" / "d.json", **models)


@pytest.mark.parametrize("kw", [{"seed": 1.5}, {"limit": 0}, {"min_score": float("nan")},
                                {"ks": ()}, {"ks": (0,)}])
def test_params_refuse_bad_values(kw: dict[str, Any]) -> None:
    with pytest.raises(AnalogistError):
        ExternalParams(**kw)


def test_cli_json(models: dict[str, Any]) -> None:
    r = runner.invoke(app, ["bench", "external", "rattermann", str(FIX / "rattermann"),
                            "--json", "--limit", "1", "--seed", "3"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    _check_shape(s, retrieval=False)
    assert s["n"] == 2 and s["benchmark"] == "rattermann"
    assert set(s["baseline"]["conditions"]) == {"near", "far"}


@pytest.mark.parametrize("args,needle", [
    (["nope", str(FIX)], "unknown benchmark"),
    (["arn", str(FIX / "missing.csv")], "missing.csv"),
    (["storyanalogy", str(FIX / "arn" / "arn.csv")], "arn.csv"),
])
def test_cli_bad_input_exits_2(args: list[str], needle: str) -> None:
    r = runner.invoke(app, ["bench", "external", *args, "--json"])
    assert r.exit_code == 2
    err = r.stderr if hasattr(r, "stderr") else r.output
    assert "error:" in err and needle in err
    assert "Traceback" not in err


def test_names_listed() -> None:
    assert BENCHMARKS == ("arn", "analobench-t1", "analobench-t2", "storyanalogy",
                          "parallelparc-mc", "parallelparc-binary", "rattermann", "historical")
