"""Accuracy and time of a noisy-SGD fit, for comparing two checkouts (the one clip per run of 0.3
against the per-size clips before it).

    PYTHONPATH=<checkout> taskset -c 0 python bench/sgd_one_clip.py [--n 60000] [--seeds 10] [--reps 5]

Synthetic data of our own (a logistic model, d = 20, rows of norm about 1/2), float32 and
float64: ``DPLogisticRegression(epsilon=1, delta=1e-5, solver="noisy_sgd", data_norm=1)``;
test accuracy (mean over ``--seeds`` fits on a held-out half) and the minimum fit time over
``--reps`` fits, one pinned thread.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

import fasterm as fe


def data(n, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, d)) / (2.0 * np.sqrt(d))  # row norms about 1/2: within data_norm = 1
    w = rng.normal(size=d)
    y = (rng.random(2 * n) < 1 / (1 + np.exp(-6 * X @ w / np.linalg.norm(w)))).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=60_000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args(argv)
    X, y, Xt, yt = data(a.n)
    print(f"fasterm at {fe.__file__}")
    with threadpool_limits(1):
        for dtype in (np.float32, np.float64):
            Xd = np.ascontiguousarray(X, dtype=dtype)

            def fit(seed):
                return fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, solver="noisy_sgd", data_norm=1.0,
                                               random_state=seed).fit(Xd, y)
            acc = [float(np.mean(fit(s).predict(np.asarray(Xt, dtype=dtype)) == yt)) for s in range(a.seeds)]
            best = np.inf
            for _ in range(a.reps):
                t0 = time.perf_counter()
                fit(0)
                best = min(best, time.perf_counter() - t0)
            m = fit(0)
            print(f"{np.dtype(dtype).name}: accuracy {np.mean(acc):.5f} ± {np.std(acc) / np.sqrt(len(acc)):.5f} "
                  f"(seed 0: {acc[0]:.5f}), fit {best * 1e3:.2f} ms, steps {m.result_.steps}, "
                  f"σ {m.result_.info['noise_multiplier']!r}, δ {m.result_.delta!r}")


if __name__ == "__main__":
    main()
