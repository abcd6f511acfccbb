"""The fast path of signature validation builds exactly what the model builds, or steps aside.

``validate_signature`` first tries ``_fast_signature`` (hand-written checks and direct
construction, for records already in the usual shapes) and lets the pydantic model validate
whenever that returns None. These tests hold the two equal: whenever the fast path answers, the
model accepts the same data and builds an equal object (same fields, same fields-set, same
canonical data, down to every atom and edge); whenever the model refuses, the fast path steps
aside (so every error and its message stays the model's).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from analogist.errors import AnalogistError
from analogist.signature import (
    Levels,
    Provenance,
    Signature,
    Surface,
    _built,
    _empty,
    _fast_signature,
    validate_signature,
)


def _same_object(a: Signature, b: Signature) -> None:
    assert a == b
    assert a.to_data() == b.to_data()
    assert a.model_fields_set == b.model_fields_set
    assert list(a.__dict__) == list(b.__dict__)
    for x, y in zip(a.relations, b.relations, strict=True):
        assert x.model_fields_set == y.model_fields_set and type(x.args) is type(y.args)
    for x, y in zip(a.causal_chain, b.causal_chain, strict=True):
        assert x.model_fields_set == y.model_fields_set
        assert x.cause.model_fields_set == y.cause.model_fields_set
        assert x.effect.model_fields_set == y.effect.model_fields_set
    for name in ("levels", "surface", "provenance"):
        sa, sb = getattr(a, name), getattr(b, name)
        assert sa == sb and sa.model_fields_set == sb.model_fields_set
        assert list(sa.__dict__) == list(sb.__dict__)


def _check(data: Any) -> str:
    """Compare the two paths on ``data``; returns which way it went."""
    fast = _fast_signature(copy.deepcopy(data)) if isinstance(data, dict) else None
    try:
        slow = Signature.model_validate(copy.deepcopy(data))
    except (ValidationError, AnalogistError):
        assert fast is None, f"fast path accepted what the model refuses: {data!r}"
        return "refused"
    if fast is None:
        return "fallback"
    _same_object(fast, slow)
    return "fast"


BASE: dict[str, Any] = {
    "episode_id": "ep-1",
    "kind": "failure",
    "roles": {"SRC": "the source", "DER": "the derived copy", "CON": "a consumer"},
    "relations": [["derives_from", "DER", "SRC"], "reads(CON,DER)", ["derives_from", "DER", "SRC"]],
    "causal_chain": [
        {"cause": "diverges_from(DER,SRC)", "edge": "causes", "effect": "false_claim(CON)",
         "sign": 1, "status": "observed"},
        ["false_claim(CON)", "Prevents", "outage()"],
        {"cause": ["stale", "DER"], "edge": "masks", "effect": "diverges_from(DER,SRC)",
         "sign": "-"},
    ],
    "violated_invariant": "copies track their source",
    "levels": {"L0": "a cache served stale data", "L3": "a copy drifts"},
    "surface": {"domain": "web", "entities": ["cache", "db"]},
    "provenance": {"writer": "hand", "source_hash": "abc"},
    "verified": True,
}


def test_the_usual_shape_takes_the_fast_path_and_builds_the_same_object() -> None:
    assert _check(BASE) == "fast"
    assert validate_signature(copy.deepcopy(BASE)) == Signature.model_validate(BASE)


def test_a_minimal_record_fills_the_same_defaults() -> None:
    assert _check({"episode_id": "e", "kind": "event", "roles": {"A": ""}}) == "fast"


def test_the_empty_sub_models_equal_their_defaults() -> None:
    for model in (Levels, Surface, Provenance):
        made, want = _built(model, _empty(model), set()), model()
        assert made == want and list(made.__dict__) == list(want.__dict__)
        assert made.model_fields_set == want.model_fields_set


def _with(path: tuple[Any, ...], value: Any, *, delete: bool = False) -> dict[str, Any]:
    d = copy.deepcopy(BASE)
    node: Any = d
    for k in path[:-1]:
        node = node[k]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return d


VARIANTS = [
    # unusual but valid: the model decides (fallback) or the fast path agrees with it
    _with(("relations", 1), "reads( CON , DER )"),
    _with(("relations", 1), {"predicate": "reads", "args": ["CON", "DER"]}),
    _with(("causal_chain", 0, "sign"), "positive"),
    _with(("causal_chain", 0, "sign"), " -1 "),
    _with(("causal_chain", 0, "sign"), 1.0),
    _with(("causal_chain", 0, "edge"), "  ENABLES "),
    _with(("causal_chain", 1), ("false_claim(CON)", "causes", "outage()")),
    _with(("verified",), 1),
    _with(("verified",), "true"),
    _with(("provenance", "time"), "2026-01-02T03:04:05Z"),
    _with(("provenance",), Provenance(writer="w")),
    _with(("levels",), None),
    _with(("surface", "entities"), ("a", "b")),
    _with(("roles",), {"A": "x"}),
    _with(("relations",), ()),
    _with(("symptom",), None),
    _with(("kind",), "near_miss"),
    # invalid: the model refuses and the fast path must step aside
    _with(("kind",), "Failure"),
    _with(("kind",), "failure\n"),
    _with(("kind",), "x" * 101),
    _with(("episode_id",), ""),
    _with(("episode_id",), 7),
    _with(("roles",), {}),
    _with(("roles",), {"1A": "x"}),
    _with(("roles",), {"A\n": "x"}),
    _with(("roles", "SRC"), "x" * 4001),
    _with(("roles", "SRC"), None),
    _with(("relations", 0), ["derives_from"]),
    _with(("relations", 0), ["derives_from", "DER", "NOPE"]),
    _with(("relations", 0), []),
    _with(("relations", 0), ["9bad", "DER"]),
    _with(("relations", 1), "reads(CON,,DER)"),
    _with(("relations", 1), "reads(CON,DER,)"),
    _with(("relations", 1), "reads()"),
    _with(("relations", 1), "reads(CON DER)"),
    _with(("relations", 1), "reads(CON,DER"),
    _with(("causal_chain", 0, "edge"), "leads_to"),
    _with(("causal_chain", 0, "sign"), True),
    _with(("causal_chain", 0, "sign"), 2),
    _with(("causal_chain", 0, "status"), "guessed"),
    _with(("causal_chain", 0, "extra"), 1),
    _with(("causal_chain", 0, "cause"), "x(NOPE)"),
    _with(("causal_chain", 1), ["false_claim(CON)", "causes"]),
    _with(("causal_chain", 2), {"cause": "diverges_from(DER,SRC)", "edge": "causes",
                                "effect": "false_claim(CON)"}),
    _with(("causal_chain", 0, "effect"), None, delete=True),
    _with(("levels", "L5"), "x"),
    _with(("levels", "L0"), "x" * 4001),
    _with(("surface", "entities"), ["x"] * 257),
    _with(("provenance", "writer"), ""),
    _with(("provenance", "time"), "yesterday"),
    _with(("verified",), None),
    _with(("unknown",), 1),
    _with(("roles",), None, delete=True),
    _with(("relations",), [["r", "SRC"]] * 257),
    _with(("relations", 0), ["derives_from", *["DER"] * 17]),
]


@pytest.mark.parametrize("data", VARIANTS, ids=range(len(VARIANTS)))
def test_unusual_and_bad_records_agree_with_the_model(data: dict[str, Any]) -> None:
    _check(data)


def test_the_variants_exercise_every_way() -> None:
    ways = {_check(d) for d in VARIANTS}
    assert ways == {"fast", "fallback", "refused"}


# mostly valid pieces (so that many records pass), with a bad one now and then
_TAG = st.sampled_from(["A", "B", "C", "A", "B", "C", "A", "B", "C", "x-y", "bad tag", "1A", ""])
_PRED = st.sampled_from(["p", "q_r", "causes", "_x", "p", "q_r", "p", "9p", "p q", ""])
_ATOM_TEXT = st.builds(lambda p, a, sp: f"{p}({(', ' if sp else ',').join(a)})", _PRED,
                       st.lists(_TAG, max_size=3), st.booleans())
_ATOM_LIST = st.builds(lambda p, a: [p, *a], _PRED, st.lists(_TAG, max_size=3))
_ATOM = st.one_of(_ATOM_TEXT, _ATOM_TEXT, _ATOM_LIST, _ATOM_LIST, st.integers(), st.just([]))
_EDGE = st.one_of(
    st.builds(lambda c, e, f: [c, e, f], _ATOM, st.sampled_from(["causes", "masks", "x"]),
              _ATOM),
    st.fixed_dictionaries(
        {"cause": _ATOM, "edge": st.sampled_from(["causes", "Prevents ", "delays", "nope", 3]),
         "effect": _ATOM},
        optional={"sign": st.sampled_from([1, -1, 1, -1, "+", "negative", 0, True, 1.0, None]),
                  "status": st.sampled_from(["observed", "inferred", "x"])}))
_RECORD = st.fixed_dictionaries(
    {"episode_id": st.sampled_from(["e", "e", "e", "", 5]),
     "kind": st.sampled_from(["event", "plan_b", "event", "Event"]),
     "roles": st.one_of(st.just({"A": "a", "B": "b", "C": "c", "x-y": "d"}),
                        st.dictionaries(_TAG, st.sampled_from(["d", "x" * 4001]), max_size=4))},
    optional={"relations": st.lists(_ATOM, max_size=4),
              "causal_chain": st.lists(_EDGE, max_size=4),
              "symptom": st.sampled_from([None, "s", 3]),
              "levels": st.sampled_from([{}, {"L1": "a"}, {"L9": "a"}, None]),
              "surface": st.sampled_from([{"entities": ["a"]}, {"domain": None}, []]),
              "provenance": st.sampled_from([{"writer": "w"}, {"time": "2026-01-01T00:00:00"}]),
              "verified": st.sampled_from([True, False, True, False, 0, "yes"])})


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_RECORD)
def test_generated_records_agree_with_the_model(data: dict[str, Any]) -> None:
    _check(data)
