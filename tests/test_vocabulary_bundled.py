"""The bundled signature vocabulary (src/analogist/data/signature_vocab.yaml)."""

from __future__ import annotations

from importlib import resources

from analogist.signature import EDGE_TYPES, default_signature_vocabulary
from analogist.vocabulary import PredicateKind

SEED_RELATIONS = ["derives_from", "trusts_as_authoritative", "skips_check", "diverges_from",
                  "masks", "assumes", "observes", "reports_absence", "retries", "amplifies",
                  "starves", "races_with", "gates", "depends_on"]


def test_bundled_file_is_package_data() -> None:
    f = resources.files("analogist") / "data" / "signature_vocab.yaml"
    assert f.is_file()


def test_at_least_30_relations_with_definitions() -> None:
    v = default_signature_vocabulary()
    relations = [p for p in v if p.kind == PredicateKind.RELATION]
    assert len(relations) >= 30
    for p in v:
        assert p.definition.strip(), p.name
        assert "\n" not in p.definition.strip(), p.name
        assert p.status == "declared"


def test_seed_relations_present() -> None:
    v = default_signature_vocabulary()
    for name in SEED_RELATIONS:
        p = v.get(name)
        assert p is not None and p.name == name, name
        assert p.kind == PredicateKind.RELATION
        assert p.arity == 2


def test_edge_types_are_higher_order_relations() -> None:
    v = default_signature_vocabulary()
    for name in EDGE_TYPES:
        p = v.get(name)
        assert p is not None and p.name == name
        assert p.kind == PredicateKind.RELATION and p.arity == 2


def test_state_predicates() -> None:
    v = default_signature_vocabulary()
    for name in ["false_claim", "failure", "stale", "overload"]:
        p = v.get(name)
        assert p is not None and p.arity == 1, name
        assert p.kind in (PredicateKind.ATTRIBUTE, PredicateKind.RELATION)


def test_synonyms_are_unambiguous() -> None:
    v = default_signature_vocabulary()
    names = {p.name for p in v}
    seen: dict[str, str] = {}
    for p in v:
        for s in p.synonyms:
            assert s not in names, f"synonym {s!r} of {p.name!r} is also a predicate name"
            assert s not in seen, f"synonym {s!r} of {p.name!r} also belongs to {seen[s]!r}"
            seen[s] = p.name
            assert v.get(s) is p
    assert len(seen) > 10


def test_fresh_copy_each_call() -> None:
    a = default_signature_vocabulary()
    a.propose("brand_new", 2, warn=False)
    b = default_signature_vocabulary()
    assert b.get("brand_new") is None
    for p in a:
        if p.arg_names:
            assert len(p.arg_names) == p.arity, p.name
