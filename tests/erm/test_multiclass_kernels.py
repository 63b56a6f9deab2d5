"""The compiled multiclass kernels (fasterm.erm._mclosses, src/cpp/fasterm/multiclass.hpp) against a slow,
obviously correct per-row reference: dense and CSR, float32 and float64, sample weights, row subsets,
the design built on the fly (row clipping to data_norm, the intercept column), and the checks that keep
the kernels inside their buffers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from fasterm.erm import _mclosses

KINDS = {"logistic": _mclosses.LOGISTIC, "hinge": _mclosses.HINGE}


def reference(kind, X, y, W, data_norm, s, clip, weights=None, rows=None):
    """Σ_i w_i·clip_c(a_i u_iᵀ) one row at a time in float64 (exact rationals would be slower, not clearer).

    a_i = (x_i·min(1, X/‖x_i‖), s) (s = 0: no column); u_i = softmax(Wᵀa_i) − e_y or the
    Crammer–Singer subgradient e_j − e_y (j the first maximiser of z_k + [k ≠ y], 0 if j = y).
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    X, W = X.astype(np.float64), W.astype(np.float64)
    K = W.shape[1]
    out = np.zeros_like(W)
    for i in (range(X.shape[0]) if rows is None else rows):
        x = X[i]
        nx = math.sqrt(sum(v * v for v in x))
        if data_norm > 0 and nx > data_norm:
            x = x * (data_norm / nx)
        a = np.append(x, s) if s > 0 else x
        z = np.array([sum(a[j] * W[j, k] for j in range(a.size)) for k in range(K)])
        e = np.zeros(K)
        e[y[i]] = 1.0
        if kind == "logistic":
            p = np.exp(z - z.max())
            u = p / p.sum() - e
        else:
            t = z + 1.0 - e
            j = int(np.argmax(t))
            u = np.zeros(K)
            if j != y[i]:
                u[j], u[y[i]] = 1.0, -1.0
        g = np.outer(a, u)
        gn = math.sqrt((g * g).sum())
        f = 1.0 if clip <= 0 or gn <= clip else clip / gn
        out += (f * (1.0 if weights is None else weights[i])) * g
    return out


def problem(n=37, d=7, K=5, dtype=np.float64, seed=0, density=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 0.8, (n, 1))  # some rows above data_norm 1, most below
    X[::5] *= 4.0
    if density is not None:
        X[rng.random((n, d)) > density] = 0.0
    y = rng.integers(0, K, n).astype(np.int64)
    return X.astype(dtype), y


def run(kind, X, y, W, data_norm, s, clip, weights=None, rows=None, norms=True):
    out = np.full(W.shape, np.nan, dtype=W.dtype)
    nr = None
    if norms:
        Xd = X.toarray() if sp.issparse(X) else X
        nr = np.linalg.norm(Xd.astype(np.float64), axis=1)
    if sp.issparse(X):
        _mclosses.csr_grad_sum(KINDS[kind], X.data, X.indices, X.indptr, X.shape[1], y, W, nr, data_norm, s, clip,
                               out, weights, rows)
    else:
        _mclosses.grad_sum(KINDS[kind], X, y, W, nr, data_norm, s, clip, out, weights, rows)
    return out


def _tol(dtype, ref):
    # float64: rounding of the double sums; float32: one rounding of the double accumulator to float
    rt = 1e-11 if dtype == np.float64 else 2e-7
    return dict(rtol=rt, atol=rt * np.abs(ref).max() + 1e-300)


@pytest.mark.parametrize("kind", ["logistic", "hinge"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", ["dense", "csr32", "csr64"])
@pytest.mark.parametrize("s", [0.0, 0.25])
@pytest.mark.parametrize("clip", [0.0, 0.05, 0.3])  # none / binding for most rows / for some
def test_matches_reference(kind, dtype, layout, s, clip):
    X, y = problem(dtype=dtype, density=None if layout == "dense" else 0.5)
    rng = np.random.default_rng(3)
    K, p = 5, X.shape[1] + (s > 0)
    W = (rng.normal(size=(p, K)) * 4.0).astype(dtype)  # margins on both sides of the hinge's kink
    if layout != "dense":
        X = sp.csr_matrix(X)
        idx = np.int32 if layout == "csr32" else np.int64
        X.indices, X.indptr = X.indices.astype(idx), X.indptr.astype(idx)
    ref = reference(kind, X, y, W, 1.0, s, clip)
    for norms in (True, False):  # cached norms, or computed in the pass
        out = run(kind, X, y, W, 1.0, s, clip, norms=norms)
        assert out.dtype == dtype
        np.testing.assert_allclose(out, ref, **_tol(dtype, ref))
    if kind == "hinge":  # both sides of the kink are exercised
        Xd = X.toarray() if sp.issparse(X) else X
        nr = np.linalg.norm(Xd.astype(np.float64), axis=1, keepdims=True)
        A = Xd * np.minimum(1.0, 1.0 / np.maximum(nr, 1e-300))
        A = np.hstack([A, np.full((A.shape[0], 1), s)]) if s > 0 else A
        Z = A @ W.astype(np.float64)
        t = Z + 1.0 - np.eye(K)[y]
        active = t.argmax(axis=1) != y
        assert active.any() and (~active).any()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_weights_and_row_subsets(dtype, layout):
    X, y = problem(n=50, dtype=dtype, seed=4, density=None if layout == "dense" else 0.6)
    rng = np.random.default_rng(5)
    W = (rng.normal(size=(X.shape[1] + 1, 5)) * 0.5).astype(dtype)
    wts = rng.uniform(0.0, 2.0, 50)
    wts[3] = 0.0
    rows = np.array([4, 4, 0, 49, 17, 3, 22], dtype=np.int64)  # repeats count twice, any order
    if layout == "csr":
        X = sp.csr_matrix(X)
    for kind in KINDS:
        ref = reference(kind, X, y, W, 1.0, 0.25, 0.2, wts, rows)
        out = run(kind, X, y, W, 1.0, 0.25, 0.2, wts, rows)
        np.testing.assert_allclose(out, ref, **_tol(dtype, ref))
        # a subset equals the full sum over the gathered rows
        Xs = X[rows]
        full = run(kind, Xs, y[rows], W, 1.0, 0.25, 0.2, wts[rows])
        np.testing.assert_allclose(out, full, **_tol(dtype, ref))
        # weights of 1 give the unweighted bits
        np.testing.assert_array_equal(run(kind, X, y, W, 1.0, 0.25, 0.2, np.ones(50)),
                                      run(kind, X, y, W, 1.0, 0.25, 0.2))
    empty = run("logistic", X, y, W, 1.0, 0.25, 0.2, rows=np.empty(0, dtype=np.int64))
    np.testing.assert_array_equal(empty, np.zeros_like(W))


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_float32_is_the_double_computation_rounded_once(layout):
    """Every product of two floats is exact in double and the sums are in double: the float32 kernel
    computes the float64 kernel's accumulator on the same values, rounded to float once at the end."""
    X, y = problem(n=200, d=30, K=10, dtype=np.float32, seed=6, density=None if layout == "dense" else 0.3)
    W = (np.random.default_rng(7).normal(size=(31, 10)) * 0.5).astype(np.float32)
    X64 = X.astype(np.float64)
    if layout == "csr":
        X, X64 = sp.csr_matrix(X), sp.csr_matrix(X64)
    for kind in KINDS:
        for norms in (True, False):
            o32 = run(kind, X, y, W, 1.0, 0.25, 0.1, norms=norms)
            o64 = run(kind, X64, y, W.astype(np.float64), 1.0, 0.25, 0.1, norms=norms)
            np.testing.assert_array_equal(o32, o64.astype(np.float32))


def test_clipped_gradient_norm_is_at_most_clip():
    """Each row's contribution has Frobenius norm ≤ c (to rounding), and equals c where the clip binds."""
    X, y = problem(n=30, d=6, K=4, seed=8)
    W = np.random.default_rng(9).normal(size=(7, 4)) * 3.0
    for kind in KINDS:
        norms = [np.linalg.norm(run(kind, X[i:i + 1], y[i:i + 1], W, 1.0, 0.25, 0.1)) for i in range(30)]
        free = [np.linalg.norm(run(kind, X[i:i + 1], y[i:i + 1], W, 1.0, 0.25, 0.0)) for i in range(30)]
        for a, b in zip(norms, free):
            assert a <= 0.1 * (1 + 1e-12)
            assert a == pytest.approx(min(b, 0.1), rel=1e-12, abs=1e-300)
        assert max(free) > 0.1 > min(free)  # the clip binds for some rows, not for others


def test_extreme_scores_do_not_overflow():
    X, y = problem(n=20, d=4, K=3, seed=10)
    W = np.random.default_rng(11).normal(size=(5, 3)) * 1e6
    out = run("logistic", X, y, W, 1.0, 0.25, 0.5)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, reference("logistic", X, y, W, 1.0, 0.25, 0.5), rtol=1e-9, atol=1e-12)


def test_hinge_ties_take_the_first_maximiser():
    # W = 0: every score is 0, so z_k + [k != y] is 1 for every k != y: j = the first k != y
    X = np.array([[0.3, 0.4], [0.1, 0.0]])
    y = np.array([0, 2], dtype=np.int64)
    W = np.zeros((2, 3))
    out = run("hinge", X, y, W, 0.0, 0.0, 0.0)
    expect = np.outer(X[0], [-1.0, 1.0, 0.0]) + np.outer(X[1], [1.0, 0.0, -1.0])
    np.testing.assert_array_equal(out, expect)


def test_bad_inputs_raise_before_or_instead_of_reading_out_of_bounds():
    X, y = problem(n=10, d=3, K=4)
    W = np.zeros((4, 4))
    out = np.empty_like(W)
    g = _mclosses.grad_sum
    with pytest.raises(ValueError, match="class index"):
        g(0, X, np.where(np.arange(10) == 3, 4, y), W, None, 1.0, 0.25, 0.1, out)
    with pytest.raises(ValueError, match="class index"):
        g(0, X, np.where(np.arange(10) == 3, -1, y), W, None, 1.0, 0.25, 0.1, out)
    with pytest.raises(ValueError, match="row index"):
        g(0, X, y, W, None, 1.0, 0.25, 0.1, out, None, np.array([0, 10], dtype=np.int64))
    with pytest.raises(ValueError, match="W has 4 rows"):
        g(0, X, y, W, None, 1.0, 0.0, 0.1, out)
    with pytest.raises(ValueError, match="out has shape"):
        g(0, X, y, W, None, 1.0, 0.25, 0.1, np.empty((4, 3)))
    with pytest.raises(ValueError, match="y must have"):
        g(0, X, y[:5], W, None, 1.0, 0.25, 0.1, out)
    with pytest.raises(ValueError, match="row norms"):
        g(0, X, y, W, np.ones(3), 1.0, 0.25, 0.1, out)
    with pytest.raises(ValueError, match="weights"):
        g(0, X, y, W, None, 1.0, 0.25, 0.1, out, np.ones(3))
    with pytest.raises(ValueError, match="kind"):
        g(7, X, y, W, None, 1.0, 0.25, 0.1, out)
    with pytest.raises(ValueError, match="intercept"):
        g(0, X, y, W, None, 1.0, -1.0, 0.1, out)
    with pytest.raises(ValueError, match="at least 2"):
        g(0, X, np.zeros(10, dtype=np.int64), np.zeros((4, 1)), None, 1.0, 0.25, 0.1, np.empty((4, 1)))
    C = sp.csr_matrix(X)
    with pytest.raises(ValueError, match="column index"):
        bad = C.indices.copy()
        bad[2] = 3
        _mclosses.csr_grad_sum(0, C.data, bad, C.indptr, 3, y, W, None, 1.0, 0.25, 0.1, out)
    with pytest.raises(ValueError, match="indptr"):
        ip = C.indptr.copy()
        ip[-1] += 1
        _mclosses.csr_grad_sum(0, C.data, C.indices, ip, 3, y, W, None, 1.0, 0.25, 0.1, out)


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_rows_far_beyond_the_data_norm_keep_finite_scores(layout):
    """x·W overflows for a row of norm ~1e300, its clipped row's scores do not: the kernel
    recomputes them from the scaled row (the design row is what the gradient is of)."""
    X, y = problem(n=12, d=4, K=3, seed=12)
    X[2] = [1e300, -1e300, 1e300, 0.0]
    X[5] = [1e305, 1e305, 1e305, 1e305]
    W = np.random.default_rng(13).normal(size=(5, 3)) * 2.0
    norms = np.array([np.linalg.norm(r / np.abs(r).max()) * np.abs(r).max() if np.abs(r).max() else 0.0 for r in X])
    Xs = X * np.minimum(1.0, 1.0 / norms)[:, None]  # the clipped rows, built in Python
    A = sp.csr_matrix(X) if layout == "csr" else X
    for kind in KINDS:
        out = np.empty_like(W)
        if layout == "csr":
            _mclosses.csr_grad_sum(KINDS[kind], A.data, A.indices, A.indptr, 4, y, W, norms, 1.0, 0.25, 0.3, out)
        else:
            _mclosses.grad_sum(KINDS[kind], A, y, W, norms, 1.0, 0.25, 0.3, out)
        assert np.isfinite(out).all()
        np.testing.assert_allclose(out, reference(kind, Xs, y, W, 1.0, 0.25, 0.3), rtol=1e-9, atol=1e-12)
