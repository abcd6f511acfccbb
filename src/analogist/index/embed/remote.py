"""Back-ends over other people's models: any sentence-transformers model (optional package) and
any OpenAI-compatible ``/v1/embeddings`` endpoint (through the shared HTTP layer)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from analogist.index.embed.base import EmbedderError, check_texts, l2_normalize
from analogist.llm.config import embedding_settings
from analogist.llm.http import JsonHttp

__all__ = ["OpenAIEmbedder", "SentenceTransformersEmbedder"]


class SentenceTransformersEmbedder:
    """Any sentence-transformers model (optional dependency, imported when constructed).

    Local files only (the Hugging Face cache or a directory) unless ``allow_download=True``.
    """

    def __init__(self, model: str = "sentence-transformers/all-MiniLM-L6-v2", *,
                 device: str | None = "cpu", batch_size: int = 32,
                 allow_download: bool = False) -> None:
        try:  # an optional heavy dependency (torch), never pulled by a plain install
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbedderError(
                "the sentence-transformers backend needs the optional package "
                "'sentence-transformers' (pip install sentence-transformers; it pulls torch); "
                "the default embedder needs neither") from None
        try:
            self._model = SentenceTransformer(model, device=device,
                                              local_files_only=not allow_download)
        except Exception as e:  # noqa: BLE001 - any loader failure becomes one clear error
            raise EmbedderError(f"cannot load sentence-transformers model {model!r}"
                                f"{'' if allow_download else ' from local files'}: {e}") from None
        self.name = f"st:{model}"
        get_dim = getattr(self._model, "get_sentence_embedding_dimension", None)
        self.dim = int(get_dim()) if get_dim is not None else 0
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        x = self._model.encode(items, batch_size=self.batch_size, convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
        return l2_normalize(x)


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint (``POST {base_url}/embeddings``).

    The transport is the one HTTP layer shared with the chat client
    (:class:`analogist.llm.http.JsonHttp`): the same timeouts, retry set (429, 500, 502, 503,
    504, transport errors), backoff with jitter and error messages.

    Args:
        base_url: e.g. ``https://api.openai.com/v1`` or ``http://localhost:8080/v1``; default
            ``$ANALOGIST_EMBED_BASE_URL``.
        model: the model name sent in each request; default ``$ANALOGIST_EMBED_MODEL``.
        api_key: sent as ``Authorization: Bearer …`` when set; default ``$ANALOGIST_API_KEY``.
        dim: the embedding dimension when known; otherwise learnt from the first response
            (reading :attr:`dim` before any call sends one short request).
        timeout: seconds per request (connect, read, write, pool).
        max_retries: further attempts after a retryable answer or a transport error, waiting
            about ``backoff * 2**attempt`` seconds (or the server's ``Retry-After``), at most
            ``max_wait``.
        batch_size: texts per request.

    The response must be ``{"data": [{"embedding": [...], "index": i}, ...], ...}`` with one
    embedding per input and equal lengths; anything else is an :class:`EmbedderError` naming
    what was wrong. Vectors are L2-normalised on arrival.
    """

    def __init__(self, base_url: str | None = None, model: str | None = None,
                 api_key: str | None = None, *, dim: int | None = None,
                 timeout: float = 30.0, max_retries: int = 4, backoff: float = 0.5,
                 max_wait: float = 30.0, batch_size: int = 64,
                 extra_body: Mapping[str, Any] | None = None) -> None:
        env = embedding_settings()
        base_url = base_url or env["base_url"]
        model = model or env["model"]
        if not base_url:
            raise EmbedderError("no embeddings endpoint: pass base_url= or set "
                                "ANALOGIST_EMBED_BASE_URL (e.g. http://localhost:8080/v1)")
        if not model:
            raise EmbedderError("no embedding model: pass model= or set ANALOGIST_EMBED_MODEL")
        if batch_size < 1 or max_retries < 0:
            raise EmbedderError("batch_size must be ≥ 1 and max_retries ≥ 0")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/embeddings"
        self.model = model
        self.name = f"openai:{model}"
        self._dim = dim
        self.batch_size = batch_size
        self.extra_body = dict(extra_body or {})
        key = api_key if api_key is not None else env["api_key"]
        self._http = JsonHttp(timeout_s=timeout, max_retries=max_retries, backoff_base_s=backoff,
                              backoff_max_s=max_wait, api_key=key, error=EmbedderError)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def embed(self, texts: list[str]) -> np.ndarray:
        items = check_texts(texts)
        parts = [self._embed_batch(items[i:i + self.batch_size])
                 for i in range(0, len(items), self.batch_size)]
        if not parts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return np.concatenate(parts, axis=0)

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        body = {**self.extra_body, "model": self.model, "input": batch,
                "encoding_format": "float"}
        resp = self._http.post_json(self.url, body, expected="an embeddings object")
        where = f"{self.url}: malformed embeddings response"
        data = resp.get("data") if isinstance(resp, dict) else None
        if not isinstance(data, list):
            raise EmbedderError(f"{where}: expected an object with a 'data' list, got "
                                f"{json.dumps(resp)[:160]}")
        if len(data) != len(batch):
            raise EmbedderError(f"{where}: {len(data)} embedding(s) for {len(batch)} input(s)")
        rows: list[Any] = [None] * len(batch)
        for j, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise EmbedderError(f"{where}: data[{j}] has no 'embedding' list")
            idx = item.get("index", j)
            if not isinstance(idx, int) or not 0 <= idx < len(batch) or rows[idx] is not None:
                raise EmbedderError(f"{where}: data[{j}].index {idx!r} is missing, out of "
                                    f"range or repeated")
            rows[idx] = item["embedding"]
        lengths = {len(r) for r in rows}
        if len(lengths) != 1 or 0 in lengths:
            raise EmbedderError(f"{where}: embeddings have lengths {sorted(lengths)}")
        try:
            x = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError):
            raise EmbedderError(f"{where}: embedding values are not all numbers") from None
        if not np.isfinite(x).all():
            raise EmbedderError(f"{where}: embedding contains NaN or infinity")
        n = x.shape[1]
        if self._dim is None:
            self._dim = n
        elif n != self._dim:
            raise EmbedderError(f"{where}: dimension {n}, expected {self._dim}")
        return l2_normalize(x)
