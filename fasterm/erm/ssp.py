"""Private least squares by sufficient-statistics perturbation: AdaSSP.

:func:`adassp` is Algorithm 2 ("AdaSSP") of Y.-X. Wang, *Revisiting
differentially private linear regression: optimal and adaptive prediction &
estimation in unbounded domain*, UAI 2018 (arXiv:1803.02596): release
G = Σ wᵢ aᵢaᵢᵀ, b = Σ wᵢ yᵢ aᵢ and a lower bound of λ_min(G) with noise, and
return the ridge solution θ = (Ĝ + λI)⁻¹ b̂ with λ chosen from that bound only.
The sensitivity proofs: docs/guarantees.rst ("Sufficient statistics
perturbation"); when it is the default: docs/solvers.rst ("Regression").

Algorithm (rows aᵢ ∈ R^p clipped to ‖a‖₂ ≤ X, labels clipped to |y| ≤ Y,
weights mapped into [0, B]; B = 1 without weights):

1. λ̃ = max(0, λ_min(G) + s₁·z₁ − t), the released lower bound of λ_min(G);
2. λ = max(0, s₂·√(p·log(2p²/ρ)) − λ̃), ρ = :data:`ADASSP_RHO` = 0.05
   (the failure probability of Wang's Theorem 3, the value of his experiments);
3. Ĝ = G + s₂·Z, Z symmetric with independent upper triangle (diagonal
   included), b̂ = b + s₃·z₃;
4. θ = (Ĝ + λI)⁻¹ b̂ (a least-squares solve if that matrix is singular).

Steps 2 and 4 are post-processing.  Sensitivities (replace-one): λ_min(G)
B·X² (Weyl); the upper triangle of G L2 √2·B·X², L1 B·(p + 1)·X²; b L2
2·B·X·Y, L1 2·B·√p·X·Y.

δ > 0: each release divided by its L2 sensitivity gets N(0, σ²),
σ = :func:`fasterm.accounting.calibrate_gaussian` (1, 3, ε, δ): three
μ/√3-GDP mechanisms, μ-GDP together (Dong, Roth & Su 2022, Cor. 3.3),
μ = :func:`fasterm.accounting.gaussian_mu` (ε, δ) (ibid. Cor. 2.13); so
s₁ = σX²B, s₂ = σ√2X²B, s₃ = 2σXYB and t = s₁·√log(6/δ) (Wang's).  δ = 0:
Laplace noise of scale (L1 sensitivity)/(ε/3) per release, basic composition;
t = s₁·log(1/ρ) and s₂ = √2·b₂ in step 2 (public constants of this variant).

Floating point: the sensitivities above are those of exact statistics; the
computed ones hold too (docs/guarantees.rst, "Floating point").  The rows are
clipped at X_c = X/√(1 + Θ) < X (:func:`fasterm.erm._float_margin.ssp_plan`,
a function of n, p, X, Y and B only); G and b are summed in blocks of
``SSP_BLOCK`` rows, whose rounding is bounded in any summation order (Higham
2002, Lemma 3.1); λ_min is the eigensolver's value certified by two Cholesky
tests (or, failing them, a bisection by the same tests) to lie within a public
E of λ_min of the computed G (:func:`_lambda_min`; Higham 2002, Thms 10.3 and
10.7), and Weyl's inequality carries the rest.  So the computed releases of
neighbours differ by at most the declared sensitivities, which stay those of
X.  Θ ≈ 2n·γ_{r+K+1} + 5p(p + 2)n·u (u = 2⁻⁵³): 3·10⁻¹² at n = 60, p = 4;
2·10⁻⁵ at n = 10⁶, p = 100.

Stored: θ and public constants (noise scales, sensitivities, ε, δ); never the
noisy G, b, λ̃ or λ.  Statistics in float64; no secure mode.
"""

from __future__ import annotations

import math

import numpy as np

import fasterm.accounting as accounting
import fasterm._warnings as _warnings
import fasterm.erm._float_margin as _float_margin
from .._validation import check_epsilon, check_delta, check_positive, check_random_state, check_sample_weight
from .._validation import check_scalar, is_sparse, check_csr, check_array
from .optimize import OptimizeResult

__all__ = ["ADASSP_RHO", "adassp", "adassp_scales"]

#: Wang's failure probability ρ in the ridge rule λ = max(0, s₂√(p·log(2p²/ρ)) − λ̃):
#: 0.05, the value of the paper's experiments (a public constant).
ADASSP_RHO = 0.05


def adassp_scales(epsilon, delta, dim, data_norm, label_bound, weight_bound=1.0, rho=ADASSP_RHO):
    """The public constants of :func:`adassp`: a dict of the three noise scales and the shift.

    Keys: ``noise`` ("gaussian" or "laplace"), ``unit_scale`` (the noise of a
    release divided by its sensitivity), ``s1`` (noise scale on λ_min(G):
    σ for Gaussian, the Laplace b), ``s2`` (per entry of G's upper triangle),
    ``s3`` (per entry of b), ``shift`` (t of step 1), ``ridge_scale`` (the
    s₂·√(p·log(2p²/ρ)) of step 2, s₂ replaced by √2·b₂ for Laplace),
    ``epsilon`` and ``delta`` (spent), ``sensitivities`` (the three, L2 for
    Gaussian, L1 for Laplace).  Functions of (ε, δ, p, X, Y, B, ρ) only (module
    docstring).
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    p = check_scalar(dim, "dim", low=1, integer=True)
    X = check_positive(data_norm, "data_norm")
    Y = check_positive(label_bound, "label_bound")
    B = check_positive(weight_bound, "weight_bound")
    rho = check_scalar(rho, "rho", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    if delta > 0.0:
        sens = (B * X * X, math.sqrt(2.0) * B * X * X, 2.0 * B * X * Y)
        sigma = accounting.calibrate_gaussian(1.0, 3, eps, delta)
        s1, s2, s3 = (sigma * s for s in sens)
        shift = s1 * math.sqrt(math.log(6.0 / delta))
        entry_sd = s2
        mu = math.sqrt(3.0) / sigma
        spent = (accounting.gaussian_epsilon(mu, delta), delta) if eps < accounting.GAUSSIAN_EPSILON_CAP \
            else (eps, delta)
        spent = (min(spent[0], eps), delta)
        noise = "gaussian"
        unit = sigma
    else:
        sens = (B * X * X, B * (p + 1) * X * X, 2.0 * B * math.sqrt(p) * X * Y)
        share = eps / 3.0
        if not (share > 0.0 and all(0.0 < v < math.inf for v in sens)):
            raise ValueError("the sensitivities of AdaSSP are not positive finite numbers for these epsilon, "
                             "dim, data_norm, label_bound and weight_bound")
        scales = [s / share for s in sens]
        if not all(0.0 < v < math.inf for v in scales):
            raise ValueError("the Laplace scales of AdaSSP are not positive finite numbers for these epsilon, "
                             "data_norm, label_bound and weight_bound")
        # basic composition, rounded: Σ Δᵢ/bᵢ ≤ ε in floating point
        while math.fsum(s / b for s, b in zip(sens, scales)) > eps:
            scales = [math.nextafter(b, math.inf) for b in scales]  # pragma: no cover
        s1, s2, s3 = scales
        shift = s1 * math.log(1.0 / rho)
        entry_sd = math.sqrt(2.0) * s2
        spent = (min(eps, math.fsum(s / b for s, b in zip(sens, scales))), 0.0)
        noise = "laplace"
        unit = scales[0] / sens[0]
    for name, v in (("s1", s1), ("s2", s2), ("s3", s3)):
        if not (math.isfinite(v) and v > 0.0):
            raise ValueError(f"the noise scale {name} of AdaSSP is not a positive finite number for these "
                             "epsilon, delta, data_norm, label_bound and weight_bound")
    ridge_scale = entry_sd * math.sqrt(p * math.log(2.0 * p * p / rho))
    if not (math.isfinite(ridge_scale) and math.isfinite(shift)):
        raise ValueError("the ridge rule of AdaSSP is not finite for this rho (and epsilon, delta, dim, "
                         "data_norm, weight_bound): use rho in (0, 1) not near 0")
    return dict(noise=noise, unit_scale=unit, s1=s1, s2=s2, s3=s3, shift=shift, ridge_scale=ridge_scale,
                epsilon=spent[0], delta=spent[1], sensitivities=sens, rho=rho)


def _clip_rows_dense(A, X):
    """Rows scaled onto the ball of radius X.  A row whose sum of squares overflows is first scaled
    by a power of two (exact) and clipped along its direction like any other row, not zeroed: the
    scaled row's norm and the product by X/norm carry the same roundings as every other row's."""
    with np.errstate(over="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", A, A))
    scale = np.minimum(1.0, X / np.maximum(norms, np.finfo(np.float64).tiny))
    out = A * scale[:, None]
    big = np.flatnonzero(np.isinf(norms))
    if big.size:
        _, k = np.frexp(np.max(np.abs(A[big]), axis=1))
        R = np.ldexp(A[big], -k[:, None])  # max |entry| in [1/2, 1): its norm is finite and ≥ 1/2
        out[big] = R * (X / np.sqrt(np.einsum("ij,ij->i", R, R)))[:, None]
    return out


def _block_statistics(A, y, w):
    if is_sparse(A):
        Aw = A.multiply(w[:, None]).tocsr() if w is not None else A
        G = np.asarray((A.T @ Aw).toarray(), dtype=np.float64)
        b = np.asarray(Aw.T @ y, dtype=np.float64).ravel()
        return G, b
    Aw = A if w is None else A * w[:, None]
    return Aw.T @ A, Aw.T @ y


def _statistics(A, y, w):
    """G = Aᵀ diag(w) A and b = Aᵀ(w∘y) in float64 (A's rows already clipped): one product per
    block of ``SSP_BLOCK`` rows, the blocks added in order (the rounding count of
    :func:`fasterm.erm._float_margin.ssp_plan`)."""
    n, step = A.shape[0], _float_margin.SSP_BLOCK
    G, b = _block_statistics(A[:step], y[:step], None if w is None else w[:step])
    for lo in range(step, n, step):
        Gk, bk = _block_statistics(A[lo:lo + step], y[lo:lo + step], None if w is None else w[lo:lo + step])
        G += Gk
        b += bk
    return G, b


def _cholesky_succeeds(G, t, scale):
    """Whether the floating-point Cholesky factorisation of 2^s·(G − tI) runs to completion
    (positive finite pivots); 2^s = ``scale``, a power of two (an exact scaling)."""
    A = G * scale
    A[np.diag_indices_from(A)] -= t * scale
    try:
        R = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return False
    d = np.diagonal(R)
    return bool(np.isfinite(R).all() and (d > 0.0).all())


def _lambda_min(G, plan):
    """λ_min of the symmetric G, within ``plan.lam_error`` of its exact value, certified.

    A success of the Cholesky test at t proves λ_min(G) ≥ t − s_C: the computed factor
    satisfies R̂ᵀR̂ = Â + ΔA, |ΔA| ≤ γ_{p+2}|R̂ᵀ||R̂| (Higham 2002, Thm 10.3, any order of the
    inner products; one rounding more for a pivot applied as a rounded reciprocal), so
    ‖ΔA‖₂ ≤ γ_{p+2}·tr(Â)/(1 − γ_{p+2}), plus the shift's rounding.  A failure proves
    λ_min(G) ≤ t + s_D: Cholesky succeeds whenever λ_min(H) > pγ_{p+2}/(1 − pγ_{p+2}),
    H = D⁻¹ÂD⁻¹, D² = diag(Â) (Demmel 1989; Higham 2002, Thm 10.7), and λ_min(Â) ≤
    λ_min(H)·max Âᵢᵢ.  LAPACK's eigenvalue λ̂ is returned when the tests at λ̂ ∓ W/2 succeed
    and fail (every fit so far); otherwise a bisection on [lo, hi] ∋ λ_min(G) with the same
    tests, each result a proven bound, stops at width W.  Either way |result − λ_min(G)| ≤
    W/2 + s_max + rounding = ``plan.lam_error``, whatever the eigensolver's accuracy
    (docs/guarantees.rst, "Floating point")."""
    lam = float(np.linalg.eigvalsh(G)[0])
    half = 0.5 * plan.width
    lo_t, hi_t = lam - half, lam + half
    if (plan.lo <= lo_t and hi_t <= plan.hi and _cholesky_succeeds(G, lo_t, plan.scale)
            and not _cholesky_succeeds(G, hi_t, plan.scale)):
        return lam
    lo, hi = plan.lo, plan.hi
    while hi - lo > plan.width:
        mid = 0.5 * (lo + hi)
        if _cholesky_succeeds(G, mid, plan.scale):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _symmetric(upper, p):
    Z = np.zeros((p, p))
    iu = np.triu_indices(p)
    Z[iu] = upper
    return Z + np.triu(Z, 1).T


def adassp(X, y, epsilon, delta=1e-5, *, data_norm=1.0, label_bound=1.0, sample_weight=None,
           weight_bound=1.0, random_state=None, rho=ADASSP_RHO) -> OptimizeResult:
    """Private least squares by AdaSSP (Wang 2018, Algorithm 2): module docstring.

    Parameters
    ----------
    X : (n, p) float array or scipy.sparse matrix
        Rows are clipped to ‖x‖₂ ≤ X_c, a hair below ``data_norm``: the
        floating-point margin of the statistics (module docstring); append a
        constant column yourself for an intercept (the estimator does).
    y : (n,) array
        Labels, clipped to [−``label_bound``, ``label_bound``].
    epsilon, delta : float
        The budget; δ > 0 uses Gaussian noise composed by GDP, δ = 0 Laplace
        noise composed by basic composition.
    sample_weight, weight_bound : array or None, float
        Weights mapped into [0, B] (record by record), B = ``weight_bound``;
        every sensitivity scales by B (a record's terms waaᵀ and wya are at
        most B times an unweighted one's).
    random_state : None, int or Generator
        The noise's seed or Generator (None for a release).
    rho : float
        The failure probability of the ridge rule (public, default 0.05).

    Returns
    -------
    OptimizeResult
        ``w`` = θ (float64), ``epsilon``/``delta`` spent, ``steps=3`` (the
        three releases), ``lr=0.0``, ``noise``, ``calibration`` ("gdp" or
        "pure"), ``sensitivity=1.0`` and ``noise_scale`` = the noise of one
        release divided by its sensitivity (σ, or the Laplace b = 3/ε) — so
        that √steps·sensitivity/noise_scale is the μ of the GDP composition,
        as for the gradient methods — and ``info`` with the public constants
        of :func:`adassp_scales` (the scales s₁, s₂, s₃, the shift, the ridge
        scale, ρ, the sensitivities): nothing computed from the data.
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    Xb = check_positive(data_norm, "data_norm")
    Yb = check_positive(label_bound, "label_bound")
    if is_sparse(X):
        A = check_csr(X, "X")
    else:
        A = check_array(X, "X", ndim=2, dtype=None)
        if A.dtype not in (np.float32, np.float64):
            A = A.astype(np.float64)
    n, p = A.shape
    yy = check_array(y, "y", ndim=1, dtype=np.float64)
    if yy.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {yy.shape[0]} labels: X and y must have one row per record")
    w = None
    B = check_positive(weight_bound, "weight_bound")
    if sample_weight is not None:
        w, B = check_sample_weight(sample_weight, n, B)
    _warnings.warn_large_delta(delta, n, "adassp")
    cal = adassp_scales(eps, delta, p, Xb, Yb, B if w is not None else 1.0, rho)
    try:  # the rows' clip X_c ≤ X: the computed releases within the sensitivities (module docstring)
        plan = _float_margin.ssp_plan(n, p, Xb, Yb, B if w is not None else 1.0)
    except _float_margin.MarginTooLarge as e:
        raise ValueError(f"X of shape {A.shape}, data_norm, label_bound and weight_bound: {e}") from None
    rng = check_random_state(random_state)
    # the per-record maps: rows to the X_c-ball, labels to [−Y, Y] (float64 statistics)
    if is_sparse(A):
        from ._design import clip_rows
        A = clip_rows(A.astype(np.float64), plan.clip)
    else:
        A = _clip_rows_dense(np.asarray(A, dtype=np.float64), plan.clip)
    yy = np.clip(yy, -Yb, Yb)
    G, b = _statistics(A, yy, w)
    G = 0.5 * (G + G.T)
    lam_min = _lambda_min(G, plan)
    k = p * (p + 1) // 2
    if cal["noise"] == "gaussian":
        z1 = rng.standard_normal()
        zG = rng.standard_normal(k)
        zb = rng.standard_normal(p)
    else:
        z1 = rng.laplace()
        zG = rng.laplace(size=k)
        zb = rng.laplace(size=p)
    lam_tilde = max(0.0, lam_min + cal["s1"] * z1 - cal["shift"])        # release 1
    G_hat = G + cal["s2"] * _symmetric(zG, p)                           # release 2
    b_hat = b + cal["s3"] * zb                                           # release 3
    lam = max(0.0, cal["ridge_scale"] - lam_tilde)                      # post-processing
    M = G_hat + lam * np.eye(p)
    try:
        theta = np.linalg.solve(M, b_hat)
    except np.linalg.LinAlgError:
        theta = np.linalg.lstsq(M, b_hat, rcond=None)[0]
    if not np.all(np.isfinite(theta)):  # pragma: no cover - a singular noisy system
        theta = np.linalg.lstsq(M, b_hat, rcond=None)[0]
    info = {key: cal[key] for key in ("s1", "s2", "s3", "shift", "ridge_scale", "rho", "sensitivities")}
    info["method"] = "adassp"
    return OptimizeResult(w=theta, epsilon=cal["epsilon"], delta=cal["delta"], steps=3, lr=0.0,
                          noise=cal["noise"], calibration="gdp" if cal["noise"] == "gaussian" else "pure",
                          noise_scale=cal["unit_scale"], lipschitz=0.0, sensitivity=1.0, info=info)
