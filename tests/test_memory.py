"""Tests for analogist.memory, on both backends: a real SQLite file in tmp_path and a real
PostgreSQL server (tests/pg.py; the ``db`` fixture is parametrised over the two)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import analogist.memory.sqlite as msql
from analogist.errors import AnalogistError, SignatureError
from analogist.index import ContentIndex, EpisodeFeatures, extract_features
from analogist.memory import (
    SCHEMA_VERSION,
    DuplicateEpisodeError,
    Memory,
    NotFoundError,
    SchemaVersionError,
    StoreError,
    is_postgres_url,
    open_memory,
)
from analogist.signature import MAX_TEXT, Signature, dump_signature, validate_signature
from tests.writer_procs import batches, kill_inside_fourth_batch, spawn_writer, wait_for

HERE = Path(__file__).parent
SEED = HERE / "data" / "seed_example_signature.json"
WRITER = HERE / "proc_memory_writer.py"
SQL = "'); DROP TABLE signatures;--"
TABLES = {"schema_version", "signatures", "sig_relations", "sig_vectors", "sig_fingerprint",
          "schemas", "vocab", "analogy_log"}

FULL: dict[str, Any] = {
    "episode_id": "ep_full",
    "kind": "solution",
    "roles": {"Q": "queue", "W": "worker", "M": "monitor"},
    "relations": [["consumes", "W", "Q"], "observes(M,Q)", ["retries", "W", "Q"]],
    "causal_chain": [
        {"cause": "overload(Q)", "edge": "causes", "effect": "failure(W)"},
        {"cause": "observes(M,Q)", "edge": "prevents", "effect": "unobserved(Q)", "sign": -1,
         "status": "inferred"},
        {"cause": "retries(W,Q)", "edge": "delays", "effect": "outage()"},
        {"cause": "failure(W)", "edge": "masks", "effect": "overload(Q)"},
    ],
    "violated_invariant": "retries are bounded",
    "symptom": "queue grows without bound",
    "fix_operator": "limits(W, Q)",
    "levels": {"L0": "workers retried", "L1": "retry storm", "L2": "unbounded retry",
               "L3": "positive feedback"},
    "surface": {"domain": "queues", "entities": ["kafka", "worker pool"]},
    "provenance": {"writer": "test", "time": "2026-01-02T03:04:05Z", "source_hash": "sha256:ab",
                   "prompt_version": "p1"},
    "verified": False,
}


def seed() -> Signature:
    return validate_signature(json.loads(SEED.read_text(encoding="utf-8")))


def sig(eid: str, preds: tuple[str, ...] = ("derives_from",), **extra: Any) -> Signature:
    return validate_signature({"episode_id": eid, "kind": "failure",
                               "roles": {"A": "a", "B": "b"},
                               "relations": [[p, "A", "B"] for p in preds],
                               "causal_chain": [["stale(A)", "causes", "wrong(B)"]], **extra})


def tables(store: str | Path) -> set[str]:
    """The tables of the store (read without opening it as a Memory: no migration runs)."""
    if is_postgres_url(str(store)):
        import psycopg

        with psycopg.connect(str(store)) as c:
            return {r[0] for r in c.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()")}
    with sqlite3.connect(store) as c:
        return {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}


@pytest.fixture
def db(store: str) -> str:
    """A fresh store of each backend (conftest's ``store``)."""
    return store


def clock() -> datetime:
    return datetime(2026, 1, 1, tzinfo=UTC)


# -- basics ----------------------------------------------------------------------------------
def test_round_trip_every_field(db: Path) -> None:
    full, s = validate_signature(FULL), seed()
    with open_memory(db, clock=clock) as mem:
        i1 = mem.add(full)
        i2 = mem.add(s, embeddings={"L2": np.arange(4.0), "L3": np.ones(3)})
    with open_memory(db) as mem:
        got = mem.get(i1)
        assert got is not None and got.signature == full
        assert dump_signature(got.signature) == dump_signature(full)
        assert (got.episode_id, got.kind, got.source_hash, got.verified) == (
            "ep_full", "solution", "sha256:ab", False)
        assert got.created_at == clock().isoformat() and got.superseded_by is None
        by_name = mem.get("ep_2026_09_14_0213")
        assert by_name is not None and by_name.id == i2 and by_name.signature == s
        assert by_name.verified is True
        assert mem.get(999) is None and mem.get("nope") is None
        ids, feats = mem.content_rows()
        assert ids == [i1, i2]
        assert feats == [extract_features(full).content, extract_features(s).content]
        eids, mat = mem.embeddings("L2")
        assert eids == [i2] and mat.dtype == np.float32 and mat.tolist() == [[0, 1, 2, 3]]
        rels = mem.conn.execute("SELECT position, predicate, args, in_causal_chain FROM "
                                "sig_relations WHERE signature_id = ? ORDER BY position",
                                (i1,)).fetchall()
        assert [(r[1], json.loads(r[2])) for r in rels] == [
            (a.predicate, list(a.args)) for a in full.relations]
        assert [r[3] for r in rels] == [0, 1, 1]  # observes and retries are causal atoms
        assert [e.id for e in mem.list()] == [i1, i2]


def test_duplicate_episode_rejected(db: Path) -> None:
    with open_memory(db) as mem:
        mem.add(sig("a"))
        with pytest.raises(DuplicateEpisodeError) as ei:
            mem.add(sig("a", ("gates",)))
        assert ei.value.field == "episode_id"
        assert mem.count() == 1


def test_namespaces_isolate(db: Path) -> None:
    with open_memory(db) as mem:
        a1 = mem.add(sig("x", ("derives_from", "gates")), namespace="a")
        mem.add(sig("y", ("derives_from",)), namespace="a")
        b1 = mem.add(sig("x", ("derives_from",)), namespace="b")  # same episode id: fine
        mem.add(sig("z", ("skips_check",)), namespace="b")
        mem.add(sig("w", ("skips_check",)), namespace="b")
        assert mem.namespaces() == ["a", "b"]
        assert (mem.count("a"), mem.count("b"), mem.count()) == (2, 3, 0)
        ga, gb = mem.get("x", "a"), mem.get("x", "b")
        assert ga is not None and gb is not None and ga.id == a1 and gb.id == b1
        assert ga.signature != gb.signature
        # an id from another namespace is not found, and not deleted
        assert mem.get(a1, "b") is None
        assert mem.delete(a1, "b") is False and mem.count("a") == 2
        with pytest.raises(NotFoundError):
            mem.supersede(a1, b1, "a")
        ids_a, fa = mem.content_rows("a")
        ids_b, fb = mem.content_rows("b")
        assert set(ids_a).isdisjoint(ids_b) and len(ids_a) == 2 and len(ids_b) == 3
        ia, ib = ContentIndex(ids_a, fa), ContentIndex(ids_b, fb)
        assert ia.idf("rel:derives_from") != ib.idf("rel:derives_from")
        assert ia.query(fb[0], 5) and all(i in ids_a for i, _ in ia.query(fb[0], 5))
        assert sorted(i for g in mem.fingerprint_groups("a").values() for i in g) == ids_a
        assert sorted(i for g in mem.fingerprint_groups("b").values() for i in g) == ids_b
        assert [e.id for e in mem.list("b")] == ids_b
        mem.log_analogy("a", target="x", candidates=[a1])
        assert mem.log("b") == [] and len(mem.log("a")) == 1


def test_supersession(db: Path) -> None:
    with open_memory(db) as mem:
        old = mem.add(sig("v1"))
        new = mem.add(sig("v2", ("derives_from", "gates")))
        other = mem.add(sig("v3"))
        mem.supersede("v1", new)
        assert mem.is_superseded(old) and not mem.is_superseded(new)
        got = mem.get(old)
        assert got is not None and got.superseded_by == new and got.is_superseded
        assert mem.superseded() == {old: new}
        assert [e.id for e in mem.list()] == [new, other]
        assert [e.id for e in mem.list(include_superseded=True)] == [old, new, other]
        assert mem.count(include_superseded=False) == 2 and mem.count() == 3
        assert mem.content_rows(include_superseded=False)[0] == [new, other]
        with pytest.raises(StoreError, match="cycle"):
            mem.supersede(new, old)
        with pytest.raises(StoreError, match="itself"):
            mem.supersede(new, new)
        with pytest.raises(NotFoundError) as ei:
            mem.supersede(old, "missing")
        assert ei.value.field == "new"
        # deleting the replacement un-supersedes; relations and vectors go with it
        assert mem.delete(new)
        assert not mem.is_superseded(old)
        n = mem.conn.execute("SELECT COUNT(*) FROM sig_vectors WHERE signature_id = ?",
                             (new,)).fetchone()[0]
        assert n == 0
        assert mem.integrity_check() == "ok"


def test_fingerprint_groups(db: Path) -> None:
    with open_memory(db) as mem:
        a = mem.add(sig("a"))
        b = mem.add(validate_signature({**sig("b").to_data(), "roles": {"A": "x", "B": "y"}}))
        c = mem.add(sig("c", ("gates",)))
        groups = mem.fingerprint_groups()
        assert list(groups.values()) == [[a, b], [c]]
        assert mem.fingerprint_groups(min_size=2) == {next(iter(groups)): [a, b]}


def test_add_many_rejects_bad_batch(db: Path) -> None:
    recs: list[Any] = [sig(f"r{i}") for i in range(7)]
    recs[4] = {"episode_id": "r4", "kind": "failure", "roles": {"A": "a"},
               "relations": [["derives_from", "A", "NOPE"]]}
    seen: list[int] = []
    with open_memory(db) as mem:
        with pytest.raises(SignatureError) as ei:
            mem.add_many(recs, namespace="n", batch_size=3, progress=seen.append)
        assert ei.value.field == "records[4].relations[0]"
        assert "record 4" in str(ei.value)
        assert seen == [3]
        assert [e.episode_id for e in mem.list("n")] == ["r0", "r1", "r2"]  # r3 shared r4's batch
        # a record repeating an earlier one, or one already stored
        with pytest.raises(DuplicateEpisodeError) as ei2:
            mem.add_many([sig("s0"), sig("s0")], namespace="n")
        assert ei2.value.field == "records[1].episode_id"
        with pytest.raises(DuplicateEpisodeError) as ei3:
            mem.add_many([sig("t0"), sig("t1"), sig("r1")], namespace="n")
        assert ei3.value.field == "records[2].episode_id"
        assert mem.count("n") == 3
        # not a record at all
        with pytest.raises(SignatureError) as ei4:
            mem.add_many([sig("u0"), 42], namespace="n")  # type: ignore[list-item]
        assert ei4.value.field == "records[1]"
        ids = mem.add_many([sig(f"ok{i}") for i in range(5)], namespace="n", batch_size=2,
                           progress=seen.append)
        assert len(ids) == 5 and seen == [3, 2, 4, 5] and mem.count("n") == 8
        assert mem.integrity_check() == "ok"
        with pytest.raises(StoreError):
            mem.add_many([], batch_size=0)


# -- hostile input ---------------------------------------------------------------------------
def test_sql_looking_strings_are_stored_verbatim(db: Path) -> None:
    weird = SQL + " \" ` \\ \x00 ☃ %s ?"
    s = validate_signature({"episode_id": SQL, "kind": "failure", "roles": {"A": weird},
                            "relations": [["derives_from", "A", "A"]], "symptom": weird,
                            "surface": {"domain": SQL, "entities": [weird]}})
    feats = EpisodeFeatures(content={SQL: 2.0}, fingerprint="ab" * 32)
    with open_memory(db) as mem:
        sid = mem.add(s, namespace=SQL, features=feats)
        mem.log_analogy(SQL, target={"q": SQL}, candidates=[SQL], verdict=SQL, prediction=SQL)
        mem.put_term(SQL, kind="relation", arity=2, definition=SQL, namespace=SQL)
        got = mem.get(SQL, SQL)
        assert got is not None and got.id == sid and got.signature == s
        assert got.signature.roles["A"] == weird
        assert mem.content_rows(SQL) == ([sid], [{SQL: 2.0}])
        assert mem.fingerprint_groups(SQL) == {"ab" * 32: [sid]}
        assert mem.log(SQL)[0]["target"] == {"q": SQL}
        assert mem.terms(SQL)[0]["name"] == SQL
        assert mem.namespaces() == [SQL]
    assert tables(db) >= TABLES


def test_oversized_and_nested_inputs_rejected_without_writes(db: Path) -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    with open_memory(db) as mem:
        with pytest.raises(SignatureError) as ei:
            mem.add({"episode_id": "big", "kind": "failure", "roles": {"A": "x" * (MAX_TEXT + 1)}})
        assert ei.value.field == "roles.A"
        with pytest.raises(SignatureError) as ei2:
            mem.add({"episode_id": "deep", "kind": "failure", "roles": {"A": deep}})
        assert ei2.value.field is not None and ei2.value.field.startswith("roles")
        with pytest.raises(SignatureError):
            mem.add({"episode_id": "x" * 10_000, "kind": "failure", "roles": {"A": "a"}})
        with pytest.raises(StoreError) as ei3:
            mem.log_analogy(target=deep, candidates=[])
        assert ei3.value.field == "target"
        with pytest.raises(StoreError) as ei4:
            mem.log_analogy(target="t", candidates={"x": float("nan")})
        assert ei4.value.field == "candidates"
        with pytest.raises(StoreError) as ei5:
            mem.add(sig("f"), features=EpisodeFeatures({"a": float("inf")}, "ab" * 32))
        assert ei5.value.field == "features.content"
        with pytest.raises(StoreError) as ei6:
            mem.add(sig("e"), embeddings={"L2": np.array([1.0, np.nan])})
        assert ei6.value.field == "embeddings.L2"
        with pytest.raises(StoreError) as ei7:
            mem.add(sig("n"), namespace="bad\nname")
        assert ei7.value.field == "namespace"
        with pytest.raises(StoreError):
            mem.add(sig("c"), embeddings={"content": np.ones(2)})
        # a model_construct()ed Signature that skipped validation is re-validated
        bad = Signature.model_construct(**{**sig("mc").__dict__, "roles": {"A": "z" * 10_000}})
        with pytest.raises(SignatureError):
            mem.add(bad)
        for t in ("signatures", "sig_relations", "sig_vectors", "sig_fingerprint",
                  "analogy_log"):
            assert mem.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0
        assert isinstance(ei.value, AnalogistError)


def test_schemas_and_vocab(db: Path) -> None:
    with open_memory(db) as mem:
        a, b = mem.add(sig("a")), mem.add(sig("b"))
        sid = mem.add_schema("stale copy", {"relations": [["derives_from", "X", "Y"]]}, [a, b])
        mem.use_schema(sid, verified=True)
        mem.use_schema(sid)
        [sch] = mem.schemas()
        assert (sch["members"], sch["times_used"], sch["times_verified"]) == ([a, b], 2, 1)
        assert mem.schemas("other") == []
        with pytest.raises(NotFoundError):
            mem.add_schema("x", {}, [a], namespace="other")
        mem.put_term("derives_from", kind="relation", arity=2, definition="copy of", count=3)
        assert mem.terms()[0]["count"] == 3


# -- migrations ------------------------------------------------------------------------------
def test_migrations_recorded_and_idempotent(db: Path) -> None:
    with open_memory(db) as mem:
        assert mem.schema_version() == SCHEMA_VERSION == msql.MIGRATIONS[-1][0]
        mem.add(sig("a"))
    for _ in range(2):
        with open_memory(db) as mem:
            assert mem.count() == 1
            rows = mem.conn.execute("SELECT version FROM schema_version").fetchall()
            assert rows == [(v,) for v, _d, _s in msql.MIGRATIONS]
            if not is_postgres_url(db):
                assert mem.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
                assert mem.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert tables(db) >= TABLES


def test_version_4_store_migrates_child_namespaces(db: Path, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    """Schema v5 gives the episode child tables a namespace column (partitioning by namespace):
    a store written at v4 gets each child row's namespace from its episode, and reads the
    same afterwards."""
    monkeypatch.setattr(msql, "MIGRATIONS", msql.MIGRATIONS[:4])
    monkeypatch.setattr(msql, "SCHEMA_VERSION", 4)
    with open_memory(db) as mem:
        for ns in ("n1", "n2"):
            mem.add_many([sig(f"{ns}-{i}", (f"p{i}", "derives_from")) for i in range(4)],
                         namespace=ns)
        mem.supersede(f"{ns}-0", f"{ns}-1", namespace=ns)
        before = {ns: (mem.content_rows(ns), mem.fingerprint_groups(ns)) for ns in ("n1", "n2")}
    monkeypatch.undo()
    with open_memory(db) as mem:
        assert mem.schema_version() == SCHEMA_VERSION >= 5
        for t in ("sig_relations", "sig_vectors", "sig_fingerprint"):
            rows = mem.conn.execute(
                f"SELECT COUNT(*), SUM(CASE WHEN c.namespace = s.namespace THEN 1 ELSE 0 END) "
                f"FROM {t} c JOIN signatures s ON s.id = c.signature_id").fetchone()
            assert rows[0] > 0 and rows[0] == rows[1], t
        for ns in ("n1", "n2"):
            assert (mem.content_rows(ns), mem.fingerprint_groups(ns)) == before[ns]
        # deletion removes the child rows and clears the pointer of what it replaced
        mem.delete("n2-1", namespace="n2")
        assert mem.superseded("n2") == {}
        for t, n in (("sig_fingerprint", 3), ("sig_vectors", 3), ("sig_relations", 6)):
            assert mem.conn.execute(f"SELECT COUNT(*) FROM {t} WHERE namespace = ?",
                                    ("n2",)).fetchone()[0] == n, t


def test_forward_migration_and_failed_migration(db: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    with open_memory(db) as mem:
        mem.add(sig("a"))
    cur = msql.SCHEMA_VERSION
    nxt = cur + 1
    broken = [*msql.MIGRATIONS, (nxt, "broken", ("CREATE TABLE extra (x INTEGER)",
                                                "CREATE TABLE extra (x INTEGER)"))]
    monkeypatch.setattr(msql, "MIGRATIONS", broken)
    monkeypatch.setattr(msql, "SCHEMA_VERSION", nxt)
    with pytest.raises(StoreError):
        open_memory(db)
    assert "extra" not in tables(db)  # the whole migration rolled back
    good = [*msql.MIGRATIONS[:cur], (nxt, "extra table", ("CREATE TABLE extra (x INTEGER)",))]
    monkeypatch.setattr(msql, "MIGRATIONS", good)
    with open_memory(db) as mem:
        assert mem.schema_version() == nxt and mem.count() == 1
    with open_memory(db) as mem:
        assert [r[0] for r in mem.conn.execute("SELECT version FROM schema_version")] == \
            list(range(1, nxt + 1))
    monkeypatch.setattr(msql, "MIGRATIONS", good[:cur])
    monkeypatch.setattr(msql, "SCHEMA_VERSION", cur)
    with pytest.raises(SchemaVersionError):
        open_memory(db)


def test_not_a_database(tmp_path: Path) -> None:
    bad = tmp_path / "junk.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError) as ei:
        Memory.open(bad)
    assert ei.value.source == str(bad)
    with pytest.raises(StoreError):
        Memory.open(tmp_path)
    mem = Memory.open(tmp_path / "ok.db")
    mem.close()
    with pytest.raises(StoreError, match="closed"):
        mem.count()


# -- processes -------------------------------------------------------------------------------
def test_writer_killed_mid_batch(db: Path) -> None:
    size = 40
    kill_inside_fourth_batch(db, size)
    with open_memory(db) as mem:
        assert mem.integrity_check() == "ok"
        if not is_postgres_url(db):
            assert mem.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert batches(mem) == {0: size, 1: size, 2: size}  # batch 3 absent, earlier intact
        n = mem.count("w")
        for t in ("sig_relations", "sig_vectors", "sig_fingerprint"):
            k = mem.conn.execute(f"SELECT COUNT(DISTINCT signature_id) FROM {t}").fetchone()[0]
            assert k == n
        # the store is writable again
        mem.add(sig("after"), namespace="w")


def test_writer_killed_at_a_random_moment(db: Path) -> None:
    size = 25
    proc = spawn_writer(db, "loop", 10_000, size)
    try:
        wait_for(proc, "committed 3")
        time.sleep(0.013)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    with open_memory(db) as mem:
        assert mem.integrity_check() == "ok"
        got = batches(mem)
        assert all(v == size for v in got.values())  # every batch all or nothing
        assert sorted(got) == list(range(len(got))) and len(got) >= 4


def test_reader_sees_consistent_data_while_another_process_writes(db: Path) -> None:
    size = 30
    with open_memory(db) as mem:
        mem.add(sig("seeded"), namespace="w2")
    proc = spawn_writer(db, "stall", 3, size, 1, 1.5)
    try:
        with open_memory(db, timeout=5) as reader:
            wait_for(proc, "inside")  # batch 1 is half-written, uncommitted
            t0 = time.monotonic()
            with reader.snapshot():
                n = reader.count("w")
                ids, feats = reader.content_rows("w")
                groups = reader.fingerprint_groups("w")
            assert time.monotonic() - t0 < 1.0  # not blocked by the writer (WAL)
            assert n == size and len(ids) == n and len(feats) == n
            assert sum(len(v) for v in groups.values()) == n
            assert batches(reader) == {0: size}
            with reader.snapshot(), pytest.raises(StoreError):
                reader.add(sig("inside-snapshot"), namespace="w2")
            # repeated reads while the writer finishes: always whole batches
            while proc.poll() is None:
                with reader.snapshot():
                    c = reader.count("w")
                    assert c % size == 0 and len(reader.content_rows("w")[0]) == c
                time.sleep(0.01)
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait(timeout=30)
    with open_memory(db) as mem:
        assert batches(mem) == {0: size, 1: size, 2: size}
        assert mem.count("w2") == 1


def test_concurrent_writers_from_several_processes(db: str) -> None:
    """Three processes add to one namespace at once: every batch whole, nothing lost, row ids
    distinct, the generation counter counts every row."""
    size, n_batches = 20, 6
    with open_memory(db):
        pass  # created (and migrated) before the writers race
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, str(WRITER), db, "loop", str(n_batches), str(size)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**env, "WRITER_PREFIX": p})
             for p in ("x", "y", "z")]
    try:
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=30)
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert out.split().count("committed") == n_batches
    with open_memory(db) as mem:
        eps = mem.list("w")
        assert len(eps) == len({e.id for e in eps}) == 3 * n_batches * size
        per: dict[str, int] = {}
        for e in eps:
            key = e.episode_id.split("_")[0]
            per[key] = per.get(key, 0) + 1
        assert set(per.values()) == {size} and len(per) == 3 * n_batches
        assert mem.generation("w") == (3 * n_batches * size, 0)


def test_store_strings_pick_the_backend(tmp_path: Path) -> None:
    # an unknown URL scheme is refused in one line, and no folder named after it appears
    with pytest.raises(StoreError, match="unknown store URL scheme"):
        open_memory("mysql://u@127.0.0.1/db")
    with pytest.raises(StoreError, match="open_memory"):
        Memory.open("postgresql://postgres@127.0.0.1:1/x")
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL") as ei:
        open_memory("postgresql://postgres:secret@127.0.0.1:1/x", timeout=2)
    assert "secret" not in str(ei.value) and "127.0.0.1:1/x" in str(ei.value)
    with pytest.raises(StoreError, match="cannot connect"):
        open_memory("postgresql://[bad", timeout=2)
    assert not Path("postgresql:").exists() and not (tmp_path / "postgresql:").exists()
