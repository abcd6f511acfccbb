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
                 "ANALOGIST_LLM_MODEL, or ANALOGIST_LLM_PROVIDER=local and ANALOGIST_LLM_MODEL="
                 "<a .gguf file>, or the [llm] table of the config file)")

WRITERS: tuple[str, ...] = ("deterministic", "llm")
DEFAULT_WRITER = "deterministic"
"""The writer every face (CLI, HTTP, MCP) uses when none is asked for: the offline deterministic
encoder, so that no face needs an LLM (or answers differently) by default."""

Message = Mapping[str, str]


class LLMError(AnalogistError):
    """An LLM call failed (transport, HTTP status, or a response that never validated).

    ``usage`` is the accounting of the failed call (a :meth:`Usage.to_json` dict with
    ``calls`` 1 and ``failures`` 1, the tokens and seconds it spent) when a provider raised it;
    callers that keep their own accounting add it with :meth:`Usage.add_failed`.
    """

    usage: dict[str, Any] | None = None


class LLMNotConfigured(LLMError):
    """An LLM-only step was asked for but no LLM is configured."""


class LLMResponseError(LLMError):
    """The model's reply was not schema-valid JSON, even after the bounded repair retries."""


class LLMTimeout(LLMError):
    """The endpoint did not answer within the configured timeout (after retries)."""


class LLMBudgetExceeded(LLMError):
    """A per-call or per-run token or time budget is spent; the call was not (or no longer) made."""


@dataclass
class Usage:
    """Running totals of one provider: calls (failed ones included), failures, tokens, wall
    time, cache hits, retries, repair rounds."""

    calls: int = 0
    failures: int = 0
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

    def add_failed(self, record: Mapping[str, Any] | None) -> None:
        """Count one failed call from its accounting (``LLMError.usage``); ``None`` counts a
        failure that spent nothing measurable."""
        rec = dict(record or {})
        self.calls += 1
        self.failures += 1
        self.prompt_tokens += int(rec.get("prompt_tokens") or 0)
        self.completion_tokens += int(rec.get("completion_tokens") or 0)
        self.seconds += float(rec.get("seconds") or 0.0)
        self.retries += int(rec.get("retries") or 0)
        self.repairs += int(rec.get("repairs") or 0)

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "failures": self.failures, "prompt_tokens": self.prompt_tokens,
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
