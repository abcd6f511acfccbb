"""The stage-1 index of a PostgreSQL store lives in the database (memory/pg_mac.py): a new
process loads it instead of rebuilding, appends what was written since, rebuilds a damaged copy
with a note, and answers as the SQLite store does."""

from __future__ import annotations

from analogist.casebook import load_casebook
from analogist.memory import open_memory
from analogist.retrieve import Retriever


def _episodes():
    return [c.signature for c in load_casebook()]


def _answer(mem, target):
    r = Retriever(mem, log=False)
    res = r.find(target)
    return [(h.episode_id, round(h.score, 9)) for h in res.results], r


def _row(mem):
    return mem.conn._pg.execute("SELECT rows, max_id, generation FROM mac_index "
                                "WHERE namespace = 'default'").fetchone()


def test_index_kept_in_the_database_and_loaded_by_a_new_process(pg_url, tmp_path):
    eps = _episodes()
    target, stored = eps[0], eps[1:]
    pg = open_memory(pg_url)
    lite = open_memory(str(tmp_path / "s.db"))
    pg.add_many(stored)
    lite.add_many(stored)
    first, r1 = _answer(pg, target)
    assert first == _answer(lite, target)[0]
    assert first, "the casebook target has analogues"
    rows, max_id, gen = _row(pg)
    assert (rows, max_id) == pg.extent()
    assert gen == pg.generation()[0]
    pg.close()
    # a new connection (as a new process would) reads the row instead of rebuilding
    pg2 = open_memory(pg_url)
    again, r2 = _answer(pg2, target)
    assert again == first
    assert r2.notes == []
    assert r2._index.saved_rows == rows
    # written since: appended to the loaded copy, same answer as SQLite with the same write
    pg2.add(target.model_copy(update={"episode_id": "again-1"}))
    lite.add(target.model_copy(update={"episode_id": "again-1"}))
    pg3 = open_memory(pg_url)
    assert _answer(pg3, target)[0] == _answer(lite, target)[0]
    pg2.close()
    pg3.close()
    lite.close()


def test_damaged_row_is_rebuilt_with_a_note(pg_url):
    eps = _episodes()
    pg = open_memory(pg_url)
    pg.add_many(eps[1:])
    first, _r = _answer(pg, eps[0])
    pg.conn._pg.execute("UPDATE mac_index SET data = %s", (b"not a tar file",))
    pg.close()
    pg = open_memory(pg_url)
    again, r = _answer(pg, eps[0])
    assert again == first
    assert len(r.notes) == 1 and "was not used" in r.notes[0]
    # and the rebuilt copy was stored again
    assert _row(pg)[0] == pg.extent()[0]
    pg.close()
