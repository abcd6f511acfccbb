"""The claim reader: one stated similarity or difference read as relational claims.

Each predicate of the text (a verb with its arguments in English; a causal construction in
Chinese) becomes a :class:`Claim` — its participants, the relation or mechanism it states (mapped
onto the signature vocabulary's relation predicates and the foresight mechanism classes), whether
it is causal, its direction (cause → effect) and whether it is negated — and a ``status`` that
says what the claim amounts to:

* ``structural`` — a relation is actually stated between real participants (or a mechanism class
  is named as present): "X, which expanded Y"; "cheap loans pushed land prices up"; "a credit
  boom". A claim is causal when its verb acts on a participant (a transitive event verb), when two
  clauses are joined by a causal or temporal-causal link ("so", "which", "when", "once", "because"
  in English; 一…就, …后, 使/让/迫使… in Chinese), or when it names a causal vocabulary term;
* ``placeholder`` — cue words without participants ("one thing caused another", "both had causes
  that led to effects", "一件事导致了另一件事");
* ``topic`` — a shared topic, not a relation ("both involve regulation", "两者都涉及监管");
* ``negated`` — the relation is stated as not holding ("fraud did not cause the collapse");
* ``noncausal`` — a relation between participants that is not causal (ownership, containment…);
* ``surface`` — time, place, names, publicity ("both began in New York");
* ``event`` — something happened, with no relation to anything ("prices fell").

English is parsed with the project's spaCy pipeline (:func:`analogist.encode.deterministic.load_nlp`);
Chinese, for which no parser is bundled, is read by its function words (*departure*: causal
constructions, negators, placeholders and topic frames are matched as patterns, see ``_ZH_*``).
Named vocabulary terms come from the concept lexicon (:func:`analogist.safeguard.lexicon.concepts_in`);
a structural claim that names none is mapped onto the nearest vocabulary term by the bundled
embedder (:func:`analogist.index.embed.default_embedder`, multilingual) against each term's
definition, and the term and its cosine are kept as the claim's ``relation`` and ``similarity``
(provenance for the report); a relation that maps onto no term (cosine below
:attr:`ClaimReaderParams.map_min_cosine`) is an act or event, not a structural claim.

The package's rooms: :mod:`~analogist.safeguard.claims.model` (a claim, the parameters),
:mod:`~analogist.safeguard.claims.words` (the word classes, the language of a text),
:mod:`~analogist.safeguard.claims.english`, :mod:`~analogist.safeguard.claims.chinese`,
:mod:`~analogist.safeguard.claims.mapping` (onto the vocabularies) and
:mod:`~analogist.safeguard.claims.reading` (the entry points). Every public name is re-exported
here.
"""

from __future__ import annotations

from analogist.safeguard.claims.model import Claim, ClaimReaderParams, ClaimStatus
from analogist.safeguard.claims.reading import read_claims, restates

__all__ = ["Claim", "ClaimReaderParams", "ClaimStatus", "read_claims", "restates"]
