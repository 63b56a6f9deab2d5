"""Secure exponential mechanism: mechanisms.exponential(..., secure=True).

Scores rounded to the grid γ, k_i = round(s_i/γ); index i drawn with
probability exactly ∝ exp(−t·(k_i − min k)), t = ε/(2Δ_g) (ε/Δ_g monotonic),
Δ_g = ⌊Δ/γ⌋ + 1.  Each sampling path (compiled, numpy, Python ints, OS
entropy) is checked against that pmf by chi-square, with a power check.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import fasterm
from fasterm import mechanisms, secure
from fasterm.mechanisms import _discrete, _exact


def target_pmf(scores, sensitivity, epsilon, monotonic=False, granularity=None, rate_factor=1.0):
    """The exact law, computed independently: Fractions for the grid, floats for exp."""
    g = granularity or secure.default_granularity(sensitivity, 1, "l1")
    G = Fraction(g)
    sens_g = math.floor(Fraction(sensitivity) / G) + 1
    t = Fraction(epsilon) / (sens_g if monotonic else 2 * sens_g) * Fraction(rate_factor)
    scores = [float(s) for s in scores]
    k = [round(Fraction(s) / G) if math.isfinite(s) else None for s in scores]
    kmin = min(x for x in k if x is not None)
    w = np.array([0.0 if x is None else math.exp(-float(t * (x - kmin))) for x in k])
    return w / w.sum()


def chi2_p(draws, pmf):
    counts = np.bincount(draws, minlength=pmf.size).astype(float)
    assert counts.size == pmf.size and np.all(counts[pmf == 0] == 0)
    keep = pmf > 0
    exp = pmf[keep] * draws.size
    assert exp.min() >= 5  # the chi-square approximation holds
    return stats.chisquare(counts[keep], exp).pvalue


def draws(scores, sens, eps, n, seed, monotonic=False, granularity=None):
    return mechanisms.releases._exponential(np.asarray(scores, float), sens, eps, seed, monotonic, n, True, granularity)


CASES = {
    "basic": ([0.0, 1.0, 2.0, 0.5, 3.0], 1.0, 1.0, False),
    "ties": ([3.0, 3.0, 3.0, 5.0, 4.0], 1.0, 1.5, False),
    "monotonic": ([0.0, 1.0, 2.0, 0.5, 3.0], 1.0, 1.0, True),
    "plus_inf": ([0.2, math.inf, 1.0, math.inf, 0.7], 0.5, 2.0, False),
    "off_grid_sens": ([0.013, 0.2, 0.41, 0.05], 0.3, 3.0, False),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("rng", ["generator", "os"])
def test_pmf_chisquare_with_power(name, rng):
    scores, sens, eps, mono = CASES[name]
    n = 200_000 if rng == "generator" else 20_000
    x = draws(scores, sens, eps, n, 123 if rng == "generator" else "os", mono)
    assert chi2_p(x, target_pmf(scores, sens, eps, mono)) > 1e-4
    # power: the law with t off by 15% (and the fast path's unrounded factor
    # ε/(2Δ) instead of the grid's ε/(2Δ_g), a 0.1% change, is below the
    # resolution: the rate is what is tested) is rejected
    wrong = target_pmf(scores, sens, eps, mono, rate_factor=1.15)
    if rng == "generator":
        assert chi2_p(x, wrong) < 1e-6


def test_monotonic_is_twice_the_rate():
    scores = [0.0, 1.0, 2.0, 0.5]
    x = draws(scores, 1.0, 1.0, 200_000, 7, monotonic=True)
    assert chi2_p(x, target_pmf(scores, 1.0, 1.0, monotonic=True)) > 1e-4
    assert chi2_p(x, target_pmf(scores, 1.0, 1.0, monotonic=False)) < 1e-6  # power


def test_numpy_and_scalar_paths_match_the_pmf():
    # The reference paths, called directly on grid scores d (min 0).
    d = np.array([0, 3, 1, 0, 7, 2], dtype=np.int64)
    a, b = 2, 5  # t = 0.4
    w = np.exp(-0.4 * d)
    pmf = w / w.sum()
    rng = np.random.default_rng(5)
    assert chi2_p(_exact.expmech_vec(100_000, d, a, b, rng), pmf) > 1e-4
    assert chi2_p(np.array([_exact.expmech_scalar(d.tolist(), a, b, rng) for _ in range(20_000)]), pmf) > 1e-4
    assert chi2_p(_exact.expmech(100_000, d, a, b, rng), pmf) > 1e-4  # compiled
    wrong = np.exp(-0.5 * d)
    assert chi2_p(_exact.expmech(100_000, d, a, b, rng), wrong / wrong.sum()) < 1e-6


def test_big_offsets_use_exact_python_integers():
    # |s/γ| ≥ 2^62: the grid scores are Python ints; differences stay exact.
    sens = 2.0 ** 944  # the spacing of doubles near 1e300
    g = secure.default_granularity(sens, 1, "l1")
    base = 1e300
    scores = np.array([base, base + 2.0 ** 945, base + 2.0 ** 944, base])  # t·d = 0, 1, 0.5, 0
    d = secure.grid_scores(scores, g)
    assert isinstance(d, list) and d == [round(Fraction(s) / Fraction(g)) - round(Fraction(base) / Fraction(g))
                                         for s in scores]
    x = draws(scores, sens, 1.0, 20_000, 3)
    assert chi2_p(x, target_pmf(scores, sens, 1.0)) > 1e-4
    # near the top of the float range: s/γ overflows in float, not in Python ints
    top = np.array([1.7e308, 1.7e308 - 1e300, np.inf, 1.7e308 - 2e300])
    assert isinstance(secure.grid_scores(top[np.isfinite(top)], 2.0 ** -10), list)
    x = draws(top, 1e300, 1.0, 4000, 4)  # γ = 2^960 (the coarsest grid), s/γ > 2^62
    assert chi2_p(x, target_pmf(top, 1e300, 1.0)) > 1e-4
    # Δ/γ beyond 2^47 even on the coarsest grid: refused, naming the parameters
    with pytest.raises(ValueError, match="sensitivity"):
        draws(top, 1e306, 1.0, 1, 4)
    # int64 path agrees with the Python-int path where both apply
    s = np.random.default_rng(0).normal(size=50) * 1000
    k64 = secure.grid_scores(s, 2.0 ** -8)
    ref = [round(Fraction(v) / Fraction(2.0 ** -8)) for v in s]
    assert k64.dtype == np.int64 and k64.tolist() == [r - min(ref) for r in ref]


def test_extreme_rates_are_exact_and_fast():
    # huge t (ε = 1e300): the weight of a non-minimiser is e^-(huge), never accepted,
    # and the choice is uniform over the tied minimisers (Bernoulli(e^-1) early exit).
    scores = [1.0, 0.0, 2.0, 0.0]
    x = draws(scores, 1.0, 1e300, 20_000, 9)
    assert set(np.unique(x)) == {1, 3}
    assert chi2_p(x, np.array([0, 0.5, 0, 0.5])) > 1e-4
    # tiny ε (t's denominator beyond 2^64: scalar path): nearly uniform, exactly
    x = draws([0.0, 1.0, 2.0], 1.0, 1e-300, 3000, 10)
    assert chi2_p(x, np.full(3, 1 / 3)) > 1e-4


def test_outputs_identical_for_neighbours_with_the_same_rounded_scores():
    # Two inputs whose scores round to the same grid points (or differ by a
    # common multiple of γ) have the same output law; with the same seed the
    # draws coincide exactly, because only the integers d reach the sampler.
    g = 2.0 ** -10
    s = np.array([0.0, 0.25, 1.0, 0.5]) + 3 * g
    s_near = s + np.array([0.3, -0.4, 0.1, 0.49]) * g
    s_shift = s + 1000 * g
    a = draws(s, 1.0, 1.0, 5000, 11)
    np.testing.assert_array_equal(a, draws(s_near, 1.0, 1.0, 5000, 11))
    np.testing.assert_array_equal(a, draws(s_shift, 1.0, 1.0, 5000, 11))
    # ... whereas the fast path's draws depend on the unrounded values
    f = mechanisms.releases._exponential(s, 1.0, 1.0, 11, False, 5000)
    f_near = mechanisms.releases._exponential(s_near, 1.0, 1.0, 11, False, 5000)
    assert not np.array_equal(f, f_near)


def test_seed_reproducibility_and_generator_stream():
    scores = np.linspace(0.0, 3.0, 50)
    one = [mechanisms.exponential(scores, 1.0, 2.0, random_state=s, secure=True) for s in range(30)]
    assert one == [mechanisms.exponential(scores, 1.0, 2.0, random_state=s, secure=True) for s in range(30)]
    g1, g2 = np.random.default_rng(4), np.random.default_rng(4)
    seq = [mechanisms.exponential(scores, 1.0, 2.0, random_state=g1, secure=True) for _ in range(30)]
    assert seq == [mechanisms.exponential(scores, 1.0, 2.0, random_state=g2, secure=True) for _ in range(30)]
    assert len(set(seq)) > 3 and all(isinstance(i, int) for i in seq)
    assert isinstance(mechanisms.exponential(scores, 1.0, 2.0, random_state=fasterm.mechanisms.noise.OSRandom(), secure=True),
                      int)


def test_secure_mode_makes_it_the_default():
    scores = np.linspace(0.0, 5.0, 20)
    ref = [mechanisms.exponential(scores, 1.0, 1.0, random_state=s, secure=True) for s in range(40)]
    fast = [mechanisms.exponential(scores, 1.0, 1.0, random_state=s) for s in range(40)]
    assert ref != fast  # different samplers: the switch is observable
    with fasterm.secure_mode():
        assert [mechanisms.exponential(scores, 1.0, 1.0, random_state=s) for s in range(40)] == ref
        mechanisms.exponential(scores, 1.0, 1.0, random_state=0, granularity=2.0 ** -4)
        assert [mechanisms.exponential(scores, 1.0, 1.0, random_state=s, secure=False)
                for s in range(40)] == fast
    fasterm.set_secure(True)
    try:
        assert [mechanisms.exponential(scores, 1.0, 1.0, random_state=s) for s in range(40)] == ref
    finally:
        fasterm.set_secure(False)
    with pytest.raises(ValueError, match="granularity"):
        mechanisms.exponential(scores, 1.0, 1.0, granularity=2.0 ** -4)  # not in secure mode


@pytest.mark.parametrize("bad,exc", [(0.3, ValueError), (0.0, ValueError), (-0.5, ValueError),
                                     (math.inf, ValueError), (math.nan, ValueError), (3, ValueError),
                                     (True, TypeError), ("1", TypeError), (2.0 ** -1100, ValueError)])
def test_bad_granularity(bad, exc):
    with pytest.raises(exc, match="granularity"):
        mechanisms.exponential([0.0, 1.0], 1.0, 1.0, secure=True, granularity=bad)


def test_bad_parameters_named():
    with pytest.raises(ValueError, match="granularity"):  # Δ/γ = 2^60 > 2^47 grid units
        mechanisms.exponential([0.0, 1.0], 1.0, 1.0, secure=True, granularity=2.0 ** -60)
    with pytest.raises(ValueError, match="sensitivity"):
        mechanisms.exponential([0.0, 1.0], 2.0 ** 900, 1.0, secure=True, granularity=2.0 ** -100)
    for bad in ([0.0, math.nan], [0.0, -math.inf], [math.inf, math.inf]):
        with pytest.raises(ValueError, match="scores"):
            mechanisms.exponential(bad, 1.0, 1.0, secure=True)
    with pytest.raises(ValueError, match="scores"):
        mechanisms.exponential([], 1.0, 1.0, secure=True)
    with pytest.raises(ValueError, match="epsilon"):
        mechanisms.exponential([0.0, 1.0], 1.0, 0.0, secure=True)
    with pytest.raises(ValueError, match="random_state"):
        mechanisms.exponential([0.0, 1.0], 1.0, 1.0, random_state="urandom", secure=True)
    with pytest.raises(TypeError, match="secure"):
        mechanisms.exponential([0.0, 1.0], 1.0, 1.0, secure="yes")
    # the compiled kernel's own checks (callers guarantee them; still no crash)
    bg = np.random.default_rng(0).bit_generator
    out = np.empty(3, np.int64)
    for d, a, b in ((np.array([1, 2], np.int64), 1, 1), (np.array([0, -1], np.int64), 1, 1),
                    (np.array([], np.int64), 1, 1), (np.array([0, 1], np.int64), 0, 1),
                    (np.array([0, 1], np.int64), 1, 1 << 64)):
        with pytest.raises(ValueError):
            _discrete.expmech_fill(bg, d, out, a, b)


def test_calibration_values():
    cal = secure.exponential_calibration(1.0, 1.0)
    assert cal.granularity == 2.0 ** -10 and cal.grid_sensitivity == 1025 and cal.rate == Fraction(1, 2050)
    cal = secure.exponential_calibration(0.3, 0.1, monotonic=True)
    g = cal.granularity
    assert g == 2.0 ** -12 and g <= 0.3 / 1024 < 2 * g
    assert cal.grid_sensitivity == math.floor(Fraction(0.3) / Fraction(g)) + 1
    assert cal.rate == Fraction(0.1) / cal.grid_sensitivity
    # the rounding bound behind Δ_g: scores Δ apart on the grid's worst case (a tie
    # rounding apart) differ by ⌊Δ/γ⌋ + 1 grid units, never more
    g = 2.0 ** -10
    a, b = 0.5 * g, 0.5 * g + 1.0  # round(0.5) = 0, round(1024.5) = 1024 (half to even) ...
    a2, b2 = 1.5 * g, 1.5 * g + 1.0  # round(1.5) = 2, round(1025.5) = 1026
    assert abs(round(a / g) - round(b / g)) <= 1025 and abs(round(a2 / g) - round(b2 / g)) <= 1025
    rng = np.random.default_rng(0)
    x = rng.uniform(-10, 10, 10_000)
    y = x + rng.uniform(-1, 1, 10_000)
    assert np.max(np.abs(np.rint(x / g) - np.rint(y / g))) <= 1025
