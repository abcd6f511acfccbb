"""Alignment evidence, Decide, the reflective loop and the brief, on hand-built events."""

from __future__ import annotations

import json

import pytest

from analogist.errors import AnalogistError
from analogist.foresight.align import align
from analogist.foresight.brief import brief_data, brief_json, brief_markdown, write_brief
from analogist.foresight.confirm import ConfirmParams
from analogist.foresight.event import Corpus
from analogist.foresight.loop import ForesightParams, run_foresight
from tests.foresight_fixtures import crisis, make_event, unrelated

TARGET = crisis("target-crisis", "2000", cutoff="2000-06-15", name="Target Crisis")


def test_alignment_matches_observed_and_projects_hidden():
    tv = TARGET.at_cutoff()
    a = align(tv.view, crisis("old-panic", "1850", name="Old Panic"))
    assert a.fidelity == pytest.approx(1.0)
    assert {t for _, t in a.matches} == {"BOOM", "SHADOW", "BET"}
    proj = {(p.position, p.mechanism) for p in a.projections}
    assert proj == {("amplifier", "bank_run"), ("transmission", "credit_crunch"),
                    ("response", "lender_of_last_resort"), ("outcome", "deep_recession")}
    run = next(p for p in a.projections if p.mechanism == "bank_run")
    assert run.anchors and run.anchors[0][1] in {"BET", "SHADOW"}
    assert a.evidence[("amplifier", "bank_run")] == 1
    assert not a.direction_reversed


def test_unrelated_event_has_no_mechanism_match():
    a = align(TARGET.at_cutoff().view, unrelated("some-plague", name="Some Plague"))
    assert a.matches == ()
    assert a.evidence == {} and a.projections == ()


def test_disconfirming_evidence_at_a_reached_position():
    other = make_event("other-panic", [
        ("BOOM", "precondition", "credit_boom", None),
        ("SHADOW", "vulnerability", "unregulated_intermediary", None),
        ("BET", "trigger", "failed_speculation", None),
        ("SALE", "amplifier", "fire_sale", None)],
        [("BOOM", "enables", "BET"), ("BET", "causes", "SALE"), ("SHADOW", "enables", "SALE")],
        name="Other Panic")
    a = align(TARGET.at_cutoff().view, other)
    assert a.evidence[("amplifier", "fire_sale")] == 1
    assert a.x(("amplifier", "bank_run")) == 0  # reaches the amplifier, with another mechanism
    assert a.x(("response", "lender_of_last_resort")) is None  # silent
    res = run_foresight(TARGET, [other, crisis("old-panic", "1850", name="Old Panic")])
    post = res.decision.posteriors[("amplifier", "bank_run")]
    assert (post.confirmations, post.disconfirmations) == (1, 1)


def _chain(event_id, name, order):
    ids = ["GRIEF", "SPARK", "DEFECT", "FALL"]
    mech = {"GRIEF": ("precondition", "economic_grievance"),
            "SPARK": ("trigger", "spark_incident"),
            "DEFECT": ("amplifier", "security_force_defection"),
            "FALL": ("outcome", "regime_collapse")}
    fs = [(i, *mech[i], None) for i in ids]
    links = [(order[k], "causes", order[k + 1]) for k in range(len(order) - 1)]
    return make_event(event_id, fs, links, name=name, domain="geopolitics")


def test_direction_check_flags_a_reversed_story():
    target = _chain("tgt-rising", "Target Rising", ["GRIEF", "SPARK", "DEFECT", "FALL"])
    backwards = _chain("back-rising", "Backwards Rising", ["FALL", "DEFECT", "SPARK", "GRIEF"])
    a = align(target, backwards)
    assert a.direction_reversed
    assert a.reversed_fidelity > a.fidelity
    same = align(target, _chain("fwd-rising", "Forward Rising",
                                ["GRIEF", "SPARK", "DEFECT", "FALL"]))
    assert not same.direction_reversed
    res = run_foresight(target, [backwards])
    assert [r.rule for r in res.decision.rejected] == ["direction_reversed"]


def test_two_independent_analogies_confirm_a_hidden_factor():
    pool = [crisis("panic-east", "1850", name="Panic in the East"),
            crisis("panic-west", "1950", name="Panic in the West"),
            unrelated("plague-one", name="Plague One")]
    res = run_foresight(TARGET, pool)
    predicted = {h: p for h, p in res.predicted()}
    assert ("amplifier", "bank_run") in predicted
    assert predicted[("amplifier", "bank_run")].probability >= 0.95
    assert predicted[("amplifier", "bank_run")].confirmations == 2
    assert "plague-one" in {r.candidate for r in res.decision.rejected}


def test_one_analogy_is_not_enough():
    res = run_foresight(TARGET, [crisis("panic-east", "1850", name="Panic in the East")])
    assert res.predicted() == []
    assert ("amplifier", "bank_run") in {h for h, _ in res.candidates()}


def test_parts_of_one_larger_event_are_not_independent():
    big = make_event("big-crash", [("X", "trigger", "failed_speculation", None),
                                   ("Y", "outcome", "deep_recession", None),
                                   ("Z", "amplifier", "fire_sale", None),
                                   ("W", "precondition", "asset_bubble", None)],
                     [("X", "causes", "Y"), ("Z", "causes", "Y"), ("W", "enables", "X")],
                     name="Big Crash", scale="wave")
    p1 = crisis("part-one", "1850", name="Northern Panic", part_of=("big-crash",))
    p2 = crisis("part-two", "1851", name="Southern Panic", part_of=("big-crash",))
    corpus = Corpus((big, p1, p2), "t")
    res = run_foresight(TARGET, [p1, p2], corpus=corpus)
    post = res.decision.posteriors[("amplifier", "bank_run")]
    assert post.confirmations == 1  # one independence group
    assert not post.asserted
    # with the filter's same-history rule off, both are aligned but still count once
    assert res.decision.groups["part-one"] == res.decision.groups["part-two"]


def test_reflective_loop_reaches_gap_candidates_and_never_repeats():
    pool = [crisis(f"panic-{i}", str(1800 + 10 * i), name=f"Panic of {1800 + 10 * i}",
                   drop=("RESCUE",) if i % 2 else ()) for i in range(6)]
    pool += [unrelated(f"plague-{i}", name=f"Plague of {1700 + i}") for i in range(4)]
    prm = ForesightParams(rounds=4, per_round=1, carryover=2)
    res = run_foresight(TARGET, pool, params=prm)
    generated = [x for lg in res.rounds for x in lg.generated]
    assert len(generated) == len(set(generated))
    assert len(res.rounds) >= 2
    assert res.rounds[0].round == 0
    assert len(res.decision.ranked) <= prm.per_round + prm.carryover
    assert ("amplifier", "bank_run") in {h for h, _ in res.predicted()}


def test_stops_when_sufficient():
    pool = [crisis(f"panic-{i}", str(1800 + 10 * i), name=f"Panic of {1800 + 10 * i}")
            for i in range(4)]
    res = run_foresight(TARGET, pool, params=ForesightParams(rounds=5, per_round=4))
    assert res.stop_reason == "sufficient"
    assert len(res.rounds) == 1


def test_deterministic():
    pool = [crisis("panic-east", "1850", name="Panic in the East"),
            crisis("panic-west", "1950", name="Panic in the West", drop=("BOOM",)),
            unrelated("plague-one", name="Plague One")]
    a = brief_json(run_foresight(TARGET, pool))
    b = brief_json(run_foresight(TARGET, list(reversed(pool))))
    assert a == b


def test_generate_hook_adds_candidates_and_errors_are_recorded():
    calls = []

    def gen(tv, gap, tried):
        calls.append((tuple(gap), frozenset(tried)))
        if len(calls) == 1:
            e = crisis("parametric-panic", "1930", name="Panic Remembered", drop=("RESCUE",))
            return [e.model_copy(update={"provenance": "parametric"})]
        raise AnalogistError("the model timed out")

    pool = [crisis("panic-east", "1850", name="Panic in the East")]
    res = run_foresight(TARGET, pool, generate=gen, params=ForesightParams(rounds=2))
    assert calls and "panic-east" in calls[0][1]
    assert "parametric-panic" in {a.candidate for a in res.decision.ranked}
    assert any("skipped" in s for s in res.skipped)
    b = brief_data(res)
    labels = {a["event_id"]: a["label"] for a in b["analogies"]}
    assert labels["parametric-panic"] == "parametric"
    assert any("parametric" in u for u in b["key_uncertainties"])


@pytest.mark.parametrize("kw", [{"rounds": -1}, {"per_round": 0}, {"min_fidelity": 2.0},
                                {"negative_evidence": "maybe"}, {"rules": ("alias", "vibes")},
                                {"carryover": 1.5}])
def test_bad_loop_parameters(kw):
    with pytest.raises(AnalogistError):
        ForesightParams(**kw)


def test_duplicate_pool_ids_are_refused():
    e = crisis("panic-east", "1850", name="Panic in the East")
    with pytest.raises(AnalogistError, match="twice"):
        run_foresight(TARGET, [e, e])


def test_brief_files(tmp_path):
    pool = [crisis("panic-east", "1850", name="Panic in the East"),
            crisis("panic-west", "1950", name="Panic in the West")]
    res = run_foresight(TARGET, pool, params=ForesightParams(
        confirm=ConfirmParams(pi=0.5, q=1.0, p=0.2, delta=0.05)))
    paths = write_brief(res, tmp_path)
    md = (tmp_path / "brief-target-crisis.md").read_text()
    data = json.loads((tmp_path / "brief-target-crisis.json").read_text())
    assert (tmp_path / "brief-target-crisis.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths["chart"].endswith(".png")
    for section in ("## Predicted hidden factors", "## Mechanism statements",
                    "## Cross-analogy invariants", "## Analogies and their limitations",
                    "## Key uncertainties"):
        assert section in md
    assert "`bank_run`" in md
    pred = {(e["position"], e["mechanism"]) for e in data["predicted_hidden_factors"]}
    assert ("amplifier", "bank_run") in pred
    assert data["parameters"]["n_star"] == 2
    inv = {(e["position"], e["mechanism"]) for e in data["cross_analogy_invariants"]}
    assert ("trigger", "failed_speculation") in inv
    first = data["analogies"][0]
    assert first["likenesses"] and first["source"] == "test fixture"
    assert brief_markdown(res) == brief_markdown(res)
