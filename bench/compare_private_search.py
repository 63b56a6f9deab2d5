"""PrivateSearch against the default estimator at the same total budget (docs/model_selection.rst).

Breast cancer (rows in the unit ball with the published feature ranges), random
70/30 splits, δ = 1e-5: the default ``DPLogisticRegression(epsilon=ε)`` against
``PrivateSearch(DPLogisticRegression(), grid, epsilon=ε)`` whose (ε, δ) covers
every run and the selection.

    python bench/compare_private_search.py [--splits 20]
"""

from __future__ import annotations

import argparse

import numpy as np

import fasterm as fe
from fasterm.datasets import load_breast_cancer, train_test_split

GRIDS = {
    "max_steps": {"max_steps": [10, 20, 40]},
    "max_steps x alpha": {"max_steps": [10, 20, 40], "alpha": [1e-4, 1e-3]},
}


def run(splits, eps, grid):
    default, search, spent = [], [], []
    for s, (Xtr, Xte, ytr, yte) in enumerate(splits):
        default.append(fe.DPLogisticRegression(epsilon=eps, random_state=s).fit(Xtr, ytr).score(Xte, yte))
        m = fe.PrivateSearch(fe.DPLogisticRegression(), grid, epsilon=eps, random_state=s).fit(Xtr, ytr)
        search.append(m.score(Xte, yte))
        spent.append(m.epsilon_)
    se = lambda a: np.std(a) / np.sqrt(len(a))  # noqa: E731
    return (f"default {np.mean(default):.3f}±{se(default):.3f}, search {np.mean(search):.3f}±{se(search):.3f} "
            f"(largest epsilon_ {max(spent):.6f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=20)
    args = ap.parse_args()
    X, y = load_breast_cancer(scaled=True)
    splits = [train_test_split(X, y, 0.3, random_state=s) for s in range(args.splits)]
    for eps in (0.5, 1.0, 2.0, 5.0):
        for name, grid in GRIDS.items():
            print(f"eps={eps} grid {name}: {run(splits, eps, grid)}", flush=True)


if __name__ == "__main__":
    main()
