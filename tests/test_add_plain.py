"""The add path reads a record straight into plain values when it can (``_fast_plain``: no
model objects built) and otherwise takes the model's Signature. Either way it accepts exactly
what the Signature model accepts, refuses exactly what it refuses, in the same words, and
prepares the rows the model's Signature gives: the same canonical JSON, features, surface
tokens and relation rows.
"""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from analogist.errors import AnalogistError, SignatureError
from analogist.index.features import extract_features, surface_tokens
from analogist.memory.records import _COMPACT, _plain_record, _prepare
from analogist.memory.sqlite import Memory
from analogist.signature import (
    Signature,
    _fast_plain,
    _signature_of,
    _uses,
    _validate_plain,
    check_vocabulary,
    default_signature_vocabulary,
    validate_signature,
)
from tests.add_rows import records
from tests.test_signature_fast import _ATOM, _EDGE, _TAG

_LONG = "x" * 4001
_TEXT = st.sampled_from([None, "t", "", "é «q» \"x\"\n", _LONG, 3, b"b", ["t"]])
_LEVELS = st.one_of(
    st.dictionaries(st.sampled_from(["L0", "L1", "L2", "L3", "L0", "L1", "L9", "l0"]), _TEXT,
                    max_size=4),
    st.sampled_from([None, [], "L0"]))
_SURFACE = st.one_of(
    st.fixed_dictionaries({}, optional={
        "domain": _TEXT,
        "entities": st.one_of(st.lists(_TEXT, max_size=3), st.just(["e"] * 257),
                              st.just(("a", "b")), st.none()),
        "other": st.just(1)}),
    st.sampled_from([None, [], "web"]))
_TOKEN = st.sampled_from([None, "w", "", "x" * 101, 7, "ab" * 8])
_PROVENANCE = st.one_of(
    st.fixed_dictionaries({}, optional={
        "writer": _TOKEN, "source_hash": _TOKEN, "prompt_version": _TOKEN,
        "time": st.sampled_from([None, "2026-01-02T03:04:05Z", "2026-01-02T03:04:05",
                                 "yesterday", 5]),
        "extra": st.just("x")}),
    st.sampled_from([None, "w"]))
_RECORD = st.fixed_dictionaries(
    {"episode_id": st.sampled_from(["e", "e", "e-1", "", 5, "x" * 101]),
     "kind": st.sampled_from(["event", "plan_b", "failure", "Event", "a b"]),
     "roles": st.one_of(st.just({"A": "a", "B": "b", "C": "c", "x-y": "d"}),
                        st.dictionaries(_TAG, st.sampled_from(["d", _LONG, 1]), max_size=4))},
    optional={"relations": st.one_of(st.lists(_ATOM, max_size=4), st.just(None)),
              "causal_chain": st.one_of(st.lists(_EDGE, max_size=4), st.just(None)),
              "violated_invariant": _TEXT, "symptom": _TEXT, "fix_operator": _TEXT,
              "levels": _LEVELS, "surface": _SURFACE, "provenance": _PROVENANCE,
              "verified": st.sampled_from([True, False, 0, 1, "yes", None]),
              "unknown": st.just(1)})

# the fixed input of tests/test_add_rows.py with one field broken or changed now and then
_BASE = records(60, seed=5)
_CHANGES: list[tuple[tuple[Any, ...], Any]] = [
    (("kind",), "Failure"), (("episode_id",), ""), (("roles",), {}),
    (("levels", "L0"), _LONG), (("levels", "L7"), "x"), (("levels",), {"L1": None}),
    (("surface", "entities"), [1]), (("surface", "entities"), []), (("surface",), {}),
    (("surface", "domain"), None), (("provenance",), {"writer": ""}),
    (("provenance",), {"writer": "w", "time": None}), (("provenance",), {"time": "nope"}),
    (("provenance",), {"source_hash": "ab" * 8, "prompt_version": "v1"}),
    (("verified",), 1), (("symptom",), _LONG), (("fix_operator",), "patch «it»"),
    (("relations",), []), (("causal_chain",), []), (("extra",), 1),
]


@st.composite
def _changed(draw: Any) -> dict[str, Any]:
    d = copy.deepcopy(draw(st.sampled_from(_BASE)))
    for path, value in draw(st.lists(st.sampled_from(_CHANGES), max_size=2)):
        node = d
        for k in path[:-1]:
            if not isinstance(node.get(k), dict):
                node[k] = {}
            node = node[k]
        node[path[-1]] = copy.deepcopy(value)
    return d


def _expected_rows(sig: Signature) -> dict[str, Any]:
    """The rows of ``sig``, from the model's Signature and the public feature functions."""
    chain = {(a.predicate, a.args) for e in sig.causal_chain for a in e.atoms()}
    f = extract_features(sig)
    return {
        "episode_id": sig.episode_id, "kind": sig.kind,
        "source_hash": sig.provenance.source_hash, "verified": sig.verified,
        "text": _COMPACT.encode(sig.to_data()), "fingerprint": f.fingerprint,
        "fingerprint_depth": f.fingerprint_depth,
        "vectors": (("content", "json-counts", _COMPACT.encode(f.content)),),
        "surface": " ".join(sorted(surface_tokens(sig))),
        "relations": [(i, a.predicate, json.dumps(list(a.args)),
                       int((a.predicate, a.args) in chain)) for i, a in enumerate(sig.relations)],
    }


def _rows(data: dict[str, Any]) -> dict[str, Any]:
    p = _prepare(data)
    return {k: getattr(p, k) for k in ("episode_id", "kind", "source_hash", "verified", "text",
                                       "fingerprint", "fingerprint_depth", "vectors", "surface",
                                       "relations")}


def _agree(data: Any) -> str:
    """The add path and the model agree on ``data``; returns which way it went."""
    fast = _fast_plain(copy.deepcopy(data)) if isinstance(data, dict) else None
    try:
        sig = Signature.model_validate(copy.deepcopy(data))
    except (ValidationError, AnalogistError):
        assert fast is None, f"the fast path accepted what the model refuses: {data!r}"
        with pytest.raises(AnalogistError) as want:
            validate_signature(copy.deepcopy(data))
        with pytest.raises(AnalogistError) as got:
            _plain_record(copy.deepcopy(data))
        assert (type(got.value), str(got.value), got.value.field) == \
            (type(want.value), str(want.value), want.value.field)
        with pytest.raises(AnalogistError) as want:
            validate_signature(copy.deepcopy(data), source="f.json[3]")
        with pytest.raises(AnalogistError) as got:
            _validate_plain(copy.deepcopy(data), source="f.json[3]")
        assert (type(got.value), str(got.value), got.value.field) == \
            (type(want.value), str(want.value), want.value.field)
        return "refused"
    assert _rows(copy.deepcopy(data)) == _expected_rows(sig)
    plain = _validate_plain(copy.deepcopy(data))
    assert list(_uses(plain)) == list(_uses(sig))
    assert _vocabulary_check(plain) == _vocabulary_check(sig)
    if fast is None:
        return "model"
    assert _signature_of(fast) == sig
    return "fast"


def _vocabulary_check(sig: Any) -> tuple[str, ...]:
    vocab = default_signature_vocabulary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = check_vocabulary(sig, vocab)
        except AnalogistError as e:
            return ("error", str(e))
    return tuple(p.name for p in got)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_RECORD)
def test_generated_records_are_accepted_and_refused_as_the_model_does(
        data: dict[str, Any]) -> None:
    _agree(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_changed())
def test_changed_fixed_records_are_accepted_and_refused_as_the_model_does(
        data: dict[str, Any]) -> None:
    _agree(data)


def test_the_fixed_input_and_changes_of_it_take_every_way() -> None:
    ways = {_agree(r) for r in records(90)}
    for i, (path, value) in enumerate(_CHANGES):
        d = copy.deepcopy(_BASE[i % len(_BASE)])
        node = d
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = value
        ways.add(_agree(d))
    assert ways == {"fast", "model", "refused"}


@pytest.mark.parametrize("record", [None, 7, "text", ["episode_id", "e"], b"{}"])
def test_a_record_that_is_not_a_mapping_is_refused_in_one_line(record: Any) -> None:
    with pytest.raises(SignatureError, match=r"^expected a Signature or a mapping, got \w+$"):
        _plain_record(record)


@pytest.mark.parametrize("record", [None, 7, "text", ["episode_id", "e"]])
def test_validate_plain_refuses_a_non_mapping_as_validate_signature_does(record: Any) -> None:
    with pytest.raises(SignatureError) as want:
        validate_signature(record, source="f.json[0]")
    with pytest.raises(SignatureError) as got:
        _validate_plain(record, source="f.json[0]")
    assert str(got.value) == str(want.value)
    assert str(got.value).startswith("f.json[0]: expected a mapping (object) at the top level")


def test_plain_values_are_stored_as_validated(tmp_path: Any) -> None:
    recs = records(30)
    with Memory.open(tmp_path / "a.db") as a, Memory.open(tmp_path / "b.db") as b:
        a.add_many([_validate_plain(copy.deepcopy(r)) for r in recs], validated=True)
        b.add_many(recs)
        assert [(e.episode_id, e.signature) for e in a.list()] == \
            [(e.episode_id, e.signature) for e in b.list()]


def test_a_bad_record_in_a_bulk_add_names_its_index_and_field_and_writes_nothing(
        tmp_path: Any) -> None:
    good = records(20)
    bad_ones = [({**good[3], "kind": "Bad Kind"}, "records[3].kind"),
                ({**good[3], "levels": {"L0": _LONG}}, "records[3].levels.L0"),
                ({**good[3], "surface": {"entities": ["a", 2]}}, "records[3].surface.entities[1]"),
                ({**good[3], "provenance": {"time": "soon"}}, "records[3].provenance.time"),
                (7, "records[3]")]
    with Memory.open(tmp_path / "m.db") as m:
        for bad, field in bad_ones:
            recs = [*good[:3], bad, *good[4:]]
            with pytest.raises(AnalogistError) as ei:
                m.add_many(recs, batch_size=100)
            assert ei.value.field == field
            assert ei.value.message.startswith("record 3: ") and "\n" not in str(ei.value)
            assert m.count() == 0
        assert len(m.add_many(good, batch_size=7)) == len(good)
