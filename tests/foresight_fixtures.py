"""Small hand-built events for the foresight tests (not the bundled corpus)."""

from __future__ import annotations

from typing import Any

from analogist.foresight.event import Event, validate_event


def make_event(event_id: str, factors: list[tuple[str, str, str, str | None]],
               links: list[tuple[str, str, str]], *, name: str | None = None,
               aliases: tuple[str, ...] = (), scale: str = "crisis", start: str = "1900",
               domain: str = "finance", part_of: tuple[str, ...] = (),
               related: tuple[str, ...] = (), cutoff: str | None = None,
               description: str | None = None) -> Event:
    """factors: (id, position, mechanism, time); links: (cause, edge, effect)."""
    data: dict[str, Any] = {
        "event_id": event_id, "name": name or event_id.replace("-", " ").title(),
        "aliases": list(aliases), "domain": domain, "scale": scale, "start": start,
        "part_of": list(part_of), "related": list(related),
        "description": description or f"The {event_id} event.",
        "factors": [{"id": i, "position": p, "mechanism": m, "text": f"{i.lower()} in {event_id}",
                     **({"time": t} if t else {})} for i, p, m, t in factors],
        "links": [list(x) for x in links], "source": "test fixture",
    }
    if cutoff:
        data["cutoff"] = {"date": cutoff, "rationale": "test", "brief": f"brief of {event_id}"}
    return validate_event(data, source=event_id)


CRISIS = [("BOOM", "precondition", "credit_boom", "1900"),
          ("SHADOW", "vulnerability", "unregulated_intermediary", "1900"),
          ("BET", "trigger", "failed_speculation", "1900-06"),
          ("RUN", "amplifier", "bank_run", "1900-07"),
          ("CRUNCH", "transmission", "credit_crunch", "1900-08"),
          ("RESCUE", "response", "lender_of_last_resort", "1900-09"),
          ("SLUMP", "outcome", "deep_recession", "1901")]
CRISIS_LINKS = [("BOOM", "enables", "BET"), ("SHADOW", "enables", "RUN"),
                ("BET", "causes", "RUN"), ("RUN", "causes", "CRUNCH"),
                ("CRUNCH", "causes", "SLUMP"), ("RESCUE", "prevents", "RUN")]


def crisis(event_id: str, start: str = "1900", drop: tuple[str, ...] = (), **kw: Any) -> Event:
    """A banking-panic-shaped event; ``drop`` removes factors (and their links)."""
    y = int(start)
    fs = [(i, p, m, str(int(t[:4]) - 1900 + y) + t[4:]) for i, p, m, t in CRISIS if i not in drop]
    ls = [x for x in CRISIS_LINKS if x[0] not in drop and x[2] not in drop]
    return make_event(event_id, fs, ls, start=str(y), **kw)


def unrelated(event_id: str, **kw: Any) -> Event:
    """A pandemic-shaped event sharing no mechanism with :func:`crisis`."""
    return make_event(event_id, [
        ("CROWD", "precondition", "crowding_mixing", None),
        ("BLIND", "vulnerability", "weak_surveillance", None),
        ("BUG", "trigger", "pathogen_emergence", None),
        ("SPREAD", "transmission", "travel_spread", None),
        ("LOCK", "response", "containment_measures", None),
        ("DEATHS", "outcome", "excess_mortality", None)],
        [("CROWD", "enables", "SPREAD"), ("BUG", "causes", "SPREAD"),
         ("BLIND", "enables", "SPREAD"), ("SPREAD", "causes", "DEATHS"),
         ("LOCK", "prevents", "SPREAD")], domain="public_health", **kw)
