"""noisy_gd / noisy_sgd and their accounting: references written from the theorems."""

import math

import numpy as np
import pytest
from scipy import integrate, optimize as sopt, stats

import fasterm as fe
from fasterm import accounting as A
from fasterm.erm import solvers
from fasterm.erm._float_margin import sgd_delta


# ---------------------------------------------------------------------------
# Smoothness constants against brute force
# ---------------------------------------------------------------------------
def _grad(loss, w, x, y, clip=None):
    return loss.grad(w, x[None, :], np.array([y]), clip=clip)[0]


@pytest.mark.parametrize("loss, y", [(fe.losses.Logistic(), 1.0), (fe.losses.Squared(), 0.3)])
@pytest.mark.parametrize("clip", [None, 0.1])
def test_smoothness_bounds_gradient_differences(loss, y, clip):
    # ‖∇ℓ(w) − ∇ℓ(w')‖ ≤ β‖w − w'‖ for random pairs and rows with ‖x‖ ≤ X,
    # with or without per-example clipping (the clamped surrogate).
    X_bound = 1.7
    beta = loss.smoothness(X_bound)
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(3000):
        d = 4
        x = rng.standard_normal(d)
        x *= X_bound * rng.uniform(0.2, 1.0) / np.linalg.norm(x)
        w = rng.standard_normal(d) * rng.uniform(0.01, 3)
        v = w + rng.standard_normal(d) * 10 ** rng.uniform(-6, 0)
        ratio = np.linalg.norm(_grad(loss, w, x, y, clip) - _grad(loss, v, x, y, clip)) / np.linalg.norm(w - v)
        worst = max(worst, ratio)
    assert worst <= beta * (1 + 1e-6)


@pytest.mark.parametrize("loss, y, beta_of", [(fe.losses.Logistic(), 1.0, lambda X: X * X / 4),
                                              (fe.losses.Squared(), 0.0, lambda X: 2 * X * X)])
def test_smoothness_is_tight(loss, y, beta_of):
    # At margin 0 along x with ‖x‖ = X the curvature is attained: finite differences.
    X_bound = 1.3
    x = np.array([X_bound, 0.0])
    w, h = np.zeros(2), np.array([1e-6, 0.0])
    ratio = np.linalg.norm(_grad(loss, w + h, x, y) - _grad(loss, w, x, y)) / 1e-6
    assert loss.smoothness(X_bound) == pytest.approx(beta_of(X_bound))
    assert ratio == pytest.approx(beta_of(X_bound), rel=1e-4)


def test_smoothness_linear_and_nonsmooth():
    assert fe.losses.Linear().smoothness(2.0) == 0.0
    assert not hasattr(fe.losses.Hinge(), "smoothness")
    assert not hasattr(fe.losses.Absolute(), "smoothness")
    with pytest.raises(ValueError, match="not smooth"):
        fe.noisy_gd(fe.losses.Hinge(), np.ones((4, 2)), np.ones(4), fe.L2Ball(1.0, 2), 1.0, data_norm=1.0)
    with pytest.raises(ValueError, match="data_norm"):
        fe.losses.Logistic().smoothness(-1.0)


# ---------------------------------------------------------------------------
# noisy_gd: the loop against a numpy reference, calibration, Theorem A
# ---------------------------------------------------------------------------
def _reference_gd(X, y, R, steps, lr, sigma, l2, clip, seed, accelerate=False, output="last", cap=1.0):
    """Theorem A's iteration in numpy; noise = Generator.normal, the stream of gaussian_fill.
    ``cap``: FISTA's momentum coefficient is min((k_{t−1} − 1)/k_t, cap)."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    # the kernels clip at c/(1 + Θ), the floating-point margin of a release (fasterm.erm._float_margin)
    from fasterm.erm import _float_margin
    clip = _float_margin.effective_clip(clip, _float_margin.margin(
        "any", X.dtype, n, d, scale=1.0 / n, bound=clip, reg=l2, radius=R, momentum=accelerate))

    def proj(v):
        nv = np.linalg.norm(v)
        return v if nv <= R else v * (R / nv)

    def grad(w):
        m = y * (X @ w)
        coef = -y / (1 + np.exp(m))
        cap = clip / np.linalg.norm(X, axis=1)
        return X.T @ np.clip(coef, -cap, cap) / n + l2 * w

    w = np.zeros(d)
    point, prev, k_prev, acc = w.copy(), w.copy(), 1.0, np.zeros(d)
    for t in range(steps):
        if t:  # the average is of the query points after the start, and the last iterate
            acc += point
        g = grad(point) + rng.normal(0.0, sigma, d)
        new = proj(point - lr * g)
        if accelerate:  # FISTA: the extrapolated point is not projected
            k = 0.5 * (1 + math.sqrt(1 + 4 * k_prev * k_prev))
            point = new + min((k_prev - 1) / k, cap) * (new - prev)
            k_prev = k
        else:
            point = new
        prev = new
    return proj((acc + prev) / steps) if output == "average" else prev


@pytest.mark.parametrize("accelerate", [False, True])
@pytest.mark.parametrize("output", ["last", "average"])
def test_noisy_gd_matches_reference(accelerate, output, logistic_data):
    X, y = logistic_data(300, 6, seed=3)
    loss, C = fe.losses.Logistic(l2=1e-3), fe.L2Ball(3.0, 6)
    r = fe.noisy_gd(loss, X, y, C, 1.0, 1e-5, steps=7, data_norm=1.0, clip=0.3, random_state=5,
                    accelerate=accelerate, output=output)
    assert r.lr == pytest.approx(1 / (0.25 + 1e-3)) and r.steps == 7
    ref = _reference_gd(X, y, 3.0, 7, r.lr, r.noise_scale, 1e-3, 0.3, 5, accelerate, output)
    np.testing.assert_allclose(r.w, ref, rtol=1e-9, atol=1e-11)


def _gdp_delta(mu, eps):
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("eps, delta, T", [(1.0, 1e-5, 12), (0.3, 1e-6, 3), (4.0, 1e-3, 20)])
def test_noisy_gd_gaussian_calibration(eps, delta, T, logistic_data):
    # T releases with sensitivity 2c/n and N(0, σ²): μ = √T·Δ/σ-GDP; the δ(ε)
    # of μ-GDP (Dong-Roth-Su Cor. 2.13) written here with scipy.
    X, y = logistic_data(500, 3, seed=1)
    r = fe.noisy_gd(fe.losses.Logistic(), X, y, fe.L2Ball(5.0, 3), eps, delta, steps=T, data_norm=1.0,
                    clip=0.4, random_state=0)
    assert r.sensitivity == pytest.approx(2 * 0.4 / 500)
    mu = math.sqrt(T) * r.sensitivity / r.noise_scale
    assert _gdp_delta(mu, eps) <= delta * (1 + 1e-9)
    assert _gdp_delta(mu, eps) >= delta * (1 - 1e-6)  # no slack
    assert r.epsilon <= eps and r.delta == delta


def test_noisy_gd_meets_theorem_a(logistic_data):
    # E L(w̄) − L(w*) ≤ R²/(2ηT) + η·d·σ² (module docstring), no clipping binding (c = G).
    X, y = logistic_data(2000, 4, seed=7)
    R = 4.0
    f = lambda w: float(np.mean(np.logaddexp(0, -y * (X @ w))))  # noqa: E731
    L_star = sopt.minimize(f, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).fun
    excess, bounds = [], []
    for seed in range(30):
        r = fe.noisy_gd(fe.losses.Logistic(), X, y, fe.L2Ball(R, 4), 0.5, 1e-5, steps=15,
                        data_norm=1.0, random_state=seed, output="average")
        excess.append(f(r.w) - L_star)
        bounds.append(r.utility_bound)
    assert bounds[0] == pytest.approx(0.25 * R * R / (2 * 15) + 4 * r.noise_scale ** 2 / 0.25)
    assert np.mean(excess) <= bounds[0] and min(excess) >= -1e-9


def test_noisy_gd_default_steps_rule(logistic_data):
    # T* = β R μ/(Δ √(2d)), capped by max_steps.
    mu = A.gaussian_mu(1.0, 1e-5)
    beta, R, sens, d = 0.25, 2.0, 2 * 0.3 / 50, 3
    t_star = beta * R * mu / (sens * math.sqrt(2 * d))
    assert solvers.gd_default_steps(beta, R, sens, d, 1.0, 1e-5, 1000) == math.ceil(t_star)
    assert solvers.gd_default_steps(beta, R, sens, d, 1.0, 1e-5, 3) == 3
    X, y = logistic_data(50, 3, seed=0)
    r = fe.noisy_gd(fe.losses.Logistic(), X, y, fe.L2Ball(R, 3), 1.0, 1e-5, data_norm=1.0, clip=0.3,
                    max_steps=1000, random_state=0)
    assert r.steps == math.ceil(t_star)


@pytest.mark.parametrize("n, eps, on", [(300, 1.0, False), (400, 1.0, True), (400, 10.0, True),
                                         (3000, 0.1, True)])
def test_noisy_gd_accelerate_auto_rule(n, eps, on, logistic_data):
    # FISTA's coefficient capped at 1 − 3ν, ν = σ√d/c = 2√(T d)/(n μ) (Gaussian): ν ≈ 0.39 (no
    # momentum), 0.29 and 0.32 (a small cap throughout), 0.04 (the cap binds from t ≈ 22 on)
    X, y = logistic_data(n, 8, seed=1)
    r = fe.noisy_gd(fe.losses.Logistic(), X, y, fe.L2Ball(5.0, 8), eps, 1e-5, steps=30, data_norm=1.0,
                    clip=0.3, random_state=0, accelerate="auto")
    nu = 2 * math.sqrt(30 * 8) / (n * A.gaussian_mu(eps, 1e-5))
    assert r.info["accelerate"] is on and (nu < 1 / 3) is on
    ref = _reference_gd(X, y, 5.0, 30, r.lr, r.noise_scale, 0.0, 0.3, 0, on, cap=1 - 3 * nu)
    np.testing.assert_allclose(r.w, ref, rtol=1e-9, atol=1e-11)
    if on:  # the cap is what the fit used: plain FISTA (or no momentum) gives another point
        for other in (_reference_gd(X, y, 5.0, 30, r.lr, r.noise_scale, 0.0, 0.3, 0, True),
                      _reference_gd(X, y, 5.0, 30, r.lr, r.noise_scale, 0.0, 0.3, 0, False)):
            assert np.linalg.norm(r.w - other) > 1e-6 * np.linalg.norm(r.w)
    with pytest.raises(TypeError, match="accelerate"):
        fe.noisy_gd(fe.losses.Logistic(), X, y, fe.L2Ball(5.0, 8), eps, data_norm=1.0, accelerate="yes")


def test_noisy_gd_float32_reproducible_and_laplace(logistic_data):
    X, y = logistic_data(200, 5, seed=2, dtype=np.float32)
    kw = dict(data_norm=1.0, steps=5, random_state=11)
    a = fe.noisy_gd(fe.losses.Logistic(), X, y, fe.L2Ball(2.0, 5), 1.0, 1e-5, **kw)
    b = fe.noisy_gd(fe.losses.Logistic(), X, y, fe.L2Ball(2.0, 5), 1.0, 1e-5, **kw)
    assert a.w.dtype == np.float32 and np.array_equal(a.w, b.w)
    p = fe.noisy_gd(fe.losses.Logistic(), X, y, fe.L2Ball(2.0, 5), 1.0, 0.0, noise="laplace",
                    calibration="pure", **kw)
    assert p.delta == 0.0 and p.epsilon == pytest.approx(1.0)
    # basic composition of L1-calibrated Laplace: b = T√d·Δ₂/ε
    assert p.noise_scale == pytest.approx(5 * math.sqrt(5) * 2 * 1.0 / 200, rel=1e-12)


# ---------------------------------------------------------------------------
# RDP of the Poisson-subsampled Gaussian
# ---------------------------------------------------------------------------
def _renyi_mixture_quad(q, sigma, alpha):
    """D_α((1−q)N(0,σ²) + qN(1,σ²) ‖ N(0,σ²)) by numerical integration (independent of the code)."""
    # E_{N(0,σ²)}[(mixture/N(0,σ²))^α], the likelihood ratio (1−q) + q·e^{(2z−1)/(2σ²)}.
    def f(z):
        log_ratio = np.logaddexp(math.log1p(-q), math.log(q) + (2 * z - 1) / (2 * sigma**2))
        return math.exp(stats.norm.logpdf(z, 0, sigma) + alpha * log_ratio)

    val, _ = integrate.quad(f, -30 * sigma, 30 * sigma + 2 * alpha, limit=500, epsabs=0, epsrel=1e-12,
                            points=[0.0, 1.0])
    return math.log(val) / (alpha - 1)


@pytest.mark.parametrize("q, sigma", [(0.01, 0.8), (0.1, 1.5), (0.5, 3.0), (0.003, 5.0)])
def test_rdp_matches_numerical_integration(q, sigma):
    orders = [2, 3, 5, 8, 16]
    mine = A.rdp_subsampled_gaussian(q, sigma, 7, orders)
    ref = [7 * _renyi_mixture_quad(q, sigma, a) for a in orders]
    np.testing.assert_allclose(mine, ref, rtol=1e-7)


def test_rdp_conversion_formula():
    # Balle et al. 2020 Thm 21, written out: ε = ρ + log((α−1)/α) − (log δ + log α)/(α−1).
    rdp, orders, delta = np.array([0.5, 0.3, 0.9]), np.array([2.0, 5.0, 11.0]), 1e-6
    ref = min(r + math.log((a - 1) / a) - (math.log(delta) + math.log(a)) / (a - 1) for r, a in zip(rdp, orders))
    assert A.rdp_epsilon(rdp, orders, delta) == pytest.approx(ref, rel=1e-10)
    assert A.rdp_epsilon(rdp, orders, delta) >= ref


def test_sgd_replace_one_is_weak_triangle_of_add_remove():
    # The replace-one Rényi-DP bound (one of the two bounds sgd_epsilon takes the minimum
    # of; tests/accounting/test_pld.py tests the other) is the weak triangle inequality of add/remove.
    q, sigma, T, delta = 0.02, 1.3, 50, 1e-5
    orders = np.array(A.RDP_ORDERS, float)
    ar = lambda a: A.rdp_subsampled_gaussian(q, sigma, T, a)  # noqa: E731
    rep = (orders - 0.5) / (orders - 1) * ar(2 * orders) + ar(2 * orders - 1)
    weak_triangle = A.rdp_epsilon(rep, orders, delta)
    assert A.sgd._sgd_epsilon_rdp(q, sigma, T, delta, "replace_one") == pytest.approx(weak_triangle, rel=1e-10)
    # at δ = 1e-12 too the reported ε is at most the RDP one (the tilted PLD composition covers tiny δ)
    assert A.sgd_epsilon(q, sigma, T, 1e-12) <= A.rdp_epsilon(rep, orders, 1e-12)
    assert A.sgd_epsilon(q, sigma, T, delta) <= weak_triangle
    assert A.sgd._sgd_epsilon_rdp(q, sigma, T, delta, "add_remove") == pytest.approx(
        A.rdp_epsilon(ar(orders), orders, delta), rel=1e-10)
    assert A.sgd_epsilon(q, sigma, T, delta, "add_remove") <= A.rdp_epsilon(ar(orders), orders, delta)


@pytest.mark.parametrize("q, sigma", [(0.05, 0.9), (0.9, 2.0), (1.0, 2.0)])
def test_sgd_replace_one_bound_is_sound_for_one_step(q, sigma):
    # One step, replace-one in 1-D: outputs (1−q)N(0,σ²) + qN(u,σ²) with u = ±1 (the
    # replaced row's clipped gradient; the other rows shift both alike).  Its exact
    # δ(ε) = ∫ max(0, p − e^ε p') must be ≤ δ at the ε the accountant reports.  (At
    # q ≥ 0.9 the add/remove ε is not enough: δ(ε) is then ~1e-2.)
    delta = 1e-5
    eps = A.sgd_epsilon(q, sigma, 1, delta)
    p = lambda z: (1 - q) * stats.norm.pdf(z, 0, sigma) + q * stats.norm.pdf(z, 1, sigma)  # noqa: E731
    pp = lambda z: (1 - q) * stats.norm.pdf(z, 0, sigma) + q * stats.norm.pdf(z, -1, sigma)  # noqa: E731
    exact, _ = integrate.quad(lambda z: max(0.0, p(z) - math.exp(eps) * pp(z)), -40, 40, limit=400, points=[0])
    assert exact <= delta


@pytest.mark.parametrize("neighbors", ["replace_one", "add_remove"])
def test_calibrate_sgd_sigma_is_tight(neighbors):
    # solved to SGD_SIGMA_RTOL (1e-4), from above
    q, T, eps, delta = 0.01, 300, 1.0, 1e-5
    s = A.calibrate_sgd_sigma(q, T, eps, delta, neighbors)
    assert A.sgd_epsilon(q, s, T, delta, neighbors) <= eps
    assert A.sgd_epsilon(q, s * (1 - 3 * A.SGD_SIGMA_RTOL), T, delta, neighbors) > eps


def test_accountant_matches_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    for q, sigma, T in [(0.01, 1.1, 1000), (0.2, 2.0, 30), (1.0, 4.0, 10)]:
        orders = list(A.RDP_ORDERS)
        acc = rdp.RdpAccountant(orders=orders)
        acc.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), T))
        np.testing.assert_allclose(A.rdp_subsampled_gaussian(q, sigma, T), acc._rdp, rtol=1e-9)
        assert A.sgd._sgd_epsilon_rdp(q, sigma, T, 1e-5, "add_remove") == pytest.approx(acc.get_epsilon(1e-5), rel=1e-9)


def test_accounting_rejects_bad_input():
    with pytest.raises(ValueError, match="sample_rate"):
        A.sgd_epsilon(0.0, 1.0, 3, 1e-5)
    with pytest.raises(ValueError, match="noise_multiplier"):
        A.rdp_subsampled_gaussian(0.1, -1.0, 3)
    with pytest.raises(ValueError, match="orders"):
        A.rdp_subsampled_gaussian(0.1, 1.0, 3, [1.5])
    with pytest.raises(ValueError, match="neighbors"):
        A.calibrate_sgd_sigma(0.1, 3, 1.0, 1e-5, "swap")
    with pytest.raises(ValueError, match="delta"):
        A.calibrate_sgd_sigma(0.1, 3, 1.0, 0.0)
    with pytest.raises(ValueError, match="delta"):
        A.rdp_epsilon([1.0], [2.0], 0.0)


# ---------------------------------------------------------------------------
# noisy_sgd
# ---------------------------------------------------------------------------
def test_noisy_sgd_matches_reference(logistic_data):
    X, y = logistic_data(400, 5, seed=4)
    C, q, T = fe.L2Ball(3.0, 5), 0.1, 12
    r = fe.noisy_sgd(fe.losses.Logistic(), X, y, C, 2.0, 1e-5, steps=T, sample_rate=q, data_norm=1.0,
                     clip=0.5, random_state=9)
    sigma = A.calibrate_sgd_sigma(q, T, 2.0, sgd_delta(1e-5)[0])  # δ_fit: δ·2⁻²⁰ pays for the batch cap
    assert r.info["noise_multiplier"] == sigma and r.epsilon <= 2.0 and r.delta == 1e-5
    rng = np.random.default_rng(9)
    w, m = np.zeros(5), q * 400
    for _ in range(T):
        size = int(rng.binomial(400, q))
        rows = np.sort(rng.choice(400, size=size, replace=False))
        Xb, yb = X[rows], y[rows]
        coef = -yb / (1 + np.exp(yb * (Xb @ w)))
        cap = 0.5 / np.linalg.norm(Xb, axis=1)
        g = (Xb.T @ np.clip(coef, -cap, cap)) / m + rng.normal(0, sigma * 0.5, 5) / m
        w = w - r.lr * g
        w = w if np.linalg.norm(w) <= 3 else w * 3 / np.linalg.norm(w)
    np.testing.assert_allclose(r.w, w, rtol=1e-9, atol=1e-11)


def test_noisy_sgd_defaults_and_float32(logistic_data):
    X, y = logistic_data(3000, 4, seed=5, dtype=np.float32)
    r = fe.noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(5.0, 4), 1.0, 1e-5, data_norm=1.0,
                     batch_size=300, epochs=2, random_state=1)
    assert r.steps == 20 and r.info["sample_rate"] == pytest.approx(0.1) and r.w.dtype == np.float32
    acc = np.mean(np.sign(X @ r.w) == y)
    assert acc > 0.6  # the planted model's accuracy is ~0.68 here
    with pytest.raises(ValueError, match="sample_rate or batch_size"):
        fe.noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(5.0, 4), 1.0, data_norm=1.0, sample_rate=0.1,
                     batch_size=10)
    with pytest.raises(ValueError, match="delta"):
        fe.noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(5.0, 4), 1.0, 0.0, data_norm=1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_estimator_sgd_minibatches_equal_the_design_path(dtype, fit_intercept, logistic_data):
    # fit_linear's sgd builds each minibatch's design rows itself; the result must be
    # that of noisy_sgd on the full design matrix (rows clipped, constant column).
    from fasterm.linear_model import _rules as _linear

    X, y = logistic_data(6000, 5, seed=8, dtype=dtype)
    X[:50] *= 3.0  # rows beyond data_norm = 1: clipped in both paths
    p = dict(_linear.DEFAULTS, radius=50.0, random_state=4, fit_intercept=fit_intercept, solver="noisy_sgd")
    from fasterm.linear_model._plan import fit_linear

    coef, b, res = fit_linear("logistic", X, y, **p)
    A = _linear.design(X, 1.0, fit_intercept, 0.25)
    dn = _linear.augmented_norm(1.0, fit_intercept, 0.25)
    loss = _linear.make_loss("logistic", p["alpha"])
    beta = loss.smoothness(dn) + loss.l2
    opts = _linear.choose_solver("logistic", 6000, "gaussian", False, False)[1]
    ref = fe.noisy_sgd(loss, A, y, fe.L2Ball(50.0, A.shape[1]), 1.0, 1e-5, data_norm=dn,
                       clip=_linear.auto_clip("logistic", dn), random_state=4, lr=_linear.LR_MULTIPLE / beta,
                       **opts)
    assert res.steps == ref.steps and res.info["solver"] == "sgd"
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(res.w, ref.w, rtol=rtol, atol=rtol * 1e-3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_estimator_gd_equals_noisy_gd_on_the_design(dtype, fit_intercept, logistic_data):
    # The estimators hand their validated data to noisy_gd unchecked a second time
    # (checked=True) and memoise the calibration: the fit must be bit for bit that of
    # the public noisy_gd on the design matrix, on a cold and on a warm cache.
    from fasterm.linear_model import _rules as _linear

    X, y = logistic_data(400, 6, seed=5, dtype=dtype)
    X[:20] *= 2.5  # rows beyond data_norm = 1
    y01 = (y > 0).astype(int)
    s = 0.25
    A = _linear.design(X, 1.0, fit_intercept, s)
    dn = _linear.augmented_norm(1.0, fit_intercept, s)
    loss = _linear.make_loss("logistic", 1e-4)
    ref = fe.noisy_gd(loss, A, np.where(y01 == 1, 1.0, -1.0), fe.L2Ball(50.0, A.shape[1]), 1.0, 1e-5,
                      data_norm=dn, clip=_linear.auto_clip("logistic", dn), random_state=3,
                      lr=_linear.LR_MULTIPLE / (loss.smoothness(dn) + loss.l2), accelerate="auto",
                      max_steps=_linear.gd_budget("logistic", 400))
    for cold in (True, False):
        if cold:
            fe.erm.optimize._clear_calibration_caches()
        with pytest.warns(fe.DataWarning, match=r"of 400 rows .* above data_norm=1"):  # X[:20] *= 2.5
            m = fe.DPLogisticRegression(random_state=3, fit_intercept=fit_intercept).fit(X, y01)
        w = np.append(m.coef_.ravel(), m.intercept_[0] / s) if fit_intercept else m.coef_.ravel()
        np.testing.assert_array_equal(w, ref.w.astype(dtype))
        assert m.n_iter_ == ref.steps and m.result_.noise_scale == ref.noise_scale
        assert m.epsilon_ == ref.epsilon and m.delta_ == ref.delta
    with pytest.raises(ValueError, match="NaN|finite"):  # the estimator's own check still runs
        bad = X.copy()
        bad[3, 2] = np.nan
        fe.DPLogisticRegression(random_state=3).fit(bad, y01)


# ---------------------------------------------------------------------------
# The estimators' solver parameter and the default rule
# ---------------------------------------------------------------------------
def test_estimator_solver_rule_and_refusals(logistic_data):
    pytest.importorskip("sklearn")
    from fasterm.linear_model._rules import gd_budget as _linear_gd_budget

    X, y = logistic_data(6000, 5, seed=9)
    y01 = (y > 0).astype(int)
    small = fe.DPLogisticRegression(random_state=0).fit(X[:400], y01[:400])
    assert small.result_.info["solver"] == "gd" and small.n_iter_ == 20  # the budget below n = 1,000
    mid = fe.DPLogisticRegression(random_state=0).fit(X[:1000], y01[:1000])
    assert mid.result_.info["solver"] == "gd" and mid.n_iter_ == 40
    assert fe.DPLogisticRegression(random_state=0).fit(X[:999], y01[:999]).n_iter_ == 20
    assert fe.DPLinearRegression(random_state=0).fit(X[:400], y[:400]).n_iter_ == 40  # squared: 40
    assert _linear_gd_budget("logistic", 400, "laplace") == 40 == _linear_gd_budget("squared", 400)
    assert fe.DPLogisticRegression(random_state=0, max_steps=7).fit(X[:400], y01[:400]).n_iter_ == 7
    big = fe.DPLogisticRegression(random_state=0).fit(X, y01)
    assert big.result_.info["solver"] == "sgd" and big.result_.info["neighbors"] == "replace_one"
    assert big.epsilon_ <= 1.0 and big.delta_ <= 1e-5
    lap = fe.DPLogisticRegression(random_state=0, noise="laplace", delta=0.0).fit(X, y01)
    assert lap.result_.info["solver"] == "gd" and lap.delta_ == 0.0
    svc = fe.DPLinearSVC(random_state=0).fit(X[:400], y01[:400])
    assert "solver" not in svc.result_.info  # noisy_pgd: the hinge loss is not smooth
    sec = fe.DPLogisticRegression(random_state=0, secure=True).fit(X[:400], y01[:400])
    assert sec.result_.info["secure"] is not None
    old = fe.DPLogisticRegression(random_state=0, solver="noisy_pgd").fit(X[:400], y01[:400])
    assert "solver" not in old.result_.info and old.n_iter_ <= 100
    with pytest.raises(ValueError, match="solver"):
        fe.DPLinearSVC(solver="noisy_gd").fit(X[:400], y01[:400])
    with pytest.raises(ValueError, match="solver"):
        fe.DPLogisticRegression(solver="noisy_sgd", noise="laplace").fit(X[:400], y01[:400])
    with pytest.raises(ValueError, match="solver"):
        fe.DPLogisticRegression(solver="noisy_gd", secure=True).fit(X[:400], y01[:400])
    with pytest.raises(ValueError, match="solver"):
        fe.DPLogisticRegression(solver="newton").fit(X[:400], y01[:400])
