"""The estimators' noisy-SGD defaults after the PLD accountant (docs/solvers.rst, issue 26).

    flock /tmp/fasterm.lock python experiments/sgd_defaults.py [--seeds 5] [--quick]

Not a pytest benchmark: a script that prints, for every cell (data set × ε, δ = 1e-5),
the held-out accuracy (mean ± standard error over seeds; split seed = noise seed) and
the median fit time of ``DPLogisticRegression(epsilon=ε, delta=1e-5)`` (``solver="auto"``,
every other parameter at its default; the rule must pick noisy_sgd) under

* ``old``: today's defaults C0 with the Rényi-DP replace-one accountant (the "before");
* ``C0``: today's defaults, the PLD accountant — expected batch B = clamp(n/100, 128, 1024),
  epochs E = max(2 below n = 10⁵ and 1 above, 160 steps);
* ``C1``: fewer passes — the same B, E = max(1, 160 steps);
* ``C2``: smaller batches — B = clamp(n/200, 128, 512), E as C0.

Data (none is the breast-cancer set): two real sets shipped by statsmodels (``pip install
statsmodels``; its datasets are in the wheel) — ``fair`` (6,366 rows, 8 survey answers,
y = any affair; features scaled by their codebook ranges) and ``randhie`` (20,190 rows, 9
variables, y = at least 2 doctor visits; logs bounded by 10, chronic diseases by 60) — with an
80/20 split, and synthetic logistic data, d = 100, features N(0, s²) with s all 1 (*iso*) or
geometric from 1 to 0.05 (*aniso*), a planted model with an offset, rows divided by a constant
of the generator so that 99% have norm ≤ 1: n_train = 20,000 (iso, aniso) and 160,000 (iso),
20,000 test rows.

The rule, written down before any comparison was run (experiments/sgd_defaults.py, commit message
"rule first"): a candidate C ∈ {C1, C2} replaces C0 only if, with the PLD accountant,
  (a) its accuracy averaged over all cells is at least C0's − 0.002,
  (b) in every cell its accuracy is at least C0's − max(0.01, 2 × the standard error of
      the per-seed difference), and
  (c) it is faster (median over cells of its fit time / C0's ≤ 0.75) or more accurate
      (mean over cells ≥ C0's + 0.005).
If several qualify, the one with the smallest median time ratio; otherwise C0 stays.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import fasterm as fe
from fasterm import accounting
from fasterm.linear_model import _rules as _linear
from fasterm.datasets import train_test_split

DELTA = 1e-5


def _rows_in_ball(X, bounds):
    lo, hi = np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])
    Z = (np.clip(X, lo, hi) - lo) / (hi - lo)
    return Z / math.sqrt(X.shape[1])


def real_sets():
    import statsmodels.api as sm
    fair = sm.datasets.fair.load_pandas().data
    cols = ["rate_marriage", "age", "yrs_married", "children", "religious", "educ", "occupation",
            "occupation_husb"]
    bounds = [(1, 5), (17.5, 42), (0.5, 23), (0, 5.5), (1, 4), (9, 20), (1, 6), (1, 6)]
    yield "fair", _rows_in_ball(fair[cols].to_numpy(float), bounds), (fair["affairs"] > 0).to_numpy(int)
    r = sm.datasets.randhie.load_pandas().data
    cols = ["lncoins", "idp", "lpi", "fmde", "physlm", "disea", "hlthg", "hlthf", "hlthp"]
    bounds = [(0, math.log(101)), (0, 1), (0, 10), (0, 10), (0, 1), (0, 60), (0, 1), (0, 1), (0, 1)]
    yield "randhie", _rows_in_ball(r[cols].to_numpy(float), bounds), (r["mdvis"] >= 2).to_numpy(int)


def synthetic(n_train, kind, n_test=20_000, d=100, seed=7):
    g = np.random.default_rng(seed)
    s = np.ones(d) if kind == "iso" else np.geomspace(1.0, 0.05, d)
    w = g.standard_normal(d) / s / math.sqrt(d) * 3.0
    n = n_train + n_test
    X = g.standard_normal((n, d)) * s
    y = (g.random(n) < 1 / (1 + np.exp(-(X @ w + 0.5)))).astype(int)
    # generator constant: the 99% quantile of ‖x‖ under this generator (a fresh sample)
    scale = np.quantile(np.linalg.norm(np.random.default_rng(seed + 1).standard_normal((20_000, d)) * s, axis=1), 0.99)
    return X / scale, y


def cells(quick):
    out = []
    for name, X, y in real_sets():
        out.append((name, X, y, None))
    sizes = [("iso", 20_000), ("aniso", 20_000)] + ([] if quick else [("iso", 160_000)])
    for kind, n in sizes:
        X, y = synthetic(n, kind)
        out.append((f"syn-{kind} n={n}", X, y, n))
    return out


def _rule(which):
    def choose(kind, n, noise, secure, chunked, solver="auto"):
        solver, opts = ORIG_CHOOSE(kind, n, noise, secure, chunked, solver)
        if solver != "sgd" or which in ("old", "C0"):
            return solver, opts
        if which == "C1":
            batch = opts["batch_size"]
            return solver, {"batch_size": batch, "epochs": max(1.0, _linear.SGD_MIN_STEPS * batch / n)}
        if which == "C2":
            batch = min(float(n), max(n / 200.0, 128.0), 512.0)
            epochs = max(2.0 if n < 100_000 else 1.0, _linear.SGD_MIN_STEPS * batch / n)
            return solver, {"batch_size": batch, "epochs": epochs}
        raise ValueError(which)
    return choose


ORIG_CHOOSE = _linear.choose_solver
ORIG_CAL = accounting.calibrate_sgd_sigma


def _rdp_calibration(sample_rate, steps, epsilon, delta, neighbors="replace_one"):
    return accounting.sgd._calibrate_sgd_sigma_rdp(float(sample_rate), int(steps), float(epsilon), float(delta), neighbors)


def run(which, X, y, n_train, eps, seed):
    X_tr, X_te, y_tr, y_te = (train_test_split(X, y, 0.2, random_state=seed) if n_train is None else
                              (X[:n_train], X[n_train:], y[:n_train], y[n_train:]))
    _linear.choose_solver = _rule(which)
    accounting.calibrate_sgd_sigma = _rdp_calibration if which == "old" else ORIG_CAL
    try:
        m = fe.DPLogisticRegression(epsilon=eps, delta=DELTA, random_state=seed)
        t = time.perf_counter()
        m.fit(X_tr, y_tr)
        elapsed = time.perf_counter() - t
    finally:
        _linear.choose_solver, accounting.calibrate_sgd_sigma = ORIG_CHOOSE, ORIG_CAL
    assert m.result_.info["solver"] == "sgd", m.result_.info["solver"]
    return m.score(X_te, y_te), elapsed, m.result_.info["noise_multiplier"], X_tr.shape[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    configs = ("old", "C0", "C1", "C2")
    table = {}
    with threadpool_limits(1):
        for name, X, y, n_train in cells(args.quick):
            for eps in args.epsilons:
                res = {c: [] for c in configs}
                for seed in range(args.seeds):
                    for c in configs:
                        res[c].append(run(c, X, y, n_train, eps, seed))
                table[(name, eps)] = res
                n = res["C0"][0][3]
                line = f"{name:18s} n={n:6d} eps={eps:3.1f} "
                for c in configs:
                    acc = [r[0] for r in res[c]]
                    se = statistics.stdev(acc) / math.sqrt(len(acc)) if len(acc) > 1 else 0.0
                    line += (f"| {c}: {np.mean(acc):.4f}±{se:.4f} {statistics.median(r[1] for r in res[c]):6.3f}s "
                             f"σ={res[c][0][2]:.3f} ")
                print(line, flush=True)
    # the rule
    print()
    base = {k: np.array([r[0] for r in v["C0"]]) for k, v in table.items()}
    tbase = {k: statistics.median(r[1] for r in v["C0"]) for k, v in table.items()}
    mean0 = np.mean([b.mean() for b in base.values()])
    for c in ("old", "C1", "C2"):
        accs = {k: np.array([r[0] for r in v[c]]) for k, v in table.items()}
        mean_c = np.mean([a.mean() for a in accs.values()])
        worst = min(float((accs[k] - base[k]).mean() + max(0.01, 2 * (accs[k] - base[k]).std(ddof=1)
                                                            / math.sqrt(len(base[k]))))
                    for k in table)
        ratio = statistics.median(statistics.median(r[1] for r in table[k][c]) / tbase[k] for k in table)
        a_ok, b_ok = mean_c >= mean0 - 0.002, worst >= 0
        c_ok = ratio <= 0.75 or mean_c >= mean0 + 0.005
        print(f"{c}: mean acc {mean_c:.4f} vs C0 {mean0:.4f} (a: {a_ok}); worst cell margin {worst:+.4f} "
              f"(b: {b_ok}); median time ratio {ratio:.2f} (c: {c_ok}) -> "
              f"{'QUALIFIES' if (a_ok and b_ok and c_ok and c != 'old') else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
