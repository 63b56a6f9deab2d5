"""Time a freshly constructed ``DPLogisticRegression(epsilon=1).fit`` on the breast-cancer split
(n = 398, d = 30): the per-fit overhead of the default small-n path.

Run with one BLAS/OpenMP thread, e.g.::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/small_fit.py --fits 3000

``--epsilon`` (default 1) changes the fit's ε (at ε = 10 the default fit uses momentum).
Prints the median and the lower quartile of the per-fit times (ms), and the fasterm imported.
``--interleave A B``: run this script alternately under the PYTHONPATHs A and B (``-`` for
none), ``--rounds`` times each, so that the two are timed under the same machine state.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def _time(fits: int, epsilon: float) -> None:
    import numpy as np

    import fasterm as fe
    from fasterm.datasets import load_breast_cancer, train_test_split

    X, y = load_breast_cancer(scaled=True)
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.3, random_state=0)
    assert X_train.shape[0] == 398
    for i in range(50):  # warm-up: imports, caches of public numbers
        fe.DPLogisticRegression(epsilon=epsilon, random_state=i).fit(X_train, y_train)
    times = np.empty(fits)
    for i in range(fits):
        t0 = time.perf_counter()
        fe.DPLogisticRegression(epsilon=epsilon, random_state=i).fit(X_train, y_train)
        times[i] = time.perf_counter() - t0
    q25, med = np.percentile(times * 1e3, [25, 50])
    accelerated = fe.DPLogisticRegression(epsilon=epsilon, random_state=0).fit(X_train, y_train).result_.info[
        "accelerate"]
    print(f"{fe.__file__} epsilon={epsilon} (momentum: {accelerated}): median {med:.4f} ms, q25 {q25:.4f} ms over {fits} fits")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--fits", type=int, default=3000)
    p.add_argument("--interleave", nargs=2, metavar=("A", "B"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epsilon", type=float, default=1.0)
    a = p.parse_args()
    if a.interleave is None:
        _time(a.fits, a.epsilon)
        return
    for _ in range(a.rounds):
        for path in a.interleave:
            env = dict(os.environ)
            env.pop("PYTHONPATH", None)
            if path != "-":
                env["PYTHONPATH"] = path
            subprocess.run([sys.executable, __file__, "--fits", str(a.fits), "--epsilon", str(a.epsilon)], env=env, check=True,
                           cwd=os.path.dirname(os.path.abspath(__file__)))


if __name__ == "__main__":
    main()
