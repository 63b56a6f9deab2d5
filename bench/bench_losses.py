"""Clipped logistic gradient sum, n = 1e5, d = 100: fasterm vs the numpy way vs one X @ w.

Run: pytest bench/bench_losses.py --benchmark-enable --benchmark-group-by=group

Targets, read as ratios inside one group (the machine is shared):
fasterm ≤ 1.2 × ``X @ w`` and ≥ 2 × the numpy way for float64, ≥ 3.5 × for float32.
Row norms are cached in both (an optimizer computes them once per data set).
"""

import numpy as np
import pytest
from scipy.special import expit

from fasterm import losses

N, D = 100_000, 100
CLIP = 0.5
DTYPES = {"float64": np.float64, "float32": np.float32}


@pytest.fixture(scope="module", params=list(DTYPES))
def problem(request):
    dtype = DTYPES[request.param]
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D)).astype(dtype)
    y = rng.choice([-1.0, 1.0], N).astype(dtype)
    w = (rng.standard_normal(D) * 0.1).astype(dtype)
    return {
        "name": request.param,
        "X": X,
        "y": y,
        "w": w,
        "norms_np": np.linalg.norm(X, axis=1),  # in X's dtype, as numpy gives it
        "norms": losses.row_norms(X),
        "out": np.empty(D, dtype=dtype),
    }


def numpy_clipped_logistic_grad_sum(X, y, w, norms, c):
    z = X @ w
    g = -y * expit(-y * z)
    factor = np.minimum(1, c / (np.abs(g) * norms))
    return X.T @ (g * factor)


def test_gemv_reference(benchmark, problem):
    benchmark.group = f"clipped-logistic-grad-sum-{problem['name']}"
    X, w = problem["X"], problem["w"]
    benchmark(np.matmul, X, w)


def test_numpy_way(benchmark, problem):
    benchmark.group = f"clipped-logistic-grad-sum-{problem['name']}"
    p = problem
    benchmark(numpy_clipped_logistic_grad_sum, p["X"], p["y"], p["w"], p["norms_np"], CLIP)


@pytest.mark.parametrize("n_threads", [None, 1], ids=["all-cpus", "1-thread"])
def test_fasterm(benchmark, problem, n_threads):
    benchmark.group = f"clipped-logistic-grad-sum-{problem['name']}"
    p = problem
    loss = losses.Logistic()
    got = benchmark(loss.grad_sum, p["w"], p["X"], p["y"], clip=CLIP, row_norms=p["norms"],
                    out=p["out"], n_threads=n_threads)
    ref = numpy_clipped_logistic_grad_sum(
        p["X"].astype(np.float64), p["y"].astype(np.float64), p["w"].astype(np.float64),
        np.linalg.norm(p["X"].astype(np.float64), axis=1), CLIP)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-3 * np.abs(ref).max())
