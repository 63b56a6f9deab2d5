"""Approximate-minima objective perturbation (AMP) for the multinomial logistic loss, (ε, δ)-DP.

Measurements and why (or why not) it is a default: docs/multiclass.rst ("Small tables, δ > 0").

**Mechanism.**  Rows a_i ∈ R^p (the design row, intercept column included) clipped to
‖a_i‖₂ ≤ X, labels y_i ∈ {0, …, K − 1}, W ∈ R^{p×K}, ℓ(W; a, y) = −log softmax(Wᵀa)_y.
Draw B ∈ R^{p×K} with i.i.d. N(0, σ²) entries and minimise

    J(W) = (1/n) Σ_i ℓ(W; a_i, y_i) + (Λ/2)‖W‖_F² + ⟨B, W⟩/n

to a point Ŵ with a certified ‖∇J(Ŵ)‖_F ≤ g; release Ŵ + E, E i.i.d. N(0, σ_out²).

**Theorem (objective perturbation, multinomial, Gaussian b; replace-one neighbours, n public).**
Let Δ = 2√2·X, m = 2(K − 1), ε_J = (K − 1)·log(1 + X²/(2nΛ)).  The exact minimiser W* is
(ε, δ_op(ε))-DP with

    δ_op(ε) = E_{t ~ χ_m}[(1 − exp(ε − ε_J − s·t − s²/2))₊],   s = Δ/σ.

Proof.  ∇J(W*) = 0 reads B = B_D(W*) with B_D(W) = −Σ_i ∇ℓ(W; z_i) − nΛW, a C¹ bijection
of R^{pK} (J is Λ-strongly convex), so W* has density ν(B_D(W))·|det ∇B_D(W)|
(Chaudhuri, Monteleoni & Sarwate 2011, JMLR 12, Thm 9; Kifer, Smith & Thakurta 2012, COLT,
Thm 2).  For neighbours D = D₀ ∪ {z}, D' = D₀ ∪ {z'} at a fixed W the privacy loss has two
terms.

(i) Jacobian.  ∇²ℓ(W; a, y) = (diag(p) − ppᵀ) ⊗ aaᵀ is PSD of rank ≤ K − 1 with eigenvalues
≤ ‖a‖²/2 (λ_max(diag(p) − ppᵀ) ≤ 1/2), and M = Σ_{D₀}∇²ℓ + nΛI ⪰ nΛI, so
det(M + ∇²ℓ(z))/det(M + ∇²ℓ(z')) ≤ det(I + M^{-1/2}∇²ℓ(z)M^{-1/2}) ≤ (1 + X²/(2nΛ))^{K−1}.

(ii) Noise.  B_{D'}(W) − B_D(W) = v(W) = ∇ℓ(W; z) − ∇ℓ(W; z') = a(p − e_y)ᵀ − a'(p' − e_{y'})ᵀ
with ‖v‖_F ≤ Δ (‖p − e_y‖ ≤ √2), and v(W) lies for every W in the fixed subspace
S = {a uᵀ + a' u'ᵀ : u, u' ⊥ 1} of dimension ≤ m (the observation of Redberg, Koskela & Wang
2024, arXiv 2401.00583, for GLMs, where S is spanned by the two rows).  With Π the projection
on S, log ν(b)/ν(b + v) = (2⟨Πb, v⟩ + ‖v‖²)/(2σ²) ≤ (Δ/σ)·‖Πb‖/σ + Δ²/(2σ²).  Under
W* ~ M(D), b = B_D(W*) is the drawn noise, so ‖Πb‖/σ is stochastically dominated by χ_m.

The privacy loss is thus bounded pointwise by U = ε_J + s·t + s²/2 with t ~ χ_m, and the
hockey-stick divergence E[(1 − e^{ε − L})₊] is increasing in L, which gives δ_op(ε); the
reverse pair is symmetric. ∎

**Approximate minimum** (Iyengar, Near, Song, Thakkar, Thakurta & Wang 2019, IEEE S&P, Thm 1):
Λ-strong convexity gives ‖Ŵ − W*‖_F ≤ ρ = g/Λ for every data set, so given W* the difference
Ŵ − W* has L2 sensitivity 2ρ and Ŵ − W* + E is a Gaussian mechanism (ε_out, δ_out) (Dong, Roth
& Su 2022, Thm 2.7; :func:`fasterm.accounting.calibrate_gaussian`); Ŵ + E is post-processing of
the pair: (ε_op + ε_out, δ_op + δ_out)-DP by composition.  g is certified with Higham's summation
bounds on a float64 evaluation (:func:`_certified_gradient_norm`); an uncertified solve raises
``ArithmeticError``.

**Budget** (public: ε, δ, n, p, K, X; every constant uses X padded by 4(p + 8) ulps, the
rows' norm rounding): ε_out = ``OUTPUT_FRACTION``·ε, δ_out = ``OUTPUT_FRACTION``·δ; Λ = max(l2, a·X²/(ε n), the floor at which ε_J = ``JACOBIAN_FRACTION``·ε); σ the smallest (to
a relative 1e-9, rounded up) with δ_op(ε − ε_out) ≤ δ − δ_out (:func:`calibrate_sigma`).

**Released** (:class:`AMPResult`): Ŵ + E and public constants.  ‖B‖, the residual and the
iteration count depend on the data and the noise: only behind ``nonprivate_diagnostics=True``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate, optimize, special, stats
from scipy.sparse import linalg as sparse_linalg

import fasterm.accounting as accounting
from .._validation import check_epsilon, check_positive, check_random_state, check_scalar

__all__ = ["AMPResult", "amp_delta", "calibrate_sigma", "multinomial_amp", "regularization"]

#: a in Λ = a·X²/(ε n) (candidates compared in experiments/small_tables.py).
REGULARIZATION = 4.0
#: Largest share of ε the Jacobian term may take (a floor for Λ).
JACOBIAN_FRACTION = 0.5
#: Share of ε and of δ for the output noise that covers the solver's tolerance.
OUTPUT_FRACTION = 0.02
#: The certified gradient norm g, relative to Δ/2 + σ√(pK)/n (the typical size of ∇J's terms).
GRADIENT_TOLERANCE = 1e-10
#: Solver caps: trust-region Newton–CG iterations, then pure Newton steps; past them ``ArithmeticError``.
MAX_ITER = 500
MAX_NEWTON_POLISH = 20

_U = 2.0 ** -53


def _check_delta(delta):
    d = check_scalar(delta, "delta", low=0.0)
    if not 0.0 < d < 1.0:
        raise ValueError(f"delta must be in (0, 1) for the Gaussian objective perturbation, got {delta!r}")
    return d


def _check_classes(n_classes):
    return check_scalar(n_classes, "n_classes", low=2, integer=True)


def amp_delta(epsilon, sigma, *, data_norm, n, n_classes, regularization) -> float:
    """δ_op(ε) of the theorem (module docstring), an upper bound (the integral plus its error bound)."""
    eps = float(epsilon)
    sigma = check_positive(sigma, "sigma")
    X = check_positive(data_norm, "data_norm")
    n = check_scalar(n, "n", low=1, integer=True)
    K = _check_classes(n_classes)
    lam = check_positive(regularization, "regularization")
    return _amp_delta(eps, sigma, X, n, K, lam)


def _jacobian_epsilon(X, n, K, lam):
    return (K - 1) * math.log1p(X * X / (2.0 * n * lam))


def _amp_delta(eps, sigma, X, n, K, lam):
    m = 2 * (K - 1)
    s = 2.0 * math.sqrt(2.0) * X / sigma
    c = eps - _jacobian_epsilon(X, n, K, lam) - 0.5 * s * s
    t0 = max(0.0, c / s)
    logc = -special.gammaln(m / 2.0) - (m / 2.0 - 1.0) * math.log(2.0)

    def h(t):
        return -math.expm1(c - s * t) * math.exp(logc + (m - 1) * math.log(t) - 0.5 * t * t) if t > 0 else 0.0

    hi = max(t0, math.sqrt(m)) + 40.0
    val, err = integrate.quad(h, t0, hi, limit=400, epsabs=1e-300, epsrel=1e-10)
    tail = float(stats.chi.sf(hi, m))  # the integrand is ≤ the χ_m density beyond hi
    return min(1.0, val + 10.0 * abs(err) + tail + 1e-15 * val)


def calibrate_sigma(epsilon, delta, *, data_norm, n, n_classes, regularization) -> float:
    """The smallest σ (bisection to 1e-9 relative, the upper end kept) with δ_op(ε) ≤ δ."""
    eps = check_epsilon(epsilon)
    delta = _check_delta(delta)
    X = check_positive(data_norm, "data_norm")
    n = check_scalar(n, "n", low=1, integer=True)
    K = _check_classes(n_classes)
    lam = check_positive(regularization, "regularization")
    if _jacobian_epsilon(X, n, K, lam) >= eps:
        raise ValueError("regularization is too small: the Jacobian term alone exceeds epsilon")
    lo, hi = 1e-12 * X, X
    while _amp_delta(eps, hi, X, n, K, lam) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e300:
            raise ValueError("no finite sigma meets epsilon and delta")
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        if _amp_delta(eps, mid, X, n, K, lam) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def regularization(epsilon, n, n_classes, data_norm, l2=0.0, a=REGULARIZATION) -> float:
    """Λ = max(l2, a·X²/(ε n), X²/(2n(e^{fε/(K−1)} − 1))) (module docstring), a public rule."""
    eps = check_epsilon(epsilon)
    n = check_scalar(n, "n", low=1, integer=True)
    K = _check_classes(n_classes)
    X = check_positive(data_norm, "data_norm")
    floor = X * X / (2.0 * n * math.expm1(JACOBIAN_FRACTION * eps / (K - 1)))
    return max(float(l2), a * X * X / (eps * n), floor)


@dataclass
class AMPResult:
    """What :func:`multinomial_amp` returns: the release and public constants only.

    W : (p, K) float64, the release Ŵ + E.  epsilon, delta : the privacy spent.  sigma : the
    objective noise σ; output_sigma : σ_out; regularization : Λ; tolerance : g; jacobian_epsilon :
    ε_J; data_norm : X.  nonprivate_diagnostics : None unless asked for (then ‖B‖, the certified
    residual and the iteration count: **not** covered by the guarantee).
    """

    W: np.ndarray
    epsilon: float
    delta: float
    sigma: float
    output_sigma: float
    regularization: float
    tolerance: float
    jacobian_epsilon: float
    data_norm: float
    nonprivate_diagnostics: dict | None = field(default=None, repr=False)


class _Multinomial:
    """J(W) on float64 rows A (n × p), labels y; B already divided by n."""

    def __init__(self, A, y, K, lam, bn):
        self.A, self.y, self.K, self.lam, self.bn = A, y, K, lam, bn
        self.n, self.p = A.shape
        self.Y = np.zeros((self.n, K))
        self.Y[np.arange(self.n), y] = 1.0

    def _probs(self, W):
        Z = self.A @ W
        Z -= Z.max(axis=1, keepdims=True)
        E = np.exp(Z)
        return Z, E / E.sum(axis=1, keepdims=True)

    def fun_grad(self, w):
        W = w.reshape(self.p, self.K)
        Z, P = self._probs(W)
        lse = np.log(np.exp(Z).sum(axis=1))
        f = float(np.sum(lse - Z[np.arange(self.n), self.y])) / self.n \
            + 0.5 * self.lam * float(w @ w) + float(self.bn.ravel() @ w)
        G = self.A.T @ (P - self.Y) / self.n + self.lam * W + self.bn
        return f, G.ravel()

    def hessp(self, w, v):
        W, V = w.reshape(self.p, self.K), v.reshape(self.p, self.K)
        _, P = self._probs(W)
        AV = self.A @ V
        M = P * AV
        M -= P * M.sum(axis=1, keepdims=True)
        return (self.A.T @ M / self.n + self.lam * V).ravel()


def _certified_gradient_norm(obj, w, X):
    """An upper bound on the exact ‖∇J(w)‖_F from a float64 evaluation (Higham's γ_k bounds).

    Scores z = Aw carry |Δz| ≤ γ_p·X‖W_col‖ per class; softmax is 1/2-Lipschitz from ‖Δz‖_∞
    to each |Δp_k| and its exp/sum/divide add ≤ (K + 4)u relative, so each |Δ(p − e_y)_k| ≤
    γ_p·X‖W‖_F + (K + 4)u; the sum over rows (k = n terms) errs by ≤ γ_{n+2}·Σ_i‖a_i‖·‖p_i − e_i‖,
    ≤ γ_{n+2}·√2·X·n, and the three terms of ∇J by ≤ γ_3·(their norms).
    """
    f, g = obj.fun_grad(w)
    n, p, K = obj.n, obj.p, obj.K

    def gamma(k):
        return k * _U / (1.0 - k * _U)
    wn = float(np.linalg.norm(w))
    dp = gamma(p) * X * wn + (K + 4) * _U
    err_rows = math.sqrt(K) * (X * dp + gamma(n + 2) * math.sqrt(2.0) * X)
    err = 2.0 * (err_rows + gamma(3) * (math.sqrt(2.0) * X + obj.lam * wn + float(np.linalg.norm(obj.bn))))
    return float(np.linalg.norm(g)) + err


def multinomial_amp(A, y, n_classes, epsilon, delta, *, data_norm=1.0, l2=0.0, a=REGULARIZATION,
                    random_state=None, nonprivate_diagnostics=False) -> AMPResult:
    """(ε, δ)-DP multinomial logistic regression by approximate-minima objective perturbation.

    ``A``: the design rows (n × p; the intercept column, if any, already appended), clipped here
    to ‖a_i‖ ≤ ``data_norm``; ``y``: integer labels in [0, ``n_classes``).  float32 or float64;
    the solve runs in float64 on a float64 copy of ``A`` (the certified bound is for double).
    Theorem, constants and the release: module docstring.
    """
    eps = check_epsilon(epsilon)
    delta = _check_delta(delta)
    X = check_positive(data_norm, "data_norm")
    K = _check_classes(n_classes)
    l2 = check_scalar(l2, "l2", low=0.0)
    a = check_positive(a, "a")
    A = np.asarray(A, dtype=np.float64)
    y = np.asarray(y)
    if A.ndim != 2 or y.shape != (A.shape[0],):
        raise ValueError("A must be 2-D with one label in y per row")
    if not np.issubdtype(y.dtype, np.integer) or (y.size and (y.min() < 0 or y.max() >= K)):
        raise ValueError("y must hold integer labels in [0, n_classes)")
    if not np.all(np.isfinite(A)):
        raise ValueError("A must be finite")
    n, p = A.shape
    rng = check_random_state(random_state)
    norms = np.sqrt(np.einsum("ij,ij->i", A, A))
    over = norms > X
    if np.any(over):
        A = A.copy()
        A[over] *= (X * (1.0 - 8.0 * _U) / norms[over])[:, None]

    # The exact norm of a row whose computed norm is ≤ X (or of a clipped row) may exceed X by the
    # norm's rounding, ≤ (p/2 + 4)·u relative: the constants use X padded by 4(p + 8) ulps.
    Xpad = X * (1.0 + 4.0 * (p + 8) * _U)
    eps_out, delta_out = OUTPUT_FRACTION * eps, OUTPUT_FRACTION * delta
    lam = regularization(eps, n, K, Xpad, l2, a)
    sigma = calibrate_sigma(eps - eps_out, delta - delta_out, data_norm=Xpad, n=n, n_classes=K,
                            regularization=lam)
    tol = GRADIENT_TOLERANCE * (math.sqrt(2.0) * Xpad + sigma * math.sqrt(p * K) / n)
    rho = tol / lam
    out_sigma = accounting.calibrate_gaussian(2.0 * rho, 1, eps_out, delta_out)

    B = rng.standard_normal((p, K)) * sigma
    obj = _Multinomial(A, y, K, lam, B / n)
    w = np.zeros(p * K)
    res = optimize.minimize(obj.fun_grad, w, jac=True, hessp=obj.hessp, method="trust-ncg",
                            options={"gtol": tol / 4.0, "maxiter": MAX_ITER})
    w, iters = res.x, int(res.nit)
    bound = _certified_gradient_norm(obj, w, Xpad)
    for _ in range(MAX_NEWTON_POLISH):  # pure Newton steps near the minimum (quadratic convergence)
        if bound <= tol:
            break
        g = obj.fun_grad(w)[1]
        H = sparse_linalg.LinearOperator((p * K, p * K), matvec=lambda v, w=w: obj.hessp(w, v))
        d, _ = sparse_linalg.cg(H, -g, rtol=1e-13, atol=0.0, maxiter=10 * p * K)
        w, iters = w + d, iters + 1
        bound = _certified_gradient_norm(obj, w, Xpad)
    if not bound <= tol:
        raise ArithmeticError("the solver could not certify the gradient tolerance")
    W = (w + rng.standard_normal(p * K) * out_sigma).reshape(p, K)
    diag = None
    if nonprivate_diagnostics:
        diag = {"noise_norm": float(np.linalg.norm(B)), "gradient_bound": bound, "iterations": iters}
    return AMPResult(W=W, epsilon=eps, delta=delta, sigma=sigma, output_sigma=out_sigma, regularization=lam,
                     tolerance=tol, jacobian_epsilon=_jacobian_epsilon(Xpad, n, K, lam), data_norm=X,
                     nonprivate_diagnostics=diag)
