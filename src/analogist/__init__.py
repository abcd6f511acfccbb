"""analogist: find, map and check analogies by structure."""

from analogist.description import Description, Expr
from analogist.errors import AnalogistError
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
