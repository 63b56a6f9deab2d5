"""fasterm.erm.amp: the calibration against its theorem, the release, and a slow reference solve."""

import dataclasses
import math

import numpy as np
import pytest
from scipy import optimize, special, stats

from fasterm.erm import amp


def _mc_delta(eps, sigma, X, n, K, lam, draws=500_000, seed=0):
    """δ_op(ε) of the theorem by Monte Carlo over t ~ χ_m (no quadrature)."""
    m = 2 * (K - 1)
    s = 2.0 * math.sqrt(2.0) * X / sigma
    eps_j = (K - 1) * math.log1p(X * X / (2.0 * n * lam))
    t = np.sqrt(np.random.default_rng(seed).chisquare(m, draws))
    vals = -np.expm1(np.minimum(0.0, eps - eps_j - s * t - 0.5 * s * s))
    return float(vals.mean()), float(vals.std() / math.sqrt(draws))


@pytest.mark.parametrize("eps,sigma,K,n", [(1.0, 8.0, 3, 200), (0.5, 12.0, 5, 300), (3.0, 3.0, 10, 1000)])
def test_delta_matches_monte_carlo(eps, sigma, K, n):
    X, lam = 1.0, 0.01
    got = amp.amp_delta(eps, sigma, data_norm=X, n=n, n_classes=K, regularization=lam)
    mc, se = _mc_delta(eps, sigma, X, n, K, lam)
    assert got >= mc - 5 * se
    assert got <= mc + 5 * se + 1e-12


def test_calibrated_sigma_is_the_smallest_that_meets_delta():
    X, n, K, eps, delta = 1.03, 150, 3, 1.0, 1e-5
    lam = amp.regularization(eps, n, K, X)
    sigma = amp.calibrate_sigma(eps, delta, data_norm=X, n=n, n_classes=K, regularization=lam)
    assert amp.amp_delta(eps, sigma, data_norm=X, n=n, n_classes=K, regularization=lam) <= delta
    assert amp.amp_delta(eps, sigma * (1 - 1e-6), data_norm=X, n=n, n_classes=K, regularization=lam) > delta
    # the tail bound δ ≤ P[U > ε] dominates the hockey-stick value
    s = 2 * math.sqrt(2) * X / sigma
    eps_j = (K - 1) * math.log1p(X * X / (2 * n * lam))
    assert delta <= stats.chi.sf((eps - eps_j - s * s / 2) / s, 2 * (K - 1))


def test_regularization_floor_keeps_the_jacobian_share():
    for eps, n, K in [(0.3, 100, 10), (1.0, 150, 3), (3.0, 2000, 5)]:
        lam = amp.regularization(eps, n, K, 1.0, a=1e-9)
        eps_j = (K - 1) * math.log1p(1.0 / (2 * n * lam))
        assert eps_j <= amp.JACOBIAN_FRACTION * eps * (1 + 1e-12)


def _loss_parts(W, a, y):
    z = a @ W
    p = special.softmax(z)
    u = p.copy()
    u[y] -= 1.0
    return np.outer(a, u), np.kron(np.diag(p) - np.outer(p, p), np.outer(a, a))


def test_privacy_loss_is_below_the_theorem_bound_pointwise():
    """Sample W* ~ M(D) exactly, compute the exact privacy loss against D' (Gaussian density ratio of
    B_D(W*) vs B_D'(W*) and the Jacobian ratio) and check L ≤ ε_J + s·t + s²/2 with t = ‖ΠB‖/σ."""
    rng = np.random.default_rng(3)
    p, K, n, X = 2, 3, 6, 1.0
    A = rng.normal(size=(n, p))
    A /= np.linalg.norm(A, axis=1, keepdims=True)  # on the sphere: the bounds are nearly tight
    y = np.array([0, 1, 2, 0, 1, 2])
    a2, y2 = -A[0], 2  # D' replaces row 0
    lam, sigma = 0.05, 1.0
    s = 2 * math.sqrt(2) * X / sigma
    eps_j = (K - 1) * math.log1p(X * X / (2 * n * lam))
    # Π: projection on {a uᵀ + a' u'ᵀ : u, u' ⊥ 1} (vectorised row-major as W.ravel())
    basis = []
    for r in (A[0], a2):
        for e in np.linalg.svd(np.eye(K) - 1.0 / K)[0][:, :K - 1].T:
            basis.append(np.outer(r, e).ravel())
    Q = np.linalg.qr(np.array(basis).T)[0]
    losses = []
    for _ in range(150):
        B = rng.normal(size=(p, K)) * sigma
        obj = amp._Multinomial(A, y, K, lam, B / n)
        W = optimize.minimize(obj.fun_grad, np.zeros(p * K), jac=True, hessp=obj.hessp, method="trust-ncg",
                              options={"gtol": 1e-12}).x.reshape(p, K)
        g1, h1 = _loss_parts(W, A[0], y[0])
        g2, h2 = _loss_parts(W, a2, y2)
        H0 = sum(_loss_parts(W, A[i], y[i])[1] for i in range(1, n)) + n * lam * np.eye(p * K)
        Bp = B + (g1 - g2)  # B_{D'}(W) = B_D(W) + ∇ℓ(z) − ∇ℓ(z')
        L = (np.sum(Bp ** 2) - np.sum(B ** 2)) / (2 * sigma ** 2) \
            + np.linalg.slogdet(H0 + h1)[1] - np.linalg.slogdet(H0 + h2)[1]
        t = np.linalg.norm(Q.T @ B.ravel()) / sigma
        bound = eps_j + s * t + 0.5 * s * s
        assert L <= bound + 1e-9
        losses.append(L)
    # the hockey-stick divergence of the exact losses is within the calibrated δ_op(ε)
    for eps in (1.0, 3.0, 5.0):
        hs = -np.expm1(np.minimum(0.0, eps - np.array(losses)))
        assert hs.mean() <= amp.amp_delta(eps, sigma, data_norm=X, n=n, n_classes=K, regularization=lam) \
            + 3 * hs.std() / math.sqrt(len(hs)) + 1e-12
    assert max(losses) > 0.1  # the two data sets are distinguishable: the check is not vacuous


def _data(n=120, p=4, K=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    A = rng.normal(size=(n, p)) * 0.2 + np.eye(K, p)[y] * 0.5
    A /= np.maximum(1.0, np.linalg.norm(A, axis=1))[:, None]
    return A, y


def test_release_matches_a_slow_reference_minimiser():
    A, y = _data()
    n, p = A.shape
    K, eps, delta = 3, 2.0, 1e-5
    res = amp.multinomial_amp(A, y, K, eps, delta, random_state=7)
    B = np.random.default_rng(7).standard_normal((p, K)) * res.sigma
    lam = res.regularization

    def J(w):  # the objective and its gradient, row by row
        W = w.reshape(p, K)
        tot, grad = 0.0, np.zeros((p, K))
        for i in range(n):
            z = A[i] @ W
            tot += special.logsumexp(z) - z[y[i]]
            u = special.softmax(z)
            u[y[i]] -= 1.0
            grad += np.outer(A[i], u)
        return tot / n + 0.5 * lam * w @ w + B.ravel() @ w / n, (grad / n + lam * W + B / n).ravel()

    ref = optimize.minimize(J, np.zeros(p * K), jac=True, method="BFGS", options={"gtol": 1e-11}).x
    dist = np.linalg.norm(res.W.ravel() - ref)
    assert dist <= 1e-4 * (1 + np.linalg.norm(ref))
    assert dist >= 0.0 and np.isfinite(dist)


def test_certified_bound_covers_the_extended_precision_gradient():
    A, y = _data(n=300, p=6, seed=2)
    obj = amp._Multinomial(A, y, 3, 0.01, np.random.default_rng(1).normal(size=(6, 3)) / 300)
    w = np.random.default_rng(4).normal(size=18) * 3
    bound = amp._certified_gradient_norm(obj, w, 1.0)
    ld = np.longdouble
    Al, W = A.astype(ld), w.astype(ld).reshape(6, 3)
    Z = Al @ W
    Z -= Z.max(axis=1, keepdims=True)
    P = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    P[np.arange(300), y] -= 1
    G = Al.T @ P / 300 + ld(0.01) * W + obj.bn.astype(ld)
    exact = float(np.sqrt(np.sum(G * G)))
    assert exact <= bound <= exact * (1 + 1e-6) + 1e-12


def test_release_surface_and_public_constants():
    A, y = _data()
    A2, y2 = _data(seed=9)
    r1 = amp.multinomial_amp(A, y, 3, 1.0, 1e-5, random_state=0)
    r2 = amp.multinomial_amp(A2, y2, 3, 1.0, 1e-5, random_state=1)
    assert r1.nonprivate_diagnostics is None
    names = {f.name for f in dataclasses.fields(r1)}
    assert names == {"W", "epsilon", "delta", "sigma", "output_sigma", "regularization", "tolerance",
                     "jacobian_epsilon", "data_norm", "nonprivate_diagnostics"}
    for f in names - {"W", "nonprivate_diagnostics"}:  # public: the same for any data of the same shape
        assert getattr(r1, f) == getattr(r2, f), f
    assert r1.epsilon == 1.0 and r1.delta == 1e-5
    d = amp.multinomial_amp(A, y, 3, 1.0, 1e-5, random_state=0, nonprivate_diagnostics=True)
    assert np.array_equal(d.W, r1.W)
    assert d.nonprivate_diagnostics["gradient_bound"] <= d.tolerance


def test_reproducible_and_float32():
    A, y = _data()
    a = amp.multinomial_amp(A.astype(np.float32), y, 3, 1.0, 1e-5, random_state=5)
    b = amp.multinomial_amp(A.astype(np.float32).astype(np.float64), y, 3, 1.0, 1e-5, random_state=5)
    assert np.array_equal(a.W, b.W)


def test_rows_are_clipped():
    A, y = _data()
    big = A * 10.0
    r = amp.multinomial_amp(big, y, 3, 1.0, 1e-5, random_state=0, nonprivate_diagnostics=True)
    assert np.all(np.isfinite(r.W))
    assert r.data_norm == 1.0


@pytest.mark.parametrize("kw,name", [({"delta": 0.0}, "delta"), ({"epsilon": -1.0}, "epsilon"),
                                     ({"n_classes": 1}, "n_classes"), ({"data_norm": 0.0}, "data_norm")])
def test_bad_parameters(kw, name):
    A, y = _data()
    args = {"n_classes": 3, "epsilon": 1.0, "delta": 1e-5, "data_norm": 1.0, **kw}
    with pytest.raises(ValueError, match=name):
        amp.multinomial_amp(A, y, args["n_classes"], args["epsilon"], args["delta"], data_norm=args["data_norm"])


def test_bad_labels():
    A, y = _data()
    with pytest.raises(ValueError, match="y must"):
        amp.multinomial_amp(A, y + 5, 3, 1.0, 1e-5)


@pytest.mark.parametrize("eps,delta,n,K", [(1.0, 1e-5, 150, 3), (0.3, 1e-5, 1797, 10), (3.0, 1e-8, 300, 5)])
def test_delta_at_the_calibrated_sigma_against_high_precision_quadrature(eps, delta, n, K):
    """At δ = 1e-5 and 1e-8 (beyond Monte Carlo), the quadrature is an upper bound on a 40-digit one."""
    mpmath = pytest.importorskip("mpmath")
    X = 1.03
    lam = amp.regularization(eps, n, K, X)
    sigma = amp.calibrate_sigma(eps, delta, data_norm=X, n=n, n_classes=K, regularization=lam)
    got = amp.amp_delta(eps, sigma, data_norm=X, n=n, n_classes=K, regularization=lam)
    m, s = 2 * (K - 1), 2 * math.sqrt(2) * X / sigma
    c = eps - (K - 1) * math.log1p(X * X / (2 * n * lam)) - s * s / 2
    t0 = max(0.0, c / s)
    with mpmath.workdps(40):
        norm = 2 ** (mpmath.mpf(m) / 2 - 1) * mpmath.gamma(mpmath.mpf(m) / 2)
        ref = float(mpmath.quad(lambda t: -mpmath.expm1(c - s * t) * t ** (m - 1) * mpmath.exp(-t * t / 2) / norm,
                                [t0, t0 + 1, t0 + 5, mpmath.inf]))
    assert ref <= got <= ref * (1 + 1e-8)
    assert got <= delta


def test_constants_cover_the_exact_norm_of_every_row(monkeypatch):
    # Rows whose computed norm is exactly X can have an exact norm above X (the norm's rounding);
    # so can clipped rows.  Every constant (Λ, σ, the Jacobian term, the certificate) must be
    # computed for a norm bound that holds exactly for every row the solver sees.
    from fractions import Fraction
    rng = np.random.default_rng(3)
    n, p, K, X = 200, 20, 3, 1.0
    A = rng.normal(size=(n, p))
    A /= np.linalg.norm(A, axis=1)[:, None]
    for i in range(n // 2):  # nudge up, ulp by ulp, while the computed norm stays ≤ X
        while True:
            b = np.nextafter(A[i], np.copysign(np.inf, A[i]))  # away from 0
            if np.sqrt(np.einsum("j,j->", b, b)) > X:
                break
            A[i] = b
    A[n // 2:] *= 3.0  # clipped rows
    y = rng.integers(0, K, size=n)
    seen = {"norms": []}

    def spy(name, fn, pos=None, key=None):
        def wrapped(*args, **kw):
            seen["norms"].append((name, kw[key] if key in kw else args[pos]))
            return fn(*args, **kw)
        monkeypatch.setattr(amp, name, wrapped)

    real = amp._Multinomial
    monkeypatch.setattr(amp, "_Multinomial", lambda A_used, *a, **k: seen.setdefault("A", np.array(A_used))
                        is not None and real(A_used, *a, **k))
    spy("regularization", amp.regularization, pos=3, key="data_norm")
    spy("calibrate_sigma", amp.calibrate_sigma, key="data_norm")
    spy("_jacobian_epsilon", amp._jacobian_epsilon, pos=0, key="X")
    spy("_certified_gradient_norm", amp._certified_gradient_norm, pos=2, key="X")
    amp.multinomial_amp(A, y, K, 1.0, 1e-5, data_norm=X, random_state=0)
    exact = max(sum(Fraction(float(v)) ** 2 for v in row) for row in seen["A"])
    assert exact > Fraction(X) ** 2  # the nudged rows do exceed X exactly: the case is real
    assert {name for name, _ in seen["norms"]} == {"regularization", "calibrate_sigma", "_jacobian_epsilon",
                                                   "_certified_gradient_norm"}
    for name, bound in seen["norms"]:
        assert Fraction(float(bound)) ** 2 >= exact, name
