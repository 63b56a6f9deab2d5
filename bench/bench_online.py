"""RWM and the linear learner: fasterm against the way a NumPy user writes them.

    pytest bench/bench_online.py --benchmark-enable --benchmark-group-by=group

Target: ``run_rwm`` with k = 1000, T = 1e4 at least 15x the log-space
NumPy loop.  The NumPy loops keep log-weights, subtract their maximum, take
exp, and invert one uniform over the cumulative sum — the same algorithm, one
NumPy call per step.  η = √(ln k / T), the value Theorem 11.1 recommends.
fasterm timings are of the public functions, validation included.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fasterm import online

K, T = 1000, 10_000
ETA = math.sqrt(math.log(K) / T)
N, D = 100_000, 100


def rwm_numpy(L, eta, rng):
    T, k = L.shape
    logw = np.zeros(k)
    actions = np.empty(T, dtype=np.int64)
    for t in range(T):
        w = np.exp(logw - logw.max())
        c = np.cumsum(w)
        actions[t] = np.searchsorted(c, rng.random() * c[-1], side="right")
        logw -= eta * L[t]
    return actions


def linear_learner_numpy(S, eta, rng):
    S = np.clip(S, -1.0, 1.0)
    n, d = S.shape
    logw = np.zeros(d)
    counts = np.zeros(d)
    for t in range(n):
        w = np.exp(logw - logw.max())
        c = np.cumsum(w)
        counts[np.searchsorted(c, rng.random() * c[-1], side="right")] += 1
        logw -= eta * S[t]
    return counts / n


@pytest.fixture(scope="module")
def losses():
    return np.random.default_rng(0).random((T, K))


@pytest.fixture(scope="module")
def examples():
    return np.random.default_rng(1).uniform(-1.0, 1.0, (N, D))


@pytest.mark.benchmark(group="rwm-k1000-T1e4")
def test_numpy_rwm(benchmark, losses):
    rng = np.random.default_rng(0)
    benchmark.pedantic(rwm_numpy, args=(losses, ETA, rng), rounds=3, iterations=1)


@pytest.mark.benchmark(group="rwm-k1000-T1e4")
def test_fasterm_run_rwm(benchmark, losses):
    rng = np.random.default_rng(0)
    benchmark(online.run_rwm, losses, ETA, random_state=rng)


@pytest.mark.benchmark(group="rwm-k1000-T1e4")
def test_fasterm_run_rwm_float32(benchmark, losses):
    rng = np.random.default_rng(0)
    benchmark(online.run_rwm, losses.astype(np.float32), ETA, random_state=rng)


@pytest.mark.benchmark(group="rwm-k1000-T1e4")
def test_fasterm_private_rwm(benchmark, losses):
    # losses declared in [0, 1]: clipped in the kernel, eta from (eps, delta)
    def run():
        return online.PrivateRWM(K, T, 1.0, 1e-6, random_state=0).run(losses)

    benchmark(run)


@pytest.mark.benchmark(group="linear-learner-n1e5-d100")
def test_numpy_linear_learner(benchmark, examples):
    eta = online.calibrate_eta(1.0, 1e-6, N, loss_sensitivity=2.0).eta
    rng = np.random.default_rng(0)
    benchmark.pedantic(linear_learner_numpy, args=(examples, eta, rng), rounds=2, iterations=1)


@pytest.mark.benchmark(group="linear-learner-n1e5-d100")
def test_fasterm_linear_learner(benchmark, examples):
    rng = np.random.default_rng(0)
    benchmark(online.linear_learner, examples, 1.0, 1e-6, random_state=rng)
