"""PARB's encoded representation: text-only re-encoding, role alignment, role-term scoring."""

from __future__ import annotations

import json

import pytest

from analogist.bench.parb.arms import ArmOutput
from analogist.bench.parb.encoded import (
    align_roles,
    encode_items,
    episode_text,
    gold_forms,
    skeleton,
    translate_output,
    translate_text,
)
from analogist.bench.parb.items import generate
from analogist.bench.parb.runner import run_parb


def test_align_roles_exact_then_overlap_one_to_one():
    gold = {"Q1": "yard board", "Q2": "dock schedule", "Q3": "dispatcher"}
    enc = {"R1": "the yard board", "R2": "schedule", "R3": "dispatcher", "R4": "staleness"}
    a = align_roles(gold, enc)
    assert a == {"R1": "Q1", "R2": "Q2", "R3": "Q3"}
    # one-to-one: two writer roles cannot both take the same gold role
    a2 = align_roles({"Q1": "pump"}, {"R1": "pump", "R2": "the pump"})
    assert list(a2.values()) == ["Q1"]


def test_translate_and_skeleton():
    al = {"R1": "Q1", "R3": "Q3"}
    t = translate_text("stale(R1) causes false_claim(R3); reads(R3,R9)", al)
    assert t == "stale(Q1) causes false_claim(Q3); reads(Q3,?R9)"
    assert skeleton("stale(Q1) causes false_claim(Q3)") == "*(Q1)causes*(Q3)"
    assert skeleton("a(Q1, Q2)") == "*(Q1,Q2)"


def test_episode_text_states_the_fix_in_entity_names():
    sig = {"levels": {"L0": "The pump failed."}, "roles": {"P1": "pump", "O1": "operator"},
           "fix_operator": "make O1 inspect P1 weekly"}
    assert episode_text(sig) == ("The pump failed. The fix is to make the operator inspect the "
                                 "pump weekly.")
    assert episode_text({"levels": {"L0": "x"}}) == "x"


def test_translate_output_drops_pairs_outside_the_key():
    out = ArmOutput("src", ["src"], role_map={"R1": "S1", "R2": "S2", "R9": "S9", "R8": "S1x"},
                    conclusions=["stale(S1) causes false_claim(S2)"], fix="make S2 check S1")
    align = {"src": {"R1": "Q1", "R2": "Q2", "R8": "Q8"}, "tgt": {"S1": "T1", "S2": "T2"}}
    t = translate_output(out, {}, "tgt", align)
    # R9→S9: both unaligned, dropped; R8→S1x: one side unaligned, kept as a wrong pair
    assert t.role_map == {"Q1": "T1", "Q2": "T2", "Q8": "?S1x"}
    assert t.conclusions == ["*(T1)causes*(T2)"]
    assert t.fix == "make t2 check t1"
    assert translate_output(ArmOutput(None, []), {}, "tgt", align).chosen is None


@pytest.fixture(scope="module")
def embedder():
    from analogist.index.embed import default_embedder
    return default_embedder()


def test_encode_items_sees_text_only_and_keeps_keys(embedder):
    from analogist.encode.deterministic import DeterministicEncoder

    items = [it for it in generate(16, 2, "dev").items if it["family"] in ("F1", "F4")][:3]
    seen: list[str] = []

    class Spy:
        name = "spy"

        def __init__(self):
            self.inner = DeterministicEncoder(embedder=embedder)

        def encode(self, text, **kw):
            seen.append(text)
            return self.inner.encode(text, **kw)

    enc = encode_items(items, Spy())
    # the writer got exactly each episode's text, nothing else (no other case, no key, no tags)
    for it in items:
        for ep in (it["source"], it["target"]):
            assert episode_text(ep) in seen
            for tag in ep["roles"]:
                assert all(tag not in s for s in seen)
    for orig, new in zip(items, enc.items, strict=True):
        assert new["key"] == orig["key"]
        assert new["source"]["episode_id"] == orig["source"]["episode_id"]
        assert new["source"]["provenance"]["writer"] == "deterministic-encoder-2"
        assert set(enc.align[orig["item_id"]]) == {orig["source"]["episode_id"],
                                                    orig["target"]["episode_id"]}
    assert enc.stats["gold_role_recall"] > 0.5
    assert gold_forms(items[0]) and all(isinstance(v, str) for v in gold_forms(items[0]).values())


def test_run_parb_encoded_small(tmp_path, embedder):
    # pools of 40 (parb-gen-2) are encoded episode by episode: keep this test fast by trimming
    # the F3/F6 pools to their keyed matches plus the first decoys (8 episodes)
    items = generate(16, 4, "dev").items
    for it in items:
        if it["family"] in ("F3", "F6"):
            keep = set(it["key"]["match_ids"])
            it["pool"] = [p for p in it["pool"] if p["episode_id"] in keep] + \
                [p for p in it["pool"] if p["episode_id"] not in keep][: 8 - len(keep)]
    res = run_parb(16, ["C", "D", "E", "G"], representation="encoded", split="dev", seed=4,
                   out_dir=tmp_path, progress=False, embedder=embedder, write_report=False,
                   items=items)
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk["representation"] == "encoded"
    assert on_disk["encoder"]["writer"] == "deterministic"
    assert on_disk["encoder"]["episodes_encoded"] > 0
    assert res["paired"]
    arms = res["splits"]["dev"]["arms"]
    assert set(arms) == {"C", "D", "E", "G"}
    # the oracle still maps at least as well as the gated arm on encoded signatures
    assert (arms["G"]["role_mapping_f1"] or 0) >= (arms["E"]["role_mapping_f1"] or 0)
