"""PARB generator: determinism, split, gold signatures, keys, decoys, nonce skins."""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import Counter

import pytest

from analogist.bench.parb import decoys, items, skins, templates
from analogist.bench.parb.items import generate, read_jsonl, write_jsonl
from analogist.bench.parb.templates import (
    DEV_TEMPLATES,
    TEMPLATES,
    TEST_TEMPLATES,
    assert_not_test,
)
from analogist.errors import AnalogistError
from analogist.signature import compile_signature, default_signature_vocabulary, validate_signature

N = 96


@pytest.fixture(scope="module")
def both() -> items.ItemSet:
    return generate(N, seed=7, split="both")


def _signatures(it: dict) -> list[dict]:
    out = [s for s in (it["source"], it["target"]) if s]
    out += [c["signature"] for c in it["candidates"]]
    out += [p["signature"] for p in it["pool"]]
    return out


# -- independent brute force (does not use the generator's own search) -------------------------
_SYM = {p.name for p in default_signature_vocabulary().predicates.values()
        if getattr(p, "commutative", False) or getattr(p, "symmetric", False)} \
    if hasattr(default_signature_vocabulary(), "predicates") else {"races_with"}


def _struct(sig: dict, m: dict[str, str] | None = None) -> tuple[Counter, Counter]:
    def r(x: str) -> str:
        return m[x] if m else x

    def atom(a: str) -> str:
        p, rest = a.split("(", 1)
        args = [r(x) for x in rest.rstrip(")").split(",") if x]
        return f"{p}({','.join(args)})"

    rels = Counter()
    for rel in sig["relations"]:
        args = [r(a) for a in rel[1:]]
        if rel[0] in _SYM:
            args = sorted(args)
        rels[(rel[0], *args)] += 1
    edges = Counter((atom(e["cause"]), e["edge"], atom(e["effect"]), e["sign"])
                    for e in sig["causal_chain"])
    return rels, edges


def _brute(src: dict, tgt: dict) -> list[dict[str, str]]:
    s, t = sorted(src["roles"]), sorted(tgt["roles"])
    if len(s) != len(t):
        return []
    want = _struct(tgt)
    found = []
    for perm in itertools.permutations(t):
        m = dict(zip(s, perm, strict=True))
        if _struct(src, m) == want:
            found.append(m)
    return found


# -- tests ----------------------------------------------------------------------------------------
def test_library_size_and_split() -> None:
    assert len(TEMPLATES) >= 20
    assert len(DEV_TEMPLATES) == 12 and len(TEST_TEMPLATES) == 8
    assert not set(DEV_TEMPLATES) & set(TEST_TEMPLATES)
    assert set(DEV_TEMPLATES) | set(TEST_TEMPLATES) == set(TEMPLATES)
    vocab = default_signature_vocabulary()
    for t in TEMPLATES.values():
        for r in t.relations:
            assert vocab.get(r[0]) is not None, (t.name, r)
        assert t.optional_parts and t.conclusion and t.fix_operator


def test_determinism(tmp_path) -> None:
    a, b, c = generate(40, 3, "both"), generate(40, 3, "both"), generate(40, 4, "both")
    assert a.to_jsonl() == b.to_jsonl()
    assert a.sha256() == b.sha256() != c.sha256()
    m1 = write_jsonl(a, tmp_path / "a.jsonl")
    m2 = write_jsonl(b, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert m1["sha256"] == m2["sha256"] == a.sha256()
    man = json.loads((tmp_path / "a.jsonl.manifest.json").read_text())
    assert man["seed"] == 3 and man["generator_version"] == items.GENERATOR_VERSION
    assert sum(v["dev"] + v["test"] for v in man["counts"].values()) == 40
    assert read_jsonl(tmp_path / "a.jsonl") == a.items


def test_split_recorded_and_refused(both) -> None:
    dev = generate(24, 1, "dev")
    assert {it["split"] for it in dev.items} == {"dev"}
    assert all(set(it["templates_used"]) <= set(DEV_TEMPLATES) for it in dev.items)
    assert_not_test(dev.items)
    test = generate(24, 1, "test")
    assert all(set(it["templates_used"]) <= set(TEST_TEMPLATES) for it in test.items)
    with pytest.raises(AnalogistError):
        assert_not_test(test.items[:1])
    with pytest.raises(AnalogistError):
        assert_not_test(["moral_hazard"])
    assert {it["split"] for it in both.items} == {"dev", "test"}
    for it in both.items:
        assert it["split"] == templates.split_of(it["template"])


def test_gold_signatures_validate_and_compile(both) -> None:
    for it in both.items:
        for data in _signatures(it):
            sig = validate_signature(data)
            compile_signature(sig, strict=True)


def _brute_embed(src: dict, tgt: dict) -> list[dict[str, str]]:
    """Bijections under which every target relation and edge is the image of a source one
    (the target shows a part of the source's structure: F1 holds back an edge, F5 parts)."""
    s, t = sorted(src["roles"]), sorted(tgt["roles"])
    if len(s) != len(t):
        return []
    want_r, want_e = _struct(tgt)
    found = []
    for perm in itertools.permutations(t):
        m = dict(zip(s, perm, strict=True))
        got_r, got_e = _struct(src, m)
        if not (want_r - got_r) and not (want_e - got_e):
            found.append(m)
    return found


def test_role_mapping_keys_unique_by_brute_force(both) -> None:
    checked = Counter()
    for it in both.items:
        if "role_mapping" not in it["key"]:
            continue
        src, tgt = it["source"], it["target"]
        if it["family"] == "F2":
            src = it["target"]
            tgt = next(c["signature"] for c in it["candidates"]
                       if c["episode_id"] == it["key"]["answer"])
        key = it["key"]["role_mapping"]
        brute = _brute_embed if it["family"] in ("F1", "F5") else _brute
        found = brute(src, tgt)
        assert key in found, it["item_id"]
        assert sorted(map(json.dumps, found)) == sorted(
            map(json.dumps, it["key"]["all_role_mappings"])), it["item_id"]
        checked[it["family"]] += 1
    assert set(checked) == {"F1", "F2", "F4", "F5", "F7", "F8"}


def test_templates_are_rigid() -> None:
    """No template has a non-trivial automorphism, so every keyed mapping is unique."""
    for t in TEMPLATES.values():
        assert len(templates.automorphisms(t)) == 1, t.name


def test_f1_transferred_inference_completes_target(both) -> None:
    for it in (i for i in both.items if i["family"] == "F1"):
        inf = it["key"]["transferred_inference"]
        tgt = dict(it["target"])
        full = tgt["causal_chain"] + [{**inf, "status": "observed"}]
        src = _struct(it["source"], it["key"]["role_mapping"])
        assert _struct({"relations": tgt["relations"], "causal_chain": full}) == src


def test_minimal_pair_decoys_one_edit(both) -> None:
    n = 0
    for it in both.items:
        originals = {}
        if it["family"] == "F2":
            originals = {c["episode_id"]: it["target"] for c in it["candidates"]
                         if c["labels"]["decoy"] == "minimal_pair"}
        if it["family"] == "F7":
            originals = {c["episode_id"]: it["target"] for c in it["candidates"]}
        for c in it["candidates"]:
            if c["episode_id"] not in originals:
                continue
            orig, dec = originals[c["episode_id"]], c["signature"]
            assert orig["roles"] == dec["roles"]          # same skin, roles aligned by tag
            ro, eo = _struct(orig)
            rd, ed = _struct(dec)
            removed = (ro - rd) + (eo - ed)
            added = (rd - ro) + (ed - eo)
            etype = c["labels"]["edit"]["type"]
            assert sum(removed.values()) == 1, (it["item_id"], etype)
            assert sum(added.values()) == (0 if etype == "delete_relation" else 1)
            assert not _brute(dec, orig), "decoy is isomorphic to its original"
            n += 1
    assert n >= 10


def test_pool_decoys_have_one_edit_and_edit_types_vary() -> None:
    seen = Counter()
    for t in TEMPLATES.values():
        rng = random.Random(t.name)
        for _ in range(6):
            e = decoys.pick_edit(t, rng)
            seen[e.type] += 1
            rels, edges = decoys.apply_edit(t, e)
            a = templates.structure_key(t.relations, t.causal_chain)
            b = templates.structure_key(rels, edges)
            diff = sum(((a[0] - b[0]) + (a[1] - b[1])).values())
            assert diff == 1
    assert set(seen) == set(decoys.EDIT_TYPES)


_STOP = skins.STOPWORDS


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3 and w not in _STOP}


def test_nonce_items_share_no_content_word_with_familiar_skins(both) -> None:
    nonce = [i for i in both.items if i["family"] == "F7" and i["meta"]["skin"] == "nonce"]
    twins = {i["item_id"]: i for i in both.items if i["family"] == "F7"}
    assert nonce
    for it in nonce:
        t = TEMPLATES[it["template"]]
        words = _content(it["target"]["levels"]["L0"]) | _content(it["target"]["levels"]["L1"])
        for c in it["candidates"]:
            words |= _content(c["signature"]["levels"]["L0"])
        familiar: set[str] = set()
        for d in skins.DOMAIN_NAMES:
            for seed in range(4):
                for variant in (0, 1):
                    rng = random.Random(seed)
                    sk = skins.familiar_skin(t, d, rng, variant)
                    familiar |= _content(skins.narrative(t.relations, t.causal_chain, sk))
        twin = twins[it["meta"]["twin_of"]]
        familiar |= _content(twin["target"]["levels"]["L0"]) | _content(
            twin["source"]["levels"]["L0"])
        assert not words & familiar, (it["item_id"], words & familiar)
        assert not words & skins.FAMILIAR_WORDS
        # twin: same template, same role tags, familiar words, same structure
        assert twin["template"] == it["template"]
        assert sorted(twin["target"]["roles"]) == sorted(it["target"]["roles"])
        assert _struct(twin["target"]) == _struct(it["target"])
        assert twin["target"]["surface"]["domain"] in skins.DOMAIN_NAMES


def test_no_match_rates() -> None:
    s = generate(160, 11, "both")
    for fam, lo, hi in (("F3", 0.25, 0.4), ("F6", 0.3, 0.6)):
        its = [i for i in s.items if i["family"] == fam]
        rate = sum(i["key"]["no_match"] for i in its) / len(its)
        assert lo <= rate <= hi, (fam, rate)
        for i in its:
            ids = {p["episode_id"] for p in i["pool"]
                   if p["labels"]["template"] == i["template"]
                   and p["labels"]["role"] == "true_match"}
            assert ids == set(i["key"]["match_ids"])
            assert i["key"]["no_match"] == (not ids)
            # a true match has the target's structure; every other same-template entry doesn't
            for p in i["pool"]:
                iso = bool(_brute(p["signature"], i["target"]))
                assert iso == (p["episode_id"] in ids), (i["item_id"], p["labels"])


def test_families_and_f8_surface_distance(both) -> None:
    fams = Counter(i["family"] for i in both.items)
    assert set(fams) == set(items.FAMILIES)
    for it in (i for i in both.items if i["family"] == "F8"):
        assert it["source"]["surface"]["domain"] != it["target"]["surface"]["domain"]
        assert it["meta"]["l0_l1_jaccard"] < 0.35
    for it in (i for i in both.items if i["family"] == "F2"):
        cells = {(c["labels"]["surface"], c["labels"]["structure"]) for c in it["candidates"]}
        assert ("far", "analogy") in cells and ("near", "disanalogy") in cells
        assert len(it["candidates"]) == 4
    for it in (i for i in both.items if i["family"] == "F4"):
        assert it["key"]["fix_operator"] and "fix_operator" not in it["target"]
        for tag in it["key"]["role_mapping"].values():
            assert tag in it["target"]["roles"]
    for it in (i for i in both.items if i["family"] == "F5"):
        dec = {v["decision"] for v in it["key"]["parts"].values()}
        assert "withhold" in dec


def test_every_template_renders_in_every_domain() -> None:
    assert len(skins.DOMAIN_NAMES) >= 5
    for t in TEMPLATES.values():
        texts = set()
        for d in skins.DOMAIN_NAMES:
            rng = random.Random(d)
            sk = skins.familiar_skin(t, d, rng)
            assert len(set(sk.entities.values())) == len(t.roles)
            sig = skins.render(t, sk, skins.fresh_tags(t, rng), f"{t.name}-{d}")
            compile_signature(sig, strict=True)
            assert sig.surface.domain == d
            assert t.principle == sig.levels.L3
            texts.add(sig.levels.L0)
        assert len(texts) == len(skins.DOMAIN_NAMES)


def test_surface_decoy_and_far_analogue() -> None:
    t = TEMPLATES["stale_copy_trusted"]
    rng = random.Random(3)
    sig, other = decoys.surface_decoy(t, "finance", DEV_TEMPLATES, rng, "sd")
    assert other.name != t.name and sig.surface.domain == "finance"
    far, dom = decoys.far_analogue(t, "finance", rng, "fa")
    assert dom != "finance" and far.surface.domain == dom
    orig = skins.render(t, skins.familiar_skin(t, "finance", rng), skins.fresh_tags(t, rng), "o")
    assert len(_brute(far.to_data(), orig.to_data())) == 1
    assert not _brute(sig.to_data(), orig.to_data())
