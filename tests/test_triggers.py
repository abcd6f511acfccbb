"""Trigger policy: tiers fire exactly on their signals; firings, outcomes, fitting, ledger."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from analogist.cli import app
from analogist.errors import AnalogistError
from analogist.memory import open_memory
from analogist.memory.sqlite import Memory, NotFoundError, StoreError
from analogist.triggers import (
    STRONG_TRIGGERS,
    TriggerParams,
    decide,
    decide_and_record,
    fit_triggers,
    ledger_summary,
    load_action_log,
    parse_action_log,
    record_firing,
    wilson_interval,
)

OK = {"kind": "action"}


def err(c: str = "timeout") -> dict[str, Any]:
    return {"kind": "error", "error_class": c}


def rep(c: str = "timeout", failed: bool = True) -> dict[str, Any]:
    return {"kind": "repair", "error_class": c, "failed": failed}


CASES: list[tuple[str, dict[str, Any], int | None, set[str]]] = [
    ("empty", {"actions": []}, None, set()),
    ("quiet", {"actions": [OK, OK, OK]}, None, set()),
    ("error", {"actions": [OK, err()]}, 0, {"error_logged"}),
    ("error earlier only", {"actions": [err(), OK]}, None, set()),
    ("one failed repair", {"actions": [err(), rep(), OK]}, None, set()),
    ("two failed repairs of one class", {"actions": [rep(), rep(), OK]}, 1,
     {"repeated_failed_repair"}),
    ("two failed repairs of two classes", {"actions": [rep("a"), rep("b"), OK]}, None, set()),
    ("two repairs, one succeeded", {"actions": [rep(), rep(failed=False), OK]}, None, set()),
    ("three failed repairs", {"actions": [rep(), rep(), rep(), OK]}, 2,
     {"repeated_failed_repair", "many_failed_repairs"}),
    ("stall of 5 steps", {"actions": [{"progress": 1.0}, *[{"progress": 0.5}] * 4, OK]}, 1,
     {"no_progress"}),
    ("stall of 4 steps", {"actions": [{"progress": 1.0}, *[{"progress": 0.5}] * 3, OK]}, None,
     set()),
    ("progress improving", {"actions": [{"progress": float(i)} for i in range(8)]}, None,
     set()),
    ("no progress measure at all", {"actions": [OK] * 9}, None, set()),
    ("tier-0 hit", {"actions": [OK], "tier0_score": 0.5}, 1, {"tier0_hit"}),
    ("tier-0 near miss", {"actions": [OK], "tier0_score": 0.49}, None, set()),
    ("irreversible ahead", {"actions": [OK], "ahead": {"irreversible": True}}, 1,
     {"irreversible_ahead"}),
    ("external ahead", {"actions": [OK], "ahead": {"external": True}}, 1,
     {"irreversible_ahead"}),
    ("harmless ahead", {"actions": [OK], "ahead": {"kind": "action"}}, None, set()),
    ("high stakes", {"actions": [OK], "high_stakes": True}, 2, {"high_stakes"}),
    ("tier-1 mapping low", {"actions": [OK], "tier1_score": 0.1}, 2, {"tier1_mapping_low"}),
    ("tier-1 mapping fine", {"actions": [OK], "tier1_score": 0.15}, None, set()),
    ("weak only", {"actions": [OK], "self_confidence": 0.1, "seems_novel": True}, None, set()),
]


@pytest.mark.parametrize("name,data,tier,fired", CASES, ids=[c[0] for c in CASES])
def test_each_tier_fires_exactly_on_its_signals(name: str, data: dict[str, Any],
                                                tier: int | None, fired: set[str]) -> None:
    d = decide(parse_action_log(data))
    assert (d.tier, set(d.fired)) == (tier, fired)
    assert not d.budget_blocked


def test_weak_triggers_are_recorded_but_raise_no_tier() -> None:
    d = decide(parse_action_log({"actions": [err()], "self_confidence": 0.2,
                                 "seems_novel": True}))
    assert d.tier == 0 and set(d.weak) == {"low_self_confidence", "seems_novel"}


def test_tier2_token_budget() -> None:
    p = TriggerParams(tier2_cost=25_000, tier2_daily_budget=100_000)
    log = parse_action_log({"actions": [OK], "high_stakes": True})
    assert decide(log, p, tier2_tokens_spent=75_000).tier == 2
    d = decide(log, p, tier2_tokens_spent=75_001)
    assert d.tier == 1 and d.budget_blocked and d.tokens_budgeted == p.tier1_cost


ACTION = st.one_of(
    st.just(OK),
    st.builds(lambda c: err(c), st.sampled_from("ab")),
    st.builds(lambda c, f: rep(c, f), st.sampled_from("ab"), st.booleans()),
    st.builds(lambda x: {"progress": x}, st.floats(0, 10)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(ACTION, max_size=12), st.booleans(), st.booleans(),
       st.one_of(st.none(), st.floats(0, 1)), st.integers(0, 300_000))
def test_tier_is_the_highest_fired_within_budget(actions: list[dict[str, Any]], stakes: bool,
                                                 irrev: bool, t0: float | None,
                                                 spent: int) -> None:
    p = TriggerParams()
    log = parse_action_log({"actions": actions, "high_stakes": stakes, "tier0_score": t0,
                            "ahead": {"irreversible": irrev}})
    d = decide(log, p, tier2_tokens_spent=spent)
    top = max((STRONG_TRIGGERS[t] for t in d.fired), default=None)
    if d.budget_blocked:
        assert top == 2 and d.tier == 1 and spent + p.tier2_cost > p.tier2_daily_budget
    else:
        assert d.tier == top
    # the failed-repair triggers count failed repairs of one class
    most = max([sum(1 for a in actions if a.get("kind") == "repair" and a["failed"]
                    and a["error_class"] == c) for c in "ab"], default=0)
    assert ("repeated_failed_repair" in d.fired) == (most >= 2)
    assert ("many_failed_repairs" in d.fired) == (most >= 3)
    assert ("error_logged" in d.fired) == bool(actions and actions[-1].get("kind") == "error")


# -- recording, outcomes, fitting, ledger -------------------------------------------------------
@pytest.fixture
def mem(store: str) -> Any:
    """A fresh store of each backend (conftest's parametrised ``store``)."""
    with open_memory(store) as m:
        yield m


def test_firings_are_recorded_with_their_triggers_and_fitted(mem: Memory) -> None:
    stall = {"actions": [rep(), rep(), OK]}
    deep = {"actions": [OK], "high_stakes": True, "self_confidence": 0.1}
    ids = []
    for data in (stall, stall, stall, deep, deep):
        d, lid = decide_and_record(mem, parse_action_log(data), target={"t": 1})
        ids.append(lid)
    assert None not in ids
    # a Retriever-written row tagged afterwards
    lid = mem.log_analogy(target={"q": 1}, candidates=[])
    assert record_firing(mem, decide(parse_action_log(stall)), log_id=lid) == lid
    assert decide_and_record(mem, parse_action_log({"actions": [OK]}))[1] is None
    for i, o in zip(ids, ["useful", "useful", "not_useful", "useful", "negative"], strict=True):
        mem.set_outcome(i, o)
    # the ledger says the deep firing that was called useful did worse than no analogy
    mem.record_transfer(item="task-4", action="apply fix", analogy_result=0.2,
                        counterfactual_result=0.5, log_id=ids[3])
    rows = mem.firings()
    assert len(rows) == 6 and rows[0]["trigger"]["fired"] == ["repeated_failed_repair"]
    assert rows[3]["tier"] == 2 and rows[3]["ledger"] == ["worse"]
    fit = fit_triggers(mem)
    rfr, hs = fit["triggers"]["repeated_failed_repair"], fit["triggers"]["high_stakes"]
    assert (rfr["firings"], rfr["with_outcome"], rfr["useful"], rfr["negative"]) == (4, 3, 2, 0)
    assert rfr["useful_rate"] == pytest.approx(2 / 3) and rfr["negative_rate"] == 0
    assert (hs["with_outcome"], hs["useful"], hs["negative"]) == (2, 0, 2)
    assert fit["triggers"]["low_self_confidence"]["weak"] is True
    lo, hi = hs["negative_ci95"]
    assert lo < 1.0 == hi


def test_budget_is_read_from_the_store(mem: Memory) -> None:
    p = TriggerParams(tier2_cost=25_000, tier2_daily_budget=50_000)
    log = parse_action_log({"actions": [OK], "high_stakes": True})
    now = datetime.now(UTC)
    tiers = [decide_and_record(mem, log, params=p, now=now)[0].tier for _ in range(3)]
    assert tiers == [2, 2, 1]
    assert mem.tokens_spent(tier=2, since="2000-01-01") == 50_000


def test_ledger_verdicts_and_summary(mem: Memory) -> None:
    assert mem.record_transfer(item="i1", action="a", analogy_result=3,
                               counterfactual_result=2)["verdict"] == "better"
    assert mem.record_transfer(item="i2", action="a", analogy_result=3, counterfactual_result=2,
                               higher_is_better=False)["verdict"] == "worse"
    assert mem.record_transfer(item="i3", action="a", analogy_result=1,
                               counterfactual_result=1)["verdict"] == "same"
    assert mem.record_transfer(item="i4", action="a", analogy_result=1)["verdict"] == "unknown"
    s = ledger_summary(mem)
    assert (s["entries"], s["with_counterfactual"], s["worse"]) == (4, 3, 1)
    assert s["negative_transfer_rate"] == pytest.approx(1 / 3)
    assert ledger_summary(mem, "empty")["negative_transfer_rate"] is None


def test_wilson_interval() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)


# -- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize("data,field", [
    ({"actions": [{"kind": "repair", "error_class": "x"}]}, "actions[0].failed"),
    ({"actions": [{"kind": "error"}]}, "actions[0].error_class"),
    ({"actions": [{"kind": "explode"}]}, "actions[0].kind"),
    ({"actions": [{"step": 3}, {"step": 1}]}, "actions[1].step"),
    ({"actions": [{"progress": "lots"}]}, "actions[0].progress"),
    ({"actions": [{"irreversible": "yes"}]}, "actions[0].irreversible"),
    ({"actions": [{"colour": 1}]}, "actions[0]"),
    ({"actions": [], "tier0_score": 1.5}, "tier0_score"),
    ({"actions": "none"}, "actions"),
    ({"actions": [], "ahead": {"kind": "nope"}}, "ahead.kind"),
])
def test_bad_action_logs_name_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(AnalogistError) as ei:
        parse_action_log(data, source="log.json")
    assert ei.value.field == field and ei.value.source == "log.json"


def test_bad_inputs_elsewhere(mem: Memory, tmp_path: Path) -> None:
    with pytest.raises(AnalogistError):
        parse_action_log("actions")
    with pytest.raises(AnalogistError, match="unexpected"):
        parse_action_log({"actions": [], "mood": "bad"})
    with pytest.raises(AnalogistError) as ei:
        TriggerParams(tier1_failed_repairs=3, tier2_failed_repairs=3)
    assert ei.value.field == "tier2_failed_repairs"
    with pytest.raises(AnalogistError):
        decide(parse_action_log([]), tier2_tokens_spent=-1)
    with pytest.raises(AnalogistError):
        decide({"actions": []})  # type: ignore[arg-type]
    bad = tmp_path / "bad.json"
    bad.write_text('{"actions": [{"kind": "error"}]}')
    with pytest.raises(AnalogistError) as ei:
        load_action_log(bad)
    assert ei.value.source == str(bad)
    with pytest.raises(StoreError):
        mem.set_outcome(1, "great")
    with pytest.raises(NotFoundError):
        mem.set_outcome(999, "useful")
    with pytest.raises(NotFoundError):
        mem.tag_analogy(999, trigger=["x"])
    with pytest.raises(StoreError):
        mem.log_analogy(target={}, candidates=[], tier=3)
    with pytest.raises(NotFoundError):
        mem.record_transfer(item="i", action="a", analogy_result=1, log_id=12345)
    with pytest.raises(StoreError) as ei:
        mem.record_transfer(item="i", action="a", analogy_result=float("nan"))
    assert ei.value.field == "analogy_result"
    assert mem.ledger() == []


# -- CLI ----------------------------------------------------------------------------------------
def test_cli_triggers_check_and_fit(tmp_path: Path) -> None:
    store = tmp_path / "c.db"
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"actions": [rep(), rep(), err()]}))
    runner = CliRunner()
    res = runner.invoke(app, ["triggers", "check", str(log), "--store", str(store), "--record",
                              "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["tier"] == 1 and out["log_id"] is not None
    assert set(out["fired"]) == {"error_logged", "repeated_failed_repair"}
    res = runner.invoke(app, ["triggers", "fit", "--store", str(store), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["firings"] == 1
    res = runner.invoke(app, ["ledger", "--store", str(store), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["entries"] == 0
    log.write_text('{"actions": [{"kind": "error"}]}')
    res = runner.invoke(app, ["triggers", "check", str(log)])
    assert res.exit_code == 2 and "error_class" in res.output
