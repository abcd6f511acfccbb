"""MCP for agent builders (issue 21, item 3), through the SDK's client over stdio: typed
Signature schemas (the one ``analogist schema`` prints), list / delete / record_outcome tools,
plain-language descriptions, integer or text ids, one-line errors, and a JSON-RPC error reply to
a line that is not JSON-RPC."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from analogist.app import json_schema
from analogist.casebook import load_casebook
from analogist.cli import app
from analogist.signature import dump_signature
from tests.mcp_client import SERVER_FLAGS, SyncClient, stdio_transport

INTERNAL = ("seed 0", "mac/fac", "sme", "§")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    d = tmp_path_factory.mktemp("agents")
    c = SyncClient(stdio_transport(d / "s.db", "ag", d / "server.log"))
    c.store = d / "s.db"  # type: ignore[attr-defined]
    yield c
    c.close()


@pytest.fixture(scope="module")
def cases() -> list[Any]:
    by: dict[str, list[Any]] = {}
    for e in load_casebook():
        if e.decoy_of is None:
            by.setdefault(e.mechanism, []).append(e)
    m = sorted(k for k, v in by.items() if len(v) >= 3)[0]
    return by[m][:3]


def sig(e: Any) -> dict[str, Any]:
    return json.loads(dump_signature(e.signature))


def test_signature_arguments_are_typed_with_the_schema_command(server: SyncClient,
                                                               cases: list[Any]) -> None:
    printed = json.loads(CliRunner().invoke(app, ["schema"]).stdout)
    assert printed == json_schema("signature")
    tools = {t.name: t for t in server.run(lambda s: s.list_tools()).tools}
    want = {k: v for k, v in printed.items() if k not in ("$defs", "$schema")}
    for name, arg in (("map_cases", "source"), ("map_cases", "target"),
                      ("find_analogy", "target"), ("remember_episode", "signature")):
        schema = tools[name].input_schema
        assert schema["$defs"]["Signature"] == want
        for k, v in printed["$defs"].items():
            assert schema["$defs"][k] == v
        assert "#/$defs/Signature" in json.dumps(schema["properties"][arg])
    v = jsonschema.Draft202012Validator(tools["map_cases"].input_schema)
    assert not list(v.iter_errors({"source": sig(cases[0]), "target": 3}))
    assert list(v.iter_errors({"source": {"episode_id": "x", "rolez": {}}, "target": "b"}))
    for t in tools.values():
        words = (t.description + json.dumps(t.input_schema.get("properties"))).lower()
        assert not [w for w in INTERNAL if w in words], (t.name, t.description)


def test_list_delete_and_integer_ids(server: SyncClient, cases: list[Any]) -> None:
    rows = [server.ok("remember_episode", {"signature": sig(e)}) for e in cases]
    listed = server.ok("list_episodes", {"limit": 2})
    assert listed["total"] == 3 and listed["count"] == 2
    assert server.ok("list_episodes", {"offset": 2})["episodes"][0]["episode_id"] == cases[2].id
    by_int = server.ok("map_cases", {"source": rows[0]["id"], "target": rows[1]["id"]})
    by_text = server.ok("map_cases", {"source": str(rows[0]["id"]), "target": cases[1].id})
    assert by_int["likenesses"] == by_text["likenesses"] and by_int["likenesses"]
    found = server.ok("find_analogy", {"target": rows[0]["id"], "k": 2})
    assert cases[0].id not in [h["episode_id"] for h in found["results"]]
    gone = server.ok("delete_episode", {"episode": rows[2]["id"]})
    assert gone["deleted"]["episode_id"] == cases[2].id
    assert "no episode" in server.err("delete_episode", {"episode": rows[2]["id"]})
    assert "no episode" in server.err("delete_episode", {"episode": 10 ** 40})
    assert server.ok("list_episodes", {})["total"] == 2


def test_record_outcome_feeds_triggers_fit(server: SyncClient, cases: list[Any]) -> None:
    found = server.ok("find_analogy", {"target": cases[0].id})
    got = server.ok("record_outcome", {"log_id": found["log_id"], "helped": True,
                                       "used": found["results"][0]["episode_id"]})
    assert got["outcome"] == "useful"
    neg = server.ok("record_outcome", {"used": cases[1].id, "negative": True, "result": 1,
                                       "counterfactual": 2})
    assert neg["verdict"] == "worse"
    assert "not both" in server.err("record_outcome", {"log_id": found["log_id"],
                                                       "helped": True, "negative": True})
    store = str(server.store)  # type: ignore[attr-defined]
    r = CliRunner().invoke(app, ["triggers", "fit", "--store", store, "--namespace", "ag"])
    assert "(no trigger): 2 with outcome; useful 0.50, negative transfer 0.50" in r.output


@pytest.mark.parametrize("tool, args, needle", [
    ("find_analogy", {"target": "x", "k": "abc"}, "k"),
    ("find_analogy", {"target": "x", "k": True}, "k"),
    ("find_analogy", {"target": [1, 2]}, "target"),
    ("find_analogy", {"targett": "x"}, "unknown argument 'targett'; find_analogy takes"),
    ("map_cases", {"source": "a"}, "field target: required argument missing"),
    ("check_analogy", {"turn": {"argumentz": []}}, "argumentz"),
    ("record_outcome", {"log_id": 1, "helped": "yes"}, "helped"),
    ("list_episodes", {"limit": 10 ** 30}, "limit"),
    ("remember_episode", {"signature": {"episode_id": "e", "unknown_key": 1}}, "field kind"),
])
def test_bad_arguments_are_one_line(server: SyncClient, tool: str, args: dict[str, Any],
                                    needle: str) -> None:
    msg = server.err(tool, args)
    assert needle in msg and "\n" not in msg.strip(), msg
    assert "pydantic" not in msg and "input_value" not in msg and "Traceback" not in msg


def test_garbage_lines_get_json_rpc_errors(tmp_path: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    deep = '{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": ' + \
        "[" * 200_000 + "]" * 200_000 + "}"
    lines = ["garbage{", deep, '{"foo": 1}', json.dumps(init)]
    p = subprocess.run([sys.executable, "-m", "analogist", "mcp", "--store",
                        str(tmp_path / "g.db"), *SERVER_FLAGS],
                       input="\n".join(lines) + "\n", capture_output=True, text=True,
                       timeout=120)
    replies = [json.loads(x) for x in p.stdout.splitlines()]
    assert [r.get("error", {}).get("code") for r in replies[:3]] == [-32700, -32700, -32600]
    assert [r["id"] for r in replies] == [None, 7, None, 1]
    assert replies[3]["result"]["serverInfo"]["name"] == "analogist"
    assert "Traceback" not in p.stderr
