"""noisy_gd's step budget at small n: the comparison behind ``GD_MAX_STEPS`` (docs/solvers.rst).

    python experiments/gd_budget.py                    # the comparison data (never breast cancer)
    python experiments/gd_budget.py --breast-cancer    # the same table on breast cancer, afterwards

Not a pytest benchmark: a script that prints test accuracies (mean over
``--splits`` random 70/30 splits, split seed = noise seed = 0, 1, …) of
``DPLogisticRegression(epsilon=ε, max_steps=B)`` — the default solver rule
with the compute budget B of noisy_gd, δ = 1e-5, every other parameter at its
default — for B in ``--budgets``, ε in ``--epsilons``.  A fit's time is
proportional to B (B full passes), so the question is the smallest B that
loses no accuracy at a given n.

Data: the sets the objective-perturbation defaults were chosen on
(``experiments/pure_intercept.py``: digits < 5, wine class 0, diabetes > 140,
two synthetic problems), rows in the unit ball by public or widened ranges;
digits and the larger synthetic set also with the training split cut to its
first n rows (``--cuts``), so that n runs from about 120 to 1,400.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pure_intercept import comparison_sets  # noqa: E402

import fasterm as fe  # noqa: E402
from fasterm.datasets import load_breast_cancer, train_test_split  # noqa: E402


def cells(breast_cancer: bool, cuts):
    """(label, X, y, n_train or None) for every cell of the table."""
    if breast_cancer:
        X, y = load_breast_cancer(scaled=True)
        yield "breast cancer", X, y, None
        return
    for name, X, y in comparison_sets():
        yield name, X, y, None
        if name in ("digits", "synB"):
            for cut in cuts:
                yield f"{name}[:{cut}]", X, y, cut


def accuracy(X, y, n_train, eps, budget, splits):
    acc, n = [], None
    for s in range(splits):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, 0.3, random_state=s)
        if n_train is not None:
            X_tr, y_tr = X_tr[:n_train], y_tr[:n_train]
        n = X_tr.shape[0]
        m = fe.DPLogisticRegression(epsilon=eps, max_steps=budget, random_state=s).fit(X_tr, y_tr)
        assert m.result_.info["solver"] == "gd"
        acc.append(m.score(X_te, y_te))
    return n, float(np.mean(acc))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", type=int, nargs="+", default=[10, 20, 30, 40])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    ap.add_argument("--cuts", type=int, nargs="+", default=[200, 400, 800])
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--breast-cancer", action="store_true")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    print("| data | n | ε | " + " | ".join(f"B = {b}" for b in args.budgets) + " |")
    print("|---|---|---|" + "---|" * len(args.budgets))
    rows = []
    with threadpool_limits(1):
        for label, X, y, cut in cells(args.breast_cancer, args.cuts):
            for eps in args.epsilons:
                accs = []
                for b in args.budgets:
                    n, a = accuracy(X, y, cut, eps, b, args.splits)
                    accs.append(a)
                rows.append((n, accs))
                print(f"| {label} | {n} | {eps:g} | " + " | ".join(f"{a:.3f}" for a in accs) + " |", flush=True)
    # mean over the cells of each size band: what a rule on n can use
    bands = [(0, 300), (300, 600), (600, 1000), (1000, 5000)]
    print("\nmean over the cells with n in [lo, hi):")
    for lo, hi in bands:
        sel = [accs for n, accs in rows if lo <= n < hi]
        if sel:
            mean = np.mean(sel, axis=0)
            print(f"  n in [{lo}, {hi}) ({len(sel)} cells): " +
                  ", ".join(f"B = {b}: {m:.4f}" for b, m in zip(args.budgets, mean)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
