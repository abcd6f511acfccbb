"""The judge keeps each signature's atom ↔ expression lookups per pair of objects: a mapping
judged again, or judged with fresh copies of the same signatures, gets the same report."""

from __future__ import annotations

import itertools

from analogist import judge as judge_mod
from analogist.casebook import load_casebook
from analogist.judge import judge_mapping
from analogist.signature import compile_signature, validate_signature
from analogist.sme import match


def _pairs() -> list[tuple]:
    eps = [e.signature for e in load_casebook() if not e.is_decoy][:8]
    return list(itertools.permutations(eps, 2))[:20]


def test_a_kept_side_judges_as_a_fresh_one() -> None:
    for source, target in _pairs():
        sd, td = compile_signature(source), compile_signature(target)
        res = match(sd, td)
        first = judge_mapping(source, target, sd, td, res)
        again = judge_mapping(source, target, sd, td, res)          # both sides kept
        s2 = validate_signature(source.to_data())
        t2 = validate_signature(target.to_data())
        sd2, td2 = compile_signature(s2), compile_signature(t2)
        fresh = judge_mapping(s2, t2, sd2, td2, match(sd2, td2))     # new objects
        assert first == again == fresh


def test_sides_are_kept_per_object_and_bounded(monkeypatch) -> None:
    monkeypatch.setattr(judge_mod, "SIDES", 3)
    judge_mod._sides.clear()
    sigs = [e.signature for e in load_casebook() if not e.is_decoy][:5]
    descs = [compile_signature(s) for s in sigs]
    a = judge_mod._side(sigs[0], descs[0])
    assert judge_mod._side(sigs[0], descs[0]) is a
    # the same content as other objects: a side of its own
    copy = validate_signature(sigs[0].to_data())
    assert judge_mod._side(copy, compile_signature(copy)) is not a
    for s, d in zip(sigs[1:], descs[1:], strict=True):
        judge_mod._side(s, d)
    assert len(judge_mod._sides) == 3
    assert judge_mod._side(sigs[0], descs[0]) is not a          # dropped, built again
    judge_mod._sides.clear()
