"""The seed 003 numbers the safeguard checks against (and our own limits, labelled)."""

from __future__ import annotations

SHARE_THRESHOLD = 0.15
"""Seed 003 rule 2: analogy content "should be under ~15%" of the turn; above it is flagged."""
MIN_SIMILARITIES = 2
"""Seed 003 rule 1: "At least 2 similarities"."""
MIN_DIFFERENCES = 1
"""Seed 003 rule 1: "At least 1 key structural difference"."""
MIN_CAVEAT_WORDS = 5
"""Ours: the shortest meaningful applicability caveat, in words (English)."""
MIN_CAVEAT_CHARS_ZH = 8
"""Ours: the shortest meaningful applicability caveat, in Chinese characters."""
MIN_ENCODE_WORDS = 8
"""Ours: a side is encoded from text only when its text has at least this many words."""
MAX_MISSED = 4
"""Ours: the most missed differences named per analogy."""
