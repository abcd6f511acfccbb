"""A watcher that reports or marks a thing "as missing / absent / lost / gone" states
``reports_absence`` between the two, the absence word being its complement: it is not a state
of the watcher of its own (the watcher is not what is missing)."""

from __future__ import annotations

import pytest

from analogist.encode.deterministic import DeterministicEncoder


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder()


@pytest.mark.parametrize("text,watcher,thing", [
    ("The smoke alarm reports the night shift as missing.", "smoke alarm", "night shift"),
    ("The roll call flagged the third platoon as absent.", "roll call", "third platoon"),
    ("The tracking portal marks the parcel as lost.", "tracking portal", "parcel"),
])
def test_reporting_as_missing_is_reports_absence(enc, text, watcher, thing):
    res = enc.encode(text)
    preds = [a.predicate for a in res.signature.relations]
    assert preds == ["reports_absence"], preds
    a = res.signature.relations[0]
    assert [res.signature.roles[x] for x in a.args] == [watcher, thing]


def test_an_as_phrase_with_a_noun_stays_a_complement_reading(enc):
    # the complement layer still reads a noun after "as" ("treats X as the truth")
    res = enc.encode("The clerk treats the old ledger as the truth.")
    assert [a.predicate for a in res.signature.relations] == ["trusts_as_authoritative"]
