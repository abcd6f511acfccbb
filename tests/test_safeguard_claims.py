"""The safeguard's claim reader (issue 16): every verdict of tests/data/safeguard/claim_turns.yaml
(cue-less causal similarities count, keyword-stuffed ones do not, restatements count once,
English and Chinese, strict and advisory), the claims read from single items (participants,
direction, negation), and bad input for `analogist check`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from analogist.cli import app
from analogist.errors import AnalogistError
from analogist.safeguard import (
    Safeguard,
    Turn,
    assess_difference,
    assess_similarity,
    load_turn,
    parse_turn,
)
from analogist.safeguard.claims import ClaimReaderParams, read_claims, restates

DATA = Path(__file__).parent / "data" / "safeguard"
CASES = yaml.safe_load((DATA / "claim_turns.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sg() -> Safeguard:
    return Safeguard(encode_text=False)


def test_the_turn_set_covers_what_it_must():
    assert len(CASES) >= 40
    ids = [c["id"] for c in CASES]
    assert len(set(ids)) == len(ids)
    kinds = [c["kind"] for c in CASES]
    assert kinds.count("cueless") >= 10 and kinds.count("stuffed") >= 10
    zh = [c for c in CASES if c["id"].startswith(("zh_", "text_zh", "adv_zh"))]
    assert len(zh) >= 12
    assert sum(1 for c in CASES if "historical_wisdom" in (c.get("turn") or {})) >= 8
    assert sum(1 for c in CASES if "arguments" in (c.get("turn") or {})) >= 25
    assert sum(1 for c in CASES if "text" in c) >= 6
    # both verdicts occur for both kinds of probe, so a reader that always says yes (or no) fails
    for kind in ("cueless", "stuffed"):
        verdicts = {a["pass"] for c in CASES if c["kind"] != kind
                    for a in c["expect"]["analogies"]}
        assert verdicts == {True, False}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_verdict(case: dict[str, Any], sg: Safeguard):
    turn = case["text"] if "text" in case else parse_turn(case["turn"])
    r = sg.check(turn, mode=case.get("mode"))
    exp = case["expect"]["analogies"]
    assert len(r.analogies) == len(exp), [a.reasons for a in r.analogies]
    for a, e in zip(r.analogies, exp, strict=True):
        assert a.passed is e["pass"], a.reasons
        if "grade" in e:
            assert a.grade == e["grade"], a.reasons
        if not a.passed:
            assert a.recommendations


# -- single items ------------------------------------------------------------------------------

def test_which_clause_is_a_causal_claim():
    a = assess_similarity("the company took over the state's debt, which expanded its share "
                          "issue far beyond its trade")
    assert a.ok, a.reason
    (c,) = [c for c in a.claims if c.verb == "expanded"]
    assert c.causal and not c.negated and c.status == "structural"
    # the small parser attaches "which" to the nearest noun: the debt expanded the share issue
    assert c.cause == "the state's debt" and "share issue" in (c.effect or "")


def test_passive_direction_and_restatement():
    (act,) = [c for c in read_claims("in both, a rumour triggered the run") if c.counts]
    (pas,) = [c for c in read_claims("in both cases the run was triggered by a rumour")
              if c.counts]
    assert (act.cause, act.effect) == ("a rumour", "the run")
    assert (pas.cause, pas.effect) == ("a rumour", "the run")
    assert restates(act, pas)
    other = [c for c in read_claims("in both, high leverage amplified small price falls")
             if c.counts]
    assert not any(restates(act, o) for o in other)


@pytest.mark.parametrize("text,status", [
    ("in both, one thing caused another", "placeholder"),
    ("both had causes that led to effects", "placeholder"),
    ("both involve leverage and speculation", "topic"),
    ("in both, fraud did not cause the collapse", "negated"),
    ("both banks were owned by a holding company", "noncausal"),
    ("in both, the president visited the stock exchange", "surface"),
    ("in both, the CEO bought a yacht", "event"),  # an act that maps onto no term
    ("in both, the king married a foreign princess", "event"),
    ("两者都是一件事导致了另一件事", "placeholder"),
    ("两者都涉及杠杆和监管", "topic"),
    ("两者的崩溃都不是由欺诈引起的", "negated"),
    ("都发生在秋天", "surface"),
])
def test_items_that_state_no_shared_relation(text, status):
    a = assess_similarity(text)
    assert not a.ok, a.reason
    assert status in {c.status for c in a.claims} or (status == "surface" and
                                                        "surface" in a.reason)


@pytest.mark.parametrize("text", [
    "cheap loans pushed land prices far beyond what rents could justify",
    "every big dealer had lent to the fund, so its failure threatened all of them at once",
    "when the central bank raised rates, land prices fell",
    "低利率推高了地价",
    "地价下跌后，借款人资不抵债，银行坏账激增",
    "一家基金的亏损迫使贷款银行抛出同样的债券",
    "政府大量印钞，物价随之飞涨",
])
def test_causal_items_without_cue_words(text):
    a = assess_similarity(text)
    assert a.ok, a.reason
    assert any(c.causal and c.cause and c.effect for c in a.claims)


def test_cue_less_claims_are_mapped_onto_the_vocabulary():
    (c, *_) = [c for c in read_claims("cheap loans pushed land prices far beyond what rents "
                                      "could justify") if c.counts]
    assert c.relation and c.relation_kind in ("mechanism", "relation")
    assert c.similarity is not None and 0.3 <= c.similarity <= 1.0


@pytest.mark.parametrize("text,ok", [
    ("the difference lies in the mechanism and the structure", False),
    ("the structure and the mechanism are different", False),
    ("this time the lenders kept the loans on their own books, so they bore the losses", True),
    ("这次贷款都留在银行自己的账上，损失由银行自己承担", True),
])
def test_differences(text, ok):
    assert assess_difference(text).ok is ok


def test_params_are_validated():
    with pytest.raises(ValueError, match="restate_cosine"):
        ClaimReaderParams(restate_cosine=1.5)


# -- bad input -----------------------------------------------------------------------------------

def test_unknown_top_level_key_names_the_valid_ones():
    with pytest.raises(AnalogistError, match=r"t\.json, field argumentz: unknown top-level key "
                                             r"'argumentz'; expected 'arguments' and/or "
                                             r"'historical_wisdom'"):
        parse_turn({"argumentz": []}, source="t.json")
    with pytest.raises(AnalogistError, match="nested 100 levels deep"):
        load_turn("[" * 100 + "]" * 100, source="d.json")
    # brackets inside strings are text, not nesting
    deep_text = '{"arguments": [{"text": "' + "[" * 100 + '"}]}'
    assert isinstance(load_turn(deep_text), Turn)


@pytest.mark.parametrize("name,content,message", [
    ("typo.json", b'{"argumentz": []}', "unknown top-level key 'argumentz'; expected "
                                        "'arguments' and/or 'historical_wisdom'"),
    ("typo.yaml", b"arguments: []\nhistorical_wisdon: []\n", "unknown top-level key"),
    ("empty.json", b"", "the input is empty"),
    ("blank.txt", b" \n\t\n", "the input is empty"),
    ("bin.json", b"\x00\x01\x02binary", "NUL bytes"),
    ("latin.txt", b"caf\xe9 \xff", "not valid UTF-8"),
    ("deep.json", b"[" * 50_000 + b"]" * 50_000, "nested 50000 levels deep"),
    ("deep.yaml", b"a: " + b"[" * 50_000 + b"]" * 50_000, "nested 50000 levels deep"),
    ("big.json", b'{"arguments": [' + b'"x",' * 1_100_000 + b'"x"]}', "over the limit"),
])
def test_check_refuses_bad_files_in_one_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    r = CliRunner().invoke(app, ["check", str(path)])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and message in lines[0], r.output
    assert "Traceback" not in r.output


def test_check_refuses_binary_stdin():
    r = CliRunner().invoke(app, ["check", "-"], input=b"abc\x00def")
    assert r.exit_code == 2 and "<stdin>, line 1: contains NUL bytes" in r.output
