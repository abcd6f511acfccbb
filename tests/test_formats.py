"""Readers for the reference formats (.vcb, .dgr), the S-expression reader, and Description.build:
good input loads, bad input gives an AnalogistError naming the file and line."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from analogist.description import Description, Expr
from analogist.errors import (
    AnalogistError,
    DescriptionError,
    InputTooLargeError,
    ParseError,
    VocabularyError,
)
from analogist.sexpr import parse
from analogist.sme.formats import read_dgr, read_dgr_text, read_vcb, read_vcb_text
from analogist.vocabulary import PredicateKind

DATA = Path(str(files("analogist") / "data" / "sme4"))
VOCAB = read_vcb(DATA / "sys2lang.vcb")


def test_vcb_loads_with_kinds_and_flags() -> None:
    assert len(VOCAB) > 800
    and_ = VOCAB.get("and")
    assert and_ is not None and and_.kind is PredicateKind.LOGICAL
    assert and_.n_ary and and_.commutative
    assert VOCAB.get("pressure").kind is PredicateKind.FUNCTION
    assert VOCAB.get("pressure").expression_type == "number"
    assert VOCAB.get("cause").arg_names == ("antecedent", "consequent")
    assert VOCAB.get("isa").kind is PredicateKind.TAXONOMY
    assert "gas-state" in VOCAB.entities


def test_dgr_named_form() -> None:
    d = read_dgr(DATA / "swater.dgr", VOCAB)
    assert d.name == "swater-flow"
    assert d.entities == ("water", "beaker", "vial", "pipe")
    cause = d.names["cause-flow"]
    assert cause.sexpr() == "(cause (greater (pressure beaker) (pressure vial)) " \
                            "(flow beaker vial water pipe))"
    # the named sub-expression is the same object as the argument
    assert cause.args[0] is d.names[">pressure"]
    assert {e.sexpr() for e in d.top_level} == {
        "(cause (greater (pressure beaker) (pressure vial)) (flow beaker vial water pipe))",
        "(greater (diameter beaker) (diameter vial))", "(clear beaker)", "(flat-top water)",
        "(liquid water)"}


def test_dgr_keyword_form_without_entity_list() -> None:
    text = '''(in-package :sme-data)
    (sme::defdescription "t5base" :documentation "n-ary commutatives" :notes ""
       :expressions ((active bill) (authority henry) (and henry bill sally)))'''
    d = read_dgr_text(text, VOCAB, source="t.dgr")[0]
    assert d.name == "t5base" and d.documentation == "n-ary commutatives"
    assert set(d.entities) == {"bill", "henry", "sally"}
    assert Expr("and", ["henry", "bill", "sally"]) in d.expressions


def test_dgr_bare_expression_form_and_shadowed_names() -> None:
    text = """(sme:defdescription d entities (a b c)
      expressions (((liquid a) :name x) ((cause x x) :name y) ((solid b) :name x)
                   ((cause x y) :name z)))"""
    d = read_dgr_text(text, VOCAB, source="t.dgr")[0]
    # a later definition shadows an earlier one from that point on, as in the reference
    assert d.names["z"].sexpr() == "(cause (solid b) (cause (liquid a) (liquid a)))"
    bare = read_dgr_text("(sme::defdescription e (liquid p) (cause (liquid p) (solid q)))",
                         VOCAB, source="b.dgr")[0]
    assert len(bare.top_level) == 1


def test_identical_forms_are_one_expression() -> None:
    d = Description.build("d", [["cause", ["liquid", "p"], ["solid", "p"]], ["liquid", "p"]],
                          VOCAB)
    assert d.entities == ("p",)
    assert len(d.expressions) == 3
    assert len(d.top_level) == 1


@pytest.mark.parametrize(
    ("text", "exc", "line", "needle"),
    [
        ("(sme:defdescription d entities (a)\n expressions (((liquid a) :name x)", ParseError, 2,
         "inside the form opened on line 1"),
        ("(sme:defdescription d entities (a)\n expressions (((liquid a) :name x))))", ParseError,
         2, "unexpected ')'"),
        ("(sme:defdescription d entities (a)\n expressions (((frobnicate a) :name x)))",
         VocabularyError, 2, "undeclared functor 'frobnicate'"),
        ("(sme:defdescription d entities (a b)\n expressions (((liquid a b) :name x)))",
         VocabularyError, 2, "wrong arity"),
        ("(sme:defdescription d entities (a)\n\n expressions (((liquid q) :name x)))",
         DescriptionError, 3, "dangling reference 'q'"),
        ("(sme:defdescription d entities (a)\n expressions (((cause y a) :name x)\n"
         " ((cause x a) :name y)))", DescriptionError, 2, "cyclic name reference"),
        ("(sme:defdescriptoin d entities (a) expressions ())", ParseError, 1, "unknown form"),
        ("(sme:defdescription d entities (a)\n expressions (((liquid a) :name x)) \"oops)",
         ParseError, 2, "unterminated string"),
        ("#| never closed\n(sme:defdescription d)", ParseError, 1, "block comment"),
        ("(in-package :sme-data)", ParseError, 1, "no defdescription"),
        ("(sme:defdescription d entities (a) expressions (((liquid a) :name x) 7))", ParseError,
         1, "expected an expression"),
    ],
)
def test_bad_dgr(text: str, exc: type, line: int, needle: str) -> None:
    with pytest.raises(exc) as ei:
        read_dgr_text(text, VOCAB, source="bad.dgr")
    err = ei.value
    assert isinstance(err, AnalogistError)
    assert err.source == "bad.dgr"
    assert err.line == line
    assert needle in str(err)
    assert str(err).startswith("bad.dgr, line")


@pytest.mark.parametrize(
    ("text", "exc", "line", "needle"),
    [
        ("(sme:defpredicate foo (x) sideways)", VocabularyError, 1, "unknown predicate kind"),
        ("(sme:defpredicate foo (x) relation)\n(sme:defpredicate foo (y) relation)",
         VocabularyError, 2, "declared twice"),
        ("(sme:defpredicate foo (x) relation :n-ary?)", ParseError, 1, "pairs"),
        ("(defthing x)", ParseError, 1, "unknown form"),
        ("(sme:defubiquitous-predicate nothing)", VocabularyError, 1, "undeclared"),
    ],
)
def test_bad_vcb(text: str, exc: type, line: int, needle: str) -> None:
    with pytest.raises(exc) as ei:
        read_vcb_text(text, source="bad.vcb")
    assert ei.value.line == line and ei.value.source == "bad.vcb"
    assert needle in str(ei.value)


def test_ubiquitous_predicates_never_match_locally() -> None:
    from analogist.sme import match

    v = read_vcb_text("(sme:defpredicate eq (a b) relation)\n(sme:defpredicate p (a) attribute)"
                      "\n(sme:defubiquitous-predicate eq)", source="u.vcb")
    assert v.get("eq").ubiquitous
    b = read_dgr_text("(sme::defdescription b (eq x y) (p x))", v, source="b")[0]
    t = read_dgr_text("(sme::defdescription t (eq u w) (p u))", v, source="t")[0]
    res = match(b, t)
    assert all(be.functor != "eq" for m in res.mappings for be, _ in m.expression_pairs)


def test_functor_used_as_entity_is_refused_without_entity_list() -> None:
    with pytest.raises(DescriptionError, match="functor used as an argument"):
        read_dgr_text("(sme::defdescription e (liquid pressure))", VOCAB, source="f.dgr")
    # with an entity list, a name may be both an entity and a functor (sheat.dgr's heat)
    d = read_dgr(DATA / "sheat.dgr", VOCAB)
    assert "heat" in d.entities and VOCAB.get("heat") is not None


def test_file_size_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.dgr"
    big.write_text(";" * 2000 + "\n")
    with pytest.raises(InputTooLargeError) as ei:
        read_dgr(big, VOCAB, max_bytes=1000)
    assert str(big) in str(ei.value)


def test_binary_and_missing_files(tmp_path: Path) -> None:
    b = tmp_path / "bin.dgr"
    b.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ParseError):
        read_dgr(b, VOCAB)
    with pytest.raises(AnalogistError, match="file not found"):
        read_dgr(tmp_path / "missing.dgr", VOCAB)


def test_hostile_nesting_is_refused() -> None:
    with pytest.raises(ParseError, match="nesting deeper"):
        parse("(" * 10_000 + ")" * 10_000, source="deep")


def test_sexpr_reader_basics() -> None:
    forms = parse("; comment\n(a \"S t\" 1 2.5 'q #| x |# B)\n", source="s")
    assert forms == [["a", "S t", 1, 2.5, ["quote", "q"], "b"]]
    assert forms[0].line == 2


def test_description_from_data_rejects_bad_shapes() -> None:
    with pytest.raises(DescriptionError, match="expressions"):
        Description.from_data({"name": "d", "expressions": "nope"}, VOCAB, source="d.json")
    with pytest.raises(DescriptionError) as ei:
        Description.from_data({"expressions": [{"name": "x"}]}, VOCAB, source="d.json")
    assert ei.value.field == "expressions[0]"
    with pytest.raises(VocabularyError):
        Description.from_data({"expressions": [{"form": ["nosuch", "a"]}]}, VOCAB)
