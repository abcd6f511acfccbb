"""Steps 1–4 of the engine (match hypotheses, structural consistency, kernels, trickle-down
evaluation) over integer arrays.

The data layout: each description is viewed once as integer-indexed arrays (:class:`Indexed`:
expressions first, then entities; an argument is an integer index), cached per description
object. The match hypotheses (MHs) of one comparison are parallel lists indexed by an integer MH
id (:class:`MHArrays`): no Python object per hypothesis, sets of hypotheses as integer bitsets
(bit ``i`` is MH ``i``). An MH's base and target *keys* are item indexes, or ``-1 - functor id``
for a functor hypothesis, so that two MHs conflict (one-to-one) exactly when they share a key.

The algorithms and the order in which they create, visit and add things are those described in
:mod:`analogist.sme.engine`: the MH ids, and so every tie-break and every floating-point sum,
come out as they did when MHs were objects.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from itertools import product
from typing import Any

from analogist.description import Description
from analogist.sme.params import SMEParams
from analogist.vocabulary import PredicateKind

ENTITY = 0
EXPRESSION = 1
FUNCTOR = 2

# how an expression's arguments align (per expression of a description)
PLAIN = 0
SYMMETRIC = 1  # a symmetric binary predicate: also the argument-swapped match
COMMUTATIVE = 2  # any permutation (commutative or n-ary): choices per argument

# local score codes of an MH (the score itself depends on the parameters)
NO_SCORE = 0  # entities and functors
SAME_FUNCTOR = 1
SAME_FUNCTION = 2  # non-identical functions
ASCENDED = 3  # non-identical predicates with a common superordinate: ASCENDED + levels - 1


class Indexed:
    """One description as integer-indexed arrays (expressions first, then entities), built once
    per description object and cached (see :func:`indexed`).

    Attributes:
        items: the Expr or entity name of each index.
        n_expr: the number of expressions (indexes ``>= n_expr`` are entities).
        functor, args, order, function: per expression; ``args`` are item indexes.
        fid: per expression, its functor's id; ``fnames[fid]`` is the functor's name.
        mode: per expression, PLAIN, SYMMETRIC or COMMUTATIVE.
        n_ary: per expression, whether its predicate is n-ary.
        bins: functor → expression indexes, in order of first appearance.
        ubiquitous: functors declared ubiquitous (never matched locally).
        roots: per item, the indexes of the top-level expressions containing it.
        ancestors: per functor id, the functor's name and its superordinates, nearest first
            (:meth:`~analogist.vocabulary.Vocabulary.ancestors`; for minimal ascension).
        ascending: the functor ids with a superordinate; supers: every superordinate's name.
    """

    __slots__ = ("items", "n_expr", "functor", "args", "order", "function", "fid", "fnames",
                 "mode", "n_ary", "bins", "ubiquitous", "roots", "ancestors", "ascending", "supers", "__weakref__")

    def __init__(self, d: Description) -> None:
        exprs = d.expressions
        items: list[Any] = [*exprs, *d.entities]
        index: dict[Any, int] = {x: i for i, x in enumerate(items)}
        vocab = d.vocabulary
        self.items = items
        self.n_expr = len(exprs)
        self.functor = [e.functor for e in exprs]
        self.args = [tuple(index[a] for a in e.args) for e in exprs]
        self.order = [e.order for e in exprs]
        fids: dict[str, int] = {}
        preds: dict[str, Any] = {}
        for f in self.functor:
            if f not in preds:
                preds[f] = vocab.get(f)
                fids[f] = len(fids)
        self.fid = [fids[f] for f in self.functor]
        self.fnames = list(fids)
        self.ancestors = [vocab.ancestors(f) if preds[f] is not None else (f,)
                          for f in self.fnames]
        self.ascending = [i for i, a in enumerate(self.ancestors) if len(a) > 1]
        self.supers = frozenset(n for a in self.ancestors for n in a[1:])
        self.function = []
        self.mode = []
        self.n_ary = []
        for f, a in zip(self.functor, self.args, strict=True):
            p = preds[f]
            self.function.append(p is not None and p.kind is PredicateKind.FUNCTION)
            mode = PLAIN
            if p is not None:
                if p.symmetric and len(a) == 2:
                    mode = SYMMETRIC
                elif p.commutative:
                    mode = COMMUTATIVE
            self.mode.append(mode)
            self.n_ary.append(bool(p is not None and p.n_ary))
        self.ubiquitous = {f for f, p in preds.items() if p is not None and p.ubiquitous}
        bins: dict[str, list[int]] = {}
        for i, f in enumerate(self.functor):
            bins.setdefault(f, []).append(i)
        self.bins = bins
        roots = d.roots()
        self.roots = [tuple(index[r] for r in roots.get(x, ())) for x in items]


_INDEXED: dict[int, Indexed] = {}


def indexed(d: Description) -> Indexed:
    """The cached integer view of ``d``, keyed by the object itself (two equal descriptions may
    carry different vocabularies), dropped when ``d`` is collected."""
    key = id(d)
    got = _INDEXED.get(key)
    if got is None:
        got = _INDEXED[key] = Indexed(d)
        weakref.finalize(d, _INDEXED.pop, key, None)
    return got


class MHArrays:
    """All match hypotheses of one comparison, as parallel lists indexed by MH id.

    Attributes:
        B, T: the base's and the target's integer views.
        bk, tk: base and target keys (item index; ``-1 - fid`` for a functor MH).
        kind: ENTITY, EXPRESSION or FUNCTOR.
        order: the larger of the two expressions' orders (0 for entities and functors).
        args: the argument MHs (a commutative MH has none until its choices are decided).
        parents: the MHs having this one as an argument (or possible child).
        fmh: the functor MH of an expression MH (-1 otherwise).
        lsc: local score code (NO_SCORE, SAME_FUNCTOR, SAME_FUNCTION, or ASCENDED + levels - 1).
        ascended: the minimally ascended MHs, in order of creation.
        incomplete, inconsistent: flags.
        children: commutative MH → its possible children (commutative MHs are its keys).
        desc, nogood: bitsets of descendants (self included) and of conflicting MHs.
        score: trickle-down scores (step 4).
    """

    __slots__ = ("B", "T", "bk", "tk", "kind", "order", "args", "parents", "fmh", "lsc",
                 "incomplete", "inconsistent", "children", "desc", "nogood", "score",
                 "ascended")

    def __init__(self, B: Indexed, T: Indexed) -> None:
        self.B = B
        self.T = T
        self.bk: list[int] = []
        self.tk: list[int] = []
        self.kind: list[int] = []
        self.order: list[int] = []
        self.args: list[list[int]] = []
        self.parents: list[list[int]] = []
        self.fmh: list[int] = []
        self.lsc: list[int] = []
        self.incomplete: list[bool] = []
        self.inconsistent: list[bool] = []
        self.children: dict[int, list[int]] = {}
        self.desc: list[int] = []
        self.nogood: list[int] = []
        self.score: list[float] = []
        self.ascended: list[int] = []

    def __len__(self) -> int:
        return len(self.bk)

    def okay(self, i: int) -> bool:
        return not (self.incomplete[i] or self.inconsistent[i])


# ------------------------------------------------------------------------------------------
# 1. match hypotheses


def build_match_hypotheses(base: Description, target: Description, *,
                           minimal_ascension: bool = False,
                           one_to_one_ascended_functors: bool = True) -> MHArrays:
    """Step 1: local matches and their argument expansions (see :mod:`analogist.sme.engine`).

    In named steps: both descriptions indexed, the local matcher made over the empty MH arrays
    (:func:`_local_matcher`), every same-predicate pair of the two descriptions matched in the
    reference's order (:func:`_match_bins`), and the per-MH lists of the later steps sized.
    With ``minimal_ascension``, arguments of two matched expressions also align when their
    predicates differ but share a superordinate (:func:`ascents`); with
    ``one_to_one_ascended_functors`` such a match also makes its functor MH (so the two
    predicates correspond one-to-one across the mapping, as identical ones do), without it the
    match is bound by its expressions and arguments only."""
    B, T = indexed(base), indexed(target)
    H = MHArrays(B, T)
    _match_bins(B, T, _local_matcher(B, T, H, ascents(B, T) if minimal_ascension else {},
                                     one_to_one_ascended_functors))
    n = len(H.bk)
    H.inconsistent = [False] * n
    H.score = [0.0] * n
    return H


def ascents(B: Indexed, T: Indexed) -> dict[int, int]:
    """Minimal ascension (Falkenhainer 1990; SME v4's ``minimal-ascension``): for each pair of
    different, non-function predicates of ``B`` and ``T`` with a common superordinate in their
    vocabularies, the levels climbed to the nearest one (the larger of the two sides' steps),
    keyed ``fid_B * len(T.fnames) + fid_T`` as the functor MHs are."""
    out: dict[int, int] = {}
    if not (B.ascending or T.ascending):
        return out
    n_fun_t = len(T.fnames)
    # a pair ascends only if one side has a superordinate: the other side's functor then has
    # one too, or is that superordinate itself
    b_side = set(B.ascending) | {i for i, a in enumerate(B.ancestors) if a[0] in T.supers}
    t_side = set(T.ascending) | {i for i, a in enumerate(T.ancestors) if a[0] in B.supers}
    if not (b_side and t_side):
        return out
    b_function = {B.fid[i] for i, f in enumerate(B.function) if f}
    t_function = {T.fid[i] for i, f in enumerate(T.function) if f}
    t_pos = {ft: {n: j for j, n in enumerate(T.ancestors[ft])} for ft in sorted(t_side)
             if ft not in t_function}
    for fb in sorted(b_side):
        ab = B.ancestors[fb]
        if fb in b_function:
            continue
        for ft, pos in t_pos.items():
            if T.ancestors[ft][0] == ab[0]:
                continue
            best = 0
            for i, name in enumerate(ab):
                j = pos.get(name)
                if j is not None:
                    lv = i if i > j else j
                    if not best or lv < best:
                        best = lv
            if best:
                out[fb * n_fun_t + ft] = best
    return out


# The closures of step 1 (made once per comparison; their free variables are cell lookups, as
# they were when they shared one enclosing function).
_NewMH = Callable[[int, int, int, int, list[int], bool, int], int]
_ExprMH = Callable[[int, int, list[int], bool], int]
_LocalMatch = Callable[[int, int], list[int]]


def _mh_recorders(B: Indexed, T: Indexed, H: MHArrays, memo: dict[int, list[int]],
                  ascent: dict[int, int], ascended_functors: bool = True
                  ) -> tuple[_NewMH, _ExprMH]:
    """The two ways step 1 records an MH in ``H``'s parallel lists: ``new`` (an entity or a
    functor MH) and ``expr_mh`` (an expression MH: entered in ``memo`` under its item pair, made
    the parent of its argument MHs and of its functor MH, which is made on the pair of functors'
    first use)."""
    bk, tk, kind, order, args, parents = H.bk, H.tk, H.kind, H.order, H.args, H.parents
    fmh, lsc, inc, ascended = H.fmh, H.lsc, H.incomplete, H.ascended
    b_fun, t_fun = B.functor, T.functor
    b_function = B.function
    b_order, t_order = B.order, T.order
    b_fid, t_fid = B.fid, T.fid
    n_items_t = len(T.items)
    n_fun_t = len(T.fnames)
    functors: dict[int, int] = {}  # fid pair → functor MH

    def new(b: int, t: int, k: int, o: int, a: list[int], incomplete: bool, code: int) -> int:
        i = len(bk)
        bk.append(b)
        tk.append(t)
        kind.append(k)
        order.append(o)
        args.append(a)
        parents.append([])
        fmh.append(-1)
        lsc.append(code)
        inc.append(incomplete)
        return i

    def expr_mh(b: int, t: int, a: list[int], incomplete: bool) -> int:
        i = len(bk)
        fb, ft = b_fid[b], t_fid[t]
        fkey = fb * n_fun_t + ft
        lv = ascent.get(fkey) if ascent else None
        f = functors.get(fkey)
        new_functor = f is None
        if lv is not None and not ascended_functors:
            f, new_functor = -1, False
        elif new_functor:
            f = i + 1  # made right after this MH
        bk.append(b)
        tk.append(t)
        kind.append(EXPRESSION)
        order.append(b_order[b] if b_order[b] > t_order[t] else t_order[t])
        args.append(a)
        parents.append([])
        fmh.append(f)
        if b_function[b] and b_fun[b] != t_fun[t]:
            lsc.append(SAME_FUNCTION)
        else:
            if lv is None:
                lsc.append(SAME_FUNCTOR)
            else:
                lsc.append(ASCENDED + lv - 1)
                ascended.append(i)
        inc.append(incomplete)
        key = b * n_items_t + t
        got = memo.get(key)
        if got is None:
            memo[key] = [i]
        else:
            got.append(i)
        for x in a:
            parents[x].append(i)
        if new_functor:
            functors[fkey] = new(-1 - fb, -1 - ft, FUNCTOR, 0, [], False, NO_SCORE)
        if f >= 0:
            parents[f].append(i)
        return i

    return new, expr_mh


def _local_matcher(B: Indexed, T: Indexed, H: MHArrays, ascent: dict[int, int],
                   ascended_functors: bool = True) -> _LocalMatch:
    """``local_match(b, t)``: the MHs of base item ``b`` and target item ``t``, made on the first
    call and memoised by the item pair — an entity MH, or the expression MHs of the arguments'
    alignment (:func:`_expression_matcher`: as written, and argument-swapped for a symmetric
    predicate; :func:`_commutative_matcher`: any pairing). Mutually recursive with the two: an
    expression's argument pairs are matched before it."""
    b_n = B.n_expr
    t_args = T.args
    b_mode = B.mode
    n_items_t = len(T.items)
    memo: dict[int, list[int]] = {}  # b * n_items_t + t → the MHs of that pair
    new, expr_mh = _mh_recorders(B, T, H, memo, ascent, ascended_functors)

    def local_match(b: int, t: int) -> list[int]:
        key = b * n_items_t + t
        got = memo.get(key)
        if got:
            return got
        if b >= b_n:
            i = new(b, t, ENTITY, 0, [], False, NO_SCORE)
            memo[key] = got = [i]
            return got
        mode = b_mode[b]
        if mode == SYMMETRIC:
            targs = t_args[t]
            expression(b, t, targs)
            expression(b, t, targs[::-1])
        elif mode == COMMUTATIVE:
            commutative(b, t)
        else:
            expression(b, t, t_args[t])
        return memo[key]

    expression = _expression_matcher(B, T, memo, expr_mh, local_match, ascent)
    commutative = _commutative_matcher(B, T, H, expr_mh, local_match, ascent)
    return local_match


def _expression_matcher(B: Indexed, T: Indexed, memo: dict[int, list[int]], expr_mh: _ExprMH,
                        local_match: _LocalMatch, ascent: dict[int, int]
                        ) -> Callable[[int, int, tuple[int, ...]], None]:
    """``expression(b, t, targs)``: the expression MHs of base expression ``b`` and target
    expression ``t`` with ``t``'s arguments in the order ``targs`` — one MH per combination of
    the argument pairs' MHs, or one incomplete MH when an argument pair does not align."""
    b_n, t_n = B.n_expr, T.n_expr
    b_args, t_args = B.args, T.args
    b_fun, t_fun = B.functor, T.functor
    b_function, t_function = B.function, T.function
    b_fid, t_fid = B.fid, T.fid
    n_fun_t = len(T.fnames)
    n_items_t = len(T.items)

    def expression(b: int, t: int, targs: tuple[int, ...]) -> None:
        bargs = b_args[b]
        n = len(bargs)
        if n != len(targs) or not n:
            expr_mh(b, t, [], n != len(targs))
            return
        lists: list[list[int]] = []
        single = True
        complete = True
        # every alignable argument pair is proposed, even when the match is incomplete
        for i in range(n):
            ba, ta = bargs[i], targs[i]
            if ba >= b_n or ta >= t_n:  # alignable(ba, ta), inline
                if ba < b_n or ta < t_n:
                    complete = False
                    continue
            elif not (len(b_args[ba]) == len(t_args[ta]) and (
                    b_fun[ba] == t_fun[ta] or (b_function[ba] and t_function[ta])
                    or (ascent and b_fid[ba] * n_fun_t + t_fid[ta] in ascent))):
                complete = False
                continue
            got = memo.get(ba * n_items_t + ta) or local_match(ba, ta)
            if len(got) != 1:
                single = False
            lists.append(got)
        if not complete:
            expr_mh(b, t, [], True)
        elif single:
            a: list[int] = []
            for x in lists:
                # an argument that repeats (e.g. (f x x)) is one child, as in the reference
                if x[0] not in a:
                    a.append(x[0])
            expr_mh(b, t, a, False)
        else:
            for combo in product(*lists):
                a = []
                for y in combo:
                    if y not in a:
                        a.append(y)
                expr_mh(b, t, a, False)

    return expression


def _commutative_matcher(B: Indexed, T: Indexed, H: MHArrays, expr_mh: _ExprMH,
                         local_match: _LocalMatch, ascent: dict[int, int]
                         ) -> Callable[[int, int], None]:
    """``commutative(b, t)``: the one MH of a commutative or n-ary base expression ``b`` and
    target expression ``t``, whose children are the MHs of every alignable argument pair, marked
    incomplete when arguments stay unaligned (the reference's rules for n-ary sides)."""
    parents, inc, children = H.parents, H.incomplete, H.children
    b_n, t_n = B.n_expr, T.n_expr
    b_args, t_args = B.args, T.args
    b_fun, t_fun = B.functor, T.functor
    b_function, t_function = B.function, T.function
    b_fid, t_fid = B.fid, T.fid
    n_fun_t = len(T.fnames)

    def alignable(ba: int, ta: int) -> bool:
        """The reference's ``arguments-alignable?`` (with minimal ascension when ``ascent``
        holds the pair's predicates)."""
        if ba >= b_n or ta >= t_n:
            return ba >= b_n and ta >= t_n
        return len(b_args[ba]) == len(t_args[ta]) and (
            b_fun[ba] == t_fun[ta] or (b_function[ba] and t_function[ta])
            or (bool(ascent) and b_fid[ba] * n_fun_t + t_fid[ta] in ascent))

    def commutative(b: int, t: int) -> None:
        i = expr_mh(b, t, [], False)
        ch = children[i] = []
        aligned_b: set[int] = set()
        aligned_t: set[int] = set()
        bargs, targs = b_args[b], t_args[t]
        for x, ba in enumerate(bargs):
            for y, ta in enumerate(targs):
                if alignable(ba, ta):
                    c = local_match(ba, ta)[0]
                    parents[c].append(i)
                    ch.append(c)
                    aligned_b.add(x)
                    aligned_t.add(y)
        miss_b = len(aligned_b) < len(bargs)
        miss_t = len(aligned_t) < len(targs)
        t_nary = T.n_ary[t]
        if B.n_ary[b]:
            if (t_nary and (miss_b or miss_t)) or (not t_nary and miss_t):
                inc[i] = True
        elif t_nary:
            if miss_b:
                inc[i] = True
        elif miss_b and miss_t:
            inc[i] = True

    return commutative


def _match_bins(B: Indexed, T: Indexed, local_match: _LocalMatch) -> None:
    """Every base expression matched locally with each target expression of the same functor
    and arity (ubiquitous functors left out), in the reference's order."""
    b_args, t_args = B.args, T.args
    # The reference bins expressions by predicate and walks the base bins in order of first
    # appearance, and each bin's items newest first (base and target alike). Following it keeps
    # the order of creation, and so the order of ties, the same as the reference's.
    t_bins = T.bins
    for functor, bitems in B.bins.items():
        targets = t_bins.get(functor)
        if not targets or functor in B.ubiquitous:
            continue
        for b in reversed(bitems):
            n = len(b_args[b])
            for t in reversed(targets):
                if len(t_args[t]) == n:
                    local_match(b, t)


# ------------------------------------------------------------------------------------------
# 2. structural consistency


def choice_tables(H: MHArrays, m: int, children: list[int]
                  ) -> tuple[list[list[int]], list[list[int]]]:
    """For commutative MH ``m``: per base argument and per target argument, the children (from
    ``children``) that align it."""
    out = []
    for keys, items in ((H.bk, H.B.args[H.bk[m]]), (H.tk, H.T.args[H.tk[m]])):
        table: list[list[int]] = [[] for _ in items]
        pos: dict[int, int] = {}
        for i, it in enumerate(items):
            pos.setdefault(it, i)
        for c in children:
            i = pos.get(keys[c])
            if i is not None:
                table[i].append(c)
        out.append(table)
    return out[0], out[1]


def _common(table: list[list[int]], bits: list[int]) -> int:
    out = 0
    for choices in table:
        if not choices:
            continue
        acc = bits[choices[0]]
        for c in choices[1:]:
            acc &= bits[c]
        out |= acc
    return out


def propagate_consistency(H: MHArrays) -> None:
    """Step 2: incompleteness, descendants, nogoods and inconsistency (in place)."""
    n = len(H)
    inc, incon, parents, args = H.incomplete, H.inconsistent, H.parents, H.args
    children, fmh = H.children, H.fmh
    # incompleteness flows upward, except into commutative parents
    stack = [i for i in range(n) if inc[i]]
    while stack:
        m = stack.pop()
        for p in parents[m]:
            if not inc[p] and p not in children:
                inc[p] = True
                stack.append(p)
    on_base: dict[int, int] = {}
    on_target: dict[int, int] = {}
    bits = [1 << i for i in range(n)]
    for i, k in enumerate(H.bk):
        on_base[k] = on_base.get(k, 0) | bits[i]
    for i, k in enumerate(H.tk):
        on_target[k] = on_target.get(k, 0) | bits[i]
    desc = bits[:]
    nogood = [(on_base[b] | on_target[t]) ^ bits[i]
              for i, (b, t) in enumerate(zip(H.bk, H.tk, strict=True))]
    H.desc, H.nogood = desc, nogood
    order = H.order
    # parents after their arguments; entities and functors (order 0) have nothing to collect
    for m in sorted((i for i in range(n) if order[i]), key=order.__getitem__):
        d, g = desc[m], nogood[m]
        f = fmh[m]
        if f >= 0:
            d |= desc[f]
            g |= nogood[f]
        ch = children.get(m)
        if ch is not None:
            bt, tt = choice_tables(H, m, ch)
            d |= _common(bt, desc) | _common(tt, desc)
            g |= _common(bt, nogood) | _common(tt, nogood)
        else:
            for a in args[m]:
                d |= desc[a]
                g |= nogood[a]
        desc[m], nogood[m] = d, g
        if d & g:
            incon[m] = True
    for m in sorted(children):
        _filter_commutative_children(H, m)


def _filter_commutative_children(H: MHArrays, m: int) -> None:
    inc, incon, desc, nogood, parents = (H.incomplete, H.inconsistent, H.desc, H.nogood,
                                         H.parents)
    ch = H.children[m] = [c for c in H.children[m] if not (inc[c] or incon[c])]
    bt, tt = choice_tables(H, m, ch)
    if any(not c for c in bt) or any(not c for c in tt):
        inc[m] = True
        return
    if all(len(c) == 1 for c in bt) and all(len(c) == 1 for c in tt):
        a = H.args[m] = [c[0] for c in bt]
        for x in a:
            desc[m] |= desc[x]
            nogood[m] |= nogood[x]
        d, g = desc[m], nogood[m]
        seen: set[int] = set()
        queue = list(parents[m])
        while queue:
            p = queue.pop()
            if p in seen:
                continue
            seen.add(p)
            queue.extend(parents[p])
            desc[p] |= d
            nogood[p] |= g
            if desc[p] & nogood[p]:
                incon[p] = True


# ------------------------------------------------------------------------------------------
# 3. kernels


def kernel_roots(H: MHArrays) -> list[int]:
    """Step 3: the roots of the kernel mappings, in the reference's discovery order: each
    complete, consistent, non-functor MH without a complete, consistent parent, found walking
    the MHs newest first and, below an MH that is not complete and consistent, its arguments.
    A minimally ascended MH is never a root: without a complete, consistent parent it is
    passed over like an incomplete one (two different predicates align only under a matched
    expression)."""
    inc, incon, parents, args, kind = (H.incomplete, H.inconsistent, H.parents, H.args,
                                       H.kind)
    n = len(H)
    okay = [not (inc[i] or incon[i]) for i in range(n)]
    is_okay = okay.__getitem__
    for i in sorted(H.ascended, key=H.order.__getitem__, reverse=True):
        # parents first: an ascended parent is passed over before its ascended arguments
        if okay[i] and not any(map(is_okay, parents[i])):
            okay[i] = False
    roots: list[int] = []
    decided: set[int] = set()  # okay MHs already judged root or not

    def visit(m: int) -> None:
        if okay[m]:
            if m not in decided:
                decided.add(m)
                if kind[m] != FUNCTOR and not any(map(is_okay, parents[m])):
                    roots.append(m)
        else:
            for a in args[m]:
                visit(a)

    for m in range(n - 1, -1, -1):
        visit(m)
    return roots


# ------------------------------------------------------------------------------------------
# 4. structural evaluation


def local_score_of(code: int, params: SMEParams) -> float:
    """The local score of an MH's code: 0, ``same_functor``, ``same_function``, or for a
    minimally ascended match of ``k`` levels ``same_functor * minimal_ascension_multiplier**k``."""
    if code == SAME_FUNCTOR:
        return params.same_functor
    if code == SAME_FUNCTION:
        return params.same_function
    if code >= ASCENDED:
        return params.same_functor * params.minimal_ascension_multiplier ** (code - ASCENDED + 1)
    return 0.0


def local_scores(H: MHArrays, params: SMEParams) -> list[float]:
    """Each MH's local score (:func:`local_score_of`)."""
    table = (0.0, params.same_functor, params.same_function)
    return [table[c] if c < ASCENDED else local_score_of(c, params) for c in H.lsc]


def evaluate(H: MHArrays, params: SMEParams) -> None:
    """Step 4: trickle-down scores on every complete, consistent MH (in place)."""
    n = len(H)
    inc, incon, order, kind, parents = (H.incomplete, H.inconsistent, H.order, H.kind,
                                        H.parents)
    queue = [m for m in range(n - 1, -1, -1) if not (inc[m] or incon[m])]
    queue.sort(key=order.__getitem__, reverse=True)  # stable: parents before arguments
    local = local_scores(H, params)
    score = H.score
    for m in queue:
        score[m] = local[m]
    td = params.trickle_down
    cap = params.max_local_score
    if not params.block_most_out_of_mapping_contributions:
        push_down(H, params, queue, score)
        return
    skip_functors = not params.functor_trickle_down
    bk, tk = H.bk, H.tk
    for m in queue:
        if skip_functors and kind[m] == FUNCTOR:
            continue
        ps = parents[m]
        if not ps:
            continue
        s = score[m]
        if len(ps) == 1:
            s += td * score[ps[0]]
        else:
            used_b: set[int] = set()
            used_t: set[int] = set()
            # best parents first; equal scores: later parents first
            for p in sorted(ps[::-1], key=score.__getitem__, reverse=True):
                kb, kt = bk[p], tk[p]
                if kb in used_b or kt in used_t:
                    continue
                used_b.add(kb)
                used_t.add(kt)
                s += td * score[p]
        if cap is not None and s > cap:
            s = cap
        score[m] = s


def push_down(H: MHArrays, params: SMEParams, queue: list[int],
              score: list[float] | dict[int, float]) -> None:
    """Pass ``trickle_down`` times each expression MH's score to its arguments (and its possible
    children while undecided; its functor with ``functor_trickle_down``), in ``queue`` order, to
    MHs in ``queue`` only."""
    td = params.trickle_down
    cap = params.max_local_score
    members = set(queue)
    kind, fmh, args, children = H.kind, H.fmh, H.args, H.children
    with_functor = params.functor_trickle_down
    for m in queue:
        if kind[m] != EXPRESSION:
            continue
        amount = td * score[m]
        a = args[m]
        targets: list[int] = a
        if with_functor or (not a and m in children):
            targets = [fmh[m]] if with_functor and fmh[m] >= 0 else []
            targets += a
            if not a and m in children:
                targets += children[m]
        # (a functor is always complete and consistent, so in ``queue`` with its expression)
        if cap is None:
            for x in targets:
                if x in members:
                    score[x] += amount
        else:
            for x in targets:
                if x in members:
                    v = score[x] + amount
                    score[x] = cap if v > cap else v
