"""The Event model: its positions, domains and scales, partial dates, factors, links, cutoffs,
the Event itself and a target's view at its cutoff (see :mod:`analogist.foresight.event`)."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from analogist.errors import AnalogistError
from analogist.signature import (
    EDGE_TYPES,
    Signature,
    Surface,
    validate_signature,
)

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

