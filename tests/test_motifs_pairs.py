"""Motif counts against a brute-force count over pairs of causal edges, on generated graphs
(those where every atom has at most one edge in and one out, which ``_motifs`` counts by a
shorter way, and any others)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from analogist.index.features import _motifs

_TYPES = ("causes", "prevents", "enables", "masks", "delays")


@dataclass
class _G:
    nodes: list[tuple[str, tuple[str, ...]]]
    edges: list[tuple[int, int, str, int]]
    relations: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)


def _ts(t: str, s: int) -> str:
    return t + ("+" if s > 0 else "-")


def _pairs(g: _G) -> dict[str, int]:
    """Chain, common-cause and common-effect counts over ordered / unordered edge pairs."""
    out: dict[str, int] = {}

    def add(k: str) -> None:
        out[k] = out.get(k, 0) + 1

    e = g.edges
    for x, (a, b, t1, s1) in enumerate(e):
        for y, (b2, c, t2, s2) in enumerate(e):
            if x != y and b == b2 and a != b and c != b and c != a:
                add("motif:chain")
                add(f"motif:chain:{_ts(t1, s1)}>{_ts(t2, s2)}")
        for y in range(x + 1, len(e)):
            a2, d2, t2, s2 = e[y]
            u, v = sorted((_ts(t1, s1), _ts(t2, s2)))
            if a == a2 and b != d2 and a != b and a != d2:
                add("motif:common_cause")
                add(f"motif:common_cause:{u}|{v}")
            if b == d2 and a != a2 and b != a and b != a2:
                add("motif:common_effect")
                add(f"motif:common_effect:{u}|{v}")
    return out


@st.composite
def _graphs(draw: Any) -> _G:
    n = draw(st.integers(1, 6))
    nodes = [(f"p{i}", ("A",)) for i in range(n)]
    if draw(st.booleans()):  # a path or cycle: at most one edge in and one out per node
        order = draw(st.permutations(range(n)))
        k = draw(st.integers(0, n))
        steps = [(order[i], order[(i + 1) % n]) for i in range(k)]
    else:
        steps = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                              max_size=7))
    edges = [(a, b, draw(st.sampled_from(_TYPES)), draw(st.sampled_from([1, -1])))
             for a, b in steps]
    return _G(nodes, edges)


@settings(max_examples=600, deadline=None)
@given(_graphs())
def test_pair_motifs_equal_a_brute_force_count(g: _G) -> None:
    got: dict[str, int] = {}
    _motifs(g, got)
    want = _pairs(g)
    pair_keys = ("motif:chain", "motif:common_cause", "motif:common_effect")
    assert {k: v for k, v in got.items() if k.startswith(pair_keys)} == want
