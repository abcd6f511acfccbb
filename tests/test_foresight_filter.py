"""The self-analogy filter: the five hard rules of seed 001 Algorithm 1, the same-history rule,
and independence groups."""

from __future__ import annotations

import pytest

from analogist.errors import AnalogistError
from analogist.foresight.event import Corpus
from analogist.foresight.filter import (
    check_candidate,
    independence_groups,
    is_generic_descriptor,
    normalize_name,
)
from tests.foresight_fixtures import crisis


def _corpus(*evs):
    return Corpus(tuple(evs), "test")


def test_alias_by_name_and_alias():
    t = crisis("panic-x", name="Panic of 1907", aliases=("Knickerbocker Crisis",))
    c = crisis("other", name="The Knickerbocker crisis")
    assert check_candidate(t, c).rule == "alias"
    c2 = crisis("other2", name="1907 Panic")  # same content words
    assert check_candidate(t, c2).rule == "alias"
    assert check_candidate(t, t).rule == "alias"
    c3 = crisis("other3", name="Panic of 1873")
    assert check_candidate(t, c3) is None


def test_sub_event_and_super_set_are_transitive():
    war = crisis("big-war", name="Big War", scale="crisis")
    campaign = crisis("campaign", name="Northern Campaign", part_of=("big-war",),
                      scale="episode")
    battle = crisis("battle", name="Battle of Somewhere", part_of=("campaign",),
                    scale="incident")
    corpus = _corpus(war, campaign, battle)
    assert check_candidate(war, battle, corpus).rule == "sub_event"
    assert check_candidate(battle, war, corpus).rule == "super_set"
    assert check_candidate(campaign, battle, corpus).rule == "sub_event"


def test_same_history_siblings_and_related():
    war = crisis("big-war", name="Big War")
    b1 = crisis("battle-one", name="Battle of One", part_of=("big-war",))
    b2 = crisis("battle-two", name="Battle of Two", part_of=("big-war",))
    raid = crisis("raid", name="Raid on the Arsenal", related=("kansas",))
    kansas = crisis("kansas", name="Border War in Kansas")
    corpus = _corpus(war, b1, b2, raid, kansas)
    assert check_candidate(b1, b2, corpus).rule == "same_history"
    assert check_candidate(raid, kansas, corpus).rule == "same_history"
    assert check_candidate(kansas, raid, corpus).rule == "same_history"
    # the rule can be switched off
    assert check_candidate(b1, b2, corpus, rules=("alias",)) is None


@pytest.mark.parametrize(("name", "generic"), [
    ("a banking crisis", True), ("Financial contagion", True), ("Sovereign debt crisis", True),
    ("civil war", True), ("Great Depression", False), ("Panic of 1907", False),
    ("the 1997 Asian financial crisis", False), ("Arab Spring", False),
    ("Revolution", True), ("French Revolution", False), ("", True),
])
def test_generic_descriptor(name, generic):
    assert is_generic_descriptor(name) is generic


def test_generic_candidate_is_rejected():
    t = crisis("panic-x", name="Panic of 1907")
    c = crisis("generic", name="a banking panic")
    assert check_candidate(t, c).rule == "generic_descriptor"


def test_scope_mismatch_two_classes_apart():
    t = crisis("war-x", name="Long War", scale="crisis")
    assert check_candidate(t, crisis("s1", name="Skirmish at Ford", scale="incident")).rule \
        == "scope_mismatch"
    assert check_candidate(t, crisis("s2", name="Summer Offensive", scale="episode")) is None
    assert check_candidate(t, crisis("s3", name="Wave of Panics", scale="wave")) is None
    assert check_candidate(t, crisis("s4", name="Age of Empire", scale="era")).rule \
        == "scope_mismatch"


def test_normalize_name():
    assert normalize_name("The Bankers' Panic of 1907") == "bankers panic of 1907"
    assert normalize_name("Révolution française") == "revolution francaise"


def test_unknown_rule_is_an_error():
    t = crisis("panic-x", name="Panic of 1907")
    with pytest.raises(AnalogistError, match="unknown filter rule"):
        check_candidate(t, t, rules=("alias", "vibes"))


def test_independence_groups_merge_shared_histories():
    war = crisis("big-war", name="Big War")
    b1 = crisis("battle-one", name="Battle of One", part_of=("big-war",))
    b2 = crisis("battle-two", name="Battle of Two", part_of=("big-war",))
    other = crisis("other", name="Panic of 1873")
    alias = crisis("alias", name="Great Panic", aliases=("Panic of 1873",))
    corpus = _corpus(war, b1, b2, other, alias)
    g = independence_groups([b1, b2, other, alias, war], corpus)
    assert g["battle-one"] == g["battle-two"] == g["big-war"]
    assert g["other"] == g["alias"]
    assert g["other"] != g["battle-one"]
