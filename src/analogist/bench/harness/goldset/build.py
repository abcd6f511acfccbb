"""Building a gold set: each category's queries mined from the corpus view, and the builder that
puts them together (see :mod:`analogist.bench.harness.goldset`; "the module docstring" below is
that package's)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .corpus import (
    Corpus,
    _distinctive,
    _doc_freq,
    _nonsense_word,
    _PairRater,
    _phrase_index,
    phrase_matches,
    read_corpus,
)
from .model import (
    GoldQuery,
    GoldSet,
    GoldSetError,
    GoldSetParams,
    _fold,
    content_words,
    narrative_text,
)


def _paraphrase_queries(corpus: Corpus, namespace: str,
                        paraphrases: Sequence[Mapping[str, Any]]) -> list[GoldQuery]:
    """The hand-written paraphrase queries, each machine-checked (a live target, no content
    word shared with it)."""
    out: list[GoldQuery] = []
    for i, rec in enumerate(paraphrases):
        where = f"paraphrases[{i}]"
        if not isinstance(rec, Mapping) or not isinstance(rec.get("target"), str) or \
                not isinstance(rec.get("text"), str) or not rec["text"].strip():
            raise GoldSetError("expected {target: episode id, text: query text}", field=where)
        tgt, text = rec["target"], rec["text"].strip()
        if tgt not in corpus.data or tgt in corpus.superseded_by:
            raise GoldSetError(f"target {tgt!r} is not a live episode of namespace "
                               f"{namespace!r}", field=f"{where}.target")
        leak = sorted(content_words(text) & corpus.words(tgt))
        if leak:
            raise GoldSetError(f"paraphrase leaks target words {leak} into the query (it "
                               "must share no content word with the target)",
                               field=f"{where}.text")
        if not content_words(text):
            raise GoldSetError("the query has no content word", field=f"{where}.text")
        qid = str(rec.get("id") or f"paraphrase-{i + 1:02d}")
        out.append(GoldQuery(
            qid, "paraphrase", text, (tgt,),
            f"hand-written, locked to {tgt}; machine-checked: no content word of the query "
            "occurs in the target's text fields", check={"target": tgt}))
    return out


def _exact_rare_queries(corpus: Corpus, live: list[str], df: dict[str, set[str]], p: GoldSetParams,
                        namespace: str) -> list[GoldQuery]:
    """Queries of words that occur in one episode only (document frequency 1)."""
    out: list[GoldQuery] = []
    n = 0
    for eid in live:
        if n >= p.n_exact_rare:
            break
        rare = sorted(w for w in corpus.words(eid) if df[w] == {eid} and len(w) >= p.min_rare_len
                      and w.isalpha())
        if len(rare) < p.rare_words_per_query:
            continue
        words = rare[:p.rare_words_per_query]
        n += 1
        out.append(GoldQuery(
            f"exact_rare-{n:02d}", "exact_rare",
            " ".join(corpus.surface_form(eid, w) for w in words), (eid,),
            f"words {words} have document frequency 1 in namespace {namespace!r}; their only "
            f"episode is {eid}", check={"words": words}))
    return out


def _phrase_queries(corpus: Corpus, p: GoldSetParams) -> list[GoldQuery]:
    """Verbatim phrases that occur in a few live episodes (each set of episodes once)."""
    out: list[GoldQuery] = []
    grams = _phrase_index(corpus, p.phrase_len)
    n = 0
    used: set[frozenset[str]] = set()
    for gram in sorted(grams, key=lambda g: (-len(grams[g]), g)):
        if n >= p.n_phrase:
            break
        if not 2 <= len(grams[gram]) <= p.max_phrase_matches:
            continue
        where = phrase_matches(corpus, gram)
        live_where = {e for e in where if e not in corpus.superseded_by}
        if not 2 <= len(where) <= p.max_phrase_matches or len(live_where) != len(where):
            continue
        key = frozenset(where)
        if key in used:
            continue
        used.add(key)
        n += 1
        out.append(GoldQuery(
            f"phrase-{n:02d}", "phrase", gram, tuple(sorted(where)),
            f"verbatim case-insensitive scan: {gram!r} occurs in {len(where)} episodes "
            f"(at most {p.max_phrase_matches} allowed)", check={"phrase": gram}))
    return out


def _associative_queries(corpus: Corpus, live: list[str], df: dict[str, set[str]],
                         p: GoldSetParams) -> list[GoldQuery]:
    """An episode's distinctive words, answered by its structural neighbours sharing none."""
    out: list[GoldQuery] = []
    n = 0
    for eid in live:
        if n >= p.n_associative:
            break
        nb = {o: k for o, k in corpus.neighbours(eid).items()
              if o not in corpus.superseded_by and o in corpus.data}
        if not nb:
            continue
        words = _distinctive(corpus, eid, df, p.assoc_words)
        if len(words) < p.assoc_words:
            continue
        ws = set(words)
        answers = sorted(o for o in nb if not (corpus.words(o) & ws))
        if not answers:
            continue
        n += 1
        kinds = sorted({nb[o] for o in answers})
        out.append(GoldQuery(
            f"associative-{n:02d}", "associative",
            " ".join(corpus.surface_form(eid, w) for w in words), tuple(answers),
            f"query = distinctive words of {eid}; answers = its structural neighbours "
            f"({', '.join(kinds)}) sharing no query word; only route is {eid} -> edge -> "
            "neighbour", check={"seed": eid, "words": words}))
    return out


def _nonsense_queries(df: dict[str, set[str]], p: GoldSetParams) -> list[GoldQuery]:
    """Control queries of made-up words absent from every episode (answer: no match)."""
    out: list[GoldQuery] = []
    rng = random.Random(p.seed)
    vocab = set(df)
    for i in range(p.n_nonsense):
        words: list[str] = []
        while len(words) < 3:
            w = _nonsense_word(rng)
            if w not in vocab and _fold(w) not in vocab and w not in words:
                words.append(w)
        out.append(GoldQuery(
            f"nonsense-{i + 1:02d}", "nonsense", " ".join(words), (),
            "control: made-up words verified absent from every episode; the right answer is "
            "no match", check={"words": words}))
    return out


def _superseded_queries(corpus: Corpus, df: dict[str, set[str]],
                        p: GoldSetParams) -> list[GoldQuery]:
    """Words a superseded episode shares with its correction, answered by the correction."""
    out: list[GoldQuery] = []
    n = 0
    for stale, corr in sorted(corpus.superseded_by.items()):
        if n >= p.n_superseded:
            break
        if corr in corpus.superseded_by:
            continue
        words = _distinctive(corpus, stale, df, p.assoc_words, allow=[corr])
        words = [w for w in words if w in corpus.words(corr)]
        if not words:
            continue
        n += 1
        out.append(GoldQuery(
            f"superseded-{n:02d}", "superseded",
            " ".join(corpus.surface_form(stale, w) for w in words), (corr,),
            f"{stale} is superseded by {corr}; the query uses words both share; the correction "
            "must be returned and outrank the stale episode", stale=(stale,),
            check={"stale": stale, "words": words}))
    return out


def _structural_queries(corpus: Corpus, live: list[str], p: GoldSetParams,
                        progress: Callable[[int, int], None] | None) -> list[GoldQuery]:
    """Whole signatures answered by the live episodes the store makes plausible analogues."""
    out: list[GoldQuery] = []
    n = 0
    rater = _PairRater(corpus) if p.n_structural else None
    for examined, eid in enumerate(live):
        if progress is not None:
            progress(examined, len(live))
        if n >= p.n_structural or rater is None:
            break
        if corpus.data[eid].get("kind") == "schema":
            continue
        found = rater.answers(eid, p)
        if not found:
            continue
        n += 1
        answers = tuple(sorted(found))
        rated = ", ".join(f"{o} {found[o][0]:.2f}/{found[o][1]:.2f}" for o in answers)
        out.append(GoldQuery(
            f"structural-{n:02d}", "structural", narrative_text(corpus.data[eid]), answers,
            f"query = the whole signature of {eid} (excluded from the ranking); answers = the "
            f"live episodes the store makes plausible analogues of it: SME covers at least "
            f"{p.min_structural_score:.2f} of the larger self-match, narrative word overlap "
            f"(Jaccard) at most {p.max_surface_overlap:.2f}, no contradiction found by the "
            f"judge either way (answer score/overlap: {rated})",
            signature=corpus.data[eid], exclude=(eid,),
            check={"source": eid, "answers": {o: list(found[o]) for o in answers}}))
    return out


def build_goldset(memory: Any, namespace: str = "default", *,
                  paraphrases: Sequence[Mapping[str, Any]] = (),
                  params: GoldSetParams | None = None,
                  progress: Callable[[int, int], None] | None = None) -> GoldSet:
    """Derive a gold set from one namespace (see the module docstring).

    ``paraphrases``: hand-written ``{"target": episode_id, "text": query}`` records (optional
    ``"id"``). Each is machine-checked; a query sharing a content word with its target, or naming
    a target that is not a live episode, fails the build with :class:`GoldSetError`.
    ``progress`` (optional) is called with (episodes examined, live episodes) while the
    structural queries are mined, the long step (each examined episode is mapped onto every
    other).
    """
    p = params or GoldSetParams()
    corpus = read_corpus(memory, namespace)
    if not corpus.data:
        raise GoldSetError(f"namespace {namespace!r} holds no episodes", field="namespace")
    df = _doc_freq(corpus)
    live = corpus.live
    random.Random(p.seed).shuffle(live)   # spread mined queries over the corpus, reproducibly
    para_queries = _paraphrase_queries(corpus, namespace, paraphrases)
    queries: list[GoldQuery] = [*_exact_rare_queries(corpus, live, df, p, namespace),
                                *_phrase_queries(corpus, p), *para_queries,
                                *_associative_queries(corpus, live, df, p),
                                *_nonsense_queries(df, p), *_superseded_queries(corpus, df, p),
                                *_structural_queries(corpus, live, p, progress)]
    if progress is not None:
        progress(len(live), len(live))
    return GoldSet(namespace, corpus.fingerprint_hash, len(corpus.data), p, tuple(queries))
