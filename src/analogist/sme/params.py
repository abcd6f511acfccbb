"""Parameters of the structure-mapping engine.

Names follow the reference implementation (SME v4, Forbus, Ferguson, Lovett & Gentner 2017;
Falkenhainer, Forbus & Gentner 1989) and the regression tests' parameter set; the defaults are the
values of those regression tests (``data/sme4/expected.json`` in the shared data).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from analogist.errors import AnalogistError
from analogist.params import bounded, check_bounds


@dataclass(frozen=True, slots=True)
class SMEParams:
    """SME parameters (reference names, reference regression-test values).

    Attributes:
        greedy_cutoff: a global mapping must score at least this fraction of the best one.
        greedy_max_mappings: at most this many global mappings (the reference's ``greedy-max-#``).
        same_function: local score of a match between non-identical functions.
        same_functor: local score of a match between identical functors.
        trickle_down: multiplier passing a match hypothesis's score to its arguments.
        max_local_score: cap on any one match hypothesis's score (None: no cap).
        functor_trickle_down: also pass score down to functor match hypotheses.
        minimal_ascension: let the arguments of two matched expressions align when their
            predicates differ but share a superordinate in the vocabulary (each predicate's
            ``parent``), at ``same_functor * minimal_ascension_multiplier ** levels`` (Falkenhainer
            1990; SME v4). Off in the reference's regression parameters.
        enforce_1to1_minimal_ascension: a minimally ascended match also makes its functor
            correspondence, one-to-one with every other (``harmed`` then maps onto ``failure``
            everywhere in the mapping or nowhere); when False it is bound by its expressions and
            arguments only, and an identical ``harmed`` ~ ``harmed`` elsewhere stays possible.
        minimal_ascension_multiplier: attenuation per level of minimal ascension.
        allow_out_of_mapping_score_contributions: a kernel's score may include trickle-down from
            match hypotheses outside it.
        block_most_out_of_mapping_contributions: evaluate with the one-to-one constrained
            trickle-down, and rescore global mappings from their own match hypotheses only.
        allow_entity_supported_inferences: candidate inferences may be supported by entity
            correspondences alone.
        use_less_greedy_greedy_merge: add consistent kernels of earlier mappings to later ones.
        greedy_merge_overlap_only: only merge kernels sharing a non-functor match hypothesis.
        unique_attribute_values: attribute values are distinct per description (reference flag;
            this engine always treats every entity as distinct).
        compute_reverse_inferences: also compute target → base inferences.
        probability_as_utility, allow_probability, ci_support_scores_global: reference flags for
            probabilistic expressions; accepted for compatibility, must be False here.
    """

    greedy_cutoff: float = bounded(0.8, lo=0.0, hi=1.0)
    greedy_max_mappings: int = bounded(3, lo=1, integer=True)
    same_function: float = bounded(0.002, lo=0.0)
    same_functor: float = bounded(0.005, lo=0.0)
    trickle_down: float = bounded(16.0, lo=0.0)
    max_local_score: float | None = bounded(None, lo=0.0, optional=True)
    functor_trickle_down: bool = False
    minimal_ascension: bool = False
    enforce_1to1_minimal_ascension: bool = True
    minimal_ascension_multiplier: float = bounded(0.8, lo=0.0)
    allow_out_of_mapping_score_contributions: bool = True
    block_most_out_of_mapping_contributions: bool = True
    allow_entity_supported_inferences: bool = True
    use_less_greedy_greedy_merge: bool = True
    greedy_merge_overlap_only: bool = False
    unique_attribute_values: bool = True
    compute_reverse_inferences: bool = False
    probability_as_utility: bool = False
    allow_probability: bool = False
    ci_support_scores_global: bool = False

    def __post_init__(self) -> None:
        check_bounds(self)
        if self.allow_probability or self.probability_as_utility:
            raise AnalogistError("probabilistic expressions are not supported",
                                 field="allow_probability")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SMEParams:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise AnalogistError(f"unknown SME parameter(s): {sorted(unknown)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
