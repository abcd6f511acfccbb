"""The LLM provider protocol: one method, JSON out, every call accounted for.

Everything in analogist that talks to a language model does so through :class:`LLMProvider`:

``complete_json(messages, schema, *, schema_name, temperature, max_tokens) -> LLMResult``

``messages`` are chat messages (``{"role": "system"|"user"|"assistant", "content": str}``);
``schema`` is a JSON Schema (draft 2020-12 subset) the returned object must satisfy. The provider
returns a parsed, schema-valid ``dict`` (or raises :class:`LLMResponseError`), plus the token and
time accounting of the call. A provider keeps running totals in :attr:`LLMProvider.usage`.

The LLM is optional. Code that can use one takes ``provider: LLMProvider | None``; with ``None``
it runs its deterministic path, and LLM-only steps report :data:`NO_LLM_REASON` as the reason they
were skipped. Nothing substitutes a fake model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from analogist.errors import AnalogistError

NO_LLM_REASON = ("skipped: no LLM configured (set ANALOGIST_LLM_BASE_URL and "
                 "ANALOGIST_LLM_MODEL, or the [llm] table of the config file)")

Message = Mapping[str, str]


class LLMError(AnalogistError):
    """An LLM call failed (transport, HTTP status, or a response that never validated)."""


class LLMNotConfigured(LLMError):
    """An LLM-only step was asked for but no LLM is configured."""


class LLMResponseError(LLMError):
    """The model's reply was not schema-valid JSON, even after the bounded repair retries."""


class LLMTimeout(LLMError):
    """The endpoint did not answer within the configured timeout (after retries)."""


@dataclass
class Usage:
    """Running totals of one provider: calls, tokens, wall time, cache hits, retries."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cache_hits: int = 0
    retries: int = 0
    repairs: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, r: LLMResult) -> None:
        self.calls += 1
        self.prompt_tokens += r.prompt_tokens
        self.completion_tokens += r.completion_tokens
        self.seconds += r.seconds
        self.cache_hits += int(r.cached)
        self.retries += max(0, r.attempts - 1 - r.repairs)
        self.repairs += r.repairs

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "total_tokens": self.total_tokens,
                "seconds": round(self.seconds, 4), "cache_hits": self.cache_hits,
                "retries": self.retries, "repairs": self.repairs}


def sum_usage(*parts: Mapping[str, Any]) -> dict[str, Any]:
    """Add usage records (``Usage.to_json()`` dicts) field by field; non-numbers are skipped."""
    tot: dict[str, Any] = {}
    for u in parts:
        for k, v in u.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                tot[k] = tot.get(k, 0) + v
    return tot


@dataclass(frozen=True)
class LLMResult:
    """One completed, schema-valid call.

    ``data`` the parsed object; ``text`` the raw reply content; ``model`` the model that
    answered; tokens as reported by the server (0 when it reports none); ``seconds`` wall time
    including retries (0.0 for a cache hit); ``cached`` whether it came from the response cache;
    ``attempts`` HTTP requests made (rate-limit/5xx retries and repair rounds included);
    ``repairs`` how many of those were repair rounds; ``request_hash`` the cache key.
    """

    data: dict[str, Any]
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    attempts: int = 1
    repairs: int = 0
    request_hash: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class LLMProvider(Protocol):
    """Anything that turns chat messages + a JSON Schema into a schema-valid object."""

    model: str
    usage: Usage

    def complete_json(self, messages: Sequence[Message], schema: Mapping[str, Any], *,
                      schema_name: str = "output", temperature: float | None = None,
                      max_tokens: int | None = None) -> LLMResult: ...
