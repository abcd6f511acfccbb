"""An object pronoun is never its own clause's subject (hand-written sentences): "other makers
copied it" is not the makers copying themselves, so no causal edge runs from a clause to a copy
of itself; a pronoun object of another subject still finds its referent."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(who=st.sampled_from(["keeper", "clerk", "maker", "farmer"]),
       verb=st.sampled_from(["copied", "praised", "watched", "trusted"]))
def test_an_object_pronoun_is_not_its_clause_s_subject(enc: DeterministicEncoder, who: str,
                                                       verb: str) -> None:
    text = f"The old {who} opened the shop. The {who} {verb} it."
    assert not any(t.subject == who and t.object == f"old {who}" for t in enc.triples(text))


def test_an_object_pronoun_of_another_subject_finds_its_referent(
        enc: DeterministicEncoder) -> None:
    text = "The keeper opened the shop. The storm soaked him."
    assert ("storm", "keeper") in {(t.subject, t.object) for t in enc.triples(text)}


def test_an_infinitive_s_object_pronoun_is_not_its_controller(
        enc: DeterministicEncoder) -> None:
    # "led the makers to copy it": the makers copy, so "it" is not a maker
    text = "The early maker chose a layout. The typists led the makers to copy it."
    assert not any(t.object == "early maker" for t in enc.triples(text)
                   if t.verb.startswith("copy"))
