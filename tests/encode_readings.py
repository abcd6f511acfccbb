"""Readings of an encoded text that the encoder's tests compare: edges and relation atoms with
their role tags replaced by the roles' descriptions."""

from __future__ import annotations

from typing import Any

from analogist.encode.deterministic import DeterministicEncoder


def role_edges(enc: DeterministicEncoder, text: str) -> list[tuple[str, str, str, str]]:
    """(cause predicate, cause role, effect predicate, effect role) of each causal edge."""
    sig: dict[str, Any] = enc.encode(text).signature.to_data()

    def split(atom: str) -> tuple[str, str]:
        name, args = atom[:atom.index("(")], atom[atom.index("(") + 1:-1].split(",")
        return name, str(sig["roles"][args[0]])

    return [(*split(e["cause"]), *split(e["effect"])) for e in sig["causal_chain"]]


def role_atoms(enc: DeterministicEncoder, text: str) -> set[tuple[str, ...]]:
    """The relation atoms with role tags replaced by the role descriptions."""
    sig = enc.encode(text).signature
    return {(a.predicate, *(sig.roles[x] for x in a.args)) for a in sig.relations}
