"""LLM access: the provider protocol, an OpenAI-compatible client, a local in-process provider,
the HTTP layer, prompts and JSON schemas."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from analogist.llm.base import (
    DEFAULT_WRITER,
    NO_LLM_REASON,
    WRITERS,
    LLMBudgetExceeded,
    LLMError,
    LLMNotConfigured,
    LLMProvider,
    LLMResponseError,
    LLMResult,
    LLMTimeout,
    Usage,
)

if TYPE_CHECKING:
    from analogist.llm.cache import ResponseCache, cache_key
    from analogist.llm.client import OpenAICompatibleClient, default_provider, make_provider
    from analogist.llm.config import LLMConfig, load_llm_config

__all__ = ["DEFAULT_WRITER", "NO_LLM_REASON", "WRITERS", "LLMBudgetExceeded", "LLMConfig",
           "LLMError", "LLMNotConfigured", "LLMProvider", "LLMResponseError", "LLMResult",
           "LLMTimeout", "OpenAICompatibleClient", "ResponseCache", "Usage", "cache_key",
           "default_provider", "load_llm_config", "make_provider"]

# The clients' names resolve on first use (PEP 562), so that a face reading DEFAULT_WRITER or
# NO_LLM_REASON does not load httpx and jsonschema at start-up.
_LAZY = {"ResponseCache": "analogist.llm.cache", "cache_key": "analogist.llm.cache",
         "OpenAICompatibleClient": "analogist.llm.client",
         "default_provider": "analogist.llm.client", "make_provider": "analogist.llm.client",
         "LLMConfig": "analogist.llm.config", "load_llm_config": "analogist.llm.config"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'analogist.llm' has no attribute {name!r}")
