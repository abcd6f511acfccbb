"""A denied object makes the subject go without it (hand-written sentences): "held no oak",
"contained hardly any water", "kept barely any records" read as ``lacks``, as "had no paper"
does; the same verbs with a plain object do not."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder
from tests.encode_readings import role_atoms


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


@pytest.mark.parametrize("text, holder, held", [
    ("After the drought the cistern held almost no water.", "cistern", "water"),
    ("The cellar contained no coal.", "cellar", "coal"),
    ("The pantry had hardly any flour.", "pantry", "flour"),
    ("The clinic kept barely any records.", "clinic", "records"),
])
def test_a_denied_object_is_lacked(enc: DeterministicEncoder, text: str, holder: str,
                                   held: str) -> None:
    assert ("lacks", holder, held) in role_atoms(enc, text)


@pytest.mark.parametrize("text", ["The cellar contained the coal.",
                                  "The pantry had any flour it needed."])
def test_a_plain_object_is_not_lacked(enc: DeterministicEncoder, text: str) -> None:
    assert not any(a[0] == "lacks" for a in role_atoms(enc, text))


@pytest.mark.parametrize("noun", ["lack", "absence"])
def test_the_lack_of_a_thing_is_its_absence(enc: DeterministicEncoder, noun: str) -> None:
    sig = enc.encode(f"The {noun} of coal caused the freeze.").signature.to_data()
    coal = next(t for t, d in sig["roles"].items() if d == "coal")
    assert any(e["cause"] == f"missing({coal})" for e in sig["causal_chain"]), sig
