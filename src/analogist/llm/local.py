"""The local provider: a GGUF model run in-process through llama.cpp (``xllamacpp`` bindings).

``ANALOGIST_LLM_PROVIDER=local`` and ``ANALOGIST_LLM_MODEL=/path/to/model.gguf`` (or
``provider = "local"`` and ``model = "..."`` in the ``[llm]`` table) make every LLM step —
writer, critic, parametric channel, PARB's A0/A1 — run on that file, with no server to start, no
API key and nothing downloaded at run time. Install the bindings with ``pip install
'analogist[local]'`` (``xllamacpp``: prebuilt CPU wheels, no compiler). Any chat model in GGUF
format works; its own chat template (from the GGUF metadata) formats the messages.

Every request is **grammar-constrained**: the call's JSON Schema, with string lengths and array
sizes bounded (:func:`analogist.llm.structured.bounded_schema`), goes to llama.cpp as
``json_schema``, which turns it into a grammar the sampler must follow, so the reply is JSON of
the schema's shape by construction (it is still validated, and a reply cut off by ``max_tokens``
still gets the repair rounds). ``max_tokens`` defaults to the schema's bound
(:func:`~analogist.llm.structured.schema_max_tokens`); the per-call time budget
(``call_budget_s``, else ``timeout_s``) is passed as llama.cpp's ``t_max_predict_ms``, so a
generation stops in time instead of running on in the background.

The model is loaded once per process per (file, context, threads) and shared by every provider
over it (the writer, critic and parametric roles of one command). ``threads`` defaults to half
the cores (at least 1, at most 4): llama.cpp's spinning worker threads slow down sharply when
they compete with other processes for the cores.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analogist.llm.base import LLMError, LLMNotConfigured
from analogist.llm.config import LLMConfig
from analogist.llm.structured import (
    CallState,
    Reply,
    StructuredProvider,
    bounded_schema,
    parse_chat_completion,
    schema_instruction,
)

__all__ = ["LOCAL_EXTRA", "LocalLlamaProvider", "check_gguf", "default_threads"]

LOCAL_EXTRA = "pip install 'analogist[local]'"
_GGUF_MAGIC = b"GGUF"
_SERVERS: dict[tuple[str, int, int], Any] = {}
_SERVERS_LOCK = threading.Lock()


def default_threads() -> int:
    """Half the cores, at least 1 and at most 4."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def check_gguf(model: str) -> Path:
    """The resolved path of ``model`` when it is a readable GGUF file; else an error naming it."""
    path = Path(model).expanduser()
    what = (f"ANALOGIST_LLM_MODEL={model!r}: expected the path of a .gguf model file for the "
            "local provider")
    if not path.is_file():
        raise LLMNotConfigured(f"{what}; no such file")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as e:
        raise LLMNotConfigured(f"{what}; cannot read it ({e.strerror or e})") from None
    if magic != _GGUF_MAGIC:
        raise LLMNotConfigured(f"{what}; the file does not start with the GGUF magic bytes")
    return path.resolve()


def _server(path: Path, n_ctx: int, threads: int) -> Any:
    key = (str(path), n_ctx, threads)
    with _SERVERS_LOCK:
        srv = _SERVERS.get(key)
        if srv is not None:
            return srv
        try:
            import xllamacpp  # heavy optional dependency (a native llama.cpp build): lazy
        except ImportError:
            raise LLMNotConfigured(f"the local LLM provider needs the llama.cpp bindings "
                                   f"'xllamacpp' ({LOCAL_EXTRA})") from None
        p = xllamacpp.CommonParams()
        p.model.path = str(path)
        p.n_ctx = n_ctx
        p.n_parallel = 1
        p.cpuparams.n_threads = threads
        p.cpuparams_batch.n_threads = threads
        p.warmup = False
        p.verbosity = -1          # llama.cpp logs nothing: the CLI prints one line or a result
        try:
            srv = xllamacpp.Server(p)
        except Exception as e:  # the bindings raise plain RuntimeErrors
            raise LLMError(f"{path}: llama.cpp could not load the model "
                           f"({type(e).__name__}: {e}); expected a GGUF chat model") from None
        _SERVERS[key] = srv
        return srv


class LocalLlamaProvider(StructuredProvider):
    """An :class:`~analogist.llm.base.LLMProvider` over a GGUF file run in-process (see the
    module docstring). Construction checks the file and loads the model (once per process)."""

    def __init__(self, config: LLMConfig) -> None:
        super().__init__(config)
        self.path = check_gguf(config.model)
        self.where = f"local model {self.path.name}"
        self.model = f"local:{self.path.name}"
        self.threads = config.threads or default_threads()
        self._mode = "grammar"
        self._server = _server(self.path, config.context_tokens, self.threads)

    @property
    def listening_address(self) -> str:
        """The loopback address of llama.cpp's OpenAI-compatible server over the same loaded
        model (``xllamacpp`` always starts one; analogist itself calls the model in-process)."""
        return str(self._server.listening_address)

    def _generate(self, request: dict[str, Any]) -> Any:
        try:
            return self._server.handle_chat_completions(request)
        except Exception as e:  # the bindings raise plain RuntimeErrors
            raise LLMError(f"{self.where}: llama.cpp failed: {type(e).__name__}: {e}") from None

    def _round(self, conversation: list[dict[str, str]], schema: Mapping[str, Any],
               schema_name: str, temp: float, max_tok: int, state: CallState) -> Reply:
        budget = self.config.call_budget_s or self.config.timeout_s
        if state.deadline is not None:
            budget = min(budget, max(0.001, state.deadline - time.monotonic()))
        request: dict[str, Any] = {
            "messages": [dict(m) for m in conversation], "temperature": temp,
            "max_tokens": max_tok, "json_schema": bounded_schema(schema),
            "t_max_predict_ms": max(1, int(budget * 1000))}
        if self.config.seed is not None:
            request["seed"] = self.config.seed
        state.attempts += 1
        body = self._generate(request)
        if isinstance(body, dict) and "error" in body:
            err = body["error"]
            message = err.get("message") if isinstance(err, dict) else str(err)
            if "schema" not in str(message).lower() and "grammar" not in str(message).lower():
                raise LLMError(f"{self.where}: llama.cpp refused the request: {message}")
            # the schema did not convert to a grammar: ask with the schema in the prompt
            msgs = [dict(m) for m in conversation]
            msgs.insert(0, {"role": "system", "content": schema_instruction(schema,
                                                                            schema_name)})
            request = {k: v for k, v in request.items() if k != "json_schema"} | {
                "messages": msgs}
            state.attempts += 1
            body = self._generate(request)
            if isinstance(body, dict) and "error" in body:
                raise LLMError(f"{self.where}: llama.cpp refused the request: {body['error']}")
        reply = parse_chat_completion(body, self.where, self.config.model)
        reply.model = f"local:{self.path.name}"
        return reply
