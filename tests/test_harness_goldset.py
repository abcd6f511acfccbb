"""Gold-set builder and checker (issue 8 item 1) on a real SQLite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analogist.bench.harness.goldset import (
    CATEGORIES,
    GoldSetError,
    GoldSetParams,
    build_goldset,
    check_goldset,
    content_words,
    goldset_from_json,
    load_goldset,
    read_corpus,
    save_goldset,
    surface_overlap,
)
from analogist.consolidate import pair_contradictions
from analogist.errors import AnalogistError
from analogist.judge import judge, self_score
from analogist.memory.sqlite import Memory
from analogist.signature import compile_signature, validate_signature
from tests.test_harness_fixtures import NS, PARAPHRASE, build_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("gold") / "s.db")


@pytest.fixture(scope="module")
def gold(store: Path):
    with Memory.open(store) as m:
        return build_goldset(m, NS, paraphrases=[PARAPHRASE])


def test_every_category_is_built_with_a_derivation(gold) -> None:
    counts = gold.counts()
    assert set(counts) == set(CATEGORIES)
    for c in CATEGORIES:
        assert counts[c] >= 1, c
    for q in gold.queries:
        assert q.derivation
        assert q.category == "nonsense" or q.expected


def test_answers_follow_their_derivation(gold, store: Path) -> None:
    with Memory.open(store) as m:
        corpus = read_corpus(m, NS)
    for q in gold.queries:
        if q.category == "exact_rare":
            for w in q.check["words"]:
                holders = [e for e in corpus.data if w in corpus.words(e)]
                assert holders == list(q.expected)
        if q.category == "paraphrase":
            assert not content_words(q.text) & corpus.words(q.expected[0])
        if q.category == "associative":
            seed = q.check["seed"]
            for e in q.expected:
                assert e in corpus.neighbours(seed)
                assert not corpus.words(e) & set(q.check["words"])
        if q.category == "nonsense":
            assert not any(w in corpus.words(e) for e in corpus.data for w in q.check["words"])
        if q.category == "superseded":
            assert corpus.superseded_by[q.stale[0]] == q.expected[0]
        if q.category == "structural":
            assert q.signature is not None and q.exclude == (q.check["source"],)
            src = validate_signature(corpus.data[q.check["source"]])
            for e in q.expected:
                tgt = validate_signature(corpus.data[e])
                rep = judge(src, tgt)
                assert not rep.contradictions
                assert not pair_contradictions(src, tgt, dict(rep.role_map))
                assert surface_overlap(src.to_data(), tgt.to_data()) <= \
                    gold.params.max_surface_overlap
                assert rep.score / max(self_score(compile_signature(src)),
                                       self_score(compile_signature(tgt))) >= \
                    gold.params.min_structural_score - 1e-9


def test_build_is_deterministic(store: Path, gold) -> None:
    with Memory.open(store) as m:
        again = build_goldset(m, NS, paraphrases=[PARAPHRASE])
    assert again.to_json() == gold.to_json()


def test_check_passes_on_the_same_store(gold, store: Path) -> None:
    with Memory.open(store) as m:
        assert check_goldset(gold, m) == []


def test_check_flags_a_query_that_became_unwinnable(gold, store: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "c.db"
    shutil.copy(store, copy)
    rare = next(q for q in gold.queries if q.category == "exact_rare")
    para = next(q for q in gold.queries if q.category == "paraphrase")
    with Memory.open(copy) as m:
        assert m.delete(rare.expected[0], NS)
        # the paraphrase target gains a query word: a leak
        ep = m.get(para.expected[0], NS)
        assert ep is not None
        data = ep.signature.to_data()
        data["levels"]["L0"] += " The workers held a mutex."
        m.delete(para.expected[0], NS)
        m.add(data, namespace=NS)
        problems = check_goldset(gold, m)
    assert any(p.startswith(rare.id) for p in problems)
    assert any(p.startswith(para.id) and "leaks" in p for p in problems)


def test_paraphrase_leak_fails_the_build(store: Path) -> None:
    with Memory.open(store) as m, pytest.raises(GoldSetError) as ei:
        build_goldset(m, NS, paraphrases=[{"target": "deadlock-sw-lock-ordering",
                                           "text": "two threads wait on each other's locks"}])
    assert ei.value.field == "paraphrases[0].text" and "leaks" in str(ei.value)


@pytest.mark.parametrize("rec,field", [
    ({"target": "no-such-episode", "text": "anything at all"}, "paraphrases[0].target"),
    ({"target": "deadlock-sw-lock-ordering"}, "paraphrases[0]"),
    ("just text", "paraphrases[0]"),
    ({"target": "deadlock-sw-lock-ordering", "text": "the of and"}, "paraphrases[0].text"),
])
def test_bad_paraphrase_records(store: Path, rec, field: str) -> None:
    with Memory.open(store) as m, pytest.raises(GoldSetError) as ei:
        build_goldset(m, NS, paraphrases=[rec])
    assert ei.value.field == field


def test_empty_namespace_is_refused(store: Path) -> None:
    with Memory.open(store) as m, pytest.raises(GoldSetError):
        build_goldset(m, "nothing-here")


def test_params_are_validated() -> None:
    with pytest.raises(GoldSetError):
        GoldSetParams(n_phrase=-1)
    with pytest.raises(GoldSetError):
        GoldSetParams(max_phrase_matches=1)
    with pytest.raises(GoldSetError):
        GoldSetParams(phrase_len=True)


def test_json_round_trip(gold, tmp_path: Path) -> None:
    p = tmp_path / "g.json"
    save_goldset(gold, p)
    assert load_goldset(p).to_json() == gold.to_json()


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d["queries"][0].update(category="fuzzy"), "queries[0].category"),
    (lambda d: d["queries"][1].update(id=d["queries"][0]["id"]), "queries[1].id"),
    (lambda d: d["queries"][0].update(expected="x"), "queries[0].expected"),
    (lambda d: d["queries"][0].pop("derivation"), "queries[0].derivation"),
    (lambda d: d.update(queries=[]), "queries"),
])
def test_bad_gold_json_is_located(gold, mutate, field: str) -> None:
    d = json.loads(json.dumps(gold.to_json()))
    mutate(d)
    with pytest.raises(AnalogistError) as ei:
        goldset_from_json(d, source="g.json")
    assert ei.value.field == field and ei.value.source == "g.json"


def test_nonsense_with_an_answer_is_refused(gold) -> None:
    d = json.loads(json.dumps(gold.to_json()))
    i = next(i for i, q in enumerate(d["queries"]) if q["category"] == "nonsense")
    d["queries"][i]["expected"] = ["x"]
    with pytest.raises(GoldSetError):
        goldset_from_json(d)


def test_unreadable_gold_files(tmp_path: Path) -> None:
    with pytest.raises(GoldSetError):
        load_goldset(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  nope", encoding="utf-8")
    with pytest.raises(GoldSetError) as ei:
        load_goldset(bad)
    assert ei.value.line == 2


@given(st.text(max_size=200))
def test_content_words_are_stable(text: str) -> None:
    words = content_words(text)
    assert content_words(" ".join(sorted(words))) == words
    assert all(len(w) >= 3 and w.isalpha() and w == w.lower() for w in words)
