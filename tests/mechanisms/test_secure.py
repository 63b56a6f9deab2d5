"""Secure mode: exact discrete samplers, the grid, its accounting and the public switches."""

import math
import threading
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import fasterm
from fasterm import accounting, losses, mechanisms, noise, secure
from fasterm.mechanisms import _exact
from fasterm.erm.constraints import L2Ball


# ---------------------------------------------------------------------------
# helpers: exact pmfs and a chi-square test
# ---------------------------------------------------------------------------
def dlap_pmf(scale, ks):
    q = math.exp(-1.0 / float(scale))
    return np.array([(1 - q) / (1 + q) * q ** abs(k) for k in ks])


def dgauss_pmf(sigma2, ks):
    s2 = float(sigma2)
    lim = int(40 * math.sqrt(s2)) + 40
    norm = math.fsum(math.exp(-k * k / (2 * s2)) for k in range(-lim, lim + 1))
    return np.array([math.exp(-k * k / (2 * s2)) / norm for k in ks])


def chi2_pvalue(samples, pmf_fn, min_expected=20.0):
    """Chi-square goodness of fit on the integers, cells with small expectation merged."""
    samples = np.asarray(samples)
    n = samples.size
    lo, hi = int(samples.min()) - 1, int(samples.max()) + 1
    ks = np.arange(lo, hi + 1)
    p = pmf_fn(ks)
    counts = np.array([np.count_nonzero(samples == k) for k in ks], dtype=float)
    # tails outside [lo, hi] have zero observed count; fold their mass into the ends
    p[0] += max(0.0, 1.0 - p.sum()) / 2
    p[-1] += max(0.0, 1.0 - p.sum())
    obs, exp, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(counts, p * n):
        acc_o += o
        acc_e += e
        if acc_e >= min_expected:
            obs.append(acc_o)
            exp.append(acc_e)
            acc_o = acc_e = 0.0
    obs[-1] += acc_o
    exp[-1] += acc_e
    obs, exp = np.array(obs), np.array(exp)
    exp *= obs.sum() / exp.sum()
    return stats.chisquare(obs, exp).pvalue


# ---------------------------------------------------------------------------
# Bernoulli(exp(-gamma))
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2),
                                   Fraction(22, 7), 0.375, 3])
def test_bernoulli_exp_exact(gamma):
    n = 1_000_000
    x = noise.bernoulli_exp(gamma, n, random_state=12345)
    p = math.exp(-float(gamma))
    z = (x.mean() - p) / math.sqrt(max(p * (1 - p), 1e-12) / n)
    assert abs(z) < 4.5
    if 0 < p < 1:  # power: a 5% error in the probability is detected
        wrong = p * 1.05 if p < 0.5 else 1 - (1 - p) * 1.05
        zw = (x.mean() - wrong) / math.sqrt(wrong * (1 - wrong) / n)
        assert abs(zw) > 4.5


@pytest.mark.parametrize("a,b", [(1, 3), (5, 2), (7, 1)])
def test_bernoulli_exp_scalar_reference(a, b):
    rng = np.random.default_rng(7)
    n = 20_000
    x = np.array([_exact.bernoulli_exp_scalar(a, b, rng) for _ in range(n)])
    p = math.exp(-a / b)
    assert abs(x.mean() - p) < 4.5 * math.sqrt(p * (1 - p) / n)


def test_bernoulli_exp_huge_denominator_uses_python_ints():
    g = Fraction(3, 1 << 70) + 2  # γ > 1 with a 70-bit denominator
    x = noise.bernoulli_exp(g, 20_000, random_state=3)
    p = math.exp(-float(g))
    assert abs(x.mean() - p) < 4.5 * math.sqrt(p * (1 - p) / 20_000)


# ---------------------------------------------------------------------------
# discrete Laplace / Gaussian vs exact pmf
# ---------------------------------------------------------------------------
def _laplace_draws(backend, n, scale, seed):
    """The compiled path (a Generator through the public API) or the numpy-vectorised twin."""
    if backend == "compiled":
        return noise.discrete_laplace(n, scale, random_state=seed)
    t = Fraction(scale)
    return _exact.discrete_laplace_vec(n, t.numerator, t.denominator, np.random.default_rng(seed))


def _gaussian_draws(backend, n, sigma2, seed):
    if backend == "compiled":
        return noise.discrete_gaussian(n, sigma2, random_state=seed)
    t = _exact.gaussian_t(sigma2, 1)
    return _exact.discrete_gaussian_vec(n, t, sigma2 // t, np.random.default_rng(seed))


@pytest.mark.parametrize("backend", ["compiled", "numpy"])
@pytest.mark.parametrize("scale", [1, 3, Fraction(7, 2), 0.75, 40.0])
def test_discrete_laplace_chisquare(backend, scale):
    z = _laplace_draws(backend, 200_000, scale, 2024)
    assert z.dtype == np.int64
    assert chi2_pvalue(z, lambda ks: dlap_pmf(scale, ks)) > 1e-3
    # power: the same draws are rejected against a 5% larger scale
    assert chi2_pvalue(z, lambda ks: dlap_pmf(float(scale) * 1.05, ks)) < 1e-6


@pytest.mark.parametrize("backend", ["compiled", "numpy"])
@pytest.mark.parametrize("sigma2", [6, 30, 600])
def test_discrete_gaussian_chisquare(backend, sigma2):
    # σ² a multiple of t = ⌊σ⌋ + 1 (6 = 3·2, 30 = 6·5, 600 = 25·24): the fast paths
    z = _gaussian_draws(backend, 200_000, sigma2, 99)
    assert chi2_pvalue(z, lambda ks: dgauss_pmf(sigma2, ks)) > 1e-3
    assert chi2_pvalue(z, lambda ks: dgauss_pmf(sigma2 * 1.05, ks)) < 1e-6


def test_compiled_and_numpy_twin_agree():
    # two-sample chi-square between the compiled sampler and its numpy twin
    a = _gaussian_draws("compiled", 100_000, 30, 1)
    b = _gaussian_draws("numpy", 100_000, 30, 2)
    ks = np.arange(-15, 16)
    ca = np.array([np.count_nonzero(np.clip(a, -15, 15) == k) for k in ks])
    cb = np.array([np.count_nonzero(np.clip(b, -15, 15) == k) for k in ks])
    assert stats.chi2_contingency(np.vstack([ca, cb]))[1] > 1e-3


def test_compiled_bernoulli_and_large_parameters():
    n = 400_000
    x = noise.bernoulli_exp(Fraction(7, 3), n, random_state=1)  # compiled path
    p = math.exp(-7 / 3)
    assert abs(x.mean() - p) < 4.5 * math.sqrt(p * (1 - p) / n)
    # 2^61 ≤ n < 2^62: compiled with 128-bit products; scale = n/s ≈ 2.5
    s = (1 << 61) // 5 * 2
    scale = Fraction((1 << 61) + 12345, s)
    z = noise.discrete_laplace(100_000, scale, random_state=4)
    assert chi2_pvalue(z, lambda ks: dlap_pmf(scale, ks)) > 1e-3
    # σ² = t·m with t·m ≈ 2^60: compiled; its variance is σ² to within sampling error
    t, m = (1 << 30) + 1, 1 << 30  # ⌊√(tm)⌋ + 1 = t, so σ² = t·m takes the compiled path
    assert _exact.gaussian_t(t * m, 1) == t
    g = noise.discrete_gaussian(50_000, t * m, random_state=2)
    assert abs(g.var() / (t * m) - 1) < 0.03
    assert abs(stats.kurtosis(g / math.sqrt(t * m))) < 0.1  # Gaussian, not Laplace (kurtosis 3)


@pytest.mark.parametrize("sigma2", [1, Fraction(5, 2), 0.7])
def test_discrete_gaussian_scalar_path_chisquare(sigma2):
    z = noise.discrete_gaussian(20_000, sigma2, random_state=5)
    assert chi2_pvalue(z, lambda ks: dgauss_pmf(sigma2, ks)) > 1e-3
    assert chi2_pvalue(z, lambda ks: dgauss_pmf(float(sigma2) * 1.25, ks)) < 1e-4


def test_scalar_laplace_reference_matches_pmf():
    rng = np.random.default_rng(11)
    z = np.array([_exact.discrete_laplace_scalar(7, 2, rng) for _ in range(30_000)])
    assert chi2_pvalue(z, lambda ks: dlap_pmf(Fraction(7, 2), ks)) > 1e-3


def test_laplace_beyond_int64_bounds_python_path():
    scale = Fraction((1 << 52) + 1, 1 << 50)  # n ≥ 2^50: the Python-int path, scale ≈ 4
    z = noise.discrete_laplace(20_000, scale, random_state=8)
    assert chi2_pvalue(z, lambda ks: dlap_pmf(scale, ks)) > 1e-3


def test_os_random_uniform_and_sampler():
    rng = noise.OSRandom()
    u = rng.integers(0, np.full(60_000, 6))
    counts = np.bincount(u, minlength=6)
    assert counts.size == 6 and stats.chisquare(counts).pvalue > 1e-5
    big = rng.integers(0, np.array([1 << 40, 1 << 61]))
    assert 0 <= big[0] < 1 << 40 and 0 <= big[1] < 1 << 61
    z = noise.discrete_laplace(50_000, 2, random_state="os")
    assert chi2_pvalue(z, lambda ks: dlap_pmf(2, ks)) > 1e-5
    assert _exact.below_int(rng, 1 << 100) < 1 << 100


def test_reproducible_from_seed():
    a = noise.discrete_gaussian(1000, 30, random_state=4)
    b = noise.discrete_gaussian(1000, 30, random_state=4)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, noise.discrete_gaussian(1000, 30, random_state=5))
    x = mechanisms.laplace(np.arange(5.0), 1.0, 1.0, random_state=3, secure=True)
    assert np.array_equal(x, mechanisms.laplace(np.arange(5.0), 1.0, 1.0, random_state=3, secure=True))


# ---------------------------------------------------------------------------
# The grid (Mironov's attack)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("mech", ["laplace", "laplace_l2", "gaussian"])
def test_outputs_on_the_same_grid_for_neighbours(mech):
    gamma = 2.0 ** -4
    x0, x1 = 0.1, 0.1 + 0.3  # neighbouring values: |x0 − x1| ≤ Δ = 0.5, neither on the grid
    args = {"laplace": (0.5, 1.0), "laplace_l2": (0.5, 1.0, 0.0), "gaussian": (0.5, 1.0, 1e-5)}[mech]
    f = getattr(mechanisms, mech)
    for x in (x0, x1):  # the public API, a vector release: all on γℤ
        out = f(np.full(50, x), *args, random_state=1, granularity=gamma, secure=True)
        assert out.dtype == np.float64 and np.array_equal(out / gamma, np.round(out / gamma))
    # 20 000 independent scalar releases of each input (the scalar mechanism's
    # calibration applied coordinate-wise, which is what 20 000 calls would do)
    cal = {"laplace": lambda: secure.laplace_calibration(0.5, 1.0, 1, gamma),
           "laplace_l2": lambda: secure.laplace_l2_calibration(0.5, 1.0, 0.0, 1, 1, gamma),
           "gaussian": lambda: secure.gaussian_calibration(0.5, 1.0, 1e-5, 1, 1, gamma)}[mech]()
    rng = np.random.default_rng(5)
    out0 = secure.release(np.full(20_000, x0), gamma, cal.params, rng)
    out1 = secure.release(np.full(20_000, x1), gamma, cal.params, rng)
    for out in (out0, out1):
        k = out / gamma
        assert np.array_equal(k, np.round(k))  # every output is an integer multiple of γ
    # Same lattice: the outputs seen from one input are reachable from the other —
    # the common support carries most of the mass of both, and every grid point
    # between the two medians was seen from both inputs.
    common = np.intersect1d(out0, out1)
    assert np.isin(out0, common).mean() > 0.9 and np.isin(out1, common).mean() > 0.9
    between = np.arange(np.round(np.median(out0) / gamma), np.round(np.median(out1) / gamma) + 1) * gamma
    assert between.size >= 3 and np.isin(between, common).all()


def test_fast_path_fails_the_grid_test():
    # power of the lattice test: the float path's outputs are not on any such grid
    out = mechanisms.laplace(np.full(1000, 0.1), 0.5, 1.0, random_state=1, secure=False)
    k = out / 2.0 ** -4
    assert not np.array_equal(k, np.round(k))


def test_float32_and_scalar_and_clamp():
    out = mechanisms.gaussian(np.ones(3, dtype=np.float32), 1.0, 1.0, 1e-5, random_state=0, secure=True)
    assert out.dtype == np.float64
    v = mechanisms.laplace(0.3, 1.0, 1.0, random_state=0, secure=True)
    assert isinstance(v, float)
    g = secure.default_granularity(1.0, 1, "l1")
    assert v / g == round(v / g)
    big = mechanisms.laplace(np.array([1e300, -1e300]), 1.0, 1.0, random_state=0, secure=True)
    assert np.all(np.isfinite(big)) and abs(big[0]) <= 2.0 ** 53 * g
    assert big[0] > 0 > big[1]


# ---------------------------------------------------------------------------
# Calibration round trips
# ---------------------------------------------------------------------------
def test_default_granularity_and_grid_sensitivity():
    g = secure.default_granularity(3.0, 4, "l1")
    assert g == 2.0 ** math.floor(math.log2(3.0 / 4 / 1024))
    assert secure.l1_grid_sensitivity(3.0, g, 4) == math.floor(3.0 / g) + 4
    g2 = secure.default_granularity(1.0, 9, "l2")
    assert g2 <= 1.0 / 3 / 1024 < 2 * g2
    sq = secure.l2_grid_sensitivity_sq(1.0, g2, 9)
    assert (1.0 / g2 + 3) ** 2 - 1 < sq <= (1.0 / g2 + 3) ** 2 + 1e-6
    # brute force: rounding two vectors at L2 distance ≤ Δ gives an integer vector within the bound
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = rng.normal(size=9)
        u = rng.normal(size=9)
        b = a + u / np.linalg.norm(u) * 1.0 * rng.uniform()
        v = np.rint(a / g2) - np.rint(b / g2)
        assert v @ v <= sq
        assert np.abs(v).sum() <= secure.l1_grid_sensitivity(np.abs(a - b).sum(), g2, 9)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.7])
def test_laplace_calibration_round_trip(eps):
    cal = secure.laplace_calibration(2.0, eps, 5)
    t = cal.params.scale
    assert t >= Fraction(int(cal.grid_sensitivity)) / Fraction(eps)
    assert cal.epsilon <= eps and cal.epsilon >= eps * (1 - 1e-9)
    assert cal.epsilon == float(Fraction(int(cal.grid_sensitivity)) / t)


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (1.0, 1e-5), (4.0, 1e-3)])
def test_zcdp_conversion(eps, delta):
    rho = accounting.zcdp_rho(eps, delta)
    assert accounting.zcdp_delta(rho, eps) <= delta
    assert accounting.zcdp_delta(rho * 1.001, eps) > delta * 0.999
    mu = math.sqrt(2 * rho)  # the continuous Gaussian with ρ = μ²/2 has the exact curve δ_GDP
    assert accounting.gaussian_delta(mu, eps) <= accounting.zcdp_delta(rho, eps)
    assert accounting.zcdp_delta(rho, eps) <= math.exp(-((eps - rho) ** 2) / (4 * rho))


@pytest.mark.parametrize("steps", [1, 50])
def test_gaussian_calibration_round_trip(steps):
    eps, delta = 1.0, 1e-5
    cal = secure.gaussian_calibration(0.01, eps, delta, 10, steps)
    sq = secure.l2_grid_sensitivity_sq(0.01, cal.granularity, 10)
    rho = steps * sq / (2 * cal.params.sigma2)
    d = accounting.zcdp_delta(rho, eps)
    assert cal.delta <= delta and d <= delta * (1 + 1e-9)
    assert d > 0.9 * delta  # σ² rounded up to t·m costs little
    assert cal.epsilon == eps


def test_secure_sigma_close_to_float_sigma():
    # the zCDP route costs a bounded factor in σ relative to the exact GDP calibration
    cal = secure.gaussian_calibration(1.0, 1.0, 1e-5, 1)
    sigma_float = accounting.calibrate_gaussian(1.0, 1, 1.0, 1e-5)
    assert 1.0 < cal.noise_scale / sigma_float < 1.3


# ---------------------------------------------------------------------------
# Parameters and switches
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("bad,exc", [(0.3, ValueError), (0.0, ValueError), (-0.5, ValueError),
                                     (math.inf, ValueError), (math.nan, ValueError), (3, ValueError),
                                     (True, TypeError), ("1", TypeError), (2.0 ** -1100, ValueError)])
def test_bad_granularity(bad, exc):
    with pytest.raises(exc, match="granularity"):
        mechanisms.laplace(1.0, 1.0, 1.0, secure=True, granularity=bad)


def test_bad_params_named():
    with pytest.raises(ValueError, match="epsilon"):
        mechanisms.gaussian(1.0, 1.0, 0.0, 1e-5, secure=True)
    with pytest.raises(ValueError, match="delta"):
        mechanisms.gaussian(1.0, 1.0, 1.0, 0.0, secure=True)
    with pytest.raises(ValueError, match="random_state"):
        mechanisms.laplace(1.0, 1.0, 1.0, secure=True, random_state="urandom")
    with pytest.raises(TypeError, match="secure"):
        mechanisms.laplace(1.0, 1.0, 1.0, secure="yes")
    with pytest.raises(ValueError, match="scale"):
        noise.discrete_laplace(3, -1.0)
    with pytest.raises(ValueError, match="sigma2"):
        noise.discrete_gaussian(3, math.nan)
    with pytest.raises(ValueError, match="size"):
        noise.discrete_laplace(-1, 1.0)
    with pytest.raises(TypeError, match="flag"):
        fasterm.set_secure(1)
    with pytest.raises(ValueError, match="gamma"):
        noise.bernoulli_exp(-0.5, 3)
    with pytest.raises(TypeError, match="scale"):
        noise.discrete_laplace(3, "2")
    with pytest.raises(ValueError, match="sigma2"):
        noise.discrete_gaussian(3, 0)
    X, y = np.ones((10, 2)), np.ones(10)
    with pytest.raises(ValueError, match="granularity"):
        fasterm.noisy_pgd(losses.Logistic(), X, y, L2Ball(1.0, 2), 1.0, data_norm=1.0, granularity=2.0 ** -8)


def test_secure_mode_switches():
    on_grid = lambda v: v / 2.0 ** -6 == round(v / 2.0 ** -6)  # noqa: E731
    call = lambda: mechanisms.laplace(0.1, 1.0, 1.0, random_state=0, granularity=2.0 ** -6)  # noqa: E731
    with pytest.raises(ValueError, match="granularity"):
        call()  # insecure by default: a granularity is refused ...
    with fasterm.secure_mode():
        assert secure.is_secure() and on_grid(call())
        seen = []
        t = threading.Thread(target=lambda: seen.append(secure.is_secure()))
        t.start()
        t.join()
        assert seen == [False]  # the context manager is per thread
        with fasterm.secure_mode(False):
            assert not secure.is_secure()
    assert not secure.is_secure()
    fasterm.set_secure(True)
    try:
        assert on_grid(call())
        seen = []
        t = threading.Thread(target=lambda: seen.append(secure.is_secure()))
        t.start()
        t.join()
        assert seen == [True]  # set_secure is process-wide
    finally:
        fasterm.set_secure(False)
    assert not secure.is_secure()


# ---------------------------------------------------------------------------
# noisy PGD and the estimators
# ---------------------------------------------------------------------------
def _logistic_problem(n=3000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    w = np.linspace(-2, 2, d)
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("noise_kind,calibration,delta", [("gaussian", "l2", 1e-5), ("laplace", "pure", 0.0),
                                                          ("laplace", "l2", 1e-5),
                                                          ("laplace", "coordinate", 1e-5)])
def test_noisy_pgd_secure_accounting(noise_kind, calibration, delta):
    X, y = _logistic_problem()
    eps, T = 1.0, 30
    res = fasterm.noisy_pgd(losses.Logistic(), X, y, L2Ball(5.0, 5), eps, delta=delta, steps=T,
                            noise=noise_kind, calibration=calibration, data_norm=1.0,
                            random_state=0, secure=True)
    cal = res.info["secure"]
    g = cal.granularity
    sens = 2.0 * 1.0 / X.shape[0]  # Δ₂ = 2G/n, G = data_norm for the logistic loss
    sq = secure.l2_grid_sensitivity_sq(sens, g, 5)
    assert sq >= (sens / g) ** 2
    if noise_kind == "gaussian":
        rho = T * sq / (2 * cal.params.sigma2)
        assert accounting.zcdp_delta(rho, eps) <= delta and res.delta <= delta
        assert res.epsilon == eps
        assert accounting.zcdp_delta(rho, eps) > 0.9 * delta
    else:
        b = float(cal.params.scale)
        if calibration == "pure":
            spent = T * math.sqrt(5) * math.sqrt(sq) / b
            assert res.delta == 0.0
        elif calibration == "coordinate":  # T·d coordinate releases, each (Δ₂,grid/b)-DP
            spent = accounting.advanced_composition(math.sqrt(sq) / b, 0.0, T * 5, delta)[0]
        else:
            spent = accounting.laplace_l2_epsilon(b, math.sqrt(sq), 5, T, delta)
        assert spent <= eps * (1 + 1e-12) and spent >= eps * (1 - 1e-6)
        assert res.epsilon <= eps
    assert res.noise_scale == pytest.approx(g * (math.sqrt(cal.params.sigma2) if noise_kind == "gaussian"
                                                 else float(cal.params.scale)))


def test_noisy_pgd_secure_utility_close_to_float():
    X, y = _logistic_problem(n=4000, d=5, seed=3)
    loss, ball = losses.Logistic(), L2Ball(5.0, 5)
    best = fasterm.pgd(loss, X, y, ball, steps=400)
    opt = float(loss.value(best.w, X, y))
    ex_s, ex_f = [], []
    for seed in range(4):
        kw = dict(delta=1e-5, steps=40, noise="gaussian", data_norm=1.0, random_state=seed)
        rs = fasterm.noisy_pgd(loss, X, y, ball, 1.0, secure=True, **kw)
        rf = fasterm.noisy_pgd(loss, X, y, ball, 1.0, secure=False, **kw)
        ex_s.append(float(loss.value(rs.w, X, y)) - opt)
        ex_f.append(float(loss.value(rf.w, X, y)) - opt)
        assert rs.utility_bound >= rf.utility_bound  # more noise and the rounding bias
    assert np.mean(ex_s) <= 2.0 * np.mean(ex_f) + 0.01
    assert np.mean(ex_s) < 0.1


def test_noisy_pgd_secure_reproducible_and_os():
    X, y = _logistic_problem(n=500)
    kw = dict(delta=1e-5, steps=10, noise="gaussian", data_norm=1.0, secure=True)
    a = fasterm.noisy_pgd(losses.Logistic(), X, y, L2Ball(5.0, 5), 1.0, random_state=7, **kw).w
    b = fasterm.noisy_pgd(losses.Logistic(), X, y, L2Ball(5.0, 5), 1.0, random_state=7, **kw).w
    assert np.array_equal(a, b)
    c = fasterm.noisy_pgd(losses.Logistic(), X, y, L2Ball(5.0, 5), 1.0, random_state="os", **kw)
    assert np.all(np.isfinite(c.w))


def test_estimator_secure():
    pytest.importorskip("sklearn")
    X, y = _logistic_problem(n=2000, seed=1)
    clf = fasterm.DPLogisticRegression(epsilon=1.0, secure=True, random_state=0).fit(X, y)
    assert clf.epsilon_ <= 1.0 and clf.delta_ <= 1e-5
    assert clf.result_.info["secure"] is not None
    assert clf.score(X, y) > 0.6
    with pytest.raises(ValueError, match="secure"):
        fasterm.DPLogisticRegression(solver="expmech", secure=True).fit(X, y)
    with fasterm.secure_mode():
        reg = fasterm.DPLinearRegression(random_state=0).fit(X, X[:, 0])
    assert reg.result_.info["secure"] is not None
    svc = fasterm.DPLinearSVC(secure=True, random_state="os").fit(X, y)
    assert svc.result_.info["secure"] is not None and svc.score(X, y) > 0.6
    plain = fasterm.DPLogisticRegression(random_state=0).fit(X, y)
    assert plain.result_.info["secure"] is None


def test_compiled_samplers_thread_consistent():
    # the compiled samplers release the GIL under each Generator's lock: threads
    # with their own Generators reproduce the sequential results
    def draw(seed):
        return np.concatenate([noise.discrete_laplace(20_000, 7, random_state=seed),
                               noise.discrete_gaussian(20_000, 30, random_state=seed + 100)])

    expected = [draw(s) for s in range(4)]
    got = [None] * 4

    def work(i):
        got[i] = draw(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(a, b) for a, b in zip(expected, got))


def test_zcdp_delta_never_reports_pure_dp_for_positive_rho():
    # exp(log δ) underflows below ~1e-308: the reported δ must stay > 0 (a discrete
    # Gaussian is never (ε, 0)-DP), and a huge ε must not turn into δ = 0.
    for rho, eps in [(0.5, 1e3), (1e-3, 50.0), (1e-6, 1e6)]:
        assert accounting.zcdp_delta(rho, eps) > 0.0
    cal = secure.gaussian_calibration(1.0, 100.0, 1e-5, 1, 1, 2.0**10)
    assert cal.delta > 0.0


def test_secure_noisy_pgd_sums_in_float64_for_float32_data():
    # The released gradient sum is computed in float64 whatever X's dtype, so float32 X
    # gives the float64 run on the same values (rounded to float32 at the end).
    rng = np.random.default_rng(4)
    X = (rng.normal(size=(300, 4)) * 0.5).astype(np.float32)
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0).astype(np.float32)
    kw = dict(epsilon=1.0, delta=1e-6, noise="gaussian", data_norm=1.0, steps=15, secure=True,
              random_state=3)
    C = L2Ball(2.0, 4)
    r32 = fasterm.noisy_pgd(losses.Logistic(), X, y, C, **kw)
    r64 = fasterm.noisy_pgd(losses.Logistic(), X.astype(np.float64), y.astype(np.float64), C, **kw)
    assert r32.w.dtype == np.float32
    np.testing.assert_array_equal(r32.w, r64.w.astype(np.float32))
    assert (r32.epsilon, r32.delta, r32.noise_scale) == (r64.epsilon, r64.delta, r64.noise_scale)
