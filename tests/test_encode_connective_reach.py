"""A sentence-opening "So" after a sentence the reader takes nothing from reaches back to the
sentence before it (hand-written sentences), as an inferred link; after a sentence it does read,
"So" links that one, as stated."""

from __future__ import annotations

from typing import Any

import pytest

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


def _chain(enc: DeterministicEncoder, text: str) -> list[dict[str, Any]]:
    return enc.encode(text).signature.to_data()["causal_chain"]


def test_so_reaches_past_a_sentence_with_no_clause(enc: DeterministicEncoder) -> None:
    text = ("The council paid drivers for each mile. Driving empty cars earned the same fee as "
            "full ones. So the drivers circled the town all night.")
    chain = _chain(enc, text)
    assert any(e["cause"].startswith(("supplies", "pay", "incentivises"))
               and e["effect"].startswith("circle") and e["status"] == "inferred"
               for e in chain)


def test_so_after_a_read_sentence_is_stated(enc: DeterministicEncoder) -> None:
    text = "The council paid drivers for each mile. So the drivers circled the town all night."
    chain = _chain(enc, text)
    assert any(e["effect"].startswith("circle") and e["status"] == "observed" for e in chain)
