"""A thing "working as designed", "running normally" or in "normal operation" is in the vocabulary's
``correct`` state, not in an unnamed ``occurs`` one: that is the state a masking mechanism hides a
decline behind, and the one a failure holds up, so a story told in one domain and its retelling in
another share the edge."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder()


def _edges(res) -> set[tuple[str, str, str]]:
    return {(e.cause.predicate, e.edge, e.effect.predicate) for e in res.signature.causal_chain}


@pytest.mark.parametrize("text", [
    "The spare generator working as designed hides the decline of the old turbine.",
    "The reserve tank working as intended hides the decline of the old pipe.",
    "The backup router running normally hides the decline of the office network.",
])
def test_a_participle_of_functioning_as_planned_is_correct(enc, text):
    assert _edges(enc.encode(text)) == {("correct", "masks", "degraded")}


@pytest.mark.parametrize("text", [
    "Normal operation of the sump pump hides the decline of the cellar wall.",
    "The proper functioning of the thermostat conceals the decline of the boiler.",
])
def test_a_function_noun_with_a_normal_modifier_is_correct(enc, text):
    assert _edges(enc.encode(text)) == {("correct", "masks", "degraded")}


def test_a_failure_holds_up_the_correct_state_of_another(enc):
    res = enc.encode("The collapse of the old bridge holds up the ferry working as designed.")
    assert _edges(res) == {("failure", "delays", "correct")}


def test_plain_working_and_other_operations_are_not_correct(enc):
    # working without "as designed" is only activity, and an operation with no normal
    # modifier is no statement of correctness
    a = enc.encode("The pump working hides the decline of the well.")
    b = enc.encode("The operation of the crane hides the decline of the quay.")
    assert "correct" not in {e.cause.predicate for e in a.signature.causal_chain}
    assert "correct" not in {e.cause.predicate for e in b.signature.causal_chain}
