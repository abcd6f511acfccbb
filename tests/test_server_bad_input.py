"""A bad-input sweep over every HTTP route (issue 21): deep JSON, huge integers, wrong types,
unknown keys, malformed and oversized bodies, hostile path and query values, missing and
wrong keys, another namespace — over real HTTP against a running server on a real SQLite
store. Every answer is a 4xx in the one error shape naming the field; there is no 5xx, no
traceback, and the store's row counts are unchanged."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import httpx
import pytest

from analogist.casebook import load_casebook
from analogist.server import create_app
from analogist.service.keys import keys_add
from tests.hostile_inputs import row_counts
from tests.test_server import _Server

MAX_BODY = 500_000
HUGE = 99999999999999999999                     # over SQLite's 64-bit integers
DEEP = "[" * 200_000 + "]" * 200_000            # the RecursionError case
NS = "alpha"

# every route of the app, with the body fields it takes (None: no body)
ROUTES: list[tuple[str, str, list[str] | None]] = [
    ("POST", "/v1/ns/{ns}/episodes", ["episode_id", "kind", "roles", "relations"]),
    ("POST", "/v1/ns/{ns}/episodes/bulk", ["episodes"]),
    ("GET", "/v1/ns/{ns}/episodes", None),
    ("GET", "/v1/ns/{ns}/episodes/{id}", None),
    ("DELETE", "/v1/ns/{ns}/episodes/{id}", None),
    ("POST", "/v1/ns/{ns}/episodes/{id}/supersede", ["by"]),
    ("POST", "/v1/ns/{ns}/find", ["target", "episode", "k", "critic", "parametric"]),
    ("POST", "/v1/ns/{ns}/map", ["base", "target"]),
    ("POST", "/v1/ns/{ns}/foresight", ["target", "cutoff", "rounds", "per_round",
                                        "carryover", "embedding"]),
    ("POST", "/v1/ns/{ns}/check", ["turn", "mode"]),
    ("POST", "/v1/ns/{ns}/encode", ["text", "episode_id", "domain", "writer", "store"]),
    ("POST", "/v1/ns/{ns}/eval/runs", ["gold", "retriever", "runs"]),
    ("GET", "/v1/ns/{ns}/eval/runs", None),
    ("GET", "/v1/ns/{ns}/eval/runs/{id}", None),
    ("GET", "/v1/ns/{ns}/jobs/{id}", None),
    ("POST", "/v1/ns/{ns}/outcomes", ["log_id", "used", "helped", "negative", "note", "result",
                                       "counterfactual", "higher_is_better", "item", "action"]),
    ("GET", "/v1/ns/{ns}/ledger", None),
    ("GET", "/v1/metrics", None),
    ("GET", "/v1/whoami", None),
    ("POST", "/viewer/session", ["key"]),
    ("DELETE", "/viewer/session", None),
    ("GET", "/viewer/api/casebook", None),
    ("GET", "/viewer/api/map", None),
    ("GET", "/viewer/api/brief", None),
    ("GET", "/viewer/api/brief.png", None),
    ("GET", "/docs/static/{id}", None),
]
PUBLIC = {"/v1/health", "/openapi.json", "/docs", "/viewer", "/viewer/static/{name}",
          "/viewer/api/events", "/viewer/session"}   # answered without a key (no data)

BAD_IDS = [str(HUGE), "9" * 40, "-1", "x" * 1000, "..%2F..%2Fetc", "%00", "é" * 50, "1e9"]
BAD_QUERIES = [{"offset": str(HUGE)}, {"limit": str(HUGE)}, {"limit": "-1"}, {"offset": "x"},
               {"limit": "1.5"}, {"full": "maybe"}, {"namespace": "beta"},
               {"namespace": "x" * 500}, {"source": "x" * 500, "target": "y"},
               {"source": "nope", "target": "nope"}, {"event": "x" * 500}, {"event": "nope"}]


def _bodies(fields: list[str]) -> list[tuple[str, bytes | str, str | None]]:
    """(label, raw body, content type) cases for a route taking ``fields``."""
    out: list[tuple[str, bytes | str, str | None]] = [
        ("deep", DEEP, "application/json"),
        ("deep-no-type", DEEP, None),
        ("deep-in-field", json.dumps({fields[0]: 0})[:-2] + " " + "[" * 70 + "]" * 70 + "}",
         "application/json"),
        ("malformed", '{"' + fields[0] + '": ', "application/json"),
        ("not-utf8", b"\xff\xfe{\x00", "application/json"),
        ("empty", b"", "application/json"),
        ("oversized", json.dumps({fields[0]: "x" * (MAX_BODY + 10)}), "application/json"),
        ("array", "[]", "application/json"), ("string", '"x"', "application/json"),
        ("null", "null", "application/json"), ("number", "12", "application/json"),
        ("unknown-key", json.dumps({"zzz": 1}), "application/json"),
        ("typo-key", json.dumps({fields[0] + "z": 1}), "application/json"),
        ("form", "a=1", "application/x-www-form-urlencoded"),
    ]
    for f in fields:
        out += [(f"huge-int:{f}", json.dumps({f: HUGE}), "application/json"),
                (f"negative:{f}", json.dumps({f: -(HUGE)}), "application/json"),
                (f"nested-list:{f}", json.dumps({f: [[[]]]}), "application/json"),
                (f"float:{f}", json.dumps({f: 1e308}), "application/json"),
                (f"nan:{f}", '{"' + f + '": NaN}', "application/json"),
                (f"object:{f}", json.dumps({f: {"zzz": {"a": 1}}}), "application/json")]
    return out




@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = tmp_path_factory.mktemp("sweep") / "store.db"
    key = keys_add(store, "sweeper", [NS])
    other = keys_add(store, "other", ["beta"])
    app = create_app(store, max_body_bytes=MAX_BODY, rate_per_minute=0)
    sigs = [e.signature.to_data() for e in load_casebook() if not e.is_decoy][:4]
    with _Server(app) as s, httpx.Client(base_url=s.url, timeout=120) as c:
        r = c.post(f"/v1/ns/{NS}/episodes/bulk", json={"episodes": sigs},
                   headers={"X-API-Key": key})
        assert r.status_code == 201, r.text
        yield {"c": c, "key": key, "other": other, "store": store, "app": app}


def _check(r: httpx.Response, what: str, problems: list[str]) -> None:
    if r.status_code >= 500:
        problems.append(f"{what}: {r.status_code} {r.text[:200]}")
        return
    if "Traceback" in r.text or 'File "' in r.text:
        problems.append(f"{what}: a traceback in the body")
    if r.status_code >= 400:
        try:
            err = r.json()["error"]
        except (ValueError, KeyError, TypeError):
            problems.append(f"{what}: {r.status_code} without the error shape: {r.text[:200]}")
            return
        if set(err) != {"type", "message", "field"} or not err["message"] or \
                "\n" in err["message"]:
            problems.append(f"{what}: not one error line: {err}")
        elif not err["field"] and r.status_code != 429:
            problems.append(f"{what}: no field named: {err}")


def test_every_route_is_in_the_sweep(srv: dict[str, Any]) -> None:
    swept = {p.replace("{ns}", "{namespace}") for _m, p, _f in ROUTES}
    names = {"/v1/ns/{namespace}/episodes/{id}": "/v1/ns/{namespace}/episodes/{key}",
             "/v1/ns/{namespace}/episodes/{id}/supersede":
                 "/v1/ns/{namespace}/episodes/{key}/supersede",
             "/v1/ns/{namespace}/eval/runs/{id}": "/v1/ns/{namespace}/eval/runs/{run_id}",
             "/v1/ns/{namespace}/jobs/{id}": "/v1/ns/{namespace}/jobs/{job_id}",
             "/docs/static/{id}": "/docs/static/{name}"}
    swept = {names.get(p, p) for p in swept} | PUBLIC
    served = {getattr(r, "path", "") for r in srv["app"].routes} - {"", "/docs/oauth2-redirect"}
    assert served - swept == set(), "routes missing from the sweep"


def test_bad_input_sweep(srv: dict[str, Any]) -> None:
    c, key = srv["c"], srv["key"]
    before = row_counts(srv["store"])
    problems: list[str] = []
    statuses: Counter[int] = Counter()
    n = 0
    for method, template, fields in ROUTES:
        path = template.replace("{ns}", NS)
        ids = BAD_IDS if "{id}" in path else ["-"]
        for i in ids:
            p = path.replace("{id}", i)
            auths = [{"X-API-Key": key}, {}, {"X-API-Key": srv["other"]},
                     {"Authorization": "Bearer " + "ak_" + "0" * 16 + "." + "x" * 43},
                     {"Authorization": "Basic " + "x" * 5000}]
            for h in auths:
                for q in ([{}] + BAD_QUERIES if h == auths[0] else [{}]):
                    r = c.request(method, p, headers=h, params=q,
                                  json={} if fields else None)
                    n += 1
                    statuses[r.status_code] += 1
                    _check(r, f"{method} {p} {q} auth={list(h)}", problems)
            if fields:
                for label, body, ctype in _bodies(fields):
                    hdr = {"X-API-Key": key, **({"content-type": ctype} if ctype else {})}
                    r = c.request(method, p, content=body, headers=hdr)
                    n += 1
                    statuses[r.status_code] += 1
                    _check(r, f"{method} {p} body={label}", problems)
                    if label in ("deep", "deep-no-type", "deep-in-field"):
                        assert r.status_code == 400 and "nested deeper" in r.text, (p, r.text)
                    if label == "oversized":
                        assert r.status_code == 413, (p, r.text)
                    if label in ("unknown-key", "typo-key") and \
                            not template.endswith(("/episodes", "/supersede")):
                        assert r.status_code == 422 and "expected one of" in r.text, (p, r.text)
    # semantic refusals: well-formed bodies naming things that are not there
    for method, path, body in [
        ("POST", "/find", {"episode": HUGE}), ("POST", "/find", {"episode": "nope"}),
        ("POST", "/map", {"base": {"episode": HUGE}, "target": {"episode": 1}}),
        ("POST", "/map", {"base": {"signature": {"kind": 3}}, "target": {"episode": 1}}),
        ("POST", "/map", {"base": {}, "target": {"episode": 1}}),
        ("POST", "/foresight", {"target": "no-such-event"}),
        ("POST", "/foresight", {"target": {"event_id": "x", "zzz": 1}}),
        ("POST", "/check", {"turn": {"argumentz": []}}), ("POST", "/check", {"turn": " "}),
        ("POST", "/eval/runs", {"gold": {"zzz": 1}}),
        ("POST", "/episodes/1/supersede", {"by": HUGE}),
        ("POST", "/episodes/1/supersede", {"by": "nope"}),
        ("POST", "/outcomes", {"log_id": 999999, "helped": True}),
        ("POST", "/outcomes", {"used": "x", "helped": True, "negative": True}),
        ("POST", "/outcomes", {"used": "x", "helped": "yes"}),
        ("POST", "/outcomes", {"used": "x", "negative": True, "counterfactual": 3}),
        ("POST", "/episodes/bulk", {"episodes": [{"episode_id": "ok"}, 5]}),
        ("POST", "/encode", {"text": ""}), ("POST", "/encode", {"text": "x", "writer": "zzz"}),
    ]:
        r = c.request(method, f"/v1/ns/{NS}{path}", json=body, headers={"X-API-Key": key})
        n += 1
        statuses[r.status_code] += 1
        assert 400 <= r.status_code < 500, (path, body, r.status_code, r.text)
        _check(r, f"{method} {path} {body}", problems)
    distinct = sorted({x.split(" ")[1].split("?")[0] + " " + x.split(": ", 1)[1][:160]
                       for x in problems})
    assert problems == [], f"{len(problems)} problems:\n" + "\n".join(distinct[:40])
    assert row_counts(srv["store"]) == before
    assert not any(s >= 500 for s in statuses) and n > 1000
    print(f"bad-input sweep: {n} requests over {len(ROUTES)} routes, statuses "
          f"{dict(sorted(statuses.items()))}, 0 5xx, store rows unchanged")


def test_stored_episode_refs_are_refused_by_name(srv: dict[str, Any]) -> None:
    """A find or map naming a stored episode: both a signature and an episode, or neither, is a
    422 naming the field; an episode that is not there a 404 naming ``<field>.episode``; and
    the store is unchanged."""
    c, key = srv["c"], srv["key"]
    before = row_counts(srv["store"])
    sig = load_casebook()[0].signature.to_data()
    cases = [
        ("/find", {"target": sig, "episode": 1}, 422, "target"),
        ("/find", {"episode": "no-such-episode"}, 404, "target.episode"),
        ("/map", {"base": {"signature": sig, "episode": 1}, "target": {"episode": 1}}, 422,
         "base"),
        ("/map", {"base": {"episode": 1}, "target": {}}, 422, "target"),
        ("/map", {"base": {"episode": 1}, "target": {"episode": "nope"}}, 404, "target.episode"),
    ]
    for path, body, status, field in cases:
        r = c.post(f"/v1/ns/{NS}{path}", json=body, headers={"X-API-Key": key})
        assert r.status_code == status, (path, body, r.text)
        err = r.json()["error"]
        assert err["field"] == field and "\n" not in err["message"], (path, body, err)
    assert row_counts(srv["store"]) == before
