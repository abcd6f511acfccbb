"""The retrieval evaluation harness (issue 8; seed 002): pinned gold sets built from a store,
a runner that asks the real retrieval path N times, a paired comparison with McNemar and a stated
noise floor, a HippoRAG-style associative candidate retriever, and an end-to-end comparison of two
builds (git refs or source trees) in isolated environments.

Library entry points: :func:`build_goldset`, :func:`check_goldset`, :func:`run_goldset`,
:func:`compare_results`, :class:`AssociativeRetriever`, :class:`SurfaceRetriever`,
:func:`compare_refs`. The CLI (``analogist eval …``) calls the ``*_command`` helpers in
:mod:`analogist.bench.harness.cli`.
"""

from .associative import (
    AssociativeParams,
    AssociativeRetriever,
    SearchResult,
    SurfaceRetriever,
)
from .compare import compare_files, compare_results, render
from .goldset import (
    CATEGORIES,
    GoldQuery,
    GoldSet,
    GoldSetError,
    GoldSetParams,
    build_goldset,
    check_goldset,
    goldset_from_json,
    load_goldset,
    save_goldset,
)
from .refs import compare_refs
from .runner import RETRIEVERS, run_file, run_goldset, score_query

__all__ = [
    "CATEGORIES",
    "RETRIEVERS",
    "AssociativeParams",
    "AssociativeRetriever",
    "GoldQuery",
    "GoldSet",
    "GoldSetError",
    "GoldSetParams",
    "SearchResult",
    "SurfaceRetriever",
    "build_goldset",
    "check_goldset",
    "compare_files",
    "compare_refs",
    "compare_results",
    "goldset_from_json",
    "load_goldset",
    "render",
    "run_file",
    "run_goldset",
    "save_goldset",
    "score_query",
]
