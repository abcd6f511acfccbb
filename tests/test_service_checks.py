"""Checks run at once: no lock serialises ``POST /check`` (each heavy thread has its own
safeguard). Two checks are observed in flight together, not timed."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx

from analogist.safeguard import Safeguard
from analogist.service.keys import keys_add
from tests.test_server import _Server

DATA = Path(__file__).resolve().parent / "data"


def test_two_checks_are_in_flight_at_once(tmp_path, no_llm, monkeypatch) -> None:
    from analogist.server import create_app  # lazy: the server's FastAPI stack, for this test

    turn = json.loads((DATA / "safeguard" / "good_turn.json").read_text())
    both_in = threading.Barrier(2, timeout=300)   # broken (an error) if the second never enters
    in_flight: list[str] = []
    real_check = Safeguard.check

    def check_meeting_the_other(self: Safeguard, *a: Any, **kw: Any) -> Any:
        in_flight.append(threading.current_thread().name)
        both_in.wait()       # returns only once both checks are inside Safeguard.check
        return real_check(self, *a, **kw)

    monkeypatch.setattr(Safeguard, "check", check_meeting_the_other)
    store = tmp_path / "s.db"
    tok = keys_add(store, "k", ["n"])
    app = create_app(store, mount_viewer=False, rate_per_minute=0, workers=2, queue=4)
    out: list[httpx.Response] = []
    with _Server(app) as srv:
        def post() -> None:
            with httpx.Client(base_url=srv.url, timeout=600) as c:
                out.append(c.post("/v1/ns/n/check", json={"turn": turn},
                                  headers={"X-API-Key": tok}))

        threads = [threading.Thread(target=post) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not both_in.broken
    assert len(in_flight) == 2 and len(set(in_flight)) == 2     # two threads, both inside
    assert [r.status_code for r in out] == [200, 200]
    a, b = (r.json() for r in out)
    assert a == b and a["analogies"]
