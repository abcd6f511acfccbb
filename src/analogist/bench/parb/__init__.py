"""PARB — the Piper-style Analogical Reasoning Bench (seed 000 §14–16).

Generated relational worlds: structural motif templates (:mod:`.templates`), surface skins and
nonce skins (:mod:`.skins`), decoys (:mod:`.decoys`) and the eight task families F1–F8 with
machine-checkable keys (:mod:`.items`); the arms (:mod:`.arms`, :mod:`.llm_arms`), the runner
and report (:mod:`.runner`, :mod:`.report`), the attribution controls — source dependence Δ and
the mapping-lesion test (:mod:`.controls`) — and private item sets from a store under the
holdout rule (:mod:`.private`, entry point ``run_private``).
"""
