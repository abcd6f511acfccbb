"""Comparative correlatives read exactly (hand-written sentences): "the more X …, the more Y …"
is the first half's amount causing the second's; swapping the halves reverses the edge, and
"less" / "fewer" / a comparative of decrease names a fall."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analogist.encode.deterministic import DeterministicEncoder
from tests.encode_readings import role_edges as _edges


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)



# (a half, its thing, its direction)
_HALVES = [
    ("the more tram lines there were", "tram lines", "increased"),
    ("the costlier any change became", "change", "increased"),
    ("the faster the pumps ran", "pumps", "increased"),
    ("the lower the reservoir fell", "reservoir", "decreased"),
    ("the fewer ferries sailed", "ferries", "decreased"),
]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=st.sampled_from(_HALVES), second=st.sampled_from(_HALVES))
def test_the_first_half_causes_the_second(enc: DeterministicEncoder,
                                          first: tuple[str, str, str],
                                          second: tuple[str, str, str]) -> None:
    if first[1] == second[1]:
        return
    text = f"{first[0][0].upper()}{first[0][1:]}, {second[0]}."
    assert _edges(enc, text) == [(first[2], first[1], second[2], second[1])]
