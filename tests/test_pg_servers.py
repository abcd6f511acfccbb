"""The PostgreSQL test servers themselves: reachable, independent databases, contrib modules."""

from __future__ import annotations

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed "
                              "(pip install 'analogist[postgres]')")


def test_three_distinct_servers(pg_servers):
    urls = pg_servers.admin_urls(3)
    assert len(set(urls)) == 3
    ports = set()
    for url in urls:
        with psycopg.connect(url) as conn:
            ports.add(conn.execute("SHOW port").fetchone()[0])
            assert conn.execute("SHOW server_version_num").fetchone()[0] >= "150000"
    assert len(ports) == 3


def test_contrib_modules_install(pg_module_db):
    with psycopg.connect(pg_module_db, autocommit=True) as conn:
        for ext in ("postgres_fdw", "intarray"):
            conn.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
        got = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
    assert {"postgres_fdw", "intarray"} <= got


def test_each_test_gets_an_empty_schema(pg_url):
    with psycopg.connect(pg_url, autocommit=True) as conn:
        schema = conn.execute("SELECT current_schema()").fetchone()[0]
        assert schema is not None and schema.startswith("s")
        n = conn.execute("SELECT count(*) FROM information_schema.tables "
                         "WHERE table_schema = current_schema()").fetchone()[0]
        assert n == 0
        conn.execute("CREATE TABLE t (x int)")


def test_databases_on_distinct_servers_are_independent(pg_server_dbs):
    a, b = pg_server_dbs(2)
    with psycopg.connect(a, autocommit=True) as ca, psycopg.connect(b, autocommit=True) as cb:
        ca.execute("CREATE TABLE only_here (x int)")
        assert cb.execute("SELECT to_regclass('only_here')").fetchone()[0] is None
