"""analogist: find, map and check analogies by structure."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from analogist.errors import AnalogistError

if TYPE_CHECKING:
    from analogist.description import Description, Expr
    from analogist.vocabulary import Predicate, PredicateKind, Vocabulary

__version__ = "0.1.0"

__all__ = [
    "AnalogistError",
    "Description",
    "Expr",
    "Predicate",
    "PredicateKind",
    "Vocabulary",
    "__version__",
]

# The data model's names are resolved on first use (PEP 562): importing the package, as every
# CLI command does, then costs no pydantic model building, so `analogist --help` starts at once.
_LAZY = {"Description": "analogist.description", "Expr": "analogist.description",
         "Predicate": "analogist.vocabulary", "PredicateKind": "analogist.vocabulary",
         "Vocabulary": "analogist.vocabulary"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'analogist' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
