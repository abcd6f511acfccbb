"""State atoms: a state or event noun phrase read as a state of its holder (stage 3, states)."""

from __future__ import annotations

from typing import Any

import numpy as np

from analogist.encode.clauses import _Mention, _Node
from analogist.encode.everyday import EVERYDAY_STATES
from analogist.encode.lexicon import (
    _AS_PLANNED,
    _CHECK_VERBS,
    _EVENT_NOUN,
    _FUNCTION_NOUNS,
    _FUNCTION_VERBS,
    _HOLDER_PREPS,
    _LINKING,
    _MAINTAIN_VERBS,
    _NOBODY,
    _NORMAL_ADJ,
    _PROPERLY,
    _PROVISION_VERBS,
    _SEE_VERBS,
    _STATE_PHRASES,
    _STATE_WORDS,
    _UPDATE_VERBS,
    _snake,
)
from analogist.encode.params import EncoderParams
from analogist.index.embed import Embedder
from analogist.vocabulary import Vocabulary

_GENERAL_STATES: dict[str, str] = {
    **EVERYDAY_STATES,          # the everyday words first: no word is in both
    **dict.fromkeys(("shift", "shifted", "move", "moved", "change", "changed", "alter",
                     "altered", "relocate", "relocated", "revise", "revised", "resurvey",
                     "resurveyed", "redraw", "redrawn"), "changed"),
    **dict.fromkeys(("rise", "risen", "soar", "soared", "grow", "growth", "climb", "swell",
                     "surge", "spike", "jump", "increase", "increased", "multiply", "boom",
                     "double", "mount", "expand", "higher", "more"), "increased"),
    **dict.fromkeys(("fall", "drop", "sink", "shrink", "dwindle", "decrease", "decreased",
                     "plunge", "slump", "dip", "fewer", "less", "lower", "reduced"),
                    "decreased"),
    **dict.fromkeys(("ground", "aground", "scald", "scalded", "injure", "injured", "injury",
                     "hurt", "damage", "damaged", "drown", "flood", "flooded", "sicken", "sick",
                     "ill", "wreck", "wrecked", "wound", "wounded", "harm", "harmed", "sting",
                     "stung", "poison", "poisoned"), "harmed"),
    **dict.fromkeys(("arrive", "arrival", "come", "appear", "return", "land", "turn up",
                     "show up", "come in"), "arrived"),
    **dict.fromkeys(("leave", "left", "depart", "quit", "withdraw", "flee", "go away",
                     "drop out", "walk out"), "departed"),
    **dict.fromkeys(("close", "closed", "shut", "dark", "disabled", "deactivated",
                     "switched off", "turned off", "shut off", "shut down", "switch off",
                     "turn off", "unplugged", "disconnected", "offline"), "outage"),
    **dict.fromkeys(("sag", "bend", "warp", "creak", "sway", "wobble"), "degraded"),
    **dict.fromkeys(("crack", "snap", "split", "shatter", "burst", "melt"), "failure"),
    **dict.fromkeys(("starve", "ruin", "ruined", "underpaid", "drowned", "overcharged",
                     "cheated", "stranded", "suffer", "bleed", "sicken", "underfed",
                     "short-changed", "shortchanged", "overdosed", "bankrupt"), "harmed"),
    **dict.fromkeys(("snap", "topple", "collapse", "fail", "die", "explode", "break",
                     "give way", "cave in"), "failure"),
    **dict.fromkeys(("rot", "rust", "fade", "wither", "mould", "mold", "blur", "dull",
                     "corrode", "clog", "silt up"), "degraded"),
    **dict.fromkeys(("full", "crowded", "overcrowded", "packed", "jammed", "swamped",
                     "overwhelmed", "overrun", "flooded with"), "overload"),
    **dict.fromkeys(("empty", "dry up", "run out", "depleted", "exhaust", "exhausted",
                     "used up", "spent", "drained"), "exhausted"),
    **dict.fromkeys(("work", "run", "operate", "function", "burn", "active"), "active"),
    **dict.fromkeys(("gain", "spread", "bloom", "multiplied"), "increased"),
    **dict.fromkeys(("late", "overdue", "behind", "belated", "tardy"), "delayed"),
    **dict.fromkeys(("heavy", "overweight", "overfull", "overloaded"), "overload"),
}
"""General English verbs, participles and nouns of change, rise, fall, harm, arrival and lateness read as
the vocabulary's domain-neutral states (the ends of causal edges in any domain: "the sandbar
shifted" → ``changed``, "the price soared" → ``increased``); used for an edge end that the
vocabulary's own names, :data:`~analogist.encode.lexicon._STATE_WORDS` and the embedder left as a
proposed term (:meth:`~analogist.encode.relations._RelationTyper._type_edge_ends`)."""


class _StateReader:
    """Mixin of :class:`~analogist.encode.deterministic.DeterministicEncoder`: state atoms: a state or event noun phrase read as a state of its holder (stage 3, states)."""

    params: EncoderParams
    vocab: Vocabulary
    embedder: Embedder | None
    nlp: Any

    def _entity_state(self, tok: Any, recent: list[_Mention],
                      consumed: set[int] | None = None,
                      late: list[Any] | None = None) -> _Node | None:
        """The state atom of a noun-phrase end of a causal edge: (holder mention, attribute).

        A state or event noun phrase names its **holder** — "the staleness of the board",
        "a wrong conclusion by the clerk", "overload on the pump", "the server's outage",
        "the board being unchecked", "the tank running dry", "nobody checking the ledger",
        "too much load on the disk" — and the atom is over the holder; the state noun itself
        is not an entity (its token is added to ``consumed``). The attribute comes from the
        words of the phrase (:meth:`_state_of_words`), else ``occurs``."""
        consumed = consumed if consumed is not None else set()
        if tok.tag_ == "VBG" and tok.dep_ in ("dobj", "nsubj", "nsubjpass", "pobj"):
            # "holds up the ferry working as designed", "hides the cluster getting worse": the
            # parser made the participle the head and its holder a compound of it
            held = [c for c in tok.children if c.dep_ in ("compound", "nmod") and c.i < tok.i
                    and c.pos_ in ("NOUN", "PROPN")]
            if held:
                words, phrase = self._participle_words(tok)
                consumed.add(tok.i)
                st = self._functioning_state(tok) or self._state_of_words(words, phrase)
                return _Node(mention=self._mention(held[-1]), state=st or "occurs", event=True)
        if tok.pos_ not in ("NOUN", "PROPN", "PRON", "NUM", "X"):
            return None
        # "nobody checking the ledger" → the ledger is unverified / unobserved
        if tok.lower_ in _NOBODY:
            for v in tok.children:
                if v.dep_ in ("acl", "relcl") and v.pos_ in ("VERB", "AUX"):
                    obj = [c for c in v.children if c.dep_ in ("dobj", "nsubjpass")]
                    if not obj:
                        po = next((self._prep_object(c) for c in v.children
                                   if c.dep_ == "prep"), None)
                        obj = [po[1]] if po else []
                    if obj and obj[0].pos_ in ("NOUN", "PROPN"):
                        consumed.update({tok.i, v.i})
                        st = self._state_of_words([(v.lemma_.lower(), v.lower_)], v.lower_,
                                                  negated=True)
                        return _Node(mention=self._mention(obj[0]), state=st or "occurs",
                                     event=True)
            return None
        ms = self._mentions(tok, recent)
        if not ms:
            return None
        m = ms[0]
        # "the board being unchecked", "the pump working as designed": a participle on the noun
        for v in tok.children:
            if v.dep_ in ("acl", "relcl") and v.i > tok.i and (
                    v.tag_ == "VBG" or v.lemma_ == "be") and not any(
                    c.dep_ == "agent" for c in v.children):
                words, phrase = self._participle_words(v)
                consumed.add(v.i)
                st = self._functioning_state(v) or self._state_of_words(words, phrase)
                return _Node(mention=m, state=st or "occurs", event=True)
        own = [(tok.lemma_.lower(), tok.lower_)]
        mods = [(c.lemma_.lower(), c.lower_) for c in tok.children
                if c.dep_ in ("amod", "compound") and c.i < tok.i and c.pos_ in ("ADJ", "VERB")]
        # "data lost by the archive", "a belief held by the clerk": a passive participle
        parts = [c for c in tok.children if c.dep_ == "acl" and c.tag_ == "VBN" and c.i > tok.i
                 and any(g.dep_ == "agent" for g in c.children)]
        mods += [(c.lemma_.lower(), c.lower_) for c in parts]
        too_much = any(c.lower_ in ("much", "many") and any(g.lower_ == "too" for g in c.children)
                       for c in tok.children if c.dep_ == "amod")
        state = "overload" if too_much and self.vocab.get("overload") is not None else None
        if state is None and tok.lemma_.lower() in _FUNCTION_NOUNS and any(
                c.dep_ == "amod" and c.lower_ in _NORMAL_ADJ for c in tok.children) and \
                self.vocab.get("correct") is not None:
            state = "correct"       # "normal operation of the pump"
        if state is None:
            state = self._state_of_words(own, tok.lower_, embed=False)
        if state is None and mods:
            state = self._state_of_words(mods, " ".join(w for _, w in mods), embed=False)
        eventish = state is not None or bool(_EVENT_NOUN.search(m.head)) or \
            m.head in _STATE_WORDS or too_much or bool(parts)
        holder: _Mention | None = None
        if eventish:
            holder = self._holder(tok, late or [])
        if holder is not None:
            consumed.add(tok.i)
            consumed.update(c.i for c in parts)
            if state is None:
                # an event noun with a holder ("decline of the pool"): type the noun phrase
                state = self._state_of_words(own, " ".join([*(w for _, w in mods), tok.lower_]),
                                             embed=True)
            return _Node(mention=holder, state=state or "occurs", event=True)
        return _Node(mention=m, state=state or "occurs")

    def _as_holder(self, doc: Any, m: _Mention, consumed: set[int]) -> _Mention:
        if m.resolved or m.tok in consumed:
            return m
        tok = doc[m.tok]
        if tok.pos_ not in ("NOUN", "PROPN") or not self._state_of_words(
                [(tok.lemma_.lower(), tok.lower_)], tok.lower_, embed=False):
            return m
        h = self._holder(tok, [])
        return h if h is not None else m

    def _holder(self, tok: Any, late: list[Any]) -> _Mention | None:
        """Who or what a state noun is about: possessor, ``of/by/in/on/at/…`` object, the agent
        of a participle ("a belief held by the clerk"), or a compound modifier."""
        for c in tok.children:
            if c.dep_ == "poss" and c.pos_ in ("NOUN", "PROPN"):
                return self._mention(c)
        for c in [*(c for c in tok.children if c.dep_ == "prep"), *late]:
            if c.lower_ in _HOLDER_PREPS and c.i > tok.i:
                po = self._prep_object(c)
                if po is not None and po[1].pos_ in ("NOUN", "PROPN") \
                        and not self._state_of_words([(po[1].lemma_.lower(), po[1].lower_)],
                                                     po[1].lower_, embed=False):
                    return self._mention(po[1])
                for g in c.subtree:
                    if g.dep_ == "compound":
                        continue
                    if g.i > c.i and (g.pos_ in ("NOUN", "PROPN") or (
                            g.pos_ in ("NUM", "ADJ") and g.dep_ in ("advmod", "npadvmod"))) \
                            and g.lower_ not in _NOBODY:
                        if self._state_of_words([(g.lemma_.lower(), g.lower_)], g.lower_,
                                                embed=False):
                            continue
                        return self._mention(g)
        for c in tok.children:
            if c.dep_ == "acl" and c.i > tok.i:
                for ag in c.children:
                    if ag.dep_ == "agent":
                        po = self._prep_object(ag)
                        if po is not None and po[1].pos_ in ("NOUN", "PROPN"):
                            return self._mention(po[1])
        owners = [c for c in tok.children if c.dep_ in ("compound", "nmod")
                  and c.pos_ in ("NOUN", "PROPN")]
        if owners and self.vocab.get(_snake(f"{owners[-1].lower_} {tok.lower_}")) is None:
            return self._mention(owners[-1])
        return None

    def _functioning_state(self, v: Any) -> str | None:
        """``correct`` for a functioning participle that does what it is meant to: "working as
        designed", "running as intended", "operating normally"; else ``None`` (plain "working"
        is only activity)."""
        if v.lemma_.lower() not in _FUNCTION_VERBS or self.vocab.get("correct") is None:
            return None
        after = v.doc[v.i + 1] if v.i + 1 < len(v.doc) else None
        if after is not None and after.pos_ == "ADV" and after.lower_ in _PROPERLY:
            return "correct"       # "running normally" (the adverb may hang on the main verb)
        for c in v.children:
            if c.dep_ == "advmod" and c.lower_ in _PROPERLY:
                return "correct"
            if c.dep_ in ("advcl", "prep", "xcomp") and c.lemma_.lower() in _AS_PLANNED | {"as"}:
                words = [c] + [g for g in c.children if g.dep_ in ("pcomp", "pobj")]
                marked = c.lower_ == "as" or any(g.dep_ == "mark" and g.lower_ == "as"
                                                for g in c.children)
                if marked and any(w.lemma_.lower() in _AS_PLANNED for w in words):
                    return "correct"
        return None

    @staticmethod
    def _participle_words(v: Any) -> tuple[list[tuple[str, str]], str]:
        """The state words of a participle phrase: "being unchecked" → unchecked; "running dry"
        → run dry; "going down" → go down; "getting worse" → worse; "held up" → hold up."""
        comp = [c for c in v.children if c.dep_ in ("acomp", "oprd", "prt", "advmod", "xcomp",
                                                      "dobj")]
        words = [(c.lemma_.lower(), c.lower_) for c in comp]
        if v.lemma_ not in _LINKING or not words:
            words.insert(0, (v.lemma_.lower(), v.lower_))
        phrase = " ".join([v.lower_, *(c.lower_ for c in comp)])
        if v.lemma_ in _LINKING and words:
            phrase = " ".join(w for _, w in words)
        return words, phrase

    def _state_of_words(self, words: list[tuple[str, str]], phrase: str, *,
                        negated: bool = False, embed: bool = True) -> str | None:
        """A vocabulary attribute for state words (lemma, surface) by name, synonym or the
        bundled word table, by derivation (staleness → stale, corruption → corrupt(ed),
        exhaustion → exhausted, unchecked → unverified, unseen → unobserved), by negation
        ("nobody checks" → unverified), then by the embedder (``state_threshold``)."""
        if negated:
            for lem, _ in words:
                if lem in _CHECK_VERBS and self.vocab.get("unverified") is not None:
                    return "unverified"
                if lem in _SEE_VERBS and self.vocab.get("unobserved") is not None:
                    return "unobserved"
                if lem in _UPDATE_VERBS and self.vocab.get("stale") is not None:
                    return "stale"          # "nobody updated the map"
                if lem in _MAINTAIN_VERBS and self.vocab.get("degraded") is not None:
                    return "degraded"       # "nobody repaired the pump"
                if lem in _PROVISION_VERBS and self.vocab.get("missing") is not None:
                    return "missing"        # "nobody had built a generator"
            return None
        joined = " ".join(lem for lem, _ in words)
        if joined in _STATE_PHRASES and self.vocab.get(_STATE_PHRASES[joined]) is not None:
            return _STATE_PHRASES[joined]
        for lem, surf in words:
            for w in dict.fromkeys((lem, surf)):
                got = self._state_name(w) or self._derived_state(w)
                if got is not None:
                    return got
        if embed and self.embedder is not None and phrase.strip():
            preds, defs = self._definitions(1)
            if defs is not None and preds:
                vec = self.embedder.embed([phrase])[0]
                sims = np.maximum(defs[0] @ vec, defs[1] @ vec)
                order = np.argsort(-sims, kind="stable")
                best = float(sims[order[0]])
                second = float(sims[order[1]]) if len(order) > 1 else -1.0
                if best >= self.params.state_threshold and best - second >= \
                        self.params.embed_margin / 2:
                    return preds[int(order[0])].name
        return None

    def _derived_state(self, w: str) -> str | None:
        if w.startswith("un") and len(w) > 5:
            stem = w[2:]
            for cand in (stem, stem[:-2], stem[:-1], stem[:-2] + "e"):
                if cand in _CHECK_VERBS:
                    return "unverified" if self.vocab.get("unverified") is not None else None
                if cand in _SEE_VERBS or stem in ("seen", "noticed", "detected", "observed"):
                    return "unobserved" if self.vocab.get("unobserved") is not None else None
        for suf, reps in (("ness", ("",)), ("ion", ("", "e", "ed")), ("ation", ("", "e", "ed")),
                          ("ity", ("", "e")), ("age", ("",))):
            if w.endswith(suf) and len(w) > len(suf) + 3:
                stem = w[:-len(suf)]
                for r in reps:
                    got = self._state_name(stem + r) or (
                        self._state_name(stem + r + "ed") if r != "ed" else None)
                    if got is not None:
                        return got
        return None

    def _state_name(self, word: str) -> str | None:
        p = self.vocab.get(word)
        if p is not None and p.arity == 1:
            return p.name
        s = _STATE_WORDS.get(word)
        if s is not None and self.vocab.get(s) is not None:
            return self.vocab.canonical(s)
        return None
