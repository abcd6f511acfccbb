"""Theorem 5's calibrated rates as data: :class:`Calibration` (π per position, (q, p) per analogy
strength bin), its strength bins, and the bundled and file calibrations. Counting them on
development targets is :func:`analogist.foresight.calibrate.calibrate`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError
from analogist.foresight.event import POSITIONS
from analogist.io import load_structured

__all__ = ["STRENGTH_BINS", "Calibration", "bundled_calibration", "load_calibration",
           "strength_bin"]

STRENGTH_BINS: tuple[str, ...] = ("m1", "m2", "m3")


def strength_bin(mechanism_matches: int) -> str:
    """The strength bin of an analogy with this many position-and-mechanism matches."""
    return f"m{max(1, min(3, int(mechanism_matches)))}"


@dataclass(frozen=True)
class Calibration:
    """Calibrated per-position priors and per-bin (q, p) for one arm."""

    arm: str
    pi: dict[str, float]
    rates: dict[str, tuple[float, float]]
    counts: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    def __post_init__(self) -> None:
        for s, v in self.pi.items():
            if s not in POSITIONS or not 0.0 < v < 1.0:
                raise AnalogistError(f"calibration pi[{s!r}] must be a position with a value "
                                     f"strictly between 0 and 1, got {v!r}", field="pi")
        for b, (q, p) in self.rates.items():
            if not (0.0 < p < q <= 1.0):
                raise AnalogistError(f"calibration rates[{b!r}] need 0 < p < q <= 1, got "
                                     f"q={q}, p={p}", field="rates")

    def prior(self, position: str, default: float) -> float:
        return self.pi.get(position, default)

    def to_json(self) -> dict[str, Any]:
        return {"arm": self.arm, "pi": {k: round(v, 6) for k, v in sorted(self.pi.items())},
                "rates": {k: [round(q, 6), round(p, 6)] for k, (q, p) in
                          sorted(self.rates.items())},
                "counts": self.counts, "source": self.source}

    @classmethod
    def from_json(cls, data: Any, *, source: str | None = None) -> Calibration:
        if not isinstance(data, dict):
            raise AnalogistError("a calibration must be a JSON object", source=source)
        try:
            return cls(arm=str(data["arm"]),
                       pi={str(k): float(v) for k, v in data["pi"].items()},
                       rates={str(k): (float(v[0]), float(v[1]))
                              for k, v in data["rates"].items()},
                       counts=dict(data.get("counts") or {}), source=str(data.get("source", "")))
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise AnalogistError(f"malformed calibration: {type(e).__name__}: {e}",
                                 source=source) from None


def load_calibration(path: str | Path, arm: str = "cana") -> Calibration:
    """Load the calibration of ``arm`` from a JSON file ``{"cana": {...}, "surface": {...}}``."""
    data = load_structured(path)
    if not isinstance(data, dict) or arm not in data:
        raise AnalogistError(f"no calibration for arm {arm!r}", source=str(path))
    return Calibration.from_json(data[arm], source=str(path))


@lru_cache(maxsize=4)
def bundled_calibration(arm: str = "cana") -> Calibration | None:
    """The calibration shipped with the corpus (``data/history/calibration.json``), or None
    when the package carries none."""
    f = resources.files("analogist") / "data" / "history" / "calibration.json"
    if not f.is_file():
        return None
    data = json.loads(f.read_text(encoding="utf-8"))
    if arm not in data:
        return None
    return Calibration.from_json(data[arm], source="bundled calibration.json")
