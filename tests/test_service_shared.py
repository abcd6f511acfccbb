"""The service's background jobs and viewer sessions kept in the store (schema v7), so that
every worker process answers for every job and knows every session: the store's methods on
SQLite and PostgreSQL, the job runner and session table over them, a job whose process is
killed while it runs, and ``serve --workers 2`` driven over HTTP. Nothing waits for a duration:
the runners' clocks are set by hand, and polls go on until a state is reached."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx

from analogist.casebook import load_casebook
from analogist.memory import open_memory
from analogist.memory import sqlite as msql
from analogist.memory.sqlite import Memory
from analogist.service.runtime import LOST, Jobs
from analogist.service.sessions import COOKIE, Sessions
from tests.test_service_workers import ATTEMPTS, _serve

TEXT = ("The cache was rebuilt hourly from the registry, so after the rollback the dashboard "
        "showed the old build and the on-call engineer announced it.")


def _exercise_tables(m: Memory) -> None:
    m.add_job(job_id="j1", namespace="n", kind="encode", created_at="t0", owner="o1",
              lease_until=100.0, keep=3)
    row = m.job("j1")
    assert row is not None and row["status"] == "queued" and row["owner"] == "o1"
    assert m.set_job_status("j1", "running")
    assert m.set_job_status("j1", "done", result={"x": [1, "é"]}, finished_at="t1")
    row = m.job("j1")
    assert row["status"] == "done" and row["result"] == {"x": [1, "é"]} and row["error"] is None
    assert not m.set_job_status("j1", "failed", error={"type": "late"})   # an end stays
    assert m.job("j1")["status"] == "done" and m.job("nope") is None
    # leases: renewed for the owner's unfinished jobs only; a lapsed one fails
    m.add_job(job_id="j2", namespace="n", kind="eval", created_at="t0", owner="o1",
              lease_until=100.0, keep=3)
    m.add_job(job_id="j3", namespace="n", kind="eval", created_at="t0", owner="o2",
              lease_until=100.0, keep=3)
    assert m.renew_job_leases("o1", 200.0) == 1
    assert m.unfinished_job_owners() == ["o1", "o2"]
    assert m.fail_lost_jobs(now=150.0, finished_at="t2", error=LOST) == 1
    assert m.job("j3")["status"] == "failed" and m.job("j3")["error"] == LOST
    assert m.job("j2")["status"] == "queued"
    assert m.fail_lost_jobs(now=0.0, finished_at="t2", error=LOST, owners=["o1"]) == 1
    assert m.job("j2")["status"] == "failed" and m.unfinished_job_owners() == []
    # only the newest `keep` jobs are kept
    m.add_job(job_id="j4", namespace="n", kind="eval", created_at="t0", owner="o1",
              lease_until=100.0, keep=3)
    assert m.job("j1") is None and m.job("j4") is not None
    # sessions
    m.add_session(digest="d1", key_id="k1", name="one", namespaces={"b", "a"}, csrf="c1",
                  expires=60.0, keep=2)
    s = m.session("d1", now=59.0)
    assert s == {"key_id": "k1", "name": "one", "namespaces": ["a", "b"], "csrf": "c1",
                 "expires": 60.0}
    assert m.session_count(now=59.0) == 1
    assert m.session("d1", now=60.0) is None and m.session("d1", now=0.0) is None  # removed
    for d in ("d2", "d3", "d4"):
        m.add_session(digest=d, key_id="k2", name="two", namespaces=["a"], csrf="c",
                      expires=60.0, keep=2)
    assert m.session("d2", now=0.0) is None and m.session("d4", now=0.0) is not None
    assert m.end_session("d4") and not m.end_session("d4")
    assert m.end_key_sessions("k2") == 1 and m.session_count(now=0.0) == 0


def test_the_tables_on_sqlite(tmp_path) -> None:
    with Memory.open(tmp_path / "s.db") as m:
        assert m.schema_version() >= 7
        _exercise_tables(m)


def test_the_tables_on_postgres(pg_url) -> None:
    with open_memory(pg_url) as m:
        assert m.schema_version() >= 7
        _exercise_tables(m)


def test_a_store_at_v6_gains_the_tables_and_keeps_its_episodes(tmp_path, monkeypatch) -> None:
    path = tmp_path / "old.db"
    sig = next(e.signature for e in load_casebook() if not e.is_decoy)
    monkeypatch.setattr(msql, "MIGRATIONS", msql.MIGRATIONS[:6])
    monkeypatch.setattr(msql, "SCHEMA_VERSION", 6)
    with Memory.open(path) as m:
        assert m.schema_version() == 6
        m.add(sig, namespace="n")
    monkeypatch.undo()
    with Memory.open(path) as m:
        assert m.schema_version() == msql.SCHEMA_VERSION >= 7
        assert m.get(sig.episode_id, namespace="n").signature == sig
        _exercise_tables(m)


class _Conns:
    """One store connection per thread, as the server's application layer keeps them."""

    def __init__(self, path: Path) -> None:
        self.path, self.local, self.opened = path, threading.local(), []

    def __call__(self) -> Memory:
        m = getattr(self.local, "m", None)
        if m is None:
            m = self.local.m = Memory.open(self.path)
            self.opened.append(m)
        return m

    def close(self) -> None:
        for m in self.opened:
            # a connection a job thread made refuses to close here; the OS frees it
            with contextlib.suppress(sqlite3.ProgrammingError):
                m.close()


def _until_finished(jobs: Jobs, job_id: str) -> Any:
    for _ in range(100_000):
        j = jobs.get(job_id)
        if j is not None and j.status not in ("queued", "running"):
            return j
        threading.Event().wait(0.01)
    raise AssertionError(f"job {job_id} never finished")


def test_a_job_run_by_one_runner_is_answered_by_another(tmp_path) -> None:
    a_conns, b_conns = _Conns(tmp_path / "s.db"), _Conns(tmp_path / "s.db")
    a, b = Jobs(store=a_conns), Jobs(store=b_conns)
    try:
        job = a.submit("n", "encode", lambda: ("done", {"answer": 42}), lambda e: {})
        j = _until_finished(b, job.id)
        assert (j.status, j.result, j.namespace, j.kind) == ("done", {"answer": 42}, "n",
                                                             "encode")
        bad = a.submit("n", "eval", lambda: 1 / 0, lambda e: {"type": type(e).__name__})
        j = _until_finished(b, bad.id)
        assert j.status == "failed" and j.error == {"type": "ZeroDivisionError"}
        odd = a.submit("n", "eval", lambda: ("done", {"x": object()}),
                       lambda e: {"type": type(e).__name__})
        j = _until_finished(b, odd.id)          # a result the store cannot hold: an error
        assert j.status == "failed" and j.error == {"type": "TypeError"}
        assert b.get("nope") is None
    finally:
        a.shutdown()
        b.shutdown()
        a_conns.close()
        b_conns.close()


def test_a_job_whose_lease_lapses_is_failed(tmp_path) -> None:
    conns = _Conns(tmp_path / "s.db")
    now = [1000.0]
    gate = threading.Event()
    # renewals only by hand here (none comes in the test's lifetime)
    jobs = Jobs(store=conns, lease=60, clock=lambda: now[0], renew_every=10**9)
    other = Jobs(store=conns, lease=60, clock=lambda: now[0], renew_every=10**9)
    try:
        job = jobs.submit("n", "eval", lambda: (gate.wait(), ("done", {}))[1], lambda e: {})
        assert other.get(job.id).status in ("queued", "running")
        now[0] += 59.0
        assert other.get(job.id).status in ("queued", "running")
        assert conns().renew_job_leases(jobs.owner, now[0] + 2.0) == 1   # a renewal
        now[0] += 1.5
        assert other.get(job.id).status in ("queued", "running")
        now[0] += 1.0                            # no renewal came: the lease lapsed
        j = other.get(job.id)
        assert j.status == "failed" and j.error == LOST and j.finished_at
        gate.set()
        _until_finished(jobs, job.id)
        assert other.get(job.id).error == LOST   # the late end does not overwrite it
    finally:
        gate.set()
        jobs.shutdown()
        other.shutdown()
        conns.close()


_RUNNER = """
import sys, threading
from analogist.memory.sqlite import Memory
from analogist.service.runtime import Jobs
local = threading.local()
def conn():
    if not hasattr(local, "m"):
        local.m = Memory.open(sys.argv[1])
    return local.m
started = threading.Event()
jobs = Jobs(store=conn)
job = jobs.submit("n", "eval", lambda: (started.set(), threading.Event().wait())[1],
                  lambda e: {})
started.wait()
print(job.id, flush=True)
threading.Event().wait()
"""


def test_a_job_whose_process_is_killed_is_failed_not_pending(tmp_path) -> None:
    store = tmp_path / "s.db"
    Memory.open(store).close()
    proc = subprocess.Popen([sys.executable, "-c", _RUNNER, str(store)],
                            stdout=subprocess.PIPE, text=True)
    conns = _Conns(store)
    jobs = Jobs(store=conns)
    try:
        job_id = proc.stdout.readline().strip()
        assert job_id, "the runner printed no job"
        assert jobs.get(job_id).status == "running"          # alive: left alone
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=120)
        j = jobs.get(job_id)
        assert j.status == "failed" and j.error == LOST
        assert conns().job(job_id)["status"] == "failed"     # and so in the store
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=120)
        jobs.shutdown()
        conns.close()


def test_a_stopping_runner_fails_its_unfinished_jobs(tmp_path) -> None:
    conns = _Conns(tmp_path / "s.db")
    gate = threading.Event()
    jobs = Jobs(store=conns, workers=1)
    try:
        first = jobs.submit("n", "eval", lambda: (gate.wait(), ("done", {}))[1], lambda e: {})
        queued = jobs.submit("n", "eval", lambda: ("done", {}), lambda e: {})
        jobs.shutdown()
        for jid in (first.id, queued.id):
            assert conns().job(jid)["status"] == "failed"
    finally:
        gate.set()
        conns.close()


def test_stored_sessions_expire_and_are_bounded_and_shared(tmp_path) -> None:
    now = [1000.0]
    a_conns, b_conns = _Conns(tmp_path / "s.db"), _Conns(tmp_path / "s.db")
    a = Sessions(ttl=60, max_sessions=3, clock=lambda: now[0], store=a_conns)
    b = Sessions(ttl=60, max_sessions=3, clock=lambda: now[0], store=b_conns)
    try:
        sid, s = a.create("k1", "one", {"alpha"})
        assert b.get(sid) == s and b.check_csrf(s, s.csrf) and not b.check_csrf(s, "x")
        now[0] += 59.0
        assert b.get(sid) is not None
        now[0] += 1.0
        assert b.get(sid) is None and len(a) == 0
        sids = [a.create("k2", "two", {"alpha"})[0] for _ in range(4)]
        assert len(b) == 3 and b.get(sids[0]) is None and b.get(sids[-1]) is not None
        assert b.end(sids[-1]) and a.get(sids[-1]) is None and not a.end(sids[-1])
        assert b.end_key("k2") == 2 and len(a) == 0
        assert a.get(None) is None and a.get("x" * 1000) is None and not a.end(None)
    finally:
        a_conns.close()
        b_conns.close()


# -- real worker processes -----------------------------------------------------------------
def _on(url: str, index: str, method: str, path: str, **kw: Any) -> httpx.Response:
    """The request sent on new connections until worker ``index`` answers it."""
    for _ in range(ATTEMPTS):
        r = httpx.request(method, url + path, timeout=120, **kw)
        if r.headers.get("x-analogist-worker") == index:
            return r
    raise AssertionError(f"worker {index} never answered {path}")


def test_a_job_submitted_through_one_worker_is_polled_through_the_other(tmp_path, no_llm
                                                                         ) -> None:
    with _serve(tmp_path, "2") as s:
        assert set(s.pids(2)) == {"0", "1"}
        submitted = []
        for i in range(ATTEMPTS):                 # until worker 0 takes one
            r = httpx.post(s.url + "/v1/ns/n/encode", headers=s.h, timeout=120,
                           json={"text": TEXT, "writer": "deterministic",
                                 "episode_id": f"attempt-{i}"})
            assert r.status_code == 202, r.text
            submitted.append(r)
            if r.headers["x-analogist-worker"] == "0":
                break
        job = submitted[-1].json()
        assert submitted[-1].headers["x-analogist-worker"] == "0"
        for _ in range(100_000):
            r = _on(s.url, "1", "GET", job["href"], headers=s.h)
            assert r.status_code == 200, r.text
            if r.json()["status"] not in ("queued", "running"):
                break
            threading.Event().wait(0.01)
        j = r.json()
        assert j["status"] == "done" and j["id"] == job["id"], j
        assert j["result"]["stored_id"] and j["result"]["signature"]["episode_id"] == \
            f"attempt-{len(submitted) - 1}"
        r = _on(s.url, "1", "GET", f"/v1/ns/n/episodes/{j['result']['stored_id']}",
                headers=s.h)
        assert r.status_code == 200
        # the job stays under its namespace on every worker
        for w in ("0", "1"):
            r = _on(s.url, w, "GET", f"/v1/ns/m0/jobs/{job['id']}", headers=s.h)
            assert r.status_code == 404


def test_a_session_signed_in_on_one_worker_is_valid_on_the_other(tmp_path, no_llm) -> None:
    with _serve(tmp_path, "2") as s:
        assert set(s.pids(2)) == {"0", "1"}
        key = s.h["X-API-Key"]
        r = _on(s.url, "0", "POST", "/viewer/session", json={"key": key},
                headers={"Origin": s.url})
        # sign-ins on the way to worker 0 made sessions too; only the last one is used
        assert r.status_code == 200, r.text
        sid = r.cookies[COOKIE]
        csrf = r.json()["csrf_token"]
        cookie = {"Cookie": f"{COOKIE}={sid}"}
        for w in ("1", "0"):
            r = _on(s.url, w, "GET", "/viewer/session", headers=cookie)
            assert r.status_code == 200, (w, r.text)
            assert r.json()["namespaces"] == ["m0", "m1", "n"] and r.json()["csrf_token"] == csrf
        # a wrong CSRF token is refused on worker 1 and the session lives on
        r = _on(s.url, "1", "DELETE", "/viewer/session",
                headers={**cookie, "X-CSRF-Token": "wrong", "Origin": s.url})
        assert r.status_code == 403
        assert _on(s.url, "0", "GET", "/viewer/session", headers=cookie).status_code == 200
        # signed out on worker 1: ended on both
        r = _on(s.url, "1", "DELETE", "/viewer/session",
                headers={**cookie, "X-CSRF-Token": csrf, "Origin": s.url})
        assert r.status_code == 200 and "Max-Age=0" in r.headers["set-cookie"]
        for w in ("0", "1"):
            assert _on(s.url, w, "GET", "/viewer/session", headers=cookie).status_code == 401
