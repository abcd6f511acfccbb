"""MAC channels: content vectors, graph fingerprints (pure functions, no I/O)."""

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
