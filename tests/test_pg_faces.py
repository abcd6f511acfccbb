"""The faces on a PostgreSQL store: the CLI (``--store postgresql://…`` and ``ANALOGIST_STORE``,
in real processes), the HTTP server and the MCP server, against a real server (tests/pg.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from analogist.memory import open_memory
from tests.test_server import _Server

HERE = Path(__file__).parent
SEED = HERE / "data" / "seed_example_signature.json"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "analogist", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})}, cwd=HERE)


def test_cli_add_find_map_list_on_postgres(pg_url, no_llm, tmp_path):
    r = _cli("add", str(SEED), "--store", pg_url)
    assert r.returncode == 0, r.stderr
    assert "added 1 episode" in r.stdout
    r = _cli("find", str(SEED), "--json", env={"ANALOGIST_STORE": pg_url})
    assert r.returncode == 0, r.stderr
    eid = json.loads(SEED.read_text(encoding="utf-8"))["episode_id"]
    assert eid in r.stdout
    r = _cli("map", str(SEED), str(SEED), "--json")
    assert r.returncode == 0, r.stderr
    with open_memory(pg_url) as m:
        assert [e.episode_id for e in m.list()] == [eid]
        assert len(m.log()) == 1          # find logged its attempt in the server's store
    # no SQLite file appeared under a folder named after the URL's scheme
    assert not (HERE / "postgresql:").exists()


def test_cli_unreachable_server_is_one_line_exit_2(no_llm):
    r = _cli("list", "--store", "postgresql://postgres:pw@127.0.0.1:1/nowhere")
    assert r.returncode == 2
    lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "cannot connect to PostgreSQL" in lines[0]
    assert "127.0.0.1:1/nowhere" in lines[0] and "pw" not in lines[0]
    assert "Traceback" not in r.stderr


def test_http_server_and_mcp_on_postgres(pg_url, no_llm):
    from analogist.mcp import AnalogistMCP
    from analogist.server import create_app
    from analogist.service.keys import keys_add

    token = keys_add(pg_url, "k", ["alpha"])
    sig = json.loads(SEED.read_text(encoding="utf-8"))
    with _Server(create_app(pg_url, rate_per_minute=0, mount_viewer=False)) as srv, \
            httpx.Client(base_url=srv.url, timeout=120) as c:
        assert c.get("/v1/health").status_code == 200
        who = c.get("/v1/whoami", headers={"Authorization": f"Bearer {token}"})
        assert who.status_code == 200 and who.json()["namespaces"] == ["alpha"]
    mcp = AnalogistMCP(pg_url, "alpha")
    try:
        mcp.remember_episode(signature=sig)
        listed = mcp.list_episodes()
        assert sig["episode_id"] in json.dumps(listed)
    finally:
        mcp.close()
    with open_memory(pg_url) as m:
        assert m.count("alpha") == 1 and [k["name"] for k in m.api_keys()] == ["k"]

