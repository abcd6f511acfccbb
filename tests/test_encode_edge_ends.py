"""The ends of causal edges are typed onto the vocabulary's domain-neutral predicates, so two
stories told in different domains share their edges; the surface verb stays as provenance."""

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
    assert res.links[0]["surface"] == ["shift", "ground"]
    # the clause's own relation atom keeps the surface verb
    assert [a.predicate for a in res.signature.relations] == ["shift"]
    assert "shift" in res.proposed_terms


def test_a_reversed_edge_stays_reversed(enc):
    story = enc.encode("The storm shifted the sandbar, so the trawler grounded.")
    pair = enc.encode("The trawler grounded, so the storm shifted the sandbar.")
    assert _edges(story) == {("changes", "causes", "harmed")}
    assert _edges(pair) == {("harmed", "causes", "changes")}


def test_a_negated_end_keeps_its_proposed_term(enc):
    res = enc.encode("Because the bakery never sold the loaves, the shelf stayed full.")
    for e in res.signature.causal_chain:
        assert e.cause.predicate != "supplies"
