"""Tests for the bundled casebook (analogist.casebook and data/casebook/)."""

from __future__ import annotations

import itertools
import re
import shutil
import warnings
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest
import yaml

import analogist.casebook as casebook_mod
from analogist.casebook import (
    CaseEntry,
    casebook_index,
    casebook_vocabulary,
    load_casebook,
    mechanisms,
)
from analogist.errors import AnalogistError
from analogist.signature import (
    ProposedTermWarning,
    Signature,
    compile_signature,
    default_signature_vocabulary,
)

ENTRIES = load_casebook()
BY_ID = {e.id: e for e in ENTRIES}
REAL = [e for e in ENTRIES if e.decoy_of is None]
DECOYS = [e for e in ENTRIES if e.decoy_of is not None]


def features(sig: Signature) -> set[str]:
    """Structural features: relation predicates and typed edge patterns (cause -edge-> effect)."""
    out = {f"rel:{a.predicate}" for a in sig.relations}
    out |= {f"edge:{e.cause.predicate}-{e.edge}->{e.effect.predicate}" for e in sig.causal_chain}
    return out


def predicate_multiset(sig: Signature) -> Counter[str]:
    """Relation predicates plus edge types, with multiplicity."""
    return Counter([a.predicate for a in sig.relations] + [e.edge for e in sig.causal_chain])


# -- loading and vocabulary ------------------------------------------------------------------
def test_every_entry_is_a_case_entry_with_a_signature() -> None:
    assert ENTRIES
    for e in ENTRIES:
        assert isinstance(e, CaseEntry)
        assert isinstance(e.signature, Signature)
        with pytest.raises(AttributeError):
            e.id = "x"  # type: ignore[misc]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_entry_compiles_strictly_against_casebook_vocabulary(entry: CaseEntry) -> None:
    vocab = casebook_vocabulary()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProposedTermWarning)
        desc = compile_signature(entry.signature, vocab, strict=True)
    assert desc.vocabulary.proposed() == []
    assert desc.name == entry.id


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_entry_has_levels_source_and_surface(entry: CaseEntry) -> None:
    sig = entry.signature
    for level in ("L0", "L1", "L2", "L3"):
        text = getattr(sig.levels, level)
        assert text and text.strip(), f"{entry.id}: {level} missing"
    assert entry.source.strip() and "\n" not in entry.source
    assert entry.note.strip()
    assert sig.provenance.writer
    assert sig.surface.domain == entry.domain
    assert len(sig.surface.entities) >= 3
    assert sig.violated_invariant and sig.symptom and sig.fix_operator
    assert all(desc.strip() for desc in sig.roles.values())
    assert sig.relations and len(sig.causal_chain) >= 2
    # L2 is written with the episode's own role tags.
    tags_in_l2 = {t for t in re.findall(r"\b[A-Z][A-Z0-9_]+\b", sig.levels.L2 or "")
                  if t in sig.roles}
    assert len(tags_in_l2) >= 2, f"{entry.id}: L2 names too few role tags"


def test_ids_unique_and_equal_to_episode_ids() -> None:
    ids = [e.id for e in ENTRIES]
    assert len(ids) == len(set(ids))
    for e in ENTRIES:
        assert e.signature.episode_id == e.id
    episode_ids = [e.signature.episode_id for e in ENTRIES]
    assert len(episode_ids) == len(set(episode_ids))


def test_casebook_vocabulary_adds_defined_relations_only() -> None:
    base = default_signature_vocabulary()
    merged = casebook_vocabulary()
    added = [p for p in merged if base.get(p.name) is None]
    # the casebook's relations have been adopted into the bundled vocabulary
    for name in ("compensates_for", "preempts", "has_priority_over", "biased"):
        assert base.get(name) is not None
    for p in added:
        assert p.definition.strip() and p.status == "declared"
    for p in base:
        assert merged.get(p.name) is not None
    # a fresh copy each call
    merged.predicates.clear()
    assert len(casebook_vocabulary()) == len(base) + len(added)


def test_casebook_uses_every_added_relation() -> None:
    base = default_signature_vocabulary()
    added = {p.name for p in casebook_vocabulary() if base.get(p.name) is None}
    used = set()
    for e in ENTRIES:
        for _field, atom in e.signature.atoms():
            used.add(atom.predicate)
    assert added <= used


# -- coverage ----------------------------------------------------------------------------------
def test_counts() -> None:
    assert len(REAL) >= 60
    assert len(mechanisms()) >= 15
    assert len(DECOYS) >= 15


def test_each_mechanism_in_three_domains() -> None:
    index_mechs = casebook_index()["mechanisms"]
    groups = mechanisms()
    assert set(groups) == set(index_mechs)
    for mech, entries in groups.items():
        domains = {e.domain for e in entries}
        assert len(domains) >= 3, f"{mech}: only {sorted(domains)}"
        assert all(e.decoy_of is None for e in entries)


def test_every_mechanism_has_a_decoy() -> None:
    decoyed = {BY_ID[d.decoy_of].mechanism for d in DECOYS}
    assert decoyed == set(mechanisms())


def test_decoys_copy_surface_of_an_entry_with_another_mechanism() -> None:
    for d in DECOYS:
        assert d.decoy_of in BY_ID, d.id
        target = BY_ID[d.decoy_of]
        assert target.decoy_of is None
        assert d.domain == target.domain
        assert d.mechanism != target.mechanism
        assert d.mechanism not in mechanisms(), f"{d.id}: decoy labelled as a casebook mechanism"
        ents, tents = set(d.signature.surface.entities), set(target.signature.surface.entities)
        assert len(ents & tents) >= len(tents) / 2, f"{d.id}: surface not copied"
        shared_roles = set(d.signature.roles) & set(target.signature.roles)
        assert shared_roles, f"{d.id}: no entity names shared with {target.id}"


# -- structure -----------------------------------------------------------------------------
def test_mechanism_instances_share_a_structural_core() -> None:
    for mech, entries in mechanisms().items():
        for a, b in itertools.combinations(entries, 2):
            shared = features(a.signature) & features(b.signature)
            assert len(shared) >= 2, f"{mech}: {a.id} and {b.id} share only {sorted(shared)}"


def test_mechanism_instances_are_not_copies() -> None:
    for mech, entries in mechanisms().items():
        for a, b in itertools.combinations(entries, 2):
            sa, sb = a.signature, b.signature
            assert sa.roles.keys() != sb.roles.keys(), f"{mech}: {a.id}/{b.id} same role tags"
            assert set(sa.roles.values()).isdisjoint(sb.roles.values())
            assert sa.levels.L0 != sb.levels.L0
            assert set(sa.surface.entities).isdisjoint(sb.surface.entities)


def test_decoys_differ_structurally_from_their_targets() -> None:
    for d in DECOYS:
        target = BY_ID[d.decoy_of]
        assert predicate_multiset(d.signature) != predicate_multiset(target.signature), d.id
        # and the decoy lacks part of the target mechanism's core
        core = set.intersection(*(features(e.signature) for e in mechanisms()[target.mechanism]))
        assert core - features(d.signature), f"{d.id} contains the whole core of {target.mechanism}"


def test_mechanisms_groups_in_index_order() -> None:
    order = {e.id: i for i, e in enumerate(ENTRIES)}
    for entries in mechanisms().values():
        pos = [order[e.id] for e in entries]
        assert pos == sorted(pos)


# -- packaging and errors ------------------------------------------------------------------------
def test_casebook_ships_as_package_data() -> None:
    root = resources.files("analogist") / "data" / "casebook"
    assert (root / "index.yaml").is_file()
    assert (root / "vocab_additions.yaml").is_file()
    names = {p.name for p in (root / "episodes").iterdir()}
    assert {Path(r["file"]).name for r in casebook_index()["entries"]} == names


@pytest.fixture()
def scratch_casebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A writable copy of the casebook that the loader reads instead of the bundled one."""
    src = Path(str(resources.files("analogist") / "data" / "casebook"))
    dst = tmp_path / "casebook"
    shutil.copytree(src, dst)
    monkeypatch.setattr(casebook_mod, "_dir", lambda: dst)
    for f in (casebook_mod._index, casebook_mod._entries, casebook_mod._vocabulary):
        f.cache_clear()
    yield dst
    for f in (casebook_mod._index, casebook_mod._entries, casebook_mod._vocabulary):
        f.cache_clear()


def test_bad_episode_raises_naming_the_file(scratch_casebook: Path) -> None:
    p = scratch_casebook / "episodes" / "deadlock-mfg-agv-aisle.yaml"
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    data["relations"].append(["waits_for", "AGV_1", "NOBODY"])
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(AnalogistError) as ei:
        load_casebook()
    assert "deadlock-mfg-agv-aisle.yaml" in str(ei.value)
    assert "NOBODY" in str(ei.value)


def test_malformed_yaml_raises_naming_the_file(scratch_casebook: Path) -> None:
    p = scratch_casebook / "episodes" / "herd-ret-doorbuster.yaml"
    p.write_text("episode_id: [unclosed\n", encoding="utf-8")
    with pytest.raises(AnalogistError, match="herd-ret-doorbuster.yaml"):
        load_casebook()


def test_episode_id_must_match_index(scratch_casebook: Path) -> None:
    p = scratch_casebook / "episodes" / "herd-ret-doorbuster.yaml"
    text = p.read_text(encoding="utf-8").replace(
        "episode_id: herd-ret-doorbuster", "episode_id: something-else")
    p.write_text(text, encoding="utf-8")
    with pytest.raises(AnalogistError, match="herd-ret-doorbuster.yaml.*index id"):
        load_casebook()


def test_unindexed_episode_file_is_an_error(scratch_casebook: Path) -> None:
    shutil.copy(scratch_casebook / "episodes" / "herd-ret-doorbuster.yaml",
                scratch_casebook / "episodes" / "stray.yaml")
    with pytest.raises(AnalogistError, match="stray.yaml"):
        load_casebook()


def test_decoy_of_must_name_an_entry(scratch_casebook: Path) -> None:
    p = scratch_casebook / "index.yaml"
    text = p.read_text(encoding="utf-8").replace(
        "decoy_of: herd-sw-cache-stampede", "decoy_of: no-such-entry")
    p.write_text(text, encoding="utf-8")
    with pytest.raises(AnalogistError, match="index.yaml.*no-such-entry"):
        load_casebook()


def test_vocab_addition_without_definition_is_an_error(scratch_casebook: Path) -> None:
    p = scratch_casebook / "vocab_additions.yaml"
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    data["predicates"] = [{"name": "newly_proposed", "kind": "relation", "arity": 2,
                           "definition": ""}]
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(AnalogistError, match="vocab_additions.yaml.*no definition"):
        casebook_vocabulary()


def test_vocab_addition_clashing_with_the_bundled_vocabulary_is_an_error(
        scratch_casebook: Path) -> None:
    p = scratch_casebook / "vocab_additions.yaml"
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    data["predicates"] = [{"name": "preempts", "kind": "relation", "arity": 2,
                           "definition": "again"}]
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(AnalogistError, match="already in the bundled vocabulary"):
        casebook_vocabulary()
