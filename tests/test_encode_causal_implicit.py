"""Implicit causality across adjacent sentences read exactly (hand-written sentences): the
earlier sentence's end is its last conjoined clause, and a stated link between two participants
defeats the default next-sentence link the other way between them, whatever verbs the later
sentence uses for it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analogist.encode.deterministic import DeterministicEncoder

NEXT = "(the next sentence)"


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


def _links(enc: DeterministicEncoder, text: str) -> list[tuple[str, str, str]]:
    """(cause words, connective, effect words) of each kept link."""
    return [(lk["surface"][0], lk["connective"], lk["surface"][1])
            for lk in enc.encode(text).links]


def test_the_earlier_sentence_ends_in_its_last_conjoined_clause(
        enc: DeterministicEncoder) -> None:
    text = ("Nobody refreshed the ledger, and the clerk computed the wages from it. "
            "The tenants were underpaid.")
    assert ("compute", NEXT, "underpaid") in _links(enc, text)


# (later participant, a clause stating its state, a restatement with another verb)
_LATER = [
    ("invoices", "the invoices were late", "The invoices went out late."),
    ("parcels", "the parcels arrived late", "The parcels stayed in the depot."),
    ("lorries", "the lorries were stuck", "The lorries waited at the gate."),
]
# (earlier participant, a clause of its own)
_EARLIER = [
    ("pump", "the pump failed"),
    ("printer", "the printer jammed"),
    ("boiler", "the boiler exploded"),
]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(later=st.sampled_from(_LATER), earlier=st.sampled_from(_EARLIER))
def test_a_stated_reverse_link_defeats_the_next_sentence_default(
        enc: DeterministicEncoder, later: tuple[str, str, str],
        earlier: tuple[str, str]) -> None:
    _, later_clause, restated = later
    _, earlier_clause = earlier
    plain = f"{earlier_clause[0].upper()}{earlier_clause[1:]}. {restated}"
    assert any(c == NEXT for _, c, _ in _links(enc, plain))   # the default reading
    told = f"Because {later_clause}, {earlier_clause}. {restated}"
    got = _links(enc, told)
    assert [c for _, c, _ in got] == ["because"]               # only the stated edge


# (a stated cause, the clause it explains, a sentence between, the cause restated, its verb)
_RESTATED = [
    ("the queue grows in the hall", "Only one clerk can stamp the forms at a time",
     "At noon the farmers brought their forms.", "The queue grew in the hall.", "grow"),
    ("the bakery burned", "The road was closed", "The firemen arrived late.",
     "The bakery burned.", "burn"),
]


@pytest.mark.parametrize("cause, explained, between, restated, verb", _RESTATED)
def test_a_restated_stated_cause_is_no_effect_of_the_sentence_before(
        enc: DeterministicEncoder, cause: str, explained: str, between: str,
        restated: str, verb: str) -> None:
    plain = f"{explained}. {between} {restated}"
    # the default reading: each sentence follows from the one before
    assert [b.split()[0] for _, c, b in _links(enc, plain) if c == NEXT][-1] == verb
    told = f"{explained} because {cause}. {between} {restated}"
    got = _links(enc, told)
    assert any(c == "because" for _, c, _ in got)
    # the restatement would close a circle through the stated link: no sentence leads to it
    assert [b.split()[0] for _, c, b in got if c == NEXT and b.split()[0] == verb] == [], got


@pytest.mark.parametrize("text, first, second", [
    ("The porter read the label and sent the crate north.", "read", "send"),
    ("The guard found the leak and called the plumber.", "find", "call"),
])
def test_two_clauses_of_one_subject_joined_by_and_are_read_in_order(
        enc: DeterministicEncoder, text: str, first: str, second: str) -> None:
    got = _links(enc, text)
    assert [(a.split()[0], b.split()[0]) for a, c, b in got if c == "and"] == [(first, second)]


def test_a_clause_of_its_own_subject_after_and_is_read_in_order_too(
        enc: DeterministicEncoder) -> None:
    got = _links(enc, "The porter read the label, and the crate went north.")
    assert [(a.split()[0], b.split()[0]) for a, c, b in got if c == "and"] == [("read", "go")]


def test_and_before_a_stated_link_adds_nothing(enc: DeterministicEncoder) -> None:
    got = _links(enc, "The porter read the label and then sent the crate north.")
    assert [c for _, c, _ in got] == ["then"]
