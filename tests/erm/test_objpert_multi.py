"""Multinomial objective perturbation (fasterm.erm.objpert_multi): the calibration checked numerically.

* the loss's curvature facts (operator norm ≤ X²/(2τ), trace ≤ X²(1 − 1/K)/τ,
  rank ≤ K − 1 of ∇²_W ℓ = ∇²_z φ ⊗ aaᵀ) against the exact Kronecker Hessian;
* the rank-r determinant bound against exact determinants: random instances
  stay below it, and the extremal instance (uniform q, ‖a‖ = X, the other
  rows and the neighbour's row zero) attains it, so a bound without the rank
  factor is caught;
* the noise as drawn: its norm (‖B‖_F for the ℓ2 density, ‖B‖₁ for ℓ1) has
  the Gamma(pK, scale) law (Kolmogorov–Smirnov against scipy);
* the calibration: ε_b·scale = sensitivity (2L, or 4X₁), ε_b + ε_jac + ε_out ≤ ε;
* the certified solve: the exact gradient at the solver's point is below g;
* parameter errors name the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fasterm.accounting import objpert as acc
from fasterm.erm import objpert_multi as om


def _softmax_hessian_z(q, tau):
    return (np.diag(q) - np.outer(q, q)) / tau


def _hessian_W(a, z, y, loss):
    """The exact per-example Hessian of ℓ in vec(W) (column-major: W[:, k] blocks), by Kronecker."""
    Y = np.zeros((1, z.shape[0]))
    Y[0, y] = 1.0
    Q, _ = loss._probs(z[None, :], Y)
    return np.kron(_softmax_hessian_z(Q[0], loss.smoothness), np.outer(a, a))


@pytest.mark.parametrize("tau, m, K", [(1.0, 0.0, 3), (0.25, 1.0, 4), (1.0, 0.0, 10)])
def test_curvature_bounds_of_the_loss(tau, m, K):
    g = np.random.default_rng(1)
    loss = om.Softmax(tau, m)
    p, X = 4, 0.8
    c, T, r = loss.curvature_bounds(X, K)
    for _ in range(200):
        a = g.standard_normal(p)
        a *= X * g.uniform(0.2, 1.0) / np.linalg.norm(a)
        scale = g.choice([0.1, 1.0, 10.0])
        z = g.standard_normal(K) * scale
        H = _hessian_W(a, z, int(g.integers(K)), loss)
        ev = np.linalg.eigvalsh(H)
        assert ev.min() > -1e-12
        assert ev.max() <= c * (1 + 1e-12)
        assert ev.sum() <= T * (1 + 1e-12)
        if scale <= 1.0:  # q far from one-hot: the numerical rank is well defined
            assert np.sum(ev > 1e-9 * ev.max()) <= r  # rank ≤ K − 1 (1 spans the kernel of ∇²_z φ)


def _logdet_ratio(M, E, E2):
    return np.linalg.slogdet(M + E)[1] - np.linalg.slogdet(M + E2)[1]


@pytest.mark.parametrize("K", [3, 5])
def test_determinant_bound_holds_on_random_instances(K):
    g = np.random.default_rng(7)
    loss = om.Softmax()
    n, p, X, mu = 6, 3, 1.0, 0.05
    _, T, r = loss.curvature_bounds(X, K)
    bound = acc.objpert_multi_log_det(T, r, n, mu)
    worst = -np.inf
    for _ in range(300):
        W = g.standard_normal((p, K)) * g.choice([0.0, 0.3, 3.0])
        rows = g.standard_normal((n + 1, p))
        rows *= (X * g.uniform(0, 1, n + 1) / np.linalg.norm(rows, axis=1))[:, None]
        ys = g.integers(K, size=n + 1)
        Hs = [_hessian_W(rows[i], W.T @ rows[i], ys[i], loss) for i in range(n + 1)]
        M = sum(Hs[:n - 1]) + n * mu * np.eye(p * K)
        worst = max(worst, _logdet_ratio(M, Hs[n - 1], Hs[n]), _logdet_ratio(M, Hs[n], Hs[n - 1]))
    assert worst <= bound
    assert worst > 0.2 * bound  # the instances are not trivially far from the bound


@pytest.mark.parametrize("K", [3, 4, 10])
def test_determinant_bound_is_attained_so_the_rank_factor_is_needed(K):
    """Uniform q (W = 0), ‖a‖ = X, the other rows and the neighbour's row zero: the ratio is exactly
    (1 + X²/(K n μ))^{K−1} = the rank-(K − 1) bound, above the rank-one log(1 + T/(nμ))."""
    loss = om.Softmax()
    n, p, X, mu = 10, 2, 1.0, 0.01
    _, T, r = loss.curvature_bounds(X, K)
    a = np.array([X, 0.0])
    E = _hessian_W(a, np.zeros(K), 0, loss)
    M = n * mu * np.eye(p * K)
    exact = _logdet_ratio(M, E, np.zeros_like(E))
    bound = acc.objpert_multi_log_det(T, r, n, mu)
    assert exact <= bound <= exact * (1 + 1e-12)
    assert exact > math.log1p(T / (n * mu)) * 1.05


def _fit(noise="l2", seed=0, eps=1.0, K=3, n=40, p=3, diag=True, **kw):
    g = np.random.default_rng(100)
    X = g.standard_normal((n, p)) / math.sqrt(p)
    y = np.arange(n) % K
    extra = {"l1_norm": 0.9} if noise == "l1" else {}
    return om.multinomial_objective_perturbation(om.Softmax(), X, y, K, eps, data_norm=1.0, noise=noise,
                                                 random_state=seed, nonprivate_diagnostics=diag, **extra, **kw)


@pytest.mark.parametrize("noise", ["l2", "l1"])
def test_calibration_matches_the_theorem(noise):
    for eps, K in ((0.3, 3), (1.0, 4), (3.0, 10)):
        r = _fit(noise, eps=eps, K=K)
        p = 3
        X = 1.0 * (1 + 4 * (p + 8) * 2.0 ** -53)
        assert r.rank == K - 1
        assert r.curvature_trace == pytest.approx(X * X * (1 - 1 / K))
        assert r.jacobian_epsilon >= (K - 1) * math.log1p(r.curvature_trace / ((K - 1) * 40 * r.regularization))
        sens = 2.0 * r.lipschitz if noise == "l2" else 4.0 * 0.9
        assert r.lipschitz >= math.sqrt(2.0) * X
        assert sens / r.noise_scale <= r.noise_epsilon
        assert r.noise_epsilon + r.jacobian_epsilon + r.output_epsilon <= r.epsilon <= eps
        assert r.epsilon == pytest.approx(eps, rel=1e-9)
        assert 2.0 * r.tolerance / r.regularization / r.output_scale <= r.output_epsilon * (1 + 1e-15)
        assert r.delta == 0.0


@pytest.mark.parametrize("noise", ["l2", "l1"])
def test_applied_noise_matches_the_reported_scale(noise):
    """‖B‖_F (ℓ2) or ‖B‖₁ (ℓ1) ~ Gamma(pK, scale): uniform direction × Gamma radius, or pK Laplace
    entries."""
    norms, scale = [], None
    for seed in range(2000):
        r = _fit(noise, seed=seed, n=12, p=2)
        norms.append(r.nonprivate_diagnostics["noise_norm"])
        scale = r.noise_scale
    dim = 2 * 3
    assert stats.kstest(norms, stats.gamma(dim, scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(norms, stats.gamma(dim, scale=0.95 * scale).cdf).pvalue < 1e-3


def test_certified_solve_is_within_tolerance_of_the_exact_minimiser():
    g = np.random.default_rng(3)
    n, p, K = 200, 5, 4
    A = g.standard_normal((n, p)) / math.sqrt(p)
    A /= np.maximum(1, np.linalg.norm(A, axis=1))[:, None]
    Y = np.eye(K)[np.arange(n) % K]
    loss = om.Softmax(0.5, 1.0)
    mu = 1e-3
    B = g.standard_normal((p, K)) * 20
    obj = om._Objective(loss, A, Y, np.linalg.norm(A, axis=1), mu, B / n)
    tol = 1e-9
    W, bound, _ = om._solve(obj, (p, K), tol, 1.0, 0.5 / 0.5 + mu)
    assert bound <= tol
    # the exact gradient, in extended precision
    ld = np.longdouble
    Q, _ = loss._probs(A.astype(ld) @ W.astype(ld), Y.astype(ld))
    grad = A.astype(ld).T @ (Q - Y) / n + mu * W.astype(ld) + (B / n).astype(ld)
    assert float(np.sqrt(np.sum(grad * grad))) <= tol


def test_release_holds_only_the_output_and_public_constants():
    a, b = _fit(seed=1, diag=False), _fit(seed=2, diag=False)
    g = np.random.default_rng(5)
    X = g.standard_normal((40, 3))
    c = om.multinomial_objective_perturbation(om.Softmax(), X, np.arange(40) % 3, 3, 1.0, data_norm=1.0,
                                              random_state=1)
    for f in ("epsilon", "delta", "noise_epsilon", "jacobian_epsilon", "output_epsilon", "regularization",
              "lipschitz", "curvature", "curvature_trace", "rank", "noise_scale", "tolerance", "output_scale",
              "steps", "note", "info", "nonprivate_diagnostics"):
        assert getattr(a, f) == getattr(b, f) == getattr(c, f), f
    assert a.nonprivate_diagnostics is None and a.steps == om.MAX_STEPS
    assert not np.array_equal(a.W, b.W)


def test_secure_and_bad_parameters_raise_naming_the_parameter():
    X, y = np.zeros((6, 2)), np.arange(6) % 3
    f = om.multinomial_objective_perturbation
    with pytest.raises(ValueError, match="epsilon"):
        f(om.Softmax(), X, y, 3, -1.0, data_norm=1.0)
    with pytest.raises(ValueError, match="data_norm"):
        f(om.Softmax(), X, y, 3, 1.0, data_norm=0.0)
    with pytest.raises(ValueError, match="n_classes"):
        f(om.Softmax(), X, y, 2, 1.0, data_norm=1.0)
    with pytest.raises(ValueError, match="l1_norm"):
        f(om.Softmax(), X, y, 3, 1.0, data_norm=1.0, noise="l1")
    with pytest.raises(ValueError, match="noise"):
        f(om.Softmax(), X, y, 3, 1.0, data_norm=1.0, noise="l3")
    with pytest.raises(ValueError, match="secure"):
        f(om.Softmax(), X, y, 3, 1.0, data_norm=1.0, secure=True)
    with pytest.raises(ValueError, match="regularization"):
        f(om.Softmax(), X, y, 3, 0.1, data_norm=1.0, regularization=1e-9)
    with pytest.raises(ValueError, match="smoothness"):
        om.Softmax(smoothness=0.0)
    with pytest.raises(TypeError, match="loss"):
        f("softmax", X, y, 3, 1.0, data_norm=1.0)


def test_float32_rows_and_clipping():
    g = np.random.default_rng(2)
    X = (g.standard_normal((50, 3)) * 3).astype(np.float32)  # rows beyond the bound are clipped
    r = om.multinomial_objective_perturbation(om.Softmax(), X, np.arange(50) % 3, 3, 1.0, data_norm=1.0,
                                              random_state=0)
    assert r.W.shape == (3, 3) and r.W.dtype == np.float64 and np.isfinite(r.W).all()
