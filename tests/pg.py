"""PostgreSQL servers for the tests: fixtures registered in tests/conftest.py.

Where the servers come from, in order:

1. ``ANALOGIST_TEST_PG_URLS``: comma-separated admin URLs of running servers (``.ci/run`` starts
   three and exports them), e.g. ``postgresql://postgres@127.0.0.1:5433/postgres,...``;
2. otherwise throwaway servers started here, on demand, from the PostgreSQL binaries
   (``tests/pg_servers.py``: the same start/stop logic as CI), stopped at the end of the session;
3. otherwise the test is skipped with the reason — except under ``CI=true``, where a missing
   server is an error.

Fixtures:

- ``pg_servers`` (session): a :class:`PgServers`; ``pg_servers.admin_urls(n)`` gives the admin
  URLs of ``n`` distinct servers (starting more throwaway ones if needed);
  ``pg_servers.new_database(server=k)`` creates a database with a unique name on server ``k``
  and returns its URL (dropped at the end of the session).
- ``pg_module_db`` (module): one fresh database on server 0 for the test module.
- ``pg_url`` (function): a fresh, empty store URL — its own schema inside the module's database
  (``?options=-csearch_path=...``), so tests are independent at the cost of a CREATE SCHEMA.
- ``pg_server_dbs`` (function): a factory ``pg_server_dbs(n)`` -> fresh databases on ``n``
  distinct servers (for partitioning tests).
- ``pgvector_server`` (session), ``pgvector_module_db`` (module), ``pgvector_url`` (function):
  the same on a server that has the pgvector extension (``ANALOGIST_TEST_PGVECTOR_URL``, or
  one started from the ``pgserver`` wheel's PostgreSQL 16 binaries).
"""

from __future__ import annotations

import itertools
import os
import uuid
from contextlib import suppress
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

from tests import pg_servers as _servers

URLS_ENV = "ANALOGIST_TEST_PG_URLS"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _with_db(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + dbname, parts.query, ""))


def with_search_path(url: str, schema: str) -> str:
    """``url`` whose sessions use ``schema`` (libpq's ``options`` parameter)."""
    parts = urlsplit(url)
    opt = "options=" + quote(f"-csearch_path={schema}")
    query = f"{parts.query}&{opt}" if parts.query else opt
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


class PgServers:
    """The servers of this session (given by the environment or started on demand)."""

    def __init__(self) -> None:
        given = [u.strip() for u in os.environ.get(URLS_ENV, "").split(",") if u.strip()]
        self._given = given
        self._started: list[str] = []
        self._roots: list[str] = []
        self._dbs: list[tuple[str, str]] = []
        self._counter = itertools.count()
        self._tag = uuid.uuid4().hex[:6]

    def _unavailable(self, n: int) -> None:
        reason = _servers.unavailable_reason()
        msg = f"PostgreSQL: needs {n} server(s); {URLS_ENV} is not set and {reason}"
        if _in_ci():
            pytest.fail(msg + " (CI=true: a missing server is an error)", pytrace=False)
        pytest.skip(msg)

    def admin_urls(self, n: int = 1) -> list[str]:
        """Admin URLs (database ``postgres``) of ``n`` distinct servers."""
        have = self._given or self._started
        if len(have) >= n:
            return have[:n]
        if self._given:
            msg = f"PostgreSQL: needs {n} servers, {URLS_ENV} lists {len(self._given)}"
            if _in_ci():
                pytest.fail(msg, pytrace=False)
            pytest.skip(msg)
        if _servers.unavailable_reason():
            self._unavailable(n)
        root, urls = _servers.start(n - len(self._started))
        self._roots.append(str(root))
        self._started.extend(urls)
        return self._started[:n]

    def new_database(self, server: int = 0, prefix: str = "t") -> str:
        """A new database with a unique name on server ``server``; returns its URL."""
        psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed "
                                      "(pip install 'analogist[postgres]')")
        admin = self.admin_urls(server + 1)[server]
        name = f"analogist_{prefix}_{self._tag}_{next(self._counter)}".lower()
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in name)[:63]
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self._dbs.append((admin, name))
        return _with_db(admin, name)

    def close(self) -> None:
        if self._given:
            try:
                import psycopg  # noqa: PLC0415 - optional; only needed when databases were made
            except ImportError:
                return
            for admin, name in self._dbs:
                try:
                    with psycopg.connect(admin, autocommit=True) as conn:
                        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                except psycopg.Error:
                    pass
        for root in self._roots:
            _servers.stop(root)


@pytest.fixture(scope="session")
def pg_servers():
    servers = PgServers()
    yield servers
    servers.close()


@pytest.fixture(scope="module")
def pg_module_db(pg_servers, request):
    mod = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    return pg_servers.new_database(0, prefix=mod[:20])


_schemas = itertools.count()


@pytest.fixture
def pg_url(pg_module_db):
    """A fresh, empty PostgreSQL store URL for one test."""
    import psycopg  # noqa: PLC0415 - present: pg_module_db imported it or skipped

    schema = f"s{next(_schemas)}"
    with psycopg.connect(pg_module_db, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return with_search_path(pg_module_db, schema)


@pytest.fixture
def pg_server_dbs(pg_servers):
    """Factory: ``pg_server_dbs(n)`` -> URLs of fresh databases on ``n`` distinct servers."""
    def make(n: int) -> list[str]:
        pg_servers.admin_urls(n)
        return [pg_servers.new_database(k, prefix=f"srv{k}") for k in range(n)]
    return make


# -- a server with the pgvector extension ---------------------------------------------------
PGVECTOR_ENV = "ANALOGIST_TEST_PGVECTOR_URL"
PGVECTOR_UNAVAILABLE_ENV = "ANALOGIST_TEST_PGVECTOR_UNAVAILABLE"


@pytest.fixture(scope="session")
def pgvector_server():
    """The admin URL of a PostgreSQL server with pgvector: ``ANALOGIST_TEST_PGVECTOR_URL``
    (``.ci/run`` starts one from the ``pgserver`` wheel's binaries), otherwise one started here
    from those binaries when the wheel is installed. Otherwise skipped with the reason; under
    ``CI=true`` that is an error, unless ``.ci/run`` said why it could not start one
    (``ANALOGIST_TEST_PGVECTOR_UNAVAILABLE``: the wheel did not install)."""
    given = os.environ.get(PGVECTOR_ENV, "").strip()
    if given:
        yield given
        return
    said = os.environ.get(PGVECTOR_UNAVAILABLE_ENV, "").strip()
    if said:
        pytest.skip(f"pgvector: {said}")
    b = _servers.pgvector_bin()
    reason = (f"{PGVECTOR_ENV} is not set and no PostgreSQL with pgvector is installed "
              "(pip install --no-deps --only-binary=:all: 'pgserver==0.1.4')" if b is None
              else _servers.unavailable_reason(b))
    if reason:
        msg = f"pgvector: {reason}"
        if _in_ci():
            pytest.fail(msg + " (CI=true: a missing server is an error)", pytrace=False)
        pytest.skip(msg)
    root, urls = _servers.start(1, binaries=b)
    try:
        yield urls[0]
    finally:
        _servers.stop(root, b)


@pytest.fixture(scope="module")
def pgvector_module_db(pgvector_server, request):
    """One fresh database on the pgvector server for the test module (dropped afterwards)."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed "
                                  "(pip install 'analogist[postgres]')")
    mod = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    name = f"analogist_{mod[:20]}_{uuid.uuid4().hex[:6]}".lower()
    with psycopg.connect(pgvector_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield _with_db(pgvector_server, name)
    with suppress(psycopg.Error), psycopg.connect(pgvector_server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pgvector_url(pgvector_module_db):
    """A fresh, empty store URL on the pgvector server (its own schema)."""
    import psycopg  # noqa: PLC0415 - present: pgvector_module_db imported it or skipped

    schema = f"v{next(_schemas)}"
    with psycopg.connect(pgvector_module_db, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return with_search_path(pgvector_module_db, schema)
