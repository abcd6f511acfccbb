"""A find whose target is a stored episode (by row) answers exactly as the same signature given
inline — with level embeddings on, the target's stored vectors standing in for embedding its
texts again — before and after writes, an update and a delete; the decoy probe's inverted
surface index picks the row a set intersection with every row picks; and over HTTP a find by
episode id answers as the signature inline, a missing one in one line."""

from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest
from fastapi.testclient import TestClient

from analogist.app import Analogist, Settings
from analogist.casebook import load_casebook
from analogist.errors import AnalogistError
from analogist.index.embed import abstract_texts, default_embedder
from analogist.index.surfaces import SurfaceIndex
from analogist.memory import open_memory
from analogist.retrieve import LEVEL_CHANNELS, Retriever
from analogist.service.keys import keys_add


def _answer(res) -> dict:
    out = res.to_json()
    return {k: v for k, v in out.items() if k not in ("timings_ms", "log_id")}


class _Counting:
    """The real default embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.texts = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.embed(texts)


def _sigs() -> list[dict]:
    return [e.signature.to_data() for e in load_casebook() if not e.is_decoy]


def test_a_stored_target_answers_as_its_signature_inline(tmp_path) -> None:
    sigs = _sigs()
    app = Analogist(Settings.from_env(store=str(tmp_path / "s.db"), embeddings=True,
                                      log_finds=False, llm=False))
    app.add_many(sigs[:40], namespace="t")
    m = app.memory()
    emb = _Counting()
    live = Retriever(m, "t", embedder=emb, log=False)

    def check(keys: list[str]) -> None:
        fresh = Retriever(m, "t", embedder=default_embedder(), log=False)
        for key in keys:
            ep = m.get(key, "t")
            assert ep is not None
            before = emb.texts
            by_row = live.find(ep.id, k=5)
            assert emb.texts == before, "a stored target's levels are not embedded again"
            assert "embedding" in by_row.channels_used
            assert _answer(by_row) == _answer(fresh.find(ep.signature, k=5)), key
            assert _answer(live.find(ep.id, k=5)) == _answer(by_row)   # kept view, same answer

    check([s["episode_id"] for s in sigs[:40:4]])
    app.add_many(sigs[40:], namespace="t")            # appended rows: vectors appended too
    check([s["episode_id"] for s in sigs[38::3]])
    changed = dict(sigs[3], fix_operator="bounds(A)")
    m.update_signature(changed, namespace="t")        # a rewrite: every view dropped
    check([sigs[3]["episode_id"], sigs[10]["episode_id"]])
    gone = m.get(sigs[5]["episode_id"], "t")
    assert gone is not None
    m.delete(gone.id, "t")
    with pytest.raises(AnalogistError, match="vanished"):
        live.find(gone.id)
    app.close()


def test_a_stored_target_writes_no_level_texts(tmp_path, monkeypatch) -> None:
    """A find of a stored episode whose vectors the index holds neither embeds nor writes its
    abstract level texts (the levels it has are read off the signature); a signature given
    inline has its texts written once."""
    import analogist.index.embed as embed_pkg

    sigs = _sigs()[:20]
    app = Analogist(Settings.from_env(store=str(tmp_path / "s.db"), embeddings=True,
                                      log_finds=False, llm=False))
    app.add_many(sigs, namespace="w")
    m = app.memory()
    r = Retriever(m, "w", embedder=default_embedder(), log=False)
    written: list[str] = []

    def counting(sig, **kw):
        written.append(sig.episode_id)
        return abstract_texts(sig, **kw)

    monkeypatch.setattr(embed_pkg, "abstract_texts", counting)
    for s in sigs[::5]:
        ep = m.get(s["episode_id"], "w")
        assert ep is not None
        res = r.find(ep.id, k=5)
        assert "embedding" in res.channels_used
    assert written == []
    inline = dict(sigs[1], episode_id="inline-copy")
    assert "embedding" in r.find(inline, k=5).channels_used
    assert written == ["inline-copy"]
    app.close()


def test_stored_level_vectors_are_the_embeddings_of_the_level_texts(tmp_path) -> None:
    """What makes the stored-target shortcut exact: the vector stored with an episode is, bit
    for bit, the one embedding its abstract level texts gives at query time."""
    sigs = _sigs()[:12]
    app = Analogist(Settings.from_env(store=str(tmp_path / "s.db"), embeddings=True,
                                      log_finds=False, llm=False))
    app.add_many(sigs, namespace="v")
    emb = default_embedder()
    m = app.memory()
    for s in sigs:
        ep = m.get(s["episode_id"], "v")
        assert ep is not None
        texts = abstract_texts(ep.signature)
        used = [ch for ch in LEVEL_CHANNELS if ch in texts]
        assert used
        fresh = emb.embed([texts[ch] for ch in used])
        for i, ch in enumerate(used):
            ids, mat = m.embeddings_of(ch, [ep.id], "v")
            assert ids == [ep.id]
            assert mat[0].tobytes() == fresh[i].tobytes(), (s["episode_id"], ch)
    app.close()


def test_the_surface_index_picks_what_every_intersection_picks() -> None:
    rng = random.Random(5)
    vocab = [f"w{i}" for i in range(40)]
    for _ in range(200):
        rows = [frozenset(rng.sample(vocab, rng.randint(0, 9))) if rng.random() > 0.1 else None
                for _ in range(rng.randint(0, 30))]
        idx = SurfaceIndex()
        cut = rng.randint(0, len(rows))
        idx.append(rows[:cut])
        idx.append(rows[cut:])                        # appended in two goes, as after writes
        words = set(rng.sample(vocab, rng.randint(1, 8)))
        excluded = set(rng.sample(range(len(rows)), min(len(rows), rng.randint(0, 4))))
        among = set(rng.sample(range(len(rows)), rng.randint(0, len(rows))))
        for pool in (None, among):
            best = None
            for i, st in enumerate(rows):
                if not st or i in excluded or (pool is not None and i not in pool):
                    continue
                sim = len(words & st) / len(words | st)
                if best is None or sim > best[0]:
                    best = (sim, i)
            want = None if best is None or best[0] <= 0 else best
            assert idx.most_similar(words, excluded, among=pool) == want


def test_the_probe_of_a_larger_namespace_ranks_its_pool_as_a_read_of_its_surfaces(
        tmp_path, monkeypatch) -> None:
    """Above exhaustive_probe_limit the probe ranks the stage-1 pool only: from the surfaces
    kept in memory (up to SURFACE_INDEX_ROWS rows) the same episode, similarity and verdict as
    from the pool's surfaces read from the store, across appends."""
    import analogist.retrieve as retrieve_mod
    from analogist.retrieve import RetrieveParams

    sigs = _sigs()
    rng = random.Random(3)
    app = Analogist(Settings.from_env(store=str(tmp_path / "s.db"), embeddings=False,
                                      log_finds=False, llm=False))
    app.add_many(sigs[:30], namespace="pp")
    params = RetrieveParams(exhaustive_probe_limit=10, probe_pool=12)
    kept = Retriever(app.memory(), "pp", params=params, embedder=None, log=False)
    targets = [dict(s, episode_id=f"q{i}", surface=dict(
        s["surface"], entities=rng.sample([e for t in sigs for e in t["surface"]["entities"]],
                                          4))) for i, s in enumerate(sigs[30:45])]
    seen_decoys = 0
    for batch in (sigs[:0], sigs[30:40], sigs[40:]):
        app.add_many(batch, namespace="pp")
        for t in targets:
            got = kept.find(t, k=3)
            monkeypatch.setattr(retrieve_mod, "SURFACE_INDEX_ROWS", 0)   # read from the store
            want = Retriever(app.memory(), "pp", params=params, embedder=None,
                             log=False).find(t, k=3)
            monkeypatch.undo()
            assert _answer(got) == _answer(want)
            seen_decoys += got.decoy is not None
    assert seen_decoys, "some probe found a surface-similar episode"
    app.close()


def test_find_by_episode_over_http(tmp_path) -> None:
    from analogist.server import create_app

    store = tmp_path / "s.db"
    token = keys_add(store, "t", ["t"])
    sigs = _sigs()[:20]
    app = create_app(store, max_body_bytes=2_000_000, rate_per_minute=0,
                     settings=Settings.from_env(store=str(store), embeddings=True, llm=False))
    h = {"Authorization": f"Bearer {token}"}
    with TestClient(app) as c:
        assert c.post("/v1/ns/t/episodes/bulk", json={"episodes": sigs}, headers=h
                      ).status_code == 201
        row = c.get(f"/v1/ns/t/episodes/{sigs[2]['episode_id']}", headers=h).json()
        by_id = c.post("/v1/ns/t/find", json={"episode": sigs[2]["episode_id"]}, headers=h)
        by_row = c.post("/v1/ns/t/find", json={"episode": row["id"]}, headers=h)
        inline = c.post("/v1/ns/t/find", json={"target": sigs[2]}, headers=h)
        assert by_id.status_code == by_row.status_code == inline.status_code == 200
        assert _answer_json(by_id.json()) == _answer_json(inline.json()) \
            == _answer_json(by_row.json())
        # each find's log row is written (on the log lane) and named by the answer
        m = open_memory(str(store))
        logged = {r["id"]: r for r in m.log("t", limit=10)}
        for res in (by_id, by_row, inline):
            row = logged[res.json()["log_id"]]
            assert row["target"]["episode_id"] == sigs[2]["episode_id"]
            assert [x["episode_id"] for x in row["candidates"]] == \
                [x["episode_id"] for x in res.json()["results"]]
        m.close()
        missing = c.post("/v1/ns/t/find", json={"episode": "no-such-episode"}, headers=h)
        assert missing.status_code == 404
        err = missing.json()["error"]
        assert "no-such-episode" in err["message"] and "\n" not in err["message"]
        assert err["field"] == "target.episode"
        both = c.post("/v1/ns/t/find", json={"episode": "x", "target": sigs[0]}, headers=h)
        assert both.status_code == 422 and "exactly one" in both.json()["error"]["message"]


def _answer_json(out: dict) -> dict:
    return {k: v for k, v in out.items() if k not in ("timings_ms", "log_id")}


def test_a_deferred_log_row_is_the_row_a_find_writes(tmp_path) -> None:
    sigs = _sigs()[:15]
    app = Analogist(Settings.from_env(store=str(tmp_path / "s.db"), embeddings=False,
                                      log_finds=True, llm=False))
    app.add_many(sigs, namespace="g")
    m = app.memory()
    for key in (sigs[0]["episode_id"], sigs[7]):
        direct = app.find(key, namespace="g")
        row_direct = m.log("g", limit=1)[0]
        assert row_direct["id"] == direct.log_id and direct.log_row is None
        later = app.find(key, namespace="g", defer_log=True)
        assert later.log_id is None and later.log_row is not None
        assert m.log("g", limit=1)[0]["id"] == direct.log_id   # nothing written yet
        written = app.log_find(later, namespace="g")
        assert written.log_id is not None and written.log_id > direct.log_id
        row_later = m.log("g", limit=1)[0]
        assert row_later["id"] == written.log_id

        def strip(r: dict) -> dict:
            return {k: v for k, v in r.items() if k not in ("id", "created_at")}

        assert strip(row_later) == strip(row_direct)
        assert _answer(written) == _answer(direct)
    app.close()


def test_a_stored_row_reads_as_before_and_a_broken_one_is_one_line(tmp_path) -> None:
    import sqlite3

    from analogist.signature import loads_signature

    sigs = _sigs()[:8]
    store = tmp_path / "s.db"
    app = Analogist(Settings.from_env(store=str(store), embeddings=False, log_finds=False,
                                      llm=False))
    app.add_many(sigs, namespace="b")
    m = app.memory()
    rows = [m.get(s["episode_id"], "b") for s in sigs]
    with sqlite3.connect(store) as db:
        texts = {r.id: db.execute("SELECT json FROM signatures WHERE id = ?", (r.id,)
                                  ).fetchone()[0] for r in rows}
    for r in rows:
        assert r.signature == loads_signature(texts[r.id])
    broken = {rows[1].id: '{"episode_id": "x", ',                       # malformed
              rows[2].id: "[" * 100_000 + "]" * 100_000,               # too deep to parse
              rows[3].id: '{"episode_id": "x"}'}                       # not a signature
    with sqlite3.connect(store) as db:
        for sid, text in broken.items():
            db.execute("UPDATE signatures SET json = ? WHERE id = ?", (text, sid))
    for sid in broken:
        with pytest.raises(AnalogistError) as e:
            m.get(sid, "b")
        line = str(e.value)
        assert f"signatures.id={sid}" in line and "\n" not in line, line
    # a find whose shortlist holds them (8 rows, a shortlist of 20) answers from the others and
    # names each broken row in its skipped notes, one line each
    res = app.find(sigs[0], namespace="b", k=5)
    for sid in broken:
        notes = [n for n in res.skipped if n.startswith(f"episode {sid}:")]
        assert len(notes) == 1 and "\n" not in notes[0], res.skipped
    assert res.results and {h.id for h in res.results}.isdisjoint(broken)
    app.close()


def test_a_bad_stored_target_is_refused_in_one_line_and_logs_nothing(tmp_path) -> None:
    """``Retriever.find`` given a row id that is no episode of the namespace (never stored,
    another namespace's, out of range) refuses it in one line naming the row id, and writes no
    analogy-log row."""
    store = tmp_path / "s.db"
    app = Analogist(Settings.from_env(store=str(store), embeddings=False, llm=False))
    sigs = _sigs()[:4]
    app.add_many(sigs[:3], namespace="a")
    other = app.add_many(sigs[3:], namespace="b")[0]

    def logged() -> int:
        with sqlite3.connect(store) as db:
            return db.execute("SELECT COUNT(*) FROM analogy_log").fetchone()[0]

    before = logged()
    r = app.retriever("a")
    for bad in (10 ** 6, other, -1, 2 ** 70):
        with pytest.raises(AnalogistError) as e:
            r.find(bad)
        line = str(e.value)
        assert "\n" not in line and str(bad) in line and (
            "vanished from namespace 'a'" in line or "expected an integer" in line), line
    assert logged() == before
    app.close()
