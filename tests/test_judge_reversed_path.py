"""A causal edge whose effect leads to its cause through a chain in the target is reversed
there, like a directly reversed edge — unless either side states the loop both ways
(hand-written signatures of a ferry quay: the gate closing makes the queue, the queue spoils
the catch)."""

from __future__ import annotations

from analogist.judge import judge
from analogist.signature import validate_signature

ROLES = {"G": "quay gate", "Q": "lorry queue", "F": "fish catch", "A": "harbour master"}


def sig(eid: str, chain: list[tuple[str, str]]):
    return validate_signature({
        "episode_id": eid, "kind": "failure", "roles": ROLES,
        "relations": [["waits_for", "Q", "G"]],
        "causal_chain": [{"cause": c, "edge": "causes", "effect": e, "status": "observed"}
                         for c, e in chain],
        "surface": {"domain": "harbour", "entities": list(ROLES.values())}})


CHAIN = sig("chain", [("closed(G)", "queued(Q)"), ("queued(Q)", "spoiled(F)")])
# the minimal pair: the spoiling closes the gate, where the chain has the gate lead to it
BACK = sig("back", [("spoiled(F)", "closed(G)"), ("closed(G)", "queued(Q)")])


def test_an_edge_against_a_chain_is_reversed() -> None:
    rep = judge(BACK, CHAIN)
    assert len(rep.contradictions) == 1, rep.contradictions
    (c,) = rep.contradictions
    assert c.startswith("spoiled(F) causes closed(G) is reversed in the target")
    assert "closed(G) -> queued(Q) -> spoiled(F)" in c
    assert not rep.transfer


def test_a_chain_the_same_way_is_no_contradiction() -> None:
    short = sig("short", [("closed(G)", "spoiled(F)"), ("closed(G)", "queued(Q)")])
    assert judge(short, CHAIN).contradictions == ()


def test_a_target_loop_both_ways_is_no_contradiction() -> None:
    loop = sig("loop", [("closed(G)", "queued(Q)"), ("queued(Q)", "spoiled(F)"),
                        ("spoiled(F)", "failure(A)"), ("failure(A)", "closed(G)")])
    assert judge(BACK, loop).contradictions == ()


def test_a_source_loop_is_no_contradiction() -> None:
    loop = sig("loop", [("spoiled(F)", "closed(G)"), ("closed(G)", "queued(Q)"),
                        ("queued(Q)", "spoiled(F)")])
    assert not any("spoiled(F) causes closed(G)" in c for c in judge(loop, CHAIN).contradictions)
