"""Mixing of fasterm's hit-and-run: the measurements behind ``expmech.default_steps``.

    python experiments/mixing_hitrun.py                      # the grid quoted in fasterm/erm/expmech.py
    python experiments/mixing_hitrun.py --directions sphere  # uniform directions only
    python experiments/mixing_hitrun.py --dims 3 --losses hinge --sets simplex --kdelta 3000

Not a pytest benchmark: a diagnostic script (minutes).  For each problem
(loss, feasible set, affine dimension m, k·Δ = εn/2) it reports

* ``iat``: the integrated autocorrelation time (Sokal's automatic window,
  c = 5) of a chain run 200·m² steps after a burn-in of 100·m² steps; the
  largest over the coordinates of w and over L(w), in steps;
* ``T_mix``: the first checkpoint T in {m, 2m, m²/2, m², 2m², 5m², 10m², 20m²,
  50m²} at which ``--chains`` independent chains started at the centre are
  indistinguishable from the same chains at 100·m² steps (two-sample KS for
  each coordinate and for L(w), Bonferroni level 0.01 over the d + 1 tests);
  ">50m^2" when none passes; and the smallest KS p-value at each checkpoint.

Data: Gaussian rows scaled to norm ≤ 1, labels from a planted model
(classification) or a linear model plus noise (regression), n = 200.  A KS
test on a few hundred chains sees TV distances of a few percent at best: the
numbers are evidence for choosing a default, not a bound on δ_TV.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy import stats

import fasterm as fe
from fasterm.erm import expmech

R_CHAINS = 400


def iat(x: np.ndarray, c: float = 5.0) -> float:
    """Integrated autocorrelation time with Sokal's automatic window."""
    x = np.asarray(x, dtype=np.float64) - np.mean(x)
    n = x.size
    if not np.any(x):
        return 1.0
    f = np.fft.rfft(x, 2 * n)
    acf = np.fft.irfft(f * np.conj(f))[:n]
    acf /= acf[0]
    tau = 1.0
    for m in range(1, n):
        tau = 1.0 + 2.0 * acf[1:m + 1].sum()
        if m >= c * tau:
            break
    return max(tau, 1.0)


def objective(loss, X, y, W, data_norm, label_bound):
    return np.array([loss.value(w, X, y, data_norm=data_norm, label_bound=label_bound) for w in W])


def make_problem(loss_name, m, set_name, n, rng):
    d = m + 1 if set_name == "simplex" else m
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    X /= np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]
    w0 = rng.standard_normal(d)
    w0 /= np.linalg.norm(w0)
    if loss_name in ("logistic", "hinge"):
        y = np.where(X @ w0 * 3 + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    else:
        y = np.clip(X @ w0 + 0.1 * rng.standard_normal(n), -1, 1)
    loss = {"logistic": fe.losses.Logistic(), "hinge": fe.losses.Hinge(),
            "squared": fe.losses.Squared(label_bound=1.0), "absolute": fe.losses.Absolute(label_bound=1.0),
            "linear": fe.losses.Linear()}[loss_name]
    C = {"ball": fe.L2Ball(1.0, d), "box": fe.Box(-0.5, 0.5, d), "simplex": fe.Simplex(d)}[set_name]
    return loss, X, y, C


def study(loss_name, set_name, m, kdelta, n, *, chains=R_CHAINS, ref_mult=100, seed=0, directions=1):
    """IAT of a long chain and T_mix of independent chains against their state at ref_mult·m²."""
    rng = np.random.default_rng(seed)
    loss, X, y, C = make_problem(loss_name, m, set_name, n, rng)
    eps = 2.0 * kdelta / n
    lb = 1.0 if loss._regression else None
    prob = expmech._problem(loss, X, y, C, eps, 1.0, lb, None)
    gen = np.random.default_rng(seed + 1)
    # Long chain: burn-in ref_mult·m², then 2·ref_mult·m² recorded steps.
    w, z, _, _ = expmech._sample(prob, gen, ref_mult * m * m, directions=directions)
    long = 2 * ref_mult * m * m
    _, _, trace, _ = expmech._sample(prob, gen, long, thin=1, w=w, z=z, directions=directions)
    sub = max(1, long // 20000)
    taus = [iat(trace[:, j]) for j in range(trace.shape[1])]
    taus.append(iat(objective(loss, X, y, trace[::sub], 1.0, lb)) * sub)
    tau = max(taus)
    # Independent chains from the centre.
    grid = sorted({m, 2 * m, max(1, m * m // 2), m * m, 2 * m * m, 5 * m * m, 10 * m * m, 20 * m * m,
                   50 * m * m, ref_mult * m * m})
    T_ref = grid[-1]
    ends = {T: np.empty((chains, trace.shape[1])) for T in grid}
    for r in range(chains):
        w = prob.start.copy()
        z = None
        t_prev = 0
        for T in grid:
            w, z, _, _ = expmech._sample(prob, gen, T - t_prev, w=w, z=z, directions=directions)
            ends[T][r] = w
            t_prev = T
    ref = ends[T_ref]
    ref_L = objective(loss, X, y, ref, 1.0, lb)
    t_mix = None
    pmins = {}
    level = 0.01 / (ref.shape[1] + 1)  # Bonferroni over the statistics
    for T in grid[:-1]:
        E = ends[T]
        ps = [stats.ks_2samp(E[:, j], ref[:, j]).pvalue for j in range(E.shape[1])]
        ps.append(stats.ks_2samp(objective(loss, X, y, E, 1.0, lb), ref_L).pvalue)
        pmins[T] = min(ps)
        if t_mix is None and min(ps) > level:
            t_mix = T
    return tau, t_mix, pmins, prob.k


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dims", type=int, nargs="*")
    ap.add_argument("--losses", nargs="*")
    ap.add_argument("--sets", nargs="*")
    ap.add_argument("--kdelta", type=float, nargs="*")
    ap.add_argument("--chains", type=int, default=R_CHAINS)
    ap.add_argument("--directions", choices=["sphere", "mixed"], default="mixed")
    args = ap.parse_args(argv)
    dims = args.dims or ([2, 3, 5] if args.quick else [2, 3, 5, 10])
    kdeltas = args.kdelta or [10.0, 300.0]
    losses = args.losses or ["logistic", "squared", "hinge", "absolute", "linear"]
    sets = args.sets or ["ball", "box", "simplex"]
    print(f"{'loss':9s} {'set':8s} {'m':>3s} {'k*Delta':>8s} {'k':>9s} {'iat':>7s} {'iat/m':>6s} "
          f"{'T_mix':>7s} {'T_mix/m^2':>9s}  min KS p by T")
    worst_iat, worst_t = 0.0, 0.0
    for m in dims:
        for loss_name in losses:
            for set_name in sets:
                for kd in kdeltas:
                    t0 = time.perf_counter()
                    n = 200
                    tau, t_mix, pmins, k = study(loss_name, set_name, m, kd, n, chains=args.chains,
                                                directions=int(args.directions == "mixed"))
                    worst_iat = max(worst_iat, tau / m)
                    tm = ">50m^2" if t_mix is None else str(t_mix)
                    ratio = float("inf") if t_mix is None else t_mix / m**2
                    worst_t = max(worst_t, ratio)
                    ps = " ".join(f"{T // m**2 if T >= m * m else T}{'m2' if T >= m * m else ''}:{p:.1g}"
                                  for T, p in pmins.items())
                    print(f"{loss_name:9s} {set_name:8s} {m:3d} {kd:8.0f} {k:9.3g} {tau:7.1f} {tau / m:6.2f} "
                          f"{tm:>7s} {ratio:9.2f}  {ps}  ({time.perf_counter() - t0:.0f}s)", flush=True)
    print(f"worst iat/m = {worst_iat:.2f}, worst T_mix/m^2 = {worst_t:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
