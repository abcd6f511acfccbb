"""What :func:`analogist.sme.match` returns, and steps 7–8 (candidate inferences, alignable
differences), computed lazily: a mapping's inferences and differences are derived from its
correspondences the first time they are read (most callers read only the score and the entity
pairs), and are then kept. The result is the same whether or not they are ever read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analogist.description import Description, Expr, to_sexpr
from analogist.sme.params import SMEParams


@dataclass(frozen=True, slots=True)
class CandidateInference:
    """A base expression carried over to the target through a mapping.

    ``form`` is the nested-tuple form (target entities, ``(":skolem", e)`` for unmapped base
    entities); ``base`` the base root expression it comes from; ``support`` the mapped base items
    (expressions or entities) it rests on.
    """

    form: tuple[Any, ...]
    base: Expr
    support: tuple[Expr | str, ...]

    @property
    def sexpr(self) -> str:
        return to_sexpr(self.form)

    @property
    def skolems(self) -> tuple[str, ...]:
        out: list[str] = []

        def walk(x: Any) -> None:
            if isinstance(x, tuple):
                if len(x) == 2 and x[0] == ":skolem":
                    out.append(str(x[1]))
                else:
                    for y in x:
                        walk(y)

        walk(self.form)
        return tuple(out)


_MISSING = object()


def _as_form(x: Any) -> Any:
    if x.__class__ is Expr:
        return (x.functor, *[_as_form(a) for a in x.args])
    return x


def candidate_inferences(base: Description, entity_pairs: tuple[tuple[str, str], ...],
                         expression_pairs: tuple[tuple[Expr, Expr], ...],
                         functor_pairs: tuple[tuple[str, str], ...],
                         params: SMEParams) -> list[CandidateInference]:
    """Step 7: forward candidate inferences of one mapping, from its correspondences.

    Every base root expression that is not mapped but contains a mapped item (an expression, or
    an entity when ``allow_entity_supported_inferences``) is carried over: mapped parts are
    replaced by their target correspondents, unmapped functors keep their names, unmapped
    entities become skolems ``(:skolem e)``.
    """
    roots_of = base.roots()
    mapped: dict[Any, Any] = dict(entity_pairs)
    mapped.update(expression_pairs)
    fmapped = dict(functor_pairs)
    touched: set[Any] = set()
    supported = (expression_pairs, entity_pairs) if params.allow_entity_supported_inferences \
        else (expression_pairs,)
    for pairs in supported:
        for b, _ in pairs:
            touched.update(roots_of.get(b, ()))
    out: list[CandidateInference] = []
    vocab = base.vocabulary
    for root in base.top_level:
        if root in mapped or root not in touched:
            continue
        p = vocab.get(root.functor)
        if p is not None and p.ubiquitous:
            continue
        support: list[Any] = []

        def carry(x: Any, support: list[Any] = support) -> Any:
            t = mapped.get(x, _MISSING)
            if t is not _MISSING:
                support.append(x)
                return _as_form(t)
            if x.__class__ is not Expr:
                return (":skolem", x)
            return (fmapped.get(x.functor, x.functor), *[carry(a) for a in x.args])

        form = carry(root)
        out.append(CandidateInference(form, root, tuple(dict.fromkeys(support))))
    return out


def alignable_differences(expression_pairs: tuple[tuple[Expr, Expr], ...]
                          ) -> list[tuple[Expr, Expr]]:
    """Step 8: matched expressions whose functors differ (differences on common structure)."""
    return [(b, t) for b, t in expression_pairs if b.functor != t.functor]


_FIELDS = ("score", "mh_count", "entity_pairs", "expression_pairs", "functor_pairs",
           "root_pairs", "inferences", "alignable_differences")


class GlobalMapping:
    """One global mapping: correspondences, score, inferences and differences (immutable).

    Attributes:
        score: the mapping's structural evaluation score.
        mh_count: the number of match hypotheses in it.
        entity_pairs, expression_pairs, functor_pairs: its correspondences, in match-hypothesis
            order.
        root_pairs: the correspondences rooting its kernels.
        inferences: candidate inferences (computed when first read).
        alignable_differences: matched expressions whose functors differ (computed when first
            read).
    """

    __slots__ = ("score", "mh_count", "entity_pairs", "expression_pairs", "functor_pairs",
                 "root_pairs", "_inferences", "_differences", "_base", "_params")

    score: float
    mh_count: int
    entity_pairs: tuple[tuple[str, str], ...]
    expression_pairs: tuple[tuple[Expr, Expr], ...]
    functor_pairs: tuple[tuple[str, str], ...]
    root_pairs: tuple[tuple[Expr | str, Expr | str], ...]

    def __init__(self, score: float, mh_count: int, entity_pairs: tuple[tuple[str, str], ...],
                 expression_pairs: tuple[tuple[Expr, Expr], ...],
                 functor_pairs: tuple[tuple[str, str], ...],
                 root_pairs: tuple[tuple[Expr | str, Expr | str], ...],
                 inferences: tuple[CandidateInference, ...] | None = None,
                 alignable_differences: tuple[tuple[Expr, Expr], ...] | None = None, *,
                 base: Description | None = None, params: SMEParams | None = None) -> None:
        """``inferences`` left out are computed from ``base`` (and ``params``) when read."""
        if inferences is None and base is None:
            raise TypeError("GlobalMapping needs inferences or the base description")
        put = object.__setattr__
        put(self, "score", score)
        put(self, "mh_count", mh_count)
        put(self, "entity_pairs", entity_pairs)
        put(self, "expression_pairs", expression_pairs)
        put(self, "functor_pairs", functor_pairs)
        put(self, "root_pairs", root_pairs)
        put(self, "_inferences", inferences)
        put(self, "_differences", alignable_differences)
        put(self, "_base", base)
        put(self, "_params", params or SMEParams())

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("GlobalMapping is immutable")

    @property
    def inferences(self) -> tuple[CandidateInference, ...]:
        got = self._inferences
        if got is None:
            assert self._base is not None
            got = tuple(candidate_inferences(self._base, self.entity_pairs,
                                             self.expression_pairs, self.functor_pairs,
                                             self._params))
            object.__setattr__(self, "_inferences", got)
        return got

    @property
    def alignable_differences(self) -> tuple[tuple[Expr, Expr], ...]:
        got = self._differences
        if got is None:
            got = tuple(alignable_differences(self.expression_pairs))
            object.__setattr__(self, "_differences", got)
        return got

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not GlobalMapping:
            return NotImplemented
        return self is other or self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "GlobalMapping(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS) + ")"

    def correspondence(self) -> dict[str, str]:
        """Base entity → target entity."""
        return dict(self.entity_pairs)

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "mh_count": self.mh_count,
            "entity_mhs": [[b, t] for b, t in self.entity_pairs],
            "root_mhs": [[to_sexpr(b), to_sexpr(t)] for b, t in self.root_pairs],
            "cis": [ci.sexpr for ci in self.inferences],
            "alignable_differences": [[b.sexpr(), t.sexpr()]
                                      for b, t in self.alignable_differences],
        }


@dataclass(frozen=True, slots=True)
class MatchResult:
    """What :func:`match` returns."""

    base: Description
    target: Description
    params: SMEParams
    mh_count: int
    kernel_count: int
    mappings: tuple[GlobalMapping, ...]

    @property
    def best(self) -> GlobalMapping | None:
        return self.mappings[0] if self.mappings else None

    def to_json(self) -> dict[str, Any]:
        return {
            "mh_count": self.mh_count,
            "kernel_count": self.kernel_count,
            "mappings": [m.to_json() for m in self.mappings],
        }
