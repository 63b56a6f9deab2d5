"""Logistic gradient sum at the breast-cancer size (n = 398, d = 31): fasterm vs numpy's two gemvs.

Run: pytest bench/bench_losses_small.py --benchmark-enable --benchmark-group-by=group

In cache, the kernel's fixed and per-row costs (row tails, horizontal sums,
the coefficient block) matter as much as the streaming: read the fasterm
time as a ratio to ``X @ w`` + ``X.T @ g`` in the same group (one thread on
both sides: BLAS pinned by threadpoolctl, fasterm's ``n_threads=1``).  The
compiled PGD loop runs T = 100 of these per fit.
"""

import numpy as np
import pytest

from fasterm.erm import _losses

N, D = 398, 31
CLIP = 0.5
DTYPES = {"float64": np.float64, "float32": np.float32}


@pytest.fixture(scope="module", params=list(DTYPES))
def problem(request):
    dtype = DTYPES[request.param]
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((N, D)) / np.sqrt(D)).astype(dtype)
    norms = np.empty(N)
    _losses.row_norms(X, norms)
    return {
        "name": request.param,
        "X": X,
        "y": rng.choice([-1.0, 1.0], N).astype(dtype),
        "w": (rng.standard_normal(D) * 0.3).astype(dtype),
        "g": rng.standard_normal(N).astype(dtype),
        "norms": norms,
        "out": np.empty(D, dtype=dtype),
    }


def test_gemv_xw(benchmark, problem):
    benchmark.group = f"grad-sum-398x31-{problem['name']}-1-thread"
    benchmark(np.matmul, problem["X"], problem["w"])


def test_gemv_xtg(benchmark, problem):
    benchmark.group = f"grad-sum-398x31-{problem['name']}-1-thread"
    benchmark(np.matmul, problem["X"].T, problem["g"])


def test_fasterm_grad_sum(benchmark, problem):
    benchmark.group = f"grad-sum-398x31-{problem['name']}-1-thread"
    p = problem
    benchmark(_losses.grad_sum, _losses.LOGISTIC, p["X"], p["y"], p["w"], p["norms"], 0.0, CLIP,
              np.inf, p["out"], 1)
    # The same sum the numpy way (float64), as a sanity check of the timed call.
    X, y, w = (a.astype(np.float64) for a in (p["X"], p["y"], p["w"]))
    a = -y / (1.0 + np.exp(y * (X @ w)))
    a *= np.minimum(1.0, CLIP / (np.abs(a) * np.linalg.norm(X, axis=1)))
    tol = 1e-12 if p["name"] == "float64" else 1e-4
    np.testing.assert_allclose(p["out"], X.T @ a, rtol=tol, atol=tol * np.abs(X.T @ a).max())
