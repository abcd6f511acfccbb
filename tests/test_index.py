"""Tests for analogist.index: content features, causal motifs, WL fingerprints, ContentIndex."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analogist.index import (
    ContentIndex,
    ContentIndexError,
    EpisodeFeatures,
    content_features,
    extract_features,
    wl_fingerprint,
)
from analogist.signature import Signature, validate_signature

SEED = Path(__file__).parent / "data" / "seed_example_signature.json"
_ROLE = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")


def make(relations: list[Any] = (), chain: list[Any] = (), eid: str = "e",
         roles: dict[str, str] | None = None) -> Signature:
    """A Signature whose roles are every tag used (when ``roles`` is not given)."""
    if roles is None:
        tags: set[str] = set()
        for r in relations:
            tags.update(r[1:])
        for e in chain:
            items = [e[0], e[2]] if isinstance(e, list) else [e["cause"], e["effect"]]
            for a in items:
                inner = a[a.index("(") + 1: a.rindex(")")]
                tags.update(_ROLE.findall(inner))
        roles = {t: f"role {t}" for t in sorted(tags)} or {"X": "x"}
    return validate_signature({"episode_id": eid, "kind": "failure", "roles": roles,
                               "relations": list(relations), "causal_chain": list(chain)})


def edge(c: str, t: str, e: str, sign: int = 1) -> dict[str, Any]:
    return {"cause": c, "edge": t, "effect": e, "sign": sign}


def seed() -> Signature:
    return validate_signature(json.loads(SEED.read_text(encoding="utf-8")))


# -- content features ------------------------------------------------------------------------
def test_seed_features_are_structural_only() -> None:
    f = extract_features(seed())
    assert isinstance(f, EpisodeFeatures)
    c = f.content
    assert c["rel:derives_from"] == 1
    assert c["edge:causes:+"] == 1 and c["edge:enables:+"] == 1
    assert c["flow:diverges_from>causes>false_claim"] == 1
    assert c["flow:skips_check>enables>false_claim"] == 1
    assert c["motif:common_effect"] == 1
    # no role tag, role description or surface word appears in any feature name
    for name in c:
        for word in ("SRC", "DER", "CON", "cache", "intel", "monitoring", "authoritative source"):
            assert word not in name.split(":")[-1].split(">"), name
    assert re.fullmatch(r"[0-9a-f]{64}", f.fingerprint)


def test_counts_and_negative_flow() -> None:
    s = make([["derives_from", "A", "B"], ["derives_from", "C", "B"]],
             [edge("stale(A)", "causes", "wrong(C)", -1)])
    c = content_features(s)
    assert c["rel:derives_from"] == 2
    assert c["edge:causes:-"] == 1
    assert c["flow:stale>causes:->wrong"] == 1
    assert c["atom:stale"] == 1 and c["atom:wrong"] == 1


def test_mediator_chain() -> None:
    yes = content_features(make(chain=[["a(X)", "causes", "b(X)"], ["b(X)", "enables", "c(X)"]]))
    assert yes["motif:chain"] == 1 and yes["motif:chain:causes+>enables+"] == 1
    # two edges that do not meet head-to-tail: no chain
    no = content_features(make(chain=[["a(X)", "causes", "b(X)"], ["c(X)", "causes", "d(X)"]]))
    assert "motif:chain" not in no
    # a two-cycle A→B→A is a loop, not a chain
    loop = content_features(make(chain=[["a(X)", "causes", "b(X)"], ["b(X)", "causes", "a(X)"]]))
    assert "motif:chain" not in loop


def test_common_cause_and_effect() -> None:
    cc = content_features(make(chain=[["a(X)", "causes", "b(X)"], ["a(X)", "prevents", "c(X)"]]))
    assert cc["motif:common_cause"] == 1
    assert cc["motif:common_cause:causes+|prevents+"] == 1
    assert "motif:common_effect" not in cc
    ce = content_features(make(chain=[["a(X)", "causes", "c(X)"], ["b(X)", "causes", "c(X)"]]))
    assert ce["motif:common_effect"] == 1 and "motif:common_cause" not in ce
    # the same pair of atoms joined twice is neither
    two = content_features(make(chain=[["a(X)", "causes", "b(X)"], ["a(X)", "delays", "b(X)"]]))
    assert "motif:common_cause" not in two and "motif:common_effect" not in two


def test_masking() -> None:
    by_edge = content_features(make(chain=[["alarm_off(M)", "masks", "fault(S)"]]))
    assert by_edge["motif:masking"] == 1 and by_edge["motif:masking:masks"] == 1
    preventer = content_features(make(chain=[["load(S)", "causes", "fault(S)"],
                                             ["guard(G)", "prevents", "fault(S)"]]))
    assert preventer["motif:masking"] == 1 and preventer["motif:masking:preventer"] == 1
    neg = content_features(make(chain=[["load(S)", "enables", "fault(S)"],
                                       edge("guard(G)", "causes", "fault(S)", -1)]))
    assert neg["motif:masking:preventer"] == 1
    self_mask = content_features(make(chain=[["bug(S)", "causes", "fault(S)"],
                                             ["bug(S)", "masks", "alarm(S)"]]))
    assert self_mask["motif:masking:self"] == 1
    # a preventer of a *different* effect, or two plain causes: no masking
    none = content_features(make(chain=[["load(S)", "causes", "fault(S)"],
                                        ["guard(G)", "prevents", "other(S)"],
                                        ["x(S)", "causes", "fault(S)"]]))
    assert not any(k.startswith("motif:masking") for k in none)


def test_feedback_loops_by_sign() -> None:
    pos = content_features(make(chain=[["a(X)", "causes", "b(X)"], ["b(X)", "causes", "c(X)"],
                                       ["c(X)", "causes", "a(X)"]]))
    assert pos["motif:loop"] == 1 and pos["motif:loop:+"] == 1 and "motif:loop:-" not in pos
    neg = content_features(make(chain=[["a(X)", "causes", "b(X)"],
                                       edge("b(X)", "causes", "a(X)", -1)]))
    assert neg["motif:loop:-"] == 1 and "motif:loop:+" not in neg
    two_neg = content_features(make(chain=[edge("a(X)", "causes", "b(X)", -1),
                                           edge("b(X)", "causes", "a(X)", -1)]))
    assert two_neg["motif:loop:+"] == 1
    self_loop = content_features(make(chain=[["a(X)", "causes", "a(X)"]]))
    assert self_loop["motif:loop:+"] == 1
    acyclic = content_features(make(chain=[["a(X)", "causes", "b(X)"], ["a(X)", "causes",
                                                                          "c(X)"],
                                           ["b(X)", "causes", "c(X)"]]))
    assert "motif:loop" not in acyclic
    # two loops sharing a node are counted separately
    fig8 = content_features(make(chain=[["a(X)", "causes", "b(X)"], ["b(X)", "causes", "a(X)"],
                                        ["a(X)", "causes", "c(X)"], ["c(X)", "causes", "a(X)"]]))
    assert fig8["motif:loop"] == 2


def test_races() -> None:
    shared = content_features(make(chain=[["write(P,F)", "enables", "corrupt(F)"],
                                          ["write(Q,F)", "enables", "corrupt(F)"]]))
    assert shared["motif:race"] == 1 and shared["motif:race:shared_role"] == 1
    disjoint = content_features(make(chain=[["write(P)", "enables", "corrupt(F)"],
                                            ["write(Q)", "enables", "corrupt(F)"]]))
    assert "motif:race" not in disjoint
    rel = content_features(make([["races_with", "P", "Q"]]))
    assert rel["motif:race"] == 1 and rel["motif:race:relation"] == 1
    prevent = content_features(make(chain=[["write(P,F)", "prevents", "corrupt(F)"],
                                           ["write(Q,F)", "enables", "corrupt(F)"]]))
    assert "motif:race" not in prevent


def test_loop_enumeration_is_bounded() -> None:
    # a dense graph: the enumeration stops at its budget instead of running for ever
    atoms = [f"s{i}(X)" for i in range(12)]
    chain = [[a, "causes", b] for a in atoms for b in atoms if a != b]
    c = content_features(make(chain=chain))
    assert c["motif:loop"] > 0


# -- fingerprint -----------------------------------------------------------------------------
def test_fingerprint_reversed_edge_and_flipped_type_differ() -> None:
    base = make(chain=[["a(X)", "causes", "b(Y)"], ["b(Y)", "enables", "c(X)"]])
    rev = make(chain=[["b(Y)", "causes", "a(X)"], ["b(Y)", "enables", "c(X)"]])
    flip = make(chain=[["a(X)", "prevents", "b(Y)"], ["b(Y)", "enables", "c(X)"]])
    sign = make(chain=[edge("a(X)", "causes", "b(Y)", -1), ["b(Y)", "enables", "c(X)"]])
    fps = {wl_fingerprint(s) for s in (base, rev, flip, sign)}
    assert len(fps) == 4
    assert wl_fingerprint(base) == wl_fingerprint(base.model_copy())
    # argument order matters: r(A,B) and r(B,A) with an asymmetric context
    s1 = make([["r", "A", "B"], ["q", "A"]])
    s2 = make([["r", "B", "A"], ["q", "A"]])
    assert wl_fingerprint(s1) != wl_fingerprint(s2)


def test_fingerprint_depth() -> None:
    s = seed()
    assert wl_fingerprint(s, 0) != wl_fingerprint(s, 2)
    assert extract_features(s).fingerprint == wl_fingerprint(s, 2)
    with pytest.raises(ValueError):
        wl_fingerprint(s, -1)


def test_surface_does_not_change_features() -> None:
    d = json.loads(SEED.read_text(encoding="utf-8"))
    other = dict(d, surface={"domain": "accounting", "entities": ["ledger"]},
                 levels={"L0": "copied ledger total"}, episode_id="ledger",
                 roles={k: f"something else {k}" for k in d["roles"]})
    a, b = extract_features(validate_signature(d)), extract_features(validate_signature(other))
    assert a == b


PREDS = ["derives_from", "skips_check", "races_with", "masks_view", "q"]
STATES = ["stale", "wrong", "overload", "ok"]


@st.composite
def signatures(draw: st.DrawFn) -> dict[str, Any]:
    tags = draw(st.lists(st.from_regex(r"[A-Z][A-Z0-9]{0,3}", fullmatch=True), min_size=1,
                         max_size=5, unique=True))
    role = st.sampled_from(tags)
    rels = draw(st.lists(st.tuples(st.sampled_from(PREDS), role, role), max_size=6))
    atoms = st.builds(lambda p, a: f"{p}({a})", st.sampled_from(STATES + PREDS[:2]), role)
    chain = draw(st.lists(st.tuples(atoms, st.sampled_from(["causes", "prevents", "enables",
                                                            "masks", "delays"]),
                                    atoms, st.sampled_from([1, -1])),
                          max_size=7, unique_by=lambda e: (e[0], e[1], e[2])))
    return {"episode_id": "h", "kind": "failure", "roles": {t: "r" for t in tags},
            "relations": [list(r) for r in rels],
            "causal_chain": [edge(c, t, e, s) for c, t, e, s in chain]}


def _rename(d: dict[str, Any], m: dict[str, str]) -> dict[str, Any]:
    def atom(a: str) -> str:
        p, inner = a[: a.index("(")], a[a.index("(") + 1: -1]
        return f"{p}({','.join(m[x] for x in inner.split(',') if x)})"

    return {**d, "roles": {m[k]: v for k, v in d["roles"].items()},
            "relations": [[r[0], *(m[x] for x in r[1:])] for r in d["relations"]],
            "causal_chain": [{**e, "cause": atom(e["cause"]), "effect": atom(e["effect"])}
                             for e in reversed(d["causal_chain"])]}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(signatures(), st.randoms(use_true_random=False))
def test_role_renaming_invariance(d: dict[str, Any], rnd: Any) -> None:
    tags = list(d["roles"])
    new = [f"z{i}_{t.lower()}" for i, t in enumerate(tags)]
    rnd.shuffle(new)
    renamed = _rename(d, dict(zip(tags, new, strict=True)))
    a, b = validate_signature(d), validate_signature(renamed)
    fa, fb = extract_features(a), extract_features(b)
    assert fa.content == fb.content
    assert fa.fingerprint == fb.fingerprint


# -- ContentIndex ----------------------------------------------------------------------------
def _family() -> list[Signature]:
    s0 = seed()
    s1 = make([["derives_from", "A", "B"], ["gates", "B", "C"]],
              [["overload(A)", "causes", "failure(C)"]], eid="s1")
    s2 = make([["retries", "W", "Q"]], [["retries(W,Q)", "causes", "overload(Q)"],
                                        ["overload(Q)", "causes", "retries(W,Q)"]], eid="s2")
    s3 = make([["observes", "M", "Q"]], [["alarm(M)", "masks", "fault(Q)"]], eid="s3")
    return [s0, s1, s2, s3]


def test_identical_structure_ranks_first() -> None:
    sigs = _family()
    ix = ContentIndex(list(range(10, 14)), [content_features(s) for s in sigs])
    # the ledger case: same structure, other surface, other role names
    ledger = make([["derives_from", "COPY", "ACCT"], ["trusts_as_authoritative", "USER", "COPY"],
                   ["skips_check", "USER", "ACCT"], ["diverges_from", "COPY", "ACCT"]],
                  [["diverges_from(COPY,ACCT)", "causes", "false_claim(USER)"],
                   ["skips_check(USER,ACCT)", "enables", "false_claim(USER)"]], eid="ledger")
    res = ix.query(content_features(ledger), k=3)
    assert res[0][0] == 10 and res[0][1] == pytest.approx(1.0)
    assert all(res[0][1] > s for _i, s in res[1:])
    for id_, s in ((13, sigs[3]), (12, sigs[2])):
        assert ix.query(content_features(s), k=1)[0][0] == id_


def test_idf_downweights_ubiquitous_predicate() -> None:
    feats = [{"rel:common": 1.0, f"rel:rare{i}": 1.0} for i in range(5)]
    ix = ContentIndex(list(range(5)), feats)
    assert ix.idf("rel:common") == pytest.approx(1.0)
    assert ix.idf("rel:rare0") > ix.idf("rel:common")
    v = ix.vector(0)
    assert v["rel:rare0"] > v["rel:common"]
    assert sum(x * x for x in v.values()) == pytest.approx(1.0)
    # a query sharing the rare feature beats one sharing only the common one
    res = ix.query({"rel:common": 1.0, "rel:rare3": 1.0}, k=5)
    assert res[0][0] == 3
    assert [i for i, _s in res[1:]] == [0, 1, 2, 4]  # tied, id ascending


def test_ties_are_deterministic_and_by_id() -> None:
    f = {"rel:a": 2.0, "edge:causes:+": 1.0}
    ids = [7, 3, 9, 1, 5]
    ix = ContentIndex(ids, [dict(f) for _ in ids])
    res = ix.query(f, k=3)
    assert [i for i, _s in res] == [1, 3, 5]
    assert len({s for _i, s in res}) == 1
    assert ContentIndex(ids[::-1], [dict(f) for _ in ids]).query(f, k=3) == res
    assert ix.query({"rel:nothing": 1.0}, k=3) == []
    assert ix.query(f, k=0) == []


def test_add_remove_match_rebuild() -> None:
    sigs = _family()
    feats = [content_features(s) for s in sigs]
    ix = ContentIndex([1, 2], feats[:2])
    ix.add(3, feats[2])
    ix.add_many([4], [feats[3]])
    full = ContentIndex([1, 2, 3, 4], feats)
    for f in feats:
        assert ix.query(f, 4) == full.query(f, 4)
    ix.remove(2)
    part = ContentIndex([1, 3, 4], [feats[0], feats[2], feats[3]])
    for f in feats:
        got, want = ix.query(f, 4), part.query(f, 4)
        assert [i for i, _ in got] == [i for i, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want])
    assert 2 not in ix and len(ix) == 3
    with pytest.raises(ContentIndexError):
        ix.add(1, {})
    with pytest.raises(ContentIndexError):
        ix.remove(99)


def test_bad_input() -> None:
    with pytest.raises(ContentIndexError, match="finite"):
        ContentIndex([1], [{"x": float("nan")}])
    with pytest.raises(ContentIndexError, match="ids"):
        ContentIndex([1, 1], [{"x": 1.0}, {"x": 1.0}])
    with pytest.raises(ContentIndexError):
        ContentIndex([1], [{"x": "3"}])  # type: ignore[dict-item]
    empty = ContentIndex()
    assert empty.query({"x": 1.0}) == [] and len(empty) == 0


def test_csr_is_l2_normalised() -> None:
    ix = ContentIndex([1, 2, 3], [{"a": 1.0, "b": 3.0}, {"b": 1.0}, {}])
    norms = np.sqrt(np.add.reduceat(ix.data ** 2, ix.indptr[:-1][np.diff(ix.indptr) > 0]))
    assert np.allclose(norms, 1.0)
    assert ix.indptr.tolist() == [0, 2, 3, 3]


def test_query_is_vectorised_on_50k_rows() -> None:
    rng = np.random.default_rng(0)
    n, v, per = 50_000, 400, 12
    keys = np.unique(np.repeat(np.arange(n), per) * v + rng.integers(0, v, size=n * per))
    rows, indices = keys // v, keys % v  # sorted unique columns within each row
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    names = [f"f{i}" for i in range(v)]
    counts = rng.integers(1, 4, size=len(indices)).astype(float)
    first = {names[c]: counts[j] for j, c in enumerate(indices[: indptr[1]])}
    ix = ContentIndex.from_arrays(np.arange(n) * 2, names, indptr, indices, counts)
    res = ix.query(first, k=10)
    assert len(res) == 10
    assert res[0][0] == 0 and res[0][1] == pytest.approx(1.0)
    scores = [s for _i, s in res]
    assert scores == sorted(scores, reverse=True)
    # brute force on a sample of rows agrees
    s_all = ix.scores(first)
    dense_q = np.zeros(v)
    for k_, val in first.items():
        dense_q[int(k_[1:])] = val * ix.idf(k_)
    dense_q /= np.linalg.norm(dense_q)
    for r in (0, 1, 2, 777, 1999):
        row = np.zeros(v)
        a, b = ix.indptr[r], ix.indptr[r + 1]
        row[ix.indices[a:b]] = ix.data[a:b]
        assert s_all[r] == pytest.approx(float(row @ dense_q))


def test_from_arrays_rejects_unsorted_columns() -> None:
    with pytest.raises(ContentIndexError, match="increase"):
        ContentIndex.from_arrays([1], ["a", "b"], np.array([0, 2]), np.array([1, 0]),
                                 np.array([1.0, 1.0]))
    ix = ContentIndex.from_arrays([1, 2], ["a", "b"], np.array([0, 1, 2]), np.array([1, 0]),
                                  np.array([1.0, 1.0]))
    assert ix.query({"b": 1.0}, 2)[0][0] == 1
