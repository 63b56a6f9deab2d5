"""The compiled multiclass step loops (``_mclosses.sgd_loop`` / ``gd_loop``, driven by
fasterm.linear_model._mcrun) against slow numpy references written out here from the rules of
fasterm.linear_model._multiclass: the same bits for a seed — float32 and float64, dense and CSR,
sample weights, with and without the intercept, both losses, Gaussian and Laplace noise,
momentum and averaging, K = 2 … 10, and on neighbouring data sets (one row replaced, one row
removed) — and the per-batch clip table against the float margin's exact rationals."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from fasterm.erm import _float_margin
from fasterm.erm.constraints import L2Ball
from fasterm.erm.losses import row_norms
from fasterm.erm.optimize import _sample_weights
from fasterm.erm.solvers import _fista
from fasterm.linear_model import _mcrun, _multiclass
from fasterm.mechanisms import _noise
from fasterm.mechanisms import noise as noise_mod


def _data(n, d, K, seed, dtype):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    X[: n // 20] *= 3.0  # some rows beyond data_norm = 1: clipped on the fly
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    return X.astype(dtype), y


def _fit(kind, X, y, K, *, solver, noise="gaussian", weights=None, fit_intercept=True, steps=25, seed=0,
         epsilon=1.0, alpha=1e-3):
    from fasterm.linear_model._plan import make_plan

    plan = make_plan(
        kind, n=X.shape[0], d=X.shape[1], n_classes=K, dtype=X.dtype, sparse=sp.issparse(X), weighted=weights is not None,
        epsilon=epsilon, delta=1e-5 if noise == "gaussian" else 0.0, data_norm=1.0, radius=3.0,
        alpha=alpha, fit_intercept=fit_intercept, intercept_scaling=0.5, solver=solver, noise=noise,
        calibration=None if noise == "gaussian" else "l2", clip=0.3, steps=steps, max_steps=None, weight_bound=2.0)
    return _multiclass.fit_multiclass(plan, X, y, random_state=seed, sample_weight=weights)


def _grad(kind, X, y, W, norms, s_col, clip, weights, rows=None):
    p, K = W.shape
    out = np.empty((p, K), dtype=W.dtype)
    _multiclass.kernel_sum(kind, X, y, W, norms, 1.0, s_col, clip, out, weights, rows)
    return out.ravel()


def _release_clip(dt, rows, dim, scale, alpha, B, momentum=False):
    """c/(1 + Θ) for a release of ``rows`` summed rows: Θ from the float margin's exact rationals
    (B the weights' bound: 2, or 1 without weights)."""
    theta = _float_margin.margin("dense", dt, rows, dim, scale=scale, bound=B * 0.3, reg=alpha, radius=3.0,
                                 momentum=momentum, theta=_multiclass.sum_theta(rows, dt))
    return _float_margin.effective_clip(0.3, theta)


def _run_clip(dt, n, q, steps, dim, scale, alpha, B, epsilon=1.0, delta=1e-5):
    """The run's one clip, from the one-sided margin's definition in exact rationals: the cap M
    (the smallest with (1 + e^ε)·T·P̄[Bin(n, q) > M] ≤ δ·2⁻²⁰), Θ₁ = M(θ + γ₃(1 + θ)) [+ M·u(1 + γ₃)(1 + θ)],
    θ = the kernel's γ_M, τ = u(1 + u)²α·2R/(s·B·c), clip = c(1 − 2τ)/(1 + 2Θ₁) rounded down."""
    f = (1 + math.exp(epsilon)) * steps
    M = max(1, math.ceil(n * q))
    while M < n and f * _float_margin.binom_tail_bound(n, q, M) > delta * 2.0 ** -20:
        M += 1
    th = _multiclass.sum_theta(M, dt)
    u = Fraction(1, 2 ** 24) if dt == np.float32 else Fraction(1, 2 ** 53)
    g3 = 3 * u / (1 - 3 * u)
    t1 = M * (th + g3 * (1 + th)) + (M * u * (1 + g3) * (1 + th) if alpha else 0)
    tau = u * (1 + u) ** 2 * Fraction(alpha) * 2 * 3 / (Fraction(scale) * Fraction(B * 0.3)) if alpha else 0
    exact = Fraction(0.3) * (1 - 2 * tau) / (1 + 2 * t1)
    out = float(exact)
    return out if Fraction(out) <= exact else math.nextafter(out, 0.0)


def _reference(kind, X, y, K, r, *, solver, noise="gaussian", weights=None, fit_intercept=True, seed=0,
               alpha=1e-3):
    """The fit written out step by step in numpy from its definition (module docstring of
    fasterm.linear_model._multiclass and fasterm.erm._engine.descend), in W's dtype."""
    dt = X.dtype
    n, d = X.shape
    p = d + fit_intercept
    dim = p * K
    s_col = 0.5 if fit_intercept else 0.0
    wts, B = _sample_weights(weights, 2.0, n)
    norms = row_norms(X)
    yi = np.asarray(y, dtype=np.int64)
    ball = L2Ball(3.0, dim)
    rng = np.random.default_rng(seed)
    T, lr = r.steps, r.lr
    w = np.zeros(dim, dtype=dt)
    if solver == "noisy_sgd":
        q = r.info["sample_rate"]
        m = q * n
        h_scale = noise_mod._scale_for(r.noise_scale / m, dt)
        iterates = []
        clip = _run_clip(dt, n, q, T, dim, 1.0 / m, alpha, B)
        for _ in range(T):
            size = int(rng.binomial(n, q))
            if size == 0:
                g = np.zeros(dim, dtype=dt)
            else:
                rows = np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n)
                g = _grad(kind, X, yi, w.reshape(p, K), norms, s_col, clip,
                          wts, rows.astype(np.int64))
            h = np.empty(dim, dtype=dt)
            _noise.gaussian_fill(rng.bit_generator, h, h_scale)
            g = g * (1.0 / m)
            if alpha:
                g = g + w * alpha
            w = ball.project((g + h) * (-lr) + w)
            iterates.append(w)
        k = max(1, math.ceil(0.5 * T))  # the average of the last ⌈T/2⌉ iterates, summed in order in double
        tail = np.zeros(dim)
        for it in iterates[T - k:]:
            tail = tail + it
        W = ball.project((tail / k).astype(dt)).reshape(p, K)
    else:
        momentum = _fista(T) if r.info["accelerate"] else None
        average = solver == "noisy_pgd"
        clip = _release_clip(dt, n, dim, 1.0 / n, alpha, B, momentum is not None)
        h_scale = noise_mod._scale_for(r.noise_scale, dt)
        fill = _noise.gaussian_fill if noise == "gaussian" else _noise.laplace_fill
        prev, acc = w.copy(), np.zeros(dim)
        for t in range(T):
            yt = w
            if momentum is not None:
                yt = w + momentum(t) * (w - prev)
                prev = w.copy()
            acc = acc + yt
            g = _grad(kind, X, yi, yt.reshape(p, K), norms, s_col, clip, wts) * (1.0 / n)
            if alpha:
                g = g + yt * alpha
            h = np.empty(dim, dtype=dt)
            fill(rng.bit_generator, h, h_scale)
            w = ball.project((g + h) * (-lr) + yt)
        W = (ball.project((acc / T).astype(dt)) if average else w).reshape(p, K)
    coef = W[:d].T
    intercept = W[d] * 0.5 if fit_intercept else np.zeros(K, dtype=dt)
    return coef, intercept


def _check(kind, X, y, K, *, solver, noise="gaussian", weights=None, fit_intercept=True, seed=0, steps=25,
           alpha=1e-3):
    coef, intercept, r = _fit(kind, X, y, K, solver=solver, noise=noise, weights=weights,
                              fit_intercept=fit_intercept, steps=steps, seed=seed, alpha=alpha)
    assert r.info["solver"] == solver.removeprefix("noisy_")
    ref_coef, ref_intercept = _reference(kind, X, y, K, r, solver=solver, noise=noise, weights=weights,
                                         fit_intercept=fit_intercept, seed=seed, alpha=alpha)
    assert coef.dtype == X.dtype and np.any(coef != 0)
    np.testing.assert_array_equal(coef, ref_coef)
    np.testing.assert_array_equal(intercept, ref_intercept.astype(X.dtype))
    return coef


def _neighbours(X, y, K, which):
    if which == "same":
        return X, y
    if which == "replace":
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = -X[0] * 2.0, (y[0] + 1) % K
        return X2, y2
    return X[1:].copy(), y[1:].copy()  # one row removed


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("K", [2, 3, 10])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("which", ["same", "replace", "remove"])
def test_sgd_matches_the_numpy_reference(dtype, K, weighted, fit_intercept, which):
    X, y = _data(1500, 6, K, 1, dtype)
    X, y = _neighbours(X, y, K, which)
    weights = np.random.default_rng(2).uniform(0.0, 3.0, X.shape[0]) if weighted else None
    _check("logistic", X, y, K, solver="noisy_sgd", weights=weights, fit_intercept=fit_intercept, seed=K)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("K", [2, 4, 10])
@pytest.mark.parametrize("kind, solver", [("logistic", "noisy_gd"), ("logistic", "noisy_pgd"),
                                          ("hinge", "noisy_pgd")])
@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("weighted", [False, True])
def test_gd_matches_the_numpy_reference(dtype, K, kind, solver, noise, weighted):
    X, y = _data(300, 5, K, 3, dtype)
    weights = np.random.default_rng(4).uniform(0.0, 3.0, X.shape[0]) if weighted else None
    _check(kind, X, y, K, solver=solver, noise=noise, weights=weights, fit_intercept=K != 4, seed=K, steps=15)


@pytest.mark.parametrize("which", ["same", "replace", "remove"])
def test_gd_with_momentum_matches_the_numpy_reference(which):
    # a large ε: noise below the acceleration threshold, so the GD rule uses FISTA's momentum
    for dtype in (np.float64, np.float32):
        X, y = _data(400, 5, 3, 5, dtype)
        X, y = _neighbours(X, y, 3, which)
        coef, intercept, r = _fit("logistic", X, y, 3, solver="noisy_gd", epsilon=1e4, steps=20)
        assert r.info["accelerate"]
        ref, ref_intercept = _reference("logistic", X, y, 3, r, solver="noisy_gd")
        np.testing.assert_array_equal(coef, ref)
        np.testing.assert_array_equal(intercept, ref_intercept.astype(dtype))


@pytest.mark.parametrize("solver", ["noisy_sgd", "noisy_gd", "noisy_pgd"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_csr_matches_the_numpy_reference(solver, dtype, index):
    """A CSR X (int32 or int64 indices): the reference's bits (its kernel is the CSR kernel, whose
    order of summation is not the dense kernel's), and the dense fit up to rounding."""
    X, y = _data(1200 if solver == "noisy_sgd" else 300, 8, 4, 6, dtype)
    X[np.abs(X) < 0.3] = 0.0
    kind = "hinge" if solver == "noisy_pgd" else "logistic"
    A = sp.csr_matrix(X)
    A.indices, A.indptr = A.indices.astype(index), A.indptr.astype(index)
    weights = np.random.default_rng(4).uniform(0.0, 3.0, X.shape[0])
    coef = _check(kind, A, y, 4, solver=solver, weights=weights)
    dense = _fit(kind, X, y, 4, solver=solver, weights=weights)[0]
    np.testing.assert_allclose(coef, dense, rtol=1e-4 if dtype == np.float32 else 1e-9, atol=1e-6)


@pytest.mark.parametrize("solver", ["noisy_sgd", "noisy_gd"])
def test_compiled_and_numpy_loops_of_the_package_agree(solver, monkeypatch):
    X, y = _data(1500, 6, 5, 7, np.float32)
    w = np.random.default_rng(8).uniform(0.0, 3.0, X.shape[0])
    compiled = _fit("logistic", X, y, 5, solver=solver, weights=w)
    monkeypatch.setattr(_mcrun, "COMPILED", False)
    numpy_loop = _fit("logistic", X, y, 5, solver=solver, weights=w)
    for a, b in zip(compiled[:2], numpy_loop[:2]):
        np.testing.assert_array_equal(a, b)


def test_one_compiled_call_with_one_clip(monkeypatch):
    """One clip for every batch size: one compiled call (no restart) with the run's one clip, the
    reference's bits."""
    calls = []
    real = _mcrun._mclosses.sgd_loop

    def spy(*args):
        calls.append(args[12])
        return real(*args)

    monkeypatch.setattr(_mcrun._mclosses, "sgd_loop", spy)
    X, y = _data(1500, 6, 3, 9, np.float64)
    _check("logistic", X, y, 3, solver="noisy_sgd")
    assert len(calls) == 1 and type(calls[0]) is float and calls[0] > 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("alpha, radius", [(0.0, 3.0), (1e-3, 3.0), (0.5, 50.0)])
def test_run_clip_with_the_multiclass_theta(dtype, alpha, radius):
    """run_clip with θ = the multiclass kernel's γ_M against the one-sided formula in exact rationals,
    c(1 − 2τ)/(1 + 2Θ₁(M)), and below the two-sided clip of M rows; γ_m grows with m, so θ(M)
    bounds θ(m) for every m ≤ M."""
    dim, c, bound, scale = 33, 0.37, 0.74, 1.0 / 130.0
    v = _float_margin.unit_roundoff(dtype)
    g3 = _float_margin.gamma(3, v)
    for M in (1, 2, 59, 128, 1000, 65_537):
        th = _multiclass.sum_theta(M, dtype)
        assert all(_multiclass.sum_theta(m, dtype) <= th for m in (1, M // 2, M - 1) if m >= 1)
        got = _float_margin.run_clip(c, dtype, M, dim, scale=scale, bound=bound, reg=alpha, radius=radius, theta=th)
        t1 = M * (th + g3 * (1 + th)) + (M * v * (1 + g3) * (1 + th) if alpha > 0 else 0)
        tau = v * (1 + v) ** 2 * Fraction(alpha) * 2 * Fraction(radius) / (Fraction(scale) * Fraction(bound))
        exact = Fraction(c) * (1 - 2 * tau) / (1 + 2 * t1)
        assert Fraction(got) <= exact and Fraction(math.nextafter(got, 1.0)) > exact
        two_sided = _float_margin.effective_clip(c, _float_margin.margin(
            "dense", dtype, M, dim, scale=scale, bound=bound, reg=alpha, radius=radius, theta=th))
        assert got < two_sided


def test_run_clip_raises_as_margin_does():
    with pytest.raises(_float_margin.MarginTooLarge):
        _float_margin.run_clip(1e-6, np.float32, 5, 10, scale=1.0, bound=1e-6, reg=10.0, radius=1e6,
                               theta=Fraction(0))
    with pytest.raises(_float_margin.MarginTooLarge):
        _float_margin.run_clip(0.3, np.float64, 5, 10, scale=1.0, bound=0.3, reg=1.0, radius=math.inf,
                               theta=Fraction(0))




def test_compiled_loops_refuse_bad_scale_and_clip():
    """A zero noise scale would release a noiseless w (as a reviewer showed); a zero, negative,
    infinite or NaN scale or clip raises before any step, in both multiclass loops."""
    X, y = _data(40, 3, 2, 0, np.float64)
    yi = np.asarray(y, dtype=np.int64)
    bg = np.random.default_rng(0).bit_generator
    code = _multiclass._KIND_CODE["logistic"]
    dim = 4 * 2
    data = _mcrun._data(X)

    def sgd(scale, clip):
        w = np.zeros(dim)
        _mcrun._mclosses.sgd_loop(code, w, 2, *data, yi, None, 1.0, 0.5, clip, 3, 1, 0.5, 0.05,
                                  0.1, 0.0, scale, bg, 3.0, np.zeros(dim), None)
        return w

    def gd(scale, clip):
        w = np.zeros(dim)
        _mcrun._mclosses.gd_loop(code, w, 2, *data, yi, None, 1.0, 0.5, clip, 3, 0.1, 0.0,
                                 _mcrun._mclosses.NOISE_GAUSSIAN, scale, bg, 3.0, None, None, None)
        return w

    for loop in (sgd, gd):
        assert np.any(loop(1.0, 0.3) != 0)  # the arguments are otherwise valid
        for bad in (0.0, -1.0, math.inf, math.nan):
            with pytest.raises(ValueError, match="scale"):
                loop(bad, 0.3)
            with pytest.raises(ValueError, match="clip"):
                loop(1.0, bad)
