"""Cross-analogy confirmation (seed 001 Theorem 5): the paper's worked example, hand-computed
mixed evidence, independence groups and bad parameters."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analogist.errors import AnalogistError
from analogist.foresight.confirm import ConfirmParams, n_star, posterior, posterior_log_odds

PAPER = ConfirmParams(pi=0.5, q=1.0, p=0.2, delta=0.05)


def test_paper_worked_example_needs_two_confirmations():
    assert n_star(PAPER) == 2
    one = posterior({"a": 1}, PAPER)
    two = posterior({"a": 1, "b": 1}, PAPER)
    assert one.probability == pytest.approx(5 / 6)  # odds 5 < 19
    assert not one.asserted
    assert two.probability == pytest.approx(25 / 26)  # odds 25 > 19
    assert two.asserted


def test_default_parameters_also_need_two():
    assert n_star(ConfirmParams()) == 2


@pytest.mark.parametrize(("pi", "q", "p", "delta", "expected"), [
    (0.5, 1.0, 0.2, 0.05, 2),
    (0.3, 0.9, 0.1, 0.05, 2),   # (log 19 + log 7/3) / log 9 = 1.73
    (0.5, 0.6, 0.4, 0.01, 12),  # log 99 / log 1.5 = 11.33
    (0.5, 0.9, 0.1, 0.05, 2),   # log 19 / log 9 = 1.34
    (0.9, 0.9, 0.1, 0.05, 1),   # (log 19 − log 9) / log 9 = 0.34
    (0.99, 0.9, 0.1, 0.05, 0),  # the prior alone clears 0.95
])
def test_n_star_hand_computed(pi, q, p, delta, expected):
    assert n_star(ConfirmParams(pi=pi, q=q, p=p, delta=delta)) == expected


def test_mixed_evidence_hand_computed():
    # π = 0.5, q = 0.8, p = 0.2; X = 1, 1, 0 → odds = 4 · 4 · (0.2 / 0.8) = 4 → 0.8
    prm = ConfirmParams(pi=0.5, q=0.8, p=0.2, delta=0.05)
    post = posterior({"a": 1, "b": 1, "c": 0}, prm)
    assert post.log_odds == pytest.approx(math.log(4.0))
    assert post.probability == pytest.approx(0.8)
    assert (post.confirmations, post.disconfirmations, post.asserted) == (2, 1, False)
    # π = 0.3, q = 0.9, p = 0.1; X = 1, 1, 1, 0 → odds = 3/7 · 9³ · (0.1/0.9) = 243/7
    prm2 = ConfirmParams(pi=0.3, q=0.9, p=0.1, delta=0.05)
    post2 = posterior({"a": 1, "b": 1, "c": 1, "d": 0}, prm2)
    assert post2.probability == pytest.approx((243 / 7) / (1 + 243 / 7))
    assert post2.asserted


def test_q_one_makes_a_single_dissent_decisive():
    post = posterior({"a": 1, "b": 1, "c": 1, "d": 0}, PAPER)
    assert post.probability == 0.0
    assert post.log_odds == -math.inf
    assert post.to_json()["log_odds"] is None


def test_heterogeneous_rates():
    prm = ConfirmParams()
    lo = posterior_log_odds([1, 0], prm, rates=[(0.9, 0.3), (0.8, 0.4)])
    assert lo == pytest.approx(math.log(3.0) + math.log(0.2 / 0.6))


def test_group_counts_once():
    groups = {"gfc": "g", "lehman": "g", "japan": "japan"}
    prm = ConfirmParams()
    together = posterior({"gfc": 1, "lehman": 1}, prm, groups)
    assert together.confirmations == 1 and not together.asserted
    apart = posterior({"gfc": 1, "japan": 1}, prm, groups)
    assert apart.confirmations == 2 and apart.asserted
    # a group confirms if any member confirms
    mixed = posterior({"gfc": 0, "lehman": 1}, prm, groups)
    assert (mixed.confirmations, mixed.disconfirmations) == (1, 0)


def test_no_evidence_is_the_prior():
    post = posterior({}, ConfirmParams(pi=0.3))
    assert post.probability == pytest.approx(0.3)


@pytest.mark.parametrize("kw", [{"pi": 0.0}, {"pi": 1.0}, {"p": 0.0}, {"q": 1.2},
                                {"q": 0.2, "p": 0.3}, {"delta": 0.0}, {"delta": 1.0},
                                {"q": 0.2, "p": 0.2}])
def test_bad_parameters_are_refused(kw):
    with pytest.raises(AnalogistError):
        ConfirmParams(**kw)


def test_bad_evidence_is_refused():
    with pytest.raises(AnalogistError, match="0 or 1"):
        posterior({"a": 2}, ConfirmParams())
    with pytest.raises(AnalogistError, match="pairs"):
        posterior_log_odds([1, 1], ConfirmParams(), rates=[(0.9, 0.2)])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1), max_size=12), st.floats(0.05, 0.95),
       st.floats(0.3, 0.99), st.floats(0.01, 0.29))
def test_log_odds_is_the_sum_of_terms_and_order_free(xs, pi, q, p):
    prm = ConfirmParams(pi=pi, q=q, p=p)
    expect = math.log(pi / (1 - pi)) + sum(
        math.log(q / p) if x else math.log((1 - q) / (1 - p)) for x in xs)
    assert posterior_log_odds(xs, prm) == pytest.approx(expect)
    assert posterior_log_odds(list(reversed(xs)), prm) == pytest.approx(expect)
    # one more confirmation never lowers the posterior
    assert posterior_log_odds([*xs, 1], prm) > posterior_log_odds(xs, prm)
    assert posterior_log_odds([*xs, 0], prm) < posterior_log_odds(xs, prm)
