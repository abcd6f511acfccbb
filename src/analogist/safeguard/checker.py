"""The checker: seed 003 rules 1–3 per analogy (strict and advisory), the whole turn, and the
public entry points."""

from __future__ import annotations

import re
import warnings
from typing import Any

from analogist.encode.deterministic import DeterministicEncoder
from analogist.errors import AnalogistError
from analogist.foresight.align import align
from analogist.foresight.filter import normalize_name
from analogist.io import MAX_FILE_BYTES
from analogist.judge import judge
from analogist.llm.base import NO_LLM_REASON
from analogist.safeguard.assess import (
    ItemAssessment,
    _caveat_ok,
    assess_difference,
    assess_similarity,
)
from analogist.safeguard.claims import Claim, read_claims, restates
from analogist.safeguard.finder import (
    _Corpus,
    _event_mentions,
    _load_corpus,
    _read_passage,
    _sentences,
    estimate_share,
    find_analogies,
)
from analogist.safeguard.lexicon import _CONDITION_PAT, _norm
from analogist.safeguard.llm_steps import llm_find, llm_share
from analogist.safeguard.report import AnalogyCheck, SafeguardReport
from analogist.safeguard.rules import (
    MAX_MISSED,
    MIN_DIFFERENCES,
    MIN_ENCODE_WORDS,
    MIN_SIMILARITIES,
    SHARE_THRESHOLD,
)
from analogist.safeguard.turn import Analogy, Argument, Mode, Section, Turn, load_turn, parse_turn

# -- the checker -----------------------------------------------------------------------------

class Safeguard:
    """The analogy checker with its resources: the historical corpus (loaded on first use) and
    one deterministic encoder (created on first use, or passed in; reuse one per process).

    ``provider`` is an LLM provider or None (the deterministic path; LLM steps are skipped with
    :data:`~analogist.llm.base.NO_LLM_REASON`). ``encode_text`` turns the text-encoding SME path
    off when False.
    """

    def __init__(self, provider: Any | None = None, *, encoder: Any | None = None,
                 encode_text: bool = True) -> None:
        self.provider = provider
        self._encoder = encoder
        self.encode_text = encode_text
        self._corpus: _Corpus | None = None

    @property
    def corpus(self) -> _Corpus:
        if self._corpus is None:
            self._corpus = _load_corpus()
        return self._corpus

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = DeterministicEncoder()
        return self._encoder

    # -- resolving and mapping
    def resolve(self, name: str | None) -> Any | None:
        """The corpus event ``name`` is (by id, name or alias), or the one it names."""
        if not name or not name.strip():
            return None
        ev = self.corpus.corpus.lookup(name)
        if ev is not None:
            return ev
        m = _event_mentions(name, self.corpus)
        if m:
            return self.corpus.corpus.get(m[0][1])
        key = normalize_name(name)
        if len(key.split()) >= 2:
            # a name inside a longer corpus name ("Northern Rock" in "Run on Northern Rock")
            for n, eid in sorted(self.corpus.names, key=lambda x: (len(x[0]), x)):
                if f" {key} " in f" {n} ":
                    return self.corpus.corpus.get(eid)
        return None

    def _target_event(self, target: str | None, claim: str | None, source_ev: Any) -> Any:
        if target:
            return self.resolve(target)
        for eid in (e for _, e in _event_mentions(claim or "", self.corpus)):
            if source_ev is None or eid != source_ev.event_id:
                return self.corpus.corpus.get(eid)
        return None

    def _map_events(self, src: Any, tgt: Any, stated: list[ItemAssessment]
                    ) -> tuple[list[str], dict[str, Any], set[str]]:
        """Missed differences, mapping summary, mechanisms present in both events."""
        al = align(tgt, src)
        sf = {f.id: f for f in src.factors}
        tf = {f.id: f for f in tgt.factors}
        named = {c.name for d in stated for c in d.concepts}
        missed: list[str] = []
        for b, t in al.differences:
            fb, ft = sf[b], tf[t]
            if fb.mechanism in named or ft.mechanism in named:
                continue
            missed.append(f"{src.name} had {fb.mechanism} at the {fb.position} ({fb.text}) "
                          f"where {tgt.name} had {ft.mechanism} at the {ft.position} "
                          f"({ft.text})")
        mapped_s = {b for b, _ in al.pairs}
        mapped_t = {t for _, t in al.pairs}
        linked_s = {x for ln in src.links for x in (ln.cause, ln.effect)}
        linked_t = {x for ln in tgt.links for x in (ln.cause, ln.effect)}
        for fid in sorted(linked_s - mapped_s):
            f = sf[fid]
            if f.mechanism not in named:
                missed.append(f"{src.name}'s {f.position} {f.mechanism} ({f.text}) has no "
                              f"counterpart in {tgt.name}")
        for fid in sorted(linked_t - mapped_t):
            f = tf[fid]
            if f.mechanism not in named:
                missed.append(f"{tgt.name}'s {f.position} {f.mechanism} ({f.text}) has no "
                              f"counterpart in {src.name}")
        shared = {f.mechanism for f in src.factors} & {f.mechanism for f in tgt.factors}
        summary = {"kind": "corpus", "source_event": src.event_id, "target_event": tgt.event_id,
                   "fidelity": round(al.fidelity, 4),
                   "matches": [f"{sf[b].mechanism} ({sf[b].position})" for b, _ in al.matches]}
        return missed[:MAX_MISSED], summary, shared

    def _map_texts(self, src_text: str, tgt_text: str, stated: list[ItemAssessment],
                   notes: list[str]) -> tuple[list[str], dict[str, Any] | None]:
        named = {c.name for d in stated for c in d.concepts}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = self.encoder.encode(src_text, episode_id="source").signature
                t = self.encoder.encode(tgt_text, episode_id="target").signature
                rep = judge(s, t)
        except AnalogistError as e:
            notes.append(f"text mapping skipped: {e}")
            return [], None
        def say(text: str, sig: Any) -> str:
            # role tags (R1, …) in the judge's text → the role's own words
            return re.sub(r"\??\b(R\d+)\b", lambda m: f"[{sig.roles[m.group(1)][:40]}]"
                          if m.group(1) in sig.roles else m.group(0), text)

        missed = []
        contrary = set(rep.contradicted)
        for a, b in rep.differences:
            if a.split("(")[0] not in named and (a, b) in contrary:
                missed.append(f"the target states the source's {say(a, s)} the other way "
                              f"round: {say(b, t)}")
            elif a.split("(")[0] not in named:
                missed.append(f"the mapping aligns source {say(a, s)} with target {say(b, t)}: "
                              "the same roles are related differently")
        for u in rep.unknowns:
            if u.split("(")[0] not in named:
                missed.append(f"the source's {say(u, s)} has no counterpart in the target")
        summary = {"kind": "text", "similarity": round(rep.similarity, 4),
                   "likenesses": [a for a, _ in rep.likenesses]}
        return missed[:MAX_MISSED], summary

    # -- the rules
    def check_strict(self, a: Analogy, section: Section, index: int, location: str,
                     notes: list[str]) -> AnalogyCheck:
        chk = AnalogyCheck(section, index, "strict", False, None, None, location=location,
                           source=a.source)
        reasons, recs = chk.reasons, chk.recommendations
        src_ev = self.resolve(a.source)
        tgt_ev = self._target_event(a.target, a.claim, src_ev)
        sims = [assess_similarity(s) for s in a.similarities]
        diffs = [assess_difference(d) for d in a.differences]
        chk.similarities, chk.differences = sims, diffs
        shared: set[str] | None = None
        if src_ev is not None and tgt_ev is not None and src_ev.event_id != tgt_ev.event_id:
            chk.missed_differences, chk.mapping, shared = self._map_events(src_ev, tgt_ev, diffs)
        elif self.encode_text and src_ev is None and a.source and \
                len(a.source.split()) >= MIN_ENCODE_WORDS:
            tgt_text = a.target or a.claim or ""
            if len(tgt_text.split()) >= MIN_ENCODE_WORDS:
                chk.missed_differences, chk.mapping = self._map_texts(a.source, tgt_text, diffs,
                                                                      notes)
        if not (a.source or "").strip():
            reasons.append("no source case named: not a structured analogy")
            recs.append("name the historical or classical case the argument relies on")
        counted: list[ItemAssessment] = []
        for i, s in enumerate(sims, 1):
            if not s.ok:
                reasons.append(f"similarity {i} {s.text!r}: {s.reason}")
                continue
            mech = {c.name for c in s.concepts if c.kind == "mechanism"}
            if shared is not None and mech and not mech & shared:
                reasons.append(f"similarity {i} {s.text!r}: not supported by the structure "
                               f"mapping ({', '.join(sorted(mech))} is not in both "
                               f"{src_ev.name} and {tgt_ev.name})")
                continue
            if any(_restates(e, s) for e in counted):
                reasons.append(f"similarity {i} {s.text!r}: restates an earlier similarity "
                               f"({s.names()})")
                continue
            counted.append(s)
        good_d = [d for d in diffs if d.ok]
        for i, d in enumerate(diffs, 1):
            if not d.ok:
                reasons.append(f"difference {i} {d.text!r}: {d.reason}")
        sim_ok = len(counted) >= MIN_SIMILARITIES
        diff_ok = len(good_d) >= MIN_DIFFERENCES
        if sim_ok:
            reasons.append(f"{len(counted)} structural, causally relevant similarities ("
                           + "; ".join(s.names() for s in counted) + ")")
        else:
            reasons.append(f"{len(counted)} structural, causally relevant similarit"
                           f"{'y' if len(counted) == 1 else 'ies'} stated; at least "
                           f"{MIN_SIMILARITIES} required (seed 003 rule 1)")
            hint = ""
            if chk.mapping and chk.mapping.get("kind") == "corpus" and chk.mapping["matches"]:
                hint = (" — the structure mapping of the two cases shares: "
                        + ", ".join(chk.mapping["matches"][:4]))
            recs.append(f"state at least {MIN_SIMILARITIES} structural, causally relevant "
                        "similarities: name the relation or mechanism both cases share "
                        "(e.g. 'in both, lending outran incomes: a credit boom'), not a shared "
                        "topic, word, date or place" + hint)
        if diff_ok:
            reasons.append(f"{len(good_d)} substantive difference"
                           f"{'' if len(good_d) == 1 else 's'} acknowledged")
        else:
            reasons.append(("no difference stated" if not diffs else
                            "no substantive difference stated")
                           + f"; at least {MIN_DIFFERENCES} required (seed 003 rule 1)")
            recs.append("acknowledge at least one substantive difference: where the causal "
                        "structure of the two cases breaks down (an institution, mechanism or "
                        "condition that differs), not a date, place or name")
        if chk.missed_differences:
            reasons.append("the structure mapping finds differences the author did not name")
            recs += [f"consider this difference: {m}" for m in chk.missed_differences]
        chk.passed = bool(a.source and a.source.strip()) and sim_ok and diff_ok
        chk.classification = "supporting_evidence" if chk.passed else "heuristic_only"
        if chk.passed:
            reasons.append("classification: valid supporting evidence (seed 003 rule 3)")
        else:
            reasons.append("classification: heuristic only — cannot serve as primary evidence "
                           "(seed 003 rule 3)")
            recs.append("strengthen the claim with non-analogy evidence (data, a mechanism "
                        "argument, direct observation); until then the analogy is heuristic "
                        "only")
        return chk

    def check_advisory(self, text: str | None, source: str | None, key_differences: list[str],
                       caveat: str | None, target: str | None, section: Section, index: int,
                       location: str) -> AnalogyCheck:
        chk = AnalogyCheck(section, index, "advisory", False, None, None, location=location,
                           source=source)
        reasons, recs = chk.reasons, chk.recommendations
        diffs = [assess_difference(d) for d in key_differences]
        chk.differences = diffs
        good_d = [d for d in diffs if d.ok]
        for i, d in enumerate(diffs, 1):
            if not d.ok:
                reasons.append(f"key_difference {i} {d.text!r}: {d.reason}")
        if not key_differences:
            reasons.append("key_differences is missing or empty")
        if good_d:
            reasons.append(f"{len(good_d)} substantive key difference"
                           f"{'' if len(good_d) == 1 else 's'}")
        else:
            recs.append("give at least one substantive key difference: where the historical "
                        "case's causal structure differs from the present one")
        cav_ok, cav_reason = _caveat_ok(caveat)
        reasons.append(cav_reason)
        if not cav_ok:
            recs.append("state an applicability caveat: the condition under which the parallel "
                        "holds or fails (e.g. 'holds only while reserves are below short-term "
                        "debt')")
        # parallels: mechanisms and causal relations named in the text (not in the differences
        # or caveat), plus corpus-mapping matches when both sides resolve
        parallels = _parallels(text or "")
        src_ev = self.resolve(source)
        tgt_ev = self._target_event(target, text, src_ev)
        if src_ev is not None and tgt_ev is not None and src_ev.event_id != tgt_ev.event_id:
            chk.missed_differences, chk.mapping, _ = self._map_events(src_ev, tgt_ev, diffs)
            parallels |= {m.split(" (")[0] for m in chk.mapping["matches"]}
            if chk.missed_differences:
                recs += [f"consider this difference: {m}" for m in chk.missed_differences]
        n_par = len(parallels)
        if not (source or "").strip():
            reasons.append("source is missing: the historical case is not named")
            recs.append("name the historical case")
        if n_par >= 2 and good_d and cav_ok:
            chk.grade = "strong_parallel"
        elif n_par >= 1 and (good_d or cav_ok):
            chk.grade = "moderate_parallel"
        else:
            chk.grade = "weak_parallel"
        reasons.append(f"grade {chk.grade}: {n_par} structural parallel"
                       f"{'' if n_par == 1 else 's'} named"
                       + (f" ({', '.join(sorted(parallels))})" if parallels else ""))
        if chk.grade == "weak_parallel":
            recs.append("this reference may not add value: it names no structural parallel "
                        "that carries over (seed 003 advisory step 5)")
        chk.passed = bool(good_d) and cav_ok and bool((source or "").strip())
        return chk

    # -- the whole turn
    def check(self, turn: Turn | str, *, mode: Mode | None = None) -> SafeguardReport:
        """Check a turn (a :class:`Turn`, or plain text)."""
        if mode not in (None, "strict", "advisory"):
            raise AnalogistError(f"mode must be 'strict' or 'advisory', got {mode!r}",
                                 field="mode")
        notes: list[str] = []
        skipped: list[str] = []
        if isinstance(turn, str):
            turn, share_text, spans = self._from_text(turn, notes, skipped)
        else:
            share_text, spans = self._share_spans(turn)
        checks: list[AnalogyCheck] = []
        n = 0
        for ai, arg in enumerate(turn.arguments):
            for j, a in enumerate(arg.analogies):
                loc = f"arguments[{ai}].analogies[{j}]"
                if mode == "advisory":
                    checks.append(self.check_advisory(
                        " ".join(x for x in (a.claim, *a.similarities) if x), a.source,
                        a.differences, _caveat_in(a.claim), a.target, "arguments", n, loc))
                else:
                    checks.append(self.check_strict(a, "arguments", n, loc, notes))
                n += 1
        for wi, w in enumerate(turn.historical_wisdom):
            loc = f"historical_wisdom[{wi}]"
            if mode == "strict":
                sims, _ = _read_passage(w.text or "")
                a = Analogy(source=w.source, claim=w.text, similarities=sims,
                            differences=w.key_differences, target=w.target)
                checks.append(self.check_strict(a, "historical_wisdom", wi, loc, notes))
            else:
                checks.append(self.check_advisory(w.text, w.source, w.key_differences,
                                                  w.applicability_caveat, w.target,
                                                  "historical_wisdom", wi, loc))
        det = round(estimate_share(share_text, spans), 4)
        share, method = det, "deterministic estimate"
        if self.provider is not None and share_text.strip():
            share, rationale = llm_share(share_text, self.provider)
            share = round(share, 4)
            method = "LLM semantic estimate"
            if rationale:
                notes.append(f"share rationale (LLM): {rationale}")
        elif self.provider is None:
            skipped.append(f"semantic content share: {NO_LLM_REASON}")
        flag = mode != "advisory" and share > SHARE_THRESHOLD and any(
            c.mode == "strict" for c in checks)
        if flag:
            rec = (f"the turn's analogy content share is about {share:.0%} ({method}), over "
                   f"~{SHARE_THRESHOLD:.0%}: flagged for the judge — carry the argument with "
                   "non-analogy evidence and keep historical parallels brief")
            for c in checks:
                if c.mode == "strict":
                    c.recommendations.append(rec)
        return SafeguardReport(checks, share, flag, method, det, skipped, notes)

    def _share_spans(self, turn: Turn) -> tuple[str, list[tuple[int, int]]]:
        """The argument text of a JSON turn and the spans of its analogy content: sentences of
        an argument's text that the finder marks or that name the analogy's source; an analogy
        whose content does not appear in the text adds its own fields (source, claim,
        similarities, differences) to both the analogy content and the total."""
        parts: list[str] = []
        spans: list[tuple[int, int]] = []
        pos = 0
        for arg in turn.arguments:
            text = arg.text or ""
            base = pos
            covered = False
            names = [a.source for a in arg.analogies if a.source]
            for f in find_analogies(text, corpus=self.corpus):
                spans.append((base + f.start, base + f.end))
                covered = True
            for st, en, s in _sentences(text):
                if any(_norm(nm) in _norm(s) for nm in names):
                    spans.append((base + st, base + en))
                    covered = True
            parts.append(text)
            pos += len(text) + 1
            if arg.analogies and not covered:
                for a in arg.analogies:
                    extra = " ".join(x for x in (a.source, a.claim, *a.similarities,
                                                 *a.differences) if x)
                    if extra:
                        parts.append(extra)
                        spans.append((pos, pos + len(extra)))
                        pos += len(extra) + 1
        return "\n".join(parts), spans

    def _from_text(self, text: str, notes: list[str], skipped: list[str]
                   ) -> tuple[Turn, str, list[tuple[int, int]]]:
        found = find_analogies(text, corpus=self.corpus)
        if self.provider is not None:
            via_llm = llm_find(text, self.provider, notes)
            flat = " ".join(text.split())
            # the LLM's passages (on the whitespace-normalised text), plus pattern passages the
            # LLM did not cover; spans are measured on the normalised text from here on
            out = list(via_llm)
            for f in find_analogies(flat, corpus=self.corpus):
                if not any(f.start < g.end and g.start < f.end for g in via_llm):
                    out.append(f)
                    notes.append(f"pattern finder: also found {f.passage[:60]!r}")
            found = sorted(out, key=lambda f: f.start)
            text = flat
        else:
            skipped.append(f"LLM analogy finder: {NO_LLM_REASON}")
        turn = Turn(arguments=[Argument(text=text, analogies=[f.to_analogy() for f in found])])
        return turn, text, [(f.start, f.end) for f in found]


def _restates(earlier: ItemAssessment, later: ItemAssessment) -> bool:
    """Whether a counted similarity adds nothing to an earlier one: the same named concepts, or
    every claim of it restating a claim of the earlier one."""
    key = frozenset(c.name for c in later.concepts)
    if key and key == frozenset(c.name for c in earlier.concepts):
        return True
    return bool(later.claims) and all(any(restates(a, b) for a in earlier.claims)
                                      for b in later.claims)


def _parallels(text: str) -> set[str]:
    """The structural parallels an advisory entry's text states: the causal vocabulary terms its
    structural claims name, plus one per structural claim that names none (restatements once)."""
    out: set[str] = set()
    kept: list[Claim] = []
    for _, _, sentence in _sentences(text):
        for c in read_claims(sentence):
            if not c.counts:
                continue
            names = {x.name for x in c.concepts if x.causal}
            if names:
                out |= names
            elif not any(restates(k, c) for k in kept):
                out.add(c.describe())
            kept.append(c)
    return out


def _caveat_in(text: str | None) -> str | None:
    """A caveat-like clause of ``text`` (for an argument analogy checked in advisory mode)."""
    if not text:
        return None
    for _, _, s in _sentences(text):
        if _CONDITION_PAT.search(s) and re.search(r"\b(?:only|unless|if|provided|as long as)\b"
                                                  r"|前提|只有|除非|仅当", s, re.IGNORECASE):
            return s.strip()
    return None


def check_turn(turn: Turn | dict[str, Any] | str, *, mode: Mode | None = None,
               provider: Any | None = None, safeguard: Safeguard | None = None
               ) -> SafeguardReport:
    """Check a debate turn: a :class:`Turn`, its JSON data (a dict), or plain text.
    ``safeguard`` reuses resources (corpus, encoder) across calls; ``provider`` is used only when
    ``safeguard`` is None."""
    sg = safeguard if safeguard is not None else Safeguard(provider)
    if isinstance(turn, dict):
        turn = parse_turn(turn)
    return sg.check(turn, mode=mode)


def check_text(text: str, *, source: str | None = None, mode: Mode | None = None,
               safeguard: Safeguard | None = None, max_chars: int = MAX_FILE_BYTES
               ) -> SafeguardReport:
    """Check raw input text: JSON/YAML is read as a :class:`Turn`, anything else as plain
    text. Input over ``max_chars`` characters is refused."""
    if len(text) > max_chars:
        raise AnalogistError(f"input is {len(text)} characters, over the limit of {max_chars}",
                             source=source)
    turn = load_turn(text, source=source)
    return (safeguard or Safeguard()).check(turn, mode=mode)
