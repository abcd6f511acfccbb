"""The seven failure modes of descriptive matching (seed 001 Table 5), built from the bundled
corpus: for each, the descriptive match is rejected (by the self-analogy filter or by Decide's
structural gates) or ranked below the mechanism-level analogy the paper's CANA found.

The events were decomposed independently of these tests (each from its own history); the
assertions record what the pipeline does with them and would fail if it did otherwise.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from analogist.foresight.align import align
from analogist.foresight.event import load_corpus
from analogist.foresight.filter import RULES, check_candidate
from analogist.foresight.loop import ForesightParams, decide


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def _whole(corpus, event_id):
    """The whole event as the target (Table 5 is about finding analogies for a known event)."""
    return corpus.get(event_id).model_copy(update={"cutoff": None})


def _decide(corpus, target, *cands, **kw):
    prm = replace(ForesightParams(), **kw)
    evs = {c: corpus.get(c) for c in cands}
    return decide(target, [align(target, e) for e in evs.values()], evs, prm, corpus)


@pytest.mark.parametrize(("mode", "target", "descriptive", "rules", "cana"), [
    ("part-whole confusion", "arab-spring", "tunisian-revolution-2010", {"sub_event"},
     "revolutions-of-1989"),
    ("same-war echo", "expedition-of-the-thousand", "battle-of-volturno-1860",
     {"sub_event", "same_history"}, "cuban-revolution"),
    ("self-analogy", "iraq-war-2003", "invasion-of-iraq-2003", {"alias", "sub_event"},
     "soviet-afghan-war-1979"),
    ("proximity bias", "john-browns-raid-on-harpers-ferry", "bleeding-kansas",
     {"scope_mismatch", "same_history"}, "easter-rising-1916"),
])
def test_filter_rejects_the_descriptive_match(corpus, mode, target, descriptive, rules, cana):
    t = _whole(corpus, target)
    rej = check_candidate(t, corpus.get(descriptive), corpus)
    assert rej is not None and rej.rule in rules, (mode, rej)
    assert check_candidate(t, corpus.get(cana), corpus) is None, mode


def test_proximity_is_same_history_even_without_the_scope_rule(corpus):
    t = _whole(corpus, "john-browns-raid-on-harpers-ferry")
    rules = tuple(r for r in RULES if r != "scope_mismatch")
    rej = check_candidate(t, corpus.get("bleeding-kansas"), corpus, rules=rules)
    assert rej is not None and rej.rule == "same_history"


def test_causal_direction_error_is_rejected_and_the_mechanism_match_kept(corpus):
    t = _whole(corpus, "battle-of-the-bulge-1944")
    d = _decide(corpus, t, "operation-market-garden-1944", "german-spring-offensive-1918")
    assert [a.candidate for a in d.ranked] == ["german-spring-offensive-1918"]
    assert {r.candidate: r.rule for r in d.rejected}["operation-market-garden-1944"] in (
        "surface_only", "direction_reversed")


def test_surface_feature_match_ranks_below_the_mechanism_match(corpus):
    t = _whole(corpus, "assassination-of-julius-caesar")
    d = _decide(corpus, t, "assassination-of-abraham-lincoln", "collapse-of-the-protectorate")
    assert d.ranked[0].candidate == "collapse-of-the-protectorate"


def test_domain_closure_ranks_below_the_cross_domain_mechanism_match(corpus):
    t = _whole(corpus, "canudos-war")
    d = _decide(corpus, t, "siege-of-baler-1898", "satsuma-rebellion", min_fidelity=0.0)
    assert [a.candidate for a in d.ranked][0] == "satsuma-rebellion"
    by = {a.candidate: a for a in d.ranked}
    assert by["satsuma-rebellion"].mechanism_matches > by["siege-of-baler-1898"].mechanism_matches
