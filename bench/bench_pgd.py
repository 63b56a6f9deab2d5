"""Noisy projected gradient descent: fasterm vs the way a numpy user writes it.

    pytest bench/bench_pgd.py --benchmark-enable --benchmark-group-by=group

Both run STEPS iterations of clipped-logistic noisy PGD (Laplace noise, L2
ball) on the same data, row norms cached; the time per iteration is the
group's time / STEPS.  fasterm's figure includes its one-off validation and
row-norm pass.  Thread counts are pinned on both sides (conftest.py's
``threads``: BLAS pools and fasterm, which follows the process's CPUs) and
named in the groups.
"""

import numpy as np
import pytest

import fasterm as fe

N, D, STEPS = 100_000, 100, 20
CLIP, RADIUS, LR, SCALE = 0.5, 5.0, 0.1, 1e-3


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D)) / np.sqrt(D)
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    return X, y


def numpy_noisy_pgd(X, y, rng, steps=STEPS):
    norms = np.linalg.norm(X, axis=1)  # cached, as a careful numpy user would
    n = X.shape[0]
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        z = X @ w
        g = -y / (1.0 + np.exp(y * z))  # d/dz log(1 + exp(-yz))
        factor = np.minimum(1.0, CLIP / np.maximum(np.abs(g) * norms, 1e-300))
        grad = X.T @ (g * factor) / n
        grad += rng.laplace(0.0, SCALE, X.shape[1])
        w = w - LR * grad
        nw = np.linalg.norm(w)
        if nw > RADIUS:
            w *= RADIUS / nw
    return w


def _group(benchmark, what, threads):
    benchmark.group = f"{what}-{threads}-thread{'s' if threads > 1 else ''}"


def test_numpy_noisy_pgd(benchmark, data, threads):
    _group(benchmark, f"noisy-pgd-{STEPS}-steps-n1e5-d100", threads)
    X, y = data
    benchmark(numpy_noisy_pgd, X, y, np.random.default_rng(1))


def test_fasterm_noisy_pgd(benchmark, data, threads):
    _group(benchmark, f"noisy-pgd-{STEPS}-steps-n1e5-d100", threads)
    X, y = data
    C = fe.L2Ball(RADIUS, D)
    benchmark(fe.noisy_pgd, fe.losses.Logistic(), X, y, C, 1.0, delta=1e-6, steps=STEPS,
              clip=CLIP, data_norm=1e6, lr=LR, average=False, random_state=1)


def test_fasterm_noisy_pgd_float32(benchmark, data, threads):
    _group(benchmark, f"noisy-pgd-{STEPS}-steps-n1e5-d100-float32", threads)
    X, y = data
    X32, y32 = X.astype(np.float32), y.astype(np.float32)
    C = fe.L2Ball(RADIUS, D)
    benchmark(fe.noisy_pgd, fe.losses.Logistic(), X32, y32, C, 1.0, delta=1e-6, steps=STEPS,
              clip=CLIP, data_norm=1e6, lr=LR, average=False, random_state=1)


# A small problem (the breast-cancer training set's shape, 398 × 31 with the intercept
# column), where the per-step cost is dominated by everything but the pass over X: this
# is what the compiled loop (one call for all T steps) is for.
SMALL_N, SMALL_D, SMALL_STEPS = 398, 31, 100


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((SMALL_N, SMALL_D)) / np.sqrt(SMALL_D)
    y = np.where(rng.random(SMALL_N) < 0.5, -1.0, 1.0)
    return X, y


@pytest.mark.benchmark(group=f"noisy-pgd-{SMALL_STEPS}-steps-n398-d31")
def test_numpy_noisy_pgd_small(benchmark, small):  # one thread on both sides (conftest.py)
    X, y = small
    benchmark(numpy_noisy_pgd, X, y, np.random.default_rng(1), SMALL_STEPS)


@pytest.mark.benchmark(group=f"noisy-pgd-{SMALL_STEPS}-steps-n398-d31")
def test_fasterm_noisy_pgd_small(benchmark, small):
    X, y = small
    C = fe.L2Ball(RADIUS, SMALL_D)
    benchmark(fe.noisy_pgd, fe.losses.Logistic(), X, y, C, 1.0, delta=1e-6, steps=SMALL_STEPS,
              clip=CLIP, data_norm=1e6, lr=LR, average=False, random_state=1)
