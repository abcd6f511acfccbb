"""Property tests of the structure-mapping engine's invariants."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from analogist.description import Description, Expr
from analogist.sme import match
from tests.sme_strategies import VOCAB, descriptions

SETTINGS = settings(max_examples=150, deadline=None)


def _check_one_to_one(pairs) -> None:
    bs = [b for b, _ in pairs]
    ts = [t for _, t in pairs]
    assert len(set(bs)) == len(bs), f"base item mapped twice: {pairs}"
    assert len(set(ts)) == len(ts), f"target item mapped twice: {pairs}"


@SETTINGS
@given(descriptions(), descriptions())
def test_mappings_are_one_to_one_and_structurally_consistent(b: Description,
                                                             t: Description) -> None:
    res = match(b, t)
    for m in res.mappings:
        _check_one_to_one(m.entity_pairs)
        _check_one_to_one(m.expression_pairs)
        _check_one_to_one(m.functor_pairs)
        corr: dict = dict(m.entity_pairs)
        corr.update(dict(m.expression_pairs))
        for be, te in m.expression_pairs:
            # parallel connectivity: matched expressions have matched arguments
            assert len(be.args) == len(te.args) or VOCAB.get(be.functor).n_ary
            pred = VOCAB.get(be.functor)
            if pred.commutative:
                for a in be.args:
                    if a in corr:
                        assert corr[a] in te.args
                continue
            if pred.symmetric:
                assert [corr.get(a) for a in be.args] in (list(te.args), list(te.args)[::-1])
                continue
            for ba, ta in zip(be.args, te.args, strict=True):
                assert corr.get(ba) == ta, f"{be.sexpr()} ~ {te.sexpr()} but {ba} !~ {ta}"
        assert m.score >= 0


@SETTINGS
@given(descriptions(), descriptions())
def test_results_are_deterministic(b: Description, t: Description) -> None:
    first = json.dumps(match(b, t).to_json())
    # rebuild both descriptions from scratch: no dependence on object identity or hash seeds
    b2 = Description.build("d", [e.to_form() for e in b.expressions], VOCAB,
                           entities=list(b.entities))
    t2 = Description.build("d", [e.to_form() for e in t.expressions], VOCAB,
                           entities=list(t.entities))
    assert json.dumps(match(b2, t2).to_json()) == first
    assert json.dumps(match(b, t).to_json()) == first


def _canon(e):
    """An expression with the arguments of symmetric/commutative functors in sorted order."""
    if not isinstance(e, Expr):
        return e
    args = [_canon(a) for a in e.args]
    p = VOCAB.get(e.functor)
    if p.symmetric or p.commutative:
        args.sort(key=repr)
    return (e.functor, *args)


@SETTINGS
@given(descriptions(allow_commutative=False))
def test_self_match_maps_everything_without_inferences(d: Description) -> None:
    """Matching a description with itself maps every expression and infers nothing.

    The best mapping is an automorphism of the description: the identity, or, when the
    description has symmetries (e.g. ``(a1 e0) (a1 e1)``), an equally good relabelling. Either
    way, renaming the description by it gives the description back.
    """
    res = match(d, d)
    best = res.best
    assert best is not None
    assert best.inferences == ()
    mapped = {b for b, _ in best.expression_pairs}
    assert set(d.top_level) <= mapped
    ren = dict(best.entity_pairs)
    assert {_canon(e) for e in d.renamed(ren).expressions} == {_canon(e) for e in d.expressions}
    self_score = best.score
    # the identity scores as well as the best mapping found
    identity = [m for m in res.mappings if all(b == t for b, t in m.entity_pairs)]
    if identity:
        assert abs(identity[0].score - self_score) < 1e-9


def test_self_match_of_classic_examples_is_identity() -> None:
    from analogist.examples import load_example

    for name in ("heat-water", "solar-atom"):
        base, target = load_example(name)
        for d in (base, target):
            best = match(d, d).best
            assert best is not None
            assert all(b == t for b, t in best.entity_pairs)
            assert all(b == t for b, t in best.expression_pairs)
            assert best.inferences == ()
            assert set(d.expressions) <= {b for b, _ in best.expression_pairs}


@SETTINGS
@given(descriptions(), descriptions(), st.randoms(use_true_random=False))
def test_renaming_entities_leaves_scores_unchanged(b: Description, t: Description,
                                                   rnd) -> None:
    names = list(t.entities)
    new = [f"x{i}" for i in range(len(names))]
    rnd.shuffle(new)
    ren = dict(zip(names, new, strict=True))
    t2 = t.renamed(ren)
    r1 = match(b, t)
    r2 = match(b, t2)
    assert [round(m.score, 9) for m in r1.mappings] == [round(m.score, 9) for m in r2.mappings]
    assert r1.mh_count == r2.mh_count and r1.kernel_count == r2.kernel_count
    for m1, m2 in zip(r1.mappings, r2.mappings, strict=True):
        assert {(b_, ren[t_]) for b_, t_ in m1.entity_pairs} == set(m2.entity_pairs)


def test_expr_identity_helpers() -> None:
    e = Expr("r1", ["a", "b"])
    assert e == Expr("r1", ["a", "b"]) and hash(e) == hash(Expr("r1", ["a", "b"]))
    assert e.sexpr() == "(r1 a b)"


@SETTINGS
@given(descriptions())
def test_description_data_round_trip(d: Description) -> None:
    again = Description.from_data(json.loads(json.dumps(d.to_data())), VOCAB)
    assert set(again.expressions) == set(d.expressions)
    assert set(again.top_level) == set(d.top_level)
    assert set(again.entities) == set(d.entities)
    assert again.to_data() == d.to_data()


@SETTINGS
@given(descriptions(allow_commutative=False))
def test_identity_score_equals_the_self_match_score(d: Description) -> None:
    from analogist.sme import identity_score

    best = match(d, d).best
    assert best is not None
    assert abs(identity_score(d) - best.score) <= 1e-9 * max(1.0, best.score)


def test_identity_score_of_the_classic_examples() -> None:
    from analogist.examples import load_example
    from analogist.sme import identity_score

    for name in ("heat-water", "solar-atom"):
        for d in load_example(name):
            assert abs(identity_score(d) - match(d, d).best.score) < 1e-9
