"""Pure-ε candidates side by side: the comparison behind the δ = 0 default (docs/pure.rst).

    python experiments/pure_candidates.py                  # the comparison data (never breast cancer)
    python experiments/pure_candidates.py --breast-cancer  # afterwards, every candidate on breast cancer

Not a pytest benchmark: a script that prints accuracies (mean ± sd over 20
random 70/30 splits, seeds 0–19, δ = 0, ε ∈ {0.5, 1, 2}).  The rule that
picks the default from these numbers was written in docs/pure.rst ("Choosing
the δ = 0 default, second round") before this script was run on any data.

Candidates (``CANDIDATES``):

* ``objpert`` — ``DPLogisticRegression(delta=0, solver="objpert")``, the
  current default (intercept column 0.125);
* ``thr(f, a, G)`` — objective perturbation with (1 − f)ε and μ = a·X²/(ε₁n),
  then the exponential-mechanism threshold over G grid points with fε
  (``solver="objpert_threshold"`` is f = 0.2, a = 32, G = 256);
* ``pur(L)`` — purification: the Gaussian (ε₁, e^{−L}) default fit
  (``method="noisy_pgd"``), its augmented weight vector normalised to the
  unit sphere (post-processing), plus noise of density ∝ exp(−‖z‖/β) with
  β = 2/(L + log(e^ε − e^{ε₁})), ε₁ = 0.9ε: (ε, 0)-DP by the purification
  lemma of docs/pure.rst (Lin, Wang, Ma & Wang 2025, in the form proved there);
* ``thrP(a)`` (third round) — as ``thr(0.2, a, 256)`` with the threshold's
  exponential mechanism given the public base measure ½ on stage 1's own
  threshold t₁ and ½ spread over the grid.

References outside the rule (``REFERENCES``; name them on the command line,
e.g. ``python experiments/pure_candidates.py laplace_gd "gauss(1e-5)"``): Laplace
noisy GD with the estimator's solver rule, and the (ε, 1e-5) Gaussian default.

Data: the five sets the objective-perturbation defaults were chosen on
(``experiments/pure_intercept.py``: digits < 5, wine class 0, diabetes > 140,
synthetic A and B) and five more whose decision threshold is far from the
origin — real sets with unequal classes and features off-centre in their
public range (digits < 3, wine class 2, diabetes > 200) and two synthetic
sets with offset features (synthetic C: 35% positives, features in the lower
part of their range; synthetic D: balanced classes, a common offset
partly along the class direction).
"""

from __future__ import annotations

import math
import sys

import numpy as np
from threadpoolctl import threadpool_limits

import fasterm as fe
from fasterm import objpert
from fasterm.datasets import load_breast_cancer, scale_to_unit_ball, train_test_split

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from pure_intercept import comparison_sets, real_sets  # noqa: E402


def offset_sets():
    for name, X, y in real_sets(digits_below=3, wine_class=2, diabetes_above=200):
        yield name, X, y
    r = np.random.default_rng(321)
    # synthetic C: features in [0, 1] (public range), positives 35%, skewed (lower part of the range)
    n, d = 600, 30
    y = (r.random(n) < 0.35).astype(int)
    u = r.random(d)
    Z = r.gamma(2.0, 0.08, (n, d)) + np.outer(y, u) * 0.12
    yield "synC", scale_to_unit_ball(np.clip(Z, 0, 1), np.zeros(d), np.ones(d)), y
    # synthetic D: balanced, both classes shifted by a common offset (0.3 of it along the class direction)
    n, d = 800, 15
    y = r.integers(0, 2, n)
    v = r.standard_normal(d)
    v /= np.linalg.norm(v)
    off = r.standard_normal(d)
    off -= (off @ v) * v
    off = (0.6 * v + 0.8 * off / np.linalg.norm(off)) * 0.5  # offset partly along the class direction
    X = r.standard_normal((n, d)) * 0.25 / np.sqrt(d) + np.outer(2 * y - 1, v) * 0.08 + off
    X = X / np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    yield "synD", X, y


def fit_objpert(a, c, eps, seed):
    m = fe.DPLogisticRegression(epsilon=eps, delta=0.0, solver="objpert", random_state=seed).fit(a, c)
    return np.ravel(m.coef_), float(np.ravel(m.intercept_)[0])


def _stage1(a, c, eps, seed, f, aa):
    """Objective perturbation with (1 − f)ε and μ = a·X²/(ε₁n) on the design with column 0.25."""
    rng = np.random.default_rng(seed)
    s = 0.25
    n, d = a.shape
    A = np.hstack([a / np.maximum(1.0, np.linalg.norm(a, axis=1))[:, None], np.full((n, 1), s)])
    dn = math.hypot(1.0, s)
    eps1 = (1 - f) * eps
    mu = max(1e-4, aa * dn * dn / (eps1 * n))
    res = objpert.objective_perturbation(objpert.SmoothHinge(l2=1e-4), A, c, eps1, data_norm=dn,
                                         regularization=mu, random_state=rng)
    return rng, A[:, :d], res.w[:d], -s * res.w[d]


def fit_threshold(a, c, eps, seed, f, aa, G):
    rng, A, coef, _ = _stage1(a, c, eps, seed, f, aa)
    bound = float(np.linalg.norm(coef)) or 1.0
    t = objpert.private_threshold(A @ coef, c, f * eps * (1 - 1e-12), bound=bound, grid=G, random_state=rng)
    return coef, -t


def fit_threshold_prior(a, c, eps, seed, aa, f=0.2, G=256):
    """thrP: the threshold's exponential mechanism with base measure ½ on stage 1's threshold t₁, ½ on the grid.

    The base measure is public after stage 1; it is realised by listing t₁ G times
    beside the G grid points (the exponential mechanism over a multiset of candidates).
    """
    from fasterm import mechanisms
    rng, A, coef, t1 = _stage1(a, c, eps, seed, f, aa)
    bound = float(np.linalg.norm(coef)) or 1.0
    sc = A @ coef
    ts = np.concatenate([bound * np.linspace(-1, 1, G), np.full(G, t1)])
    pos = c > 0
    sp, sn = np.sort(sc[pos]), np.sort(sc[~pos])
    err = (np.searchsorted(sp, ts, side="right") + (sn.shape[0] - np.searchsorted(sn, ts, side="right"))).astype(float)
    k = mechanisms.exponential(err, 1.0, f * eps * (1 - 1e-12), random_state=rng)
    return coef, -ts[k]


def _norm_noise(rng, d, scale):
    u = rng.standard_normal(d)
    return u / np.linalg.norm(u) * rng.gamma(d, scale)


def fit_purified(a, c, eps, seed, L, share=0.1):
    rng = np.random.default_rng(seed + 10_000)
    eps1 = (1 - share) * eps
    m = fe.DPLogisticRegression(epsilon=eps1, delta=math.exp(-L), random_state=seed).fit(a, c)
    s = 0.25
    w = np.append(np.ravel(m.coef_), np.ravel(m.intercept_)[0] / s)
    nw = np.linalg.norm(w)
    theta = w / nw if nw > 0 else np.eye(w.shape[0])[0]
    beta = 2.0 / (L + math.log(math.exp(eps) - math.exp(eps1)))
    theta = theta + _norm_noise(rng, w.shape[0], beta)
    return theta[:-1], theta[-1] * s


def fit_reference(a, c, eps, seed, **kw):
    m = fe.DPLogisticRegression(epsilon=eps, random_state=seed, **kw).fit(a, c)
    return np.ravel(m.coef_), float(np.ravel(m.intercept_)[0])


#: References, outside the rule: Laplace noisy GD (pure ε, the estimator's solver rule) and the
#: (ε, 1e-5) Gaussian default.
REFERENCES = {
    "laplace_gd": lambda a, c, e, s: fit_reference(a, c, e, s, delta=0.0, noise="laplace"),
    "gauss(1e-5)": lambda a, c, e, s: fit_reference(a, c, e, s, delta=1e-5),
}

CANDIDATES = {
    "objpert": fit_objpert,
    "thr(.2,32,256)": lambda a, c, e, s: fit_threshold(a, c, e, s, 0.2, 32.0, 256),
    "thr(.1,32,256)": lambda a, c, e, s: fit_threshold(a, c, e, s, 0.1, 32.0, 256),
    "thr(.2,32,64)": lambda a, c, e, s: fit_threshold(a, c, e, s, 0.2, 32.0, 64),
    "thr(.2,16,64)": lambda a, c, e, s: fit_threshold(a, c, e, s, 0.2, 16.0, 64),
    "thrP(8)": lambda a, c, e, s: fit_threshold_prior(a, c, e, s, 8.0),
    "thrP(16)": lambda a, c, e, s: fit_threshold_prior(a, c, e, s, 16.0),
    "thrP(32)": lambda a, c, e, s: fit_threshold_prior(a, c, e, s, 32.0),
    "pur(100)": lambda a, c, e, s: fit_purified(a, c, e, s, 100.0),
    "pur(250)": lambda a, c, e, s: fit_purified(a, c, e, s, 250.0),
    "pur(700)": lambda a, c, e, s: fit_purified(a, c, e, s, 700.0),
}


def accuracy(fit, X, y, eps, splits=20):
    acc = []
    for seed in range(splits):
        a, b, c, d = train_test_split(X, y, 0.3, random_state=seed)
        coef, icpt = fit(a, c, eps, seed)
        acc.append(float(np.mean((b @ coef + icpt > 0) == (d == 1))))
    return float(np.mean(acc)), float(np.std(acc))


if __name__ == "__main__":
    threadpool_limits(1)
    if "--breast-cancer" in sys.argv:
        sets = [("breast cancer", *load_breast_cancer(scaled=True))]
    else:
        sets = list(comparison_sets()) + list(offset_sets())
    CANDIDATES.update(REFERENCES)
    names = [a for a in sys.argv[1:] if a in CANDIDATES] or [k for k in CANDIDATES if k not in REFERENCES]
    for eps in (1.0, 0.5, 2.0):
        rows = {}
        for name, X, y in sets:
            rows[name] = [accuracy(CANDIDATES[k], X, y, eps) for k in names]
            print(f"eps={eps} {name:13s} " + "  ".join(f"{k}: {m:.3f} ± {sd:.3f}"
                                                     for k, (m, sd) in zip(names, rows[name])), flush=True)
        M = np.array([[m for m, _ in v] for v in rows.values()])
        print(f"eps={eps} MEAN          " + "  ".join(f"{k}: {m:.3f}" for k, m in zip(names, M.mean(0))))
        regret = (M.max(1, keepdims=True) - M).max(0)
        print(f"eps={eps} WORST-REGRET  " + "  ".join(f"{k}: {r:.3f}" for k, r in zip(names, regret)), flush=True)
