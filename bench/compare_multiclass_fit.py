"""Multiclass default fits beside scikit-learn's non-private ``LogisticRegression()``: time and accuracy.

    python bench/compare_multiclass_fit.py [--reps 3] [--threads 1] [--which synthetic wide digits]

Problems (public bounds; rows in the unit ball):

* ``synthetic``: K = 10, d = 100, 100,000 rows (80,000 to train, 20,000 held
  out): row directions uniform on the sphere, norms uniform in [0.5, 1], labels
  drawn from a planted multinomial model softmax(Wᵀx) with W of i.i.d. normal
  entries scaled to ‖W_k‖ = 40 per class;
* ``wide``: K = 10, d = 650, 5,000 rows (3,500 to train): "images" — each
  class a random prototype of 650 pixels in [0, 1] (smoothed), every row its
  class prototype plus pixel noise, clipped to [0, 1]; the public bound
  ‖x‖ ≤ √650 scales the rows into the unit ball;
* ``digits``: scikit-learn's digits (x/128), 70/30 split.

fasterm: ``DPLogisticRegression(epsilon=1, random_state=seed)`` (δ = 1e-5,
every other parameter its default: the solver rule picks noisy SGD at n ≥
5,000 and noisy GD below).  scikit-learn: ``LogisticRegression()`` with its
defaults (L-BFGS, multinomial, max_iter=100; convergence warnings ignored).
Timing: the fits of one repetition are interleaved; the median over
repetitions.  ``--threads 1`` (default) pins the process to one CPU and BLAS
to one thread (threadpoolctl, whose report is printed).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import fasterm as fe


def synthetic(n=100_000, d=100, K=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X *= rng.uniform(0.5, 1.0, (n, 1))
    W = rng.standard_normal((d, K))
    W *= 40.0 / np.linalg.norm(W, axis=0)
    Z = X @ W
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return X[:80_000], y[:80_000], X[80_000:], y[80_000:]


def wide(n=5_000, d=650, K=10, seed=0):
    rng = np.random.default_rng(seed)
    proto = rng.random((K, d))
    proto = np.clip((proto + np.roll(proto, 1, axis=1) + np.roll(proto, -1, axis=1)) / 3.0 - 0.1, 0.0, 1.0)
    y = rng.integers(0, K, n)
    X = np.clip(proto[y] + 0.35 * rng.standard_normal((n, d)), 0.0, 1.0) / np.sqrt(d)
    return X[:3_500], y[:3_500], X[3_500:], y[3_500:]


def digits(seed=0):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X / 128.0, y, test_size=0.3, random_state=seed)
    return Xtr, ytr, Xte, yte


PROBLEMS = {"synthetic": synthetic, "wide": wide, "digits": digits}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--which", nargs="+", default=["synthetic", "wide", "digits"])
    ap.add_argument("--epsilon", type=float, default=1.0)
    args = ap.parse_args(argv)
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_info, threadpool_limits

    if args.threads:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.threads])
        limiter = threadpool_limits(limits=args.threads)
    print("threadpoolctl:", [(p["internal_api"], p["num_threads"], p.get("architecture")) for p in threadpool_info()])
    print("CPUs:", sorted(os.sched_getaffinity(0)), " OPENBLAS_CORETYPE:", os.environ.get("OPENBLAS_CORETYPE"))
    warnings.simplefilter("ignore", ConvergenceWarning)
    for name in args.which:
        Xtr, ytr, Xte, yte = PROBLEMS[name]()
        rows = {"fasterm": ([], []), "sklearn": ([], [])}
        for r in range(args.reps):
            for lib in rows:
                est = (fe.DPLogisticRegression(epsilon=args.epsilon, random_state=r) if lib == "fasterm"
                       else LogisticRegression())
                t = time.perf_counter()
                est.fit(Xtr, ytr)
                rows[lib][0].append(time.perf_counter() - t)
                rows[lib][1].append(est.score(Xte, yte))
        tf, ts = np.median(rows["fasterm"][0]), np.median(rows["sklearn"][0])
        print(f"{name} (n={Xtr.shape[0]}, d={Xtr.shape[1]}, K={len(np.unique(ytr))}), eps={args.epsilon}:")
        for lib, (times, accs) in rows.items():
            print(f"  {lib:8s} time {np.median(times) * 1e3:8.1f} ms (runs {', '.join(f'{t * 1e3:.0f}' for t in times)})"
                  f"  accuracy {np.mean(accs):.4f} (runs {', '.join(f'{a:.4f}' for a in accs)})")
        print(f"  sklearn/fasterm time ratio {ts / tf:.2f}")
    if args.threads:
        limiter.unregister() if hasattr(limiter, "unregister") else None


if __name__ == "__main__":
    main()
