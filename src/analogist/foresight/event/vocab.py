"""The foresight vocabulary: the mechanism classes and positions declared in the bundled history
data (``mechanisms.yaml`` plus ``mechanisms.d/``), as definitions and as attribute predicates
over the signature vocabulary (see :mod:`analogist.foresight.event`)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from analogist.foresight.event.model import (
    POSITION_PREFIX,
    EventError,
)
from analogist.signature import (
    default_signature_vocabulary,
)
from analogist.vocabulary import Predicate, PredicateKind, Vocabulary


def _history_root() -> Any:
    return resources.files("analogist") / "data" / "history"


@lru_cache(maxsize=1)
def _vocab_data() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    root = _history_root()
    main = yaml.safe_load((root / "mechanisms.yaml").read_text(encoding="utf-8"))
    positions = dict(main["positions"])
    mechs: dict[str, str] = dict(main["mechanisms"])
    origin = {m: "mechanisms.yaml" for m in mechs}
    extra = root / "mechanisms.d"
    if extra.is_dir():
        for f in sorted(extra.iterdir(), key=lambda p: p.name):
            if not f.name.endswith(".yaml"):
                continue
            data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
            for name, definition in (data.get("mechanisms") or {}).items():
                if name in mechs:
                    raise EventError(f"mechanism {name!r} is declared twice (also in "
                                     f"{origin[name]})", source=f"mechanisms.d/{f.name}")
                if not isinstance(definition, str) or not definition.strip():
                    raise EventError(f"mechanism {name!r} needs a one-line definition",
                                     source=f"mechanisms.d/{f.name}")
                mechs[name] = definition
                origin[name] = f"mechanisms.d/{f.name}"
    return positions, mechs, origin


def position_definitions() -> dict[str, str]:
    return dict(_vocab_data()[0])


def mechanism_definitions() -> dict[str, str]:
    """Every mechanism class with its one-line definition (main file plus mechanisms.d/)."""
    return dict(_vocab_data()[1])


def foresight_vocabulary() -> Vocabulary:
    """The signature vocabulary plus one attribute per mechanism and per position (a fresh copy
    on each call)."""
    preds = [Predicate(name=m, kind=PredicateKind.ATTRIBUTE, arity=1, definition=d)
             for m, d in mechanism_definitions().items()]
    preds += [Predicate(name=POSITION_PREFIX + p, kind=PredicateKind.ATTRIBUTE, arity=1,
                        definition=f"the factor is at the {p} position: {d}")
              for p, d in position_definitions().items()]
    extra = Vocabulary.from_predicates(preds, name="foresight", version="1")
    return default_signature_vocabulary().merged(extra)

