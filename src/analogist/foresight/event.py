"""Events: historical episodes decomposed into structural positions (seed 001 §3.1, §4.1).

An :class:`Event` is a Signature whose roles carry structural positions. Each **factor** is one
role: a concrete thing or condition of the event (``TRUST_COMPANIES``: "trust companies taking
deposits outside the reserve rules of national banks") with

* a ``position`` in the event's causal pattern — one of :data:`POSITIONS` (precondition,
  vulnerability, trigger, amplifier, transmission, response, outcome);
* a ``mechanism`` class from the foresight vocabulary (``unregulated_intermediary``), abstract on
  purpose so that the same class recurs across domains under different surface names;
* a ``time`` (partial ISO date, ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, a leading ``-`` for years
  BCE) at which the factor became active; a factor without one is taken to be present from the
  event's start.

``links`` are the event's mechanism graph G_E: typed causal edges (causes, prevents, enables,
masks, delays) between factors. The surface — ``name``, ``aliases``, ``place``, ``description`` —
is D(E), kept apart from the structure. ``span`` (``start`` … ``end``), ``part_of`` (ids of larger
events this one belongs to), ``related`` (ids of events directly causally tied to this one: its
precursors or consequences) and ``scale`` are what the self-analogy filter reads.

A **target** carries a ``cutoff`` (a date, its rationale and the pre-cutoff analyst ``brief``);
:meth:`Event.at_cutoff` splits its factors into observed (time ≤ cutoff, or ``status:
observed``) and hidden (the rest, or ``status: hidden``) and returns the observed view the
foresight loop may see, with the hidden factors kept apart for scoring.

Compilation (:meth:`Event.to_signature`): factors become roles; each factor contributes the unary
relations ``mechanism(F)`` and ``pos_<position>(F)``; each link ``A --edge--> B`` becomes the
causal edge ``mechanism_A(A) --edge--> mechanism_B(B)``. The signature compiles with
:func:`foresight_vocabulary` (the signature vocabulary plus positions and mechanisms), so SME sees
mechanisms and positions as attributes and the links as higher-order causal structure.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from analogist.errors import AnalogistError
from analogist.io import MAX_FILE_BYTES, parse_structured, read_text, validation_error
from analogist.signature import (
    EDGE_TYPES,
    Signature,
    Surface,
    default_signature_vocabulary,
    validate_signature,
)
from analogist.vocabulary import Predicate, PredicateKind, Vocabulary

__all__ = [
    "DOMAINS",
    "POSITIONS",
    "SCALES",
    "Corpus",
    "Cutoff",
    "Event",
    "EventError",
    "Factor",
    "Link",
    "PartialDate",
    "TargetView",
    "event_from_signature",
    "foresight_vocabulary",
    "load_corpus",
    "load_event",
    "mechanism_definitions",
    "parse_date",
    "position_definitions",
    "validate_event",
]

POSITIONS: tuple[str, ...] = ("precondition", "vulnerability", "trigger", "amplifier",
                              "transmission", "response", "outcome")
"""Structural positions, in causal order (seed 001 Fig. 1: trigger, enabler, amplifier, …)."""

DOMAINS: tuple[str, ...] = ("finance", "geopolitics", "technology", "public_health", "society")

SCALES: tuple[str, ...] = ("incident", "episode", "crisis", "wave", "era")
"""Scope classes, smallest first: one incident (a raid, a battle, one firm's failure); an episode
(a campaign, one institution's crisis, weeks to months); a crisis (a national crisis, revolution
or war lasting months to years); a wave (the same kind of crisis across several countries); an
era (a long transformation). The filter rejects a candidate two or more classes away."""

MAX_FACTORS = 32
MAX_LINKS = 96
MAX_TEXT = 2000
POSITION_PREFIX = "pos_"

_ID = re.compile(r"^[a-z0-9][a-z0-9\-]{0,99}$")
_DATE = re.compile(r"^(-?\d{1,4})(?:-(\d{2})(?:-(\d{2}))?)?$")


class EventError(AnalogistError):
    """An Event, target or corpus that does not validate."""


# -- dates -----------------------------------------------------------------------------------
PartialDate = tuple[int, int, int]
"""(year, month, day) with 0 for an unknown month or day; years BCE are negative."""


def parse_date(text: Any, *, field: str | None = None) -> PartialDate:
    """``"1907-10-14"`` → (1907, 10, 14); ``"2007-08"`` → (2007, 8, 0); ``"-44-03-15"`` → 44 BCE."""
    s = str(text).strip() if isinstance(text, (str, int)) and not isinstance(text, bool) else None
    m = _DATE.match(s) if s is not None else None
    if m is None:
        raise EventError(f"expected a date YYYY, YYYY-MM or YYYY-MM-DD (leading '-' for BCE), "
                         f"got {str(text)[:40]!r}", field=field)
    y, mo, d = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)
    if not 0 <= mo <= 12 or not 0 <= d <= 31 or (d and not mo):
        raise EventError(f"impossible date {s!r}", field=field)
    return (y, mo, d)


def _date_ok(v: Any) -> Any:
    if v is None:
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        v = str(v)
    elif isinstance(v, (_dt.date, _dt.datetime)):
        v = v.isoformat()[:10]
    if not isinstance(v, str):
        raise ValueError(f"expected a date string, got {type(v).__name__}")
    try:
        parse_date(v)
    except EventError as e:
        raise ValueError(e.message) from None
    return v


# -- the model -------------------------------------------------------------------------------
FactorId = Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")]
EventId = Annotated[str, Field(pattern=_ID.pattern)]
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


class Factor(BaseModel):
    """One factor of an event: a role carrying a position and a mechanism class."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: FactorId
    position: str
    mechanism: str
    text: Text
    time: str | None = None
    status: Literal["observed", "hidden"] | None = None

    _time_ok = field_validator("time", mode="before")(classmethod(lambda cls, v: _date_ok(v)))

    @field_validator("position")
    @classmethod
    def _position_ok(cls, v: str) -> str:
        if v not in POSITIONS:
            raise ValueError(f"unknown position {v[:40]!r}; expected one of {', '.join(POSITIONS)}")
        return v


class Link(BaseModel):
    """A causal edge between two factors: ``cause --edge--> effect``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cause: FactorId
    edge: Literal["causes", "prevents", "enables", "masks", "delays"] = "causes"
    effect: FactorId
    status: Literal["observed", "inferred"] = "observed"

    @model_validator(mode="before")
    @classmethod
    def _coerce(cls, data: Any) -> Any:
        if isinstance(data, (list, tuple)):
            if len(data) != 3:
                raise ValueError(f"expected [cause, edge, effect], got {len(data)} item(s)")
            return {"cause": data[0], "edge": data[1], "effect": data[2]}
        return data

    @field_validator("edge", mode="before")
    @classmethod
    def _edge_ok(cls, v: Any) -> Any:
        if isinstance(v, str) and v.strip().lower() in EDGE_TYPES:
            return v.strip().lower()
        raise ValueError(f"unknown edge type {str(v)[:40]!r}; expected one of "
                         f"{', '.join(EDGE_TYPES)}")


class Cutoff(BaseModel):
    """Where a target is cut: what an analyst could know on ``date``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    date: str
    rationale: Text
    brief: Text

    _date = field_validator("date", mode="before")(classmethod(lambda cls, v: _date_ok(v)))


class Event(BaseModel):
    """One historical event (or an unfolding target situation). See the module docstring."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_id: EventId
    name: Name
    aliases: tuple[Name, ...] = ()
    domain: Literal["finance", "geopolitics", "technology", "public_health", "society"]
    scale: Literal["incident", "episode", "crisis", "wave", "era"] | None = Field(
        description="scope class; null (explicitly) only when unknown, as for events read "
                    "back from a memory store")
    start: str
    end: str | None = None
    place: tuple[Name, ...] = ()
    part_of: tuple[EventId, ...] = ()
    related: tuple[EventId, ...] = ()
    description: Text
    factors: tuple[Factor, ...] = Field(min_length=1, max_length=MAX_FACTORS)
    links: tuple[Link, ...] = Field(default=(), max_length=MAX_LINKS)
    cutoff: Cutoff | None = None
    source: Text
    provenance: Literal["corpus", "user", "memory", "parametric"] = "corpus"

    _dates = field_validator("start", "end", mode="before")(
        classmethod(lambda cls, v: _date_ok(v)))

    @model_validator(mode="after")
    def _consistent(self) -> Event:
        ids = [f.id for f in self.factors]
        seen: set[str] = set()
        for i, fid in enumerate(ids):
            if fid in seen:
                raise ValueError(f"factors[{i}]: factor id {fid!r} appears twice")
            seen.add(fid)
        for i, ln in enumerate(self.links):
            for end in (ln.cause, ln.effect):
                if end not in seen:
                    raise ValueError(f"links[{i}]: {end!r} is not a factor of this event "
                                     f"(factors: {', '.join(ids)})")
            if ln.cause == ln.effect:
                raise ValueError(f"links[{i}]: a factor cannot cause itself ({ln.cause})")
        keys = [(ln.cause, ln.edge, ln.effect) for ln in self.links]
        if len(set(keys)) != len(keys):
            raise ValueError("links: the same edge is listed twice")
        if self.end is not None and parse_date(self.end) < parse_date(self.start):
            raise ValueError(f"end {self.end} is before start {self.start}")
        if self.event_id in self.part_of or self.event_id in self.related:
            raise ValueError("an event cannot be part of, or related to, itself")
        _acyclic(self)
        return self

    # -- views --------------------------------------------------------------------------------
    def factor(self, fid: str) -> Factor:
        for f in self.factors:
            if f.id == fid:
                return f
        raise KeyError(fid)

    def factor_time(self, f: Factor) -> PartialDate:
        return parse_date(f.time if f.time is not None else self.start)

    def hypotheses(self) -> set[tuple[str, str]]:
        """The (position, mechanism) pairs this event exhibits."""
        return {(f.position, f.mechanism) for f in self.factors}

    def names(self) -> list[str]:
        return [self.name, *self.aliases]

    def at_cutoff(self, date: str | None = None) -> TargetView:
        """The observed view at ``date`` (default: this event's own cutoff)."""
        if date is None:
            if self.cutoff is None:
                return TargetView(self, None, self, ())
            date = self.cutoff.date
        cut = parse_date(date, field="cutoff")
        obs: list[Factor] = []
        hid: list[Factor] = []
        for f in self.factors:
            if f.status == "hidden":
                hid.append(f)
            elif f.status == "observed" or self.factor_time(f) <= cut:
                obs.append(f)
            else:
                hid.append(f)
        if not obs:
            raise EventError(f"no factor of {self.event_id} is observed at the cutoff {date}; "
                             f"a target needs at least one observed factor", field="cutoff")
        keep = {f.id for f in obs}
        links = tuple(ln for ln in self.links if ln.cause in keep and ln.effect in keep)
        view = self.model_copy(update={"factors": tuple(obs), "links": links})
        return TargetView(self, date, view, tuple(hid))

    def to_signature(self) -> Signature:
        """The Signature whose roles carry positions (see the module docstring)."""
        relations: list[list[str]] = []
        for f in self.factors:
            relations.append([f.mechanism, f.id])
            relations.append([POSITION_PREFIX + f.position, f.id])
        mech = {f.id: f.mechanism for f in self.factors}
        chain = [{"cause": f"{mech[ln.cause]}({ln.cause})", "edge": ln.edge,
                  "effect": f"{mech[ln.effect]}({ln.effect})", "status": ln.status}
                 for ln in self.links]
        data = {
            "episode_id": self.event_id,
            "kind": "event",
            "roles": {f.id: f.text for f in self.factors},
            "relations": relations,
            "causal_chain": chain,
            "levels": {"L0": self.description[:4000]},
            "surface": Surface(domain=self.domain, entities=list(self.names())[:256]),
            "provenance": {"writer": f"foresight-{self.provenance}"},
        }
        return validate_signature(data, source=self.event_id)

    def surface_text(self) -> str:
        """D(E): the descriptive text a surface-only method sees."""
        return f"{self.name}. {self.description}"


@dataclass(frozen=True)
class TargetView:
    """A target split at its cutoff: ``view`` holds only the observed factors and links."""

    event: Event
    cutoff: str | None
    view: Event
    hidden: tuple[Factor, ...]

    def brief_text(self) -> str:
        """What a surface method may read about the target: the pre-cutoff brief when there
        is one, else the name and the observed factors' texts."""
        if self.event.cutoff is not None and self.cutoff == self.event.cutoff.date:
            return f"{self.event.name}. {self.event.cutoff.brief}"
        return f"{self.event.name}. " + " ".join(f.text for f in self.view.factors)

    def hidden_hypotheses(self) -> set[tuple[str, str]]:
        return {(f.position, f.mechanism) for f in self.hidden} - self.view.hypotheses()


def _acyclic(ev: Event) -> None:
    """Causes/enables links may not form a cycle unless one edge is marked as feedback via an
    amplifier factor; cycles are allowed only through an amplifier (a feedback loop is what an
    amplifier is) — any other cycle is an error naming its factors."""
    graph: dict[str, list[str]] = {}
    for ln in ev.links:
        graph.setdefault(ln.cause, []).append(ln.effect)
    pos = {f.id: f.position for f in ev.factors}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in graph.get(n, ()):
            if state.get(m) == 1:
                cyc = stack[stack.index(m):]
                if not any(pos[x] == "amplifier" for x in cyc):
                    raise ValueError(f"links form a cycle {' -> '.join([*cyc, m])}; only a "
                                     f"feedback loop through an amplifier factor may be cyclic")
            elif state.get(m) is None:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in list(graph):
        if state.get(n) is None:
            visit(n)


# -- vocabulary ------------------------------------------------------------------------------
def _history_root() -> Any:
    return resources.files("analogist") / "data" / "history"


@lru_cache(maxsize=1)
def _vocab_data() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    root = _history_root()
    main = yaml.safe_load((root / "mechanisms.yaml").read_text(encoding="utf-8"))
    positions = dict(main["positions"])
    mechs: dict[str, str] = dict(main["mechanisms"])
    origin = {m: "mechanisms.yaml" for m in mechs}
    extra = root / "mechanisms.d"
    if extra.is_dir():
        for f in sorted(extra.iterdir(), key=lambda p: p.name):
            if not f.name.endswith(".yaml"):
                continue
            data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
            for name, definition in (data.get("mechanisms") or {}).items():
                if name in mechs:
                    raise EventError(f"mechanism {name!r} is declared twice (also in "
                                     f"{origin[name]})", source=f"mechanisms.d/{f.name}")
                if not isinstance(definition, str) or not definition.strip():
                    raise EventError(f"mechanism {name!r} needs a one-line definition",
                                     source=f"mechanisms.d/{f.name}")
                mechs[name] = definition
                origin[name] = f"mechanisms.d/{f.name}"
    return positions, mechs, origin


def position_definitions() -> dict[str, str]:
    return dict(_vocab_data()[0])


def mechanism_definitions() -> dict[str, str]:
    """Every mechanism class with its one-line definition (main file plus mechanisms.d/)."""
    return dict(_vocab_data()[1])


def foresight_vocabulary() -> Vocabulary:
    """The signature vocabulary plus one attribute per mechanism and per position (a fresh copy
    on each call)."""
    preds = [Predicate(name=m, kind=PredicateKind.ATTRIBUTE, arity=1, definition=d)
             for m, d in mechanism_definitions().items()]
    preds += [Predicate(name=POSITION_PREFIX + p, kind=PredicateKind.ATTRIBUTE, arity=1,
                        definition=f"the factor is at the {p} position: {d}")
              for p, d in position_definitions().items()]
    extra = Vocabulary.from_predicates(preds, name="foresight", version="1")
    return default_signature_vocabulary().merged(extra)


# -- loading ---------------------------------------------------------------------------------
def validate_event(data: Any, *, source: str | None = None, strict: bool = True) -> Event:
    """Validate parsed data as an Event; with ``strict`` every mechanism must be declared."""
    if not isinstance(data, dict):
        raise EventError(f"expected a mapping of event fields, got {type(data).__name__}",
                         source=source)
    try:
        ev = Event.model_validate(data)
    except ValidationError as e:
        raise validation_error(e, source=source, cls=EventError) from None
    if strict:
        known = mechanism_definitions()
        for i, f in enumerate(ev.factors):
            if f.mechanism not in known:
                close = [m for m in known if m.split("_")[0] == f.mechanism.split("_")[0]][:5]
                hint = f" (similar: {', '.join(close)})" if close else ""
                raise EventError(f"unknown mechanism {f.mechanism!r}{hint}; declare it with a "
                                 f"definition first", source=source,
                                 field=f"factors[{i}].mechanism")
    return ev


def load_event(path: str | Path, *, strict: bool = True, max_bytes: int = MAX_FILE_BYTES
               ) -> Event:
    """Load one Event from a YAML or JSON file."""
    text = read_text(path, max_bytes=max_bytes)
    return validate_event(parse_structured(text, source=str(path)), source=str(path),
                          strict=strict)


def event_from_signature(sig: Signature, *, provenance: str = "memory") -> Event | None:
    """Read an Event back from a stored Signature of kind ``event`` whose roles carry
    ``pos_<position>`` relations; None when the signature carries no positions. Names come from
    ``surface.entities`` (first = name); dates, scale and part-of links are not stored in a
    Signature, so the event spans an unknown date (year 0) and its scale is unknown (None)."""
    if sig.kind != "event":
        return None
    pos: dict[str, str] = {}
    mech: dict[str, str] = {}
    for r in sig.relations:
        if len(r.args) != 1:
            continue
        if r.predicate.startswith(POSITION_PREFIX) and r.predicate[4:] in POSITIONS:
            pos[r.args[0]] = r.predicate[4:]
        else:
            mech.setdefault(r.args[0], r.predicate)
    factors = [{"id": t.upper().replace("-", "_"), "position": pos[t], "mechanism": mech[t],
                "text": sig.roles[t]} for t in sig.roles if t in pos and t in mech]
    if not factors:
        return None
    ids = {t: t.upper().replace("-", "_") for t in sig.roles}
    links = [{"cause": ids[e.cause.args[0]], "edge": e.edge, "effect": ids[e.effect.args[0]],
              "status": e.status} for e in sig.causal_chain
             if len(e.cause.args) == 1 and len(e.effect.args) == 1
             and e.cause.args[0] in pos and e.effect.args[0] in pos]
    names = list(sig.surface.entities) or [sig.episode_id]
    slug = re.sub(r"[^a-z0-9\-]+", "-", sig.episode_id.lower()).strip("-")[:100] or "event"
    data = {"event_id": slug, "name": names[0][:200], "aliases": [n[:200] for n in names[1:8]],
            "domain": sig.surface.domain if sig.surface.domain in DOMAINS else "society",
            "scale": None, "start": "0", "description": sig.levels.L0 or names[0],
            "factors": factors, "links": links, "source": f"memory episode {sig.episode_id}",
            "provenance": provenance}
    try:
        return validate_event(data, source=sig.episode_id, strict=False)
    except EventError:
        return None


def normalize_name(name: str) -> str:
    """Lower-case, accents and punctuation removed, spaces collapsed, a leading article dropped."""
    s = unicodedata.normalize("NFKD", name)
    s = "".join(c for c in s if not unicodedata.combining(c)).lower()
    s = re.sub(r"['’`]s\b", "", s)
    s = re.sub(r"[^a-z0-9]+", " ", s).strip()
    s = re.sub(r"^(the|a|an) ", "", s)
    return s


@dataclass(frozen=True)
class Corpus:
    """A set of events with id, alias and part-of lookups."""

    events: tuple[Event, ...]
    name: str = "history"

    def __post_init__(self) -> None:
        ids = [e.event_id for e in self.events]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise EventError(f"event id(s) {', '.join(dup)} appear more than once",
                             source=self.name)

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Any:
        return iter(self.events)

    def get(self, event_id: str) -> Event:
        for e in self.events:
            if e.event_id == event_id:
                return e
        raise EventError(f"no event {event_id!r} in the corpus {self.name!r}")

    def ids(self) -> list[str]:
        return [e.event_id for e in self.events]

    def lookup(self, name: str) -> Event | None:
        """The event whose id, name or alias equals ``name`` (case and punctuation folded)."""
        key = normalize_name(name)
        for e in self.events:
            if name.strip() == e.event_id or key in {normalize_name(n) for n in e.names()}:
                return e
        return None

    def search(self, name: str, limit: int = 5) -> list[Event]:
        """Events whose id, name or aliases contain every content word of ``name`` (for
        suggestions when :meth:`lookup` finds nothing), best (fewest extra words) first."""
        words = {w for w in normalize_name(name).split() if w not in ("of", "the", "and")}
        if not words:
            return []
        scored = []
        for e in self.events:
            best = None
            for n in (*e.names(), e.event_id.replace("-", " ")):
                have = set(normalize_name(n).split())
                if words <= have:
                    extra = len(have - words)
                    best = extra if best is None else min(best, extra)
            if best is not None:
                scored.append((best, e.event_id, e))
        return [e for _, _, e in sorted(scored)[:limit]]

    def ancestors(self, event_id: str) -> set[str]:
        """Every event this one is (transitively) part of."""
        by_id = {e.event_id: e for e in self.events}
        out: set[str] = set()
        todo = list(by_id[event_id].part_of) if event_id in by_id else []
        while todo:
            x = todo.pop()
            if x in out:
                continue
            out.add(x)
            if x in by_id:
                todo.extend(by_id[x].part_of)
        return out

    def without(self, ids: Iterable[str]) -> Corpus:
        drop = set(ids)
        return Corpus(tuple(e for e in self.events if e.event_id not in drop), self.name)



def load_corpus(path: str | Path | None = None, *, strict: bool = True) -> Corpus:
    """Load every ``*.yaml`` event under ``path`` (default: the bundled historical corpus).
    Every file is validated before anything is returned; part-of and related links must name
    events of the corpus, and part-of links may not form a cycle."""
    if path is None:
        root = _history_root() / "events"
        files = sorted((f for f in root.iterdir() if f.name.endswith(".yaml")),
                       key=lambda f: f.name)
        events = [validate_event(yaml.safe_load(f.read_text(encoding="utf-8")),
                                 source=f"history/events/{f.name}", strict=strict)
                  for f in files]
        name = "history"
    else:
        p = Path(path)
        files_p = sorted(p.glob("*.yaml")) + sorted(p.glob("*.yml")) if p.is_dir() else [p]
        if not files_p:
            raise EventError("no .yaml event files found", source=str(p))
        events = [load_event(f, strict=strict) for f in files_p]
        name = str(p)
    corpus = Corpus(tuple(events), name)
    ids = set(corpus.ids())
    for e in corpus.events:
        for field_name in ("part_of", "related"):
            for x in getattr(e, field_name):
                if x not in ids:
                    raise EventError(f"{field_name} names {x!r}, which is not an event of the "
                                     f"corpus", source=e.event_id, field=field_name)
    for e in corpus.events:
        if e.event_id in corpus.ancestors(e.event_id):
            raise EventError("part_of links form a cycle through this event", source=e.event_id,
                             field="part_of")
    return corpus
