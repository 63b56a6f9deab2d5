"""Projection benchmarks: fasterm against the way a NumPy user writes them.

    pytest bench/bench_projections.py --benchmark-enable

Each group holds the fasterm call and its NumPy baseline on the same input,
so the ratio is read off one run.  Target for the simplex at
d = 1e6: >= 7x the sort-based NumPy projection (<= 3 ns per element).

The fasterm timings are of the public ``project`` call, validation included
(one finiteness pass over v), writing into a preallocated ``out`` as an
optimiser's loop would; the ``kernel`` entries call the compiled module
directly.
"""

from __future__ import annotations

import numpy as np
import pytest

import fasterm as fe
from fasterm.erm import _projections

D = 1_000_000


def simplex_numpy(v, s=1.0):
    """Sort-based projection onto {w >= 0, sum w = s} (Held–Wolfe–Crowder)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u)
    rho = np.nonzero(u * np.arange(1, v.size + 1) > css - s)[0][-1]
    theta = (css[rho] - s) / (rho + 1)
    return np.maximum(v - theta, 0)


def l1_ball_numpy(v, r=1.0):
    if np.abs(v).sum() <= r:
        return v.copy()
    return np.sign(v) * simplex_numpy(np.abs(v), r)


@pytest.fixture(scope="module", params=[np.float64, np.float32], ids=["float64", "float32"])
def vector(request):
    return np.random.default_rng(0).standard_normal(D).astype(request.param)


def _group(benchmark, name, v):
    benchmark.group = f"{name} d=1e6 {v.dtype} 1-thread"  # both sides single-threaded, pinned (conftest.py)


def test_simplex_fasterm(benchmark, vector):
    _group(benchmark, "simplex", vector)
    C, out = fe.Simplex(D), np.empty_like(vector)
    p = benchmark(C.project, vector, out)
    np.testing.assert_allclose(p, simplex_numpy(vector), atol=1e-6)


def test_simplex_kernel(benchmark, vector):
    _group(benchmark, "simplex", vector)
    out = np.empty_like(vector)
    benchmark(_projections.simplex, vector, out, 1.0)


def test_simplex_numpy(benchmark, vector):
    _group(benchmark, "simplex", vector)
    benchmark(simplex_numpy, vector)


def test_l1_ball_fasterm(benchmark, vector):
    _group(benchmark, "l1-ball", vector)
    C, out = fe.L1Ball(1.0, D), np.empty_like(vector)
    p = benchmark(C.project, vector, out)
    np.testing.assert_allclose(p, l1_ball_numpy(vector), atol=1e-6)


def test_l1_ball_numpy(benchmark, vector):
    _group(benchmark, "l1-ball", vector)
    benchmark(l1_ball_numpy, vector)
