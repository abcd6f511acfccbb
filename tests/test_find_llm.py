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


def failing(kind: str):
    """A critic/parametric endpoint that fails in one of the ways a real one does."""
    def respond(req, _i):
        if kind == "unparseable":
            return Reply(content="I think the analogy is fine, roughly.")
        return Reply.error(503, "model is loading")
    return respond


@pytest.mark.parametrize("kind", ["http", "unparseable"])
def test_a_failing_critic_withholds_the_transfer(mem, kind):
    cfg = LLMConfig(base_url="http://x", model="critic-m", max_retries=1, repair_retries=1,
                    backoff_base_s=0.01, backoff_max_s=0.02)
    with ChatServer(failing(kind)) as srv, OpenAICompatibleClient(
            LLMConfig(**{**cfg.__dict__, "base_url": srv.base_url})) as cl:
        res = Retriever(mem, embedder=None).find(target(), critic=Critic(cl))
    h = res.results[0]
    assert h.report.critic["verdict"] == "failed"
    assert h.report.critic["reason"].startswith("critic failed: ")
    assert not h.transfer and h.report.verdict != "transfer"
    assert not h.report.transfer_mechanism
    assert any(b.startswith("critic failed: ") for b in h.report.blockers)
    text = res.render()
    assert "→ transfer" not in text and "(transfer" not in text
    assert "CRITIC    critic failed: " in text
    assert any("critic failed" in s for s in res.skipped)
    assert h.to_json()["transfer"] is False


def test_a_critic_that_timed_out_withholds_the_transfer(mem):
    with ChatServer([Reply.json({}, delay_s=2.0)] * 2) as srv, OpenAICompatibleClient(
            LLMConfig(base_url=srv.base_url, model="m", timeout_s=0.2)) as cl:
        res = Retriever(mem, embedder=None).find(target(), critic=Critic(cl))
    rep = res.results[0].report
    assert rep.critic["verdict"] == "failed" and "no answer within" in rep.critic["reason"]
    assert not rep.transfer


def test_a_failed_parametric_channel_is_reported_as_failed(mem):
    with ChatServer(failing("http")) as srv, OpenAICompatibleClient(
            LLMConfig(base_url=srv.base_url, model="m", max_retries=0)) as cl:
        res = Retriever(mem, embedder=None).find(
            target(), parametric=lambda t: propose_parametric(t, cl, k=1))
    assert res.parametric == ()
    assert any(s.startswith("parametric channel failed: ") for s in res.skipped)


def test_cli_find_with_a_failing_critic_never_says_transfer(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("ANALOGIST_CONFIG", raising=False)
    store, seed, tgt = tmp_path / "s.db", tmp_path / "seed.json", tmp_path / "t.json"
    seed.write_text(json.dumps(SEED))
    tgt.write_text(json.dumps(target()))
    r = CliRunner().invoke(app, ["add", str(seed), "--store", str(store), "--no-embed"])
    assert r.exit_code == 0, r.output
    with ChatServer(failing("http")) as srv:
        monkeypatch.setenv("ANALOGIST_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("ANALOGIST_LLM_MODEL", "m")
        monkeypatch.setenv("ANALOGIST_LLM_MAX_RETRIES", "0")
        text = CliRunner().invoke(app, ["find", str(tgt), "--store", str(store), "--critic"])
        js = CliRunner().invoke(app, ["find", str(tgt), "--store", str(store), "--critic",
                                      "--json"])
    assert text.exit_code == 0 and js.exit_code == 0, text.output + js.output
    assert "→ transfer" not in text.output and "(transfer" not in text.output
    assert "critic failed" in text.output
    d = json.loads(js.output)
    assert d["results"] and all(not h["transfer"] for h in d["results"])
    assert all(h["verdict"] != "transfer" for h in d["results"])


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
