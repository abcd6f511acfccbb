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


# PostgreSQL servers (tests/pg.py): pg_servers, pg_module_db, pg_url, pg_server_dbs
from tests.pg import pg_module_db, pg_server_dbs, pg_servers, pg_url  # noqa: E402,F401
