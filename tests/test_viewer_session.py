"""Signing in to the viewer over real HTTP (uvicorn on loopback, a real SQLite store): the
session cookie's attributes, CSRF and cross-site refusals, namespaces, revocation and expiry;
key headers keep working beside the cookie."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import Any

import httpx
import pytest

from analogist.casebook import load_casebook
from analogist.memory.sqlite import Memory
from analogist.server import create_app
from analogist.service.keys import KeyStore, keys_add
from analogist.service.sessions import Sessions, same_origin
from tests.test_viewer_api import SRC, TGT, serve


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    cb = {e.id: e for e in load_casebook()}
    store = tmp_path_factory.mktemp("session") / "store.db"
    with Memory.open(store) as m:
        m.add(cb[SRC].signature, namespace="alpha")
        m.add(cb[TGT].signature, namespace="alpha")
        m.add(cb["goodhart-edu-pass-rate"].signature, namespace="beta")
    keys = {"a": keys_add(store, "ka", ["alpha"]), "ab": keys_add(store, "kab", ["alpha", "beta"]),
            "ops": keys_add(store, "ops", [], admin=True)}
    with serve(create_app(store, rate_per_minute=0)) as url:
        yield {"url": url, "keys": keys, "store": store}


def _sign_in(srv: dict[str, Any], key: str) -> tuple[httpx.Client, dict[str, Any]]:
    c = httpx.Client(base_url=srv["url"], timeout=60)
    r = c.post("/viewer/session", json={"key": key}, headers={"Origin": srv["url"]})
    assert r.status_code == 200, r.text
    return c, r.json()


def test_sign_in_sets_a_strict_httponly_cookie_bound_to_the_keys_namespaces(srv):
    c, s = _sign_in(srv, srv["keys"]["ab"])
    with closing(c):
        raw = c.cookies.jar
        (cookie,) = list(raw)
        assert cookie.name == "analogist_session" and cookie.path == "/viewer"
        r = c.post("/viewer/session", json={"key": srv["keys"]["ab"]},
                   headers={"Origin": srv["url"]})
        sc = r.headers["set-cookie"]
        assert "HttpOnly" in sc and "SameSite=Strict" in sc and "Path=/viewer" in sc
        assert "Max-Age=28800" in sc and "Secure" not in sc          # plain http on loopback
        assert srv["keys"]["ab"] not in sc and srv["keys"]["ab"].split(".")[1] not in r.text
        s = r.json()
        assert s["name"] == "kab" and s["namespaces"] == ["alpha", "beta"] and s["csrf_token"]
        assert c.get("/viewer/session").json()["namespaces"] == ["alpha", "beta"]
        r = c.get("/viewer/api/casebook", params={"namespace": "alpha"})
        assert r.status_code == 200 and [e["id"] for e in r.json()["entries"]] == [SRC, TGT]
        r = c.get("/viewer/api/map", params={"source": SRC, "target": TGT,
                                             "namespace": "alpha"})
        assert r.status_code == 200 and r.json()["correspondences"]
        # the cookie is the viewer's only: the /v1 API takes keys in headers
        assert c.get("/v1/ns/alpha/episodes",
                     headers={"Cookie": f"analogist_session={cookie.value}"}).status_code == 401
    c, _ = _sign_in(srv, srv["keys"]["a"])
    with closing(c):
        r = c.get("/viewer/api/casebook", params={"namespace": "beta"})
        assert r.status_code == 403 and r.json()["error"]["field"] == "namespace"
        assert "goodhart" not in r.text


def test_sign_in_refusals_set_no_cookie(srv):
    url = srv["url"]
    with httpx.Client(base_url=url, timeout=60) as c:
        cases = [
            ({"json": {"key": "ak_0123456789abcdef." + "x" * 43}}, 401, "key"),
            ({"json": {"key": srv["keys"]["a"]}, "headers": {"Origin": "http://evil.example"}},
             403, "origin"),
            ({"json": {"key": srv["keys"]["a"]}, "headers": {"Sec-Fetch-Site": "cross-site"}},
             403, "origin"),
            ({"data": {"key": srv["keys"]["a"]}}, 422, "body"),               # a form post
            ({"json": {"key": srv["keys"]["a"], "remember": True}}, 422, "remember"),
            ({"json": {"key": srv["keys"]["ops"]}}, 403, "key"),           # admin, no namespace
            ({"json": {"key": ""}}, 422, "key"),
        ]
        for kw, status, field in cases:
            r = c.post("/viewer/session", **kw)
            assert r.status_code == status, (kw, r.text)
            err = r.json()["error"]
            assert field in (err["field"] or ""), (kw, err)
            assert "set-cookie" not in r.headers
        assert c.get("/viewer/session").status_code == 401
        assert c.get("/viewer/api/casebook", params={"namespace": "alpha"}).status_code == 401
        assert c.get("/viewer").status_code == 200                # the page: a sign-in form


def test_sign_out_needs_the_csrf_token_and_ends_the_session(srv):
    c, s = _sign_in(srv, srv["keys"]["a"])
    with closing(c):
        for headers in ({}, {"X-CSRF-Token": "wrong"},
                        {"X-CSRF-Token": s["csrf_token"], "Origin": "http://evil.example"}):
            r = c.delete("/viewer/session", headers=headers)
            assert r.status_code == 403, (headers, r.text)
            assert c.get("/viewer/api/casebook", params={"namespace": "alpha"}).status_code == 200
        r = c.delete("/viewer/session", headers={"X-CSRF-Token": s["csrf_token"]})
        assert r.status_code == 200 and "Max-Age=0" in r.headers["set-cookie"]
        assert c.get("/viewer/api/casebook", params={"namespace": "alpha"}).status_code == 401


def test_revoking_the_key_ends_its_sessions(srv):
    tok = keys_add(srv["store"], "short", ["alpha"])
    c, _ = _sign_in(srv, tok)
    with closing(c):
        assert c.get("/viewer/api/casebook", params={"namespace": "alpha"}).status_code == 200
        with KeyStore(srv["store"]) as ks:
            ks.revoke("short")
        r = c.get("/viewer/api/casebook", params={"namespace": "alpha"})
        assert r.status_code == 401 and r.json()["error"]["type"] == "unauthorized"
        assert c.get("/viewer/session").status_code == 401


def test_key_headers_still_work_on_the_viewer_api(srv):
    with httpx.Client(base_url=srv["url"], timeout=60) as c:
        h = {"Authorization": f"Bearer {srv['keys']['a']}"}
        assert c.get("/viewer/api/casebook", params={"namespace": "alpha"},
                     headers=h).status_code == 200
        r = c.get("/viewer/api/casebook", params={"namespace": "alpha"},
                  headers={"Authorization": "Bearer nonsense"})
        assert r.status_code == 401


def test_sessions_expire_and_are_bounded() -> None:
    now = [1000.0]
    ss = Sessions(ttl=60, max_sessions=3, clock=lambda: now[0])
    sid, s = ss.create("k1", "one", {"alpha"})
    assert ss.get(sid) == s and ss.check_csrf(s, s.csrf) and not ss.check_csrf(s, "x")
    now[0] += 59.0
    assert ss.get(sid) is not None
    now[0] += 1.0
    assert ss.get(sid) is None and len(ss) == 0
    sids = [ss.create("k2", "two", {"alpha"})[0] for _ in range(4)]
    assert len(ss) == 3 and ss.get(sids[0]) is None and ss.get(sids[-1]) is not None
    assert ss.end_key("k2") == 3 and len(ss) == 0
    assert ss.get(None) is None and ss.get("x" * 1000) is None


def test_same_origin_rules() -> None:
    assert same_origin({"origin": "http://h:1"}, "http", "h:1")
    assert not same_origin({"origin": "http://h:2"}, "http", "h:1")
    assert not same_origin({"origin": "null"}, "http", "h:1")
    assert same_origin({}, "http", "h:1")                                  # not a browser
    assert same_origin({"sec-fetch-site": "same-origin"}, "http", "h:1")
    assert not same_origin({"sec-fetch-site": "same-site"}, "http", "h:1")
