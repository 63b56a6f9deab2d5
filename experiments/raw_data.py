"""Private models on raw data: declared bounds, BoundedScaler, bounds="private", the default fit.

Measures, over random 70/30 splits (the same splits and seeds for every row),
the test accuracy of DPLogisticRegression at the given ε (δ = 1e-5) on

* breast cancer (fasterm.datasets.load_breast_cancer, raw; declared bounds =
  the published ranges, fasterm.datasets.FEATURE_BOUNDS);
* wine (scikit-learn's load_wine, raw, 3 classes; declared bounds = the
  Min/Max of its documentation's "Summary Statistics" table, WINE_BOUNDS
  below);
* a synthetic table (n rows, 4 numeric features on scales from 1e-2 to 1e4,
  known generating ranges used as the declared bounds), to show where
  bounds="private" starts to work;

for: the pre-scaled rows (scale_to_unit_ball with the declared bounds, then
the default estimator), bounds=(low, high), a BoundedScaler pipeline,
bounds="private" (with its epsilon_), and the default fit on the raw rows
(whether it emitted a DataWarning).  Also the cost of the DataWarning check:
fit time with and without it (``--timing``).

    python experiments/raw_data.py                 # 20 splits, ε = 1
    python experiments/raw_data.py --epsilons 1 3 10 --splits 20
    python experiments/raw_data.py --epsilons --synthetic --timing   # the warning check's cost only
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_wine
from sklearn.pipeline import make_pipeline

import fasterm as fe
from fasterm.datasets import FEATURE_BOUNDS, load_breast_cancer, scale_to_unit_ball, train_test_split
from fasterm.preprocessing import BoundedScaler

# scikit-learn's wine DESCR, "Summary Statistics" (Min, Max), in load_wine's column order.
WINE_BOUNDS = (
    np.array([11.0, 0.74, 1.36, 10.6, 70.0, 0.98, 0.34, 0.13, 0.41, 1.3, 0.48, 1.27, 278.0]),
    np.array([14.8, 5.80, 3.23, 30.0, 162.0, 3.88, 5.08, 0.66, 3.58, 13.0, 1.71, 4.00, 1680.0]),
)


def synthetic(n, seed=0):
    """4 features on different scales, a logistic label; declared bounds = the generating ranges."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(800.0, 1200.0, n), rng.uniform(0.05, 0.1, n),
                         rng.uniform(0.0, 20.0, n), rng.uniform(-5.0, 1.0, n)])
    low, high = np.array([800.0, 0.05, 0.0, -5.0]), np.array([1200.0, 0.1, 20.0, 1.0])
    z = (X - low) / (high - low) - 0.5
    logit = 4.0 * (z @ np.array([1.0, -1.0, 0.5, 0.0]))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    return X, y, (low, high)


def run(name, X, y, bounds, epsilon, splits):
    rows = {k: [] for k in ("pre-scaled", "bounds=(low, high)", "BoundedScaler pipeline",
                            'bounds="private"', "default on raw rows")}
    eps_private, warned = [], []
    for s in range(splits):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=s)
        est = dict(epsilon=epsilon, delta=1e-5, random_state=1000 + s)
        Str, Ste = scale_to_unit_ball(Xtr, *bounds), scale_to_unit_ball(Xte, *bounds)
        rows["pre-scaled"].append(fe.DPLogisticRegression(**est).fit(Str, ytr).score(Ste, yte))
        rows["bounds=(low, high)"].append(fe.DPLogisticRegression(bounds=bounds, **est).fit(Xtr, ytr).score(Xte, yte))
        pipe = make_pipeline(BoundedScaler(bounds), fe.DPLogisticRegression(**est)).fit(Xtr, ytr)
        rows["BoundedScaler pipeline"].append(pipe.score(Xte, yte))
        p = fe.DPLogisticRegression(bounds="private", **est).fit(Xtr, ytr)
        rows['bounds="private"'].append(p.score(Xte, yte))
        eps_private.append(p.epsilon_)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            rows["default on raw rows"].append(fe.DPLogisticRegression(**est).fit(Xtr, ytr).score(Xte, yte))
        warned.append(any(issubclass(w.category, fe.DataWarning) for w in rec))
    print(f"\n{name}: n = {len(y)}, d = {X.shape[1]}, ε = {epsilon}, δ = 1e-5, {splits} splits "
          f"(majority class {np.bincount(y).max() / len(y):.3f})")
    for k, v in rows.items():
        extra = ""
        if k == 'bounds="private"':
            extra = f"   epsilon_ = {max(eps_private):.6f} (fit at ε/2 = {epsilon / 2:g}, the ranges by zCDP)"
        if k == "default on raw rows":
            extra = f"   DataWarning in {sum(warned)}/{splits} fits"
        print(f"  {k:24s} {np.mean(v):.3f} ± {np.std(v):.3f}{extra}")


def timing(n=200_000, d=50, repeats=15):
    """Fit time on rows already in the unit ball, with and without the DataWarning check,
    interleaved (on, off, on, off, ...) so that the load of a shared machine hits both alike."""
    import pandas as pd

    from fasterm import linear_model

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d)) / (2 * np.sqrt(d))
    y = (X[:, 0] > 0).astype(int)
    original = linear_model._warn_clipped_rows
    off = lambda X, norms, dn: norms  # noqa: E731
    try:
        for label, data in (("ndarray", X), ("DataFrame", pd.DataFrame(X))):
            times = {True: [], False: []}
            for _ in range(repeats):
                for check in (True, False):
                    linear_model._warn_clipped_rows = original if check else off
                    t = time.perf_counter()
                    fe.DPLogisticRegression(random_state=0).fit(data, y)
                    times[check].append(time.perf_counter() - t)
            on, no = np.median(times[True]), np.median(times[False])
            print(f"  {label:9s} n = {n}, d = {d}: median fit {1e3 * on:.1f} ms with the check, "
                  f"{1e3 * no:.1f} ms without ({100 * (on / no - 1):+.1f}%), {repeats} interleaved pairs")
    finally:
        linear_model._warn_clipped_rows = original


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epsilons", type=float, nargs="*", default=[1.0])
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--synthetic", type=int, nargs="*", default=[2000, 20000])
    ap.add_argument("--timing", action="store_true")
    args = ap.parse_args()
    Xb, yb = load_breast_cancer()
    wine = load_wine()
    for eps in args.epsilons:
        run("breast cancer (raw)", Xb, yb, FEATURE_BOUNDS, eps, args.splits)
        run("wine (raw, 3 classes)", wine.data, wine.target, WINE_BOUNDS, eps, args.splits)
        for n in args.synthetic:
            X, y, bounds = synthetic(n)
            run(f"synthetic (n = {n})", X, y, bounds, eps, args.splits)
    if args.timing:
        timing()
        timing(n=2000, d=30, repeats=50)


if __name__ == "__main__":
    main()
