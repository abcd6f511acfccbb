"""The judge: likeness / difference / unknown table, causal-path gate, blockers, prediction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analogist.errors import AnalogistError
from analogist.judge import JudgeParams, judge
from analogist.signature import load_signature, validate_signature

SEED = load_signature(Path(__file__).parent / "data" / "seed_example_signature.json")


def ledger(**changes) -> object:
    """The seed's ledger case: same mechanism as the seed example, another surface."""
    data = {
        "episode_id": "ledger",
        "kind": "failure",
        "roles": {"ACC": "bank account (authoritative)", "TOT": "copied ledger total",
                  "CLK": "clerk who reports the balance"},
        "relations": [["derives_from", "TOT", "ACC"], ["trusts_as_authoritative", "CLK", "TOT"],
                      ["skips_check", "CLK", "ACC"]],
        "causal_chain": [],
        "fix_operator": "reconcile(CLK, TOT, ACC) before reporting",
    }
    data.update(changes)
    return validate_signature(data)


def test_seed_format_and_partial_transfer() -> None:
    """The seed §8 example: mechanism transfers, the conclusion does not (its cause is
    unknown in the target), and the prediction is that cause."""
    target = ledger(causal_chain=[["skips_check(CLK,ACC)", "enables", "false_claim(CLK)"]])
    rep = judge(SEED, target)
    assert rep.role_map == {"CON": "CLK", "DER": "TOT", "SRC": "ACC"}
    assert rep.n_matched_relations == 3 and rep.n_source_relations == 4
    assert "diverges_from(TOT,ACC)" in rep.unknowns
    (concl,) = rep.conclusions
    assert concl.source == "false_claim(CON)" and concl.status == "holds"
    # the conclusion's other cause is unknown: the judge names it as the prediction
    assert rep.transfer_mechanism
    assert rep.mechanism == "reconcile(CLK, TOT, ACC) before assert"
    assert rep.prediction is not None and "diverges_from(TOT,ACC)" in rep.prediction.observable
    text = rep.render()
    for head in ("ANALOGY", "MAPPED", "MATCHES", "FAILS", "BLOCKERS", "TRANSFER", "PREDICT",
                 "CHECK"):
        assert any(line.startswith(head) for line in text.splitlines()), head
    assert "DER→TOT" in text
    json.dumps(rep.to_json())


def test_conclusion_withheld_when_its_cause_is_unknown() -> None:
    rep = judge(SEED, ledger())
    (concl,) = rep.conclusions
    assert concl.status == "withheld"
    assert concl.projected == "false_claim(CLK)"
    assert any("diverges_from(TOT,ACC) unknown in target" in r for r in concl.reasons)
    assert not rep.transfer
    assert rep.verdict == "mechanism transfers; conclusion withheld"
    assert rep.prediction.source == "diverges_from(DER,SRC)"
    assert "observe diverges_from between TOT" in rep.prediction.check


def test_conclusion_transfers_when_its_causes_are_mapped() -> None:
    target = ledger(relations=[["derives_from", "TOT", "ACC"],
                               ["trusts_as_authoritative", "CLK", "TOT"],
                               ["skips_check", "CLK", "ACC"], ["diverges_from", "TOT", "ACC"]])
    rep = judge(SEED, target)
    (concl,) = rep.conclusions
    assert concl.status == "transfer", concl.reasons
    assert rep.transfer and rep.verdict == "transfer"
    assert rep.prediction is not None
    assert "false_claim(CLK)" in rep.prediction.observable


def test_target_preventer_blocks_the_conclusion() -> None:
    target = ledger(
        roles={"ACC": "bank account", "TOT": "copied total", "CLK": "clerk",
               "AUD": "nightly automatic reconciliation"},
        relations=[["derives_from", "TOT", "ACC"], ["trusts_as_authoritative", "CLK", "TOT"],
                   ["skips_check", "CLK", "ACC"], ["diverges_from", "TOT", "ACC"],
                   ["reconciles", "AUD", "TOT"]],
        causal_chain=[["reconciles(AUD,TOT)", "prevents", "false_claim(CLK)"]])
    rep = judge(SEED, target)
    assert any("preventer absent in source" in b for b in rep.blockers)
    (concl,) = rep.conclusions
    assert concl.status == "withheld"
    assert not rep.transfer


def test_inferred_supporting_link_is_not_enough() -> None:
    source = validate_signature({
        "episode_id": "chain", "kind": "failure",
        "roles": {"A": "a", "B": "b", "C": "c"},
        "relations": [["depends_on", "B", "A"], ["depends_on", "C", "B"]],
        "causal_chain": [
            {"cause": "outage(A)", "edge": "causes", "effect": "outage(B)", "status": "inferred"},
            ["outage(B)", "causes", "outage(C)"]],
    })
    target = validate_signature({
        "episode_id": "chain2", "kind": "failure",
        "roles": {"X": "x", "Y": "y", "Z": "z"},
        "relations": [["depends_on", "Y", "X"], ["depends_on", "Z", "Y"]],
        "causal_chain": [["outage(X)", "causes", "outage(Y)"]],
    })
    rep = judge(source, target)
    (concl,) = rep.conclusions
    assert concl.projected == "outage(Z)"
    assert concl.status == "withheld"
    assert any("inferred" in r for r in concl.reasons)
    observed = source.model_copy(update={"causal_chain": [
        source.causal_chain[0].model_copy(update={"status": "observed"}),
        source.causal_chain[1]]})
    rep2 = judge(observed, target)
    assert rep2.conclusions[0].status == "transfer", rep2.conclusions[0].reasons


def test_decoy_with_reversed_edge_does_not_transfer() -> None:
    decoy = ledger(
        relations=[["derives_from", "ACC", "TOT"], ["trusts_as_authoritative", "CLK", "ACC"]],
        causal_chain=[["false_claim(CLK)", "causes", "diverges_from(ACC,TOT)"]])
    rep = judge(SEED, decoy)
    assert not rep.transfer
    analogue = ledger(
        relations=[["derives_from", "TOT", "ACC"], ["trusts_as_authoritative", "CLK", "TOT"],
                   ["skips_check", "CLK", "ACC"], ["diverges_from", "TOT", "ACC"]],
        causal_chain=[["diverges_from(TOT,ACC)", "causes", "false_claim(CLK)"]])
    assert rep.normalized_score < judge(SEED, analogue).normalized_score


def test_judge_params_are_validated() -> None:
    with pytest.raises(AnalogistError):
        JudgeParams(mechanism_threshold=2.0)


def test_report_is_deterministic() -> None:
    a = json.dumps(judge(SEED, ledger()).to_json())
    b = json.dumps(judge(SEED, ledger()).to_json())
    assert a == b


def test_matches_line_names_relations_only() -> None:
    target = ledger(relations=[["derives_from", "TOT", "ACC"],
                               ["trusts_as_authoritative", "CLK", "TOT"],
                               ["skips_check", "CLK", "ACC"], ["diverges_from", "TOT", "ACC"]],
                    causal_chain=[["diverges_from(TOT,ACC)", "causes", "false_claim(CLK)"]])
    line = next(x for x in judge(SEED, target).render().splitlines() if x.startswith("MATCHES"))
    assert "false_claim" not in line and "(4/4 source relations)" in line


def _analogue(**changes):
    base = dict(
        relations=[["derives_from", "TOT", "ACC"], ["trusts_as_authoritative", "CLK", "TOT"],
                   ["skips_check", "CLK", "ACC"], ["diverges_from", "TOT", "ACC"]],
        causal_chain=[["diverges_from(TOT,ACC)", "causes", "false_claim(CLK)"],
                      ["skips_check(CLK,ACC)", "enables", "false_claim(CLK)"]])
    base.update(changes)
    return ledger(**base)


def test_a_faithful_analogue_has_no_contradictions() -> None:
    rep = judge(SEED, _analogue())
    assert rep.contradictions == ()
    assert rep.transfer_mechanism


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"causal_chain": [["false_claim(CLK)", "causes", "diverges_from(TOT,ACC)"],
                           ["skips_check(CLK,ACC)", "enables", "false_claim(CLK)"]]},
         "reversed"),
        ({"causal_chain": [["diverges_from(TOT,ACC)", "prevents", "false_claim(CLK)"],
                           ["skips_check(CLK,ACC)", "enables", "false_claim(CLK)"]]},
         "is prevents in the target"),
        ({"relations": [["derives_from", "ACC", "TOT"], ["trusts_as_authoritative", "CLK", "TOT"],
                        ["skips_check", "CLK", "ACC"], ["diverges_from", "TOT", "ACC"]]},
         "roles swapped"),
    ],
)
def test_minimal_pair_edits_are_contradictions(change: dict, needle: str) -> None:
    rep = judge(SEED, _analogue(**change))
    assert any(needle in c for c in rep.contradictions), rep.contradictions
    assert not rep.transfer_mechanism and not rep.transfer
    assert "contradicted:" in rep.render()
