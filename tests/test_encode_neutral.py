"""Clauses that end no causal edge are typed onto the vocabulary's domain-neutral relations and
states too (the general-verb tables before the embedder), so that two stories of one mechanism
told in different domains share their relation atoms; the surface verb stays in the triples."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder()


def _rels(res) -> set[str]:
    return {a.text() for a in res.signature.relations}


def _role(res, phrase: str) -> str:
    return next(tag for tag, desc in res.signature.roles.items() if desc == phrase)


def test_a_plain_clause_is_typed_by_the_general_tables(enc):
    a = enc.encode("The miller sold flour to the bakers.")
    b = enc.encode("The utility sells power to the town.")
    assert {r.predicate for r in a.signature.relations} == {"supplies"}
    assert {r.predicate for r in b.signature.relations} == {"supplies"}
    assert a.proposed_terms == {} and b.proposed_terms == {}
    # the surface verb stays as provenance
    assert [t.verb for t in a.triples] == ["sell"]


def test_a_state_outside_any_edge_is_a_neutral_state(enc):
    res = enc.encode("The old roof of the barn sagged.")
    assert _rels(res) == {f"degraded({_role(res, 'old roof')})"}


def test_a_copy_into_another_thing_derives_from_its_source(enc):
    res = enc.encode("The archivist copied the census ledger into a notebook.")
    book, ledger = _role(res, "notebook"), _role(res, "census ledger")
    archivist = _role(res, "archivist")
    assert _rels(res) == {f"derives_from({book},{ledger})", f"produces({archivist},{book})"}


def test_computing_from_a_source_derives_from_it(enc):
    res = enc.encode("The cashier computed the bill from the menu.")
    bill, menu = _role(res, "bill"), _role(res, "menu")
    assert f"derives_from({bill},{menu})" in _rels(res)
    assert f"produces({_role(res, 'cashier')},{bill})" in _rels(res)


def test_an_unknown_past_form_gets_its_lemma(enc):
    res = enc.encode("The surveyor resurveyed the field, and the auditor rechecked the books.")
    assert [t.verb for t in res.triples] == ["resurvey", "recheck"]
    # (the two clauses are read in order, so the first is also the cause of an edge: its
    # general reading is the edge's end)
    sig = res.signature
    typed = {r.predicate for r in sig.relations} | {
        a.predicate for e in sig.causal_chain for a in (e.cause, e.effect)}
    assert {"changes", "validates"} <= typed


def test_a_negated_recheck_skips_the_check(enc):
    res = enc.encode("The auditor never rechecked the books.")
    assert {r.predicate for r in res.signature.relations} == {"skips_check"}


def test_a_negated_seeing_verb_misses_its_object(enc):
    res = enc.encode("The guard never heard the alarm.")
    assert _rels(res) == {f"misses({_role(res, 'guard')},{_role(res, 'alarm')})"}


def test_running_a_thing_from_a_source_depends_on_the_source(enc):
    res = enc.encode("The baker heated both ovens from one boiler.")
    assert f"depends_on({_role(res, 'ovens')},{_role(res, 'boiler')})" in _rels(res)


def test_a_redo_verb_nobody_did_leaves_its_object_stale(enc):
    res = enc.encode("Nobody recalculated the budget.")
    assert _rels(res) == {f"stale({_role(res, 'budget')})"}


def test_time_spans_and_punctuation_are_no_roles(enc):
    res = enc.encode("The clerk filed the forms in April.")
    assert set(res.signature.roles.values()) == {"clerk", "forms"}
    res = enc.encode("The dentist used the X-ray machine.")
    assert set(res.signature.roles.values()) == {"dentist", "x-ray machine"}


def test_singular_and_plural_mentions_are_one_participant(enc):
    res = enc.encode("A child painted the fence, and two more children painted the shed.")
    assert set(res.signature.roles.values()) == {"child", "fence", "shed"}


def test_crowding_onto_a_thing_competes_for_it(enc):
    res = enc.encode("The hikers crowded onto the narrow bridge.")
    assert {r.predicate for r in res.signature.relations} == {"competes_for"}


def test_taking_a_time_span_to_do_something_is_a_delay(enc):
    res = enc.encode("The parcel took three days to reach the island.")
    parcel = _role(res, "parcel")
    assert f"delayed({parcel})" in _rels(res)
    assert set(res.signature.roles.values()) == {"parcel", "island"}


def test_a_negated_response_ignores_its_object(enc):
    res = enc.encode("The spacecraft did not react to the debris.")
    assert {r.predicate for r in res.signature.relations} == {"ignores"}


def test_having_a_part_contains_it_and_having_none_lacks_it(enc):
    has = enc.encode("The surgery had one X-ray machine.")
    none = enc.encode("The surgery had no X-ray machine.")
    assert {r.predicate for r in has.signature.relations} == {"contains"}
    assert {r.predicate for r in none.signature.relations} == {"lacks"}


def test_paying_by_a_measure_incentivises_and_plain_paying_supplies(enc):
    by = enc.encode("The fleet paid its drivers by the mile.")
    plain = enc.encode("The firm paid the supplier.")
    assert {r.predicate for r in by.signature.relations} == {"incentivises"}
    assert {r.predicate for r in plain.signature.relations} == {"supplies"}
