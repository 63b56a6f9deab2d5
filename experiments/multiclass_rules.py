"""How the multiclass "gd" rules were chosen (docs/multiclass.rst, "Second round"): never on digits.

Multinomial noisy gradient descent with the library's pieces (the clipped
gradient :func:`fasterm.linear_model._multiclass.grad_sum`, the step loop
:func:`fasterm.erm._engine.descend`, the calibrations of
:mod:`fasterm.accounting`), with the step rule, T, the clip, momentum,
averaging and Poisson subsampling as knobs; ten 70/30 splits of synthetic
sets, wine and iris, ε = 1 and 2, δ = 1e-5.  Prints each configuration's
accuracy per cell and its mean difference against the first rule (η = 4/β₀,
40 steps).

    python experiments/multiclass_rules.py [--splits 10]
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np
from sklearn.datasets import load_iris, make_blobs
from sklearn.model_selection import train_test_split

# the data helpers of bench/compare_multiclass.py (the sets the rules were chosen on)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
from compare_multiclass import synthetic, wine  # noqa: E402
from fasterm import accounting  # noqa: E402
from fasterm.erm import _backends, _engine  # noqa: E402
from fasterm.erm._design import design  # noqa: E402
from fasterm.linear_model._multiclass import GD_STEPS, HORIZON_MAX, HORIZON_NOISE, grad_sum  # noqa: E402
from fasterm.erm.constraints import L2Ball  # noqa: E402
from fasterm.erm.solvers import _fista  # noqa: E402

S, ALPHA, RADIUS, DELTA = 0.25, 1e-4, 50.0, 1e-5


def blobs(k, d, n, seed):
    X, y = make_blobs(n_samples=n, n_features=d, centers=k, cluster_std=4.0, random_state=seed,
                      center_box=(-5, 5))
    return 3.0 * X / (np.abs(X).max() * math.sqrt(d)), y


def iris():
    X, y = load_iris(return_X_y=True)
    return X / math.sqrt(float((np.array([7.9, 4.4, 6.9, 2.5]) ** 2).sum())), y  # published maxima


def fit(X, y, K, eps, seed, *, T=40, H=4.0 * 40, kappa=None, clipm=1 / (1 + math.e), momentum=False,
        tail=0.0, sched="const", sgd=None, s=S, alpha=ALPHA):
    """The (d + 1) × K weights; ``kappa``: horizon min(160, kappa/ν); ``sgd``: (batch, epochs)."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    A = design(X, 1.0, True, s)
    norms = np.sqrt(np.einsum("ij,ij->i", A, A))
    dn = math.sqrt(1.0 + s * s)
    c, p = clipm * dn, d + 1
    beta0 = dn * dn / K + alpha
    if sgd is None:
        scale = 1.0 / n
        sigma = accounting.calibrate_gaussian(2.0 * c / n, T, eps, DELTA)
        rows = np.arange(n)
    else:
        q = min(1.0, sgd[0] / n)
        T = math.ceil(sgd[1] / q)
        scale = 1.0 / (q * n)
        sigma = accounting.calibrate_sgd_sigma(q, T, eps, DELTA) * c * scale
    if kappa is not None:
        H = min(HORIZON_MAX, kappa / (math.sqrt(p * K) * sigma / (math.sqrt(T) * c)))
    lr = H / T / beta0
    start = int(T * (1 - tail))
    seen, avg = [0], np.zeros(p * K)

    def step_grad(w, out):
        if seen[0] > start:
            avg[:] += w
        seen[0] += 1
        b = rows if sgd is None else np.flatnonzero(rng.random(n) < q)
        grad_sum("logistic", A[b], y[b], w.reshape(p, K), norms[b], c, out.reshape(p, K))

    noise = _backends.FloatNoise("gaussian", "l2", rng, scale=sigma)
    w = _engine.descend(step_grad, np.zeros(p * K), L2Ball(RADIUS, p * K), T,
                        (lambda t: lr * 2.0 * (1 - (t + 0.5) / T)) if sched == "lin" else lr,
                        scale=scale, noise=noise, reg=alpha, average=False,
                        momentum=_fista(T) if momentum else None)
    if tail:
        w = (avg + w) / (T - start)
    return w.reshape(p, K)


CONFIGS = {
    "first": {},
    "H/2": {"H": 80.0}, "H/4": {"H": 40.0}, "2H": {"H": 320.0}, "T80": {"T": 80},
    "sgd128x5": {"sgd": (128, 5)}, "sgd64x10": {"sgd": (64, 10)},
    "clip.15": {"clipm": 0.15}, "clip.2": {"clipm": 0.2}, "clip.4": {"clipm": 0.4},
    "momentum": {"momentum": True}, "ridge.01": {"alpha": 0.01}, "tail.5": {"tail": 0.5},
    "lin": {"sched": "lin"}, "s.5": {"s": 0.5},
    "k64": {"kappa": 64 / math.sqrt(40)}, "k96": {"kappa": 96 / math.sqrt(40)},
    "k128": {"kappa": 128 / math.sqrt(40)},
    "k96T160": {"kappa": 96 / math.sqrt(40), "T": 160},
    "adopted": {"kappa": HORIZON_NOISE, "T": GD_STEPS},
    "adopted+clip.2": {"kappa": HORIZON_NOISE, "T": GD_STEPS, "clipm": 0.2},
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    args = ap.parse_args()
    sets = {"syn K=10 d=40": synthetic(10, 40, 3000, 3.0), "syn K=10 d=40 loose": synthetic(10, 40, 3000, 6.0),
            "syn K=5 d=20 loose": synthetic(5, 20, 2000, 6.0), "syn K=3 d=10": synthetic(3, 10, 1000, 3.0),
            "syn K=10 d=60 n=1200": synthetic(10, 60, 1200, 4.0, seed=3), "blobs K=8 d=30": blobs(8, 30, 1500, 1),
            "syn K=6 d=20 n=800": synthetic(6, 20, 800, 4.0, seed=5), "blobs K=4 d=10": blobs(4, 10, 600, 7),
            "syn K=10 d=64 n=1800": synthetic(10, 64, 1800, 4.0, seed=11), "wine": wine(), "iris": iris()}
    names = args.configs.split(",")
    res = {}
    for label, (X, y) in sets.items():
        K = len(np.unique(y))
        for eps in (1.0, 2.0):
            row = []
            for name in names:
                kw = CONFIGS[name]
                acc = []
                for sd in range(args.splits):
                    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=sd)
                    W = fit(Xtr, ytr, K, eps, 1000 + sd, **kw)
                    Ate = np.hstack([Xte, np.full((Xte.shape[0], 1), kw.get("s", S))])
                    acc.append(np.mean((Ate @ W).argmax(axis=1) == yte))
                res[label, eps, name] = float(np.mean(acc))
                row.append(f"{name} {res[label, eps, name]:.3f}")
            print(f"{label}, eps={eps}: " + ", ".join(row), flush=True)
    print("mean difference against the first rule (points): " + ", ".join(
        f"{nm} {100 * np.mean([res[k, e, nm] - res[k, e, names[0]] for k in sets for e in (1.0, 2.0)]):+.1f}"
        for nm in names))


if __name__ == "__main__":
    main()
