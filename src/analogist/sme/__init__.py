"""The structure-mapping engine (SME): match hypotheses, kernels, trickle-down evaluation, greedy
merge, candidate inferences and alignable differences. See :mod:`analogist.sme.engine`."""

from analogist.sme.engine import (
    CandidateInference,
    GlobalMapping,
    MatchResult,
    identity_score,
    match,
)
from analogist.sme.params import SMEParams

__all__ = ["CandidateInference", "GlobalMapping", "MatchResult", "SMEParams",
           "identity_score", "match"]
