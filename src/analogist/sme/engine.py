"""The Structure-Mapping Engine, as a pipeline of pure functions.

Reference: Falkenhainer, Forbus & Gentner (1989), "The Structure-Mapping Engine: Algorithm and
Examples", Artificial Intelligence 41; Forbus, Ferguson, Lovett & Gentner (2017), "Extending SME to
Handle Large-Scale Cognitive Modeling", Cognitive Science 41. The behaviour follows the published
SME v4 (Northwestern QRG) closely enough to reproduce its regression results; every departure is
listed under *Departures* below.

Pipeline (each step a function over plain data, called in order by :func:`match`):

1. :func:`build_match_hypotheses` — local matches between expressions with identical functors
   (relations, attributes, functions, logical connectives; never ubiquitous predicates), expanded
   recursively through arguments: entities always align as arguments; expressions align as
   arguments when their functors are identical or both are functions of equal arity (so functions
   may correspond non-identically). Every expression match gets a *functor* match hypothesis
   between its two functors; symmetric predicates get a second, argument-swapped hypothesis;
   commutative (and n-ary) predicates get a commutative hypothesis whose possible children are all
   alignable argument pairs. A hypothesis with an unalignable argument is *incomplete*.
2. :func:`propagate_consistency` — incompleteness flows to parents; each hypothesis collects its
   descendants and its *nogoods* (hypotheses sharing its base or target item) bottom-up; it is
   *inconsistent* when the two sets meet (the one-to-one constraint and parallel connectivity).
   Commutative hypotheses keep only the constraints common to every choice for an argument, and
   are resolved when each argument has one consistent choice left.
3. :func:`find_kernels` — each complete, consistent hypothesis without a complete, consistent
   parent (functor hypotheses excepted) roots a kernel mapping: itself and all its descendants.
4. :func:`evaluate` — trickle-down structural evaluation: identical functors score
   ``same_functor`` locally, non-identical functions ``same_function``; each hypothesis then takes
   ``trickle_down`` times the score of each parent, choosing parents greedily by score so that the
   parents it counts are themselves one-to-one (``block_most_out_of_mapping_contributions``).
5. :func:`greedy_merge` — kernels are partitioned by the base root expression they belong to,
   each partition is merged greedily, and the partition results are merged greedily again into at most
   ``greedy_max_mappings`` global mappings scoring at least ``greedy_cutoff`` of the best; each
   later mapping also takes the consistent kernels of earlier ones (the "less greedy" merge).
6. :func:`rescore_mapping` — a global mapping's final score is recomputed from its own
   hypotheses only (local scores plus trickle-down inside the mapping).
7. :func:`candidate_inferences` — every base root expression that is not mapped but contains a
   mapped item (an expression, or an entity when ``allow_entity_supported_inferences``) is carried
   over: mapped parts are replaced by their target correspondents, unmapped functors keep their
   names, unmapped entities become skolems ``(:skolem e)``.
8. :func:`alignable_differences` — matched expression pairs whose functors differ (e.g.
   ``(pressure beaker)`` ↔ ``(temperature coffee)``): differences that sit on common structure
   (Markman & Gentner 1993). Not part of the reference's output; ours.

Departures from the reference SME v4:

* Minimal ascension, role relations, probabilistic expressions, match filters (required or
  excluded correspondences) and incremental matching are not implemented; the regression
  parameters do not use them (``minimal_ascension_multiplier`` is accepted and unused).
* Order of creation follows the reference (base predicates in order of first appearance, each
  predicate's expressions newest first, target expressions newest first), so ties between equal
  scores break the same way. Scores are double precision where the reference uses single floats:
  a near-tie that single-float rounding makes exact (or breaks) can order kernels differently.
  On the golden random traces this changes one third-ranked mapping in 60 pairs.
* Commutative hypotheses: the reference keeps a "commutatives table" of choice sets per mapping;
  we keep, per mapping, the undecided commutative hypotheses and prune their choice sets with the
  mapping's nogoods, integrating a choice when exactly one remains per argument and declaring the
  mapping inconsistent when an argument has none. Consistency between mappings checks those
  choice sets against the other mapping's nogoods, as the reference does.
* ``unique_attribute_values`` is always on: every entity is distinct.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

from analogist.description import Description, Expr, to_sexpr
from analogist.sme.params import SMEParams
from analogist.vocabulary import PredicateKind

Item = Any  # Expr | str (entity) | _Functor

ENTITY = 0
EXPRESSION = 1
FUNCTOR = 2


class _Functor:
    """A functor as an item of a match hypothesis (kept apart from an entity of the same name)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


class MatchHypothesis:
    """A proposed correspondence between a base item and a target item.

    Attributes with class-level defaults are set on an instance only when they differ (an MH is
    created for every candidate pair, so construction is kept cheap).
    """

    # defaults, overridden per instance when needed
    functor_mh: MatchHypothesis | None = None
    incomplete = False
    inconsistent = False
    desc = 0
    nogood = 0
    score = 0.0
    commutative = False
    possible_children: list[MatchHypothesis] = []  # replaced (never mutated) when commutative
    function_match = False
    identical = True

    def __init__(self, base: Item, target: Item, kind: int, order: int, bk: int = 0,
                 tk: int = 0) -> None:
        self.id = -1
        self.bit = 0
        self.bk = bk  # integer keys of the base and target items (functors: negative)
        self.tk = tk
        self.base = base
        self.target = target
        self.kind = kind
        self.order = order
        self.args: list[MatchHypothesis] = []
        self.parents: list[MatchHypothesis] = []

    @property
    def okay(self) -> bool:
        return not (self.incomplete or self.inconsistent)

    def __repr__(self) -> str:
        return f"<MH {self.id} {_item_str(self.base)} {_item_str(self.target)}>"


def _item_str(item: Item) -> str:
    if isinstance(item, _Functor):
        return item.name
    return to_sexpr(item)


# ------------------------------------------------------------------------------------------
# 1. match hypotheses


@dataclass(slots=True)
class MHSet:
    """All match hypotheses of one comparison, with their indexes."""

    mhs: list[MatchHypothesis] = field(default_factory=list)
    by_pair: dict[tuple[int, int], list[MatchHypothesis]] = field(default_factory=dict)


class _Indexed:
    """One description as integer-indexed arrays (expressions first, then entities), built once
    per description and cached: the builder below works on these integers only."""

    __slots__ = ("items", "n_expr", "functor", "args", "order", "function", "pred", "bins",
                 "__weakref__")

    def __init__(self, d: Description) -> None:
        exprs = d.expressions
        n = len(exprs)
        items: list[Item] = [*exprs, *d.entities]
        index: dict[Item, int] = {x: i for i, x in enumerate(items)}
        vocab = d.vocabulary
        self.items = items
        self.n_expr = n
        self.functor = [e.functor for e in exprs]
        self.args = [tuple(index[a] for a in e.args) for e in exprs]
        self.order = [e.order for e in exprs]
        preds: dict[str, Any] = {}
        for f in self.functor:
            if f not in preds:
                preds[f] = vocab.get(f)
        self.pred = [preds[f] for f in self.functor]
        self.function = [p is not None and p.kind is PredicateKind.FUNCTION for p in self.pred]
        bins: dict[str, list[int]] = {}
        for i, f in enumerate(self.functor):
            bins.setdefault(f, []).append(i)
        self.bins = bins


_INDEXED: dict[int, _Indexed] = {}


def _indexed(d: Description) -> _Indexed:
    """The cached integer view of ``d``, keyed by the object itself (two equal descriptions may
    carry different vocabularies), dropped when ``d`` is collected."""
    key = id(d)
    got = _INDEXED.get(key)
    if got is None:
        got = _INDEXED[key] = _Indexed(d)
        weakref.finalize(d, _INDEXED.pop, key, None)
    return got


class _Builder:
    __slots__ = ("B", "T", "out", "by_pair", "functors", "fkeys")

    def __init__(self, base: Description, target: Description) -> None:
        self.B = _indexed(base)
        self.T = _indexed(target)
        self.out = MHSet()
        self.by_pair = self.out.by_pair
        self.functors: dict[tuple[str, str], MatchHypothesis] = {}
        self.fkeys: tuple[dict[str, int], dict[str, int]] = ({}, {})

    def index(self, mh: MatchHypothesis) -> None:
        out = self.out
        mh.id = len(out.mhs)
        mh.bit = 1 << mh.id
        out.mhs.append(mh)
        key = (mh.bk, mh.tk)
        same = self.by_pair.get(key)
        if same is None:
            self.by_pair[key] = [mh]
        else:
            same.append(mh)

    def functor_alignment(self, mh: MatchHypothesis, b: int, t: int) -> None:
        fb, ft = self.B.functor[b], self.T.functor[t]
        fmh = self.functors.get((fb, ft))
        if fmh is None:
            fmh = MatchHypothesis(_Functor(fb), _Functor(ft), FUNCTOR, 0)
            # functor keys are negative, so they never collide with item indexes
            fmh.bk = -1 - self.fkeys[0].setdefault(fb, len(self.fkeys[0]))
            fmh.tk = -1 - self.fkeys[1].setdefault(ft, len(self.fkeys[1]))
            self.functors[(fb, ft)] = fmh
            self.index(fmh)
        fmh.parents.append(mh)
        mh.functor_mh = fmh

    def alignable(self, b: int, t: int) -> bool:
        """The reference's ``arguments-alignable?`` (without minimal ascension)."""
        B, T = self.B, self.T
        b_ent = b >= B.n_expr
        t_ent = t >= T.n_expr
        if b_ent or t_ent:
            return b_ent and t_ent
        if len(B.args[b]) != len(T.args[t]):
            return False
        return B.functor[b] == T.functor[t] or (B.function[b] and T.function[t])

    def local_match(self, b: int, t: int) -> list[MatchHypothesis]:
        got = self.by_pair.get((b, t))
        if got:
            return got
        B = self.B
        if b >= B.n_expr:
            mh = MatchHypothesis(B.items[b], self.T.items[t], ENTITY, 0, b, t)
            self.index(mh)
            return [mh]
        p = B.pred[b]
        if p is not None:
            if p.symmetric and len(B.args[b]) == 2:
                return self.expression_mh(b, t, False) + self.expression_mh(b, t, True)
            if p.commutative:
                return [self.commutative_mh(b, t, p.n_ary)]
        return self.expression_mh(b, t, False)

    def _new_expr_mh(self, b: int, t: int) -> MatchHypothesis:
        B, T = self.B, self.T
        mh = MatchHypothesis(B.items[b], T.items[t], EXPRESSION,
                             max(B.order[b], T.order[t]), b, t)
        if B.function[b]:
            mh.function_match = True
        if B.functor[b] != T.functor[t]:
            mh.identical = False
        return mh

    def expression_mh(self, b: int, t: int, reverse: bool) -> list[MatchHypothesis]:
        bargs = self.B.args[b]
        targs = self.T.args[t][::-1] if reverse else self.T.args[t]
        n = len(bargs)
        if n != len(targs) or not n:
            mh = self._new_expr_mh(b, t)
            if n != len(targs):
                mh.incomplete = True
            self.index(mh)
            self.functor_alignment(mh, b, t)
            return [mh]
        arg_lists: list[list[MatchHypothesis]] = []
        single = True
        alignable, local_match = self.alignable, self.local_match
        for i in range(n):
            ba, ta = bargs[i], targs[i]
            if not alignable(ba, ta):
                # the reference still proposes the alignable arguments of an incomplete match
                for j in range(i + 1, n):
                    if alignable(bargs[j], targs[j]):
                        local_match(bargs[j], targs[j])
                mh = self._new_expr_mh(b, t)
                mh.incomplete = True
                self.index(mh)
                self.functor_alignment(mh, b, t)
                return [mh]
            got = local_match(ba, ta)
            if len(got) != 1:
                single = False
            arg_lists.append(got)
        if single:
            mh = self._new_expr_mh(b, t)
            args = mh.args
            for x in arg_lists:
                a = x[0]
                # an argument that repeats (e.g. (f x x)) is one child, as in the reference
                if a not in args:
                    args.append(a)
                    a.parents.append(mh)
            self.index(mh)
            self.functor_alignment(mh, b, t)
            return [mh]
        made: list[MatchHypothesis] = []
        for combo in product(*arg_lists):
            mh = self._new_expr_mh(b, t)
            args = mh.args
            for a in combo:
                if a not in args:
                    args.append(a)
                    a.parents.append(mh)
            made.append(mh)
        for mh in made:
            self.index(mh)
            self.functor_alignment(mh, b, t)
        return made

    def commutative_mh(self, b: int, t: int, n_ary: bool) -> MatchHypothesis:
        mh = self._new_expr_mh(b, t)
        mh.commutative = True
        mh.possible_children = []
        self.index(mh)
        self.functor_alignment(mh, b, t)
        aligned_b: set[int] = set()
        aligned_t: set[int] = set()
        bargs, targs = self.B.args[b], self.T.args[t]
        for i, ba in enumerate(bargs):
            for j, ta in enumerate(targs):
                if self.alignable(ba, ta):
                    child = self.local_match(ba, ta)[0]
                    child.parents.append(mh)
                    mh.possible_children.append(child)
                    aligned_b.add(i)
                    aligned_t.add(j)
        miss_b = len(aligned_b) < len(bargs)
        miss_t = len(aligned_t) < len(targs)
        tn = self.T.pred[t]
        t_nary = bool(tn is not None and tn.n_ary)
        if n_ary:
            if (t_nary and (miss_b or miss_t)) or (not t_nary and miss_t):
                mh.incomplete = True
        elif t_nary:
            if miss_b:
                mh.incomplete = True
        elif miss_b and miss_t:
            mh.incomplete = True
        return mh


def build_match_hypotheses(base: Description, target: Description) -> MHSet:
    """Step 1: local matches and their argument expansions (see module docstring)."""
    bld = _Builder(base, target)
    B, T = bld.B, bld.T
    # The reference bins expressions by predicate and walks the base bins in order of first
    # appearance, and each bin's items newest first (base and target alike). Following it keeps
    # the order of creation, and so the order of ties, the same as the reference's.
    for functor, bitems in B.bins.items():
        targets = T.bins.get(functor)
        if not targets:
            continue
        p = B.pred[bitems[0]]
        if p is not None and p.ubiquitous:
            continue
        for b in reversed(bitems):
            n = len(B.args[b])
            for t in reversed(targets):
                if len(T.args[t]) == n:
                    bld.local_match(b, t)
    return bld.out


# ------------------------------------------------------------------------------------------
# 2. structural consistency


def _choice_table(mh: MatchHypothesis, side: int,
                  children: Sequence[MatchHypothesis]) -> list[list[MatchHypothesis]]:
    items = (mh.base if side == 0 else mh.target).args
    table: list[list[MatchHypothesis]] = [[] for _ in items]
    pos: dict[int, int] = {}
    for i, it in enumerate(items):
        pos.setdefault(it, i)
    for c in children:
        i = pos.get(c.base if side == 0 else c.target)
        if i is not None:
            table[i].append(c)
    return table


def _common(table: list[list[MatchHypothesis]], attr: str) -> int:
    out = 0
    for choices in table:
        if not choices:
            continue
        acc = getattr(choices[0], attr)
        for c in choices[1:]:
            acc &= getattr(c, attr)
        out |= acc
    return out


def propagate_consistency(mhset: MHSet) -> None:
    """Step 2: incompleteness, descendants, nogoods and inconsistency (in place)."""
    mhs = mhset.mhs
    # incompleteness flows upward, except into commutative parents
    stack = [m for m in mhs if m.incomplete]
    while stack:
        m = stack.pop()
        for p in m.parents:
            if not p.incomplete and not p.commutative:
                p.incomplete = True
                stack.append(p)
    on_base: dict[int, int] = {}
    on_target: dict[int, int] = {}
    for m in mhs:
        on_base[m.bk] = on_base.get(m.bk, 0) | m.bit
        on_target[m.tk] = on_target.get(m.tk, 0) | m.bit
    for m in mhs:
        m.nogood = (on_base[m.bk] | on_target[m.tk]) & ~m.bit
        m.desc = m.bit
    for m in sorted(mhs, key=_order):  # stable: ties stay in creation order
        d, n = m.desc, m.nogood
        f = m.functor_mh
        if f is not None:
            d |= f.desc
            n |= f.nogood
        if m.commutative:
            bt = _choice_table(m, 0, m.possible_children)
            tt = _choice_table(m, 1, m.possible_children)
            d |= _common(bt, "desc") | _common(tt, "desc")
            n |= _common(bt, "nogood") | _common(tt, "nogood")
        else:
            for a in m.args:
                d |= a.desc
                n |= a.nogood
        m.desc, m.nogood = d, n
        if d & n:
            m.inconsistent = True
    for m in mhs:
        if m.commutative:
            _filter_commutative_children(m)


def _order(m: MatchHypothesis) -> int:
    return m.order


def _filter_commutative_children(m: MatchHypothesis) -> None:
    m.possible_children = [c for c in m.possible_children if c.okay]
    bt = _choice_table(m, 0, m.possible_children)
    tt = _choice_table(m, 1, m.possible_children)
    if any(not c for c in bt) or any(not c for c in tt):
        m.incomplete = True
        return
    if all(len(c) == 1 for c in bt) and all(len(c) == 1 for c in tt):
        m.args = [c[0] for c in bt]
        for a in m.args:
            m.desc |= a.desc
            m.nogood |= a.nogood
        queue = list(m.parents)
        while queue:
            p = queue.pop(0)
            queue.extend(p.parents)
            p.desc |= m.desc
            p.nogood |= m.nogood
            if p.desc & p.nogood:
                p.inconsistent = True


# ------------------------------------------------------------------------------------------
# 3. kernels and mappings


class Mapping:
    """A set of consistent match hypotheses (a kernel, or a merge of kernels)."""

    __slots__ = ("id", "mhs", "nogood", "roots", "submappings", "score", "inconsistent",
                 "pending", "_cache")

    def __init__(self, mid: int, mhs: int, nogood: int, roots: list[MatchHypothesis],
                 submappings: frozenset[int]) -> None:
        self.id = mid
        self.mhs = mhs
        self.nogood = nogood
        self.roots = roots
        self.submappings = submappings
        self.score = 0.0
        self.inconsistent = False
        self.pending: list[MatchHypothesis] = []  # undecided commutative MHs
        self._cache: list[MatchHypothesis] | None = None

    def __repr__(self) -> str:
        return f"<Mapping {self.id} score={self.score:.4f}>"


@dataclass(slots=True)
class _MergeState:
    mhs: list[MatchHypothesis]
    kernels: list[Mapping]
    cache: dict[frozenset[int], Mapping]
    counter: int
    undecided: int = 0  # bits of commutative hypotheses whose arguments are not decided


def _bits(x: int) -> list[int]:
    """Indexes of the set bits of ``x`` (ascending); O(number of set bits)."""
    out = []
    append = out.append
    while x:
        low = x & -x
        append(low.bit_length() - 1)
        x ^= low
    return out


def find_kernels(mhset: MHSet) -> list[Mapping]:
    """Step 3: the kernel mappings, in the reference's discovery order."""
    roots: list[MatchHypothesis] = []
    seen: set[int] = set()

    def visit(m: MatchHypothesis) -> None:
        if not (m.incomplete or m.inconsistent):
            if m.kind == FUNCTOR:
                return
            for p in m.parents:
                if not (p.incomplete or p.inconsistent):
                    return
            if m.id not in seen:
                seen.add(m.id)
                roots.append(m)
        else:
            for a in m.args:
                visit(a)

    for m in reversed(mhset.mhs):
        visit(m)
    # the reference numbers kernels in the reverse of discovery order and lists them in discovery
    # order; the numbers decide the order in which earlier kernels are offered to later mappings
    n = len(roots)
    kernels = [Mapping(n - 1 - i, r.desc, r.nogood, [r], frozenset((n - 1 - i,)))
               for i, r in enumerate(roots)]
    return kernels


# ------------------------------------------------------------------------------------------
# 4. structural evaluation


def evaluate(mhset: MHSet, params: SMEParams) -> None:
    """Step 4: trickle-down scores on every complete, consistent hypothesis (in place).

    Expects fresh hypotheses (score 0) as :func:`build_match_hypotheses` makes them.
    """
    queue = [m for m in reversed(mhset.mhs) if not (m.incomplete or m.inconsistent)]
    queue.sort(key=_neg_order)
    for m in queue:
        m.score = _local_score(m, params)
    td = params.trickle_down
    cap = params.max_local_score
    if not params.block_most_out_of_mapping_contributions:
        in_queue = {m.id for m in queue}
        for m in queue:
            _push_down(m, params, in_queue)
        return
    skip_functors = not params.functor_trickle_down
    for m in queue:
        if skip_functors and m.kind == FUNCTOR:
            continue
        parents = m.parents
        if not parents:
            continue
        s = m.score
        if len(parents) == 1:
            s += td * parents[0].score
        else:
            used_b: set[int] = set()
            used_t: set[int] = set()
            for p in sorted(reversed(parents), key=_neg_score):
                kb, kt = p.bk, p.tk
                if kb in used_b or kt in used_t:
                    continue
                used_b.add(kb)
                used_t.add(kt)
                s += td * p.score
        if cap is not None and s > cap:
            s = cap
        m.score = s


def _neg_order(m: MatchHypothesis) -> int:
    return -m.order


def _neg_score(m: MatchHypothesis) -> float:
    return -m.score


def _local_score(m: MatchHypothesis, params: SMEParams) -> float:
    if m.kind != EXPRESSION:
        return 0.0
    if m.function_match and not m.identical:
        return params.same_function
    return params.same_functor


def _push_down(m: MatchHypothesis, params: SMEParams, members: set[int]) -> None:
    if m.kind != EXPRESSION:
        return
    amount = params.trickle_down * m.score
    cap = params.max_local_score
    targets: list[MatchHypothesis] = []
    if params.functor_trickle_down and m.functor_mh is not None:
        targets.append(m.functor_mh)
    targets.extend(a for a in m.args if a.id in members)
    if m.commutative and not m.args:
        targets.extend(c for c in m.possible_children if c.id in members)
    for a in targets:
        a.score += amount
        if cap is not None and a.score > cap:
            a.score = cap


def _score_of(state: _MergeState, bits: int) -> float:
    mhs = state.mhs
    return sum([mhs[i].score for i in _bits(bits)])


# ------------------------------------------------------------------------------------------
# 5. greedy merge


def _consistent(m1: Mapping, m2: Mapping) -> bool:
    if m1.mhs & m2.nogood or m2.mhs & m1.nogood:
        return False
    for cm, other in ((m1, m2), (m2, m1)):
        for c in cm.pending:
            if _pending_blocked(c, other.nogood):
                return False
    return True


def _pending_blocked(c: MatchHypothesis, nogood: int) -> bool:
    """True when some argument of commutative ``c`` has every choice excluded by ``nogood``."""
    for side in (0, 1):
        for choices in _choice_table(c, side, c.possible_children):
            if choices and all(ch.bit & nogood for ch in choices):
                return True
    return False


def _settle_commutatives(state: _MergeState, mp: Mapping) -> None:
    """Integrate undecided commutative hypotheses whose choices the mapping now decides."""
    changed = True
    while changed:
        changed = False
        still: list[MatchHypothesis] = []
        for c in mp.pending:
            live = [ch for ch in c.possible_children if not (ch.bit & mp.nogood)]
            bt = _choice_table(c, 0, live)
            tt = _choice_table(c, 1, live)
            if any(not x for x in bt) or any(not x for x in tt):
                mp.inconsistent = True
                still.append(c)
            elif all(len(x) == 1 for x in bt) and all(len(x) == 1 for x in tt):
                for x in bt:
                    ch = x[0]
                    if not ch.desc & ~mp.mhs:
                        continue
                    mp.mhs |= ch.desc
                    for i in _bits(ch.desc):
                        mp.nogood |= state.mhs[i].nogood
                changed = True
            else:
                still.append(c)
        mp.pending = still


def _init_pending(state: _MergeState, mp: Mapping) -> None:
    undecided = mp.mhs & state.undecided
    if not undecided:
        mp.pending = []
        return
    mp.pending = [state.mhs[i] for i in _bits(undecided)]
    if mp.pending:
        _settle_commutatives(state, mp)


def _merge(state: _MergeState, m1: Mapping, m2: Mapping) -> Mapping:
    key = m1.submappings | m2.submappings
    got = state.cache.get(key)
    if got is not None:
        return got
    roots = list(m1.roots)
    for r in m2.roots:
        if r not in roots:
            roots.append(r)
    if m2.mhs & ~m1.mhs and not m1.mhs & ~m2.mhs:
        m1, m2 = m2, m1  # add the smaller difference to the larger mapping's score
    mp = Mapping(state.counter, m1.mhs | m2.mhs, m1.nogood | m2.nogood, roots, key)
    state.counter += 1
    if m1.pending or m2.pending:
        mp.pending = list(dict.fromkeys((*m1.pending, *m2.pending)))
        _settle_commutatives(state, mp)
    # a mapping's score is the sum of its hypotheses' scores: add what m1 lacks
    mp.score = m1.score + _score_of(state, mp.mhs & ~m1.mhs)
    state.cache[key] = mp
    return mp


def _careful_sort(cands: Sequence[Mapping]) -> list[Mapping]:
    """Sort by score, best first; ties put later candidates first (the reference's insertion)."""
    return sorted(reversed(cands), key=lambda m: -m.score)


def _insert(lst: list[Mapping], m: Mapping) -> None:
    i = 0
    while i < len(lst) and lst[i].score > m.score:
        i += 1
    lst.insert(i, m)


def _greedy_cream(state: _MergeState, candidates: list[Mapping], cutoff: float,
                  max_n: int) -> list[Mapping]:
    if not candidates:
        return []
    if len(candidates) == 1:
        return [candidates[0]]
    solutions: list[Mapping] = []
    remaining = _careful_sort(candidates)
    used: list[int] = []
    best = -1.0
    while True:
        if not remaining:
            break
        sol = remaining[0]
        rest: list[Mapping] = []
        for c in remaining[1:]:
            if _consistent(sol, c):
                sol = _merge(state, sol, c)
            else:
                rest.append(c)
        remaining = rest
        old_used = list(used)
        used.extend(sorted(sol.submappings))
        for kid in old_used:
            k = state.kernels[kid]
            if _consistent(k, sol):
                sol = _merge(state, sol, k)
        if sol.score >= cutoff * best:
            best = max(best, sol.score)
            solutions.append(sol)
        else:
            break
        max_n -= 1
        if max_n <= 0:
            break
    # the reference pushes solutions (newest first) before its careful sort, which reverses ties
    # again: the net effect is a stable sort of the solutions in the order they were found
    solutions = sorted(solutions, key=lambda m: -m.score)
    return [s for s in solutions if not s.score < cutoff * best]


def greedy_merge(state: _MergeState, base: Description, params: SMEParams) -> list[Mapping]:
    """Step 5: partition kernels by base root expression, then merge greedily twice.

    The reference can fold attribute kernels into relational ones (``*fold-in-attributes*``), but
    with its default ``*minimal-ascend-attributes*`` it does not; we do not implement the folding.
    """
    roots_of = base.roots()
    table: dict[Expr, list[Mapping]] = {}
    for k in sorted(state.kernels, key=lambda k: -k.id):  # discovery order
        if k.inconsistent:
            continue
        for r in k.roots:
            for root_expr in roots_of.get(r.base, [r.base]):
                entry = table.get(root_expr)
                if entry is None:
                    table[root_expr] = [k]
                elif k not in entry:
                    _insert(entry, k)
    # the reference pushes new partitions to the front of its table
    partitions = [_careful_sort(kernels) for kernels in reversed(list(table.values()))]
    candidates: list[Mapping] = []
    done: dict[tuple[int, ...], list[Mapping]] = {}
    for part in partitions:
        # a kernel can root several partitions; equal partitions merge to equal results
        key = tuple(id(k) for k in part)
        creamed = done.get(key)
        if creamed is None:
            creamed = done[key] = _greedy_cream(state, part, 0.0, len(part))
        for c in creamed:
            if c not in candidates:
                _insert(candidates, c)
    return _greedy_cream(state, [c for c in candidates if not c.inconsistent],
                         params.greedy_cutoff, params.greedy_max_mappings)


# ------------------------------------------------------------------------------------------
# 6. global rescoring


def rescore_mapping(state: _MergeState, mp: Mapping, params: SMEParams) -> float:
    """Step 6: score a global mapping from its own hypotheses only (scores are not kept)."""
    members = [state.mhs[i] for i in _bits(mp.mhs)]
    extra: list[MatchHypothesis] = []
    member_bits = mp.mhs
    for m in members:
        if m.commutative and not m.args:
            for c in m.possible_children:
                for i in _bits(c.desc):
                    d = state.mhs[i]
                    if d.bit & member_bits or d in extra:
                        continue
                    if d.desc & mp.nogood or d.nogood & mp.mhs:
                        continue
                    if any(d.desc & e.nogood or e.desc & d.nogood for e in extra):
                        continue
                    extra.append(d)
    queue = sorted(members + extra, key=lambda m: -m.order)
    saved = [(m, m.score) for m in queue]
    ids = {m.id for m in queue}
    for m in queue:
        m.score = _local_score(m, params)
    for m in queue:
        _push_down(m, params, ids)
    total = sum(m.score for m in queue)
    for m, s in saved:
        m.score = s
    return total


# ------------------------------------------------------------------------------------------
# 7. candidate inferences and 8. alignable differences


@dataclass(frozen=True, slots=True)
class CandidateInference:
    """A base expression carried over to the target through a mapping.

    ``form`` is the nested-tuple form (target entities, ``(":skolem", e)`` for unmapped base
    entities); ``base`` the base root expression it comes from; ``support`` the mapped base items
    (expressions or entities) it rests on.
    """

    form: tuple[Any, ...]
    base: Expr
    support: tuple[Expr | str, ...]

    @property
    def sexpr(self) -> str:
        return to_sexpr(self.form)

    @property
    def skolems(self) -> tuple[str, ...]:
        out: list[str] = []

        def walk(x: Any) -> None:
            if isinstance(x, tuple):
                if len(x) == 2 and x[0] == ":skolem":
                    out.append(str(x[1]))
                else:
                    for y in x:
                        walk(y)

        walk(self.form)
        return tuple(out)


def candidate_inferences(state: _MergeState, mp: Mapping, base: Description,
                         params: SMEParams) -> list[CandidateInference]:
    """Step 7: forward candidate inferences of one mapping."""
    roots_of = base.roots()
    members = [state.mhs[i] for i in _bits(mp.mhs)]
    mapped: dict[int, Item] = {}
    fmapped: dict[str, str] = {}
    for m in members:
        if m.kind == FUNCTOR:
            fmapped[m.base.name] = m.target.name
        else:
            mapped[m.base] = m.target
    touched: set[Item] = set()
    for m in members:
        if m.kind == FUNCTOR:
            continue
        if m.kind == ENTITY and not params.allow_entity_supported_inferences:
            continue
        for r in roots_of.get(m.base, ()):
            touched.add(r)
    out: list[CandidateInference] = []
    vocab = base.vocabulary
    for root in base.top_level:
        if root in mapped or root not in touched:
            continue
        p = vocab.get(root.functor)
        if p is not None and p.ubiquitous:
            continue
        support: list[Item] = []

        def carry(x: Item, support: list[Item] = support) -> Any:
            t = mapped.get(x, _MISSING)
            if t is not _MISSING:
                support.append(x)
                return _as_form(t)
            if x.__class__ is not Expr:
                return (":skolem", x)
            return (fmapped.get(x.functor, x.functor), *[carry(a) for a in x.args])

        form = carry(root)
        out.append(CandidateInference(form, root, tuple(dict.fromkeys(support))))
    return out


_MISSING = object()


def _as_form(x: Item) -> Any:
    if x.__class__ is Expr:
        return (x.functor, *[_as_form(a) for a in x.args])
    return x


def alignable_differences(state: _MergeState, mp: Mapping) -> list[tuple[Expr, Expr]]:
    """Step 8: matched expressions whose functors differ (differences on common structure)."""
    out = []
    for i in _bits(mp.mhs):
        m = state.mhs[i]
        if m.kind == EXPRESSION and not m.identical:
            out.append((m.base, m.target))
    return out


def identity_score(desc: Description, params: SMEParams | None = None) -> float:
    """The score of ``desc`` mapped onto itself by the identity, computed directly.

    Equal to the global score :func:`match` gives the identity mapping of a description onto
    itself (every expression matched with itself, scored as in :func:`rescore_mapping`), without
    building match hypotheses: each expression scores ``same_functor`` locally and passes
    ``trickle_down`` times its score to each distinct argument. It measures how much
    (systematicity-weighted) structure a description has, for normalising mapping scores.
    """
    params = params or SMEParams()
    td = params.trickle_down
    cap = params.max_local_score
    score: dict[Any, float] = {}
    for e in reversed(desc.expressions):  # parents before their arguments
        s = score.get(e, 0.0) + params.same_functor
        if cap is not None and s > cap:
            s = cap
        score[e] = s
        seen: list[Any] = []
        for a in e.args:
            if any(a is x for x in seen):
                continue
            seen.append(a)
            v = score.get(a, 0.0) + td * s
            score[a] = v if cap is None or v <= cap else cap
    return sum(score.values())


# ------------------------------------------------------------------------------------------
# the result and the driver


@dataclass(frozen=True, slots=True)
class GlobalMapping:
    """One global mapping: correspondences, score, inferences and differences."""

    score: float
    mh_count: int
    entity_pairs: tuple[tuple[str, str], ...]
    expression_pairs: tuple[tuple[Expr, Expr], ...]
    functor_pairs: tuple[tuple[str, str], ...]
    root_pairs: tuple[tuple[Expr | str, Expr | str], ...]
    inferences: tuple[CandidateInference, ...]
    alignable_differences: tuple[tuple[Expr, Expr], ...]

    def correspondence(self) -> dict[str, str]:
        """Base entity → target entity."""
        return dict(self.entity_pairs)

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "mh_count": self.mh_count,
            "entity_mhs": [[b, t] for b, t in self.entity_pairs],
            "root_mhs": [[to_sexpr(b), to_sexpr(t)] for b, t in self.root_pairs],
            "cis": [ci.sexpr for ci in self.inferences],
            "alignable_differences": [[b.sexpr(), t.sexpr()]
                                      for b, t in self.alignable_differences],
        }


@dataclass(frozen=True, slots=True)
class MatchResult:
    """What :func:`match` returns."""

    base: Description
    target: Description
    params: SMEParams
    mh_count: int
    kernel_count: int
    mappings: tuple[GlobalMapping, ...]

    @property
    def best(self) -> GlobalMapping | None:
        return self.mappings[0] if self.mappings else None

    def to_json(self) -> dict[str, Any]:
        return {
            "mh_count": self.mh_count,
            "kernel_count": self.kernel_count,
            "mappings": [m.to_json() for m in self.mappings],
        }


def match(base: Description, target: Description, params: SMEParams | None = None
          ) -> MatchResult:
    """Map ``base`` onto ``target``; the whole pipeline (steps 1–8)."""
    params = params or SMEParams()
    mhset = build_match_hypotheses(base, target)
    propagate_consistency(mhset)
    kernels = find_kernels(mhset)
    evaluate(mhset, params)
    state = _MergeState(mhset.mhs, sorted(kernels, key=lambda k: k.id), {}, len(kernels))
    for m in mhset.mhs:
        if m.commutative and not m.args:
            state.undecided |= m.bit
    for k in kernels:
        _init_pending(state, k)  # may integrate commutative choices into the kernel
        k.score = _score_of(state, k.mhs)
        state.cache[k.submappings] = k
    chosen = greedy_merge(state, base, params)
    finals: list[tuple[float, Mapping]] = []
    for mp in chosen:
        s = rescore_mapping(state, mp, params) if params.block_most_out_of_mapping_contributions \
            else mp.score
        finals.append((s, mp))
    finals.sort(key=lambda x: -x[0])
    out = []
    for s, mp in finals:
        members = [state.mhs[i] for i in _bits(mp.mhs)]
        ents = tuple((m.base, m.target) for m in members if m.kind == ENTITY)
        exprs = tuple((m.base, m.target) for m in members if m.kind == EXPRESSION)
        funs = tuple((m.base.name, m.target.name) for m in members if m.kind == FUNCTOR)
        out.append(GlobalMapping(
            score=s,
            mh_count=len(members),
            entity_pairs=ents,
            expression_pairs=exprs,
            functor_pairs=funs,
            root_pairs=tuple((r.base, r.target) for r in mp.roots),
            inferences=tuple(candidate_inferences(state, mp, base, params)),
            alignable_differences=tuple(alignable_differences(state, mp)),
        ))
    return MatchResult(base, target, params, len(mhset.mhs), len(kernels), tuple(out))
