"""The server process's policy for Python's cyclic collector (service.runtime.CollectorPolicy):
what survives a full collection is frozen, every ``every``-th full collection unfreezes it all
so that cycles that became garbage while frozen are freed; removing the policy unfreezes
everything; a served process reports the collector in /v1/metrics."""

from __future__ import annotations

import gc
import weakref

import pytest
from fastapi.testclient import TestClient

from analogist.server import create_app
from analogist.service.keys import keys_add
from analogist.service.runtime import CollectorPolicy


class _Node:
    other: _Node | None = None


def _in_generations(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects())


def test_survivors_are_frozen_and_frozen_cycles_are_freed_within_every() -> None:
    policy = CollectorPolicy(every=3)
    try:
        policy.install()
        assert policy.install() is policy            # once per policy: one callback
        assert gc.callbacks.count(policy._on_gc) == 1
        assert gc.get_freeze_count() > 0             # what lived at install time
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        assert _in_generations(a)
        gc.collect()                                 # full collection 1: the cycle survives
        assert (policy.full, policy.frozen) == (1, 1)
        assert not _in_generations(a)                # frozen: no longer looked at
        del a, b                                     # now cyclic garbage, frozen
        gc.collect()                                 # 2: it is not looked at, so not freed
        assert alive() is not None
        gc.collect()                                 # 3: every third unfreezes after it
        assert (policy.full, policy.frozen) == (3, 2)
        assert gc.get_freeze_count() == 0
        gc.collect()                                 # 4: looks at everything: freed
        assert alive() is None
        assert policy.stats()["full_collections"] == 4
    finally:
        policy.remove()
    assert policy._on_gc not in gc.callbacks
    assert gc.get_freeze_count() == 0


def test_every_must_be_a_positive_whole_number() -> None:
    for bad in (0, -1, 1.5, True, "8"):
        with pytest.raises(ValueError, match="every"):
            CollectorPolicy(every=bad)  # type: ignore[arg-type]


def test_metrics_report_the_collector(tmp_path) -> None:
    store = tmp_path / "s.db"
    token = keys_add(store, "k", ["ns"])
    with TestClient(create_app(store, rate_per_minute=0)) as c:
        got = c.get("/v1/metrics", headers={"Authorization": f"Bearer {token}"}).json()
    col = got["collector"]
    assert col["frozen_objects"] == gc.get_freeze_count()
    assert [set(g) >= {"collections", "collected", "uncollectable"}
            for g in col["generations"]] == [True, True, True]
