"""A development store shaped like a user's: analogue pairs and decoys, from the bundled casebook.

For each chosen mechanism, its first two real casebook episodes (different domains), the second
made non-isomorphic to the first by dropping its last relation (no WL fingerprint is shared —
analogues in a user's store are rarely isomorphic); a decoy of the first with its last causal edge
reversed (``reversed-<id>``); and the casebook's surface decoys of either (same domain and words,
another mechanism). Used by the structural-query tests and ``benchmarks/user_store_pairs.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from analogist.casebook import load_casebook
from analogist.memory.sqlite import Memory


def analogue_pair_store(path: str | Path, mechanisms: Sequence[str] | None = None,
                        namespace: str = "default") -> dict[str, str]:
    """Write the store (see the module docstring) to ``path``; ``mechanisms``: casebook
    mechanism names (default: all). Returns reversed decoy id -> original id."""
    entries = load_casebook()
    by_mech: dict[str, list[Any]] = {}
    for e in entries:
        if not e.is_decoy:
            by_mech.setdefault(e.mechanism, []).append(e)
    sigs: list[dict[str, Any]] = []
    rev: dict[str, str] = {}
    for mech in (mechanisms if mechanisms is not None else sorted(by_mech)):
        a, b = by_mech[mech][:2]
        sigs.append(a.signature.to_data())
        d = b.signature.to_data()
        if len(d["relations"]) > 1:
            d["relations"] = d["relations"][:-1]
        sigs.append(d)
        r = a.signature.to_data()
        r["episode_id"] = "reversed-" + a.id
        e = r["causal_chain"][-1]
        r["causal_chain"][-1] = {**e, "cause": e["effect"], "effect": e["cause"]}
        sigs.append(r)
        rev[r["episode_id"]] = a.id
    ids = {s["episode_id"] for s in sigs}
    sigs += [e.signature.to_data() for e in entries if e.is_decoy and e.decoy_of in ids]
    with Memory.open(path) as m:
        m.add_many(sigs, namespace=namespace)
    return rev
