"""fasterm's default fits beside scikit-learn, binary and multiclass, in one run — twice.

    python bench/compare_fits.py [--reps 3] [--runs 2] [--threads 1] [--only binary multiclass]

One table, every row a problem and a library, time and held-out accuracy:

* binary, d = 100, n = 1.6e5 and 1e6, float64 and float32 (the data of
  ``bench/binary_passes.py``: Bayes accuracy 0.75), with the time also in
  passes of one ``X @ w`` on the same X;
* multiclass K = 10: the synthetic multinomial problem (n = 8e4, d = 100) and
  the wide image-like one (n = 3,500, d = 650) of
  ``bench/compare_multiclass_fit.py``.

Libraries, each with its defaults: ``fasterm.DPLogisticRegression(epsilon=1,
delta=1e-5)``; scikit-learn's non-private ``LogisticRegression()``;
``SGDClassifier(loss="log_loss", max_iter=1, tol=None)`` (one epoch of plain,
non-private SGD).  Fits of one repetition are interleaved (load on the shared
machine hits every library alike); time is the median over ``--reps``.

``--runs 2`` (default) repeats the whole table in the same process and prints,
per row, the relative difference of the two runs' median times and of their
speed-up ratios (a library's time over fasterm's in the same run): the table of
docs/performance.rst gives both runs, and a row counts as reproduced when its
ratios agree within 15% (absolute times on the shared machine drift between
runs by up to ~25% for every library alike).

Threads: ``--threads 1`` pins the process to one CPU and every BLAS/OpenMP
pool to one thread (threadpoolctl); the header states the BLAS kernel and
whether OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are set (unset them for a
fair numpy/scikit-learn side).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from binary_passes import _gemv_time, header, synthetic as binary_data  # noqa: E402
from compare_multiclass_fit import synthetic as multiclass_data, wide as wide_data  # noqa: E402
from conftest import pinned  # noqa: E402

import fasterm as fe  # noqa: E402


def _models(seed: int) -> dict:
    from sklearn.linear_model import LogisticRegression, SGDClassifier

    return {
        "fasterm default": lambda: fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=seed),
        "sklearn LogisticRegression()": lambda: LogisticRegression(),
        "sklearn SGDClassifier (1 epoch)": lambda: SGDClassifier(loss="log_loss", max_iter=1, tol=None,
                                                                 random_state=seed),
    }


def _problems(only: list[str]):
    """(name, X, y, X_test, y_test, unit) for each problem; unit = one X @ w (binary) or None."""
    if "binary" in only:
        for n in (160_000, 1_000_000):
            n_test = max(10_000, n // 5)
            X_all, y_all = binary_data(n + n_test, seed=0)
            for dtype in (np.float64, np.float32):
                X = np.ascontiguousarray(X_all[:n], dtype=dtype)
                yield (f"binary n={n:,} d=100 {np.dtype(dtype).name}", X, y_all[:n],
                       X_all[n:].astype(dtype), y_all[n:], _gemv_time(X))
            del X_all
    if "multiclass" in only:
        Xtr, ytr, Xte, yte = multiclass_data()
        yield "multiclass K=10 n=80,000 d=100", Xtr, ytr, Xte, yte, None
        Xtr, ytr, Xte, yte = wide_data()
        yield "wide K=10 n=3,500 d=650", Xtr, ytr, Xte, yte, None


def run_once(only: list[str], reps: int) -> dict:
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter ConvergenceWarnings of the non-private fits
        for name, X, y, Xt, yt, unit in _problems(only):
            times = {m: [] for m in _models(0)}
            accs = {m: [] for m in _models(0)}
            for r in range(reps):
                for m, make in _models(r).items():
                    est = make()
                    t0 = time.perf_counter()
                    est.fit(X, y)
                    times[m].append(time.perf_counter() - t0)
                    accs[m].append(float(np.mean(est.predict(Xt) == yt)))
            for m in times:
                out[(name, m)] = dict(median=statistics.median(times[m]), unit=unit,
                                      accuracy=statistics.mean(accs[m]))
            print(f"  done: {name}", file=sys.stderr, flush=True)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", nargs="+", default=["binary", "multiclass"], choices=["binary", "multiclass"])
    args = ap.parse_args(argv)
    with pinned(args.threads):
        print(header(args.threads))
        runs = []
        for k in range(args.runs):
            t = time.strftime("%H:%M:%S", time.gmtime())
            print(f"run {k + 1} starts {t} UTC, load average {os.getloadavg()[0]:.2f}", flush=True)
            runs.append(run_once(args.only, args.reps))
    print()
    label = " / ".join(f"run {k + 1}" for k in range(args.runs))
    print(f"| problem | fit | median ms ({label}) | passes of `X @ w` | fasterm speed-up | accuracy | "
          f"runs differ by (time / speed-up) |")
    print("|---|---|---|---|---|---|---|")
    for key in runs[0]:
        name, m = key
        meds = [r[key]["median"] for r in runs]
        unit = runs[0][key]["unit"]
        fast = [r[(name, "fasterm default")]["median"] for r in runs]
        passes = " / ".join(f"{md / r[key]['unit']:.1f}" for md, r in zip(meds, runs)) if unit else "—"
        ratio = " / ".join(f"{md / f:.2f}×" for md, f in zip(meds, fast)) if m != "fasterm default" else "1"
        spread = (max(meds) - min(meds)) / min(meds)
        ratios = [md / f for md, f in zip(meds, fast)]
        r_spread = "—" if m == "fasterm default" else f"{100 * (max(ratios) - min(ratios)) / min(ratios):.0f}%"
        print(f"| {name} | {m} | {' / '.join(f'{md * 1e3:.0f}' for md in meds)} | {passes} | {ratio} | "
              f"{runs[0][key]['accuracy']:.3f} | {100 * spread:.0f}% / {r_spread} |")


if __name__ == "__main__":
    main()
