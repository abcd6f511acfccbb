"""MAC channels: content vectors, graph fingerprints (pure functions, no I/O), and the saved
stage-1 index of a namespace (:mod:`analogist.index.mac`, which reads and writes its own files)."""

from analogist.index.content import ContentIndex, ContentIndexError
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
