"""Checking a pinned gold set against the store it was built from: one problem line per query that
became unwinnable or leaky (see :mod:`analogist.bench.harness.goldset`)."""

from __future__ import annotations

from typing import Any

from .corpus import (
    _doc_freq,
    _PairRater,
    phrase_matches,
    read_corpus,
    surface_overlap,
)
from .model import (
    GoldQuery,
    GoldSet,
    content_words,
)


def check_goldset(gold: GoldSet, memory: Any, namespace: str | None = None) -> list[str]:
    """Re-validate every query against the store; returns one problem line per query that
    became unwinnable or leaky (empty when the gold set still holds)."""
    ns = namespace or gold.namespace
    corpus = read_corpus(memory, ns)
    df = _doc_freq(corpus)
    vocab = set(df)
    problems: list[str] = []
    rater: _PairRater | None = None

    def bad(q: GoldQuery, why: str) -> None:
        problems.append(f"{q.id} ({q.category}): {why}")

    for q in gold.queries:
        missing = [e for e in (*q.expected, *q.exclude, *q.stale) if e not in corpus.data]
        if missing:
            bad(q, f"episode(s) {missing} no longer in namespace {ns!r}")
            continue
        stale_answers = [e for e in q.expected if e in corpus.superseded_by]
        if stale_answers:
            bad(q, f"answer(s) {stale_answers} are now superseded")
            continue
        c = q.check
        if q.category == "exact_rare":
            for w in c.get("words", []):
                if df.get(w) != {q.expected[0]}:
                    bad(q, f"word {w!r} no longer has document frequency 1 in {q.expected[0]}")
                    break
        elif q.category == "phrase":
            now = phrase_matches(corpus, c.get("phrase", q.text))
            if now != set(q.expected):
                bad(q, f"phrase now matches {sorted(now)}, not the pinned answer set")
        elif q.category == "paraphrase":
            leak = sorted(content_words(q.text) & corpus.words(q.expected[0]))
            if leak:
                bad(q, f"paraphrase leaks {leak} into the target")
        elif q.category == "associative":
            seed = c.get("seed")
            if seed not in corpus.data:
                bad(q, f"seed episode {seed!r} is gone")
                continue
            nb = corpus.neighbours(seed)
            lost = [e for e in q.expected if e not in nb]
            ws = set(c.get("words", []))
            shared = [e for e in q.expected if corpus.words(e) & ws]
            if lost:
                bad(q, f"answers {lost} lost their structural edge to {seed}")
            elif shared:
                bad(q, f"answers {shared} now share a query word")
        elif q.category == "nonsense":
            present = [w for w in c.get("words", []) if w in vocab]
            if present:
                bad(q, f"made-up words {present} now occur in the corpus")
        elif q.category == "superseded":
            stale = c.get("stale")
            if corpus.superseded_by.get(stale) != q.expected[0]:
                bad(q, f"{stale} is no longer superseded by {q.expected[0]}")
        elif q.category == "structural":
            src = c.get("source")
            if src not in corpus.data:
                bad(q, f"source episode {src!r} is gone")
                continue
            if rater is None:
                rater = _PairRater(corpus)
            lost = []
            for e in q.expected:
                ov = surface_overlap(q.signature or corpus.data[src], corpus.data[e])
                score, why = rater.rate(src, e)
                if ov > gold.params.max_surface_overlap:
                    lost.append(f"{e} (narrative overlap {ov:.2f})")
                elif why:
                    lost.append(f"{e} (contradicts: {why[0]})")
                elif score < gold.params.min_structural_score:
                    lost.append(f"{e} (SME share {score:.2f})")
            if lost:
                bad(q, f"answers no longer structural analogues of {src}: {'; '.join(lost)}"
                    [:500])
    return problems
