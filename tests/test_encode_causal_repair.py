"""Mis-tagged tokens repaired before the clauses are read (hand-written sentences): a verb the
small tagger read as a noun after a noun compound ("the fruit rots"), a sentence whose root is a
noun with a reduced relative ("Typists trained on the layout"), a gerund that is an adjective on
its object ("warned passing skippers"), an adjective with a subject and a subordinator ("with the
gate closed"), a bare infinitive tagged as a noun ("made nurses greet arrivals"); a gerund
complement of a verb that takes one ("kept
finding errors") and a sentence parsed right are left as they are."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analogist.encode.deterministic import DeterministicEncoder
from analogist.encode.fronted import _repair_parse


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


def _verbs(enc: DeterministicEncoder, text: str) -> list[tuple[str, str, str]]:
    return [(t.subject, t.verb, t.object) for t in enc.triples(text)]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subject=st.sampled_from(["fruit", "boiler", "timber", "grain"]),
       verb=st.sampled_from(["rots", "burst"]))
def test_a_verb_tagged_as_a_noun_after_a_compound_is_the_verb(
        enc: DeterministicEncoder, subject: str, verb: str) -> None:
    doc = _repair_parse(enc.nlp, enc.nlp(f"The {subject} {verb}."))
    head = doc[2]
    assert head.pos_ == "VERB" and head.dep_ == "ROOT"
    assert doc[1].dep_ == "nsubj" and doc[1].head.i == 2


def test_a_verb_read_as_a_noun_in_a_because_clause_is_its_cause(
        enc: DeterministicEncoder) -> None:
    text = "Only one lorry can cross at a time, because fruit rots in the waiting lorries."
    assert ("fruit", "rot in", "waiting lorries") in _verbs(enc, text)
    links = enc.encode(text).links
    assert [lk["surface"] for lk in links if lk["connective"] == "because"] == [
        ["rot in", "cross"]]


def test_a_root_noun_with_a_reduced_relative_is_a_clause(enc: DeterministicEncoder) -> None:
    assert ("typists", "train on", "layout") in _verbs(enc, "Typists trained on that layout.")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(verb=st.sampled_from(["warned", "fined", "greeted", "helped"]),
       obj=st.sampled_from(["passing skippers", "sleeping tenants", "waiting drivers"]))
def test_a_gerund_before_its_object_is_an_adjective_on_it(
        enc: DeterministicEncoder, verb: str, obj: str) -> None:
    got = _verbs(enc, f"The guard {verb} {obj}.")
    assert [o for s, _, o in got if s == "guard"] == [obj]


def test_a_gerund_complement_is_left_alone(enc: DeterministicEncoder) -> None:
    doc = enc.nlp("The clerk kept finding errors.")
    assert _repair_parse(enc.nlp, doc) is doc


@pytest.mark.parametrize("text, cause, effect", [
    ("With the routine disabled, the spacecraft did not react to the debris.", "disabled",
     "not react to"),
    ("With the gate closed, the sheep stayed in the pen.", "close", "stay in"),
])
def test_a_with_small_clause_is_a_cause(enc: DeterministicEncoder, text: str, cause: str,
                                        effect: str) -> None:
    # "with X disabled": an adjective with a subject and a subordinator is a clause
    links = enc.encode(text).links
    assert [(lk["connective"], lk["surface"]) for lk in links] == [("with", [cause, effect])]


def test_a_bare_infinitive_tagged_as_a_noun_is_the_effect(enc: DeterministicEncoder) -> None:
    # "made nurses greet arrivals": "greet" has a subject of its own, so it is a verb
    text = "The long queue made nurses greet arrivals quickly."
    assert ("nurses", "greet", "arrivals") in _verbs(enc, text)
    assert [lk["surface"][1] for lk in enc.encode(text).links] == ["greet"]
