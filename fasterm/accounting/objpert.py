"""Pure ε for objective perturbation and the L2-norm Laplace (K-norm) mechanism.

* :func:`norm_laplace_scale`: noise with density ∝ exp(−‖z‖₂/s) is (Δ₂/s, 0)-DP
  for L2 sensitivity Δ₂ (the K-norm mechanism of Hardt & Talwar 2010).
* :func:`objpert_epsilon`, :func:`calibrate_objpert`, :func:`objpert_regularization`:
  ε = ε_b + log(1 + c/(nμ)) + ε_out, the theorem of Chaudhuri, Monteleoni &
  Sarwate (2011, Thm 9) with the determinant bound of Kifer, Smith & Thakurta
  (2012, Thm 2).  docs/pure.rst says why this variant and how μ is chosen.
"""

from __future__ import annotations

import math

from .._validation import check_derived, check_epsilon, check_positive, check_scalar, derived_from
from ._solve import _round_scale_up


# ---------------------------------------------------------------------------
# Pure ε: the L2-norm Laplace mechanism and objective perturbation
# ---------------------------------------------------------------------------
def norm_laplace_scale(l2_sensitivity, epsilon) -> float:
    """Scale s = Δ₂/ε (rounded up) of the noise with density ∝ exp(−‖z‖₂/s) on R^d.

    The K-norm mechanism for the L2 norm (Hardt & Talwar 2010): for f with
    ‖f(D) − f(D')‖₂ ≤ Δ₂, the density ratio at any output o is
    exp((‖o − f(D')‖ − ‖o − f(D)‖)/s) ≤ exp(Δ₂/s) (triangle inequality), so
    the release is (Δ₂/s, 0)-DP.  Such a z has a uniform direction and
    ‖z‖ ~ Gamma(d, s) (the density of ‖z‖ is ∝ r^{d−1} e^{−r/s}).
    """
    sens = check_positive(l2_sensitivity, "l2_sensitivity")
    eps = check_epsilon(epsilon)
    with derived_from("l2_sensitivity and epsilon"):
        s = check_derived(sens / eps, "the noise scale", "l2_sensitivity and epsilon")
        return _round_scale_up(s, lambda s: sens / s, eps)


def _objpert_log_det(curvature: float, n: int, reg: float) -> float:
    # log(1 + c/(nμ)) rounded up: log1p is within one ulp, the quotient within one more.
    return math.nextafter(math.nextafter(math.log1p(curvature / (n * reg)), math.inf), math.inf)


def objpert_log_det(curvature: float, n: int, reg: float) -> float:
    """log(1 + c/(nμ)), rounded up: the Jacobian term of objective perturbation's ε (:func:`objpert_epsilon`)."""
    return _objpert_log_det(curvature, n, reg)


def objpert_epsilon(noise_epsilon, curvature, n, regularization, output_epsilon=0.0) -> float:
    """ε of objective perturbation: ε_b + log(1 + c/(nμ)) + ε_out (rounded up).

    The theorem (Chaudhuri, Monteleoni & Sarwate 2011, Thm 9, with the
    determinant bound of Kifer, Smith & Thakurta 2012, Thm 2, for loss
    Hessians of rank one; proof in :mod:`fasterm.erm.objpert`): minimising
    Σ_i ψ(⟨w, x_i⟩, y_i) + (nμ/2)‖w‖² + ⟨b, w⟩ over R^d, with ψ convex and
    twice continuously differentiable in w, ‖∇_w ψ‖ ≤ L, ∇²_w ψ ⪯ c·I (c =
    sup ψ''·X²) and b of density ∝ exp(−ε_b‖b‖/(2L)), is
    (ε_b + log(1 + c/(nμ)))-DP under replace-one neighbours; releasing an
    approximate minimiser plus output noise adds ε_out.
    ``noise_epsilon`` ε_b > 0, ``curvature`` c ≥ 0, ``n`` ≥ 1,
    ``regularization`` μ > 0, ``output_epsilon`` ε_out ≥ 0.
    """
    eps_b = check_epsilon(noise_epsilon, "noise_epsilon")
    c = check_scalar(curvature, "curvature", low=0.0)
    n = check_scalar(n, "n", low=1, integer=True)
    reg = check_positive(regularization, "regularization")
    eps_out = check_scalar(output_epsilon, "output_epsilon", low=0.0)
    with derived_from("noise_epsilon, curvature, n, regularization and output_epsilon"):
        total = math.fsum([eps_b, _objpert_log_det(c, n, reg), eps_out])
        return check_derived(math.nextafter(total, math.inf), "epsilon",
                             "noise_epsilon, curvature, n, regularization and output_epsilon")


def objpert_regularization(epsilon, curvature, n, fraction) -> float:
    """The μ whose Jacobian term log(1 + c/(nμ)) is ``fraction``·ε: μ = c/(n(e^{fε} − 1)).

    Rounded up, so the evaluated term never exceeds fraction·ε.  A public
    rule (n, ε, the loss's curvature bound c): see :mod:`fasterm.erm.objpert`.
    ``fraction`` in (0, 1).
    """
    eps = check_epsilon(epsilon)
    c = check_positive(curvature, "curvature")
    n = check_scalar(n, "n", low=1, integer=True)
    f = check_scalar(fraction, "fraction", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    names = "epsilon, curvature, n and fraction"
    with derived_from(names):
        target = f * eps
        mu = check_derived(c / (n * math.expm1(target)), "the regularization", names)
        for _ in range(1000):
            if _objpert_log_det(c, n, mu) <= target:
                return mu
            mu = math.nextafter(mu, math.inf)
        raise ArithmeticError("the regularization could not meet the budget to rounding")  # pragma: no cover


def calibrate_objpert(epsilon, curvature, n, regularization, output_epsilon=0.0) -> float:
    """The noise budget ε_b = ε − log(1 + c/(nμ)) − ε_out of objective perturbation.

    The largest float with :func:`objpert_epsilon` (ε_b, c, n, μ, ε_out) ≤ ε.
    Raises ``ValueError`` when the Jacobian term and ε_out leave nothing
    (then μ must grow: :func:`objpert_regularization`).
    """
    eps = check_epsilon(epsilon)
    c = check_scalar(curvature, "curvature", low=0.0)
    n = check_scalar(n, "n", low=1, integer=True)
    reg = check_positive(regularization, "regularization")
    eps_out = check_scalar(output_epsilon, "output_epsilon", low=0.0)
    names = "epsilon, curvature, n, regularization and output_epsilon"
    with derived_from(names):
        eps_b = eps - eps_out - _objpert_log_det(c, n, reg)
        if not eps_b > 0.0:
            raise ValueError(f"{names} leave no budget for the noise: log(1 + c/(n·μ)) + ε_out ≥ ε "
                             "(raise the regularization)")
        for _ in range(1000):
            if objpert_epsilon(eps_b, c, n, reg, eps_out) <= eps:
                return eps_b
            eps_b = math.nextafter(eps_b, 0.0)
        raise ArithmeticError("the noise budget could not meet epsilon to rounding")  # pragma: no cover


# ---------------------------------------------------------------------------
# Multinomial objective perturbation: loss Hessians of rank up to r
# ---------------------------------------------------------------------------
def objpert_multi_log_det(trace, rank, n, regularization) -> float:
    """The Jacobian term r·log(1 + T/(r·n·μ)) of objective perturbation with loss Hessians of rank ≤ r.

    The bound (proof in :mod:`fasterm.erm.objpert_multi`): for M ⪰ nμI and
    E ⪰ 0 of rank ≤ r and trace ≤ T, det(M + E)/det(M) ≤ (1 + T/(r n μ))^r
    (the eigenvalues η_j of M^{−1/2}EM^{−1/2} sum to ≤ T/(nμ); Jensen on
    log(1 + η)).  r = 1, T = c is the rank-one term of :func:`objpert_epsilon`.
    Rounded up: the quotient, log1p and the product err by ≤ 6 units in the
    last place in all (log1p(q)'s relative condition number q/((1 + q)log1p(q)) ≤ 1),
    covered by the factor 1 + 2⁻⁵⁰.  ``trace`` T ≥ 0, ``rank`` r ≥ 1, ``n`` ≥ 1,
    ``regularization`` μ > 0.
    """
    T = check_scalar(trace, "trace", low=0.0)
    r = check_scalar(rank, "rank", low=1, integer=True)
    n = check_scalar(n, "n", low=1, integer=True)
    reg = check_positive(regularization, "regularization")
    with derived_from("trace, rank, n and regularization"):
        v = r * math.log1p(T / (r * n * reg))
        return check_derived(math.nextafter(v * (1.0 + 2.0 ** -50), math.inf), "the Jacobian term",
                             "trace, rank, n and regularization")


def objpert_multi_epsilon(noise_epsilon, trace, rank, n, regularization, output_epsilon=0.0) -> float:
    """ε of multinomial objective perturbation: ε_b + r·log(1 + T/(r n μ)) + ε_out (rounded up).

    The theorem of :mod:`fasterm.erm.objpert_multi` (Chaudhuri, Monteleoni &
    Sarwate 2011, Thm 9, with a rank-r determinant bound in place of the
    rank-one bound of Kifer, Smith & Thakurta 2012, Thm 2).
    """
    eps_b = check_epsilon(noise_epsilon, "noise_epsilon")
    eps_out = check_scalar(output_epsilon, "output_epsilon", low=0.0)
    jac = objpert_multi_log_det(trace, rank, n, regularization)
    names = "noise_epsilon, trace, rank, n, regularization and output_epsilon"
    with derived_from(names):
        return check_derived(math.nextafter(math.fsum([eps_b, jac, eps_out]), math.inf), "epsilon", names)


def objpert_multi_regularization(epsilon, trace, rank, n, fraction) -> float:
    """The μ whose Jacobian term r·log(1 + T/(r n μ)) is ``fraction``·ε.

    μ = T/(r n (e^{fε/r} − 1)), rounded up so the evaluated term never exceeds fε.
    """
    eps = check_epsilon(epsilon)
    T = check_positive(trace, "trace")
    r = check_scalar(rank, "rank", low=1, integer=True)
    n = check_scalar(n, "n", low=1, integer=True)
    f = check_scalar(fraction, "fraction", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    names = "epsilon, trace, rank, n and fraction"
    with derived_from(names):
        target = f * eps
        mu = check_derived(T / (r * n * math.expm1(target / r)), "the regularization", names)
        for _ in range(1000):
            if objpert_multi_log_det(T, r, n, mu) <= target:
                return mu
            mu = math.nextafter(mu, math.inf) * (1.0 + 2.0 ** -50)
        raise ArithmeticError("the regularization could not meet the budget to rounding")  # pragma: no cover


def calibrate_objpert_multi(epsilon, trace, rank, n, regularization, output_epsilon=0.0) -> float:
    """The noise budget ε_b = ε − r·log(1 + T/(r n μ)) − ε_out: the largest float with
    :func:`objpert_multi_epsilon` ≤ ε.  ``ValueError`` when nothing is left."""
    eps = check_epsilon(epsilon)
    eps_out = check_scalar(output_epsilon, "output_epsilon", low=0.0)
    names = "epsilon, trace, rank, n, regularization and output_epsilon"
    with derived_from(names):
        eps_b = eps - eps_out - objpert_multi_log_det(trace, rank, n, regularization)
        if not eps_b > 0.0:
            raise ValueError(f"{names} leave no budget for the noise: r·log(1 + T/(r·n·μ)) + ε_out ≥ ε "
                             "(raise the regularization)")
        for _ in range(1000):
            if objpert_multi_epsilon(eps_b, trace, rank, n, regularization, eps_out) <= eps:
                return eps_b
            eps_b = math.nextafter(eps_b, 0.0)
        raise ArithmeticError("the noise budget could not meet epsilon to rounding")  # pragma: no cover
