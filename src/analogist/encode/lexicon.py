"""Word lists of the deterministic encoder: pronouns, connectives, causal verbs, state words,
the relation cue lexicon, fix cues; and small text helpers."""

from __future__ import annotations

import re

# -- word lists ----------------------------------------------------------------------------------
_PRONOUNS_PLURAL = {"they", "them", "these", "those"}
_PRONOUNS_SINGULAR = {"it", "this", "that", "he", "she", "him", "her", "each"}
_SPEAKER_FORMS = {"i": "I", "me": "I", "we": "we", "us": "we", "you": "you"}
"""First- and second-person pronouns: the speaker or the addressee, a participant of its own
that no earlier noun stands for ("*I* lost the keys", "*you* turn the knob")."""
_PERSON_FORMS = {"he": "he", "him": "he", "she": "she", "her": "she", "they": "they",
                 "them": "they"}
"""Third-person pronouns of people: with no earlier participant to stand for ("*He* was so
tired, *he* slept"), a participant of their own, named by the subject form."""
_INDEFINITE_PRONOUNS = {"someone", "somebody", "something", "anyone", "anybody", "anything",
                        "everyone", "everybody", "everything"}
"""Indefinite pronouns that name a participant ("*someone* left the door open", "lost
*something*"); the negative ones (:data:`_NEG_PRONOUNS`) negate their clause instead."""
_AGREES_WITH = {"he": {"he", "someone", "somebody", "anyone", "anybody"},
                "him": {"he", "someone", "somebody", "anyone", "anybody"},
                "she": {"she", "someone", "somebody", "anyone", "anybody"},
                "her": {"she", "someone", "somebody", "anyone", "anybody"},
                "they": {"they", "someone", "somebody", "anyone", "anybody", "everyone",
                         "everybody"},
                "them": {"they", "someone", "somebody", "anyone", "anybody", "everyone",
                         "everybody"},
                "it": {"something", "anything", "everything"},
                "this": {"something", "anything", "everything"},
                "that": {"something", "anything", "everything"}}
"""Per third-person pronoun, the participants named by a pronoun it can stand for (a noun
phrase it can always stand for): "it" never stands for "I" or "he"."""
_QUANTIFIERS = {"one", "only", "single", "every", "each", "all", "whole", "same", "other",
                "several", "many", "few", "some", "no", "any", "both", "another", "more",
                "most", "fewer", "less"}
"""Quantifier words left out of entity phrases ("one printer", "the only trolley")."""
_TIME_WORDS = {"minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month",
               "months", "year", "years", "decade", "decades", "century", "centuries",
               "morning", "mornings", "afternoon", "afternoons", "evening", "evenings", "night",
               "nights", "weekend", "weekends", "summer", "winter", "autumn", "time", "times",
               "today", "tonight", "yesterday", "tomorrow", "january", "february", "march",
               "april", "may", "june", "july", "august", "september", "october", "november",
               "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
               "sunday", "while", "moment", "instant", "fortnight", "season", "seasons",
               "midnight", "noon", "midday", "dawn", "dusk", "sunrise", "sunset", "daybreak",
               "nightfall", "semester"}
"""Head nouns of time spans, never participants ("took two years", "in April", "a week")."""
_NUMBER_WORDS = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                 "eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred",
                 "thousand", "million", "dozen", "half", "both"}
_NEG_ADVERBS = {"never", "hardly", "rarely", "seldom", "barely", "scarcely"}
"""Adverbs that negate their clause ("hardly ever checks", "rarely updated")."""
_NEG_PRONOUNS = {"nobody", "nothing", "noone", "none", "neither"}
"""Negative subjects ("nobody checked", "nothing broke the loop")."""
_RELATIVE = {"which", "that", "who", "whom", "whose"}
_EVENT_PRONOUNS = {"this", "that", "it", "which"}
_WHY_PRONOUNS = {"this", "that"}
"""Subjects of "that is why B", "this is how B": the clause before them causes B."""
_OBJECT_CONTROL = {"use", "employ", "utilize", "utilise", "apply", "allow", "enable", "permit",
                   "let", "cause", "force", "make", "help", "require", "ask", "tell", "want",
                   "expect", "lead", "need", "push", "drive"}
_LINKING = {"be", "become", "go", "turn", "get", "remain", "stay", "seem", "grow", "fall",
            "appear", "look", "feel"}
_SKIP_PREPS = {"due", "despite", "because", "as", "owing", "thanks", "after", "before", "during",
               "until", "since", "like", "such", "than", "in order"}
_CAUSAL_PREPS = _SKIP_PREPS - {"as", "like"}
_BELIEF_VERBS = {"assume", "believe", "presume", "suppose", "think", "expect"}
_LIGHT_VERBS = {"have", "take", "keep", "pay", "give", "gain", "lose", "hold"}
_LIGHT_NOUNS = {"priority", "precedence", "attention", "track", "hold", "control", "charge",
                "eye", "care", "note", "notice", "advantage", "possession", "custody"}
"""Light-verb constructions read as one verb: "has priority over", "keeps track of"."""
_DIRECTIONAL = {"away", "back", "off", "out", "over", "down", "up", "ahead", "along", "apart"}
_GENERIC_HEADS = {"process", "type", "kind", "piece", "form", "amount", "number", "lot", "group",
                  "series", "set", "act", "method", "sort", "part", "variety"}
_MOD_DEPS = {"compound", "amod", "nmod", "nummod"}
_STOP = {"the", "a", "an", "of", "to", "in", "on", "and", "or", "for", "with", "its", "their",
         "is", "are", "be", "that", "this", "by", "from", "as", "at", "it", "role", "first",
         "second", "two", "roles", "s"}

# causal verbs: lemma -> (edge, required preposition or particle or None)
_CAUSAL_VERBS: dict[str, tuple[str, str | None]] = {
    "cause": ("causes", None), "lead": ("causes", "to"), "result": ("causes", "in"),
    "trigger": ("causes", None), "make": ("causes", None), "contribute": ("causes", "to"),
    "allow": ("enables", None), "enable": ("enables", None), "let": ("enables", None),
    "permit": ("enables", None),
    "prevent": ("prevents", None), "stop": ("prevents", None), "block": ("prevents", None),
    "keep": ("prevents", "from"),
    "mask": ("masks", None), "hide": ("masks", None), "conceal": ("masks", None),
    "cover": ("masks", "up"),
    "delay": ("delays", None), "postpone": ("delays", None), "slow": ("delays", None),
    "bring": ("causes", "about"), "hold": ("delays", "up"), "open": ("enables", None),
    "pave": ("enables", None),
    "produce": ("causes", None), "provoke": ("causes", None),
    "amplify": ("causes", None), "magnify": ("causes", None), "intensify": ("causes", None),
    "damp": ("causes", None), "dampen": ("causes", None), "suppress": ("causes", None),
    "attenuate": ("causes", None), "curb": ("causes", None),
    "push": ("causes", "to"), "drive": ("causes", "to"), "force": ("causes", None),
}
_DAMPING_VERBS = {"damp", "dampen", "suppress", "attenuate", "curb"}
"""Causal verbs whose edge is negative: the cause makes its effect smaller ("the queue *damped*
the early arrivals" against "… *amplified* …")."""
# entity-to-entity uses of these stay relations (they are also vocabulary relations)
_RELATIONAL_CAUSAL = {"hold", "open", "pave", "trigger", "block", "mask", "hide", "conceal", "delay", "slow", "make",
                      "stop", "keep", "cover", "postpone", "let", "produce",
                      "amplify", "magnify", "intensify", "damp", "dampen", "suppress",
                      "attenuate", "curb", "push", "drive", "force"}

# subordinating markers: marker -> (edge, sign, status, direction) ; direction "sub->main" etc.
_MARKERS: dict[str, tuple[str, int, str, str]] = {
    "because": ("causes", 1, "observed", "sub>main"),
    "since": ("causes", 1, "observed", "sub>main"),
    "as": ("causes", 1, "observed", "sub>main"),
    "although": ("prevents", -1, "observed", "sub>main"),
    "though": ("prevents", -1, "observed", "sub>main"),
    "even though": ("prevents", -1, "observed", "sub>main"),
    "while": ("prevents", -1, "inferred", "sub>main"),
    "so that": ("enables", 1, "observed", "main>sub"),
    "so": ("causes", 1, "observed", "main>sub"),
    "in order": ("enables", 1, "observed", "main>sub"),
    "after": ("causes", 1, "inferred", "sub>main"),
    "once": ("causes", 1, "inferred", "sub>main"),
    "when": ("causes", 1, "inferred", "sub>main"),
    "whenever": ("causes", 1, "inferred", "sub>main"),
    "as soon as": ("causes", 1, "inferred", "sub>main"),
    "before": ("enables", 1, "inferred", "main>sub"),
    "until": ("prevents", 1, "inferred", "sub>main"),
    "if": ("enables", 1, "inferred", "sub>main"),
    "with": ("causes", 1, "inferred", "sub>main"),   # "with the gate closed, the sheep stayed"
}
# prepositional connectives on a clause: first word -> (edge, sign, status, label)
_PREP_CONNECTIVES: dict[str, tuple[str, int, str, str]] = {
    "because": ("causes", 1, "observed", "because of"),
    "due": ("causes", 1, "observed", "due to"),
    "owing": ("causes", 1, "observed", "owing to"),
    "thanks": ("causes", 1, "observed", "thanks to"),
    "despite": ("prevents", -1, "observed", "despite"),
}
# adverbial connectives linking the previous clause to this one
_ADVERBIALS: dict[str, tuple[str, int, str]] = {
    "so": ("causes", 1, "observed"), "therefore": ("causes", 1, "observed"),
    "thus": ("causes", 1, "observed"), "hence": ("causes", 1, "observed"),
    "consequently": ("causes", 1, "observed"), "accordingly": ("causes", 1, "observed"),
    "then": ("causes", 1, "inferred"), "afterwards": ("causes", 1, "inferred"),
    "later": ("causes", 1, "inferred"),
}
# noun / adjective → vocabulary attribute (beyond the vocabulary's own names and synonyms)
_EVENT_NOUN = re.compile(r"(tion|sion|ment|ing|ure|ance|ence|age|al)$")
"""Head nouns read as events (deverbal nominals): "deployment", "failure", "arrival"."""
_STATE_WORDS: dict[str, str] = {
    "failure": "failure", "fail": "failure", "crash": "failure", "break": "failure",
    "broken": "failure", "outage": "outage", "downtime": "outage", "overload": "overload",
    "deadlock": "deadlock", "corruption": "corrupted", "corrupt": "corrupted",
    "degradation": "degraded", "delay": "delayed", "latency": "delayed", "stale": "stale",
    "outdated": "stale", "stall": "deadlock", "exhaustion": "exhausted", "waste": "wasted_effort",
    "bias": "biased", "false": "false_claim", "wrong": "false_claim", "loss": "data_loss",
    "lose": "data_loss", "bug": "corrupted", "error": "corrupted", "inaccurate": "corrupted",
    "late": "delayed", "slow": "degraded", "unavailable": "outage", "down": "outage",
}
_STATE_WORDS.update({
    "breakdown": "failure", "collapse": "failure", "malfunction": "failure",
    "decline": "degraded", "worse": "degraded", "worsen": "degraded", "degrade": "degraded",
    "standstill": "deadlock", "stuck": "deadlock", "freeze": "deadlock", "freezing": "deadlock",
    "hang": "deadlock", "mistaken": "false_claim", "incorrect": "false_claim",
    "futile": "wasted_effort", "wasted": "wasted_effort", "pointless": "wasted_effort",
    "depletion": "exhausted", "shortage": "exhausted", "dry": "exhausted",
    "lack": "missing", "absence": "missing",
    "unseen": "unobserved", "unnoticed": "unobserved", "unchecked": "unverified",
    "unverified": "unverified", "untested": "unverified", "overloaded": "overload",
    "congestion": "overload", "saturation": "overload", "backlog": "delayed",
    "trouble": "failure", "fault": "failure", "problem": "failure",
    "weak": "degraded", "weaken": "degraded", "weakened": "degraded", "leak": "failure",
    "die": "failure", "dead": "failure", "burnt": "failure", "flat": "exhausted",
    "empty": "exhausted", "thin": "degraded", "poor": "degraded", "shrivel": "degraded",
    "spoil": "degraded", "sour": "degraded", "wilt": "degraded",
})
"""General English state words added to the table above (noun, adjective or participle)."""
_STATE_PHRASES: dict[str, str] = {
    "go down": "outage", "hold up": "delayed", "run out": "exhausted", "run dry": "exhausted",
    "run low": "exhausted", "fall behind": "delayed", "get bad": "degraded",
    "use up": "exhausted", "break down": "failure", "go wrong": "failure",
    "burn out": "failure", "die out": "failure", "give out": "failure", "come loose": "failure",
    "go flat": "exhausted", "go black": "outage", "go dark": "outage", "stop work": "failure",
    "wear out": "degraded", "fall apart": "failure", "split open": "failure",
    "give way": "failure", "catch fire": "harmed", "take damage": "harmed",
    "lose ground": "decreased", "gain ground": "increased", "lose value": "decreased",
    "gain value": "increased", "lose speed": "decreased", "gain speed": "increased",
    "pick up speed": "increased", "lose weight": "decreased", "gain weight": "increased",
}
"""Phrasal state verbs (lemmas of the participle phrase): "the disk going down" → outage; also a
verb with a bare idiomatic object ("the bridge gave *way*" → failure)."""
_RELATION_CUES: dict[str, tuple[str, ...]] = {
    "derives_from": ("copy from", "print from", "load from", "sample from", "derive from",
                     "compute from", "calculate from", "summarise from", "summarize from",
                     "compile from", "transcribe from", "replicate from", "build from",
                     "issue from", "extract from", "generate from", "export from",
                     "render from", "mirror from", "clone from", "populate from", "seed from"),
    "trusts_as_authoritative": ("treat as truth", "treat as authoritative", "treat as gospel",
                                "treat as fact", "treat as source", "take as truth",
                                "take as gospel", "accept as truth", "regard as truth",
                                "regard as authoritative", "take at word", "trust",
                                "rely on", "believe", "count on", "swear by", "take on trust",
                                "treat as authoritative", "treat as correct",
                                "treat as accurate", "accept as authoritative"),
    "diverges_from": ("drift from", "drift away from", "diverge from", "deviate from",
                      "disagree with", "drift out of", "go out of"),
    "reads_from": ("read from", "work off", "work from", "fetch from", "pull from",
                   "take from", "draw from", "read off", "load off", "consult", "query",
                   "look up", "book against", "price off", "price from", "build to",
                   "work to", "go by"),
    "writes_to": ("write to", "write into", "write in", "save to", "save into", "store in",
                  "push to", "put into", "dump into", "log to", "publish to", "update", "stamp"),
    "feeds_back_to": ("feed back into", "feed back to", "feed back", "loop back onto",
                      "loop back to", "loop back into"),
    "waits_for": ("wait for", "wait on", "await", "block on"),
    "compensates_for": ("make up for", "compensate for", "offset", "counterbalance",
                        "cover for"),
    "propagates_to": ("spread to", "cascade to", "propagate to", "ripple to", "pass to",
                      "spill over to", "spill into"),
    "has_priority_over": ("have priority over", "take priority over", "rank above",
                          "have precedence over", "get priority over",
                          "rank ahead of", "outrank", "take precedence over"),
    "competes_for": ("compete for", "contend for", "vie for", "fight for", "forage for"),
    "depends_on": ("depend on", "run on", "need", "require", "hinge on", "call"),
    "observes": ("watch", "monitor", "observe", "track", "keep eye on", "keep track of"),
    "ignores": ("ignore", "disregard", "overlook"),
    "retries": ("retry", "resend", "re-send", "re-try", "reissue", "re-issue", "resubmit"),
    "consumes": ("consume", "use up", "draw down", "eat up", "burn through", "deplete",
                 "feed on", "tie up", "occupy", "graze down"),
    "schedules": ("schedule", "dispatch"),
    "limits": ("limit", "cap", "throttle", "restrict", "ration"),
    "triggers": ("trigger", "set off", "initiate", "kick off", "spark"),
    "reports_absence": ("report as missing", "report as absent", "report as lost",
                        "flag as missing", "mark as missing"),
    "holds_lock": ("hold", "hold lock", "keep hold of", "keep hold on", "lock"),
    "races_with": ("race with", "race against", "collide with", "clash with"),
    "assumes": ("assume", "presume", "take for granted", "assume that", "believe that",
                "think that", "presume that", "suppose that", "expect that"),
    "amplifies": ("amplify", "magnify", "boost", "intensify"),
    "validates": ("validate", "verify", "check", "cross-check", "vet", "check against",
                  "verify against", "validate against", "recheck", "re-check", "double-check",
                  "inspect", "audit", "examine", "test", "confirm", "proofread"),
    "configures": ("configure", "set up"),
    "preempts": ("preempt", "pre-empt", "interrupt"),
}
"""A small, hand-written cue lexicon per vocabulary predicate: general English verbs (lemma +
particle/preposition, or verb + a later "prep + word" complement) that name the relation in
ordinary prose, consulted after the vocabulary's own names/synonyms and before the embedder."""
_CUE_INDEX = {cue: name for name, cues in _RELATION_CUES.items() for cue in cues}
_COPY_VERBS = {"copy", "export", "transcribe", "load", "replicate", "mirror", "clone",
               "download", "import", "duplicate", "print", "dump", "extract", "upload",
               "photocopy", "scan", "trace", "sync", "port", "migrate"}
"""Verbs of copying whose "into / onto / to" object is the copy of their direct object
("exported the table into a spreadsheet" → the spreadsheet derives from the table)."""
_RESPONSE_VERBS = {"react to", "respond to", "act on", "answer", "heed", "obey", "follow up",
                   "follow up on", "reply to", "attend to", "acknowledge"}
"""Verbs of responding: negated ("did not react to the debris") the first role ignores the
second."""
_SUPPLIED_FROM_VERBS = {"run", "power", "feed", "supply", "fuel", "heat", "light", "water",
                        "serve", "operate", "drive", "charge", "cool", "irrigate", "pump"}
"""Verbs whose "from" source keeps their object going ("ran the lamp from one generator",
"fed every ward from one boiler"): the object depends on the source."""
_CHECK_VERBS = {"check", "verify", "validate", "test", "inspect", "confirm", "audit", "review",
                "vet", "cross-check", "compare", "recheck", "re-check", "double-check",
                "examine", "proofread"}
_POSSESSION_VERBS = {"have", "get", "receive", "obtain"}
"""Verbs of having or getting: denied ("had no paper", "did not get water") they read as
``lacks``."""
_HOLDING_VERBS = {"hold", "contain"}
"""Verbs of holding: with a denied object ("the forest held no oak", "the tank contained hardly
any water") the first role goes without the second (``lacks``); "the dam did not hold" is no
such thing."""
_PROVISION_VERBS = {"keep", "store", "stock", "carry", "own", "buy", "order", "build",
                    "make", "train", "hire", "install", "fit", "prepare", "save", "reserve",
                    "book", "bring", "fetch", "dig", "write", "plan", "arrange", "organise",
                    "organize", "call", "provide", "supply", "add", "acquire", "purchase",
                    "stockpile", "set aside", "lay in", "put aside"}
"""Verbs of getting, keeping or making something ready: denied with a subject ("kept no notes",
"never ordered more butter", "trained no apprentice") the first role goes without the second
(``lacks``); denied with no one doing it ("nobody had built a generator", "no drive was
called") the thing is ``missing``."""
_MAINTAIN_VERBS = {"repair", "fix", "mend", "maintain", "service", "clean", "oil", "patch",
                   "clear", "dredge", "prune", "weed", "paint", "replace", "restore", "tend"}
"""Verbs of upkeep: denied ("nobody repaired the pump", "the hedge was never pruned") their
object is ``degraded``."""
_APPEAR_VERBS = {"show up", "show up in", "show up on", "appear", "appear in", "appear on",
                 "register", "register in", "register on", "surface", "surface in", "show",
                 "show in", "show on", "turn up", "turn up in", "come up", "come up in"}
"""Verbs of showing up somewhere: denied ("the shortfall never showed up in the report") the
first role is ``unobserved``."""
_OMIT_VERBS = {"skip", "omit", "forget", "neglect", "fail", "stop", "avoid", "forgo", "forego",
               "cease", "quit", "abandon", "drop"}
"""Verbs whose verbal complement is not done ("skipped checking the signatures", "forgot to
update the map", "stopped testing"): the complement reads as its own denial."""
_UPDATE_VERBS = {"update", "refresh", "revise", "amend", "correct", "sync", "resync",
                 "synchronise", "synchronize", "change", "renew", "recompute", "recalculate",
                 "reprint", "reload", "re-export", "reexport", "rerun", "redo", "redraw",
                 "resurvey", "reimport", "recopy"}
"""Verbs whose negation leaves their object out of date ("nobody updated the map" → stale)."""
_SEE_VERBS = {"see", "notice", "detect", "observe", "watch", "monitor", "spot", "track", "hear",
              "find", "discover", "catch", "sight", "glimpse", "witness", "look", "listen",
              "read"}
_TELL_VERBS = {"tell", "warn", "inform", "notify", "alert", "remind", "brief", "advise",
               "forewarn", "caution", "signal"}
"""Verbs of telling someone: denied to their receiver ("nobody told the owner", "the crew was
never warned") they leave it ``uninformed``."""
_WHOLE_SHARES = {"all", "most", "much", "bulk", "majority", "whole", "rest"}
"""Partitive heads naming (nearly) the whole of something ("held almost *all* of it")."""
_HOLD_READINGS = {"keeps", "holds_lock", "uses", "contains"}
"""Readings of holding or using that, over (nearly) the whole of a thing, use it up (taking
stays ``acquires``: "took most of the nectar")."""
_NOBODY = {"nobody", "noone", "none"}
_CONTENT_NOUNS = {"data", "datum", "figure", "number", "information", "input", "reading",
                  "value", "price", "fact", "detail", "order", "instruction", "count", "quote",
                  "rate", "total"}
"""Nouns (entity heads, singular) for what a source holds: "takes *its figures* from the ledger",
"fetches *its data* from the cache" — the source, not the content, is the verb's object."""
_ABSENCE_WORDS = {"missing", "absent", "lost", "gone", "vanished", "dead", "down", "offline"}
"""Words of absence after "as" on a reporting verb ("reports the pump *as missing*")."""
_REPORT_VERBS = {"report", "flag", "mark", "list", "record", "log", "declare", "register",
                 "show", "count", "give"}
"""Verbs that, with an "as <absence word>" complement, report the object absent: the subject
``reports_absence`` of the object."""
_FUNCTION_VERBS = {"work", "run", "operate", "function", "perform", "behave"}
"""Verbs of functioning: with an "as designed" clause or a "normally" adverb the holder is in the
vocabulary's ``correct`` state ("the pump working as designed", "the router running normally")."""
_AS_PLANNED = {"design", "intend", "plan", "expect", "specify", "build", "engineer"}
"""Verbs of an "as …" clause on a functioning verb that say it does what it is meant to do."""
_PROPERLY = {"normally", "properly", "correctly", "smoothly", "nominally", "fine", "flawlessly"}
"""Adverbs on a functioning verb that say it does what it is meant to do."""
_FUNCTION_NOUNS = {"operation", "functioning", "working", "running", "performance", "function"}
"""Nouns of functioning: with a :data:`_NORMAL_ADJ` modifier ("normal operation of the pump") the
holder is ``correct``."""
_NORMAL_ADJ = {"normal", "proper", "correct", "regular", "smooth", "nominal", "healthy",
               "intended", "flawless"}
_TRUE_WORDS = {"current", "true", "accurate", "correct", "right", "valid", "authoritative",
               "reliable", "fresh", "exact", "complete", "final", "official", "genuine",
               "up-to-date", "gospel", "fact", "truth"}
"""What "as if it were …" grants its subject: being the truth ("as if it were current")."""
_HOLDER_PREPS = {"of", "by", "in", "on", "at", "within", "inside", "across"}
_FAILURE_CUES = {"fail", "failed", "failure", "fails", "break", "broke", "broken", "error",
                 "errors", "wrong", "false", "outage", "crash", "crashed", "crashes", "lost",
                 "loss", "stale", "leak", "leaked", "leaks", "bug", "corrupt", "corrupted",
                 "deadlock", "timeout", "overload", "overloaded", "incident", "missed", "down"}
_FIX_CUES = {"fixed", "fix", "fixes", "solved", "solve", "resolved", "resolve", "repaired",
             "patched", "mitigated", "remedied", "by adding"}
_FIX_NOUNS = r"(?:fix|remedy|solution|workaround|cure|mitigation|resolution)"
_FIX_VERBS = r"(?:fix|fixed|remedy|remedied|resolve|resolved|solve|solved|mitigate|mitigated)"
_FIX_OPENERS = [
    # "The fix is to …", "The solution was to …", "The remedy would be to …"
    re.compile(rf"^(?:the|a|one|our)\s+(?:\w+\s+)?{_FIX_NOUNS}\s+(?:here\s+)?"
               r"(?:is|was|would\s+be|will\s+be|has\s+been)\s+to\s+", re.I),
    # "To fix this, …", "To resolve the problem, …"
    re.compile(rf"^to\s+{_FIX_VERBS}\s+(?:this|it|that|them|the\s+\w+(?:\s+\w+)?)\s*,\s*",
               re.I),
    # "… was fixed by …", "… has been resolved by …"
    re.compile(r"\b(?:was|were|is|are|has\s+been|have\s+been|got)\s+"
               rf"{_FIX_VERBS}\s+by\s+", re.I),
    # "… fixed it by …", "we resolved the outage by …"
    re.compile(rf"\b{_FIX_VERBS}\s+(?:it|this|that|them|the\s+\w+(?:\s+\w+)?)\s+by\s+",
               re.I),
]
"""Fix cues: the operator is the text after the match (see ``fix_operator`` in the docstring)."""
_DECREASE_WORDS = {"slower", "cooler", "colder", "shorter", "lower", "smaller", "fewer",
                   "weaker", "shrink", "decrease", "decline", "drop", "fall", "subside",
                   "diminish", "dwindle", "slow"}
"""Words naming a decrease at a causal link's end; the edge's sign is the product of its ends'
directions (see ``_end_direction``)."""
_ARTICLES = {"the", "a", "an"}
_EDGE_WORDS = {"causes": "causes", "prevents": "prevents", "enables": "enables",
               "masks": "hides", "delays": "delays"}


_ROLE_WORDS = re.compile(
    r"\bthe (first|second|two) roles?('s)?\b|\bthe roles?('s)?\b|\bthe second('s)?\b"
    r"|\bthe first\b")


_IRREGULAR_PLURALS = {"children": "child", "people": "person", "men": "man", "women": "woman",
                      "mice": "mouse", "geese": "goose", "teeth": "tooth", "feet": "foot",
                      "oxen": "ox", "sheep": "sheep", "fish": "fish", "deer": "deer"}


def _singular(w: str) -> str:
    """A rule-based singular of a noun's surface form: the same word always gets the same key,
    whatever the tagger thought of it in a given sentence."""
    if w in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[w]
    if len(w) <= 3 or w.endswith(("ss", "us", "is", "ous")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "ches", "shes", "xes", "zes")):
        return w[:-2]
    if w.endswith("s"):
        return w[:-1]
    return w


_BAD_ED_LEMMA = re.compile(r"(?:ck|sh|[aeou]y)e$")


def _verb_lemma(lemma: str, surface: str) -> str:
    """The tagger's lemma of a verb, with one repair: a past form it does not know loses only
    its "d" ("resurveyed" → "resurveye", "rechecked" → "rechecke"), a stem no English verb ends
    in (-cke, -she, -aye/-eye/-oye/-uye); the lemma is then the surface form without "ed"."""
    if surface.endswith("ed") and lemma == surface[:-1] and _BAD_ED_LEMMA.search(lemma) \
            and len(surface) > 5:
        return surface[:-2]
    return lemma


def _strip_roles(definition: str) -> str:
    """A definition without its role words: "the first role takes data from the second" →
    "takes data from"."""
    return " ".join(_ROLE_WORDS.sub("", definition).replace(",", " ").split())


def _snake(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    if not s or not s[0].isalpha():
        s = "r_" + s
    return s[:60]


# -- animacy (pronoun resolution: "he"/"she" name a person, "it" a thing) -----------------------
_PERSONAL_PRONOUNS = {"he", "she", "him", "her"}
# common nouns for people (words that also name devices or programs — agent, host, driver,
# reader, player, writer — are left out: "it" may well stand for them)
_PERSON_NOUNS = {
    "person", "man", "woman", "child", "boy", "girl", "baby", "parent", "mother", "father",
    "son", "daughter", "wife", "husband", "friend", "neighbour", "neighbor", "guest",
    "customer", "client", "patient", "owner", "worker", "employee", "manager", "boss",
    "director", "officer", "clerk", "doctor", "nurse", "surgeon", "vet", "teacher", "pupil",
    "student", "pilot", "captain", "farmer", "caretaker", "engineer", "mechanic", "cook",
    "chef", "waiter", "buyer", "seller", "shopper", "tenant", "landlord", "resident",
    "citizen", "voter", "coach", "author", "editor", "lawyer", "inspector", "guard",
    "soldier", "king", "queen", "mayor", "official", "volunteer", "visitor", "traveller",
    "traveler", "passenger", "hiker", "colleague", "supervisor", "administrator", "developer",
    "programmer", "researcher", "apprentice", "assistant", "baker", "butcher", "gardener",
    "plumber", "builder", "tailor", "priest", "judge", "sailor", "fisher", "skipper",
    "shepherd", "miner", "banker", "trader", "dealer", "accountant", "secretary", "porter"}
_PERSON_SUFFIXES = ("ist", "ian", "keeper", "man", "men", "woman", "women", "person")
# verbs whose subject is a mind (seeing and telling are left out: sensors see, alarms warn)
_MIND_VERBS = {"know", "believe", "think", "suppose", "decide", "want", "hope", "learn",
               "remember", "forget", "realise", "realize", "greet", "agree", "refuse",
               "complain", "worry", "demand", "praise", "blame", "insist", "admit", "wish",
               "fear", "doubt", "love", "hate", "prefer", "pray", "laugh", "smile", "wonder",
               "imagine", "intend", "promise", "apologise", "apologize"}
