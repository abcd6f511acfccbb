"""The OpenAI-compatible client, exercised over real HTTP against tests/chat_server.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from analogist.errors import AnalogistError
from analogist.llm import (
    LLMBudgetExceeded,
    LLMConfig,
    LLMError,
    LLMProvider,
    LLMResponseError,
    LLMTimeout,
    OpenAICompatibleClient,
    ResponseCache,
    default_provider,
    load_llm_config,
    make_provider,
)
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


# -- the client, over real HTTP --------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"},
                                           "confidence": {"type": "number"}},
          "required": ["answer", "confidence"], "additionalProperties": False}
ASK = [{"role": "system", "content": "You answer geography questions."},
       {"role": "user", "content": "What is the capital of France?"}]
GOOD = {"answer": "Paris", "confidence": 0.9}


def client_for(srv: ChatServer, **kw) -> OpenAICompatibleClient:
    settings = {"base_url": srv.base_url, "model": "test-model", "backoff_base_s": 0.01,
                "backoff_max_s": 0.02, "seed": 7} | kw
    return OpenAICompatibleClient(LLMConfig(**settings))


def test_json_schema_request_shape_and_result() -> None:
    with ChatServer([Reply.json(GOOD, usage=(20, 5))]) as srv, \
            client_for(srv, api_key="sk-test", base_url=srv.base_url + "/") as client:
        assert isinstance(client, LLMProvider)
        r = client.complete_json(ASK, SCHEMA, schema_name="capital_answer", max_tokens=50)
        assert r.data == GOOD and not r.cached and r.attempts == 1 and r.repairs == 0
        assert (r.prompt_tokens, r.completion_tokens) == (20, 5)
        assert r.model == "test-model" and len(r.request_hash) == 64
        req = srv.requests[0]
        assert req["response_format"] == {"type": "json_schema", "json_schema": {
            "name": "capital_answer", "schema": SCHEMA, "strict": True}}
        assert req["messages"] == ASK  # json_schema mode leaves the messages alone
        assert req["temperature"] == 0.0 and req["max_tokens"] == 50 and req["seed"] == 7
        assert client.structured_mode == "json_schema"
        assert client.usage.calls == 1 and client.usage.total_tokens == 25


def test_auto_falls_back_to_json_object_and_remembers() -> None:
    with ChatServer([Reply.json(GOOD), Reply.json(GOOD)], supports_json_schema=False) as srv, \
            client_for(srv) as client:
        r = client.complete_json(ASK, SCHEMA, schema_name="capital_answer")
        assert r.data == GOOD
        assert srv.rejected and "json_schema" in srv.rejected[0]
        fallback = srv.requests[1]
        assert fallback["response_format"] == {"type": "json_object"}
        system = fallback["messages"][0]
        assert system["role"] == "system" and '"confidence"' in system["content"]
        assert system["content"].startswith("You answer geography questions.")
        client.complete_json(ASK, SCHEMA, schema_name="capital_answer")
        assert len(srv.requests) == 3  # the working mode is remembered: no second refusal
        assert srv.requests[2]["response_format"] == {"type": "json_object"}
        assert client.structured_mode == "json_object"


def test_auto_falls_through_to_schema_in_prompt_only() -> None:
    with ChatServer([Reply.json(GOOD)], supports_json_schema=False,
                    supports_json_object=False) as srv, client_for(srv) as client:
        r = client.complete_json([{"role": "user", "content": "capital of France?"}], SCHEMA)
        assert r.data == GOOD
        last = srv.requests[-1]
        assert "response_format" not in last
        assert last["messages"][0]["role"] == "system" and "JSON Schema" in last["messages"][0]["content"]
        assert client.structured_mode == "none"


def test_auto_falls_back_on_a_500_that_says_the_format_is_unsupported() -> None:
    # llama-cpp-python's server answers a json_schema response_format with HTTP 500
    with ChatServer([Reply.json(GOOD)], supports_json_schema=False,
                    format_refusal_status=500) as srv, client_for(srv, max_retries=4) as client:
        r = client.complete_json(ASK, SCHEMA, schema_name="capital_answer")
        assert r.data == GOOD
        assert len(srv.requests) == 2          # the refused format was not retried
        assert srv.requests[1]["response_format"] == {"type": "json_object"}


def test_the_working_mode_is_remembered_per_endpoint() -> None:
    with ChatServer([Reply.json(GOOD), Reply.json(GOOD)], supports_json_schema=False) as srv:
        with client_for(srv) as first:
            first.complete_json(ASK, SCHEMA)
        with client_for(srv, temperature=0.7) as second:   # e.g. the critic on the same server
            assert second.structured_mode == "json_object"
            second.complete_json(ASK, SCHEMA)
        assert len(srv.requests) == 3   # one refusal in all


def test_a_500_without_a_format_message_is_retried_not_a_fallback() -> None:
    with ChatServer([Reply.error(500, "CUDA out of memory"), Reply.json(GOOD)]) as srv, \
            client_for(srv) as client:
        assert client.complete_json(ASK, SCHEMA).data == GOOD
        assert srv.requests[1]["response_format"]["type"] == "json_schema"
        assert client.usage.retries == 1


def test_default_max_tokens_is_sized_to_the_schema() -> None:
    from analogist.llm.schemas import writer_l1_schema, writer_structure_schema
    from analogist.llm.structured import MAX_TOKENS_CAP, MIN_TOKENS, schema_max_tokens

    small, big = schema_max_tokens(writer_l1_schema()), schema_max_tokens(
        writer_structure_schema())
    assert MIN_TOKENS <= small < big <= MAX_TOKENS_CAP
    with ChatServer([Reply.json(GOOD), Reply.json(GOOD)]) as srv, client_for(srv) as client:
        client.complete_json(ASK, SCHEMA)
        client.complete_json(ASK, SCHEMA, max_tokens=77)
        assert srv.requests[0]["max_tokens"] == schema_max_tokens(SCHEMA)
        assert srv.requests[1]["max_tokens"] == 77


def test_bounded_schema_only_narrows() -> None:
    from jsonschema import Draft202012Validator

    from analogist.llm.schemas import parametric_schema
    from analogist.llm.structured import bounded_schema

    b = bounded_schema(parametric_schema())
    Draft202012Validator.check_schema(b)
    item = b["properties"]["analogues"]
    assert item["maxItems"] >= 1 and item["items"]["properties"]["title"]["maxLength"] >= 1
    long = {"analogues": [{"title": "x" * 1000}]}
    assert list(Draft202012Validator(b).iter_errors(long))   # the bound is enforced


def test_per_call_token_budget_stops_the_repair_rounds() -> None:
    bad = Reply.json({"answer": 3}, usage=(50, 10))
    with ChatServer([bad] * 3) as srv, client_for(srv, call_budget_tokens=40) as client:
        with pytest.raises(LLMBudgetExceeded, match="token budget") as e:
            client.complete_json(ASK, SCHEMA)
        assert len(srv.requests) == 1
        assert e.value.usage["total_tokens"] == 60 and e.value.usage["failures"] == 1


def test_per_run_budgets_refuse_further_calls() -> None:
    with ChatServer([Reply.json(GOOD, usage=(30, 5))] * 2) as srv, \
            client_for(srv, run_budget_tokens=30) as client:
        client.complete_json(ASK, SCHEMA)
        with pytest.raises(LLMBudgetExceeded, match="run's token budget"):
            client.complete_json(ASK, SCHEMA)
        assert len(srv.requests) == 1
    with ChatServer([Reply.json(GOOD, delay_s=0.3)] * 2) as srv, \
            client_for(srv, run_budget_s=0.1) as client:
        client.complete_json(ASK, SCHEMA)
        with pytest.raises(LLMBudgetExceeded, match="run's time budget"):
            client.complete_json(ASK, SCHEMA)


def test_per_call_time_budget_bounds_the_request() -> None:
    with ChatServer([Reply.json(GOOD, delay_s=2.0)]) as srv, \
            client_for(srv, timeout_s=30, call_budget_s=0.3) as client, pytest.raises(LLMTimeout):
        client.complete_json(ASK, SCHEMA)


def test_failed_calls_are_counted_as_calls_and_failures() -> None:
    with ChatServer([Reply.error(404, "no such model")]) as srv, client_for(srv) as client:
        with pytest.raises(LLMError) as e:
            client.complete_json(ASK, SCHEMA)
        assert client.usage.to_json()["calls"] == 1
        assert client.usage.to_json()["failures"] == 1
        assert e.value.usage["calls"] == 1


def test_fixed_json_schema_mode_does_not_fall_back() -> None:
    with ChatServer([], supports_json_schema=False) as srv, \
            client_for(srv, structured="json_schema") as client:
        with pytest.raises(LLMError, match="json_schema"):
            client.complete_json(ASK, SCHEMA)
        assert len(srv.requests) == 1


def test_malformed_json_is_repaired_with_the_parse_error() -> None:
    replies = [Reply(content='{"answer": "Paris" "confidence": 0.9}'),
               Reply(content="Sure! ```json\n" + json.dumps(GOOD) + "\n```")]
    with ChatServer(replies) as srv, client_for(srv) as client:
        r = client.complete_json(ASK, SCHEMA)
        assert r.data == GOOD and r.repairs == 1 and r.attempts == 2
        repair = srv.requests[1]["messages"]
        assert repair[-2] == {"role": "assistant", "content": replies[0].content}
        assert repair[-1]["role"] == "user"
        assert "Expecting ',' delimiter" in repair[-1]["content"]
        assert "line 1 column" in repair[-1]["content"]
        assert client.usage.repairs == 1 and client.usage.retries == 0


def test_prose_around_the_object_is_tolerated() -> None:
    with ChatServer([Reply(content="Here you go: " + json.dumps(GOOD) + " Hope it helps {")]) \
            as srv, client_for(srv) as client:
        assert client.complete_json(ASK, SCHEMA).data == GOOD


def test_schema_invalid_json_is_repaired_with_the_validation_error() -> None:
    replies = [Reply.json({"answer": "Paris", "confidence": "high"}), Reply.json(GOOD)]
    with ChatServer(replies) as srv, client_for(srv) as client:
        r = client.complete_json(ASK, SCHEMA)
        assert r.data == GOOD and r.repairs == 1
        msg = srv.requests[1]["messages"][-1]["content"]
        assert "$.confidence" in msg and "'high' is not of type 'number'" in msg


def test_repair_exhausted_raises_response_error() -> None:
    bad = Reply.json({"answer": 3})
    with ChatServer([bad, bad, bad]) as srv, client_for(srv, repair_retries=2) as client:
        with pytest.raises(LLMResponseError, match="after 2 repair round") as e:
            client.complete_json(ASK, SCHEMA)
        assert "is a required property" in str(e.value) or "not of type" in str(e.value)
        assert len(srv.requests) == 3
        assert client.usage.calls == 1 and client.usage.repairs == 2


def test_rate_limit_with_retry_after_then_success() -> None:
    replies = [Reply.error(429, "Rate limit reached", headers={"Retry-After": "1"}),
               Reply.json(GOOD, usage=(10, 4))]
    with ChatServer(replies) as srv, client_for(srv) as client:
        r = client.complete_json(ASK, SCHEMA)
        assert r.data == GOOD and r.attempts == 2 and r.repairs == 0
        assert client.usage.retries == 1


def test_503_until_max_retries_raises_llm_error() -> None:
    with ChatServer([Reply.error(503, "overloaded")] * 10) as srv, \
            client_for(srv, max_retries=3) as client:
        with pytest.raises(LLMError) as e:
            client.complete_json(ASK, SCHEMA)
        assert not isinstance(e.value, LLMTimeout)
        text = str(e.value)
        assert "503" in text and "overloaded" in text and srv.base_url in text
        assert len(srv.requests) == 4
        assert client.usage.calls == 1 and client.usage.retries == 3


def test_sampled_request_timeout_is_retried_then_llm_timeout() -> None:
    with ChatServer([Reply.json(GOOD, delay_s=2.0)] * 3) as srv, \
            client_for(srv, timeout_s=0.2, max_retries=1, temperature=0.7, seed=None) as client:
        with pytest.raises(LLMTimeout, match="2 attempt"):
            client.complete_json(ASK, SCHEMA)
        assert len(srv.requests) == 2


def test_sampled_request_timeout_then_success() -> None:
    with ChatServer([Reply.json(GOOD, delay_s=2.0), Reply.json(GOOD)]) as srv, \
            client_for(srv, timeout_s=0.2, max_retries=2, temperature=0.7, seed=None) as client:
        r = client.complete_json(ASK, SCHEMA)
        assert r.attempts == 2 and r.data == GOOD


@pytest.mark.parametrize("settings", [{"temperature": 0.0, "seed": None},
                                      {"temperature": 0.7, "seed": 3}])
def test_deterministic_request_that_timed_out_is_not_resent(settings: dict) -> None:
    with ChatServer([Reply.json(GOOD, delay_s=2.0)] * 3) as srv, \
            client_for(srv, timeout_s=0.2, max_retries=3, **settings) as client:
        with pytest.raises(LLMTimeout, match="not resent: the request is deterministic") as e:
            client.complete_json(ASK, SCHEMA)
        assert len(srv.requests) == 1
        assert client.usage.calls == 1 and client.usage.failures == 1
        assert e.value.usage is not None and e.value.usage["failures"] == 1


def test_transport_error_after_retries() -> None:
    with ChatServer([]) as srv:
        url = srv.base_url
    cfg = LLMConfig(base_url=url, model="m", max_retries=1, backoff_base_s=0.01)
    with OpenAICompatibleClient(cfg) as client, pytest.raises(LLMError, match="transport error"):
        client.complete_json(ASK, SCHEMA)


def test_client_error_is_not_retried_and_carries_the_server_message() -> None:
    with ChatServer([Reply.error(404, "The model `nope` does not exist")]) as srv, \
            client_for(srv) as client:
        with pytest.raises(LLMError, match="The model `nope` does not exist"):
            client.complete_json(ASK, SCHEMA)
        assert len(srv.requests) == 1


def test_protocol_400_from_server_carries_its_message() -> None:
    with ChatServer([]) as srv, client_for(srv) as client, \
            pytest.raises(LLMError, match="max_tokens' must be a positive integer"):
        client.complete_json(ASK, SCHEMA, max_tokens=0)


def test_refusal_is_a_response_error() -> None:
    with ChatServer([Reply(refusal="I can't help with that.")]) as srv, \
            client_for(srv) as client, \
            pytest.raises(LLMResponseError, match="refused: I can't help with that"):
        client.complete_json(ASK, SCHEMA)


def test_cache_hit_makes_no_request(tmp_path: Path) -> None:
    cache = tmp_path / "c" / "llm.sqlite"
    with ChatServer([Reply.json(GOOD, usage=(9, 3)), Reply.json(GOOD, usage=(9, 3))]) as srv:
        with client_for(srv, cache_path=str(cache)) as client:
            first = client.complete_json(ASK, SCHEMA, schema_name="capital_answer")
            second = client.complete_json(ASK, SCHEMA, schema_name="capital_answer")
            assert len(srv.requests) == 1
            assert second.cached and not first.cached and second.data == GOOD
            assert second.seconds == 0.0 and second.request_hash == first.request_hash
            assert client.usage.cache_hits == 1 and client.usage.calls == 2
            assert client.usage.prompt_tokens == 9  # the hit spent no tokens
            client.complete_json(ASK, SCHEMA, schema_name="capital_answer", temperature=0.5)
            assert len(srv.requests) == 2  # another temperature is another request
        with client_for(srv, cache_path=str(cache)) as again:  # persisted across clients
            assert again.complete_json(ASK, SCHEMA, schema_name="capital_answer").cached
        assert len(srv.requests) == 2


def test_corrupt_cache_names_the_path(tmp_path: Path) -> None:
    bad = tmp_path / "cache.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(AnalogistError, match="cache.sqlite"):
        ResponseCache(bad)


def test_token_accounting_sums_over_calls_and_repairs() -> None:
    replies = [Reply.json(GOOD, usage=(10, 2)), Reply(content="nope", usage=(12, 1)),
               Reply.json(GOOD, usage=(15, 2)), Reply.json(GOOD, usage=False)]
    with ChatServer(replies) as srv, client_for(srv) as client:
        a = client.complete_json(ASK, SCHEMA)
        b = client.complete_json([{"role": "user", "content": "again"}], SCHEMA)
        c = client.complete_json([{"role": "user", "content": "no usage"}], SCHEMA)
        assert (a.prompt_tokens, b.prompt_tokens, c.prompt_tokens) == (10, 27, 0)
        assert b.completion_tokens == 3 and b.repairs == 1
        u = client.usage
        assert (u.calls, u.prompt_tokens, u.completion_tokens, u.repairs) == (3, 37, 5, 1)
        assert u.to_json()["total_tokens"] == 42 and u.seconds > 0


def test_recorded_replies_through_the_client() -> None:
    summary_schema = {"type": "object", "properties": {"summary": {"type": "string"}},
                      "required": ["summary"]}
    with ChatServer(Recorded(DATA / "smoke.json")) as srv, client_for(srv) as client:
        r = client.complete_json(ASK, SCHEMA, schema_name="capital_answer")
        assert r.data == GOOD
        s = client.complete_json([{"role": "user", "content": "Summarise the episode: pump."}],
                                 summary_schema, schema_name="summary")
        assert "seal" in s.data["summary"]


# -- configuration ---------------------------------------------------------------------------------


def write_toml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_nothing_configured_returns_none(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert load_llm_config(env=env) is None
    assert load_llm_config(env={**env, "ANALOGIST_LLM_MODEL": "m"}) is None  # no base URL
    assert default_provider(env=env) is None


def test_precedence_explicit_over_env_over_file(tmp_path: Path) -> None:
    f = write_toml(tmp_path, '[llm]\nbase_url = "http://file:1/v1"\nmodel = "file-model"\n'
                             'timeout_s = 5\nmax_retries = 1\nstructured = "json_object"\n')
    env = {"ANALOGIST_LLM_MODEL": "env-model", "ANALOGIST_LLM_TIMEOUT": "7.5",
           "OPENAI_API_KEY": "sk-openai"}
    cfg = load_llm_config(config_file=f, env=env)
    assert cfg is not None
    assert (cfg.base_url, cfg.model, cfg.timeout_s) == ("http://file:1/v1", "env-model", 7.5)
    assert (cfg.max_retries, cfg.structured, cfg.api_key) == (1, "json_object", "sk-openai")
    assert cfg.cache_path is None and cfg.temperature == 0.0
    cfg = load_llm_config(config_file=f, env={**env, "ANALOGIST_LLM_API_KEY": "sk-a"},
                          model="explicit", timeout_s=None)
    assert cfg.model == "explicit" and cfg.timeout_s == 7.5 and cfg.api_key == "sk-a"
    via_env = load_llm_config(env={**env, "ANALOGIST_CONFIG": str(f)})
    assert via_env.base_url == "http://file:1/v1"
    xdg = tmp_path / "xdg" / "analogist"
    xdg.mkdir(parents=True)
    (xdg / "config.toml").write_text(f.read_text())
    assert load_llm_config(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}).model == "file-model"


def test_cache_setting(tmp_path: Path) -> None:
    base = {"ANALOGIST_LLM_BASE_URL": "http://h:1/v1", "ANALOGIST_LLM_MODEL": "m",
            "XDG_CACHE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    assert load_llm_config(env={**base, "ANALOGIST_LLM_CACHE": "on"}).cache_path == \
        str(tmp_path / "analogist" / "llm_cache.sqlite")
    assert load_llm_config(env={**base, "ANALOGIST_LLM_CACHE": "off"}).cache_path is None
    own = str(tmp_path / "mine.sqlite")
    assert load_llm_config(env={**base, "ANALOGIST_LLM_CACHE": own}).cache_path == own
    f = write_toml(tmp_path, "[llm]\ncache = true\n")
    assert load_llm_config(env=base, config_file=f).cache_path.endswith("llm_cache.sqlite")


def test_critic_role_overrides(tmp_path: Path) -> None:
    f = write_toml(tmp_path, '[llm]\nbase_url = "http://base:1/v1"\nmodel = "writer-m"\n'
                             'temperature = 0.1\n[llm.critic]\nmodel = "critic-m"\n'
                             '[llm.parametric]\nbase_url = "http://param:2/v1"\n')
    env: dict[str, str] = {}
    writer = load_llm_config("writer", config_file=f, env=env)
    critic = load_llm_config("critic", config_file=f, env=env)
    param = load_llm_config("parametric", config_file=f, env=env)
    assert (writer.model, writer.temperature) == ("writer-m", 0.1)
    assert (critic.model, critic.base_url, critic.temperature) == ("critic-m", "http://base:1/v1", 0.7)
    assert (param.model, param.base_url, param.temperature) == ("writer-m", "http://param:2/v1", 0.1)
    env = {"ANALOGIST_CRITIC_MODEL": "env-critic", "ANALOGIST_CRITIC_TEMPERATURE": "0.9",
           "ANALOGIST_LLM_MODEL": "env-writer"}
    critic = load_llm_config("critic", config_file=f, env=env)
    assert (critic.model, critic.temperature) == ("env-critic", 0.9)
    assert load_llm_config("writer", config_file=f, env=env).model == "env-writer"
    assert load_llm_config("critic", config_file=f, env=env, temperature=0.3).temperature == 0.3


@pytest.mark.parametrize("var, value, expected", [
    ("ANALOGIST_LLM_TIMEOUT", "soon", "positive number"),
    ("ANALOGIST_LLM_TIMEOUT", "0", "positive number"),
    ("ANALOGIST_LLM_MAX_RETRIES", "-1", "integer >= 0"),
    ("ANALOGIST_LLM_STRUCTURED", "grammar", "auto, json_schema"),
    ("ANALOGIST_LLM_TEMPERATURE", "5", "between 0 and 2"),
    ("ANALOGIST_CRITIC_TEMPERATURE", "hot", "between 0 and 2"),
])
def test_bad_env_values_name_the_variable(var: str, value: str, expected: str,
                                          tmp_path: Path) -> None:
    env = {"ANALOGIST_LLM_BASE_URL": "http://h:1/v1", "ANALOGIST_LLM_MODEL": "m",
           "XDG_CONFIG_HOME": str(tmp_path), var: value}
    with pytest.raises(AnalogistError) as e:
        load_llm_config("critic", env=env)
    assert var in str(e.value) and expected in str(e.value)


def test_bad_config_files_name_file_and_line(tmp_path: Path) -> None:
    f = write_toml(tmp_path, '[llm]\nmodel = "m"\nbase_url = \n')
    with pytest.raises(AnalogistError, match=r"config.toml.*line 3.*TOML") as e:
        load_llm_config(config_file=f, env={})
    assert e.value.line == 3
    f = write_toml(tmp_path, '[llm]\nmodel = "m"\nbase_url = "http://h/v1"\nmodle = "x"\n')
    with pytest.raises(AnalogistError, match="unknown key 'modle'") as e:
        load_llm_config(config_file=f, env={})
    assert e.value.line == 4
    f = write_toml(tmp_path, '[llm]\nmodel = "m"\nbase_url = "http://h/v1"\nstructured = "xml"\n')
    with pytest.raises(AnalogistError, match="structured.*expected one of") as e:
        load_llm_config(config_file=f, env={})
    assert "config.toml" in str(e.value)
    with pytest.raises(AnalogistError, match="ANALOGIST_CONFIG"):
        load_llm_config(env={"ANALOGIST_CONFIG": str(tmp_path / "missing.toml")})


# -- opt-in: a real endpoint -----------------------------------------------------------------------


@pytest.mark.skipif(not os.environ.get("ANALOGIST_LLM_BASE_URL"),
                    reason="live test: set ANALOGIST_LLM_BASE_URL and ANALOGIST_LLM_MODEL")
def test_live_endpoint_tiny_structured_call() -> None:
    provider = default_provider()
    assert provider is not None, "ANALOGIST_LLM_MODEL is not set"
    schema = {"type": "object", "properties": {"sum": {"type": "integer"}},
              "required": ["sum"], "additionalProperties": False}
    try:
        r = provider.complete_json([{"role": "user", "content": "What is 2 + 3? Answer as JSON "
                                     "with the key 'sum'."}], schema, schema_name="arith",
                                   max_tokens=64)
    finally:
        provider.close()
    assert r.data["sum"] == 5
    assert provider.usage.calls == 1


def test_every_face_defaults_to_the_one_writer_constant() -> None:
    import inspect

    from analogist import server
    from analogist.cli import bench, encode, find, store
    from analogist.llm import DEFAULT_WRITER, WRITERS

    assert DEFAULT_WRITER == "deterministic" and DEFAULT_WRITER in WRITERS
    assert server.EncodeBody.model_fields["writer"].default == DEFAULT_WRITER
    for module in (bench, encode, find, store):
        for fn in vars(module).values():
            if callable(fn) and getattr(fn, "__module__", "") == module.__name__:
                p = inspect.signature(fn).parameters.get("writer")
                if p is not None and hasattr(p.default, "default"):
                    assert p.default.default == DEFAULT_WRITER, fn.__name__


def test_local_provider_config_from_the_environment(tmp_path: Path) -> None:
    env = {"ANALOGIST_LLM_PROVIDER": "local", "ANALOGIST_LLM_MODEL": str(tmp_path / "m.gguf"),
           "ANALOGIST_LLM_CALL_BUDGET_S": "5", "ANALOGIST_LLM_RUN_BUDGET_TOKENS": "1000",
           "XDG_CONFIG_HOME": str(tmp_path)}
    cfg = load_llm_config(env=env)
    assert cfg is not None and cfg.provider == "local" and cfg.call_budget_s == 5.0
    assert cfg.run_budget_tokens == 1000
    with pytest.raises(AnalogistError, match="ANALOGIST_LLM_PROVIDER"):
        load_llm_config(env={**env, "ANALOGIST_LLM_PROVIDER": "ollama"})
    with pytest.raises(AnalogistError, match="no such file"):
        make_provider(cfg)
