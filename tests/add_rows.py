"""A fixed input for the episode write path and a dump of every row it writes: what
``tests/test_add_rows.py`` compares across the ways of adding (and against the digest of the rows
this input gave before the bulk write path was reworked), and what
``python tests/add_rows.py STORE`` prints for comparing two stores by hand."""

from __future__ import annotations

import copy
import hashlib
import random
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from analogist.casebook import load_casebook

FIXED_NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

_TABLES = {
    "signatures": "SELECT * FROM signatures ORDER BY id",
    "sig_relations": "SELECT * FROM sig_relations ORDER BY signature_id, position",
    "sig_vectors": "SELECT * FROM sig_vectors ORDER BY signature_id, channel",
    "sig_fingerprint": "SELECT * FROM sig_fingerprint ORDER BY signature_id, depth",
    "namespace_state": "SELECT * FROM namespace_state ORDER BY namespace",
}

_WORDS = ("orchid", "lagoon", "delta", "Zürich", "ledger", "kiln", "harbour", "日本", "relay")


def _casebook() -> list[dict[str, Any]]:
    out = []
    for c in load_casebook():
        d = c.signature.model_dump(mode="json")
        d["relations"] = [a.to_list() for a in c.signature.relations]
        d["causal_chain"] = [e.to_data() for e in c.signature.causal_chain]
        out.append(d)
    return out


def _ren(atom: str, fresh: dict[str, str]) -> str:
    name, args = atom[:-1].split("(", 1)
    return f"{name}({','.join(fresh[a] for a in args.split(',') if a)})"


def _variant(src: dict[str, Any], i: int, rng: random.Random) -> dict[str, Any]:
    """A recombined copy of ``src`` in one of the shapes a bulk file may hold: the usual
    canonical one, or one the model normalises (atoms as text with spaces, edges as lists,
    signs as words, repeated and unsorted relations, provenance with a time, …)."""
    d = copy.deepcopy(src)
    fresh = {r: f"R{j}x{rng.randrange(1000)}" for j, r in enumerate(d["roles"])}
    d["episode_id"] = f"v-{i}"
    d["roles"] = {fresh[r]: f"{rng.choice(_WORDS)} {t[:50]}" for r, t in d["roles"].items()}
    rels = [[r[0], *(fresh[a] for a in r[1:])] for r in d["relations"] if rng.random() < 0.9]
    chain = [{**e, "cause": _ren(e["cause"], fresh), "effect": _ren(e["effect"], fresh)}
             for e in d["causal_chain"] if rng.random() < 0.9]
    shape = i % 9
    if shape == 1 and rels:  # text atoms with spaces, one repeated, reversed order
        rels = [f"{r[0]}( {', '.join(r[1:])} )" for r in rels[::-1]] + [
            f"{rels[0][0]}({','.join(rels[0][1:])})"]
    elif shape == 2:  # edges as [cause, edge, effect] lists, edge in capitals
        chain = [[e["cause"], e["edge"].upper(), e["effect"]] for e in chain]
    elif shape == 3:  # signs as words, statuses given, keys in another order
        chain = [{"effect": e["effect"], "sign": "-" if k % 2 else "+", "edge": e["edge"],
                  "cause": e["cause"], "status": "inferred"} for k, e in enumerate(chain)]
    elif shape == 4:
        d["provenance"] = {"writer": "bulk", "time": "2025-05-06T07:08:09Z",
                           "source_hash": "ab" * 16}
        d["verified"] = True
    elif shape == 5:  # no levels, no surface, no texts
        for k in ("levels", "surface", "violated_invariant", "symptom", "fix_operator",
                  "provenance", "verified"):
            d.pop(k, None)
    elif shape == 6:  # a loop and a masking edge
        if len(chain) >= 2:
            chain.append({"cause": chain[-1]["effect"], "edge": "masks",
                          "effect": chain[0]["cause"], "sign": -1, "status": "observed"})
    elif shape == 7:
        d["levels"] = {"L0": f"Case {i} at the {rng.choice(_WORDS)} — «quoted» \"text\"\n",
                       "L2": "tab\there"}
        d["surface"] = {"domain": "ops", "entities": [rng.choice(_WORDS), "a\\b"]}
    elif shape == 8:
        d["kind"] = "near_miss"
        d["symptom"] = None
    d["relations"] = rels
    d["causal_chain"] = chain
    return d


def records(n: int = 900, seed: int = 11) -> list[dict[str, Any]]:
    """The casebook's signatures, then ``n`` recombined variants of them."""
    base = _casebook()
    rng = random.Random(seed)
    return base + [_variant(base[rng.randrange(len(base))], i, rng) for i in range(n)]


def embed(sig: Any) -> dict[str, np.ndarray]:
    """Deterministic embeddings of two channels (the second only for some episodes)."""
    h = hashlib.sha256(sig.episode_id.encode()).digest()
    out = {"L2": np.frombuffer(h, dtype=np.uint8).astype(np.float64) / 255.0 - 0.5}
    if h[0] % 3 == 0:
        out["L1"] = np.arange(5, dtype=np.float64) * (h[1] - 128)
    return out


def dump(path: str | Path) -> str:
    """Every row of the episode tables (and the namespaces' generations), one line each."""
    conn = sqlite3.connect(path)
    try:
        lines = []
        for table, sql in _TABLES.items():
            for row in conn.execute(sql):
                lines.append(f"{table}\t{row!r}")
        return "\n".join(lines) + "\n"
    finally:
        conn.close()


def digest(path: str | Path) -> str:
    return hashlib.sha256(dump(path).encode("utf-8")).hexdigest()


if __name__ == "__main__":
    sys.stdout.write(dump(sys.argv[1]))
