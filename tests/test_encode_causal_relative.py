"""A non-restrictive relative on a verb of change states an effect (hand-written sentences):
"…, which emptied the lock" is caused by the clause before it, "the rumour, which emptied the
bank" by the noun it follows, "…, which kept prices high" leaves the object in the adjective's
state; a relative naming no change ("the report, which counted the units") stays a relation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


def _edges(enc: DeterministicEncoder, text: str) -> list[tuple[str, str, str, str]]:
    """(cause role, edge, effect role, connective) of each kept link, roles by description."""
    res = enc.encode(text)
    sig: dict[str, Any] = res.signature.to_data()

    def role(atom: str) -> str:
        return str(sig["roles"][atom[atom.index("(") + 1:-1].split(",")[0]])

    return [(role(e["cause"]), e["edge"], role(e["effect"]), lk["connective"])
            for e, lk in zip(sig["causal_chain"], res.links, strict=True)]


# (a clause stating a state, its subject's role description)
_BEFORE = [
    ("The pumping station ran dry", "pumping station"),
    ("The upper gate jammed", "upper gate"),
    ("The river rose overnight", "river"),
    ("The old dam failed", "old dam"),
]
# (a verb of change, its object's role description)
_CHANGES = [
    ("emptied the middle lock", "middle lock"),
    ("flooded the lower meadow", "lower meadow"),
    ("disabled the warning siren", "warning siren"),
    ("expanded the harbour basin", "harbour basin"),
]


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=st.sampled_from(_BEFORE), change=st.sampled_from(_CHANGES))
def test_a_sentential_relative_is_caused_by_the_clause_before_it(
        enc: DeterministicEncoder, before: tuple[str, str], change: tuple[str, str]) -> None:
    got = _edges(enc, f"{before[0]}, which {change[0]}.")
    assert (before[1], "causes", change[1], "which") in got
    assert not any(c == change[1] and e == before[1] for c, _, e, _ in got)


def test_a_relative_on_a_noun_is_caused_by_the_noun(enc: DeterministicEncoder) -> None:
    got = _edges(enc, "The rumour, which emptied the bank, spread quickly.")
    assert ("rumour", "causes", "bank", "which") in got


def test_a_resulting_adjective_is_the_object_s_state(enc: DeterministicEncoder) -> None:
    got = _edges(enc, "The ranchers bred more calves, which kept beef prices high.")
    assert ("ranchers", "causes", "beef prices", "which") in got


def test_a_relative_naming_no_change_stays_a_relation(enc: DeterministicEncoder) -> None:
    text = "The shortfall never showed up in the weekly report, which counted the units."
    assert not any(c == "which" for *_, c in _edges(enc, text))
