"""Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and
Beyond", eq. 3.15 with the non-negative idf variant) as a lexical surface baseline.

Tokens are lower-cased runs of letters and digits; no stemming, no stop list. Document
frequencies come from the texts handed to :meth:`BM25Scorer.prepare` (for a benchmark: every
distinct text it holds — unsupervised corpus statistics, no labels). :meth:`BM25Scorer.score`
returns the BM25 score of ``base`` as the document for ``target`` as the query, divided by the
query's score against itself, so that a pair score lies on a comparable scale across queries
(our normalisation, needed for the binary task's fixed threshold; rankings for one query are
unchanged by it).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from analogist.params import bounded, check_bounds

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class BM25Params:
    """``k1`` (term-frequency saturation) and ``b`` (length normalisation), the usual
    defaults of Robertson & Zaragoza (2009, §3.4)."""

    k1: float = bounded(1.2, lo=0.0)
    b: float = bounded(0.75, lo=0.0, hi=1.0)

    def __post_init__(self) -> None:
        check_bounds(self)


class BM25Scorer:
    """BM25 with corpus statistics from :meth:`prepare`; texts not prepared are added."""

    def __init__(self, params: BM25Params | None = None) -> None:
        self.params = params or BM25Params()
        self._tf: dict[str, Counter[str]] = {}
        self._len: dict[str, int] = {}
        self._df: Counter[str] = Counter()
        self._self: dict[str, float] = {}
        self._avg = 0.0

    def prepare(self, texts: Sequence[str]) -> None:
        for t in dict.fromkeys(texts):
            if t in self._tf:
                continue
            tf = Counter(tokens(t))
            self._tf[t] = tf
            self._len[t] = sum(tf.values())
            self._df.update(tf.keys())
        self._avg = sum(self._len.values()) / max(1, len(self._len))
        self._self.clear()

    def _idf(self, term: str) -> float:
        n, df = len(self._tf), self._df.get(term, 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def raw(self, doc: str, query: str) -> float:
        """The BM25 score of ``doc`` for ``query``."""
        if doc not in self._tf or query not in self._tf:
            self.prepare([doc, query])
        k1, b = self.params.k1, self.params.b
        avg = self._avg
        tf, dl = self._tf[doc], self._len[doc]
        out = 0.0
        for term in self._tf[query]:
            f = tf.get(term, 0)
            if f:
                out += self._idf(term) * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / max(avg,
                                                                                     1e-9)))
        return out

    def score(self, base: str, target: str) -> float:
        """``raw(base, target)`` over ``raw(target, target)`` (0 when the query has no
        tokens)."""
        if target not in self._self:
            self._self[target] = self.raw(target, target)
        total = self._self[target]
        return self.raw(base, target) / total if total > 0 else 0.0
