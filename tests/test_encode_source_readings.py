"""Ordinary verbs of working from a source, competing for a resource and tying one up are read as
the vocabulary's relations (``reads_from``, ``competes_for``, ``consumes``), and a verb that takes
"its data / its figures" from a source has the source as its object."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder()


def _named(res) -> list[tuple[str, ...]]:
    roles = res.signature.roles
    return [(a.predicate, *(roles[x] for x in a.args)) for a in res.signature.relations]


@pytest.mark.parametrize("text,want", [
    ("The carpenter builds to the architect's plan.", ("reads_from", "carpenter", "plan")),
    ("The broker books against the morning quote sheet.",
     ("reads_from", "broker", "morning quote sheet")),
    ("The umpire goes by the rule book.", ("reads_from", "umpire", "rule book")),
    ("The jeweller prices off the gold index.",
     ("reads_from", "jeweller", "gold index")),
    ("The starlings forage for the spilled grain.", ("competes_for", "starlings", "spilled grain")),
    ("The long meeting ties up the conference room.",
     ("consumes", "long meeting", "conference room")),
])
def test_source_and_resource_verbs(enc, text, want):
    assert want in _named(enc.encode(text))


@pytest.mark.parametrize("text,source", [
    ("The weather app takes its figures from the airport station.", "airport station"),
    ("The dashboard fetches its data from the nightly export.", "nightly export"),
])
def test_the_content_of_a_source_is_not_the_object(enc, text, source):
    res = enc.encode(text)
    assert [r for r in _named(res) if r[0] == "reads_from"][0][2] == source
    assert not any(d in ("figures", "data") for d in res.signature.roles.values())


def test_a_copy_keeps_its_content_as_the_copy(enc):
    # copying the figures from a ledger makes a copy of them: the figures stay a participant
    res = enc.encode("The clerk copied the figures from the ledger.")
    assert ("derives_from", "figures", "ledger") in _named(res)
