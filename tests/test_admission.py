"""Admission of heavy requests: a fixed number at once, a bounded queue, 503 when it is full."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from analogist.casebook import load_casebook
from analogist.service.admission import Admission, Busy, default_workers
from analogist.service.keys import keys_add
from tests.test_server import _Server


def test_default_is_one_slot_per_core() -> None:
    assert Admission().workers == default_workers() >= 1


def test_at_most_workers_run_and_the_queue_is_served_in_order() -> None:
    adm = Admission(workers=2, queue=10)
    started: list[int] = []
    lock = threading.Lock()
    gates = [threading.Event() for _ in range(5)]
    entered = [threading.Event() for _ in range(5)]

    def work(i: int) -> None:
        with adm.slot():
            with lock:
                started.append(i)
                running = adm.stats()["running"]
                assert running <= 2
            entered[i].set()
            gates[i].wait()

    threads = []
    for i in range(5):
        t = threading.Thread(target=work, args=(i,))
        t.start()
        threads.append(t)
        if i < 2:
            entered[i].wait()
        else:  # wait until it is queued, so the arrival order is known
            while adm.stats()["waiting"] < i - 1:
                threading.Event().wait(0.001)
    assert started == [0, 1] and adm.stats()["waiting"] == 3
    for i in range(5):
        gates[i].set()
        if i + 2 < 5:
            entered[i + 2].wait()
    for t in threads:
        t.join()
    assert started == [0, 1, 2, 3, 4]
    assert adm.stats() == {"workers": 2, "running": 0, "waiting": 0, "queue": 10}


def test_a_full_queue_refuses_at_once() -> None:
    adm = Admission(workers=1, queue=0)
    with adm.slot():
        with pytest.raises(Busy) as e, adm.slot():
            pass
        assert e.value.retry_after >= 1
    with adm.slot():  # the slot came back
        pass


def test_bad_settings_are_refused() -> None:
    for w, q in ((0, 1), (1, -1)):
        with pytest.raises(ValueError):
            Admission(workers=w, queue=q)


@contextmanager
def _served_with_one_episode(store: Path, queue: int) -> Iterator[tuple[Any, httpx.Client,
                                                                         dict[str, str], Any]]:
    """A real server over ``store`` with one heavy slot and ``queue`` places, namespace ``n``
    holding one casebook episode: yields the app, a client, the key's headers and the episode."""
    from analogist.server import create_app  # lazy: the server's FastAPI stack, for these tests

    tok = keys_add(store, "k", ["n"])
    app = create_app(store, mount_viewer=False, rate_per_minute=0, workers=1, queue=queue)
    sig = next(e.signature.to_data() for e in load_casebook() if not e.is_decoy)
    with _Server(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        h = {"X-API-Key": tok}
        assert c.post("/v1/ns/n/episodes", json=sig, headers=h).status_code == 201
        yield app, c, h, sig


def test_the_server_answers_503_with_retry_after_when_the_queue_is_full(tmp_path, no_llm) -> None:
    with _served_with_one_episode(tmp_path / "s.db", queue=0) as (app, c, h, sig):
        with app.state.service.admission.slot():   # every slot taken, no room to wait
            r = c.post("/v1/ns/n/find", json={"target": sig}, headers=h)
            assert r.status_code == 503 and int(r.headers["retry-after"]) >= 1
            assert r.json()["error"]["type"] == "busy"
            # writes and reads do not queue for a slot
            assert c.get("/v1/ns/n/episodes", headers=h).status_code == 200
        r = c.post("/v1/ns/n/find", json={"target": sig}, headers=h)
        assert r.status_code == 200 and "results" in r.json()   # (the query itself is no answer)


def test_admitted_work_runs_on_the_pools_few_threads() -> None:
    """Work from many request threads runs on at most ``workers`` long-lived pool threads."""
    adm = Admission(workers=2, queue=64)
    seen: set[str] = set()
    lock = threading.Lock()

    def work() -> int:
        with lock:
            seen.add(threading.current_thread().name)
        return 7

    out: list[int] = []

    def request() -> None:
        v = adm.run(work)
        with lock:
            out.append(v)

    threads = [threading.Thread(target=request) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [7] * 16 and 1 <= len(seen) <= 2
    assert all(name.startswith("analogist-heavy") for name in seen)
    st = {**adm.stats(), **adm.counts()}
    assert st["done"] == 16 and st["running"] == 0 and st["waiting"] == 0
    adm.close()


def test_run_raises_busy_without_running_and_passes_errors_on() -> None:
    adm = Admission(workers=1, queue=0)
    ran: list[int] = []
    with adm.slot():
        with pytest.raises(Busy):
            adm.run(lambda: ran.append(1))
    assert ran == [] and adm.counts()["refused"] == 1

    def bad() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        adm.run(bad)
    assert adm.run(lambda: 3) == 3          # the slot came back after the error
    adm.close()


def test_metrics_report_the_heavy_lane(tmp_path, no_llm) -> None:
    with _served_with_one_episode(tmp_path / "m.db", queue=3) as (_app, c, h, sig):
        assert c.post("/v1/ns/n/find", json={"target": sig}, headers=h).status_code == 200
        lane = c.get("/v1/metrics", headers=h).json()["heavy_lane"]
        assert lane["workers"] == 1 and lane["queue"] == 3 and lane["done"] >= 1
        assert lane["running"] == 0 and lane["refused"] == 0


def test_writes_take_turns_on_the_write_lane_and_a_full_one_answers_503(tmp_path, no_llm
                                                                        ) -> None:
    with _served_with_one_episode(tmp_path / "w.db", queue=0) as (app, c, h, sig):
        lane = c.get("/v1/metrics", headers=h).json()["write_lane"]
        assert lane["workers"] == 1 and lane["done"] == 1 and lane["refused"] == 0
        with app.state.service.writes.slot():     # the write lane busy, no room to wait
            r = c.post("/v1/ns/n/episodes", json=dict(sig, episode_id="second"), headers=h)
            assert r.status_code == 503 and int(r.headers["retry-after"]) >= 1
            assert r.json()["error"]["type"] == "busy"
            # reads and finds do not queue behind writes
            assert c.get("/v1/ns/n/episodes", headers=h).json()["total"] == 1
            assert c.post("/v1/ns/n/find", json={"target": sig}, headers=h).status_code == 200
        r = c.post("/v1/ns/n/episodes", json=dict(sig, episode_id="second"), headers=h)
        assert r.status_code == 201
        assert c.delete("/v1/ns/n/episodes/second", headers=h).status_code == 200
        lane = c.get("/v1/metrics", headers=h).json()["write_lane"]
        # done: the three writes and the test's own hold on the slot
        assert lane["done"] == 4 and lane["refused"] == 1 and lane["running"] == 0


def test_counts_sum_the_wait_the_run_and_the_cpu_of_what_ran() -> None:
    """A request that waits behind another is counted as waiting; work that computes is counted
    as CPU on its pool thread; one that only sleeps is counted as running, not as CPU."""
    adm = Admission(workers=1, queue=4)
    assert {k: adm.counts()[k] for k in ("wait_s", "run_s", "cpu_s")} == \
        {"wait_s": 0.0, "run_s": 0.0, "cpu_s": 0.0}
    release = threading.Event()
    started = threading.Event()

    def hold() -> None:
        started.set()
        release.wait()

    first = threading.Thread(target=adm.run, args=(hold,))
    first.start()
    started.wait()
    second = threading.Thread(target=adm.run, args=(lambda: sum(i * i for i in range(200_000)),))
    second.start()
    while adm.stats()["waiting"] == 0:     # the second is in line behind the first
        threading.Event().wait(0.001)
    release.set()
    first.join()
    second.join()
    c = adm.counts()
    assert c["done"] == 2
    assert c["wait_s"] > 0.0 and c["run_s"] >= c["cpu_s"] > 0.0
    adm.close()
