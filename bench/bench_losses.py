"""Clipped logistic gradient sum, n = 1e5, d = 100: fasterm vs the numpy way vs one X @ w.

Run: pytest bench/bench_losses.py --benchmark-enable --benchmark-group-by=group

Every group is one dtype at one thread count, pinned on both sides (the
``threads`` fixture of conftest.py: BLAS through threadpoolctl, fasterm
through ``n_threads``), named in the group.  Targets, read as ratios inside
one group (the machine is shared): fasterm ≤ 1.2 × ``X @ w`` (one pass over
X), and ≥ 2 × faster than the numpy way for float64, ≥ 3.5 × for float32.
On a loaded machine, ``--benchmark-timer=time.thread_time`` with ``-k
1-thread`` times the one-thread groups in CPU time, without the time spent
descheduled.  fasterm is timed with cached
row norms (an optimizer computes them once per data set) and without (the
kernel then computes them in the same pass); the numpy way always has them
cached.

The minibatch group times ``_losses.grad_sum_rows`` on a Poisson subsample
(rate 0.1, read in place) against the gather ``X[rows]`` + ``grad_sum`` a
caller would otherwise write.
"""

import math

import numpy as np
import pytest
from scipy.special import expit

from fasterm import losses
from fasterm.erm import _losses

N, D = 100_000, 100
CLIP = 0.5
RATE = 0.1
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
        "rows": np.flatnonzero(rng.random(N) < RATE).astype(np.int64),
    }


def _group(benchmark, p, threads, what="clipped-logistic-grad-sum"):
    benchmark.group = f"{what}-n1e5-d100-{p['name']}-{threads}-thread{'s' if threads > 1 else ''}"


def numpy_clipped_logistic_grad_sum(X, y, w, norms, c):
    z = X @ w
    g = -y * expit(-y * z)
    factor = np.minimum(1, c / (np.abs(g) * norms))
    return X.T @ (g * factor)


def test_gemv_reference(benchmark, problem, threads):
    _group(benchmark, problem, threads)
    X, w = problem["X"], problem["w"]
    benchmark(np.matmul, X, w)


def test_numpy_way(benchmark, problem, threads):
    _group(benchmark, problem, threads)
    p = problem
    benchmark(numpy_clipped_logistic_grad_sum, p["X"], p["y"], p["w"], p["norms_np"], CLIP)


@pytest.mark.parametrize("cached", [True, False], ids=["norms-cached", "norms-in-pass"])
def test_fasterm(benchmark, problem, threads, cached):
    _group(benchmark, problem, threads)
    p = problem
    loss = losses.Logistic()
    got = benchmark(loss.grad_sum, p["w"], p["X"], p["y"], clip=CLIP,
                    row_norms=p["norms"] if cached else None, out=p["out"], n_threads=threads)
    ref = numpy_clipped_logistic_grad_sum(
        p["X"].astype(np.float64), p["y"].astype(np.float64), p["w"].astype(np.float64),
        np.linalg.norm(p["X"].astype(np.float64), axis=1), CLIP)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-3 * np.abs(ref).max())


def test_minibatch_gather_then_kernel(benchmark, problem, threads):
    _group(benchmark, problem, threads, f"minibatch-rate{RATE}")
    p = problem

    def gathered():
        r = p["rows"]
        _losses.grad_sum(_losses.LOGISTIC, p["X"][r], p["y"][r], p["w"], p["norms"][r], 0.0, CLIP,
                         math.inf, p["out"], threads)

    benchmark(gathered)


def test_minibatch_in_place(benchmark, problem, threads):
    _group(benchmark, problem, threads, f"minibatch-rate{RATE}")
    p = problem
    benchmark(_losses.grad_sum_rows, _losses.LOGISTIC, p["X"], p["y"], p["w"], p["norms"], 0.0,
              CLIP, math.inf, p["rows"], p["out"], threads)
