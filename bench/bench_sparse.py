"""Clipped logistic gradient sum on a sparse data set: the CSR kernel vs densify-then-dense.

Run: pytest bench/bench_sparse.py --benchmark-enable --benchmark-group-by=group

The data set of the issue: n = 1e5 rows, d = 1e4 columns, 0.5% non-zeros
(5e6 stored values), random columns, normal values, rows at norm ~1.  Its
dense copy is 4 GB in float32 and 8 GB in float64; so that the densify side
fits in memory on a small machine it runs on float32 and on the first
``DENSE_ROWS`` = 25,000 rows only (1 GB), and its time is scaled by
n / DENSE_ROWS (both sides are linear in n: one pass over the rows).  The
sides, in one group per thread count (pinned on both sides by the
``threads`` fixture of conftest.py):

* ``csr`` — ``fasterm.erm._sparse.grad_sum`` on the CSR arrays (float32 values,
  int32 indices), row norms cached as a solver caches them;
* ``csr-norms-in-pass`` — the same, the norms computed in the pass;
* ``densify+dense`` — ``X.toarray()`` then ``fasterm.erm._losses.grad_sum``
  (what a user had to write before: the densification is paid once per fit,
  the dense kernel once per step; both are timed, per call);
* ``dense-kernel-only`` — the dense kernel alone on the densified rows (the
  per-step cost of the dense way once the copy exists).

The measured ratio is in docs/performance.rst.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")

from fasterm.erm import _losses, _sparse  # noqa: E402
from fasterm.losses import row_norms  # noqa: E402

N, D, DENSITY = 100_000, 10_000, 0.005
DENSE_ROWS = 25_000
CLIP = 0.5


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = sp.random(N, D, density=DENSITY, format="csr", dtype=np.float32, random_state=0,
                  data_rvs=lambda k: rng.standard_normal(k).astype(np.float32) / math.sqrt(D * DENSITY))
    y = np.where(rng.uniform(size=N) < 0.5, 1.0, -1.0).astype(np.float32)
    w = (rng.standard_normal(D) * 0.1).astype(np.float32)
    return X, y, w, row_norms(X)


@pytest.mark.parametrize("cached", [True, False], ids=["norms-cached", "norms-in-pass"])
def test_csr(benchmark, problem, threads, cached):
    X, y, w, norms = problem
    benchmark.group = f"sparse-grad-sum-f32-{threads}-thread"
    out = np.empty(D, dtype=np.float32)
    benchmark(_sparse.grad_sum, _losses.LOGISTIC, X.data, X.indices, X.indptr, D, y, w,
              norms if cached else None, 1.0, CLIP, math.inf, out, threads)


def test_densify_then_dense(benchmark, problem, threads):
    X, y, w, norms = problem
    benchmark.group = f"sparse-grad-sum-f32-{threads}-thread"
    Xs, ys, ns = X[:DENSE_ROWS], y[:DENSE_ROWS], norms[:DENSE_ROWS]
    out = np.empty(D, dtype=np.float32)

    def run():
        _losses.grad_sum(_losses.LOGISTIC, Xs.toarray(), ys, w, ns, 1.0, CLIP, math.inf, out, threads)

    benchmark.extra_info["scale_to_n"] = N / DENSE_ROWS  # multiply the time by this for all n rows
    benchmark(run)


def test_dense_kernel_only(benchmark, problem, threads):
    X, y, w, norms = problem
    benchmark.group = f"sparse-grad-sum-f32-{threads}-thread"
    A = X[:DENSE_ROWS].toarray()
    out = np.empty(D, dtype=np.float32)
    benchmark.extra_info["scale_to_n"] = N / DENSE_ROWS
    benchmark(_losses.grad_sum, _losses.LOGISTIC, A, y[:DENSE_ROWS], w, norms[:DENSE_ROWS], 1.0, CLIP, math.inf,
              out, threads)
