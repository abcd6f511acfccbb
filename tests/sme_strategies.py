"""Hypothesis strategies: random relational descriptions over a small vocabulary."""

from __future__ import annotations

from hypothesis import strategies as st

from analogist.description import Description
from analogist.vocabulary import Predicate, PredicateKind, Vocabulary

R, F, A, L = (PredicateKind.RELATION, PredicateKind.FUNCTION, PredicateKind.ATTRIBUTE,
              PredicateKind.LOGICAL)

VOCAB = Vocabulary.from_predicates(
    [
        Predicate(name="r1", kind=R, arity=2),
        Predicate(name="r2", kind=R, arity=2),
        Predicate(name="r3", kind=R, arity=3),
        Predicate(name="a1", kind=A, arity=1),
        Predicate(name="a2", kind=A, arity=1),
        Predicate(name="f1", kind=F, arity=1),
        Predicate(name="f2", kind=F, arity=1),
        Predicate(name="greater", kind=R, arity=2),
        Predicate(name="cause", kind=R, arity=2),
        Predicate(name="prevents", kind=R, arity=2),
        Predicate(name="and", kind=L, arity=2, n_ary=True, commutative=True),
        Predicate(name="near", kind=R, arity=2, symmetric=True),
    ],
    name="test",
)

FIRST = ["r1", "r2", "r3", "a1", "a2", "greater", "near"]
HIGHER = ["cause", "prevents", "and"]


@st.composite
def descriptions(draw: st.DrawFn, *, min_size: int = 1, max_size: int = 14,
                 allow_commutative: bool = True) -> Description:
    n_ent = draw(st.integers(2, 5))
    ents = [f"e{i}" for i in range(n_ent)]
    n = draw(st.integers(min_size, max_size))
    forms: list = []
    for _ in range(n):
        kind = draw(st.sampled_from(FIRST + HIGHER if forms else FIRST))
        if kind in ("r1", "r2", "near"):
            a, b = draw(st.lists(st.sampled_from(ents), min_size=2, max_size=2, unique=True))
            forms.append([kind, a, b])
        elif kind == "r3":
            forms.append([kind, *draw(st.lists(st.sampled_from(ents), min_size=3, max_size=3))])
        elif kind in ("a1", "a2"):
            forms.append([kind, draw(st.sampled_from(ents))])
        elif kind == "greater":
            f = draw(st.sampled_from(["f1", "f2"]))
            a, b = draw(st.lists(st.sampled_from(ents), min_size=2, max_size=2, unique=True))
            forms.append(["greater", [f, a], [f, b]])
        else:
            if kind == "and" and not allow_commutative:
                kind = "cause"
            x = draw(st.sampled_from(forms))
            y = draw(st.sampled_from(forms))
            if x == y:
                continue
            forms.append([kind, x, y])
    return Description.build("d", forms, VOCAB, entities=ents, strict=True)
