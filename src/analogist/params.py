"""Parameters validated declaratively: a dataclass field says its bounds, one function checks them.

    @dataclass(frozen=True)
    class MyParams:
        k: int = bounded(5, lo=1, hi=50, integer=True)
        threshold: float = bounded(0.5, lo=0.0, hi=1.0)

        def __post_init__(self) -> None:
            check_bounds(self)

A value out of its bounds (or of the wrong type) raises :class:`~analogist.errors.AnalogistError`
naming the field: ``k must be an integer between 1 and 50, got 0``.
"""

from __future__ import annotations

import math
from dataclasses import field, fields
from typing import Any

from analogist.errors import AnalogistError

__all__ = ["bounded", "check_bounds"]

_KEY = "analogist.bounds"


def bounded(default: Any = None, *, lo: float | None = None, hi: float | None = None,
            integer: bool = False, **kw: Any) -> Any:
    """A dataclass field whose value must lie in ``[lo, hi]`` (either end may be open: None);
    ``integer``: an int (not a bool). Other keyword arguments go to :func:`dataclasses.field`."""
    meta = {**kw.pop("metadata", {}), _KEY: (lo, hi, integer)}
    if "default_factory" in kw:
        return field(metadata=meta, **kw)
    return field(default=default, metadata=meta, **kw)


def _describe(lo: float | None, hi: float | None, integer: bool) -> str:
    kind = "an integer" if integer else "a number"
    if lo is not None and hi is not None:
        return f"{kind} between {lo:g} and {hi:g}"
    if lo is not None:
        return f"{kind} of at least {lo:g}"
    if hi is not None:
        return f"{kind} of at most {hi:g}"
    return kind


def check_bounds(obj: Any) -> None:
    """Check every :func:`bounded` field of the dataclass instance ``obj``."""
    for f in fields(obj):
        spec = f.metadata.get(_KEY)
        if spec is None:
            continue
        lo, hi, integer = spec
        v = getattr(obj, f.name)
        ok = not isinstance(v, bool) and (isinstance(v, int) if integer
                                          else isinstance(v, (int, float)))
        if ok and not integer and math.isnan(v):
            ok = False
        if ok and ((lo is not None and v < lo) or (hi is not None and v > hi)):
            ok = False
        if not ok:
            raise AnalogistError(f"{f.name} must be {_describe(lo, hi, integer)}, got {v!r}",
                                 field=f.name)
