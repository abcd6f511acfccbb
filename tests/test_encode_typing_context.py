"""Clauses typed onto the vocabulary from the words around their verb: a state verb whose object
is only a place, denied getting or making, denied showing up, omitted checks, lateness and
"more" — so that two stories told in different domains write the same predicates."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder
from tests.encode_readings import role_atoms as _atoms
from tests.encode_readings import role_edges


def _edge_ends(enc: DeterministicEncoder, text: str) -> set[tuple[str, str]]:
    """(predicate, first role) of both ends of every causal edge."""
    return {x for c, cr, e, er in role_edges(enc, text) for x in ((c, cr), (e, er))}


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder()



@pytest.mark.parametrize(("text", "atom"), [
    ("The trawler grounded on the sandbar.", ("harmed", "trawler")),
    ("The fruit rotted in the lorries.", ("degraded", "fruit")),
    ("The cable snapped between two floors.", ("failure", "cable")),
    ("The van broke down on the motorway.", ("failure", "van")),
])
def test_a_state_verb_with_a_place_is_the_subjects_state(enc, text, atom):
    atoms = _atoms(enc, text)
    assert atom in atoms
    assert all(len(a) == 2 for a in atoms)          # the place is no second argument


def test_a_relation_verb_with_a_preposition_stays_a_relation(enc):
    assert ("depends_on", "billing service", "server") in _atoms(
        enc, "The billing service ran on the server.")


@pytest.mark.parametrize(("text", "atom"), [
    ("The old organist kept no notes.", ("lacks", "old organist", "notes")),
    ("The owner never ordered more butter.", ("lacks", "owner", "butter")),
])
def test_denied_keeping_or_getting_is_lacks(enc, text, atom):
    assert atom in _atoms(enc, text)


def test_nobody_making_a_thing_leaves_it_missing(enc):
    assert ("missing", "generator") in _atoms(enc, "Nobody had built a generator as a backup.")
    assert ("missing", "donation drive") in _atoms(enc, "No donation drive was called.")


def test_nobody_repairing_a_thing_leaves_it_degraded(enc):
    assert ("degraded", "pump") in _atoms(enc, "Nobody repaired the pump.")


def test_not_showing_up_is_unobserved(enc):
    assert ("unobserved", "shortfall") in _atoms(
        enc, "The shortfall never showed up in the weekly report.")


def test_an_omitted_check_is_a_skipped_check(enc):
    atoms = _atoms(enc, "The notary skipped checking the signatures.")
    assert ("skips_check", "notary", "signatures") in atoms
    assert not any(a[0] == "validates" for a in atoms)


@pytest.mark.parametrize(("text", "atom"), [
    ("The invoices went out three days late.", ("delayed", "invoices")),
    ("The appointments ran an hour behind.", ("delayed", "appointments")),
    ("Every student downloaded more each term.", ("increased", "student")),
])
def test_lateness_and_more(enc, text, atom):
    assert atom in _atoms(enc, text)


@pytest.mark.parametrize(("text", "atom"), [
    ("The loud drums drowned out the faint buzz.", ("masks", "loud drums", "faint buzz")),
    ("The council cut the budget.", ("reduces", "council", "budget")),
])
def test_general_verbs(enc, text, atom):
    assert atom in _atoms(enc, text)


def test_two_domains_share_the_state(enc):
    a = {x[0] for x in _atoms(enc, "The trawler grounded on the sandbar.")}
    b = {x[0] for x in _atoms(enc, "Every raised employee was underpaid in April.")}
    assert a == b == {"harmed"}


def test_a_verb_with_an_idiomatic_object_is_a_state(enc):
    assert _atoms(enc, "The old bridge gave way.") == {("failure", "old bridge")}
    # with a complement it is no idiom of state
    assert not any(a[0] == "failure" for a in _atoms(enc, "The farmer gave way to the tractor."))


def test_a_partitive_object_names_its_whole(enc):
    assert ("acquires", "larger bees", "nectar") in _atoms(
        enc, "The larger bees took most of the nectar.")


def test_as_if_it_were_current_trusts_it(enc):
    atoms = _atoms(enc, "Nobody refreshed the spreadsheet, and the clerk computed the wages "
                        "from it as if it were current.")
    assert ("trusts_as_authoritative", "clerk", "spreadsheet") in atoms
    # (the stale sheet leads on to the computing, so it is read as that edge's cause)
    assert ("stale", "spreadsheet") in atoms | _edge_ends(enc, "Nobody refreshed the "
                                                          "spreadsheet, and the clerk computed "
                                                          "the wages from it as if it were "
                                                          "current.")
    # a pretence about anything but truth is no trust
    assert not any(a[0] == "trusts_as_authoritative" for a in _atoms(
        enc, "The cook stirred the soup as if it were boiling."))


def test_a_preposition_without_its_object_still_names_the_reading(enc):
    # the parser hangs "by" on the verb and "the kilometre" on "driven"
    assert ("incentivises", "fleet", "drivers") in _atoms(
        enc, "The fleet paid its drivers by the kilometre driven.")
    assert ("supplies", "firm", "supplier") in _atoms(enc, "The firm paid the supplier.")


def test_running_out_of_a_thing_lacks_it(enc):
    assert ("lacks", "pastry shop", "butter") in _atoms(
        enc, "The pastry shop ran out of butter in the middle of the week.")


def test_a_time_is_no_participant(enc):
    assert _atoms(enc, "The crucible cracked by midnight.") == {("failure", "crucible")}
