"""Everyday English verbs and state words onto the vocabulary's domain-neutral predicates.

The general tables of :mod:`analogist.encode.relations` (``_GENERAL_RELATIONS``) and
:mod:`analogist.encode.states` (``_GENERAL_STATES``) were written for the mechanisms the
vocabulary was made for (supply, depletion, checks, signals); a story of ordinary life or of a
natural process is told in other verbs — "the roots absorb water", "bees carry pollen", "the egg
becomes a larva", "he faced every challenge" — and each of those was written as a surface term,
which no story in another domain shares. These two tables read the commonest of them by their
meaning in general English (the sense a learner's dictionary gives first), one predicate per verb,
never by any story's words: a transitive verb with its particle or preposition when that decides
the reading ("turn into" is becoming, "turn" alone a change), a state word by what it says of
its holder. A verb whose first sense is a state of its subject ("leave", "rise", "run") stays in
the state table only; a verb whose common senses fall under different predicates ("form": make,
make up or come into being; "develop": make, grow or mature) is in neither table and stays a
proposed term. The surface verb is kept as provenance (the link record, the triples).
"""

from __future__ import annotations

EVERYDAY_RELATIONS: dict[str, tuple[str, ...]] = {
    # taking in: the first role obtains or takes in the second
    "acquires": ("absorb", "reabsorb", "soak up", "take in", "inhale", "breathe in", "swallow",
                 "ingest", "suck up", "suck in", "draw in", "grab", "grasp", "seize", "snatch",
                 "achieve", "attain", "accomplish", "accept", "inherit", "win over",
                 "accumulate", "amass", "pluck"),
    # making: the first role creates or emits the second
    "produces": ("spawn", "yield", "bear", "craft", "design", "construct",
                 "fashion", "shape into", "weave", "spin", "sculpt", "mould", "mold",
                 "forge into", "formulate", "devise", "sing", "compose into"),
    # letting out: the first role pushes or lets the second out of itself
    "expels": ("exhale", "breathe out", "expel", "excrete", "secrete", "discharge", "exude",
               "give off", "give out", "let out", "spit out", "eject", "vent", "cough up",
               "pump out"),
    # changing: the first role alters the content, position or condition of the second
    "changes": ("transform", "convert", "shape", "sharpen", "refine", "purify", "clean",
                "wash", "polish", "improve", "enhance", "repair", "fix", "restore", "mend",
                "organize", "organise", "arrange", "compress", "squeeze", "press", "flatten",
                "stretch", "bend", "fold", "twist", "rotate", "stir", "shake", "affect",
                "influence", "impact", "heat up", "warm", "chill", "freeze", "dry", "wet",
                "soften", "harden", "thicken", "dissolve", "decorate", "prepare", "treat",
                "process into"),
    # becoming: the first role turns into the second
    "becomes": ("become", "turn into", "transform into", "develop into", "grow into",
                "mature into", "evolve into", "change into", "hatch into", "morph into",
                "metamorphose into", "transition into", "condense into", "solidify into",
                "harden into", "crystallize into", "crystallise into", "turn to"),
    # consuming: the first role uses up or processes the second
    "consumes": ("break down", "digest", "process", "decompose", "metabolise", "metabolize",
                 "chew", "consume", "swallow up"),
    # harming: the first role damages, injures or destroys the second
    "harms": ("weaken", "corrode", "wear down", "wear away", "wear out", "undermine",
              "infect", "invade", "attack", "bite", "scratch", "break", "smash", "tear",
              "rip", "burn down", "threaten", "endanger", "punish", "beat", "bury",
              "overwhelm", "overpower", "exploit", "hijack"),
    # removing: the first role removes or ends the function of the second
    "disables": ("defeat", "conquer", "overcome", "solve", "resolve", "eliminate", "eradicate",
                 "extinguish", "end", "cure", "neutralise", "neutralize", "kill off"),
    # moving through: the first role travels to, into, through or across the second
    "moves_through": ("go", "go to", "go through", "go into", "go across", "head to",
                      "head for", "head into", "return to", "come to", "come into",
                      "come through", "visit", "explore", "navigate", "traverse", "tour",
                      "wander", "roam", "roll down", "roll into", "glide through", "slide down",
                      "slide into", "circulate", "circulate through", "circulate throughout",
                      "migrate", "migrate to", "move to", "move into", "move through",
                      "pass through", "run through", "exit", "escape from", "emerge from",
                      "jump into", "dive into", "march", "hike", "journey", "commute"),
    # carrying: the first role carries or moves the second from one place to another
    "transports": ("carry", "transport", "convey", "ferry", "haul", "bring in", "transmit",
                   "pass along", "transfer", "shuttle", "push", "pull", "drag", "lift",
                   "throw", "toss", "hurl", "fling", "propel", "tow", "wheel", "sweep",
                   "carry away", "wash away", "blow away"),
    # giving: the first role gives, sends or sells the second to others
    "supplies": ("hand over", "feed into", "satisfy", "fulfill", "fulfil", "award",
                 "present", "contribute", "donate to", "share"),
    # putting: the first role puts, adds or inserts the second somewhere
    "places": ("put", "place", "insert", "deposit", "add", "add to", "set down", "lay down",
               "install", "position", "hang", "stack", "pile", "bury in", "inject",
               "put in", "put on", "slide in", "tuck"),
    # holding: the first role holds, stores or looks after the second
    "keeps": ("grip", "clutch", "hug", "embrace", "cradle", "preserve", "conserve",
              "cherish", "treasure"),
    # shielding: the first role shields the second from harm
    "protects": ("protect", "shield", "defend", "shelter", "insulate", "safeguard",
                 "cushion", "armour", "armor", "screen from"),
    # helping: the first role helps, sustains or nurtures the second
    "supports": ("support", "sustain", "nurture", "foster", "nourish", "care for",
                 "look after", "assist", "aid", "encourage", "comfort", "reassure", "uphold",
                 "strengthen", "reinforce", "bolster", "empower"),
    # joining: the first role joins, binds or combines with the second
    "attaches_to": ("attach", "attach to", "bind", "bind to", "connect", "connect to",
                    "connect with", "link", "link to", "join", "tie", "tie to", "fasten",
                    "glue", "stick to", "cling to", "combine with", "merge with", "bond with",
                    "react with", "fuse with", "associate with", "latch onto", "hook"),
    # containing: the second role is a part or member of the first
    "contains": ("surround", "enclose", "envelop", "encase", "wrap", "wrap around", "cover",
                 "coat", "line", "fill with", "consist of", "carry within"),
    # observing: the first role watches, notices or takes in the state of the second
    "observes": ("understand", "realize", "realise", "recognize", "recognise", "identify",
                 "interpret", "perceive", "sense", "feel", "experience",
                 "study", "analyse", "analyze", "investigate", "watch", "view", "observe",
                 "scan", "smell", "taste", "locate", "remember", "recall", "consider",
                 "reflect on", "think about", "wonder about"),
    # seeking: the first role searches for, pursues or wants the second
    "seeks": ("look for", "search for", "search", "seek", "hunt for", "pursue", "want",
              "crave", "desire", "long for", "wish for", "strive for", "aim for",
              "explore for", "listen for", "dig for", "fish for", "reach for"),
    # signalling: the first role sends a message or status to the second
    "signals": ("express", "communicate", "say", "speak", "talk to", "speak to",
                "teach", "instruct", "educate", "explain", "describe", "reveal", "convey to",
                "urge", "invite", "thank", "congratulate", "warn of", "guide", "direct",
                "lead", "text"),
    # triggering: the first role's action or event starts the second
    "triggers": ("start", "begin", "launch", "initiate", "ignite", "kindle", "spark", "light",
                 "activate", "stimulate", "provoke", "prompt", "set off", "kick off",
                 "awaken", "wake up", "excite", "inspire", "motivate"),
    # configuring: the first role sets the parameters under which the second runs
    "configures": ("regulate", "control", "manage", "govern", "steer", "moderate", "balance",
                   "coordinate", "organise into", "organize into"),
    # filtering and isolating
    "filters": ("sift", "strain", "screen", "sieve", "purge"),
    "isolates": ("separate", "isolate", "quarantine", "segregate", "divide", "detach"),
    # depending: the first role needs the second
    "depends_on": ("need", "require", "lean on", "live on",
                   "survive on", "thrive on"),
    # standing for
    "proxies_for": ("represent", "symbolize", "symbolise", "stand for", "signify", "embody"),
    # resisting: the first role stops the second from making progress
    "blocks": ("resist", "fight", "fight off", "repel", "deflect", "ward off", "fend off",
               "withstand", "hold off", "keep out", "keep away"),
}
"""Everyday transitive verbs, by predicate (see the module docstring)."""

EVERYDAY_STATES: dict[str, str] = {
    **dict.fromkeys(("continue", "persist", "last", "survive", "endure",
                     "keep going", "go on", "carry on", "thrive", "flourish", "live", "alive",
                     "awake", "busy", "play", "perform", "dance", "sing", "flow",
                     "travel", "race", "roll", "fly", "swim", "spin", "rotate",
                     "circulate", "glide", "float", "wander", "act", "begin", "start"), "active"),
    **dict.fromkeys(("stronger", "larger", "bigger", "taller", "louder", "brighter", "hotter",
                     "warmer", "faster", "accumulate", "build up", "pile up", "intensify",
                     "strengthen", "deepen", "widen", "heat up", "mature",
                     "ripen", "blossom", "thrive on"), "increased"),
    **dict.fromkeys(("weaker", "smaller", "shorter", "quieter", "dimmer", "colder", "cooler",
                     "slower", "weaken", "diminish", "subside", "cool", "cool down",
                     "calm down", "slow", "slow down", "evaporate", "dissolve", "disperse",
                     "dissipate", "thin", "recede", "retreat", "wane", "ebb"), "decreased"),
    **dict.fromkeys(("transform", "transformed", "turn into", "convert",
                     "converted", "evolve", "evolved", "adapt", "adapted", "mutate",
                     "transition", "reshape", "reshaped", "freeze", "frozen", "thaw",
                     "condense", "solidify", "harden", "soften", "crystallize",
                     "crystallise"), "changed"),
    **dict.fromkeys(("tired", "weary", "worn out", "fatigued", "sleepy", "drowsy"),
                    "exhausted"),
    **dict.fromkeys(("sad", "upset", "afraid", "scared", "frightened", "anxious", "worried",
                     "lonely", "miserable", "grieve", "cry", "weep", "suffering",
                     "heartbroken", "devastated", "hurting", "pain", "painful"), "harmed"),
    **dict.fromkeys(("vanish", "disappear", "escape", "fly away", "run away",
                     "migrate", "emigrate", "retire", "resign", "move out"), "departed"),
    **dict.fromkeys(("emerge", "arise", "hatch", "sprout", "blossom out", "occur",
                     "happen", "born", "birth"),
                    "arrived"),
    **dict.fromkeys(("confused", "forgetful", "oblivious", "ignorant"), "uninformed"),
    **dict.fromkeys(("broken", "shattered", "destroyed", "dead", "defeated", "crash",
                     "crumble", "stall", "stumble"), "failure"),
    **dict.fromkeys(("weak", "fragile", "frail", "brittle", "worn", "tarnished", "dirty",
                     "polluted", "contaminated", "rotten", "stuck"), "degraded"),
    **dict.fromkeys(("ready", "able", "prepared", "capable", "willing", "eager", "determined",
                     "motivated", "equipped", "poised"), "ready"),
    **dict.fromkeys(("healthy", "fit", "stable", "safe", "secure", "balanced", "clean",
                     "fixed", "repaired", "restored", "healed", "cured", "recover", "heal"),
                    "correct"),
}
"""Everyday state words, verbs of state and comparatives, by state (see the module docstring)."""
