"""Intercept treatment in objective perturbation: the comparison behind the default (docs/pure.rst).

    python experiments/pure_intercept.py                 # the comparison data (never breast cancer)
    python experiments/pure_intercept.py --breast-cancer # the adopted rule on breast cancer, afterwards

Not a pytest benchmark: a script that prints accuracies (mean ± sd over 20
random 70/30 splits, seeds 0–19, δ = 0, ``DPLogisticRegression``).
Candidates (``CANDIDATES``; ``--breast-cancer 0.25 1x`` runs s = 0.25 and
s = 1 with μ from X): the intercept column's scale s (``intercept_scaling``) under
``solver="objpert"`` — the ridge μ/2·w_d² on the column's coefficient is a
ridge μ/(2s²)·b² on the intercept b = s·w_d, while the row bound
X_aug = √(X² + s²) sets L, c and μ (all derived by the estimator); and
the same with μ = max(a·X²/(εn), Jacobian floor) taken from X rather than
X_aug, so that a larger s weakens only the intercept's ridge.
The data sets are those the objective-perturbation defaults were chosen on
(docs/pure.rst, "Choosing the defaults"): digits (< 5), wine (class 0), diabetes (> 140)
and two synthetic problems, rows scaled into the unit ball with public (or
rounded, widened) ranges.
"""

from __future__ import annotations

import sys

import numpy as np
from threadpoolctl import threadpool_limits

import fasterm as fe
from fasterm.datasets import load_breast_cancer, scale_to_unit_ball, train_test_split


def real_sets(digits_below=5, wine_class=0, diabetes_above=140):
    """digits, wine and diabetes as binary problems, rows in the unit ball (public or widened ranges)."""
    from sklearn.datasets import load_diabetes, load_digits, load_wine
    D = load_digits()
    yield (f"digits<{digits_below}", scale_to_unit_ball(D.data, np.zeros(64), np.full(64, 16.0)),
           (D.target < digits_below).astype(int))
    W = load_wine()
    Xw = W.data
    yield (f"wine{wine_class}", scale_to_unit_ball(Xw, np.floor(Xw.min(0) * 0.9), np.ceil(Xw.max(0) * 1.1)),
           (W.target == wine_class).astype(int))
    Dd = load_diabetes(scaled=False)
    Xd = Dd.data
    yield (f"diabetes>{diabetes_above}",
           scale_to_unit_ball(Xd, np.floor(Xd.min(0) * 0.9) - 1, np.ceil(Xd.max(0) * 1.1) + 1),
           (Dd.target > diabetes_above).astype(int))


def comparison_sets():
    for (_, X, y), name in zip(real_sets(), ("digits", "wine", "diabetes")):
        yield name, X, y
    r = np.random.default_rng(123)
    for name, n, d, sep in [("synA", 600, 20, 0.15), ("synB", 2000, 10, 0.1)]:
        u = r.standard_normal(d)
        u /= np.linalg.norm(u)
        y = r.integers(0, 2, n)
        X = r.standard_normal((n, d)) * 0.3 / np.sqrt(d) + np.outer(2 * y - 1, u) * sep + 0.05
        X = X / np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
        yield name, X, y


def _fit_mu_from_x(a, c, eps, s, seed):
    """Variant "μ from X": the coefficients' ridge a·X²/(εn) does not grow with s (X = 1)."""
    from fasterm import accounting, objpert
    n = a.shape[0]
    loss = objpert.SmoothHinge()
    dn = float(np.hypot(1.0, s))
    mu = max(objpert.REGULARIZATION / (eps * n),
             accounting.objpert_regularization(eps, loss.curvature_factor * dn * dn, n,
                                               objpert.JACOBIAN_FRACTION))
    A = np.hstack([a, np.full((n, 1), s)])
    return objpert.objective_perturbation(loss, A, c, eps, data_norm=dn, regularization=mu,
                                          random_state=seed).w


def accuracy(X, y, eps, s, splits=20, mu_from_x=False):
    acc = []
    for seed in range(splits):
        a, b, c, d = train_test_split(X, y, 0.3, random_state=seed)
        if mu_from_x:
            w = _fit_mu_from_x(a, c, eps, s, seed)
            acc.append(float(np.mean((b @ w[:-1] + s * w[-1] > 0) == (d == 1))))
        else:
            m = fe.DPLogisticRegression(epsilon=eps, delta=0.0, intercept_scaling=s, random_state=seed)
            acc.append(m.fit(a, c).score(b, d))
    return float(np.mean(acc)), float(np.std(acc))


#: (s, μ from X?) — the candidates declared in docs/pure.rst before breast cancer was run.
CANDIDATES = ((0.25, False), (0.125, False), (0.5, False), (1.0, False), (2.0, False),
              (0.5, True), (1.0, True), (2.0, True))

if __name__ == "__main__":
    threadpool_limits(1)
    if "--breast-cancer" in sys.argv:
        sets = [("breast cancer", *load_breast_cancer(scaled=True))]
        picked = sys.argv[sys.argv.index("--breast-cancer") + 1:]
        cands = [(float(p.rstrip("x")), p.endswith("x")) for p in picked] or CANDIDATES
    else:
        sets, cands = list(comparison_sets()), CANDIDATES
    label = [f"s={s}{'/muX' if mx else ''}" for s, mx in cands]
    for eps in (0.5, 1.0, 2.0):
        rows = {}
        for name, X, y in sets:
            rows[name] = [accuracy(X, y, eps, s, mu_from_x=mx) for s, mx in cands]
            print(f"eps={eps} {name:13s} " + "  ".join(f"{k}: {m:.3f} ± {sd:.3f}"
                                                     for k, (m, sd) in zip(label, rows[name])), flush=True)
        means = np.mean([[m for m, _ in v] for v in rows.values()], axis=0)
        print(f"eps={eps} mean          " + "  ".join(f"{k}: {m:.3f}" for k, m in zip(label, means)), flush=True)
