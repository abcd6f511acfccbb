"""Ranking respects causal direction: a mapped structure the target states the other way round
counts against the candidate (hand-written signatures of a story, its cross-domain partner and
its same-domain minimal pair with one causal edge reversed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analogist.errors import AnalogistError
from analogist.memory.sqlite import Memory
from analogist.retrieve import RetrieveParams, Retriever
from analogist.signature import validate_signature

RELS = [["derives_from", "D", "S"], ["trusts_as_authoritative", "C", "D"],
        ["skips_check", "C", "S"], ["diverges_from", "D", "S"]]


def sig(eid: str, roles: dict[str, str], chain: list, domain: str):
    return validate_signature({
        "episode_id": eid, "kind": "failure", "roles": roles, "relations": RELS,
        "causal_chain": chain, "surface": {"domain": domain, "entities": list(roles.values())}})


CHAIN = [["diverges_from(D,S)", "causes", "false_claim(C)"],
         ["false_claim(C)", "causes", "failure(C)"]]
STORY = sig("story", {"S": "warehouse stock", "D": "shelf count sheet", "C": "store clerk"},
            CHAIN, "retail")
PARTNER = sig("partner", {"S": "river gauge", "D": "copied flood table", "C": "dam operator"},
              CHAIN, "hydrology")
# same domain and words as the story; the first causal edge is reversed
MINIMAL = sig("minimal", {"S": "warehouse stock", "D": "shelf count sheet", "C": "store clerk"},
              [["false_claim(C)", "causes", "diverges_from(D,S)"],
               ["false_claim(C)", "causes", "failure(C)"]], "retail")


def _find(tmp_path: Path, params: RetrieveParams):
    with Memory.open(tmp_path / "m.db") as m:
        for s in (PARTNER, MINIMAL):
            m.add(s)
        return {h.episode_id: h for h in Retriever(m, params=params).find(STORY).results}


def test_reversed_edge_is_a_contradiction_and_ranks_below_the_partner(tmp_path: Path) -> None:
    hits = _find(tmp_path, RetrieveParams())
    assert hits["minimal"].report.contradictions
    assert not hits["partner"].report.contradictions
    assert hits["partner"].score > hits["minimal"].score
    assert not hits["minimal"].report.transfer_mechanism


def test_the_discount_is_the_ranking_change(tmp_path: Path) -> None:
    (tmp_path / "off").mkdir()
    off = _find(tmp_path / "off", RetrieveParams(contradiction_discount=1.0))
    on = _find(tmp_path, RetrieveParams(contradiction_discount=0.5))
    n = len(on["minimal"].report.contradictions)
    assert on["minimal"].score == pytest.approx(off["minimal"].score * 0.5 ** n)
    assert on["partner"].score == pytest.approx(off["partner"].score)


def test_discount_bounds() -> None:
    for bad in (-0.1, 1.5, True, "x"):
        with pytest.raises(AnalogistError, match="contradiction_discount"):
            RetrieveParams(contradiction_discount=bad)


# a partner that maps only part of the story (two of its four relations, one of its three edges)
# and a minimal pair that maps all of it but for one reversed edge: the minimal pair has the
# higher discounted score
WEAK_PARTNER = validate_signature({
    "episode_id": "weak_partner", "kind": "failure",
    "roles": {"S": "river gauge", "D": "copied flood table", "C": "dam operator"},
    "relations": RELS[:2], "causal_chain": CHAIN[1:],
    "surface": {"domain": "hydrology", "entities": ["river gauge", "copied flood table"]}})
RICH_MINIMAL = sig("rich_minimal", {"S": "warehouse stock", "D": "shelf count sheet",
                                    "C": "store clerk"},
                   [["false_claim(C)", "causes", "diverges_from(D,S)"],
                    ["false_claim(C)", "causes", "failure(C)"],
                    ["skips_check(C,S)", "causes", "false_claim(C)"]], "retail")
STORY3 = sig("story3", {"S": "warehouse stock", "D": "shelf count sheet", "C": "store clerk"},
             [*CHAIN, ["skips_check(C,S)", "causes", "false_claim(C)"]], "retail")


def _order(tmp_path: Path, params: RetrieveParams) -> list[str]:
    with Memory.open(tmp_path / "m.db") as m:
        for s in (WEAK_PARTNER, RICH_MINIMAL):
            m.add(s)
        return [h.episode_id for h in Retriever(m, params=params).find(STORY3, k=5).results]


def test_a_contradicting_candidate_ranks_below_every_consistent_one(tmp_path: Path) -> None:
    (tmp_path / "score").mkdir()
    by_score = _order(tmp_path / "score", RetrieveParams(demote_contradicting=False))
    assert by_score == ["rich_minimal", "weak_partner"]       # the discount alone is not enough
    assert _order(tmp_path, RetrieveParams()) == ["weak_partner", "rich_minimal"]


def test_demote_contradicting_is_a_boolean() -> None:
    with pytest.raises(AnalogistError, match="demote_contradicting"):
        RetrieveParams(demote_contradicting=1)
