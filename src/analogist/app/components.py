"""The builders of :class:`analogist.app.Analogist`: this thread's memory and retrievers, and
the shared embedder, LLM providers, episode writers, corpus and safeguard, each built from the
application's :class:`~analogist.app.Settings` when first asked for."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analogist.errors import AnalogistError
from analogist.llm.base import NO_LLM_REASON, WRITERS
from analogist.memory import is_postgres_url, open_memory
from analogist.memory.sqlite import Memory, _namespace
from analogist.signature import Signature

if TYPE_CHECKING:
    from analogist.foresight.event import Corpus
    from analogist.retrieve import Retriever
    from analogist.safeguard import Safeguard


class Components:
    """The components section of :class:`~analogist.app.Analogist`; the state below is set by
    ``Analogist.__init__``."""

    settings: Any  # the application's Settings (analogist.app, which imports this module)
    _lock: threading.RLock
    _local: threading.local
    _opened: list[Memory]
    _embedder: Any
    _encoder: Any
    _corpus: Corpus | None
    _vectors: dict[str, Any]

    def memory(self) -> Memory:
        """This thread's connection to the store."""
        m = getattr(self._local, "memory", None)
        if m is None:
            store = str(self.settings.store)
            if store != ":memory:" and not is_postgres_url(store) and not Path(store).is_dir():
                Path(store).parent.mkdir(parents=True, exist_ok=True)
            m = open_memory(store)
            self._local.memory = m
            self._local.retrievers = {}
            with self._lock:
                self._opened.append(m)
        return m

    def namespace(self, namespace: str | None) -> str:
        return self.settings.namespace if namespace is None else _namespace(namespace)

    def retriever(self, namespace: str | None = None) -> Retriever:
        """This thread's retriever over ``namespace`` (its caches live as long as the app)."""
        ns = self.namespace(namespace)
        mem = self.memory()
        r = self._local.retrievers.get(ns)
        if r is None:
            # retrieval (the engine, the judge), loaded on use (`analogist add` starts without)
            from analogist.retrieve import RetrieveParams, Retriever

            r = Retriever(mem, ns, params=RetrieveParams(k=self.settings.k),
                          embedder="auto" if self.settings.embeddings else None,
                          log=self.settings.log_finds)
            self._local.retrievers[ns] = r
        return r

    def embedder(self) -> Any:
        """The offline text embedder (shared), or None when embeddings are off."""
        if not self.settings.embeddings:
            return None
        with self._lock:
            if self._embedder is None:
                # the embedder's model code and tokenizers load only when embeddings are wanted
                from analogist.index.embed import default_embedder

                self._embedder = default_embedder()
            return self._embedder

    def provider(self, role: str, notes: list[str] | None = None, what: str | None = None
                 ) -> Any:
        """The configured LLM provider for ``role``, or None; when None and ``notes`` is given,
        one line saying why is appended (``what: reason``)."""
        if not self.settings.llm:
            if notes is not None:
                notes.append(f"{what or role}: the LLM is off")
            return None
        # the LLM configuration (tomllib, the config file) loads only when an LLM step is asked for
        from analogist.llm.config import load_llm_config

        config = load_llm_config(role, env=self.settings.env)
        if config is None:
            if notes is not None:
                notes.append(f"{what or role}: {NO_LLM_REASON}")
            return None
        # the HTTP client (httpx) and the local back-end load only when an LLM is configured
        from analogist.llm.client import make_provider

        return make_provider(config)

    def writer(self, writer: str | None = None) -> Any:
        """The episode writer: the shared deterministic encoder, or an LLM writer."""
        name = self.settings.writer if writer is None else writer
        if name == "deterministic":
            # spaCy and the lexicons load only for commands that write signatures
            from analogist.encode.deterministic import DeterministicEncoder

            with self._lock:
                if self._encoder is None:
                    emb = self.embedder()
                    self._encoder = DeterministicEncoder(embedder="auto" if emb is None else emb)
                return self._encoder
        if name == "llm":
            if not self.settings.llm:
                raise AnalogistError("writer llm: the LLM is off", field="writer")
            prov = self.provider("writer")
            if prov is None:
                raise AnalogistError("writer llm: " + NO_LLM_REASON, field="writer")
            from analogist.encode.llm_writer import LLMWriter  # the LLM path, loaded on use

            return LLMWriter(prov)
        raise AnalogistError(f"writer must be one of {', '.join(WRITERS)}, got {name!r}",
                             field="writer")

    def corpus(self) -> Corpus:
        """The bundled historical corpus (loaded once)."""
        with self._lock:
            if self._corpus is None:
                from analogist.foresight.event import load_corpus  # foresight, loaded on use

                self._corpus = load_corpus()
            return self._corpus

    def safeguard(self) -> Safeguard:
        """The analogy safeguard, with the LLM (role ``safeguard``) when one is configured."""
        # the safeguard's concept lexicons and spaCy load only for checks
        from analogist.safeguard import Safeguard

        prov = self.provider("safeguard")
        if prov is not None:
            return Safeguard(prov)
        sg = getattr(self._local, "safeguard", None)
        if sg is None:     # one per thread, so that checks run at once without sharing state
            sg = self._local.safeguard = Safeguard()
        return sg

    def level_embedder(self) -> Callable[[Signature], Any] | None:
        """``signature -> {level: vector}`` for storing, or None when embeddings are off."""
        emb = self.embedder()
        if emb is None:
            return None
        from analogist.retrieve import level_embeddings  # retrieval's module, loaded on use

        return lambda sig: level_embeddings(sig, emb)
