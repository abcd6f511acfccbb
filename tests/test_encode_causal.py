"""Causal structure read from text: direction in every connective form, the passive, sentential
relatives, "that is why", infinitive complements of "lead", "no longer", and implicit causality
across adjacent sentences (hand-written sentences)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


def _pred(atom: str) -> str:
    return atom.split("(", 1)[0]


def edges(enc: DeterministicEncoder, text: str) -> list[dict[str, Any]]:
    return enc.encode(text).signature.to_data()["causal_chain"]


def skeleton(enc: DeterministicEncoder, text: str) -> set[tuple[str, str, int, str]]:
    return {(_pred(e["cause"]), e["edge"], e["sign"], _pred(e["effect"]))
            for e in edges(enc, text)}


def role_of(enc: DeterministicEncoder, text: str, atom: str) -> str:
    res = enc.encode(text)
    tag = atom[atom.index("(") + 1:-1].split(",")[0]
    return res.signature.roles[tag]


# -- implicit causality across adjacent sentences ----------------------------------------------
def test_a_state_then_an_act_is_an_inferred_edge(enc: DeterministicEncoder) -> None:
    (e,) = edges(enc, "The cache was stale. The agent quoted the old price.")
    assert _pred(e["cause"]) == "stale" and _pred(e["effect"]) == "quote"
    assert e["edge"] == "causes" and e["sign"] == 1
    assert e["status"] == "inferred"


def test_a_stated_link_between_the_sentences_is_kept_instead(enc: DeterministicEncoder) -> None:
    (e,) = edges(enc, "The pump failed. So the cellar flooded.")
    assert e["status"] == "observed"
    (e,) = edges(enc, "The pump failed. That is why the cellar flooded.")
    assert e["status"] == "observed" and _pred(e["cause"]) == "failure"


def test_a_sentence_with_its_own_cause_gets_no_implicit_one(enc: DeterministicEncoder) -> None:
    text = "The pump failed. The cellar flooded because the drain was blocked."
    (e,) = edges(enc, text)
    assert e["status"] == "observed"
    assert (role_of(enc, text, e["cause"]), role_of(enc, text, e["effect"])) == ("drain",
                                                                                "cellar")


def test_the_stated_reverse_defeats_the_default_reading(enc: DeterministicEncoder) -> None:
    story = "The goats grazed the meadow bare. The sheep starved."
    minimal = ("The goats grazed the meadow bare because the sheep were starving. "
               "The sheep starved.")
    ((graze, edge, sign, starve),) = skeleton(enc, story)
    assert edge == "causes" and sign == 1
    # the stated starving -> grazing is kept; the default grazing -> starving is not re-read
    # against it, so the minimal pair differs by exactly the reversed edge
    assert skeleton(enc, minimal) == {(starve, "causes", 1, graze)}
    (e,) = edges(enc, minimal)
    assert e["status"] == "observed"


# -- direction, whatever the connective --------------------------------------------------------
CAUSE = "the cache was stale"
EFFECT = "the agent quoted the old price"
FORMS = [
    "{E} because {C}.",
    "Because {C}, {e}.",
    "{C}, so {e}.",
    "After {c}, {e}.",
    "{C}. That is why {e}.",
    "{C}, and that is why {e}.",
]


def _fill(form: str) -> str:
    return form.format(C=CAUSE[0].upper() + CAUSE[1:], c=CAUSE,
                       E=EFFECT[0].upper() + EFFECT[1:], e=EFFECT)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(FORMS))
def test_every_connective_form_reads_the_same_direction(form: str) -> None:
    enc = DeterministicEncoder(embedder=None)
    chain = edges(enc, _fill(form))
    assert [(_pred(e["cause"]), _pred(e["effect"])) for e in chain] == [("stale", "quote")], \
        _fill(form)


def test_the_passive_agent_is_the_cause_not_the_holder(enc: DeterministicEncoder) -> None:
    text = "The wrong quote was caused by the stale cache."
    (e,) = edges(enc, text)
    assert _pred(e["cause"]) == "stale" and _pred(e["effect"]) == "false_claim"
    assert role_of(enc, text, e["cause"]) == "stale cache"
    assert role_of(enc, text, e["effect"]) == "wrong quote"


def test_a_sentential_relative_is_caused_by_its_clause(enc: DeterministicEncoder) -> None:
    text = "Within a week the whole class told the joke, which made the teacher ban it."
    (e,) = edges(enc, text)
    assert role_of(enc, text, e["cause"]) == "class" and e["edge"] == "causes"
    text = "The temperature of the river rose, which produced a flood."
    (e,) = edges(enc, text)
    assert (role_of(enc, text, e["cause"]), role_of(enc, text, e["effect"])) == (
        "temperature", "flood")


def test_lead_with_an_infinitive(enc: DeterministicEncoder) -> None:
    (e,) = edges(enc, "The shortage led the managers to cancel the trip.")
    assert (_pred(e["cause"]), _pred(e["effect"])) == ("exhausted", "cancel")


def test_a_so_clause_after_a_negated_one(enc: DeterministicEncoder) -> None:
    (e,) = edges(enc, "The guard never checked the badge, so the thief entered.")
    assert (_pred(e["cause"]), _pred(e["effect"])) == ("skips_check", "enter_state")


def test_no_longer_negates(enc: DeterministicEncoder) -> None:
    rels = enc.encode("The billing service could no longer allocate memory.").signature.to_data()
    assert ["failure", "R1"] in rels["relations"]
    plain = enc.encode("The billing service could allocate memory.").signature.to_data()
    assert ["failure", "R1"] not in plain["relations"]


# -- signed and masking causal verbs -----------------------------------------------------------
def test_amplify_and_damp_are_edges_of_opposite_sign(enc: DeterministicEncoder) -> None:
    up = skeleton(enc, "The crowd amplified the early arrivals.")
    down = skeleton(enc, "The crowd damped the early arrivals.")
    assert up == {("occurs", "causes", 1, "occurs")}
    assert down == {("occurs", "causes", -1, "occurs")}
    # between two plain things the verb stays a relation
    rels = enc.encode("The amplifier boosts the signal.").signature.to_data()["relations"]
    assert ["amplifies", "R1", "R2"] in rels


def test_a_comparative_after_the_object_of_make_sets_the_sign(enc: DeterministicEncoder) -> None:
    (e,) = edges(enc, "The later trains make the crowd at the gate smaller.")
    assert e["sign"] == -1
    (e,) = edges(enc, "The later trains make the crowd at the gate bigger.")
    assert e["sign"] == 1


def test_push_to_is_object_control(enc: DeterministicEncoder) -> None:
    text = "The long queue pushes the students to come earlier."
    (e,) = edges(enc, text)
    assert role_of(enc, text, e["cause"]) == "long queue"
    assert role_of(enc, text, e["effect"]) == "students"


def test_a_gerund_with_an_article_is_a_masking_end(enc: DeterministicEncoder) -> None:
    story = ("The cook left each pie in the oven longer, and the longer roasting hid the weak "
             "burner.")
    minimal = ("The cook left each pie in the oven longer, and the weak burner hid the longer "
               "roasting.")
    a = [e for e in edges(enc, story) if e["edge"] == "masks"]
    b = [e for e in edges(enc, minimal) if e["edge"] == "masks"]
    assert len(a) == len(b) == 1

    def ends(text: str, e: dict[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
        return ((_pred(e["cause"]), role_of(enc, text, e["cause"])),
                (_pred(e["effect"]), role_of(enc, text, e["effect"])))

    (ca, fa), (cb, fb) = ends(story, a[0]), ends(minimal, b[0])
    assert fa == cb == ("degraded", "weak burner")
    assert ca[0] == fb[0] and "roasting" in ca[1] and "roasting" in fb[1]


def test_each_as_a_subject_refers_back(enc: DeterministicEncoder) -> None:
    text = "Because no farmer held back, each gained by pumping more."
    (e,) = edges(enc, text)
    assert _pred(e["cause"]) == "not_hold_state" and role_of(enc, text, e["effect"]) == "farmer"
    assert e["cause"].split("(")[1] == e["effect"].split("(")[1]     # one farmer role


def test_an_absolute_with_clause_is_an_inferred_cause(enc: DeterministicEncoder) -> None:
    text = "With the gate closed, the goats stayed in the yard."
    (e,) = edges(enc, text)
    assert role_of(enc, text, e["cause"]) == "gate" and e["status"] == "inferred"
    assert edges(enc, "The crew worked with great care.") == []
