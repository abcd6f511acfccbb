"""Clauses and their arguments: verbs, subjects, objects, states, pronouns (stage 2)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from analogist.encode.base import Triple
from analogist.encode.fronted import _repair_parse
from analogist.encode.lexicon import (
    _ABSENCE_WORDS,
    _AGREES_WITH,
    _ARTICLES,
    _BELIEF_VERBS,
    _CAUSAL_PREPS,
    _CAUSAL_VERBS,
    _CONTENT_NOUNS,
    _COPY_VERBS,
    _DIRECTIONAL,
    _EVENT_PRONOUNS,
    _GENERIC_HEADS,
    _INDEFINITE_PRONOUNS,
    _LIGHT_NOUNS,
    _LIGHT_VERBS,
    _MIND_VERBS,
    _MOD_DEPS,
    _NEG_ADVERBS,
    _NEG_PRONOUNS,
    _NUMBER_WORDS,
    _OBJECT_CONTROL,
    _PERSON_FORMS,
    _PERSON_NOUNS,
    _PERSON_SUFFIXES,
    _PERSONAL_PRONOUNS,
    _PRONOUNS_PLURAL,
    _PRONOUNS_SINGULAR,
    _QUANTIFIERS,
    _RELATIVE,
    _REPORT_VERBS,
    _SKIP_PREPS,
    _SPEAKER_FORMS,
    _TIME_WORDS,
    _UPDATE_VERBS,
    _singular,
    _verb_lemma,
)
from analogist.encode.params import EncoderParams
from analogist.index.embed import Embedder
from analogist.vocabulary import Vocabulary


# -- internal records ----------------------------------------------------------------------------
@dataclass
class _Mention:
    phrase: str
    head: str
    plural: bool
    tok: int                       # doc index of the head token (the pronoun for resolved ones)
    span: tuple[int, int]          # char span of the surface tokens (for L1)
    resolved: bool = False
    core: str = ""                 # head with its noun modifiers only (entity identity)
    sent_start: int = -1           # first token of the mention's sentence (pronoun resolution)
    main: bool = False             # subject of a main clause (pronoun resolution)
    pron: str = ""                 # a participant named by a pronoun: its form ("i", "he", …)


@dataclass
class _Clause:
    idx: int
    sent: int
    tok: int
    lemma: str
    verb: str                      # lemma + particle/preposition
    verb_text: str                 # surface form + particle/preposition (pattern sentences)
    subjects: list[_Mention] = field(default_factory=list)
    objects: list[_Mention] = field(default_factory=list)
    state: str | None = None       # unary state word (adjective, participle or verb lemma)
    negated: bool = False
    event_subject: int | None = None   # token of a clause the subject pronoun stands for
    causal: str | None = None      # edge type when a causal verb
    complement: str = ""           # a later "prep + word" ("treats X *as truth*"), for typing
    sources: list[_Mention] = field(default_factory=list)   # "copies X *from Y*" beside a dobj
    into: list[_Mention] = field(default_factory=list)      # "exports X *into Y*": Y is the copy
    objects_moved: bool = False    # "nobody checked X": X became the subject of a state
    object_negated: bool = False   # "had *no* paper", "got *nothing*": the object is denied
    unable: bool = False           # "could not refill", "no engine could refill": ability denied


def _imperative(v: Any) -> bool:
    """Whether ``v`` heads a command: a sentence's root in the base form with no subject, no
    "to" and no modal ("*Keep* trying", "Don't *give* up"; not a question)."""
    if v.dep_ != "ROOT" or v.tag_ != "VB" or v.pos_ != "VERB":
        return False
    if any(c.dep_ in ("nsubj", "nsubjpass", "csubj", "expl") for c in v.children):
        return False
    if any(c.dep_ == "aux" and c.lower_ not in ("do", "don't", "dont") for c in v.children):
        return False
    return not v.sent.text.rstrip().endswith("?")


def _participant(t: Any) -> bool:
    """Whether a noun-like token can name a participant: not a time span ("took two *years*",
    "in *April*"; but a subject with a noun modifier is a measure: "the waiting *times*"), a bare number or quantifier ("fed *one*", "bred *more*"), or a bare
    comparative adjective ("*costlier*"), or punctuation ("X*-*ray")."""
    low = t.lower_
    if low in _TIME_WORDS and t.dep_ in ("nsubj", "nsubjpass") and any(
            c.dep_ == "compound" for c in t.children):
        return True          # a measure named by its kind: "the waiting *times* looked short"
    if low in _TIME_WORDS or not re.search(r"[a-z0-9]", low):
        return False
    if t.pos_ == "NUM" and (low in _NUMBER_WORDS or low.isdigit()):
        return False
    if t.pos_ == "ADJ" and t.tag_ == "JJR" and t.dep_ in ("nsubj", "nsubjpass", "dobj", "pobj") \
            and any(c.dep_ in ("det", "poss") for c in t.children) and low not in _QUANTIFIERS:
        # an agent noun the tagger took for a comparative ("the dispatcher", "her manager"):
        # an argument with its article is a participant
        return True
    return not (t.pos_ == "ADJ" and (t.tag_ in ("JJR", "JJS") or low in _QUANTIFIERS))


_PARTITIVES = {"all", "most", "much", "half", "some", "part", "rest", "bulk", "majority",
               "share", "lot", "many", "both", "each", "any", "portion", "fraction"}


def _partitive_of(t: Any) -> Any:
    """The whole a partitive names ("held almost *all of it*", "took *most of the nectar*"):
    the ``of`` object, else the token itself."""
    if t.lower_ not in _PARTITIVES:
        return t
    for c in t.children:
        if c.dep_ == "prep" and c.lower_ == "of":
            po = next((g for g in c.children if g.dep_ == "pobj"), None)
            if po is not None:
                return po
    return t


@dataclass
class _Node:
    clause: int | None = None      # clause idx
    mention: _Mention | None = None
    state: str | None = None       # attribute for an entity node
    event: bool = False            # read from a state/event phrase ("the failure of X")
    words: tuple[int, ...] = ()    # further tokens naming the end's direction ("make X shorter")


@dataclass
class _Link:
    cause: _Node
    edge: str
    effect: _Node
    sign: int
    status: str
    connective: str
    sent: int


@dataclass
class _Typed:
    name: str
    arity: int
    proposed: bool
    score: float                   # margin-based quality in [0, 1]
    definition: str



class _ClauseReader:
    """Mixin of :class:`~analogist.encode.deterministic.DeterministicEncoder`: clauses and their arguments: verbs, subjects, objects, states, pronouns (stage 2)."""

    params: EncoderParams
    vocab: Vocabulary
    embedder: Embedder | None
    nlp: Any

    def _parse(self, norm: str) -> Any:
        """The parse of ``norm``, with fronted subordinate clauses re-read and mis-tagged
        tokens repaired (:func:`~analogist.encode.fronted._repair_parse`)."""
        return _repair_parse(self.nlp, self.nlp(norm))

    def _first_prep_object(self, tokens: Any, preps: tuple[str, ...] | None = None) -> list[Any]:
        """The object of the first preposition among ``tokens`` (only ``preps`` if given)."""
        for ch in tokens:
            if ch.dep_ == "prep" and (preps is None or ch.lower_ in preps):
                po = self._prep_object(ch)
                if po is not None:
                    return [po[1]]
        return []

    # -- mentions ------------------------------------------------------------------------------
    def _mention(self, tok: Any) -> _Mention:
        if (tok.lemma_.lower() in _GENERIC_HEADS or (tok.tag_ == "VBG" or tok.lower_.endswith(
                "ing")) and tok.pos_ == "NOUN"):
            of = [c for c in tok.children if c.dep_ == "prep" and c.lower_ == "of"]
            pobj = [g for g in of[0].children if g.dep_ == "pobj"] if of else []
            if pobj and pobj[0].pos_ in ("NOUN", "PROPN"):
                tok = pobj[0]
        mods: list[Any] = []

        def collect(t: Any) -> None:
            for c in t.lefts:
                if c.dep_ in _MOD_DEPS and c.pos_ not in ("PUNCT", "DET", "PRON"):
                    collect(c)
                    mods.append(c)

        collect(tok)
        mods = [t for t in mods if t.lower_ not in _QUANTIFIERS]
        mods = mods[-(self.params.max_phrase_tokens - 1):] if self.params.max_phrase_tokens > 1 \
            else []
        toks = sorted([*mods, tok], key=lambda t: t.i)
        phrase = " ".join(t.text.lower() for t in toks).replace(" - ", "-")
        # an entity is named by its head and noun modifiers ("print job" vs "backup job");
        # adjectives and participles ("the printed / outdated timetable") describe one entity
        core = " ".join(t.text.lower() for t in toks
                        if t is tok or (t.dep_ in ("compound", "nmod")
                                        and t.pos_ in ("NOUN", "PROPN")))
        head = (tok.lemma_ or tok.text).lower()
        if tok.pos_ in ("NOUN", "PROPN") and tok.text.isalpha():
            head = _singular(tok.text.lower())   # the tagger's lemma varies ("species")
        if not re.search(r"[a-z0-9]", head):
            head = tok.text.lower()
        return _Mention(phrase=phrase, head=head, plural=tok.tag_ in ("NNS", "NNPS"), tok=tok.i,
                        span=(toks[0].idx, tok.idx + len(tok.text)), core=core or phrase)

    @staticmethod
    def _conj(tok: Any) -> list[Any]:
        out = [tok]
        for c in tok.children:
            if c.dep_ == "conj" and c.pos_ in ("NOUN", "PROPN", "PRON", "NUM", "X", "ADJ"):
                out.extend(_ClauseReader._conj(c))
        return out

    def _own_subjects(self, tok: Any) -> set[str]:
        """The heads of the subjects of the clause an object pronoun ``tok`` stands in (its
        verb's, or for a preposition's object the verb the preposition hangs on)."""
        if tok.dep_ in ("dobj", "dative", "iobj"):
            v = tok.head
        elif tok.dep_ == "pobj" and tok.head.dep_ == "prep":
            v = tok.head.head
        else:
            return set()
        if v.pos_ not in ("VERB", "AUX"):
            return set()
        out: set[str] = set()
        subj = [ch for ch in v.children if ch.dep_ in ("nsubj", "nsubjpass")]
        if not subj and v.dep_ == "xcomp":
            # "led other makers to copy *it*": the controller (the head's object, else its
            # subject) is the infinitive's subject
            subj = [ch for ch in v.head.children if ch.dep_ == "dobj" and ch.i < v.i] or [
                ch for ch in v.head.children if ch.dep_ in ("nsubj", "nsubjpass")]
        for ch in subj:
            if ch.lower_ in _RELATIVE:
                continue
            if ch.pos_ == "PRON":
                m = self._pronoun_referents.get((ch.sent.start, ch.lower_))
                if m is not None:
                    out.add(m.head)
            elif ch.pos_ in ("NOUN", "PROPN"):
                out.add(_singular(ch.lower_) if ch.text.isalpha() else ch.lower_)
        return out

    @staticmethod
    def _animate_heads(doc: Any) -> set[str]:
        """The heads of the text's nouns that name people: a person's name, a common noun for
        people ("the guest", "the florist", "the fishermen"), a noun a "who" clause hangs on, or
        the subject of a verb of the mind ("the keeper *knew*", "parents *demanded*")."""
        out: set[str] = set()
        for t in doc:
            if t.pos_ not in ("NOUN", "PROPN") or not t.text.isalpha():
                continue
            head = _singular(t.text.lower())
            if (t.ent_type_ == "PERSON" or head in _PERSON_NOUNS
                    or (len(head) >= 6 and head.endswith(_PERSON_SUFFIXES)
                        and not head.endswith("list"))
                    or any(c.dep_ == "relcl" and any(g.lower_ in ("who", "whom")
                                                     for g in c.children) for c in t.children)
                    or (t.dep_ in ("nsubj", "nsubjpass") and t.head.pos_ == "VERB"
                        and t.head.lemma_.lower() in _MIND_VERBS)):
                out.add(head)
        return out

    def _by_animacy(self, tok: Any, cands: list[_Mention]) -> list[_Mention]:
        """``cands`` with those that can be the pronoun ``tok`` first: a person for "he"/"she",
        a thing for "it" (order kept within each group; nothing is dropped). A subject "it" whose
        sentence has a person for subject also looks at the things named before it in that
        sentence ("The caretaker switched the sensor off because *it* kept halting the lift":
        the sensor), its subjects before its objects, before earlier sentences."""
        low = tok.lower_
        own: set[str] = set()
        if tok.dep_ in ("nsubj", "nsubjpass"):
            # a subject pronoun is none of the nouns its own clause goes on to name ("that is how
            # *he* came to know the lawyer": not the lawyer)
            own = {_singular(c.lower_) for c in tok.head.subtree
                   if c.pos_ in ("NOUN", "PROPN") and c.i > tok.i and c.text.isalpha()}
            cands = [m for m in cands if m.head not in own] + [m for m in cands
                                                                  if m.head in own]
            # ... and it is whoever acted on its object before ("The archivists optimised the
            # count. Because the readers could not find the maps, *they* maximised the count":
            # the archivists, who acted on the count)
            objs = {_singular(c.lower_) for c in tok.head.children
                    if c.dep_ == "dobj" and c.pos_ in ("NOUN", "PROPN") and c.text.isalpha()}
            actors = [h for h, acted in reversed(self._acts) if acted & objs]
            if actors:
                first = [m for m in cands if m.head == actors[0]]
                cands = first + [m for m in cands if m.head != actors[0]]
        if low in _PERSONAL_PRONOUNS:
            # (a participant named by an agreeing pronoun — "he", "someone" — is a person)
            fit = [m for m in cands if (m.head in self._animate or m.pron)
                   and m.head not in own]
        elif low == "it":
            fit = [m for m in cands if m.head not in self._animate]
            if tok.dep_ in ("nsubj", "nsubjpass") and any(
                    m.sent_start == tok.sent.start and m.head in self._animate for m in cands):
                here = [m for m in fit if m.sent_start == tok.sent.start]
                objs = [o for o in reversed(self._recent_objects)
                        if tok.sent.start <= o.tok < tok.i and not o.plural
                        and o.head not in self._animate and o.head not in own
                        and all(o.head != m.head for m in here)]
                fit = here + objs + [m for m in fit if m not in here]
        else:
            return cands
        return fit + [m for m in cands if m not in fit]

    @staticmethod
    def _hardly_any(noun: Any) -> bool:
        """"hardly any bread", "barely any records": a negative adverb on the noun or on its
        "any" denies the object as "no bread" does."""
        left = [t for x in noun.lefts for t in x.subtree]    # (however the parser hangs them)
        return any(t.lower_ == "any" for t in left) and any(
            t.lower_ in _NEG_ADVERBS for t in left)

    def _resolve(self, tok: Any, recent: list[_Mention]) -> _Mention | None:
        low = tok.text.lower()
        want_plural = low in _PRONOUNS_PLURAL
        # the same subject pronoun twice in one sentence is one referent ("Because *they*
        # believed the otters had escaped, *they* closed the zoo": not the otters)
        same = self._pronoun_referents.get((tok.sent.start, low)) \
            if tok.dep_ in ("nsubj", "nsubjpass") else None
        everyone = [m for m in reversed(recent) if m.plural == want_plural] \
            or list(reversed(recent))
        # a participant named by a pronoun is stood for only by an agreeing one ("it" is never
        # "I"); a noun phrase by any
        agrees = _AGREES_WITH.get(low, set())
        cands = [m for m in everyone if not m.pron or m.pron in agrees]
        own = self._own_subjects(tok) | (self._clause_subjects if tok.dep_ not in (
            "nsubj", "nsubjpass") else set())
        top_own = bool(everyone) and everyone[0].head in own
        if own:
            # an object pronoun is not its own clause's subject ("other makers copied *it*": not
            # the makers; "the more children believed *it*": not the children)
            cands = [m for m in cands if m.head not in own]
        if tok.dep_ in ("nsubj", "nsubjpass") and not any(
                m.sent_start == tok.sent.start for m in cands):
            # a subject pronoun with no antecedent in its own sentence prefers the subject of an
            # earlier main clause to one of a subordinate clause ("The keepers read the screen
            # as an escape, although the otters were asleep. Because *they* believed …")
            cands = [m for m in cands if m.main] + [m for m in cands if not m.main]
        if same is not None:
            cands = [same]
        if top_own and same is None:
            # the latest subject being the clause's own (an inherited one too: "the service
            # leaked memory and held all of *it*"), the latest agreeing non-subject mention
            # comes first — the memory — then another earlier subject
            cands = [o for o in reversed(self._recent_objects)
                     if o.plural == want_plural and o.head not in own
                     and (not o.pron or o.pron in agrees)] + cands
        if same is None:
            cands = self._by_animacy(tok, cands)
        if not cands:
            if low not in _PERSON_FORMS or tok.dep_ not in ("nsubj", "nsubjpass"):
                return None
            # a subject "he" the story names nowhere before is a participant of its own; the
            # same subject pronoun later in its sentence is the same one (an object pronoun
            # with no referent found is left out: more often a referent missed than a new one)
            m = self._pronoun_participant(tok, _PERSON_FORMS[low])
            self._pronoun_referents.setdefault((tok.sent.start, low), m)
            return m
        m = cands[0]
        if tok.dep_ in ("nsubj", "nsubjpass"):
            self._pronoun_referents.setdefault((tok.sent.start, low), m)
        return _Mention(phrase=m.phrase, head=m.head, plural=m.plural, tok=tok.i,
                        span=(tok.idx, tok.idx + len(tok.text)), resolved=True, core=m.core,
                        pron=m.pron)

    @staticmethod
    def _pronoun_participant(tok: Any, form: str) -> _Mention:
        """A participant named by a pronoun that stands for no earlier one: the speaker or the
        addressee ("I", "you"), someone or something, a "he" the story never names."""
        low = form.lower()
        return _Mention(phrase=form, head=low, plural=low in ("we", "they"), tok=tok.i,
                        span=(tok.idx, tok.idx + len(tok.text)), core=low, pron=low)

    def _mentions(self, tok: Any, recent: list[_Mention]) -> list[_Mention]:
        out: list[_Mention] = []
        for t in self._conj(tok):
            t = _partitive_of(t)
            if t.pos_ == "PRON":
                low = t.text.lower()
                if low in _PRONOUNS_PLURAL | _PRONOUNS_SINGULAR:
                    m = self._resolve(t, recent)
                    if m is not None:
                        out.append(m)
                elif low in _SPEAKER_FORMS:
                    out.append(self._pronoun_participant(t, _SPEAKER_FORMS[low]))
                elif low in _INDEFINITE_PRONOUNS:
                    out.append(self._pronoun_participant(t, low))
            elif _participant(t) and (t.pos_ in ("NOUN", "PROPN", "NUM", "X")
                                      or (t.pos_ == "ADJ" and t.dep_ != "acomp")):
                out.append(self._mention(t))
        return out

    # -- clauses -------------------------------------------------------------------------------
    @staticmethod
    def _nominal_gerund(tok: Any) -> bool:
        """A gerund with an article, tagged as a verb ("the longer *baking* hid the element"):
        a noun phrase, not a clause."""
        if tok.tag_ != "VBG":
            return False
        left = [t for t in tok.subtree if t.i < tok.i]
        # (the small model may tag the article itself as an adverb: "the/advmod longer baking")
        return bool(left) and left[0].lower_ in _ARTICLES and all(
            t.dep_ in ("det", "advmod", "amod", "compound", "neg") for t in left[1:])

    @classmethod
    def _gerund_subject(cls, v: Any) -> Any | None:
        """The nominal gerund a verb hangs on when the parser made the gerund the verb's head
        ("the longer baking(conj) hid(xcomp) the element"): the verb's subject."""
        h = v.head
        if v.dep_ in ("xcomp", "ccomp", "conj", "advcl") and h.i < v.i and cls._nominal_gerund(h):
            return h
        return None

    @classmethod
    def _is_head(cls, tok: Any) -> bool:
        if cls._nominal_gerund(tok):
            return False
        if tok.pos_ == "VERB" and tok.dep_ == "pcomp" and tok.head.lower_ == "as" and \
                tok.tag_ in ("VBG", "VBN") and not list(tok.children):
            return False        # "reports the pump as missing": a bare participle complement
        if _as_absent(tok):
            return False        # "marks the parcel as(mark) lost(advcl)": the same, misparsed
        if tok.pos_ == "VERB":
            return tok.dep_ not in ("amod", "compound", "aux", "auxpass", "nmod")
        if tok.pos_ == "ADJ" and tok.dep_ == "advcl":
            # a verbless small clause with a subordinator: "*with* the routine *disabled*, …"
            kids = {c.dep_ for c in tok.children}
            return "nsubj" in kids and "mark" in kids
        if tok.pos_ == "AUX":
            return tok.dep_ not in ("aux", "auxpass") and any(
                c.dep_ in ("nsubj", "nsubjpass", "attr", "acomp", "expl") for c in tok.children)
        return False

    @staticmethod
    def _negated(v: Any) -> bool:
        """Is the clause headed by ``v`` negated? A ``not``/``never`` on the verb or on its
        auxiliary, a negative frequency adverb ("hardly ever", "rarely", "seldom", "barely"), a
        negative subject ("nobody", "nothing", "no engine", "none of the tailors"), or a gerund
        under "without" ("without checking the map")."""
        for ch in v.children:
            if ch.dep_ == "neg":
                return True
            if ch.dep_ == "advmod" and (ch.lower_ in _NEG_ADVERBS or any(
                    g.dep_ == "advmod" and g.lower_ in _NEG_ADVERBS for g in ch.children)):
                return True
            if ch.dep_ == "advmod" and ch.lower_ in ("longer", "more") and any(
                    g.lower_ == "no" for g in ch.children):
                return True                    # "could no longer allocate"

            if ch.dep_ in ("nsubj", "nsubjpass", "dobj") and (
                    ch.lower_ in _NEG_PRONOUNS or any(
                        d.dep_ == "det" and d.lower_ == "no" for d in ch.children)) and (
                    ch.dep_ != "dobj" or ch.lower_ in _NEG_PRONOUNS):
                return True
            if ch.dep_ in ("nsubj", "nsubjpass") and ch.lower_ == "none":
                return True
        if v.dep_ in ("pcomp", "advcl") and v.head.lower_ == "without":
            return True
        return v.dep_ == "pcomp" and v.head.dep_ == "prep" and v.head.lower_ == "without"

    def _prep_object(self, prep: Any) -> tuple[str, Any] | None:
        """(preposition words, object token) of a prepositional phrase, following "off of"."""
        words = [prep.text.lower()]
        cur = prep
        for _ in range(3):
            pobj = [c for c in cur.children if c.dep_ == "pobj"]
            if pobj:
                return words[0], pobj[0]
            nxt = [c for c in cur.children if c.dep_ == "prep"
                   or (c.dep_ == "pcomp" and c.pos_ == "ADP")]
            if not nxt:
                return None
            cur = nxt[0]
            words.append(cur.text.lower())
        return None

    def _clauses(self, doc: Any) -> list[_Clause]:
        """The clauses of ``doc`` in text order; a command with no subject has the addressee
        ("you") as its subject."""
        self._pronoun_referents: dict[tuple[int, str], _Mention] = {}
        self._recent_objects: list[_Mention] = []
        self._clause_subjects: set[str] = set()
        self._animate = self._animate_heads(doc)
        self._acts: list[tuple[str, set[str]]] = []
        clauses: list[_Clause] = []
        by_tok: dict[int, _Clause] = {}
        recent: list[_Mention] = []
        sents = list(doc.sents)
        for si, sent in enumerate(sents):
            heads = [t for t in sent if self._is_head(t)]
            for v in heads:
                c = self._clause(v, si, len(clauses), recent, by_tok)
                if c is None:
                    continue
                clauses.append(c)
                by_tok[v.i] = c
                # a pronoun refers back to a participant the story is about, not to the noun a
                # relative clause hangs on ("… tickets for a sailing that had left, it …")
                if v.dep_ not in ("relcl", "acl"):
                    main = v.dep_ == "ROOT" or (v.dep_ == "conj" and v.head.dep_ == "ROOT")
                    for m in c.subjects:
                        if not m.resolved:
                            m.sent_start, m.main = sent.start, main
                            recent.append(m)
                # (within a clause its direct object is the latest: "bought grain from the
                # farm and stored *it*" — the grain)
                self._recent_objects.extend(m for m in (*c.sources, *c.into, *c.objects)
                                            if not m.resolved)
                self._acts.extend((m.head, {o.head for o in c.objects}) for m in c.subjects
                                  if c.objects)
                recent[:] = recent[-20:]
                self._recent_objects[:] = self._recent_objects[-20:]
        self._clause_subjects = set()
        return clauses

    def _inherit_subjects(self, v: Any, recent: list[_Mention],
                          by_tok: dict[int, _Clause]) -> tuple[list[_Mention], int | None]:
        """Subjects of a clause without an explicit one; (mentions, event clause token)."""
        head = v.head
        if head.i == v.i:
            return [], None
        hc = by_tok.get(head.i)
        if v.dep_ == "conj" and v.tag_ in ("VBD", "VBZ", "VBP") and head.tag_ == "VBG" \
                and head.dep_ in ("ccomp", "xcomp") and head.head.i in by_tok:
            # a tensed verb does not join a seen gerund ("the owner saw the dog walking and never
            # brought it back"): it is the seeing clause's conjunct, with its subject
            gc = by_tok[head.head.i]
            return list(gc.subjects), gc.event_subject
        if v.dep_ == "conj" and hc is not None:
            return list(hc.subjects), hc.event_subject
        is_inf = any(c.dep_ == "aux" and c.lower_ == "to" for c in v.children)
        if v.dep_ in ("xcomp", "ccomp", "advcl") and is_inf and hc is not None:
            if hc.lemma in _OBJECT_CONTROL:
                dobj = [c for c in head.children if c.dep_ in ("dobj", "nsubj")
                        and c.i > head.i]
                if dobj:
                    return self._mentions(dobj[0], recent), None
            if any(c.dep_ == "nsubjpass" for c in head.children):
                return list(hc.subjects) or list(hc.objects), None
            return list(hc.subjects), hc.event_subject
        if v.dep_ in ("acl", "relcl") and head.pos_ in ("NOUN", "PROPN"):
            return [self._mention(head)], None
        if v.dep_ == "pcomp" and head.dep_ == "prep" and head.lower_ == "from":
            gov = head.head
            dobj = [c for c in gov.children if c.dep_ == "dobj"]
            if dobj:
                return self._mentions(dobj[0], recent), None
        # gerunds and other dependents: nearest ancestor with an explicit subject
        for anc in v.ancestors:
            ac = by_tok.get(anc.i)
            if ac is not None and ac.subjects and any(
                    c.dep_ in ("nsubj", "nsubjpass", "csubj") for c in anc.children):
                return list(ac.subjects), None
        if hc is not None:
            return list(hc.subjects), hc.event_subject
        return [], None

    def _clause(self, v: Any, si: int, idx: int, recent: list[_Mention],
                by_tok: dict[int, _Clause]) -> _Clause | None:
        self._clause_subjects = set()
        lemma = _verb_lemma((v.lemma_ or v.text).lower(), v.text.lower())
        children = list(v.children)
        prt = [c for c in children if c.dep_ == "prt"]
        particle = " ".join(p.text.lower() for p in prt)
        verb = f"{lemma} {particle}".strip()
        verb_text = f"{v.text.lower()} {particle}".strip()
        c = _Clause(idx=idx, sent=si, tok=v.i, lemma=lemma, verb=verb, verb_text=verb_text)
        c.negated = self._negated(v)
        c.object_negated = any(
            ch.dep_ == "dobj" and (ch.lower_ in ("none", "nothing") or any(
                d.dep_ in ("det", "nummod") and d.lower_ == "no" for d in ch.children)
                or self._hardly_any(ch)) for ch in children)
        c.unable = c.negated and any(ch.dep_ == "aux" and ch.lower_ in ("can", "could", "ca")
                                     for ch in children)

        subj_toks = [ch for ch in children if ch.dep_ in ("nsubj", "csubj", "expl")]
        pass_toks = [ch for ch in children if ch.dep_ == "nsubjpass"]
        agent = [ch for ch in children if ch.dep_ == "agent"]
        subjects: list[_Mention] = []
        objects: list[_Mention] = []

        def from_tok(t: Any) -> list[_Mention]:
            if t.text.lower() in _RELATIVE and t.tag_ in ("WDT", "WP", "IN", "DT") \
                    and v.dep_ in ("relcl", "advcl", "acl", "ccomp"):
                if t.lower_ == "which" and lemma in _CAUSAL_VERBS and t.i > 0 \
                        and t.nbor(-1).text == "," and v.head.pos_ in ("NOUN", "PROPN", "PRON"):
                    # a sentential relative: "the school told the story, which made the pupil
                    # claim it" — what made her claim it is the telling, not the story
                    gov = next((a for a in v.head.ancestors if a.i in by_tok), None)
                    if gov is not None:
                        c.event_subject = gov.i
                        return []
                if v.head.pos_ in ("NOUN", "PROPN"):
                    cop = v.head.head
                    if v.head.dep_ == "attr" and cop.lemma_ == "be":
                        ns = [x for x in cop.children if x.dep_ == "nsubj"
                              and x.pos_ in ("NOUN", "PROPN")]
                        if ns:
                            return self._mentions(ns[0], recent)
                    return [self._mention(v.head)]
                if v.head.pos_ == "PRON":
                    return self._mentions(v.head, recent)
                c.event_subject = v.head.i
                return []
            if t.pos_ == "PRON" and t.text.lower() in _EVENT_PRONOUNS and v.head.i == v.i \
                    and t.i == t.sent.start and lemma in _CAUSAL_VERBS:
                c.event_subject = -1          # "This caused …": the previous clause
                return []
            return self._mentions(t, recent)

        if pass_toks:
            if agent:
                ao = self._prep_object(agent[0])
                if ao is not None:
                    subjects = self._mentions(ao[1], recent)
                for t in pass_toks:
                    objects.extend(from_tok(t))
            else:
                for t in pass_toks:
                    subjects.extend(from_tok(t))
        else:
            for t in subj_toks:
                if t.dep_ == "expl":
                    continue
                subjects.extend(from_tok(t))
        gsubj = self._gerund_subject(v) if not subj_toks and not pass_toks else None
        if gsubj is not None:
            subjects = [self._mention(gsubj)]
        if not subjects and c.event_subject is None and not subj_toks and not pass_toks:
            subjects, c.event_subject = self._inherit_subjects(v, recent, by_tok)
            if not subjects and c.event_subject is None and (
                    _imperative(v) or (v.dep_ == "conj" and _imperative(v.head))):
                # a command ("Don't give up.", "Pack the tent."): the addressee is its subject
                # (a participant with no surface phrase)
                m = self._pronoun_participant(v, "you")
                m.span = (v.idx, v.idx)
                subjects = [m]

        # objects (a pronoun among them is not the clause's own subject: :meth:`_resolve`)
        self._clause_subjects = {m.head for m in subjects}
        light = ""
        for ch in children:
            if ch.dep_ == "dobj" and lemma in _LIGHT_VERBS and ch.lemma_.lower() in _LIGHT_NOUNS:
                # "has priority over X", "keeps an eye on X": the noun is part of the verb
                pp = [g for g in (*ch.children, *children) if g.dep_ == "prep" and g.i > ch.i
                      and g.lower_ not in _SKIP_PREPS]
                po = self._prep_object(pp[0]) if pp else None
                if po is not None and po[1].pos_ in ("NOUN", "PROPN", "PRON"):
                    objects.extend(self._mentions(po[1], recent))
                    light = f"{ch.lemma_.lower()} {po[0]}"
                    continue
            if ch.dep_ in ("dobj", "attr", "oprd") and not (
                    ch.text.lower() in _RELATIVE and ch.tag_ in ("WDT", "WP")):
                objects.extend(self._mentions(ch, recent))
        if light:
            verb, verb_text = f"{verb} {light}", f"{verb_text} {light}"
        if not objects and lemma in _BELIEF_VERBS:
            # "the dam assumes the reef is fine": the belief is about the clause's subject
            for ch in children:
                if ch.dep_ == "ccomp":
                    ns = [g for g in ch.children if g.dep_ in ("nsubj", "nsubjpass")
                          and g.pos_ in ("NOUN", "PROPN")]
                    if ns:
                        objects.extend(self._mentions(ns[0], recent))
                        verb, verb_text = f"{verb} that", f"{verb_text} that"
                        break
        if lemma == "be" and objects:
            verb, verb_text = "be", v.text.lower()
        rel_obj = any(ch.dep_ == "dobj" and ch.text.lower() in _RELATIVE for ch in children)
        if v.dep_ in ("relcl", "acl") and v.head.pos_ in ("NOUN", "PROPN") and (
                rel_obj or (not objects and subjects and subj_toks
                            and not any(m.tok == v.head.i for m in subjects))) and (
                rel_obj or not [ch for ch in children if ch.dep_ == "prep"]):
            objects.append(self._mention(v.head))
        acomp = [ch for ch in children if ch.dep_ == "acomp"]
        if not acomp and not objects:
            # an adjective right after a verb without object, tagged as its adverb ("... and
            # ran/advmod *dry*"): the state the subject comes into, as "ran/acomp dry" is
            acomp = [ch for ch in children if ch.dep_ == "advmod" and ch.pos_ == "ADJ"
                     and ch.i == v.i + 1 and not list(ch.children)]
        if lemma == "be" and not acomp and not objects:
            # "were underpaid" with the participle mis-tagged as a preposition without object
            # (a real preposition is a stop word, or has an object)
            acomp = [ch for ch in children if ch.dep_ == "prep" and ch.i == v.i + 1
                     and not ch.is_stop and ch.is_alpha and not list(ch.children)]
        prep_label = ""
        if not objects and not acomp:
            # a preposition on the verb, or on a directional adverb ("drifted away from X",
            # "feeds back into X")
            cands = [(ch, "") for ch in children if ch.dep_ == "prep"]
            cands += [(g, a.lower_) for a in children if a.dep_ == "advmod" and a.i > v.i
                      and a.lower_ in _DIRECTIONAL for g in a.children if g.dep_ == "prep"]
            for ch, adv in sorted(cands, key=lambda x: x[0].i):
                if ch.i < v.i:
                    continue
                w = ch.text.lower()
                if w in _SKIP_PREPS:
                    continue
                po = self._prep_object(ch)
                if po is None or po[1].pos_ not in ("NOUN", "PROPN", "PRON", "NUM"):
                    continue
                objects.extend(self._mentions(po[1], recent))
                prep_label = f"{adv} {po[0]}".strip()
                break
        if prep_label:
            verb = f"{verb} {prep_label}"
            verb_text = f"{verb_text} {prep_label}"
        c.verb, c.verb_text = verb, verb_text
        # the complement may hang on the direct object ("treats the timetable *as the truth*")
        comp_preps = [*children, *(g for ch in children if ch.dep_ == "dobj"
                                   for g in ch.children if g.dep_ == "prep"
                                   and g.lower_ == "as")]
        for ch in sorted(comp_preps, key=lambda t: t.i):
            if ch.dep_ == "prep" and ch.i > v.i and ch.lower_ not in _CAUSAL_PREPS \
                    and ch.lower_ != prep_label.split(" ")[-1]:
                w = next((g for g in ch.subtree if g.i > ch.i and g.pos_ in ("NOUN", "ADJ",
                                                                             "VERB", "PROPN")),
                         None)
                if w is not None:
                    # a participle keeps its surface form ("as missing", "as lost"): its lemma
                    # ("miss", "lose") is another word
                    word = w.lower_ if w.tag_ in ("VBG", "VBN") else (w.lemma_ or w.text).lower()
                    c.complement = f"{ch.lower_} {word}"
                    break
        if not c.complement:
            absent = next((ch for ch in children if _as_absent(ch)), None)
            if absent is not None:
                c.complement = f"as {absent.lower_}"
        c.subjects, c.objects = subjects, objects
        if objects and not prep_label:
            for ch in children:
                if ch.dep_ == "prep" and ch.i > v.i and ch.lower_ == "from":
                    po = self._prep_object(ch)
                    if po is not None and po[1].pos_ in ("NOUN", "PROPN", "PRON"):
                        c.sources = self._mentions(po[1], recent)
                    break
            if c.sources and len(objects) == 1 and objects[0].head in _CONTENT_NOUNS and \
                    lemma not in _COPY_VERBS:
                # "takes its figures from the ledger": what it takes is the ledger's content,
                # so the ledger is the object ("take from")
                c.objects, c.sources = c.sources, []
                c.verb, c.verb_text = f"{c.verb} from", f"{c.verb_text} from"
                objects = c.objects
            for ch in children:
                # "exported the salary table into a spreadsheet": the spreadsheet is the copy
                if ch.dep_ == "prep" and ch.i > v.i and ch.lower_ in ("into", "onto", "to") \
                        and lemma in _COPY_VERBS and not c.sources:
                    po = self._prep_object(ch)
                    if po is not None and po[1].pos_ in ("NOUN", "PROPN", "PRON"):
                        c.into = self._mentions(po[1], recent)
                    break

        if lemma in _CAUSAL_VERBS:
            edge, need = _CAUSAL_VERBS[lemma]
            words = {ch.text.lower() for ch in children if ch.dep_ in ("prep", "prt")}
            # "leads to overload on X" mis-parsed as an infinitive: "to" is the noun's aux
            words |= {g.lower_ for ch in children if ch.dep_ == "xcomp" and ch.pos_ == "NOUN"
                      for g in ch.children if g.dep_ == "aux"}
            # "led the ranchers to breed more": the infinitive's "to" is the verb's
            words |= {g.lower_ for ch in children if ch.dep_ in ("xcomp", "ccomp")
                      and ch.pos_ in ("VERB", "AUX") and ch.i > v.i
                      for g in ch.children if g.dep_ == "aux" and g.lower_ == "to"}
            if lemma in ("open", "pave") and not any(ch.dep_ == "dobj" and ch.lemma_ == "way"
                                                      for ch in children):
                need = "\0"                       # only "opens / paves the way to"
            if need is None or need in words:
                c.causal = edge
        if not objects:
            if lemma in ("take", "need", "require") and any(
                    ch.dep_ in ("dobj", "npadvmod") and ch.lower_ in _TIME_WORDS
                    for ch in children):
                # "the hot water took half a minute to travel": the subject is slow to arrive
                c.state = "delayed"
                c.verb = f"{lemma} time"
            elif acomp:
                c.state = " ".join((a.lemma_ or a.text).lower() for a in acomp[:1])
                c.verb = f"{lemma} {c.state}"
            elif pass_toks and not agent:
                c.state = v.text.lower()
            elif c.causal is None and not any(ch.dep_ in ("ccomp", "xcomp") and ch.i > v.i
                                              for ch in children):
                # (a complement *before* the verb is the first clause of "A, so B" parsed
                # as B's ccomp, not what B says or wants)
                c.state = lemma if lemma != "be" else None
        if (not subjects and c.event_subject is None and c.causal is None and objects
                and any(ch.dep_ in ("nsubj", "nsubjpass") and ch.lower_ in _NEG_PRONOUNS
                        for ch in children)):
            # "nobody updated the map", "nothing broke the loop": a negated state of the object
            c.subjects, c.objects, c.objects_moved = objects, [], True
            c.state, c.negated = lemma, True
            return c
        if (c.negated and c.causal is None and objects and lemma in _UPDATE_VERBS
                and not c.unable and not c.objects_moved):
            # "the clerk never refreshed the sheet": the sheet is stale, as when nobody
            # refreshed it (the subject is no part of the state)
            c.subjects, c.objects, c.objects_moved = objects[:1], [], True
            c.state, c.sources, c.into, c.complement = lemma, [], [], ""
            return c
        if not subjects and c.event_subject is None:
            return c if c.causal else None
        return c

    # -- public: triples -------------------------------------------------------------------------
    def triples(self, text: str) -> list[Triple]:
        """The surface ``(subject, verb, object)`` relations of ``text`` (states have an empty
        object), in text order."""
        norm = self._check(text, None)
        return self._triples(self._clauses(self._parse(norm)))

    @staticmethod
    def _triples(clauses: list[_Clause]) -> list[Triple]:
        out: list[Triple] = []
        seen: set[tuple[str, str, str, int, bool]] = set()
        for c in clauses:
            rows: list[tuple[str, str, str]] = []
            if c.objects:
                rows = [(s.phrase, c.verb, o.phrase) for s in c.subjects for o in c.objects
                        if s.phrase != o.phrase]
            elif c.state is not None:
                rows = [(s.phrase, c.verb, "") for s in c.subjects]
            for s, vb, o in rows:
                key = (s, vb, o, c.sent, c.negated)
                if key not in seen:
                    seen.add(key)
                    out.append(Triple(s, vb, o, c.sent, c.negated))
        return out


def _as_absent(tok: Any) -> bool:
    """A bare absence word the parser made an "as"-marked clause of a reporting verb ("marks the
    parcel *as lost*"): the verb's complement, no clause of its own."""
    kids = list(tok.children)
    return (tok.dep_ == "advcl" and tok.lower_ in _ABSENCE_WORDS
            and tok.head.lemma_.lower() in _REPORT_VERBS and len(kids) == 1
            and kids[0].dep_ == "mark" and kids[0].lower_ == "as")
