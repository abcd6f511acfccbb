"""Structural features of one episode: the MAC content vector and a graph fingerprint.

Content features (the MAC "content vector" of Forbus, Gentner & Law 1995, *MAC/FAC: A model of
similarity-based retrieval*, Cognitive Science 19) are counts of structural items of a
:class:`~analogist.signature.Signature`. Role tags and surface words are arbitrary names and are
**never** features; only predicate names, causal edge types and signs, and the shape of the
causal graph are. Feature names:

* ``rel:P`` — relations with predicate ``P``;
* ``atom:P`` — distinct causal-chain atoms with predicate ``P``;
* ``edge:T:S`` — causal edges of type ``T`` (causes, prevents, enables, masks, delays) and sign
  ``S`` (``+``/``-``);
* ``flow:P>T>Q`` — a causal edge of type ``T`` from a ``P`` atom to a ``Q`` atom (a negative edge
  is written ``T:-``, e.g. ``flow:P>causes:->Q``);
* causal motifs (seed 000 §11) on the directed graph whose nodes are the distinct causal-chain
  atoms and whose edges are the causal edges:

  - ``motif:chain`` — mediator chains A→B→C (A, B, C distinct), and ``motif:chain:T1S1>T2S2``
    typed by the two edges;
  - ``motif:common_cause`` — A→B, A→C (B ≠ C), typed variant ``motif:common_cause:X|Y``
    (the two edge types sorted);
  - ``motif:common_effect`` — convergence A→C, B→C (A ≠ B), typed as above;
  - ``motif:masking`` — each ``masks`` edge (``motif:masking:masks``) and each preventer
    (a ``prevents`` edge, or a negative ``causes`` edge) into an effect that a different atom
    causes or enables (``motif:masking:preventer``); ``motif:masking:self`` counts a cause that
    also masks (an atom with both a causes/enables edge and a masks edge out) — "a cause that
    hides its own evidence";
  - ``motif:loop`` — directed cycles (over edges; a self-edge is a cycle of length 1), split
    into ``motif:loop:+`` (the product of the edge signs is +1, a reinforcing loop) and
    ``motif:loop:-`` (balancing). Cycles longer than :data:`MAX_LOOP_LENGTH` are not counted,
    and the search stops after :data:`MAX_LOOP_STEPS` steps (pathological graphs only);
  - ``motif:race`` — two causes/enables edges into one effect from distinct atoms that share a
    role (``motif:race:shared_role``), or a ``races_with`` relation (``motif:race:relation``).

The graph fingerprint (:func:`wl_fingerprint`) is a Weisfeiler–Lehman hash (Shervashidze et al.
2011, *Weisfeiler-Lehman graph kernels*, JMLR 12) of the role–relation graph, for exact-shape
lookup and failure-class counting (seed 000 §6, index 3). Both are invariant under renaming roles.
Everything here is a pure function.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, _count_elements  # type: ignore[attr-defined]
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from analogist.signature import Atom, Signature

__all__ = [
    "FINGERPRINT_DEPTH",
    "MAX_LOOP_LENGTH",
    "MAX_LOOP_STEPS",
    "EpisodeFeatures",
    "causal_motifs",
    "content_features",
    "FINGERPRINT_VERSION",
    "extract_features",
    "extract_features_many",
    "surface_tokens",
    "surface_tokens_of_data",
    "wl_fingerprint",
    "wl_fingerprints",
]

FINGERPRINT_DEPTH = 2
"""Default WL depth (seed 000 §6: "a Weisfeiler–Lehman hash … at depth 2")."""
MAX_LOOP_LENGTH = 8
"""Longest directed cycle counted as a feedback loop."""
MAX_LOOP_STEPS = 200_000
"""Search budget of the cycle enumeration (a bound on work for adversarial graphs)."""

_GENERATIVE = ("causes", "enables")


@dataclass(frozen=True, slots=True)
class EpisodeFeatures:
    """An episode's content counts (feature name → count) and WL fingerprint."""

    content: dict[str, float]
    fingerprint: str
    fingerprint_depth: int = field(default=FINGERPRINT_DEPTH)


def _s(sign: int) -> str:
    return "+" if sign > 0 else "-"


_Key = tuple[str, tuple[str, ...]]
"""An atom as ``(predicate, args)``: equal exactly when the atoms are (and hashed in C)."""


def _key(a: Atom) -> _Key:
    return (a.predicate, a.args)


class _Graph(Protocol):
    """What the feature functions read of a signature: its role tags, relation keys, the
    distinct causal atoms (first-appearance order) and the causal edges (src, dst, type,
    sign)."""

    @property
    def roles(self) -> Mapping[str, Any]: ...
    @property
    def relations(self) -> Sequence[_Key]: ...
    @property
    def nodes(self) -> Sequence[_Key]: ...
    @property
    def edges(self) -> Sequence[tuple[int, int, str, int]]: ...


@dataclass(frozen=True, slots=True)
class _Parsed:
    """The :class:`_Graph` of a signature, taken once."""

    roles: Mapping[str, Any]
    relations: list[_Key]
    nodes: list[_Key]
    edges: list[tuple[int, int, str, int]]


def _parse(sig: Signature) -> _Parsed:
    index: dict[_Key, int] = {}
    nodes: list[_Key] = []
    edges: list[tuple[int, int, str, int]] = []
    for e in sig.causal_chain:
        c, f = (e.cause.predicate, e.cause.args), (e.effect.predicate, e.effect.args)
        i = index.get(c)
        if i is None:
            i = index[c] = len(nodes)
            nodes.append(c)
        j = index.get(f)
        if j is None:
            j = index[f] = len(nodes)
            nodes.append(f)
        edges.append((i, j, e.edge, e.sign))
    return _Parsed(sig.roles, [(a.predicate, a.args) for a in sig.relations], nodes, edges)


def _pairs(items: list[tuple[int, str, int]]) -> list[tuple[tuple[int, str, int],
                                                            tuple[int, str, int]]]:
    return [(items[i], items[j]) for i in range(len(items)) for j in range(i + 1, len(items))]


def _loops(n: int, outs: list[list[tuple[int, str, int, str]]], out: dict[str, int]) -> None:
    """Count the directed cycles (``outs[node]``: its edges out as (dst, type, sign, ...))."""
    steps = 0
    for start in range(n):
        if not outs[start]:
            continue  # no edge out: no cycle through it (and no step taken)
        # iterative DFS over paths start → … using nodes > start only
        stack: list[tuple[int, int, int, int]] = [(start, 0, 1, 0)]  # node, next edge, sign, len
        on_path = {start}
        while stack:
            node, k, sign, length = stack[-1]
            nbrs = outs[node]
            if k >= len(nbrs) or steps >= MAX_LOOP_STEPS:
                stack.pop()
                on_path.discard(node)
                if steps >= MAX_LOOP_STEPS:
                    return
                continue
            stack[-1] = (node, k + 1, sign, length)
            steps += 1
            nxt, _t, s, _ts = nbrs[k]
            if nxt == start:
                key = "motif:loop:+" if sign * s > 0 else "motif:loop:-"
                out["motif:loop"] = out.get("motif:loop", 0) + 1
                out[key] = out.get(key, 0) + 1
            elif nxt > start and nxt not in on_path and length + 1 < MAX_LOOP_LENGTH:
                on_path.add(nxt)
                stack.append((nxt, 0, sign * s, length + 1))


def causal_motifs(sig: Signature) -> Counter[str]:
    """Motif counts of the causal graph of ``sig`` (see the module docstring)."""
    out: dict[str, int] = {}
    _motifs(_parse(sig), out)
    return Counter(out)


def _count_pairs(out: dict[str, int], name: str, ends: list[tuple[int, str, int, str]],
                 b: int) -> None:
    """Count under ``name`` (and ``name:<typed edge>|<typed edge>``, the two in sorted order)
    each unordered pair of ``ends`` — edges into or out of atom ``b`` — that reach two distinct
    atoms other than ``b``: the common-cause and common-effect motifs."""
    get = out.get
    for i in range(len(ends) - 1):
        x, _t1, _s1, ts1 = ends[i]
        for j in range(i + 1, len(ends)):
            y, _t2, _s2, ts2 = ends[j]
            if x != y and b != x and b != y:
                out[name] = get(name, 0) + 1
                key = f"{name}:{ts1}|{ts2}" if ts1 <= ts2 else f"{name}:{ts2}|{ts1}"
                out[key] = get(key, 0) + 1


def _motifs(g: _Graph, out: dict[str, int], n_races: int | None = None) -> None:
    """Add the motif counts of ``g`` to ``out`` (one pass over the nodes; every count is a sum,
    so the order of the passes does not matter). ``n_races``: the number of ``races_with``
    relations of ``g`` when the caller has counted them (else they are counted here)."""
    nodes, edges = g.nodes, g.edges
    n = len(nodes)
    ins: list[list[tuple[int, str, int, str]]] = [[] for _ in range(n)]
    outs: list[list[tuple[int, str, int, str]]] = [[] for _ in range(n)]
    n_masks_total = 0
    backward = False  # an edge to a node numbered no later than its source (else no cycle)
    simple = True  # every node with at most one edge in and at most one out
    for src, dst, t, sign in edges:
        ts = t + ("+" if sign > 0 else "-")
        if outs[src] or ins[dst]:
            simple = False
        outs[src].append((dst, t, sign, ts))
        ins[dst].append((src, t, sign, ts))
        if t == "masks":
            n_masks_total += 1
        if dst <= src:
            backward = True
    get = out.get
    if n_masks_total:
        out["motif:masking"] = get("motif:masking", 0) + n_masks_total
        out["motif:masking:masks"] = get("motif:masking:masks", 0) + n_masks_total
    if simple:  # a node's only motif is then the chain through it (the pairs below need two)
        for b in range(n):
            into, from_b = ins[b], outs[b]
            if into and from_b:
                a, _t1, _s1, ts1 = into[0]
                c, _t2, _s2, ts2 = from_b[0]
                if a != b and c != b and c != a:
                    out["motif:chain"] = get("motif:chain", 0) + 1
                    key = f"motif:chain:{ts1}>{ts2}"
                    out[key] = get(key, 0) + 1
    for b in range(0 if simple else n):
        into, from_b = ins[b], outs[b]
        if into and from_b:
            for a, _t1, _s1, ts1 in into:
                if a == b:
                    continue
                for c, _t2, _s2, ts2 in from_b:
                    if c != b and c != a:
                        out["motif:chain"] = get("motif:chain", 0) + 1
                        key = f"motif:chain:{ts1}>{ts2}"
                        out[key] = get(key, 0) + 1
        if len(from_b) > 1:
            _count_pairs(out, "motif:common_cause", from_b, b)
        if len(into) > 1:
            _count_pairs(out, "motif:common_effect", into, b)
            # masking by a preventer
            preventers = [x for x, t, s, _ts in into if t == "prevents" or (t == "causes" and s < 0)]
            if preventers:
                causes = [x for x, t, s, _ts in into if t in _GENERATIVE and s > 0]
                k = sum(1 for p in preventers for c in causes if p != c)
                if k:
                    out["motif:masking"] = get("motif:masking", 0) + k
                    out["motif:masking:preventer"] = get("motif:masking:preventer", 0) + k
            # races
            gen = [x for x, t, _s, _ts in into if t in _GENERATIVE]
            for i in range(len(gen) - 1):
                x = gen[i]
                for j in range(i + 1, len(gen)):
                    y = gen[j]
                    if x != y and set(nodes[x][1]) & set(nodes[y][1]):
                        out["motif:race"] = get("motif:race", 0) + 1
                        out["motif:race:shared_role"] = get("motif:race:shared_role", 0) + 1
        if from_b and n_masks_total:
            n_masks = sum(1 for _x, t, _s2, _ts in from_b if t == "masks")
            if n_masks:
                n_causes = sum(1 for _x, t, _s2, _ts in from_b if t in _GENERATIVE)
                if n_causes:
                    out["motif:masking:self"] = get("motif:masking:self", 0) + n_masks * n_causes

    # feedback loops: none when every edge goes to a later node (the numbering is then a
    # topological order)
    if backward:
        _loops(n, outs, out)

    if n_races is None:
        n_races = sum(1 for pred, _args in g.relations if pred == "races_with")
    if n_races:
        out["motif:race"] = get("motif:race", 0) + n_races
        out["motif:race:relation"] = get("motif:race:relation", 0) + n_races


def content_features(sig: Signature) -> dict[str, float]:
    """The content counts of ``sig`` (feature name → count), keys sorted."""
    return _content(_parse(sig))


def _content(g: _Graph) -> dict[str, float]:
    c = _counts(g)
    return {k: float(c[k]) for k in sorted(c) if c[k]}


_COUNT_TEXT = {n: repr(float(n)) for n in range(1, 1025)}
"""How the JSON encoder writes the float of each small count."""


def _content_json(g: _Graph) -> str:
    """``json.dumps(_content(g), separators=(",", ":"))``, written directly: feature names are
    made of predicates (the model's identifier pattern), edge types, signs and fixed words, so
    none needs escaping."""
    c = _counts(g)
    text = _COUNT_TEXT
    return "{" + ",".join([f'"{k}":{text.get(v) or repr(float(v))}' for k in sorted(c)
                           if (v := c[k])]) + "}"


def _counts(g: _Graph) -> dict[str, int]:
    """The content counts of ``g``, unsorted."""
    nodes = g.nodes
    items = ["rel:" + pred for pred, _args in g.relations]
    # distinct atoms in first-appearance order are exactly the graph's nodes
    items += ["atom:" + pred for pred, _args in nodes]
    for src, dst, edge, sign in g.edges:
        if sign > 0:
            items += (f"edge:{edge}:+", f"flow:{nodes[src][0]}>{edge}>{nodes[dst][0]}")
        else:
            items += (f"edge:{edge}:-", f"flow:{nodes[src][0]}>{edge}:->{nodes[dst][0]}")
    c: dict[str, int] = {}
    _count_elements(c, items)  # (what Counter.update counts with, into a plain dict)
    _motifs(g, c, c.get("rel:races_with", 0))  # (the relations are counted by predicate)
    return c


def wl_fingerprint(sig: Signature, depth: int = FINGERPRINT_DEPTH) -> str:
    """Weisfeiler–Lehman hash of the role–relation graph of ``sig`` (64 hex digits; version
    :data:`FINGERPRINT_VERSION`).

    Nodes: one per role (all with the same initial label, so role names never matter) and one per
    distinct atom (relations and causal-chain atoms; an atom that is both is one node), labelled
    by its predicate and whether it is asserted as a relation. Edges: atom–role, labelled by the
    argument position (seen from either end: ``argI`` / ``inI``); causal edges cause → effect,
    labelled by edge type and sign (``out:T:S`` / ``in:T:S``). Every label text is interned once
    as a 64-bit integer (the first 8 bytes of its sha256); ``depth`` rounds of relabelling over
    those integers, each node's new label a fixed-width (64-bit) hash of its own label and the
    sum of the hashes of its (edge label, neighbour label) pairs — a multiset hash, so no sorting;
    the digest is the sha256 of two independent 64-bit sums over every node and round of the
    hashes of (round, label). Invariant under renaming roles and under the order of relations,
    roles and causal edges. :func:`wl_fingerprints` computes many at once (the same values).
    """
    _check_depth(depth)
    return _wl_many([_parse(sig)], depth)[0]


def wl_fingerprints(sigs: Sequence[Signature], depth: int = FINGERPRINT_DEPTH) -> list[str]:
    """:func:`wl_fingerprint` of each of ``sigs`` (one vectorised pass over all their graphs)."""
    _check_depth(depth)
    return _wl_many([_parse(s) for s in sigs], depth)


def _check_depth(depth: Any) -> None:
    if not isinstance(depth, int) or isinstance(depth, bool) or not 0 <= depth <= 16:
        raise ValueError(f"depth must be an integer from 0 to 16, got {depth!r}")


FINGERPRINT_VERSION = 2
"""The version of :func:`wl_fingerprint` (1: string labels hashed with sha256 per node per
round; 2: interned integer labels and 64-bit hashes). Stores migrate their fingerprints on open
(``memory/schema.py``)."""

_U64 = (1 << 64) - 1


def _lid(text: str) -> int:
    """The 64-bit integer id of a label text (first 8 bytes of its sha256, little-endian)."""
    v = _LABEL_IDS.get(text)
    if v is None:
        v = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
        if len(_LABEL_IDS) < 1 << 16:  # predicates are few; a bound against odd corpora
            _LABEL_IDS[text] = v
    return v


_LABEL_IDS: dict[str, int] = {}
_ATOM_IDS: dict[bool, dict[str, int]] = {True: {}, False: {}}
"""predicate -> the id of an atom node's label, for asserted relations (True) and states."""


def _atom_id(pred: str, asserted: bool) -> int:
    v = _lid(f"A:{pred}:{'rel' if asserted else 'state'}")
    table = _ATOM_IDS[asserted]
    if len(table) < 1 << 16:
        table[pred] = v
    return v

# edge kinds: 0 .. 63 an argument position (a signature has at most 16) (atom -> role, seen back as in<i>), then one
# per causal edge type and sign (cause -> effect)
_N_POS = 64
_EDGE_KIND = {(t, s): _N_POS + 2 * i + (s < 0) for i, t in enumerate(
    ("causes", "prevents", "enables", "masks", "delays")) for s in (1, -1)}
_FWD = np.array([_lid(f"arg{i}") for i in range(_N_POS)]
                + [_lid(f"out:{t}:{'+' if s > 0 else '-'}") for (t, s) in _EDGE_KIND],
                dtype=np.uint64)
_BWD = np.array([_lid(f"in{i}") for i in range(_N_POS)]
                + [_lid(f"in:{t}:{'+' if s > 0 else '-'}") for (t, s) in _EDGE_KIND],
                dtype=np.uint64)
_ROLE = _lid("R")
_SALTS = np.array([[_lid(f"wl-v2|lane={lane}|round={r}") for r in range(17)]
                   for lane in (0, 1)], dtype=np.uint64)
_SELF = np.uint64(_lid("wl-v2|self"))


def _mix(x: np.ndarray) -> np.ndarray:
    """A fixed-width 64-bit hash of each element (the splitmix64 finaliser; in place)."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _wl_many(gs: Sequence[_Graph], depth: int) -> list[str]:
    if not gs:
        return []
    labels: list[int] = []
    # flat triples (atom or cause node, role or effect node, edge kind), nodes numbered within
    # their graph (small ints, which Python does not allocate) and moved to the graph's place
    # among all nodes by numpy below
    ends: list[int] = []
    starts: list[int] = []  # each graph's first node
    ends_at: list[int] = []  # each graph's first triple (in ``ends``, times 3)
    kinds = _EDGE_KIND
    rel_id, state_id = _ATOM_IDS[True], _ATOM_IDS[False]
    append = labels.append
    for g in gs:
        starts.append(len(labels))
        ends_at.append(len(ends))
        roles = g.roles
        n_roles = len(roles)
        role_node = {tag: k for k, tag in enumerate(roles)}
        labels += [_ROLE] * n_roles
        i = n_roles  # the next node
        atom_node: dict[_Key, int] = {}
        for a in g.relations:  # distinct (a signature's relations are deduplicated)
            atom_node[a] = i
            pred, args = a
            v = rel_id.get(pred)
            append(v if v is not None else _atom_id(pred, True))
            pos = 0
            for tag in args:
                ends += (i, role_node[tag], pos)
                pos += 1  # noqa: SIM113 (cheaper than enumerate per argument)
            i += 1
        chain_node = []  # graph node of each distinct causal atom (an asserted one is shared)
        for a in g.nodes:
            j = atom_node.get(a)
            if j is None:
                pred, args = a
                v = state_id.get(pred)
                append(v if v is not None else _atom_id(pred, False))
                pos = 0
                for tag in args:
                    ends += (i, role_node[tag], pos)
                    pos += 1  # noqa: SIM113 (cheaper than enumerate per argument)
                j = i
                i += 1
            chain_node.append(j)
        for src, dst, edge, sign in g.edges:
            ends += (chain_node[src], chain_node[dst], kinds[edge, sign])
    ends_at.append(len(ends))
    cur = np.array(labels, dtype=np.uint64)
    e = np.array(ends, dtype=np.intp).reshape(-1, 3)
    first = np.array(starts, dtype=np.intp)
    place = np.repeat(first, np.diff(np.array(ends_at, dtype=np.intp)) // 3)
    e[:, 0] += place
    e[:, 1] += place
    src = np.concatenate([e[:, 0], e[:, 1]])
    dst = np.concatenate([e[:, 1], e[:, 0]])
    elab = np.concatenate([_FWD[e[:, 2]], _BWD[e[:, 2]]])
    lanes = [np.zeros(len(gs), dtype=np.uint64) for _ in range(2)]
    for r in range(depth + 1):
        if r:
            pair = _mix(cur[dst] ^ elab)
            acc = np.zeros(len(cur), dtype=np.uint64)
            np.add.at(acc, src, pair)
            own = _mix(cur ^ _SELF)
            own += acc
            cur = _mix(own)
        for lane, out in enumerate(lanes):
            out += np.add.reduceat(_mix(cur ^ _SALTS[lane, r]), first)
    head = f"wl-v2|depth={depth}|"
    return [hashlib.sha256(f"{head}{a:016x}{b:016x}".encode("ascii")).hexdigest()
            for a, b in zip(lanes[0].tolist(), lanes[1].tolist(), strict=True)]


def _wl_v1(sig: Signature, depth: int = FINGERPRINT_DEPTH) -> str:
    """Version 1 of :func:`wl_fingerprint` (sha256 over the sorted label strings of every
    round): kept only so that a store's migration can tell the fingerprints this library
    computed (replaced by version 2) from fingerprints a caller supplied (kept)."""
    g = _parse(sig)
    role_node = {tag: i for i, tag in enumerate(sorted(sig.roles))}
    labels: list[str] = ["R"] * len(role_node)
    adj: list[list[tuple[str, int]]] = [[] for _ in labels]
    relations = set(g.relations)
    atom_node: dict[_Key, int] = {}

    def atom(a: _Key) -> int:
        i = atom_node.get(a)
        if i is None:
            i = atom_node[a] = len(labels)
            labels.append(f"A:{a[0]}:{'rel' if a in relations else 'state'}")
            mine: list[tuple[str, int]] = []
            adj.append(mine)
            for pos, tag in enumerate(a[1]):
                r = role_node[tag]
                mine.append((f"arg{pos}>", r))
                adj[r].append((f"in{pos}>", i))
        return i

    for a in g.relations:
        atom(a)
    for src, dst, edge, sign in g.edges:
        c, f = atom(g.nodes[src]), atom(g.nodes[dst])
        lab = f"{edge}:{'+' if sign > 0 else '-'}>"
        adj[c].append(("out:" + lab, f))
        adj[f].append(("in:" + lab, c))
    every = ["0|" + x for x in labels]
    cur = labels
    for it in range(1, depth + 1):
        cur = [hashlib.sha256((cur[i] + "|" + ";".join(sorted([el + cur[j] for el, j in nb])))
                              .encode("utf-8")).hexdigest()[:20]
               for i, nb in enumerate(adj)]
        every.extend([f"{it}|" + x for x in cur])
    every.sort()
    return hashlib.sha256(
        (f"wl-v1|depth={depth}\n" + "\n".join(every)).encode("utf-8")).hexdigest()


def extract_features(sig: Signature, depth: int = FINGERPRINT_DEPTH) -> EpisodeFeatures:
    """Content counts and WL fingerprint of ``sig`` (the signature is walked once for both)."""
    return extract_features_many([sig], depth)[0]


def extract_features_many(sigs: Sequence[Signature], depth: int = FINGERPRINT_DEPTH
                          ) -> list[EpisodeFeatures]:
    """:func:`extract_features` of each of ``sigs`` (their fingerprints in one vectorised
    pass)."""
    _check_depth(depth)
    return _features_of([_parse(s) for s in sigs], depth)


def _features_of(gs: Sequence[_Graph], depth: int = FINGERPRINT_DEPTH) -> list[EpisodeFeatures]:
    """The features of each of the signatures ``gs`` stand for (their fingerprints in one
    vectorised pass)."""
    fps = _wl_many(gs, depth)
    return [EpisodeFeatures(content=_content(g), fingerprint=fp, fingerprint_depth=depth)
            for g, fp in zip(gs, fps, strict=True)]


def _stored_features(gs: Sequence[_Graph]) -> list[tuple[str, str]]:
    """(content counts as compact JSON, WL fingerprint at the default depth) of each of ``gs``:
    what a store writes of :func:`_features_of`, without the float dicts."""
    fps = _wl_many(gs, FINGERPRINT_DEPTH)
    return [(_content_json(g), fp) for g, fp in zip(gs, fps, strict=True)]


_WORD = re.compile(r"[a-z0-9]{3,}")
"""Runs of three or more of a-z0-9: a maximal run shorter than that has no part this matches,
and a longer one is matched whole (greedily, from its first character)."""


def _content_words(text: str) -> set[str]:
    """The distinct maximal runs of [a-z0-9] of three characters or more in ``text``
    (lower-cased)."""
    return set(_WORD.findall(text.lower()))


def surface_tokens(sig: Signature) -> set[str]:
    """Words of an episode's surface: domain, entity names and the concrete L0 narrative (words
    of three letters or more, lower-cased). Not a structural feature: the decoy probe of
    retrieval compares surfaces with it, and the store keeps it beside each episode."""
    return _content_words(" ".join([sig.surface.domain or "", *sig.surface.entities,
                                    sig.levels.L0 or ""]))


def surface_tokens_of_data(data: Mapping[str, Any]) -> set[str]:
    """:func:`surface_tokens` of a signature's canonical JSON data, without validating it."""
    surface = data.get("surface") or {}
    levels = data.get("levels") or {}
    return _content_words(" ".join([str(surface.get("domain") or ""),
                                    *(str(x) for x in surface.get("entities") or []),
                                    str(levels.get("L0") or "")]))
