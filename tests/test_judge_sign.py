"""A mapped causal edge whose partner has the opposite sign is a contradiction, like a reversed
edge: hand-written signatures of a brewing story, its cross-domain partner (a kitchen proving
dough) and its minimal pair with the one edge's sign flipped."""

from __future__ import annotations

from pathlib import Path

from analogist.judge import judge
from analogist.memory.sqlite import Memory
from analogist.retrieve import Retriever
from analogist.signature import validate_signature

RELS = [["depends_on", "Y", "T"], ["observes", "B", "T"]]


def sig(eid: str, roles: dict[str, str], sign: int, domain: str,
        edge: str = "causes"):
    return validate_signature({
        "episode_id": eid, "kind": "failure", "roles": roles, "relations": RELS,
        "causal_chain": [{"cause": "degraded(T)", "edge": edge, "effect": "overload(Y)",
                          "sign": sign, "status": "observed"},
                         {"cause": "overload(Y)", "edge": "causes", "effect": "failure(B)",
                          "sign": 1, "status": "observed"}],
        "surface": {"domain": domain, "entities": list(roles.values())}})


BREW = {"T": "cellar thermostat", "Y": "yeast", "B": "brewer"}
STORY = sig("story", BREW, 1, "brewery")
PARTNER = sig("partner", {"T": "oven dial", "Y": "dough", "B": "baker"}, 1, "kitchen")
FLIPPED = sig("flipped", BREW, -1, "brewery")


def test_the_same_sign_is_no_contradiction() -> None:
    rep = judge(STORY, PARTNER)
    assert rep.contradictions == ()


def test_an_opposite_sign_on_a_mapped_edge_is_a_contradiction() -> None:
    rep = judge(STORY, FLIPPED)
    assert len(rep.contradictions) == 1, rep.contradictions
    (c,) = rep.contradictions
    assert "degraded(T) causes overload(Y)" in c and "(negative)" in c and "opposite sign" in c
    assert not rep.transfer
    assert "contradicted:" in rep.render()
    # and from the other side
    back = judge(FLIPPED, STORY)
    assert any("opposite sign" in x for x in back.contradictions)


def test_causes_against_prevents_on_the_same_ends_is_a_contradiction() -> None:
    rep = judge(STORY, sig("prevents", BREW, 1, "brewery", edge="prevents"))
    assert any("is prevents in the target" in c for c in rep.contradictions), \
        rep.contradictions


def test_the_flipped_pair_ranks_below_the_partner(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db") as m:
        for s in (PARTNER, FLIPPED):
            m.add(s)
        results = Retriever(m).find(STORY).results
    hits = {h.episode_id: h for h in results}
    assert hits["flipped"].report.contradictions
    assert not hits["partner"].report.contradictions
    assert [h.episode_id for h in results][:2] == ["partner", "flipped"]
    assert hits["partner"].score > hits["flipped"].score
