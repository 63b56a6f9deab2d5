"""The binary default fit in passes of one ``X @ w``, beside scikit-learn, in one run.

    python bench/binary_passes.py [--sizes 160000 1000000] [--reps 5] [--threads 1]

For n in ``--sizes`` (d = 100) and X in float64 and float32, one table row each:

* ``X @ w``: numpy's matrix-vector product (BLAS gemv), min over 9 calls — the
  unit: one pass over X;
* ``fasterm.DPLogisticRegression(epsilon=1, delta=1e-5)`` with its defaults
  (at these n the default solver is noisy_sgd: docs/solvers.rst);
* scikit-learn's non-private ``LogisticRegression()`` (L-BFGS, its defaults);
* scikit-learn's ``SGDClassifier(loss="log_loss", max_iter=1, tol=None)``: one
  epoch of plain SGD (non-private).

Each fit's time is the median over ``--reps`` repetitions (min beside it),
the fits of one repetition interleaved so that load on the shared machine hits
every library alike; "passes" is that median over the ``X @ w`` time of the
same X.  The accuracy is on held-out rows (20% as many, at least 10,000) drawn
with the training rows.

Data (public generator, seed fixed; the one of bench/compare_peers.py):
z ~ N(0, I_d), x = z/(1.2√d), rows outside the unit ball scaled onto it (so
``data_norm=1`` holds), y = 1[⟨x, β⟩ + σξ > 0] with ‖β‖ = 6 and σ the
standard deviation of ⟨x, β⟩ (Bayes accuracy 0.75).

Threads: ``--threads 1`` (default) pins the process to its first CPU
(``os.sched_setaffinity``, which fasterm's default ``n_threads`` follows) and
every BLAS/OpenMP pool to one thread (threadpoolctl); the header states the
BLAS kernel threadpoolctl reports and whether OPENBLAS_CORETYPE /
OPENBLAS_L2_SIZE are set (they change OpenBLAS's kernel choice).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import pinned  # noqa: E402

import fasterm as fe  # noqa: E402

D = 100


def synthetic(n: int, d: int = D, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / (1.2 * math.sqrt(d))
    norms = np.linalg.norm(X, axis=1)
    np.divide(X, np.maximum(norms, 1.0)[:, None], out=X)
    beta = rng.standard_normal(d)
    beta *= 6.0 / np.linalg.norm(beta)
    sigma = np.linalg.norm(beta) / (1.2 * math.sqrt(d))
    y = (X @ beta + sigma * rng.standard_normal(n) > 0).astype(np.int64)
    return X, y


def _gemv_time(X: np.ndarray) -> float:
    w = np.full(X.shape[1], 0.01, dtype=X.dtype)
    out = np.empty(X.shape[0], dtype=X.dtype)
    best = math.inf
    for _ in range(9):
        t0 = time.perf_counter()
        np.matmul(X, w, out=out)
        best = min(best, time.perf_counter() - t0)
    return best


def _models(seed: int):
    from sklearn.linear_model import LogisticRegression, SGDClassifier

    return {
        "fasterm default": lambda: fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=seed),
        "sklearn LogisticRegression()": lambda: LogisticRegression(),
        "sklearn SGDClassifier (1 epoch)": lambda: SGDClassifier(loss="log_loss", max_iter=1, tol=None,
                                                                 random_state=seed),
    }


def run_size(n: int, dtype, reps: int) -> list[dict]:
    n_test = max(10_000, n // 5)
    X_all, y_all = synthetic(n + n_test, seed=0)
    X = np.ascontiguousarray(X_all[:n], dtype=dtype)
    Xt, y, yt = X_all[n:].astype(dtype), y_all[:n], y_all[n:]
    del X_all
    unit = _gemv_time(X)
    times: dict[str, list[float]] = {name: [] for name in _models(0)}
    acc: dict[str, list[float]] = {name: [] for name in _models(0)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SGDClassifier's ConvergenceWarning at max_iter=1
        for r in range(reps):
            for name, make in _models(r).items():
                model = make()
                t0 = time.perf_counter()
                model.fit(X, y)
                times[name].append(time.perf_counter() - t0)
                acc[name].append(float(np.mean(model.predict(Xt) == yt)))
    rows = []
    for name in times:
        med = statistics.median(times[name])
        rows.append(dict(n=n, dtype=np.dtype(dtype).name, unit=unit, model=name, median=med,
                         min=min(times[name]), passes=med / unit, accuracy=statistics.mean(acc[name])))
    return rows


def header(threads: int) -> str:
    from threadpoolctl import threadpool_info

    import sklearn

    blas = sorted({f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture')})"
                   for i in threadpool_info() if i.get("user_api") == "blas"})
    env = {k: os.environ.get(k, "unset") for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    return (f"fasterm {fe.__version__}, numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
            f"Python {platform.python_version()}; threads: {threads} (process affinity and every "
            f"threadpoolctl pool); BLAS kernels: {', '.join(blas)}; "
            + ", ".join(f"{k}={v}" for k, v in env.items()))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[160_000, 1_000_000])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    with pinned(args.threads):
        print(header(args.threads))
        print()
        print("| n | X dtype | one `X @ w` (ms) | fit | median (ms) | min (ms) | passes of `X @ w` | test accuracy |")
        print("|---|---|---|---|---|---|---|---|")
        for n in args.sizes:
            for dtype in (np.float64, np.float32):
                for row in run_size(n, dtype, args.reps):
                    print(f"| {row['n']:,} | {row['dtype']} | {row['unit'] * 1e3:.1f} | {row['model']} | "
                          f"{row['median'] * 1e3:.0f} | {row['min'] * 1e3:.0f} | {row['passes']:.1f} | "
                          f"{row['accuracy']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
