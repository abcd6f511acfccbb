"""PARB decoys (seed 000 §14, generator item 4).

* **Minimal-pair decoy** — same skin, exactly ONE structural edit, recorded: reverse one causal
  edge, flip an edge type (preventer ↔ enabler; a ``causes`` edge becomes ``prevents``), delete
  one relation (the derived-copy relation ``derives_from`` first when present), or swap the
  arguments of one asymmetric relation. An edit is used only when the edited structure is not
  isomorphic to the original (otherwise it would still be an analogy).
* **Surface decoy** — same domain and vocabulary, another template.
* **Far analogue** — another domain, same template.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from analogist.bench.parb.skins import (
    DOMAIN_NAMES,
    Skin,
    extend_lexicon,
    familiar_skin,
    fresh_tags,
    render,
)
from analogist.bench.parb.templates import (
    SYMMETRIC_PREDICATES,
    TEMPLATES,
    Edge,
    Rel,
    Template,
    structure_key,
    structure_preserving_maps,
)
from analogist.errors import AnalogistError
from analogist.signature import Signature

EDIT_TYPES = ("reverse_edge", "flip_edge_type", "delete_relation", "swap_args")
_FLIP = {"prevents": "enables", "enables": "prevents", "causes": "prevents"}


@dataclass(frozen=True)
class Edit:
    """One structural edit over a template's role tags."""

    type: str
    index: int
    before: tuple[Any, ...]
    after: tuple[Any, ...] | None

    def to_data(self) -> dict[str, Any]:
        return {"type": self.type, "index": self.index, "before": list(self.before),
                "after": None if self.after is None else list(self.after)}


def candidate_edits(t: Template) -> list[Edit]:
    """Every single structural edit of ``t`` that yields a valid, non-isomorphic structure."""
    out: list[Edit] = []
    edges, rels = list(t.causal_chain), list(t.relations)
    keys = {(e[0], e[1], e[2]) for e in edges}
    for i, e in enumerate(edges):
        rev = (e[2], e[1], e[0], e[3], e[4])
        if (rev[0], rev[1], rev[2]) not in keys:
            out.append(Edit("reverse_edge", i, e, rev))
        if e[1] in _FLIP:
            flip = (e[0], _FLIP[e[1]], e[2], e[3], e[4])
            if (flip[0], flip[1], flip[2]) not in keys:
                out.append(Edit("flip_edge_type", i, e, flip))
    if len(rels) > 1:
        for i, r in enumerate(rels):
            out.append(Edit("delete_relation", i, r, None))
    for i, r in enumerate(rels):
        if r[0] in SYMMETRIC_PREDICATES or len(r) != 3 or r[1] == r[2]:
            continue
        sw = (r[0], r[2], r[1])
        if sw not in rels:
            out.append(Edit("swap_args", i, r, sw))
    return [ed for ed in out if not _isomorphic_after(t, ed)]


def apply_edit(t: Template, edit: Edit) -> tuple[list[Rel], list[Edge]]:
    rels, edges = list(t.relations), list(t.causal_chain)
    if edit.type in ("reverse_edge", "flip_edge_type"):
        assert edit.after is not None
        edges[edit.index] = tuple(edit.after)  # type: ignore[assignment]
    elif edit.type == "delete_relation":
        del rels[edit.index]
    elif edit.type == "swap_args":
        assert edit.after is not None
        rels[edit.index] = tuple(edit.after)
    else:
        raise AnalogistError(f"unknown edit type {edit.type!r}")
    return rels, edges


def _isomorphic_after(t: Template, edit: Edit) -> bool:
    rels, edges = apply_edit(t, edit)
    if structure_key(rels, edges) == structure_key(t.relations, t.causal_chain):
        return True
    return bool(structure_preserving_maps(t.role_tags, rels, edges,
                                          t.role_tags, t.relations, t.causal_chain))


_EDITS_CACHE: dict[str, list[Edit]] = {}


def pick_edit(t: Template, rng: random.Random) -> Edit:
    """A seeded choice of edit type first (so the four types are balanced), then of the edit;
    ``delete_relation`` prefers the derived-copy relation when the template has one."""
    if t.name not in _EDITS_CACHE:
        _EDITS_CACHE[t.name] = candidate_edits(t)
    edits = _EDITS_CACHE[t.name]
    if not edits:
        raise AnalogistError(f"template {t.name} admits no non-isomorphic single edit")
    types = [ty for ty in EDIT_TYPES if any(e.type == ty for e in edits)]
    ty = rng.choice(types)
    pool = [e for e in edits if e.type == ty]
    if ty == "delete_relation":
        der = [e for e in pool if e.before[0] == "derives_from"]
        pool = der or pool
    return rng.choice(pool)


def minimal_pair(t: Template, skin: Skin, tags: dict[str, str], episode_id: str,
                 rng: random.Random) -> tuple[Signature, Edit]:
    """The same skin as the original with exactly one structural edit."""
    edit = pick_edit(t, rng)
    rels, edges = apply_edit(t, edit)
    skin2 = extend_lexicon(skin, rels, edges, rng)
    return render(t, skin2, tags, episode_id, rels, edges), edit


def surface_decoy(t: Template, domain: str, templates: tuple[str, ...], rng: random.Random,
                  episode_id: str) -> tuple[Signature, Template]:
    """Same domain and vocabulary as an item of ``t``, another template (a near disanalogy)."""
    other = TEMPLATES[rng.choice([n for n in templates if n != t.name])]
    skin = familiar_skin(other, domain, rng)
    return render(other, skin, fresh_tags(other, rng), episode_id), other


def far_analogue(t: Template, avoid_domain: str, rng: random.Random,
                 episode_id: str) -> tuple[Signature, str]:
    """The same template in another domain (a far analogy)."""
    domain = rng.choice([d for d in DOMAIN_NAMES if d != avoid_domain])
    return render(t, familiar_skin(t, domain, rng), fresh_tags(t, rng), episode_id), domain
