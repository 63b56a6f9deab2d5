"""Hit-and-run step: fasterm's compiled chain against a NumPy slice-sampling step.

    pytest bench/bench_hitrun.py --benchmark-enable --benchmark-group-by=group -s

Target: one step for the logistic loss, n = 1e4, d = 10, at least 15x
faster than the NumPy way.  Both chains sample exp(−εn·L(w)/(2Δ)) on the unit
ball (ε = 1, data_norm = 1, so Δ = 1) and start from the same state, taken
after 2000 compiled steps (a typical point of the target, not the centre).

The NumPy step is written as a NumPy user would: a uniform direction, the
chord of the ball (a quadratic), u's margins X@u, then Neal's (2003) slice
sampling on the chord — stepping out with a width from the curvature bound
(3/sqrt(κ Σ c²/4), a well-tuned choice: ~4 loss evaluations per step) and
shrinkage — with each evaluation a full ``np.logaddexp`` over the n margins
z + t·X@u, and the margins and the loss at the current point kept between
steps.  fasterm's step makes one pass over X for X@u fused with one O(n) pass
for the line sampler's bounds and draws t exactly (``fasterm/erm/expmech.py``).

Each timed call runs STEPS steps (a chain is a loop of steps; the Python call
overhead of one call is not part of a step).  ``test_ratio`` times both
interleaved and prints the ratio of their minimum and median times per step.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import fasterm as fe
from fasterm.erm import _hitrun, expmech

N, D = 10_000, 10
STEPS = 20
KAPPA = 0.5  # ε / (2Δ) with ε = 1, Δ = R·X = 1
R = 1.0


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D)) / np.sqrt(D)
    y = np.where(X @ rng.standard_normal(D) + 0.5 * rng.standard_normal(N) > 0, 1.0, -1.0)
    prob = expmech._problem(fe.losses.Logistic(), X, y, fe.L2Ball(R, D), 1.0, 1.0, None, None)
    assert prob.kappa == KAPPA
    w, z, _, _ = expmech._sample(prob, np.random.default_rng(1), 2000)
    Xs = X if prob.scale is None else X * prob.scale[:, None]  # the NumPy user's clipped data
    return prob, Xs, prob.y, w, z


class NumpySlice:
    """The NumPy user's hit-and-run with slice sampling on the chord."""

    def __init__(self, Xs, y, w, z, rng):
        self.X, self.y, self.w, self.z, self.rng = Xs, y, w.copy(), z.copy(), rng
        self.F = np.logaddexp(0.0, -y * self.z).sum()
        self.evaluations = 0

    def step(self):
        X, y, w, z, rng = self.X, self.y, self.w, self.z, self.rng
        u = rng.standard_normal(D)
        u /= np.linalg.norm(u)
        bu = u @ w
        disc = np.sqrt(bu * bu - (w @ w - R * R))
        a, b = -bu - disc, -bu + disc
        c = X @ u

        def F(t):
            self.evaluations += 1
            return np.logaddexp(0.0, -y * (z + t * c)).sum()

        F0 = self.F
        width = 3.0 / np.sqrt(KAPPA * 0.25 * (c @ c))
        level = np.log(rng.random())  # log-density relative to the current point
        lo = -width * rng.random()
        hi = lo + width
        lo, hi = max(lo, a), min(hi, b)
        while lo > a and -KAPPA * (F(lo) - F0) > level:
            lo = max(lo - width, a)
        while hi < b and -KAPPA * (F(hi) - F0) > level:
            hi = min(hi + width, b)
        while True:
            t = rng.uniform(lo, hi)
            Ft = F(t)
            if -KAPPA * (Ft - F0) > level:
                break
            if t < 0:
                lo = t
            else:
                hi = t
        w += t * u
        z += t * c
        self.F = Ft


class Compiled:
    def __init__(self, prob, w, z, rng):
        self.prob, self.w, self.z, self.rng = prob, w.copy(), z.copy(), rng
        self.evaluations = 0

    def run(self, steps):
        p = self.prob
        self.evaluations += _hitrun.run_chain(
            self.rng.bit_generator, p.kind, p.X, p.y, p.scale, p.g, p.kappa, p.lam, _hitrun.AUTO, p.set_kind,
            p.center, p.radius, p.low, p.high, p.total, _hitrun.SPHERE, p.margin_bound, self.w, self.z, steps,
            fresh_margins=False)


@pytest.mark.benchmark(group="hitrun-step-logistic-1e4x10")
def test_numpy_slice_sampling_step(benchmark, problem):
    _, Xs, y, w, z = problem
    chain = NumpySlice(Xs, y, w, z, np.random.default_rng(2))

    def run():
        for _ in range(STEPS):
            chain.step()

    benchmark(run)


@pytest.mark.benchmark(group="hitrun-step-logistic-1e4x10")
def test_fasterm_hit_and_run_step(benchmark, problem):
    prob, _, _, w, z = problem
    chain = Compiled(prob, w, z, np.random.default_rng(3))
    benchmark(chain.run, STEPS)


def test_ratio(problem):
    prob, Xs, y, w, z = problem
    np_chain = NumpySlice(Xs, y, w, z, np.random.default_rng(2))
    c_chain = Compiled(prob, w, z, np.random.default_rng(3))
    t_np, t_c = [], []
    for _ in range(30):
        t0 = time.perf_counter()
        for _ in range(STEPS):
            np_chain.step()
        t_np.append((time.perf_counter() - t0) / STEPS)
        t0 = time.perf_counter()
        c_chain.run(STEPS)
        t_c.append((time.perf_counter() - t0) / STEPS)
    t_np, t_c = np.array(t_np), np.array(t_c)
    steps = 30 * STEPS
    print(f"\nhit-and-run step, logistic, n={N}, d={D}: numpy slice sampling "
          f"{t_np.min() * 1e6:.0f} us (median {np.median(t_np) * 1e6:.0f}), "
          f"{np_chain.evaluations / steps:.2f} loss passes/step; fasterm {t_c.min() * 1e6:.1f} us "
          f"(median {np.median(t_c) * 1e6:.1f}), {c_chain.evaluations / steps:.2f} line passes/step; "
          f"ratio {t_np.min() / t_c.min():.1f}x (min), {np.median(t_np) / np.median(t_c):.1f}x (median)")
    # Both chains stay in the ball, with margins that match their points.
    for ch in (np_chain, c_chain):
        assert np.linalg.norm(ch.w) <= R + 1e-12
        np.testing.assert_allclose(ch.z, Xs @ ch.w, atol=1e-10)
    assert t_np.min() > t_c.min()
