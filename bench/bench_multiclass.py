"""Multiclass fits (one (d + 1) × K model on one budget) beside scikit-learn's non-private fit,
and the compiled multiclass gradient kernel beside the numpy way.

    pytest bench/bench_multiclass.py --benchmark-enable --benchmark-group-by=group

Kernel groups ("multiclass-kernel-…"): one clipped per-example gradient sum of
the (d + 1) × K matrix — :func:`fasterm.linear_model._multiclass.kernel_sum` (one pass over
the raw rows, the design row built on the fly, every product and sum in
double, src/cpp/fasterm/multiclass.hpp) against the numpy way (two BLAS
products over the (n, d + 1) design, softmax, norms and clip factors between
them; for float32 the products run in float32).  One thread on both sides
(the benchmarks' conftest pins BLAS with threadpoolctl and the process's CPU
affinity); the kernel is single-threaded.

scikit-learn's digits (1,257 training rows, 64 pixels, 10 classes, x/128 in
the unit ball): the private multinomial logistic regression (noisy gradient
descent; the gradient of the matrix model is two BLAS products per step,
:mod:`fasterm.linear_model._multiclass`), the Crammer–Singer SVC (noisy PGD) and
scikit-learn's ``LogisticRegression`` (L-BFGS, multinomial), the fit a user
would otherwise run.  A larger synthetic problem (n = 1e5, d = 50, K = 10)
shows the per-step cost.  BLAS threads are pinned by the benchmarks' conftest.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

import fasterm as fe
from fasterm.linear_model import _multiclass


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    Xtr, _, ytr, _ = train_test_split(X / 128.0, y, test_size=0.3, random_state=0)
    return Xtr, ytr


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100_000, 50)) / 8
    return X, (X[:, :10].argmax(axis=1))


@pytest.mark.benchmark(group="multiclass-digits")
def test_multinomial_estimator(benchmark, digits):
    benchmark(lambda: fe.DPLogisticRegression(random_state=0).fit(*digits))


@pytest.mark.benchmark(group="multiclass-digits")
def test_crammer_singer_estimator(benchmark, digits):
    benchmark(lambda: fe.DPLinearSVC(random_state=0).fit(*digits))


@pytest.mark.benchmark(group="multiclass-digits")
def test_sklearn_nonprivate(benchmark, digits):
    benchmark(lambda: LogisticRegression(max_iter=1000).fit(*digits))


@pytest.mark.benchmark(group="multiclass-1e5x50-K10")
def test_multinomial_estimator_large(benchmark, big):
    benchmark.pedantic(lambda: fe.DPLogisticRegression(random_state=0, solver="noisy_gd").fit(*big), rounds=3)


@pytest.mark.benchmark(group="multiclass-1e5x50-K10")
def test_sklearn_nonprivate_large(benchmark, big):
    benchmark.pedantic(lambda: LogisticRegression(max_iter=1000).fit(*big), rounds=3)


def numpy_grad_sum(A, y, W, norms, clip, out):
    """The numpy way: Z = A·W, u = softmax(Z) − e_y, f = min(1, c/(‖a‖·‖u‖)), out = (f·U)ᵀA."""
    Z = A @ W
    Z -= Z.max(axis=1, keepdims=True)
    np.exp(Z, out=Z)
    Z /= Z.sum(axis=1, keepdims=True)
    Z[np.arange(Z.shape[0]), y] -= 1.0
    g = norms * np.sqrt(np.einsum("ij,ij->i", Z, Z, dtype=np.float64))
    Z *= (clip / np.maximum(g, clip)).astype(Z.dtype)[:, None]
    out[...] = (Z.T @ A).T
    return out


def _kernel_problem(n, d, K, dtype, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(1.0, 2.0, (n, 1))
    A = np.hstack([X, np.full((n, 1), 0.25)]).astype(dtype)
    X = X.astype(dtype)
    y = rng.integers(0, K, n).astype(np.int64)
    W = (rng.standard_normal((d + 1, K)) * 0.5).astype(dtype)
    return X, A, y, W


KERNEL_SIZES = [(80_000, 100, 10), (3_500, 650, 10)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("size", KERNEL_SIZES, ids=[f"{n}x{d}-K{K}" for n, d, K in KERNEL_SIZES])
@pytest.mark.parametrize("way", ["compiled", "numpy"])
def test_kernel_grad_sum(benchmark, size, dtype, way):
    n, d, K = size
    X, A, y, W = _kernel_problem(n, d, K, dtype)
    out = np.empty_like(W)
    benchmark.group = f"multiclass-kernel-{n}x{d}-K{K}-{np.dtype(dtype).name}"
    if way == "compiled":
        norms = np.linalg.norm(X.astype(np.float64), axis=1)
        benchmark(lambda: _multiclass.kernel_sum("logistic", X, y, W, norms, 1.0, 0.25, 0.27, out))
    else:
        norms = np.linalg.norm(A.astype(np.float64), axis=1)
        benchmark(lambda: numpy_grad_sum(A, y, W, norms, 0.27, out))


@pytest.mark.parametrize("way", ["compiled", "numpy"])
def test_kernel_grad_sum_csr(benchmark, way):
    """A CSR X (1% density, n = 80,000, d = 2,000, K = 10): the kernel reads the stored values only."""
    import scipy.sparse as sp
    rng = np.random.default_rng(1)
    n, d, K = 80_000, 2_000, 10
    X = sp.random(n, d, density=0.01, format="csr", random_state=rng, dtype=np.float64)
    y = rng.integers(0, K, n).astype(np.int64)
    W = rng.standard_normal((d + 1, K)) * 0.5
    out = np.empty_like(W)
    benchmark.group = "multiclass-kernel-csr-80000x2000-1pct-K10"
    if way == "compiled":
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        benchmark(lambda: _multiclass.kernel_sum("logistic", X, y, W, norms, 1.0, 0.25, 0.27, out))
    else:
        A = sp.hstack([X, sp.csr_matrix(np.full((n, 1), 0.25))], format="csr")
        norms = np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())
        benchmark(lambda: numpy_grad_sum(A, y, W, norms, 0.27, out))
