"""An adjective right after a verb without object is the state the subject comes into, however
the tagger attached it (hand-written sentences): "... and ran dry" reads as "ran dry" does."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


def _state_atoms(enc: DeterministicEncoder, text: str) -> set[str]:
    sig = enc.encode(text).signature.to_data()
    atoms = {e[k] for e in sig["causal_chain"] for k in ("cause", "effect")}
    return {a.split("(", 1)[0] for a in atoms}


@pytest.mark.parametrize("text", [
    "The irrigation tank below depended on water pumped through the upper channel and ran dry.",
    "The fountain in the square depended on water sent through the old pipe and ran dry.",
])
def test_ran_dry_after_and_is_exhausted(enc: DeterministicEncoder, text: str) -> None:
    assert "exhausted" in _state_atoms(enc, text)


def test_the_same_event_gets_one_predicate_in_either_telling(enc: DeterministicEncoder) -> None:
    a = "The fountain in the square depended on water sent through the old pipe and ran dry."
    b = "The fountain in the square ran dry, which emptied the pipe."
    assert "exhausted" in _state_atoms(enc, a) & _state_atoms(enc, b)
