"""Version 2 of the WL fingerprint (interned integer labels, 64-bit hashes): many at once equal
one at a time, the same shapes share a fingerprint as under version 1, and a store written with
version-1 fingerprints migrates on open (SQLite and PostgreSQL)."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analogist.memory.sqlite as msql
from analogist.casebook import load_casebook
from analogist.index.features import (
    FINGERPRINT_VERSION,
    EpisodeFeatures,
    _wl_v1,
    extract_features,
    extract_features_many,
    wl_fingerprint,
    wl_fingerprints,
)
from analogist.memory import open_memory
from analogist.signature import Signature, validate_signature


def _casebook() -> list[Signature]:
    return [e.signature for e in load_casebook()]


def _renamed(s: Signature, k: int) -> Signature:
    """``s`` with every role tag renamed and its relations and edges listed in reverse."""
    m = {t: f"Z{k}_{i}" for i, t in enumerate(reversed(sorted(s.roles)))}
    d = s.to_data()
    d["episode_id"] = f"{s.episode_id}-r{k}"
    d["roles"] = {m[t]: v for t, v in d["roles"].items()}
    d["relations"] = [[r[0], *(m[x] for x in r[1:])] for r in reversed(d["relations"])]

    def atom(a: str) -> str:
        p, inner = a[: a.index("(")], a[a.index("(") + 1: -1]
        return f"{p}({','.join(m[x] for x in inner.split(',') if x)})"

    d["causal_chain"] = [{**e, "cause": atom(e["cause"]), "effect": atom(e["effect"])}
                         for e in reversed(d["causal_chain"])]
    return validate_signature(d)


def _partition(fps: list[str]) -> set[frozenset[int]]:
    groups: dict[str, set[int]] = defaultdict(set)
    for i, fp in enumerate(fps):
        groups[fp].add(i)
    return {frozenset(g) for g in groups.values()}


def test_many_at_once_equal_one_at_a_time() -> None:
    sigs = _casebook()
    assert FINGERPRINT_VERSION == 2
    for depth in (0, 1, 2, 3):
        many = wl_fingerprints(sigs, depth)
        assert many == [wl_fingerprint(s, depth) for s in sigs]
        assert all(re.fullmatch(r"[0-9a-f]{64}", fp) for fp in many)
    assert extract_features_many(sigs) == [extract_features(s) for s in sigs]
    assert wl_fingerprints([]) == [] and extract_features_many([]) == []
    with pytest.raises(ValueError):
        wl_fingerprints(sigs, 17)


def test_same_shapes_as_version_1_on_the_casebook() -> None:
    """Two signatures share a version-2 fingerprint exactly when they share a version-1 one
    (the casebook, and each entry renamed and reordered: a renamed copy shares both)."""
    base = _casebook()
    sigs = base + [_renamed(s, 1) for s in base]
    for depth in (1, 2):
        v2 = wl_fingerprints(sigs, depth)
        assert _partition(v2) == _partition([_wl_v1(s, depth) for s in sigs])
        assert v2[: len(base)] == v2[len(base):]


PREDS = ["derives_from", "skips_check", "races_with", "q"]
STATES = ["stale", "wrong", "ok"]


@st.composite
def _small(draw: st.DrawFn) -> dict[str, Any]:
    tags = draw(st.lists(st.sampled_from(["A", "B", "C", "D"]), min_size=1, max_size=3,
                         unique=True))
    role = st.sampled_from(tags)
    rels = draw(st.lists(st.tuples(st.sampled_from(PREDS), role, role), max_size=3))
    atoms = st.builds(lambda p, a: f"{p}({a})", st.sampled_from(STATES), role)
    chain = draw(st.lists(st.tuples(atoms, st.sampled_from(["causes", "prevents"]), atoms,
                                    st.sampled_from([1, -1])),
                          max_size=3, unique_by=lambda e: (e[0], e[1], e[2])))
    return {"episode_id": "h", "kind": "failure", "roles": {t: "r" for t in tags},
            "relations": [list(r) for r in rels],
            "causal_chain": [{"cause": c, "edge": t, "effect": e, "sign": s}
                             for c, t, e, s in chain]}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_small(), min_size=2, max_size=12))
def test_same_shapes_as_version_1_on_small_graphs(ds: list[dict[str, Any]]) -> None:
    """Small graphs collide often: version 2 groups them as version 1 does."""
    sigs = [validate_signature(d) for d in ds]
    assert _partition(wl_fingerprints(sigs)) == _partition([_wl_v1(s) for s in sigs])


def test_store_with_version_1_fingerprints_migrates(store: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A store at schema v5 holding version-1 fingerprints: on open, each is replaced by its
    version-2 fingerprint (what queries compute), a caller's own fingerprint stays, and the
    namespace's rewrites counter moves (a saved stage-1 index is rebuilt, not reused)."""
    sigs = _casebook()[:12]
    monkeypatch.setattr(msql, "MIGRATIONS", msql.MIGRATIONS[:5])
    monkeypatch.setattr(msql, "SCHEMA_VERSION", 5)
    with open_memory(store) as mem:
        ids = mem.add_many(sigs, namespace="n")
        own = mem.add(_renamed(sigs[0], 9), namespace="n",
                      features=EpisodeFeatures(content={"rel:x": 1.0}, fingerprint="ab" * 32))
        for sid, s in zip(ids, sigs, strict=True):  # what version 1 wrote
            mem.conn.execute("UPDATE sig_fingerprint SET fingerprint = ? WHERE signature_id = ?",
                             (_wl_v1(s), sid))
        before = mem.generation("n")
    monkeypatch.undo()
    for _ in range(2):  # the second open finds nothing to do
        with open_memory(store) as mem:
            assert mem.schema_version() == msql.SCHEMA_VERSION >= 6
            rows = dict(mem.conn.execute("SELECT signature_id, fingerprint FROM sig_fingerprint"
                                         ).fetchall())
            assert [rows[i] for i in ids] == [wl_fingerprint(s) for s in sigs]
            assert rows[own] == "ab" * 32
            gen, rew = mem.generation("n")
            assert gen > before[0] and rew > before[1]
            groups = mem.fingerprint_groups("n")
            assert groups.get(wl_fingerprint(sigs[0])) == [ids[0]]
