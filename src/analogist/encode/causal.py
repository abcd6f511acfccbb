"""Causal links between clause states: connectives, causal verbs, direction, sign (stage 3).

Beyond the signal table of :mod:`~analogist.encode.deterministic`: the agent of a passive causal
verb is its cause ("the wrong quote was caused by the stale cache"), never the holder of the
effect; a sentential relative on a causal verb ("…, which made / led / produced …") is caused
by the clause it follows; "A, and that is why B" / "A. This is how B" read A causes B; "lead"
takes an infinitive ("led the ranchers to breed more"); and a sentence whose main clause no
stated link explains is read as caused by the end of the sentence before it (``inferred``,
connective "(the next sentence)"), unless the text links the two sentences itself, states
the reverse between clauses of the same verbs and subjects, or the link would close a circle
through a stated link (the later sentence restates a stated cause); likewise, of two clauses
of one subject joined by "and", the first is read as leading to the second. "amplify / magnify /
intensify" are positive causal verbs and "damp / dampen / suppress / attenuate / curb" negative
ones (both stay relations between two plain things); "push / drive X to V" and "force" cause;
a gerund with an article that the parser tagged as a verb ("the longer baking hid the weak
element") is a noun-phrase end, not a clause; and a comparative after the object of "make"
("make the queue at the counter shorter") sets the effect's direction however the parser
attached it."""

from __future__ import annotations

from typing import Any

from analogist.encode.clauses import _Clause, _Link, _Mention, _Node
from analogist.encode.lexicon import (
    _ADVERBIALS,
    _DAMPING_VERBS,
    _DECREASE_WORDS,
    _EVENT_NOUN,
    _HOLDER_PREPS,
    _MARKERS,
    _OBJECT_CONTROL,
    _PREP_CONNECTIVES,
    _RELATIONAL_CAUSAL,
    _WHY_PRONOUNS,
)
from analogist.encode.params import EncoderParams
from analogist.index.embed import Embedder
from analogist.vocabulary import Vocabulary

_SCALAR_VERBS = {
    "raise": "increased", "increase": "increased", "boost": "increased", "lift": "increased",
    "double": "increased", "treble": "increased", "triple": "increased",
    "lower": "decreased", "reduce": "decreased", "decrease": "decreased", "halve": "decreased",
    "cut": "decreased"}
"""Verbs of amount: "X raised / lowered Y" is X causing Y to rise / fall (the effect is Y's
``increased`` / ``decreased`` state), not a relation between two things."""
_SCALAR_IF_AMOUNT = {"raise", "lift", "cut", "double", "treble", "triple", "lower", "boost"}
"""Verbs of amount only with an amount as object ("raised *the price*", "cut *the fares*",
"lowered *the level of* the lake"), not "raised cattle", "cut cloth", "lowered the boat",
"boosts the signal" (a relation between two things)."""
_AMOUNTS = {"price", "cost", "temperature", "rate", "level", "pressure", "speed", "wage",
            "fee", "fare", "rent", "tax", "demand", "load", "risk", "output", "supply", "volume",
            "salary", "pay", "budget", "number", "count", "amount", "share", "yield", "heat",
            "value", "score", "limit", "spending", "income", "profit", "margin", "interest"}

_CHANGE_VERBS = {
    "empty", "fill", "drain", "flood", "dry", "expand", "shrink", "swell", "widen", "narrow",
    "raise", "lift", "boost", "double", "treble", "triple", "lower", "halve", "cut", "increase",
    "reduce", "decrease", "disable", "break", "open", "close", "shut", "stop", "halt", "block",
    "clog", "overload", "crash", "ruin", "spoil", "damage", "destroy", "kill", "weaken",
    "strengthen", "melt", "freeze", "heat", "cool", "warm", "speed", "slow", "exhaust",
    "deplete", "flatten", "sink", "wreck", "corrupt", "erase", "wipe", "bankrupt", "starve",
    "silence", "darken", "blind", "jam"}
"""Verbs of change: "X Vs Y" leaves Y in a new state (emptied, expanded, disabled, …); in a
non-restrictive relative ("…, which emptied the lock") the relative states an effect."""


class _LinkContext:
    """What the link readers share over one text: the parse, the clauses by head token, the
    links so far, the recent subject mentions and the consumed tokens."""

    def __init__(self, doc: Any, clauses: list[_Clause], consumed: set[int]) -> None:
        self.doc, self.clauses, self.consumed = doc, clauses, consumed
        self.by_tok = {c.tok: c for c in clauses}
        self.sents = list(doc.sents)
        self.links: list[_Link] = []
        self.recent: list[_Mention] = []

    def clause_of(self, tok: Any) -> _Clause | None:
        cur = tok
        for _ in range(6):
            if cur.i in self.by_tok:
                return self.by_tok[cur.i]
            if cur.head.i == cur.i:
                return None
            cur = cur.head
        return None

    def prev_clause(self, c: _Clause) -> _Clause | None:
        if c.sent == 0:
            return None
        prev = [x for x in self.clauses if x.sent == c.sent - 1 and x.causal is None]
        root = [x for x in prev if self.doc[x.tok].dep_ == "ROOT"]
        return (root or prev[-1:] or [None])[0]


def _clause_node(c: _Clause) -> _Node:
    return _Node(clause=c.idx)


class _CausalReader:
    """Mixin of :class:`~analogist.encode.deterministic.DeterministicEncoder`: causal links between clause states: connectives, causal verbs, direction, sign (stage 3)."""

    params: EncoderParams
    vocab: Vocabulary
    embedder: Embedder | None
    nlp: Any

    def _links(self, doc: Any, clauses: list[_Clause],
               consumed: set[int] | None = None) -> list[_Link]:
        """Causal links; tokens read as parts of state phrases are added to ``consumed``."""
        ctx = _LinkContext(doc, clauses, consumed if consumed is not None else set())
        for c in clauses:
            for m in c.subjects:
                if not m.resolved:
                    ctx.recent.append(m)
            self._relative_link(ctx, c)
            self._verb_link(ctx, c)
            self._marker_link(ctx, c)
            self._prep_links(ctx, c)
            self._adverbial_links(ctx, c)
        # a verb of amount no stated link reads as a cause or an effect ("the heat raised the
        # temperature") is itself the link: the subject causes the object to rise or fall
        linked = {nd.clause for lk in ctx.links for nd in (lk.cause, lk.effect)
                  if nd.clause is not None}
        for c in clauses:
            scalar = _scalar_of(doc, c) if c.idx not in linked else None
            if scalar is not None:
                self._scalar_link(ctx, c, scalar)
        links = ctx.links
        links += self._why_links(doc, clauses, ctx.by_tok, ctx.clause_of, ctx.prev_clause)
        for lk in links:
            lk.cause = _content_end(doc, ctx, lk.cause)
            lk.effect = _content_end(doc, ctx, lk.effect)
        for lk in self._conjunct_links(doc, clauses, links):
            lk.cause = _content_end(doc, ctx, lk.cause)
            lk.effect = _content_end(doc, ctx, lk.effect)
            links.append(lk)
        links += self._adjacent_links(doc, clauses, links)
        for lk in links:
            if lk.edge in ("causes", "enables"):
                lk.sign *= (_end_direction(doc, clauses, lk.cause)
                            * _end_direction(doc, clauses, lk.effect))
        links += self._correlative_links(ctx)
        return links

    def _correlative_links(self, ctx: _LinkContext) -> list[_Link]:
        """(f) A comparative correlative, "the more lines there were, the costlier any change
        became": the first half's amount causes the second's. Each half's end is the thing
        its comparative is about — the noun it modifies ("the more *lines*"), else the half's
        subject ("the costlier any *change* became") — in the ``increased`` state, or
        ``decreased`` for "less", "fewer" and the comparatives of decrease ("the slower …")."""
        doc = ctx.doc
        if self.vocab.get("increased") is None or self.vocab.get("decreased") is None:
            return []
        out: list[_Link] = []
        for si, sent in enumerate(ctx.sents):
            opens = [t.i for t in sent if t.lower_ == "the" and t.i + 1 < sent.end
                     and _comparative(doc[t.i + 1])
                     and (t.i == sent.start or doc[t.i - 1].lower_ in (",", "and", ";"))]
            for a, b in zip(opens, opens[1:]):
                if doc[b - 1].text != "," and not (doc[b - 1].lower_ == "and" and b - 2 > a
                                                   and doc[b - 2].text == ","):
                    continue
                stop = next((t.i for t in doc[b:sent.end] if t.text in (",", ";", ".", "!")),
                            sent.end)
                ends = [self._correlative_end(ctx, lo, hi)
                        for lo, hi in ((a, b - 1), (b, stop))]
                if ends[0] is not None and ends[1] is not None:
                    out.append(_Link(ends[0], "causes", ends[1], 1, "observed",
                                     "the more … the more", si))
        return out

    def _correlative_end(self, ctx: _LinkContext, lo: int, hi: int) -> _Node | None:
        """The end of one half ``lo..hi`` of a comparative correlative (see
        :meth:`_correlative_links`)."""
        doc = ctx.doc
        cmp_ = doc[lo + 1]
        noun = None
        if cmp_.head.pos_ in ("NOUN", "PROPN") and cmp_.head.i < hi and cmp_.dep_ in (
                "amod", "compound", "nummod"):
            noun = cmp_.head
        if noun is None:
            noun = next((t for t in doc[lo:hi] if t.dep_ in ("nsubj", "nsubjpass")
                         and t.pos_ in ("NOUN", "PROPN", "PRON") and t.i != cmp_.i), None)
        if noun is None:
            return None
        ms = self._mentions(noun, ctx.recent)
        if not ms:
            return None
        down = cmp_.lower_ in ("less", "fewer") or cmp_.lower_ in _DECREASE_WORDS
        return _Node(mention=ms[0], state="decreased" if down else "increased", event=True)

    def _scalar_link(self, ctx: _LinkContext, c: _Clause, scalar: str) -> None:
        """A verb of amount ("the heat raised the temperature of the ingot", :func:`_scalar_of`)
        as a link beside its relation: the subject's state causes the object's ``scalar``
        state (increased / decreased)."""
        if self.vocab.get(scalar) is None:
            return
        v = ctx.doc[c.tok]
        subj = [ch for ch in v.children if ch.dep_ == "nsubj"]
        obj = [ch for ch in v.children if ch.dep_ == "dobj" and ch.i > v.i]
        if not subj or not obj:
            return
        cause = self._entity_state(subj[0], ctx.recent, set())
        effect: _Node | None
        held = self._mentions(obj[0], ctx.recent) if obj[0].lemma_.lower() in _AMOUNTS else []
        if held:
            # "raised the temperature of the tank": the temperature rose, the same end as "the
            # temperature of the tank rose" (not the tank)
            effect = _Node(mention=held[0])
        else:
            effect = self._entity_state(obj[0], ctx.recent, set())
        if cause is None or effect is None:
            return
        effect.state = scalar
        ctx.links.append(_Link(cause, "causes", effect, 1, "observed", c.verb, c.sent))

    def _verb_link(self, ctx: _LinkContext, c: _Clause) -> None:
        """(a) A causal verb's link: its cause (subject, passive agent, event pronoun, sentential
        relative) and its effect (complement, object, gerund); a causal verb between plain
        entities is left a relation."""
        doc = ctx.doc
        node = _clause_node
        v = doc[c.tok]
        if c.causal is not None:
            cause: _Node | None = None
            status = "observed"
            if c.event_subject == -1:
                pc = ctx.prev_clause(c)
                cause = node(pc) if pc else None
                status = "inferred"
            elif c.event_subject is not None and c.event_subject in ctx.by_tok:
                cause = node(ctx.by_tok[c.event_subject])
            else:
                csubj = [ch for ch in v.children if ch.dep_ == "csubj"]
                agent = [ch for ch in v.children if ch.dep_ == "agent"]
                if csubj and csubj[0].i in ctx.by_tok:
                    cause = node(ctx.by_tok[csubj[0].i])
                elif agent and any(ch.dep_ == "nsubjpass" for ch in v.children):
                    po = self._prep_object(agent[0])
                    cause = self._entity_state(po[1], ctx.recent, ctx.consumed) if po else None
                else:
                    st = [ch for ch in v.children if ch.dep_ == "nsubj"]
                    gs = self._gerund_subject(v) if not st else (
                        st[0] if self._nominal_gerund(st[0]) else None)
                    if gs is not None:
                        cause = self._gerund_node(gs, ctx.consumed)
                    else:
                        cause = self._entity_state(st[0], ctx.recent, ctx.consumed) if st else None
                if cause is not None and cause.mention is not None and cause.mention.resolved:
                    status = "inferred"
            effect: _Node | None = None
            comp = [ch for ch in v.children if ch.dep_ in ("ccomp", "xcomp")
                    and ch.i in ctx.by_tok]
            pcomp = [g for ch in v.children if ch.dep_ == "prep"
                     for g in ch.children if g.dep_ == "pcomp" and g.i in ctx.by_tok]
            gcomp = [ch for ch in comp if ch.tag_ == "VBG" and any(
                x.dep_ == "nsubj" and x.pos_ in ("NOUN", "PROPN") for x in ch.children)]
            ngers = [ch for ch in v.children if ch.dep_ in ("xcomp", "ccomp", "dobj")
                     and ch.i > v.i and self._nominal_gerund(ch)]
            if ngers and not comp:
                effect = self._gerund_node(ngers[0], ctx.consumed)  # "hid the longer baking"
            elif comp and not gcomp:
                effect = node(ctx.by_tok[comp[0].i])
            elif pcomp and not gcomp:
                effect = node(ctx.by_tok[pcomp[0].i])
            else:
                objs = [ch for ch in v.children if ch.dep_ in ("dobj", "nsubjpass")]
                if objs and objs[0].lemma_ == "way" and c.lemma in ("open", "pave"):
                    ctx.consumed.add(objs[0].i)
                    # "opens the way to X": X is the effect
                    objs = self._first_prep_object(
                        [*v.children, *(g for x in v.children if x.dep_ == "dobj"
                                        for g in x.children)], ("to", "for"))
                if not objs:
                    objs = self._first_prep_object(v.children)
                if not objs:
                    for ch in v.children:
                        if ch.dep_ == "xcomp" and ch.pos_ == "NOUN":
                            objs = [ch]            # "leads to(aux) overload(xcomp)"
                            break
                        if ch.dep_ in ("ccomp", "oprd") and ch.pos_ == "ADJ":
                            ns = [g for g in ch.children if g.dep_ == "nsubj"
                                  and g.pos_ in ("NOUN", "PROPN")]
                            if ns:                 # "makes X possible"
                                objs = ns[:1]
                                break
                # "leads to the tank running dry": the gerund states the object's state
                ger = [ch for ch in v.children if ch.dep_ in ("advcl", "xcomp", "ccomp")
                       and ch.tag_ == "VBG" and ch.i > v.i]
                if ger:
                    g = ger[0]
                    gsubj = [x for x in g.children if x.dep_ == "nsubj"
                             and x.pos_ in ("NOUN", "PROPN")]
                    holder_tok = gsubj[0] if gsubj else (
                        objs[0] if objs and objs[0].i < g.i else None)
                    if holder_tok is not None:
                        words, phrase = self._participle_words(g)
                        ctx.consumed.add(g.i)
                        effect = _Node(mention=self._mention(holder_tok),
                                       state=self._state_of_words(words, phrase) or "occurs",
                                       event=True)
                        objs = []
                if objs:
                    # "led to a wrong quote by the agent": a late by/at/… names the holder
                    # (not the agent of a passive: "was caused by the stale cache" names
                    # the cause)
                    passive = any(ch.dep_ == "nsubjpass" for ch in v.children)
                    late = [ch for ch in v.children if ch.dep_ in ("agent", "prep")
                            and not (passive and ch.dep_ == "agent")
                            and ch.i > objs[0].i and ch.lower_ in _HOLDER_PREPS]
                    effect = self._entity_state(objs[0], ctx.recent, ctx.consumed, late)
                    if effect is not None and c.lemma == "make":
                        # "make the queue (at the counter) shorter": a comparative after
                        # the object, however the parser attached it
                        own = {t.i for ch in v.children if ch.dep_ == "conj"
                               for t in ch.subtree}
                        effect.words = tuple(
                            t.i for t in v.subtree if t.i > objs[0].i and t.i not in own
                            and t.tag_ in ("JJR", "RBR") and t.dep_ != "amod")
            if c.lemma == "make" and any(t.lower_ in ("possible", "feasible", "easier")
                                         for t in v.subtree):
                c.causal = "enables"          # "A makes B possible"
            plain = (cause is not None and effect is not None and cause.clause is None
                     and effect.clause is None and cause.state == "occurs"
                     and effect.state == "occurs" and not cause.event and not effect.event
                     and not effect.words
                     and not any(_EVENT_NOUN.search(nd.mention.head)
                                 for nd in (cause, effect) if nd.mention is not None))
            if plain and c.lemma in _RELATIONAL_CAUSAL:
                c.causal = None              # an entity-to-entity relation, typed later
            elif cause is not None and effect is not None:
                sign = -1 if c.lemma in _DAMPING_VERBS else 1
                ctx.links.append(_Link(cause, c.causal, effect, sign, status, c.verb, c.sent))
            else:
                c.causal = None

    def _relative_link(self, ctx: _LinkContext, c: _Clause) -> None:
        """(e) A non-restrictive relative on a verb of change, "…, which emptied the lock" /
        "the rumour, which emptied the bank": what the relative hangs on — the clause before
        it (a sentential relative) or the noun it follows — causes the object's new state, and
        the relative clause is re-read as that state ("the lock was emptied"). "…, which kept
        prices high" (a verb, its object and a resulting adjective) reads the same way: the
        object is in the adjective's state ("prices were high"). A relative whose verb names no
        change ("the report, which counted units") stays a plain relation."""
        doc = ctx.doc
        v = doc[c.tok]
        if c.causal is not None or v.dep_ not in ("relcl", "advcl", "ccomp"):
            return
        if not any(ch.dep_ == "nsubj" and ch.lower_ == "which" and ch.i > 0
                   and doc[ch.i - 1].text == "," for ch in v.children):
            return
        objs = [ch for ch in v.children if ch.dep_ == "dobj" and ch.i > v.i
                and ch.pos_ in ("NOUN", "PROPN", "PRON")]
        if not objs:
            return
        obj = objs[0]
        result = [ch for ch in v.children if ch.dep_ in ("oprd", "acomp", "ccomp", "xcomp")
                  and ch.pos_ == "ADJ" and ch.i > obj.i]
        if not result and c.lemma not in _CHANGE_VERBS and self._state_of_words(
                [(c.lemma, v.lower_)], v.lower_, embed=False) is None:
            return
        cause: _Node | None = None
        if c.event_subject is not None and c.event_subject in ctx.by_tok:
            # the clause before the comma that states something ("ranchers kept *breeding
            # more*, which …": the breeding, not the bare "kept")
            gov = doc[c.event_subject]
            told = [x for x in ctx.clauses if x.tok < c.tok and x.sent == c.sent
                    and (x.state is not None or x.objects)
                    and (x.tok == gov.i or gov in doc[x.tok].ancestors)
                    and c.tok not in {t.i for t in doc[x.tok].subtree if t.i > x.tok}]
            cause = _clause_node(told[-1] if told else ctx.by_tok[c.event_subject])
        elif v.dep_ == "relcl" and v.head.pos_ in ("NOUN", "PROPN"):
            cause = self._entity_state(v.head, ctx.recent, ctx.consumed)
        held = self._mentions(obj, ctx.recent)
        if cause is None or not held:
            return
        c.subjects, c.objects, c.event_subject, c.objects_moved = held[:1], [], None, True
        c.sources, c.into, c.complement = [], [], ""
        if result:
            adj = (result[0].lemma_ or result[0].text).lower()
            c.lemma, c.verb, c.verb_text, c.state = "be", f"be {adj}", f"be {adj}", adj
        else:
            c.verb, c.verb_text, c.state = c.lemma, v.lower_, v.lower_
        ctx.links.append(_Link(cause, "causes", _clause_node(c), 1, "observed", "which",
                               c.sent))

    def _marker_link(self, ctx: _LinkContext, c: _Clause) -> None:
        """(b) A subordinate clause with a marker ("because", "although", "so that", a purpose
        infinitive) linked with its main clause."""
        doc = ctx.doc
        clause_of = ctx.clause_of
        node = _clause_node
        v = doc[c.tok]
        if doc[c.tok].dep_ in ("advcl", "ccomp") or (
                doc[c.tok].dep_ == "xcomp" and False):
            marks = [ch for ch in v.children if ch.dep_ in ("mark", "advmod")
                     and ch.i < v.i]
            label = ""
            for mk in marks:
                low = mk.text.lower()
                prev = doc[mk.i - 1].text.lower() if mk.i > 0 else ""
                nxt = doc[mk.i + 1].text.lower() if mk.i + 1 < len(doc) else ""
                if low == "though" and prev == "even":
                    label = "even though"
                elif low == "as" and prev == "soon":
                    label = "as soon as"
                elif (low == "so" and nxt == "that") or (low == "that" and prev == "so"):
                    label = "so that"
                elif low in ("as", "if", "though") and (
                        (low == "as" and nxt in ("if", "though")) or prev == "as"):
                    label = "\0"          # "as if / as though": a comparison, not a cause
                    break
                elif low in _MARKERS:
                    label = label or low
            if not label and any(ch.dep_ == "aux" and ch.lower_ == "to" for ch in v.children):
                label = "to (purpose)"
            main = clause_of(v.head)
            if label == "\0":
                label = ""
            if label and main is not None and main is not c:
                if label == "to (purpose)":
                    if main.causal is None and main.lemma not in _ASPECTUAL:
                        ctx.links.append(_Link(node(main), "enables", node(c), 1, "inferred",
                                               label, c.sent))
                else:
                    edge, sign, status, direction = _MARKERS[label]
                    a, b = (c, main) if direction == "sub>main" else (main, c)
                    if a.causal is None and b.causal is None:
                        ctx.links.append(_Link(node(a), edge, node(b), sign, status, label,
                                               c.sent))
        elif doc[c.tok].dep_ == "xcomp" and c.causal is None:
            main = clause_of(v.head)
            if (main is not None and main.causal is None and main.lemma in _OBJECT_CONTROL
                    and main.lemma not in _ASPECTUAL
                    and any(ch.dep_ == "aux" and ch.lower_ == "to" for ch in v.children)):
                ctx.links.append(_Link(node(main), "enables", node(c), 1, "inferred",
                                       "to (purpose)", c.sent))

    def _prep_links(self, ctx: _LinkContext, c: _Clause) -> None:
        """(c) Prepositional connectives on the clause ("because of", "due to", "despite", "as a
        result")."""
        doc = ctx.doc
        node = _clause_node
        v = doc[c.tok]
        for ch in v.children:
            if ch.dep_ != "prep":
                continue
            w = ch.text.lower()
            if w == "as":
                po = self._prep_object(ch)
                if po is not None and po[1].lower_ in ("result", "consequence"):
                    pc = ctx.prev_clause(c) if ch.i < v.i else None
                    if pc is not None and c.causal is None:
                        ctx.links.append(_Link(node(pc), "causes", node(c), 1, "observed",
                                               "as a result", c.sent))
                continue
            if w not in _PREP_CONNECTIVES or c.causal is not None:
                continue
            edge, sign, status, label = _PREP_CONNECTIVES[w]
            pcs = [g for g in ch.subtree if g.i in ctx.by_tok and g.i != v.i]
            src: _Node | None = None
            if pcs:
                src = node(ctx.by_tok[pcs[0].i])
            else:
                po = self._prep_object(ch)
                if po is not None:
                    src = self._entity_state(po[1], ctx.recent, ctx.consumed)
            if src is not None:
                ctx.links.append(_Link(src, edge, node(c), sign, status, label, c.sent))

    def _adverbial_links(self, ctx: _LinkContext, c: _Clause) -> None:
        """(d) Adverbial connectives ("so", "therefore", "then") linking the clause before to
        this one."""
        doc = ctx.doc
        clause_of = ctx.clause_of
        node = _clause_node
        sents = ctx.sents
        v = doc[c.tok]
        if c.causal is None:
            for ch in v.children:
                low = ch.text.lower()
                if ch.dep_ not in ("advmod", "cc", "mark") or low not in _ADVERBIALS:
                    continue
                if ch.dep_ == "mark" and doc[c.tok].dep_ == "advcl":
                    continue
                if ch.i > v.i and ch.dep_ != "cc":
                    continue
                edge, sign, status = _ADVERBIALS[low]
                if ch.dep_ == "cc":
                    # "A, so B": "so" attaches to A; B is A's conjunct after it
                    for cj in v.children:
                        if cj.dep_ == "conj" and cj.i > ch.i and cj.i in ctx.by_tok:
                            ctx.links.append(_Link(node(c), edge, node(ctx.by_tok[cj.i]), sign,
                                                   status, low, c.sent))
                            break
                    continue
                src_c: _Clause | None = None
                if doc[c.tok].dep_ == "conj":
                    src_c = clause_of(v.head)
                else:
                    before = [x for x in v.children if x.i < ch.i and x.i in ctx.by_tok
                              and x.dep_ in ("ccomp", "advcl", "conj", "parataxis")]
                    if before:
                        src_c = ctx.by_tok[max(before, key=lambda x: x.i).i]
                    elif doc[c.tok].dep_ == "ROOT" and ch.i == sents[c.sent].start:
                        src_c = ctx.prev_clause(c)
                        if src_c is None and c.sent >= 2 and not any(
                                x.sent == c.sent - 1 for x in ctx.clauses):
                            # the sentence before gave no clause ("Planting fast pine paid as
                            # well as oak. *So* …"): the connective reaches back to the one before
                            # it, as a reading of ours (inferred), not a stated pair
                            prev = [x for x in ctx.clauses
                                    if x.sent == c.sent - 2 and x.causal is None]
                            root = [x for x in prev if doc[x.tok].dep_ == "ROOT"]
                            src_c = (root or prev[-1:] or [None])[0]
                            status = "inferred"
                if src_c is not None and src_c is not c:
                    ctx.links.append(_Link(node(src_c), edge, node(c), sign, status, low,
                                           c.sent))


    def _gerund_node(self, g: Any, consumed: set[int]) -> _Node:
        """An end that is a nominal gerund ("the longer baking"): the event over the gerund's own
        entity, its state from the gerund's words; a gerund the parser made the head of its
        holder ("the ferry working as designed") is the holder's state."""
        held = self._entity_state(g, [], consumed)
        if held is not None:
            return held     # "the ferry working as designed": a state of the compound noun
        lem = (g.lemma_ or g.text).lower()
        return _Node(mention=self._mention(g),
                     state=self._state_of_words([(lem, g.lower_)], g.lower_) or "occurs",
                     event=True)

    @staticmethod
    def _why_links(doc: Any, clauses: list[_Clause], by_tok: dict[int, _Clause],
                   clause_of: Any, prev_clause: Any) -> list[_Link]:
        """"A, and that is why B", "A. This is how B": the clause before the pronoun causes B."""
        out: list[_Link] = []
        for c in clauses:
            v = doc[c.tok]
            if c.lemma != "be" or not any(ch.dep_ == "nsubj" and ch.lower_ in _WHY_PRONOUNS
                                          for ch in v.children):
                continue
            told = [ch for ch in v.children if ch.dep_ in ("ccomp", "advcl") and ch.i > v.i
                    and ch.i in by_tok and any(g.dep_ == "advmod" and g.lower_ in ("why", "how")
                                               and g.i < ch.i for g in ch.children)]
            if not told:
                continue
            src = clause_of(v.head) if v.dep_ == "conj" else (
                prev_clause(c) if v.dep_ == "ROOT" else None)
            if src is not None and src is not c and src.causal is None:
                why = next(g.lower_ for g in told[0].children if g.dep_ == "advmod")
                out.append(_Link(_Node(clause=src.idx), "causes",
                                 _Node(clause=by_tok[told[0].i].idx), 1, "observed",
                                 f"that is {why}", c.sent))
        return out

    @staticmethod
    def _conjunct_links(doc: Any, clauses: list[_Clause], links: list[_Link]) -> list[_Link]:
        """Narrative order within a sentence: of two clauses joined by "and" ("The porter read
        the label and sent the crate north", "…, and the crate went north"), the first is read
        as leading to the second (``inferred``, connective "and"), as a sentence is read as
        leading to the next — unless a link of the text already ends in the second or joins
        the two, or either is a causal verb. (A second clause with a subject of its own was
        once left unlinked, while a wrongly resolved pronoun let archive_proxy's reversed
        minimal pair carry a conclusion across; its pronoun now finds the archivists.)"""
        by_tok = {c.tok: c for c in clauses}
        effects = {lk.effect.clause for lk in links if lk.effect.clause is not None}
        joined = {frozenset((lk.cause.clause, lk.effect.clause)) for lk in links}
        out: list[_Link] = []
        for c in clauses:
            v = doc[c.tok]
            h = by_tok.get(v.head.i) if v.dep_ == "conj" else None
            if h is None or h.sent != c.sent or c.causal is not None or h.causal is not None:
                continue
            if not any(ch.dep_ == "cc" and ch.lower_ == "and" and h.tok < ch.i < c.tok
                       for x in (doc[h.tok], v) for ch in x.children):
                continue
            if c.idx in effects or frozenset((h.idx, c.idx)) in joined:
                continue
            out.append(_Link(_Node(clause=h.idx), "causes", _Node(clause=c.idx), 1,
                             "inferred", "and", c.sent))
        return out

    @staticmethod
    def _adjacent_links(doc: Any, clauses: list[_Clause], links: list[_Link]) -> list[_Link]:
        """Implicit causality across adjacent sentences ("The cache was stale. The agent quoted
        the old price."): a sentence whose main clause no stated link explains is read as caused
        by the end of the sentence before it — the clause of that sentence no link leads on
        from, else its main clause. The link is ``inferred`` (the causal-path gate does not let
        a conclusion transfer over it), and it is not read where the text states a link between
        the two sentences either way, or into a clause that is itself a causal verb."""
        by_sent: dict[int, list[_Clause]] = {}
        for c in clauses:
            by_sent.setdefault(c.sent, []).append(c)
        sent_at = {st.start: i for i, st in enumerate(doc.sents)}

        def sent_of(nd: _Node) -> int | None:
            if nd.clause is not None:
                return clauses[nd.clause].sent
            return sent_at.get(doc[nd.mention.tok].sent.start) if nd.mention is not None \
                else None

        spans = [{x for x in (sent_of(lk.cause), sent_of(lk.effect), lk.sent) if x is not None}
                 for lk in links]
        def end_key(c: _Clause) -> tuple[str, bool, str]:
            return (c.lemma, c.negated, c.subjects[0].head if c.subjects else "")

        def node_key(nd: _Node) -> tuple[str, bool, str] | None:
            if nd.clause is not None:
                return end_key(clauses[nd.clause])
            return None

        # a stated link B → A defeats the default reading A → B of two sentences in which
        # clauses of the same verb and subject stand ("The bees stripped the flowers because
        # the colonies were starving. The colonies starved.")
        stated_back = {(node_key(lk.effect), node_key(lk.cause)) for lk in links}
        # … and so does a stated link into the earlier sentence's end from a clause about the
        # later sentence's subject ("Because the invoices were late, the service could not
        # allocate memory. The invoices went out late."): the later sentence restates the cause
        stated_back_subject = {(_subject_head(clauses, lk.effect),
                                _subject_head(clauses, lk.cause))
                               for lk in links if lk.status == "observed"}
        effects = {lk.effect.clause for lk in links if lk.effect.clause is not None}
        causes_of = {lk.cause.clause for lk in links if lk.cause.clause is not None}

        def main(cs: list[_Clause]) -> _Clause | None:
            root = [c for c in cs if doc[c.tok].dep_ == "ROOT"]
            return (root or cs[:1] or [None])[0]

        def last(cs: list[_Clause]) -> _Clause | None:
            """The sentence's end: its main clause, or the last clause conjoined to it ("Nobody
            refreshed the sheet, and the clerk computed the wages from it")."""
            cur = main(cs)
            at = {c.tok: c for c in cs}
            while cur is not None:
                nxt = [ch for ch in doc[cur.tok].children if ch.dep_ == "conj" and ch.i in at
                       and at[ch.i].causal is None]
                if not nxt:
                    break
                cur = at[max(nxt, key=lambda t: t.i).i]
            return cur

        # the links read so far as a graph over the ends' keys (a clause's verb, negation and
        # subject; an entity's state and name), so that a clause restating an earlier one is
        # the same node: an implicit link that would close a circle through a stated link is
        # not read
        # ("Only one lorry can cross, because fruit rots in the waiting lorries. [...] Fruit
        # rotted in the lorries.": the restated rotting is the stated cause, not an effect)
        def any_key(nd: _Node) -> tuple[str, bool, str] | None:
            if nd.clause is not None:
                return end_key(clauses[nd.clause])
            if nd.mention is not None:
                return (f"@{nd.state}", False, _entity_key(nd.mention))
            return None

        graph: dict[tuple[str, bool, str], set[tuple[tuple[str, bool, str], bool]]] = {}
        for lk in links:
            a, b = any_key(lk.cause), any_key(lk.effect)
            if a is not None and b is not None:
                graph.setdefault(a, set()).add((b, lk.status == "observed"))
        out: list[_Link] = []
        for si in sorted(by_sent):
            prev_cs, cs = by_sent.get(si - 1), by_sent[si]
            if not prev_cs:
                continue
            tgt = main(cs)
            if tgt is None or tgt.causal is not None or tgt.idx in effects:
                continue
            if any(si - 1 in sp and si in sp for sp in spans):
                continue               # the text links the two sentences itself
            ends = [c for c in prev_cs if c.idx in effects and c.idx not in causes_of
                    and c.causal is None]
            src = ends[-1] if ends else last(prev_cs)
            if src is None or src.causal is not None:
                continue
            if (end_key(src), end_key(tgt)) in stated_back or (
                    src.subjects and tgt.subjects and (_entity_key(src.subjects[0]),
                                                       _entity_key(tgt.subjects[0]))
                    in stated_back_subject):
                continue               # the text states it the other way round
            if _reaches(graph, end_key(tgt), end_key(src)):
                continue               # the later sentence restates an earlier cause
            out.append(_Link(_Node(clause=src.idx), "causes", _Node(clause=tgt.idx), 1,
                             "inferred", "(the next sentence)", si))
            graph.setdefault(end_key(src), set()).add((end_key(tgt), False))
        return out


_ASPECTUAL = {"keep", "continue", "start", "begin", "resume", "carry", "go", "try", "come",
              "skip"}
"""Verbs whose gerund or infinitive complement says what happens ("kept *halting* the lift",
"began *to leak*", "came *to know* the lawyer", "skipped *checking* the papers"): the verb
itself states nothing, and its infinitive is no purpose."""


def _content_end(doc: Any, ctx: _LinkContext, nd: _Node) -> _Node:
    """A link's end with an aspectual clause that states nothing of its own ("because it kept
    halting the lift") replaced by its complement clause (the halting)."""
    if nd.clause is None:
        return nd
    c = ctx.clauses[nd.clause]
    if c.lemma not in _ASPECTUAL or c.objects or c.state not in (None, c.lemma) \
            or c.causal is not None:
        return nd
    v = doc[c.tok]
    comp = [ch for ch in v.children if ch.dep_ in ("xcomp", "ccomp", "advcl") and ch.i > v.i
            and ch.i in ctx.by_tok and (ch.tag_ == "VBG" or any(
                g.dep_ == "aux" and g.lower_ == "to" for g in ch.children))]
    return _clause_node(ctx.by_tok[comp[0].i]) if comp else nd


def _reaches(graph: dict[Any, set[tuple[Any, bool]]], a: Any, b: Any) -> bool:
    """Is there a directed path from ``a`` to ``b`` in ``graph`` (node → {(next node, stated)})
    over at least one stated (observed) link?"""
    todo, seen = [(a, False)], {(a, False)}
    while todo:
        x, stated = todo.pop()
        if x == b and stated:
            return True
        for y, obs in graph.get(x, ()):
            nxt = (y, stated or obs)
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def _comparative(t: Any) -> bool:
    """Is ``t`` a comparative ("more", "less", "fewer", "costlier", "faster")?"""
    return t.lower_ in ("more", "less", "fewer") or t.tag_ in ("JJR", "RBR")


def _scalar_of(doc: Any, c: _Clause) -> str | None:
    """The state a verb of amount leaves its object in ("raised the price" → increased), when
    the clause is no causal verb and has an object (an amount, for the verbs that need one)."""
    name = _SCALAR_VERBS.get(c.lemma)
    if name is None or c.causal is not None:
        return None
    v = doc[c.tok]
    for ch in v.children:
        if ch.dep_ == "dobj" and ch.i > v.i and (c.lemma not in _SCALAR_IF_AMOUNT or (
                ch.lemma_.lower() in _AMOUNTS or any(g.dep_ == "prep" and g.lower_ == "of"
                                                     for g in ch.children))):
            return name
    return None


def _subject_head(clauses: list[_Clause], nd: _Node) -> str | None:
    """The head word of who or what a link's end is about: its clause's first subject, or the
    holder of its state."""
    if nd.clause is not None:
        subj = clauses[nd.clause].subjects
        return _entity_key(subj[0]) if subj else None
    return _entity_key(nd.mention) if nd.mention is not None else None


def _entity_key(m: _Mention) -> str:
    """An entity's name for matching mentions: its head word with its noun modifiers ("the
    typewriter maker" is not "other makers"; "the houses" is "every house")."""
    return " ".join([*m.core.split(" ")[:-1], m.head])


def _end_direction(doc: Any, clauses: list[_Clause], nd: _Node) -> int:
    """−1 when a link's end names a decrease ("the yeast works *slower*", "the *cooler* beer",
    "the queue *shrank*"), else +1: a causal edge's sign is the product of its ends'
    directions, so "warmer beer makes the yeast work slower" is a negative edge where "… work
    faster" is a positive one."""
    if nd.clause is not None:
        v = doc[clauses[nd.clause].tok]
        toks = [v, *(ch for ch in v.children
                     if ch.dep_ in ("advmod", "acomp", "oprd", "ccomp", "xcomp", "npadvmod")
                     and ch.pos_ in ("ADV", "ADJ"))]
        subj = [ch for ch in v.children if ch.dep_ in ("nsubj", "nsubjpass")]
        toks += [g for s in subj for g in s.children if g.dep_ == "amod"]
    elif nd.mention is not None:
        h = doc[nd.mention.tok]
        toks = [h, *(g for g in h.children if g.dep_ == "amod")]
        if h.dep_ == "nsubj" and h.head.pos_ in ("ADJ", "ADV"):
            toks.append(h.head)            # "makes the queue shorter"
    else:
        return 1
    toks += [doc[i] for i in nd.words if doc[i] not in toks]
    d = 1
    for t in toks:
        if t.lower_ in _DECREASE_WORDS or t.lemma_.lower() in _DECREASE_WORDS:
            d = -d
    return d
