"""Mapping a claim onto the vocabularies with the bundled embedder: the nearest relation term or
mechanism class by its definition, and the claim's text vectors (see
:mod:`analogist.safeguard.claims`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from analogist.foresight.event import mechanism_definitions
from analogist.index.embed import default_embedder
from analogist.safeguard.claims.model import Claim, ClaimReaderParams
from analogist.safeguard.lexicon import CAUSAL_RELATIONS
from analogist.signature import default_signature_vocabulary


@dataclass(frozen=True)
class _Terms:
    names: tuple[tuple[str, str], ...]  # (kind, name)
    vectors: Any


@lru_cache(maxsize=1)
def _embedder() -> Any:
    return default_embedder()  # the weights load here, once per process


@lru_cache(maxsize=1)
def _terms() -> _Terms:
    """Every mechanism class and causal relation predicate with its definition, embedded once."""
    names: list[tuple[str, str]] = []
    texts: list[str] = []
    for m, d in mechanism_definitions().items():
        names.append(("mechanism", m))
        texts.append(f"{m.replace('_', ' ')}: {d}")
    for p in default_signature_vocabulary():
        if p.name in CAUSAL_RELATIONS:
            names.append(("relation", p.name))
            texts.append(f"{p.name.replace('_', ' ')}: {p.definition}")
    return _Terms(tuple(names), _embedder().embed(texts))


@lru_cache(maxsize=4096)
def _vector(text: str) -> Any:
    return _embedder().embed([text])[0]


def _mapped(c: Claim, text: str, params: ClaimReaderParams) -> Claim:
    """A structural claim that names no vocabulary term, mapped onto the nearest one: by the
    claim's own words or by the whole item's, whichever is closer (the small parser sometimes
    leaves a claim only a word or two)."""
    if c.status != "structural" or c.relation is not None:
        return c
    terms = _terms()
    sims = np.maximum(terms.vectors @ _vector(c.text), terms.vectors @ _vector(text))
    j = int(np.argmax(sims))
    if float(sims[j]) < params.map_min_cosine:
        # an act that maps onto no relation or mechanism ("the king married a princess")
        return replace(c, status="event", causal=False)
    kind, name = terms.names[j]
    return replace(c, relation=name, relation_kind=kind, similarity=round(float(sims[j]), 3))
