"""The compiled projected-gradient loop (src/cpp/fasterm/loops.hpp: ``_losses.pgd_loop`` on dense
rows, ``_sparse.pgd_loop`` on CSR rows) against a slow numpy reference, bit for bit.

The reference below is the step of :mod:`fasterm.erm._engine`'s docstring written out in numpy,
one operation at a time in the work dtype: the gradient sum is the compiled kernel that the
kernel tests check (``_losses.grad_sum`` / ``_sparse.grad_sum``), the noise is numpy's
``Generator.standard_normal`` times the scale (Gaussian) or fasterm's Laplace sampler, the
projection the set's own ``project``.  Also checked: ``_engine.steps_on`` takes the compiled
loop and gives what :func:`fasterm.erm._engine.descend` (the driver of the gradient sums that
cannot be compiled: dask, secure mode) gives for the same seed.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import fasterm as fe
import fasterm.erm._engine as _engine
import fasterm.erm._losses as _losses
import fasterm.erm._sparse as _sparse
import fasterm.mechanisms._noise as _noise
from fasterm.erm import _backends
from fasterm.erm.constraints import Box, L2Ball


def reference_steps(kind, X, y, norms, clip, w, steps, lr, reg, noise, scale, rng, constraint, acc=None,
                    betas=None, lrs=None, acc_from=0, weights=None):
    """Slow reference: ``steps`` noisy projected steps from w (a copy), numpy operation by operation."""
    T = w.dtype.type
    n = X.shape[0]
    w = w.copy()
    prev = w.copy()
    for t in range(steps):
        if betas is not None:
            at = w + T(betas[t]) * (w - prev)
            prev = w.copy()
        else:
            at = w.copy()
        if acc is not None and t >= acc_from:
            acc += at.astype(np.float64)
        s = np.empty_like(w)
        if sp.issparse(X):
            _sparse.grad_sum(kind, X.data, X.indices, X.indptr, X.shape[1], y, at, norms, 0.0, clip, np.inf, s,
                             1, weights)
        else:
            _losses.grad_sum(kind, X, y, at, norms, 0.0, clip, np.inf, s, 1, weights)
        g = s * T(1.0 / n)
        if reg:
            g = g + at * T(reg)
        if noise == "gaussian":
            g = g + rng.standard_normal(w.shape[0], dtype=w.dtype) * T(scale)
        elif noise == "laplace":
            h = np.empty_like(w)
            _noise.laplace_fill(rng.bit_generator, h, scale)
            g = g + h
        eta = lrs[t] if lrs is not None else lr
        w = constraint.project(g * T(-eta) + at)
    return w


def _data(dtype, sparse, n=57, d=6, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None].astype(dtype)
    X[rng.random((n, d)) < 0.4] = 0
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0).astype(dtype)
    if sparse:
        X = sp.csr_matrix(X)
    return X, y


def _fista(steps):
    k = [1.0]
    for _ in range(steps):
        k.append(0.5 * (1.0 + np.sqrt(1.0 + 4.0 * k[-1] ** 2).item()))
    return np.array([(k[t - 1] - 1.0) / k[t] if t > 0 else 0.0 for t in range(steps)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("momentum", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("noise", ["gaussian", "laplace", None])
def test_compiled_loop_matches_reference(dtype, sparse, momentum, weighted, noise):
    X, y = _data(dtype, sparse)
    n, d = X.shape
    steps = 25
    C = L2Ball(0.8, d, center=np.full(d, 0.05))
    weights = np.random.default_rng(1).uniform(0, 2, n) if weighted else None
    betas = _fista(steps) if momentum else None
    kw = dict(steps=steps, lr=0.7, reg=0.03, scale=0.2 if noise else 0.0)
    code = {"gaussian": _losses.NOISE_GAUSSIAN, "laplace": _losses.NOISE_LAPLACE, None: _losses.NOISE_NONE}[noise]
    w0 = C.center.astype(dtype)
    clip = 0.9
    ref_acc = np.zeros(d)
    ref = reference_steps(_losses.LOGISTIC, X, y, None, clip, w0, noise=noise, rng=np.random.default_rng(7),
                          constraint=C, acc=ref_acc, betas=betas, acc_from=2, weights=weights, **kw)
    got, acc = w0.copy(), np.zeros(d)
    bg = np.random.default_rng(7).bit_generator if noise else None
    spec = C._loop_spec(np.dtype(dtype))
    args = (kw["steps"], kw["lr"], kw["reg"], code, kw["scale"], bg, *spec, acc, 1, weights)
    if sparse:
        _sparse.pgd_loop(_losses.LOGISTIC, X.data, X.indices, X.indptr, d, y, None, 0.0, clip, np.inf, got, *args,
                         betas=betas, acc_from=2)
    else:
        _losses.pgd_loop(_losses.LOGISTIC, X, y, None, 0.0, clip, np.inf, got, *args, betas=betas, acc_from=2)
    assert got.dtype == dtype
    assert np.array_equal(got.view(np.uint8), ref.view(np.uint8))
    assert np.array_equal(acc, ref_acc)
    assert not np.array_equal(got, w0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_step_schedule_and_box(dtype):
    X, y = _data(dtype, False, n=40, d=5)
    d = X.shape[1]
    C = Box(-0.3, 0.4, d)
    steps = 12
    lrs = np.array([1.0 / (1 + t) for t in range(steps)])
    w0 = C.center.astype(dtype)
    ref = reference_steps(_losses.SQUARED, X, y, None, 1.5, w0, steps, None, 0.0, "gaussian", 0.1,
                          np.random.default_rng(2), C, lrs=lrs)
    got = w0.copy()
    _losses.pgd_loop(_losses.SQUARED, X, y, None, 0.0, 1.5, np.inf, got, steps, 0.0, 0.0, _losses.NOISE_GAUSSIAN,
                     0.1, np.random.default_rng(2).bit_generator, *C._loop_spec(np.dtype(dtype)), None, lrs=lrs)
    assert np.array_equal(got, ref)


class _Unfused(_backends.FloatNoise):
    """The same float noise, released from Python: _engine.steps_on then runs descend."""

    def fused(self, dtype):
        return None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("momentum", [None, 0.5, "fista"])
def test_steps_on_compiled_equals_descend(dtype, sparse, momentum):
    X, y = _data(dtype, sparse, n=80, d=7)
    d = X.shape[1]
    loss = fe.losses.Logistic(l2=0.01)
    C = L2Ball(1.0, d)
    steps = 15
    if momentum == "fista":
        b = [float(v) for v in _fista(steps)]
        momentum = lambda t: b[t]  # noqa: E731
    out = []
    for backend in (_backends.FloatNoise("gaussian", "l2", np.random.default_rng(5), scale=0.3),
                    _Unfused("gaussian", "l2", np.random.default_rng(5), scale=0.3)):
        w, Xp, yp, c, dn, ybound, norms, nt = loss._prepare(C.center.astype(dtype), X, y, clip=0.7, data_norm=1.0,
                                                           label_bound=None, accept_sparse=True)
        acc = np.zeros(d)
        last = _engine.steps_on(loss, Xp, yp, norms, dn, c, ybound, nt, None, w, C, steps, 0.9, backend, momentum,
                                acc, acc_from=1)
        out.append((last.copy(), acc))
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])


def test_steps_on_takes_the_compiled_loop(monkeypatch):
    """With fused noise and a compiled projection no step runs in Python (descend is not called)."""
    X, y = _data(np.float64, False)
    loss = fe.losses.Logistic()
    C = L2Ball(1.0, X.shape[1])

    def fail(*a, **k):
        raise AssertionError("descend called")

    monkeypatch.setattr(_engine, "descend", fail)
    backend = _backends.FloatNoise("gaussian", "l2", np.random.default_rng(0), scale=0.1)
    w = _engine.run(loss, X, y, C, 10, 0.5, False, data_norm=1.0, clip=1.0, noise=backend, momentum=lambda t: 0.3)
    assert w.shape == (X.shape[1],)


def test_pgd_loop_checks_lengths():
    X, y = _data(np.float64, False, n=10, d=3)
    w = np.zeros(3)
    args = (_losses.LOGISTIC, X, y, None, 0.0, 1.0, np.inf, w, 5, 0.1, 0.0, _losses.NOISE_NONE, 0.0, None,
            _losses.SET_L2_BALL, 1.0, None, None, None)
    with pytest.raises(ValueError, match="betas"):
        _losses.pgd_loop(*args, betas=np.zeros(4))
    with pytest.raises(ValueError, match="lrs"):
        _losses.pgd_loop(*args, lrs=np.zeros(2))
    with pytest.raises(ValueError, match="acc_from"):
        _losses.pgd_loop(*args, acc_from=-1)
