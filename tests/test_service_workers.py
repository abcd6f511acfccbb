"""``analogist serve --workers N``: real worker processes over one store on one port, driven
over HTTP. Which worker answers is the kernel's choice; the tests open new connections until
each worker has answered (``X-Analogist-Worker``), and never wait for a duration."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from analogist.casebook import load_casebook
from analogist.service.admission import default_workers
from analogist.service.keys import keys_add
from analogist.service.workers import limit_blas_threads, parse_workers
from tests.test_server import _free_port

ATTEMPTS = 400     # new connections tried before concluding that a worker never answers


def _sigs() -> list[dict[str, Any]]:
    return [e.signature.to_data() for e in load_casebook() if not e.is_decoy]


class _Served:
    def __init__(self, proc: subprocess.Popen, url: str, key: str) -> None:
        self.proc, self.url, self.h = proc, url, {"X-API-Key": key}

    def on_worker(self, index: str, method: str, path: str, **kw: Any) -> httpx.Response:
        """The request sent on new connections until worker ``index`` answers it (a request
        answered by another worker is sent again, so it must be safe to repeat)."""
        for _ in range(ATTEMPTS):
            r = httpx.request(method, self.url + path, headers=self.h, timeout=120, **kw)
            if r.headers.get("x-analogist-worker") == index:
                return r
        raise AssertionError(f"worker {index} never answered {path}")

    def pids(self, count: int) -> dict[str, int]:
        """``{worker index: pid}`` once every one of ``count`` workers has answered."""
        out: dict[str, int] = {}
        for _ in range(ATTEMPTS):
            w = httpx.get(self.url + "/v1/health", timeout=60).json()["worker"]
            assert w["of"] == count
            out[str(w["index"])] = w["pid"]
            if len(out) == count:
                return out
        raise AssertionError(f"only workers {sorted(out)} answered")


@contextmanager
def _serve(tmp_path: Path, workers: str) -> Iterator[_Served]:
    store = tmp_path / "s.db"
    key = keys_add(store, "k", ["n", "m0", "m1"])
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("ANALOGIST_") and k.endswith(("_BASE_URL", "_MODEL")))}
    proc = subprocess.Popen([sys.executable, "-m", "analogist", "serve", "--store", str(store),
                             "--port", str(port), "--rate", "0", "--workers", workers],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        for line in proc.stderr:          # the supervisor says when its workers are started
            if "workers (pids" in line:
                break
        else:
            raise AssertionError("the server did not start")
        url = f"http://127.0.0.1:{port}"
        for _ in range(3000):             # the socket accepts at once; wait for an answer
            try:
                if httpx.get(url + "/v1/health", timeout=60).status_code == 200:
                    break
            except httpx.TransportError:
                threading.Event().wait(0.02)
        yield _Served(proc, url, key)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=120)


def test_workers_value() -> None:
    assert parse_workers("auto") == min(64, default_workers())
    assert parse_workers("3") == parse_workers(3) == 3
    for bad in ("0", "65", "-1", "two", "1.5", ""):
        with pytest.raises(Exception, match="--workers must be"):
            parse_workers(bad)


def test_a_bad_workers_value_is_one_line_and_exit_2(tmp_path) -> None:
    for bad in ("0", "many"):
        r = subprocess.run([sys.executable, "-m", "analogist", "serve", "--store",
                            str(tmp_path / "s.db"), "--workers", bad],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "--workers must be" in lines[0], r.stderr
    assert not (tmp_path / "s.db").exists()      # refused before anything was made


def test_writes_through_every_worker_are_all_read_back_by_every_worker(tmp_path, no_llm
                                                                        ) -> None:
    sigs = _sigs()
    with _serve(tmp_path, "2") as s:
        assert set(s.pids(2)) == {"0", "1"}
        acked: dict[str, str] = {}           # episode id -> the worker that stored it
        lock = threading.Lock()

        def client(c: int) -> None:          # a new connection for every write
            for j, sig in enumerate(sigs[c::4]):
                eid = f"w{c}-{j}-{sig['episode_id']}"
                r = httpx.post(s.url + "/v1/ns/n/episodes", json=dict(sig, episode_id=eid),
                               headers=s.h, timeout=120)
                assert r.status_code == 201, r.text
                with lock:
                    acked[eid] = r.headers["x-analogist-worker"]

        threads = [threading.Thread(target=client, args=(c,)) for c in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(acked) == len(sigs)
        # make sure each worker stored some (one more write on each when the kernel did not)
        for w in ("0", "1"):
            if w not in acked.values():
                eid = f"extra-{w}"
                r = s.on_worker(w, "POST", "/v1/ns/n/episodes",
                                json=dict(sigs[0], episode_id=eid))
                assert r.status_code in (201, 409)   # 409: an earlier try was stored elsewhere
                acked[eid] = w
        for w in ("0", "1"):
            listed = s.on_worker(w, "GET", "/v1/ns/n/episodes",
                                 params={"limit": 1000}).json()
            assert listed["total"] == len(acked)
            assert {e["episode_id"] for e in listed["episodes"]} == set(acked)
        # a find on each worker sees an episode stored through the other one after its index
        # was built (namespace m<w>: one unrelated episode, then the target's analogue)
        by_id = {x["episode_id"]: x for x in sigs}
        target = by_id["observer-failure-med-ecg-leads"]
        analogue = by_id["observer-failure-mfg-flow-sensor"]
        for w, other in (("0", "1"), ("1", "0")):
            ns = f"/v1/ns/m{w}"
            r = s.on_worker(w, "POST", ns + "/episodes",
                            json=dict(by_id["stale-copy-fin-cash-extract"], episode_id="base"))
            assert r.status_code in (201, 409)
            before = s.on_worker(w, "POST", ns + "/find", json={"target": target, "k": 10})
            assert "fresh" not in [x["episode_id"] for x in before.json()["results"]]
            r = s.on_worker(other, "POST", ns + "/episodes",
                            json=dict(analogue, episode_id="fresh"))
            assert r.status_code in (201, 409)
            after = s.on_worker(w, "POST", ns + "/find", json={"target": target, "k": 10})
            assert "fresh" in [x["episode_id"] for x in after.json()["results"]]


def test_a_killed_worker_is_reported_and_replaced_and_sigterm_stops_all(tmp_path, no_llm
                                                                         ) -> None:
    with _serve(tmp_path, "2") as s:
        pids = s.pids(2)
        os.kill(pids["1"], signal.SIGKILL)
        report = ""
        for line in s.proc.stderr:
            if "worker 1" in line:
                report = line
                break
        assert f"worker 1 (pid {pids['1']}) was killed by SIGKILL" in report
        assert "started worker 1 again" in report
        again = s.pids(2)
        assert again["0"] == pids["0"] and again["1"] != pids["1"]
        r = s.on_worker("1", "POST", "/v1/ns/n/episodes", json=_sigs()[0])
        assert r.status_code in (201, 409)
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(timeout=120) == 0
        assert "stopped" in s.proc.stderr.read()
        for pid in again.values():           # every worker is gone (reaped by the supervisor)
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


def test_openblas_threads_are_limited_in_this_process() -> None:
    import ctypes  # lazy: only this test reads the library's own count back

    import numpy  # noqa: F401 - loads numpy's OpenBLAS

    libs = limit_blas_threads(1)
    if not libs:
        pytest.skip("no OpenBLAS loaded through /proc/self/maps (another BLAS or platform)")
    lib = ctypes.CDLL(libs[0])
    get = next(getattr(lib, n) for n in ("openblas_get_num_threads",
                                         "openblas_get_num_threads64_",
                                         "scipy_openblas_get_num_threads",
                                         "scipy_openblas_get_num_threads64_")
               if hasattr(lib, n))
    assert get() == 1
    limit_blas_threads(default_workers())     # back to one per core for the other tests


def test_sigint_stops_every_worker(tmp_path, no_llm) -> None:
    with _serve(tmp_path, "2") as s:
        pids = s.pids(2)
        s.proc.send_signal(signal.SIGINT)
        assert s.proc.wait(timeout=120) == 0
        rest = s.proc.stderr.read()
        assert "stopped" in rest and "killed" not in rest and "exited" not in rest
        for pid in pids.values():
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
