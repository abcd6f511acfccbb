"""Vocabularies: the declared predicates a description may use.

A :class:`Vocabulary` is one declared, versioned set of predicates (functors). Each
:class:`Predicate` is a ``relation``, ``function``, ``attribute`` or ``logical`` connective, with an
arity, and flags for n-ary (the last argument may repeat), commutative (arguments may be permuted)
and symmetric (a binary relation whose two arguments may be swapped). Predicates carry a one-line
definition and synonyms; a predicate that entered without a definition is *proposed*.

The classic SME ``.vcb`` files load into exactly this form (see :mod:`analogist.sme.formats`).
The reference's ``taxonomy`` predicate type is kept as its own kind and is matched like a relation.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from analogist.errors import VocabularyError
from analogist.io import load_structured, validation_error


class PredicateKind(StrEnum):
    RELATION = "relation"
    FUNCTION = "function"
    ATTRIBUTE = "attribute"
    LOGICAL = "logical"
    TAXONOMY = "taxonomy"


class ProposedTermWarning(UserWarning):
    """A relation not in the vocabulary was accepted as a proposed term."""


class Predicate(BaseModel):
    """One declared functor."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, max_length=200)
    kind: PredicateKind
    arity: int = Field(ge=0, le=64)
    arg_names: tuple[str, ...] = ()
    n_ary: bool = False
    commutative: bool = False
    symmetric: bool = False
    ubiquitous: bool = False
    expression_type: str | None = None
    definition: str = ""
    synonyms: tuple[str, ...] = ()
    status: str = Field(default="declared", pattern="^(declared|proposed)$")
    parent: str | None = None
    """The predicate's superordinate (SME's *genls*): a declared predicate of the same kind and
    arity that this one is a kind of ("harmed" and "failure" are kinds of "adverse"). Minimal
    ascension (:attr:`analogist.sme.SMEParams.minimal_ascension`) lets two different predicates
    with a common superordinate match, at a discount per level climbed."""

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str) -> str:
        if any(c.isspace() or c in "()\"';" for c in v):
            raise ValueError(f"predicate name {v!r} may not contain spaces, parentheses or quotes")
        return v

    def accepts_arity(self, n: int) -> bool:
        """True when an expression with ``n`` arguments is well-formed for this predicate."""
        if self.n_ary:
            return n >= max(self.arity - 1, 1) if self.arity else True
        return n == self.arity


class Vocabulary(BaseModel):
    """A named, versioned set of predicates and declared entity types."""

    name: str = "vocabulary"
    version: str = "1"
    predicates: dict[str, Predicate] = Field(default_factory=dict)
    entities: dict[str, str | None] = Field(
        default_factory=dict, description="declared entity constants and their types"
    )
    source: str | None = None

    # -- lookup ---------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self.predicates or self._synonym(name) is not None

    def __iter__(self) -> Iterator[Predicate]:  # type: ignore[override]
        return iter(self.predicates.values())

    def __len__(self) -> int:
        return len(self.predicates)

    def _synonym(self, name: object) -> Predicate | None:
        for p in self.predicates.values():
            if name in p.synonyms:
                return p
        return None

    def get(self, name: str) -> Predicate | None:
        """The predicate called ``name`` (or having it as a synonym), or None."""
        p = self.predicates.get(name)
        return p if p is not None else self._synonym(name)

    def require(self, name: str, *, source: str | None = None, line: int | None = None,
                field: str | None = None) -> Predicate:
        p = self.get(name)
        if p is None:
            raise VocabularyError(
                f"undeclared functor {name!r} (not in vocabulary {self.name!r})",
                source=source, line=line, field=field,
            )
        return p

    def ancestors(self, name: str) -> tuple[str, ...]:
        """``name``'s canonical name followed by its superordinates, nearest first (just the
        name itself when it has no parent or is not declared)."""
        p = self.get(name)
        if p is None:
            return (name,)
        out = [p.name]
        while p.parent is not None and p.parent not in out:
            nxt = self.get(p.parent)
            if nxt is None:
                break
            out.append(nxt.name)
            p = nxt
        return tuple(out)

    def check_parents(self, *, source: str | None = None) -> None:
        """Every ``parent`` names a declared predicate of the same kind and arity, and no
        predicate is its own superordinate; else a :class:`VocabularyError` naming it."""
        for i, p in enumerate(self.predicates.values()):
            if p.parent is None:
                continue
            where = f"predicates[{i}].parent"
            q = self.get(p.parent)
            if q is None:
                raise VocabularyError(f"{p.name}'s parent {p.parent!r} is not a declared "
                                      "predicate", source=source, field=where)
            if q.kind is not p.kind or q.arity != p.arity:
                raise VocabularyError(
                    f"{p.name} ({p.kind.value}, arity {p.arity}) cannot be a kind of {q.name} "
                    f"({q.kind.value}, arity {q.arity}): a parent has the same kind and arity",
                    source=source, field=where)
            seen = {p.name}
            while q is not None:
                if q.name in seen:
                    raise VocabularyError(f"{p.name}'s parents run in a circle through "
                                          f"{q.name}", source=source, field=where)
                seen.add(q.name)
                q = self.get(q.parent) if q.parent is not None else None

    def canonical(self, name: str) -> str:
        """The declared name for ``name`` (resolving synonyms); ``name`` itself if unknown."""
        p = self.get(name)
        return p.name if p is not None else name

    # -- building ---------------------------------------------------------------------------
    def declare(self, predicate: Predicate, *, source: str | None = None,
                line: int | None = None) -> Predicate:
        if predicate.name in self.predicates:
            raise VocabularyError(
                f"predicate {predicate.name!r} declared twice", source=source, line=line
            )
        self.predicates[predicate.name] = predicate
        return predicate

    def propose(self, name: str, arity: int, *, kind: PredicateKind = PredicateKind.RELATION,
                definition: str = "", warn: bool = True) -> Predicate:
        """Accept ``name`` as a *proposed* term (recorded, warned about, no definition needed)."""
        existing = self.get(name)
        if existing is not None:
            return existing
        p = Predicate(name=name, kind=kind, arity=arity, definition=definition,
                      status="proposed")
        self.predicates[name] = p
        if warn:
            warnings.warn(
                f"relation {name!r} is not in vocabulary {self.name!r}; accepted as a proposed term",
                ProposedTermWarning,
                stacklevel=3,
            )
        return p

    def proposed(self) -> list[Predicate]:
        return [p for p in self.predicates.values() if p.status == "proposed"]

    def merged(self, other: Vocabulary) -> Vocabulary:
        """A new vocabulary with ``other``'s predicates added (``other`` wins on no conflict)."""
        out = self.model_copy(deep=True)
        for p in other.predicates.values():
            if p.name not in out.predicates:
                out.predicates[p.name] = p
        for e, t in other.entities.items():
            out.entities.setdefault(e, t)
        return out

    # -- I/O --------------------------------------------------------------------------------
    @classmethod
    def from_predicates(cls, predicates: Iterable[Predicate], **kw: Any) -> Vocabulary:
        v = cls(**kw)
        for p in predicates:
            v.declare(p)
        return v

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        """Load a ``.json`` or ``.yaml`` vocabulary. (A ``.vcb`` file, the reference SME's
        format, is read by :func:`analogist.sme.formats.read_vcb`: the data model knows no file
        format of the engine.)"""
        path = Path(path)
        if path.suffix.lower() == ".vcb":
            raise VocabularyError("a .vcb vocabulary is the reference SME's format: read it with "
                                  "analogist.sme.formats.read_vcb", source=str(path))
        data = load_structured(path)
        return cls.from_data(data, source=str(path))

    @classmethod
    def from_data(cls, data: Any, *, source: str | None = None) -> Vocabulary:
        """Build from a mapping ``{name, version, predicates: [..] | {name: {..}}}``."""

        if not isinstance(data, dict):
            raise VocabularyError("expected a mapping at the top level", source=source)
        preds = data.get("predicates", [])
        if isinstance(preds, dict):
            preds = [{"name": k, **(v or {})} for k, v in preds.items()]
        if not isinstance(preds, list):
            raise VocabularyError("expected a list of predicates", source=source,
                                  field="predicates")
        v = cls(name=str(data.get("name", "vocabulary")), version=str(data.get("version", "1")),
                source=source)
        for i, p in enumerate(preds):
            try:
                pred = Predicate.model_validate(p)
            except ValidationError as e:
                raise validation_error(e, source=source, prefix=f"predicates[{i}]",
                                       cls=VocabularyError) from None
            v.declare(pred, source=source)
        v.check_parents(source=source)
        return v
