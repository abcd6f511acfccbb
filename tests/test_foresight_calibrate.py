"""Calibration of π per position and (q, p) per analogy strength; the calibrated posterior."""

from __future__ import annotations

import json
import math

import pytest

from analogist.errors import AnalogistError
from analogist.foresight.calibrate import (
    Calibration,
    bundled_calibration,
    calibrate,
    load_calibration,
    strength_bin,
)
from analogist.foresight.event import POSITIONS, Corpus
from analogist.foresight.loop import ForesightParams, run_foresight
from tests.foresight_fixtures import crisis, unrelated


@pytest.fixture(scope="module")
def small():
    evs = [crisis(f"panic-{y}", str(y), cutoff=f"{y}-06-15", name=f"Panic of {y}",
                  drop=("RESCUE",) if y % 20 else ()) for y in range(1800, 1900, 10)]
    evs += [unrelated(f"plague-{i}", name=f"Plague of {1600 + i}") for i in range(3)]
    return Corpus(tuple(evs), "small")


def test_counts_and_rates(small):
    targets = [e for e in small.events if e.cutoff is not None]
    cal = calibrate(small, targets, params=ForesightParams(w_embedding=0.0), arm="cana",
                    source="fixture")
    assert cal.arm == "cana" and cal.source == "fixture"
    assert set(cal.pi) <= set(POSITIONS)
    assert all(0 < v < 1 for v in cal.pi.values())
    for b, (q, p) in cal.rates.items():
        assert b in ("m1", "m2", "m3") and 0 < p < q <= 1
        c = cal.counts["bins"][b]
        assert q == pytest.approx((c["x1_true"] + 1) / (c["n_true"] + 2))
        assert p == pytest.approx((c["x1_false"] + 1) / (c["n_false"] + 2))
    again = calibrate(small, targets, params=ForesightParams(w_embedding=0.0), arm="cana",
                      source="fixture")
    assert again.to_json() == cal.to_json()  # deterministic
    back = Calibration.from_json(json.loads(json.dumps(cal.to_json())))
    assert back.to_json() == cal.to_json()


def test_surface_arm_has_one_bin(small):
    targets = [e for e in small.events if e.cutoff is not None][:4]
    cal = calibrate(small, targets, arm="surface")
    assert set(cal.rates) <= {"surface"}


def test_calibrated_posterior_uses_position_priors_and_bin_rates():
    target = crisis("target-crisis", "2000", cutoff="2000-06-15", name="Target Crisis")
    pool = [crisis("panic-east", "1850", name="Panic in the East"),
            crisis("panic-west", "1950", name="Panic in the West")]
    cal = Calibration("cana", {"amplifier": 0.2, "outcome": 0.5},
                      {"m3": (0.6, 0.1)}, source="hand")
    res = run_foresight(target, pool, params=ForesightParams(calibration=cal))
    post = res.decision.posteriors[("amplifier", "bank_run")]
    # both analogies match 3 target factors (bin m3): odds = 0.25 · 6 · 6 = 9
    assert strength_bin(3) == "m3"
    assert post.log_odds == pytest.approx(math.log(0.2 / 0.8) + 2 * math.log(6))
    assert not post.asserted  # 0.9 < 0.95
    out = res.decision.posteriors[("outcome", "deep_recession")]
    assert out.probability == pytest.approx(36 / 37)
    assert out.asserted
    # a bin without rates carries no evidence
    weak = Calibration("cana", {"amplifier": 0.2}, {"m1": (0.6, 0.1)}, source="hand")
    res2 = run_foresight(target, pool, params=ForesightParams(calibration=weak))
    assert res2.decision.posteriors[("amplifier", "bank_run")].confirmations == 0


@pytest.mark.parametrize(("kw", "needle"), [
    ({"pi": {"amplifier": 1.0}, "rates": {}}, "pi"),
    ({"pi": {"climax": 0.2}, "rates": {}}, "pi"),
    ({"pi": {}, "rates": {"m1": (0.2, 0.3)}}, "rates"),
])
def test_bad_calibrations(kw, needle):
    with pytest.raises(AnalogistError, match=needle):
        Calibration("cana", **kw)


def test_load_calibration_errors(tmp_path):
    f = tmp_path / "cal.json"
    f.write_text('{"cana": {"arm": "cana", "pi": {"amplifier": "x"}, "rates": {}}}')
    with pytest.raises(AnalogistError, match="malformed calibration"):
        load_calibration(f)
    with pytest.raises(AnalogistError, match="no calibration for arm"):
        load_calibration(f, "surface")
    g = tmp_path / "broken.json"
    g.write_text("{not json")
    with pytest.raises(AnalogistError, match="broken.json"):
        load_calibration(g)
    with pytest.raises(AnalogistError, match="arm must be"):
        calibrate(Corpus((), "x"), [], arm="oracle")


def test_bundled_calibration_is_valid():
    for arm in ("cana", "surface"):
        cal = bundled_calibration(arm)
        assert cal is not None and cal.rates
        assert "dev split" in cal.source
    prm = ForesightParams.calibrated()
    assert prm.calibration is bundled_calibration("cana")
