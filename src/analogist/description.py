"""Descriptions: the predicate-calculus language the structure-mapping engine reads.

A :class:`Description` is a set of *entities* (constants, written as plain strings) and
*expressions* ``(functor arg ...)`` whose arguments are entities or other expressions. Each functor
is declared in a :class:`~analogist.vocabulary.Vocabulary`. Expressions may carry names (as in the
reference SME's ``.dgr`` files, ``((greater press-beaker press-vial) :name >pressure)``), and later
expressions may refer to earlier ones by name.

Descriptions are immutable once built; structurally equal sub-expressions are shared (one
:class:`Expr` object per distinct form), so an expression written twice is one expression.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from analogist.errors import DescriptionError, VocabularyError
from analogist.vocabulary import Predicate, PredicateKind, Vocabulary

Item = Union["Expr", str]
"""An argument: an :class:`Expr` or an entity name."""


class Expr:
    """An expression ``(functor arg ...)``; immutable, hashable, hash computed once."""

    __slots__ = ("functor", "args", "_hash", "order")

    functor: str
    args: tuple[Item, ...]
    order: int

    def __init__(self, functor: str, args: Iterable[Item]) -> None:
        a = tuple(args)
        object.__setattr__(self, "functor", functor)
        object.__setattr__(self, "args", a)
        object.__setattr__(self, "_hash", hash((functor, a)))
        order = 1
        for x in a:
            if isinstance(x, Expr) and x.order + 1 > order:
                order = x.order + 1
        object.__setattr__(self, "order", order)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("Expr is immutable")

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Expr):
            return NotImplemented
        return self._hash == other._hash and self.functor == other.functor and self.args == other.args

    def __repr__(self) -> str:
        return f"Expr({self.sexpr()})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Expr, (self.functor, self.args))

    def sexpr(self) -> str:
        """The S-expression form, e.g. ``(greater (pressure beaker) (pressure vial))``."""
        return to_sexpr(self)

    def to_form(self) -> list[Any]:
        """Nested-list form: ``["greater", ["pressure", "beaker"], ...]``."""
        return [self.functor, *(a.to_form() if isinstance(a, Expr) else a for a in self.args)]

    def walk(self) -> Iterable[Expr]:
        """This expression and every sub-expression, children before parents."""
        for a in self.args:
            if isinstance(a, Expr):
                yield from a.walk()
        yield self

    def entities(self) -> list[str]:
        out: list[str] = []
        for a in self.args:
            if isinstance(a, Expr):
                out.extend(e for e in a.entities() if e not in out)
            elif a not in out:
                out.append(a)
        return out


def to_sexpr(item: Any) -> str:
    """Write an item as an S-expression in the reference's form.

    Entities print as themselves; expressions as ``(functor args...)``; a skolem entity (the tuple
    ``(":skolem", name)`` produced by candidate inference) as ``(:skolem name)``; nested lists as
    parenthesised forms.
    """
    if isinstance(item, Expr):
        return "(" + " ".join([item.functor, *(to_sexpr(a) for a in item.args)]) + ")"
    if isinstance(item, (list, tuple)):
        return "(" + " ".join(to_sexpr(a) for a in item) + ")"
    return str(item)


class Description:
    """Entities plus expressions over them, against a vocabulary.

    Build with :meth:`build` (validating) rather than the constructor.

    Attributes:
        name: the description's name.
        entities: entity names, in declaration order.
        expressions: every expression (sub-expressions included), children before parents, each
            once, in first-definition order.
        names: user names of expressions (``:name`` in ``.dgr`` files).
        vocabulary: the vocabulary the functors are declared in.
        source: file the description came from, if any.
        metadata: free-form extra data (e.g. the sign and observed/inferred flags of causal edges
            compiled from a Signature), keyed by the expression's S-expression.
    """

    __slots__ = ("name", "entities", "expressions", "names", "vocabulary", "source",
                 "documentation", "metadata", "_top_level", "_index", "_roots", "__weakref__")

    def __init__(self, name: str, entities: Sequence[str], expressions: Sequence[Expr],
                 names: Mapping[str, Expr], vocabulary: Vocabulary, *, source: str | None = None,
                 documentation: str = "", metadata: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.entities = tuple(entities)
        self.expressions = tuple(expressions)
        self.names = dict(names)
        self.vocabulary = vocabulary
        self.source = source
        self.documentation = documentation
        self.metadata = dict(metadata or {})
        children: set[Expr] = set()
        for e in self.expressions:
            for a in e.args:
                if isinstance(a, Expr):
                    children.add(a)
        self._top_level = tuple(e for e in self.expressions if e not in children)
        self._index = {e: i for i, e in enumerate(self.expressions)}
        self._roots: dict[Item, tuple[Expr, ...]] | None = None

    def __repr__(self) -> str:
        return (f"Description({self.name!r}, {len(self.entities)} entities, "
                f"{len(self.expressions)} expressions)")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Description):
            return NotImplemented
        return (self.name == other.name and self.entities == other.entities
                and self.expressions == other.expressions)

    def __hash__(self) -> int:
        return hash((self.name, self.entities, self.expressions))

    @property
    def top_level(self) -> tuple[Expr, ...]:
        """Expressions that are not an argument of any other expression."""
        return self._top_level

    def roots(self) -> dict[Item, tuple[Expr, ...]]:
        """For every entity and expression, the top-level expressions that contain it
        (computed once, then cached: descriptions are immutable)."""
        if self._roots is None:
            acc: dict[Item, list[Expr]] = {}
            for top in self._top_level:
                seen: set[Item] = set()
                stack: list[Item] = [top]
                while stack:
                    x = stack.pop()
                    if x in seen:
                        continue
                    seen.add(x)
                    acc.setdefault(x, []).append(top)
                    if isinstance(x, Expr):
                        stack.extend(x.args)
            self._roots = {k: tuple(v) for k, v in acc.items()}
        return self._roots

    def kind_of(self, functor: str) -> PredicateKind:
        p = self.vocabulary.get(functor)
        return p.kind if p is not None else PredicateKind.RELATION

    def renamed(self, mapping: Mapping[str, str], name: str | None = None) -> Description:
        """A copy with entities renamed by ``mapping`` (unlisted entities keep their names)."""

        cache: dict[Expr, Expr] = {}

        def ren(x: Item) -> Item:
            if isinstance(x, Expr):
                if x not in cache:
                    cache[x] = Expr(x.functor, (ren(a) for a in x.args))
                return cache[x]
            return mapping.get(x, x)

        exprs = [ren(e) for e in self.expressions]
        return Description(name or self.name, [mapping.get(e, e) for e in self.entities],
                           exprs,  # type: ignore[arg-type]
                           {k: ren(v) for k, v in self.names.items()},  # type: ignore[misc]
                           self.vocabulary, source=self.source)

    def to_data(self) -> dict[str, Any]:
        """JSON-able form: entities, and expressions as nested lists with names."""
        names_by_expr = {v: k for k, v in self.names.items()}
        return {
            "name": self.name,
            "entities": list(self.entities),
            "expressions": [
                {"form": e.to_form(), **({"name": names_by_expr[e]} if e in names_by_expr else {})}
                for e in self.top_level
            ] + [
                {"form": e.to_form(), "name": n}
                for e, n in names_by_expr.items() if e not in set(self.top_level)
            ],
        }

    @classmethod
    def from_data(cls, data: Any, vocabulary: Vocabulary, *, strict: bool = True,
                  source: str | None = None) -> Description:
        """The inverse of :meth:`to_data` (validating, like :meth:`build`)."""
        if not isinstance(data, Mapping):
            raise DescriptionError("expected a mapping with name, entities, expressions",
                                   source=source)
        exprs = data.get("expressions")
        if not isinstance(exprs, list):
            raise DescriptionError("expected a list", source=source, field="expressions")
        for i, e in enumerate(exprs):
            if not isinstance(e, Mapping) or "form" not in e:
                raise DescriptionError("expected {form, name?}", source=source,
                                       field=f"expressions[{i}]")
        ents = data.get("entities")
        if ents is not None and not (isinstance(ents, list)
                                     and all(isinstance(x, str) for x in ents)):
            raise DescriptionError("expected a list of entity names", source=source,
                                   field="entities")
        return cls.build(str(data.get("name", "description")), exprs, vocabulary,
                         entities=ents, strict=strict, source=source)

    # ---------------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        name: str,
        expressions: Iterable[Any],
        vocabulary: Vocabulary,
        *,
        entities: Iterable[str] | None = None,
        strict: bool = True,
        source: str | None = None,
        lines: Sequence[int | None] | None = None,
        documentation: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> Description:
        """Validate and build a description.

        Args:
            name: the description's name.
            expressions: items each either a form (nested lists/tuples of strings) or a pair
                ``(form, expr_name)``; or a mapping ``{"form": ..., "name": ...}``. A string
                argument that is a name of another expression refers to it (forward references
                are allowed; cycles are an error).
            vocabulary: declared functors. In strict mode an undeclared functor is an error;
                otherwise it is accepted as a *proposed* relation (with a warning).
            entities: when given, the declared entity list: a symbol argument must then be an
                entity or an expression name, anything else is a dangling reference. When None,
                any symbol argument that is not a name or a declared functor is an entity.
            lines: optional 1-based line numbers of each item, for error messages.
        """
        items = _build_items(expressions, lines)
        declared = list(entities) if entities is not None else None
        ent_set = set(declared) if declared is not None else set()
        defs = _name_definitions(items, ent_set, source)

        resolved: dict[int, Expr] = {}
        in_progress: list[int] = []
        interned: dict[Expr, Expr] = {}
        order: list[Expr] = []
        found_entities: list[str] = list(declared) if declared is not None else []

        def intern(e: Expr) -> Expr:
            got = interned.get(e)
            if got is None:
                interned[e] = e
                order.append(e)
                return e
            return got

        def resolve_item(idx: int) -> Expr:
            if idx in resolved:
                return resolved[idx]
            form, nm, line = items[idx]
            if idx in in_progress:
                names_ = [str(items[j][1]) for j in in_progress[in_progress.index(idx):]]
                cyc = " -> ".join([*names_, str(nm)])
                raise DescriptionError(f"cyclic name reference: {cyc}", source=source, line=line)
            in_progress.append(idx)
            e = convert(form, line, idx)
            in_progress.pop()
            resolved[idx] = e
            return e

        def convert(form: Any, line: int | None, at: int) -> Expr:
            pred = _predicate_for(form, vocabulary, strict, source, line)
            args: list[Item] = []
            for a in form[1:]:
                if isinstance(a, (list, tuple)):
                    args.append(convert(a, line, at))
                elif isinstance(a, str):
                    if a in defs:
                        args.append(resolve_item(_definition_at(defs[a], at)))
                    else:
                        args.append(_symbol_argument(a, form, declared is not None, ent_set,
                                                     found_entities, vocabulary, source, line))
                elif isinstance(a, (int, float)) and not isinstance(a, bool):
                    s = repr(a)
                    if s not in ent_set:
                        ent_set.add(s)
                        found_entities.append(s)
                    args.append(s)
                else:
                    raise DescriptionError(f"bad argument {a!r} in {to_sexpr(form)}",
                                           source=source, line=line)
            return intern(Expr(pred.name, args))

        names: dict[str, Expr] = {}
        for idx, (_form, nm, _line) in enumerate(items):
            e = resolve_item(idx)
            if nm is not None:
                names[nm] = e
        return cls(name, found_entities, order, names, vocabulary, source=source,
                   documentation=documentation, metadata=metadata)


def _build_items(expressions: Iterable[Any],
                 lines: Sequence[int | None] | None) -> list[tuple[Any, str | None, int | None]]:
    """Each item of :meth:`Description.build`'s ``expressions`` as ``(form, name, line)``."""
    items: list[tuple[Any, str | None, int | None]] = []
    for i, raw in enumerate(expressions):
        line = lines[i] if lines and i < len(lines) else None
        if isinstance(raw, Mapping):
            form, nm = raw.get("form"), raw.get("name")
        elif (isinstance(raw, tuple) and len(raw) == 2 and isinstance(raw[1], (str, type(None)))
              and isinstance(raw[0], (list, tuple))):
            form, nm = raw
        else:
            form, nm = raw, None
        items.append((form, nm, line))
    return items


def _name_definitions(items: list[tuple[Any, str | None, int | None]], ent_set: set[str],
                      source: str | None) -> dict[str, list[int]]:
    """Expression name to the indices of the items defining it (a name may not be an entity)."""
    defs: dict[str, list[int]] = {}
    for idx, (_form, nm, line) in enumerate(items):
        if nm is not None:
            if nm in ent_set:
                raise DescriptionError(f"expression name {nm!r} is also an entity",
                                       source=source, line=line)
            defs.setdefault(nm, []).append(idx)
    return defs


def _definition_at(idxs: list[int], at: int) -> int:
    """The definition (of those at ``idxs``) a name means at item ``at``: the latest before it,
    else the first after it (a forward reference)."""
    before = [j for j in idxs if j < at]
    return before[-1] if before else idxs[0] if idxs[0] != at else idxs[-1]


def _predicate_for(form: Any, vocabulary: Vocabulary, strict: bool, source: str | None,
                   line: int | None) -> Predicate:
    """The predicate of expression ``form`` after checking its shape, functor and arity (not
    strict: an undeclared functor is proposed to ``vocabulary``)."""
    if not isinstance(form, (list, tuple)) or not form:
        raise DescriptionError(
            f"expected an expression (functor arg ...), got {form!r}", source=source,
            line=line)
    functor = form[0]
    if not isinstance(functor, str):
        raise DescriptionError(f"functor must be a symbol, got {functor!r}",
                               source=source, line=line)
    pred = vocabulary.get(functor)
    if pred is None:
        if strict:
            raise VocabularyError(
                f"undeclared functor {functor!r} in {to_sexpr(form)} "
                f"(vocabulary {vocabulary.name!r})", source=source, line=line)
        pred = vocabulary.propose(functor, len(form) - 1)
    functor = pred.name
    nargs = len(form) - 1
    if not pred.accepts_arity(nargs):
        want = (f"at least {max(pred.arity - 1, 1)}" if pred.n_ary else str(pred.arity))
        raise VocabularyError(
            f"wrong arity for {functor!r} in {to_sexpr(form)}: expected {want} "
            f"argument(s), got {nargs}", source=source, line=line)
    return pred


def _symbol_argument(a: str, form: Any, declared: bool, ent_set: set[str],
                     found_entities: list[str], vocabulary: Vocabulary, source: str | None,
                     line: int | None) -> str:
    """A symbol argument that names no expression, as an entity: with ``declared`` entities it
    must be one of them; else it may not be a functor and is added to the entities if new."""
    if declared:
        if a not in ent_set:
            raise DescriptionError(
                f"dangling reference {a!r} in {to_sexpr(form)}: not a declared "
                f"entity or an expression name", source=source, line=line)
        return a
    if vocabulary.get(a) is not None and a not in vocabulary.entities:
        raise DescriptionError(
            f"{a!r} in {to_sexpr(form)} is a functor used as an argument",
            source=source, line=line)
    if a not in ent_set:
        ent_set.add(a)
        found_entities.append(a)
    return a

