"""PARB runner: a small paired run on oracle representation, results, report and CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from analogist.bench.parb.arms import ARM_NAMES, bm25_scores, problem_of
from analogist.bench.parb.items import generate
from analogist.bench.parb.metrics import nav
from analogist.bench.parb.runner import run_parb
from analogist.cli import app

REQUIRED = ("nav", "nav_ci", "recall_at_5_far", "d_prime", "role_mapping_f1")


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("parb")
    res = run_parb(16, list(ARM_NAMES) + ["A0", "A1"], representation="oracle", split="both",
                   seed=5, out_dir=out, progress=False)
    return res, out


def test_results_have_required_keys_per_split(small_run):
    res, out = small_run
    on_disk = json.loads((out / "results.json").read_text())
    assert on_disk["representation"] == "oracle"
    assert on_disk["manifest"]["n_items"] == 16
    assert set(on_disk["splits"]) == {"dev", "test"}
    for sp in ("dev", "test"):
        d = on_disk["splits"][sp]
        assert set(d["arms"]) == set(ARM_NAMES)
        for m in d["arms"].values():
            for k in REQUIRED:
                assert k in m
            assert len(m["nav_ci"]) == 2
            assert m["nav_ci"][0] <= m["nav"] + 1e-9 <= m["nav_ci"][1] + 2e-9
        assert set(d["hypotheses"]) == {"H1", "H2", "H3", "H4", "H5"}
        for m in d["arms"].values():
            assert {"wall_s_per_item", "wall_s_per_U", "tokens_per_item",
                    "tokens_per_U"} <= set(m["cost"])
        assert d["arms"]["E"]["verification_survival"]["reference"] == "D"
        assert d["arms"]["B"]["verification_survival"] is None
        assert set(d["controls"]) == {"D", "E", "G"}
        for c in d["controls"].values():
            assert {"delta_vs_none", "delta_vs_wrong", "lesion"} <= set(c)
        assert d["hypotheses"]["H4"]["verdict"] == "not shown"
        for v in d["hypotheses"].values():
            assert v["verdict"] in ("kept", "failed", "not shown")
    assert on_disk["skipped"]["A0"].startswith("skipped: no LLM")
    assert on_disk["skipped"]["A1"].startswith("skipped: no LLM")
    assert on_disk["skipped"]["E.critic"].startswith("skipped: no LLM")
    assert on_disk["skipped"]["E.parametric"].startswith("skipped: no LLM")
    assert on_disk["encoder"] is None
    assert (out / "items.jsonl").exists() and (out / "manifest.json").exists()


def test_paired_and_nav_matches_formula(small_run):
    res, out = small_run
    assert res["paired"]
    rows = [json.loads(x) for x in (out / "per_item.jsonl").read_text().splitlines()]
    assert len(rows) == 16
    for row in rows:
        assert set(row["arms"]) == set(ARM_NAMES)          # every arm saw every item
    for sp in ("dev", "test"):
        for arm, m in res["splits"][sp]["arms"].items():
            recs = [r["arms"][arm] for r in rows if r["split"] == sp]
            U = sum(r["U"] for r in recs)
            F = sum(r["F"] for r in recs)
            N = sum(r["N"] for r in recs)
            assert (m["U"], m["F"], m["N"], m["n_items"]) == (U, F, N, len(recs))
            assert m["nav"] == pytest.approx(nav(U, F, N, len(recs)))
            assert m["nav"] == pytest.approx((U - F - 2 * N) / len(recs))


def test_oracle_maps_at_least_as_well_as_e(small_run):
    res, _ = small_run
    for sp in ("dev", "test"):
        arms = res["splits"][sp]["arms"]
        assert arms["G"]["role_mapping_f1"] >= arms["E"]["role_mapping_f1"]


def test_report_written_with_plots(small_run):
    _, out = small_run
    text = (out / "report.md").read_text()
    assert "## Split: dev" in text and "## Split: test" in text
    assert "Hypotheses" in text and "skipped: no LLM configured" in text
    assert "Verification survival and cost" in text and "Attribution controls" in text
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "plots skipped" in text
    else:
        for sp in ("dev", "test"):
            for stem in ("nav_by_arm", "recall_at_k", "dprime_by_decoy"):
                assert (out / f"{stem}_{sp}.png").stat().st_size > 0


def test_cli_rejects_unknown_representation(tmp_path):
    out = tmp_path / "bad"
    r = CliRunner().invoke(app, ["bench", "parb", "--items", "8", "--representation", "gold",
                                 "--out", str(out)])
    assert r.exit_code == 2
    assert "oracle" in (r.output + (r.stderr if r.stderr_bytes is not None else ""))
    assert not out.exists()


def test_problem_orientation_and_bm25():
    items = generate(16, 2, "dev").items
    for it in items:
        pb = problem_of(it)
        ids = [e for e, _ in pb.pool]
        assert set(pb.gold) <= set(ids)
        assert pb.no_match == (not pb.gold)
        if pb.role_mapping is not None:
            gold_sig = dict(pb.pool)[pb.gold[0]]
            assert set(pb.role_mapping) == set(gold_sig["roles"])
            assert set(pb.role_mapping.values()) == set(pb.query["roles"])
    s = bm25_scores(["cache", "stale"], [["cache", "stale", "x"], ["y", "z"], ["cache"]])
    assert s[0] > s[2] > s[1] == 0.0
