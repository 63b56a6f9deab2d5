"""Momentum of the default noisy_gd against the public relative noise ν (docs/solvers.rst).

    python experiments/accelerate_rule.py [--splits 20] [--out /tmp/accelerate_rule.csv]
    python experiments/accelerate_rule.py --analyse /tmp/accelerate_rule.csv
    python experiments/accelerate_rule.py --breast-cancer [--splits 50] [--eps 0.5 1 2 3.6 4]  # held out: run last

Runs of docs/solvers.rst: all ``CANDIDATES`` on splits 0–19 (the momentum
choice) and ``--first 20`` (confirmation); the budgets ``T_RULES`` with
``--candidates T40 T20 tgt0.25 tgt0.4 tgt0.6 tgt0.4m20`` on splits 0–19 and
``--first 40``; the last comparison ``--first 60 --candidates thr0.2 cap3 off
tgt0.25 T40``; ``--analyse FILE --ref NAME`` prints the tables.

The protocol (declared in docs/solvers.rst before any breast-cancer number
was looked at): the default ``DPLogisticRegression(epsilon, solver="noisy_gd")``
(step 4/β, T = min(T*, 40), last iterate, δ = 1e-5, the estimator's other
defaults) with its ``accelerate="auto"`` rule replaced by each candidate of
``CANDIDATES`` (``fasterm.erm.solvers._auto_momentum`` is swapped; every candidate
is a function of T and ν = √(E‖h_t‖²)/c = 2√(Td)/(nμ) only, both public).
Paired: within a cell (data set, ε, split) every candidate sees the same
split and the same noise seed.

Data (none of it breast cancer or the synthetic sets of compare_default_fit):

* ``make_classification``: n_train ∈ {250, 1000, 4000}, d ∈ {10, 30, 100},
  class_sep ∈ {0.7, 1.5} (half the features informative, 2% labels flipped),
  a fresh draw per split, as many test rows as training rows (at most 2,000);
* scikit-learn's digits, pairs 3/8, 1/7, 4/9, 2/3 and digit ≥ 5 (70/30 splits),
  pixels divided by 16·8 (public range [0, 16], √64 = 8: ‖x‖ ≤ 1);
* wine (class 0 against the rest), iris (versicolor against the rest) and
  diabetes (target above 140, about its median), 70/30 splits.

Features other than digits are standardised with the training split's mean
and scale and divided by √d (so E‖x‖² ≈ 1; the estimator clips rows to
``data_norm=1``): non-private preprocessing, the same for every candidate —
the experiment compares optimiser rules, not preprocessing.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
import warnings

import numpy as np

import fasterm as fe
from fasterm.linear_model import _rules as _linear
from fasterm.erm import solvers

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def _scaled(k, combine):
    """FISTA's β_t combined with f = 1 − kν (no momentum from ν = 1/k on)."""
    def rule(steps, nu):
        f = 1.0 - k * nu
        if f <= 0.0:
            return None
        fista = solvers._fista(steps)
        return lambda t: combine(fista(t), f)
    return rule


def _cap(k):
    """FISTA's β_t capped at max(0, 1 − kν): full momentum as ν → 0, none from ν = 1/k on."""
    return _scaled(k, min)


def _damp(k):
    """FISTA's β_t times max(0, 1 − kν)."""
    return _scaled(k, lambda beta, f: f * beta)


def _threshold(v):
    return lambda steps, nu: solvers._fista(steps) if nu <= v else None


CANDIDATES = {
    "off": lambda steps, nu: None,
    "fista": lambda steps, nu: solvers._fista(steps),
    "thr0.2": _threshold(0.2),  # the rule before this experiment
    "thr0.35": _threshold(0.35),
    "thr0.5": _threshold(0.5),
    "thr1": _threshold(1.0),
    "cap0.5": _cap(0.5),
    "cap1": _cap(1.0),
    "cap2": _cap(2.0),
    "cap3": _cap(3.0),
    "cap5": _cap(5.0),
    "damp1": _damp(1.0),
    "damp2": _damp(2.0),
    "damp3": _damp(3.0),
}
# The step budget (``max_steps``, default 40) beside the momentum rule: name → (rule, max_steps).
BUDGETS = {f"{rule}_T{T}": (rule, T) for rule in ("off", "cap3") for T in (20, 80)}
BUDGETS["thr0.2_T40"] = ("thr0.2", 40)  # the default before experiments/gd_budget.py's budget


def _target(v, t_min):
    """The budget whose noise ratio is v: ν_T = ν₄₀·√(T/40) ≤ v, within [t_min, 40]."""
    return lambda nu40: int(min(40, max(t_min, math.floor(40.0 * (v / nu40) ** 2))))


# Second experiment: the budget as a function of the public ν₄₀ = 2√(40 d)/(n μ) (the noise
# ratio at T = 40, d with the intercept column), momentum "cap3": name → budget(ν₄₀).
T_RULES = {
    "T40": lambda nu40: 40,
    "T20": lambda nu40: 20,
    "tgt0.25": _target(0.25, 10),
    "tgt0.4": _target(0.4, 10),
    "tgt0.6": _target(0.6, 10),
    "tgt0.4m20": _target(0.4, 20),
}


def _scale(Xtr, Xte):
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1.0
    k = math.sqrt(Xtr.shape[1])
    return (Xtr - mu) / sd / k, (Xte - mu) / sd / k


def _split(X, y, rng, frac=0.7):
    idx = rng.permutation(len(y))
    m = int(round(frac * len(y)))
    return X[idx[:m]], y[idx[:m]], X[idx[m:]], y[idx[m:]]


def datasets():
    """(name, draw(split) → Xtr, ytr, Xte, yte)."""
    from sklearn.datasets import load_diabetes, load_digits, load_iris, load_wine, make_classification

    out = []
    for n in (250, 1000, 4000):
        for d in (10, 30, 100):
            for sep in (0.7, 1.5):
                def draw(s, n=n, d=d, sep=sep):
                    nte = min(n, 2000)
                    X, y = make_classification(n + nte, d, n_informative=d // 2, n_redundant=0,
                                               class_sep=sep, flip_y=0.02, random_state=1000 * s + d)
                    Xtr, Xte = _scale(X[:n], X[n:])
                    return Xtr, y[:n], Xte, y[n:]
                out.append((f"mc n={n} d={d} sep={sep}", draw))
    digits = load_digits()
    Xd = digits.data / (16.0 * 8.0)
    for pair in ((3, 8), (1, 7), (4, 9), (2, 3), None):
        if pair is None:
            X, y, name = Xd, (digits.target >= 5).astype(int), "digits >=5"
        else:
            a, b = pair
            keep = np.isin(digits.target, pair)
            X, y, name = Xd[keep], (digits.target[keep] == a).astype(int), f"digits {a}/{b}"

        def draw(s, X=X, y=y):
            return _split(X, y, np.random.default_rng(s))
        out.append((name, draw))
    for name, (X, y) in (("wine 0/rest", (load_wine().data, (load_wine().target == 0).astype(int))),
                         ("iris 1/rest", (load_iris().data, (load_iris().target == 1).astype(int))),
                         ("diabetes >140", (load_diabetes().data, (load_diabetes().target > 140).astype(int)))):
        def draw(s, X=X, y=y):
            Xtr, ytr, Xte, yte = _split(X, y, np.random.default_rng(s))
            Xtr, Xte = _scale(Xtr, Xte)
            return Xtr, ytr, Xte, yte
        out.append((name, draw))
    return out


def fit_all(Xtr, ytr, Xte, yte, eps, seed, candidates):
    """{candidate: (ν, accuracy)} for one cell, every candidate with the same noise seed."""
    res = {}
    seen = {}
    orig = solvers._auto_momentum
    try:
        for name in candidates:
            base, budget = BUDGETS.get(name, (name, None))
            if name in T_RULES:
                d_aug = Xtr.shape[1] + 1  # the intercept column
                nu40 = 2.0 * math.sqrt(40 * d_aug) / (len(ytr) * fe.accounting.gaussian_mu(eps, 1e-5))
                base, budget = "cap3", T_RULES[name](nu40)
            rule = CANDIDATES[base]

            def patched(steps, nu, rule=rule):
                seen["nu"], seen["T"] = nu, steps
                return rule(steps, nu)
            solvers._auto_momentum = patched
            # the estimators memoise noisy_gd's public plan: make each candidate's afresh
            solvers._gd_calibration.cache_clear()
            _linear._GD_PLANS.clear()
            m = fe.DPLogisticRegression(epsilon=eps, solver="noisy_gd", random_state=seed,
                                        max_steps=budget).fit(Xtr, ytr)
            res[name] = (seen["nu"], seen["T"], float((m.predict(Xte) == yte).mean()))
    finally:
        solvers._auto_momentum = orig
    return res


def run(args):
    names = args.candidates or list(CANDIDATES)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["data", "n", "d", "eps", "split", "nu", "T"] + names)
        t0 = time.time()
        for dname, draw in datasets():
            for s in range(args.first, args.first + args.splits):
                Xtr, ytr, Xte, yte = draw(s)
                for eps in EPSILONS:
                    r = fit_all(Xtr, ytr, Xte, yte, eps, s, names)
                    nu, T = r[names[0]][:2]
                    w.writerow([dname, len(ytr), Xtr.shape[1], eps, s, f"{nu:.5f}", T]
                               + [f"{r[k][2]:.5f}" for k in names])
            f.flush()
            print(f"{dname}: done ({time.time() - t0:.0f} s)", file=sys.stderr)


BINS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.5, math.inf)


def analyse(path, ref):
    import pandas as pd

    df = pd.read_csv(path)
    names = [c for c in df.columns if c in CANDIDATES or c in BUDGETS or c in T_RULES]
    df["bin"] = pd.cut(df["nu"], BINS, right=False)
    print(f"{len(df)} cells, {df['data'].nunique()} data sets; mean accuracy − '{ref}' "
          "(points, ± s.e. over the data sets' mean differences; cells per bin)")
    rows = []
    for b, g in list(df.groupby("bin", observed=True)) + [("all", df)]:
        line = [str(b), str(len(g)), f"{g[ref].mean():.4f}"]
        for k in names:
            if k == ref:
                continue
            # one number per data set (its mean paired difference), then the s.e. across data sets
            per = (g[k] - g[ref]).groupby(g["data"]).mean() * 100
            se = per.std(ddof=1) / math.sqrt(len(per)) if len(per) > 1 else float("nan")
            line.append(f"{per.mean():+.2f}±{se:.2f}")
        rows.append(line)
    head = ["ν bin", "cells", ref] + [k for k in names if k != ref]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print("  ".join(h.ljust(wd) for h, wd in zip(head, widths)))
    for r in rows:
        print("  ".join(x.ljust(wd) for x, wd in zip(r, widths)))
    # the worst data-set-level loss of each candidate against the reference, per ν bin
    print("worst data-set mean difference (points) in any ν bin:")
    for k in names:
        if k == ref:
            continue
        per = ((df[k] - df[ref]) * 100).groupby([df["data"], df["bin"]], observed=True).mean()
        print(f"  {k}: min {per.min():+.2f} max {per.max():+.2f}")


def breast_cancer(args, candidates):
    from fasterm.datasets import load_breast_cancer, train_test_split

    X, y = load_breast_cancer(scaled=True)  # public feature bounds, as bench/compare_peers.py
    print("breast cancer (held out), 70/30 splits, mean accuracy ± s.e.")
    for eps in args.eps:
        acc = {k: [] for k in candidates}
        nu = first = None
        for s in range(args.splits):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=s)
            r = fit_all(Xtr, ytr, Xte, yte, eps, s, candidates)
            for k in candidates:
                acc[k].append(r[k][2])
            nu = r[candidates[0]][0]
            if s == 0:  # the single split of bench/compare_peers.py
                first = "  ".join(f"{k} {r[k][2]:.4f}" for k in candidates)
        print(f"eps={eps:<4} nu={nu:.3f}  " + "  ".join(
            f"{k} {np.mean(v):.4f}±{np.std(v, ddof=1) / math.sqrt(len(v)):.4f}" for k, v in acc.items()))
        print(f"          split 0 (compare_peers): {first}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--first", type=int, default=0, help="the first split's seed")
    ap.add_argument("--out", default="/tmp/accelerate_rule.csv")
    ap.add_argument("--analyse", default=None)
    ap.add_argument("--ref", default="thr0.2", help="the reference candidate of --analyse")
    ap.add_argument("--breast-cancer", action="store_true")
    ap.add_argument("--eps", nargs="*", type=float, default=[0.5, 1.0, 2.0, 3.6, 4.0],
                    help="the breast-cancer run's epsilons")
    ap.add_argument("--candidates", nargs="*", default=None,
                    help="default: all of CANDIDATES (a data run), thr0.2 off fista (breast cancer)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.analyse:
        analyse(args.analyse, args.ref)
    elif args.breast_cancer:
        breast_cancer(args, args.candidates or ["thr0.2", "off", "fista"])
    else:
        run(args)


if __name__ == "__main__":
    main()
