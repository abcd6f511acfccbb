"""An :class:`~analogist.llm.base.LLMProvider` for any OpenAI-compatible chat-completions endpoint.

``POST {base_url}/chat/completions`` through the shared HTTP layer (:mod:`analogist.llm.http`:
timeouts, retries, backoff, error mapping), ``Authorization: Bearer`` when an API key is
configured. Cache, validation, repair rounds, budgets and accounting are
:class:`~analogist.llm.structured.StructuredProvider`'s. Each request is sent with the
structured-output mode of the config:

   - ``json_schema``: ``response_format = {"type": "json_schema", "json_schema": {"name": ...,
     "schema": ..., "strict": true}}``;
   - ``json_object``: ``response_format = {"type": "json_object"}`` and the schema in the system
     message;
   - ``none``: no ``response_format``; the schema in the system message only;
   - ``auto``: ``json_schema`` first; on any answer saying the format is unsupported — HTTP
     400, 422 **or 500** whose message names ``response_format`` / ``json_schema`` / a grammar
     (llama-cpp-python's server answers a ``json_schema`` with a 500) — it falls back to
     ``json_object``, then to ``none``, without retrying the refused format, and remembers the
     mode that worked **per endpoint** (chat URL) for the rest of the process, so the writer,
     critic and parametric clients of one server learn it once.

Retries: 429 (``Retry-After`` honoured), 500/502/503/504 and transport errors, with backoff. A
request that timed out is resent only when it is not deterministic: with temperature 0 or a
seed the server would redo the same long generation, so the call fails at once with
:class:`~analogist.llm.base.LLMTimeout` saying so.

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

import threading
from collections.abc import Mapping
from typing import Any

import httpx

from analogist.llm.base import LLMError, LLMProvider, LLMTimeout
from analogist.llm.config import LLMConfig, load_llm_config
from analogist.llm.http import JsonHttp, server_message
from analogist.llm.local import LocalLlamaProvider
from analogist.llm.structured import (
    CallState,
    Reply,
    StructuredProvider,
    is_deterministic,
    parse_chat_completion,
    parse_json_object,
    schema_errors,
    schema_instruction,
)

__all__ = ["FALLBACK", "OpenAICompatibleClient", "default_provider", "forget_mode", "format_unsupported",
           "make_provider", "parse_json_object", "schema_errors"]

FALLBACK = {"json_schema": "json_object", "json_object": "none"}
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format",
                 "structured output", "grammar")
_FORMAT_STATUSES = frozenset({400, 422, 500})

_MODES: dict[str, str] = {}
"""The structured-output mode that worked, per chat URL (``auto`` only), for this process."""
_MODES_LOCK = threading.Lock()


def format_unsupported(resp: httpx.Response) -> bool:
    """Whether ``resp`` says the structured-output format is unsupported (400/422/500 whose
    message names the format)."""
    if resp.status_code not in _FORMAT_STATUSES:
        return False
    message = server_message(resp).lower()
    return any(w in message for w in _FORMAT_WORDS)


def forget_mode(chat_url: str) -> None:
    """Forget the structured-output mode learnt for ``chat_url`` (a new server there)."""
    with _MODES_LOCK:
        _MODES.pop(chat_url, None)


class OpenAICompatibleClient(StructuredProvider):
    """An :class:`LLMProvider` over an OpenAI-compatible ``/chat/completions`` endpoint.

    ``transport`` is passed to ``httpx.Client`` (e.g. a mounted or proxied transport).
    """

    def __init__(self, config: LLMConfig, *, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(config)
        self.url = config.chat_url
        self.where = self.url
        self._mode = None if config.structured == "auto" else config.structured
        if self._mode is None:
            with _MODES_LOCK:
                self._mode = _MODES.get(self.url)
        self._http = JsonHttp(timeout_s=config.timeout_s, max_retries=config.max_retries,
                              backoff_base_s=config.backoff_base_s,
                              backoff_max_s=config.backoff_max_s, seed=config.seed,
                              api_key=config.api_key, transport=transport, error=LLMError,
                              timeout_error=LLMTimeout,
                              timeout_hint=" (raise ANALOGIST_LLM_TIMEOUT?)")

    @property
    def structured_mode(self) -> str | None:
        """The structured-output mode in use (``None`` until ``auto`` has found one)."""
        return self._mode

    def close(self) -> None:
        self._http.close()
        super().close()

    def _payload(self, conversation: list[dict[str, str]], schema: Mapping[str, Any],
                 schema_name: str, temp: float, max_tok: int, mode: str) -> dict[str, Any]:
        msgs = [dict(m) for m in conversation]
        if mode in ("json_object", "none"):
            instruction = schema_instruction(schema, schema_name)
            if msgs[0]["role"] == "system":
                msgs[0]["content"] = msgs[0]["content"].rstrip() + "\n\n" + instruction
            else:
                msgs.insert(0, {"role": "system", "content": instruction})
        payload: dict[str, Any] = {"model": self.config.model, "messages": msgs,
                                   "temperature": temp, "max_tokens": max_tok}
        if self.config.seed is not None:
            payload["seed"] = self.config.seed
        if mode == "json_schema":
            payload["response_format"] = {"type": "json_schema", "json_schema": {
                "name": schema_name, "schema": dict(schema), "strict": True}}
        elif mode == "json_object":
            payload["response_format"] = {"type": "json_object"}
        return payload

    def _round(self, conversation: list[dict[str, str]], schema: Mapping[str, Any],
               schema_name: str, temp: float, max_tok: int, state: CallState) -> Reply:
        """One round: send (falling back between structured modes under ``auto``), parse."""
        mode = self._mode or "json_schema"
        auto = self.config.structured == "auto"
        resend = not is_deterministic(temp, self.config.seed)
        while True:
            payload = self._payload(conversation, schema, schema_name, temp, max_tok, mode)
            resp = self._http.post(self.url, payload, counter=state, deadline=state.deadline,
                                   resend_timeouts=resend,
                                   final=format_unsupported if auto and mode in FALLBACK
                                   else None,
                                   expected="200 with a chat.completion")
            if resp.status_code == 200:
                self._remember(mode)
                try:
                    body = resp.json()
                except ValueError:
                    raise LLMError(f"POST {self.url}: HTTP 200 but the body is not JSON; "
                                   "expected a chat.completion object") from None
                return parse_chat_completion(body, f"POST {self.url}: HTTP 200 but",
                                             self.config.model)
            if auto and mode in FALLBACK and format_unsupported(resp):
                mode = FALLBACK[mode]
                continue
            raise LLMError(f"POST {self.url} → HTTP {resp.status_code}: {server_message(resp)} "
                           f"(expected 200 with a chat.completion; model {self.config.model!r}, "
                           f"structured mode {mode!r})")

    def _remember(self, mode: str) -> None:
        self._mode = mode
        if self.config.structured == "auto":
            with _MODES_LOCK:
                _MODES[self.url] = mode


def make_provider(config: LLMConfig) -> LLMProvider:
    """The provider for ``config``: the in-process llama.cpp provider for ``provider="local"``,
    else the OpenAI-compatible HTTP client."""
    if config.provider == "local":
        return LocalLlamaProvider(config)
    return OpenAICompatibleClient(config)


def default_provider(role: str = "writer", **overrides: Any) -> LLMProvider | None:
    """The configured provider for ``role`` (see :func:`load_llm_config`), or ``None``."""
    config = load_llm_config(role, **overrides)
    return None if config is None else make_provider(config)
