"""A/B timing of the float32 gradient sum's accumulation (docs/guarantees.rst, "Floating point").

Run once per build, one thread pinned (min of R repetitions of K calls):

    PYTHONPATH=<tree with the build's .so> python experiments/build/float_accumulation.py LABEL

Prints, for the clipped logistic gradient sum at n = 1e5 (d = 100 and 13) and
a Poisson minibatch (rate 0.1, grad_sum_rows), the fasterm times with norms
cached and in the pass, one ``X @ w`` and the numpy way (its BLAS limited to
one thread).  Compare builds by ratios against ``X @ w`` of the same run.
"""

import os
import sys
import time

import numpy as np
from scipy.special import expit
from threadpoolctl import threadpool_limits

from fasterm import losses
from fasterm.erm import _losses

os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:1])
R, K, CLIP = 15, 20, 0.5


def best(f):
    f()
    t = []
    for _ in range(R):
        s = time.perf_counter()
        for _ in range(K):
            f()
        t.append((time.perf_counter() - s) / K)
    return min(t) * 1e3


def numpy_way(X, y, w, norms, c):
    g = -y * expit(-y * (X @ w))
    return X.T @ (g * np.minimum(1, c / (np.abs(g) * norms)))


label = sys.argv[1] if len(sys.argv) > 1 else "?"
rng = np.random.default_rng(0)
with threadpool_limits(limits=1):
    for dtype in (np.float32, np.float64):
        for n, d in ((100_000, 100), (100_000, 13)):
            X = rng.standard_normal((n, d)).astype(dtype)
            y = rng.choice([-1.0, 1.0], n).astype(dtype)
            w = (rng.standard_normal(d) * 0.1).astype(dtype)
            norms = losses.row_norms(X)
            norms_np = np.linalg.norm(X, axis=1)
            out = np.empty(d, dtype=dtype)
            rows = np.flatnonzero(rng.random(n) < 0.1).astype(np.int64)
            k = _losses.LOGISTIC
            gemv = best(lambda: X @ w)
            cached = best(lambda: _losses.grad_sum(k, X, y, w, norms, 0.0, CLIP, np.inf, out, 1))
            inpass = best(lambda: _losses.grad_sum(k, X, y, w, None, 0.0, CLIP, np.inf, out, 1))
            mb = best(lambda: _losses.grad_sum_rows(k, X, y, w, norms, 0.0, CLIP, np.inf, rows, out, 1))
            npw = best(lambda: numpy_way(X, y, w, norms_np, CLIP))
            print(f"{label} {np.dtype(dtype).name} n={n} d={d}: X@w {gemv:.3f} ms | cached {cached:.3f} "
                  f"({cached / gemv:.2f}x) | in-pass {inpass:.3f} ({inpass / gemv:.2f}x) | "
                  f"minibatch {mb:.3f} | numpy {npw:.3f} ms", flush=True)
