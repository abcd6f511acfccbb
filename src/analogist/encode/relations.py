"""Relation typing onto the vocabulary: names, synonyms, cue lexicon, embedder (stage 5)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from analogist.encode.clauses import _Clause, _Link, _Typed
from analogist.encode.everyday import EVERYDAY_RELATIONS
from analogist.encode.lexicon import (
    _ABSENCE_WORDS,
    _APPEAR_VERBS,
    _CHECK_VERBS,
    _CUE_INDEX,
    _HOLD_READINGS,
    _HOLDING_VERBS,
    _LINKING,
    _OMIT_VERBS,
    _POSSESSION_VERBS,
    _PROVISION_VERBS,
    _REPORT_VERBS,
    _RESPONSE_VERBS,
    _SEE_VERBS,
    _STATE_PHRASES,
    _STOP,
    _TELL_VERBS,
    _UPDATE_VERBS,
    _WHOLE_SHARES,
    _snake,
    _strip_roles,
)
from analogist.encode.params import EncoderParams
from analogist.encode.states import _GENERAL_STATES
from analogist.index.embed import Embedder
from analogist.vocabulary import Predicate, Vocabulary

_GENERAL_RELATIONS: dict[str, tuple[str, ...]] = {
    "changes": ("turn", "cool", "dress", "replant", "redesign", "rebuild", "repaint", "dilute",
                "mix", "mix in", "swap",
                "tamper with", "reprogram", "rezone", "reformulate", "renumber", "reorganise",
                "reorganize", "shift", "move", "change", "alter", "modify", "revise", "resurvey",
                "adjust", "lower", "reset", "rewrite", "edit", "reroute", "rearrange", "redraw",
                "reprice", "relocate", "fill", "melt"),
    "amplifies": ("raise", "boost", "turn up", "increase", "inflate", "double", "amplify",
                  "speed up", "heat"),
    "supplies": ("ship", "post", "mail", "dispense", "donate", "hand out", "pour", "pass on",
                 "lay out", "put out", "water", "fuel", "power", "stock with", "refill", "give",
                 "send", "feed", "supply", "deliver", "issue", "offer", "sell", "pay", "provide",
                 "hand", "serve", "distribute", "lend", "grant", "pump", "release", "bring",
                 "load"),
    "produces": ("plant", "sow", "lay", "compose", "paint", "assemble", "manufacture", "cook",
                 "knit", "sew", "carve", "generate", "breed", "compute", "calculate", "produce",
                 "make", "write", "print", "build", "bake", "brew", "forge", "draft", "create",
                 "publish", "invent", "grow", "finish", "complete"),
    "uses": ("play", "handle", "wield", "drive on", "ride", "use", "employ", "apply", "operate",
             "run", "work with", "train on", "practise on", "practice on", "switch to", "rely on",
             "play on"),
    "consumes": ("exhaust", "empty", "overgraze", "cut down", "chop down", "fell", "use up",
                 "eat up", "burn through", "overfish", "deplete", "use all", "strip", "eat",
                 "drink", "burn", "spend", "drain", "graze", "devour"),
    "keeps": ("keep", "hold", "store", "maintain", "tend", "save", "hoard", "stock", "retain"),
    "lacks": ("run out", "run short", "run low on", "run out of", "run short of"),
    "loses": ("drop", "mislay", "misplace", "lose", "leak", "spill", "shed", "forfeit", "waste"),
    "acquires": ("earn", "win", "draw", "pump from", "fetch", "pick up", "rent", "lease",
                 "recruit", "attract", "capture", "trap", "extract", "buy", "purchase", "acquire",
                 "take", "get", "collect", "harvest", "catch", "gather", "obtain", "receive",
                 "order", "hire", "borrow", "import", "gain"),
    "harms": ("damage", "harm", "injure", "hurt", "scald", "hit", "strike", "destroy", "demolish",
              "wreck", "kill", "flood", "ruin", "poison", "sicken", "crush", "drown", "erode",
              "sting", "starve"),
    "disables": ("disable", "switch off", "turn off", "shut off", "shut down", "deactivate",
                 "bypass", "override", "silence", "mute", "unplug", "disconnect", "remove",
                 "close"),
    "selects": ("choose", "select", "pick", "rank", "judge", "rate", "grade", "prefer", "favour",
                "favor", "sort", "score", "shortlist"),
    "imitates": ("copy", "imitate", "mimic", "learn", "emulate", "adopt"),
    "signals": ("shout", "alert", "notify", "praise", "greet", "promise", "claim", "signal",
                "ring", "phone", "email", "radio", "flag", "remind", "recommend", "show",
                "display", "tell", "warn", "announce", "broadcast", "inform", "advertise",
                "report", "demand", "request", "ask for", "complain"),
    "observes": ("hear", "look at", "sight", "glimpse", "witness", "listen to", "check on",
                 "discover", "catch sight of", "spy", "notice", "see", "spot", "detect", "find",
                 "read", "know"),
    "schedules": ("book", "reserve", "plan", "slot"),
    "configures": ("set", "configure", "tune", "calibrate", "program"),
    "optimises_for": ("maximise", "maximize", "minimise", "minimize", "optimise", "optimize",
                      "chase", "target"),
    "moves_through": ("walk", "walk across", "walk onto", "step onto", "climb", "arrive at",
                      "arrive in", "arrive from", "pour into", "drift into", "fly", "swim", "wade",
                      "flow", "seep into", "run into", "cross into", "walk into", "crowd", "cross",
                      "pass", "reach", "drag across", "bloom across", "spread", "wash into",
                      "flow into", "travel", "enter", "sail", "drive", "travel through",
                      "cross at"),
    "waits_for": ("wait at", "wait behind", "wait in", "queue", "line up", "queue behind",
                  "wait outside", "queue at", "queue for", "line up at", "line up for"),
    "measures": ("count", "measure", "weigh", "tally", "clock", "record", "log", "gauge", "meter",
                 "survey", "poll", "sample"),
    "competes_for": ("crowd onto", "crowd into", "crowd around", "jostle for", "scramble for",
                     "race for", "bid for", "fight over", "compete over"),
    "misses": ("miss",),
    "incentivises": ("pay by", "pay per", "reward for", "bonus for", "pay a bonus for", "tip for",
                     "pay extra for"),
    "contains": ("have", "include", "house", "comprise", "hold in"),
    "trusts_as_authoritative": ("follow", "obey", "heed"),
    "reduces": ("cut", "reduce", "trim", "halve", "slash", "lessen", "diminish", "shrink",
                "thin out", "scale back", "cut back", "narrow"),
    "masks": ("drown out", "muffle", "obscure", "disguise", "cover up", "paper over",
              "gloss over"),
    "skips_check": ("skip", "omit", "forgo", "forego", "wave through"),
    "blocks": ("plug", "seal", "dam", "barricade", "obstruct", "bar", "stop", "halt", "hold back",
               "jam", "clog"),
}
"""General English verbs (lemma, with a particle or preposition when it matters) read as the
vocabulary's domain-neutral relations when neither a name, a synonym nor the cue lexicon types a
clause — before the embedder, whose cosine on a single verb is close to noise: "the storm
shifted the sandbar" → ``changes``, "the bakery sold the loaves" → ``supplies``. A verb's
meaning, not its domain: every entry is an ordinary verb. A clause that ends a kept causal link
is read here after the embedder (:meth:`_RelationTyper._type_edge_ends`); that reading is both its
edge atom and its own relation atom, the surface verb kept as provenance only."""
_PLACE_PREPS = {"on", "in", "at", "between", "across", "into", "onto", "against", "inside",
                "within", "beside", "near", "along", "under", "over", "behind", "around",
                "during", "for", "from", "off", "through", "past", "outside", "below", "above",
                "by", "until", "till", "since"}
"""Prepositions of place and time: "grounded *on* the sandbar" names where it happened."""
_LATE_WORDS = {"late", "behind", "overdue", "belatedly"}
"""Adverbs of lateness: "the invoices went out three days *late*" → delayed."""
_PATH_PREPS = {"to", "into", "onto", "through", "throughout", "across", "via", "toward",
               "towards", "from", "along", "past", "between", "within", "inside", "upon"}
"""Prepositions of path and destination: "carried the pollen *to* the hive" is still carrying
(a particle such as "out" or "off" makes another verb: "put out", "carry out")."""
_PLAIN_INDEX = {verb: name for name, verbs in _GENERAL_RELATIONS.items() for verb in verbs}
_GENERAL_INDEX = {verb: name for table in (EVERYDAY_RELATIONS, _GENERAL_RELATIONS)
                  for name, verbs in table.items() for verb in verbs}
"""Every table verb → its predicate: :data:`_GENERAL_RELATIONS` (``_PLAIN_INDEX``) and the
everyday verbs of :data:`~analogist.encode.everyday.EVERYDAY_RELATIONS` (no verb is in both). An
everyday verb is read by its lemma alone only when the clause has no particle or preposition of
its own but one of :data:`_PATH_PREPS`: "sang the finale" → ``produces``, "transported the
coal *to* the plant" → ``transports``, but "sang *without* the piano" names no product."""


class _RelationTyper:
    """Mixin of :class:`~analogist.encode.deterministic.DeterministicEncoder`: relation typing onto the vocabulary: names, synonyms, cue lexicon, embedder (stage 5)."""

    params: EncoderParams
    vocab: Vocabulary
    embedder: Embedder | None
    nlp: Any

    def _definitions(self, arity: int) -> tuple[list[Predicate], np.ndarray | None]:
        """Predicates of ``arity`` with definitions and, with an embedder, their gloss vectors:
        shape ``(2, n, dim)`` — the definition with the role words stripped, and the name plus
        synonyms (a pattern scores the better of the two). A superordinate (some predicate's
        ``parent``, such as ``adverse``) is for matching by minimal ascension, never written."""
        parents = {p.parent for p in self.vocab if p.parent is not None}
        preds = [p for p in self.vocab if p.arity == arity and p.definition
                 and p.name not in ("causes", "prevents", "enables", "masks", "delays")
                 and p.name not in parents and p.status == "declared"]
        if self.embedder is None or not preds:
            return preds, None
        if arity not in self._def_cache:
            gloss = [_strip_roles(p.definition) or p.definition for p in preds]
            names = [" ".join(w.replace("_", " ") for w in (p.name, *p.synonyms)) for p in preds]
            vecs = np.stack([self.embedder.embed(gloss), self.embedder.embed(names)])
            self._def_cache[arity] = (preds, vecs)
        return self._def_cache[arity]

    def _exact(self, forms: list[str], arity: int) -> Predicate | None:
        for f in forms:
            p = self.vocab.get(_snake(f))
            if p is not None and p.accepts_arity(arity):
                return p
        return None

    def _vp3(self, c: _Clause) -> str:
        """The clause's verb phrase in the third person ("bounces off"; "is" for the copula)."""
        if c.lemma == "be":
            return "is " + " ".join(c.verb.split(" ")[1:]) if " " in c.verb else "is"
        rest = " ".join(c.verb.split(" ")[1:])
        return self._forms(c.lemma, c.lemma, rest)[1]

    @staticmethod
    def _forms(lemma: str, surface: str, rest: str) -> list[str]:
        third = lemma + ("es" if lemma.endswith(("s", "sh", "ch", "x", "z")) else "s")
        if lemma.endswith("y") and len(lemma) > 2 and lemma[-2] not in "aeiou":
            third = lemma[:-1] + "ies"
        out = []
        for head in (lemma, third, surface):
            out.append(f"{head} {rest}".strip())
        return out

    def _type(self, c: _Clause, arity: int, pattern: str, cache: dict[str, _Typed],
              vec: np.ndarray | None, *, table_first: bool = False) -> _Typed:
        """The typing of one clause (cached per pattern). ``table_first``: the general tables
        (:data:`_GENERAL_RELATIONS`, :data:`_GENERAL_STATES`) are consulted before the embedder
        — for every clause that is no end of a causal edge, so that its relation or state atom
        is written in the vocabulary's domain-neutral predicates (an edge end left as a proposed
        term is retyped by :meth:`_type_edge_ends`, for its edge and its relation atom alike)."""
        key = f"{arity}|{c.verb}|{c.negated}|{pattern}|{table_first}"
        if key in cache:
            return cache[key]
        t = self._type_uncached(c, arity, vec, table_first)
        cache[key] = t
        return t

    def _type_uncached(self, c: _Clause, arity: int, vec: np.ndarray | None,
                       table_first: bool = False) -> _Typed:
        lemma = c.lemma
        surface = c.verb_text.split(" ")[0]
        if c.unable and self.vocab.get("failure") is not None and not (
                lemma in _POSSESSION_VERBS or lemma in _CHECK_VERBS):
            # "no engine could refill its tank", "the desk could not print tickets": the subject
            # cannot do its job, whatever the job is (the verb stays in the triples)
            return _Typed("failure", 1, False, 1.0, self.vocab.get("failure").definition)
        if arity == 1:
            word = c.state or lemma
            name = _STATE_PHRASES.get(c.verb)      # "burnt out", "went flat", "came loose"
            name = name if name is not None and self.vocab.get(name) is not None else None
            name = name or self._state_name(word)
            if name is None and c.state is not None:
                name = self._state_name(lemma) if lemma not in _LINKING else None
            if name is not None and not c.negated:
                p = self.vocab.get(name)
                return _Typed(name, 1, False, 1.0, p.definition if p else "")
            if c.negated:
                # "nobody checked X" → unverified(X); "nobody updated X" → stale(X)
                name = self._state_of_words([(lemma, surface)], surface, negated=True)
                if name in ("missing", "degraded") and " " in c.verb:
                    name = None         # "no farmer held back": a phrasal verb is no upkeep
                if name is not None:
                    p = self.vocab.get(name)
                    return _Typed(name, 1, False, 1.0, p.definition if p else "")
            forms = [word]
        else:
            rest = " ".join(c.verb.split(" ")[1:])
            forms = self._forms(lemma, surface, rest)
            if c.negated and lemma in _CHECK_VERBS:
                p = self.vocab.get("skips_check")
                if p is not None:
                    return _Typed(p.name, 2, False, 1.0, p.definition)
            if c.negated and (c.verb in _RESPONSE_VERBS or lemma in _RESPONSE_VERBS):
                # "the spacecraft did not react to the debris", "nobody answered the alarm"
                p = self.vocab.get("ignores")
                if p is not None:
                    return _Typed(p.name, 2, False, 1.0, p.definition)
            if c.negated and lemma in _SEE_VERBS and not rest:
                # "the keeper never saw the new survey", "the guard did not hear the alarm"
                p = self.vocab.get("misses")
                if p is not None:
                    return _Typed(p.name, 2, False, 1.0, p.definition)
            if ((lemma in _POSSESSION_VERBS or lemma in _PROVISION_VERBS) and (
                    c.negated != c.object_negated) or (
                    lemma in _HOLDING_VERBS and c.object_negated and not c.negated)) \
                    and not rest:
                # "the desk had no paper", "the vines got no water", "did not receive the
                # dose", "kept no notes", "never ordered more butter": the first role goes
                # without the second
                p = self.vocab.get("lacks")
                if p is not None:
                    return _Typed(p.name, 2, False, 1.0, p.definition)
            if c.negated and (c.verb in _APPEAR_VERBS or lemma in _APPEAR_VERBS):
                # "the shortfall never showed up in the weekly report": nobody saw it
                p = self.vocab.get("unobserved")
                if p is not None:
                    return _Typed(p.name, 1, False, 1.0, p.definition)
            state = self._prepositional_state(c)
            if state is not None:
                # "the trawler grounded on the sandbar", "the cable snapped between two
                # floors": a state verb whose object is only where it happened
                p = self.vocab.get(state)
                return _Typed(p.name, 1, False, 1.0, p.definition)
        if not c.negated:
            p = self._exact(forms, arity)
            if p is not None:
                return _Typed(p.name, arity, False, 1.0, p.definition)
            if arity == 2:
                p = self._cue(c)
                if p is not None:
                    return _Typed(p.name, arity, False, 1.0, p.definition)
            # a verb of the general tables is read by its table, not by the embedder's cosine
            # (close to noise on a single verb): at once for a clause that ends no causal
            # link; an edge end left proposed here is retyped by :meth:`_type_edge_ends`
            name = self._general_name(c, arity)
            p = self.vocab.get(name) if name is not None else None
            if p is not None and p.accepts_arity(arity):
                if table_first:
                    return _Typed(p.name, arity, False, 1.0, p.definition)
                best = None
            else:
                best = self._score(c, arity, vec)
            # ``lacks`` is a denial, read by the rule above only: scored against its definition
            # ("does not have or get") a plain "has" or "gets" would be read as its opposite
            if best is not None and best.name != "lacks":
                return best
        # proposed term
        base = c.state if arity == 1 and c.state else c.verb
        name = _snake(("not " if c.negated else "") + base)
        # a proposed name carries its arity, so one verb read with one argument in one text and
        # two in another gives two terms, never a clash within a batch ("receive" /
        # "receive_state")
        if arity == 1:
            name = name[:54] + "_state"
        existing = self.vocab.get(name)
        if existing is not None and not existing.accepts_arity(arity):
            name = f"{name}_{'state' if arity == 1 else 'rel'}"
        neg = "does not " if c.negated else ""
        if arity == 1:
            if c.state and c.state != lemma:
                definition = f"the role is {'not ' if c.negated else ''}{base}"
            else:
                definition = (f"the role does not {base}" if c.negated
                              else f"the role {self._forms(lemma, lemma, '')[1]}")
        else:
            vp = c.verb if c.negated else self._vp3(c)
            definition = f"the first role {neg}{vp} the second"
        return _Typed(name, arity, True, 0.0, definition)

    def _prepositional_state(self, c: _Clause) -> str | None:
        """The vocabulary state of a clause whose verb and bare object are an idiom of state ("gave
        way" → failure), or whose verb is a state verb and whose object is only a preposition's ("grounded *on* the sandbar" → harmed, "rotted *in* the lorries" →
        degraded, "broke down *on* the motorway" → failure): the subject's state, the place
        left out. ``None`` when the verb with its preposition is itself a relation of the
        tables or the cue lexicon ("run on", "drift into"), or the verb is no state verb."""
        if c.negated:
            return None
        if len(c.objects) == 1 and c.objects[0].phrase == c.objects[0].head and not c.complement:
            # "the bridge gave way", "the barn caught fire": a verb with an idiomatic object
            name = _STATE_PHRASES.get(f"{c.verb} {c.objects[0].head}")
            if name is not None and self.vocab.get(name) is not None:
                return name
        words = c.verb.split(" ")
        if len(words) < 2 or words[-1] not in _PLACE_PREPS:
            return None
        if c.verb in _GENERAL_INDEX or c.verb in _CUE_INDEX:
            return None
        bare = " ".join(words[:-1])
        name = _STATE_PHRASES.get(bare) or (_GENERAL_STATES.get(bare) if bare not in
                                           _GENERAL_INDEX else None)
        if name is None and len(words) == 2 and c.lemma not in _GENERAL_INDEX:
            name = _GENERAL_STATES.get(c.lemma)
        return name if name is not None and self.vocab.get(name) is not None else None

    def _retype_by_context(self, c: _Clause, t: _Typed, doc: Any) -> _Typed:
        """What the words around a clause's verb say beyond the verb: an omitted check, look or
        update ("skipped *checking* the signatures", "forgot to update the map") is its denial
        (``skips_check``, ``misses``, ``stale``); a table verb with a preposition of its own
        reading ("paid the drivers *by* the kilometre driven") takes that reading; a unary clause (or a proposed binary one) with
        a lateness adverb ("went out three days *late*", "ran an hour *behind*") is
        ``delayed``; a unary clause doing *more* ("every student downloaded *more*") is
        ``increased``. Else ``t``."""
        tok = doc[c.tok]
        if not c.negated and tok.dep_ in ("xcomp", "ccomp", "pcomp", "dobj") and \
                tok.head.lemma_.lower() in _OMIT_VERBS:
            name = None
            if t.arity == 2 and c.lemma in _CHECK_VERBS:
                name = "skips_check"
            elif t.arity == 2 and c.lemma in _SEE_VERBS and " " not in c.verb:
                name = "misses"
            elif t.arity == 1 and c.lemma in _UPDATE_VERBS:
                name = "stale"
            p = self.vocab.get(name) if name is not None else None
            if p is not None:
                return _Typed(p.name, t.arity, False, 1.0, p.definition)
        plain = _GENERAL_INDEX.get(c.verb, _GENERAL_INDEX.get(c.lemma))
        if not c.negated and t.arity == 2 and plain is not None and (
                t.proposed or plain == t.name):
            # "paid its drivers *by* the kilometre driven": a preposition the parser hung on
            # the verb without its object still names the reading ("pay by" → incentivises)
            for ch in tok.children:
                name = _GENERAL_INDEX.get(f"{c.lemma} {ch.lower_}") if ch.dep_ == "prep" \
                    else None
                p = self.vocab.get(name) if name is not None else None
                if p is not None and p.name not in (t.name, plain) and p.accepts_arity(2):
                    return _Typed(p.name, 2, False, 1.0, p.definition)
        if c.negated and t.arity == 1 and c.lemma in _TELL_VERBS and (
                c.objects_moved or any(ch.dep_ == "nsubjpass" for ch in tok.children)):
            # "nobody told the owner", "the crew was never warned": the receiver of a telling
            # that never came does not know
            p = self.vocab.get("uninformed")
            if p is not None:
                return _Typed(p.name, 1, False, 1.0, p.definition)
        if not c.negated and t.arity == 2 and t.name in _HOLD_READINGS and any(
                ch.dep_ == "dobj" and ch.lower_ in _WHOLE_SHARES
                and any(g.dep_ == "prep" and g.lower_ == "of" for g in ch.children)
                for ch in tok.children):
            # "held almost all of the memory", "used nearly all of the water": holding or using
            # (nearly) the whole of a thing uses it up
            p = self.vocab.get("consumes")
            if p is not None:
                return _Typed(p.name, 2, False, 1.0, p.definition)
        if c.negated or not (t.arity == 1 or t.proposed):
            return t
        words = {ch.lower_ for ch in tok.children if ch.dep_ in ("advmod", "npadvmod", "prt",
                                                                  "acomp", "dobj", "advcl")}
        words.update(c.verb.split(" ")[1:])          # "ran behind": the particle
        name = None
        if words & _LATE_WORDS:
            name = "delayed"
        elif t.arity == 1 and "more" in words:
            name = "increased"
        p = self.vocab.get(name) if name is not None else None
        if p is None:
            return t
        return _Typed(p.name, 1, False, 1.0, p.definition)

    def _cue(self, c: _Clause) -> Predicate | None:
        """The cue-lexicon layer: the clause's verb (lemma + particle/preposition) or verb +
        complement ("treat as truth") against :data:`_RELATION_CUES`."""
        rest = " ".join(c.verb.split(" ")[1:])
        keys = [c.verb, f"{c.lemma} {c.complement}".strip(),
                " ".join(f"{c.lemma} {rest} {c.complement}".split())]
        if c.complement:
            keys.append(f"{c.lemma} {c.complement.split(' ')[0]}")
        if c.sources or c.into:
            # "computed the wages from the sheet", "exported the table into a sheet"
            keys.append(f"{c.lemma} from")
        word = c.complement.split(" ")
        if len(word) == 2 and word[0] == "as" and word[1] in _ABSENCE_WORDS and \
                c.lemma in _REPORT_VERBS:
            keys.insert(0, "report as missing")     # "flags the platoon as absent"
        for k in keys:
            name = _CUE_INDEX.get(k)
            if name is not None:
                p = self.vocab.get(name)
                if p is not None and p.accepts_arity(2):
                    return p
        return None

    def _type_edge_ends(self, links: list[_Link], cl: dict[int, _Clause],
                        typed: dict[int, _Typed]) -> dict[int, _Typed]:
        """Domain-neutral typings for the clause ends of causal links that were left as proposed
        (surface-verb) terms (:meth:`_retype_general`). The encoder writes this reading for the
        edge's atom and for the clause's own relation atom; the surface verb stays as
        provenance in the link record (``surface``) and the triples."""
        ends = {nd.clause for lk in links for nd in (lk.cause, lk.effect)
                if nd.clause is not None}
        return self._retype_general(sorted(ends), cl, typed)

    def _retype_general(self, ids: list[int], cl: dict[int, _Clause],
                        typed: dict[int, _Typed]) -> dict[int, _Typed]:
        """The general-verb layer over the clauses ``ids`` whose typing is a proposed term: a
        binary clause by its verb (:data:`_GENERAL_RELATIONS`), a unary one by its state word,
        verb or participle (:data:`_GENERAL_STATES`). A negated clause keeps its proposed term
        (the negation is part of the reading)."""
        out: dict[int, _Typed] = {}
        for k in ids:
            t, c = typed.get(k), cl[k]
            if t is None or not t.proposed or c.negated:
                continue
            name = self._general_name(c, t.arity)
            p = self.vocab.get(name) if name is not None else None
            if p is not None and p.accepts_arity(t.arity):
                out[k] = _Typed(p.name, t.arity, False, 1.0, p.definition)
        return out

    def _general_name(self, c: _Clause, arity: int) -> str | None:
        """The general tables' predicate for a clause: a binary verb with its particle or
        preposition, then its lemma alone (:data:`_GENERAL_RELATIONS`); a unary state word,
        verb, lemma or surface verb (:data:`_GENERAL_STATES`)."""
        if arity == 2:
            # "pays its farmers *by* the litre": the complement's preposition can decide
            word = c.complement.split(" ")[0] if c.complement else ""
            keys = (f"{c.verb} {word}", f"{c.lemma} {word}") if word else ()
            name = next((_GENERAL_INDEX[k] for k in (*keys, c.verb) if k in _GENERAL_INDEX),
                        None)
            if name is None and (c.lemma in _PLAIN_INDEX or all(
                    w in _PATH_PREPS for w in c.verb.split(" ")[1:])):
                name = _GENERAL_INDEX.get(c.lemma)
            return name
        return next((_GENERAL_STATES[w] for w in (c.state, c.verb, c.lemma,
                                                  c.verb_text.split(" ")[0].lower())
                     if w and w in _GENERAL_STATES), None)

    def _score(self, c: _Clause, arity: int, vec: np.ndarray | None) -> _Typed | None:
        preds, defs = self._definitions(arity)
        if not preds:
            return None
        p = self.params
        if defs is not None and vec is not None:
            sims = np.maximum(defs[0] @ vec, defs[1] @ vec)
            order = np.argsort(-sims, kind="stable")
            best = float(sims[order[0]])
            second = float(sims[order[1]]) if len(order) > 1 else -1.0
            margin = best - second
            if best >= p.embed_threshold and margin >= p.embed_margin:
                q = preds[int(order[0])]
                return _Typed(q.name, arity, False, min(1.0, margin / (2 * p.embed_margin)),
                              q.definition)
            return None
        words = {w for w in re.findall(r"[a-z]+", (c.state or c.verb) if arity == 1 else c.verb)
                 if w not in _STOP}
        if not words:
            return None
        stems = {w[:5] for w in words}
        scored = []
        for q in preds:
            bag = set(re.findall(r"[a-z]+", " ".join([q.name, q.definition, *q.synonyms]
                                                     ).replace("_", " ")))
            qs = {w[:5] for w in bag if w not in _STOP}
            scored.append((len(stems & qs) / len(stems), q.name, q))
        scored.sort(key=lambda x: (-x[0], x[1]))
        top = scored[0]
        second = scored[1][0] if len(scored) > 1 else 0.0
        if top[0] >= p.lexical_threshold and top[0] > second:
            return _Typed(top[2].name, arity, False, min(1.0, top[0] - second), top[2].definition)
        return None
