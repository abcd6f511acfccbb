"""PARB metrics and statistics (issue 4, item 6) against hand-computed examples.

Every expected value below is worked out by hand in the comments; the definitions are those of
seed 000 §15 (metrics, NAV), §16 (hypothesis cards) and seed 002 (McNemar, noise floor).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from analogist.bench.parb import metrics as m
from analogist.bench.parb import stats as s
from analogist.errors import AnalogistError

# --------------------------------------------------------------------------- inverse normal


@pytest.mark.parametrize(
    ("p", "z"),
    [
        (0.975, 1.959963984540054),
        (0.95, 1.6448536269514722),
        (0.84, 0.994457883209753),
        (0.5, 0.0),
        (0.16, -0.994457883209753),
        (0.001, -3.090232306167813),
        (1e-10, -6.361340902404056),
        (0.999999, 4.753424308822899),
    ],
)
def test_norm_ppf_known_quantiles(p, z):
    assert s.norm_ppf(p) == pytest.approx(z, abs=1e-9)


def test_norm_ppf_round_trip():
    # Φ(Φ⁻¹(p)) = p across both tails and the centre (Acklam regions p<0.02425, central, upper).
    for p in [1e-12, 1e-6, 0.01, 0.02425, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97575, 0.99, 1 - 1e-9]:
        assert s.norm_cdf(s.norm_ppf(p)) == pytest.approx(p, rel=1e-12, abs=1e-15)
    assert s.norm_ppf(0.975) == pytest.approx(1.959964, abs=1e-6)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan"), "x"])
def test_norm_ppf_rejects_out_of_range(bad):
    with pytest.raises(AnalogistError):
        s.norm_ppf(bad)


# --------------------------------------------------------------------------- stage B


def test_recall_at_k_hand_example():
    rankings = [["a", "b", "c"], ["x", "y", "z"], ["p", "q"], ["m"]]
    keys = [{"c"}, {"a"}, {"q", "r"}, set()]
    # item 3 has no keyed source (no-match item): left out -> denominator 3.
    # k=2: item0 top2 {a,b} ∌ c; item1 {x,y} ∌ a; item2 {p,q} ∋ q -> 1/3
    assert m.recall_at_k(rankings, keys, 2) == pytest.approx(1 / 3)
    # k=3: item0 now has c -> 2/3
    assert m.recall_at_k(rankings, keys, 3) == pytest.approx(2 / 3)
    # k=1: only item2? top1 is p -> 0/3
    assert m.recall_at_k(rankings, keys, 1) == 0.0
    assert m.recall_at_k([["a"]], [set()], 5) is None


def test_historical_claim_precision_hand_example():
    cited = ["a", None, "x", "q"]
    keys = [{"a"}, {"b"}, {"y"}, set()]
    # claims on items 0, 2, 3 (item 1 made none): a ∈ {a} right; x ∉ {y} wrong;
    # q on a no-match item wrong -> 1/3
    assert m.historical_claim_precision(cited, keys) == pytest.approx(1 / 3)
    assert m.historical_claim_precision([None, None], [{"a"}, set()]) is None


def test_no_match_specificity_hand_example():
    # no-match items are 0, 1, 3; reported none on 0 and 3, not on 1 -> 2/3
    assert m.no_match_specificity([True, False, True, True], [True, True, False, True]) == (
        pytest.approx(2 / 3)
    )
    assert m.no_match_specificity([True], [False]) is None


# --------------------------------------------------------------------------- stage C


def test_role_mapping_f1_micro_and_macro():
    pred = [
        {("a", "x"), ("b", "y"), ("c", "z")},  # TP 2 (a-x, b-y), FP 1 (c-z), FN 1 (c-w)
        {"a": "x"},  # dict form: TP 1, FP 0, FN 1 (b-y)
        [],  # both empty: no pairs to score -> not in macro
        None,  # TP 0, FP 0, FN 1 (d-e)
    ]
    gold = [
        {("a", "x"), ("b", "y"), ("c", "w")},
        {("a", "x"), ("b", "y")},
        [],
        [("d", "e")],
    ]
    out = m.role_mapping_f1(pred, gold)
    # micro: TP=3, FP=1, FN=3 -> F1 = 2·3/(2·3+1+3) = 6/10; P = 3/4; R = 3/6
    assert out["micro_f1"] == pytest.approx(0.6)
    assert out["micro_precision"] == pytest.approx(0.75)
    assert out["micro_recall"] == pytest.approx(0.5)
    # macro: per item F1 = 4/6, 2/3, (skipped), 0 -> (2/3 + 2/3 + 0)/3 = 4/9
    assert out["macro_f1"] == pytest.approx(4 / 9)
    empty = m.role_mapping_f1([[]], [[]])
    assert empty == {
        "micro_f1": None,
        "micro_precision": None,
        "micro_recall": None,
        "macro_f1": None,
    }


# --------------------------------------------------------------------------- d′


def test_d_prime_textbook_value():
    # H = 84/100 = 0.84, F = 16/100 = 0.16: no extreme rate, so 1/(2N) leaves them alone.
    # z(0.84) = 0.994458 -> d′ = 0.994458 − (−0.994458) = 1.988916 ≈ 1.99
    assert m.d_prime(84, 16, 16, 84, correction="1/2N") == pytest.approx(1.988916, abs=1e-5)
    # log-linear always adds 0.5 per cell: H = 84.5/101 = 0.836634, z = 0.980716;
    # F = 16.5/101 = 0.163366, z = −0.980716 -> d′ = 1.961433
    assert m.d_prime(84, 16, 16, 84) == pytest.approx(1.961433, abs=1e-5)


def test_d_prime_extreme_rates_each_correction():
    # 10 hits, 0 misses (H = 1), 0 false alarms, 10 correct rejections (F = 0).
    # 1/(2N): H = 1 − 1/20 = 0.95, F = 1/20 = 0.05 -> d′ = 2·z(0.95) = 2·1.644854 = 3.289707
    assert m.d_prime(10, 0, 0, 10, correction="1/2N") == pytest.approx(3.289707, abs=1e-5)
    # log-linear: H = 10.5/11 = 0.954545, z = 1.690622; F = 0.5/11 = 0.045455 -> 3.381243
    assert m.d_prime(10, 0, 0, 10, correction="loglinear") == pytest.approx(3.381243, abs=1e-5)
    # H = 0 on 4 trials, F = 1 on 5 decoys (worst case) with 1/(2N):
    # H = 1/8 = 0.125, z = −1.150349; F = 1 − 1/10 = 0.9, z = 1.281552 -> −2.431901
    assert m.d_prime(0, 4, 5, 0, correction="1/2N") == pytest.approx(-2.431901, abs=1e-5)
    # equal rates -> zero sensitivity under both corrections
    assert m.d_prime(3, 3, 5, 5) == pytest.approx(0.0, abs=1e-12)
    assert m.d_prime(3, 3, 5, 5, correction="1/2N") == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    "args",
    [(-1, 2, 3, 4), (0, 0, 3, 4), (1, 2, 0, 0), (1.5, 2, 3, 4), (True, 2, 3, 4)],
)
def test_d_prime_bad_counts(args):
    with pytest.raises(AnalogistError):
        m.d_prime(*args)


def test_d_prime_bad_correction():
    with pytest.raises(AnalogistError):
        m.d_prime(1, 1, 1, 1, correction="none")


# --------------------------------------------------------------------------- stage D/E/F


def test_partial_transfer_balanced_accuracy():
    transferred = [True, True, False, False, True]
    should = [True, True, True, False, False]
    # transfer class (0,1,2): transferred 2 of 3 -> 2/3; withhold class (3,4): withheld 1 of 2
    # -> 1/2; balanced = (2/3 + 1/2)/2 = 7/12
    assert m.partial_transfer_balanced_accuracy(transferred, should) == pytest.approx(7 / 12)
    # one class only: its accuracy (1 of 2 withheld)
    assert m.partial_transfer_balanced_accuracy([False, True], [False, False]) == 0.5
    assert m.partial_transfer_balanced_accuracy([], []) is None


def test_transfer_accuracy_and_verification_survival():
    assert m.transfer_accuracy([1, 0, 1, 1]) == 0.75  # 3 of 4
    assert m.verification_survival([True, False, False, False]) == 0.25  # 1 of 4
    assert m.verification_survival([]) is None


def test_negative_transfer_rate():
    # 0.5 < 0.7 worse; 1 vs 1 tie (not worse); 0 < 0.1 worse; 0.2 > 0.1 better -> 2/4
    assert m.negative_transfer_rate([0.5, 1, 0, 0.2], [0.7, 1, 0.1, 0.1]) == 0.5
    assert m.negative_transfer_rate([], []) is None


def test_source_dependence():
    # acc(correct) = 3/4, acc(none) = 1/4, acc(wrong) = 2/4 -> Δ = 0.5 and 0.25
    out = m.source_dependence([1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 0, 0])
    assert out["delta_vs_no_source"] == pytest.approx(0.5)
    assert out["delta_vs_wrong_source"] == pytest.approx(0.25)
    assert m.source_dependence([1], [0])["delta_vs_wrong_source"] is None


def test_brier():
    # (0.9−1)² + (0.2−0)² + (0.5−1)² = 0.01 + 0.04 + 0.25 = 0.30; /3 = 0.10
    assert m.brier([0.9, 0.2, 0.5], [1, 0, 1]) == pytest.approx(0.1)
    assert m.brier([1.0, 0.0], [True, False]) == 0.0


# --------------------------------------------------------------------------- NAV


def test_nav_default_weights():
    # (10 − 1·3 − 2·1)/40 = 5/40 = 0.125
    assert m.nav(10, 3, 1, 40) == pytest.approx(0.125)
    # never proposing -> 0; spraying bad analogies -> negative: (0 − 5 − 2·5)/20 = −0.75
    assert m.nav(0, 0, 0, 5) == 0.0
    assert m.nav(0, 5, 5, 20) == pytest.approx(-0.75)
    # explicit weights: (10 − 0.5·3 − 3·1)/40 = 5.5/40
    assert m.nav(10, 3, 1, 40, alpha=0.5, beta=3) == pytest.approx(0.1375)


def test_nav_grid():
    grid = m.nav_grid(10, 3, 1, 40)
    assert len(grid) == 16
    assert set(grid) == {(a, b) for a in (0.5, 1, 2, 3) for b in (0.5, 1, 2, 3)}
    assert grid[(1.0, 2.0)] == pytest.approx(0.125)  # the headline cell
    assert grid[(0.5, 3.0)] == pytest.approx(5.5 / 40)  # (10 − 1.5 − 3)/40
    assert grid[(3.0, 0.5)] == pytest.approx(0.5 / 40)  # (10 − 9 − 0.5)/40
    assert grid[(3.0, 3.0)] == pytest.approx(-2 / 40)  # (10 − 9 − 3)/40
    # NAV is non-increasing in each weight
    assert grid[(0.5, 0.5)] >= grid[(1.0, 0.5)] >= grid[(2.0, 0.5)] >= grid[(3.0, 0.5)]


@pytest.mark.parametrize(
    "args",
    [(1, 0, 0, 0), (-1, 0, 0, 5), (1, -2, 0, 5), (6, 0, 0, 5), (1, 0, 0, 5, -1, 2), (1.5, 0, 0, 5)],
)
def test_nav_bad_inputs(args):
    with pytest.raises(AnalogistError):
        m.nav(*args)


def test_precision_and_yield():
    assert m.useful_analogy_precision(6, 8) == 0.75  # 6 useful of 8 proposed
    assert m.yield_(6, 10) == 0.6  # 6 useful of 10 items where a valid analogy existed
    assert m.useful_analogy_precision(0, 0) is None
    assert m.yield_(0, 0) is None
    for fn in (m.useful_analogy_precision, m.yield_):
        with pytest.raises(AnalogistError):
            fn(5, 4)
        with pytest.raises(AnalogistError):
            fn(-1, 4)


def test_metric_bad_inputs():
    with pytest.raises(AnalogistError):
        m.brier([1.2], [1])  # probability outside [0, 1]
    with pytest.raises(AnalogistError):
        m.brier([-0.1], [0])
    with pytest.raises(AnalogistError):
        m.brier([0.5], [2])  # outcome not 0/1
    with pytest.raises(AnalogistError):
        m.brier([0.5, 0.5], [1])  # misaligned
    with pytest.raises(AnalogistError):
        m.recall_at_k([["a"]], [{"a"}], 0)
    with pytest.raises(AnalogistError):
        m.recall_at_k([["a"]], [{"a"}, {"b"}], 1)
    with pytest.raises(AnalogistError):
        m.transfer_accuracy(["yes"])
    with pytest.raises(AnalogistError):
        m.source_dependence([1.5], [0])
    with pytest.raises(AnalogistError):
        m.source_dependence([], [])
    with pytest.raises(AnalogistError):
        m.negative_transfer_rate([float("nan")], [0])
    with pytest.raises(AnalogistError):
        m.role_mapping_f1([[("a", "b", "c")]], [[]])
    with pytest.raises(AnalogistError):
        m.nav_grid(1, 0, 0, 5, weights=[])


# --------------------------------------------------------------------------- McNemar


def test_mcnemar_exact_known_values():
    # b=0, c=6: 2·C(6,0)/2⁶ = 2/64
    assert s.mcnemar_exact(0, 6) == 0.03125
    # b=1, c=9: 2·(C(10,0)+C(10,1))/2¹⁰ = 2·11/1024
    assert s.mcnemar_exact(1, 9) == 0.021484375
    assert s.mcnemar_exact(9, 1) == 0.021484375  # symmetric
    # seed 002: 5 discordant all one way -> 2·0.5⁵ = 0.0625 ("inside the noise band")
    assert s.mcnemar_exact(0, 5) == 0.0625
    # balanced: 2·(1+6+15+20)/64 = 84/64 > 1 -> capped at 1
    assert s.mcnemar_exact(3, 3) == 1.0
    assert s.mcnemar_exact(0, 0) == 1.0
    # seed 002's activation result quoted p = 0.0703 for 7 fixed / 1 broken:
    # 2·(1+8)/256 = 18/256 = 0.0703125
    assert s.mcnemar_exact(7, 1) == pytest.approx(0.0703125)
    for bad in [(-1, 3), (1.5, 2), ("a", 1)]:
        with pytest.raises(AnalogistError):
            s.mcnemar_exact(*bad)


def test_mcnemar_from_outcomes():
    a = [1, 1, 1, 0, 0, 1]
    b = [0, 0, 1, 0, 1, 1]
    # A-only: items 0, 1 (b=2); B-only: item 4 (c=1) -> p = 2·(1+3)/8 = 1 -> capped 1
    out = s.mcnemar_from_outcomes(a, b)
    assert (out["a_only"], out["b_only"], out["net"], out["n"]) == (2, 1, 1, 6)
    assert out["p"] == 1.0
    with pytest.raises(AnalogistError):
        s.mcnemar_from_outcomes([1, 0], [1])
    with pytest.raises(AnalogistError):
        s.mcnemar_from_outcomes([2], [1])


# --------------------------------------------------------------------------- bootstrap


def test_paired_bootstrap_ci_basic():
    a = [1.0, 2.0, 3.0, 4.0]
    b = [0.0, 1.0, 2.0, 3.0]
    # every pair differs by exactly 1 -> every resample's difference is 1
    out = s.paired_bootstrap_ci(a, b, n_boot=200, seed=1)
    assert out["estimate"] == pytest.approx(1.0)
    assert out["lo"] == pytest.approx(1.0) and out["hi"] == pytest.approx(1.0)
    # seeded: identical calls agree; a non-vectorised stat also works
    x = np.random.default_rng(0).normal(size=30)
    y = x + np.random.default_rng(1).normal(size=30)
    assert s.paired_bootstrap_ci(x, y, seed=7) == s.paired_bootstrap_ci(x, y, seed=7)
    med = s.paired_bootstrap_ci(x, y, stat=np.median, n_boot=300, seed=3)
    assert med["lo"] <= med["hi"]
    assert med["estimate"] == pytest.approx(np.median(x) - np.median(y))
    with pytest.raises(AnalogistError):
        s.paired_bootstrap_ci([1, 2], [1])
    with pytest.raises(AnalogistError):
        s.paired_bootstrap_ci([], [])
    with pytest.raises(AnalogistError):
        s.paired_bootstrap_ci([1], [1], level=1.0)
    with pytest.raises(AnalogistError):
        s.paired_bootstrap_ci([1], [1], n_boot=0)


def test_paired_bootstrap_ci_coverage_on_known_case():
    # 800 simulated datasets, 80 paired items each: a_i = x_i + 0.3 + e_i, b_i = x_i, with
    # a shared item effect x (so pairing matters) and e ~ N(0, 1). The true mean difference is
    # 0.3; the nominal 95% percentile CI should cover it in roughly 93–97% of datasets
    # (observed with these seeds: 94.4%).
    rng = np.random.default_rng(20240501)
    reps, n, delta = 800, 80, 0.3
    covered = 0
    for r in range(reps):
        x = rng.normal(0.0, 3.0, size=n)
        a = x + delta + rng.normal(0.0, 1.0, size=n)
        out = s.paired_bootstrap_ci(a, x, n_boot=600, seed=r)
        covered += out["lo"] <= delta <= out["hi"]
    assert 0.93 <= covered / reps <= 0.97


def test_nav_difference_ci():
    # arm A per item (U, F, N): contributions 1, 1, −1 (α·F), −2 (β·N) -> NAV_A = −1/4
    arm_a = [(1, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    arm_b = [(0, 0, 0)] * 4  # never proposes -> NAV_B = 0
    out = s.nav_difference_ci(arm_a, arm_b, n_boot=500, seed=0)
    assert out["nav_a"] == pytest.approx(-0.25)
    assert out["nav_a"] == pytest.approx(m.nav(2, 1, 1, 4))
    assert out["nav_b"] == 0.0
    assert out["estimate"] == pytest.approx(-0.25)
    assert -2.0 <= out["lo"] <= out["estimate"] <= out["hi"] <= 1.0
    # α = 0.5, β = 3: contributions 1, 1, −0.5, −3 -> −1.5/4
    assert s.nav_difference_ci(arm_a, arm_b, alpha=0.5, beta=3, n_boot=10)["nav_a"] == (
        pytest.approx(-0.375)
    )
    with pytest.raises(AnalogistError):
        s.nav_difference_ci([(1, -1, 0)], [(0, 0, 0)])
    with pytest.raises(AnalogistError):
        s.nav_difference_ci([(1, 0)], [(0, 0)])
    with pytest.raises(AnalogistError):
        s.nav_difference_ci(arm_a, arm_b[:3])


# --------------------------------------------------------------------------- detectability


def test_min_unanimous_discordant_seed_002():
    # 2·0.5⁵ = 0.0625 ≥ 0.05, 2·0.5⁶ = 0.03125 < 0.05 -> 6 items (seed 002)
    assert s.min_unanimous_discordant(0.05) == 6
    # 2·0.5⁷ = 0.0156 ≥ 0.01, 2·0.5⁸ = 0.0078 < 0.01 -> 8
    assert s.min_unanimous_discordant(0.01) == 8


def test_minimum_detectable_swing_monotone_and_calibrated():
    ns = [20, 30, 48, 60, 100, 160, 320, 1000, 5000]
    swings = [s.minimum_detectable_swing(n) for n in ns]
    assert all(x >= y for x, y in zip(swings, swings[1:], strict=False))
    assert swings[-1] < swings[2]
    # tiny sets cannot detect anything at ψ = 0.25
    assert s.minimum_detectable_swing(10) == math.inf
    # seed 000 §15: with 48 items only effects of ~15–20 points are detectable
    assert 0.15 <= s.minimum_detectable_swing(48, discordance=0.2) <= 0.22
    assert 0.15 <= s.minimum_detectable_swing(48, discordance=0.3) <= 0.23
    # Connor's formula at the solution: n·δ² = (z_.975·√ψ + z_.8·√(ψ−δ²))²
    d = s.minimum_detectable_swing(320)
    rhs = (1.959964 * math.sqrt(0.25) + 0.841621 * math.sqrt(0.25 - d * d)) ** 2
    assert 320 * d * d == pytest.approx(rhs, rel=1e-4)
    # the seed 002 floor: never below 6 items' worth
    assert s.minimum_detectable_swing(100, discordance=0.05) >= 6 / 100
    # more power or a stricter alpha needs a larger swing
    assert s.minimum_detectable_swing(100, power=0.9) > s.minimum_detectable_swing(100)
    assert s.minimum_detectable_swing(100, alpha=0.01) > s.minimum_detectable_swing(100)
    for bad in [dict(n=0), dict(n=-5), dict(n=50, alpha=0), dict(n=50, power=1.0)]:
        with pytest.raises(AnalogistError):
            s.minimum_detectable_swing(**bad)
    with pytest.raises(AnalogistError):
        s.minimum_detectable_swing(50, discordance=0)


def test_noise_floor_seed_002():
    assert s.noise_floor(6, 0) == 6  # main: 0 drift -> max(6, 1)
    assert s.noise_floor(6, 1) == 6  # activation branch: 1 drift -> max(6, 2)
    assert s.noise_floor(6, 7) == 8  # drift dominates: max(6, 8)
    with pytest.raises(AnalogistError):
        s.noise_floor(-1, 0)


# --------------------------------------------------------------------------- hypothesis cards


def test_hypothesis_cards_are_complete():
    assert set(s.HYPOTHESES) == {"H1", "H2", "H3", "H4", "H5"}
    for hid, card in s.HYPOTHESES.items():
        assert card["id"] == hid
        for field in ("manipulation", "control", "measure", "keep_if", "conditions"):
            assert card[field]
    assert s.HYPOTHESES["H1"]["conditions"][0]["min_effect"] == 0.15
    assert s.HYPOTHESES["H2"]["combine"] == "any"


def test_judge_h1():
    h1 = s.HYPOTHESES["H1"]
    ab, ac = "recall_at_5_far:C-B'", "recall_at_5_far:C-C'"
    # +20 points over B′ (CI 8..32) and +10 over C′ (CI 2..18) -> kept
    kept = s.judge_hypothesis(h1, {ab: 0.20, ac: 0.10}, {ab: (0.08, 0.32), ac: (0.02, 0.18)})
    assert kept["verdict"] == "kept"
    # +10 points, CI excluding 0 but below the pre-registered 15 -> failed
    low = s.judge_hypothesis(h1, {ab: 0.10, ac: 0.10}, {ab: (0.02, 0.18), ac: (0.02, 0.18)})
    assert low["verdict"] == "failed"
    # +20 over B′ but CI over C′ includes 0 -> not shown
    ns = s.judge_hypothesis(h1, {ab: 0.20, ac: 0.03}, {ab: (0.08, 0.32), ac: (-0.02, 0.08)})
    assert ns["verdict"] == "not shown"
    # C significantly worse than B′ -> failed
    worse = s.judge_hypothesis(h1, {ab: -0.2, ac: 0.1}, {ab: (-0.3, -0.1), ac: (0.02, 0.2)})
    assert worse["verdict"] == "failed"
    # a multi-condition card needs per-measure effects
    with pytest.raises(AnalogistError):
        s.judge_hypothesis(h1, 0.2, (0.1, 0.3))


def test_judge_h2_any_h3_h4_h5():
    h2 = s.HYPOTHESES["H2"]
    dp, tr = "d_prime:D-C", "transfer_accuracy:D-C"
    # d′ +0.1 (CI includes 0), transfer +12 points (CI 4..20) -> kept via transfer
    out = s.judge_hypothesis(h2, {dp: 0.1, tr: 0.12}, {dp: (-0.1, 0.3), tr: (0.04, 0.2)})
    assert out["verdict"] == "kept"
    out = s.judge_hypothesis(h2, {dp: 0.1, tr: 0.05}, {dp: (-0.1, 0.3), tr: (0.01, 0.09)})
    assert out["verdict"] == "not shown"  # one not shown, one failed, none kept
    h3 = s.HYPOTHESES["H3"]
    assert s.judge_hypothesis(h3, 0.05, (0.01, 0.09))["verdict"] == "kept"
    assert s.judge_hypothesis(h3, 0.05, (-0.01, 0.11))["verdict"] == "not shown"
    assert s.judge_hypothesis(h3, -0.05, (-0.09, -0.01))["verdict"] == "failed"
    # inside the noise band although the CI excludes 0 -> not shown
    banded = s.judge_hypothesis(h3, 0.02, (0.01, 0.03), noise_band=0.05)
    assert banded["verdict"] == "not shown"
    # H4 with A1 skipped (no LLM): measures missing -> not shown
    h4 = s.judge_hypothesis(s.HYPOTHESES["H4"], {}, {})
    assert h4["verdict"] == "not shown"
    assert all("not measured" in c["detail"] for c in h4["conditions"])
    h5 = s.HYPOTHESES["H5"]
    f8, f6 = "f8_success:E+loop-E", "f6_false_positive_rate:E+loop-E"
    ok = s.judge_hypothesis(h5, {f8: 0.2, f6: 0.01}, {f8: (0.1, 0.3), f6: (-0.02, 0.04)})
    assert ok["verdict"] == "kept"  # F6 false positives not significantly worse
    bad = s.judge_hypothesis(h5, {f8: 0.2, f6: 0.1}, {f8: (0.1, 0.3), f6: (0.05, 0.15)})
    assert bad["verdict"] == "failed"  # loop mostly adds false positives
    with pytest.raises(AnalogistError):
        s.judge_hypothesis(h3, 0.05, (0.09, 0.01))  # lo > hi
    with pytest.raises(AnalogistError):
        s.judge_hypothesis({"id": "X"}, 0.1, (0.0, 0.2))
