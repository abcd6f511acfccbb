"""Loading events: validation (strict: every mechanism declared), files, the Event read back from
a stored Signature, and the historical corpus with its part-of and related links (see
:mod:`analogist.foresight.event`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from analogist.foresight.event.model import (
    DOMAINS,
    POSITION_PREFIX,
    POSITIONS,
    Event,
    EventError,
)
from analogist.foresight.event.vocab import (
    _history_root,
    mechanism_definitions,
)
from analogist.io import MAX_FILE_BYTES, parse_structured, read_text, validation_error
from analogist.signature import (
    Signature,
)


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
