"""The default private fit beside scikit-learn and diffprivlib, in one run: time and accuracy.

    python bench/compare_default_fit.py [--sizes 398 160000 1000000] [--reps 5] [--threads 1]

Sizes: 398 is the breast-cancer training split (``fasterm.datasets``, 70/30,
one split per repetition); larger sizes are synthetic, d = 100: row
directions uniform on the sphere, norms uniform in [0.5, 1] (so rows lie in
the unit ball and ``data_norm=1`` holds for every library), labels from a
planted logistic model with ‖w‖ = 30 (Bayes accuracy about 0.8), 20% of
the rows held out for the accuracy.

Compared, with their defaults, ε = 1 (δ = 1e-5 for fasterm):

* ``fasterm.DPLogisticRegression(epsilon=1)`` — the default solver rule
  (docs/solvers.rst), and ``solver="noisy_pgd"`` (the previous default) at the
  smaller sizes;
* diffprivlib ``LogisticRegression(epsilon=1, data_norm=1)`` (objective
  perturbation, ε-DP);
* scikit-learn ``LogisticRegression()`` (non-private).

Timing: the fits of one repetition are interleaved, so load on the shared
machine hits every library alike; median over repetitions.  ``--threads 1``
(default) pins the process to one CPU (``os.sched_setaffinity``, which also
sets fasterm's kernel thread count) and BLAS to one thread (threadpoolctl);
``--threads 0`` leaves both at their defaults.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

import fasterm as fe
from fasterm.datasets import load_breast_cancer, train_test_split


def synthetic(n, d=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X *= rng.uniform(0.5, 1.0, (n, 1))
    w = rng.standard_normal(d)
    w *= 30.0 / np.linalg.norm(w)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ w))).astype(int)
    return X, y


def makers(n):
    from diffprivlib.models import LogisticRegression as DPL
    from sklearn.linear_model import LogisticRegression

    out = {
        "fasterm (default)": lambda s: fe.DPLogisticRegression(epsilon=1.0, random_state=s),
        "fasterm solver=pgd": lambda s: fe.DPLogisticRegression(epsilon=1.0, random_state=s, solver="noisy_pgd"),
        "diffprivlib": lambda s: DPL(epsilon=1.0, data_norm=1.0, random_state=s),
        "scikit-learn (non-private)": lambda s: LogisticRegression(),
    }
    if n > 200_000:  # 100 full passes: minutes, and the point is made at 1.6e5
        del out["fasterm solver=pgd"]
    return out


def measure(n, reps):
    if n == 398:
        X, y = load_breast_cancer(scaled=True)
        data = [train_test_split(X, y, 0.3, random_state=r) for r in range(reps)]
    else:
        X, y = synthetic(int(n / 0.8) + 1)
        data = [(X[:n], X[n:], y[:n], y[n:])] * reps
    mk = makers(n)
    for name, make in mk.items():  # first-call costs (imports, calibration caches) are not fit time
        make(0).fit(data[0][0], data[0][2])
    secs = {k: [] for k in mk}
    acc = {k: [] for k in mk}
    info = {}
    for r, (X_tr, X_te, y_tr, y_te) in enumerate(data):
        for name, make in mk.items():
            model = make(r)
            t0 = time.perf_counter()
            model.fit(X_tr, y_tr)
            secs[name].append(time.perf_counter() - t0)
            acc[name].append(model.score(X_te, y_te))
            if name == "fasterm (default)":
                info = dict(solver=model.result_.info.get("solver", "pgd"), steps=model.n_iter_,
                            eps=model.epsilon_, delta=model.delta_)
    return secs, acc, info


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[398, 160_000])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, choices=[0, 1])
    args = ap.parse_args(argv)
    try:
        import diffprivlib  # noqa: F401
        from threadpoolctl import threadpool_limits
    except ImportError as exc:  # pragma: no cover - depends on the environment
        sys.exit(f"this comparison needs diffprivlib, scikit-learn and threadpoolctl: {exc}")
    warnings.simplefilter("ignore")  # diffprivlib's and scikit-learn's convergence warnings
    if args.threads == 1 and hasattr(os, "sched_setaffinity"):  # Linux; elsewhere BLAS only
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    limit = threadpool_limits(1) if args.threads == 1 else threadpool_limits(None)
    with limit:
        print(f"threads: {'1 (process pinned to one CPU, BLAS 1)' if args.threads else 'defaults'}; "
              f"median of {args.reps} fits; ε = 1")
        print("| n | fit | time | test accuracy | vs fasterm |")
        print("|---|---|---|---|---|")
        for n in args.sizes:
            secs, acc, info = measure(n, args.reps)
            base = np.median(secs["fasterm (default)"])
            for name in secs:
                t = np.median(secs[name])
                label = name if name != "fasterm (default)" else (
                    f"fasterm (default: {info['solver']}, T={info['steps']})")
                print(f"| {n} | {label} | {1e3 * t:.2f} ms | {np.mean(acc[name]):.4f} | {t / base:.1f}× |")


if __name__ == "__main__":
    main()
