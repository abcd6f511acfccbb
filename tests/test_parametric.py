"""The labelled parametric channel, through the real local chat-completions server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analogist.errors import AnalogistError
from analogist.judge import judge
from analogist.llm.base import NO_LLM_REASON
from analogist.llm.client import OpenAICompatibleClient
from analogist.llm.config import LLMConfig
from analogist.parametric import ParametricAnalogue, ParametricResult, propose_parametric
from analogist.signature import Signature, load_signature
from tests.chat_server import ChatServer, Recorded

DATA = Path(__file__).parent / "data"
TARGET = load_signature(DATA / "seed_example_signature.json")


def client(srv: ChatServer) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="test-model",
                                            max_retries=0, timeout_s=10))


@pytest.fixture(scope="module")
def result():
    with ChatServer(Recorded(DATA / "llm" / "parametric_analogues.json")) as srv, \
            client(srv) as c:
        res = propose_parametric(TARGET, c, k=3)
        return res, list(srv.requests)


def test_analogues_are_labelled_and_judgeable(result):
    res, _ = result
    assert res.skipped is None and res.label == "parametric"
    assert len(res.analogues) == 2  # the third has no valid role
    assert any("analogues[2] dropped" in n for n in res.notes)
    for n, a in enumerate(res.analogues):
        assert a.label == "parametric"
        assert isinstance(a.signature, Signature)
        assert a.signature.episode_id.startswith(f"parametric-{n}-")
        assert a.signature.provenance.writer == "llm:test-model"
        assert a.signature.verified is False
        assert a.to_json()["label"] == "parametric"
    first = res.analogues[0]
    assert first.title == "Stale map used for navigation" and first.domain == "hiking"
    assert first.mapping == {"SRC": "SURVEY", "DER": "MAP", "CON": "HIKER"}
    assert first.entities["MAP"] == "printed trail map"
    assert first.mechanism.startswith("A derived copy")
    rep = judge(first.signature, TARGET)  # judged like any retrieved source
    assert rep.role_map == {"SURVEY": "SRC", "MAP": "DER", "HIKER": "CON"}
    second = res.analogues[1]
    assert second.signature.kind == "event" and "CON" not in second.mapping
    assert [a.predicate for a in second.signature.relations] == ["proxies_for"]
    assert res.usage["calls"] == 1


def test_request_shows_structure_not_surface(result):
    _, reqs = result
    (req,) = reqs
    assert req["response_format"]["json_schema"]["name"] == "parametric"
    user = req["messages"][-1]["content"]
    assert "<target>" in user and "derives_from(DER,SRC)" in user
    assert "Intel feed" not in user and "monitoring" not in user  # no L0 / surface
    assert "up to 3 analogues" in req["messages"][0]["content"]


def test_deterministic_ids(result):
    res, _ = result
    with ChatServer(Recorded(DATA / "llm" / "parametric_analogues.json")) as srv, \
            client(srv) as c:
        again = propose_parametric(TARGET, c, k=1)
    assert len(again.analogues) == 1 and any("kept the first 1" in n for n in again.notes)
    assert again.analogues[0].signature.episode_id == res.analogues[0].signature.episode_id


def test_skipped_without_llm_and_bad_k():
    res = propose_parametric(TARGET, None)
    assert isinstance(res, ParametricResult)
    assert res.skipped == NO_LLM_REASON and res.analogues == []
    assert json.loads(json.dumps(res.to_json()))["skipped"] == NO_LLM_REASON
    with pytest.raises(AnalogistError, match="k must be"):
        propose_parametric(TARGET, object(), k=0)  # type: ignore[arg-type]
    with pytest.raises(AnalogistError, match="labelled"):
        ParametricAnalogue("t", "d", "x", {}, "m", TARGET, label="memory")
