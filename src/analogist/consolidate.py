"""Consolidation: schemas from compared analogues, a healthy vocabulary, re-abstracted episodes.

Seed 000 §3 and §9 ("nightly consolidation"): comparing two analogues side by side induces a
schema that transfers better than either case alone (Gick & Holyoak 1983; Catrambone & Holyoak
1989; Gentner, Loewenstein & Thompson 2003; meta-analysis Alfieri, Nokes-Malach & Schunn 2013);
in LISA (Hummel & Holyoak 2003) schemas fall out of successful mappings. Here a consolidation pass
over one namespace of a :class:`~analogist.memory.sqlite.Memory`

1. **induces schemas**: every pair of live episodes is mapped with SME (Falkenhainer, Forbus &
   Gentner 1989); a pair *maps well* when the mapping's structural score covers at least
   ``min_pair_score`` of the **larger** of the two self-match scores (a symmetric, conservative
   share). The schema is the shared mapped structure — the first episode's relations and causal
   edges whose expressions the mapping pairs — rewritten over **generalised role tags** (a tag
   names the role's first structural position, e.g. ``DERIVES_FROM_1`` for the copy in
   ``derives_from(copy, source)``; a tag both episodes share is kept). An edge is ``observed``
   only when it is observed on both sides; an edge whose sign differs between the sides is left
   out. A pair the judge calls **contradictory** induces nothing: the judge's contradictions
   (:func:`analogist.judge.judge_mapping`) plus :func:`pair_contradictions`, which projects each
   side's causal edges and binary relations through the role mapping and flags one the other side
   states the other way round (reversed, of the opposite kind or sign, roles swapped) — the judge
   only sees such structure when SME happened to map the atoms involved, and an episode's
   reversed-edge decoy maps well otherwise. The schema's summary (its L1 and L3) is written from
   the schema's own relations and edges (predicate definitions from the vocabulary, generalised
   tags), never copied from the members' levels. Schemas with the same structure (the same
   relations and edges over the same generalised tags) are one schema whose members are the
   union. The schema is stored as a Signature
   (``kind: schema``) so that :class:`~analogist.retrieve.Retriever` maps it first
   (``_schema_hits``), with its member episodes, times used / verified (kept across runs) and
   ``meta`` (the pairs and scores it came from, the origin of each generalised tag);
2. **merges synonyms** in the store's ``vocab`` table: a used name that the vocabulary resolves to
   another declared name (a declared synonym), or a *proposed* name whose normalised form (lower
   case, ``_``/``-`` dropped, a plural ``s`` dropped per word) equals a declared or a more used
   proposed name of the same arity, is merged into it. The merge map records alias → canonical
   with the count moved; the canonical term's count becomes its own plus the alias's, the alias
   keeps status ``merged`` with count 0, so the total count is preserved. Stored episodes that use
   a merged *proposed* alias are rewritten to the canonical name (declared synonyms already
   resolve at compile time and are left as written);
3. reports **vocabulary health**: size (declared, proposed, merged), per-relation frequency, and
   proposed terms that no stored episode uses;
4. **re-abstracts** episodes that lack any of the levels L1–L3 with the configured encoder (the
   deterministic encoder by default): the text is the episode's L0, else its symptom, violated
   invariant and fix; missing L1 and L3 come from the encoder's output on that text; a missing L2
   is written from the stored structure itself (atoms and edges over the episode's own role tags,
   the same form the deterministic encoder writes) — departure: the encoder's L2 would be over
   the roles *it* drafted, not the stored ones. An episode with no text at all gets L2 only.

Everything computed is written in one transaction (:meth:`Memory.write_consolidation`): a failure
leaves the store as it was. Deterministic: same store, same result.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, cast

from analogist.description import Description, Expr
from analogist.errors import AnalogistError
from analogist.judge import JudgeParams, judge_mapping, self_score
from analogist.memory.sqlite import Memory
from analogist.params import bounded, check_bounds
from analogist.signature import (
    EPISODE_ENTITY,
    Atom,
    Levels,
    Signature,
    compile_signature,
    default_signature_vocabulary,
    validate_signature,
)
from analogist.sme import GlobalMapping, SMEParams, match
from analogist.vocabulary import ProposedTermWarning, Vocabulary

__all__ = [
    "ConsolidateParams",
    "ConsolidationReport",
    "InducedSchema",
    "SchemaFit",
    "consolidate",
    "induce_schema",
    "induce_schemas",
    "pair_contradictions",
    "pair_score",
    "plan_vocabulary",
    "reabstract",
    "schema_summary",
    "schema_fit",
    "structural_l2",
    "vocabulary_health",
]

WRITER = "analogist-consolidate"


@dataclass(frozen=True, slots=True)
class ConsolidateParams:
    """Settings of one consolidation pass (seed 000 §9; Gick & Holyoak 1983; Gentner,
    Loewenstein & Thompson 2003; SME: Falkenhainer, Forbus & Gentner 1989).

    Attributes:
        min_pair_score: a pair *maps well* when SME's score over the larger self-match score
            reaches this.
        min_schema_relations: fewest shared relations a schema must keep.
        min_schema_edges: fewest shared causal edges a schema must keep (a schema without a
            causal edge carries no mechanism).
        max_episodes: refuse namespaces larger than this (pairwise comparison is quadratic).
        map_threshold: normalised score (mapping score over the target's self-match score, as in
            retrieval) at or above which a schema *maps onto* a target (with the judge letting its
            conclusion or mechanism transfer); fixed in advance, see :func:`schema_fit`.
        merge_synonyms: run the vocabulary merge.
        rewrite_merged: rewrite stored episodes that use a merged proposed alias.
        reabstract: re-abstract episodes lacking levels.
        sme: the engine's parameters.
    """

    min_pair_score: float = bounded(0.5, lo=0.0, hi=1.0)
    min_schema_relations: int = bounded(2, lo=0, integer=True)
    min_schema_edges: int = bounded(1, lo=0, integer=True)
    max_episodes: int = bounded(2000, lo=0, integer=True)
    map_threshold: float = bounded(0.5, lo=0.0, hi=1.0)
    merge_synonyms: bool = True
    rewrite_merged: bool = True
    reabstract: bool = True
    sme: SMEParams = field(default_factory=SMEParams)

    def __post_init__(self) -> None:
        check_bounds(self)


@dataclass(frozen=True, slots=True)
class InducedSchema:
    """One induced schema: its Signature, member episode ids, the pairs (and their scores) it
    was induced from, and each generalised tag's origin (episode id → role tag)."""

    name: str
    signature: Signature
    members: tuple[str, ...]
    pairs: tuple[tuple[str, str, float], ...]
    role_origins: dict[str, dict[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "members": list(self.members),
                "pairs": [list(p) for p in self.pairs],
                "role_origins": {k: dict(v) for k, v in self.role_origins.items()},
                "signature": self.signature.to_data()}


@dataclass(frozen=True, slots=True)
class SchemaFit:
    """How a schema maps onto a target: the normalised score, the judge's verdict, and whether
    it *maps* by the stated rule."""

    normalized: float
    verdict: str
    maps: bool
    role_map: dict[str, str]


@dataclass
class ConsolidationReport:
    namespace: str
    episodes: int
    pairs_compared: int
    pairs_mapping_well: int
    schemas: list[InducedSchema]
    merges: list[dict[str, Any]]
    health: dict[str, Any]
    reabstracted: list[str]
    notes: list[str]
    written: dict[str, int] | None

    def to_json(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "episodes": self.episodes,
                "pairs_compared": self.pairs_compared,
                "pairs_mapping_well": self.pairs_mapping_well,
                "schemas": [s.to_json() for s in self.schemas], "merges": list(self.merges),
                "vocabulary_health": self.health, "reabstracted": list(self.reabstracted),
                "notes": list(self.notes), "written": self.written}

    def render(self) -> str:
        out = [f"consolidated namespace {self.namespace!r}: {self.episodes} episode(s), "
               f"{self.pairs_compared} pair(s) compared, {self.pairs_mapping_well} map well",
               f"schemas: {len(self.schemas)}"]
        for s in self.schemas:
            out.append(f"  {s.name}  members {', '.join(s.members)}  "
                       f"({len(s.signature.relations)} relations, "
                       f"{len(s.signature.causal_chain)} edges)")
        out.append(f"synonym merges: {len(self.merges)}")
        for m in self.merges:
            out.append(f"  {m['alias']} -> {m['canonical']} (count {m['count_moved']}; "
                       f"{m['reason']})")
        h = self.health
        out.append(f"vocabulary: {h['declared']} declared, {h['proposed']} proposed, "
                   f"{h['merged']} merged; {len(h['proposed_unused'])} proposed but unused")
        out.append(f"re-abstracted: {len(self.reabstracted)}")
        out.extend(f"note: {n}" for n in self.notes)
        return "\n".join(out)


# -- schema induction ----------------------------------------------------------------------------
def _compile(sig: Signature, vocab: Vocabulary) -> Description:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ProposedTermWarning)
        return compile_signature(sig, vocab)


def _sig(x: Any, field: str) -> Signature:
    if isinstance(x, Signature):
        return x
    if isinstance(x, dict):
        try:
            return validate_signature(x)
        except AnalogistError as e:
            raise AnalogistError(e.message, field=f"{field}.{e.field}" if e.field else field
                                 ) from None
    raise AnalogistError(f"expected a Signature or a mapping, got {type(x).__name__}",
                         field=field)


def pair_score(mapping_score: float, self_a: float, self_b: float) -> float:
    """The share of the larger of two self-match scores a mapping covers (0 when empty)."""
    top = max(self_a, self_b)
    return min(1.0, mapping_score / top) if top > 0 else 0.0


def _atom_expr(atom: Atom, canon: Any) -> Expr:
    return Expr(canon(atom.predicate), atom.args or (EPISODE_ENTITY,))


def _tag_name(pred: str, pos: int) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"{pred}_{pos}".upper())[:60]


def _atom_key(atom: Atom, canon: Any, roles: dict[str, str] | None = None
              ) -> tuple[str, tuple[str, ...]] | None:
    if roles is None:
        return canon(atom.predicate), atom.args
    img = tuple(roles.get(r, "") for r in atom.args)
    return (canon(atom.predicate), img) if all(img) else None


def _one_way(a: Signature, b: Signature, role_map: dict[str, str], vocab: Vocabulary
             ) -> list[str]:
    canon = vocab.canonical
    b_edges: dict[tuple[Any, Any], list[Any]] = {}
    for e in b.causal_chain:
        b_edges.setdefault((_atom_key(e.cause, canon), _atom_key(e.effect, canon)),
                           []).append(e)
    out: list[str] = []
    for e in a.causal_chain:
        c, f = _atom_key(e.cause, canon, role_map), _atom_key(e.effect, canon, role_map)
        if c is None or f is None:
            continue
        fwd = b_edges.get((c, f), [])
        if any(te.edge == e.edge and te.sign == e.sign for te in fwd):
            continue
        for te in b_edges.get((f, c), []):
            out.append(f"{a.episode_id}: {e.cause.text()} {e.edge} {e.effect.text()} is "
                       f"reversed in {b.episode_id} ({te.cause.text()} {te.edge} "
                       f"{te.effect.text()})")
        for te in fwd:
            out.append(f"{a.episode_id}: {e.cause.text()} {e.edge}"
                       f"{'' if e.sign == 1 else ' (negative)'} {e.effect.text()} is "
                       f"{te.edge}{'' if te.sign == 1 else ' (negative)'} in {b.episode_id}")
    b_rels = {k for r in b.relations if (k := _atom_key(r, canon)) is not None}
    for r in a.relations:
        p = vocab.get(r.predicate)
        if len(r.args) != 2 or (p is not None and p.commutative):
            continue
        k = _atom_key(r, canon, role_map)
        if k is None or k in b_rels:
            continue
        if (k[0], (k[1][1], k[1][0])) in b_rels:
            out.append(f"{a.episode_id}: {r.text()} has its roles swapped in {b.episode_id}")
    return out


def pair_contradictions(a: Signature, b: Signature, role_map: dict[str, str],
                        vocab: Vocabulary | None = None) -> list[str]:
    """Structure one episode states the other way round from the other, under ``role_map``
    (a's role tags → b's): a causal edge reversed, or of the opposite kind or sign, between the
    projected atoms (when the other side does not also state it the same way — a feedback loop
    states both directions), or a binary non-commutative relation with its roles swapped. Both
    directions are checked. A role tag both episodes have that ``role_map`` leaves unmapped on
    both sides is taken to name the same role (SME maps no role that only occurs in unmatched
    structure — exactly where a reversed edge sits). Pure; predicate names compared through
    ``vocab``."""
    vocab = vocab if vocab is not None else default_signature_vocabulary()
    a, b = _sig(a, "a"), _sig(b, "b")
    rm = {x: y for x, y in role_map.items() if x in a.roles and y in b.roles}
    taken = set(rm.values())
    for r in sorted(set(a.roles) & set(b.roles)):   # a tag both sides share and SME left
        if r not in rm and r not in taken:          # unmapped names the same role
            rm[r] = r
    inv = {y: x for x, y in rm.items()}
    return list(dict.fromkeys([*_one_way(a, b, rm, vocab), *_one_way(b, a, inv, vocab)]))


def _words(name: str) -> str:
    return name.replace("_", " ").strip()


def schema_summary(sig: Signature, vocab: Vocabulary | None = None) -> tuple[str, str]:
    """A schema's summary from its own structure: (L1, L3). L1 says what holds between the
    generalised roles (each relation over its tags, with the predicate's definition when the
    vocabulary has one); L3 states the mechanism as the longest causal path (edge words between
    the states), or the relations when there is no edge. Pure and deterministic."""
    vocab = vocab if vocab is not None else default_signature_vocabulary()

    def phrase(atom: Atom) -> str:
        p = vocab.get(atom.predicate)
        args = ", ".join(atom.args)
        base = f"{_words(atom.predicate)}({args})" if atom.args else _words(atom.predicate)
        return f"{base} [{p.definition}]" if p is not None and p.definition else base

    rels = [phrase(r) for r in sig.relations]
    l1 = ("; ".join(rels) + ".") if rels else ""
    # the longest simple causal path (ties: first found in stated order)
    adj: dict[str, list[Any]] = {}
    for e in sig.causal_chain:
        adj.setdefault(e.cause.text(), []).append(e)
    best: list[Any] = []

    def walk(atom: str, path: list[Any], seen: set[str]) -> None:
        nonlocal best
        if len(path) > len(best):
            best = list(path)
        if len(path) >= 8:
            return
        for e in adj.get(atom, []):
            if e.effect.text() not in seen:
                walk(e.effect.text(), [*path, e], seen | {e.effect.text()})

    for e in sig.causal_chain:
        walk(e.cause.text(), [], {e.cause.text()})
    if best:
        def st(atom: Atom) -> str:
            return f"{_words(atom.predicate)}({', '.join(atom.args)})" if atom.args \
                else _words(atom.predicate)

        parts = [st(best[0].cause)]
        for e in best:
            parts.append(f"{'does not ' if e.sign == -1 else ''}{_words(e.edge)} {st(e.effect)}")
        l3 = " ".join(parts)
        rest = len(sig.causal_chain) - len(best)
        if rest:
            l3 += f" (and {rest} more edge(s))"
    else:
        l3 = "; ".join(f"{_words(r.predicate)}({', '.join(r.args)})" for r in sig.relations)
    if not l1:
        l1 = l3
    return l1[:4000], l3[:4000]


def induce_schema(a: Signature, b: Signature, *, vocab: Vocabulary | None = None,
                  params: ConsolidateParams | None = None,
                  descriptions: tuple[Description, Description] | None = None,
                  mapping: GlobalMapping | None = None) -> InducedSchema | None:
    """The schema two episodes share, or None when they do not map well, contradict each other
    (see the module docstring) or share too little.

    ``descriptions`` and ``mapping`` (of ``a`` onto ``b``) may be passed when already computed.
    """
    return _induce_pair(a, b, vocab=vocab, params=params, descriptions=descriptions,
                        mapping=mapping)[0]


def _shared_parts(a: Signature, b: Signature, da: Description, db: Description,
                  mp: GlobalMapping) -> tuple[list[Atom], list[tuple[Any, str]], dict[str, str]]:
    """The relations and causal edges of ``a`` the mapping carries onto ``b`` (edges with the same
    sign, each marked observed when both sides observe it), and ``a``'s role to ``b``'s role."""
    canon = da.vocabulary.canonical
    pairs = dict(mp.expression_pairs)
    role_b = {x: y for x, y in mp.entity_pairs if x in a.roles}
    b_edge_of = {Expr(db.vocabulary.canonical(e.edge),
                      (_atom_expr(e.cause, db.vocabulary.canonical),
                       _atom_expr(e.effect, db.vocabulary.canonical))): e
                 for e in b.causal_chain}
    rels = [r for r in a.relations if _atom_expr(r, canon) in pairs
            and all(x in role_b for x in r.args)]
    edges = []
    for e in a.causal_chain:
        x = Expr(canon(e.edge), (_atom_expr(e.cause, canon), _atom_expr(e.effect, canon)))
        y = pairs.get(x)
        if y is None:
            continue
        eb = b_edge_of.get(y)
        if eb is None or eb.sign != e.sign:
            continue
        if not all(r in role_b for at in (e.cause, e.effect) for r in at.args):
            continue
        edges.append((e, "observed" if e.status == eb.status == "observed" else "inferred"))
    return rels, edges, role_b


def _role_tags(rels: list[Atom], edges: list[tuple[Any, str]],
               role_b: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The roles the shared parts use (first-seen order) and each one's generalised tag: a tag
    both sides share is kept; else the role's first structural position, made unique."""
    used: list[str] = []
    for atom in [*rels, *(x for e, _s in edges for x in e.atoms())]:
        for r in atom.args:
            if r not in used:
                used.append(r)
    first_pos: dict[str, str] = {}
    for atom in [*rels, *(x for e, _s in edges for x in e.atoms())]:
        for i, r in enumerate(atom.args, 1):
            first_pos.setdefault(r, _tag_name(atom.predicate, i))
    tag: dict[str, str] = {}
    taken: set[str] = set()
    for r in sorted(used):
        t = r if role_b[r] == r else first_pos[r]
        base, n = t, 2
        while t in taken:
            t = f"{base}_{n}"
            n += 1
        taken.add(t)
        tag[r] = t
    return used, tag


def _renamed(atom: Atom, tag: dict[str, str]) -> list[str]:
    """``atom`` as a list, its arguments renamed by ``tag``."""
    return [atom.predicate, *(tag[x] for x in atom.args)]


def _renamed_text(atom: Atom, tag: dict[str, str]) -> str:
    """``atom`` as ``pred(a,b)`` text, its arguments renamed by ``tag``."""
    return f"{atom.predicate}({','.join(tag[x] for x in atom.args)})"


def _rename_free(text: str | None, side: dict[str, str]) -> str | None:
    """Free text with every whole-word role name replaced by its tag (None for empty text)."""
    if not text:
        return None
    keys = sorted(side, key=len, reverse=True)
    if not keys:
        return text
    pat = re.compile(r"\b(" + "|".join(re.escape(k) for k in keys) + r")\b")
    return pat.sub(lambda m: side[m.group(1)], text)


def _schema_data(a: Signature, b: Signature, rels: list[Atom], edges: list[tuple[Any, str]],
                 role_b: dict[str, str], used: list[str],
                 tag: dict[str, str]) -> dict[str, Any]:
    """The schema's signature data (name from a digest of its parts, L2 only) from the shared
    parts renamed to the generalised tags."""
    roles = {tag[r]: (f"generalises {a.episode_id}:{r} ({a.roles[r][:150]}) and "
                      f"{b.episode_id}:{role_b[r]} ({b.roles[role_b[r]][:150]})")
             for r in used}
    chain = [{"cause": _renamed_text(e.cause, tag), "edge": e.edge,
              "effect": _renamed_text(e.effect, tag), "sign": e.sign, "status": st}
             for e, st in edges]
    inv_b = {role_b[r]: tag[r] for r in used}
    fix = (_rename_free(a.fix_operator, tag) if a.fix_operator
           else _rename_free(b.fix_operator, inv_b))
    key_rel = sorted(" ".join(_renamed(r, tag)) for r in rels)
    key_edge = sorted(f"{c['cause']} {c['edge']}{c['sign']} {c['effect']}" for c in chain)
    digest = hashlib.sha256("\n".join([*key_rel, "|", *key_edge]).encode()).hexdigest()[:12]
    name = f"schema-{digest}"
    l2 = "; ".join([*(f"{r[0]}({','.join(r[1:])})"
                      for r in sorted(_renamed(x, tag) for x in rels)),
                    *(f"{c['cause']} {'not ' if c['sign'] == -1 else ''}{c['edge']} "
                      f"{c['effect']}" for c in chain)])
    return {"episode_id": name, "kind": "schema", "roles": roles,
            "relations": [_renamed(r, tag) for r in rels], "causal_chain": chain,
            "fix_operator": fix, "levels": {"L2": l2[:4000]},
            "provenance": {"writer": WRITER}}


def _induce_pair(a: Signature, b: Signature, *, vocab: Vocabulary | None = None,
                 params: ConsolidateParams | None = None,
                 descriptions: tuple[Description, Description] | None = None,
                 mapping: GlobalMapping | None = None) -> tuple[InducedSchema | None, bool]:
    """:func:`induce_schema` and whether the pair is contradictory (checked for every pair SME
    maps at all, whatever its score, so that a merge can refuse it)."""
    params = params or ConsolidateParams()
    a, b = _sig(a, "a"), _sig(b, "b")
    vocab = vocab if vocab is not None else default_signature_vocabulary()
    da, db = descriptions or (_compile(a, vocab), _compile(b, vocab))
    mp = mapping
    if mp is None:
        mp = match(da, db, params.sme).best
    if mp is None:
        return None, False
    rep = judge_mapping(a, b, da, db, cast(Any, None), mapping=mp,
                        params=JudgeParams(sme=params.sme))
    if rep.contradictions or pair_contradictions(a, b, dict(rep.role_map), vocab):
        return None, True
    score = pair_score(mp.score, self_score(da, params.sme), self_score(db, params.sme))
    if score < params.min_pair_score:
        return None, False
    rels, edges, role_b = _shared_parts(a, b, da, db, mp)
    if len(rels) < params.min_schema_relations or len(edges) < params.min_schema_edges:
        return None, False
    used, tag = _role_tags(rels, edges, role_b)
    data = _schema_data(a, b, rels, edges, role_b, used, tag)
    sig = validate_signature(data)
    l1, l3 = schema_summary(sig, vocab)
    data["levels"] = {"L1": l1, "L2": data["levels"]["L2"], "L3": l3}
    sig = validate_signature(data)
    origins = {tag[r]: {a.episode_id: r, b.episode_id: role_b[r]} for r in used}
    return InducedSchema(data["episode_id"], sig, (a.episode_id, b.episode_id),
                         ((a.episode_id, b.episode_id, round(score, 6)),), origins), False


def induce_schemas(episodes: Sequence[Signature], *, vocab: Vocabulary | None = None,
                   params: ConsolidateParams | None = None,
                   cache: dict[tuple[str, str], Any] | None = None,
                   progress: Callable[[int, int], None] | None = None
                   ) -> tuple[list[InducedSchema], int, int]:
    """Compare every pair of ``episodes`` (in the given order) and induce their schemas.

    Returns ``(schemas, pairs compared, pairs mapping well)``; schemas with the same structure
    are merged (members and pairs united). ``cache`` (optional, keyed by the two episode ids)
    memoises pair results across calls on overlapping episode sets (the benchmark's folds).
    ``progress`` (optional) is called with (pairs compared, pairs in all) after each pair."""
    params = params or ConsolidateParams()
    vocab = vocab if vocab is not None else default_signature_vocabulary()
    if len(episodes) > params.max_episodes:
        raise AnalogistError(f"{len(episodes)} episodes is over max_episodes="
                             f"{params.max_episodes} (pairwise comparison is quadratic)",
                             field="max_episodes")
    episodes = [_sig(s, f"episodes[{i}]") for i, s in enumerate(episodes)]
    ids = [s.episode_id for s in episodes]
    if len(set(ids)) != len(ids):
        raise AnalogistError("episode ids repeat", field="episodes")
    descs = {s.episode_id: _compile(s, vocab) for s in episodes}
    by_name: dict[str, InducedSchema] = {}
    compared = well = 0
    found: list[InducedSchema] = []
    contra: set[frozenset[str]] = set()
    n_pairs = len(episodes) * (len(episodes) - 1) // 2
    for a, b in combinations(episodes, 2):
        key = (a.episode_id, b.episode_id)
        compared += 1
        if progress is not None:
            progress(compared, n_pairs)
        if cache is not None and key in cache:
            got, bad = cache[key]
        else:
            got, bad = _induce_pair(a, b, vocab=vocab, params=params,
                                    descriptions=(descs[a.episode_id], descs[b.episode_id]))
            if cache is not None:
                cache[key] = (got, bad)
        if bad:
            contra.add(frozenset(key))
        if got is not None:
            well += 1
            found.append(got)
    # merge schemas of the same structure, never uniting two members that contradict each
    # other (a pair whose new member contradicts a member already in is left out; pair order)
    for got in found:
        old = by_name.get(got.name)
        if old is None:
            by_name[got.name] = got
            continue
        new = [m for m in got.members if m not in old.members]
        if any(frozenset((n, o)) in contra for n in new for o in old.members):
            continue
        members = tuple(dict.fromkeys([*old.members, *got.members]))
        origins = {t: {**old.role_origins.get(t, {}), **got.role_origins.get(t, {})}
                   for t in old.role_origins}
        by_name[got.name] = InducedSchema(old.name, old.signature, members,
                                          (*old.pairs, *got.pairs), origins)
    return sorted(by_name.values(), key=lambda s: s.name), compared, well


def schema_fit(schema: Signature, target: Signature, *, vocab: Vocabulary | None = None,
               params: ConsolidateParams | None = None) -> SchemaFit:
    """Whether ``schema`` maps onto ``target``. The rule, fixed before any test was run: the
    normalised score (SME score over the target's self-match score, as retrieval ranks) reaches
    ``map_threshold`` (0.5) **and** the judge lets the conclusion or the mechanism transfer
    (its verdict is not "no transfer" or "conclusion already holds")."""
    params = params or ConsolidateParams()
    schema, target = _sig(schema, "schema"), _sig(target, "target")
    vocab = vocab if vocab is not None else default_signature_vocabulary()
    ds, dt = _compile(schema, vocab), _compile(target, vocab)
    res = match(ds, dt, params.sme)
    best = res.best
    total = self_score(dt, params.sme)
    norm = min(1.0, best.score / total) if best is not None and total > 0 else 0.0
    rep = judge_mapping(schema, target, ds, dt, res, params=JudgeParams(sme=params.sme))
    return SchemaFit(norm, rep.verdict, norm >= params.map_threshold and
                     (rep.transfer or rep.transfer_mechanism), dict(rep.role_map))


# -- vocabulary ----------------------------------------------------------------------------------
def _norm(name: str) -> str:
    words = [w for w in re.split(r"[_\-\s]+", name.lower()) if w]
    return "".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                   for w in words)


def plan_vocabulary(uses: dict[str, int], terms: Sequence[dict[str, Any]], vocab: Vocabulary,
                    arities: dict[str, int] | None = None
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    """The vocab-table rows after a synonym merge, the merge map, and the renames to apply to
    stored episodes (proposed alias → canonical). Pure. ``uses``: predicate → uses in stored
    episodes; ``terms``: the current vocab-table rows; ``arities``: arity of each used name."""
    arities = arities or {}
    rows: dict[str, dict[str, Any]] = {}
    for t in terms:
        r = dict(t)
        if r.get("status") == "merged":  # merges are recomputed from the current uses
            r.update(status="declared" if vocab.get(r["name"]) is not None else "proposed",
                     merged_into=None)
        rows[r["name"]] = r
    for name, n in uses.items():
        p = vocab.get(name)
        r = rows.get(name)
        if r is None:
            r = {"name": name, "definition": "", "count": 0, "merged_into": None}
            rows[name] = r
        if p is not None and p.name == name:
            r.update(kind=str(p.kind), arity=p.arity, definition=p.definition or
                     r.get("definition", ""), status="declared")
        else:
            r.setdefault("kind", "relation" if arities.get(name, 2) >= 2 else "attribute")
            r.setdefault("arity", arities.get(name, 2))
            r["status"] = "proposed" if p is None else "declared"
        r["count"] = n
    for name, r in rows.items():
        if name not in uses:
            r["count"] = 0
        r.setdefault("merged_into", None)
        r.setdefault("definition", "")
    # canonical targets
    merges: list[dict[str, Any]] = []
    renames: dict[str, str] = {}
    declared_by_norm: dict[tuple[str, int], str] = {}
    for p in vocab:
        declared_by_norm.setdefault((_norm(p.name), p.arity), p.name)
    for name in sorted(rows):
        r = rows[name]
        if r["status"] == "merged":
            continue
        p = vocab.get(name)
        target, reason = None, ""
        if p is not None and p.name != name:
            target, reason = p.name, "declared synonym"
        elif p is None and r["status"] == "proposed":
            hit = declared_by_norm.get((_norm(name), int(r["arity"])))
            if hit is not None and hit != name:
                target, reason = hit, "same normalised name as a declared term"
        if target is None:
            continue
        _merge_into(rows, name, target, reason, merges, vocab)
        if reason != "declared synonym":
            renames[name] = target
    # proposed names that normalise alike: merge into the most used (then alphabetical first)
    groups: dict[tuple[str, int], list[str]] = {}
    for name, r in rows.items():
        if r["status"] == "proposed":
            groups.setdefault((_norm(name), int(r["arity"])), []).append(name)
    for names in groups.values():
        if len(names) < 2:
            continue
        keep = sorted(names, key=lambda x: (-rows[x]["count"], x))[0]
        for name in sorted(names):
            if name != keep:
                _merge_into(rows, name, keep, "same normalised name as a proposed term",
                            merges, vocab)
                renames[name] = keep
    out = [{k: rows[n][k] for k in ("name", "kind", "arity", "definition", "status", "count",
                                    "merged_into")} for n in sorted(rows)]
    return out, merges, renames


def _merge_into(rows: dict[str, dict[str, Any]], alias: str, target: str, reason: str,
                merges: list[dict[str, Any]], vocab: Vocabulary) -> None:
    r = rows[alias]
    t = rows.get(target)
    if t is None:
        p = vocab.get(target)
        t = {"name": target, "kind": str(p.kind) if p else r["kind"],
             "arity": p.arity if p else r["arity"],
             "definition": (p.definition if p else "") or "", "status": "declared" if p
             else "proposed", "count": 0, "merged_into": None}
        rows[target] = t
    moved = int(r["count"])
    t["count"] = int(t["count"]) + moved
    r.update(status="merged", merged_into=target, count=0)
    merges.append({"alias": alias, "canonical": target, "count_moved": moved, "reason": reason})


def vocabulary_health(terms: Sequence[dict[str, Any]], uses: dict[str, int]) -> dict[str, Any]:
    """Size, per-relation frequency (uses in stored episodes) and proposed-but-unused terms."""
    by_status = {s: sorted(t["name"] for t in terms if t["status"] == s)
                 for s in ("declared", "proposed", "merged")}
    return {
        "size": len(terms) - len(by_status["merged"]),
        "declared": len(by_status["declared"]),
        "proposed": len(by_status["proposed"]),
        "merged": len(by_status["merged"]),
        "frequency": dict(sorted(uses.items(), key=lambda kv: (-kv[1], kv[0]))),
        "proposed_unused": [t["name"] for t in sorted(terms, key=lambda t: t["name"])
                            if t["status"] == "proposed" and uses.get(t["name"], 0) == 0],
        "singletons": sorted(n for n, c in uses.items() if c == 1),
    }


def _rename(sig: Signature, renames: dict[str, str]) -> Signature | None:
    if not any(a.predicate in renames for _f, a in sig.atoms()):
        return None
    data = sig.to_data()

    def fix(atom: str) -> str:
        pred, rest = atom.split("(", 1)
        return f"{renames.get(pred, pred)}({rest}"

    data["relations"] = [[renames.get(r[0], r[0]), *r[1:]] for r in data.get("relations", [])]
    data["causal_chain"] = [{**e, "cause": fix(e["cause"]), "effect": fix(e["effect"])}
                            for e in data.get("causal_chain", [])]
    return validate_signature(data)


# -- re-abstraction ------------------------------------------------------------------------------
def structural_l2(sig: Signature) -> str | None:
    """L2 written from the stored structure: atoms and edges over the episode's role tags."""
    parts = [a.text() for a in sig.relations]
    parts += [f"{e.cause.text()} {'not ' if e.sign == -1 else ''}{e.edge} {e.effect.text()}"
              for e in sig.causal_chain]
    return "; ".join(parts)[:4000] or None


def _episode_text(sig: Signature) -> str | None:
    if sig.levels.L0:
        return sig.levels.L0
    parts = [x.strip().rstrip(".") + "." for x in (sig.symptom, sig.violated_invariant,
                                                   sig.fix_operator) if x and x.strip()]
    return " ".join(parts) or None


def reabstract(sig: Signature, encoder: Any | None) -> tuple[Signature | None, list[str]]:
    """Fill the levels ``sig`` lacks (see the module docstring); ``(None, notes)`` when it lacks
    none. ``encoder`` has ``encode(text, episode_id=, domain=)`` → an EncodeResult, or is None
    (then only L2 is written)."""
    sig = _sig(sig, "sig")
    lv = sig.levels
    if lv.L1 and lv.L2 and lv.L3:
        return None, []
    notes: list[str] = []
    text = _episode_text(sig)
    enc_levels = None
    if text is not None and encoder is not None and (not lv.L1 or not lv.L3):
        try:
            res = encoder.encode(text, episode_id=sig.episode_id, domain=sig.surface.domain)
            enc_levels = res.signature.levels
        except AnalogistError as e:
            notes.append(f"{sig.episode_id}: the encoder could not read its text: {e}"[:300])
    elif text is None:
        notes.append(f"{sig.episode_id}: no text to re-abstract; L2 written from structure only")
    elif encoder is None and (not lv.L1 or not lv.L3):
        notes.append(f"{sig.episode_id}: no encoder configured; L1/L3 left missing")
    new = Levels(L0=lv.L0 or text,
                 L1=lv.L1 or (enc_levels.L1 if enc_levels else None),
                 L2=lv.L2 or structural_l2(sig),
                 L3=lv.L3 or (enc_levels.L3 if enc_levels else None))
    if new == lv:
        return None, notes
    data = sig.to_data()
    data["levels"] = new.model_dump(exclude_none=True)
    return validate_signature(data), notes


# -- the pass ------------------------------------------------------------------------------------
def consolidate(memory: Memory, namespace: str = "default", *,
                vocab: Vocabulary | None = None, params: ConsolidateParams | None = None,
                encoder: Any = "deterministic", dry_run: bool = False,
                cache: dict[tuple[str, str], Any] | None = None,
                progress: Callable[[int, int], None] | None = None) -> ConsolidationReport:
    """One consolidation pass over ``namespace`` (see the module docstring).

    ``encoder``: ``"deterministic"`` (default; a :class:`~analogist.encode.deterministic.
    DeterministicEncoder` is made only when an episode lacks levels), any object with
    ``encode(text, episode_id=, domain=)``, or None. ``dry_run`` computes without writing.
    ``progress`` is passed to :func:`induce_schemas` (pairs compared, pairs in all).
    """
    params = params or ConsolidateParams()
    if not isinstance(params, ConsolidateParams):
        raise AnalogistError("params must be ConsolidateParams", field="params")
    vocab = vocab if vocab is not None else default_signature_vocabulary()
    eps = memory.list(namespace)
    notes: list[str] = []
    sigs = [e.signature for e in eps if e.kind != "schema"]
    # 1. vocabulary first: schemas are induced over the merged names
    uses = memory.predicate_uses(namespace)
    arities: dict[str, int] = {}
    for s in sigs:
        for _f, a in s.atoms():
            arities.setdefault(a.predicate, max(len(a.args), 1))
        for e in s.causal_chain:
            arities.setdefault(e.edge, 2)
    terms, merges, renames = plan_vocabulary(uses, memory.terms(namespace), vocab, arities) \
        if params.merge_synonyms else (memory.terms(namespace), [], {})
    known = {m["alias"] for m in memory.merges(namespace)}
    merges = [m for m in merges if m["count_moved"] > 0 or m["alias"] not in known]
    rewritten: dict[str, Signature] = {}
    if renames and params.rewrite_merged:
        for s in sigs:
            try:
                r = _rename(s, renames)
            except AnalogistError as e:
                notes.append(f"{s.episode_id}: not rewritten after the merge: {e}"[:300])
                continue
            if r is not None:
                rewritten[s.episode_id] = r
    sigs = [rewritten.get(s.episode_id, s) for s in sigs]
    # 2. re-abstraction
    reabstracted: list[str] = []
    if params.reabstract:
        lacking = [s for s in sigs if not (s.levels.L1 and s.levels.L2 and s.levels.L3)]
        enc = encoder
        if lacking and encoder == "deterministic":
            from analogist.encode.deterministic import DeterministicEncoder  # spaCy, on use

            enc = DeterministicEncoder()
        elif isinstance(encoder, str) and encoder != "deterministic":
            raise AnalogistError(f"encoder must be 'deterministic', None or an encoder object, "
                                 f"got {encoder!r}", field="encoder")
        for s in lacking:
            new, n = reabstract(s, enc)
            notes.extend(n)
            if new is not None:
                rewritten[s.episode_id] = new
                reabstracted.append(s.episode_id)
        sigs = [rewritten.get(s.episode_id, s) for s in sigs]
    # 3. schemas
    schemas, compared, well = induce_schemas(sigs, vocab=vocab, params=params, cache=cache,
                                             progress=progress)
    health = vocabulary_health(terms, {**{k: 0 for k in uses}, **_recount(sigs)})
    written = None
    if not dry_run:
        written = memory.write_consolidation(
            namespace=namespace,
            schemas=[{"name": s.name, "description": s.signature.to_data(),
                      "members": list(s.members),
                      "meta": {"pairs": [list(p) for p in s.pairs],
                               "role_origins": s.role_origins, "writer": WRITER}}
                     for s in schemas],
            terms=terms, merges=merges,
            signatures=[rewritten[k] for k in sorted(rewritten)])
    return ConsolidationReport(namespace, len(sigs), compared, well, schemas, merges, health,
                               reabstracted, notes, written)


def _recount(sigs: Sequence[Signature]) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in sigs:
        seen = set(s.relations)
        for a in s.relations:
            out[a.predicate] = out.get(a.predicate, 0) + 1
        for a in {x for e in s.causal_chain for x in e.atoms()} - seen:
            out[a.predicate] = out.get(a.predicate, 0) + 1
        for e in s.causal_chain:
            out[e.edge] = out.get(e.edge, 0) + 1
    return out
