"""A candidate whose best mapping aligns a causal edge of the target with one running the other
way (reversed, or of the opposite sign) is a contradiction, not a near-perfect analogue: it ranks
below a consistent cross-domain analogue that maps less of the target, and the contradiction is a
row of its difference table. Hand-written signatures: a kiln that overheats because its
thermocouple degraded, a server room where a degraded airflow sensor lets a fan overload (the
analogue, told with less structure), and two same-words kiln twins — one with the first causal
edge reversed, one with its sign flipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from analogist.errors import AnalogistError
from analogist.judge import judge
from analogist.memory.sqlite import Memory
from analogist.retrieve import RetrieveParams, Retriever
from analogist.signature import validate_signature

KILN = {"H": "kiln heater", "T": "thermocouple", "K": "kiln operator", "W": "glaze batch"}
SERVERS = {"H": "rack fan", "T": "airflow sensor", "K": "facilities engineer",
           "W": "storage array"}
RELS = [["measures", "T", "H"], ["depends_on", "K", "T"], ["supplies", "H", "W"],
        ["trusts_as_authoritative", "K", "T"]]


def edge(cause: str, effect: str, kind: str = "causes", sign: int = 1) -> dict:
    return {"cause": cause, "edge": kind, "effect": effect, "sign": sign, "status": "observed"}


CHAIN = [edge("degraded(T)", "overload(H)"), edge("overload(H)", "harmed(W)"),
         edge("trusts_as_authoritative(K,T)", "overload(H)", "enables")]


def sig(eid: str, roles: dict[str, str], rels: list, chain: list, domain: str):
    return validate_signature({
        "episode_id": eid, "kind": "failure", "roles": roles, "relations": rels,
        "causal_chain": chain, "surface": {"domain": domain, "entities": list(roles.values())}})


BASE = sig("kiln", KILN, RELS, CHAIN, "pottery")
# the same mechanism in another domain, told with less: two relations and two of the edges
ANALOGUE = sig("server_room", SERVERS, RELS[:2], CHAIN[:2], "datacentre")
# the kiln in the same words with the first edge reversed: the overload degrades the sensor
REVERSED = sig("kiln_reversed", KILN, RELS, [edge("overload(H)", "degraded(T)"), *CHAIN[1:]],
               "pottery")
# … and with the first edge's sign flipped: the degraded thermocouple keeps the heater from
# overloading
FLIPPED = sig("kiln_flipped", KILN, RELS, [edge("degraded(T)", "overload(H)", sign=-1),
                                           *CHAIN[1:]], "pottery")


def _find(path: Path, params: RetrieveParams | None = None, k: int = 5,
          stored=(ANALOGUE, REVERSED, FLIPPED)):
    with Memory.open(path) as m:
        for s in stored:
            m.add(s)
        return Retriever(m, params=params or RetrieveParams()).find(BASE, k=k).results


def test_the_twins_map_more_of_the_base_than_the_analogue(tmp_path: Path) -> None:
    # without the contradiction rule (no discount, no tier) both twins outscore the analogue:
    # this is the ranking the rule has to overturn
    flat = RetrieveParams(contradiction_discount=1.0, demote_contradicting=False)
    order = [h.episode_id for h in _find(tmp_path / "m.db", flat)]
    assert order.index("kiln_reversed") < order.index("server_room")
    assert order.index("kiln_flipped") < order.index("server_room")


def test_a_reversed_or_flipped_twin_ranks_below_the_consistent_analogue(tmp_path: Path) -> None:
    hits = _find(tmp_path / "m.db")
    assert [h.episode_id for h in hits][0] == "server_room"
    by = {h.episode_id: h for h in hits}
    assert not by["server_room"].report.contradictions
    for twin in ("kiln_reversed", "kiln_flipped"):
        assert by[twin].report.contradictions
        assert not by[twin].transfer and not by[twin].report.transfer_mechanism


def test_the_contradiction_is_a_row_of_the_difference_table(tmp_path: Path) -> None:
    by = {h.episode_id: h.to_json()["report"] for h in _find(tmp_path / "m.db")}
    rev, flip = by["kiln_reversed"], by["kiln_flipped"]
    assert ["overload(H) causes degraded(T)", "degraded(T) causes overload(H) (reversed)"] \
        in rev["differences"]
    assert rev["contradicted"] == [["overload(H) causes degraded(T)",
                                    "degraded(T) causes overload(H) (reversed)"]]
    assert not any("degraded" in u for u in rev["unknowns"])     # known: stated the other way
    assert ["degraded(T) causes overload(H)",
            "degraded(T) causes overload(H) (opposite sign)"] in flip["differences"]
    assert not any(s == "degraded(T) causes overload(H)" for s, _t in flip["likenesses"])
    assert by["server_room"]["contradicted"] == []


def test_a_flipped_edge_is_not_counted_as_covered() -> None:
    same, flipped = judge(BASE, BASE), judge(FLIPPED, BASE)
    stated = len(BASE.relations) + len(BASE.causal_chain)
    assert same.coverage == pytest.approx(1.0)
    assert flipped.coverage == pytest.approx((stated - 1) / stated)


def test_the_rendered_report_says_the_contradiction_once() -> None:
    text = judge(REVERSED, BASE).render()
    fails = next(line for line in text.splitlines() if line.startswith("FAILS"))
    assert fails.count("overload(H) causes degraded(T)") == 1
    assert "contradicted:" in fails


def test_an_analogue_outside_the_shortlist_is_mapped_when_k_asks_for_it(tmp_path: Path) -> None:
    # stage 1 prefers the same-words twins; a shortlist of one would map only one of them and
    # leave the analogue out of the answer altogether
    hits = _find(tmp_path / "m.db", RetrieveParams(shortlist=1), k=3)
    assert len(hits) == 3
    assert hits[0].episode_id == "server_room"


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_find_refuses_a_k_that_is_not_a_positive_whole_number(tmp_path: Path, bad) -> None:
    with pytest.raises(AnalogistError, match="k must be a positive whole number"):
        _find(tmp_path / "m.db", k=bad, stored=(ANALOGUE,))
