"""Parameters validated declaratively: a dataclass field says what it accepts, one function checks.

    @dataclass(frozen=True)
    class MyParams:
        k: int = bounded(5, lo=1, hi=50, integer=True)
        threshold: float = bounded(0.5, lo=0.0, hi=1.0)
        style: str = one_of("neutral", ("neutral", "noun"))
        exact: bool = flag(False)

        def __post_init__(self) -> None:
            check_bounds(self)

A value out of its bounds, of the wrong type, or not among its choices raises
:class:`~analogist.errors.AnalogistError` (or the error class given to :func:`check_bounds`)
naming the field: ``k must be an integer between 1 and 50, got 0``. Numbers must be finite.
A relation between two fields (``q`` must exceed ``p``) is checked after :func:`check_bounds`
in the class's own ``__post_init__``; a range of one field is always declared here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from analogist.errors import AnalogistError

__all__ = ["Bounds", "Choices", "bounded", "check_bounds", "flag", "one_of", "spec_of"]

_KEY = "analogist.bounds"


@dataclass(frozen=True)
class Bounds:
    """A number in ``lo .. hi`` (None: that end is open-ended); ``lo_open`` / ``hi_open``: the end
    itself is excluded; ``integer``: an int (never a bool); ``optional``: None is accepted too;
    ``each``: the value is a sequence whose every member must satisfy the bounds (``nonempty``:
    and it has at least one)."""

    lo: float | None = None
    hi: float | None = None
    integer: bool = False
    lo_open: bool = False
    hi_open: bool = False
    optional: bool = False
    each: bool = False
    nonempty: bool = False

    def admits(self, v: Any) -> bool:
        if isinstance(v, bool):
            return False
        if self.integer:
            if not isinstance(v, int):
                return False
        elif not isinstance(v, (int, float)) or not math.isfinite(v):
            return False
        if self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)):
            return False
        return not (self.hi is not None and (v > self.hi or (self.hi_open and v == self.hi)))

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a number"
        lo, hi = self.lo, self.hi
        if lo is not None and hi is not None:
            if self.integer and not (self.lo_open or self.hi_open):
                text = f"{kind} between {lo:g} and {hi:g}"
            else:
                text = (f"{kind} in {'(' if self.lo_open else '['}{lo:g}, {hi:g}"
                        f"{')' if self.hi_open else ']'}")
        elif lo is not None:
            if lo == 0:
                text = f"a {'positive' if self.lo_open else 'non-negative'} {kind.split()[-1]}"
            elif lo == 1 and self.integer and not self.lo_open:
                text = "a positive integer"
            else:
                text = f"{kind} {'greater than' if self.lo_open else 'of at least'} {lo:g}"
        elif hi is not None:
            text = f"{kind} {'less than' if self.hi_open else 'of at most'} {hi:g}"
        else:
            text = "an integer" if self.integer else "a finite number"
        if self.each:
            text = (f"a {'non-empty ' if self.nonempty else ''}sequence whose every member is "
                    f"{text}")
        return f"{text} or None" if self.optional else text


@dataclass(frozen=True)
class Choices:
    """One of ``options`` (``each``: a sequence of them); ``kind=bool``: True or False."""

    options: tuple[Any, ...]
    each: bool = False

    def admits(self, v: Any) -> bool:
        return any(v is o if isinstance(o, bool) else (not isinstance(v, bool) and v == o)
                   for o in self.options)

    def describe(self) -> str:
        if self.options == (True, False):
            return "a boolean"
        shown = [repr(o) for o in self.options]
        text = " or ".join(shown) if len(shown) <= 2 else "one of " + ", ".join(shown)
        return f"a sequence each of whose members is {text}" if self.each else text


def _field(default: Any, spec: Bounds | Choices, kw: dict[str, Any]) -> Any:
    meta = {**kw.pop("metadata", {}), _KEY: spec}
    if "default_factory" in kw:
        return field(metadata=meta, **kw)
    return field(default=default, metadata=meta, **kw)


def bounded(default: Any = None, *, lo: float | None = None, hi: float | None = None,
            integer: bool = False, lo_open: bool = False, hi_open: bool = False,
            optional: bool = False, each: bool = False, nonempty: bool = False,
            **kw: Any) -> Any:
    """A dataclass field holding a number within :class:`Bounds` (see there for the arguments).
    Other keyword arguments go to :func:`dataclasses.field`."""
    return _field(default, Bounds(lo, hi, integer, lo_open, hi_open, optional, each, nonempty),
                  kw)


def one_of(default: Any, options: tuple[Any, ...], *, each: bool = False, **kw: Any) -> Any:
    """A dataclass field whose value is one of ``options`` (``each``: a sequence of them)."""
    return _field(default, Choices(tuple(options), each), kw)


def flag(default: bool, **kw: Any) -> Any:
    """A dataclass field holding True or False (not 0 or 1, not a string)."""
    return _field(default, Choices((True, False)), kw)


def spec_of(f: Any) -> Bounds | Choices | None:
    """The declared :class:`Bounds` or :class:`Choices` of a dataclass field, if any."""
    return f.metadata.get(_KEY)


def _admits(spec: Bounds | Choices, v: Any) -> bool:
    if isinstance(spec, Bounds) and spec.optional and v is None:
        return True
    if spec.each:
        if isinstance(v, (str, bytes)) or not isinstance(v, (tuple, list, frozenset, set)):
            return False
        if isinstance(spec, Bounds) and spec.nonempty and not v:
            return False
        return all(spec.admits(x) for x in v)
    return spec.admits(v)


def check_bounds(obj: Any, error: type[Exception] = AnalogistError) -> None:
    """Check every declared field of the dataclass instance ``obj``; the first one that fails
    raises ``error`` (an :class:`AnalogistError` subclass gets ``field=`` the field's name)."""
    for f in fields(obj):
        spec = spec_of(f)
        if spec is None:
            continue
        v = getattr(obj, f.name)
        if not _admits(spec, v):
            message = f"{f.name} must be {spec.describe()}, got {v!r}"
            if issubclass(error, AnalogistError):
                raise error(message, field=f.name)
            raise error(message)
