"""Sample weights with a declared public bound (``sample_weight``, ``weight_bound``).

The weighted objective is (1/n) Σ w_i ℓ_i + Λ with every weight mapped into
[0, B]; a record (x_i, y_i, w_i) contributes w_i times its clipped gradient,
of norm ≤ B·c, so Δ₂ = 2B·c/n.  Checked here:

* the compiled weighted gradient sum against a slow per-row Python reference,
  and weights of 1 against the unweighted kernel bit for bit;
* ``sample_weight=np.ones(n)`` with B = 1 against the unweighted fit, bit for
  bit, for every solver and the estimators (same seed);
* the calibrations with B = 2 against references written here from the
  theorems (μ-GDP, the Laplace mechanism with basic composition, and the
  subsampled Gaussian's noise N(0, σ²(Bc)²));
* one noisy step on neighbouring data sets whose differing record has its
  weight at (or beyond) the bound: the outputs differ by exactly η·Δ₂;
* the map of hostile weights into [0, B] and the refusals naming sample_weight.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import fasterm as fe
from fasterm.erm import _losses

# _data draws rows up to twice data_norm and labels beyond label_bound on purpose (the
# clipping is part of each check): the estimators' clipping warnings are expected here
pytestmark = pytest.mark.filterwarnings("ignore:.*have a norm above data_norm:fasterm.DataWarning",
                                        "ignore:.*have \\|y\\| > label_bound:fasterm.DataWarning")

KINDS = {"logistic": _losses.LOGISTIC, "hinge": _losses.HINGE, "squared": _losses.SQUARED,
         "absolute": _losses.ABSOLUTE, "linear": _losses.LINEAR}


def _data(n=203, d=7, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, size=(n, 1)) / math.sqrt(d)
    y = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    yr = rng.normal(size=n) * 1.5
    sw = rng.uniform(0.0, 2.0, size=n)
    return X.astype(dtype), y.astype(dtype), yr.astype(dtype), sw


def _deriv(kind, z, y, ybound):
    if kind == "logistic":
        return -y / (1.0 + math.exp(y * z))
    if kind == "hinge":
        return -y if y * z < 1.0 else 0.0
    if kind == "squared":
        return 2.0 * (z - min(max(y, -ybound), ybound))
    if kind == "absolute":
        yc = min(max(y, -ybound), ybound)
        return float(z > yc) - float(z < yc)
    return 1.0


def ref_weighted_grad_sum(kind, X, y, w, data_norm, clip, ybound, weights):
    """Σ_i weight_i · clip_c(∇ℓ(w; s_i x_i, y_i)), row by row in double (the theorem's object)."""
    X = np.asarray(X, dtype=np.float64)
    out = np.zeros(X.shape[1])
    for i, x in enumerate(X):
        nx = float(np.linalg.norm(x))
        s = min(1.0, data_norm / nx) if nx > 0 else 1.0
        xs = s * x
        yi = 0.0 if y is None else (1.0 if y[i] > 0 else -1.0) if kind in ("logistic", "hinge") else float(y[i])
        g = _deriv(kind, float(xs @ w.astype(np.float64)), yi, ybound) * xs
        ng = float(np.linalg.norm(g))
        if ng > clip:
            g = g * (clip / ng)
        out += weights[i] * g
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_weighted_kernel_against_reference(kind, dtype):
    X, y, yr, sw = _data(dtype=dtype)
    yy = None if kind == "linear" else (yr if kind in ("squared", "absolute") else y)
    w = (np.random.default_rng(1).normal(size=X.shape[1]) * 0.7).astype(dtype)
    dn, c, yb = 1.1, 0.35, 1.2
    out = np.empty(X.shape[1], dtype=dtype)
    _losses.grad_sum(KINDS[kind], X, yy, w, None, dn, c, yb, out, 2, sw)
    ref = ref_weighted_grad_sum(kind, X, yy, w, dn, c, yb, sw)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * np.abs(ref).max())
    # weights of 1 are the unweighted kernel, bit for bit
    plain, ones = np.empty_like(out), np.empty_like(out)
    _losses.grad_sum(KINDS[kind], X, yy, w, None, dn, c, yb, plain, 2)
    _losses.grad_sum(KINDS[kind], X, yy, w, None, dn, c, yb, ones, 2, np.ones(X.shape[0]))
    assert np.array_equal(plain, ones)
    # a minibatch read in place: the weighted sum of the same rows copied out
    rows = np.arange(3, X.shape[0], 5, dtype=np.int64)
    sub, full = np.empty_like(out), np.empty_like(out)
    _losses.grad_sum_rows(KINDS[kind], X, yy, w, None, dn, c, yb, rows, sub, 2, sw)
    _losses.grad_sum(KINDS[kind], X[rows], None if yy is None else yy[rows], w, None, dn, c, yb, full, 2,
                     sw[rows])
    assert np.array_equal(sub, full)


def test_weighted_kernel_rejects_wrong_length():
    X, y, _, sw = _data()
    out = np.empty(X.shape[1])
    with pytest.raises(ValueError, match="weights"):
        _losses.grad_sum(_losses.LOGISTIC, X, y, np.zeros(X.shape[1]), None, 1.0, 1.0, math.inf, out, 1, sw[:-1])


# ---------------------------------------------------------------------------
# sample_weight = ones (B = 1) is the unweighted fit, bit for bit
# ---------------------------------------------------------------------------
def _fits(dtype):
    X, y, yr, _ = _data(n=301, d=6, dtype=dtype)
    ball = fe.L2Ball(5.0, X.shape[1])
    L = fe.losses
    return [
        ("pgd-fused", lambda **k: fe.noisy_pgd(L.Logistic(l2=1e-3), X, y, ball, 1.0, 1e-5, steps=7, noise="gaussian",
                                                 data_norm=1.0, clip=0.3, random_state=3, **k)),
        ("pgd-laplace-box", lambda **k: fe.noisy_pgd(L.Hinge(), X, y, fe.Box(-1.0, 1.0, X.shape[1]), 1.0, 0.0,
                                                       steps=5, data_norm=1.0, random_state=3, **k)),
        ("pgd-secure", lambda **k: fe.noisy_pgd(L.Logistic(), X, y, ball, 1.0, 1e-5, steps=4, noise="gaussian",
                                                  data_norm=1.0, random_state=3, secure=True, **k)),
        ("gd-last", lambda **k: fe.noisy_gd(L.Squared(), X, yr, ball, 1.0, 1e-5, steps=6, data_norm=1.0,
                                            label_bound=2.0, random_state=3, **k)),
        ("gd-average-momentum", lambda **k: fe.noisy_gd(L.Logistic(), X, y, ball, 1.0, 1e-5, steps=6, data_norm=1.0,
                                                        random_state=3, accelerate=True, output="average", **k)),
        ("sgd", lambda **k: fe.noisy_sgd(L.Logistic(), X, y, ball, 1.0, 1e-5, steps=9, sample_rate=0.2,
                                         data_norm=1.0, random_state=3, **k)),
        ("sgd-average", lambda **k: fe.noisy_sgd(L.Squared(), X, yr, ball, 1.0, 1e-5, steps=9, batch_size=40.0,
                                                 data_norm=1.0, label_bound=2.0, random_state=3, output="average",
                                                 **k)),
    ], X.shape[0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_ones_equal_unweighted_fit_bit_for_bit(dtype):
    fits, n = _fits(dtype)
    for name, fit in fits:
        a, b = fit(), fit(sample_weight=np.ones(n), weight_bound=1.0)
        assert np.array_equal(a.w, b.w), name
        assert a.w.dtype == b.w.dtype == dtype, name
        assert (a.epsilon, a.delta, a.noise_scale, a.sensitivity, a.lr, a.steps) == \
               (b.epsilon, b.delta, b.noise_scale, b.sensitivity, b.lr, b.steps), name
        assert b.info["weight_bound"] == 1.0 and a.info["weight_bound"] is None, name


@pytest.mark.parametrize("solver", ["pgd", "gd", "sgd"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_estimators_ones_equal_unweighted(solver, dtype):
    X, y, yr, _ = _data(n=6000 if solver == "sgd" else 400, d=5, dtype=dtype)
    for est, labels in [(fe.DPLogisticRegression, y), (fe.DPLinearRegression, yr)]:
        kw = dict(random_state=5, solver="noisy_" + solver, steps=None if solver == "sgd" else 6)
        a = est(**kw).fit(X, labels)
        b = est(weight_bound=1.0, **kw).fit(X, labels, sample_weight=np.ones(X.shape[0]))
        assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
        assert (a.epsilon_, a.delta_, a.n_iter_) == (b.epsilon_, b.delta_, b.n_iter_)
    # the solver rule picks sgd here without weights too (default rule, n ≥ 5000)
    if solver == "sgd":
        assert fe.DPLogisticRegression(random_state=0).fit(X, y, sample_weight=np.ones(X.shape[0])) \
            .result_.info["solver"] == "sgd"


def test_svc_weights_and_weighted_fit_differs():
    X, y, _, sw = _data(n=300, d=4)
    a = fe.DPLinearSVC(random_state=1, steps=5).fit(X, y)
    b = fe.DPLinearSVC(random_state=1, steps=5).fit(X, y, sample_weight=np.ones(300))
    c = fe.DPLinearSVC(random_state=1, steps=5, weight_bound=2.0).fit(X, y, sample_weight=sw)
    assert np.array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)
    assert c.result_.sensitivity == pytest.approx(2.0 * a.result_.sensitivity, rel=1e-15)


# ---------------------------------------------------------------------------
# Calibrations with B = 2, against the theorems
# ---------------------------------------------------------------------------
def ref_gdp_delta(mu, eps):
    """μ-GDP → (ε, δ(ε)) (Dong, Roth & Su 2022, Cor. 2.13), in 40 digits."""
    with mp.workdps(40):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("B", [0.5, 2.0, 7.0])
def test_gaussian_calibration_scales_with_weight_bound(B):
    n, d, T, eps, delta, c = 50, 3, 8, 1.0, 1e-5, 0.4
    X = np.full((n, d), 0.1)
    sw = np.linspace(0.0, 3.0, n)
    r = fe.noisy_pgd(fe.losses.Linear(), X, None, fe.L2Ball(10.0, d), eps, delta, steps=T, noise="gaussian",
                     data_norm=1.0, clip=c, lr=0.1, random_state=0, sample_weight=sw, weight_bound=B)
    sens = 2.0 * B * c / n  # a record's weighted clipped gradient has norm ≤ B·c; replace-one doubles it
    assert r.sensitivity == pytest.approx(sens, rel=1e-15)
    mu = math.sqrt(T) * sens / r.noise_scale  # T adaptive Gaussian releases: μ-GDP (Thm 2.7)
    assert ref_gdp_delta(mu, eps) <= delta * (1 + 1e-9)
    assert ref_gdp_delta(mu * (1 + 1e-6), eps) > delta  # tight: no more noise than the theorem needs
    r1 = fe.noisy_pgd(fe.losses.Linear(), X, None, fe.L2Ball(10.0, d), eps, delta, steps=T, noise="gaussian",
                      data_norm=1.0, clip=c, lr=0.1, random_state=0, sample_weight=sw, weight_bound=1.0)
    assert r.noise_scale == pytest.approx(B * r1.noise_scale, rel=1e-12)


def test_laplace_pure_calibration_scales_with_weight_bound():
    n, d, T, eps, c, B = 20, 4, 5, 0.7, 0.25, 2.0
    X = np.full((n, d), 0.1)
    r = fe.noisy_pgd(fe.losses.Linear(), X, None, fe.L2Ball(10.0, d), eps, 0.0, steps=T, noise="laplace",
                     calibration="pure", data_norm=1.0, clip=c, lr=0.1, random_state=0,
                     sample_weight=np.ones(n), weight_bound=B)
    # Laplace mechanism with L1 sensitivity √d·Δ₂ and basic composition over T (Dwork & Roth Thm 3.6, 3.16)
    b = T * math.sqrt(d) * (2.0 * B * c / n) / eps
    assert r.noise_scale == pytest.approx(b, rel=1e-12)
    assert r.epsilon <= eps and r.delta == 0.0


def test_gd_and_sgd_calibration_scale_with_weight_bound():
    X, y, _, sw = _data(n=500, d=4)
    ball = fe.L2Ball(3.0, 4)
    for B in (1.0, 2.0):
        g = fe.noisy_gd(fe.losses.Logistic(), X, y, ball, 1.0, 1e-5, steps=5, data_norm=1.0, clip=0.3,
                        random_state=0, sample_weight=sw, weight_bound=B)
        mu = math.sqrt(5) * (2.0 * B * 0.3 / 500) / g.noise_scale
        assert ref_gdp_delta(mu, 1.0) <= 1e-5 * (1 + 1e-9) < ref_gdp_delta(mu * (1 + 1e-6), 1.0)
        # the default step is 1/β of the weighted objective, β = B·X²/4 + l2
        assert g.lr == pytest.approx(1.0 / (B * 0.25), rel=1e-15)
        s = fe.noisy_sgd(fe.losses.Logistic(), X, y, ball, 1.0, 1e-5, steps=5, sample_rate=0.1, data_norm=1.0,
                         clip=0.3, random_state=0, sample_weight=sw, weight_bound=B)
        # DP-SGD: the noise multiplier σ is relative to the contribution bound B·c
        assert s.noise_scale == pytest.approx(s.info["noise_multiplier"] * B * 0.3, rel=1e-15)
        assert s.sensitivity == pytest.approx(B * 0.3, rel=1e-15)
    s1 = fe.noisy_sgd(fe.losses.Logistic(), X, y, ball, 1.0, 1e-5, steps=5, sample_rate=0.1, data_norm=1.0,
                      clip=0.3, random_state=0, sample_weight=sw, weight_bound=1.0)
    assert s.info["noise_multiplier"] == s1.info["noise_multiplier"]


# ---------------------------------------------------------------------------
# One step on neighbouring data: the differing record with its weight at the bound
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("w0", [2.0, 50.0, math.inf])  # at the bound B = 2, and beyond it (clipped to B)
@pytest.mark.parametrize("solver", ["pgd", "gd"])
def test_one_step_difference_is_eta_times_weighted_sensitivity(w0, solver, dtype):
    n, d, B, c, lr = 4, 3, 2.0, 0.7, 0.5
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (n, d))
    X *= 0.9 / np.linalg.norm(X, axis=1, keepdims=True)
    v = np.array([3.0, -4.0, 12.0])  # beyond data_norm 1: clipped to norm 1
    X[0] = v
    X2 = X.copy()
    X2[0] = -v  # the mirror record (linear loss: gradient x, clipped at c)
    sw = np.array([w0, 0.3, 1.0, 0.5])
    kw = dict(epsilon=1.0, delta=1e-5, steps=1, noise="gaussian", data_norm=1.0, clip=c, lr=lr,
              random_state=42, sample_weight=sw, weight_bound=B)
    fit = (lambda X_: fe.noisy_pgd(fe.losses.Linear(), X_.astype(dtype), None, fe.L2Ball(1e4, d), average=False,
                                   **kw)) if solver == "pgd" else \
        (lambda X_: fe.noisy_gd(fe.losses.Linear(l2=0.0), X_.astype(dtype), None, fe.L2Ball(1e4, d), **kw))
    r, r2 = fit(X), fit(X2)
    assert r.sensitivity == pytest.approx(2.0 * B * c / n, rel=1e-15)
    diff = r.w.astype(np.float64) - r2.w.astype(np.float64)
    g = v / np.linalg.norm(v) * c  # the clipped gradient of row 0 (norm 1 > c)
    expected = -lr * (B * g - B * (-g)) / n
    tol = 8.0 * float(np.finfo(dtype).eps) * max(1.0, float(np.abs(r.w).max()), float(np.abs(r2.w).max()))
    np.testing.assert_allclose(diff, expected, rtol=0, atol=tol)
    assert np.linalg.norm(diff) == pytest.approx(lr * r.sensitivity, abs=tol * math.sqrt(d))


# ---------------------------------------------------------------------------
# Hostile weights are mapped into [0, B]; wrong shapes and methods are refused
# ---------------------------------------------------------------------------
def _pgd(X, y, **kw):
    return fe.noisy_pgd(fe.losses.Logistic(), X, y, fe.L2Ball(3.0, X.shape[1]), 1.0, 1e-5, steps=4,
                        noise="gaussian", data_norm=1.0, random_state=0, **kw)


def test_weights_are_mapped_into_the_bound_never_refused():
    X, y, _, _ = _data(n=40, d=3)
    hostile = np.array([np.nan, -3.0, np.inf, -np.inf, 1e308, 0.5] + [1.0] * 34)
    mapped = np.array([0.0, 0.0, 2.0, 0.0, 2.0, 0.5] + [1.0] * 34)
    keep = hostile.copy()
    a = _pgd(X, y, sample_weight=hostile, weight_bound=2.0)
    b = _pgd(X, y, sample_weight=mapped, weight_bound=2.0)
    assert np.array_equal(a.w, b.w) and np.isfinite(a.w).all()
    np.testing.assert_array_equal(hostile, keep)  # the caller's array is not written
    # a record of weight 0 contributes nothing: the fit equals the one with that row zeroed
    Xz = X.copy()
    Xz[0] = 0.0
    Xz[1] = 0.0
    Xz[3] = 0.0
    c = _pgd(Xz, y, sample_weight=mapped, weight_bound=2.0)
    assert np.array_equal(b.w, c.w)
    # integer and list spellings
    ints = np.ones(40, dtype=np.int64)
    assert np.array_equal(_pgd(X, y, sample_weight=ints).w, _pgd(X, y, sample_weight=[1.0] * 40).w)


@pytest.mark.parametrize("est", [fe.DPLogisticRegression, fe.DPLinearSVC, fe.DPLinearRegression])
def test_all_zero_weights_fit_like_any_other_weights(est):
    # No data-dependent error: one record's weight (0 or not) must not switch an exception on and
    # off.  With every weight 0 the data term vanishes, so the release is the same for any X, y.
    rng = np.random.default_rng(4)
    X1, X2 = rng.uniform(-0.3, 0.3, (60, 3)), rng.uniform(-0.3, 0.3, (60, 3))
    y1, y2 = (rng.random(60) < 0.5).astype(float), (rng.random(60) < 0.5).astype(float)
    kw = {"classes": [0.0, 1.0]} if est is not fe.DPLinearRegression else {}
    a = est(epsilon=1.0, random_state=3, **kw).fit(X1, y1, sample_weight=np.zeros(60))
    b = est(epsilon=1.0, random_state=3, **kw).fit(X2, y2, sample_weight=np.zeros(60))
    assert np.isfinite(a.coef_).all()
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.parametrize("bad,exc", [(np.ones(39), ValueError), (np.ones((40, 1)), ValueError),
                                     (np.ones(0), ValueError), (np.array(["a"] * 40), TypeError),
                                     (np.ones(40, dtype=complex), TypeError), (1.0, ValueError)])
def test_bad_sample_weight_shapes_name_it(bad, exc):
    X, y, _, _ = _data(n=40, d=3)
    with pytest.raises(exc, match="sample_weight"):
        _pgd(X, y, sample_weight=bad)
    with pytest.raises(exc, match="sample_weight"):
        fe.DPLogisticRegression(random_state=0).fit(X, y, sample_weight=bad)


@pytest.mark.parametrize("bound", [0.0, -1.0, math.nan, math.inf, "1"])
def test_bad_weight_bound_is_named(bound):
    X, y, _, _ = _data(n=40, d=3)
    with pytest.raises((ValueError, TypeError), match="weight_bound"):
        _pgd(X, y, sample_weight=np.ones(40), weight_bound=bound)
    with pytest.raises((ValueError, TypeError), match="weight_bound"):
        fe.DPLogisticRegression(weight_bound=bound).fit(X, y, sample_weight=np.ones(40))


@pytest.mark.parametrize("kw", [dict(solver="objpert", delta=0.0), dict(delta=0.0),
                                dict(solver="objpert_threshold", delta=0.0)])
def test_methods_without_weights_refuse_them(kw):
    X, y, _, _ = _data(n=40, d=3)
    with pytest.raises(ValueError, match="sample_weight"):
        fe.DPLogisticRegression(random_state=0, **kw).fit(X, y, sample_weight=np.ones(40))
    # without weights the same estimator fits
    fe.DPLogisticRegression(random_state=0, **kw).fit(X, y)


def test_dask_refuses_weights():
    da = pytest.importorskip("dask.array")
    X, y, _, _ = _data(n=40, d=3)
    with pytest.raises(ValueError, match="sample_weight"):
        fe.noisy_pgd(fe.losses.Logistic(), da.from_array(X, chunks=(20, 3)), da.from_array(y, chunks=20),
                     fe.L2Ball(3.0, 3), 1.0, 1e-5, steps=2, data_norm=1.0, random_state=0,
                     sample_weight=np.ones(40))


@pytest.mark.parametrize("est", [fe.DPLogisticRegression, fe.DPLinearSVC])
def test_multiclass_weights(est):
    X, _, _, sw = _data(n=300, d=5)
    yk = np.random.default_rng(8).integers(0, 3, X.shape[0])
    a = est(random_state=2, steps=6).fit(X, yk)
    b = est(random_state=2, steps=6).fit(X, yk, sample_weight=np.ones(300))
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    c = est(random_state=2, steps=6, weight_bound=2.0).fit(X, yk, sample_weight=sw)
    # Δ₂ = 2B·c/n: the noise scales with the declared bound (same T, same ε)
    assert c.result_.sensitivity == pytest.approx(2.0 * a.result_.sensitivity, rel=1e-15)
    assert c.result_.noise_scale == pytest.approx(2.0 * a.result_.noise_scale, rel=1e-12)
    assert c.result_.info["weight_bound"] == 2.0


def test_multiclass_weighted_gradient_against_reference():
    from fasterm.linear_model import _multiclass

    rng = np.random.default_rng(3)
    A = rng.normal(size=(40, 4)) / 2
    y = rng.integers(0, 3, 40)
    W = rng.normal(size=(4, 3))
    sw = rng.uniform(0, 2, 40)
    norms = np.linalg.norm(A, axis=1)
    out = np.empty((4, 3))
    _multiclass.grad_sum("logistic", A, y, W.copy(), norms, 0.3, out, sw)
    ref = np.zeros((4, 3))
    for i in range(40):
        z = A[i] @ W
        p = np.exp(z - z.max())
        p /= p.sum()
        p[y[i]] -= 1.0
        g = np.outer(A[i], p)
        g *= min(1.0, 0.3 / np.linalg.norm(g))
        ref += sw[i] * g
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-14)
