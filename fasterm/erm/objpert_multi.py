"""Multinomial objective perturbation: pure ε-DP K-class linear models by one perturbed convex solve.

The K-class version of :mod:`fasterm.erm.objpert`, a function only: the
estimators' δ = 0 multiclass default stays the class sums (why, and the
measurements: docs/pure.rst, "More than two classes"; the theorem:
docs/guarantees.rst, "Multinomial objective perturbation").

**Loss.**  For the (p, K) weight matrix W, a row a (‖a‖ ≤ X, clipped) and its
class y, z = Wᵀa and

    ℓ(W; a, y) = φ_y(z) = τ·log Σ_k exp((z_k − z_y + m·[k ≠ y])/τ)

(τ = ``smoothness`` > 0, m = ``margin`` ≥ 0; τ = 1, m = 0 is the multinomial
logistic loss −log softmax(z)_y; small τ approaches Crammer & Singer's
multiclass hinge).  Convex and C^∞ in W.  With q = softmax((z + m(1 − e_y))/τ):

* ∇_z φ = q − e_y, and ‖q − e_y‖² = Σ_{k≠y} q_k² + (1 − q_y)² ≤ 2(1 − q_y)² ≤ 2,
  so ‖∇_W ℓ‖_F = ‖a‖·‖q − e_y‖ ≤ L = √2·X;
* ∇²_z φ = (diag q − qqᵀ)/τ: positive semi-definite, 1 in its kernel (rank
  ≤ K − 1), largest eigenvalue ≤ 1/(2τ) (Gershgorin: row j sums in absolute
  value to q_j(1 − q_j) + q_jΣ_{k≠j}q_k = 2q_j(1 − q_j) ≤ 1/2), trace
  (1 − ‖q‖²)/τ ≤ (1 − 1/K)/τ;
* in vec(W), ∇²_W ℓ = ∇²_z φ ⊗ aaᵀ (z = (I_K ⊗ aᵀ)vec W): rank ≤ r = K − 1,
  eigenvalues λ_j(∇²_z φ)·‖a‖², so operator norm ≤ X²/(2τ) and trace
  ≤ T = X²(1 − 1/K)/τ.

**Mechanism.**  B ∈ R^{p×K} of density ∝ exp(−ε_b‖B‖_F/(2L)) (uniform
direction, ‖B‖_F ~ Gamma(pK, 2L/ε_b)); release the minimiser over R^{p×K} of

    J(W) = (1/n) Σ_i ℓ(W; a_i, y_i) + (μ/2)‖W‖_F² + ⟨B, W⟩/n.

**Theorem** (rank-r objective perturbation).  The exact minimiser W* is
(ε_b + r·log(1 + T/(r n μ)), 0)-DP under **replace-one** neighbours (n public),
r = K − 1, T = X²(1 − 1/K)/τ, i.e. the Jacobian term is
(K − 1)·log(1 + X²/(τ K n μ)).

The proof (Chaudhuri, Monteleoni & Sarwate 2011, Thm 9, with the determinant
step of Kifer, Smith & Thakurta 2012, Thm 2, extended from rank one to rank r
by the concavity of log over the ≤ r eigenvalues of M^{−1/2}EM^{−1/2}, whose
sum is ≤ T/(nμ)) is in docs/guarantees.rst, "Multinomial objective
perturbation"; the Jacobian term r·log(1 + T/(rnμ)) ≤ T/(nμ) does not grow with K.

**ℓ1 noise** (``noise="l1"``): rows also clipped to ‖a‖₁ ≤ X₁ (``l1_norm``),
‖∇_W ℓ‖₁ ≤ 2X₁, and B has independent Laplace(4X₁/ε_b) entries: the same
theorem (the density-ratio step needs only the norm's triangle inequality).

**Certified solve** (as :mod:`fasterm.erm.objpert`).  Newton–CG stops only
when ‖∇J(Ŵ)‖_F ≤ g is certified (Higham's summation bounds, double or
``numpy.longdouble``; else ``ArithmeticError``); nμ-strong convexity of the
unscaled objective gives ‖Ŵ − W*‖ ≤ ρ = g/μ, and Ŵ + E, E ∝
exp(−ε_out‖E‖/(2ρ)) in pK coordinates, is (ε_b + ε_jacobian + ε_out, 0)-DP.
g = ``GRADIENT_TOLERANCE``·(L + pK·s_b/n), ε_out = ``OUTPUT_FRACTION``·ε, both public.

**Defaults** (public: ε, n, p, K, X, τ): μ = max(l2, a·X²/(εn),
T/(r n (e^{fε/r} − 1))), a = ``REGULARIZATION``, f = ``JACOBIAN_FRACTION``
(the floor makes the Jacobian term ≤ fε); ε_b = ε − ε_jacobian − ε_out.

**Released**: Ŵ + E and public constants; ‖B‖, the residual and the
iterations run depend on the data and on B and exist only behind
``nonprivate_diagnostics=True``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import fasterm.accounting as accounting
from fasterm.accounting import objpert as _acc
import fasterm.erm.losses as _losses_mod
import fasterm.mechanisms.secure as _secure
from .objpert import _norm, _norm_noise
from .._validation import (
    check_derived,
    check_epsilon,
    check_positive,
    check_random_state,
    check_scalar,
    check_X_y,
    derived_from,
)

__all__ = ["MultiObjPertResult", "Softmax", "default_regularization", "multinomial_objective_perturbation"]

#: a in the default μ = a·X²/(εn): the binary default's (docs/pure.rst, "More than two classes", compares a = 2).
REGULARIZATION = 8.0
#: Largest fraction of ε the default μ leaves to the Jacobian term (a floor for μ).
JACOBIAN_FRACTION = 0.5
#: Fraction of ε spent on the output noise that covers the solver's tolerance.
OUTPUT_FRACTION = 0.01
#: Certified gradient norm at which the solver stops, relative to L + E‖B‖/n (raised to the rounding floor).
GRADIENT_TOLERANCE = 1e-9
#: The solver's caps: Newton–CG iterations (each at most ``MAX_CG`` Hessian products), then
#: gradient steps; past both the call raises ``ArithmeticError``.  ``MAX_STEPS`` is what the
#: result reports (a public constant, not the iterations run).
MAX_NEWTON_STEPS = 100
MAX_CG = 500
MAX_GRADIENT_STEPS = 20_000
MAX_STEPS = MAX_NEWTON_STEPS + MAX_GRADIENT_STEPS

_U = 2.0 ** -53


class Softmax:
    """φ_y(z) = τ·log Σ_k exp((z_k − z_y + m·[k ≠ y])/τ) (module docstring).

    τ = ``smoothness`` > 0, m = ``margin`` ≥ 0, ``l2`` a data-independent
    ridge weight (a floor for μ).  τ = 1, m = 0: the multinomial logistic loss.
    """

    def __init__(self, smoothness: float = 1.0, margin: float = 0.0, *, l2: float = 0.0):
        self.smoothness = check_positive(smoothness, "smoothness")
        self.margin = check_scalar(margin, "margin", low=0.0)
        self.l2 = check_scalar(l2, "l2", low=0.0)

    def __repr__(self) -> str:
        return f"Softmax(smoothness={self.smoothness!r}, margin={self.margin!r}, l2={self.l2!r})"

    def curvature_bounds(self, data_norm: float, n_classes: int) -> tuple[float, float, int]:
        """(operator-norm bound X²/(2τ), trace bound T = X²(1 − 1/K)/τ, rank r = K − 1) of ∇²_W ℓ."""
        K = int(n_classes)
        X2 = data_norm * data_norm
        return X2 / (2.0 * self.smoothness), X2 * (1.0 - 1.0 / K) / self.smoothness, K - 1

    def _probs(self, Z, Y):
        """q = softmax((Z + m(1 − Y))/τ) row by row (Y one-hot), in Z's dtype; and the values φ."""
        V = (Z + self.margin * (1 - Y) - (Z * Y).sum(axis=1, keepdims=True)) / self.smoothness
        vmax = V.max(axis=1, keepdims=True)
        E = np.exp(V - vmax)
        s = E.sum(axis=1, keepdims=True)
        return E / s, self.smoothness * (vmax[:, 0] + np.log(s[:, 0]))


def default_regularization(epsilon: float, n: int, data_norm: float, trace: float, rank: int) -> float:
    """The default μ = max(a·X²/(εn), T/(r n (e^{fε/r} − 1))) (module docstring), a public rule."""
    eps = check_epsilon(epsilon)
    rows = int(check_scalar(n, "n", low=1, integer=True))
    X = check_positive(data_norm, "data_norm")
    names = "epsilon, n, data_norm and the loss's curvature"
    with derived_from(names):
        mu = check_derived(REGULARIZATION * X * X / (eps * rows), "the regularization", names)
        if JACOBIAN_FRACTION * eps / rank <= 700.0:
            mu = max(mu, _acc.objpert_multi_regularization(eps, trace, rank, rows, JACOBIAN_FRACTION))
        return mu


@dataclass
class MultiObjPertResult:
    """What :func:`multinomial_objective_perturbation` returns: the release and public constants only.

    ``W`` (float64, (p, K)) is the release Ŵ + E — the private output; every
    other field is a function of ε, n, p, K, ``data_norm``, the loss's
    constants and the given regularization.  ``steps`` is ``MAX_STEPS``, the
    solver's cap.  ``nonprivate_diagnostics``: None unless asked for (then
    ‖B‖, ‖E‖, the certified residual and the iterations run — **not** private).
    """

    W: np.ndarray
    epsilon: float
    delta: float
    noise_epsilon: float
    jacobian_epsilon: float
    output_epsilon: float
    regularization: float
    lipschitz: float
    curvature: float
    curvature_trace: float
    rank: int
    noise_scale: float
    tolerance: float
    output_scale: float
    steps: int
    note: str = ""
    info: dict = field(default_factory=dict, repr=False)
    nonprivate_diagnostics: dict | None = field(default=None, repr=False)


class _Objective:
    """J(W) = (1/n)Σℓ + (μ/2)‖W‖² + ⟨Bn, W⟩ (Bn = B/n) on clipped float64 rows A, one-hot Y."""

    def __init__(self, loss, A, Y, norms, mu, Bn):
        self.loss, self.A, self.Y, self.norms, self.mu, self.Bn = loss, A, Y, norms, mu, Bn
        self.n = A.shape[0]

    def value(self, W):
        _, phi = self.loss._probs(self.A @ W, self.Y)
        return float(np.sum(phi)) / self.n + 0.5 * self.mu * float(np.sum(W * W)) + float(np.sum(self.Bn * W))

    def grad(self, W):
        Q, _ = self.loss._probs(self.A @ W, self.Y)
        return self.A.T @ (Q - self.Y) / self.n + self.mu * W + self.Bn, Q

    def hessp(self, Q, V):
        """∇²J(W)·V at the W whose probabilities are Q."""
        ZV = self.A @ V
        R = (Q * ZV - Q * np.sum(Q * ZV, axis=1, keepdims=True)) / self.loss.smoothness
        return self.A.T @ R / self.n + self.mu * V

    def certify(self, W, X, dtype=np.float64):
        """A rigorous upper bound on ‖∇J(W)‖_F (exact arithmetic), from an evaluation in ``dtype``.

        Higham's γ_k = k·u/(1 − k·u).  Per row, the computed u_i = q_i − e_y
        errs from the exact one by at most e_u (the margins z = Wᵀa, p terms:
        ‖Δz‖ ≤ γ_p‖a‖‖W‖, moving q by ≤ ‖Δz‖/(2τ) — the softmax's Jacobian has
        norm ≤ 1/2 —; forming the shifted margins, three roundings on
        (1 + √K)‖z‖ + m√K, over τ, halved likewise; exp, the K-term sum and
        the quotient ≤ γ_{K+6} relative per entry, ‖q‖ ≤ 1; the subtraction of
        e_y: ≤ 2u), contributing ≤ X·e_u to the gradient; the sum over rows
        and the two other terms (n + 2 terms) err by ≤ γ_{n+4}(Σ_i‖a_i‖‖u_i‖/n
        + ‖μW‖ + ‖Bn‖) in Frobenius norm (each entry's error is bounded by
        γ_{n+4} times its sum of absolute values, and ‖|a||u|ᵀ‖_F = ‖a‖‖u‖).
        The bound returned is ‖ĝ‖ + 2× the error (room for its own rounding).
        """
        ld = dtype
        u = float(np.finfo(ld).eps) / 2.0
        n, p = self.A.shape
        K = W.shape[1]
        tau, m = self.loss.smoothness, self.loss.margin
        Wl = W.astype(ld)
        gsum = np.zeros((p, K), dtype=ld)
        rows = ld(0.0)
        block = max(1, (1 << 17) // max(p * K, 1))
        for lo in range(0, n, block):
            Ab = self.A[lo:lo + block].astype(ld)
            Yb = self.Y[lo:lo + block].astype(ld)
            Q, _ = self.loss._probs(Ab @ Wl, Yb)
            U = Q - Yb
            gsum += Ab.T @ U
            rows += np.sqrt(np.sum(U * U, axis=1)) @ self.norms[lo:lo + block].astype(ld)
        g = gsum / n + ld(1) * self.mu * Wl + self.Bn.astype(ld)

        def gamma(k):
            return k * u / (1.0 - k * u)
        wn = _norm(W)
        zmax = (1.0 + gamma(p)) * X * wn
        e_u = (gamma(p) * X * wn + gamma(3) * ((1.0 + math.sqrt(K)) * zmax + m * math.sqrt(K))) / (2.0 * tau) \
            + 2.0 * gamma(K + 6) + 2.0 * u
        err = gamma(n + 4) * (float(rows) * (1.0 + 1e-12) / n + X * e_u + _norm(self.mu * W) + _norm(self.Bn)) \
            + X * e_u
        gf = np.asarray(g, dtype=np.float64)
        return _norm(gf) * (1.0 + 1e-12) + 2.0 * err


def _solve(obj, shape, tol, X, beta):
    """Newton–CG from 0 until ‖∇J(W)‖ is certified ≤ ``tol``; gradient steps as a fallback.

    Returns (W, certified bound, iterations).  Each Newton step solves
    ∇²J·P = −∇J by conjugate gradients (exact Hessian products, every row) to
    a relative residual min(1/2, √‖∇J‖), then backtracks on J (Armijo);
    J is μ-strongly convex and β-smooth, so this converges globally; the
    fallback, gradient descent with step 1/β (β = X²/(2τ) + μ), reaches
    ``tol`` in exact arithmetic.  An uncertifiable point raises ``ArithmeticError``.
    """
    W = np.zeros(shape)

    def certified(W, g):
        if _norm(g) > 0.5 * tol:
            return None
        bound = obj.certify(W, X)
        if bound > tol:
            bound = obj.certify(W, X, np.longdouble)
        return bound if bound <= tol else None

    f = obj.value(W)
    for it in range(1, MAX_NEWTON_STEPS + 1):
        g, Q = obj.grad(W)
        bound = certified(W, g)
        if bound is not None:
            return W, bound, it - 1
        gn = _norm(g)
        # conjugate gradients on ∇²J·P = −g
        P = np.zeros(shape)
        r = -g
        d = r.copy()
        rr = float(np.sum(r * r))
        stop = min(0.5, math.sqrt(gn)) * gn
        for _ in range(MAX_CG):
            Hd = obj.hessp(Q, d)
            alpha = rr / float(np.sum(d * Hd))
            P += alpha * d
            r -= alpha * Hd
            rr_new = float(np.sum(r * r))
            if math.sqrt(rr_new) <= stop:
                break
            d = r + (rr_new / rr) * d
            rr = rr_new
        slope = float(np.sum(g * P))
        if not slope < 0.0:
            P, slope = -g, -gn * gn
        t = 1.0
        while True:
            Wn = W + t * P
            fn = obj.value(Wn)
            if fn <= f + 1e-4 * t * slope or t < 1e-12:
                break
            t *= 0.5
        if t < 1e-12:
            break  # rounding stalls the line search: the gradient fallback
        W, f = Wn, fn
    for k in range(MAX_GRADIENT_STEPS):
        g, _ = obj.grad(W)
        bound = certified(W, g)
        if bound is not None:
            return W, bound, MAX_NEWTON_STEPS + k
        W = W - g / beta
    raise ArithmeticError("multinomial objective perturbation: the minimiser could not be certified to the "
                          "tolerance within the iteration caps; no release was made")


def multinomial_objective_perturbation(loss: Softmax, X, y, n_classes: int, epsilon: float, *,
                                       data_norm: float, regularization: float | None = None,
                                       noise: str = "l2", l1_norm: float | None = None,
                                       random_state=None, secure=None,
                                       nonprivate_diagnostics: bool = False) -> MultiObjPertResult:
    """Pure ε-DP K-class ERM by multinomial objective perturbation with a certified solve (module docstring).

    Parameters
    ----------
    loss : :class:`Softmax`; its ``l2`` is a floor for μ.
    X : (n, p) float32/float64 design rows (an intercept column, if any, is
        the caller's); rows with ‖x‖ > ``data_norm`` are scaled to it.
    y : (n,) class indices in [0, ``n_classes``).
    n_classes : K ≥ 2 (public).
    epsilon : ε > 0, the whole budget (δ = 0).
    data_norm : the public bound X on ‖x_i‖₂.
    regularization : μ > 0 to use instead of the default rule (then max(μ, l2)).
    noise : "l2" (density ∝ exp(−ε_b‖B‖_F/(2L))) or "l1" (independent Laplace
        entries of scale 4X₁/ε_b; needs ``l1_norm``).
    l1_norm : the public bound X₁ on ‖x_i‖₁ for ``noise="l1"``: rows with a
        larger L1 norm are scaled to it (after the L2 clip).
    random_state : None, int or Generator (one stream: B, then E).
    secure : must be falsy (no exact-grid version: ``ValueError``).
    nonprivate_diagnostics : True attaches values that are **not** private.

    Returns
    -------
    MultiObjPertResult; ``W`` (p, K) is the private output.  Privacy:
    (``epsilon``, 0)-DP under replace-one neighbours by the theorem of the
    module docstring and the certified solve.
    """
    if _secure.resolve(secure):
        raise ValueError("secure=True (or fasterm.secure_mode) is not available for objective perturbation")
    if not isinstance(loss, Softmax):
        raise TypeError(f"loss must be fasterm.erm.objpert_multi.Softmax, got {type(loss).__name__}")
    eps = check_epsilon(epsilon)
    data_norm = check_positive(data_norm, "data_norm")
    K = int(check_scalar(n_classes, "n_classes", low=2, integer=True))
    if regularization is not None:
        regularization = check_positive(regularization, "regularization")
    if not isinstance(nonprivate_diagnostics, (bool, np.bool_)):
        raise TypeError("nonprivate_diagnostics must be True or False, got "
                        f"{type(nonprivate_diagnostics).__name__}")
    if noise not in ("l2", "l1"):
        raise ValueError(f"noise must be 'l2' or 'l1', got {noise!r}")
    if noise == "l1":
        if l1_norm is None:
            raise ValueError("noise='l1' needs l1_norm, the public bound on the rows' L1 norm")
        l1_norm = check_positive(l1_norm, "l1_norm")
    rng = check_random_state(random_state)
    X, y = check_X_y(X, y)
    yi = np.asarray(y)
    if yi.dtype.kind not in "iu" and not np.all(yi == np.round(yi)):
        raise ValueError("y must hold class indices in [0, n_classes)")
    yi = yi.astype(np.int64)
    if yi.size and (yi.min() < 0 or yi.max() >= K):
        raise ValueError(f"y must hold class indices in [0, n_classes={K})")
    n, p = X.shape
    A = np.array(X, dtype=np.float64, order="C")
    norms = _losses_mod.row_norms(A)
    over = norms > data_norm
    if np.any(over):
        rows = A[over]
        s = rows / np.max(np.abs(rows), axis=1)[:, None]
        A[over] = s * (data_norm / np.linalg.norm(s, axis=1))[:, None]
        norms[over] = np.linalg.norm(A[over], axis=1)
    if noise == "l1":
        l1 = np.sum(np.abs(A), axis=1)
        over = l1 > l1_norm
        if np.any(over):
            A[over] *= (l1_norm / l1[over])[:, None]
            norms[over] = np.linalg.norm(A[over], axis=1)
        # a clipped row's L1 norm is within (p + 2) roundings of l1_norm: the constants use X₁ padded
        X1pad = l1_norm * (1.0 + 4.0 * (p + 8) * _U)
    Xpad = data_norm * (1.0 + 4.0 * (p + 8) * _U)
    Y = np.zeros((n, K))
    Y[np.arange(n), yi] = 1.0
    dim = p * K

    names = "epsilon, data_norm, n, the number of columns and classes, and the loss's constants"
    with derived_from(names):
        L = check_derived(math.sqrt(2.0) * Xpad * (1.0 + 4.0 * _U), "the Lipschitz constant", names)
        c, T, r = loss.curvature_bounds(Xpad, K)
        check_derived(T, "the curvature bound", names)
        eps_out = OUTPUT_FRACTION * eps
        if regularization is None:
            mu = max(loss.l2, default_regularization(eps, n, Xpad, T, r))
        else:
            mu = max(loss.l2, regularization)
    try:
        eps_b = _acc.calibrate_objpert_multi(eps, T, r, n, mu, eps_out)
    except ValueError as exc:
        raise ValueError(f"regularization μ = {mu!r} is too small for epsilon = {eps!r}: the Jacobian "
                         f"term (K − 1)·log(1 + T/((K − 1)·n·μ)) leaves no budget for the noise "
                         "(raise regularization, or leave it None)") from exc
    with derived_from(names):
        eps_jac = _acc.objpert_multi_log_det(T, r, n, mu)
        if noise == "l2":
            b_scale = accounting.norm_laplace_scale(2.0 * L, eps_b)
            b_mean = dim * b_scale  # E‖B‖
        else:
            b_scale = accounting.norm_laplace_scale(4.0 * X1pad, eps_b)  # the L1 sensitivity 4X₁
            b_mean = math.sqrt(2.0 * dim) * b_scale  # ≥ E‖B‖_F
        tol = (L + b_mean / n) * max(GRADIENT_TOLERANCE, 64.0 * (n + dim) * _U)
        out_scale = accounting.norm_laplace_scale(2.0 * tol / mu, eps_out)
        check_derived(1.0 + b_mean / n + out_scale * dim, "the noise", names)
        spent = _acc.objpert_multi_epsilon(eps_b, T, r, n, mu, eps_out)
    if noise == "l2":
        b, b_norm = _norm_noise(rng, dim, b_scale)
    else:
        b = rng.laplace(0.0, b_scale, dim)
        b_norm = float(np.sum(np.abs(b)))
    obj = _Objective(loss, A, Y, norms, mu, b.reshape(p, K) / n)
    W, gbound, steps = _solve(obj, (p, K), tol, Xpad, c + mu)
    e, e_norm = _norm_noise(rng, dim, out_scale)
    diagnostics = None
    if nonprivate_diagnostics:
        diagnostics = {"noise_norm": b_norm, "output_noise_norm": e_norm, "gradient_bound": gbound,
                       "steps": steps}
    return MultiObjPertResult(
        W=W + e.reshape(p, K), epsilon=spent, delta=0.0, noise_epsilon=eps_b, jacobian_epsilon=eps_jac,
        output_epsilon=eps_out, regularization=mu, lipschitz=L, curvature=c, curvature_trace=T, rank=r,
        noise_scale=b_scale, tolerance=tol, output_scale=out_scale, steps=MAX_STEPS,
        note=("multinomial objective perturbation with a certified solve: (epsilon, 0)-DP under "
              "replace-one neighbours (Chaudhuri-Monteleoni-Sarwate 2011 Thm 9 with a rank-(K-1) "
              "determinant bound; fasterm.erm.objpert_multi)"
              + ("; nonprivate_diagnostics holds values NOT covered by this guarantee"
                 if nonprivate_diagnostics else "")),
        info={"n": n, "p": p, "n_classes": K, "loss": repr(loss), "noise": noise,
              "l1_norm": l1_norm if noise == "l1" else None},
        nonprivate_diagnostics=diagnostics,
    )
