"""Every parameter dataclass declares its fields' ranges with :mod:`analogist.params`, and refuses
a value out of them with an error that names the field.

The classes are found by reading the source (every ``class …Params`` in ``src/analogist``, and the
application layer's ``Settings``), so a new one is held to this without being listed here.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import math
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analogist.bench.harness.goldset import GoldSetError
from analogist.errors import AnalogistError
from analogist.params import Bounds, Choices, bounded, check_bounds, flag, one_of, spec_of
from analogist.plans import PlanError
from analogist.triggers import TriggerError

SRC = Path(__file__).resolve().parents[1] / "src"

# The error class each family raises (the rest raise AnalogistError itself).
ERRORS: dict[str, type[Exception]] = {
    "PlanParams": PlanError,
    "TriggerParams": TriggerError,
    "GoldSetParams": GoldSetError,
    "ClaimReaderParams": ValueError,
}
# Fields whose in-range values can still be refused by a relation to another field.
RELATED = {("TriggerParams", "tier1_failed_repairs"), ("TriggerParams", "tier2_failed_repairs"),
           ("ConfirmParams", "q"), ("ConfirmParams", "p")}


def _param_classes() -> list[type]:
    out = []
    for path in sorted((SRC / "analogist").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [n.name for n in tree.body if isinstance(n, ast.ClassDef)
                 and (n.name.endswith("Params") or (path.name == "app.py"
                                                    and n.name == "Settings")
                      or (path.parts[-2:] == ("app", "__init__.py") and n.name == "Settings"))]
        if not names:
            continue
        parts = path.relative_to(SRC).with_suffix("").parts
        mod = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        module = importlib.import_module(mod)
        out.extend(getattr(module, n) for n in names)
    return out


CLASSES = _param_classes()
IDS = [c.__qualname__ for c in CLASSES]
NUMERIC = {int, float}


def _numeric(tp: Any) -> bool:
    """An int or float annotation, optionally with None, or a tuple of them."""
    if tp in NUMERIC:
        return True
    args = typing.get_args(tp)
    origin = typing.get_origin(tp)
    if origin is tuple:
        return bool(args) and all(a in NUMERIC or a is Ellipsis for a in args)
    return bool(args) and all(a in NUMERIC or a is type(None) for a in args) \
        and any(a in NUMERIC for a in args)


def test_the_classes_are_found() -> None:
    names = set(IDS)
    assert len(CLASSES) >= 19
    assert {"RetrieveParams", "SMEParams", "JudgeParams", "ForesightParams", "ConfirmParams",
            "TriggerParams", "PlanParams", "EncoderParams", "Settings"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_every_number_field_declares_its_range(cls: type) -> None:
    assert dataclasses.is_dataclass(cls)
    hints = typing.get_type_hints(cls)
    undeclared = [f.name for f in dataclasses.fields(cls)
                  if _numeric(hints[f.name]) and spec_of(f) is None]
    assert not undeclared, f"{cls.__qualname__}: {undeclared} checked by hand or not at all"
    cls()  # the defaults are in range


def _bounded_fields() -> list[tuple[type, dataclasses.Field]]:
    return [(c, f) for c in CLASSES for f in dataclasses.fields(c) if spec_of(f) is not None]


FIELDS = _bounded_fields()


def _outside(spec: Bounds | Choices) -> st.SearchStrategy[Any]:
    """Values the declaration must refuse."""
    wrong_type = st.sampled_from(["x", True, False, [], {"a": 1}])
    if isinstance(spec, Choices):
        if spec.options == (True, False):
            return st.sampled_from([0, 1, "yes", None, 1.0])
        bad = st.text(min_size=1, max_size=8).filter(lambda s: s not in spec.options)
        return st.tuples(bad).map(tuple) if spec.each else bad | st.sampled_from([None, 3])
    if spec.each:
        return (st.sampled_from(["13", 5])
                | st.lists(_outside_scalar(spec), min_size=1, max_size=3).map(tuple)
                | (st.just(()) if spec.nonempty else st.nothing()))
    return _outside_scalar(spec) | wrong_type


def _outside_scalar(spec: Bounds) -> st.SearchStrategy[Any]:
    parts = [st.sampled_from([math.nan, math.inf, -math.inf, "1"])]
    if spec.integer:
        parts.append(st.floats(min_value=1.5, max_value=9.5).filter(lambda v: v != int(v)))
    if spec.lo is not None:
        below = st.floats(min_value=1e-6, max_value=1e6).map(lambda d: spec.lo - d)
        parts.append(below.map(math.floor) if spec.integer else below)
        if spec.lo_open:
            parts.append(st.just(int(spec.lo) if spec.integer else float(spec.lo)))
    if spec.hi is not None:
        above = st.floats(min_value=1e-6, max_value=1e6).map(lambda d: spec.hi + d)
        parts.append(above.map(math.ceil) if spec.integer else above)
        if spec.hi_open:
            parts.append(st.just(int(spec.hi) if spec.integer else float(spec.hi)))
    return st.one_of(parts)


def _inside(spec: Bounds | Choices) -> st.SearchStrategy[Any]:
    if isinstance(spec, Choices):
        one = st.sampled_from(spec.options)
        return st.lists(one, max_size=3).map(tuple) if spec.each else one
    lo = spec.lo if spec.lo is not None else -1e6
    hi = spec.hi if spec.hi is not None else lo + 1e6
    if spec.integer:
        lo_i = math.floor(lo) + 1 if spec.lo_open or lo != math.floor(lo) else int(lo)
        hi_i = math.ceil(hi) - 1 if spec.hi_open or hi != math.ceil(hi) else int(hi)
        one = st.integers(min_value=lo_i, max_value=min(hi_i, lo_i + 10**6))
    else:
        one = st.floats(min_value=lo, max_value=hi, exclude_min=spec.lo_open,
                        exclude_max=spec.hi_open, allow_nan=False)
    if spec.each:
        return st.lists(one, min_size=1, max_size=3).map(tuple)
    return one | st.none() if spec.optional else one


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_every_params_class_refuses_out_of_range_values_naming_the_field(data: Any) -> None:
    cls, f = data.draw(st.sampled_from(FIELDS), label="field")
    value = data.draw(_outside(spec_of(f)), label="value")
    error = ERRORS.get(cls.__qualname__, AnalogistError)
    with pytest.raises(Exception) as ei:
        cls(**{f.name: value})
    assert type(ei.value) is error, (cls.__qualname__, f.name, value, ei.value)
    if isinstance(ei.value, AnalogistError):
        assert ei.value.field == f.name
        assert ei.value.message.startswith(f"{f.name} must be ")
    else:
        assert str(ei.value).startswith(f"{f.name} must be ")


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_in_range_values_are_accepted(data: Any) -> None:
    cls, f = data.draw(st.sampled_from([(c, f) for c, f in FIELDS
                                        if (c.__qualname__, f.name) not in RELATED]),
                       label="field")
    value = data.draw(_inside(spec_of(f)), label="value")
    assert getattr(cls(**{f.name: value}), f.name) == value


@dataclasses.dataclass(frozen=True)
class _Example:
    k: int = bounded(5, lo=1, hi=50, integer=True)
    share: float = bounded(0.5, lo=0.0, hi=1.0, lo_open=True)
    count: int = bounded(0, lo=0, integer=True)
    cap: float | None = bounded(None, lo=0.0, optional=True)
    ks: tuple[int, ...] = bounded((1,), lo=1, integer=True, each=True, nonempty=True)
    style: str = one_of("neutral", ("neutral", "noun"))
    exact: bool = flag(False)

    def __post_init__(self) -> None:
        check_bounds(self)


@pytest.mark.parametrize("kw, message", [
    ({"k": 0}, "k must be an integer between 1 and 50, got 0"),
    ({"share": 0.0}, "share must be a number in (0, 1], got 0.0"),
    ({"count": -1}, "count must be a non-negative integer, got -1"),
    ({"cap": -2.0}, "cap must be a non-negative number or None, got -2.0"),
    ({"ks": ()}, "ks must be a non-empty sequence whose every member is a positive integer, "
                 "got ()"),
    ({"style": "fancy"}, "style must be 'neutral' or 'noun', got 'fancy'"),
    ({"exact": 1}, "exact must be a boolean, got 1"),
])
def test_messages_say_what_was_expected(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(AnalogistError) as ei:
        _Example(**kw)
    assert ei.value.message == message and ei.value.field == next(iter(kw))


def test_an_error_class_that_takes_no_field_gets_the_message_alone() -> None:
    @dataclasses.dataclass(frozen=True)
    class Plain:
        x: float = bounded(0.5, lo=0.0, hi=1.0)

        def __post_init__(self) -> None:
            check_bounds(self, ValueError)

    with pytest.raises(ValueError, match=r"^x must be a number in \[0, 1\], got 2$"):
        Plain(x=2)
