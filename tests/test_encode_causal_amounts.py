"""Verbs of amount and a negated update read exactly (hand-written sentences): "X raised /
reduced Y" is X causing Y's rise / fall, swapping the two reverses the edge, and a verb of
amount with an object that is no amount ("cut the cloth", "raised cattle") stays a relation;
"A never refreshed X" leaves X stale as "nobody refreshed X" does; an aspectual verb's
complement is the end of its link ("because the sensor kept halting the lift")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analogist.encode.deterministic import DeterministicEncoder
from tests.encode_readings import role_edges as _edges


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)



_THINGS = ["the new tariff", "the long drought", "the harbour strike", "the cold snap"]
# (an amount, the roles it may be read as: the amount or what it is the amount of)
_AMOUNT_OBJECTS = [("the price of bread", {"price", "bread"}),
                   ("the rent of the flats", {"rent", "flats"}),
                   ("the level of the reservoir", {"level", "reservoir"})]


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(thing=st.sampled_from(_THINGS), obj=st.sampled_from(_AMOUNT_OBJECTS),
       verb=st.sampled_from([("raised", "increased"), ("reduced", "decreased"),
                             ("lowered", "decreased"), ("boosted", "increased")]))
def test_a_verb_of_amount_causes_its_object_to_rise_or_fall(
        enc: DeterministicEncoder, thing: str, obj: tuple[str, set[str]],
        verb: tuple[str, str]) -> None:
    got = _edges(enc, f"{thing[0].upper()}{thing[1:]} {verb[0]} {obj[0]}.")
    assert [e for _, _, e, _ in got] == [verb[1]]
    assert got[0][1] == thing.split(" ", 1)[1] and got[0][3] in obj[1]


@pytest.mark.parametrize("text", ["The tailor cut the cloth.", "The farmers raised cattle.",
                                  "The crew lowered the boat."])
def test_a_verb_of_amount_on_no_amount_stays_a_relation(enc: DeterministicEncoder,
                                                        text: str) -> None:
    assert _edges(enc, text) == []


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(who=st.sampled_from(["the clerk", "the keeper", "the surveyor"]),
       verb=st.sampled_from(["refreshed", "updated", "revised"]),
       obj=st.sampled_from([("the spreadsheet", "spreadsheet"), ("the chart", "chart")]))
def test_a_never_updated_object_is_stale(enc: DeterministicEncoder, who: str, verb: str,
                                         obj: tuple[str, str]) -> None:
    said = _edges(enc, f"{who[0].upper()}{who[1:]} never {verb} {obj[0]}, so the wages were "
                       "wrong.")
    nobody = _edges(enc, f"Nobody {verb} {obj[0]}, so the wages were wrong.")
    assert said[0][:2] == ("stale", obj[1])
    assert said == nobody


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aspect=st.sampled_from(["kept", "started", "continued", "began"]),
       act=st.sampled_from([("halting the lift", "halted the lift"),
                            ("flooding the cellar", "flooded the cellar"),
                            ("blocking the gate", "blocked the gate")]))
def test_an_aspectual_verb_s_complement_is_the_link_s_end(
        enc: DeterministicEncoder, aspect: str, act: tuple[str, str]) -> None:
    # "because the sensor kept halting the lift" is about the halting, as "… halted the lift"
    kept = _edges(enc, f"The caretaker switched the alarm off because the sensor {aspect} "
                       f"{act[0]}.")
    plain = _edges(enc, f"The caretaker switched the alarm off because the sensor {act[1]}.")
    assert kept == plain and len(plain) == 1


@pytest.mark.parametrize("text, want", [
    ("The notary skipped checking the papers, and that is how he came to know the lawyer.",
     [("that is how", ["check", "know"])]),
    ("The clerk came to trust the ledger because the auditor never checked it.",
     [("because", ["not check", "trust"])]),
])
def test_came_to_and_skipped_are_their_complements(enc: DeterministicEncoder, text: str,
                                                   want: list[tuple[str, list[str]]]) -> None:
    # "came to know" is no purpose ("came in order to know"), and "skipped checking" is the
    # checking the typing reads as skipped
    assert [(lk["connective"], lk["surface"]) for lk in enc.encode(text).links] == want


@pytest.mark.parametrize("amount", ["the price of bread", "the temperature of the boiler"])
def test_an_amount_raised_is_the_amount_that_rises(enc: DeterministicEncoder,
                                                   amount: str) -> None:
    # "the storm raised X" and "X rose" name one end: the amount, not what it is of
    told = _edges(enc, f"The storm raised {amount}.")
    noun = amount.split()[1]
    assert [(e, r) for _, _, e, r in told] == [("increased", noun)]
    rose = _edges(enc, f"The storm hit the coast. {amount[0].upper()}{amount[1:]} rose.")
    assert [(e, r) for _, _, e, r in rose] == [("increased", noun)]


def test_a_time_with_a_noun_modifier_is_a_measure_that_can_hold_a_state(
        enc: DeterministicEncoder) -> None:
    text = "The porters carried the bags upstairs. The waiting times looked short."
    got = _edges(enc, text)
    assert len(got) == 1 and got[0][3] == "waiting times", got
    # a bare time span is still no participant
    assert _edges(enc, "The porters carried the bags upstairs. Two hours passed.") == []
