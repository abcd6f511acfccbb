"""`find` with the independent critic and the labelled parametric channel, over a real SQLite
store and a real local chat-completions server (scripted replies); and without an LLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analogist.cli import app
from analogist.critic import Critic
from analogist.llm.client import OpenAICompatibleClient
from analogist.llm.config import LLMConfig
from analogist.memory.sqlite import Memory
from analogist.parametric import propose_parametric
from analogist.retrieve import Retriever
from analogist.signature import validate_signature
from tests.chat_server import ChatServer, Reply

HERE = Path(__file__).parent
SEED = json.loads((HERE / "data" / "seed_example_signature.json").read_text())
CRITIC = json.loads((HERE / "data" / "llm" / "critic_verdicts.json").read_text())
PARAM = json.loads((HERE / "data" / "llm" / "parametric_analogues.json").read_text())


def target() -> dict:
    """The seed episode's structure in another domain (a ledger), without its conclusion."""
    return {
        "episode_id": "ledger", "kind": "failure",
        "roles": {"ACC": "bank account", "TOT": "copied ledger total", "CLK": "clerk"},
        "relations": [["derives_from", "TOT", "ACC"], ["trusts_as_authoritative", "CLK", "TOT"],
                      ["skips_check", "CLK", "ACC"], ["diverges_from", "TOT", "ACC"]],
        "causal_chain": [],
        "surface": {"domain": "accounting", "entities": ["ledger"]},
    }


def responder(verdict: str):
    def respond(req, _i):
        name = req.get("response_format", {}).get("json_schema", {}).get("name")
        if name == "critic":
            return Reply.json(dict(CRITIC["critic"], verdict=verdict, confidence=0.8))
        if name == "parametric":
            return Reply.json(PARAM["parametric"])
        return Reply.error(400, f"unexpected schema {name!r}")
    return respond


@pytest.fixture
def mem(tmp_path):
    m = Memory.open(tmp_path / "s.db")
    m.add(validate_signature(SEED))
    yield m
    m.close()


def test_without_critic_the_analogue_transfers(mem):
    res = Retriever(mem, embedder=None).find(target())
    assert res.results and res.results[0].report.transfer
    assert res.results[0].report.critic is None


@pytest.mark.parametrize("verdict, transfers", [("reject", False), ("accept", True)])
def test_critic_verdict_attached_and_reject_withholds(mem, verdict, transfers):
    with ChatServer(responder(verdict)) as srv, \
            OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="critic-m")) as cl:
        res = Retriever(mem, embedder=None).find(target(), critic=Critic(cl))
        bodies = list(srv.requests)
    rep = res.results[0].report
    assert rep.critic["verdict"] == verdict
    assert rep.transfer is transfers
    assert "CRITIC" in rep.render()
    if verdict == "reject":
        assert any(b.startswith("critic:") for b in rep.blockers)
        assert all(c.status != "transfer" for c in rep.conclusions)
    # information separation: the critic never sees the judge's table or the mapper's score
    sent = json.dumps(bodies)
    for leak in ("likenesses", "normalized_score", "blockers", "PREDICT", "MATCHES"):
        assert leak not in sent


def test_parametric_channel_is_labelled_and_apart(mem):
    with ChatServer(responder("accept")) as srv, \
            OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="m")) as cl:
        res = Retriever(mem, embedder=None).find(
            target(), parametric=lambda t: propose_parametric(t, cl, k=3))
    assert res.parametric, "the scripted model proposed analogues"
    assert all(p["label"] == "parametric" for p in res.parametric)
    assert {h.episode_id for h in res.results} == {SEED["episode_id"]}   # memory hits only
    js = res.to_json()
    assert js["parametric"] and all("report" in p for p in js["parametric"])
    assert "PARAMETRIC" in res.render()


def test_cli_find_says_critic_and_parametric_were_skipped(tmp_path, monkeypatch):
    for k in ("ANALOGIST_LLM_BASE_URL", "ANALOGIST_LLM_MODEL", "ANALOGIST_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    store = tmp_path / "s.db"
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED))
    tgt = tmp_path / "t.json"
    tgt.write_text(json.dumps(target()))
    r = CliRunner().invoke(app, ["add", str(seed), "--store", str(store), "--no-embed"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["find", str(tgt), "--store", str(store), "--json",
                                 "--parametric"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert any(s.startswith("critic: skipped: no LLM configured") for s in d["skipped"])
    assert any(s.startswith("parametric channel: skipped: no LLM") for s in d["skipped"])
    assert d["parametric"] == []
    assert d["results"][0]["report"]["critic"] is None
