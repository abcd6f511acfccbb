"""Reading the participants and clauses a mechanism is written over: a plain object pronoun is
not its own clause's subject, the role cap keeps the entities of typed clauses, a telling that
never came leaves its receiver uninformed, and holding (nearly) all of a thing consumes it."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder
from tests.encode_readings import role_atoms as _atoms


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder()



# -- object pronouns ------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "verb", "referent"), [
    ("The search service leaked memory during a busy week and held almost all of it.",
     "hold", "memory"),
    ("The mill bought grain from the farm and stored it for a month.", "store", "grain"),
    ("The hospital ordered new beds and then it lost them.", "lose", "new beds"),
])
def test_an_object_pronoun_is_not_its_own_clauses_subject(enc, text, verb, referent):
    rows = [t for t in enc.triples(text) if t.verb == verb]
    assert rows, enc.triples(text)
    assert all(t.object == referent for t in rows)
    assert all(t.subject != t.object for t in rows)


def test_an_object_pronoun_still_takes_an_earlier_subject(enc):
    # "them" after "The nurses …" is the nurses: no object mention agrees, and the clause's own
    # subject (the manager) is another entity
    rows = [t for t in enc.triples("The nurses asked for a rota. The manager ignored them.")
            if t.verb == "ignore"]
    assert [(t.subject, t.object) for t in rows] == [("manager", "nurses")]


def test_a_subject_pronoun_keeps_the_earlier_subject(enc):
    rows = [t for t in enc.triples("The pump drew water from the well. It failed in May.")
            if t.verb.startswith("fail")]
    assert [t.subject for t in rows] == ["pump"]


# -- the role cap ---------------------------------------------------------------------------------
_CROWDED = ("The clerk kept a printed timetable copied from the depot schedule. The depot revised "
            "the schedule after the mayor moved the market, but the clerk never saw the revised "
            "schedule. She briefed the porters with her printed timetable. A coach driver "
            "followed the porters and waited at the empty square.")


def test_over_the_cap_the_entities_of_typed_clauses_stay_roles(enc):
    res = enc.encode(_CROWDED)
    roles = set(res.signature.roles.values())
    assert len(roles) == enc.params.max_roles
    assert any("most salient" in n for n in res.notes)
    # the copy and its source, the two ends of derives_from and misses, are kept
    assert any("timetable" in r for r in roles)
    assert any("schedule" in r for r in roles)
    atoms = _atoms(enc, _CROWDED)
    assert any(a[0] == "derives_from" and "timetable" in a[1] and "schedule" in a[2]
               for a in atoms)


def test_under_the_cap_every_entity_stays(enc):
    text = "The keeper kept a chart copied from the survey. The keeper never saw the new survey."
    res = enc.encode(text)
    assert not any("most salient" in n for n in res.notes)
    assert {"keeper", "chart"} <= set(res.signature.roles.values())


# -- a telling that never came --------------------------------------------------------------------
@pytest.mark.parametrize(("text", "holder"), [
    ("Nobody told the owner.", "owner"),
    ("Nobody warned the residents.", "residents"),
    ("The crew was never warned.", "crew"),
    ("The night nurse was not informed.", "night nurse"),
])
def test_a_denied_telling_leaves_its_receiver_uninformed(enc, text, holder):
    assert ("uninformed", holder) in _atoms(enc, text)


def test_a_telling_that_came_is_a_signal(enc):
    atoms = _atoms(enc, "The clerk told the manager.")
    assert ("signals", "clerk", "manager") in atoms
    assert not any(a[0] == "uninformed" for a in atoms)


def test_a_denied_telling_ends_a_causal_edge_as_uninformed(enc):
    sig = enc.encode("Nobody told the owner, so she never ordered more butter.").signature
    causes = {e.cause.predicate for e in sig.causal_chain}
    assert "uninformed" in causes


def test_uninformed_is_a_vocabulary_state(enc):
    p = enc.vocab.get("uninformed")
    assert p is not None and p.accepts_arity(1) and p.definition


# -- holding nearly all of a thing ----------------------------------------------------------------
@pytest.mark.parametrize(("text", "atom"), [
    ("The search service held almost all of the memory.", ("consumes", "search service",
                                                          "memory")),
    ("The largest herd used nearly all of the water.", ("consumes", "largest herd", "water")),
])
def test_holding_or_using_nearly_all_of_a_thing_consumes_it(enc, text, atom):
    assert atom in _atoms(enc, text)


def test_holding_a_thing_is_not_consuming_it(enc):
    atoms = _atoms(enc, "The search service held the memory.")
    assert not any(a[0] == "consumes" for a in atoms)


# -- a thing switched off -------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "Because the pump was disconnected, the cellar flooded.",
    "The alarm was switched off, so the guards slept through the fire.",
    "With the routine disabled, the spacecraft drifted into the debris.",
])
def test_a_thing_switched_off_is_an_outage_at_an_edge_end(enc, text):
    sig = enc.encode(text).signature
    assert "outage" in {e.cause.predicate for e in sig.causal_chain}


# -- agent nouns tagged as comparatives -----------------------------------------------------------
def test_an_agent_noun_with_its_article_is_a_role(enc):
    # the small tagger may read "dispatcher" as a comparative adjective
    atoms = _atoms(enc, "The dispatcher read the board and trusted it.")
    assert ("trusts_as_authoritative", "dispatcher", "board") in atoms


def test_a_bare_comparative_is_still_no_role(enc):
    roles = set(enc.encode("The repairs became costlier and the owners bred more.")
                .signature.roles.values())
    assert not roles & {"costlier", "more"}


# -- a tensed verb after a seen gerund ------------------------------------------------------------
@pytest.mark.parametrize(("text", "verb", "subject", "obj"), [
    ("The owner saw the dog walking happily and never brought it back for a check.", "bring",
     "owner", "dog"),
    ("The guard heard the pipes rattling and called the plumber.", "call", "guard", "plumber"),
])
def test_a_tensed_verb_after_a_seen_gerund_has_the_seers_subject(enc, text, verb, subject, obj):
    rows = [(t.subject, t.object) for t in enc.triples(text) if t.verb == verb]
    assert rows == [(subject, obj)]
