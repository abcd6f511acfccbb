"""Parametric candidates for the foresight loop: historical events proposed by an LLM.

Algorithm 1 of seed 001 generates analogies with an LLM, conditioned after round 0 on the common
gap (the under-confirmed positions). :class:`ParametricGenerator` is that generator for
:func:`analogist.foresight.loop.run_foresight` (its ``generate`` hook): each round it makes ONE
call asking for up to ``k`` historical events that share the target's mechanism, says which
(position, mechanism) hypotheses still need confirmation and which events were already tried, and
decomposes each proposal into factors at positions with mechanism classes of the foresight
vocabulary.

The target reaches the model as DATA (:func:`~analogist.llm.prompts.wrap_data`, tag ``target``):
its name, aliases, scale, the pre-cutoff brief when the view is cut at the target's own cutoff, and
its OBSERVED factors only (position, mechanism, text) — hidden factors are never sent.

Post-processing, because a schema-valid answer can still be wrong:

* a proposal whose name or an alias resolves to an event of ``corpus`` (:meth:`Corpus.lookup`)
  returns the CORPUS event — our own decomposition; the model merely suggested it — unless its id
  was already tried or it is the target;
* any other proposal becomes an :class:`~analogist.foresight.event.Event` with ``provenance``
  ``"parametric"``, id ``parametric-<slug>-<hash8>`` (the hash of the folded name, so the same
  event proposed in two rounds gets the same id), ``source`` "parametric: proposed by <model> from
  its own knowledge", validated with ``validate_event(..., strict=True)``;
* invalid factors (bad id or position, a mechanism outside the vocabulary, repeated ids) and
  invalid links (unknown or dropped factors, self-loops, repeats, a cycle not through an
  amplifier) are dropped with a note; an unreadable factor time or end date is cleared with a
  note; an event left with fewer than :data:`MIN_FACTORS` valid factors, or one naming the target,
  is dropped with a note; texts are capped;
* ``part_of_names`` resolving to corpus events (or to the target) become ``part_of`` ids, so the
  self-analogy filter can reject sub-events and same-war echoes.

Notes and the token accounting of every call stay on the generator (``notes``, ``usage``) for
the brief. Without a provider nothing is called: :attr:`ParametricGenerator.skipped_reason` is
:data:`~analogist.llm.base.NO_LLM_REASON` and the generator proposes nothing
(:func:`parametric_generator_or_skip` returns ``(None, NO_LLM_REASON)``). Provider errors
(:class:`~analogist.llm.base.LLMError`, an :class:`~analogist.errors.AnalogistError`) propagate;
the loop records them as "parametric candidates skipped".
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from analogist.encode.llm_writer import usage_of
from analogist.errors import AnalogistError
from analogist.foresight.event import (
    DOMAINS,
    MAX_FACTORS,
    MAX_LINKS,
    SCALES,
    Corpus,
    Event,
    EventError,
    Factor,
    Link,
    TargetView,
    mechanism_definitions,
    parse_date,
    position_definitions,
    validate_event,
)
from analogist.foresight.filter import normalize_name
from analogist.foresight.llm_schema import (
    MAX_NAME,
    _error_text,
    _factor_id,
    _names,
    _s,
    _vocab_lines,
    event_schema,
    generate_schema,
    parametric_id,
)
from analogist.llm.base import NO_LLM_REASON, LLMProvider, Message, sum_usage
from analogist.llm.prompts import load_prompt, neutralise, wrap_data
from analogist.signature import EDGE_TYPES

__all__ = ["MAX_K", "MIN_FACTORS", "SCHEMA_NAME", "ParametricGenerator", "event_schema",
           "generate_schema", "parametric_generator_or_skip"]

SCHEMA_NAME = "foresight_generate"
MAX_K = 10
MIN_FACTORS = 2
MAX_DESCRIPTION = 2000
MAX_FACTOR_TEXT = 600
MAX_TRIED_LISTED = 60


# -- the generator ---------------------------------------------------------------------------
class ParametricGenerator:
    """The ``generate`` hook of :func:`run_foresight` over an LLM (see the module docstring).

    ``generator(target_view, gap, tried) -> list[Event]``: one call per round. ``notes`` keeps
    every dropped proposal, factor or link and why; ``usage`` one accounting dict per call
    (:meth:`total_usage` sums them); ``returned`` the ids handed to the loop, round by round, and
    ``events`` those events by id (the loop's filter may still reject some).
    """

    label = "parametric"

    def __init__(self, provider: LLMProvider | None, *, corpus: Corpus | None = None, k: int = 3,
                 prompt_version: str = "v1", temperature: float | None = None,
                 max_tokens: int | None = None, vocabulary_enum: bool = True) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise AnalogistError(f"k must be an integer from 1 to {MAX_K}, got {k!r}", field="k")
        self.provider = provider
        self.corpus = corpus
        self.k = k
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.vocabulary_enum = vocabulary_enum
        self.prompt = load_prompt(SCHEMA_NAME, prompt_version)
        self.schema = generate_schema(k, vocabulary_enum=vocabulary_enum)
        self.notes: list[str] = []
        self.usage: list[dict[str, Any]] = []
        self.returned: list[list[str]] = []
        self.events: dict[str, Event] = {}
        self.calls = 0
        self._names: dict[str, str] = {}  # ids of events this generator built -> their names

    # -- reporting ----------------------------------------------------------------------------
    @property
    def skipped_reason(self) -> str | None:
        """:data:`NO_LLM_REASON` without a provider, else None."""
        return NO_LLM_REASON if self.provider is None else None

    @property
    def prompt_version(self) -> str:
        return self.prompt.version

    def total_usage(self) -> dict[str, Any]:
        return sum_usage(*self.usage)

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "skipped": self.skipped_reason,
                "model": None if self.provider is None else str(self.provider.model),
                "prompt_version": self.prompt_version, "k": self.k, "calls": self.calls,
                "usage": self.total_usage(), "returned": [list(r) for r in self.returned],
                "notes": list(self.notes)}

    # -- the hook -----------------------------------------------------------------------------
    def __call__(self, target_view: TargetView, gap: Iterable[tuple[str, str]],
                 tried: Iterable[str]) -> list[Event]:
        if self.provider is None:
            if NO_LLM_REASON not in self.notes:
                self.notes.append(NO_LLM_REASON)
            return []
        tried_ids = set(tried)
        gap_t = tuple(gap)
        rnd = self.calls
        self.calls += 1
        msgs = self.messages(target_view, gap_t, tried_ids)
        try:
            r = self.provider.complete_json(msgs, self.schema, schema_name=SCHEMA_NAME,
                                            temperature=self.temperature,
                                            max_tokens=self.max_tokens)
        except AnalogistError as e:      # counted: a failed call is a call and a failure
            self._note(rnd, f"the call failed: {str(e)[:300]}")
            self.usage.append(getattr(e, "usage", None) or {"calls": 1, "failures": 1})
            raise
        self.usage.append(usage_of([r]))
        model = r.model or str(self.provider.model)
        raw = r.data.get("events") if isinstance(r.data, dict) else None
        raw = raw if isinstance(raw, list) else []
        if len(raw) > self.k:
            self._note(rnd, f"the model proposed {len(raw)} events; kept the first {self.k}")
        out: list[Event] = []
        seen = set(tried_ids)
        for n, item in enumerate(raw[:self.k]):
            ev = self._one(item, n, rnd, target_view.event, seen, model)
            if ev is not None:
                seen.add(ev.event_id)
                out.append(ev)
        self.returned.append([e.event_id for e in out])
        self.events.update((e.event_id, e) for e in out)
        return out

    # -- the request --------------------------------------------------------------------------
    def target_data(self, tv: TargetView) -> dict[str, Any]:
        """What the model sees of the target: no hidden factor, no post-cutoff text."""
        ev = tv.event
        data: dict[str, Any] = {"name": ev.name, "aliases": list(ev.aliases),
                                "domain": ev.domain, "scale": ev.scale}
        if tv.cutoff is not None:
            data["cutoff"] = tv.cutoff
        if ev.cutoff is not None and tv.cutoff == ev.cutoff.date:
            data["brief"] = ev.cutoff.brief
        data["observed_factors"] = [
            {"id": f.id, "position": f.position, "mechanism": f.mechanism, "text": f.text}
            for f in tv.view.factors]
        data["observed_links"] = [[ln.cause, ln.edge, ln.effect] for ln in tv.view.links]
        return data

    def _name_of(self, event_id: str) -> str:
        if event_id in self._names:
            return self._names[event_id]
        if self.corpus is not None:
            for e in self.corpus.events:
                if e.event_id == event_id:
                    return e.name
        return event_id

    def _related_names(self, target: Event) -> list[str]:
        """Names of the target's known parts, containers and direct precursors/consequences."""
        if self.corpus is None:
            return []
        ids = set(target.part_of) | set(target.related)
        if target.event_id in {e.event_id for e in self.corpus.events}:
            ids |= self.corpus.ancestors(target.event_id)
        out = []
        for e in self.corpus.events:
            if e.event_id == target.event_id:
                continue
            if (e.event_id in ids or target.event_id in self.corpus.ancestors(e.event_id)
                    or target.event_id in e.related):
                out.append(e.name)
        return out

    def messages(self, tv: TargetView, gap: tuple[tuple[str, str], ...],
                 tried: set[str]) -> list[Message]:
        """The system and user messages of one round's call."""
        mechs = mechanism_definitions()
        system = self.prompt.render(k=self.k, positions=_vocab_lines(position_definitions()),
                                    vocabulary=_vocab_lines(mechs))
        lines = [f"Propose up to {self.k} historical events that share the mechanism of the "
                 f"target below."]
        want = [h for h in gap if h[1]]
        unreached = [h[0] for h in gap if not h[1]]
        if want or unreached:
            lines.append("\nHypotheses about the target that still need confirmation "
                         "(position: mechanism — definition):")
            lines += [f"- {p}: {m} — {mechs.get(m, '(not in the vocabulary)')}" for p, m in want]
            if unreached:
                lines.append("Positions no analogy has reached yet (what happened there in "
                             "comparable events?): " + ", ".join(unreached))
        else:
            lines.append("\nNo analogy has been aligned yet: propose the events whose mechanism "
                         "best matches the observed factors.")
        excluded = [self._name_of(i) for i in sorted(tried)][:MAX_TRIED_LISTED]
        if excluded:
            lines.append("\nAlready tried (do not propose these again): "
                         + json.dumps([neutralise(x) for x in excluded], ensure_ascii=False))
        related = self._related_names(tv.event)
        if related:
            lines.append("Parts, containers or direct causes/consequences of the target (do not "
                         "propose these): "
                         + json.dumps([neutralise(x) for x in related], ensure_ascii=False))
        lines.append("\n" + wrap_data("target", json.dumps(self.target_data(tv),
                                                           ensure_ascii=False, indent=1)))
        return [{"role": "system", "content": system},
                {"role": "user", "content": "\n".join(lines)}]

    # -- post-processing ----------------------------------------------------------------------
    def _note(self, rnd: int, text: str) -> None:
        self.notes.append(f"round {rnd}: {text}")

    def _one(self, item: Any, n: int, rnd: int, target: Event, seen: set[str],
             model: str) -> Event | None:
        where = f"events[{n}]"
        if not isinstance(item, dict):
            self._note(rnd, f"{where} is not an object; dropped")
            return None
        name = _s(item.get("name"), MAX_NAME)
        if not name:
            self._note(rnd, f"{where} has no name; dropped")
            return None
        where = f"{where} {name!r}"
        aliases = [a for a in _names(item.get("aliases")) if normalize_name(a)
                   != normalize_name(name)]
        target_keys = {normalize_name(x) for x in target.names()} | {target.event_id}
        if any(normalize_name(x) in target_keys for x in (name, *aliases)):
            self._note(rnd, f"{where} is the target itself; dropped")
            return None
        # a proposal that names a corpus event: return our own decomposition
        if self.corpus is not None:
            hit = next((e for e in (self.corpus.lookup(x) for x in (name, *aliases))
                        if e is not None), None)
            if hit is not None:
                if hit.event_id == target.event_id:
                    self._note(rnd, f"{where} resolves to the target; dropped")
                    return None
                if hit.event_id in seen:
                    self._note(rnd, f"{where} resolves to corpus event {hit.event_id}, already "
                                    f"tried; dropped")
                    return None
                self._note(rnd, f"{where} resolves to corpus event {hit.event_id}; the corpus "
                                f"decomposition is used")
                return hit
        eid = parametric_id(name)
        if eid in seen:
            self._note(rnd, f"{where} was already tried ({eid}); dropped")
            return None
        try:
            return self._build(item, eid, name, aliases, where, rnd, target, model)
        except (EventError, ValidationError) as e:
            self._note(rnd, f"{where} dropped: {_error_text(e)}")
            return None

    def _build(self, item: dict[str, Any], eid: str, name: str, aliases: list[str], where: str,
               rnd: int, target: Event, model: str) -> Event | None:
        """The proposed event ``item`` checked and normalised (None, with a note, when it
        cannot be used)."""
        domain = item.get("domain")
        scale = item.get("scale")
        if domain not in DOMAINS or scale not in SCALES:
            self._note(rnd, f"{where}: domain {str(domain)[:40]!r} or scale {str(scale)[:40]!r} "
                            f"not recognised; dropped")
            return None
        dates = self._dates(item, where, rnd)
        if dates is None:
            return None
        start, end = dates
        factors, ids = self._factors(item, where, rnd)
        if len(factors) < MIN_FACTORS:
            self._note(rnd, f"{where}: {len(factors)} valid factor(s), fewer than {MIN_FACTORS}; "
                            f"dropped")
            return None
        base = {
            "event_id": eid, "name": name, "aliases": aliases, "domain": domain, "scale": scale,
            "start": start, "end": end, "place": _names(item.get("place")),
            "part_of": self._part_of(item, where, rnd, target, eid),
            "description": _s(item.get("description"), MAX_DESCRIPTION) or name,
            "factors": [f.model_dump(exclude_none=True) for f in factors],
            "source": f"parametric: proposed by {model[:100]} from its own knowledge",
            "provenance": "parametric",
        }
        validate_event({**base, "links": []}, source=f"parametric {where}", strict=True)
        links = self._links(item, base, ids, where, rnd)
        ev = validate_event({**base, "links": links}, source=f"parametric {where}", strict=True)
        self._names[ev.event_id] = ev.name
        return ev

    def _dates(self, item: dict[str, Any], where: str,
               rnd: int) -> tuple[str, str | None] | None:
        """The proposed event's start and end (an unreadable end, or one before the start, is
        cleared); None when the start is not a date."""
        start = _s(item.get("start"), 20)
        try:
            t0 = parse_date(start)
        except EventError:
            self._note(rnd, f"{where}: start {start!r} is not a date; dropped")
            return None
        end: str | None = _s(item.get("end"), 20) or None
        if end is not None:
            try:
                if parse_date(end) < t0:
                    raise EventError("before start")
            except EventError:
                self._note(rnd, f"{where}: end {end!r} unreadable or before start; cleared")
                end = None
        return start, end

    def _factors(self, item: dict[str, Any], where: str,
                 rnd: int) -> tuple[list[Factor], dict[str, str]]:
        """The proposed event's valid factors (at most MAX_FACTORS, mechanisms from the
        vocabulary, ids unique) and the model's id of each to its normalised one."""
        known = mechanism_definitions()
        factors: list[Factor] = []
        ids: dict[str, str] = {}  # the model's id -> the normalised one
        raw_factors = item.get("factors") if isinstance(item.get("factors"), list) else []
        for i, f in enumerate(raw_factors):
            fw = f"{where} factors[{i}]"
            if len(factors) >= MAX_FACTORS:
                self._note(rnd, f"{where}: more than {MAX_FACTORS} factors; the rest dropped")
                break
            if not isinstance(f, dict):
                self._note(rnd, f"{fw} is not an object; dropped")
                continue
            raw_id = str(f.get("id", ""))[:80]
            fid = _factor_id(raw_id)
            mech = _s(f.get("mechanism"), 80).lower()
            if not fid or fid in ids.values():
                self._note(rnd, f"{fw}: id {raw_id!r} invalid or repeated; dropped")
                continue
            if mech not in known:
                self._note(rnd, f"{fw} {fid}: mechanism {mech!r} is not in the vocabulary; "
                                f"dropped")
                continue
            time = _s(f.get("time"), 20) or None
            if time is not None:
                try:
                    parse_date(time)
                except EventError:
                    self._note(rnd, f"{fw} {fid}: time {time!r} is not a date; cleared")
                    time = None
            try:
                factors.append(Factor(id=fid, position=_s(f.get("position"), 40).lower(),
                                      mechanism=mech, text=_s(f.get("text"), MAX_FACTOR_TEXT),
                                      time=time))
            except ValidationError as e:
                self._note(rnd, f"{fw} {fid}: {_error_text(e)}; dropped")
                continue
            ids[raw_id] = fid
        return factors, ids

    def _part_of(self, item: dict[str, Any], where: str, rnd: int, target: Event,
                 eid: str) -> list[str]:
        """The events the proposed one is part of, through its ``part_of_names``: the target or
        a corpus event (other names are noted and not linked)."""
        part_of: list[str] = []
        for pn in _names(item.get("part_of_names")):
            if normalize_name(pn) in {normalize_name(x) for x in target.names()}:
                pid: str | None = target.event_id
            else:
                hit = self.corpus.lookup(pn) if self.corpus is not None else None
                pid = hit.event_id if hit is not None else None
            if pid is None:
                self._note(rnd, f"{where}: part of {pn!r}, which is not a corpus event; "
                                f"not linked")
            elif pid not in part_of and pid != eid:
                part_of.append(pid)
        return part_of

    def _links(self, item: dict[str, Any], base: dict[str, Any], ids: dict[str, str],
               where: str, rnd: int) -> list[dict[str, str]]:
        """The proposed event's valid links (at most MAX_LINKS), each checked against the
        factors and the links kept so far."""
        links: list[dict[str, str]] = []
        raw_links = item.get("links") if isinstance(item.get("links"), list) else []
        for i, ln in enumerate(raw_links):
            lw = f"{where} links[{i}]"
            if len(links) >= MAX_LINKS:
                self._note(rnd, f"{where}: more than {MAX_LINKS} links; the rest dropped")
                break
            if not isinstance(ln, dict):
                self._note(rnd, f"{lw} is not an object; dropped")
                continue
            c, e = str(ln.get("cause", ""))[:80], str(ln.get("effect", ""))[:80]
            edge = _s(ln.get("edge"), 20).lower()
            if c not in ids or e not in ids:
                self._note(rnd, f"{lw} {c!r} -> {e!r} names a factor that is missing or was "
                                f"dropped; dropped")
                continue
            if edge not in EDGE_TYPES:
                self._note(rnd, f"{lw}: unknown edge {edge!r}; dropped")
                continue
            cand = {"cause": ids[c], "edge": edge, "effect": ids[e]}
            try:
                Link.model_validate(cand)
                Event.model_validate({**base, "links": [*links, cand]})
            except ValidationError as err:
                self._note(rnd, f"{lw} {ids[c]} -{edge}-> {ids[e]}: {_error_text(err)}; dropped")
                continue
            links.append(cand)
        return links


def parametric_generator_or_skip(provider: LLMProvider | None, **kw: Any
                                 ) -> tuple[ParametricGenerator | None, str | None]:
    """``(ParametricGenerator(provider, **kw), None)``, or ``(None, NO_LLM_REASON)`` without a
    provider (nothing is called)."""
    if provider is None:
        return None, NO_LLM_REASON
    return ParametricGenerator(provider, **kw), None
