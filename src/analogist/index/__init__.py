"""MAC channels: content vectors, graph fingerprints (pure functions, no I/O), and the saved
stage-1 index of a namespace (:mod:`analogist.index.mac`, which reads and writes its own files)."""

from typing import Any

from analogist.index.features import (
    FINGERPRINT_DEPTH,
    EpisodeFeatures,
    causal_motifs,
    content_features,
    extract_features,
    wl_fingerprint,
)

__all__ = [
    "FINGERPRINT_DEPTH",
    "ContentIndex",
    "EpisodeFeatures",
    "ContentIndexError",
    "causal_motifs",
    "content_features",
    "extract_features",
    "wl_fingerprint",
]


def __getattr__(name: str) -> Any:
    """The content index's names, loaded on first use: a store's add reads only the features
    (PEP 562)."""
    if name in ("ContentIndex", "ContentIndexError"):
        from analogist.index import content  # loaded on use (`analogist add` starts without)

        return getattr(content, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
