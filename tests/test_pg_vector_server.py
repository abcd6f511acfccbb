"""The pgvector-capable test server: the extension installs, and an HNSW cosine index answers
nearest-neighbour queries in the same order as exact search on a small table.

The server comes from ``ANALOGIST_TEST_PGVECTOR_URL`` (``.ci/run`` starts one from the
``pgserver`` wheel's binaries), otherwise one is started here from those binaries when the wheel
is installed; otherwise the test is skipped with the reason, except under ``CI=true``.
"""

from __future__ import annotations

import math
import os
import random

import pytest

from tests import pg_servers as _servers

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed "
                              "(pip install 'analogist[postgres]')")

URL_ENV = "ANALOGIST_TEST_PGVECTOR_URL"


@pytest.fixture(scope="module")
def pgvector_url():
    given = os.environ.get(URL_ENV, "").strip()
    if given:
        yield given
        return
    b = _servers.pgvector_bin()
    if b is None:
        msg = (f"pgvector: {URL_ENV} is not set and no PostgreSQL with pgvector is installed "
               "(pip install 'pgserver==0.1.4')")
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg + " (CI=true: a missing server is an error)", pytrace=False)
        pytest.skip(msg)
    old = os.environ.get("ANALOGIST_PG_BIN")
    os.environ["ANALOGIST_PG_BIN"] = str(b)
    root = None
    try:
        root, urls = _servers.start(1)
        yield urls[0]
    finally:
        if root is not None:
            _servers.stop(root)
        if old is None:
            os.environ.pop("ANALOGIST_PG_BIN", None)
        else:
            os.environ["ANALOGIST_PG_BIN"] = old


def _cos_dist(a, b):
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return 1.0 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _lit(v):
    return "[" + ",".join(repr(x) for x in v) + "]"


def test_vector_extension_and_hnsw_cosine(pgvector_url):
    rng = random.Random(20)
    rows = [[rng.gauss(0, 1) for _ in range(8)] for _ in range(200)]
    q = [rng.gauss(0, 1) for _ in range(8)]
    with psycopg.connect(pgvector_url, autocommit=True) as conn:
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
