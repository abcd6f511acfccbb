"""The deterministic encoder's parameters (one dataclass) and its error."""

from __future__ import annotations

from dataclasses import dataclass

from analogist.errors import AnalogistError
from analogist.params import bounded, check_bounds, one_of


class EncodeError(AnalogistError):
    """Episode text the deterministic encoder cannot read."""


@dataclass(frozen=True)
class EncoderParams:
    """Every threshold of the deterministic encoder.

    Attributes:
        max_roles: most roles kept (by salience = mentions + ``edge_weight`` × edge participation).
        edge_weight: salience weight of one participation in a causal edge.
        max_tag_chars: longest role tag.
        max_phrase_tokens: longest entity phrase, in tokens (the modifiers nearest the head kept).
        embed_threshold: least cosine between a verb-phrase pattern and a definition to type it.
        embed_margin: least cosine margin of the best definition over the runner-up.
        lexical_threshold: least share of the verb's content words found in a predicate's name,
            synonyms or definition (lexical typing, used when there is no embedder).
        max_level_chars: longest L0/L1 text (whole sentences kept).
        max_control_share: largest share of control/unassigned/replacement characters accepted.
        w_coverage, w_typed, w_margin, w_observed: confidence weights (sum to 1).
        no_edge_observed: the observed-share term when there are no edges.
        tag_style: ``"neutral"`` (default) → role tags ``R1``, ``R2``, … in order of first
            mention; ``"noun"`` → the upper-cased head noun (``CACHE``). Neutral is the default
            because it keeps every abstract level free of surface words by construction (seed
            000 §9: a good abstraction passes faithfulness and fails de-surfacing). Measured by
            ``benchmarks/encoder_levels.py`` (150 familiar-domain PARB episodes per split, USE
            embedding judge): neutral tags — L2 faithfulness 0.33 dev / 0.30 test (chance 0.17,
            CI above it), de-surfacing 0.21 / 0.19 (chance 0.17, CI includes it); noun tags —
            faithfulness 0.69 / 0.77, de-surfacing 0.18 / 0.18. Noun tags find the original
            text more often because the tags *are* its head nouns; the embedding judge, which
            guesses a domain from its name alone, does not see that as domain evidence, a
            stronger judge may. (An earlier encoder that made state nouns into roles leaked
            visibly: de-surfacing 0.25, CI above chance.) Role descriptions and
            ``surface.entities`` keep the entity phrases either way.
        state_threshold: least cosine between a state phrase ("running dry") and an attribute
            definition to type a state atom by the embedder (with ``embed_margin``).
    """

    max_roles: int = bounded(8, lo=1, integer=True)
    edge_weight: int = bounded(2, lo=0, integer=True)
    max_tag_chars: int = bounded(12, lo=1, integer=True)
    max_phrase_tokens: int = bounded(4, lo=1, integer=True)
    embed_threshold: float = bounded(0.62, lo=-1.0, hi=1.0)
    embed_margin: float = bounded(0.06, lo=0.0, hi=2.0)
    lexical_threshold: float = bounded(1.0, lo=0.0, hi=1.0)
    max_level_chars: int = bounded(4000, lo=1, integer=True)
    max_control_share: float = bounded(0.01, lo=0.0, hi=1.0)
    w_coverage: float = bounded(0.35, lo=0.0, hi=1.0)
    w_typed: float = bounded(0.25, lo=0.0, hi=1.0)
    w_margin: float = bounded(0.15, lo=0.0, hi=1.0)
    w_observed: float = bounded(0.25, lo=0.0, hi=1.0)
    no_edge_observed: float = bounded(0.5, lo=0.0, hi=1.0)
    tag_style: str = one_of("neutral", ("neutral", "noun"))
    state_threshold: float = bounded(0.6, lo=-1.0, hi=1.0)

    def __post_init__(self) -> None:
        check_bounds(self)
