"""The statistics module's ratio-of-sums bootstrap (foresight's micro recall and precision)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analogist.errors import AnalogistError
from analogist.stats import ratio_bootstrap_ci


def test_estimate_is_the_ratio_of_sums_and_the_interval_holds_it() -> None:
    num, den = [1, 0, 2, 3], [1, 2, 2, 3]
    est, lo, hi = ratio_bootstrap_ci(num, den, np.random.default_rng(0), 2000)
    assert est == pytest.approx(6 / 8)
    assert lo <= est <= hi and 0.0 <= lo and hi <= 1.0


def test_no_denominator_gives_no_ratio() -> None:
    assert ratio_bootstrap_ci([0, 0], [0, 0], np.random.default_rng(0)) == (None, None, None)


def test_unpaired_input_is_refused() -> None:
    with pytest.raises(AnalogistError, match="not paired"):
        ratio_bootstrap_ci([1, 2], [1], np.random.default_rng(0))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=20),
       st.integers(0, 1000))
def test_same_seed_same_interval_and_lo_below_hi(rows: list[tuple[int, int]], seed: int) -> None:
    num = [min(a, b) for a, b in rows]
    den = [max(a, b) for a, b in rows]
    a = ratio_bootstrap_ci(num, den, np.random.default_rng(seed), 200)
    b = ratio_bootstrap_ci(num, den, np.random.default_rng(seed), 200)
    assert a == b or all(x is y or (isinstance(x, float) and math.isnan(x)) for x, y in zip(a, b))
    if a[0] is not None and not math.isnan(a[1]):
        assert a[1] <= a[2] and 0.0 <= a[1] and a[2] <= 1.0
