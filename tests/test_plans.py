"""Plan reuse: instantiation with marked gaps, the two-thirds fallback, macros."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from analogist.casebook import casebook_vocabulary, load_casebook
from analogist.cli import app
from analogist.errors import AnalogistError
from analogist.memory import open_memory
from analogist.memory.sqlite import Memory, StoreError
from analogist.plans import (
    PlanParams,
    instantiate,
    offer,
    record_scratch_run,
    retrieve_plans,
    review_plans,
    store_plan,
    validate_plan,
)

warnings.simplefilter("ignore")

CB = {e.id: e for e in load_casebook()}
VOCAB = casebook_vocabulary()
SRC = CB["stale-copy-sw-deploy-summary"].signature        # roles ONCALL, REGISTRY, SUMMARY
NEAR = CB["stale-copy-med-discharge-list"].signature      # same mechanism, no caches(...)
FAR = CB["deadlock-sw-lock-ordering"].signature           # another mechanism


def plan_data(pre: list[list[str]] | None = None, *, extra_role: bool = False,
              name: str = "announce-after-rollback") -> dict[str, Any]:
    goal = SRC.to_data()
    if extra_role:
        goal["roles"] = {**goal["roles"], "PAGER": "paging system that woke the on-call"}
    pre = pre if pre is not None else [
        ["derives_from(SUMMARY,REGISTRY)", "diverges_from(SUMMARY,REGISTRY)"],
        ["caches(SUMMARY,REGISTRY)"],
        ["skips_check(ONCALL,REGISTRY)", "trusts_as_authoritative(ONCALL,SUMMARY)"],
    ]
    ops = [("query", ["ONCALL", "REGISTRY"], "the registry is the authority, not its copy"),
           ("invalidate", ["SUMMARY"], "a cached copy must be refreshed on every change"),
           ("announce", ["ONCALL"], "announce only what the authority shows")]
    steps = [{"operator": op, "args": args, "preconditions": pre[i] if i < len(pre) else [],
              "reason": why} for i, (op, args, why) in enumerate(ops)]
    return {"name": name, "goal": goal, "steps": steps,
            "source_episode": SRC.episode_id}


def test_instantiation_marks_gaps_and_adapts_a_near_case() -> None:
    plan = validate_plan(plan_data())
    inst = instantiate(plan, NEAR, vocab=VOCAB)
    assert inst.role_map == {"SUMMARY": "DISCHARGE_LIST", "REGISTRY": "MAR", "ONCALL": "GP"}
    status = [[p["status"] for p in s["preconditions"]] for s in inst.steps]
    assert status == [["holds", "holds"], ["unknown"], ["holds", "holds"]]
    assert inst.gaps == [1]                      # the cache step: its precondition is unknown
    assert inst.steps[0]["args"] == ["GP", "MAR"]
    assert inst.coverage == pytest.approx(4 / 5) and inst.decision == "adapted"
    assert "GAP 2. invalidate(DISCHARGE_LIST)" in inst.render()
    assert "ADAPT (repair the 1 marked gap)" in inst.render()


def test_an_adapted_plan_without_gaps_says_so() -> None:
    plan = validate_plan(plan_data([["derives_from(SUMMARY,REGISTRY)"], [], []]))
    inst = instantiate(plan, NEAR, vocab=VOCAB)
    assert inst.decision == "adapted" and inst.gaps == []
    assert "ADAPT (no gaps: every precondition holds)" in inst.render()
    assert "repair" not in inst.render()


def test_two_thirds_fallback_boundary() -> None:
    # 2 of 3 preconditions hold -> adapt (2/3 is "about two-thirds")
    two = validate_plan(plan_data([["derives_from(SUMMARY,REGISTRY)",
                                    "diverges_from(SUMMARY,REGISTRY)",
                                    "caches(SUMMARY,REGISTRY)"]]))
    i2 = instantiate(two, NEAR, vocab=VOCAB)
    assert i2.coverage == pytest.approx(2 / 3) and i2.decision == "adapted"
    # 1 of 3 holds (one unknown, one unmapped: PAGER has no counterpart) -> from scratch
    one = validate_plan(plan_data([["derives_from(SUMMARY,REGISTRY)",
                                    "caches(SUMMARY,REGISTRY)", "paged(PAGER,ONCALL)"]],
                                  extra_role=True))
    i1 = instantiate(one, NEAR, vocab=VOCAB)
    assert [p["status"] for p in i1.steps[0]["preconditions"]] == ["holds", "unknown",
                                                                     "unmapped"]
    assert i1.steps[0]["preconditions"][2]["projected"] == "paged(?PAGER,GP)"
    assert i1.coverage == pytest.approx(1 / 3) and i1.decision == "from_scratch"
    # a distant target: nothing much maps
    far = instantiate(validate_plan(plan_data()), FAR, vocab=VOCAB)
    assert far.decision == "from_scratch" and far.coverage < 2 / 3
    assert "PLAN FROM SCRATCH" in far.render()


ALL_PRE = ["derives_from(SUMMARY,REGISTRY)", "diverges_from(SUMMARY,REGISTRY)",
           "skips_check(ONCALL,REGISTRY)", "trusts_as_authoritative(ONCALL,SUMMARY)",
           "caches(SUMMARY,REGISTRY)", "stale(SUMMARY)", "false_claim(ONCALL)",
           "paged(PAGER,ONCALL)"]
HOLDS_IN_NEAR = {"derives_from", "diverges_from", "skips_check", "trusts_as_authoritative",
                 "false_claim"}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(ALL_PRE), min_size=1, max_size=8, unique=True))
def test_coverage_is_the_share_of_holding_preconditions(pre: list[str]) -> None:
    inst = instantiate(validate_plan(plan_data([pre], extra_role=True)), NEAR, vocab=VOCAB)
    holds = sum(1 for p in pre if p.split("(")[0] in HOLDS_IN_NEAR)
    assert inst.coverage == pytest.approx(holds / len(pre))
    assert (inst.decision == "adapted") == (holds / len(pre) >= 2 / 3 - 1e-12)


# -- store: offers, promotion, retirement ------------------------------------------------------
@pytest.fixture
def mem(store: str) -> Any:
    """A fresh store of each backend (conftest's parametrised ``store``)."""
    with open_memory(store) as m:
        yield m


def test_offers_are_logged_offered_or_rejected(mem: Memory) -> None:
    pid = store_plan(mem, validate_plan(plan_data()))
    found = retrieve_plans(mem, NEAR, vocab=VOCAB)
    assert [m.plan_id for m in found] == [pid] and found[0].score > 0.5
    u1 = offer(mem, pid, instantiate(found[0].plan, NEAR, vocab=VOCAB), task="t-near")
    u2 = offer(mem, pid, instantiate(found[0].plan, FAR, vocab=VOCAB), task="t-far")
    uses = {u["id"]: u for u in mem.plan_uses()}
    assert (uses[u1]["decision"], uses[u1]["status"]) == ("adapted", "offered")
    assert (uses[u2]["decision"], uses[u2]["status"]) == ("from_scratch", "rejected")
    assert uses[u1]["instantiation"]["gaps"] == [1]


def test_macro_promotion_after_two_independent_successes_and_retirement(mem: Memory) -> None:
    plan = validate_plan(plan_data())
    pid = store_plan(mem, plan)
    inst = instantiate(plan, NEAR, vocab=VOCAB)

    def reuse(task: str, ok: bool) -> None:
        mem.set_plan_outcome(offer(mem, pid, inst, task=task), success=ok, steps=3)

    reuse("task-a", True)
    reuse("task-a", True)               # the same task again: not independent
    reuse(SRC.episode_id, True)         # its own source: not a reuse
    assert review_plans(mem)["promoted"] == []
    reuse("task-b", True)
    rev = review_plans(mem)
    assert rev["promoted"] == [plan.name] and mem.plans()[0]["status"] == "macro"
    # from-scratch baseline: 3 of 3 succeed; the macro now fails twice more -> 4/6 < 1.0
    for i in range(3):
        record_scratch_run(mem, task=f"scratch-{i}", success=True, steps=5)
    assert review_plans(mem)["retired"] == []       # 4/4 so far: not worse
    reuse("task-c", False)
    reuse("task-d", False)
    rev = review_plans(mem)
    assert rev["retired"] == [plan.name] and rev["scratch_success_rate"] == 1.0
    assert mem.plans()[0]["status"] == "retired"
    assert retrieve_plans(mem, NEAR, vocab=VOCAB) == []   # retired plans are not offered


def test_no_retirement_without_enough_outcomes(mem: Memory) -> None:
    pid = store_plan(mem, validate_plan(plan_data()))
    mem.set_plan_status(pid, "macro")
    inst = instantiate(validate_plan(plan_data()), NEAR, vocab=VOCAB)
    mem.set_plan_outcome(offer(mem, pid, inst, task="x"), success=False)
    record_scratch_run(mem, task="s", success=True)
    assert review_plans(mem, params=PlanParams(retire_min_uses=2))["retired"] == []
    assert review_plans(mem, params=PlanParams(retire_min_uses=1, retire_min_scratch=1),
                        apply=False)["retired"] == ["announce-after-rollback"]
    assert mem.plans()[0]["status"] == "macro"  # apply=False changed nothing


# -- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["steps"][0].update(args=["NOBODY"]), "steps[0].args[0]"),
    (lambda d: d["steps"][0].update(preconditions=["derives_from(SUMMARY"]),
     "steps[0].preconditions[0]"),
    (lambda d: d["steps"][0].update(preconditions=["derives_from(SUMMARY,GHOST)"]),
     "steps[0].preconditions[0]"),
    (lambda d: d["steps"][1].pop("reason"), "steps[1].reason"),
    (lambda d: d["steps"][1].update(colour="red"), "steps[1]"),
    (lambda d: d.update(steps=[]), "steps"),
    (lambda d: d["goal"].pop("roles"), "goal.roles"),
    (lambda d: d.update(name=""), "name"),
])
def test_bad_plans_name_the_field(mutate: Any, field: str) -> None:
    d = plan_data()
    mutate(d)
    with pytest.raises(AnalogistError) as ei:
        validate_plan(d, source="plan.yaml")
    assert ei.value.field == field and ei.value.source == "plan.yaml"


def test_bad_store_operations(mem: Memory) -> None:
    pid = store_plan(mem, validate_plan(plan_data()))
    with pytest.raises(StoreError, match="already exists"):
        store_plan(mem, validate_plan(plan_data()))
    with pytest.raises(StoreError):
        mem.record_plan_use(task="t", decision="adapted", status="rejected", plan_id=pid)
    with pytest.raises(StoreError):
        mem.record_plan_use(task="t", decision="from_scratch", status="unoffered", plan_id=pid)
    with pytest.raises(StoreError):
        mem.record_plan_use(task="t", decision="adapted", status="offered", plan_id=999)
    with pytest.raises(StoreError):
        mem.set_plan_status(pid, "legendary")
    with pytest.raises(StoreError):
        mem.set_plan_outcome(12345, success=True)
    with pytest.raises(AnalogistError):
        PlanParams(min_coverage=1.5)
    with pytest.raises(AnalogistError):
        store_plan(mem, plan_data())  # type: ignore[arg-type]
    assert len(mem.plan_uses()) == 0 and len(mem.plans()) == 1


# -- CLI ----------------------------------------------------------------------------------------
def test_cli_plans(tmp_path: Path) -> None:
    store = tmp_path / "c.db"
    pf = tmp_path / "plan.yaml"
    pf.write_text(yaml.safe_dump(plan_data()))
    tf = tmp_path / "target.json"
    tf.write_text(json.dumps(NEAR.to_data()))
    runner = CliRunner()
    res = runner.invoke(app, ["plans", "add", str(pf), "--store", str(store)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["plans", "match", str(tf), "--store", str(store), "--task", "t1",
                              "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["instantiation"]["decision"] == "adapted" and out["use_id"] is not None
    res = runner.invoke(app, ["plans", "list", "--store", str(store), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)[0]["status"] == "plan"
    res = runner.invoke(app, ["plans", "review", "--store", str(store), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["promoted"] == []
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nsteps: []\n")
    res = runner.invoke(app, ["plans", "add", str(bad), "--store", str(store)])
    assert res.exit_code == 2 and "bad.yaml" in res.output
