"""Multiclass accuracy of the estimators (docs/multiclass.rst): one budget against one-vs-rest.

scikit-learn's *digits* (10 classes, 1,797 × 64, pixels in the public range
[0, 16], so ‖x‖ ≤ 16·√64 = 128 and x/128 lies in the unit ball), random 70/30
splits, δ = 1e-5, default parameters; one-vs-rest fits K binary models with
ε/K each and a seed per class (independent noise).  Also the data the rules
were chosen on: synthetic multiclass data and the wine set.

    python bench/compare_multiclass.py [--splits 5] [--sets digits]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from sklearn.datasets import load_digits, load_wine, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

import fasterm as fe


def digits():
    X, y = load_digits(return_X_y=True)
    return X / 128.0, y


def synthetic(k, d, n, spread, seed=0):
    """make_classification rows divided by a fixed constant of the generator (spread·√d):
    3 puts most rows near the unit sphere, 6 at about a third of it (a loose bound)."""
    X, y = make_classification(n_samples=n, n_features=d, n_informative=min(d, 2 * k), n_redundant=0,
                               n_classes=k, n_clusters_per_class=1, class_sep=1.5, random_state=seed)
    return X / (spread * math.sqrt(d)), y


def wine():
    # Published ranges of the 13 features (scikit-learn's wine DESCR, "Summary Statistics").
    lo = np.array([11.0, 0.74, 1.36, 10.6, 70.0, 0.98, 0.34, 0.13, 0.41, 1.3, 0.48, 1.27, 278.0])
    hi = np.array([14.8, 5.80, 3.23, 30.0, 162.0, 3.88, 5.08, 0.66, 3.58, 13.0, 1.71, 4.00, 1680.0])
    X, y = load_wine(return_X_y=True)
    Xs = (np.clip(X, lo, hi) - lo) / (hi - lo) - 0.5
    return Xs / (math.sqrt(X.shape[1]) / 2), y


def accuracy(X, y, make, splits):
    out = []
    for s in range(splits):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=s)
        out.append(make(s, Xtr, ytr).score(Xte, yte))
    return float(np.mean(out)), float(np.std(out) / math.sqrt(len(out)))


class _OvR:
    def __init__(self, models, classes):
        self.models, self.classes = models, classes

    def score(self, X, y):
        scores = np.column_stack([m.decision_function(X) for m in self.models])
        return float(np.mean(self.classes[scores.argmax(axis=1)] == y))


def ovr(cls, eps):
    def make(s, X, y):
        classes = np.unique(y)
        K = len(classes)
        return _OvR([cls(epsilon=eps / K, random_state=1000 * s + k).fit(X, y == c)
                     for k, c in enumerate(classes)], classes)
    return make


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--sets", nargs="+", default=None, help="only these data sets (e.g. digits)")
    args = ap.parse_args()
    sets = {"digits": digits(), "synthetic K=10 d=40": synthetic(10, 40, 3000, 3.0),
            "synthetic K=10 d=40 loose": synthetic(10, 40, 3000, 6.0),
            "synthetic K=5 d=20 loose": synthetic(5, 20, 2000, 6.0), "wine": wine()}
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets}
    for name, (X, y) in sets.items():
        nonpriv = accuracy(X, y, lambda s, A, b: LogisticRegression(max_iter=2000).fit(A, b), args.splits)
        print(f"{name}: n={X.shape[0]} d={X.shape[1]} K={len(np.unique(y))}, non-private {nonpriv[0]:.3f}")
        for eps in (1.0, 2.0):
            row = []
            for label, make in [
                    ("logistic", lambda s, A, b: fe.DPLogisticRegression(epsilon=eps, random_state=s).fit(A, b)),
                    ("svc", lambda s, A, b: fe.DPLinearSVC(epsilon=eps, random_state=s).fit(A, b)),
                    ("ovr-logistic", ovr(fe.DPLogisticRegression, eps)),
                    ("ovr-svc", ovr(fe.DPLinearSVC, eps))]:
                m, se = accuracy(X, y, make, args.splits)
                row.append(f"{label} {m:.3f}±{se:.3f}")
            print(f"  eps={eps}: " + ", ".join(row), flush=True)


if __name__ == "__main__":
    main()
