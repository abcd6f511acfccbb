"""Pronouns by animacy and by their own clause (hand-written sentences): "he"/"she" stand for a
person and "it" for a thing when both are at hand; a subject pronoun is none of the nouns its own
clause names."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


def _pairs(enc: DeterministicEncoder, text: str) -> set[tuple[str, str, str]]:
    return {(t.subject, t.verb, t.object) for t in enc.triples(text)}


@pytest.mark.parametrize("who", ["gardener", "florist", "customer"])
def test_she_is_the_person_not_the_nearer_thing(enc: DeterministicEncoder, who: str) -> None:
    # the pump is the latest subject, but "she" names the person
    text = (f"The {who} opened the valve of the garden. The pump whined for an hour, and "
            f"because she closed the valve, the hose went limp.")
    got = _pairs(enc, text)
    assert (who, "close", "valve") in got
    assert ("pump", "close", "valve") not in got


def test_a_person_is_known_by_a_verb_of_the_mind(enc: DeterministicEncoder) -> None:
    # "skald" is in no list of people; believing makes it one
    text = ("The skald believed the omen. Because the storm broke the mast, he burned the "
            "ship.")
    got = _pairs(enc, text)
    assert ("skald", "burn", "ship") in got
    assert ("storm", "burn", "ship") not in got


def test_it_is_the_thing_the_person_acted_on(enc: DeterministicEncoder) -> None:
    # "it" is not the mechanic (a person), nor the conveyor its own clause names
    text = ("The conveyor carried parcels all day. The mechanic unplugged the scanner because "
            "it kept jamming the conveyor.")
    got = _pairs(enc, text)
    assert ("scanner", "keep", "") in got or any(
        s == "scanner" and v.startswith("jam") for s, v, _ in got)
    assert not any(s == "mechanic" and v.startswith(("jam", "keep")) for s, v, _ in got)


def test_a_subject_pronoun_is_not_its_own_clause_s_object(enc: DeterministicEncoder) -> None:
    # both are people; "he came to know the broker" cannot be the broker knowing himself
    text = ("A broker sent the contract. The clerk signed the papers, and that is how he came "
            "to know the broker.")
    assert not any(s == "broker" and o == "broker" for s, _, o in _pairs(enc, text))


def test_they_is_whoever_acted_on_the_same_object(enc: DeterministicEncoder) -> None:
    # the nearest plural subject is the readers; "the ledger" was the bookkeepers' object
    text = ("The bookkeepers padded the ledger every quarter. Because the readers could not "
            "trust the figures, they padded the ledger again.")
    got = _pairs(enc, text)
    assert not any(s == "readers" and v.startswith("pad") for s, v, _ in got), got
    assert sum(s == "bookkeepers" and v.startswith("pad") for s, v, _ in got) >= 1
