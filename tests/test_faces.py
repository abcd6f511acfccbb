"""The three faces give one answer: the same find, map, foresight and check requests sent through
the CLI (typer's runner), the HTTP API (a real uvicorn server on a free loopback port) and the
MCP server (a real ``analogist mcp`` subprocess driven by the SDK's client over stdio) come back
the same, because all three call :mod:`analogist.app`.

What may differ is what belongs to one request: timings, the analogy-log row id, and the extra
fields a face adds around the shared answer (the HTTP check's per-item details, MCP's rendered
report). No LLM is configured (the LLM is never faked); every face reports the same skips.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import StdioServerParameters, stdio_client
from typer.testing import CliRunner

from analogist.casebook import load_casebook
from analogist.cli import app as cli
from analogist.memory.sqlite import Memory
from analogist.server import create_app
from analogist.service.keys import keys_add
from tests.test_mcp import SyncClient
from tests.test_server import _Server

DATA = Path(__file__).parent / "data"
NS = "faces"
EVENT = "arab-spring"
FORESIGHT = {"rounds": 0, "per_round": 4}


def _strip_find(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in ("timings_ms", "log_id")}


@pytest.fixture(scope="module")
def faces(tmp_path_factory):
    """A store of casebook episodes, a key, a running HTTP server and an MCP session."""
    tmp = tmp_path_factory.mktemp("faces")
    store = tmp / "store.db"
    cases = [e for e in load_casebook() if not e.is_decoy]
    target, base, others = cases[0], cases[1], cases[2:14]
    with Memory.open(store) as m:
        m.add_many([c.signature for c in [base, *others]], namespace=NS)
    files = {}
    for name, case in (("target", target), ("base", base)):
        files[name] = tmp / f"{name}.json"
        files[name].write_text(json.dumps(case.signature.to_data()), encoding="utf-8")
    token = keys_add(store, "faces", [NS])
    env = {"HOME": str(tmp), "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(tmp / "xdg")}
    params = StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "analogist", "mcp", "--store", str(store), "--namespace", NS,
        "--no-text-embedding"])
    log = (tmp / "mcp.log").open("a")
    with pytest.MonkeyPatch.context() as mp:     # the server reads its settings now
        for k in list(os.environ):
            if k in ("OPENAI_API_KEY", "ANALOGIST_CONFIG") or (
                    k.startswith("ANALOGIST_") and k.endswith(("_BASE_URL", "_MODEL", "_API_KEY"))):
                mp.delenv(k)
        mp.setenv("XDG_CONFIG_HOME", str(tmp / "xdg"))
        served = create_app(store, mount_viewer=False)
    with _Server(served) as srv, \
            httpx.Client(base_url=f"{srv.url}/v1/ns/{NS}", headers={"X-API-Key": token},
                         timeout=600) as http:
        mcp = SyncClient(lambda: stdio_client(params, errlog=log))
        try:
            yield {"store": store, "files": files, "target": target, "base": base,
                   "http": http, "mcp": mcp}
        finally:
            mcp.close()
            log.close()


def _cli(*args: str) -> dict[str, Any]:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def _http(faces: dict[str, Any], route: str, body: dict[str, Any]) -> dict[str, Any]:
    r = faces["http"].post(route, json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_find_is_the_same_on_every_face(faces, no_llm):
    sig = faces["target"].signature.to_data()
    cli_ = _cli("find", str(faces["files"]["target"]), "--store", str(faces["store"]),
                "--namespace", NS, "--k", "3", "--json")
    http = _http(faces, "/find", {"target": sig, "k": 3})
    mcp = faces["mcp"].ok("find_analogy", {"target": sig, "k": 3})
    assert cli_["results"], "the target should find analogues"
    assert _strip_find(cli_) == _strip_find(http) == _strip_find(mcp)
    assert any(s.startswith("critic: skipped") for s in cli_["skipped"])
    for hit in cli_["results"]:           # one named score, the same on the hit and its report
        assert hit["similarity"] == hit["report"]["similarity"] == hit["score"]


def test_map_is_the_same_on_every_face(faces, no_llm):
    b, t = faces["base"].signature.to_data(), faces["target"].signature.to_data()
    cli_ = _cli("map", str(faces["files"]["base"]), str(faces["files"]["target"]), "--json")
    http = _http(faces, "/map", {"base": {"signature": b}, "target": {"signature": t}})
    mcp = faces["mcp"].ok("map_cases", {"source": b, "target": t})
    assert http["mapping"] is not None
    assert cli_["mappings"][0] == http["mapping"] == mcp["mapping"]
    assert {k: v for k, v in mcp.items() if k in http["report"]} == http["report"]
    assert cli_["report"] == http["report"]     # the CLI's map of two Signatures is judged too
    assert "similarity" in http["report"] and "raw_ses" in http["report"]


def test_foresight_is_the_same_on_every_face(faces, no_llm):
    cli_ = _cli("foresight", "brief", EVENT, "--store", str(faces["store"]), "--namespace", NS,
                "--rounds", str(FORESIGHT["rounds"]), "--per-round",
                str(FORESIGHT["per_round"]), "--no-embedding", "--json")
    http = _http(faces, "/foresight", {"target": EVENT, "embedding": False, **FORESIGHT})
    mcp = faces["mcp"].ok("foresight_brief", {"target": EVENT, **FORESIGHT})
    shared = set(cli_) - {"skipped"}
    assert shared and shared <= set(http) and shared <= set(mcp)
    assert {k: cli_[k] for k in shared} == {k: http[k] for k in shared} == \
        {k: mcp[k] for k in shared}
    assert http["skipped"] == mcp["skipped"]
    assert http["pool_size"] == mcp["pool_size"]


def test_check_is_the_same_on_every_face(faces, no_llm):
    path = DATA / "safeguard" / "good_turn.json"
    turn = json.loads(path.read_text())
    cli_ = _cli("check", str(path), "--json")
    http = _http(faces, "/check", {"turn": turn})
    mcp = faces["mcp"].ok("check_analogy", {"turn": turn})
    assert cli_["analogies"]
    assert {k: mcp[k] for k in cli_} == cli_
    assert {k: http[k] for k in ("content_share", "content_share_flag")} == \
        {k: cli_[k] for k in ("content_share", "content_share_flag")}
    assert [{k: a[k] for k in c} for a, c in zip(http["analogies"], cli_["analogies"],
                                                 strict=True)] == cli_["analogies"]
