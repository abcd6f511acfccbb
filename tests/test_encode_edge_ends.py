"""The ends of causal edges are typed onto the vocabulary's domain-neutral predicates, so two
stories told in different domains share their edges; the clause's relation atom has the same
neutral reading, and the surface verb stays as provenance only (the link record, the triples)."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder()


def _edges(res) -> set[tuple[str, str, str]]:
    return {(e.cause.predicate, e.edge, e.effect.predicate) for e in res.signature.causal_chain}


def test_two_domains_share_the_typed_edge(enc):
    a = enc.encode("Because the bakery sold the loaves, the shelf emptied.")
    b = enc.encode("Because the farmer sold the grain, the silo emptied.")
    c = enc.encode("Because the price soared, the buyers left.")
    d = enc.encode("Because the fare rose, the riders left.")
    assert _edges(a) == _edges(b) == {("supplies", "causes", "exhausted")}
    assert _edges(c) == _edges(d) == {("increased", "causes", "departed")}


def test_the_surface_verb_is_kept_as_provenance(enc):
    res = enc.encode("The storm shifted the sandbar, so the trawler grounded.")
    assert _edges(res) == {("changes", "causes", "harmed")}
    # the surface verbs are kept where the edge was read (the link record and the triples) ...
    assert res.links[0]["surface"] == ["shift", "ground"]
    assert [(t.subject, t.verb, t.object) for t in res.triples][0] == ("storm", "shift",
                                                                       "sandbar")
    # ... not as the relation: the clause's own atom has the edge end's neutral reading
    assert [a.predicate for a in res.signature.relations] == ["changes"]
    assert "shift" not in res.proposed_terms


def test_an_edge_end_relation_matches_its_other_domain_telling(enc):
    # one mechanism in two domains, told with other verbs: the relation atoms coincide too
    a = enc.encode("The storm shifted the sandbar, so the trawler grounded.")
    b = enc.encode("The flood moved the footbridge, so the hikers were stranded.")
    assert {r.predicate for r in a.signature.relations} == \
        {r.predicate for r in b.signature.relations} == {"changes"}


def test_an_edge_end_left_unread_keeps_its_proposed_term(enc):
    # a verb neither the vocabulary nor the general tables read stays a proposed term
    res = enc.encode("The clerk juggled the ledgers, so the audit failed.")
    names = [a.predicate for a in res.signature.relations]
    assert names and all(n in res.proposed_terms for n in names)


def test_a_reversed_edge_stays_reversed(enc):
    story = enc.encode("The storm shifted the sandbar, so the trawler grounded.")
    pair = enc.encode("The trawler grounded, so the storm shifted the sandbar.")
    assert _edges(story) == {("changes", "causes", "harmed")}
    assert _edges(pair) == {("harmed", "causes", "changes")}


def test_a_negated_end_keeps_its_proposed_term(enc):
    res = enc.encode("Because the bakery never sold the loaves, the shelf stayed full.")
    for e in res.signature.causal_chain:
        assert e.cause.predicate != "supplies"
