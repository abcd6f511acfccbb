"""Fronted subordinate clauses re-read: "Because the cache was stale, the agent quoted the old
price." The small parser often makes the clause before the comma the sentence's root and the
main clause a stray noun phrase; the two pieces parsed on their own and joined give the reading
the causal links need (part of stage 2). Then a few mis-tagged tokens are repaired in every
sentence: a root noun with a reduced relative ("Typists trained on the layout"), a verb tagged as
a noun after a noun compound ("the fruit rots"), a bare infinitive tagged as a noun ("made
nurses greet arrivals"), a gerund that is an adjective on its object ("warned passing
skippers")."""

from __future__ import annotations

from typing import Any

_FRONTED = ("because", "since", "as", "although", "though", "when", "after", "once",
            "whenever", "if", "while", "until", "before")
"""Subordinators that may open a sentence ("Because the cache was stale, the agent quoted …");
the small parser often reads such a sentence with the subordinate clause as its root and the
main clause as a stray noun phrase."""


def _fronted_ok(marker: Any, comma: Any) -> bool:
    """Is the fronted clause already parsed as a subordinate clause of what follows the comma?"""
    v = marker.head
    return (marker.dep_ == "mark" and marker.i < v.i < comma.i and v.dep_ == "advcl"
            and v.head.i > comma.i and v.head.pos_ in ("VERB", "AUX"))


def _fronted_split(sent: Any) -> tuple[Any, Any] | None:
    """(marker, comma) of a sentence that opens with a subordinator and a clause ended by a
    comma, with a clause after the comma; None otherwise."""
    toks = list(sent)
    if len(toks) < 5 or toks[0].lower_ not in _FRONTED:
        return None
    marker = toks[0]
    for k, t in enumerate(toks[2:], start=2):
        if t.text != ",":
            continue
        before, after = toks[1:k], toks[k + 1:]
        if any(x.pos_ in ("VERB", "AUX") for x in before) and any(
                x.pos_ in ("VERB", "AUX") for x in after) and len(after) >= 2:
            return marker, t
        return None
    return None


_Row = tuple[int, str, str, str, str, str]   # (head within the piece, dep, tag, pos, lemma, morph)


def _verb_from_noun_root(rows: list[_Row]) -> list[_Row]:
    """A piece whose root is a noun with a past-tense verb after it as a reduced relative ("the
    guide ranked by review counts", "the patients of the ward queued at the desk") is a clause
    on its own: the verb is the root and the noun its subject."""
    root = next(i for i, r in enumerate(rows) if r[0] == i)
    if rows[root][3] not in ("NOUN", "PROPN"):
        return rows
    verb = next((i for i, r in enumerate(rows) if i > root and r[1] == "acl"
                 and r[2] in ("VBD", "VBN") and _under(rows, i, root)), None)
    if verb is None:
        return rows
    out = list(rows)
    out[verb] = (verb, "ROOT", "VBD", "VERB", *rows[verb][4:])
    out[root] = (verb, "nsubj", *rows[root][2:])
    for i, r in enumerate(rows):
        if i not in (root, verb):
            if r[0] == root and (r[1] == "punct" or i > verb):
                out[i] = (verb, *r[1:])          # the full stop, and what follows the verb
            if r[0] == verb and r[1] == "agent":
                out[i] = (verb, "prep", *r[2:])  # "ranked by X": a plain preposition
    return out


def _verb_from_compound(rows: list[_Row], words: list[str]) -> list[_Row]:
    """A clause with no verb whose head noun has a noun compound (or subject) just before it
    ("the fruit *rots*", "because fruit *rots* in the lorries", "the boiler *burst*"): the small tagger read
    the verb as a noun; the head is the verb and the compound its subject. Only a head with no
    verb under it, at the root of a sentence with no verb at all or heading a clause with a
    subordinator, is re-read."""
    out = list(rows)
    for i, r in enumerate(rows):
        if r[3] != "NOUN" or i == 0 or not words[i].isalpha():
            continue
        prev = rows[i - 1]
        if prev[0] != i or prev[1] not in ("compound", "nsubj") or prev[3] not in (
                "NOUN", "PROPN"):
            continue
        if r[0] == i:
            if any(x[3] in ("VERB", "AUX") for x in rows):
                continue
        elif not (r[1] in ("advcl", "ccomp") and any(
                x[0] == i and x[1] == "mark" for x in rows)):
            continue
        if any(x[3] in ("VERB", "AUX") for j, x in enumerate(rows) if _under(rows, j, i)):
            continue
        tag = "VBZ" if words[i].lower().endswith("s") and prev[2] == "NN" else "VBD"
        out[i] = (r[0], r[1], tag, "VERB", r[4], "")
        out[i - 1] = (i, "nsubj", *prev[2:])
    return out


_GERUND_TAKERS = {
    "keep", "start", "stop", "begin", "finish", "avoid", "enjoy", "quit", "continue", "try",
    "like", "love", "hate", "mind", "risk", "consider", "go", "come", "spend", "resume",
    "prefer", "recommend", "suggest", "practise", "practice", "miss", "regret", "remember",
    "forget", "admit", "deny", "imagine", "feel", "see", "hear", "watch", "notice", "find",
    "leave", "catch", "get", "give", "postpone", "delay", "discuss", "mention", "justify",
    "tolerate", "resist", "appreciate", "involve", "mean", "need", "require", "want"}
"""Verbs that take a gerund complement ("kept *finding* errors"); after any other verb a gerund
with its object just after it is an adjective on that object ("warned *passing* skippers")."""


def _participle_adjective(rows: list[_Row], words: list[str]) -> list[_Row]:
    """"He warned passing skippers using his old chart": the small parser made "passing" a
    gerund complement of "warned" with "skippers" its object. After a verb that takes no
    gerund, a gerund directly after the verb whose object follows it directly is an adjective
    on that object; the object is the verb's, and the gerund's other dependents are the
    verb's."""
    out = list(rows)
    for i, r in enumerate(rows):
        if r[2] != "VBG" or r[1] != "xcomp" or r[0] != i - 1 or i + 1 >= len(rows):
            continue
        v, n = i - 1, i + 1
        if rows[v][3] != "VERB" or rows[v][4].lower() in _GERUND_TAKERS:
            continue
        if rows[n][0] != i or rows[n][1] != "dobj" or rows[n][3] not in ("NOUN", "PROPN"):
            continue
        if any(x[0] == v and x[1] == "dobj" for x in rows):
            continue
        out[i] = (n, "amod", *r[2:])
        out[n] = (v, "dobj", *rows[n][2:])
        for j, x in enumerate(rows):
            if x[0] == i and j not in (i, n):
                out[j] = (v, *x[1:])
    return out


def _verb_with_subject(rows: list[_Row], words: list[str]) -> list[_Row]:
    """"…, which made nurses *greet* arrivals": a word tagged as a noun compound that has a
    subject of its own is a bare infinitive; it is the verb's clausal complement and the noun it
    was stuck to its object."""
    out = list(rows)
    for i, r in enumerate(rows):
        if r[3] != "NOUN" or r[1] != "compound" or r[0] != i + 1 or not words[i].isalpha():
            continue
        if not any(x[0] == i and x[1] == "nsubj" and j < i for j, x in enumerate(rows)):
            continue
        n = i + 1
        gov = rows[n][0]
        if rows[n][1] != "dobj" or gov == n or rows[gov][3] != "VERB":
            continue
        out[i] = (gov, "ccomp", "VB", "VERB", words[i].lower(), "VerbForm=Inf")
        out[n] = (i, "dobj", *rows[n][2:])
    return out


def _repair_rows(rows: list[_Row], words: list[str]) -> list[_Row]:
    """The token repairs of one sentence or piece: a reduced-relative root, a verb tagged as a
    noun, a gerund that is an adjective."""
    rows = _verb_from_noun_root(rows)
    rows = _verb_from_compound(rows, words)
    rows = _verb_with_subject(rows, words)
    return _participle_adjective(rows, words)


def _suspect(sent: Any) -> bool:
    """Might :func:`_repair_rows` change anything in ``sent``? (A cheap look first: most
    sentences need no repair.)"""
    if sent.root.pos_ in ("NOUN", "PROPN"):
        return True
    for t in sent:
        dep = t.dep_
        if dep == "xcomp" and t.tag_ == "VBG":
            return True
        if dep == "compound" and t.head.i == t.i + 1 and t.head.pos_ == "NOUN" and (
                t.head.dep_ in ("ROOT", "advcl", "ccomp")
                or any(g.dep_ == "nsubj" for g in t.children)):
            return True
    return False


def _repair_parse(nlp: Any, doc: Any) -> Any:
    """``doc`` with fronted subordinate clauses re-read (:func:`_repair_fronted`) and then the
    token repairs of :func:`_repair_rows` made in every sentence; the same ``doc`` when nothing
    needed repair. The words and spacing never change."""
    doc = _repair_fronted(nlp, doc)
    fixes: list[tuple[int, list[_Row]]] = []
    for sent in doc.sents:
        if not _suspect(sent):
            continue
        lo = sent.start
        rows: list[_Row] = [(t.head.i - lo, t.dep_, t.tag_, t.pos_, t.lemma_, str(t.morph))
                            for t in sent]
        fixed = _repair_rows(rows, [t.text for t in sent])
        if fixed != rows:
            fixes.append((lo, fixed))
    if not fixes:
        return doc
    cols = _Columns(doc)
    for lo, fixed in fixes:
        cols.put(fixed, lo)
    return cols.rebuilt(doc)


class _Columns:
    """A parsed doc's token annotations as six lists to edit, rebuilt into a doc of the parse's
    own class (spaCy stays an import of the loaded pipeline only) with the same words and
    spacing."""

    def __init__(self, doc: Any) -> None:
        self.heads = [t.head.i for t in doc]
        self.deps = [t.dep_ for t in doc]
        self.tags = [t.tag_ for t in doc]
        self.pos = [t.pos_ for t in doc]
        self.lemmas = [t.lemma_ for t in doc]
        self.morphs = [str(t.morph) for t in doc]

    def put(self, rows: list[_Row], off: int) -> None:
        """Rows of a piece parsed on its own (heads relative to it) written from token ``off``."""
        for k, (h, dep, tag, ps, lem, mo) in enumerate(rows):
            j = k + off
            self.heads[j], self.deps[j], self.tags[j] = h + off, dep, tag
            self.pos[j], self.lemmas[j], self.morphs[j] = ps, lem, mo

    def rebuilt(self, doc: Any) -> Any:
        return type(doc)(doc.vocab, words=[t.text for t in doc],
                         spaces=[bool(t.whitespace_) for t in doc], tags=self.tags,
                         pos=self.pos, morphs=self.morphs, lemmas=self.lemmas,
                         heads=self.heads, deps=self.deps)


def _under(rows: list[_Row], i: int, top: int) -> bool:
    """Is row ``i`` in the subtree of row ``top``?"""
    for _ in range(len(rows)):
        if i == top:
            return True
        if rows[i][0] == i:
            return False
        i = rows[i][0]
    return False


def _parse_piece(nlp: Any, doc: Any, lo: int, hi: int) -> list[_Row] | None:
    """The tokens ``lo..hi`` of ``doc`` parsed on their own as one sentence (capitalised, and
    closed with a full stop when they lack one, as a sentence is written): one row per token,
    or None when the parse splits them, tokenises them differently or has no verb at its root
    (after :func:`_repair_rows`)."""
    words = [t.text for t in doc[lo:hi]]
    text = doc[lo:hi].text
    closed = words[-1] in (".", "!", "?")
    sub = nlp(text[:1].upper() + text[1:] + ("" if closed else "."))
    toks = list(sub) if closed else list(sub)[:-1]
    if [t.text.lower() for t in toks] != [w.lower() for w in words] or any(
            t.head.i >= len(toks) for t in toks):
        return None
    rows: list[_Row] = [(t.head.i, t.dep_, t.tag_, t.pos_,
                         # (the piece was capitalised: a common word's lemma is lower case)
                         t.lemma_.lower() if t.i == 0 and t.pos_ != "PROPN" else t.lemma_,
                         str(t.morph)) for t in toks]
    if sum(r[0] == i for i, r in enumerate(rows)) != 1:
        return None
    rows = _repair_rows(rows, words)
    root = next(i for i, r in enumerate(rows) if r[0] == i)
    return rows if rows[root][3] in ("VERB", "AUX") else None


def _repair_fronted(nlp: Any, doc: Any) -> Any:
    """``doc`` with each sentence that opens with a subordinate clause ("Because / Since / When
    / After … , …") re-read when the parser got it wrong: the clause before the comma and the
    clause after it are parsed on their own and joined — the first an adverbial clause (its
    subordinator its marker) of the second. Sentences parsed right, or whose pieces do not
    parse as one clause each, are left as they are; the words and spacing never change."""
    plans = []
    for sent in doc.sents:
        split = _fronted_split(sent)
        if split is None or _fronted_ok(*split):
            continue
        marker, comma = split
        rows_a = _parse_piece(nlp, doc, marker.i + 1, comma.i)
        rows_b = _parse_piece(nlp, doc, comma.i + 1, sent.end)
        if rows_a is not None and rows_b is not None:
            plans.append((marker.i, comma.i, rows_a, rows_b))
    if not plans:
        return doc
    cols = _Columns(doc)
    heads, deps, tags, pos = cols.heads, cols.deps, cols.tags, cols.pos
    for m, cm, rows_a, rows_b in plans:
        cols.put(rows_a, m + 1)
        cols.put(rows_b, cm + 1)
        root_a = next(k for k, r in enumerate(rows_a) if r[0] == k) + m + 1
        root_b = next(k for k, r in enumerate(rows_b) if r[0] == k) + cm + 1
        heads[root_a], deps[root_a] = root_b, "advcl"
        heads[m], deps[m], pos[m], tags[m] = root_a, "mark", "SCONJ", "IN"
        heads[cm], deps[cm] = root_b, "punct"
        deps[root_b] = "ROOT"
    return cols.rebuilt(doc)
