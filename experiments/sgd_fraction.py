"""A fraction of an epoch for the default noisy-SGD fit at very large n (issue 29).

    flock /tmp/fasterm.lock nice python experiments/sgd_fraction.py [--seeds 3] [--quick]

Not a pytest benchmark: a script that prints, for every cell (data set × ε, δ = 1e-5), the
held-out accuracy (mean ± standard error over seeds; the data are fixed, the seed is the fit's
``random_state``) and the median fit time of ``DPLogisticRegression(epsilon=ε, delta=1e-5)``
(``solver="auto"``, every other parameter at its default; the rule must pick noisy_sgd), float64,
one thread, under these epoch rules (the expected batch B = clamp(n/100, 128, 1024) in all):

* ``E1`` (today): E = max(2 below n = 10⁵ and 1 above, 160 steps · B/n);
* ``R40``: below n = 10⁵ as today; from n = 10⁵ on E = min(1, R/n) with R = 4·10⁴·(d/100)
  rows read in expectation (T = R/B steps, no 160-step floor);
* ``R100``: the same with R = 10⁵·(d/100).

σ is calibrated by the library for each rule's (q = B/n, T) — fewer steps at the same ε need
less noise per step.  n and d are public (replace-one neighbours), so each rule is public.

Data (synthetic only; none is the breast-cancer set), 20,000 held-out rows drawn with the
training rows: *iso* and *aniso* of experiments/sgd_defaults.py (planted logistic model, features
N(0, s²), s all 1 or geometric from 1 to 0.05, rows divided by the generator's 99% norm quantile)
and *bp*, bench/binary_passes.py's generator (rows in the unit ball, Bayes accuracy 0.75);
d = 100 with n_train ∈ {160,000, 1,000,000} and d = 300 with n_train = 160,000; ε ∈ {0.3, 1};
3 seeds.

The rule, written down before any comparison was run (commit message "rule first"): a candidate
C ∈ {R40, R100} replaces E1 only if
  (a) in every cell its mean accuracy is ≥ E1's − max(0.003, 2 × the standard error of the
      per-seed difference C − E1), and
  (b) its accuracy averaged over all cells is ≥ E1's − 0.001.
If both qualify, R40 (fewer rows read, the point of the change); otherwise E1 stays.

Result (first run, 2026-11-27, after the rule was committed): neither qualifies, E1 stays.
R40: worst cell −0.0902 (iso, d = 100, n = 10⁶, ε = 0.3: 0.7302 vs 0.8268), mean over the
18 cells 0.7083 vs 0.7570; R100: worst −0.0502 (aniso, d = 100, n = 10⁶: 0.7061 vs 0.7593),
mean 0.7475.  Only *bp* (Bayes 0.75, noise-limited) is within 0.2 points; iso/aniso are limited
by the number of steps (E1's 977 steps at n = 10⁶ beat its 156 at 1.6·10⁵ on aniso by 4 points),
and the smaller σ of the shorter runs does not make up for them.  Passes of one ``X @ w``
(bench/binary_passes.py's data, one thread): n = 1.6·10⁵ f64/f32 E1 3.8/8.4, R40 2.0/4.1,
R100 3.2/6.4; n = 10⁶ E1 5.1/8.2, R40 1.2/2.4, R100 1.4/2.6.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import fasterm as fe
from fasterm.linear_model import _rules as _linear

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from sgd_defaults import synthetic as sd_synthetic  # noqa: E402
from binary_passes import synthetic as bp_synthetic  # noqa: E402

DELTA = 1e-5
N_TEST = 20_000
CONFIGS = ("E1", "R40", "R100")
ROWS = {"R40": 4e4, "R100": 1e5}
ORIG_CHOOSE = _linear.choose_solver


def _rule(which, d):
    def choose(kind, n, noise, secure, chunked, solver="auto"):
        solver, opts = ORIG_CHOOSE(kind, n, noise, secure, chunked, solver)
        if solver != "sgd" or which == "E1" or n < 100_000:
            return solver, opts
        return solver, {"batch_size": opts["batch_size"], "epochs": min(1.0, ROWS[which] * d / 100 / n)}
    return choose


def data(gen, d, n_train):
    if gen == "bp":
        X, y = bp_synthetic(n_train + N_TEST, d=d, seed=0)
    else:
        X, y = sd_synthetic(n_train, gen, n_test=N_TEST, d=d)
    return X[:n_train], X[n_train:], y[:n_train], y[n_train:]


def run(which, split, eps, seed):
    X_tr, X_te, y_tr, y_te = split
    _linear.choose_solver = _rule(which, X_tr.shape[1])
    try:
        m = fe.DPLogisticRegression(epsilon=eps, delta=DELTA, random_state=seed)
        t = time.perf_counter()
        m.fit(X_tr, y_tr)
        elapsed = time.perf_counter() - t
    finally:
        _linear.choose_solver = ORIG_CHOOSE
    assert m.result_.info["solver"] == "sgd", m.result_.info["solver"]
    return m.score(X_te, y_te), elapsed, m.result_.info["noise_multiplier"]


def decide(table, configs):
    """The declared rule (module docstring): prints each candidate's margins and the decision.

    ``table``: {cell: {config: [(accuracy, seconds, σ), ...] per seed}}; ``configs[0]`` is today's."""
    base = {k: np.array([r[0] for r in v[configs[0]]]) for k, v in table.items()}
    mean0 = np.mean([b.mean() for b in base.values()])
    chosen = None
    for c in configs[1:]:
        acc = {k: np.array([r[0] for r in v[c]]) for k, v in table.items()}
        margins = {}
        for k in table:
            diff = acc[k] - base[k]
            margins[k] = diff.mean() + max(0.003, 2 * diff.std(ddof=1) / math.sqrt(len(diff)))
        worst_k = min(margins, key=margins.get)
        mean_c = np.mean([a.mean() for a in acc.values()])
        a_ok, b_ok = margins[worst_k] >= 0, mean_c >= mean0 - 0.001
        ok = a_ok and b_ok
        chosen = chosen or (c if ok else None)
        print(f"{c}: worst cell margin {margins[worst_k]:+.4f} at {worst_k} (a: {a_ok}); mean acc {mean_c:.4f} "
              f"vs E1 {mean0:.4f} (b: {b_ok}) -> {'QUALIFIES' if ok else 'no'}")
    print(f"decision: {chosen or 'E1 stays'}")
    return chosen


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0])
    ap.add_argument("--quick", action="store_true", help="skip n = 1e6")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    shapes = [(100, 160_000), (300, 160_000)] + ([] if args.quick else [(100, 1_000_000)])
    table = {}
    with threadpool_limits(1):
        for d, n in shapes:
            for gen in ("iso", "aniso", "bp"):
                split = data(gen, d, n)
                for eps in args.epsilons:
                    res = {c: [run(c, split, eps, s) for s in range(args.seeds)] for c in CONFIGS}
                    table[(gen, d, n, eps)] = res
                    line = f"{gen:5s} d={d} n={n:7d} eps={eps:3.1f} "
                    for c in CONFIGS:
                        acc = [r[0] for r in res[c]]
                        se = statistics.stdev(acc) / math.sqrt(len(acc))
                        line += (f"| {c}: {np.mean(acc):.4f}±{se:.4f} "
                                 f"{statistics.median(r[1] for r in res[c]):.3f}s σ={res[c][0][2]:.3f} ")
                    print(line, flush=True)
                del split
    print()
    decide(table, CONFIGS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
