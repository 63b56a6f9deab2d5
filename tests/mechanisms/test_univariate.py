"""Exact 1-D private samplers: fasterm.median, fasterm.quantile, fasterm.mean.

Exactness: 1e5 draws (fixed seeds) pass a Kolmogorov-Smirnov test against the
target CDF obtained *independently* by numerical integration of the
unnormalised density exp(-eps * score(w) / (2 * sensitivity)), with the score
evaluated straight from its definition on a fine grid (no piece masses, no
truncated-normal formulas).  Each test also checks that the KS test would
notice epsilon off by 20% where that is detectable.
"""

import math
import zlib

import numpy as np
import pytest
from scipy import special, stats

import fasterm as fe
from fasterm.mechanisms import _expmech, univariate

N_DRAWS = 100_000


# ----------------------------------------------------------------- references


def _grid(a, b, centers=(), scale=None, extra=()):
    """Uniform grid on [a, b] plus the breakpoints, refined around `centers`."""
    parts = [np.linspace(a, b, 200_001), np.clip(np.asarray(extra, dtype=float), a, b)]
    if scale is not None:
        for c in np.unique(np.clip(np.asarray(centers, dtype=float), a, b)):
            parts.append(np.clip(np.linspace(c - 40 * scale, c + 40 * scale, 4001), a, b))
    return np.unique(np.concatenate(parts))


def _cdf_from_logdensity(grid, logdens_mid):
    """Midpoint rule on every grid cell: exact for a density constant between
    grid points, O(h^2) for a smooth one."""
    lw = logdens_mid - logdens_mid.max()
    mass = np.exp(lw) * np.diff(grid)
    cdf = np.concatenate([[0.0], np.cumsum(mass)])
    return cdf / cdf[-1]


def ref_cdf_median_erm(x, a, b, eps):
    xc = np.clip(np.asarray(x, dtype=np.float64), a, b)
    scale = 2 * (b - a) / eps  # slope of the log density is a multiple of 1/scale
    centers = xc if xc.size <= 400 else np.quantile(xc, [0.4, 0.5, 0.6])
    grid = _grid(a, b, centers=centers, scale=scale, extra=xc)
    mid = 0.5 * (grid[1:] + grid[:-1])
    if xc.size <= 400:  # the definition: sum_i |w - x_i|
        total = np.zeros_like(mid)
        for xi in xc:
            total += np.abs(mid - xi)
    else:  # same sum via sorted prefix sums, for large n
        s = np.sort(xc)
        cs = np.concatenate([[0.0], np.cumsum(s)])
        j = np.searchsorted(s, mid)
        total = (j * mid - cs[j]) + (cs[-1] - cs[j] - (s.size - j) * mid)
    return grid, _cdf_from_logdensity(grid, -eps * total / (2 * (b - a)))


def ref_cdf_quantile(x, q, a, b, eps):
    xc = np.sort(np.clip(np.asarray(x, dtype=np.float64), a, b))
    grid = _grid(a, b, extra=xc)
    mid = 0.5 * (grid[1:] + grid[:-1])
    below = np.searchsorted(xc, mid, side="left")  # #{i : x_i < w}
    return grid, _cdf_from_logdensity(grid, -eps * np.abs(below - q * xc.size) / 2)


def ref_cdf_mean(x, a, b, eps):
    xc = np.clip(np.asarray(x, dtype=np.float64), a, b)
    n = xc.size
    sd = (b - a) / math.sqrt(eps * n)
    grid = _grid(a, b, centers=[xc.mean(), a, b], scale=sd / 4)
    mid = 0.5 * (grid[1:] + grid[:-1])
    loss = np.zeros_like(mid)  # L(w) = (1/n) sum_i (w - x_i)^2, term by term
    for xi in xc:
        loss += (mid - xi) ** 2
    loss /= n
    return grid, _cdf_from_logdensity(grid, -eps * n * loss / (2 * (b - a) ** 2))


def ks_pvalue(samples, grid, cdf):
    return stats.kstest(samples, lambda w: np.interp(w, grid, cdf)).pvalue


def seed_of(*key):
    return zlib.crc32(repr(key).encode())  # a fixed seed per test case


def sample(kind, x, bounds, eps, seed, **kw):
    out = univariate._sample(kind, x, bounds, eps, random_state=seed, size=N_DRAWS, **kw)
    assert out.min() >= bounds[0] and out.max() <= bounds[1]
    return out


# ------------------------------------------------------------------- data sets

_rng = np.random.default_rng(2024)
DATA = {
    # ties, points outside the bounds on both sides
    "normal_ties_outside": np.concatenate(
        [_rng.normal(size=80), np.repeat([0.25, -0.5], 6), [9.0, 12.0, -7.0, 3.5, -3.0, 3.0]]
    ),
    "n1": np.array([0.3]),
    "even": _rng.uniform(-1, 2, size=10),
    "all_tied": np.full(50, 0.2),
    "all_below": np.full(20, -5.0),
    "multiblock": _rng.standard_t(3, size=3001),
}

# (data, bounds, eps, power): power = check that eps * 1.2 is rejected
MEDIAN_CASES = [
    ("normal_ties_outside", (-3.0, 3.0), 1.0, True),
    ("normal_ties_outside", (-3.0, 3.0), 1e-6, False),  # nearly uniform
    ("normal_ties_outside", (-3.0, 3.0), 2e4, False),  # concentrated at the median
    ("n1", (0.0, 1.0), 3.0, True),
    ("even", (-1.0, 2.0), 5.0, True),  # flat piece between the middle points
    ("all_tied", (0.0, 1.0), 0.5, True),
    ("all_below", (0.0, 1.0), 0.2, True),  # everything clipped to a
    ("multiblock", (-10.0, 10.0), 0.02, True),  # many blocks on both sides
    ("multiblock", (-10.0, 10.0), 20.0, True),  # underflow cut-off after a few blocks
]


@pytest.mark.parametrize("name,bounds,eps,power", MEDIAN_CASES)
def test_median_erm_exact(name, bounds, eps, power):
    x = DATA[name]
    w = sample("median", x, bounds, eps, seed=seed_of("median", name, eps))
    grid, cdf = ref_cdf_median_erm(x, *bounds, eps)
    assert ks_pvalue(w, grid, cdf) > 1e-3
    if power:
        grid, cdf = ref_cdf_median_erm(x, *bounds, eps * 1.2)
        assert ks_pvalue(w, grid, cdf) < 1e-6


QUANTILE_CASES = [
    ("normal_ties_outside", 0.5, (-3.0, 3.0), 1.0, True),
    ("normal_ties_outside", 0.1, (-3.0, 3.0), 0.5, True),
    ("normal_ties_outside", 0.0, (-3.0, 3.0), 2.0, True),
    ("normal_ties_outside", 1.0, (-3.0, 3.0), 2.0, True),
    ("normal_ties_outside", 0.5, (-3.0, 3.0), 1e-6, False),
    ("normal_ties_outside", 0.7, (-3.0, 3.0), 1e3, False),
    ("n1", 0.2, (0.0, 1.0), 3.0, True),  # (q = 0.5 would make both gaps equal: uniform)
    ("all_tied", 0.7, (0.0, 1.0), 0.05, True),  # only the first and last gaps have length
    ("all_tied", 0.7, (0.0, 1.0), 200.0, False),  # both weights underflow unnormalised
    ("multiblock", 0.3, (-10.0, 10.0), 0.01, True),
]


@pytest.mark.parametrize("name,q,bounds,eps,power", QUANTILE_CASES)
def test_quantile_rank_exact(name, q, bounds, eps, power):
    x = DATA[name]
    w = sample("quantile", x, bounds, eps, seed=seed_of("quantile", name, q, eps), q=q)
    grid, cdf = ref_cdf_quantile(x, q, *bounds, eps)
    assert ks_pvalue(w, grid, cdf) > 1e-3
    if power:
        grid, cdf = ref_cdf_quantile(x, q, *bounds, eps * 1.2)
        assert ks_pvalue(w, grid, cdf) < 1e-6


MEAN_CASES = [
    ("normal_ties_outside", (-3.0, 3.0), 1.0, True),
    ("normal_ties_outside", (-3.0, 3.0), 1e-4, False),  # sd >> b - a: nearly uniform
    ("normal_ties_outside", (-3.0, 3.0), 1e6, True),  # sd = 1e-4 (b - a): far tails cut off
    ("n1", (0.0, 1.0), 3.0, True),
    ("all_below", (0.0, 1.0), 0.5, True),  # mean at a: a half normal
    ("all_below", (0.0, 1.0), 1e5, True),
    ("all_tied", (0.0, 1.0), 30.0, True),
]


@pytest.mark.parametrize("name,bounds,eps,power", MEAN_CASES)
def test_mean_exact(name, bounds, eps, power):
    x = DATA[name]
    w = sample("mean", x, bounds, eps, seed=seed_of("mean", name, eps))
    grid, cdf = ref_cdf_mean(x, *bounds, eps)
    assert ks_pvalue(w, grid, cdf) > 1e-3
    if power:
        grid, cdf = ref_cdf_mean(x, *bounds, eps * 1.2)
        assert ks_pvalue(w, grid, cdf) < 1e-6


# Truncated normal on its own, in the regimes the ERM mean never reaches (the
# interval far in one tail): the reference is the conditional CDF in log
# space, (Q(lo) - Q(z)) / (Q(lo) - Q(hi)) with log Q from scipy's log_ndtr.
TRUNCNORM_CASES = [(-0.3, 0.2), (-0.5, 3.0), (0.5, 1.0), (0.7, np.inf), (5.0, 6.0), (30.0, 30.5),
                   (-1000.5, -1000.0), (1e6, np.inf), (8.0, 8.0001), (-np.inf, -40.0), (-np.inf, np.inf)]


def _truncnorm_cdf(z, lo, hi):
    if lo < 0 < hi:
        return stats.truncnorm(lo, hi).cdf(z)
    if hi <= 0:  # mirror
        return 1.0 - _truncnorm_cdf(-z, -hi, -lo)
    lq_lo, lq_hi = special.log_ndtr(-lo), special.log_ndtr(-hi)
    lq_z = special.log_ndtr(-np.clip(z, lo, hi))
    return -np.expm1(lq_z - lq_lo) / -np.expm1(lq_hi - lq_lo)


@pytest.mark.parametrize("lo,hi", TRUNCNORM_CASES)
def test_truncnorm_exact_far_tails(lo, hi):
    out = np.empty(N_DRAWS)
    _expmech.truncnorm_sample(np.random.default_rng(17).bit_generator, 0.0, 1.0, lo, hi, out)
    assert out.min() >= lo and out.max() <= hi
    assert stats.kstest(out, lambda z: _truncnorm_cdf(z, lo, hi)).pvalue > 1e-3


def test_truncnorm_location_scale():
    out = np.empty(N_DRAWS)
    _expmech.truncnorm_sample(np.random.default_rng(3).bit_generator, 1e6, 1e-3, 1e6 + 0.004, 1e6 + 0.0045, out)
    z = (out - 1e6) / 1e-3
    assert stats.kstest(z, lambda t: _truncnorm_cdf(t, 4.0, 4.5)).pvalue > 1e-3


# -------------------------------------------------------- API, seeds, dtypes


def test_public_functions_match_the_batch_stream():
    x = DATA["normal_ties_outside"]
    for fn, kind, kw in [
        (lambda **k: fe.median(x, (-3, 3), 1.0, **k), "median", {}),
        (lambda **k: fe.median(x, (-3, 3), 1.0, method="rank", **k), "median", {"method": "rank"}),
        (lambda **k: fe.quantile(x, 0.2, (-3, 3), 1.0, **k), "quantile", {"q": 0.2}),
        (lambda **k: fe.mean(x, (-3, 3), 1.0, **k), "mean", {}),
    ]:
        g = np.random.default_rng(11)
        seq = [fn(random_state=g) for _ in range(30)]
        assert all(isinstance(v, float) for v in seq)
        batch = univariate._sample(kind, x, (-3, 3), 1.0, random_state=11, size=30, **kw)
        np.testing.assert_array_equal(seq, batch)
        assert fn(random_state=5) == fn(random_state=5)
        assert fn(random_state=5) != fn(random_state=6)


def test_float32_and_presorted_input():
    x64 = np.random.default_rng(4).normal(size=5000).astype(np.float32).astype(np.float64)
    x32 = x64.astype(np.float32)
    xs = np.sort(x64)
    keep = x64.copy()
    for kind, kw in [("median", {}), ("median", {"method": "rank"}), ("quantile", {"q": 0.9}), ("mean", {})]:
        a = univariate._sample(kind, x64, (-4, 4), 0.5, random_state=8, size=50, **kw)
        b = univariate._sample(kind, x32, (-4, 4), 0.5, random_state=8, size=50, **kw)
        c = univariate._sample(kind, xs, (-4, 4), 0.5, random_state=8, size=50, **kw)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(x64, keep)  # the caller's data are not sorted in place
    ro = xs.copy()
    ro.setflags(write=False)  # read-only (and presorted) input goes to the kernel as is
    assert fe.median(ro, (-4, 4), 0.5, random_state=8) == univariate._sample("median", xs, (-4, 4), 0.5, random_state=8, size=1)[0]
    assert _expmech.is_sorted(xs) and not _expmech.is_sorted(x64)
    assert isinstance(fe.median(x32, (-4, 4), 1.0, random_state=0), float)
    assert isinstance(fe.median([1, 2, 3], (0, 4), 1.0, random_state=0), float)  # ints converted


def test_utility_sanity():
    # Large n, moderate eps: every method lands near the statistic it targets.
    x = np.random.default_rng(9).normal(2.0, 1.0, size=100_000)
    # Tolerances are about 5 standard deviations of each release: ERM median
    # sd ~ (2 (b - a) / (eps n f(med)))^(1/2) / 2 = 0.02, mean sd = 20 / sqrt(n).
    assert abs(fe.median(x, (-10, 10), 1.0, random_state=1) - np.median(x)) < 0.1
    assert abs(fe.median(x, (-10, 10), 1.0, method="rank", random_state=1) - np.median(x)) < 0.01
    assert abs(fe.quantile(x, 0.9, (-10, 10), 1.0, random_state=1) - np.quantile(x, 0.9)) < 0.01
    assert abs(fe.mean(x, (-10, 10), 1.0, random_state=1) - x.mean()) < 0.3


def test_extreme_epsilon_times_n_is_a_point_mass():
    x = np.array([0.1, 0.4, 0.7])
    assert fe.median(x, (0, 1), 1e300, random_state=0) == pytest.approx(0.4, abs=1e-12)
    assert fe.mean(x, (0, 1), 1e308, random_state=0) == pytest.approx(0.4, abs=1e-12)
    # rank: the single best gap (j = q n = 2) is [0.4, 0.7], uniform inside
    w = univariate._sample("quantile", x, (0, 1), 1e300, q=2 / 3, random_state=0, size=1000)
    assert w.min() >= 0.4 and w.max() <= 0.7 and w.std() > 0.05


GOOD = dict(x=[1.0, 2.0, 3.0], bounds=(0.0, 4.0), epsilon=1.0)


@pytest.mark.parametrize("fn", ["median", "mean", "quantile"])
@pytest.mark.parametrize(
    "kwargs,param,exc",
    [
        (dict(epsilon=0.0), "epsilon", ValueError),
        (dict(epsilon=-1.0), "epsilon", ValueError),
        (dict(epsilon=np.inf), "epsilon", ValueError),
        (dict(epsilon=np.nan), "epsilon", ValueError),
        (dict(epsilon=None), "epsilon", TypeError),
        (dict(bounds=(1.0, 1.0)), "bounds", ValueError),
        (dict(bounds=(2.0, 1.0)), "bounds", ValueError),
        (dict(bounds=(np.nan, 1.0)), "bounds", ValueError),
        (dict(bounds=(0.0, np.inf)), "bounds", ValueError),
        (dict(bounds=(-1e308, 1e308)), "bounds", ValueError),
        (dict(bounds=(0.0, 1.0, 2.0)), "bounds", ValueError),
        (dict(bounds=(0.0,)), "bounds", ValueError),
        (dict(bounds=1.0), "bounds", TypeError),
        (dict(bounds="ab"), "bounds", TypeError),
        (dict(bounds=("a", 1.0)), "bounds", TypeError),
        (dict(x=[]), "x", ValueError),
        (dict(x=[1.0, np.nan]), "x", ValueError),
        (dict(x=[1.0, np.inf]), "x", ValueError),
        (dict(x=[[1.0, 2.0]]), "x", ValueError),
        (dict(x=["a"]), "x", TypeError),
        (dict(random_state=-3), "random_state", ValueError),
        (dict(random_state="x"), "random_state", TypeError),
        (dict(random_state=np.random.RandomState(0)), "random_state", TypeError),
    ],
)
def test_errors_name_the_parameter(fn, kwargs, param, exc):
    args = dict(GOOD, **kwargs)
    if fn == "quantile":
        args["q"] = 0.5
    with pytest.raises(exc, match=param):
        getattr(fe, fn)(**args)


@pytest.mark.parametrize("q,exc", [(-0.1, ValueError), (1.5, ValueError), (np.nan, ValueError), ("a", TypeError)])
def test_quantile_q_errors(q, exc):
    with pytest.raises(exc, match="q"):
        fe.quantile([1.0, 2.0], q, (0, 3), 1.0)


@pytest.mark.parametrize("method,exc", [("mean", ValueError), ("ERM", ValueError), (None, TypeError), (1, TypeError)])
def test_median_method_errors(method, exc):
    with pytest.raises(exc, match="method"):
        fe.median([1.0, 2.0], (0, 3), 1.0, method=method)


def test_delta_is_not_a_parameter():
    # These are pure (eps, 0) mechanisms: a delta argument is refused, not ignored.
    with pytest.raises(TypeError, match="delta"):
        fe.median([1.0, 2.0], (0, 3), 1.0, delta=1e-6)
