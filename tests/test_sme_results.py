"""The engine's result objects: lazily computed parts, immutability, equality, the integer-view
cache."""

from __future__ import annotations

import gc
import json

import pytest
from hypothesis import given, settings

from analogist.description import Description
from analogist.examples import load_example
from analogist.sme import GlobalMapping, SMEParams, match
from analogist.sme.core import _INDEXED
from analogist.sme.results import candidate_inferences
from tests.sme_strategies import VOCAB, descriptions

SETTINGS = settings(max_examples=60, deadline=None)


@SETTINGS
@given(descriptions(), descriptions())
def test_lazy_parts_do_not_depend_on_when_they_are_read(b: Description, t: Description) -> None:
    read_first = match(b, t)
    eager = [(m.inferences, m.alignable_differences) for m in read_first.mappings]
    later = match(b, t)
    _ = [m.score for m in later.mappings], later.to_json()  # read again after other work
    assert [(m.inferences, m.alignable_differences) for m in later.mappings] == eager
    for m in later.mappings:
        assert m.inferences is m.inferences  # computed once, then kept
        # differences: matched expressions whose functors differ, in match-hypothesis order
        assert m.alignable_differences == tuple(
            (x, y) for x, y in m.expression_pairs if x.functor != y.functor)


@SETTINGS
@given(descriptions(), descriptions())
def test_inferences_follow_the_entity_support_flag(b: Description, t: Description) -> None:
    strict = SMEParams(allow_entity_supported_inferences=False)
    for m in match(b, t, strict).mappings:
        mapped_exprs = {x for x, _ in m.expression_pairs}
        for ci in m.inferences:
            # without entity support, every inference rests on some mapped expression
            assert any(s in mapped_exprs for s in ci.support)
            assert ci.base in b.top_level and ci.base not in mapped_exprs


def test_heat_water_inferences_and_differences() -> None:
    base, target = load_example("heat-water")
    best = match(base, target).best
    assert best is not None
    assert [ci.sexpr for ci in best.inferences] == [
        ci.sexpr for ci in candidate_inferences(base, best.entity_pairs, best.expression_pairs,
                                                best.functor_pairs, SMEParams())]
    assert any("cause" in ci.sexpr for ci in best.inferences)
    diffs = {(x.functor, y.functor) for x, y in best.alignable_differences}
    assert ("pressure", "temperature") in diffs


def test_mappings_are_immutable_and_compare_by_value() -> None:
    base, target = load_example("solar-atom")
    one, two = match(base, target), match(base, target)
    m = one.best
    assert m is not None
    with pytest.raises(AttributeError):
        m.score = 0.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        m.inferences = ()  # type: ignore[misc]
    assert one.mappings == two.mappings
    assert hash(one.mappings[0]) == hash(two.mappings[0])
    assert "GlobalMapping(score=" in repr(m)
    assert json.dumps(one.to_json()) == json.dumps(two.to_json())
    if len(one.mappings) > 1:
        assert one.mappings[0] != one.mappings[1]


def test_a_mapping_needs_its_inferences_or_the_base() -> None:
    with pytest.raises(TypeError):
        GlobalMapping(1.0, 0, (), (), (), ())
    given_ = GlobalMapping(1.0, 0, (), (), (), (), inferences=(), alignable_differences=())
    assert given_.inferences == () and given_.alignable_differences == ()


def test_the_integer_view_of_a_description_is_dropped_with_it() -> None:
    d = Description.build("tmp", [["r1", "a", "b"], ["a1", "a"]], VOCAB, entities=["a", "b"])
    match(d, d)
    key = id(d)
    assert key in _INDEXED
    del d
    gc.collect()
    assert key not in _INDEXED
