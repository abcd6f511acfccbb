"""The judge: what an analogy licenses, in the likeness / difference / unknown form.

Given a source episode, a target episode and a structure mapping between them (SME), the judge

* lists **likenesses** (source relations and causal edges that are mapped), **differences**
  (alignable differences: matched structure whose functors differ, and source relations whose
  roles map onto roles the target relates differently) and **unknowns** (source structure with no
  counterpart in the target: candidate inferences not yet observed there) — Neustadt & May's
  likenesses / differences / unknowns (1986), produced by the alignment itself (Markman & Gentner
  1993);
* applies the **causal-path gate** to each conclusion of the source (an effect at the end of its
  causal chain): the conclusion transfers only when every cause on its supporting path is mapped,
  every mapped edge on that path is observed (not inferred) on both sides, and no unmatched
  preventer of the conclusion or of its path exists on either side (Lee & Holyoak 2008; Holyoak,
  Lee & Lu 2010; seed 000 §8) — and, ours, only when the conclusion is about roles the target
  has and the mapping is an analogy at all (it covers at least ``mechanism_threshold`` of the
  source's relations and edges: inferences projected from a sliver of shared structure are
  not evidence);
* lists **contradictions**: structure the target states the other way round (a reversed causal
  link — reversed outright, or the target's chain running from its effect to its cause while
  neither side states the loop both ways —, a link of the opposite kind or sign, a relation
  with its roles swapped) — evidence
  against the mechanism, not an unknown, so neither the mechanism nor a conclusion transfers.
  A mapping that aligns a causal edge with one of the opposite direction or sign is a
  structural contradiction, not a near-perfect analogue: the contradicted edge is a row of the
  difference table (the target's contrary edge and how it differs), not a likeness although
  SME maps a sign-flipped edge, nor an unknown although a reversed one is unmapped, and it does
  not count towards the mapping's coverage. Retrieval ranks a contradicted candidate below
  every consistent one (:mod:`analogist.retrieve`);
* decides separately whether the **mechanism** (the source's fix operator, rewritten through the
  role mapping) transfers: when enough of the source's structure is mapped, nothing contradicts
  it, and every role the fix operates on has a counterpart (else the fix cannot be said in the
  target's terms). Requiring the causal path the fix interrupts to be mapped as well was tried
  and dropped: it withholds the fix exactly where the analogy's point is to supply a missing
  link (PARB F1); PARB's mapping-lesion control reports the fix's insensitivity to a deleted
  edge instead;
* names one **prediction**: a cheap observable the mapping predicts in the target, with the check
  that would refute the analogy.

The report renders in the seed's ANALOGY / MAPPED / MATCHES / FAILS / BLOCKERS / TRANSFER /
PREDICT / CHECK format and as JSON. The judge is deterministic and uses no model.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from analogist.description import Description, Expr, to_sexpr
from analogist.params import bounded, check_bounds
from analogist.signature import Atom, CausalEdge, Signature, compile_signature
from analogist.sme import GlobalMapping, MatchResult, SMEParams, identity_score, match
from analogist.vocabulary import Vocabulary

POSITIVE_EDGES = ("causes", "enables")
"""Edge types that support their effect (with sign +1)."""

BLOCKING_EDGES = ("prevents",)
"""Edge types that block their effect."""


def judge_sme_params() -> SMEParams:
    """The SME parameters find, map and the judge use: the reference's regression values with
    :attr:`~analogist.sme.SMEParams.minimal_ascension` on, its functor correspondences not
    forced one-to-one (``enforce_1to1_minimal_ascension`` off: an ascended ``harmed`` ~
    ``failure`` at one end of a chain does not stop ``harmed`` ~ ``harmed`` at another; with it
    on, the casebook's leave-one-out lost a cascade target), so that two episodes told in
    different domains still align where one ends in ``harmed`` and the other in ``failure``
    (both kinds of ``adverse`` in the bundled vocabulary) below a matched cause. Identical
    predicates score more than ascended ones (``minimal_ascension_multiplier``)."""
    return SMEParams(minimal_ascension=True, enforce_1to1_minimal_ascension=False)


@dataclass(frozen=True, slots=True)
class JudgeParams:
    """Thresholds of the judge.

    Attributes:
        mechanism_threshold: share of the source's stated structure (relations and causal edges)
            that a mapping must cover for the mechanism (fix operator) to transfer.
        sme: parameters of the structure-mapping engine: the reference's, with minimal
            ascension on (:func:`judge_sme_params`).
    """

    mechanism_threshold: float = bounded(0.5, lo=0.0, hi=1.0)
    sme: SMEParams = field(default_factory=judge_sme_params)

    def __post_init__(self) -> None:
        check_bounds(self)


@dataclass(frozen=True, slots=True)
class Conclusion:
    """One conclusion of the source and what the gate decided for it.

    ``status`` is ``holds`` (already mapped: the target shows it too), ``transfer`` (licensed) or
    ``withheld``; ``reasons`` say why it was withheld.
    """

    source: str
    projected: str
    status: str
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Prediction:
    observable: str
    check: str
    source: str


@dataclass(frozen=True, slots=True)
class AnalogyReport:
    """The judgement of one source → target analogy."""

    source_id: str
    target_id: str
    source_gist: str
    role_map: dict[str, str]
    target_roles: dict[str, str]
    score: float
    normalized_score: float
    coverage: float
    likenesses: tuple[tuple[str, str], ...]
    differences: tuple[tuple[str, str], ...]
    unknowns: tuple[str, ...]
    n_source_relations: int
    n_matched_relations: int
    blockers: tuple[str, ...]
    contradictions: tuple[str, ...]
    conclusions: tuple[Conclusion, ...]
    mechanism: str | None
    transfer_mechanism: bool
    prediction: Prediction | None
    critic: dict[str, Any] | None = None     # the independent critic's verdict (with_critic)
    #: the report's one named score, "similarity": a normalized structural score in [0, 1].
    #: By default ``normalized_score`` (the mapping's SME score over the source's self-match
    #: score); retrieval sets it to the score it ranks by (over the target's self-match score,
    #: discounted per contradiction), so a hit and its report show the same number.
    similarity: float | None = None
    #: the rows of ``differences`` that are contradictions: (source structure, the target's
    #: contrary structure and how — reversed, opposite sign, opposite kind, roles swapped)
    contradicted: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.similarity is None:
            object.__setattr__(self, "similarity", self.normalized_score)

    @property
    def raw_ses(self) -> float:
        """SME's raw structural evaluation score of the mapping (unbounded; ``score``)."""
        return self.score

    @property
    def transfer(self) -> bool:
        """Whether the source's conclusion transfers: at least one conclusion passes the gate."""
        return any(c.status == "transfer" for c in self.conclusions)

    @property
    def conclusion_holds(self) -> bool:
        """Whether the source has conclusions and every one already holds in the target."""
        return bool(self.conclusions) and all(c.status == "holds" for c in self.conclusions)

    @property
    def verdict(self) -> str:
        """A plain label, true to the conclusions and the mechanism: ``transfer`` (a
        conclusion transfers), ``no transfer: the target contradicts the source`` (a reversed
        or opposite link, swapped roles), ``conclusion already holds`` (every conclusion is
        already stated in the target; with ``; mechanism transfers`` when the fix carries over),
        ``mechanism transfers; conclusion withheld``, ``mechanism transfers`` (the source
        states no conclusion) or ``no transfer``."""
        if self.transfer:
            return "transfer"
        if self.contradictions:
            return "no transfer: the target contradicts the source"
        holds = self.conclusion_holds
        if self.transfer_mechanism:
            if holds:
                return "conclusion already holds; mechanism transfers"
            if self.conclusions:
                return "mechanism transfers; conclusion withheld"
            return "mechanism transfers"
        if holds:
            return "conclusion already holds"
        return "no transfer"

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source_id,
            "target": self.target_id,
            "similarity": self.similarity,
            "raw_ses": self.score,
            "score": self.score,
            "normalized_score": self.normalized_score,
            "coverage": self.coverage,
            "role_map": dict(self.role_map),
            "likenesses": [list(x) for x in self.likenesses],
            "differences": [list(x) for x in self.differences],
            "unknowns": list(self.unknowns),
            "blockers": list(self.blockers),
            "contradictions": list(self.contradictions),
            "contradicted": [list(x) for x in self.contradicted],
            "conclusions": [{"source": c.source, "projected": c.projected, "status": c.status,
                             "reasons": list(c.reasons)} for c in self.conclusions],
            "mechanism": self.mechanism,
            "transfer_mechanism": self.transfer_mechanism,
            "transfer": self.transfer,
            "verdict": self.verdict,
            "prediction": None if self.prediction is None else {
                "observable": self.prediction.observable, "check": self.prediction.check,
                "source": self.prediction.source},
            "critic": self.critic,
        }

    def render(self) -> str:
        """The report as text: one named score (similarity), the mapping, what fails, what
        transfers and one prediction to check."""
        lines = [f"ANALOGY   source={self.source_id} ({self.source_gist}) "
                 f"target={self.target_id}  similarity {self.similarity:.3f} (normalized "
                 f"structural score; raw SES {self.score:.3f}), "
                 f"{self.coverage:.0%} of the source's relations and edges mapped"]
        lines.append(f"VERDICT   {self.verdict}")
        mapped = ", ".join(f"{s}→{t}" for s, t in self.role_map.items()) or "nothing"
        lines.append(f"MAPPED    {mapped}")
        names = ", ".join(sorted({_pred_of(s) for s, _t in self.likenesses
                                  if " " not in s})) or "none"
        lines.append(f"MATCHES   {names} ({self.n_matched_relations}/{self.n_source_relations} "
                     "source relations)")
        fails = [f"contradicted: {c}" for c in self.contradictions]
        against = set(self.contradicted)   # already said, as contradictions
        fails += [f"{s}: target has {t} instead" for s, t in self.differences
                  if (s, t) not in against]
        fails += [f"{u}: unknown in target" for u in self.unknowns]
        lines.append("FAILS     " + ("; ".join(fails) if fails else "nothing"))
        lines.append("BLOCKERS  " + ("; ".join(self.blockers) if self.blockers else "none"))
        mech = (f"mechanism: {self.mechanism} → "
                f"{'transfer' if self.transfer_mechanism else 'do NOT transfer'}"
                if self.mechanism else "mechanism: none stated in the source")
        concl = "; ".join(
            f'conclusion: "{c.projected}" → '
            + {"holds": "already holds in target", "transfer": "transfer",
               "withheld": "do NOT transfer"}[c.status]
            + (f" ({'; '.join(c.reasons)})" if c.reasons else "")
            for c in self.conclusions) or "no causal conclusion in the source"
        lines.append(f"TRANSFER  {mech}; {concl}")
        if self.prediction is None:
            lines.append("PREDICT   nothing checkable: no unmapped source structure over mapped "
                         "roles")
        else:
            lines.append(f"PREDICT   {self.prediction.observable}")
            lines.append(f"CHECK     {self.prediction.check}")
        if self.critic is not None:
            c = self.critic
            if c.get("verdict") in ("skipped", "failed"):
                lines.append(f"CRITIC    {c.get('reason') or 'skipped'}")
            else:
                lines.append(f"CRITIC    {c.get('verdict')} ({c.get('model', '?')}): strongest "
                             f"disanalogy — {c.get('strongest_disanalogy', '')}")
        return "\n".join(lines)


def with_critic(report: AnalogyReport, verdict: Any) -> AnalogyReport:
    """Attach an independent critic's verdict (seed 000 §7 change 2, §8) to a report.

    ``verdict`` is anything with ``to_json()`` giving at least ``verdict`` (accept, reject,
    uncertain or skipped) and ``strongest_disanalogy``. The critic saw only the two signatures
    and the role map. A ``reject`` — or a ``failed`` critic, one that was asked and gave no
    verdict (fail closed; its ``reason`` says "critic failed: …") — withholds every transfer:
    each licensed conclusion becomes
    ``withheld`` with the critic's disanalogy as the reason, the mechanism no longer transfers,
    and the disanalogy is listed among the blockers. ``accept``/``uncertain``/``skipped`` change
    nothing but the record.
    """
    data = verdict.to_json() if hasattr(verdict, "to_json") else dict(verdict)
    if data.get("verdict") not in ("reject", "failed"):
        return replace(report, critic=data)
    why = (str(data.get("reason") or "critic failed") if data["verdict"] == "failed"
           else f"critic: {data.get('strongest_disanalogy') or 'rejected'}")
    concl = tuple(Conclusion(c.source, c.projected, "withheld", (*c.reasons, why))
                  if c.status == "transfer" else c for c in report.conclusions)
    return replace(report, critic=data, conclusions=concl, transfer_mechanism=False,
                   blockers=(*report.blockers, why))


# ------------------------------------------------------------------------------------------


def _pred_of(atom_text: str) -> str:
    return atom_text.split("(", 1)[0]


class _Side:
    """A signature with its compiled description and atom ↔ expression lookups (read only once
    built: :func:`_side` shares one between the mappings of the same two objects)."""

    def __init__(self, sig: Signature, desc: Description) -> None:
        self.sig = sig
        self.desc = desc
        canon = desc.vocabulary.canonical
        self.expr_of_atom: dict[Atom, Expr] = {}
        for a in [*sig.relations, *(x for e in sig.causal_chain for x in e.atoms())]:
            self.expr_of_atom[a] = Expr(canon(a.predicate), a.args)
        self.expr_of_edge: dict[CausalEdge, Expr] = {
            e: Expr(canon(e.edge), (self.expr_of_atom[e.cause], self.expr_of_atom[e.effect]))
            for e in sig.causal_chain}
        #: the target-side lookups of a mapping onto this signature
        self.edge_of_expr: dict[Expr, CausalEdge] = {
            self.expr_of_edge[e]: e for e in sig.causal_chain}
        self.atom_of_expr: dict[Expr, Atom] = {x: a for a, x in self.expr_of_atom.items()}


SIDES = 4096
"""Sides (:class:`_Side`) kept, least recently used dropped: a find judges twenty candidates
against one target, and the same stored candidates find after find."""

_sides: OrderedDict[tuple[int, int], _Side] = OrderedDict()
_sides_lock = threading.Lock()


def _side(sig: Signature, desc: Description) -> _Side:
    """The side of ``sig`` compiled as ``desc``, kept per pair of objects (signatures are frozen
    and a side is never changed, so one built for the same two objects is the same; the side
    holds both, so neither id is reused while it is kept)."""
    key = (id(sig), id(desc))
    with _sides_lock:
        got = _sides.get(key)
        if got is not None and got.sig is sig and got.desc is desc:
            _sides.move_to_end(key)
            return got
    made = _Side(sig, desc)
    with _sides_lock:
        _sides[key] = made
        _sides.move_to_end(key)
        while len(_sides) > SIDES:
            _sides.popitem(last=False)
    return made


def _project(atom: Atom, role_map: dict[str, str]) -> str:
    return f"{atom.predicate}({','.join(role_map.get(r, '?' + r) for r in atom.args)})"


_WORD_START = re.compile(r"\b(?=[A-Za-z])")   # where a role tag may begin: it starts with a letter
_WORD_CHAR = re.compile(r"\w")


def _is_word(text: str, i: int) -> bool:
    """Whether ``text[i]`` is a word character as ``re``'s ``\\w`` reads it (False outside)."""
    return 0 <= i < len(text) and _WORD_CHAR.match(text, i) is not None


def _ends_word(text: str, name: str, end: int) -> bool:
    """Whether a word boundary follows ``name`` placed to end at ``end`` in ``text``."""
    return _is_word(name, len(name) - 1) != _is_word(text, end)


def _has_word(text: str, name: str) -> bool:
    """Whether role tag ``name`` (it begins with a letter) stands in ``text`` as a whole word:
    ``re.search(r"\\bname\\b", text)`` without compiling a pattern per name."""
    at = text.find(name)
    while at >= 0:
        if not _is_word(text, at - 1) and _ends_word(text, name, at + len(name)):
            return True
        at = text.find(name, at + 1)
    return False


def _project_text(text: str, role_map: dict[str, str]) -> str:
    """``text`` with every role of ``role_map`` that stands as a whole word replaced by its
    counterpart: what substituting the alternation ``\\b(name|...)\\b`` of the names (longest
    first) gives, without compiling a pattern for each role map — at each place a word may
    begin, from left to right, the first name (longest first) that is there and ends at a word
    boundary is replaced, and the search goes on after it."""
    if not role_map:
        return text
    names = sorted(role_map, key=len, reverse=True)
    out: list[str] = []
    done = 0
    for m in _WORD_START.finditer(text):
        p = m.start()
        if p < done:
            continue
        for name in names:
            end = p + len(name)
            if text.startswith(name, p) and _ends_word(text, name, end):
                out.append(text[done:p])
                out.append(role_map[name])
                done = end
                break
    out.append(text[done:])
    return "".join(out)


def _ancestor_edges(sig: Signature, atoms: list[Atom]) -> list[CausalEdge]:
    into: dict[Atom, list[CausalEdge]] = {}
    for e in sig.causal_chain:
        into.setdefault(e.effect, []).append(e)
    out: list[CausalEdge] = []
    seen: set[Atom] = set()
    stack = list(atoms)
    while stack:
        a = stack.pop()
        if a in seen:
            continue
        seen.add(a)
        for e in into.get(a, ()):
            if e.edge in POSITIVE_EDGES and e.sign == 1:
                if e not in out:
                    out.append(e)
                stack.append(e.cause)
    return out


def self_score(desc: Description, params: SMEParams | None = None) -> float:
    """The score of a description mapped onto itself: its total structure, for normalising
    (:func:`analogist.sme.identity_score`, computed without running the matcher)."""
    return identity_score(desc, params)


def judge(source: Signature, target: Signature, *, vocab: Vocabulary | None = None,
          params: JudgeParams | None = None) -> AnalogyReport:
    """Map ``source`` onto ``target`` with SME and judge the best mapping."""
    params = params or JudgeParams()
    sd = compile_signature(source, vocab)
    td = compile_signature(target, vocab)
    result = match(sd, td, params.sme)
    return judge_mapping(source, target, sd, td, result, params=params)


def judge_mapping(source: Signature, target: Signature, source_desc: Description,
                  target_desc: Description, result: MatchResult, *,
                  mapping: GlobalMapping | None = None, params: JudgeParams | None = None,
                  source_self_score: float | None = None) -> AnalogyReport:
    """Judge one mapping (the best of ``result`` by default) of ``source`` onto ``target``.

    The steps, each a function below: the likeness / difference / unknown table
    (:func:`_table`), blockers (:func:`_blockers`), contradictions (:func:`_contradictions`),
    the conclusions behind the causal-path gate (:func:`_conclusions`), the mechanism
    (:func:`_mechanism`) and one prediction to check (:func:`_prediction`).
    """
    params = params or JudgeParams()
    mp = mapping if mapping is not None else result.best
    m = _Mapped(source, target, source_desc, target_desc, mp)
    score = mp.score if mp is not None else 0.0
    total = source_self_score if source_self_score is not None else self_score(
        source_desc, params.sme)
    normalized = min(1.0, score / total) if total > 0 else 0.0
    contradicted = _contradictions(m)
    contradictions = [c.sentence for c in contradicted]
    likenesses, differences, unknowns, n_matched, n_edges_matched = _table(m, contradicted)
    stated = len(source.relations) + len(source.causal_chain)
    coverage = (n_matched + n_edges_matched) / stated if stated else 0.0
    blockers, source_preventers = _blockers(m)
    conclusions = _conclusions(m, blockers, source_preventers, contradictions, coverage, params)
    mechanism, transfer_mechanism, why_not = _mechanism(m, contradictions, coverage, params)
    blockers = [*blockers, *why_not]
    prediction = _prediction(source, target, m.S, m.role_map, conclusions, m.mapped)

    gist = (source.levels.L3 or source.levels.L2 or source.symptom or source.kind)
    return AnalogyReport(
        source_id=source.episode_id, target_id=target.episode_id,
        source_gist=(gist or "")[:120], role_map=m.role_map, target_roles=dict(target.roles),
        score=score, normalized_score=normalized, coverage=coverage, likenesses=tuple(likenesses),
        differences=tuple(dict.fromkeys(differences)), unknowns=tuple(dict.fromkeys(unknowns)),
        n_source_relations=len(source.relations), n_matched_relations=n_matched,
        blockers=tuple(dict.fromkeys(blockers)), contradictions=tuple(contradictions),
        conclusions=tuple(conclusions),
        mechanism=mechanism, transfer_mechanism=transfer_mechanism, prediction=prediction,
        contradicted=tuple(dict.fromkeys((c.source_text, f"{c.target_text} ({c.how})")
                                         for c in contradicted)))


class _Mapped:
    """One mapping of ``source`` onto ``target`` as the judge's steps read it: both sides'
    atom ↔ expression lookups, the expression pairs, the role map (synthetic entities left
    out) and what the target states."""

    def __init__(self, source: Signature, target: Signature, source_desc: Description,
                 target_desc: Description, mp: GlobalMapping | None) -> None:
        self.source, self.target = source, target
        self.S, self.T = _side(source, source_desc), _side(target, target_desc)
        self.mp = mp
        synthetic = set(source_desc.metadata.get("synthetic_entities", []))
        self.pairs: dict[Expr, Expr] = dict(mp.expression_pairs) if mp is not None else {}
        self.role_map = {b: t for b, t in (mp.entity_pairs if mp is not None else ())
                         if b in source.roles and b not in synthetic}
        self.mapped_targets = set(self.pairs.values())
        self.target_edges = self.T.edge_of_expr
        self.target_atom_of: dict[Expr, Atom] = self.T.atom_of_expr

    def mapped(self, x: Expr) -> bool:
        return x in self.pairs

    def target_text(self, x: Expr) -> str:
        y = self.pairs[x]
        a = self.target_atom_of.get(y)
        return a.text() if a is not None else to_sexpr(y)


def _is_preventer(e: CausalEdge) -> bool:
    return e.edge in BLOCKING_EDGES or e.sign == -1


def _table(m: _Mapped, contradicted: list[_Contradicted]
           ) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str], int, int]:
    """Likenesses, differences and unknowns; matched relations and matched edges.

    Contradicted structure (:func:`_contradictions`) is a difference, its target side the
    structure that contradicts it and how: a sign-flipped edge is not a likeness although SME
    maps it (nor does it count as covered), and a reversed edge or a relation with its roles
    swapped is not an unknown, since the target states the contrary."""
    source, target, S, T, role_map = m.source, m.target, m.S, m.T, m.role_map
    likenesses: list[tuple[str, str]] = []
    differences: list[tuple[str, str]] = []
    unknowns: list[str] = []
    against: dict[CausalEdge | Atom, _Contradicted] = {}
    for c in contradicted:
        against.setdefault(c.source, c)
    n_matched = 0
    target_by_roles: dict[tuple[str, ...], list[Atom]] = {}
    for a in target.relations:
        if T.expr_of_atom[a] not in m.mapped_targets:  # relations already matched are likenesses
            target_by_roles.setdefault(a.args, []).append(a)
    for a in source.relations:
        x = S.expr_of_atom[a]
        if m.mapped(x):
            n_matched += 1
            likenesses.append((a.text(), m.target_text(x)))
            continue
        if a in against:
            differences.append((a.text(), f"{against[a].target_text} ({against[a].how})"))
            continue
        img = tuple(role_map.get(r, "") for r in a.args)
        other = [t for t in target_by_roles.get(img, []) if t.predicate != a.predicate] \
            if all(img) else []
        if other:
            differences.append((a.text(), other[0].text()))
        else:
            unknowns.append(_project(a, role_map))
    n_edges_matched = 0
    for e in source.causal_chain:
        x = S.expr_of_edge[e]
        if e in against:
            c = against[e]
            differences.append((c.source_text, f"{c.target_text} ({c.how})"))
            continue
        if m.mapped(x):
            n_edges_matched += 1
            likenesses.append((f"{e.cause.text()} {e.edge} {e.effect.text()}",
                               to_sexpr(m.pairs[x])))
        else:
            unknowns.append(f"{_project(e.cause, role_map)} {e.edge} "
                            f"{_project(e.effect, role_map)}")
    for b, t in (m.mp.alignable_differences if m.mp is not None else ()):
        differences.append((to_sexpr(b), to_sexpr(t)))
    return likenesses, differences, unknowns, n_matched, n_edges_matched


def _blockers(m: _Mapped) -> tuple[list[str], list[CausalEdge]]:
    """Preventers on one side with no counterpart on the other; and the source's preventers."""
    blockers: list[str] = []
    inverse = {t: s for s, t in m.role_map.items()}
    source_preventers = [e for e in m.source.causal_chain if _is_preventer(e)]
    for e in source_preventers:
        if not m.mapped(m.S.expr_of_edge[e]):
            blockers.append(f"source has {e.cause.text()} {e.edge} {e.effect.text()} "
                            "with no counterpart in the target")
    for e in m.target.causal_chain:
        if not _is_preventer(e):
            continue
        x = m.T.expr_of_edge[e]
        if x in m.mapped_targets:
            continue
        effect_x = m.T.expr_of_atom[e.effect]
        touches = effect_x in m.mapped_targets or any(r in inverse for r in e.effect.args)
        if touches:
            blockers.append(f"target has {e.cause.text()} {e.edge} {e.effect.text()} "
                            "(preventer absent in source)")
    return blockers, source_preventers


def _edge_text(e: CausalEdge) -> str:
    return (f"{e.cause.text()} {e.edge}{'' if e.sign == 1 else ' (negative)'} "
            f"{e.effect.text()}")


@dataclass(frozen=True, slots=True)
class _Contradicted:
    """One piece of source structure the target states the other way round: the source's
    causal edge or relation, the target structure that contradicts it, how (``reversed``,
    ``opposite sign``, ``opposite kind``, ``roles swapped``) and the report's sentence."""

    source: CausalEdge | Atom
    target_text: str
    how: str
    sentence: str

    @property
    def source_text(self) -> str:
        s = self.source
        return f"{s.cause.text()} {s.edge} {s.effect.text()}" if isinstance(s, CausalEdge) \
            else s.text()


def _successors(sig: Signature, side: _Side) -> dict[Expr, list[Expr]]:
    """A signature's causal chain as a graph over its atoms' expressions: each cause's
    effects, in the chain's order."""
    out: dict[Expr, list[Expr]] = {}
    for e in sig.causal_chain:
        out.setdefault(side.expr_of_atom[e.cause], []).append(side.expr_of_atom[e.effect])
    return out


def _path(nxt: dict[Expr, list[Expr]], a: Expr, b: Expr) -> list[Expr]:
    """The shortest directed path from ``a`` to ``b`` (both ends included) over ``nxt``, or
    an empty list when there is none."""
    prev: dict[Expr, Expr] = {}
    frontier, seen = [a], {a}
    while frontier:
        step = []
        for x in frontier:
            for y in nxt.get(x, ()):
                if y in seen:
                    continue
                prev[y] = x
                if y == b:
                    path = [b]
                    while path[-1] != a:
                        path.append(prev[path[-1]])
                    return path[::-1]
                seen.add(y)
                step.append(y)
        frontier = step
    return []


def _namesakes(source: Signature, target: Signature) -> dict[str, str]:
    """Source role → target role for the roles both sides describe in the same words, each such
    description naming one role on either side ("the middle lock" in two tellings of one
    story is one participant, whatever a mapping pairs it with)."""
    def by_name(sig: Signature) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for tag, d in sig.roles.items():
            out.setdefault(" ".join(str(d).lower().split()), []).append(tag)
        return out
    src, tgt = by_name(source), by_name(target)
    return {s[0]: t[0] for name, s in src.items()
            if len(s) == 1 and len(t := tgt.get(name, [])) == 1}


def _reversed_between_namesakes(m: _Mapped, target_next: dict[Expr, list[Expr]],
                                source_next: dict[Expr, list[Expr]],
                                done: set[CausalEdge | Atom]) -> list[_Contradicted]:
    """Source edges the target runs the other way between the same participants: the edge's
    ends read over the roles of the same description on both sides (:func:`_namesakes`) are
    target atoms, and a target chain runs from the effect to the cause, none back, and the
    source closes no loop through them. The structural mapping may pair a reversed chain with
    the source's by crossing its roles (the lock's emptying with the station's running dry); the
    same participants in the other order are still a contradiction, whatever the mapping."""
    names = _namesakes(m.source, m.target)
    if len(names) < 2:
        return []
    S, T = m.S, m.T
    canon = T.desc.vocabulary.canonical

    def image(a: Atom) -> Expr | None:
        if not a.args or not all(r in names for r in a.args):
            return None
        x = Expr(canon(a.predicate), tuple(names[r] for r in a.args))
        return x if x in T.atom_of_expr else None

    out: list[_Contradicted] = []
    for e in m.source.causal_chain:
        if e in done:
            continue
        ci, fi = image(e.cause), image(e.effect)
        if ci is None or fi is None or ci == fi:
            continue
        c, f = S.expr_of_atom[e.cause], S.expr_of_atom[e.effect]
        row = _reversed_chain(e, (c, f), (ci, fi), T, target_next, source_next,
                              ", between the same participants")
        if row is not None:
            out.append(row)
    return out


def _reversed_chain(e: CausalEdge, ends: tuple[Expr, Expr], images: tuple[Expr, Expr],
                    T: _Side, target_next: dict[Expr, list[Expr]],
                    source_next: dict[Expr, list[Expr]], where: str = "") -> _Contradicted | None:
    """The row for source edge ``e`` (its cause and effect ``ends``) when a target chain runs
    from the effect's image to the cause's (``images``: cause, effect), no target chain runs
    back and the source closes no loop through the two ends; else None. ``where`` is added to
    the row's wording after the target chain."""
    (c, f), (ci, fi) = ends, images
    back = _path(target_next, fi, ci)
    if not back or _path(target_next, ci, fi) or _path(source_next, f, c):
        return None
    t = " -> ".join(T.atom_of_expr[x].text() if x in T.atom_of_expr else to_sexpr(x)
                    for x in back)
    return _Contradicted(e, t, "reversed",
                         f"{e.cause.text()} {e.edge} {e.effect.text()} is reversed in the target "
                         f"({t}{where})")


def _contradictions(m: _Mapped) -> list[_Contradicted]:
    """Structure the target states the other way round, read off the best mapping: a source
    causal edge whose ends map onto a target edge running the opposite way, or onto the ends of
    a target chain from its effect to its cause that no chain of the target runs back and that
    the source does not close into a loop itself (reversed), a mapped
    edge whose partner has the opposite sign, an edge over mapped ends of the opposite kind, a
    relation with its roles swapped. Such structure is not an unknown (the target says
    something about it) and not a likeness (what it says is the contrary): it is evidence
    against the mechanism, so nothing transfers, and it is listed in the difference table."""
    S, T, pairs, role_map = m.S, m.T, m.pairs, m.role_map
    out: list[_Contradicted] = []
    target_edge_by_atoms: dict[tuple[Expr, Expr], list[CausalEdge]] = {}
    for e in m.target.causal_chain:
        key = (T.expr_of_atom[e.cause], T.expr_of_atom[e.effect])
        target_edge_by_atoms.setdefault(key, []).append(e)
    target_next = _successors(m.target, T)
    source_next = _successors(m.source, S)
    for e in m.source.causal_chain:
        x = S.expr_of_edge[e]
        if m.mapped(x):
            # the edge's sign is not part of its expression, so a positive edge maps onto its
            # negative partner ("warmer beer speeds the yeast" / "… slows the yeast"): the same
            # ends with the opposite sign is a flipped edge, as much a contradiction as a
            # reversed one
            te = m.target_edges.get(pairs[x])
            if te is not None and te.sign != e.sign:
                out.append(_Contradicted(e, _edge_text(te), "opposite sign",
                                         f"{_edge_text(e)} is {_edge_text(te)} in the target "
                                         "(opposite sign)"))
            continue
        c, f = S.expr_of_atom[e.cause], S.expr_of_atom[e.effect]
        if not (m.mapped(c) and m.mapped(f)):
            continue
        ci, fi = pairs[c], pairs[f]
        for te in target_edge_by_atoms.get((fi, ci), []):
            out.append(_Contradicted(
                e, _edge_text(te), "reversed",
                f"{e.cause.text()} {e.edge} {e.effect.text()} is reversed in the target "
                f"({te.cause.text()} {te.edge} {te.effect.text()})"))
        if (fi, ci) not in target_edge_by_atoms:
            row = _reversed_chain(e, (c, f), (ci, fi), T, target_next, source_next)
            if row is not None:
                out.append(row)
        for te in target_edge_by_atoms.get((ci, fi), []):
            if te.edge != e.edge or te.sign != e.sign:
                out.append(_Contradicted(
                    e, _edge_text(te), "opposite kind",
                    f"{e.cause.text()} {e.edge}{'' if e.sign == 1 else ' (negative)'} "
                    f"{e.effect.text()} is {te.edge}{'' if te.sign == 1 else ' (negative)'} "
                    "in the target"))
    out.extend(_reversed_between_namesakes(m, target_next, source_next,
                                           {c.source for c in out}))
    target_rel_exprs = {T.expr_of_atom[a]: a for a in m.target.relations}
    for a in m.source.relations:
        if m.mapped(S.expr_of_atom[a]) or len(a.args) != 2:
            continue
        if not all(r in role_map for r in a.args):
            continue
        swapped = Expr(T.desc.vocabulary.canonical(a.predicate),
                       (role_map[a.args[1]], role_map[a.args[0]]))
        if swapped in target_rel_exprs and swapped not in m.mapped_targets:
            t = target_rel_exprs[swapped].text()
            out.append(_Contradicted(a, t, "roles swapped",
                                     f"{a.text()} has its roles swapped in the target ({t})"))
    seen: set[str] = set()
    unique = []
    for c in out:
        if c.sentence not in seen:
            seen.add(c.sentence)
            unique.append(c)
    return unique


def _conclusions(m: _Mapped, blockers: list[str], source_preventers: list[CausalEdge],
                 contradictions: list[str], coverage: float, params: JudgeParams
                 ) -> list[Conclusion]:
    """The source's conclusions (the sinks of its supporting edges) in target terms, each
    behind the causal-path gate: it transfers only when its whole supporting path maps,
    observed, unblocked and uncontradicted."""
    source, target, S, T, role_map = m.source, m.target, m.S, m.T, m.role_map
    # a target atom holds when the target states it as a relation or as the effect of a
    # supporting edge; the effect of a preventer is something that does not happen
    asserted = {T.expr_of_atom[a] for a in target.relations}
    asserted |= {T.expr_of_atom[e.effect] for e in target.causal_chain
                 if e.edge in POSITIVE_EDGES and e.sign == 1}
    asserted |= {T.expr_of_atom[e.cause] for e in target.causal_chain}
    prevented = {T.expr_of_atom[e.effect] for e in target.causal_chain if _is_preventer(e)}
    causes = {e.cause for e in source.causal_chain}
    sinks: list[Atom] = []
    for e in source.causal_chain:
        if e.effect not in causes and e.effect not in sinks and e.edge in POSITIVE_EDGES \
                and e.sign == 1:
            sinks.append(e.effect)
    conclusions: list[Conclusion] = []
    for sink in sinks:
        sx = S.expr_of_atom[sink]
        reasons: list[str] = []
        if m.mapped(sx):
            image = m.pairs[sx]
            if image in asserted:
                conclusions.append(Conclusion(sink.text(), m.target_text(sx), "holds"))
                continue
            if image in prevented:
                reasons.append(f"the target says {m.target_text(sx)} is prevented")
        direct = [e for e in source.causal_chain
                  if e.effect == sink and e.edge in POSITIVE_EDGES and e.sign == 1]
        for e in direct:
            if not m.mapped(S.expr_of_atom[e.cause]):
                reasons.append(f"{_project(e.cause, role_map)} unknown in target")
            if e.status != "observed":
                reasons.append(f"{e.cause.text()} {e.edge} {e.effect.text()} is inferred, "
                               "not observed, in the source")
        for e in _ancestor_edges(source, [d.cause for d in direct]):
            x = S.expr_of_edge[e]
            if not m.mapped(x):
                reasons.append(f"supporting link {_project(e.cause, role_map)} {e.edge} "
                               f"{_project(e.effect, role_map)} not mapped")
                continue
            if e.status != "observed":
                reasons.append(f"supporting link {e.cause.text()} {e.edge} "
                               f"{e.effect.text()} is inferred in the source")
            te = m.target_edges.get(m.pairs[x])
            if te is not None and te.status != "observed":
                reasons.append(f"supporting link {te.cause.text()} {te.edge} "
                               f"{te.effect.text()} is inferred in the target")
        path_atoms = {sink} | {d.cause for d in direct} | {
            a for e in _ancestor_edges(source, [d.cause for d in direct]) for a in e.atoms()}
        for e in source_preventers:
            if e.effect in path_atoms and not m.mapped(S.expr_of_edge[e]):
                reasons.append(f"unmatched preventer {e.cause.text()} in the source")
        for b in blockers:
            if b.startswith("target has"):
                reasons.append(b)
        if not direct:
            reasons.append("no supporting cause in the source")
        unmapped_subjects = [r for r in sink.args if r not in role_map]
        if unmapped_subjects:
            reasons.append(f"{', '.join(unmapped_subjects)} has no counterpart in the target")
        if coverage < params.mechanism_threshold:
            reasons.append(f"the mapping covers only {coverage:.0%} of the source's relations "
                           "and edges")
        if contradictions:
            reasons.append("the target contradicts the source's mechanism")
        status = "withheld" if reasons else "transfer"
        projected = m.target_text(sx) if m.mapped(sx) else _project(sink, role_map)
        conclusions.append(Conclusion(sink.text(), projected, status,
                                      tuple(dict.fromkeys(reasons))))
    return conclusions


def _mechanism(m: _Mapped, contradictions: list[str], coverage: float, params: JudgeParams
               ) -> tuple[str | None, bool, list[str]]:
    """The source's fix in target terms, whether it transfers, and why not (as blockers)."""
    source, role_map = m.source, m.role_map
    mechanism = _project_text(source.fix_operator, role_map) if source.fix_operator else None
    fix_roles = [r for r in source.roles
                 if source.fix_operator and _has_word(source.fix_operator, r)]
    why_not: list[str] = []
    if mechanism:
        unmapped_fix = [r for r in fix_roles if r not in role_map]
        if unmapped_fix:
            why_not.append(f"mechanism: {', '.join(unmapped_fix)} (in the fix) has no "
                           "counterpart in the target")
    transfer_mechanism = (bool(mechanism) and coverage >= params.mechanism_threshold
                          and not contradictions and not why_not)
    return mechanism, transfer_mechanism, why_not


def _prediction(source: Signature, target: Signature, S: _Side, role_map: dict[str, str],
                conclusions: list[Conclusion], mapped: Any) -> Prediction | None:
    """One cheap observable the mapping predicts in the target, and its refuting check."""

    def roles_text(atom: Atom) -> str:
        return ", ".join(f"{role_map[r]} ({target.roles.get(role_map[r], '')})"
                         for r in atom.args)

    def all_mapped(atom: Atom) -> bool:
        return all(r in role_map for r in atom.args)

    # 1. an unknown direct cause of a withheld conclusion
    withheld = {c.source for c in conclusions if c.status == "withheld"}
    for e in source.causal_chain:
        if e.effect.text() in withheld and e.edge in POSITIVE_EDGES and e.sign == 1:
            a = e.cause
            if a.args and all_mapped(a) and not mapped(S.expr_of_atom[a]):
                obs = _project(a, role_map)
                return Prediction(
                    f"{obs} holds in the target (it is what {e.effect.predicate} would follow "
                    "from)",
                    f"observe {a.predicate} between {roles_text(a)}; if it does not hold, "
                    "abandon the analogy before acting on it", a.text())
    # 2. any unmapped source relation over mapped roles
    for a in source.relations:
        if all_mapped(a) and not mapped(S.expr_of_atom[a]):
            obs = _project(a, role_map)
            return Prediction(f"{obs} holds in the target",
                              f"observe {a.predicate} between {roles_text(a)}; if it does not "
                              "hold, the analogy is weaker than its similarity says", a.text())
    # 3. a transferred conclusion
    for c in conclusions:
        if c.status == "transfer":
            return Prediction(f"{c.projected} will be observed in the target",
                              f"watch for {c.projected}; if the causes are present and it does "
                              "not follow, reject the analogy", c.source)
    return None
