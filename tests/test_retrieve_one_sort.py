"""One partial sort serves both the shortlist and the decoy probe's pool of a large namespace:
the answers (shortlist, hits, decoy) are those of two separate partial sorts."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from analogist.casebook import load_casebook
from analogist.memory.sqlite import Memory
from analogist.retrieve import RetrieveParams, Retriever, _top
from analogist.signature import validate_signature

CASES = [c.signature for c in load_casebook()]


def test_prefixes_of_one_ranking_are_the_separate_rankings() -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        # few distinct values: ties, zeros and negatives
        scores = rng.integers(-2, 4, n).astype(np.float64) / 2
        short, pool = int(rng.integers(1, 25)), int(rng.integers(1, 40))
        ranked = _top(scores, max(short, pool), positive=False)
        head = ranked[:short]
        assert head[scores[head] > 0].tolist() == _top(scores, short, positive=True).tolist()
        assert ranked[:pool].tolist() == _top(scores, pool, positive=False).tolist()


class _SeparateSorts(Retriever):
    """The probe ranks its own pool (as before the shared sort)."""

    def _probe(self, *args, pool=None, **kwargs):  # type: ignore[no-untyped-def]
        self.pools_given = getattr(self, "pools_given", 0) + (pool is not None)
        return super()._probe(*args, pool=None, **kwargs)


def test_a_pooled_probe_answers_as_a_probe_that_sorts_again(tmp_path: Path) -> None:
    params = RetrieveParams(exhaustive_probe_limit=5, probe_pool=12, shortlist=6)
    with Memory.open(tmp_path / "s.db") as m:
        m.add_many(CASES)
        shared = Retriever(m, params=params, log=False)
        separate = _SeparateSorts(m, params=params, log=False)
        probes = 0
        for q in CASES[::5]:
            d = q.to_data()
            d["episode_id"] = "query"
            target = validate_signature(d)
            a, b = shared.find(target).to_json(), separate.find(target).to_json()
            a.pop("timings_ms")
            b.pop("timings_ms")
            assert a == b
            probes += a.get("decoy_probe") is not None
        assert separate.pools_given > 0 and probes > 0
