"""The embedder protocol and what every back-end shares: the error, row normalisation, input
checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from analogist.errors import AnalogistError

__all__ = ["Embedder", "EmbedderError", "check_texts", "l2_normalize"]


class EmbedderError(AnalogistError):
    """An embedding backend that is missing, misconfigured, or answered with something invalid."""


@runtime_checkable
class Embedder(Protocol):
    """Text → unit vectors. ``embed`` returns float32 ``(len(texts), dim)``, L2-normalised rows."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit L2 norm, as float32 (an all-zero row stays zero)."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise EmbedderError(f"expected a 2-d array of embeddings, got shape {x.shape}")
    norms = np.sqrt(np.einsum("ij,ij->i", x, x, dtype=np.float64)).astype(np.float32)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(x / norms[:, None], dtype=np.float32)


def check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise EmbedderError("embed() takes a list of strings, not a single string")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise EmbedderError(f"texts[{i}] is {type(t).__name__}, expected str")
    return out
