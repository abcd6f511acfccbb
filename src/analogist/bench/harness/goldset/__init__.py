"""Pinned gold sets for retrieval over a store (seed 002, "The gold set", adapted to analogy).

A gold set is derived from one namespace of a :class:`~analogist.memory.sqlite.Memory` and
written as JSON. Ground truth is a list of **episode ids** (never a pattern), and every query
carries a ``derivation`` string saying how its answer was obtained. Categories:

* ``exact_rare`` — mined: words with document frequency 1 over the namespace's text fields; the
  single episode holding them is the only answer (seed 002: df = 1 tokens).
* ``phrase`` — mined: a verbatim word n-gram found (case-insensitively) in 2 to
  ``max_phrase_matches`` episodes; the matching set is the answer key (seed 002 rejects phrases
  matching more than 25 nodes; the bound is a parameter here because a casebook is small).
* ``paraphrase`` — hand-written query texts locked to a target id (given to the builder); the
  build proves that no content word of the query occurs in any text field of the target, and a
  leak fails the build.
* ``associative`` — derived from structural edges (shared schema, equal WL fingerprint,
  supersession): the query is made of one episode's distinctive words, the answers are its
  edge-neighbours, and neighbours sharing any query word are dropped, so the only route from the
  query to an answer is seed → edge → neighbour.
* ``nonsense`` — control: made-up words verified absent from the namespace; the right answer is
  nothing ("no match").
* ``superseded`` — derived from supersession links: the query is made of words the stale episode
  and its correction share; the correction must be returned and rank above the stale episode.
* ``structural`` — new for analogy, derived from the store's own structure as seed 002 derives
  its associative category from graph edges: the query is a stored episode's whole Signature
  (the episode itself excluded from the ranking; a text retriever sees its narrative); the
  answers are the live episodes the store itself makes plausible analogues of it — SME maps the
  pair well (the mapping covers at least ``min_structural_score`` of the larger self-match, as
  :mod:`analogist.consolidate` rates pairs), their concrete narratives (L0 plus surface
  entities) overlap little (content-word Jaccard at most ``max_surface_overlap``: "far
  analogues"; the abstract levels and role descriptions of one mechanism legitimately share
  words, so they are not part of this check), and the judge finds no contradiction between
  them (its contradictions plus :func:`analogist.consolidate.pair_contradictions`, so a
  reversed-edge decoy is not an answer). Every answer's score and overlap are recorded in the
  query's derivation. The fused and structural retrievers rank their shortlist by SME, so their
  advantage on this category is expected by construction (as the associative retriever's is on
  ``associative``); the category measures whether retrieval *reaches* the analogues a text
  retriever cannot.

Departures from seed 002: ids are episode ids; the builder mines associative queries from the
store's structural edges (there is no value hub); ``structural`` is an added category; the
category sizes are capped by :class:`GoldSetParams` and chosen deterministically (sorted ids, a
seeded generator for nonsense words).

Content words: lower-case alphabetic runs of at least 3 letters that are not in a short stop list,
with a plural ``s`` folded (``ledgers`` = ``ledger``). Text fields of an episode: its role tags and
descriptions, violated invariant, symptom, fix operator, levels L0–L3, surface domain and
entities.

The package's rooms: :mod:`~analogist.bench.harness.goldset.model` (the records, categories and
content words), :mod:`~analogist.bench.harness.goldset.corpus` (the corpus view and the pair
rater), :mod:`~analogist.bench.harness.goldset.build`, :mod:`~analogist.bench.harness.goldset.check`
and :mod:`~analogist.bench.harness.goldset.files` (JSON load and save). Every public name is
re-exported here.
"""

from __future__ import annotations

from .build import build_goldset
from .check import check_goldset
from .corpus import (
    Corpus,
    phrase_matches,
    read_corpus,
    surface_overlap,
)
from .files import (
    goldset_from_json,
    load_goldset,
    read_json_file,
    save_goldset,
)
from .model import (
    CATEGORIES,
    FORMAT,
    STOPWORDS,
    GoldQuery,
    GoldSet,
    GoldSetError,
    GoldSetParams,
    content_words,
    episode_text,
    narrative_text,
    raw_words,
)

__all__ = [
    "CATEGORIES",
    "Corpus",
    "FORMAT",
    "GoldQuery",
    "GoldSet",
    "GoldSetError",
    "GoldSetParams",
    "STOPWORDS",
    "build_goldset",
    "check_goldset",
    "content_words",
    "episode_text",
    "goldset_from_json",
    "load_goldset",
    "narrative_text",
    "phrase_matches",
    "raw_words",
    "read_corpus",
    "read_json_file",
    "save_goldset",
    "surface_overlap",
]
