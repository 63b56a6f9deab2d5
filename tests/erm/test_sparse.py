"""scipy.sparse CSR input: the compiled CSR kernels (fasterm.erm._sparse) and the fits that use them.

The CSR kernel reuses the per-row calculus of the dense kernel (losses.hpp's
coefficients: row scale, label map, derivative, clip, sample weight) but sums
each row's dot product and norm over its stored values only, in double, in
storage order, and accumulates in double: its bits may differ from the dense
kernel's by rounding.  So the checks are

* the CSR gradient sum and row norms against a slow per-row Python reference
  (to 1e-12 relative in float64) and against the dense kernel on the
  densified matrix;
* every fit (noisy_pgd, noisy_gd, noisy_sgd, the estimators, sample weights,
  secure mode) on a CSR X against the same fit on ``X.toarray()`` with the same
  seed: the same noise, a released model equal to 1e-12 relative (float64);
* bit-for-bit reproducibility across thread counts, memory safety against
  malformed CSR arrays, and the refusals that name X.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")

import fasterm as fe  # noqa: E402
from fasterm.erm import _losses, _sparse  # noqa: E402

# _csr draws rows beyond data_norm and labels beyond label_bound on purpose (the clipping is
# part of each comparison): the estimators' clipping warnings are expected here
pytestmark = pytest.mark.filterwarnings("ignore:.*have a norm above data_norm:fasterm.DataWarning",
                                        "ignore:.*have \\|y\\| > label_bound:fasterm.DataWarning")

KINDS = {"logistic": _losses.LOGISTIC, "hinge": _losses.HINGE, "squared": _losses.SQUARED,
         "absolute": _losses.ABSOLUTE, "linear": _losses.LINEAR}


def _csr(n=300, d=40, density=0.1, dtype=np.float64, index=np.int32, seed=0, empty_rows=True):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", dtype=np.float64, random_state=seed,
                  data_rvs=lambda k: rng.normal(size=k))
    X = X.multiply(rng.uniform(0.3, 4.0, size=(n, 1))).tocsr()  # some rows beyond data_norm 1
    if empty_rows:
        X = sp.vstack([X[:5], sp.csr_matrix((3, d)), X[5:]]).tocsr()
    X = X.astype(dtype)
    X.indices = X.indices.astype(index)
    X.indptr = X.indptr.astype(index)
    m = X.shape[0]
    y = np.where(rng.uniform(size=m) < 0.5, 1.0, -1.0).astype(dtype)
    yr = (rng.normal(size=m) * 1.5).astype(dtype)
    return X, y, yr


def _deriv(kind, z, y, ybound):
    if kind == "logistic":
        return -y / (1.0 + math.exp(y * z))
    if kind == "hinge":
        return -y if y * z < 1.0 else 0.0
    if kind in ("squared", "absolute"):
        yc = min(max(y, -ybound), ybound)
        return 2.0 * (z - yc) if kind == "squared" else float(z > yc) - float(z < yc)
    return 1.0


def ref_grad_sum(kind, X, y, w, data_norm, clip, ybound, weights=None):
    """Σ_i weight_i · clip_c(∇ℓ(w; s_i x_i, y_i)) row by row in double, from the stored values."""
    out = np.zeros(X.shape[1])
    X = X.tocsr()
    for i in range(X.shape[0]):
        cols = X.indices[X.indptr[i]:X.indptr[i + 1]]
        vals = X.data[X.indptr[i]:X.indptr[i + 1]].astype(np.float64)
        nx = math.sqrt(float(vals @ vals))
        s = min(1.0, data_norm / nx) if nx > 0 and data_norm > 0 else 1.0
        z = s * float(vals @ w[cols].astype(np.float64))
        yi = 0.0 if y is None else (1.0 if y[i] > 0 else -1.0) if kind in ("logistic", "hinge") else float(y[i])
        a = _deriv(kind, z, yi, ybound) * s
        if clip > 0 and abs(a) * nx > clip:
            a = math.copysign(clip / nx, a)
        out[cols] += (1.0 if weights is None else weights[i]) * a * vals
    return out


@pytest.mark.parametrize("index", [np.int32, np.int64], ids=["i32", "i64"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_csr_grad_sum_against_reference_and_dense_kernel(kind, dtype, index):
    X, y, yr = _csr(dtype=dtype, index=index)
    yy = None if kind == "linear" else (yr if kind in ("squared", "absolute") else y)
    w = (np.random.default_rng(1).normal(size=X.shape[1]) * 0.5).astype(dtype)
    sw = np.random.default_rng(2).uniform(0, 2, X.shape[0])
    tol = 1e-12 if dtype == np.float64 else 3e-5
    for dn, c, weights in [(1.0, 0.4, None), (0.0, 0.0, None), (2.0, 0.0, sw), (0.0, 0.3, sw)]:
        out = np.empty(X.shape[1], dtype=dtype)
        _sparse.grad_sum(KINDS[kind], X.data, X.indices, X.indptr, X.shape[1], yy, w, None, dn, c, 1.2, out, 2,
                         weights)
        ref = ref_grad_sum(kind, X, yy, w, dn, c, 1.2, weights)
        scale = max(np.abs(ref).max(), 1e-300)
        np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * scale)
        dense = np.empty_like(out)
        _losses.grad_sum(KINDS[kind], X.toarray(), yy, w, None, dn, c, 1.2, dense, 2, weights)
        np.testing.assert_allclose(out, dense, rtol=tol, atol=tol * scale)
        # cached norms give the bits of norms computed in the pass
        norms = fe.losses.row_norms(X)
        cached = np.empty_like(out)
        _sparse.grad_sum(KINDS[kind], X.data, X.indices, X.indptr, X.shape[1], yy, w, norms, dn, c, 1.2, cached, 2,
                         weights)
        assert np.array_equal(out, cached)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_csr_row_norms_and_loss_grad_sum(dtype):
    X, y, _ = _csr(dtype=dtype)
    ref = np.linalg.norm(X.toarray().astype(np.float64), axis=1)
    np.testing.assert_allclose(fe.losses.row_norms(X), ref, rtol=1e-15, atol=0)
    # the public loss method takes CSR too, and equals its dense result to rounding
    w = np.linspace(-1, 1, X.shape[1]).astype(dtype)
    a = fe.losses.Logistic().grad_sum(w, X, y, clip=0.3, data_norm=1.0)
    b = fe.losses.Logistic().grad_sum(w, X.toarray(), y, clip=0.3, data_norm=1.0)
    np.testing.assert_allclose(a, b, rtol=1e-12 if dtype == np.float64 else 3e-5, atol=1e-12 * np.abs(b).max())
    # huge values: the norm does not overflow (rescaled path)
    H = sp.csr_matrix(np.array([[1e300, 0.0, 1e300], [0.0, 3.0, 4.0]]))
    np.testing.assert_allclose(fe.losses.row_norms(H), [math.sqrt(2) * 1e300, 5.0], rtol=1e-15)


def test_csr_kernel_same_bits_for_any_thread_count():
    X, y, _ = _csr(n=40_000, d=300, density=0.02, seed=3, empty_rows=False)
    w = np.linspace(-1, 1, 300)
    outs = []
    for nt in (1, 2, 5):
        out = np.empty(300)
        _sparse.grad_sum(_losses.LOGISTIC, X.data, X.indices, X.indptr, 300, y, w, None, 1.0, 0.3, math.inf, out, nt)
        outs.append(out)
    assert all(np.array_equal(outs[0], o) for o in outs[1:])


def test_malformed_csr_arrays_raise_instead_of_reading_out_of_bounds():
    X, y, _ = _csr(n=20, d=6)
    w, out = np.zeros(6), np.empty(6)
    bad = X.indices.copy()
    bad[3] = 6
    with pytest.raises(ValueError, match="column indices"):
        _sparse.grad_sum(_losses.LOGISTIC, X.data, bad, X.indptr, 6, y, w, None, 1.0, 1.0, math.inf, out)
    bad[3] = -1
    with pytest.raises(ValueError, match="column indices"):
        _sparse.grad_sum(_losses.LOGISTIC, X.data, bad, X.indptr, 6, y, w, None, 1.0, 1.0, math.inf, out)
    ptr = X.indptr.copy()
    ptr[-1] += 5  # past the end of data
    with pytest.raises(ValueError, match="indptr"):
        _sparse.grad_sum(_losses.LOGISTIC, X.data, X.indices, ptr, 6, y, w, None, 1.0, 1.0, math.inf, out)
    ptr = X.indptr.copy()
    ptr[5] = ptr[4] - 1  # a decreasing offset
    with pytest.raises(ValueError, match="indptr"):
        _sparse.row_norms(X.data, X.indices, ptr, 6, np.empty(20))
    with pytest.raises(ValueError, match="y has"):
        _sparse.grad_sum(_losses.LOGISTIC, X.data, X.indices, X.indptr, 6, y[:-1], w, None, 1.0, 1.0, math.inf, out)
    with pytest.raises(ValueError, match="weights"):
        _sparse.grad_sum(_losses.LOGISTIC, X.data, X.indices, X.indptr, 6, y, w, None, 1.0, 1.0, math.inf, out, 1,
                         np.ones(3))


# ---------------------------------------------------------------------------
# Fits: a CSR X gives the dense fit for the same seed (to rounding)
# ---------------------------------------------------------------------------
def _close(a, b, dtype):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    rtol = 1e-12 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.abs(b).max())))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_solvers_csr_equal_dense(dtype):
    X, y, yr = _csr(n=400, d=30, dtype=dtype)
    D = X.toarray()
    d = X.shape[1]
    ball = fe.L2Ball(5.0, d)
    sw = np.random.default_rng(4).uniform(0, 2, X.shape[0])
    L = fe.losses
    cases = [
        lambda A: fe.noisy_pgd(L.Logistic(l2=1e-3), A, y, ball, 1.0, 1e-5, steps=8, noise="gaussian", data_norm=1.0,
                               clip=0.3, random_state=3),
        lambda A: fe.noisy_pgd(L.Hinge(), A, y, fe.Box(-1.0, 1.0, d), 1.0, 0.0, steps=6, data_norm=1.0,
                               random_state=3),
        lambda A: fe.noisy_pgd(L.Squared(), A, yr, ball, 2.0, 1e-5, steps=5, noise="gaussian", data_norm=1.0,
                               label_bound=1.0, random_state=3, sample_weight=sw, weight_bound=2.0),
        lambda A: fe.noisy_gd(L.Logistic(), A, y, ball, 1.0, 1e-5, steps=6, data_norm=1.0, random_state=3,
                              accelerate=True),
        lambda A: fe.noisy_gd(L.Squared(), A, yr, ball, 1.0, 1e-5, steps=6, data_norm=1.0, label_bound=1.0,
                              random_state=3, output="average"),
        lambda A: fe.noisy_sgd(L.Logistic(), A, y, ball, 1.0, 1e-5, steps=12, sample_rate=0.1, data_norm=1.0,
                               random_state=3, sample_weight=sw),
    ]
    for i, fit in enumerate(cases):
        a, b = fit(X), fit(D)
        assert a.w.dtype == b.w.dtype == dtype, i
        assert (a.noise_scale, a.steps, a.lr, a.epsilon, a.delta) == (b.noise_scale, b.steps, b.lr, b.epsilon,
                                                                      b.delta), i
        _close(a.w, b.w, dtype)


def test_secure_mode_csr_close_to_dense():
    X, y, _ = _csr(n=200, d=10)
    kw = dict(steps=4, noise="gaussian", data_norm=1.0, random_state=3, secure=True)
    a = fe.noisy_pgd(fe.losses.Logistic(), X, y, fe.L2Ball(5.0, 10), 1.0, 1e-5, **kw)
    b = fe.noisy_pgd(fe.losses.Logistic(), X.toarray(), y, fe.L2Ball(5.0, 10), 1.0, 1e-5, **kw)
    # the released gradients are rounded to the grid: equal unless a sum sits on a rounding boundary
    gamma = a.info["secure"].granularity if hasattr(a.info["secure"], "granularity") else 0.0
    np.testing.assert_allclose(a.w, b.w, rtol=0, atol=a.steps * a.lr * (gamma + 1e-12) * math.sqrt(10) + 1e-12)


@pytest.mark.parametrize("solver", ["pgd", "gd", "sgd"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_estimators_csr_equal_dense(solver, dtype):
    n = 5200 if solver == "sgd" else 300
    X, y, yr = _csr(n=n, d=25, density=0.2, dtype=dtype)
    for est, labels in [(fe.DPLogisticRegression, y), (fe.DPLinearRegression, yr), (fe.DPLinearSVC, y)]:
        if est is fe.DPLinearSVC and solver != "pgd":
            continue
        kw = dict(random_state=5, solver="noisy_" + solver, steps=None if solver == "sgd" else 6)
        a = est(**kw).fit(X, labels)
        b = est(**kw).fit(X.toarray(), labels)
        _close(a.coef_, b.coef_, dtype)
        _close(a.intercept_, b.intercept_, dtype)
        assert a.coef_.dtype == b.coef_.dtype == dtype
        _close(a.predict(X) if est is fe.DPLinearRegression else a.decision_function(X),
               b.predict(X.toarray()) if est is fe.DPLinearRegression else b.decision_function(X.toarray()), dtype)
    # the default solver rule on CSR input: sgd from n = 5000, gd below (logistic)
    if solver != "pgd":
        auto = fe.DPLogisticRegression(random_state=0).fit(X, y)
        assert auto.result_.info["solver"] == solver


def test_other_sparse_formats():
    X, y, _ = _csr(n=100, d=8)
    # the estimators convert them to CSR (scikit-learn's validate_data, a copy)
    a = fe.DPLogisticRegression(random_state=0, steps=4).fit(X.tocoo(), y)
    b = fe.DPLogisticRegression(random_state=0, steps=4).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)
    # the functions take CSR only, and say so
    with pytest.raises(TypeError, match="X.*sparse.*tocsr"):
        fe.noisy_pgd(fe.losses.Logistic(), X.tocsc(), y, fe.L2Ball(1.0, 8), 1.0, 1e-5, steps=2, data_norm=1.0)
    # duplicates are summed (a canonical copy): the dense fit of the summed matrix
    dup = sp.csr_matrix((np.r_[X.data, 0.5], np.r_[X.indices, X.indices[:1]],
                         np.r_[X.indptr[:1], X.indptr[1:] + 1]), shape=X.shape)
    dup.has_canonical_format = False
    r = fe.noisy_pgd(fe.losses.Logistic(), dup, y, fe.L2Ball(1.0, 8), 1.0, 1e-5, steps=3, data_norm=1.0,
                     random_state=0)
    s = fe.noisy_pgd(fe.losses.Logistic(), dup.toarray(), y, fe.L2Ball(1.0, 8), 1.0, 1e-5, steps=3, data_norm=1.0,
                     random_state=0)
    _close(r.w, s.w, np.float64)


def test_refusals_name_X():
    X, y, _ = _csr(n=60, d=5)
    for kw in (dict(delta=0.0), dict(solver="objpert", delta=0.0), dict(solver="expmech", steps=5)):
        with pytest.raises(TypeError, match=r"X.*sparse"):
            fe.DPLogisticRegression(random_state=0, **kw).fit(X, y)
    with pytest.raises(TypeError, match=r"X.*sparse"):
        fe.losses.Logistic().value(np.zeros(5), X, y)
    with pytest.raises(TypeError, match=r"X.*sparse"):
        fe.objective_perturbation(fe.objpert.SmoothHinge(), X, y, 1.0, data_norm=1.0)
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="X"):
        fe.noisy_pgd(fe.losses.Logistic(), bad, y, fe.L2Ball(1.0, 5), 1.0, 1e-5, steps=2, data_norm=1.0)
    with pytest.raises(ValueError, match="X"):
        fe.DPLogisticRegression(random_state=0).fit(bad, y)
    with pytest.raises(ValueError, match="empty"):
        fe.noisy_pgd(fe.losses.Logistic(), sp.csr_matrix((0, 5)), y[:0], fe.L2Ball(1.0, 5), 1.0, 1e-5, steps=2,
                     data_norm=1.0)


def test_intercept_design_stays_sparse():
    from fasterm.erm._design import design

    X, _, _ = _csr(n=50, d=7)
    A = design(X, 1.0, True, 0.25)
    assert sp.issparse(A) and A.shape == (X.shape[0], 8) and A.nnz == X.nnz + X.shape[0]
    ref = design(X.toarray(), 1.0, True, 0.25)
    np.testing.assert_allclose(A.toarray(), ref, rtol=1e-15, atol=0)


@pytest.mark.parametrize("est", [fe.DPLogisticRegression, fe.DPLinearSVC])
def test_multiclass_csr_equal_dense(est):
    X, _, _ = _csr(n=300, d=12, density=0.3)
    yk = np.random.default_rng(8).integers(0, 3, X.shape[0])
    a = est(random_state=2, steps=6).fit(X, yk)
    b = est(random_state=2, steps=6).fit(X.toarray(), yk)
    assert a.coef_.shape == (3, 12)
    _close(a.coef_, b.coef_, np.float64)
    _close(a.intercept_, b.intercept_, np.float64)
    np.testing.assert_array_equal(a.predict(X), b.predict(X.toarray()))


def _canonical_reference(indptr, indices):
    # slow and obvious: every row's column indices strictly increase
    return all(all(indices[k] < indices[k + 1] for k in range(indptr[i], indptr[i + 1] - 1))
               for i in range(len(indptr) - 1))


def test_stale_canonical_flag_is_not_trusted():
    # Rows [1, 1, 0] and [0, 2, 0], stored canonically; scipy computes and caches the flag ...
    X = sp.csr_matrix((np.array([1.0, 1.0, 2.0]), np.array([0, 1, 1], np.int32), np.array([0, 2, 3], np.int32)),
                      shape=(2, 3))
    assert X.has_canonical_format
    X.indices[1] = 0  # ... then the indices are edited: row 0 is (0, 1) twice, densely [2, 0, 0]
    assert X.has_canonical_format  # the stale cached flag (the premise of this test)
    raw = np.empty(2)
    _sparse.row_norms(X.data, X.indices, X.indptr, 3, raw)
    np.testing.assert_allclose(raw, [math.sqrt(2.0), 2.0])  # the kernel on the raw arrays: √2, not 2
    C = fe._validation.check_csr(X)
    out = np.empty(2)
    _sparse.row_norms(C.data, C.indices, C.indptr, 3, out)
    np.testing.assert_allclose(out, [2.0, 2.0], rtol=1e-15)  # the dense rows' norms
    assert C is not X and np.array_equal(C.toarray(), [[2.0, 0, 0], [0, 2.0, 0]])
    assert np.array_equal(X.indices, [0, 0, 1]) and np.array_equal(X.data, [1.0, 1.0, 2.0])  # X untouched
    # unsorted (no duplicate) rows are sorted the same way
    U = sp.csr_matrix((np.array([3.0, 4.0]), np.array([0, 2], np.int64), np.array([0, 2], np.int64)), shape=(1, 3))
    assert U.has_canonical_format
    U.indices[:] = [2, 0]
    C = fe._validation.check_csr(U)
    assert np.array_equal(C.indices, [0, 2]) and np.array_equal(C.data, [4.0, 3.0])
    # and through a fit: the corrupted matrix fits as its dense matrix (the same seed, the same noise)
    Xf, y, _ = _csr(n=60, d=6, seed=3)
    Xf.has_canonical_format  # noqa: B018 - cache the flag
    i = int(np.flatnonzero(np.diff(Xf.indptr) >= 2)[0])  # a row with two entries
    k = Xf.indptr[i]
    Xf.indices[k + 1] = Xf.indices[k]  # now a duplicate column
    assert Xf.has_canonical_format
    dense = Xf.toarray()
    # data_norm 0.5: the rows are rescaled by their norms, so a wrong norm would move the fit
    r = fe.noisy_pgd(fe.losses.Logistic(), Xf, y, fe.L2Ball(1.0, 6), 1.0, 1e-5, steps=3, data_norm=0.5,
                     random_state=0)
    s = fe.noisy_pgd(fe.losses.Logistic(), dense, y, fe.L2Ball(1.0, 6), 1.0, 1e-5, steps=3, data_norm=0.5,
                     random_state=0)
    _close(r.w, s.w, np.float64)


@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_canonical_matrix_is_not_copied(index):
    for dtype in (np.float32, np.float64):
        X, _, _ = _csr(n=50, d=9, dtype=dtype, index=index)  # with empty rows (equal offsets)
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)  # no cached flag
        C = fe._validation.check_csr(X)
        assert C is X and C.data is X.data and C.indices is X.indices and C.indptr is X.indptr


def test_canonical_check_against_reference():
    rng = np.random.default_rng(11)
    seen = {True: 0, False: 0}
    for _ in range(400):
        n, d = int(rng.integers(1, 7)), int(rng.integers(1, 6))
        lengths = rng.integers(0, 4, size=n) * (rng.random(n) < 0.8)  # empty rows anywhere
        indptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        indices = rng.integers(0, d, size=indptr[-1]).astype(np.int64)
        if rng.random() < 0.5:  # sort each row, often making it canonical; row boundaries may repeat a column
            for i in range(n):
                indices[indptr[i]:indptr[i + 1]].sort()
        ref = _canonical_reference(indptr, indices)
        seen[ref] += 1
        assert fe._validation._csr_is_canonical(indptr, indices) == ref, (indptr, indices)
        X = sp.csr_matrix((rng.normal(size=indptr[-1]), indices, indptr), shape=(n, d))
        X.has_canonical_format = True  # a lying flag, every time
        C = fe._validation.check_csr(X)
        assert _canonical_reference(C.indptr, C.indices)
        np.testing.assert_allclose(C.toarray(), X.toarray(), rtol=1e-15)
        assert (C is X) == ref
    assert min(seen.values()) > 50


def test_check_csr_refuses_a_broken_indptr():
    X, _, _ = _csr(n=20, d=5, empty_rows=False)
    for edit in ("decrease", "start", "end"):
        B = X.copy()
        if edit == "decrease":
            B.indptr[5], B.indptr[6] = B.indptr[6] + 1, B.indptr[5]
        elif edit == "start":
            B.indptr[0] = 1
        else:
            B.indptr[-1] = B.indices.shape[0] + 1
        with pytest.raises(ValueError, match=r"X\.indptr"):
            fe._validation.check_csr(B)


# ---------------------------------------------------------------------------
# Column indices outside [0, d): an index d would share the intercept column (issue #35)
# ---------------------------------------------------------------------------
def _with_index(d, col, index=np.int32, n=40, seed=21):
    """A canonical CSR (n, d) whose row 0 stores 1.0 at column ``col`` (scipy's constructor does not
    check the index), the other rows valid, norms below 1."""
    rng = np.random.default_rng(seed)
    rows = [sp.csr_matrix((np.array([1.0]), np.array([col], index), np.array([0, 1], index)), shape=(1, d))]
    rows.append(sp.csr_matrix(rng.uniform(-0.4, 0.4, size=(n - 1, d)) * (rng.random((n - 1, d)) < 0.5)))
    S = sp.vstack(rows, format="csr")
    ind = S.indices.astype(index)
    ind[0] = col
    return sp.csr_matrix((S.data, ind, S.indptr.astype(index)), shape=(n, d))


@pytest.mark.parametrize("kind", ["logistic", "squared"])
def test_index_d_would_share_the_intercept_column_beyond_the_sensitivity(kind):
    # The design row of x = e_d (norm 1 = data_norm: not clipped) with s stored at column d, as the
    # estimators built it from an X whose index d was not refused (fasterm.erm._design), holds column
    # d twice: the kernel's row norm counts the two values apart (√(1 + s²)), its gradient adds them
    # (1 + s).  Measured at the reported bound: the clipped contribution of that row is √2·c (s = 1),
    # so a neighbouring pair (the row with its label flipped) moves the sum by 2√2·c > n·Δ₂ = 2c.
    d, s = 3, 1.0
    X = _with_index(d, d)
    y = np.where(np.arange(X.shape[0]) % 2 == 0, 1.0, -1.0)
    A = sp.csr_matrix((np.array([1.0, s]), np.array([d, d], np.int32), np.array([0, 2], np.int32)),
                      shape=(1, d + 1))
    kw = dict(label_bound=1.0) if kind == "squared" else {}
    est = fe.DPLinearRegression if kind == "squared" else fe.DPLogisticRegression
    valid = X.copy()
    valid.indices[0] = d - 1  # the same row at a valid column: the reported constants of this fit
    m = est(solver="noisy_gd", steps=1, intercept_scaling=s, random_state=0, **kw).fit(valid, y)
    c, sens, n = m.result_.lipschitz, m.result_.sensitivity, X.shape[0]
    assert sens == pytest.approx(2.0 * c / n, rel=1e-15)
    dn = math.hypot(1.0, s)
    diffs = []
    for label in (1.0, -1.0):
        out = np.empty(d + 1)
        _sparse.grad_sum(KINDS[kind], A.data[:2], A.indices[:2], A.indptr[:2], d + 1, np.array([label]),
                         np.zeros(d + 1), None, dn, c, 1.0, out)
        diffs.append(out)
    assert np.linalg.norm(diffs[0]) == pytest.approx(math.sqrt(2.0) * c, rel=1e-12)  # one row: √2·c > c
    assert np.linalg.norm(diffs[0] - diffs[1]) / n > 1.4 * sens  # the pair: beyond Δ₂
    # AdaSSP's Gram statistic: the row's term is (v + s)² = 4 = 2·X_aug², twice its declared bound
    G, _ = fe.erm.ssp._statistics(A[:1].astype(np.float64), np.ones(1), None)
    assert np.linalg.norm(G) == pytest.approx(2.0 * dn * dn, rel=1e-15)
    # and the fit refuses X before any kernel runs, as does the design (its row norms check X)
    with pytest.raises(ValueError, match=r"X has column indices outside \[0, 3\).*range from 0 to 3"):
        est(solver="noisy_gd", steps=1, intercept_scaling=s, random_state=0, **kw).fit(X, y)
    from fasterm.erm._design import design

    with pytest.raises(ValueError, match=r"X has column indices outside \[0, 3\)"):
        design(X, 1.0, True, s)


_BAD_INDEX = r"X has column indices outside \[0, 4\)"


def _entry_points(X, y, yr, yk):
    d = X.shape[1]
    ball = fe.L2Ball(5.0, d)
    L = fe.losses
    est = [(fe.DPLogisticRegression, y), (fe.DPLinearRegression, yr), (fe.DPLogisticRegression, yk),
           (fe.DPLinearSVC, y), (fe.DPLinearSVC, yk)]
    calls = []
    for cls, labels in est:
        solvers = ["noisy_pgd"] if cls is fe.DPLinearSVC else ["noisy_gd", "noisy_pgd", "noisy_sgd"]
        for solver in solvers:
            calls.append((f"{cls.__name__}-{solver}-{len(np.unique(labels))}",
                          lambda A, c=cls, s=solver, lab=labels: c(solver=s, steps=2, random_state=0).fit(A, lab)))
    calls += [
        ("adassp", lambda A: fe.DPLinearRegression(solver="adassp", random_state=0).fit(A, yr)),
        ("secure", lambda A: fe.DPLogisticRegression(solver="noisy_pgd", steps=2, secure=True,
                                                     random_state=0).fit(A, y)),
        ("class-sums", lambda A: fe.DPLogisticRegression(delta=0.0, random_state=0).fit(A, yk)),
        ("no-intercept", lambda A: fe.DPLogisticRegression(solver="noisy_gd", steps=2, fit_intercept=False,
                                                           random_state=0).fit(A, y)),
        ("noisy_gd", lambda A: fe.noisy_gd(L.Logistic(), A, y, ball, 1.0, 1e-5, steps=2, data_norm=1.0,
                                           random_state=0)),
        ("noisy_pgd", lambda A: fe.noisy_pgd(L.Logistic(), A, y, ball, 1.0, 1e-5, steps=2, data_norm=1.0,
                                             random_state=0)),
        ("noisy_sgd", lambda A: fe.noisy_sgd(L.Logistic(), A, y, ball, 1.0, 1e-5, steps=2, sample_rate=0.5,
                                             data_norm=1.0, random_state=0)),
        ("noisy_pgd-secure", lambda A: fe.noisy_pgd(L.Logistic(), A, y, ball, 1.0, 1e-5, steps=2, data_norm=1.0,
                                                    secure=True, random_state=0)),
        ("adassp-function", lambda A: fe.erm.ssp.adassp(A, yr, 1.0, 1e-5)),
        ("row_norms", lambda A: fe.losses.row_norms(A)),
        ("grad_sum", lambda A: L.Logistic().grad_sum(np.zeros(d), A, y, clip=0.3, data_norm=1.0)),
    ]
    return calls


@pytest.mark.parametrize("index", [np.int32, np.int64], ids=["i32", "i64"])
@pytest.mark.parametrize("col", [4, 5, 2 ** 31 - 1, -1, -4])
def test_every_csr_entry_point_refuses_indices_outside_the_columns(col, index):
    # d = 4: column 4 is the intercept's column in the design, larger ones beyond it, negative ones before 0
    X = _with_index(4, col, index)
    n = X.shape[0]
    rng = np.random.default_rng(1)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    yr, yk = rng.uniform(-0.9, 0.9, n), rng.integers(0, 3, n)
    seen = 0
    for name, call in _entry_points(X, y, yr, yk):
        with pytest.raises(ValueError, match=_BAD_INDEX):
            call(X)
        seen += 1
    assert seen == 22
    with pytest.raises(ValueError, match=_BAD_INDEX + rf" for its 4 columns \(the stored indices range from "
                                         rf"{min(col, 0)} to {max(col, 3)}\)"):
        fe._validation.check_csr(X)
    # the same matrix with the value at a valid column is taken
    ok = X.copy()
    ok.indices[0] = 3
    assert fe._validation.check_csr(ok) is ok
    # predictions too: scipy's product would read X.indices unchecked, past coef_
    for m in (fe.DPLogisticRegression(random_state=0).fit(ok, y), fe.DPLinearRegression(random_state=0).fit(ok, yr)):
        with pytest.raises(ValueError, match=_BAD_INDEX):
            m.predict(X)


def test_index_range_read_from_the_arrays_for_any_layout():
    # every row layout (empty rows, one entry, unsorted, duplicates), against a slow reference
    rng = np.random.default_rng(5)
    seen = {True: 0, False: 0}
    for _ in range(300):
        n, d = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        lengths = rng.integers(0, 4, size=n) * (rng.random(n) < 0.8)
        indptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        indices = rng.integers(-1, d + 2, size=indptr[-1]).astype(np.int64)
        if rng.random() < 0.5:
            for i in range(n):
                indices[indptr[i]:indptr[i + 1]].sort()
        ok = all(0 <= j < d for j in indices)
        seen[ok] += 1
        X = sp.csr_matrix((rng.normal(size=indptr[-1]), indices, indptr), shape=(n, d))
        if ok:
            C = fe._validation.check_csr(X)
            assert C.shape == (n, d)
        else:
            with pytest.raises(ValueError, match=rf"X has column indices outside \[0, {d}\).*range from "
                                                 rf"{indices.min()} to {indices.max()}\)"):
                fe._validation.check_csr(X)
    assert min(seen.values()) > 50


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_duplicates_beside_the_intercept_column_are_summed_on_every_path(dtype):
    # In-range duplicates (two values at column d − 1, the design's last column before s): check_csr
    # sums them, so every fit sees the dense row's values once — its norm and its gradient agree —
    # and equals the fit of the dense matrix for the same seed.
    X, y, yr = _csr(n=120, d=4, density=0.5, dtype=dtype, seed=9, empty_rows=False)
    X = X.multiply(0.1).tocsr().astype(dtype)  # rows within data_norm 1, with the duplicate too
    yr = np.clip(yr, -0.9, 0.9)
    n, d = X.shape
    data, ind, ptr = list(X.data), list(X.indices), [0]
    for i in range(n):
        a, b = X.indptr[i], X.indptr[i + 1]
        data_i, ind_i = list(X.data[a:b]), list(X.indices[a:b])
        if i % 3 == 0:  # value 0.3 at column d − 1 once more (unsorted: before the others)
            data_i, ind_i = [dtype(0.3)] + data_i, [d - 1] + ind_i
        data += data_i
        ind += ind_i
        ptr.append(ptr[-1] + len(data_i))
    data, ind = data[X.nnz:], ind[X.nnz:]
    dup = sp.csr_matrix((np.array(data, dtype=dtype), np.array(ind, np.int32), np.array(ptr, np.int32)),
                        shape=(n, d))
    dense = dup.toarray()
    assert dense.dtype == dtype and (dup.toarray() != X.toarray()).any()
    rng = np.random.default_rng(2)
    yk = rng.integers(0, 3, n)
    fits = [
        lambda A: fe.DPLogisticRegression(solver="noisy_gd", steps=3, random_state=0).fit(A, y),
        lambda A: fe.DPLogisticRegression(solver="noisy_pgd", steps=3, random_state=0).fit(A, y),
        lambda A: fe.DPLogisticRegression(solver="noisy_sgd", steps=3, random_state=0).fit(A, y),
        lambda A: fe.DPLinearRegression(solver="noisy_gd", steps=3, random_state=0).fit(A, yr),
        lambda A: fe.DPLogisticRegression(solver="noisy_gd", steps=3, random_state=0).fit(A, yk),
        lambda A: fe.DPLogisticRegression(solver="noisy_sgd", steps=3, random_state=0).fit(A, yk),
    ]
    if dtype == np.float64:  # AdaSSP's statistics are float64
        fits.append(lambda A: fe.DPLinearRegression(solver="adassp", random_state=0).fit(A, yr))
    for i, fit in enumerate(fits):
        a, b = fit(dup), fit(dense)
        _close(a.coef_, b.coef_, dtype)
        _close(a.intercept_, b.intercept_, dtype)
