"""PARB — the Piper-style Analogical Reasoning Bench (seed 000 §14–16).

Generated relational worlds: structural motif templates (:mod:`.templates`), surface skins and
nonce skins (:mod:`.skins`), decoys (:mod:`.decoys`) and the eight task families F1–F8 with
machine-checkable keys (:mod:`.items`).
"""
