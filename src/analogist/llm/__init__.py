"""LLM access: the provider protocol, an OpenAI-compatible client, a local in-process provider,
the HTTP layer, prompts and JSON schemas."""

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
from analogist.llm.cache import ResponseCache, cache_key
from analogist.llm.client import OpenAICompatibleClient, default_provider, make_provider
from analogist.llm.config import LLMConfig, load_llm_config

__all__ = ["DEFAULT_WRITER", "NO_LLM_REASON", "WRITERS", "LLMBudgetExceeded", "LLMConfig",
           "LLMError", "LLMNotConfigured", "LLMProvider",
           "LLMResponseError", "LLMResult", "LLMTimeout", "OpenAICompatibleClient",
           "ResponseCache", "Usage", "cache_key", "default_provider", "load_llm_config",
           "make_provider"]
