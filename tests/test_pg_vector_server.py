"""The pgvector-capable test server: the extension installs, and an HNSW cosine index answers
nearest-neighbour queries in the same order as exact search on a small table.

The server is tests/pg.py's ``pgvector_server`` (``ANALOGIST_TEST_PGVECTOR_URL``, or one started
from the ``pgserver`` wheel's binaries; skipped with the reason otherwise, except under
``CI=true``).
"""

from __future__ import annotations

import math
import random

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed "
                              "(pip install 'analogist[postgres]')")

def _cos_dist(a, b):
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return 1.0 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _lit(v):
    return "[" + ",".join(repr(x) for x in v) + "]"


def test_vector_extension_and_hnsw_cosine(pgvector_module_db):
    rng = random.Random(20)
    rows = [[rng.gauss(0, 1) for _ in range(8)] for _ in range(200)]
    q = [rng.gauss(0, 1) for _ in range(8)]
    with psycopg.connect(pgvector_module_db, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("DROP TABLE IF EXISTS t_vec")
        conn.execute("CREATE TABLE t_vec (id int PRIMARY KEY, emb vector(8) NOT NULL)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO t_vec VALUES (%s, %s::vector)",
                            [(i, _lit(v)) for i, v in enumerate(rows)])
        conn.execute("CREATE INDEX ON t_vec USING hnsw (emb vector_cosine_ops)")
        conn.execute("SET hnsw.ef_search = 200")
        got = [r[0] for r in conn.execute(
            "SELECT id FROM t_vec ORDER BY emb <=> %s::vector LIMIT 10", (_lit(q),))]
        with pytest.raises(psycopg.errors.DataException, match="expected 8 dimensions"):
            conn.execute("INSERT INTO t_vec VALUES (999, '[1,2,3]'::vector)")
    exact = sorted(range(len(rows)), key=lambda i: _cos_dist(rows[i], q))[:10]
    assert got == exact
