"""The mapping viewer's JSON API over real HTTP (uvicorn on loopback), casebook and store modes,
namespaces and bad input; plus property tests of the payload builder."""

from __future__ import annotations

import base64
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Header, HTTPException
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analogist.casebook import casebook_vocabulary, load_casebook
from analogist.judge import judge
from analogist.memory.sqlite import Memory
from analogist.signature import compile_signature
from analogist.sme import match
from analogist.viewer import viewer_router
from analogist.viewer.payload import map_payload

CASEBOOK = {e.id: e for e in load_casebook()}
SRC, TGT = "stale-copy-sw-deploy-summary", "stale-copy-fin-cash-extract"
EVENT = "arab-spring"


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Run ``app`` with uvicorn on a free loopback port in a background thread; yields the base
    URL and shuts the server down afterwards."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    th = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    th.start()
    try:
        for _ in range(600):  # a start-up wait, not an assertion on time
            if server.started or not th.is_alive():
                break
            time.sleep(0.05)
        if not server.started:
            raise RuntimeError("uvicorn did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        th.join(timeout=30)
        sock.close()


def app_with(router_factory: Callable[[], Any]) -> FastAPI:
    app = FastAPI()
    app.include_router(router_factory())
    return app


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve(app_with(lambda: viewer_router())) as url:
        yield url


@pytest.fixture(scope="module")
def client(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=120) as c:
        yield c


# -- casebook mode --------------------------------------------------------------------------
def test_page_and_static_files_are_local(client: httpx.Client) -> None:
    r = client.get("/viewer")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert '/viewer/static/viewer.js' in r.text and '/viewer/static/viewer.css' in r.text
    for name, ctype in (("viewer.js", "javascript"), ("viewer.css", "text/css")):
        s = client.get(f"/viewer/static/{name}")
        assert s.status_code == 200 and ctype in s.headers["content-type"]
        text = s.text.replace("http://www.w3.org/2000/svg", "")  # a namespace name, not a fetch
        assert not re.search(r"https?://", text), f"{name} refers to the network"
    assert not re.search(r"(src|href)=\"https?://", r.text)
    bad = client.get("/viewer/static/secret.py")
    assert bad.status_code == 404 and "secret.py" in bad.json()["detail"]


def test_casebook_lists_every_entry(client: httpx.Client) -> None:
    body = client.get("/viewer/api/casebook").json()
    assert body["mode"] == "casebook"
    assert [e["id"] for e in body["entries"]] == list(CASEBOOK)
    row = next(e for e in body["entries"] if e["id"] == SRC)
    assert row["mechanism"] == CASEBOOK[SRC].mechanism and row["gist"]


def test_map_matches_the_library(client: httpx.Client) -> None:
    r = client.get("/viewer/api/map", params={"source": SRC, "target": TGT})
    assert r.status_code == 200
    body = r.json()
    vocab = casebook_vocabulary()
    s, t = CASEBOOK[SRC].signature, CASEBOOK[TGT].signature
    sd, td = compile_signature(s, vocab), compile_signature(t, vocab)
    best = match(sd, td).best
    assert best is not None
    want = {("entity", b, c) for b, c in best.entity_pairs}
    want |= {("expression", b.sexpr(), c.sexpr()) for b, c in best.expression_pairs}
    got = {(c["kind"], c["source"], c["target"]) for c in body["correspondences"]}
    assert got == want and len(got) == len(body["correspondences"])
    assert body["report"] == judge(s, t, vocab=vocab).to_json()
    assert [e["name"] for e in body["source"]["entities"]] == list(sd.entities)
    assert [x["key"] for x in body["target"]["expressions"]] == [x.sexpr() for x in td.expressions]
    assert [i["sexpr"] for i in body["inferences"]] == [ci.sexpr for ci in best.inferences]
    assert body["report"]["likenesses"] and body["inferences"]


@pytest.mark.parametrize("params, field", [
    ({"source": "no-such-episode", "target": TGT}, "source"),
    ({"source": SRC, "target": "nope"}, "target"),
])
def test_unknown_ids_are_404_with_a_clear_message(client: httpx.Client, params: dict[str, str],
                                                  field: str) -> None:
    r = client.get("/viewer/api/map", params=params)
    assert r.status_code == 404
    detail = r.json()["detail"]
    assert detail.startswith(f"{field}: no episode") and params[field] in detail


@pytest.mark.parametrize("params", [
    {"source": SRC},                       # target missing
    {"source": "", "target": TGT},         # empty id
    {"source": "x" * 201, "target": TGT},  # over-long id
])
def test_malformed_map_queries_are_422(client: httpx.Client, params: dict[str, str]) -> None:
    r = client.get("/viewer/api/map", params=params)
    assert r.status_code == 422 and r.json()["detail"]


def test_brief_and_chart(client: httpx.Client) -> None:
    events = client.get("/viewer/api/events").json()["events"]
    assert EVENT in {e["id"] for e in events}
    r = client.get("/viewer/api/brief", params={"event": EVENT})
    assert r.status_code == 200
    body = r.json()
    assert body["event"] == EVENT and body["brief"]["target"]["event_id"] == EVENT
    png = base64.b64decode(body["chart_png_base64"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    p = client.get("/viewer/api/brief.png", params={"event": EVENT})
    assert p.status_code == 200 and p.headers["content-type"] == "image/png"
    assert p.content == png


def test_unknown_event_is_404(client: httpx.Client) -> None:
    for path in ("/viewer/api/brief", "/viewer/api/brief.png"):
        r = client.get(path, params={"event": "battle-of-nowhere"})
        assert r.status_code == 404
        assert "battle-of-nowhere" in r.json()["detail"]
    assert client.get("/viewer/api/brief").status_code == 422


# -- store mode with namespaces -------------------------------------------------------------
def _guard(x_namespaces: str | None = Header(None)) -> set[str]:
    """A stand-in caller identity: the namespaces it may read come in a header; no header is
    an unauthenticated caller."""
    if x_namespaces is None:
        raise HTTPException(401, "missing X-Namespaces")
    return {n for n in x_namespaces.split(",") if n}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("viewer") / "mem.db"
    with Memory.open(path) as m:
        m.add(CASEBOOK[SRC].signature, namespace="alpha")
        m.add(CASEBOOK[TGT].signature, namespace="alpha")
        m.add(CASEBOOK["stale-copy-med-discharge-list"].signature, namespace="beta")
    return path


@pytest.fixture(scope="module")
def store_client(store: Path) -> Iterator[httpx.Client]:
    app = app_with(lambda: viewer_router(store, namespace_guard=_guard))
    with serve(app) as url, httpx.Client(base_url=url, timeout=120) as c:
        yield c


def test_store_mode_maps_within_a_permitted_namespace(store_client: httpx.Client) -> None:
    h = {"X-Namespaces": "alpha"}
    lst = store_client.get("/viewer/api/casebook", params={"namespace": "alpha"}, headers=h)
    assert lst.status_code == 200
    assert [e["id"] for e in lst.json()["entries"]] == [SRC, TGT]
    r = store_client.get("/viewer/api/map",
                         params={"source": SRC, "target": TGT, "namespace": "alpha"}, headers=h)
    assert r.status_code == 200
    assert r.json()["report"] == judge(CASEBOOK[SRC].signature, CASEBOOK[TGT].signature,
                                       vocab=casebook_vocabulary()).to_json()


def test_store_mode_never_reads_outside_the_callers_namespaces(store_client: httpx.Client,
                                                               store: Path) -> None:
    before = store.read_bytes()
    leaks = 0
    beta_id = "stale-copy-med-discharge-list"
    beta_texts = list(CASEBOOK[beta_id].signature.roles.values())
    attempts = [
        ("/viewer/api/casebook", {"namespace": "beta"}, {"X-Namespaces": "alpha"}, 403),
        ("/viewer/api/map", {"source": SRC, "target": beta_id, "namespace": "beta"},
         {"X-Namespaces": "alpha"}, 403),
        # an id that lives in beta, asked for in alpha: not found there
        ("/viewer/api/map", {"source": SRC, "target": beta_id, "namespace": "alpha"},
         {"X-Namespaces": "alpha,beta"}, 404),
        ("/viewer/api/map", {"source": SRC, "target": TGT, "namespace": "alpha"}, {}, 401),
        ("/viewer/api/casebook", {"namespace": "alpha"}, {"X-Namespaces": ""}, 403),
    ]
    for path, params, headers, status in attempts:
        r = store_client.get(path, params=params, headers=headers)
        assert r.status_code == status, (path, params, r.text)
        leaks += sum(text in r.text for text in beta_texts)
        assert r.json()["detail"]
    assert leaks == 0
    assert store.read_bytes() == before


def test_missing_store_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "gone.db"
    with serve(app_with(lambda: viewer_router(missing))) as url:
        r = httpx.get(url + "/viewer/api/casebook", timeout=60)
    assert r.status_code == 503 and "store file not found" in r.json()["detail"]
    assert not missing.exists()


# -- properties of the payload --------------------------------------------------------------
IDS = sorted(CASEBOOK)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(IDS), st.sampled_from(IDS))
def test_correspondences_are_one_to_one_over_drawn_elements(a: str, b: str) -> None:
    p = map_payload(CASEBOOK[a].signature, CASEBOOK[b].signature, vocab=casebook_vocabulary())
    keys = {side: {("entity", e["key"]) for e in p[side]["entities"]}
            | {("expression", x["key"]) for x in p[side]["expressions"]}
            for side in ("source", "target")}
    seen_s: set[tuple[str, str]] = set()
    seen_t: set[tuple[str, str]] = set()
    for c in p["correspondences"]:
        s, t = (c["kind"], c["source"]), (c["kind"], c["target"])
        assert s in keys["source"] and t in keys["target"]
        assert s not in seen_s and t not in seen_t
        seen_s.add(s)
        seen_t.add(t)
    # parallel connectivity: a matched expression's arguments are matched to the target's
    pairs = {(c["source"]): c["target"] for c in p["correspondences"]}
    sx = {x["key"]: x for x in p["source"]["expressions"]}
    tx = {x["key"]: x for x in p["target"]["expressions"]}
    for c in p["correspondences"]:
        if c["kind"] == "expression":
            sa, ta = sx[c["source"]]["args"], tx[c["target"]]["args"]
            assert len(sa) == len(ta)
            assert sorted(pairs.get(x, "?") for x in sa) == sorted(ta)
