"""Minimal ascension: different predicates with a common superordinate align as arguments of
matched expressions (SMEParams.minimal_ascension; the vocabulary's ``parent``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analogist.description import Description
from analogist.errors import AnalogistError
from analogist.judge import JudgeParams, judge
from analogist.signature import Signature, default_signature_vocabulary
from analogist.sme import SMEParams, match
from analogist.vocabulary import Predicate, PredicateKind, Vocabulary
from tests.sme_strategies import VOCAB, descriptions

R, A = PredicateKind.RELATION, PredicateKind.ATTRIBUTE
ON = SMEParams(minimal_ascension=True)
LOOSE = SMEParams(minimal_ascension=True, enforce_1to1_minimal_ascension=False)
OFF = SMEParams()
SETTINGS = settings(max_examples=60, deadline=None)

# the strategies' vocabulary with superordinates: r1, r2 kinds of "rel"; a1, a2 kinds of "att"
ASC_VOCAB = Vocabulary.from_predicates(
    [*(p.model_copy(update={"parent": {"r1": "rel", "r2": "rel", "a1": "att",
                                       "a2": "att"}.get(p.name)}) for p in VOCAB),
     Predicate(name="rel", kind=R, arity=2), Predicate(name="att", kind=A, arity=1)],
    name="test-asc")


def _in(d: Description, vocab: Vocabulary) -> Description:
    return Description.build(d.name, [e.to_form() for e in d.expressions], vocab,
                             entities=list(d.entities), strict=True)


def _chain(end: str, vocab: Vocabulary) -> Description:
    return Description.build("d", [["cause", ["r1", "e0", "e1"], [end, "e2"]]], vocab,
                             entities=["e0", "e1", "e2"], strict=True)


def test_off_in_the_reference_parameters_on_for_the_judge() -> None:
    assert SMEParams().minimal_ascension is False
    assert JudgeParams().sme.minimal_ascension is True
    assert JudgeParams().sme.enforce_1to1_minimal_ascension is False


@SETTINGS
@given(descriptions(), descriptions(), st.sampled_from([ON, LOOSE]))
def test_without_superordinates_ascension_changes_nothing(b: Description, t: Description,
                                                          p: SMEParams) -> None:
    assert json.dumps(match(b, t, p).to_json()) == json.dumps(match(b, t, OFF).to_json())


@SETTINGS
@given(descriptions(), descriptions(), st.sampled_from([ON, LOOSE]))
def test_ascended_pairs_share_a_superordinate_and_hang_under_a_matched_parent(
        b0: Description, t0: Description, p: SMEParams) -> None:
    b, t = _in(b0, ASC_VOCAB), _in(t0, ASC_VOCAB)
    for m in match(b, t, p).mappings:
        assert len(set(dict(m.entity_pairs).values())) == len(m.entity_pairs)
        pairs = dict(m.expression_pairs)
        assert len(set(pairs.values())) == len(pairs)           # one-to-one
        for be, te in m.expression_pairs:
            if be.functor == te.functor or ASC_VOCAB.get(be.functor).kind is PredicateKind.FUNCTION:
                continue
            assert set(ASC_VOCAB.ancestors(be.functor)) & set(ASC_VOCAB.ancestors(te.functor))
            # only arguments ascend: some matched expression has be as an argument
            assert any(be in pb.args and te in pt.args for pb, pt in m.expression_pairs), \
                f"{be.sexpr()} ~ {te.sexpr()} matched at top level"


@pytest.mark.parametrize("p", [ON, LOOSE])
def test_a_different_end_state_aligns_below_a_matched_cause_for_less_than_the_same_one(
        p: SMEParams) -> None:
    same = match(_chain("a1", ASC_VOCAB), _chain("a1", ASC_VOCAB), p).best.score
    off = match(_chain("a1", ASC_VOCAB), _chain("a2", ASC_VOCAB), OFF).best.score
    on = match(_chain("a1", ASC_VOCAB), _chain("a2", ASC_VOCAB), p)
    assert off < on.best.score < same
    assert {(b.sexpr(), t.sexpr()) for b, t in on.best.expression_pairs} >= {
        ("(a1 e2)", "(a2 e2)")}
    # a functor correspondence a1 ~ a2 exactly when it is enforced
    assert (("a1", "a2") in set(on.best.functor_pairs)) is p.enforce_1to1_minimal_ascension


def test_unenforced_an_ascended_end_does_not_block_the_same_state_elsewhere() -> None:
    # base: r1 -> a1(e2) and r2 -> a1(e3); target: r1 -> a2(e2) and r2 -> a1(e3)
    def two(first: str) -> Description:
        return Description.build("d", [["cause", ["r1", "e0", "e1"], [first, "e2"]],
                                       ["cause", ["r2", "e0", "e1"], ["a1", "e3"]]],
                                 ASC_VOCAB, entities=["e0", "e1", "e2", "e3"], strict=True)

    loose = match(two("a1"), two("a2"), LOOSE).best
    strict = match(two("a1"), two("a2"), ON).best
    pairs = {(b.sexpr(), t.sexpr()) for b, t in loose.expression_pairs}
    assert {("(a1 e2)", "(a2 e2)"), ("(a1 e3)", "(a1 e3)")} <= pairs
    assert loose.score > strict.score


def test_no_ascension_without_a_common_superordinate_or_at_top_level() -> None:
    # a1 is a kind of att, r1 of rel: no common superordinate, so the cause stays incomplete
    alone = Description.build("d", [["a1", "e0"]], ASC_VOCAB, entities=["e0"], strict=True)
    other = Description.build("d", [["a2", "e0"]], ASC_VOCAB, entities=["e0"], strict=True)
    assert match(alone, other, ON).best is None          # two different states, nothing above
    plain = Vocabulary.from_predicates(list(VOCAB), name="plain")
    assert match(_chain("a1", plain), _chain("a2", plain), ON).best.score == \
        match(_chain("a1", plain), _chain("a2", plain), OFF).best.score


def test_the_judge_maps_harmed_onto_failure_and_shows_the_difference() -> None:
    def sig(eid: str, end: str) -> Signature:
        return Signature.model_validate({
            "episode_id": eid, "kind": "event", "roles": {"R1": "user", "R2": "pool",
                                                           "R3": "other user"},
            "relations": [["consumes", "R1", "R2"]],
            "causal_chain": [
                {"cause": "consumes(R1,R2)", "edge": "causes", "effect": "exhausted(R2)"},
                {"cause": "exhausted(R2)", "edge": "causes", "effect": f"{end}(R3)"}]})

    on = judge(sig("a", "harmed"), sig("b", "failure"))
    off = judge(sig("a", "harmed"), sig("b", "failure"), params=JudgeParams(sme=OFF))
    assert on.role_map.get("R3") == "R3" and "R3" not in off.role_map
    assert ("(harmed R3)", "(failure R3)") in on.differences
    assert on.normalized_score > off.normalized_score
    assert not on.contradictions


def test_the_bundled_vocabulary_has_adverse_states_and_the_encoder_never_writes_one() -> None:
    from analogist.encode.deterministic import DeterministicEncoder

    v = default_signature_vocabulary()
    for name in ("harmed", "failure", "delayed", "exhausted", "outage", "degraded"):
        assert v.ancestors(name) == (name, "adverse")
    assert v.ancestors("increased") == ("increased",)          # opposites never ascend
    assert v.ancestors("decreased") == ("decreased",)
    enc = DeterministicEncoder(embedder=None)
    preds, _ = enc._definitions(1)
    assert "adverse" not in {p.name for p in preds} and "harmed" in {p.name for p in preds}


@pytest.mark.parametrize(("extra", "says"), [
    ({"name": "x", "kind": "attribute", "arity": 1, "parent": "nowhere"},
     "x's parent 'nowhere' is not a declared predicate"),
    ({"name": "x", "kind": "relation", "arity": 2, "parent": "top"},
     "a parent has the same kind and arity"),
    ({"name": "x", "kind": "attribute", "arity": 1, "parent": "x"}, "run in a circle"),
])
def test_a_bad_parent_is_refused_naming_its_field(extra: dict, says: str) -> None:
    data = {"name": "v", "predicates": [{"name": "top", "kind": "attribute", "arity": 1},
                                        extra]}
    with pytest.raises(AnalogistError) as e:
        Vocabulary.from_data(data, source="v.yaml")
    assert says in str(e.value) and "predicates[1].parent" in str(e.value)


@given(st.lists(st.sampled_from("abcd"), min_size=1, max_size=4, unique=True))
def test_a_chain_of_parents_is_read_nearest_first(names: list[str]) -> None:
    preds = [{"name": n, "kind": "attribute", "arity": 1,
              **({"parent": names[i + 1]} if i + 1 < len(names) else {})}
             for i, n in enumerate(names)]
    v = Vocabulary.from_data({"predicates": preds})
    assert v.ancestors(names[0]) == tuple(names)
