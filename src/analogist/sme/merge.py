"""Steps 5–6 of the engine: greedy merge of kernel mappings and global rescoring.

A mapping (:class:`Mapping`: a kernel, or a merge of kernels) is a bitset of match-hypothesis ids
with the bitset of the hypotheses it excludes; there are a few dozen mappings per comparison,
against hundreds of hypotheses, so a mapping is a small object and a hypothesis is not.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from analogist.sme.core import MHArrays, choice_tables, local_score_of, push_down
from analogist.sme.params import SMEParams


class Mapping:
    """A set of consistent match hypotheses (a kernel, or a merge of kernels)."""

    __slots__ = ("id", "mhs", "nogood", "roots", "submappings", "score", "inconsistent",
                 "pending")

    def __init__(self, mid: int, mhs: int, nogood: int, roots: list[int],
                 submappings: frozenset[int]) -> None:
        self.id = mid
        self.mhs = mhs
        self.nogood = nogood
        self.roots = roots  # root MH ids
        self.submappings = submappings
        self.score = 0.0
        self.inconsistent = False
        self.pending: Sequence[int] = ()  # undecided commutative MHs (replaced, not mutated)

    def __repr__(self) -> str:
        return f"<Mapping {self.id} score={self.score:.4f}>"


@dataclass(slots=True)
class MergeState:
    H: MHArrays
    kernels: list[Mapping]
    cache: dict[frozenset[int], Mapping]
    counter: int
    undecided: int = 0  # bits of commutative hypotheses whose arguments are not decided
    tables: dict[int, tuple[list[list[int]], list[list[int]]]] = field(default_factory=dict)


def bits_of(x: int) -> list[int]:
    """Indexes of the set bits of ``x`` (ascending); O(number of set bits)."""
    out = []
    append = out.append
    while x:
        low = x & -x
        append(low.bit_length() - 1)
        x ^= low
    return out


def kernel_mappings(H: MHArrays, roots: list[int]) -> MergeState:
    """Step 3 (continued): one mapping per kernel root, scored and with its commutative choices
    settled; the reference numbers kernels in the reverse of discovery order and lists them in
    discovery order (the numbers decide the order in which earlier kernels are offered to later
    mappings)."""
    n = len(roots)
    desc, nogood = H.desc, H.nogood
    kernels = [Mapping(n - 1 - i, desc[r], nogood[r], [r], frozenset((n - 1 - i,)))
               for i, r in enumerate(roots)]
    state = MergeState(H, kernels[::-1], {}, n)
    args = H.args
    for m in H.children:
        if not args[m]:
            state.undecided |= 1 << m
    undecided_bits = state.undecided
    score, cache = H.score, state.cache
    for k in kernels:
        if k.mhs & undecided_bits:
            k.pending = bits_of(k.mhs & undecided_bits)
            _settle_commutatives(state, k)  # may integrate commutative choices into the kernel
        # score_of(H, k.mhs), inline: the sum in ascending MH order
        s = 0
        x = k.mhs
        while x:
            low = x & -x
            s += score[low.bit_length() - 1]
            x ^= low
        k.score = s
        cache[k.submappings] = k
    return state


def score_of(H: MHArrays, bits: int) -> float:
    score = H.score
    return sum([score[i] for i in bits_of(bits)])


# ------------------------------------------------------------------------------------------
# 5. greedy merge


def _tables(state: MergeState, c: int) -> tuple[list[list[int]], list[list[int]]]:
    got = state.tables.get(c)
    if got is None:
        got = state.tables[c] = choice_tables(state.H, c, state.H.children[c])
    return got


def _consistent(state: MergeState, m1: Mapping, m2: Mapping) -> bool:
    if m1.mhs & m2.nogood or m2.mhs & m1.nogood:
        return False
    for cm, other in ((m1, m2), (m2, m1)):
        for c in cm.pending:
            if _pending_blocked(state, c, other.nogood):
                return False
    return True


def _pending_blocked(state: MergeState, c: int, nogood: int) -> bool:
    """True when some argument of commutative ``c`` has every choice excluded by ``nogood``."""
    for table in _tables(state, c):
        for choices in table:
            if choices and all((1 << ch) & nogood for ch in choices):
                return True
    return False


def _settle_commutatives(state: MergeState, mp: Mapping) -> None:
    """Integrate undecided commutative hypotheses whose choices the mapping now decides."""
    desc, nogood = state.H.desc, state.H.nogood
    changed = True
    while changed:
        changed = False
        still: list[int] = []
        for c in mp.pending:
            ng = mp.nogood
            bt, tt = ([[ch for ch in x if not (1 << ch) & ng] for x in t]
                      for t in _tables(state, c))
            if any(not x for x in bt) or any(not x for x in tt):
                mp.inconsistent = True
                still.append(c)
            elif all(len(x) == 1 for x in bt) and all(len(x) == 1 for x in tt):
                for x in bt:
                    d = desc[x[0]]
                    if not d & ~mp.mhs:
                        continue
                    mp.mhs |= d
                    for i in bits_of(d):
                        mp.nogood |= nogood[i]
                changed = True
            else:
                still.append(c)
        mp.pending = still


def _merge(state: MergeState, m1: Mapping, m2: Mapping) -> Mapping:
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
    mp.score = m1.score + score_of(state.H, mp.mhs & ~m1.mhs)
    state.cache[key] = mp
    return mp


def _score(m: Mapping) -> float:
    return m.score


def _neg_score(m: Mapping) -> float:
    return -m.score


def _careful_sort(cands: Sequence[Mapping]) -> list[Mapping]:
    """Sort by score, best first; ties put later candidates first (the reference's insertion)."""
    return sorted(reversed(cands), key=_score, reverse=True)


def _insert(lst: list[Mapping], m: Mapping) -> None:
    """Insert ``m`` into ``lst`` (best first) after every mapping scoring more than it."""
    lst.insert(bisect_left(lst, -m.score, key=_neg_score), m)


def _greedy_cream(state: MergeState, candidates: list[Mapping], cutoff: float,
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
            # _consistent(state, sol, c), its first test inline
            if sol.mhs & c.nogood or c.mhs & sol.nogood or (
                    (sol.pending or c.pending) and not _consistent(state, sol, c)):
                rest.append(c)
            else:
                sol = _merge(state, sol, c)
        remaining = rest
        old_used = list(used)
        used.extend(sorted(sol.submappings))
        for kid in old_used:
            k = state.kernels[kid]
            if not (k.mhs & sol.nogood or sol.mhs & k.nogood or (
                    (k.pending or sol.pending) and not _consistent(state, k, sol))):
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
    solutions.sort(key=_score, reverse=True)
    return [s for s in solutions if not s.score < cutoff * best]


def greedy_merge(state: MergeState, params: SMEParams) -> list[Mapping]:
    """Step 5: partition kernels by base root expression, then merge greedily twice.

    The reference can fold attribute kernels into relational ones (``*fold-in-attributes*``), but
    with its default ``*minimal-ascend-attributes*`` it does not; we do not implement the folding.
    """
    H = state.H
    roots_of, bk = H.B.roots, H.bk
    table: dict[int, list[Mapping]] = {}
    for k in reversed(state.kernels):  # discovery order
        if k.inconsistent:
            continue
        for r in k.roots:
            for root_expr in roots_of[bk[r]] or (bk[r],):
                entry = table.get(root_expr)
                if entry is None:
                    table[root_expr] = [k]
                elif k not in entry:
                    _insert(entry, k)
    candidates: list[Mapping] = []
    done: dict[tuple[int, ...], list[Mapping]] = {}
    # the reference pushes new partitions to the front of its table
    for kernels in reversed(list(table.values())):
        part = _careful_sort(kernels)
        # a kernel can root several partitions; equal partitions merge to equal results
        key = tuple(k.id for k in part)
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


def rescore_mapping(state: MergeState, mp: Mapping, params: SMEParams,
                    members: list[int] | None = None) -> float:
    """Step 6: score a global mapping from its own hypotheses only (the hypotheses' step-4
    scores are left as they are); ``members``: ``bits_of(mp.mhs)`` if already at hand."""
    H = state.H
    desc, nogood, args, children, order = H.desc, H.nogood, H.args, H.children, H.order
    if members is None:
        members = bits_of(mp.mhs)
    extra: list[int] = []
    member_bits, mp_nogood = mp.mhs, mp.nogood
    for m in members:
        if m in children and not args[m]:
            for c in children[m]:
                for d in bits_of(desc[c]):
                    if (1 << d) & member_bits or d in extra:
                        continue
                    dd, dn = desc[d], nogood[d]
                    if dd & mp_nogood or dn & member_bits:
                        continue
                    if any(dd & nogood[e] or desc[e] & dn for e in extra):
                        continue
                    extra.append(d)
    queue = sorted(members + extra, key=order.__getitem__, reverse=True)
    lsc = H.lsc
    score = {m: local_score_of(lsc[m], params) for m in queue}
    push_down(H, params, queue, score)
    return sum(score[m] for m in queue)
