"""The MCP server (issue 9, part B) driven by the official SDK's client over real transports.

Every must-show test spawns ``python -m analogist mcp --store <tmp> --namespace <ns>`` as a
subprocess and talks to it with :class:`mcp.ClientSession` over stdio (and one over streamable
HTTP). Servers run with ``--no-text-embedding`` (MAC structural only: the text embedder takes
tens of seconds to embed the historical corpus on a loaded machine) and ``--no-llm`` (no LLM is
configured in tests; the LLM is never faked).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.streamable_http import streamable_http_client

from analogist.casebook import load_casebook
from analogist.errors import AnalogistError
from analogist.memory.sqlite import Memory
from tests.mcp_client import SERVER_FLAGS, SyncClient, stdio_transport

TOOLS = {"remember_episode", "find_analogy", "map_cases", "foresight_brief", "check_analogy",
         "list_episodes", "delete_episode", "record_outcome"}
READ_ONLY = {"map_cases", "foresight_brief", "check_analogy", "list_episodes"}
DESTRUCTIVE = {"delete_episode"}


def counts(store: Path) -> dict[str, int]:
    """Signature rows per namespace, read through a separate connection."""
    with Memory.open(store) as m:
        return {ns: m.count(ns) for ns in m.namespaces()}


# -- fixtures ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def casebook() -> list[Any]:
    return [e for e in load_casebook() if e.decoy_of is None]


@pytest.fixture(scope="module")
def pair(casebook: list[Any]) -> tuple[Any, Any, Any]:
    """Two episodes of one mechanism and one of another."""
    by: dict[str, list[Any]] = {}
    for e in casebook:
        by.setdefault(e.mechanism, []).append(e)
    mechs = sorted(m for m, v in by.items() if len(v) >= 2)
    return by[mechs[0]][0], by[mechs[0]][1], by[mechs[1]][0]


def sig_json(entry: Any) -> dict[str, Any]:
    from analogist.signature import dump_signature

    return json.loads(dump_signature(entry.signature))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    d = tmp_path_factory.mktemp("mcp")
    store = d / "store.db"
    c = SyncClient(stdio_transport(store, "ns", d / "server.log"))
    c.store = store  # type: ignore[attr-defined]
    yield c
    c.close()


# -- tools and annotations -----------------------------------------------------------------

def test_list_tools_with_annotations(server: SyncClient) -> None:
    tools = {t.name: t for t in server.run(lambda s: s.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, t in tools.items():
        assert t.annotations is not None and t.description
        assert t.annotations.read_only_hint is (name in READ_ONLY), name
        assert t.annotations.destructive_hint is (name in DESTRUCTIVE), name
        # no tool can be pointed at another namespace
        assert "namespace" not in json.dumps(t.input_schema).lower(), name
    assert server.init.server_info.name == "analogist"


def test_resources_listed(server: SyncClient) -> None:
    res = {str(r.uri) for r in server.run(lambda s: s.list_resources()).resources}
    assert {"analogist://episodes", "analogist://reports/log",
            "analogist://reports/last-brief"} <= res
    tmpl = {t.uri_template for t in server.run(lambda s: s.list_resource_templates())
            .resource_templates}
    assert "analogist://episodes/{episode_id}" in tmpl


def test_remember_signature_and_read_back(server: SyncClient, pair: Any) -> None:
    a, _, _ = pair
    out = server.ok("remember_episode", {"signature": sig_json(a)})
    assert out["episode_id"] == a.id and out["namespace"] == "ns"
    back = server.read(f"analogist://episodes/{a.id}")
    assert back["signature"] == sig_json(a)
    by_row = server.read(f"analogist://episodes/{out['id']}")
    assert by_row["episode_id"] == a.id
    listed = server.read("analogist://episodes")
    assert a.id in [e["episode_id"] for e in listed["episodes"]]
    assert counts(server.store)["ns"] == listed["count"]  # type: ignore[attr-defined]


def test_remember_from_text(server: SyncClient) -> None:
    text = ("The dashboard showed a cached copy of the registry, so the engineer announced the "
            "rollback was complete because nobody checked the registry itself.")
    out = server.ok("remember_episode", {"from_text": text, "episode_id": "from-text-1",
                                         "domain": "software_operations"})
    assert out["episode_id"] == "from-text-1"
    assert out["signature"]["relations"], "the encoder should find relations"
    assert server.read("analogist://episodes/from-text-1")["signature"] == out["signature"]


def test_find_analogy_and_log(server: SyncClient, pair: Any) -> None:
    a, b, c = pair
    for e in (b, c):
        server.ok("remember_episode", {"signature": sig_json(e)})
    before = server.read("analogist://reports/log")["count"]
    out = server.ok("find_analogy", {"target": sig_json(a) | {"episode_id": "probe"}, "k": 3})
    ids = [r["episode_id"] for r in out["results"]]
    assert ids and ids[0] in {a.id, b.id}, ids
    log = server.read("analogist://reports/log")
    assert log["count"] == before + 1 and log["log"][0]["id"] == out["log_id"]
    # a stored episode can be the target by id
    by_id = server.ok("find_analogy", {"target": b.id, "k": 2})
    assert by_id["results"]
    assert any("LLM" in s or "llm" in s.lower() for s in by_id["skipped"])


def test_map_cases(server: SyncClient, pair: Any) -> None:
    a, b, _ = pair
    out = server.ok("map_cases", {"source": sig_json(a), "target": sig_json(b)})
    assert out["source"] == a.id and out["target"] == b.id
    assert out["likenesses"] and out["role_map"]
    assert isinstance(out["differences"], list) and isinstance(out["unknowns"], list)
    assert out["candidate_inferences"] == out["conclusions"]
    assert out["report"].startswith("ANALOGY")
    # by episode id of this namespace: the same report
    by_id = server.ok("map_cases", {"source": a.id, "target": b.id})
    assert by_id["likenesses"] == out["likenesses"]


def test_foresight_brief_with_namespace_events(server: SyncClient) -> None:
    from analogist.foresight.event import load_corpus

    ev = load_corpus().lookup("iranian-revolution-1979")
    assert ev is not None
    d = ev.model_dump(mode="json", exclude_none=True)
    d.update(event_id="my-uprising", name="My copied uprising", aliases=[], part_of=[],
             related=[])
    stored = server.ok("remember_episode", {"event": d})
    assert stored["kind"] == "event"
    brief = server.ok("foresight_brief", {"target": "arab-spring", "rounds": 1,
                                          "per_round": 4})
    assert brief["target"]
    prov = {a["event_id"]: a["provenance"] for a in brief["analogies"]}
    assert prov.get("my-uprising") == "memory", prov
    last = server.read("analogist://reports/last-brief")
    assert last["brief"] == brief


def test_check_analogy(server: SyncClient) -> None:
    text = ("We must act now: this is just like 1929, when the stock market crash led to the "
            "Great Depression.")
    out = server.ok("check_analogy", {"text": text})
    assert out["analogies"] and out["all_pass"] is False
    turn = {"arguments": [{"claim": "Raise rates now.", "analogies": [{
        "source": "the 1970s inflation",
        "similarities": ["rising wages feed prices, which feed wage demands"],
        "differences": []}]}]}
    checked = server.ok("check_analogy", {"turn": turn})
    # one similarity and no difference: fails seed 003's rule 1
    assert len(checked["analogies"]) == 1 and checked["all_pass"] is False
    assert any("difference" in r for r in checked["analogies"][0]["reasons"])


# -- bad input: a tool error with a clear message, the store unchanged ---------------------

def test_bad_inputs_leave_store_unchanged(server: SyncClient, pair: Any) -> None:
    a, _, _ = pair
    store = server.store  # type: ignore[attr-defined]
    if a.id not in {e["episode_id"] for e in server.read("analogist://episodes")["episodes"]}:
        server.ok("remember_episode", {"signature": sig_json(a)})   # for the duplicate case
    before = counts(store)
    log_before = server.read("analogist://reports/log")["count"]
    bad_sig = sig_json(a) | {"episode_id": "broken", "roles": "not a mapping"}
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("remember_episode", {}, "exactly one of"),
        ("remember_episode", {"signature": sig_json(a), "from_text": "x y z"}, "exactly one of"),
        ("remember_episode", {"signature": bad_sig}, "roles"),
        ("remember_episode", {"signature": sig_json(a)}, a.id),          # duplicate id
        ("remember_episode", {"from_text": "   "}, "from_text"),
        ("remember_episode", {"from_text": "word " * 50_000}, "over the limit"),
        ("remember_episode", {"event": {"event_id": "e"}}, "event"),
        ("remember_episode", {"signature": "a string"}, "signature"),       # schema: object
        ("find_analogy", {"k": 3}, "exactly one of"),
        ("find_analogy", {"target": "no-such-episode"}, "no episode"),
        ("find_analogy", {"target": a.id, "k": 0}, "k must be"),
        ("find_analogy", {"target": bad_sig}, "roles"),
        ("map_cases", {"source": a.id, "target": "no-such-episode"}, "no episode"),
        ("map_cases", {"source": a.id}, "target"),                          # missing argument
        ("foresight_brief", {"target": "no such event anywhere"}, "neither an event"),
        ("foresight_brief", {"target": "arab-spring", "rounds": 99}, "rounds"),
        ("foresight_brief", {"target": {"event_id": 3}}, "target"),
        ("check_analogy", {}, "exactly one of"),
        ("check_analogy", {"text": ""}, "text"),
        ("check_analogy", {"text": "x", "mode": "lenient"}, "mode"),
        ("check_analogy", {"turn": {"arguments": "nope"}}, "arguments"),
    ]
    for name, args, needle in cases:
        msg = server.err(name, args)
        assert needle.lower() in msg.lower(), (name, args, msg)
        assert "Traceback" not in msg
    unknown = server.call("no_such_tool", {})
    assert unknown.is_error and "no_such_tool" in unknown.content[0].text
    with pytest.raises(Exception, match="no episode"):
        server.read("analogist://episodes/no-such-episode")
    with pytest.raises(Exception):  # noqa: B017 — refused by the SDK's path checks or by us
        server.read("analogist://episodes/..%2F..%2Fetc%2Fpasswd")
    assert counts(store) == before
    assert server.read("analogist://reports/log")["count"] == log_before


# -- namespaces: two servers on one store --------------------------------------------------

def test_namespaces_are_isolated(tmp_path: Path, pair: Any) -> None:
    a, b, _ = pair
    store = tmp_path / "shared.db"
    one = SyncClient(stdio_transport(store, "alpha", tmp_path / "alpha.log"))
    two = SyncClient(stdio_transport(store, "beta", tmp_path / "beta.log"))
    leaks = 0
    try:
        one.ok("remember_episode", {"signature": sig_json(a)})
        one.ok("remember_episode", {"signature": sig_json(b)})
        one.ok("find_analogy", {"target": a.id})
        # an extra "namespace" key in a signature never moves the write elsewhere
        sneaky = sig_json(b) | {"episode_id": "sneaky", "namespace": "beta"}
        assert "namespace" in one.err("remember_episode", {"signature": sneaky})

        seen = two.read("analogist://episodes")
        leaks += seen["count"]
        for key in (a.id, b.id, "sneaky", "1", "2"):
            try:
                two.read(f"analogist://episodes/{key}")
                leaks += 1
            except Exception as e:  # noqa: BLE001
                assert "no episode" in str(e)
        for tool, args in (("map_cases", {"source": a.id, "target": b.id}),
                           ("find_analogy", {"target": a.id})):
            if not two.call(tool, args).is_error:
                leaks += 1
        leaks += two.read("analogist://reports/log")["count"]     # alpha's find is not here
        found = two.ok("find_analogy", {"target": sig_json(a) | {"episode_id": "q"}})
        leaks += len(found["results"])
        assert two.read("analogist://reports/log")["count"] == 1  # its own find only
        # beta may reuse alpha's episode ids: separate partitions
        two.ok("remember_episode", {"signature": sig_json(a)})
        assert one.read("analogist://episodes")["count"] == 2
        leaks += sum(1 for e in one.read("analogist://episodes")["episodes"]
                     if e["namespace"] != "alpha")
    finally:
        one.close()
        two.close()
    assert leaks == 0
    c = counts(store)
    assert c == {"alpha": 2, "beta": 1}


# -- streamable HTTP -----------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_streamable_http(tmp_path: Path, pair: Any) -> None:
    a, b, _ = pair
    port = _free_port()
    log = (tmp_path / "http.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "analogist", "mcp", "--store", str(tmp_path / "h.db"),
         "--namespace", "web", "--transport", "http", "--port", str(port), *SERVER_FLAGS],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        while True:     # wait for the listener (the process exiting first is a failure)
            assert proc.poll() is None, (tmp_path / "http.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                threading.Event().wait(0.2)
        c = SyncClient(lambda: streamable_http_client(f"http://127.0.0.1:{port}/mcp"))
        try:
            tools = {t.name for t in c.run(lambda s: s.list_tools()).tools}
            assert tools == TOOLS
            c.ok("remember_episode", {"signature": sig_json(a)})
            assert c.read(f"analogist://episodes/{a.id}")["namespace"] == "web"
            out = c.ok("map_cases", {"source": a.id, "target": sig_json(b)})
            assert out["likenesses"]
            assert "exactly one of" in c.err("remember_episode", {})
        finally:
            c.close()
    finally:
        proc.terminate()
        proc.wait(60)
        log.close()
    assert counts(tmp_path / "h.db") == {"web": 1}


# -- the protocol-free body: properties and start-up errors --------------------------------

@pytest.fixture(scope="module")
def body(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from analogist.mcp import AnalogistMCP, MCPParams

    b = AnalogistMCP(tmp_path_factory.mktemp("body") / "b.db", "p",
                     MCPParams(text_embedding=False, llm=False))
    yield b
    b.close()


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda x: st.lists(x, max_size=3) | st.dictionaries(st.text(max_size=6), x,
                                                                         max_size=3),
                     max_leaves=10)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.dictionaries(st.sampled_from(["episode_id", "kind", "roles", "relations",
                                             "causal_chain", "levels", "surface", "x"]),
                            _json, max_size=6))
def test_junk_signature_is_refused_or_stored_whole(body: Any, junk: dict[str, Any]) -> None:
    """Whatever object arrives, remember_episode either stores exactly one episode or raises an
    AnalogistError and writes nothing."""
    before = body.memory().count("p")
    try:
        body.remember_episode(signature=junk)
    except AnalogistError as e:
        assert str(e)
        assert body.memory().count("p") == before
    else:
        assert body.memory().count("p") == before + 1


def test_bad_start_arguments(tmp_path: Path) -> None:
    from analogist.mcp import AnalogistMCP, MCPParams, client_config, run_mcp

    with pytest.raises(AnalogistError, match="namespace"):
        AnalogistMCP(tmp_path / "s.db", "")
    with pytest.raises(AnalogistError, match="directory"):
        AnalogistMCP(tmp_path, "ns")
    with pytest.raises(AnalogistError, match="k must"):
        MCPParams(k=0)
    with pytest.raises(AnalogistError, match="transport"):
        run_mcp(tmp_path / "s.db", "ns", transport="carrier-pigeon")
    bad = tmp_path / "junk.db"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(AnalogistError):
        AnalogistMCP(bad, "ns")
    cfg = client_config("/data/store.db", "team")
    assert cfg["mcpServers"]["analogist-team"]["args"] == [
        "mcp", "--store", "/data/store.db", "--namespace", "team"]


def test_cli_bad_transport_exits_2(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "analogist", "mcp", "--store",
                        str(tmp_path / "s.db"), "--transport", "smoke"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "transport" in p.stderr


def test_cli_help_and_print_config(tmp_path: Path) -> None:
    h = subprocess.run([sys.executable, "-m", "analogist", "mcp", "--help"],
                       capture_output=True, text=True, timeout=120)
    assert h.returncode == 0 and "--namespace" in h.stdout, h.stderr
    p = subprocess.run([sys.executable, "-m", "analogist", "mcp", "--store",
                        str(tmp_path / "s.db"), "--namespace", "team", "--print-config"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    entry = json.loads(p.stdout)["mcpServers"]["analogist-team"]
    assert entry == {"command": "analogist", "args": [
        "mcp", "--store", str((tmp_path / "s.db").resolve()), "--namespace", "team"]}


def test_no_log_finds_is_read_only_and_writes_nothing(tmp_path: Path, pair: Any) -> None:
    """With log_finds=False, find_analogy is annotated read-only and really writes nothing;
    this one also runs the default text-embedding channel."""
    from analogist.mcp import MCPParams, build_server

    a, b, _ = pair
    server, body = build_server(tmp_path / "r.db", "ro", MCPParams(log_finds=False, llm=False))
    try:
        tools = {t.name: t for t in anyio.run(server.list_tools)}
        assert tools["find_analogy"].annotations.read_only_hint is True
        assert tools["remember_episode"].annotations.read_only_hint is False
        body.remember_episode(signature=sig_json(b))
        out = body.find_analogy(target=sig_json(a) | {"episode_id": "q"})
        assert out["results"] and out["log_id"] is None
        assert "embedding" in " ".join(out["channels_used"])
        assert body.analogy_log()["count"] == 0
    finally:
        body.close()
