"""The compiled GD loop with momentum (src/cpp/fasterm/loops.hpp, ``_losses.pgd_loop``) beside
the numpy loop a user would write for the same steps.

    pytest bench/bench_gd_loop.py --benchmark-enable --benchmark-group-by=group

Accelerated noisy GD (FISTA momentum, Gaussian noise, clipped logistic gradients, L2 ball) for
STEPS steps at two sizes: the breast-cancer shape (n = 398, d = 31, where the per-step overhead
of a Python loop counts) and n = 1e5, d = 100 (where the passes over X do).  Both sides get the
row norms once, outside the loop; one thread on both sides (the ``threads`` fixture, 1 only).
"""

import numpy as np
import pytest

import fasterm.erm._losses as _losses

STEPS = 20
CLIP, RADIUS, LR, SCALE = 0.5, 5.0, 0.5, 1e-2
SIZES = {"n398-d31": (398, 31), "n1e5-d100": (100_000, 100)}


def _betas(steps):
    k = [1.0]
    for _ in range(steps):
        k.append(0.5 * (1.0 + np.sqrt(1.0 + 4.0 * k[-1] ** 2)))
    return np.array([(k[t - 1] - 1.0) / k[t] if t > 0 else 0.0 for t in range(steps)])


@pytest.fixture(scope="module", params=list(SIZES))
def data(request):
    n, d = SIZES[request.param]
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return request.param, X, y, np.linalg.norm(X, axis=1)


def numpy_accelerated_gd(X, y, norms, rng, betas):
    n = X.shape[0]
    w = np.zeros(X.shape[1])
    prev = w.copy()
    for b in betas:
        at = w + b * (w - prev)
        prev = w
        g = -y / (1.0 + np.exp(y * (X @ at)))  # d/dz log(1 + exp(-yz))
        factor = np.minimum(1.0, CLIP / np.maximum(np.abs(g) * norms, 1e-300))
        grad = X.T @ (g * factor) / n + rng.standard_normal(X.shape[1]) * SCALE
        w = at - LR * grad
        nw = np.linalg.norm(w)
        if nw > RADIUS:
            w = w * (RADIUS / nw)
    return w


def compiled_accelerated_gd(X, y, norms, rng, betas):
    w = np.zeros(X.shape[1])
    _losses.pgd_loop(_losses.LOGISTIC, X, y, norms, 0.0, CLIP, np.inf, w, len(betas), LR, 0.0,
                     _losses.NOISE_GAUSSIAN, SCALE, rng.bit_generator, _losses.SET_L2_BALL, RADIUS, None, None,
                     None, 1, betas=betas)
    return w


@pytest.mark.parametrize("how", ["numpy", "fasterm"])
def test_accelerated_gd(benchmark, data, how, threads):
    if threads != 1:
        pytest.skip("one thread on both sides")
    name, X, y, norms = data
    benchmark.group = f"accelerated-gd-{STEPS}-steps-{name}-1-thread"
    run = numpy_accelerated_gd if how == "numpy" else compiled_accelerated_gd
    benchmark(run, X, y, norms, np.random.default_rng(1), _betas(STEPS))
