"""Everyday verbs and state words typed onto the vocabulary's domain-neutral predicates
(src/analogist/encode/everyday.py), so that two stories of ordinary life or of natural processes
told in different words write the same predicates instead of each its own surface term."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder
from analogist.encode.everyday import EVERYDAY_RELATIONS, EVERYDAY_STATES
from analogist.encode.lexicon import _LINKING
from analogist.encode.relations import _GENERAL_RELATIONS
from analogist.encode.states import _GENERAL_STATES
from analogist.signature import default_signature_vocabulary
from tests.encode_readings import role_atoms as _atoms
from tests.encode_readings import role_edges


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder()


@pytest.mark.parametrize(("text", "atom"), [
    ("The sponge absorbed the spilled milk.", ("acquires", "sponge", "spilled milk")),
    ("The porters carried the crates.", ("transports", "porters", "crates")),
    ("The tadpole turned into a frog.", ("becomes", "tadpole", "frog")),
    ("The knight protected the village.", ("protects", "knight", "village")),
    ("The kettle gave off steam.", ("expels", "kettle", "steam")),
    ("The gardener put the seedlings in the greenhouse.", ("places", "gardener", "seedlings")),
    ("The climber searched for a ledge.", ("seeks", "climber", "ledge")),
    ("The nurse nurtured the premature twins.", ("supports", "nurse", "premature twins")),
    ("The magnet attached to the fridge door.", ("attaches_to", "magnet", "fridge door")),
    ("The mechanic repaired the gearbox.", ("changes", "mechanic", "gearbox")),
])
def test_an_everyday_verb_is_a_vocabulary_relation(enc, text, atom):
    atoms = _atoms(enc, text)
    assert atom in atoms, atoms


def test_one_reading_across_domains(enc):
    """A bee carrying pollen and a lorry carrying gravel write the same relation."""
    a = {x[0] for x in _atoms(enc, "The bee carried pollen to the hive.")}
    b = {x[0] for x in _atoms(enc, "The lorry carried gravel to the quarry.")}
    assert "transports" in a & b


def test_a_preposition_the_table_does_not_list_keeps_the_surface_verb(enc):
    """"sang the anthem" makes something; "sang without the piano" names no product: an everyday
    verb is read by its lemma alone only when the clause has no particle or preposition."""
    assert ("produces", "choir", "anthem") in _atoms(enc, "The choir sang the anthem.")
    assert not any(a[0] == "produces"
                   for a in _atoms(enc, "The choir sang without the piano."))


@pytest.mark.parametrize(("text", "edge"), [
    ("The choir was determined, so it rehearsed every night.", ("ready", "choir")),
    ("Because the mist evaporated, the pilots could see the runway.", ("decreased", "mist")),
    ("The lantern was fragile, so the porter wrapped it.", ("degraded", "lantern")),
])
def test_a_state_word_is_a_vocabulary_state(enc, text, edge):
    causes = {(c, cr) for c, cr, e, er in role_edges(enc, text)}
    assert edge in causes, causes


def test_a_linking_verb_leaves_the_state_to_its_complement(enc):
    """"prices stayed high" is about being high, not about staying active."""
    ends = {p for c, cr, e, er in role_edges(
        enc, "Prices stayed high, so the ranchers bred more calves.") for p in (c, e)}
    assert "active" not in ends


def test_the_tables_name_declared_predicates_of_the_right_arity():
    v = default_signature_vocabulary()
    for name in EVERYDAY_RELATIONS:
        p = v.get(name)
        assert p is not None and p.name == name and p.arity == 2 and p.definition, name
    for word, name in EVERYDAY_STATES.items():
        p = v.get(name)
        assert p is not None and p.name == name and p.arity == 1, (word, name)


def test_no_verb_has_two_readings():
    seen: dict[str, str] = {}
    for name, verbs in EVERYDAY_RELATIONS.items():
        for verb in verbs:
            assert verb not in seen, f"{verb!r}: {seen[verb]} and {name}"
            seen[verb] = name
    general = {verb for verbs in _GENERAL_RELATIONS.values() for verb in verbs}
    assert not set(seen) & general
    own = {w for w in _GENERAL_STATES if _GENERAL_STATES[w] != EVERYDAY_STATES.get(w)}
    assert not own & set(EVERYDAY_STATES)


def test_no_linking_verb_is_a_state():
    assert not set(EVERYDAY_STATES) & _LINKING


def test_no_everyday_verb_is_decided_before_its_table():
    """A verb whose form is a binary vocabulary name or synonym ("guards" → gates) or a cue of
    the cue lexicon is read there first; listing it under another predicate would be a dead
    entry."""
    from analogist.encode.lexicon import _CUE_INDEX, _snake
    from analogist.encode.relations import _RelationTyper
    v = default_signature_vocabulary()
    for name, verbs in EVERYDAY_RELATIONS.items():
        for verb in verbs:
            head, *rest = verb.split(" ")
            for form in _RelationTyper._forms(head, head, " ".join(rest)):
                p = v.get(_snake(form))
                assert p is None or p.name == name or not p.accepts_arity(2), (verb, name)
            assert _CUE_INDEX.get(verb, name) == name, (verb, _CUE_INDEX[verb], name)
