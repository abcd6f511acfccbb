"""``find`` never answers a query with the query itself: not the stored episode the query names,
and not a stored copy of the same signature under another id (issue 21, item 5)."""

from __future__ import annotations

from pathlib import Path

from analogist import Analogist
from analogist.casebook import load_casebook


def test_find_skips_the_query_itself(tmp_path: Path) -> None:
    cases = [c for c in load_casebook() if c.decoy_of is None]
    by: dict[str, list] = {}
    for c in cases:
        by.setdefault(c.mechanism, []).append(c)
    mech = sorted(m for m, v in by.items() if len(v) >= 3)[0]
    a, b, c = by[mech][:3]
    other = next(x for x in cases if x.mechanism != mech)
    with Analogist.open(tmp_path / "s.db", embeddings=False, llm=False) as api:
        for e in (a, b, c, other):
            api.add(e.signature)
        stored_a = api.episode(a.id)
        for query in (a.id, stored_a.id, a.signature,                  # by id, row id, object
                      a.signature.model_copy(update={"episode_id": "copy-of-a"})):
            found = api.find(query, k=3)
            ids = [h.episode_id for h in found.results]
            assert a.id not in ids, (query, ids)
            assert ids and ids[0] in {b.id, c.id}, ids
            assert found.decoy is None or found.decoy.episode_id != a.id
            logged = api.memory().log(limit=1)[0]["candidates"]
            assert a.id not in [x["episode_id"] for x in logged]
        # an episode that only shares the structure (other surface) is still an answer
        twin = a.signature.model_copy(update={
            "episode_id": "twin-of-a",
            "surface": a.signature.surface.model_copy(update={"domain": "elsewhere"})})
        api.add(twin)
        assert "twin-of-a" in [h.episode_id for h in api.find(a.id, k=3).results]
