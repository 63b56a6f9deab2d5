"""δ = 0 with K > 2 on digits: the default (noisy class sums) against Laplace noisy GD and one-vs-rest at ε/K.

    python bench/compare_multiclass_pure.py [--splits 10]

scikit-learn's digits (x/128: pixels in the public range [0, 16]), 70/30
splits with seeds 0..splits-1, the seed of each fit its split's; one-vs-rest:
K binary ``DPLogisticRegression(epsilon=ε/K, delta=0)`` fits (objective
perturbation, the binary δ = 0 default) with a seed per class.  Mean test
accuracy ± standard error (docs/multiclass.rst, "Pure ε").
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from compare_multiclass import _OvR, accuracy, digits  # noqa: E402

import fasterm as fe  # noqa: E402


def ovr0(eps):
    def make(s, X, y):
        classes = np.unique(y)
        K = len(classes)
        return _OvR([fe.DPLogisticRegression(epsilon=eps / K, delta=0.0, random_state=1000 * s + k).fit(X, y == c)
                     for k, c in enumerate(classes)], classes)
    return make


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=10)
    S = ap.parse_args(argv).splits
    warnings.simplefilter("ignore")
    X, y = digits()
    for eps in (1.0, 2.0, 5.0):
        a = accuracy(X, y, lambda s, X, y: fe.DPLogisticRegression(epsilon=eps, delta=0.0, random_state=s).fit(X, y), S)
        g = accuracy(X, y, lambda s, X, y: fe.DPLogisticRegression(
            epsilon=eps, delta=0.0, solver="noisy_gd", noise="laplace", calibration="pure",
            random_state=s).fit(X, y), S)
        o = accuracy(X, y, ovr0(eps), S)
        print(f"eps {eps}: default (class sums) {a[0]:.3f}±{a[1]:.3f}  laplace gd (its T rule) "
              f"{g[0]:.3f}±{g[1]:.3f}  ovr eps/K {o[0]:.3f}±{o[1]:.3f}", flush=True)


if __name__ == "__main__":
    main()
