"""The compiled multiclass step loops (``_mclosses.sgd_loop`` / ``gd_loop``, driven by
fasterm.linear_model._mcrun) against slow numpy references written out here from the rules of
fasterm.linear_model._multiclass: the same bits for a seed — float32 and float64, dense and CSR,
sample weights, with and without the intercept, both losses, Gaussian and Laplace noise,
momentum and averaging, K = 2 … 10, and on neighbouring data sets (one row replaced, one row
removed) — and the per-batch clip table against the float margin's exact rationals."""

from __future__ import annotations

import math

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
    return _multiclass.fit_multiclass(
        kind, X, y, K, epsilon=epsilon, delta=1e-5 if noise == "gaussian" else 0.0, data_norm=1.0, radius=3.0,
        alpha=alpha, fit_intercept=fit_intercept, intercept_scaling=0.5, solver=solver, noise=noise,
        calibration=None if noise == "gaussian" else "l2", clip=0.3, steps=steps, max_steps=None,
        random_state=seed, sample_weight=weights, weight_bound=2.0)


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
        for _ in range(T):
            size = int(rng.binomial(n, q))
            if size == 0:
                g = np.zeros(dim, dtype=dt)
            else:
                rows = np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n)
                g = _grad(kind, X, yi, w.reshape(p, K), norms, s_col, _release_clip(dt, size, dim, 1.0 / m, alpha, B),
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


def test_batch_outside_the_clip_table_restarts_to_the_same_bits(monkeypatch):
    """A table 0.01 standard deviations wide: most batches fall outside it, the table grows and the
    compiled run starts again from its saved state — the same result as the reference."""
    calls = []
    real = _mcrun._mclosses.sgd_loop

    def spy(*args):
        out = real(*args)
        calls.append(out)
        return out

    monkeypatch.setattr(_mcrun, "CLIP_TABLE_SDS", 0.01)
    monkeypatch.setattr(_mcrun._mclosses, "sgd_loop", spy)
    X, y = _data(1500, 6, 3, 9, np.float64)
    _check("logistic", X, y, 3, solver="noisy_sgd")
    assert len(calls) > 2 and calls[-1] == 0 and all(c > 0 for c in calls[:-1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("alpha, radius", [(0.0, 3.0), (1e-3, 3.0), (0.5, 50.0)])
def test_clip_table_is_effective_clip_of_margin(dtype, alpha, radius):
    """clip_table's integer arithmetic against effective_clip(c, margin(...)) in exact rationals,
    with θ the multiclass kernel's sum_theta, for every size of a range and a few far ones."""
    dim, c, bound, scale = 33, 0.37, 0.74, 1.0 / 130.0
    sizes = list(range(1, 60)) + [127, 128, 1000, 65_537, 10 ** 7]
    for m in sizes:
        got = _mcrun.clip_table(c, dtype, m, m, dim, scale=scale, bound=bound, reg=alpha, radius=radius)[0]
        theta = _float_margin.margin("dense", dtype, m, dim, scale=scale, bound=bound, reg=alpha, radius=radius,
                                     theta=_multiclass.sum_theta(m, dtype))
        assert got == _float_margin.effective_clip(c, theta), m
    table = _mcrun.clip_table(c, dtype, 100, 160, dim, scale=scale, bound=bound, reg=alpha, radius=radius)
    assert np.all(np.diff(table) < 0)  # more rows summed, more rounding, a smaller clip
    for m, v in zip(range(100, 161), table):
        assert v == _mcrun.clip_table(c, dtype, m, m, dim, scale=scale, bound=bound, reg=alpha, radius=radius)[0]


def test_clip_table_raises_as_margin_does():
    with pytest.raises(_float_margin.MarginTooLarge):
        _mcrun.clip_table(1e-6, np.float32, 1, 5, 10, scale=1.0, bound=1e-6, reg=10.0, radius=1e6)
    with pytest.raises(_float_margin.MarginTooLarge):
        _mcrun.clip_table(0.3, np.float64, 1, 5, 10, scale=1.0, bound=0.3, reg=1.0, radius=math.inf)
