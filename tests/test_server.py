"""The HTTP API (issue 9, engineer A) over real HTTP against a running uvicorn server."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from analogist.casebook import load_casebook
from analogist.errors import AnalogistError
from analogist.llm.base import NO_LLM_REASON
from analogist.service.keys import KeyError_, KeyStore, keys_add
from analogist.service.runtime import RateLimiter

DATA = Path(__file__).parent / "data"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server:
    """uvicorn in a background thread on a free loopback port."""

    def __init__(self, app: object) -> None:
        self.port = _free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="error", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> _Server:
        self.thread.start()
        for _ in range(2000):                # wait for the socket, not for a duration
            if self.server.started:
                return self
            time.sleep(0.01)
        raise RuntimeError("server did not start")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _sigs() -> list[dict]:
    return [e.signature.to_data() for e in load_casebook() if not e.is_decoy]


def beta_episodes(sigs: list[dict]) -> list[dict]:
    """Copies of ``sigs`` for the second tenant: ids prefixed ``beta-`` and a secret marker in
    each violated invariant, so a leak of either shows in another tenant's answers."""
    beta = []
    for s in sigs:
        s = json.loads(json.dumps(s))
        s["episode_id"] = "beta-" + s["episode_id"]
        s["violated_invariant"] = "BETA-SECRET " + (s.get("violated_invariant") or "")
        beta.append(s)
    return beta


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    for k in list(os.environ):
        if k in ("OPENAI_API_KEY", "ANALOGIST_CONFIG") or (
                k.startswith("ANALOGIST_") and k.endswith(("_BASE_URL", "_MODEL", "_API_KEY"))):
            mp.delenv(k, raising=False)
    mp.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))
    from analogist.server import create_app

    store = tmp_path_factory.mktemp("srv") / "store.db"
    keys = {"a": keys_add(store, "key-a", ["alpha"]), "b": keys_add(store, "key-b", ["beta"]),
            "ab": keys_add(store, "key-ab", ["alpha", "beta"])}
    app = create_app(store, max_body_bytes=200_000, rate_per_minute=0)
    sigs = _sigs()
    with _Server(app) as srv, httpx.Client(base_url=srv.url, timeout=120) as c:
        # alpha: 20 casebook episodes; beta: 10 others with a secret marker in a role
        h = {"Authorization": f"Bearer {keys['a']}"}
        r = c.post("/v1/ns/alpha/episodes/bulk", json={"episodes": sigs[:20]}, headers=h)
        assert r.status_code == 201, r.text
        beta = beta_episodes(sigs[20:30])
        r = c.post("/v1/ns/beta/episodes/bulk", json={"episodes": beta},
                   headers={"X-API-Key": keys["b"]})
        assert r.status_code == 201, r.text
        yield {"c": c, "keys": keys, "store": store, "sigs": sigs, "beta": beta,
               "beta_ids": r.json()["ids"], "url": srv.url}
    mp.undo()


def H(env, k="a"):
    return {"Authorization": f"Bearer {env['keys'][k]}"}


def count(env, ns: str) -> int:
    with sqlite3.connect(env["store"]) as c:
        return c.execute("SELECT COUNT(*) FROM signatures WHERE namespace = ?",
                         (ns,)).fetchone()[0]


def wait_job(env, href: str, k: str = "a") -> dict:
    for _ in range(6000):
        j = env["c"].get(href, headers=H(env, k)).json()
        if j["status"] not in ("queued", "running"):
            return j
        time.sleep(0.05)
    raise AssertionError("job did not finish")


# -- service ---------------------------------------------------------------------------------
def test_health_and_openapi_document_every_route(env):
    c = env["c"]
    assert c.get("/v1/health").json()["status"] == "ok"
    paths = c.get("/openapi.json").json()["paths"]
    for p in ("/v1/ns/{namespace}/episodes", "/v1/ns/{namespace}/episodes/bulk",
              "/v1/ns/{namespace}/episodes/{key}", "/v1/ns/{namespace}/episodes/{key}/supersede",
              "/v1/ns/{namespace}/find", "/v1/ns/{namespace}/map", "/v1/ns/{namespace}/foresight",
              "/v1/ns/{namespace}/check", "/v1/ns/{namespace}/encode",
              "/v1/ns/{namespace}/eval/runs", "/v1/ns/{namespace}/jobs/{job_id}",
              "/v1/health", "/v1/metrics"):
        assert p in paths, p
    m = c.get("/v1/metrics", headers=H(env)).json()
    assert m["requests"] >= 1 and "POST /v1/ns/{namespace}/episodes/bulk" in m["routes"]
    assert m["routes"]["POST /v1/ns/{namespace}/episodes/bulk"]["latency_ms"]["p50"] > 0
    assert c.get("/v1/whoami", headers=H(env, "ab")).json()["namespaces"] == ["alpha", "beta"]


def test_metrics_are_scoped_to_the_keys_namespaces(env, tmp_path):
    """A key sees the request counts of its own namespaces only; an admin key sees all."""
    from analogist.server import create_app

    store = tmp_path / "m.db"
    ka, kb = keys_add(store, "ka", ["alpha"]), keys_add(store, "kb", ["beta"])
    adm = keys_add(store, "ops", [], admin=True)
    with _Server(create_app(store, rate_per_minute=0)) as srv, \
            httpx.Client(base_url=srv.url, timeout=60) as c:
        for _ in range(3):
            assert c.get("/v1/ns/beta/episodes", headers={"X-API-Key": kb}).status_code == 200
        assert c.get("/v1/ns/alpha/episodes", headers={"X-API-Key": ka}).status_code == 200
        assert c.get("/v1/ns/beta/episodes", headers={"X-API-Key": ka}).status_code == 403
        ma = c.get("/v1/metrics", headers={"X-API-Key": ka}).json()
        assert ma["scope"] == "namespaces" and ma["namespaces"] == ["alpha"]
        assert ma["routes"]["GET /v1/ns/{namespace}/episodes"]["count"] == 1
        assert ma["requests"] == 1                       # beta's 3 and the refused one: unseen
        mb = c.get("/v1/metrics", headers={"X-API-Key": kb}).json()
        assert mb["routes"]["GET /v1/ns/{namespace}/episodes"]["count"] == 3
        m = c.get("/v1/metrics", headers={"X-API-Key": adm}).json()
        assert m["scope"] == "admin"
        ep = m["routes"]["GET /v1/ns/{namespace}/episodes"]
        assert ep["count"] == 5 and ep["status"] == {"200": 4, "403": 1}
        assert c.get("/v1/whoami", headers={"X-API-Key": adm}).json()["admin"] is True
        assert c.get("/v1/ns/alpha/episodes", headers={"X-API-Key": adm}).status_code == 403


def test_missing_wrong_and_revoked_keys_are_401(env):
    c = env["c"]
    good = env["keys"]["a"]
    kid = good.split(".")[0]
    for headers in ({}, {"Authorization": "Bearer nonsense"}, {"X-API-Key": ""},
                    {"Authorization": f"Bearer {kid}.{'x' * 43}"},     # right id, wrong secret
                    {"Authorization": f"Bearer {good}x"}, {"Authorization": good}):
        for method, path in (("GET", "/v1/ns/alpha/episodes"), ("GET", "/v1/metrics"),
                             ("POST", "/v1/ns/alpha/find")):
            r = c.request(method, path, headers=headers, json={"episode": 1})
            assert r.status_code == 401, (headers, path, r.text)
            assert "API key" in r.json()["error"]["message"]
    r = c.get("/viewer/api/casebook", params={"namespace": "alpha"})
    assert r.status_code in (401, 404), r.text          # 404 only when no viewer is installed
    tok = keys_add(env["store"], "short-lived", ["alpha"])
    assert c.get("/v1/ns/alpha/episodes", headers={"X-API-Key": tok}).status_code == 200
    res = CliRunner().invoke(__import__("analogist.cli", fromlist=["app"]).app,
                             ["keys", "revoke", "short-lived", "--store", str(env["store"])])
    assert res.exit_code == 0, res.output
    assert c.get("/v1/ns/alpha/episodes", headers={"X-API-Key": tok}).status_code == 401


# -- episodes --------------------------------------------------------------------------------
def test_episode_crud_bulk_and_supersede(env):
    c, h = env["c"], H(env)
    s = json.loads(json.dumps(env["sigs"][30]))
    r = c.post("/v1/ns/alpha/episodes", json=s, headers=h)
    assert r.status_code == 201, r.text
    sid, eid = r.json()["id"], s["episode_id"]
    assert c.get(f"/v1/ns/alpha/episodes/{sid}", headers=h).json()["episode_id"] == eid
    got = c.get(f"/v1/ns/alpha/episodes/{eid}", headers=h).json()
    assert got["id"] == sid and got["signature"]["roles"] == s["roles"]
    assert c.post("/v1/ns/alpha/episodes", json=s, headers=h).status_code == 409
    lst = c.get("/v1/ns/alpha/episodes", params={"limit": 500}, headers=h).json()
    assert lst["total"] == count(env, "alpha") and sid in [e["id"] for e in lst["episodes"]]
    # supersede: the old one leaves the default listing
    s2 = dict(s, episode_id=eid + "-v2")
    sid2 = c.post("/v1/ns/alpha/episodes", json=s2, headers=h).json()["id"]
    r = c.post(f"/v1/ns/alpha/episodes/{eid}/supersede", json={"by": sid2}, headers=h)
    assert r.status_code == 200, r.text
    assert c.get(f"/v1/ns/alpha/episodes/{sid}", headers=h).json()["superseded_by"] == sid2
    ids = [e["id"] for e in c.get("/v1/ns/alpha/episodes", params={"limit": 500},
                                  headers=h).json()["episodes"]]
    assert sid not in ids and sid2 in ids
    assert c.post(f"/v1/ns/alpha/episodes/{sid2}/supersede", json={"by": sid2},
                  headers=h).status_code == 400
    # delete
    before = count(env, "alpha")
    assert c.delete(f"/v1/ns/alpha/episodes/{sid2}", headers=h).status_code == 200
    assert c.delete(f"/v1/ns/alpha/episodes/{sid2}", headers=h).status_code == 404
    assert c.get(f"/v1/ns/alpha/episodes/{sid2}", headers=h).status_code == 404
    assert count(env, "alpha") == before - 1
    # bulk is all or nothing: a duplicate in the last record stores none of them
    fresh = [dict(x, episode_id="bulk-" + x["episode_id"]) for x in env["sigs"][31:35]]
    before = count(env, "alpha")
    r = c.post("/v1/ns/alpha/episodes/bulk", json={"episodes": [*fresh, s]}, headers=h)
    assert r.status_code == 409 and "records[4]" in r.json()["error"]["field"]
    bad = [*fresh, {"episode_id": "x"}]
    r = c.post("/v1/ns/alpha/episodes/bulk", json={"episodes": bad}, headers=h)
    assert r.status_code == 400 and r.json()["error"]["field"].startswith("records[4]")
    assert count(env, "alpha") == before
    r = c.post("/v1/ns/alpha/episodes/bulk", json={"episodes": fresh}, headers=h)
    assert r.status_code == 201 and count(env, "alpha") == before + 4


# -- analogy routes --------------------------------------------------------------------------
def test_find_map_check(env):
    c, h = env["c"], H(env)
    first = env["sigs"][0]
    r = c.post("/v1/ns/alpha/find", json={"target": first, "k": 3}, headers=h)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["results"] and len(body["results"]) <= 3
    r2 = c.post("/v1/ns/alpha/find", json={"episode": first["episode_id"]}, headers=h)
    assert r2.status_code == 200
    cb = {e.id: e for e in load_casebook()}
    same_mech = [e for e in cb.values() if e.mechanism == cb[first["episode_id"]].mechanism
                 and e.id != first["episode_id"] and not e.is_decoy][0]
    r = c.post("/v1/ns/alpha/map", json={"base": {"episode": first["episode_id"]},
                                         "target": {"signature": same_mech.signature.to_data()}},
               headers=h)
    assert r.status_code == 200, r.text
    m = r.json()
    assert m["report"]["role_map"] and m["mapping"]["entity_mhs"]
    assert {tuple(p) for p in m["mapping"]["entity_mhs"]} >= set(m["report"]["role_map"].items())
    r = c.post("/v1/ns/alpha/map", json={"base": {"episode": "nope"},
                                         "target": {"episode": first["episode_id"]}}, headers=h)
    assert r.status_code == 404 and r.json()["error"]["field"] == "base.episode"
    turn = json.loads((DATA / "safeguard" / "good_turn.json").read_text())
    r = c.post("/v1/ns/alpha/check", json={"turn": turn}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["analogies"] and r.json()["all_pass"] in (True, False)
    r = c.post("/v1/ns/alpha/check", json={"turn": {"arguments": "x"}}, headers=h)
    assert r.status_code == 400 and "arguments" in r.text


def test_foresight_brief(env):
    from analogist.foresight.event import load_corpus

    ev = next(e for e in load_corpus().events if e.cutoff is not None)
    r = env["c"].post("/v1/ns/alpha/foresight",
                      json={"target": ev.model_dump(mode="json", exclude_none=True),
                            "rounds": 0, "per_round": 4, "embedding": False},
                      headers=H(env))
    assert r.status_code == 200, r.text
    brief = r.json()
    assert ev.event_id in json.dumps(brief["target"]) and "analogies" in brief
    assert any(NO_LLM_REASON in s for s in brief["skipped"])
    r = env["c"].post("/v1/ns/alpha/foresight", json={"target": {"event_id": "x"}},
                      headers=H(env))
    assert r.status_code == 400 and r.json()["error"]["field"].startswith("target")


def test_jobs_encode_and_eval_runs(env):
    c, h = env["c"], H(env)
    text = ("The cache was rebuilt hourly from the registry, so after the rollback the "
            "dashboard showed the old build and the on-call engineer announced it.")
    r = c.post("/v1/ns/alpha/encode", json={"text": text, "writer": "llm"}, headers=h)
    assert r.status_code == 202, r.text
    j = wait_job(env, r.json()["href"])
    assert j["status"] == "skipped" and j["result"]["reason"] == NO_LLM_REASON
    before = count(env, "alpha")
    r = c.post("/v1/ns/alpha/encode", json={"text": text, "writer": "deterministic",
                                            "episode_id": "encoded-1"}, headers=h)
    j = wait_job(env, r.json()["href"])
    assert j["status"] == "done", j
    assert j["result"]["stored_id"] and count(env, "alpha") == before + 1
    # a job is visible only under its namespace
    assert c.get(f"/v1/ns/beta/jobs/{j['id']}", headers=H(env, "ab")).status_code == 404
    # eval run: a small gold set derived from the namespace
    from analogist.bench.harness.goldset import build_goldset
    from analogist.memory.sqlite import Memory

    with Memory.open(env["store"]) as m:
        gold = build_goldset(m, "alpha")
    gd = json.loads(json.dumps(gold.to_json() if hasattr(gold, "to_json") else gold.__dict__,
                               default=str))
    gd["queries"] = gd["queries"][:4]
    r = c.post("/v1/ns/alpha/eval/runs", json={"gold": gd, "retriever": "surface"},
               headers=h)
    assert r.status_code == 202, r.text
    j = wait_job(env, r.json()["href"])
    assert j["status"] == "done", j
    runs = c.get("/v1/ns/alpha/eval/runs", headers=h).json()["runs"]
    assert runs and runs[-1]["id"] == j["result"]["run_id"]
    full = c.get(f"/v1/ns/alpha/eval/runs/{runs[-1]['id']}", headers=h).json()
    assert full["namespace"] == "alpha" and len(full["runs"][0]["rows"]) == 4
    assert c.post("/v1/ns/alpha/eval/runs", json={"gold": {"queries": 3}},
                  headers=h).status_code == 400


# -- isolation -------------------------------------------------------------------------------
def test_cross_namespace_attempts_leak_nothing(env, capsys):
    """Key A (alpha only) tries every route against beta, and beta's ids through alpha."""
    c, h = env["c"], H(env)
    bid = env["beta_ids"][0]
    beid = env["beta"][0]["episode_id"]
    bsig = env["beta"][1]
    r = c.post("/v1/ns/beta/encode", json={"text": "a b c", "writer": "llm"},
               headers=H(env, "b"))
    beta_job = r.json()["id"]
    wait_job(env, r.json()["href"], "b")
    before = {ns: count(env, ns) for ns in ("alpha", "beta")}
    attempts = []
    for ns in ("beta",):                             # another namespace in the path: 403
        for method, path, body in (
                ("GET", f"/v1/ns/{ns}/episodes", None),
                ("POST", f"/v1/ns/{ns}/episodes", env["sigs"][40]),
                ("POST", f"/v1/ns/{ns}/episodes/bulk", {"episodes": [env["sigs"][41]]}),
                ("GET", f"/v1/ns/{ns}/episodes/{bid}", None),
                ("GET", f"/v1/ns/{ns}/episodes/{beid}", None),
                ("DELETE", f"/v1/ns/{ns}/episodes/{bid}", None),
                ("POST", f"/v1/ns/{ns}/episodes/{bid}/supersede", {"by": env["beta_ids"][1]}),
                ("POST", f"/v1/ns/{ns}/find", {"target": bsig}),
                ("POST", f"/v1/ns/{ns}/find", {"episode": beid}),
                ("POST", f"/v1/ns/{ns}/map", {"base": {"episode": bid},
                                              "target": {"episode": beid}}),
                ("POST", f"/v1/ns/{ns}/foresight", {"target": {}}),
                ("POST", f"/v1/ns/{ns}/check", {"turn": "x"}),
                ("POST", f"/v1/ns/{ns}/encode", {"text": "x y z", "writer": "deterministic"}),
                ("POST", f"/v1/ns/{ns}/eval/runs", {"gold": {}}),
                ("GET", f"/v1/ns/{ns}/eval/runs", None),
                ("GET", f"/v1/ns/{ns}/eval/runs/1", None),
                ("GET", f"/v1/ns/{ns}/jobs/{beta_job}", None),
                ("GET", "/viewer/api/casebook?namespace=beta", None),
                ("GET", f"/viewer/api/map?namespace=beta&source={beid}&target={beid}", None)):
            attempts.append(("403", method, path, body))
    for method, path, body in (                      # beta's ids through alpha: not found
            ("GET", f"/v1/ns/alpha/episodes/{bid}", None),
            ("GET", f"/v1/ns/alpha/episodes/{beid}", None),
            ("DELETE", f"/v1/ns/alpha/episodes/{bid}", None),
            ("DELETE", f"/v1/ns/alpha/episodes/{beid}", None),
            ("POST", f"/v1/ns/alpha/episodes/{bid}/supersede", {"by": 1}),
            ("POST", f"/v1/ns/alpha/episodes/{env['sigs'][0]['episode_id']}/supersede",
             {"by": beid}),
            ("POST", "/v1/ns/alpha/find", {"episode": bid}),
            ("POST", "/v1/ns/alpha/find", {"episode": beid}),
            ("POST", "/v1/ns/alpha/map", {"base": {"episode": beid},
                                          "target": {"episode": env["sigs"][0]["episode_id"]}}),
            ("GET", f"/v1/ns/alpha/jobs/{beta_job}", None),
            ("GET", f"/viewer/api/map?namespace=alpha&source={beid}&target={beid}", None)):
        attempts.append(("404", method, path, body))
    leaks, statuses = 0, []
    for expect, method, path, body in attempts:
        r = c.request(method, path, headers=h, json=body)
        statuses.append(r.status_code)
        text = r.text
        leaked = r.status_code < 400 or "BETA-SECRET" in text or \
            (expect == "403" and r.status_code != 403) or \
            any(b["episode_id"] in text and b["episode_id"] not in path + json.dumps(body)
                for b in env["beta"])
        if path.startswith("/viewer") and r.status_code == 404 and expect == "403" and \
                "Not Found" in text:
            leaked = False                           # the viewer is not mounted here
        leaks += leaked
    # a find in alpha never returns beta's episodes
    for s in env["beta"][:3]:
        r = c.post("/v1/ns/alpha/find", json={"target": s}, headers=h)
        assert r.status_code == 200
        leaks += "BETA-SECRET" in r.text or any(hit.get("episode_id", "").startswith("beta-")
                                                for hit in r.json()["results"])
    after = {ns: count(env, ns) for ns in ("alpha", "beta")}
    with capsys.disabled():
        print(f"\ncross-namespace attempts: {len(attempts) + 3}, leaks: {leaks}, "
              f"statuses: {sorted(set(statuses))}")
    assert leaks == 0
    assert after == before


# -- limits and bad input --------------------------------------------------------------------
def test_oversized_and_malformed_bodies_leave_store_unchanged(env):
    c, h = env["c"], H(env)
    before = count(env, "alpha")
    big = dict(env["sigs"][42], episode_id="big", violated_invariant="x" * 300_000)
    r = c.post("/v1/ns/alpha/episodes", json=big, headers=h)
    assert r.status_code == 413 and "limit is 200000 bytes" in r.json()["error"]["message"]

    def chunks():
        for _ in range(40):
            yield b" " * 10_000
    r = c.post("/v1/ns/alpha/episodes/bulk", content=chunks(),
               headers={**h, "content-type": "application/json"})
    assert r.status_code == 413, r.text
    r = c.post("/v1/ns/alpha/episodes", content=b'{"episode_id": "x", ',
               headers={**h, "content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "malformed_json"
    assert r.json()["error"]["field"] == "body" and "not valid JSON" in r.text
    r = c.post("/v1/ns/alpha/episodes", content=b'{"episode_id": "x", ', headers=h)
    assert r.status_code in (400, 422) and r.json()["error"]["field"] == "body", r.text
    r = c.post("/v1/ns/alpha/episodes/bulk", json={"episodes": "nope"}, headers=h)
    assert r.status_code == 422 and r.json()["error"]["field"] == "episodes"
    r = c.post("/v1/ns/alpha/episodes/bulk", json={"episodes": [], "extra": 1}, headers=h)
    assert r.status_code == 422 and "episodes" in r.json()["error"]["message"]
    bad = dict(env["sigs"][42], episode_id="bad-kind", kind=17)
    r = c.post("/v1/ns/alpha/episodes", json=bad, headers=h)
    assert r.status_code == 400 and "kind" in (r.json()["error"]["field"] or "")
    r = c.post("/v1/ns/alpha/find", json={"k": 0, "episode": 1}, headers=h)
    assert r.status_code == 422 and r.json()["error"]["field"] == "k"
    r = c.post("/v1/ns/alpha/find", json={"target": {"kind": "failure"}}, headers=h)
    assert r.status_code == 400 and r.json()["error"]["field"].startswith("target")
    r = c.get("/v1/ns/alpha/episodes", params={"limit": -1}, headers=h)
    assert r.status_code == 422 and r.json()["error"]["field"] == "query.limit"
    assert count(env, "alpha") == before


def test_rate_limit_returns_429(tmp_path, no_llm):
    from analogist.server import create_app

    store = tmp_path / "s.db"
    tok = keys_add(store, "k", ["n"])
    with _Server(create_app(store, rate_per_minute=3, mount_viewer=False)) as srv, \
            httpx.Client(base_url=srv.url) as c:
        codes = [c.get("/v1/ns/n/episodes", headers={"X-API-Key": tok}).status_code
                 for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and codes[3] == 429
        r = c.get("/v1/ns/n/episodes", headers={"X-API-Key": tok})
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        assert "rate limit" in r.json()["error"]["message"]


def test_rate_limiter_refills():
    t = [0.0]
    rl = RateLimiter(60, burst=2, clock=lambda: t[0])
    assert [rl.allow("k")[0] for _ in range(3)] == [True, True, False]
    t[0] += 1.0
    assert rl.allow("k")[0] and not rl.allow("k")[0]
    assert RateLimiter(0).allow("k") == (True, 0.0)


def test_bad_input_to_keys_and_factory(tmp_path):
    from analogist.server import create_app

    store = tmp_path / "s.db"
    with pytest.raises(KeyError_, match="namespace"):
        keys_add(store, "k", [])
    with pytest.raises(KeyError_, match="namespace"):
        keys_add(store, "k", ["bad ns"])
    with pytest.raises(KeyError_, match="key name"):
        keys_add(store, "bad name", ["n"])
    keys_add(store, "k", ["n"])
    with pytest.raises(KeyError_, match="already exists"):
        keys_add(store, "k", ["n"])
    with KeyStore(store) as ks:
        with pytest.raises(KeyError_, match="no active key"):
            ks.revoke("missing")
        assert ks.verify(None) is None and ks.verify("ak_zz") is None
        row = ks.conn.execute("SELECT salt, digest FROM api_keys").fetchone()
        assert len(row[0]) == 16 and len(row[1]) == 32            # salted hash, no secret
    with pytest.raises(AnalogistError, match="max_body_bytes"):
        create_app(store, max_body_bytes=0)


def test_keys_cli(tmp_path):
    from analogist.cli import app

    store = tmp_path / "s.db"
    run = CliRunner().invoke
    r = run(app, ["keys", "add", "k1", "--namespace", "a", "--namespace", "b", "--store",
                  str(store), "--json"])
    assert r.exit_code == 0, r.output
    tok = json.loads(r.stdout)["key"]
    with KeyStore(store) as ks:
        assert ks.verify(tok).namespaces == {"a", "b"}
    assert tok not in store.read_bytes().decode("latin-1")         # never stored in clear
    r = run(app, ["keys", "list", "--store", str(store), "--json"])
    assert json.loads(r.stdout)[0]["namespaces"] == ["a", "b"] and tok not in r.stdout
    assert run(app, ["keys", "revoke", "k1", "--store", str(store)]).exit_code == 0
    r = run(app, ["keys", "revoke", "k1", "--store", str(store)])
    assert r.exit_code == 2 and "no active key" in r.output
    r = run(app, ["keys", "add", "k2", "--namespace", "bad ns", "--store", str(store)])
    assert r.exit_code == 2


def test_serve_cli_runs_a_real_server(tmp_path, no_llm):
    import subprocess
    import sys

    store = tmp_path / "s.db"
    tok = keys_add(store, "k", ["n"])
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "analogist", "serve", "--store", str(store),
                             "--port", str(port), "--max-body", "1000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(3000):
            try:
                if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.02)
        r = httpx.post(url + "/v1/ns/n/check", json={"turn": "y" * 2000},
                       headers={"X-API-Key": tok})
        assert r.status_code == 413 and "limit is 1000 bytes" in r.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_arbitrary_tokens_never_verify(tmp_path_factory, text):
    store = tmp_path_factory.getbasetemp() / "prop.db"
    if not store.exists():
        keys_add(store, "k", ["n"])
    with KeyStore(store) as ks:
        assert ks.verify(text) is None
        assert ks.verify("ak_" + text) is None


def test_docs_are_served_offline_with_the_schemes_and_the_signature_schema(env):
    """/docs loads Swagger UI from the package's own files (no network address in the page),
    and the OpenAPI document declares the key schemes and the Signature schema."""
    import re

    from analogist.service.docs import signature_components
    from analogist.signature import signature_json_schema

    c = env["c"]
    page = c.get("/docs")
    assert page.status_code == 200
    refs = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert refs and all(r.startswith("/docs/static/") for r in refs), refs
    assert not re.search(r"https?://", page.text.replace("http://www.w3.org", ""))
    for r in refs:
        a = c.get(r)
        assert a.status_code == 200 and len(a.content) > 500, r
    assert c.get("/docs/static/../server.py").status_code == 404
    doc = c.get("/openapi.json").json()
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearer"] == {**schemes["bearer"], "type": "http", "scheme": "bearer"}
    assert schemes["apiKey"]["in"] == "header" and schemes["apiKey"]["name"] == "X-API-Key"
    find = doc["paths"]["/v1/ns/{namespace}/find"]["post"]
    assert {"bearer": []} in find["security"] and {"apiKey": []} in find["security"]
    assert "security" not in doc["paths"]["/v1/health"]["get"]
    sig = doc["components"]["schemas"]["Signature"]
    assert sig == signature_components()["Signature"]
    assert set(sig["properties"]) == set(signature_json_schema()["properties"])
    assert "#/$defs/" not in json.dumps(doc)
    body = doc["paths"]["/v1/ns/{namespace}/episodes"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Signature"}
    bulk = doc["components"]["schemas"]["BulkBody"]["properties"]["episodes"]
    assert bulk["items"] == {"$ref": "#/components/schemas/Signature"}


def test_outcomes_close_the_loop_over_http(env):
    """A find's log entry gets an outcome; an analogy used outside find gets its own; a
    negative transfer with results writes a ledger entry the ledger route counts."""
    c, h = env["c"], H(env)
    found = c.post("/v1/ns/alpha/find", json={"episode": 1, "k": 3, "critic": False},
                   headers=h).json()
    assert found["log_id"]
    r = c.post("/v1/ns/alpha/outcomes", json={"log_id": found["log_id"], "helped": True,
                                              "used": found["results"][0]["episode_id"]
                                              if found.get("results") else None}, headers=h)
    assert r.status_code == 201, r.text
    assert r.json()["log_id"] == found["log_id"] and r.json()["outcome"] == "useful"
    before = c.get("/v1/ns/alpha/ledger", headers=h).json()
    r = c.post("/v1/ns/alpha/outcomes", json={"used": "x-analogue", "negative": True,
                                              "result": 3, "counterfactual": 5}, headers=h)
    assert r.status_code == 201 and r.json()["verdict"] == "worse", r.text
    assert r.json()["log_id"] != found["log_id"]
    after = c.get("/v1/ns/alpha/ledger", headers=h).json()
    assert after["entries"] == before["entries"] + 1 and after["worse"] == before["worse"] + 1
    # another namespace's log entry is not found from here
    r = c.post("/v1/ns/beta/outcomes", json={"log_id": found["log_id"], "helped": False},
               headers=H(env, "b"))
    assert r.status_code == 404 and r.json()["error"]["field"] == "log_id"
