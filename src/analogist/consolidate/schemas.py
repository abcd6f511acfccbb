"""Schema induction: two analogues mapped with SME, their shared structure over generalised role
tags, the contradictions that refuse a pair, and how a schema maps onto a target (step 1 of
:mod:`analogist.consolidate`; "the module docstring" below is that package's)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any, cast

from analogist.consolidate.base import (
    WRITER,
    ConsolidateParams,
    InducedSchema,
    SchemaFit,
    _compile,
    _sig,
)
from analogist.description import Description, Expr
from analogist.errors import AnalogistError
from analogist.judge import JudgeParams, judge_mapping, self_score
from analogist.signature import (
    EPISODE_ENTITY,
    Atom,
    Signature,
    default_signature_vocabulary,
    validate_signature,
)
from analogist.sme import GlobalMapping, match
from analogist.vocabulary import Vocabulary


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
