"""Laplace and Gaussian vectors: fasterm vs numpy's Generator, same bit generator (PCG64).

Run: pytest bench/bench_noise.py --benchmark-enable --benchmark-group-by=group
"""

import numpy as np
import pytest

from fasterm import noise

N = 10_000_000


@pytest.fixture(scope="module")
def buffers():
    return {np.float64: np.empty(N), np.float32: np.empty(N, dtype=np.float32)}


@pytest.mark.benchmark(group="laplace-1e7-float64")
def test_numpy_laplace(benchmark):
    rng = np.random.default_rng(0)
    benchmark(rng.laplace, 0.0, 2.0, N)


@pytest.mark.benchmark(group="laplace-1e7-float64")
def test_fasterm_laplace(benchmark):
    rng = np.random.default_rng(0)
    benchmark(noise.laplace, N, 2.0, random_state=rng)


@pytest.mark.benchmark(group="laplace-1e7-float64")
def test_fasterm_laplace_out(benchmark, buffers):
    rng = np.random.default_rng(0)
    benchmark(noise.laplace, scale=2.0, random_state=rng, out=buffers[np.float64])


@pytest.mark.benchmark(group="laplace-1e7-float32")
def test_fasterm_laplace_float32_out(benchmark, buffers):
    rng = np.random.default_rng(0)
    benchmark(noise.laplace, scale=2.0, random_state=rng, out=buffers[np.float32])


@pytest.mark.benchmark(group="gaussian-1e7-float64")
def test_numpy_normal(benchmark):
    rng = np.random.default_rng(0)
    benchmark(rng.normal, 0.0, 2.0, N)


@pytest.mark.benchmark(group="gaussian-1e7-float64")
def test_fasterm_gaussian(benchmark):
    rng = np.random.default_rng(0)
    benchmark(noise.gaussian, N, 2.0, random_state=rng)


@pytest.mark.benchmark(group="gaussian-1e7-float64")
def test_fasterm_gaussian_out(benchmark, buffers):
    rng = np.random.default_rng(0)
    benchmark(noise.gaussian, scale=2.0, random_state=rng, out=buffers[np.float64])
