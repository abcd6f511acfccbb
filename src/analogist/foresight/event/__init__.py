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

The package's rooms: :mod:`~analogist.foresight.event.model` (positions, dates, factors, links,
cutoffs, the Event, a target's view), :mod:`~analogist.foresight.event.vocab` (the mechanism
classes and positions as a vocabulary) and :mod:`~analogist.foresight.event.loading` (events
from data, files and stored Signatures; the historical corpus). Every public name is
re-exported here.
"""

from __future__ import annotations

from analogist.foresight.event.loading import (
    Corpus,
    event_from_signature,
    load_corpus,
    load_event,
    normalize_name,
    validate_event,
)
from analogist.foresight.event.model import (
    DOMAINS,
    MAX_FACTORS,
    MAX_LINKS,
    POSITIONS,
    SCALES,
    Cutoff,
    Event,
    EventError,
    Factor,
    Link,
    PartialDate,
    TargetView,
    parse_date,
)
from analogist.foresight.event.vocab import (
    foresight_vocabulary,
    mechanism_definitions,
    position_definitions,
)

__all__ = [
    "DOMAINS",
    "MAX_FACTORS",
    "MAX_LINKS",
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
    "normalize_name",
    "parse_date",
    "position_definitions",
    "validate_event",
]
