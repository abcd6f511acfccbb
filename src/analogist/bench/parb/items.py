"""PARB item generators: the eight task families F1–F8 of seed 000 §14 with machine-checkable keys.

``generate(n_items, seed, split)`` is deterministic: every item draws from its own
``random.Random`` seeded by ``(seed, family, index)``, and :func:`write_jsonl` writes one
canonical JSON object per line (sorted keys), so the same seed gives byte-identical JSONL.

Families (keys in ``item["key"]``; role tags are per-item fresh tags):

* **F1 cross-domain mapping** — source (with solution) and a target in another domain whose
  last conclusion edge is held back. Key: ``role_mapping`` source tag → target tag (and
  ``all_role_mappings``: every structure-preserving bijection; one for every shipped template),
  ``transferred_inference`` (the held-back edge in target tags).
* **F2 decoy rejection** — target + four candidates crossing surface (near/far) with structure
  (analogy/disanalogy): far analogy, near disanalogy by minimal pair (same skin, one edit), near
  disanalogy by surface decoy (same domain, other template), far disanalogy. Key: ``answer``
  (the far analogy's episode id) and its role mapping.
* **F3 spontaneous retrieval** — target + pool of :data:`POOL_SIZE` (40) episodes, no hint.
  Key: ``match_ids`` (episode ids sharing the target's template) and ``no_match`` (30% of
  items: the pool holds only decoys). Pool composition: see :data:`POOL_SIZE`.
* **F4 solution transfer** — source with its fix; target without. Key: the fix operator mapped
  through the role mapping, in target tags and in target entity names, plus key elements.
* **F5 partial analogy** — target lacks some of the template's optional parts. Key per part:
  ``transfer`` (target has the mapped part) or ``withhold`` (it lacks it).
* **F6 false-analogy rejection** — pool (40) with tempting minimal pairs and same-domain
  surface decoys; in 50% of items no valid source at all. Key: ``match_ids``, ``no_match``.
* **F7 synthetic nonce worlds** — F1-style mapping onto a nonce-skinned target (entity and
  relation words are random tokens), and its familiar-word twin (same template, same role tags,
  familiar words) as the next item; ``meta.twin_of`` links them.
* **F8 re-representation** — source and target whose domains and phrasing variants make the
  L0/L1 surfaces maximally different; the match exists only at L2/L3. Key: ``answer`` and
  role mapping.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analogist.bench.parb.decoys import minimal_pair
from analogist.bench.parb.skins import (
    DOMAIN_NAMES,
    Skin,
    content_words,
    familiar_skin,
    fresh_tags,
    map_text,
    nonce_skin,
    render,
)
from analogist.bench.parb.templates import (
    DEV_TEMPLATES,
    TEMPLATES,
    TEST_TEMPLATES,
    Edge,
    Rel,
    Template,
    map_atom,
    structure_preserving_maps,
    templates_for,
)
from analogist.errors import AnalogistError
from analogist.signature import Signature

GENERATOR_VERSION = "parb-gen-2"
FAMILIES = ("F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8")
F3_NO_MATCH_RATE = 0.3
F6_NO_MATCH_RATE = 0.5
POOL_SIZE = 40
"""F3/F6 pool size (parb-gen-2; was 10 in parb-gen-1, where every arm's recall@5 on far items
saturated at 1.0 for B′, C, H, D, E, G — H1 unreadable). Composition: the keyed far matches
(F3: 1–2, F6: 1; none on no-match items), ``MINIMAL_PAIRS`` = six minimal pairs of the
target's template (two in the target's domain, four in distinct other domains: same template
phrasing and principle text, one structural edit, so surface text cannot tell them from the
match), ``SURFACE_DECOYS[family]`` same-domain surface decoys (other templates, the target's
domain), and other-template fillers spread round-robin over every other domain (so a far
match's domain is not a give-away). Chosen on development items only."""
SURFACE_DECOYS = {"F3": 10, "F6": 12}
MINIMAL_PAIRS = (2, 4)       # minimal pairs in the target's domain, in other domains


@dataclass
class ItemSet:
    """A generated item set: its items (JSON-able dicts) and identity."""

    items: list[dict[str, Any]]
    seed: int
    split: str
    n_items: int
    generator_version: str = GENERATOR_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def to_jsonl(self) -> str:
        return "".join(json.dumps(it, sort_keys=True, ensure_ascii=False,
                                  separators=(",", ":")) + "\n" for it in self.items)

    def sha256(self) -> str:
        return hashlib.sha256(self.to_jsonl().encode("utf-8")).hexdigest()

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {f: {"dev": 0, "test": 0} for f in FAMILIES}
        for it in self.items:
            out[it["family"]][it["split"]] += 1
        return out

    def manifest(self) -> dict[str, Any]:
        return {"generator": "analogist.bench.parb", "generator_version": self.generator_version,
                "seed": self.seed, "split": self.split, "n_items": len(self.items),
                "counts": self.counts(),
                "templates": {"dev": list(DEV_TEMPLATES), "test": list(TEST_TEMPLATES)},
                "sha256": self.sha256()}


def write_jsonl(itemset: ItemSet, path: str | Path) -> dict[str, Any]:
    """Write the items to ``path`` (JSONL) and the manifest next to it
    (``<path>.manifest.json``); returns the manifest."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = itemset.to_jsonl()
    p.write_bytes(text.encode("utf-8"))
    man = itemset.manifest()
    man["jsonl"] = p.name
    Path(str(p) + ".manifest.json").write_text(
        json.dumps(man, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return man


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]


# -- building blocks --------------------------------------------------------------------------
@dataclass
class _Ep:
    sig: Signature
    template: Template
    skin: Skin
    tags: dict[str, str]                 # template tag → fresh tag
    relations: list[Rel]
    edges: list[Edge]

    def data(self, drop_fix: bool = False) -> dict[str, Any]:
        d = self.sig.to_data()
        if drop_fix:
            d.pop("fix_operator", None)
        return d


def _episode(t: Template, domain: str, rng: random.Random, eid: str, variant: int = 0,
             tags: dict[str, str] | None = None, skin: Skin | None = None,
             relations: list[Rel] | None = None, edges: list[Edge] | None = None) -> _Ep:
    if skin is None:
        skin = nonce_skin(t, rng) if domain == "nonce" else familiar_skin(t, domain, rng, variant)
    tags = tags or fresh_tags(t, rng)
    rels = list(t.relations if relations is None else relations)
    eds = list(t.causal_chain if edges is None else edges)
    return _Ep(render(t, skin, tags, eid, rels, eds), t, skin, tags, rels, eds)


def _maps(src: _Ep, tgt: _Ep, src_rel: Iterable[Rel] | None = None,
          src_edges: Iterable[Edge] | None = None) -> list[dict[str, str]]:
    """Structure-preserving bijections source fresh tag → target fresh tag."""
    inv_s = src.tags
    s_rel = [(r[0], *(inv_s[a] for a in r[1:])) for r in (src_rel or src.relations)]
    s_edges = [(map_atom(e[0], inv_s), e[1], map_atom(e[2], inv_s), e[3], e[4])
               for e in (src_edges if src_edges is not None else src.edges)]
    t_rel = [(r[0], *(tgt.tags[a] for a in r[1:])) for r in tgt.relations]
    t_edges = [(map_atom(e[0], tgt.tags), e[1], map_atom(e[2], tgt.tags), e[3], e[4])
               for e in tgt.edges]
    return structure_preserving_maps(sorted(inv_s.values()), s_rel, s_edges,
                                     sorted(tgt.tags.values()), t_rel, t_edges)


def _gold_map(src: _Ep, tgt: _Ep) -> dict[str, str]:
    return {src.tags[k]: tgt.tags[k] for k in src.template.role_tags}


def _mapping_key(src: _Ep, tgt: _Ep, src_rel: Iterable[Rel] | None = None,
                 src_edges: Iterable[Edge] | None = None) -> dict[str, Any]:
    gold = _gold_map(src, tgt)
    allm = _maps(src, tgt, src_rel, src_edges)
    if gold not in allm:
        raise AnalogistError(f"PARB generator: gold mapping does not preserve structure "
                             f"({src.template.name})")
    return {"role_mapping": dict(sorted(gold.items())),
            "all_role_mappings": sorted((dict(sorted(m.items())) for m in allm),
                                        key=lambda m: json.dumps(m, sort_keys=True))}


def _two_domains(rng: random.Random) -> tuple[str, str]:
    a, b = rng.sample(DOMAIN_NAMES, 2)
    return a, b


def _other_template(t: Template, temps: tuple[str, ...], rng: random.Random) -> Template:
    return TEMPLATES[rng.choice([n for n in temps if n != t.name])]


def _held_back_edge(t: Template) -> int:
    idx = [i for i, e in enumerate(t.causal_chain) if e[2] in t.conclusion]
    return idx[-1] if idx else len(t.causal_chain) - 1


# -- families -----------------------------------------------------------------------------------
def _base(item_id: str, family: str, split: str, t: Template, task: str) -> dict[str, Any]:
    return {"item_id": item_id, "family": family, "split": split, "template": t.name,
            "task": task, "source": None, "target": None, "candidates": [], "pool": [],
            "key": {}, "meta": {}, "templates_used": [t.name]}


def _f1(iid: str, split: str, t: Template, temps: tuple[str, ...], rng: random.Random,
        ) -> dict[str, Any]:
    d1, d2 = _two_domains(rng)
    src = _episode(t, d1, rng, f"{iid}-s")
    hb = _held_back_edge(t)
    tedges = [e for i, e in enumerate(t.causal_chain) if i != hb]
    tgt = _episode(t, d2, rng, f"{iid}-t", edges=tedges)
    it = _base(iid, "F1", split, t, "Map the source's roles onto the target and state what "
               "the source implies for the target.")
    it["source"], it["target"] = src.data(), tgt.data(drop_fix=True)
    key = _mapping_key(src, tgt, src_edges=tedges)
    e = t.causal_chain[hb]
    key["transferred_inference"] = {"cause": map_atom(e[0], tgt.tags), "edge": e[1],
                                    "effect": map_atom(e[2], tgt.tags), "sign": e[3]}
    it["key"] = key
    it["meta"] = {"source_domain": d1, "target_domain": d2, "held_back_edge": hb}
    return it


def _f2(iid: str, split: str, t: Template, temps: tuple[str, ...], rng: random.Random,
        ) -> dict[str, Any]:
    d, dfar, dfar2 = rng.sample(DOMAIN_NAMES, 3)
    tgt = _episode(t, d, rng, f"{iid}-t")
    t2, t3 = _other_template(t, temps, rng), _other_template(t, temps, rng)
    cells: list[tuple[str, str, str, Any]] = []
    far = _episode(t, dfar, rng, "tmp")
    cells.append(("far", "analogy", "far_analogue", far))
    mp_sig, edit = minimal_pair(t, tgt.skin, tgt.tags, "tmp", rng)
    cells.append(("near", "disanalogy", "minimal_pair", (mp_sig, edit)))
    cells.append(("near", "disanalogy", "surface_decoy", _episode(t2, d, rng, "tmp")))
    cells.append(("far", "disanalogy", "far_disanalogy", _episode(t3, dfar2, rng, "tmp")))
    rng.shuffle(cells)
    it = _base(iid, "F2", split, t, "Which candidate is analogous to the target? Justify by "
               "relations.")
    it["target"] = tgt.data()
    for k, (surf, struct, kind, obj) in enumerate(cells):
        eid = f"{iid}-c{k}"
        if kind == "minimal_pair":
            sig, ed = obj
            data = sig.to_data()
            data["episode_id"] = eid
            labels = {"surface": surf, "structure": struct, "decoy": kind, "edit": ed.to_data(),
                      "template": t.name}
        else:
            data = obj.data()
            data["episode_id"] = eid
            labels = {"surface": surf, "structure": struct, "decoy": kind,
                      "template": obj.template.name}
            if kind == "far_analogue":
                it["key"] = {"answer": eid, **_mapping_key(tgt, obj)}
        it["candidates"].append({"episode_id": eid, "signature": data, "labels": labels})
    it["templates_used"] = sorted({t.name, t2.name, t3.name})
    it["meta"] = {"target_domain": d}
    return it


def _pool_item(family: str, iid: str, split: str, t: Template, temps: tuple[str, ...],
               rng: random.Random, no_match: bool) -> dict[str, Any]:
    d = rng.choice(DOMAIN_NAMES)
    tgt = _episode(t, d, rng, f"{iid}-t")
    entries: list[tuple[dict[str, Any], dict[str, Any]]] = []
    others = [n for n in temps if n != t.name]
    n_match = 0 if no_match else (1 if family == "F6" else rng.choice((1, 2)))
    for _ in range(n_match):
        dd = rng.choice([x for x in DOMAIN_NAMES if x != d])
        ep = _episode(t, dd, rng, "tmp")
        entries.append((ep.data(), {"template": t.name, "role": "true_match", "domain": dd}))
    # tempting decoys: minimal pairs of the target's template (same domain, and far away)
    far_doms = [x for x in DOMAIN_NAMES if x != d]
    mp_doms = [d] * MINIMAL_PAIRS[0] + rng.sample(far_doms, MINIMAL_PAIRS[1])
    for mp_dom in mp_doms:
        mp_src = _episode(t, mp_dom, rng, "tmp")
        sig, ed = minimal_pair(t, mp_src.skin, mp_src.tags, "tmp", rng)
        entries.append((sig.to_data(), {"template": t.name, "role": "minimal_pair",
                                        "domain": mp_dom, "edit": ed.to_data()}))
    for _ in range(SURFACE_DECOYS[family]):
        t2 = TEMPLATES[rng.choice(others)]
        entries.append((_episode(t2, d, rng, "tmp").data(),
                        {"template": t2.name, "role": "surface_decoy", "domain": d}))
    j = rng.randrange(len(far_doms))
    while len(entries) < POOL_SIZE:
        t2 = TEMPLATES[rng.choice(others)]
        dd = far_doms[j % len(far_doms)]
        j += 1
        entries.append((_episode(t2, dd, rng, "tmp").data(),
                        {"template": t2.name, "role": "filler", "domain": dd}))
    rng.shuffle(entries)
    it = _base(iid, family, split, t,
               "Have you seen this shape before? Return the pool episodes that share the "
               "target's structure, or 'no match'.")
    it["target"] = tgt.data()
    match_ids = []
    for k, (data, labels) in enumerate(entries):
        eid = f"{iid}-p{k:02d}"
        data["episode_id"] = eid
        it["pool"].append({"episode_id": eid, "signature": data, "labels": labels})
        if labels["role"] == "true_match":
            match_ids.append(eid)
    it["key"] = {"match_ids": match_ids, "no_match": not match_ids}
    it["templates_used"] = sorted({e[1]["template"] for e in entries} | {t.name})
    it["meta"] = {"target_domain": d}
    return it


def _f4(iid: str, split: str, t: Template, temps: tuple[str, ...], rng: random.Random,
        ) -> dict[str, Any]:
    d1, d2 = _two_domains(rng)
    src = _episode(t, d1, rng, f"{iid}-s")
    tgt = _episode(t, d2, rng, f"{iid}-t")
    it = _base(iid, "F4", split, t, "Propose the concrete target-domain fix that the source's "
               "solution implies.")
    it["source"], it["target"] = src.data(), tgt.data(drop_fix=True)
    key = _mapping_key(src, tgt)
    used = [tag for tag in t.role_tags if tag in set(_words(t.fix_operator))]
    key["fix_operator"] = map_text(t.fix_operator, tgt.tags)
    key["fix_operator_entities"] = map_text(t.fix_operator, tgt.skin.entities)
    key["key_elements"] = [tgt.skin.entities[tag] for tag in used]
    it["key"] = key
    it["meta"] = {"source_domain": d1, "target_domain": d2}
    return it


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9_]+", text)


def _f5(iid: str, split: str, t: Template, temps: tuple[str, ...], rng: random.Random,
        ) -> dict[str, Any]:
    d1, d2 = _two_domains(rng)
    parts = list(t.optional_parts)
    k = 1 if len(parts) == 1 else rng.randint(1, len(parts) - 1)
    lacking = set(rng.sample(parts, k))
    rels = [r for i, r in enumerate(t.relations) if f"rel:{i}" not in lacking]
    edges = [e for i, e in enumerate(t.causal_chain) if f"edge:{i}" not in lacking]
    src = _episode(t, d1, rng, f"{iid}-s")
    tgt = _episode(t, d2, rng, f"{iid}-t", relations=rels, edges=edges)
    it = _base(iid, "F5", split, t, "For each part of the source mechanism, decide whether it "
               "transfers to the target or must be withheld.")
    it["source"], it["target"] = src.data(), tgt.data(drop_fix=True)
    key = _mapping_key(src, tgt, src_rel=rels, src_edges=edges)
    per_part = {}
    for p in parts:
        el = t.part(p)
        if p.startswith("rel:"):
            s_txt = f"{el[0]}({','.join(src.tags[a] for a in el[1:])})"
            t_txt = f"{el[0]}({','.join(tgt.tags[a] for a in el[1:])})"
        else:
            s_txt = f"{map_atom(el[0], src.tags)} {el[1]} {map_atom(el[2], src.tags)}"
            t_txt = f"{map_atom(el[0], tgt.tags)} {el[1]} {map_atom(el[2], tgt.tags)}"
        per_part[p] = {"source": s_txt, "target": t_txt,
                       "decision": "withhold" if p in lacking else "transfer"}
    key["parts"] = per_part
    it["key"] = key
    it["meta"] = {"source_domain": d1, "target_domain": d2, "lacking": sorted(lacking)}
    return it


def _f7_pair(iid: str, split: str, t: Template, temps: tuple[str, ...], rng: random.Random,
             ) -> list[dict[str, Any]]:
    d1, d2 = _two_domains(rng)
    src = _episode(t, d1, rng, f"{iid}-s")
    tags = fresh_tags(t, rng)
    out = []
    for tw, dom in (("nonce", "nonce"), ("familiar", d2)):
        sub = f"{iid}-{tw[0]}"
        tgt = _episode(t, dom, rng, f"{sub}-t", tags=dict(tags))
        mp, ed = minimal_pair(t, tgt.skin, tgt.tags, f"{sub}-d", rng)
        it = _base(sub, "F7", split, t, "Map the source's roles onto the target; say which of "
                   "the two target-world episodes is the true analogue.")
        it["source"], it["target"] = src.data(), tgt.data(drop_fix=True)
        key = _mapping_key(src, tgt)
        key["answer"] = tgt.sig.episode_id
        it["candidates"] = [{"episode_id": mp.episode_id, "signature": mp.to_data(),
                             "labels": {"decoy": "minimal_pair", "edit": ed.to_data(),
                                        "template": t.name}}]
        it["key"] = key
        it["meta"] = {"skin": tw, "source_domain": d1, "target_domain": dom,
                      "twin_of": f"{iid}-{'f' if tw == 'nonce' else 'n'}"}
        out.append(it)
    return out


def _f8(iid: str, split: str, t: Template, temps: tuple[str, ...], rng: random.Random,
        ) -> dict[str, Any]:
    d1 = rng.choice(DOMAIN_NAMES)
    src = _episode(t, d1, rng, f"{iid}-s", variant=0)
    best: tuple[float, str, _Ep] | None = None
    sw = content_words((src.sig.levels.L0 or "") + " " + (src.sig.levels.L1 or ""))
    for d2 in DOMAIN_NAMES:
        if d2 == d1:
            continue
        cand = _episode(t, d2, random.Random(f"{iid}:{d2}"), f"{iid}-t", variant=1)
        tw = content_words((cand.sig.levels.L0 or "") + " " + (cand.sig.levels.L1 or ""))
        jac = len(sw & tw) / max(1, len(sw | tw))
        if best is None or jac < best[0]:
            best = (jac, d2, cand)
    assert best is not None
    jac, d2, tgt = best
    t2 = _other_template(t, temps, rng)
    near = _episode(t2, d1, rng, f"{iid}-n", variant=0)
    it = _base(iid, "F8", split, t, "Is the target analogous to the source? Re-represent both "
               "abstractly if the surfaces disagree; map the roles.")
    it["source"], it["target"] = src.data(), tgt.data(drop_fix=True)
    it["candidates"] = [{"episode_id": near.sig.episode_id, "signature": near.data(),
                         "labels": {"decoy": "surface_decoy", "template": t2.name}}]
    key = _mapping_key(src, tgt)
    key["answer"] = tgt.sig.episode_id
    key["match_level"] = "L2/L3"
    it["key"] = key
    it["templates_used"] = sorted({t.name, t2.name})
    it["meta"] = {"source_domain": d1, "target_domain": d2, "l0_l1_jaccard": round(jac, 4)}
    return it


_SIMPLE = {"F1": _f1, "F2": _f2, "F4": _f4, "F5": _f5, "F8": _f8}


def _family_counts(n_items: int) -> dict[str, int]:
    base, rem = divmod(n_items, len(FAMILIES))
    counts = {f: base + (1 if i < rem else 0) for i, f in enumerate(FAMILIES)}
    if counts["F7"] % 2:
        counts["F7"] -= 1
        counts["F1"] += 1
    return counts


def generate(n_items: int, seed: int, split: str = "dev") -> ItemSet:
    """Generate ``n_items`` items spread over F1–F8 (F7 in nonce/familiar pairs).

    ``split`` is ``'dev'`` (development templates only), ``'test'`` (held-out templates only)
    or ``'both'`` (items alternate dev/test within each family). Deterministic in ``seed``.
    """
    if n_items < 0:
        raise AnalogistError(f"n_items must be >= 0, got {n_items}")
    templates_for(split)
    items: list[dict[str, Any]] = []
    for fam, n in _family_counts(n_items).items():
        i = 0
        while i < n:
            k = i // 2 if fam == "F7" else i
            sp = split if split != "both" else ("dev" if k % 2 == 0 else "test")
            temps = templates_for(sp)
            rng = random.Random(f"parb:{GENERATOR_VERSION}:{seed}:{fam}:{k}")
            kk = k // 2 if split == "both" else k       # index within the item's split
            t = TEMPLATES[temps[kk % len(temps)]] if kk < len(temps) else \
                TEMPLATES[rng.choice(temps)]
            iid = f"parb-{seed}-{fam}-{k:04d}"
            if fam == "F7":
                items.extend(_f7_pair(iid, sp, t, temps, rng))
                i += 2
                continue
            if fam == "F3":
                items.append(_pool_item("F3", iid, sp, t, temps, rng,
                                        no_match=_no_match(k, F3_NO_MATCH_RATE)))
            elif fam == "F6":
                items.append(_pool_item("F6", iid, sp, t, temps, rng,
                                        no_match=_no_match(k, F6_NO_MATCH_RATE)))
            else:
                items.append(_SIMPLE[fam](iid, sp, t, temps, rng))
            i += 1
    return ItemSet(items, seed, split, n_items)


def _no_match(k: int, rate: float) -> bool:
    """Exactly ``round(rate * 10)`` of every 10 consecutive items have no true match."""
    return (k * 7 + 3) % 10 < round(rate * 10)
