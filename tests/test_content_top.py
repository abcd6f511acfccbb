"""The exact top-k of the content index (``ContentIndex.top``) and the retriever's stage 1 that
uses it: the same rows, order and numbers (to the last bit) as scoring every row and sorting,
on random stores with many ties, bonus rows, appended rows and a saved-and-loaded copy."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analogist import retrieve
from analogist.casebook import load_casebook
from analogist.errors import AnalogistError
from analogist.index.content import ContentIndex
from analogist.memory.sqlite import Memory
from analogist.retrieve import RetrieveParams, Retriever, _top
from analogist.signature import validate_signature

NAMES = [f"f{i}" for i in range(12)]


@st.composite
def stores(draw: st.DrawFn) -> tuple[list[dict[str, float]], dict[str, float]]:
    """Rows over a small vocabulary (small whole counts, rows repeated: many equal scores)
    and a query that may hold features no row has."""
    vocab = NAMES[:draw(st.integers(1, len(NAMES)))]
    row = st.dictionaries(st.sampled_from(vocab), st.integers(1, 3), max_size=len(vocab))
    distinct = draw(st.lists(row, min_size=1, max_size=12))
    picks = draw(st.lists(st.integers(0, len(distinct) - 1), min_size=2, max_size=120))
    rows = [{k: float(v) for k, v in distinct[i].items()} for i in picks]
    query = draw(st.dictionaries(st.sampled_from([*vocab, "unseen"]), st.integers(1, 4),
                                 min_size=1, max_size=len(vocab) + 1))
    return rows, {k: float(v) for k, v in query.items()}


def _brute(ix: ContentIndex, query: dict[str, float], k: int, weight: float,
           bonus_rows: np.ndarray, bonus: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cos = ix.scores(query)
    flag = np.zeros(len(cos))
    flag[bonus_rows] = 1.0
    fused = np.multiply(cos, weight)
    fused += bonus * flag
    best = _top(fused, k, positive=False)
    return best, cos, fused


def _check(ix: ContentIndex, query: dict[str, float], k: int, weight: float,
           bonus_rows: np.ndarray, bonus: float) -> bool:
    got = ix.top(query, k, weight=weight, bonus_rows=bonus_rows, bonus=bonus)
    best, cos, fused = _brute(ix, query, k, weight, bonus_rows, bonus)
    if got is None:
        # only when the exact answer holds a non-positive score, no row shares a feature with
        # the query, or k covers every row
        assert k >= len(ix) or len(best) < k or fused[best[-1]] <= 0 or weight == 0 \
            or not cos.any()
        return False
    rows, c, f = got
    assert rows.tolist() == best.tolist()
    assert c.tobytes() == cos[best].tobytes()
    assert f.tobytes() == fused[best].tobytes()
    return True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stores(), st.integers(1, 30), st.sampled_from([1.0, 0.5, 2.0]),
       st.sampled_from([0.0, 0.25, 1.0]), st.data())
def test_top_is_the_full_ranking(case: tuple[list[dict[str, float]], dict[str, float]], k: int,
                                 weight: float, bonus: float, data: st.DataObject) -> None:
    rows, query = case
    ix = ContentIndex(range(len(rows)), rows)
    picked = data.draw(st.sets(st.integers(0, len(rows) - 1), max_size=4))
    _check(ix, query, k, weight, np.asarray(sorted(picked), dtype=np.int64), bonus)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=stores(), k=st.integers(1, 30), cut=st.integers(1, 40))
def test_top_after_append_and_reload(case: tuple[list[dict[str, float]], dict[str, float]],
                                     k: int, cut: int, tmp_path_factory: object) -> None:
    rows, query = case
    cut = min(cut, len(rows) - 1)
    first = ContentIndex(range(cut), rows[:cut])
    rest = rows[cut:]
    names = sorted({f for r in rest for f in r})
    col = {f: i for i, f in enumerate(names)}
    indptr, indices, counts = [0], [], []
    for r in rest:
        for f in sorted(r, key=col.__getitem__):
            indices.append(col[f])
            counts.append(r[f])
        indptr.append(len(indices))
    first.append(np.arange(cut, len(rows)), names, np.asarray(indptr), np.asarray(indices,
                 dtype=np.int64), np.asarray(counts, dtype=np.float64))
    _check(first, query, k, 1.0, np.zeros(0, dtype=np.int64), 0.0)
    d = Path(str(tmp_path_factory.mktemp("ix")))  # type: ignore[attr-defined]
    first.save(d)
    _check(ContentIndex.load(d), query, k, 1.0, np.zeros(0, dtype=np.int64), 0.0)


def test_top_keeps_working_past_a_thousand_rows() -> None:
    """Large enough for the dense copies, the sampled seed and the pruning to matter."""
    rng = np.random.default_rng(5)
    base = [{f"f{j}": float(rng.integers(1, 3)) for j in rng.choice(30, 6, replace=False)}
            for _ in range(40)]
    rows = []
    for i in range(3000):
        r = dict(base[i % 40])
        if rng.random() < 0.5:
            r.pop(next(iter(r)))
        r[f"g{rng.integers(0, 200)}"] = 1.0
        rows.append(r)
    ix = ContentIndex(range(len(rows)), rows)
    answered = 0
    for q in range(40):
        query = dict(base[q])
        query[f"g{q}"] = 2.0
        bonus_rows = np.flatnonzero(np.arange(len(rows)) % 97 == q)
        for k in (1, 20, 200):
            answered += _check(ix, query, k, 1.0, bonus_rows, 0.25)
    assert answered == 120


def test_scores_at_are_the_scores() -> None:
    rng = np.random.default_rng(2)
    rows = [{f"f{j}": float(rng.integers(1, 4)) for j in rng.choice(12, 4, replace=False)}
            for _ in range(500)]
    ix = ContentIndex(range(len(rows)), rows)
    q = {"f1": 2.0, "f3": 1.0, "f7": 1.0, "zz": 1.0}
    pos = np.sort(rng.choice(500, 60, replace=False))
    assert ix.scores_at(pos, q).tobytes() == ix.scores(q)[pos].tobytes()


def _queries() -> list:
    out = []
    for c in [c.signature for c in load_casebook()][::4]:
        d = c.to_data()
        d["episode_id"] = "query"
        out.append(validate_signature(d))
    return out


def test_stage1_is_mac_then_a_partial_sort(tmp_path: Path, monkeypatch: object) -> None:
    # the exact top-k on a store of any size (it is used from EXACT_TOP_MIN_ROWS rows)
    monkeypatch.setattr(retrieve, "EXACT_TOP_MIN_ROWS", 1)  # type: ignore[attr-defined]
    with Memory.open(tmp_path / "s.db") as m:
        m.add_many([c.signature for c in load_casebook()])
        for params in (RetrieveParams(), RetrieveParams(w_fingerprint=2.0),
                       RetrieveParams(w_content=0.0)):
            r = Retriever(m, params=params, log=False)
            for q in _queries():
                ids, fused, channels, skipped = r.mac(q)
                for k, positive in ((1, True), (5, True), (12, False), (40, False)):
                    s1 = r.stage1(q, k, positive=positive)
                    want = _top(fused, k, positive=positive)
                    assert s1.rows.tolist() == want.tolist()
                    assert s1.fused.tobytes() == fused[want].tobytes()
                    assert list(s1.channels) == list(channels)
                    for name, v in channels.items():
                        assert s1.channels[name].tobytes() == v[want].tobytes()
                    assert s1.skipped == skipped
                    assert s1.ids.tolist() == ids.tolist()


def test_top_from_several_threads_at_once() -> None:
    """Each concurrent query takes its own scratch buffer: the answers are those of one
    thread alone."""
    rng = np.random.default_rng(9)
    base = [{f"f{j}": float(rng.integers(1, 3)) for j in rng.choice(20, 5, replace=False)}
            for _ in range(25)]
    rows = [{**base[i % 25], f"g{rng.integers(0, 60)}": 1.0} for i in range(2500)]
    ix = ContentIndex(range(len(rows)), rows)
    queries = [{**base[q], f"g{q}": 1.0} for q in range(25)]
    want = [_brute(ix, q, 50, 1.0, np.zeros(0, dtype=np.int64), 0.0)[0].tolist()
            for q in queries]

    def run(i: int) -> list[int]:
        got = ix.top(queries[i % 25], 50)
        assert got is not None
        return got[0].tolist()

    with ThreadPoolExecutor(max_workers=4) as pool:
        for i, got in enumerate(pool.map(run, range(200))):
            assert got == want[i % 25]


def test_scores_at_from_a_loaded_copy_are_the_scores(tmp_path: Path) -> None:
    """A loaded index (which holds the weights in column order only) scores rows, exactly and
    in its top-k, as the index it was saved from, to the last bit (counts that are not whole
    numbers, so that every norm rounds)."""
    rng = np.random.default_rng(3)
    names = [f"f{j}" for j in range(30)]
    rows = [{names[j]: float(rng.random() * 3 + 0.1) for j in rng.choice(30, 7, replace=False)}
            for _ in range(800)]
    built = ContentIndex(range(len(rows)), rows)
    built.save(tmp_path / "ix")
    loaded = ContentIndex.load(tmp_path / "ix")
    for t in range(20):
        q = {names[j]: float(rng.integers(1, 4)) for j in rng.choice(30, 5, replace=False)}
        if t % 4 == 0:
            q["unseen"] = 1.0
        pos = np.sort(rng.choice(len(rows), 90, replace=False))
        want = built.scores(q)[pos].tobytes()
        assert built.scores_at(pos, q).tobytes() == want
        assert loaded.scores_at(pos, q).tobytes() == want
        assert loaded.scores(q)[pos].tobytes() == want
        got = loaded.top(q, 25)
        assert got is not None
        assert got[1].tobytes() == built.scores(q)[got[0]].tobytes()


def _variants(n: int) -> list:
    """``n`` signatures recombined from the casebook's (relations dropped in turn, fresh ids):
    many equal content vectors and fingerprints, so that ties decide ranks."""
    cases = [c.signature for c in load_casebook() if c.decoy_of is None]
    out = []
    for i in range(n):
        d = cases[i % len(cases)].to_data()
        d["episode_id"] = f"v{i}"
        rels = d["relations"]
        if len(rels) > 2 and i // len(cases) % 3:
            del rels[(i // len(cases)) % len(rels)]
        try:
            out.append(validate_signature(d))
        except AnalogistError:  # a dropped relation a causal edge needed: keep the original
            d["relations"] = cases[i % len(cases)].to_data()["relations"]
            out.append(validate_signature(d))
    return out


def test_find_over_a_saved_index_answers_as_the_pass_over_every_row(
        tmp_path: Path, monkeypatch: object) -> None:
    """``find`` on a retriever that loads the saved index (its shortlist and the decoy probe's
    pool from the exact top-k) gives the same answers, field for field, as a retriever that
    scores every row (the full pass and a partial sort)."""
    params = RetrieveParams(exhaustive_probe_limit=10, probe_pool=60)
    queries = []
    for q in _queries():
        d = q.to_data()
        d["surface"] = {"domain": "harbor", "entities": ["crane", "tide"]}
        queries.append(validate_signature(d))
    with Memory.open(tmp_path / "s.db") as m:
        m.add_many(_variants(400))
        monkeypatch.setattr(retrieve, "EXACT_TOP_MIN_ROWS", 1)  # type: ignore[attr-defined]
        Retriever(m, params=params, log=False).refresh()  # builds the index and saves it
        loaded = Retriever(m, params=params, log=False)
        loaded.refresh()
        assert loaded.notes == [] and loaded._index is not None
        assert loaded._index.content._data_a is None  # the copy on disk, not a rebuild
        exact = [loaded.find(q).to_json() for q in queries]
        monkeypatch.setattr(retrieve, "EXACT_TOP_MIN_ROWS", 10**9)  # type: ignore[attr-defined]
        full = Retriever(m, params=params, log=False)
        probes = 0
        for q, a in zip(queries, exact, strict=True):
            b = full.find(q).to_json()
            a.pop("timings_ms")
            b.pop("timings_ms")
            assert a == b
            probes += a.get("decoy_probe") is not None
        assert probes > 0 and all(a["results"] for a in exact)
