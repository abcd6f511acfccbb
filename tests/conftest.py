"""Shared fixtures."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def no_llm(tmp_path, monkeypatch):
    """An environment with no LLM configured anywhere: no ANALOGIST_* endpoint, model or key
    variables (for any role), no OPENAI_API_KEY, no config file."""
    for k in list(os.environ):
        if k in ("OPENAI_API_KEY", "ANALOGIST_CONFIG") or (
                k.startswith("ANALOGIST_") and k.endswith(("_BASE_URL", "_MODEL", "_API_KEY"))):
            monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


# PostgreSQL servers (tests/pg.py): pg_servers, pg_module_db, pg_url, pg_server_dbs; and one
# with pgvector: pgvector_server, pgvector_module_db, pgvector_url
from tests.pg import (  # noqa: E402,F401
    pg_module_db,
    pg_server_dbs,
    pg_servers,
    pg_url,
    pgvector_module_db,
    pgvector_server,
    pgvector_url,
)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    """A fresh, empty store of each backend, as the string a user gives ``--store``: a SQLite
    file in tmp_path, then a PostgreSQL URL (its own schema; skipped with the reason, or an error
    under CI=true, when no server can be had)."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    return request.getfixturevalue("pg_url")
