"""A PostgreSQL store partitioned across real servers (memory/pg_partition.py): declarative
partitioning by namespace on the coordinator, postgres_fdw foreign partitions on the others,
hash partitions of the row id within a spread namespace.

Must show: the same find and map answers as one server; two namespaces on different servers
leak nothing through the CLI or the HTTP API; a writer killed with SIGKILL mid-batch loses no
committed batch and leaves no partial one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from analogist.app import Analogist, Settings
from analogist.casebook import load_casebook
from analogist.errors import AnalogistError
from analogist.memory import open_memory
from analogist.memory.pg_partition import place, placements
from analogist.memory.sqlite import StoreError
from analogist.retrieve import Retriever
from tests.test_server import _Server, beta_episodes
from tests.writer_procs import kill_inside_fourth_batch

HERE = Path(__file__).parent


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "analogist", *args], capture_output=True,
                          text=True, timeout=300, cwd=HERE)


def _remote(url: str, sql: str, params: tuple = ()) -> list[tuple]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        return c.execute(sql, params).fetchall()


def _remote_rows(url: str, table: str = "signatures") -> dict[str, int]:
    """namespace -> rows of ``table`` in the analogist schemas of the database at ``url``."""
    out: dict[str, int] = {}
    for (schema,) in _remote(url, "SELECT nspname FROM pg_namespace "
                                  "WHERE nspname LIKE 'analogist%%'"):
        for ns, n in _remote(url, f'SELECT namespace, COUNT(*) FROM "{schema}".{table} '
                                  "GROUP BY namespace"):
            out[ns] = out.get(ns, 0) + n
    return out


@pytest.fixture
def servers(pg_servers, pg_server_dbs):
    """(coordinator, db on server 1, db on server 2, another db on server 0)."""
    coord, s1, s2 = pg_server_dbs(3)
    return coord, s1, s2, pg_servers.new_database(0, prefix="srv0b")


def _answers(mem, namespace, targets):
    r = Retriever(mem, namespace=namespace, log=False)
    return [[(h.episode_id, round(h.score, 9)) for h in r.find(t).results] for t in targets]


def test_partitioned_find_and_map_answer_as_one_server(servers, pg_url, no_llm):
    coord, s1, s2, s0b = servers
    cases = load_casebook()
    eps = [c.signature for c in cases]
    targets = [c.signature for c in cases if not c.is_decoy][:6]
    one = open_memory(pg_url)
    part = open_memory(coord)
    # alpha on server 1 before any write; beta spread by hash over three servers; gamma
    # written first, then moved to server 2; delta stays in the coordinator's own database
    place(part, "alpha", [s1])
    place(part, "beta", [s0b, s1, s2])
    for m in (one, part):
        for ns in ("alpha", "beta", "gamma", "delta"):
            m.add_many(eps, namespace=ns, batch_size=20)
    before_move = _answers(part, "gamma", targets)  # (builds and stores gamma's index)
    place(part, "gamma", [s2])
    assert _answers(part, "gamma", targets) == before_move
    assert [p["namespace"] for p in placements(part)] == ["alpha", "beta", "gamma"]
    # the rows are where they were placed, each episode with its child rows
    assert _remote_rows(s1)["alpha"] == len(eps)
    assert _remote_rows(s2)["gamma"] == len(eps)
    spread = [_remote_rows(u).get("beta", 0) for u in (s0b, s1, s2)]
    assert sum(spread) == len(eps) and all(spread), spread
    for u in (s0b, s1, s2):
        assert _remote_rows(u, "sig_vectors").get("beta", 0) >= _remote_rows(u).get("beta", 0)
    assert part.conn.execute("SELECT COUNT(*) FROM signatures_default WHERE namespace <> 'delta'"
                             ).fetchone()[0] == 0
    for ns in ("alpha", "beta", "gamma", "delta"):
        expect = _answers(one, ns, targets)
        assert any(expect), "the casebook targets have analogues"
        assert _answers(part, ns, targets) == expect, ns
        assert part.generation(ns) != (0, 0) and part.extent(ns)[0] == len(eps)
    # supersede, delete and rewrite through the partitions: still the same answers
    for m in (one, part):
        m.supersede(eps[1].episode_id, eps[2].episode_id, namespace="beta")
        m.delete(eps[3].episode_id, namespace="beta")
        m.update_signature(eps[4].model_copy(update={"fix_operator": "bounds(A)"}),
                           namespace="beta")
        m.delete(eps[2].episode_id, namespace="beta")  # the replacement goes: pointer cleared
    assert part.superseded("beta") == one.superseded("beta") == {}
    assert part.count("beta") == len(eps) - 2
    assert sum(_remote_rows(u).get("beta", 0) for u in (s0b, s1, s2)) == len(eps) - 2
    assert sum(_remote_rows(u, "sig_fingerprint").get("beta", 0)
               for u in (s0b, s1, s2)) == len(eps) - 2
    assert _answers(part, "beta", targets) == _answers(one, "beta", targets)
    # a new process loads the namespace's stored index from the coordinator, no rebuild
    part.close()
    again = open_memory(coord)
    r = Retriever(again, namespace="beta", log=False)
    got = [[(h.episode_id, round(h.score, 9)) for h in r.find(t).results] for t in targets]
    assert got == _answers(one, "beta", targets) and r.notes == []
    assert r._index.saved_rows == again.extent("beta")[0]
    again.close()
    # map through the application layer, stored episodes by id on each store
    for url in (pg_url, coord):
        api = Analogist(Settings(store=url, namespace="gamma"))
        try:
            out = api.map(eps[0].episode_id, eps[5].episode_id).to_json()
            if url == pg_url:
                expect_map = out
            else:
                assert out == expect_map
        finally:
            api.close()
    one.close()


def test_place_refuses_bad_requests_without_changes(servers, tmp_path):
    coord, s1, _s2, _ = servers
    mem = open_memory(coord)
    mem.add_many([c.signature for c in load_casebook()[:5]], namespace="alpha")
    place(mem, "alpha", [s1])
    bad = [("alpha", [s1], "placed already"), ("beta", [], "at least one server"),
           ("beta", [s1, s1], "named twice"), ("beta", ["/tmp/not-a-url"], "postgresql://"),
           ("beta", ["postgresql://postgres@127.0.0.1:1/none"], "127.0.0.1:1")]
    for ns, urls, words in bad:
        with pytest.raises(StoreError) as ei:
            place(mem, ns, urls)
        assert words in str(ei.value) and "\n" not in str(ei.value)
    assert [p["namespace"] for p in placements(mem)] == ["alpha"]
    assert mem.count("alpha") == 5
    mem.close()
    # the CLI: one line, exit 2
    for args in (["store", "place", "beta", "--server", s1, "--store", str(tmp_path / "c.db")],
                 ["store", "place", "beta", "--server", "postgresql://postgres@127.0.0.1:1/x",
                  "--store", coord],
                 ["store", "place", "alpha", "--server", s1, "--store", coord]):
        r = _cli(*args)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""
    with open_memory(str(tmp_path / "s.db")) as lite, \
            pytest.raises(AnalogistError, match="needs a PostgreSQL store"):
        place(lite, "alpha", [s1])


def test_two_namespaces_on_different_servers_leak_nothing(servers, no_llm, tmp_path):
    from analogist.server import create_app
    from analogist.service.keys import keys_add

    coord, s1, s2, _ = servers
    sigs = [c.signature.to_data() for c in load_casebook() if not c.is_decoy]
    beta = beta_episodes(sigs[20:30])
    (tmp_path / "alpha.json").write_text(json.dumps(sigs[:20]), encoding="utf-8")
    (tmp_path / "beta.json").write_text(json.dumps(beta), encoding="utf-8")
    for ns, url in (("alpha", s1), ("beta", s2)):
        r = _cli("store", "place", ns, "--server", url, "--store", coord)
        assert r.returncode == 0, r.stderr
        r = _cli("add", str(tmp_path / f"{ns}.json"), "--namespace", ns, "--store", coord)
        assert r.returncode == 0, r.stderr
    r = _cli("store", "placements", "--store", coord, "--json")
    assert [p["namespace"] for p in json.loads(r.stdout)] == ["alpha", "beta"]
    # each server holds its own namespace only
    assert _remote_rows(s1) == {"alpha": 20} and _remote_rows(s2) == {"beta": 10}
    with open_memory(coord) as m:
        beta_ids = [e.id for e in m.list("beta")]
    leaks: list[str] = []
    # the CLI, in real processes, reading alpha
    r = _cli("list", "--namespace", "alpha", "--store", coord, "--json")
    listed = json.loads(r.stdout)
    if len(listed) != 20 or any(x["episode_id"].startswith("beta-") for x in listed):
        leaks.append("list")
    for key in (str(beta_ids[0]), beta[0]["episode_id"]):
        for cmd in (("show", key), ("delete", key)):
            r = _cli(*cmd, "--namespace", "alpha", "--store", coord)
            if r.returncode != 2 or "BETA-SECRET" in r.stdout + r.stderr:
                leaks.append(f"{cmd}: {r.returncode} {r.stdout[:200]} {r.stderr[:200]}")
    (tmp_path / "b0.json").write_text(json.dumps(beta[0]), encoding="utf-8")
    r = _cli("find", str(tmp_path / "b0.json"), "--namespace", "alpha", "--store", coord,
             "--json")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["results"]  # (the output echoes the target itself)
    if not hits or any("BETA-SECRET" in json.dumps(x) or str(x.get("episode_id")).startswith(
            "beta-") for x in hits):
        leaks.append(f"cli find: {hits}"[:300])
    # the HTTP API with a key for alpha only
    token = keys_add(coord, "key-a", ["alpha"])
    h = {"Authorization": f"Bearer {token}"}
    with _Server(create_app(coord, rate_per_minute=0, mount_viewer=False)) as srv, \
            httpx.Client(base_url=srv.url, timeout=120) as c:
        for method, path, body, expect in (
                ("GET", "/v1/ns/beta/episodes", None, 403),
                ("POST", "/v1/ns/beta/find", {"target": beta[1]}, 403),
                ("GET", f"/v1/ns/alpha/episodes/{beta_ids[0]}", None, 404),
                ("GET", f"/v1/ns/alpha/episodes/{beta[0]['episode_id']}", None, 404),
                ("DELETE", f"/v1/ns/alpha/episodes/{beta_ids[1]}", None, 404),
                ("POST", "/v1/ns/alpha/find", {"episode": beta_ids[0]}, 404),
                ("POST", "/v1/ns/alpha/map", {"base": {"episode": beta[0]["episode_id"]},
                                              "target": {"episode": sigs[0]["episode_id"]}},
                 404)):
            r = c.request(method, path, headers=h, json=body)
            if r.status_code != expect or "BETA-SECRET" in r.text:
                leaks.append(f"{method} {path}: {r.status_code} {r.text[:200]}")
        for s in beta[:3]:
            r = c.post("/v1/ns/alpha/find", json={"target": s}, headers=h)
            assert r.status_code == 200, r.text
            if "BETA-SECRET" in r.text or any(str(hit.get("episode_id", "")).startswith("beta-")
                                              for hit in r.json()["results"]):
                leaks.append("http find")
        r = c.get("/v1/ns/alpha/episodes", headers=h, params={"limit": 1000})
        if any(x["episode_id"].startswith("beta-") for x in r.json()["episodes"]):
            leaks.append("http list")
    assert leaks == []
    # nothing was deleted or moved by the attempts
    assert _remote_rows(s1) == {"alpha": 20} and _remote_rows(s2) == {"beta": 10}


@pytest.mark.parametrize("spread", [1, 3], ids=["one-server", "hash-over-3"])
def test_writer_killed_mid_batch_on_a_partitioned_store(servers, spread):
    coord, s1, s2, s0b = servers
    urls = [s1, s2, s0b][:spread]
    with open_memory(coord) as m:
        place(m, "w", urls)
    size = 40
    kill_inside_fourth_batch(coord, size)
    with open_memory(coord) as mem:
        assert mem.integrity_check() == "ok"
        batches: dict[int, int] = {}
        for e in mem.list("w", include_superseded=True):
            b = int(e.episode_id[1:].split("_")[0])
            batches[b] = batches.get(b, 0) + 1
        assert batches == {0: size, 1: size, 2: size}  # 0 lost, batch 3 absent (0 partial)
        n = mem.count("w")
        for t in ("sig_relations", "sig_vectors", "sig_fingerprint"):
            k = mem.conn.execute(f"SELECT COUNT(DISTINCT signature_id) FROM {t} "
                                 "WHERE namespace = 'w'").fetchone()[0]
            assert k == n
        # the servers themselves hold exactly the committed rows
        assert sum(_remote_rows(u).get("w", 0) for u in urls) == 3 * size
        assert sum(_remote_rows(u, "sig_vectors").get("w", 0) for u in urls) >= 3 * size
        assert mem.generation("w")[0] == 3 * size  # the counters saw committed rows only
        mem.add(load_casebook()[0].signature, namespace="w")  # writable again
        assert sum(_remote_rows(u).get("w", 0) for u in urls) == 3 * size + 1
