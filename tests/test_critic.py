"""The independent critic, through the real local chat-completions server (tests/chat_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analogist.critic import Critic, CriticVerdict, critic_or_skip, signature_view
from analogist.errors import AnalogistError
from analogist.judge import judge
from analogist.llm.base import NO_LLM_REASON, LLMNotConfigured, LLMResponseError
from analogist.llm.client import OpenAICompatibleClient
from analogist.llm.config import LLMConfig
from analogist.signature import load_signature, validate_signature
from tests.chat_server import ChatServer, Recorded, Reply

DATA = Path(__file__).parent / "data"
REPLIES = DATA / "llm" / "critic_verdicts.json"

SOURCE = load_signature(DATA / "seed_example_signature.json")
TARGET = validate_signature({
    "episode_id": "ledger-1", "kind": "failure",
    "roles": {"ACC": "account of record", "COPY": "copied ledger total",
              "CLERK": "clerk who reports the balance", "TTL": "expiry timer on the copy"},
    "relations": [["derives_from", "COPY", "ACC"], ["trusts_as_authoritative", "CLERK", "COPY"],
                  ["skips_check", "CLERK", "ACC"], ["expires", "COPY", "TTL"]],
    "causal_chain": [["skips_check(CLERK,ACC)", "enables", "false_claim(CLERK)"],
                     ["expires(COPY,TTL)", "prevents", "stale(COPY)"]],
    "levels": {"L0": "The clerk quoted the copied ledger total to the auditor.",
               "L2": "Derived copy trusted; a timer limits its age."},
    "surface": {"domain": "accounting", "entities": ["ledger", "auditor"]},
})


def client(srv: ChatServer) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="critic-model",
                                            max_retries=0, timeout_s=10))


def scripted(name: str) -> list[Reply]:
    return [Reply.json(x) for x in json.loads(REPLIES.read_text())[name]]


@pytest.fixture(scope="module")
def report():
    return judge(SOURCE, TARGET)


def test_review_sees_only_signatures_and_mapping(report):
    role_map = dict(report.role_map)
    assert role_map  # the judge mapped something
    with ChatServer(Recorded(REPLIES)) as srv, client(srv) as c:
        v = Critic(c).review(SOURCE, TARGET, role_map)
        (req,) = srv.requests
    body = json.dumps(req, ensure_ascii=False)
    user = req["messages"][-1]["content"]
    # the two signatures' structure and the mapping are there
    for s, t in role_map.items():
        assert f'"{s}": "{t}"' in user
    assert "derives_from(DER,SRC)" in user and "expires(COPY,TTL)" in user
    assert "Proxy mistaken for referent" in user  # L3 of the source
    assert "<analogy>" in user and user.rstrip().endswith("</analogy>")
    # nothing from the judge: no report text, table, scores or verdict
    rendered = report.render()
    for line in rendered.splitlines():
        assert line not in body
    for marker in ("ANALOGY", "MATCHES", "BLOCKERS", "likenesses", "differences", "unknowns",
                   "coverage", "normalized_score", "transfer_mechanism", "conclusions",
                   f"{report.score:.3f}", report.verdict):
        assert marker not in body
    # no surface text (our stated choice): no L0, no domain or entity names
    assert "Intel feed" not in body and "auditor" not in body and "accounting" not in body
    assert v.verdict == "reject" and v.strongest_disanalogy.startswith("The target's copy")
    assert v.breaks == ["diverges_from(DER,SRC) has no evidence in the target"]
    assert v.confidence == 1.0 and v.model == "critic-model"
    assert v.usage["calls"] == 1
    out = v.to_json()
    assert out["verdict"] == "reject" and out["reason"] is None


def test_critic_verdict_feeds_judge(report):
    from analogist.judge import with_critic

    with ChatServer(Recorded(REPLIES)) as srv, client(srv) as c:
        v = critic_or_skip(c, SOURCE, TARGET, dict(report.role_map))
    rep = with_critic(report, v)
    assert rep.critic["verdict"] == "reject" and not rep.transfer_mechanism


@pytest.mark.parametrize("script", ["sequence_blank_then_named", "sequence_empty_then_named"])
def test_empty_disanalogy_is_repaired(report, script):
    with ChatServer(scripted(script)) as srv, client(srv) as c:
        v = Critic(c).review(SOURCE, TARGET, dict(report.role_map))
        assert len(srv.requests) == 2
        assert srv.requests[1]["messages"][-2]["role"] == "assistant"
    assert v.strongest_disanalogy.strip()
    assert v.usage["calls"] + v.usage["repairs"] >= 1


def test_blank_disanalogy_twice_is_an_error(report):
    with (ChatServer(scripted("sequence_always_blank")) as srv, client(srv) as c,
          pytest.raises(LLMResponseError, match="strongest disanalogy")):
        Critic(c).review(SOURCE, TARGET, dict(report.role_map))


def test_bad_role_map_names_the_role():
    with ChatServer([]) as srv, client(srv) as c:
        with pytest.raises(AnalogistError, match="NOPE"):
            Critic(c).review(SOURCE, TARGET, {"NOPE": "ACC"})
        with pytest.raises(AnalogistError, match="ZZZ"):
            Critic(c).review(SOURCE, TARGET, {"SRC": "ZZZ"})
        assert srv.requests == []


def test_skipped_without_llm():
    v = critic_or_skip(None, SOURCE, TARGET, {"SRC": "ACC"})
    assert v.verdict == "skipped" and v.reason == NO_LLM_REASON
    assert v.to_json()["reason"] == NO_LLM_REASON
    assert CriticVerdict.skipped().verdict == "skipped"
    with pytest.raises(LLMNotConfigured):
        Critic(None)


def test_signature_view_has_no_surface():
    view = signature_view(SOURCE)
    assert "L0" not in view and "L1" not in view and "surface" not in view
    assert "verified" not in view and "episode_id" not in view
    assert view["L2"] and view["L3"]
