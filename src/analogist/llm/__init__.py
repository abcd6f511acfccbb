"""LLM access: the provider protocol, an OpenAI-compatible client, prompts and JSON schemas."""

from analogist.llm.base import (
    NO_LLM_REASON,
    LLMError,
    LLMNotConfigured,
    LLMProvider,
    LLMResponseError,
    LLMResult,
    LLMTimeout,
    Usage,
)

__all__ = ["NO_LLM_REASON", "LLMError", "LLMNotConfigured", "LLMProvider", "LLMResponseError",
           "LLMResult", "LLMTimeout", "Usage"]
