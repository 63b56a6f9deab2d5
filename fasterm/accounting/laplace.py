"""Calibration of L2-sensitivity Laplace noise over T gradient steps.

Pure ε (``calibrate_laplace_pure``: the Laplace mechanism with L1 sensitivity
√d·Δ₂, Dwork & Roth Thm 3.6, composed by Thm 3.16), per-coordinate Laplace under
advanced composition (``calibrate_laplace_coordinate``, Thm 3.20) and the
L2-calibrated Laplace of Stemmer's lecture 10, Thm 3 (``laplace_l2_epsilon``,
``calibrate_laplace_l2``).  The why of each choice: docs/solvers.rst.
"""

from __future__ import annotations

import math

from .._validation import check_delta, check_derived, check_epsilon, check_positive, check_scalar, derived_from
from ._solve import _round_scale_up, _solve_increasing
from .composition import _advanced_eps


# ---------------------------------------------------------------------------
# Laplace calibrations (noisy gradient steps; docs/guarantees.rst, noisy PGD)
# ---------------------------------------------------------------------------
def _check_calibration_inputs(l2_sensitivity, dim, steps, epsilon):
    sens = check_positive(l2_sensitivity, "l2_sensitivity")
    dim = check_scalar(dim, "dim", low=1, integer=True)
    steps = check_scalar(steps, "steps", low=1, integer=True)
    eps = check_epsilon(epsilon)
    return sens, dim, steps, eps


def calibrate_laplace_pure(l2_sensitivity, dim, steps, epsilon) -> float:
    """Per-coordinate Laplace scale b for (ε, 0)-DP over ``steps`` releases.

    Each release of a vector with L2 sensitivity Δ₂ has L1 sensitivity at most
    Δ₁ = √d·Δ₂ (Cauchy–Schwarz), so Lap(Δ₁/ε₀) per coordinate is ε₀-DP (Laplace
    mechanism, Dwork–Roth Thm 3.6); T releases compose to Tε₀ (basic
    composition).  Hence b = T·√d·Δ₂/ε.
    """
    sens, dim, steps, eps = _check_calibration_inputs(l2_sensitivity, dim, steps, epsilon)
    root_d = math.sqrt(dim)
    with derived_from("l2_sensitivity, dim, steps and epsilon"):
        b = check_derived(steps * root_d * sens / eps, "the Laplace scale b",
                          "l2_sensitivity, dim, steps and epsilon")
        return _round_scale_up(b, lambda b: steps * (root_d * sens / b), eps)


def calibrate_laplace_coordinate(l2_sensitivity, dim, steps, epsilon, delta) -> tuple[float, float]:
    """The notes' first attempt: (b, ε₀) with every coordinate its own mechanism.

    Each coordinate of a release has sensitivity ≤ Δ₂, so Lap(Δ₂/ε₀) is
    ε₀-DP for it; the k = T·d coordinate mechanisms compose by advanced
    composition (Dwork–Roth Thm 3.20) to
    ε = √(2k ln(1/δ)) ε₀ + k ε₀ (e^{ε₀} − 1) with δ' = δ.  We solve that
    equation for ε₀ and return b = Δ₂/ε₀.  Needs δ > 0.
    """
    sens, dim, steps, eps = _check_calibration_inputs(l2_sensitivity, dim, steps, epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0 for calibration='coordinate' (advanced composition)")
    k = steps * dim
    with derived_from("l2_sensitivity, dim, steps, epsilon and delta"):
        eps0 = _solve_increasing(lambda e0: _advanced_eps(e0, k, delta), eps, 1e-3 * eps / k, eps)
        b = check_derived(sens / eps0, "the Laplace scale b", "l2_sensitivity, dim, steps, epsilon and delta")
        b = _round_scale_up(b, lambda b: _advanced_eps(sens / b, k, delta), eps)
        return b, check_derived(sens / b, "epsilon per coordinate", "l2_sensitivity, dim, steps, epsilon and delta")


def laplace_l2_epsilon(scale, l2_sensitivity, dim, steps, delta) -> float:
    """ε spent by T releases with per-coordinate Lap(``scale``) noise.

    With s = Δ₂/b: ε(b) = min(T·√d·s, √(2T ln(1/δ))·s + T·s(e^s − 1)).
    The first term is basic composition of L1-calibrated Laplace; the second is
    heterogeneous advanced composition over the T·d coordinate mechanisms
    (Stemmer lecture 10, Thm 3, over T steps): coordinate i of a release with
    sensitivity vector α is (|α_i|/b)-DP, Σ_i α_i² ≤ Δ₂², so Σ ε_i² ≤ T s² and
    Σ ε_i(e^{ε_i} − 1) ≤ T s (e^s − 1) (every power-series term x^j, j ≥ 2,
    satisfies Σ x_i^j ≤ (Σ x_i²)^{j/2}).  δ = 0 leaves only the first term.
    """
    b = check_positive(scale, "scale")
    sens = check_positive(l2_sensitivity, "l2_sensitivity")
    dim = check_scalar(dim, "dim", low=1, integer=True)
    steps = check_scalar(steps, "steps", low=1, integer=True)
    delta = check_delta(delta)
    s = check_derived(sens / b, "l2_sensitivity / scale", "scale and l2_sensitivity")
    basic = check_derived(steps * math.sqrt(dim) * s, "the basic-composition epsilon",
                          "scale, l2_sensitivity, dim and steps")
    if delta == 0.0:
        return basic
    try:
        adv = math.sqrt(2.0 * steps * -math.log(delta)) * s + steps * s * math.expm1(s)
    except OverflowError:  # e^s beyond a double: only the basic bound is finite
        adv = math.inf
    return min(basic, adv)


def calibrate_laplace_l2(l2_sensitivity, dim, steps, epsilon, delta) -> float:
    """Smallest per-coordinate Laplace scale b with ``laplace_l2_epsilon(b) ≤ ε``.

    ε(b) is decreasing in b, and min(f₁, f₂) ≤ ε iff f₁ ≤ ε or f₂ ≤ ε, so
    b = Δ₂ / max(s₁, s₂) with f₁(s₁) = ε (closed form) and f₂(s₂) = ε (solved).
    """
    sens, dim, steps, eps = _check_calibration_inputs(l2_sensitivity, dim, steps, epsilon)
    delta = check_delta(delta)
    names = "l2_sensitivity, dim, steps, epsilon and delta"
    with derived_from(names):
        s1 = eps / (steps * math.sqrt(dim))
        if delta == 0.0:
            b = check_derived(sens / s1, "the Laplace scale b", names)
            return _round_scale_up(b, lambda b: laplace_l2_epsilon(b, sens, dim, steps, 0.0), eps)
        root = math.sqrt(2.0 * steps * -math.log(delta))
        s2 = _solve_increasing(lambda s: root * s + steps * s * math.expm1(s), eps, 1e-3 * eps / (root + steps),
                               eps)
        b = check_derived(sens / max(s1, s2), "the Laplace scale b", names)
        return _round_scale_up(b, lambda b: laplace_l2_epsilon(b, sens, dim, steps, delta), eps)
