"""Private regression: the default rule from n = 5,000, AdaSSP (fasterm.erm.ssp), the boundary DataWarning.

References here are written from the theorems (mpmath, plain Python loops) and
never call the code they check:

* AdaSSP (Wang 2018, Alg. 2) re-implemented with explicit loops from the same
  noise draws (same seed, same order) — θ must agree to rounding;
* its calibration: the three releases are μ/√3-GDP each, μ-GDP together
  (Dong, Roth & Su 2022, Cor. 3.3), and μ-GDP is (ε, δ)-DP iff
  Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) ≤ δ (Cor. 2.13), evaluated in mpmath;
  δ = 0: three Laplace mechanisms with their L1 sensitivities, basic composition;
* the sensitivity bounds of fasterm.erm.ssp checked on random and extreme pairs of records;
* the regression rule's T, R and noise scale against the formulas of docs/solvers.rst.
"""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
import scipy.sparse as sp

import fasterm as fe
from fasterm import ssp


# ---------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------
def _gdp_delta(mu, eps):
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.e ** eps * mp.ncdf(-eps / mu - mu / 2)


def ref_mu(eps, delta):
    """The largest μ with δ(ε; μ) ≤ δ, by bisection in 40 digits."""
    with mp.workdps(40):
        lo, hi = mp.mpf("1e-6"), mp.mpf(50)
        for _ in range(200):
            mid = (lo + hi) / 2
            if _gdp_delta(mid, eps) <= delta:
                lo = mid
            else:
                hi = mid
        return float(lo)


def ref_adassp(X, y, eps, delta, Xb, Yb, seed, weights=None, B=1.0, rho=0.05):
    """Wang's Algorithm 2 with replace-one sensitivities, loop by loop (module docstring of fasterm.erm.ssp)."""
    rng = np.random.default_rng(seed)
    n, p = X.shape
    rows, labels = [], []
    for i in range(n):
        a = [float(v) for v in X[i]]
        norm = math.sqrt(sum(v * v for v in a))
        f = min(1.0, Xb / norm) if norm > 0 else 1.0
        rows.append([v * f for v in a])
        labels.append(min(max(float(y[i]), -Yb), Yb))
    wts = [1.0] * n if weights is None else [min(max(float(w), 0.0), B) for w in weights]
    G = [[math.fsum(wts[i] * rows[i][j] * rows[i][k] for i in range(n)) for k in range(p)] for j in range(p)]
    b = [math.fsum(wts[i] * labels[i] * rows[i][j] for i in range(n)) for j in range(p)]
    lam_min = float(np.linalg.eigvalsh(np.array(G))[0])
    k = p * (p + 1) // 2
    if delta > 0:
        sigma = math.sqrt(3.0) / ref_mu(eps, delta)
        s1, s2, s3 = sigma * B * Xb ** 2, sigma * math.sqrt(2) * B * Xb ** 2, sigma * 2 * B * Xb * Yb
        shift = s1 * math.sqrt(math.log(6.0 / delta))
        sd = s2
        z1, zG, zb = rng.standard_normal(), rng.standard_normal(k), rng.standard_normal(p)
    else:
        s1 = B * Xb ** 2 / (eps / 3)
        s2 = B * (p + 1) * Xb ** 2 / (eps / 3)
        s3 = 2 * B * math.sqrt(p) * Xb * Yb / (eps / 3)
        shift = s1 * math.log(1.0 / rho)
        sd = math.sqrt(2) * s2
        z1, zG, zb = rng.laplace(), rng.laplace(size=k), rng.laplace(size=p)
    E = [[0.0] * p for _ in range(p)]
    idx = 0
    for i in range(p):
        for j in range(i, p):
            E[i][j] = E[j][i] = float(zG[idx])
            idx += 1
    lam_tilde = max(0.0, lam_min + s1 * z1 - shift)
    lam = max(0.0, sd * math.sqrt(p * math.log(2 * p * p / rho)) - lam_tilde)
    M = np.array([[G[i][j] + s2 * E[i][j] + (lam if i == j else 0.0) for j in range(p)] for i in range(p)])
    bh = np.array([b[j] + s3 * zb[j] for j in range(p)])
    return np.linalg.solve(M, bh), (s1, s2, s3)


def _data(n=80, p=4, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * scale
    y = X @ rng.normal(size=p) * 0.3 + 0.1 * rng.normal(size=n)
    return X, y


# ---------------------------------------------------------------------------
# AdaSSP against the loop reference
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("delta", [1e-5, 1e-3, 0.0])
@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_adassp_matches_loop_reference(eps, delta):
    X, y = _data(60, 4, seed=1, scale=0.8)  # some rows beyond the bound: clipped
    for seed in range(3):
        res = ssp.adassp(X, y, eps, delta, data_norm=1.5, label_bound=0.7, random_state=seed)
        theta, scales = ref_adassp(X, y, eps, delta, 1.5, 0.7, seed)
        np.testing.assert_allclose(res.w, theta, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose([res.info["s1"], res.info["s2"], res.info["s3"]], scales, rtol=1e-9)


def test_adassp_weights_match_reference_and_ones_match_unweighted():
    X, y = _data(50, 3, seed=2, scale=0.5)
    w = np.random.default_rng(3).uniform(-0.5, 2.5, 50)  # mapped into [0, 2]
    res = ssp.adassp(X, y, 1.0, 1e-5, sample_weight=w, weight_bound=2.0, random_state=4)
    theta, _ = ref_adassp(X, y, 1.0, 1e-5, 1.0, 1.0, 4, weights=w, B=2.0)
    np.testing.assert_allclose(res.w, theta, rtol=1e-7, atol=1e-9)
    a = ssp.adassp(X, y, 1.0, 1e-5, sample_weight=np.ones(50), random_state=5)
    b = ssp.adassp(X, y, 1.0, 1e-5, random_state=5)
    np.testing.assert_allclose(a.w, b.w, rtol=1e-12, atol=1e-14)


def test_adassp_sparse_float32_and_estimator_agree():
    X, y = _data(200, 5, seed=6, scale=0.3)
    X[X < 0] = 0.0
    dense = fe.DPLinearRegression(solver="adassp", random_state=7).fit(X, y)
    csr = fe.DPLinearRegression(solver="adassp", random_state=7).fit(sp.csr_matrix(X), y)
    f32 = fe.DPLinearRegression(solver="adassp", random_state=7).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
    assert f32.coef_.dtype == np.float32 and dense.coef_.dtype == np.float64
    np.testing.assert_allclose(f32.coef_, dense.coef_, rtol=1e-3, atol=1e-4)
    # the estimator is adassp on the design rows (x clipped to data_norm, s), s = 0.25, bound √(1 + s²)
    norms = np.linalg.norm(X, axis=1)
    A = np.c_[X * np.minimum(1.0, 1.0 / np.maximum(norms, 1e-300))[:, None], np.full(200, 0.25)]  # x clipped to 1, then s
    theta, _ = ref_adassp(A, y, 1.0, 1e-5, math.hypot(1.0, 0.25), 1.0, 7)
    np.testing.assert_allclose(dense.coef_, theta[:5], rtol=1e-7, atol=1e-9)
    assert dense.intercept_ == pytest.approx(theta[5] * 0.25, rel=1e-7, abs=1e-9)
    assert dense.n_iter_ == 3 and dense.epsilon_ <= 1.0 and dense.delta_ == 1e-5


# ---------------------------------------------------------------------------
# calibration and sensitivities
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (1.0, 1e-5), (3.0, 1e-8), (10.0, 1e-3)])
def test_adassp_gaussian_calibration_is_the_gdp_composition(eps, delta):
    cal = ssp.adassp_scales(eps, delta, 7, 1.3, 0.9, weight_bound=1.5)
    sigma = cal["unit_scale"]
    with mp.workdps(40):
        mu = mp.sqrt(3) / mp.mpf(sigma)          # three releases of sensitivity 1, noise σ each
        assert _gdp_delta(mu, eps) <= delta * (1 + 1e-12)
        assert _gdp_delta(mu * (1 + 1e-6), eps) > delta  # tight: less noise breaks δ
    assert cal["sensitivities"] == pytest.approx((1.5 * 1.3 ** 2, math.sqrt(2) * 1.5 * 1.3 ** 2,
                                                  2 * 1.5 * 1.3 * 0.9), rel=1e-15)
    assert cal["s2"] == pytest.approx(sigma * cal["sensitivities"][1], rel=1e-15)
    assert cal["epsilon"] <= eps and cal["delta"] == delta


@pytest.mark.parametrize("eps", [0.3, 1.0, 5.0])
def test_adassp_laplace_calibration_is_basic_composition(eps):
    p, X, Y, B = 6, 1.2, 0.8, 2.0
    cal = ssp.adassp_scales(eps, 0.0, p, X, Y, weight_bound=B)
    l1 = (B * X * X, B * (p + 1) * X * X, 2 * B * math.sqrt(p) * X * Y)
    with mp.workdps(40):
        spent = sum(mp.mpf(s) / mp.mpf(b) for s, b in zip(l1, (cal["s1"], cal["s2"], cal["s3"])))
        assert spent <= eps * (1 + 1e-14) and spent >= eps * (1 - 1e-12)
    assert cal["noise"] == "laplace" and cal["delta"] == 0.0


def _ut(M):
    return M[np.triu_indices(M.shape[0])]


def test_adassp_sensitivity_bounds_hold_on_pairs_of_records():
    rng = np.random.default_rng(8)
    p, X, Y, B = 5, 1.7, 0.6, 1.3
    l2 = ssp.adassp_scales(1.0, 1e-5, p, X, Y, weight_bound=B)["sensitivities"]
    l1 = ssp.adassp_scales(1.0, 0.0, p, X, Y, weight_bound=B)["sensitivities"]
    base = rng.normal(size=(30, p))
    G0 = base.T @ base
    extremes = [(X * np.eye(p)[0], X * np.eye(p)[1], B, B, Y, -Y),            # the L2 bound is tight here
                (X * np.ones(p) / math.sqrt(p), -X * np.ones(p) / math.sqrt(p), B, B, Y, -Y)]
    pairs = []
    for _ in range(300):
        a, c = rng.normal(size=p), rng.normal(size=p)
        a *= X * rng.uniform() ** 0.2 / np.linalg.norm(a)
        c *= X * rng.uniform() ** 0.2 / np.linalg.norm(c)
        pairs.append((a, c, rng.uniform(0, B), rng.uniform(0, B), rng.uniform(-Y, Y), rng.uniform(-Y, Y)))
    worst = np.zeros(5)
    for a, c, w, v, ya, yc in extremes + pairs:
        D = w * np.outer(a, a) - v * np.outer(c, c)
        g = w * ya * a - v * yc * c
        lam = abs(np.linalg.eigvalsh(G0 + D)[0] - np.linalg.eigvalsh(G0)[0])
        worst = np.maximum(worst, [lam, np.linalg.norm(_ut(D)), np.abs(_ut(D)).sum(), np.linalg.norm(g),
                                   np.abs(g).sum()])
    tol = 1 + 1e-12
    assert worst[0] <= l2[0] * tol and worst[1] <= l2[1] * tol and worst[3] <= l2[2] * tol
    assert worst[2] <= l1[1] * tol and worst[4] <= l1[2] * tol
    assert worst[1] >= l2[1] * (1 - 1e-12)  # e1 against e2 attains √2·B·X²


def test_adassp_zero_data_releases_only_noise():
    # X = 0, y = 0, no intercept: G = 0 and b = 0, so θ = (s₂Z + λI)⁻¹ s₃z is the noise alone,
    # with λ = ridge_scale − max(0, s₁z₁ − t): the same draws give the same θ, whatever n
    n, p = 500, 3
    X, y = np.zeros((n, p)), np.zeros(n)
    for seed in range(5):
        res = ssp.adassp(X, y, 1.0, 1e-5, random_state=seed)
        theta, (s1, s2, s3) = ref_adassp(X[:2], y[:2], 1.0, 1e-5, 1.0, 1.0, seed)
        np.testing.assert_allclose(res.w, theta, rtol=1e-9)
    # and the noise is there: the outputs of different seeds differ, at the scale s₃/ridge
    outs = np.array([ssp.adassp(X, y, 1.0, 1e-5, random_state=s).w for s in range(200)])
    assert np.all(np.std(outs, axis=0) > 0.05 * res.info["s3"] / res.info["ridge_scale"])


# ---------------------------------------------------------------------------
# the default rule from n = 5,000 (noisy_gd, T and R growing with n)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("n,p,eps", [(5000, 3, 1.0), (20000, 13, 1.0), (60000, 30, 0.5), (5000, 200, 3.0)])
def test_regression_rule_constants(n, p, eps):
    steps, radius = fe.linear_model._rules.regression_gd_rule(n, p, eps, 1e-5)
    assert steps == min(1000, max(200, -(-n // 50)))
    assert radius == pytest.approx(min(100.0, max(5.0, n * ref_mu(eps, 1e-5) / (10 * p))), rel=1e-9)


def test_default_regression_from_5000_rows_is_the_rule_with_the_calibrated_noise():
    rng = np.random.default_rng(9)
    n, d = 6000, 4
    X = rng.uniform(0, 1, (n, d)) / 2
    y = np.clip(X @ [1.0, -0.5, 0.3, 0.0], -1, 1)
    m = fe.DPLinearRegression(random_state=0).fit(X, y)
    steps, radius = fe.linear_model._rules.regression_gd_rule(n, d + 1, 1.0, 1e-5)
    assert m.n_iter_ == steps and m.result_.info["solver"] == "gd"
    assert m.result_.info["radius"] == radius
    c = math.hypot(1.0, 0.25) / 2  # clip "auto": Y·X_aug/2
    assert m.result_.noise_scale == pytest.approx(math.sqrt(steps) * 2 * c / n / ref_mu(1.0, 1e-5), rel=1e-9)
    m32 = fe.DPLinearRegression(random_state=0).fit(X.astype(np.float32), y)
    assert m32.coef_.dtype == np.float32 and m32.n_iter_ == steps and m32.result_.info["radius"] == radius
    assert m32.result_.noise_scale >= m.result_.noise_scale  # float32 rounds the scale up, never down
    assert m32.score(X, y) > 0.9 and m.score(X, y) > 0.9  # (float32 draws other noise: no closeness)
    # below 5,000 rows, and with Laplace noise, the previous rule (radius 5)
    small = fe.DPLinearRegression(random_state=0).fit(X[:4999], y[:4999])
    assert small.result_.info["radius"] == 5.0 and small.n_iter_ <= 40
    lap = fe.DPLinearRegression(random_state=0, noise="laplace").fit(X, y)
    assert lap.result_.info["radius"] == 5.0 and lap.n_iter_ <= 40


def test_default_regression_zero_data_noise_scale():
    # zero data, no intercept, one step from w₀ = 0: w₁ = −η·h, h ~ N(0, σ²I)
    n, d, fits = 5000, 200, 40
    X, y = np.zeros((n, d)), np.zeros(n)
    model = fe.DPLinearRegression(fit_intercept=False, steps=1)
    h = []
    for seed in range(fits):
        m = model.set_params(random_state=seed).fit(X, y)
        assert m.result_.info["solver"] == "gd" and np.linalg.norm(m.coef_) < m.result_.info["radius"] * 0.5
        h.append(m.coef_ / m.result_.lr)
    sigma = np.sqrt(np.mean(np.square(h)))
    ref = (2 * 0.5 / n) / ref_mu(1.0, 1e-5)  # T = 1, Δ₂ = 2c/n, c = Y·X/2 = 0.5
    assert m.result_.noise_scale == pytest.approx(ref, rel=1e-9)
    assert sigma == pytest.approx(ref, rel=0.03)


def _one_hot_problem(n, seed):
    """Ill-conditioned: two numeric columns of small spread (large coefficients), full one-hot
    groups (collinear with the intercept), rows /√d, y in [−1, 1]; least-squares norm ≈ 22."""
    rng = np.random.default_rng(seed)
    cols = [np.clip(rng.normal(0.5, 0.06, (n, 2)), 0, 1)]
    effects = [np.array([5.0, -4.0])]
    for k in (4, 6, 3):
        idx = rng.choice(k, size=n, p=np.r_[0.7, np.full(k - 1, 0.3 / (k - 1))])
        cols.append(np.eye(k)[idx])
        effects.append(rng.uniform(-0.4, 0.4, k))
    Z = np.hstack(cols)
    y = np.clip(Z @ np.concatenate(effects) - 0.5 + 0.1 * rng.normal(size=n), -1, 1)
    return Z / math.sqrt(Z.shape[1]), y


def _r2(y, p):
    return 1 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2)


def test_default_reaches_least_squares_on_ill_conditioned_one_hot_data():
    X, y = _one_hot_problem(28000, 10)
    Xtr, ytr, Xte, yte = X[:20000], y[:20000], X[20000:], y[20000:]
    A = np.c_[Xtr, np.ones(len(Xtr))]
    w = np.linalg.lstsq(A, ytr, rcond=None)[0]
    base = _r2(yte, np.c_[Xte, np.ones(len(Xte))] @ w)
    new = [_r2(yte, fe.DPLinearRegression(random_state=s).fit(Xtr, ytr).predict(Xte)) for s in range(3)]
    assert np.linalg.norm(w) > 15  # far outside the previous default's radius 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fe.DataWarning)  # the old default ends on its boundary
        old = [_r2(yte, fe.DPLinearRegression(radius=5.0, alpha=1e-4, solver="noisy_sgd", random_state=s)
                   .fit(Xtr, ytr).predict(Xte)) for s in range(3)]
    assert np.mean(new) >= base - 0.02 and np.mean(new) >= 0.9 * base
    assert np.mean(old) < base - 0.3  # the previous default falls far short here


# ---------------------------------------------------------------------------
# the boundary warning
# ---------------------------------------------------------------------------
def _steep(n=400, seed=11):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3)) / 2
    return X, np.clip(X @ [3.0, -2.0, 1.0], -1, 1)


@pytest.mark.parametrize("kw", [dict(radius=0.2), dict(radius=0.2, solver="adassp"),
                                dict(radius=0.2, delta=0.0), dict(radius=0.05, steps=5)])
def test_fit_on_the_radius_boundary_warns_and_stores_nothing(kw):
    X, y = _steep()
    with pytest.warns(fe.DataWarning, match="boundary of the parameter ball radius=0.2|radius=0.05"):
        m = fe.DPLinearRegression(random_state=0, **kw).fit(X, y)
    s = 0.25
    assert np.linalg.norm(np.append(m.coef_, m.intercept_ / s)) == pytest.approx(kw["radius"], rel=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fe.DataWarning)
        quiet = fe.DPLinearRegression(random_state=0, **{**kw, "radius": 100.0}).fit(X, y)
    assert set(vars(m)) == set(vars(quiet))  # the warning leaves no attribute behind
    assert issubclass(fe.DataWarning, UserWarning)


def test_interior_fit_does_not_warn():
    X, y = _steep()
    with warnings.catch_warnings():
        warnings.simplefilter("error", fe.DataWarning)
        fe.DPLinearRegression(random_state=0, solver="adassp").fit(X, y)   # no ball
        fe.DPLinearRegression(random_state=0, radius=50.0).fit(X, y)


# ---------------------------------------------------------------------------
# bad parameters
# ---------------------------------------------------------------------------
# _data's rows lie beyond data_norm; a fit refused for sample_weight warns about them first: expected
@pytest.mark.filterwarnings("ignore:.*have a norm above data_norm:fasterm.DataWarning")
def test_bad_parameters_are_refused_by_name():
    X, y = _data(50, 3)
    yc = (y > 0).astype(int)
    with pytest.raises(ValueError, match="adassp"):
        fe.DPLogisticRegression(solver="adassp").fit(X, yc)
    with pytest.raises(ValueError, match="adassp"):
        fe.DPLinearSVC(solver="adassp").fit(X, yc)
    with pytest.raises(ValueError, match="secure"):
        fe.DPLinearRegression(solver="adassp", secure=True).fit(X, y)
    with pytest.raises(ValueError, match="radius"):
        fe.DPLinearRegression(radius=0.0).fit(X, y)
    with pytest.raises(ValueError, match="radius"):
        fe.DPLinearRegression(radius="big").fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        fe.DPLinearRegression(solver="adassp").fit(X, y, sample_weight=np.ones(3))
    for kw, name in [(dict(epsilon=0.0), "epsilon"), (dict(epsilon=math.inf), "epsilon"),
                     (dict(delta=1.0), "delta"), (dict(delta=-1e-9), "delta"),
                     (dict(data_norm=0.0), "data_norm"), (dict(label_bound=math.nan), "label_bound"),
                     (dict(rho=0.0), "rho"), (dict(rho=1.0), "rho"), (dict(weight_bound=-1.0), "weight_bound")]:
        args = {"epsilon": 1.0, "delta": 1e-5, **kw}
        with pytest.raises(ValueError, match=name):
            ssp.adassp(X, y, args.pop("epsilon"), args.pop("delta"), **args)
    with pytest.raises(ValueError, match="X"):
        ssp.adassp(X[:, 0], y, 1.0)
    with pytest.raises(ValueError, match="y"):
        ssp.adassp(X, y[:-1], 1.0)


def test_adassp_refuses_dask():
    da = pytest.importorskip("dask.array")
    X, y = _data(50, 3)
    with pytest.raises(ValueError, match="memory"):
        fe.DPLinearRegression(solver="adassp").fit(da.from_array(X, chunks=25), da.from_array(y, chunks=25))


# ---------------------------------------------------------------------------
# target_bounds: a target in its own units (issue 35, item 7)
# ---------------------------------------------------------------------------
#: Declared feature bounds of scikit-learn's raw diabetes data (age, sex, bmi, bp, s1..s6), from
#: clinical ranges, not from the rows (experiments/raw_regression.py); the target, a measure of
#: disease progression, is declared in [0, 400].
DIABETES_BOUNDS = ([18, 1, 12, 50, 100, 0, 10, 1, 3.0, 50], [100, 2, 60, 150, 400, 300, 120, 12, 7.6, 250])
DIABETES_TARGET = (0.0, 400.0)


def _diabetes():
    sk = pytest.importorskip("sklearn.datasets")
    return sk.load_diabetes(return_X_y=True, scaled=False)


def _price(n=6000, seed=21):
    """A price-like target in its own units: around 20,000, declared in [0, 60,000]."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 4)) / 2
    y = 20000 + 15000 * (X @ [1.0, -0.6, 0.4, 0.0]) + 1500 * rng.normal(size=n)
    return X, y, (0.0, 60000.0)


def _hand_scaled(y, target):
    """The documented map, written out: y' = (y − c)/h, c = (low + high)/2, h = (high − low)/2, float64."""
    low, high = target
    c, h = (low + high) / 2, (high - low) / 2
    return (np.asarray(y, dtype=np.float64) - c) / h, c, h


_TARGET_CASES = {
    "default": dict(),
    "noisy_gd": dict(solver="noisy_gd"),
    "noisy_pgd": dict(solver="noisy_pgd"),
    "noisy_sgd": dict(solver="noisy_sgd"),
    "laplace": dict(noise="laplace", delta=0.0, solver="noisy_gd"),
    "adassp": dict(solver="adassp"),
    "adassp-pure-radius": dict(solver="adassp", delta=0.0, radius=3.0),
    "objpert": dict(delta=0.0),
    "expmech": dict(solver="expmech", steps=30),
    "no-intercept": dict(fit_intercept=False),
    "declared-bounds": dict(bounds=DIABETES_BOUNDS),
    "weights": dict(weight_bound=2.0),
    "rule-n6000": dict(),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", list(_TARGET_CASES))
def test_target_bounds_give_the_hand_scaled_fit_bit_for_bit(case, dtype):
    kw = _TARGET_CASES[case]
    if case == "rule-n6000":
        X, y, target = _price()
    else:
        X, y = _diabetes()
        target = DIABETES_TARGET
        if "bounds" not in kw:
            X = X / np.array(DIABETES_BOUNDS[1]) / math.sqrt(X.shape[1])  # rows in the unit ball
    X = X.astype(dtype)
    w = np.random.default_rng(1).uniform(-0.5, 2.5, X.shape[0]) if case == "weights" else None
    y_scaled, c, h = _hand_scaled(y, target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fe.DataWarning)  # the same boundary warning, or none, for both
        raw = fe.DPLinearRegression(target_bounds=target, random_state=3, **kw).fit(X, y, sample_weight=w)
        hand = fe.DPLinearRegression(random_state=3, **kw).fit(X, y_scaled, sample_weight=w)
    # the solver's output, its calibration and the spent budget: identical
    assert np.array_equal(raw.result_.w, hand.result_.w)
    assert (raw.epsilon_, raw.delta_, raw.n_iter_) == (hand.epsilon_, hand.delta_, hand.n_iter_) or (
        math.isnan(raw.delta_) and math.isnan(hand.delta_))
    assert getattr(raw.result_, "noise_scale", None) == getattr(hand.result_, "noise_scale", None)
    # the model in the caller's units: the documented formula applied to the hand-scaled model
    assert raw.coef_.dtype == dtype
    assert np.array_equal(raw.coef_, (h * hand.coef_.astype(np.float64)).astype(dtype))
    assert raw.intercept_ == h * hand.intercept_ + c
    if case == "no-intercept":
        assert hand.intercept_ == 0.0 and raw.intercept_ == c
    # predict is ⟨coef_, x⟩ + intercept_ (of the mapped rows with bounds=), in the caller's units
    Xp = fe.linear_model._bounds.map_rows(X, *raw.bounds_) if "bounds" in kw else X
    assert np.array_equal(raw.predict(X), Xp @ raw.coef_ + raw.intercept_)
    np.testing.assert_allclose(raw.predict(X), h * hand.predict(X) + c, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-3 * h if dtype == np.float32 else 1e-9 * h)


def test_target_bounds_on_dask_match_in_memory_hand_scaling():
    da = pytest.importorskip("dask.array")
    X, y = _diabetes()
    X = X / np.array(DIABETES_BOUNDS[1]) / math.sqrt(X.shape[1])
    y_scaled, c, h = _hand_scaled(y, DIABETES_TARGET)
    chunks = (100, X.shape[1])
    raw = fe.DPLinearRegression(target_bounds=DIABETES_TARGET, steps=5, random_state=4).fit(
        da.from_array(X, chunks=chunks), da.from_array(y, chunks=100))
    hand = fe.DPLinearRegression(steps=5, random_state=4).fit(
        da.from_array(X, chunks=chunks), da.from_array(y_scaled, chunks=100))
    assert np.array_equal(raw.result_.w, hand.result_.w)
    assert np.array_equal(raw.coef_, h * hand.coef_) and raw.intercept_ == h * hand.intercept_ + c


def test_target_bounds_on_diabetes_r2_of_the_hand_scaled_fit_and_the_natural_label_bound():
    """A raw target needs its range declared: label_bound=400 (the natural bound of the raw target)
    gives R² < 0, target_bounds=(0, 400) the R² of the hand-scaled target (experiments/raw_regression.py,
    docs/getting_started.rst)."""
    from sklearn.linear_model import LinearRegression
    from sklearn.model_selection import train_test_split

    X, y = _diabetes()
    r2 = {"raw": [], "hand": [], "label_bound": [], "nonprivate": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fe.DataWarning)
        for s in range(5):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=s)
            raw = fe.DPLinearRegression(epsilon=3.0, bounds=DIABETES_BOUNDS, target_bounds=DIABETES_TARGET,
                                        random_state=s).fit(Xtr, ytr)
            r2["raw"].append(raw.score(Xte, yte))
            y_scaled, c, h = _hand_scaled(ytr, DIABETES_TARGET)
            hand = fe.DPLinearRegression(epsilon=3.0, bounds=DIABETES_BOUNDS, random_state=s).fit(Xtr, y_scaled)
            r2["hand"].append(_r2(yte, h * hand.predict(Xte) + c))
            naive = fe.DPLinearRegression(epsilon=3.0, bounds=DIABETES_BOUNDS, label_bound=400.0,
                                          random_state=s).fit(Xtr, ytr)
            r2["label_bound"].append(naive.score(Xte, yte))
            r2["nonprivate"].append(LinearRegression().fit(Xtr, ytr).score(Xte, yte))
    mean = {k: float(np.mean(v)) for k, v in r2.items()}
    assert abs(mean["raw"] - mean["hand"]) < 0.01  # the same model: equal up to rounding
    np.testing.assert_allclose(r2["raw"], r2["hand"], rtol=0, atol=1e-9)
    assert mean["label_bound"] < 0.0 < 0.25 < mean["raw"] <= mean["nonprivate"] + 0.02


@pytest.mark.parametrize("bad, words", [
    ((1.0, 1.0), "low < high"), ((2.0, 1.0), "low < high"), ((0.0, math.inf), "finite"),
    ((math.nan, 1.0), "finite"), ((1.0,), "pair"), ((0.0, 1.0, 2.0), "pair"), (("a", "b"), "numbers"),
    ((-1.7e308, 1.7e308), "overflows"), ("ab", "target_bounds"), (np.array([0.0, 1.0]), "target_bounds"),
])
def test_bad_target_bounds_raise_naming_the_parameter_before_the_data_are_read(bad, words):
    X = np.full((10, 2), np.nan)  # data the fit would refuse: the parameter is checked first
    with pytest.raises(ValueError, match=words) as err:
        fe.DPLinearRegression(target_bounds=bad).fit(X, np.zeros(10))
    assert "target_bounds" in str(err.value)
    with pytest.raises(ValueError, match=r"target_bounds and label_bound=2\.0 were both given"):
        fe.DPLinearRegression(target_bounds=(0.0, 1.0), label_bound=2.0).fit(X, np.zeros(10))
    fe.DPLinearRegression(target_bounds=[0, 5], label_bound=1.0, random_state=0).fit(np.zeros((10, 1)), np.zeros(10))


def test_labels_outside_target_bounds_are_clipped_with_a_warning_never_estimated():
    X, y = _diabetes()
    X = X / np.array(DIABETES_BOUNDS[1]) / math.sqrt(X.shape[1])
    target = (50.0, 250.0)  # narrower than the data: about a fifth of the labels lie outside
    with pytest.warns(fe.DataWarning, match=r"lie outside target_bounds=\(50, 250\) and are clipped"):
        raw = fe.DPLinearRegression(target_bounds=target, random_state=5).fit(X, y)
    # the fit of the labels clipped to the range: a label beyond it counts as the bound itself
    y_far = np.where(y > 250, 1e6, np.where(y < 50, -1e6, y))
    with pytest.warns(fe.DataWarning, match="target_bounds"):
        far = fe.DPLinearRegression(target_bounds=target, random_state=5).fit(X, y_far)
    assert np.array_equal(raw.result_.w, far.result_.w)
    y_scaled, _, _ = _hand_scaled(y, target)
    hand = fe.DPLinearRegression(random_state=5).fit(X, np.clip(y_scaled, -1.0, 1.0))
    assert np.array_equal(raw.result_.w, hand.result_.w)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fe.DataWarning)
        fe.DPLinearRegression(target_bounds=DIABETES_TARGET, solver="adassp", random_state=5).fit(X, y)
