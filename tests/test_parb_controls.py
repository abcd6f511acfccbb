"""PARB attribution controls (seed 000 §2): source dependence Δ and the mapping-lesion test,
and verification survival / cost (seed 000 §15)."""

from __future__ import annotations

import pytest

from analogist.bench.parb.arms import ArmContext, ArmOutput, make_arms
from analogist.bench.parb.controls import (
    answer_correct,
    lesion_target,
    run_controls,
    summarize_controls,
    wrong_source,
)
from analogist.bench.parb.items import generate
from analogist.bench.parb.runner import cost_metrics, verification_survival
from analogist.memory.sqlite import Memory
from analogist.signature import validate_signature


class InsensitiveArm:
    """Always claims the source and the keyed conclusion/fix/parts, whatever it is given."""

    name = "T"

    def run(self, item, ctx):
        pb = ctx.problem
        key = item["key"]
        chosen = pb.pool[0][0] if pb.pool else None
        ti = key.get("transferred_inference")
        concl = [f"{ti['cause']} {ti['edge']} {ti['effect']}"] if ti else []
        parts = ({p: v["decision"] == "transfer" for p, v in key["parts"].items()}
                 if "parts" in key else None)
        return ArmOutput(chosen, [chosen] if chosen else [],
                         role_map=dict(key["role_mapping"]), fix=key.get("fix_operator"),
                         conclusions=concl, parts=parts, transfer=True)


@pytest.fixture(scope="module")
def control_run(tmp_path_factory):
    items = [i for i in generate(24, 3, "dev").items if i["family"] in ("F1", "F4", "F5")]
    mem = Memory.open(tmp_path_factory.mktemp("ctl") / "c.db")
    try:
        ctx = ArmContext(mem, embedder=None, seed=0)
        recs = run_controls(items, make_arms(["G"]) + [InsensitiveArm()], ctx)
    finally:
        mem.close()
    return items, recs


def test_oracle_depends_on_its_source(control_run):
    items, recs = control_run
    g = summarize_controls(recs["G"], seed=1)
    assert g["n"] == len(items) >= 6
    assert g["accuracy"]["none"] == 0.0
    assert g["delta_vs_none"]["estimate"] > 0
    assert g["delta_vs_none"]["n"] == len(items)
    lo, hi = g["delta_vs_none"]["ci"]
    assert lo <= g["delta_vs_none"]["estimate"] <= hi
    assert g["delta_vs_wrong"]["estimate"] > 0


def test_lesion_changes_oracle_conclusion_in_most_items(control_run):
    _, recs = control_run
    g = summarize_controls(recs["G"])
    assert g["lesion"]["n"] >= 4
    assert g["lesion"]["sensitivity"] > 0.5
    # on F1 and F5 the lesion always hits what was transferred
    for fam in ("F1", "F5"):
        assert g["lesion"]["by_family"][fam]["sensitivity"] == 1.0


def test_insensitive_arm_fails_the_controls(control_run):
    _, recs = control_run
    t = summarize_controls(recs["T"])
    assert t["lesion"]["n"] > 0
    assert t["lesion"]["sensitivity"] == 0.0           # the control can fail
    assert len(t["lesion"]["rationalisations"]) == t["lesion"]["n"]
    # it "already knew" the F1 inference and the F4 fix: no source dependence there (on F5 an
    # abstention counts as withholding every part, so F5 is left out)
    t14 = summarize_controls([x for x in recs["T"] if x["family"] != "F5"])
    assert t14["delta_vs_none"]["estimate"] == 0.0


def test_wrong_source_is_deterministic_surface_matched_and_structurally_different():
    it = next(i for i in generate(8, 4, "dev").items if i["family"] == "F1")
    a, b = wrong_source(it), wrong_source(it)
    assert a == b
    sig = validate_signature(a)
    assert sig.surface.domain == it["source"]["surface"]["domain"]
    assert sorted(map(tuple, a["relations"])) != sorted(map(tuple, it["source"]["relations"]))


def test_lesion_target_is_on_the_path_and_needs_a_transfer():
    it = next(i for i in generate(8, 4, "dev").items if i["family"] == "F1")
    ti = it["key"]["transferred_inference"]
    concl = f"{ti['cause']} {ti['edge']} {ti['effect']}"
    out = ArmOutput(it["source"]["episode_id"], [], role_map=dict(it["key"]["role_mapping"]),
                    conclusions=[concl])
    kind, idx, text, used = lesion_target(it, out)
    assert kind == "edge" and used == "arm"
    inv = {v: k for k, v in it["key"]["role_mapping"].items()}
    e = it["source"]["causal_chain"][idx]
    assert [inv.get(ti["cause"].split("(")[1][:-1])] == [e["cause"].split("(")[1][:-1]]
    assert answer_correct(it, out)
    assert lesion_target(it, ArmOutput(None, [])) is None
    assert lesion_target(it, ArmOutput(it["source"]["episode_id"], [])) is None


def test_verification_survival_and_cost():
    def r(chosen, U=0, F=0, wall=0.5, tokens=None):
        return {"proposed": chosen is not None, "chosen": chosen, "U": U, "F": F,
                "wall_s": wall, "tokens": tokens}
    d = [r("a", U=1), r("b", F=1), r("c", U=1), r(None)]
    e = [r("a", U=1), r(None), r("x", F=1), r(None)]
    v = verification_survival(e, d)
    assert v["n"] == 3 and v["survival"] == pytest.approx(1 / 3)
    assert v["useful_kept"] == 0.5 and v["false_killed"] == 1.0
    c = cost_metrics(e)
    assert c["wall_s_per_item"] == pytest.approx(0.5) and c["wall_s_per_U"] == pytest.approx(2.0)
    assert c["tokens_per_item"] is None
    c = cost_metrics([r("a", U=1, tokens=100), r(None, tokens=50)])
    assert c["tokens_per_item"] == 75 and c["tokens_per_U"] == 150
