"""AdaSSP's floating-point margin (``_float_margin.ssp_plan``, ``ssp._lambda_min``; docs/guarantees.rst,
"Floating point").

* The three releases of :func:`fasterm.erm.ssp.adassp` as computed — λ_min(G), the upper triangle of
  G = Σ wᵢâᵢâᵢᵀ and b = Σ wᵢyᵢâᵢ, read before the noise is added (a zero-noise generator; G from the
  eigensolver's argument, b from the final solve's right-hand side) — of adversarial neighbouring data
  sets differ by at most the declared sensitivities (L2 and L1), checked in exact rational arithmetic,
  with and without weights, dense and CSR.  The same hunt with the rows clipped at X itself (the former
  code) finds violations: it has the power to fail.
* The certified λ_min: within ``plan.lam_error`` of the exact smallest eigenvalue (mpmath, 50 digits) of
  the computed G, on the fast path and on the bisection.
* ``ssp_plan``: X_c below X by the proved margin, and the conditions recomputed from the formulas.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")
mp = pytest.importorskip("mpmath")

import fasterm as fe  # noqa: E402
from fasterm.erm import _float_margin as fm  # noqa: E402
from fasterm.erm import ssp  # noqa: E402


class _ZeroNoise:
    """A generator whose draws are all 0: the releases are the statistics themselves."""

    def standard_normal(self, size=None):
        return 0.0 if size is None else np.zeros(size)

    laplace = standard_normal


def _releases(X, y, *, delta, Xb, Yb, weights=None, B=1.0):
    """(λ_min release, G, b) of one adassp call, before the noise."""
    seen = {}
    eigvalsh, solve = np.linalg.eigvalsh, np.linalg.solve

    def eig(G):
        out = eigvalsh(G)
        if "G" not in seen:
            seen["G"], seen["lam"] = np.array(G, copy=True), float(out[0])
        return out

    def slv(M, b):
        seen["b"] = np.array(b, copy=True)
        return solve(M, b)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(ssp, "check_random_state", lambda rs: _ZeroNoise())
        m.setattr(np.linalg, "eigvalsh", eig)
        m.setattr(np.linalg, "solve", slv)
        if hasattr(ssp, "_lambda_min"):  # the release itself (the eigensolver's value, certified)
            lam_min = ssp._lambda_min

            def lam(G, plan):
                seen["lam"] = lam_min(G, plan)
                return seen["lam"]
            m.setattr(ssp, "_lambda_min", lam)
        kw = {} if weights is None else dict(sample_weight=weights, weight_bound=B)
        ssp.adassp(X, y, 1.0, delta, data_norm=Xb, label_bound=Yb, random_state=0, **kw)
    return seen["lam"], seen["G"], seen["b"]


def _F(a):
    return [Fraction(float(v)) for v in np.ravel(a)]


def _ut(G):
    return G[np.triu_indices(G.shape[0])]


def _pair(rng, n, p, X, Y, case, weighted):
    """Neighbouring (X, y, w) and (X′, y′, w′): n − 1 common rows, one replaced (row 0)."""
    base = rng.standard_normal((n - 1, p)) * X * rng.uniform(0.3, 4.0, (n - 1, 1))
    yb = rng.uniform(-Y, Y, n - 1) * (rng.random(n - 1) < 0.7) + Y * (rng.random(n - 1) >= 0.7)
    wb = rng.uniform(0.0, 1.0, n - 1) * (rng.random(n - 1) < 0.5) + (rng.random(n - 1) >= 0.5)

    def heavy(cols):  # a row beyond X, mostly on cols[0], a little on the others (its norm rounds)
        a = np.zeros(p)
        a[cols[0]] = 1.0
        a[cols[1:]] = rng.uniform(-1, 1, len(cols) - 1) * 10.0 ** rng.uniform(-8, -1)
        return a * X * rng.uniform(1.0, 8.0)

    if case == "gram":  # disjoint supports: ‖ut(âₐâₐᵀ − â_bâ_bᵀ)‖ ≈ √2·‖â‖², the L2 bound's worst case
        half = p // 2
        a, c = heavy(np.arange(half)), heavy(np.arange(half, p))
        ya, yc = Y, -Y
    elif case == "label":  # one row, the label flipped: b moves by 2·w·Y·â
        a = heavy(rng.permutation(p))
        c, ya, yc = a, Y, -Y
    else:  # "lam": the common rows span the other columns; λ_min moves by w‖â‖² along column 0
        base[:, 0] = 0.0
        base[:, 1:] *= 3.0
        a, c, ya, yc = heavy(np.r_[0, rng.permutation(np.arange(1, p))]), np.zeros(p), Y, Y
    A = np.vstack([a, base])
    C = np.vstack([c, base])
    w = np.r_[1.0, wb] if weighted else None
    return (A, np.r_[ya, yb], w), (C, np.r_[yc, yb], w)


def _hunt(seed, weighted, sparse, trials=40):
    """The largest ratio (computed difference)/(declared sensitivity) over the hunt, per release."""
    rng = np.random.default_rng(seed)
    worst = dict.fromkeys(["lam", "gram_l2", "gram_l1", "b_l2", "b_l1"], -math.inf)
    for t in range(trials):
        p = int(rng.choice([2, 3, 4, 6]))
        n = int(rng.choice([2, 5, 30]))
        X = float(rng.choice([1.0, 1.5, math.hypot(1.0, 0.25), 0.7, 3.1]))
        Y, B = 0.8, (1.7 if weighted else 1.0)
        case = ("gram", "label", "lam")[t % 3]
        D, Dp = _pair(rng, n, p, X, Y, case, weighted)
        out = []
        for A, y, w in (D, Dp):
            A = sp.csr_matrix(A) if sparse else A
            out.append(_releases(A, y, delta=1e-5, Xb=X, Yb=Y,
                                 weights=None if w is None else w * B, B=B))
        (l1, G1, b1), (l2, G2, b2) = out
        Xf, Yf, Bf = Fraction(X), Fraction(Y), Fraction(B)
        dG = [a - b for a, b in zip(_F(_ut(G1)), _F(_ut(G2)))]
        db = [a - b for a, b in zip(_F(b1), _F(b2))]
        dl = abs(Fraction(l1) - Fraction(l2))
        ratios = {"lam": dl / (Bf * Xf * Xf),
                  "gram_l2": sum(v * v for v in dG) / (2 * Bf * Bf * Xf ** 4),  # squared ratio
                  "gram_l1": sum(abs(v) for v in dG) / (Bf * (p + 1) * Xf * Xf),
                  "b_l2": sum(v * v for v in db) / (4 * Bf * Bf * Xf * Xf * Yf * Yf),  # squared
                  "b_l1": sum(abs(v) for v in db) ** 2 / (4 * Bf * Bf * p * Xf * Xf * Yf * Yf)}  # squared
        for k, r in ratios.items():
            worst[k] = max(worst[k], float(r - 1))
    return worst


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_computed_releases_of_neighbours_within_declared_sensitivities(weighted, sparse):
    worst = _hunt(11 + 2 * weighted + sparse, weighted, sparse)
    # the hunt reaches the bounds (to the margin) ...
    assert worst["gram_l2"] > -1e-9 and worst["b_l2"] > -1e-9 and worst["lam"] > -1e-9, worst
    # ... and never exceeds them, in exact arithmetic
    assert max(worst.values()) <= 0.0, worst


def test_without_the_margin_the_hunt_finds_a_violation(monkeypatch):
    # the former code: rows clipped at X itself, λ_min straight from the eigensolver
    plan = fm.ssp_plan

    def no_margin(n, p, X, Y, B):
        got = plan(n, p, X, Y, B)
        return got._replace(clip=float(X))

    worst = dict.fromkeys(["lam", "gram_l2", "gram_l1", "b_l2", "b_l1"], -math.inf)
    for seed in range(4):
        with monkeypatch.context() as m:
            m.setattr(fm, "ssp_plan", no_margin)
            got = _hunt(100 + seed, weighted=False, sparse=False)
        worst = {k: max(v, got[k]) for k, v in worst.items()}
    assert max(worst["gram_l2"], worst["b_l2"], worst["lam"]) > 0.0, worst


def _exact_lambda_min(G):
    with mp.workdps(50):
        M = mp.matrix([[mp.mpf(float(v)) for v in row] for row in G])
        return mp.eigsy(M, eigvals_only=True)[0] if hasattr(mp, "eigsy") else min(mp.eig(M)[0], key=mp.re)


@pytest.mark.parametrize("force_bisection", [False, True])
def test_certified_lambda_min_within_its_bound(force_bisection, monkeypatch):
    rng = np.random.default_rng(5)
    if force_bisection:  # the fast path's first test reports failure: the bisection runs
        real = ssp._cholesky_succeeds
        calls = []

        def chol(G, t, scale):
            calls.append(t)
            return real(G, t, scale) if len(calls) > 1 else False
        monkeypatch.setattr(ssp, "_cholesky_succeeds", chol)
    for trial in range(12):
        n, p = int(rng.integers(1, 400)), int(rng.integers(1, 9))
        A = rng.standard_normal((n, p)) * rng.uniform(0.1, 3.0, (n, 1))
        if trial % 3 == 1:
            A[:, 0] = 0.0  # singular: λ_min = 0
        if trial % 3 == 2:
            A[:, 1:] *= 1e-7  # badly conditioned
        plan = fm.ssp_plan(n, p, 1.3, 1.0, 1.0)
        A = ssp._clip_rows_dense(A, plan.clip)
        G, _ = ssp._statistics(A, np.zeros(n), None)
        G = 0.5 * (G + G.T)
        if force_bisection:
            calls.clear()
        got = ssp._lambda_min(G, plan)
        exact = _exact_lambda_min(G)
        assert abs(mp.mpf(got) - exact) <= mp.mpf(float(plan.lam_error)), (trial, got, exact)
        if force_bisection:
            assert len(calls) > 5
        else:
            assert got == float(np.linalg.eigvalsh(G)[0])  # the fast path keeps the eigensolver's value


@pytest.mark.parametrize("n,p", [(1, 1), (60, 4), (70_000, 3), (10 ** 6, 100), (10 ** 8, 10)])
def test_plan_is_the_proved_one(n, p):
    X, Y, B = 1.0307764064044151, 0.9, 1.3
    plan = fm.ssp_plan(n, p, X, Y, B)
    u = Fraction(1, 2 ** 53)

    def g(k):
        return k * u / (1 - k * u)
    r, K = min(n, fm.SSP_BLOCK), -(-n // fm.SSP_BLOCK)
    Xf, Yf, Bf = Fraction(X), Fraction(Y), Fraction(B)
    Xr = Fraction(plan.clip) * (1 + g(2 * p + 8))
    eta = Fraction(1, 2 ** 1074)
    eG = g(r + K + 1) * n * Bf * Xr * Xr + p * 2 * n * (Xr + 1) * eta
    eb = g(r + K) * n * Bf * Yf * Xr + p * 2 * n * (Yf + 1) * eta
    room = Bf * (Xf * Xf - Xr * Xr)
    assert 4 * eG * eG <= 2 * room * room  # the Gram matrix, L2
    assert 2 * eG + 2 * plan.lam_error <= room  # λ_min
    assert Bf * Xr * Yf + eb <= Bf * Xf * Yf  # b
    # and the margin is not far from what these conditions need: θ ≈ 2nγ_{r+K+1} (the sums) +
    # 5p(p + 2)n·u + 32(p + 1)n·u (the certified λ_min) + 4γ_{2p+8} (the rows' clip)
    need = 2 * n * g(r + K + 1) + 5 * p * (p + 2) * n * u + 32 * (p + 1) * n * u + 4 * g(2 * p + 8)
    assert float(need) / 2 <= float(plan.theta) <= 1.5 * float(need)
    assert plan.clip < X and plan.lo < 0.0 < plan.hi and plan.width > 0.0


@pytest.mark.filterwarnings("ignore:.*rows .* have a norm above data_norm:fasterm.DataWarning")  # a row beyond the bound, on purpose
def test_estimator_rows_are_clipped_at_the_plan_and_lambda_is_certified(monkeypatch):
    # the estimator's design rows (norm up to √(X² + s²)) go through the same clip, and the
    # λ_min release is the certified one (the eigensolver's value alone has no proved bound)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((50, 3)) * 0.3
    y = rng.uniform(-1, 1, 50)
    seen, lams = [], []
    clip, lam_min = ssp._clip_rows_dense, ssp._lambda_min
    monkeypatch.setattr(ssp, "_clip_rows_dense", lambda A, c: seen.append(c) or clip(A, c))
    monkeypatch.setattr(ssp, "_lambda_min", lambda G, plan: lams.append(plan) or lam_min(G, plan))
    fe.DPLinearRegression(solver="adassp", random_state=0).fit(X, y)
    plan = fm.ssp_plan(50, 4, math.hypot(1.0, 0.25), 1.0, 1.0)
    assert seen == [plan.clip] and plan.clip < math.hypot(1.0, 0.25) and lams == [plan]


def test_plan_refuses_sizes_beyond_double():
    with pytest.raises(fm.MarginTooLarge):
        fm.ssp_plan(10 ** 12, 3000, 1.0, 1.0, 1.0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="data_norm"):
        ssp.adassp(rng.standard_normal((20, 2)), rng.standard_normal(20), 1.0, 1e-5, data_norm=1e-170)


def test_rows_whose_norm_overflows_are_clipped_along_their_direction():
    # A row of huge finite entries: its sum of squares overflows in double.  It is scaled by a power
    # of two before its norm is taken, so it is clipped like any row (not zeroed), and the exact norm
    # of the computed clipped row stays within X_r = X_c(1 + γ_{2p+8}), the proof's row bound.
    p, Xc = 5, 0.75
    A = np.array([[3e200, -4e200, 1e150, 0.0, 2.5],
                  [1.7e308, 1.7e308, -1.7e308, 1.0, 0.0],
                  [1e-300, 2e307, 0.0, 0.0, 0.0],
                  [0.3, 0.1, 0.2, 0.0, 0.05]])
    out = ssp._clip_rows_dense(A, Xc)
    assert np.all(np.isfinite(out))
    u = Fraction(1, 2 ** 53)
    gamma = (2 * p + 8) * u / (1 - (2 * p + 8) * u)
    Xr2 = (Fraction(Xc) * (1 + gamma)) ** 2
    for a, o in zip(A, out):
        exact_sq = sum(Fraction(float(v)) ** 2 for v in o)
        assert exact_sq <= Xr2
        direction = a / np.max(np.abs(a))
        direction /= np.linalg.norm(direction)
        if sum(Fraction(float(v)) ** 2 for v in a) > Fraction(Xc) ** 2:  # a clipped row
            np.testing.assert_allclose(o, Xc * direction, rtol=1e-14, atol=1e-300)
        else:
            np.testing.assert_array_equal(o, a)
