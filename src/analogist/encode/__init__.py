"""Text → Signature: the LLM writer, the deterministic encoder, abstraction levels and checks."""

from analogist.encode.base import MAX_EPISODE_CHARS, EncodeResult, Triple, source_hash

__all__ = ["MAX_EPISODE_CHARS", "EncodeResult", "Triple", "source_hash"]
