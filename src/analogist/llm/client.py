"""An :class:`~analogist.llm.base.LLMProvider` for any OpenAI-compatible chat-completions endpoint.

``POST {base_url}/chat/completions`` over httpx (synchronous), ``Authorization: Bearer`` when an
API key is configured. Each :meth:`OpenAICompatibleClient.complete_json` call:

1. looks the request up in the response cache (when one is configured);
2. sends it with the structured-output mode of the config:

   - ``json_schema``: ``response_format = {"type": "json_schema", "json_schema": {"name": ...,
     "schema": ..., "strict": true}}``;
   - ``json_object``: ``response_format = {"type": "json_object"}`` and the schema in the system
     message;
   - ``none``: no ``response_format``; the schema in the system message only;
   - ``auto``: ``json_schema`` first; if the server answers 400/422 naming ``response_format`` /
     ``json_schema`` it falls back to ``json_object``, then to ``none``, and remembers the mode
     that worked for the rest of the client's lifetime;

3. retries 429 (honouring ``Retry-After`` seconds, capped at ``backoff_max_s``), 500/502/503/504
   and transport errors/timeouts with exponential backoff and jitter (``random.Random(seed)``, so
   the schedule is reproducible), at most ``max_retries`` times; other 4xx fail at once with the
   server's message;
4. parses the reply (```` ```json ```` fences stripped; the outermost JSON object taken when prose
   surrounds it) and validates it with ``jsonschema`` (Draft 2020-12). An invalid reply gets up
   to ``repair_retries`` repair rounds: the bad reply is appended as the assistant's turn, and a
   user turn states the exact parse/validation error and asks for the corrected JSON only;
5. accounts tokens (the response's ``usage``; 0 when absent), wall time, attempts and repairs in
   the :class:`~analogist.llm.base.LLMResult` and in the running :attr:`usage`, and stores the
   validated object in the cache.

Known server differences (as of 2025):

- **OpenAI**: ``json_schema`` with ``strict: true`` requires every object in the schema to list
  all its properties in ``required`` and set ``additionalProperties: false``; a schema that breaks
  that rule gets a 400 naming ``response_format``, and ``auto`` then falls back to
  ``json_object`` (the reply is still validated locally). A refusal arrives as
  ``message.refusal`` with a null content — reported as :class:`LLMResponseError`.
- **vLLM**: accepts ``json_schema`` (guided decoding) and ``json_object``.
- **llama.cpp server**: recent builds accept ``json_schema`` (converted to a grammar); older ones
  accept only ``{"type": "json_object"}`` (optionally with a ``schema``) and reject
  ``json_schema`` with a 400 — ``auto`` handles this.
- **Ollama** (``http://host:11434/v1``): recent versions map ``json_schema`` to their ``format``
  option; older ones understand only ``json_object``. Ollama may omit ``usage`` on some versions
  (tokens are then reported as 0).
- **LM Studio**: supports ``json_schema``; rejects ``json_object`` on some versions — ``auto``
  then falls through to ``none``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from analogist.errors import AnalogistError
from analogist.llm.base import (
    LLMError,
    LLMProvider,
    LLMResponseError,
    LLMResult,
    LLMTimeout,
    Message,
    Usage,
)
from analogist.llm.cache import ResponseCache, cache_key
from analogist.llm.config import LLMConfig, load_llm_config

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
FALLBACK = {"json_schema": "json_object", "json_object": "none"}
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format",
                 "structured output", "grammar")
_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _server_message(resp: httpx.Response) -> str:
    """The error message in an OpenAI-style (or Ollama-style) error body, else a body excerpt."""
    try:
        body = resp.json()
    except ValueError:
        return _excerpt(resp.text) or "(empty body)"
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if isinstance(body.get("message"), str):
            return body["message"]
        if isinstance(body.get("detail"), str):
            return body["detail"]
    return _excerpt(resp.text)


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model reply: fences stripped, surrounding prose tolerated.

    Raises ``ValueError`` with the decoder's message (line/column) when there is none.
    """
    candidate = text.strip()
    fence = _FENCE_RE.search(candidate)
    if fence:
        candidate = fence.group(1).strip()
    if not candidate:
        raise ValueError("the reply is empty; expected a JSON object")
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError as first:
        decoder = json.JSONDecoder()
        for i, ch in enumerate(candidate):
            if ch != "{":
                continue
            try:
                value, _end = decoder.raw_decode(candidate, i)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
        raise ValueError(f"the reply is not valid JSON: {first.msg} at line {first.lineno} "
                         f"column {first.colno} (char {first.pos})") from None
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object at the top level, got {type(value).__name__}")
    return value


def schema_errors(validator: Draft202012Validator, data: Any, limit: int = 5) -> list[str]:
    """Human-readable validation errors, ``at $.path: message``, at most ``limit``."""
    out = []
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.path)
        out.append(f"at {path}: {err.message}")
        if len(out) >= limit:
            break
    return out


def _schema_instruction(schema: Mapping[str, Any], schema_name: str) -> str:
    return (f"Reply with a single JSON object only (no prose, no code fences) named "
            f"'{schema_name}' that validates against this JSON Schema:\n"
            + json.dumps(schema, indent=None, sort_keys=True))


class _Reply:
    __slots__ = ("content", "model", "prompt_tokens", "completion_tokens", "finish_reason")

    def __init__(self, content: str, model: str, prompt_tokens: int, completion_tokens: int,
                 finish_reason: str | None) -> None:
        self.content = content
        self.model = model
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.finish_reason = finish_reason


class _CallState:
    """Accounting for one complete_json call, kept even when it fails."""

    def __init__(self) -> None:
        self.attempts = 0
        self.repairs = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0


class OpenAICompatibleClient:
    """An :class:`LLMProvider` over an OpenAI-compatible ``/chat/completions`` endpoint.

    ``transport`` is passed to ``httpx.Client`` (e.g. a mounted or proxied transport).
    """

    def __init__(self, config: LLMConfig, *, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        self.model = config.model
        self.usage = Usage()
        self.url = config.chat_url
        self._mode: str | None = None if config.structured == "auto" else config.structured
        self._rng = random.Random(config.seed if config.seed is not None else 0)
        headers = {"Accept": "application/json", "User-Agent": "analogist"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._http = httpx.Client(timeout=httpx.Timeout(config.timeout_s), headers=headers,
                                  transport=transport)
        self._cache = ResponseCache(config.cache_path) if config.cache_path else None
        self._validators: dict[str, Draft202012Validator] = {}

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def structured_mode(self) -> str | None:
        """The structured-output mode in use (``None`` until ``auto`` has found one)."""
        return self._mode

    def close(self) -> None:
        self._http.close()
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> OpenAICompatibleClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the provider method ---------------------------------------------------------------------

    def complete_json(self, messages: Sequence[Message], schema: Mapping[str, Any], *,
                      schema_name: str = "output", temperature: float | None = None,
                      max_tokens: int | None = None) -> LLMResult:
        cfg = self.config
        temp = cfg.temperature if temperature is None else temperature
        max_tok = cfg.max_tokens if max_tokens is None else max_tokens
        msgs = self._check_messages(messages)
        validator = self._validator(schema, schema_name)
        key = cache_key(base_url=cfg.base_url, model=cfg.model, messages=msgs, schema=schema,
                        schema_name=schema_name, temperature=temp, max_tokens=max_tok,
                        structured=cfg.structured)
        if self._cache is not None:
            hit = self._cache.get(key)
            if hit is not None and isinstance(hit.get("data"), dict) \
                    and not list(validator.iter_errors(hit["data"])):
                result = LLMResult(
                    data=hit["data"], text=str(hit.get("text", "")),
                    model=str(hit.get("model", cfg.model)), cached=True, seconds=0.0,
                    attempts=0, request_hash=key,
                    extra={"original_prompt_tokens": hit.get("prompt_tokens", 0),
                           "original_completion_tokens": hit.get("completion_tokens", 0)})
                self.usage.add(result)
                return result

        state = _CallState()
        start = time.perf_counter()
        try:
            result = self._complete(msgs, schema, schema_name, temp, max_tok, validator, state,
                                    key)
        except LLMError:
            self._account_failure(state, time.perf_counter() - start)
            raise
        result = dataclasses.replace(result, seconds=time.perf_counter() - start)
        self.usage.add(result)
        if self._cache is not None:
            self._cache.put(key, {"data": result.data, "text": result.text,
                                  "model": result.model, "prompt_tokens": result.prompt_tokens,
                                  "completion_tokens": result.completion_tokens},
                            model=result.model)
        return result

    # -- internals -------------------------------------------------------------------------------

    @staticmethod
    def _check_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
        if not messages:
            raise AnalogistError("complete_json: expected at least one chat message")
        out = []
        for i, m in enumerate(messages):
            if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) \
                    or not isinstance(m.get("content"), str):
                raise AnalogistError(f"complete_json: messages[{i}] must be a mapping with "
                                     "string 'role' and 'content'")
            out.append({"role": m["role"], "content": m["content"]})
        return out

    def _validator(self, schema: Mapping[str, Any], schema_name: str) -> Draft202012Validator:
        sig = json.dumps(schema, sort_keys=True)
        v = self._validators.get(sig)
        if v is None:
            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as e:
                raise AnalogistError(f"JSON Schema {schema_name!r} is invalid: {e.message}; "
                                     "expected a draft 2020-12 schema") from None
            v = self._validators[sig] = Draft202012Validator(schema)
        return v

    def _account_failure(self, state: _CallState, seconds: float) -> None:
        u = self.usage
        u.calls += 1
        u.prompt_tokens += state.prompt_tokens
        u.completion_tokens += state.completion_tokens
        u.seconds += seconds
        u.retries += max(0, state.attempts - 1 - state.repairs)
        u.repairs += state.repairs

    def _complete(self, msgs: list[dict[str, str]], schema: Mapping[str, Any], schema_name: str,
                  temp: float, max_tok: int | None, validator: Draft202012Validator,
                  state: _CallState, key: str) -> LLMResult:
        conversation = list(msgs)
        last_error = ""
        while True:
            reply = self._request(conversation, schema, schema_name, temp, max_tok, state)
            try:
                data = parse_json_object(reply.content)
                problems = schema_errors(validator, data)
                if problems:
                    raise ValueError("the JSON does not satisfy the schema: "
                                     + "; ".join(problems))
            except ValueError as e:
                last_error = str(e)
                if reply.finish_reason == "length":
                    last_error += (" (finish_reason=length: the reply was cut off at "
                                   "max_tokens)")
                if state.repairs >= self.config.repair_retries:
                    raise LLMResponseError(
                        f"{self.url}: model {self.config.model!r} gave no schema-valid JSON for "
                        f"{schema_name!r} after {state.repairs} repair round(s); last error: "
                        f"{last_error}; last reply: {_excerpt(reply.content, 200)!r}") from None
                state.repairs += 1
                conversation += [
                    {"role": "assistant", "content": reply.content},
                    {"role": "user", "content": (
                        f"Your previous reply could not be used: {last_error}. Reply again with "
                        f"only the corrected JSON object for '{schema_name}' that satisfies the "
                        "schema — no prose, no code fences.")},
                ]
                continue
            return LLMResult(data=data, text=reply.content, model=reply.model,
                             prompt_tokens=state.prompt_tokens,
                             completion_tokens=state.completion_tokens,
                             attempts=state.attempts, repairs=state.repairs, request_hash=key,
                             extra={"structured": self._mode})

    def _payload(self, conversation: list[dict[str, str]], schema: Mapping[str, Any],
                 schema_name: str, temp: float, max_tok: int | None, mode: str) -> dict[str, Any]:
        msgs = [dict(m) for m in conversation]
        if mode in ("json_object", "none"):
            instruction = _schema_instruction(schema, schema_name)
            if msgs[0]["role"] == "system":
                msgs[0]["content"] = msgs[0]["content"].rstrip() + "\n\n" + instruction
            else:
                msgs.insert(0, {"role": "system", "content": instruction})
        payload: dict[str, Any] = {"model": self.config.model, "messages": msgs,
                                   "temperature": temp}
        if max_tok is not None:
            payload["max_tokens"] = max_tok
        if self.config.seed is not None:
            payload["seed"] = self.config.seed
        if mode == "json_schema":
            payload["response_format"] = {"type": "json_schema", "json_schema": {
                "name": schema_name, "schema": dict(schema), "strict": True}}
        elif mode == "json_object":
            payload["response_format"] = {"type": "json_object"}
        return payload

    def _request(self, conversation: list[dict[str, str]], schema: Mapping[str, Any],
                 schema_name: str, temp: float, max_tok: int | None,
                 state: _CallState) -> _Reply:
        """One round: send (falling back between structured modes under ``auto``), parse."""
        mode = self._mode or "json_schema"
        while True:
            payload = self._payload(conversation, schema, schema_name, temp, max_tok, mode)
            resp = self._send(payload, state)
            if resp.status_code == 200:
                self._mode = mode
                return self._parse_completion(resp, state)
            message = _server_message(resp)
            if (self.config.structured == "auto" and mode in FALLBACK and resp.status_code in (400, 422)
                    and any(w in message.lower() for w in _FORMAT_WORDS)):
                mode = FALLBACK[mode]
                continue
            raise LLMError(f"POST {self.url} → HTTP {resp.status_code}: {message} (expected "
                           f"200 with a chat.completion; model {self.config.model!r}, "
                           f"structured mode {mode!r})")

    def _backoff(self, retry: int, resp: httpx.Response | None) -> float:
        cfg = self.config
        if resp is not None and resp.status_code == 429:
            after = resp.headers.get("Retry-After")
            if after is not None:
                try:
                    return min(max(0.0, float(after)), cfg.backoff_max_s)
                except ValueError:
                    pass  # an HTTP date: fall back to exponential backoff
        delay = cfg.backoff_base_s * (2 ** retry)
        return min(delay * (0.5 + self._rng.random() / 2), cfg.backoff_max_s)

    def _send(self, payload: dict[str, Any], state: _CallState) -> httpx.Response:
        """POST with retries on 429/5xx/transport errors; any other response is returned."""
        retries = self.config.max_retries
        for retry in range(retries + 1):
            state.attempts += 1
            resp: httpx.Response | None = None
            try:
                resp = self._http.post(self.url, json=payload)
            except httpx.TimeoutException as e:
                if retry >= retries:
                    raise LLMTimeout(
                        f"POST {self.url}: no answer within {self.config.timeout_s}s "
                        f"({type(e).__name__}) after {retry + 1} attempt(s); expected a reply "
                        "within the timeout (raise ANALOGIST_LLM_TIMEOUT?)") from None
            except httpx.TransportError as e:
                if retry >= retries:
                    raise LLMError(f"POST {self.url}: transport error after {retry + 1} "
                                   f"attempt(s): {type(e).__name__}: {e}; expected a reachable "
                                   "OpenAI-compatible server") from None
            else:
                if resp.status_code not in RETRY_STATUSES:
                    return resp
                if retry >= retries:
                    raise LLMError(f"POST {self.url} → HTTP {resp.status_code} after "
                                   f"{retry + 1} attempt(s): {_server_message(resp)} "
                                   "(expected 200 with a chat.completion)")
            time.sleep(self._backoff(retry, resp))
        raise AssertionError("unreachable")  # pragma: no cover

    def _parse_completion(self, resp: httpx.Response, state: _CallState) -> _Reply:
        try:
            body = resp.json()
        except ValueError:
            raise LLMError(f"POST {self.url}: HTTP 200 but the body is not JSON: "
                           f"{_excerpt(resp.text)!r}; expected a chat.completion object") from None
        usage = body.get("usage") if isinstance(body, dict) else None
        if isinstance(usage, dict):
            state.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            state.completion_tokens += int(usage.get("completion_tokens") or 0)
        try:
            choice = body["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"POST {self.url}: HTTP 200 but no choices[0].message in "
                           f"{_excerpt(resp.text)!r}; expected a chat.completion object") from None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            if isinstance(message, dict) and message.get("refusal"):
                raise LLMResponseError(f"model {self.config.model!r} refused: "
                                       f"{message['refusal']}")
            what = ("tool_calls" if isinstance(message, dict) and message.get("tool_calls")
                    else "a null content")
            raise LLMResponseError(f"model {self.config.model!r} answered with {what}; "
                                   "expected message content holding a JSON object")
        model = body.get("model") if isinstance(body.get("model"), str) else self.config.model
        return _Reply(content, model or self.config.model, 0, 0, choice.get("finish_reason"))


def make_provider(config: LLMConfig) -> OpenAICompatibleClient:
    """The provider for ``config``."""
    return OpenAICompatibleClient(config)


def default_provider(role: str = "writer", **overrides: Any) -> LLMProvider | None:
    """The configured provider for ``role`` (see :func:`load_llm_config`), or ``None``."""
    config = load_llm_config(role, **overrides)
    return None if config is None else make_provider(config)
