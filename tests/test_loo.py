"""Leave-one-out evaluation machinery on a small hand-made casebook."""

from __future__ import annotations

import numpy as np

from analogist.bench.loo import Entry, _metrics, leave_one_out, mcnemar_exact
from tests.test_retrieve import CACHE_DECOY, LEDGER, RETRY, STALE_CACHE, sig

COPY3 = sig("copy-three", {"M": "master list", "C": "printed copy", "U": "usher"},
            [["derives_from", "C", "M"], ["trusts_as_authoritative", "U", "C"],
             ["skips_check", "U", "M"], ["diverges_from", "C", "M"]],
            [["diverges_from(C,M)", "causes", "false_claim(U)"]], domain="events")
RETRY2 = sig("retry-three", {"A": "apps", "G": "gateway", "Q": "queue"},
             [["retries", "A", "G"], ["depends_on", "A", "G"], ["amplifies", "A", "Q"]],
             [["retries(A,G)", "causes", "overload(G)"], ["overload(G)", "causes", "outage(G)"]],
             domain="telecom")


def entries() -> list[Entry]:
    return [Entry("stale-cache", "copy", "software", False, STALE_CACHE),
            Entry("ledger-copy", "copy", "accounting", False, LEDGER),
            Entry("copy-three", "copy", "events", False, COPY3),
            Entry("hospital-retry", "retry", "medicine", False, RETRY),
            Entry("retry-three", "retry", "telecom", False, RETRY2),
            Entry("cache-retry-storm", "retry", "software", True, CACHE_DECOY)]


def test_leave_one_out_on_a_small_casebook(tmp_path) -> None:
    def embed(texts: list[str]) -> np.ndarray:  # a real, if crude, bag-of-letters embedding
        m = np.zeros((len(texts), 26), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    m[i, ord(ch) - 97] += 1
        n = np.linalg.norm(m, axis=1, keepdims=True)
        return m / np.where(n == 0, 1, n)

    res = leave_one_out(entries(), embed=embed, workdir=tmp_path)
    assert res["targets"] == 5 and res["decoys"] == 1
    s = res["structural"]
    assert s["hit@5"] == 1.0 and s["mrr"] > 0.9
    assert res["decoy_transfers"] == 0 and res["decoy_judgements"] == 5
    assert "surface" in res and "mcnemar_hit@5" in res
    for row in res["rows"]["structural"]:
        assert row["target"] not in row["top"]


def test_metrics_and_mcnemar() -> None:
    m = _metrics(["d", "r1", "x", "r2"], {"r1", "r2"}, {"d"})
    assert m["hit@5"] == 1 and m["mrr"] == 0.5 and m["recall@5"] == 1.0
    assert m["relevant_above_decoys"] == 0.0
    assert _metrics(["r1", "d"], {"r1", "r2"}, {"d"})["relevant_above_decoys"] == 0.0
    assert _metrics(["r1", "r2", "d"], {"r1", "r2"}, {"d"})["relevant_above_decoys"] == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert abs(mcnemar_exact(0, 6) - 0.03125) < 1e-12
