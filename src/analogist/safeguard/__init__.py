"""The analogy safeguard: checking historical and classical analogies used in arguments (seed 003).

An analogy used as evidence in a debate turn must state at least two structural, causally
relevant similarities and at least one substantive difference, and analogy content should stay
under about 15% of the turn; an analogy that fails the structural rules is "heuristic only" and
cannot be primary evidence. This module checks a turn — JSON (the shape below) or plain text — and
returns a :class:`SafeguardReport`.

Input (JSON, every field optional; a missing field is a finding, not a crash)::

    {"arguments": [{"text": str, "analogies": [{"source": str, "claim": str,
                    "similarities": [str], "differences": [str]}]}],
     "historical_wisdom": [{"text": str, "source": str, "key_differences": [str],
                            "applicability_caveat": str}]}

Modes (seed 003, "Input v3"): analogies under ``arguments`` are checked in **strict** mode,
entries of ``historical_wisdom`` in **advisory** mode; ``mode=`` forces one mode for both.

Strict mode, seed 003 rules 1–3:

* **Rule 1, similarities** — at least :data:`MIN_SIMILARITIES` (2, seed: "At least 2
  similarities") stated similarities that are structural and causally relevant. Each stated
  similarity is mapped onto two declared vocabularies: the relation predicates of the signature
  vocabulary (:func:`analogist.signature.default_signature_vocabulary`: name, synonyms and a small
  hand-written cue table, English and Chinese) and the mechanism classes of the foresight
  vocabulary (:func:`analogist.foresight.event.mechanism_definitions`, with a hand-written cue
  table). It counts when it names a *causal* relation between roles or a mechanism class (every
  mechanism class is a causal factor by definition). It does not count when it names nothing of
  either ("both involve money" — the seed's example of too vague), names only a surface feature
  (time, place, size, names), names only a shared word or label ("both were called bubbles"), or
  names only a non-causal relation (containment, ownership, measurement…). Two similarities that
  map onto the same concepts count once. When both sides of the analogy resolve to events of the
  historical corpus, each counted similarity that names a mechanism class must also be present
  in both events (else it is "not supported by the structure mapping" and does not count).
* **Rule 1, differences** — at least :data:`MIN_DIFFERENCES` (1, seed: "At least 1 key structural
  difference") substantive difference: one that names a mechanism, a causal relation or a
  structural institution (regulation, central bank, deposit insurance, reserves…) or states a
  causal contrast. Token acknowledgements ("no analogy is perfect", "times have changed") and
  surface differences (dates, places, names) are trivial (seed: "Must be substantive, not
  trivial").
* **Rule 2, content share** — flagged (never failed: seed "flag (not auto-fail; Judge decides)")
  when the analogy content share of the turn's arguments exceeds :data:`SHARE_THRESHOLD` (0.15,
  seed: "under ~15%"). *Departure:* the seed asks for an LLM semantic judgement; without an LLM we
  give a deterministic estimate (tokens of analogy sentences over tokens of argument text) and
  label it an estimate (:attr:`SafeguardReport.share_method`); with an LLM configured the semantic
  estimate is used and the deterministic one is kept alongside.
* **Rule 3, classification** — pass → ``supporting_evidence``, fail → ``heuristic_only``; every
  failure carries a recommendation, and every failed analogy is told to strengthen the claim with
  non-analogy evidence (seed rule 3).

Advisory mode (seed 003, ``historical_wisdom``): ``key_differences`` must hold at least one
substantive difference (same test as above), ``applicability_caveat`` must be present and
meaningful (at least :data:`MIN_CAVEAT_WORDS` words or :data:`MIN_CAVEAT_CHARS_ZH` Chinese
characters, not boilerplate, and it states a condition or names a mechanism); no content share
limit. *Departure — the grade thresholds are ours* (the seed names the grades, not the rule):
``strong_parallel`` = at least 2 structural parallels named in the entry's text (or matched by the
corpus mapping) with a substantive difference and a meaningful caveat; ``moderate_parallel`` = at
least 1 parallel and a substantive difference or a meaningful caveat; ``weak_parallel`` otherwise,
with the recommendation that the reference may not add value (seed advisory step 5).

Differences the author missed (issue 7 step 4): when the analogy's source and target both resolve
to events of the bundled historical corpus, :func:`analogist.foresight.align.align` maps them and
its alignable differences (same position, another mechanism) and unmapped causal factors are
named, unless the author's differences already name that mechanism. When a side is not a corpus
event but both sides are given as descriptive text, both are encoded with the deterministic
encoder and judged (:func:`analogist.judge.judge`); its alignable differences and unknowns are
named the same way. *Departure:* the text-encoded mapping is used only to name missed differences,
never to reject a similarity (the deterministic encoder writes drafts).

Plain text: :func:`find_analogies` is a deterministic pattern finder (English and Chinese analogy
markers, corpus event names and aliases, a small Chinese alias table, "similarity 1: …", "both
…", "the difference is …", 相似之处 / 不同之处 …). With an LLM configured (role ``safeguard``), the
LLM finder (prompt ``safeguard_find.v1``) adds the passages it finds; every LLM passage must quote
the text verbatim and every similarity/difference it reports must be grounded in its quote, else
it is dropped with a note (the model may not invent what the author did not state). The checks
themselves are always deterministic. Without an LLM the LLM steps report
:data:`~analogist.llm.base.NO_LLM_REASON` in :attr:`SafeguardReport.skipped`.

Output: :meth:`SafeguardReport.to_json` gives exactly the issue's JSON shape; ``index`` counts
the analogies of a section in order (across arguments). :meth:`SafeguardReport.details` adds the
share method, notes, skipped steps and the location of each analogy; :meth:`SafeguardReport.render`
is the human table.
"""

from __future__ import annotations

from analogist.safeguard.assess import ItemAssessment, assess_difference, assess_similarity
from analogist.safeguard.checker import Safeguard, check_text, check_turn
from analogist.safeguard.finder import FoundAnalogy, estimate_share, find_analogies
from analogist.safeguard.lexicon import Concept, concepts_in
from analogist.safeguard.llm_steps import llm_find, llm_share
from analogist.safeguard.report import AnalogyCheck, SafeguardReport, report_json
from analogist.safeguard.rules import (
    MIN_CAVEAT_WORDS,
    MIN_DIFFERENCES,
    MIN_SIMILARITIES,
    SHARE_THRESHOLD,
)
from analogist.safeguard.turn import (
    Analogy,
    Argument,
    HistoricalWisdom,
    Turn,
    load_turn,
    parse_turn,
)

__all__ = [
    "MIN_CAVEAT_WORDS", "MIN_DIFFERENCES", "MIN_SIMILARITIES", "SHARE_THRESHOLD", "Analogy",
    "AnalogyCheck", "Argument", "Concept", "FoundAnalogy", "HistoricalWisdom", "Safeguard",
    "SafeguardReport", "Turn", "assess_difference", "assess_similarity", "check_text",
    "check_turn", "concepts_in", "estimate_share", "find_analogies", "load_turn", "parse_turn",
    "ItemAssessment", "llm_find", "llm_share", "report_json",
]
