"""The OpenAI-compatible client, exercised over real HTTP against tests/chat_server.py."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.chat_server import ChatServer, Recorded, Reply

DATA = Path(__file__).parent / "data" / "llm"


# -- the chat server itself --------------------------------------------------------------------


def test_chat_server_serves_a_real_completion_and_models() -> None:
    with ChatServer([Reply.json({"a": 1}, usage=(7, 3))]) as srv:
        r = httpx.post(f"{srv.base_url}/chat/completions",
                       json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 200
        body = r.json()
        assert body["object"] == "chat.completion"
        assert body["choices"][0]["message"] == {"role": "assistant", "content": '{"a": 1}'}
        assert body["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
        models = httpx.get(f"{srv.base_url}/models").json()
        assert models["data"][0]["id"] == "test-model"
        assert srv.requests[0]["model"] == "m"


@pytest.mark.parametrize("body, needle", [
    ({"model": "", "messages": [{"role": "user", "content": "x"}]}, "model"),
    ({"model": "m", "messages": []}, "messages"),
    ({"model": "m", "messages": [{"role": "robot", "content": "x"}]}, "role"),
    ({"model": "m", "messages": [{"role": "user", "content": None}]}, "content"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 3}, "temperature"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "max_tokens"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True}, "stream"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "bogus": 1}, "bogus"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}, "name"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "xml"}}, "response_format"),
])
def test_chat_server_rejects_protocol_invalid_requests(body: dict, needle: str) -> None:
    with ChatServer([]) as srv:
        r = httpx.post(f"{srv.base_url}/chat/completions", json=body)
        assert r.status_code == 400
        err = r.json()["error"]
        assert err["type"] == "invalid_request_error"
        assert needle in err["message"]
        assert srv.calls == 0 and srv.rejected


def test_chat_server_without_json_schema_support_refuses_it() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "n", "schema": {"type": "object"}}}}
    with ChatServer([Reply.json({})], supports_json_schema=False) as srv:
        r = httpx.post(f"{srv.base_url}/chat/completions", json=body)
        assert r.status_code == 400
        assert "json_schema" in r.json()["error"]["message"]


def test_recorded_routes_by_schema_name_and_user_substring() -> None:
    rec = Recorded(DATA / "smoke.json")
    by_name = rec({"messages": [{"role": "user", "content": "?"}],
                   "response_format": {"type": "json_schema",
                                       "json_schema": {"name": "capital_answer", "schema": {}}}},
                  0)
    assert '"Paris"' in by_name.content
    by_text = rec({"messages": [{"role": "user", "content": "Summarise the episode: ..."}]}, 0)
    assert "seal" in by_text.content
    assert rec({"messages": [{"role": "user", "content": "nothing"}]}, 0).status == 400
