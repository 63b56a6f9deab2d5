"""Multiclass linear models on one privacy budget: the multinomial logistic and Crammer–Singer losses.

:mod:`fasterm.linear_model` calls :func:`fit_multiclass` for K > 2 classes
(two classes keep the binary path of :mod:`fasterm.linear_model._rules`, bit for bit).
The model is one weight matrix W of shape (d + 1) × K — column k scores class
k, row d + 1 multiplies the intercept column — and every step releases *one*
noisy gradient of the whole matrix, so the whole (ε, δ) serves all K classes
(one-vs-rest would split it K ways).

Losses (z = Wᵀa the K scores of the augmented row a, y the class index)
    logistic  ℓ(W) = −log softmax(z)_y, ∇ℓ = a (p − e_y)ᵀ with p = softmax(z);
    hinge     ℓ(W) = max_j (z_j + [j ≠ y]) − z_y (Crammer & Singer 2001),
              a subgradient a (e_j − e_y)ᵀ for the maximising j (zero when j = y).

Lipschitz constant (the per-example sensitivity).  ‖a uᵀ‖_F = ‖a‖·‖u‖, and
‖p − e_y‖² = (1 − p_y)² + Σ_{k≠y} p_k² ≤ (1 − p_y)² + (Σ_{k≠y} p_k)² =
2(1 − p_y)² ≤ 2, ‖e_j − e_y‖ = √2: both gradients have Frobenius norm
≤ G = √2·X_aug (X_aug the augmented row bound, :func:`fasterm.linear_model._rules.augmented_norm`).
Per-example gradients are clipped at c ≤ G (the whole matrix, in Frobenius
norm: g ↦ g·min(1, c/‖g‖_F)), so replacing one row changes the averaged
gradient by at most Δ₂ = 2c/n in Frobenius norm — the binary path's
sensitivity, for a vector of (d + 1)·K coordinates.

Privacy.  The noise of the T releases is calibrated exactly as for the binary
models, with dimension (d + 1)·K: Gaussian noise by μ-GDP (Dong, Roth & Su
2022, Thm. 2.7 and Cor. 3.3; :func:`fasterm.accounting.calibrate_steps`),
Laplace noise by its calibrations (:func:`fasterm.noisy_pgd`'s table), secure
mode by :mod:`fasterm.mechanisms.secure`.  The step, the data-independent ridge α·W, the
projection onto the Frobenius ball of radius ``radius`` and the momentum are
post-processing.  The clipped multinomial gradient field is not the gradient
of a known convex surrogate (unlike the binary case, where clipping Huberizes
the loss): clipping changes *what* is optimised, never the privacy.

Smoothness.  The Hessian of the multinomial loss is (diag p − ppᵀ) ⊗ aaᵀ and
diag p − ppᵀ ⪯ ½(I − 11ᵀ/K) (Böhning 1992, "Multinomial logistic regression
algorithm", Ann. Inst. Statist. Math. 44, Lemma: the bound of the
information matrix), so the loss is β = X_aug²/2-smooth everywhere; at the
start W = 0 (p uniform) the Hessian is (1/K)(I − 11ᵀ/K) ⊗ aaᵀ, of norm
β₀ = X_aug²/K.  The binary rule's step 4/β uses the curvature at the start
(for the binary logistic loss β = X²/4 is both), so the multiclass step is
at most η = 4/(β₀ + α) (``LR_MULTIPLE``; a public multiple, beyond the step
Theorem A of :mod:`fasterm.erm.solvers` covers, so no utility bound is claimed),
smaller when the noise dominates (:func:`step_multiple`).

Defaults (public quantities only: n, d, K, ε, δ, the declared bounds)
    solver "auto": noisy gradient descent ("gd") for the logistic loss, noisy
    projected gradient descent ("pgd", averaged iterates, T and η from
    Theorem 2 of :mod:`fasterm.erm.optimize` with G = c + α·R) for the hinge
    loss (not smooth) and in secure mode; clip "auto": the binary rule
    (:func:`fasterm.linear_model._rules.auto_clip`); "gd": T = ``max_steps`` or 80
    (``GD_STEPS``; Gaussian noise — Laplace noise keeps the binary T rule
    with budget 80) and the step η = min(4, H/T)/β₀ with the horizon
    H = η·β₀·T = min(160, 15/ν), ν = √(E‖h_t‖²/T)/c the noise of the run on
    the clip's scale (:func:`step_multiple`; Theorem A's bound
    R²/(2ηT) + η·T·D·Δ₂²/μ² is smallest at a horizon ∝ μ/(√D·Δ₂) ∝ 1/ν);
    Nesterov momentum by the binary rule (``accelerate="auto"``), the last
    iterate.
    These rules were chosen on synthetic multiclass data and the wine and
    iris data sets, then measured on scikit-learn's digits (docs/multiclass.rst).
"""

from __future__ import annotations

import math

import numpy as np

from ..erm import _backends, _engine, _float_margin
from ..erm._design import clip_rows, design
from ._rules import (GD_MAX_STEPS, LR_MULTIPLE, PGD_MAX_STEPS, augmented_norm, auto_clip,
                      resolve_intercept_scaling, resolve_noise, resolve_solver)
from ..erm.constraints import L2Ball
from ..erm.losses import row_norms
from ..erm.optimize import OptimizeResult, _bound_for, _default_steps, _sample_weights
from ..mechanisms.secure import resolve as resolve_secure
from ..erm.solvers import ACCELERATE_BELOW, _fista, _laplace_steps
from .._validation import check_array, check_csr, check_derived, derived_from, is_sparse

__all__ = ["fit_multiclass", "grad_sum", "lipschitz", "step_multiple"]

KINDS = ("logistic", "hinge")
#: The "gd" solver's compute budget T for K > 2 (the binary models' is GD_MAX_STEPS = 40): at the
#: same horizon η·β₀·T, 80 smaller steps measured better than 40 (docs/multiclass.rst).
GD_STEPS = 80
#: The largest horizon η·β₀·T: the previous rule's 4/β₀ × 40 steps.
HORIZON_MAX = LR_MULTIPLE * GD_MAX_STEPS
#: The horizon at high noise, HORIZON_NOISE/ν (:func:`step_multiple`; docs/multiclass.rst).
HORIZON_NOISE = 15.0
_SCALES = "epsilon, delta, data_norm, clip, steps and radius"


def lipschitz(data_norm) -> float:
    """G = √2·X: the Frobenius bound of a per-example gradient for rows of norm ≤ X (module docstring)."""
    return math.sqrt(2.0) * data_norm


def step_multiple(noise_sq, steps, clip) -> float:
    """η·β₀ of the "gd" solver: min(LR_MULTIPLE, min(HORIZON_MAX, HORIZON_NOISE/ν)/T) (module docstring).

    ν = √(E‖h_t‖²/T)/c, the noise of the T releases on the scale of the clip
    (for Gaussian noise 2√D/(nμ), independent of T): public, as the
    calibration is.  The horizon η·β₀·T shrinks as 1/ν once the noise
    dominates (the bias–variance trade-off of Theorem A, whose optimal horizon
    is ∝ 1/ν; the constants were chosen on data other than digits,
    docs/multiclass.rst); the step never exceeds LR_MULTIPLE/β₀.
    """
    nu = math.sqrt(noise_sq / steps) / clip
    horizon = HORIZON_MAX if nu == 0.0 else min(HORIZON_MAX, HORIZON_NOISE / nu)
    return min(LR_MULTIPLE, horizon / steps)


def _scores_gradient(kind, Z, y):
    """The K-vector u_i of each row's gradient a_i u_iᵀ (overwrites the scores Z)."""
    rows = np.arange(Z.shape[0])
    if kind == "logistic":
        Z -= Z.max(axis=1, keepdims=True)  # exp of non-positive numbers: no overflow
        np.exp(Z, out=Z)
        Z /= Z.sum(axis=1, keepdims=True)
        Z[rows, y] -= 1.0
        return Z
    zy = Z[rows, y].copy()
    Z += 1.0
    Z[rows, y] = zy
    j = Z.argmax(axis=1)
    active = j != y
    U = np.zeros_like(Z)
    U[rows[active], j[active]] = 1.0
    U[rows[active], y[active]] = -1.0
    return U


def inner_clip(clip, p, K, dtype):
    """c' = c·(1 − (p + K + 10)·2⁻⁵³ − 3u), u the unit roundoff of ``dtype``: the clip
    :func:`grad_sum` applies so that each per-example gradient as formed has exact
    Frobenius norm ≤ c (times its weight).

    Proof (docs/guarantees.rst, "Floating point", as for the binary kernels' inner
    bound): the computed ĝ = ‖a‖·‖u‖ (‖a‖ from ``row_norms`` or a float64 einsum over
    p values, ‖u‖ a float64 einsum over K, a product) is ≥ ‖a‖‖u‖(1 − (p + K + 6)·2⁻⁵³);
    the factor f = fl(c'/ĝ) rounds once, f·w once, f's cast to the dtype and the product
    u_k·f in it once each, and c' itself once; f' (1 + 2⁻⁵³)³ (1 + u)² ≤ 1 − (p + K + 6)·2⁻⁵³
    for f' = c'/c.  An unclipped row (ĝ ≤ c') keeps f = 1 and its u exactly.
    """
    u = 2.0 ** -24 if np.dtype(dtype) == np.float32 else 2.0 ** -53
    return clip * ((1.0 - float(p + K + 10) * 2.0 ** -53) - 3.0 * u)


def grad_sum(kind, A, y, W, norms, clip, out, weights=None):
    """out ← Σ_i w_i·clip_c(∇ℓ_i(W)) for the (p, K) matrix W (``out`` of the same shape).

    ``A``: the (n, p) design rows (already clipped to the row bound; a numpy
    array or a scipy.sparse CSR matrix), ``y`` the class indices, ``norms``
    the row norms ‖a_i‖, ``clip`` c > 0: each per-example gradient a_i u_iᵀ
    is scaled by min(1, c'/(‖a_i‖·‖u_i‖)) (c' = :func:`inner_clip`, a hair below
    c), then by its sample weight w_i (``weights``, checked and in [0, B]; None: 1).
    """
    U = _scores_gradient(kind, np.asarray(A @ W), y)
    g_norm = norms * np.sqrt(np.einsum("ij,ij->i", U, U, dtype=np.float64))
    # c / max(‖g‖, c) = min(1, c/‖g‖), and 1 for a zero gradient; at the inner bound c' < c,
    # so that the gradient as formed, a_i ⊗ (u_i scaled in U's dtype), has exact norm ≤ c
    clip = inner_clip(clip, A.shape[1], U.shape[1], U.dtype)
    f = clip / np.maximum(g_norm, clip)
    if weights is not None:
        f = f * weights  # in float64: weights of 1 leave f's bits
    U *= f.astype(U.dtype)[:, None]
    if U.dtype == np.float32:
        # float32: summed in float64 (sum_theta's order-free bound γ_n in float32 is vacuous):
        # blocks of rows, U′ and the block of A widened to float64 (exact; their products are
        # exact in double), the block products added in order, the total rounded to float32.
        total = np.zeros((U.shape[1], A.shape[1]), dtype=np.float64)
        for b in range(0, U.shape[0], _F64_BLOCK):
            Ab = A[b:b + _F64_BLOCK]
            total += U[b:b + _F64_BLOCK].astype(np.float64).T @ Ab.astype(np.float64)
        out[...] = total.T
        return out
    # Uᵀ·A in (K, p) runs as one row-major product over A (faster than Aᵀ·U here); out is (p, K)
    out[...] = (U.T @ A).T
    return out


_F64_BLOCK = 4096  # rows of A widened to float64 at a time (float32 multiclass sums)


def sum_theta(n, dtype):
    """θ of :func:`grad_sum`'s sum of n rows: |Ŝ − S| ≤ θ Σ_i |g_i| entrywise, whatever order
    the BLAS (or scipy) adds in — each term meets at most n roundings (a product and
    n − 1 additions; no Strassen-like algorithm): γ_n(u_T) for float64; for float32, summed
    in float64 with exact products, γ_n(2⁻⁵³) plus u_T(1 + ·) for the rounding to float32."""
    g = _float_margin.gamma(max(int(n), 1), _float_margin.U)
    if np.dtype(dtype) == np.float32:
        return g + _float_margin.U32 * (1 + g)
    return g


def _check_supported(method, solver, noise, chunked):
    if chunked:
        raise ValueError("more than two classes need X in memory (numpy): dask arrays are fitted for "
                         "binary labels only")
    if method != "gradient":
        raise ValueError(f"solver={method!r} is binary only; more than two classes are fitted with "
                         "solver 'noisy_gd', 'noisy_pgd' or 'auto' (for delta=0 with noise='laplace', "
                         "calibration 'pure' or 'l2')")
    if solver == "sgd":
        raise ValueError("solver='noisy_sgd' is binary only; more than two classes are fitted with solver "
                         "'noisy_gd', 'noisy_pgd' or 'auto'")


def fit_multiclass(kind, X, y, n_classes, *, epsilon, delta, data_norm, radius, alpha, fit_intercept,
                   intercept_scaling, solver, noise, calibration, clip, steps, max_steps, random_state,
                   secure=None, chunked=False, sample_weight=None, weight_bound=1.0):
    """Fit one private K-class linear model; returns ``(coef, intercept, result)``.

    ``y`` holds class indices in [0, K); ``coef`` has shape (K, d) and X's
    dtype, ``intercept`` shape (K,); ``result`` is the
    :class:`fasterm.OptimizeResult` with the (ε, δ) spent and ``w`` the
    flattened (d + 1) × K (or d × K) weight matrix.  Parameters are those of
    the estimators (validated there); module docstring for the rules.
    A scipy.sparse X stays sparse (its CSR design, :func:`fasterm.erm._design.design`);
    ``sample_weight`` (mapped into [0, ``weight_bound``] B) multiplies each
    clipped per-example gradient, so Δ₂ = 2B·c/n (as in :func:`fasterm.noisy_pgd`).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    public_solver = solver
    method, solver = resolve_solver(solver, delta, noise, secure, chunked)
    _check_supported(method, solver, noise, chunked)
    noise, calibration = resolve_noise(method, delta, noise, calibration, public_solver)
    sec = resolve_secure(secure)
    if solver == "auto":
        solver = "pgd" if kind == "hinge" or sec else "gd"
    if solver == "gd" and (kind == "hinge" or sec):
        raise ValueError("solver='noisy_gd' needs a smooth loss (logistic) and secure=False; use "
                         "solver='noisy_pgd' (or 'auto')")
    s = resolve_intercept_scaling(kind, method, intercept_scaling)
    K = int(n_classes)
    if is_sparse(X):
        X = check_csr(X, "X")
    n, d = X.shape
    weights, wb = _sample_weights(sample_weight, weight_bound, n)
    p = d + bool(fit_intercept)
    dim = p * K
    dn = augmented_norm(data_norm, fit_intercept, s)
    G = lipschitz(dn)
    c_clip = min(auto_clip(kind, dn) if clip == "auto" else (G if clip is None else clip), G)
    c = wb * c_clip  # a weighted record's clipped gradient has norm ≤ B·c
    sens = 2.0 * c / n
    ball = L2Ball(radius, dim)
    backend = _backends.for_fit(secure, noise, calibration, random_state)
    with derived_from(_SCALES):
        if solver == "gd":
            beta0 = wb * dn * dn / K + alpha
            lr = check_derived(LR_MULTIPLE / beta0, "the step size", "data_norm")
            budget = max_steps or GD_STEPS
            if steps is None:
                if noise == "gaussian":
                    # Gaussian noise of T releases adds η²·T·σ² ∝ η²T² = (horizon/β₀)² at a fixed
                    # horizon ηT, whatever T: more steps only refine the path (step_multiple)
                    steps = int(budget)
                else:
                    steps = _laplace_steps(1.0 / lr, lr, float(radius), sens, dim, epsilon, delta,
                                           calibration, budget)
            cal = backend.calibrate(sens, dim, steps, epsilon, delta)
            lr = check_derived(step_multiple(cal.noise_sq(dim), steps, c) / beta0, "the step size",
                               "data_norm")
            momentum = _fista(steps) if math.sqrt(cal.noise_sq(dim)) <= ACCELERATE_BELOW * c else None
            average = False
        else:
            R = float(ball.diameter)
            G_bound = c + alpha * radius
            if steps is None:
                steps = _default_steps(noise, calibration, sens, dim, epsilon, delta, R, G_bound,
                                       max_steps or PGD_MAX_STEPS)
            cal = backend.calibrate(sens, dim, steps, epsilon, delta)
            lr = _bound_for(R, G_bound + cal.bias_norm(dim), cal.noise_sq(dim), steps)[1]
            momentum = None
            average = True
        check_derived(1.0 + lr * (wb * G + alpha * radius + 64.0 * cal.noise_scale * math.sqrt(dim)),
                      "the largest step", "lr, " + _SCALES)

    work = np.dtype(backend.work_dtype(X.dtype))
    # design() leaves X unclipped without the column (the binary kernels clip on the fly)
    A = design(X, data_norm, True, s) if fit_intercept else clip_rows(X, data_norm)
    if is_sparse(A):
        A = A.astype(work) if A.dtype != work else A
        norms = row_norms(A)
    else:
        A = np.asarray(A, dtype=work)
        norms = np.sqrt(np.einsum("ij,ij->i", A, A, dtype=np.float64))
    yi = np.asarray(y, dtype=np.intp)

    # The floating-point margin of a release (docs/guarantees.rst, "Floating point"): clip at
    # c/(1 + Θ), Θ from the order-free bound of the sum (public: n, the dtype, α, the radius).
    theta = _float_margin.margin("dense", work, n, dim, scale=1.0 / n, bound=wb * c_clip, reg=float(alpha),
                                 radius=float(radius), momentum=momentum is not None, theta=sum_theta(n, work))
    c_eff = _float_margin.effective_clip(c_clip, theta)

    def step_grad(w, out):
        grad_sum(kind, A, yi, w.reshape(p, K), norms, c_eff, out.reshape(p, K), weights)

    w0 = np.zeros(dim, dtype=work)
    w = _engine.descend(step_grad, w0, ball, steps, lr, scale=1.0 / n, noise=backend, reg=float(alpha),
                        average=average, momentum=momentum, out_dtype=X.dtype)
    if not np.isfinite(w).all() and not is_sparse(X):  # a NaN or inf in X reaches every step's sum
        check_array(X, "X", ndim=2)
    Wm = w.reshape(p, K)
    coef = Wm[:d].T.astype(X.dtype, copy=True)
    intercept = (Wm[d] * s).astype(X.dtype) if fit_intercept else np.zeros(K, dtype=X.dtype)
    result = OptimizeResult(
        w=w, epsilon=cal.epsilon, delta=cal.delta, steps=steps, lr=lr, noise=noise,
        calibration=None if noise == "gaussian" else calibration, noise_scale=cal.noise_scale,
        lipschitz=c, sensitivity=sens, noise_norm_sq=cal.noise_sq(dim), utility_bound=None,
        info={"n": n, "d": d, "n_classes": K, "solver": solver, "accelerate": momentum is not None,
              "lipschitz_loss": G, "secure": backend.secure_calibration,
              "weight_bound": None if weights is None else wb})
    return coef, intercept, result
