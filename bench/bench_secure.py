"""Secure (exact discrete) samplers vs numpy's float Laplace/normal, 1e5 draws.

Run: pytest bench/bench_secure.py --benchmark-enable --benchmark-group-by=group

The exact samplers use integer arithmetic and several bounded-integer draws per
sample (CKS 2020 rejection loops), so they are far slower than a float
sampler; the ratio is the price of secure mode (see README, "Floating-point
safety").  Scale 1000 grid units is typical of the default granularity
(Δ/γ ≈ 2^10).
"""

import numpy as np
import pytest

from fasterm import mechanisms, noise

N = 100_000


@pytest.mark.benchmark(group="laplace-1e5")
def test_numpy_laplace(benchmark):
    rng = np.random.default_rng(0)
    benchmark(rng.laplace, 0.0, 1000.0, N)


@pytest.mark.benchmark(group="laplace-1e5")
def test_discrete_laplace(benchmark):
    rng = np.random.default_rng(0)
    benchmark(noise.discrete_laplace, N, 1000, random_state=rng)


@pytest.mark.benchmark(group="laplace-1e5")
def test_discrete_laplace_os_entropy(benchmark):
    benchmark(noise.discrete_laplace, N, 1000, random_state="os")


@pytest.mark.benchmark(group="laplace-1e5")
def test_secure_laplace_mechanism(benchmark):
    rng = np.random.default_rng(0)
    x = np.zeros(N)
    benchmark(mechanisms.laplace, x, 1.0, 1.0, random_state=rng, secure=True)


@pytest.mark.benchmark(group="gaussian-1e5")
def test_numpy_normal(benchmark):
    rng = np.random.default_rng(0)
    benchmark(rng.normal, 0.0, 1000.0, N)


@pytest.mark.benchmark(group="gaussian-1e5")
def test_discrete_gaussian(benchmark):
    rng = np.random.default_rng(0)
    benchmark(noise.discrete_gaussian, N, 1001 * 1000, random_state=rng)  # σ² = t·m, σ ≈ 1000


@pytest.mark.benchmark(group="laplace-1e5")
def test_discrete_laplace_numpy_twin(benchmark):
    from fasterm.mechanisms import _exact
    rng = np.random.default_rng(0)
    benchmark(_exact.discrete_laplace_vec, N, 1000, 1, rng)


# The exponential mechanism over 1e4 scores: one index per call (fast path:
# one compiled pass + one float uniform; secure path: grid rounding + exact
# rejection sampling, expected proposals m/Σw).
SCORES = np.random.default_rng(0).uniform(0.0, 10.0, 10_000)


@pytest.mark.benchmark(group="exponential-1e4")
def test_exponential_fast(benchmark):
    rng = np.random.default_rng(0)
    benchmark(mechanisms.exponential, SCORES, 1.0, 1.0, rng)


@pytest.mark.benchmark(group="exponential-1e4")
def test_exponential_secure(benchmark):
    rng = np.random.default_rng(0)
    benchmark(mechanisms.exponential, SCORES, 1.0, 1.0, rng, secure=True)


@pytest.mark.benchmark(group="exponential-1e4")
def test_exponential_secure_os_entropy(benchmark):
    benchmark(mechanisms.exponential, SCORES, 1.0, 1.0, "os", secure=True)
