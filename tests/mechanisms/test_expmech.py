"""Exponential mechanism over a finite range: fasterm.mechanisms.exponential.

The compiled sampler is checked against a slow NumPy reference that computes
the exact probabilities with log-sum-exp, by chi-square tests on many draws
(fixed seeds), including offsets and ranges where exp(-k s) itself would
under- or overflow.
"""

import math

import numpy as np
import pytest
from scipy import stats

from fasterm import mechanisms
from fasterm.mechanisms import _expmech


def reference_probs(scores, sensitivity, epsilon, monotonic=False):
    """P(i) ∝ exp(-eps s_i / (2 sens)), in log space with the max subtracted."""
    s = np.asarray(scores, dtype=np.float64)
    c = epsilon if monotonic else epsilon / 2
    with np.errstate(over="ignore", invalid="ignore"):
        # scores in units of the sensitivity first: no overflow for any range
        u = s / sensitivity
        logw = np.where(np.isinf(s), -np.inf, -c * (u - np.min(u)))
    logw -= logw.max()
    w = np.exp(logw)
    return w / w.sum()


def draws(scores, sensitivity, epsilon, n, seed, monotonic=False):
    return mechanisms.releases._exponential(scores, sensitivity, epsilon, seed, monotonic, n)


def chi2_pvalue(idx, probs, min_expected=5.0):
    """Chi-square goodness of fit; cells with small expectations are pooled."""
    n = idx.size
    counts = np.bincount(idx, minlength=probs.size).astype(float)
    assert counts.size == probs.size, "an index out of range was drawn"
    expected = probs * n
    assert counts[expected == 0].sum() == 0, "an index of probability 0 was drawn"
    big = expected >= min_expected
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] < min_expected:  # fold the pooled remainder into the largest cell
        j = np.argmax(exp[:-1])
        obs[j] += obs[-1]
        exp[j] += exp[-1]
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


# ---------------------------------------------------------------- exp kernel


def test_exp_nonpos_accuracy():
    x = -np.concatenate([[0.0], np.logspace(-300, -1, 2000), np.linspace(0.1, 707.9, 200001)])
    e, m = np.empty_like(x), np.empty_like(x)
    _expmech._exp_nonpos(x, e, m)
    ref_e, ref_m = np.exp(x), np.expm1(x)
    assert np.max(np.abs(e - ref_e) / ref_e) < 4e-16
    assert np.max(np.abs(m - ref_m) / np.abs(np.where(ref_m == 0, 1, ref_m))) < 4e-16
    assert e[0] == 1.0 and m[0] == 0.0
    low = np.array([-708.5, -1e6, -np.inf, np.nan])
    e, m = np.empty_like(low), np.empty_like(low)
    _expmech._exp_nonpos(low, e, m)
    np.testing.assert_array_equal(e, 0.0)
    np.testing.assert_array_equal(m, -1.0)


# ---------------------------------------------------------- distribution


@pytest.mark.parametrize("k,eps,sens,seed", [(5, 1.0, 1.0, 0), (20, 0.3, 0.5, 1), (50, 2.0, 3.0, 2)])
def test_frequencies_match_exact_probabilities(k, eps, sens, seed):
    scores = np.random.default_rng(100 + seed).uniform(0, 10, size=k)
    probs = reference_probs(scores, sens, eps)
    idx = draws(scores, sens, eps, 200_000, seed)
    assert chi2_pvalue(idx, probs) > 1e-3


def test_power_detects_epsilon_off_by_20_percent():
    scores = np.arange(20.0)
    idx = draws(scores, 1.0, 0.5, 200_000, 3)
    assert chi2_pvalue(idx, reference_probs(scores, 1.0, 0.5)) > 1e-3
    assert chi2_pvalue(idx, reference_probs(scores, 1.0, 0.6)) < 1e-8
    assert chi2_pvalue(idx, reference_probs(scores, 1.0, 0.4)) < 1e-8


@pytest.mark.parametrize("offset", [1e12, -1e12, 1e15, 1e300, -1e300])
def test_huge_offsets(offset):
    # exp(-eps s / 2) of the raw scores under- or overflows; differences are kept.
    base = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 8.0])
    step = max(1.0, math.ulp(abs(offset)) * 4)
    scores = offset + base * step
    sens = step
    probs = reference_probs(base, 1.0, 1.0)  # the offset and the unit cancel
    assert chi2_pvalue(draws(scores, sens, 1.0, 100_000, 4), probs) > 1e-3


def test_range_far_beyond_exp_underflow():
    # Range 1e4 * sensitivity / eps: naive exp(-eps s / (2 sens)) is 0 for all
    # but the first few scores; the mechanism still works, and the far scores
    # are never drawn.
    scores = np.concatenate([[0.0, 0.5, 1.0, 3.0], np.linspace(1e3, 1e4, 46)])
    probs = reference_probs(scores, 1.0, 1.0)
    idx = draws(scores, 1.0, 1.0, 100_000, 5)
    assert chi2_pvalue(idx, probs) > 1e-3
    assert idx.max() <= 3


def test_full_double_range_scores():
    # s_i - s_min overflows a double; the halves do not.
    scores = np.array([-1.5e308, 1.5e308, 0.0, -1.5e308])
    sens = 1e308
    probs = reference_probs(scores, sens, 2.0)  # weights 1, e^-3, e^-1.5, 1
    np.testing.assert_allclose(probs * (2 + np.exp(-3) + np.exp(-1.5)), [1, np.exp(-3), np.exp(-1.5), 1])
    assert chi2_pvalue(draws(scores, sens, 2.0, 100_000, 6), probs) > 1e-3


def test_large_range_one_million_coarse_groups():
    k = 1_000_000
    rng = np.random.default_rng(7)
    scores = rng.normal(size=k) * 3.0 + np.linspace(0, 4, k)
    probs = reference_probs(scores, 1.0, 1.0)
    idx = draws(scores, 1.0, 1.0, 200_000, 8)
    groups = 200  # coarse grouping of consecutive indices
    gp = probs.reshape(groups, -1).sum(axis=1)
    assert chi2_pvalue(idx // (k // groups), gp) > 1e-3
    # the top individual scores are hit at their exact rates as well
    top = np.argsort(-probs)[:20]
    sub = np.where(np.isin(idx, top), np.searchsorted(np.sort(top), idx), 20)
    sub_p = np.append(probs[np.sort(top)], 1 - probs[top].sum())
    assert chi2_pvalue(sub.clip(0, 20), sub_p) > 1e-3


def test_infinite_scores_never_chosen_and_ties_uniform():
    scores = np.array([np.inf, 1.0, 1.0, np.inf, 2.0])
    idx = draws(scores, 1.0, 1.0, 100_000, 9)
    assert not np.isin(idx, [0, 3]).any()
    assert chi2_pvalue(idx, reference_probs(scores, 1.0, 1.0)) > 1e-3


def test_overflowing_rate_gives_uniform_argmin():
    scores = np.array([1.0, 0.0, 0.0, 5.0, 0.0])
    idx = draws(scores, 1e-300, 1e300, 30_000, 10)  # eps / (2 sens) = inf
    assert set(np.unique(idx)) == {1, 2, 4}
    assert stats.chisquare(np.bincount(idx)[[1, 2, 4]]).pvalue > 1e-3


def test_tiny_epsilon_is_uniform():
    scores = np.arange(10.0)
    idx = draws(scores, 1.0, 1e-12, 100_000, 11)
    assert stats.chisquare(np.bincount(idx, minlength=10)).pvalue > 1e-3


def test_monotonic_halves_the_exponent():
    scores = np.arange(8.0)
    a = draws(scores, 1.0, 0.7, 1000, 12, monotonic=True)
    b = draws(scores, 1.0, 1.4, 1000, 12)
    np.testing.assert_array_equal(a, b)
    idx = draws(scores, 1.0, 0.7, 100_000, 13, monotonic=True)
    assert chi2_pvalue(idx, reference_probs(scores, 1.0, 0.7, monotonic=True)) > 1e-3


# ------------------------------------------------------ API and reproducibility


def test_public_function_returns_int_and_reproduces():
    scores = np.random.default_rng(0).uniform(size=1000)
    i = mechanisms.exponential(scores, 0.1, 1.0, random_state=42)
    assert isinstance(i, int) and 0 <= i < 1000
    assert mechanisms.exponential(scores, 0.1, 1.0, random_state=42) == i
    # one Generator across calls gives the same stream as a batch of draws
    g = np.random.default_rng(5)
    seq = [mechanisms.exponential(scores, 0.1, 1.0, random_state=g) for _ in range(50)]
    np.testing.assert_array_equal(seq, draws(scores, 0.1, 1.0, 50, 5))


def test_float32_scores_and_lists():
    s64 = np.random.default_rng(1).uniform(0, 50, size=3000).astype(np.float32).astype(np.float64)
    s32 = s64.astype(np.float32)
    np.testing.assert_array_equal(draws(s32, 1.0, 1.0, 500, 3), draws(s64, 1.0, 1.0, 500, 3))
    assert mechanisms.exponential([2, 0, 1], 1.0, 1e6, random_state=0) == 1
    assert mechanisms.exponential([7.0], 1.0, 1.0) == 0


@pytest.mark.parametrize(
    "kwargs,param,exc",
    [
        (dict(scores=[1.0, np.nan]), "scores", ValueError),
        (dict(scores=[1.0, -np.inf]), "scores", ValueError),
        (dict(scores=[np.inf, np.inf]), "scores", ValueError),
        (dict(scores=[]), "scores", ValueError),
        (dict(scores=[[1.0, 2.0]]), "scores", ValueError),
        (dict(scores=["a", "b"]), "scores", TypeError),
        (dict(sensitivity=0.0), "sensitivity", ValueError),
        (dict(sensitivity=-1.0), "sensitivity", ValueError),
        (dict(sensitivity=np.inf), "sensitivity", ValueError),
        (dict(epsilon=0.0), "epsilon", ValueError),
        (dict(epsilon=-0.5), "epsilon", ValueError),
        (dict(epsilon=np.nan), "epsilon", ValueError),
        (dict(epsilon=np.inf), "epsilon", ValueError),
        (dict(epsilon="1"), "epsilon", TypeError),
        (dict(random_state=-1), "random_state", ValueError),
        (dict(random_state="seed"), "random_state", TypeError),
        (dict(random_state=np.random.RandomState(0)), "random_state", TypeError),
        (dict(monotonic=1), "monotonic", TypeError),
    ],
)
def test_errors_name_the_parameter(kwargs, param, exc):
    args = dict(scores=[1.0, 2.0], sensitivity=1.0, epsilon=1.0)
    args.update(kwargs)
    with pytest.raises(exc, match=param):
        mechanisms.exponential(**args)
