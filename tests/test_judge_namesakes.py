"""A chain run the other way between participants of the same name is reversed, even where the
structural mapping pairs it with the source's chain by crossing its roles (hand-written
signatures of a hill village: the cistern empties, so the fountain runs dry, so the square goes
thirsty; the minimal pair has the fountain empty the cistern)."""

from __future__ import annotations

from analogist.judge import judge
from analogist.signature import validate_signature

ROLES = {"C": "hill cistern", "F": "square fountain", "V": "village square"}
OTHER = {"C": "ship tank", "F": "galley tap", "V": "crew mess"}


def sig(eid: str, chain: list[tuple[str, str]], roles: dict[str, str] = ROLES):
    return validate_signature({
        "episode_id": eid, "kind": "failure", "roles": roles,
        "relations": [],
        "causal_chain": [{"cause": c, "edge": "causes", "effect": e, "status": "observed"}
                         for c, e in chain],
        "surface": {"domain": "village", "entities": list(roles.values())}})


STORY = sig("story", [("exhausted(C)", "exhausted(F)"), ("exhausted(F)", "harmed(V)")])
# the same two states, the fountain's first: a mapping may pair F with C and C with F
MINIMAL = sig("minimal", [("exhausted(F)", "exhausted(C)"), ("exhausted(C)", "harmed(V)")])


def test_the_same_participants_the_other_way_round_are_reversed() -> None:
    rep = judge(MINIMAL, STORY)
    assert any(c.startswith("exhausted(F) causes exhausted(C) is reversed in the target")
               for c in rep.contradictions), rep.contradictions
    assert not rep.transfer


def test_other_participants_in_that_order_are_no_contradiction() -> None:
    # the ship's tank and tap are not the village's cistern and fountain: the same shape with
    # other names is an analogue, not the story told backwards
    ship = sig("ship", [("exhausted(F)", "exhausted(C)"), ("exhausted(C)", "harmed(V)")], OTHER)
    assert judge(ship, STORY).contradictions == ()


def test_the_same_order_is_no_contradiction() -> None:
    again = sig("again", [("exhausted(C)", "exhausted(F)"), ("exhausted(F)", "harmed(V)")])
    assert judge(again, STORY).contradictions == ()
