"""The noise of T noisy gradient steps, one calibration object per (noise, calibration).

:func:`calibrate_steps` (behind ``noisy_pgd`` and ``noisy_gd``) dispatches to the
Gaussian (exact μ-GDP, :mod:`.gaussian`) and Laplace (:mod:`.laplace`)
calibrations; its :class:`StepCalibration` has the interface of secure mode's
:class:`fasterm.mechanisms.secure.SecureCalibration`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import check_scalar
from .composition import advanced_composition
from .gaussian import _calibrate_gaussian, _gaussian_epsilon, _gaussian_mu, calibrate_gaussian, gaussian_epsilon, gaussian_mu
from .laplace import calibrate_laplace_coordinate, calibrate_laplace_l2, calibrate_laplace_pure, laplace_l2_epsilon
from .pld import _sgd_pld
from .sgd import _calibrate_sgd_sigma, _sgd_epsilon
from .tilted import _upper_step


# ---------------------------------------------------------------------------
# Noisy gradient steps (noisy projected gradient descent, Stemmer lecture 10)
# ---------------------------------------------------------------------------
STEP_NOISES = ("laplace", "gaussian")
STEP_CALIBRATIONS = ("pure", "coordinate", "l2")


@dataclass(frozen=True)
class StepCalibration:
    """The float noise of T noisy gradient releases, each of L2 sensitivity Δ₂.

    The interface shared with :class:`fasterm.mechanisms.secure.SecureCalibration`:
    ``noise_scale`` (Laplace b or Gaussian σ per coordinate), ``epsilon``,
    ``delta`` (the privacy spent, ≤ the budget), :meth:`noise_sq` and
    :meth:`bias_norm`.
    """

    noise: str
    calibration: str
    noise_scale: float
    epsilon: float
    delta: float

    def noise_sq(self, dim: int) -> float:
        """E‖h‖² of one d-vector of noise: 2d·b² (Laplace) or d·σ² (Gaussian)."""
        s = self.noise_scale
        return dim * s * s if self.noise == "gaussian" else 2.0 * dim * s * s

    def bias_norm(self, dim: int) -> float:
        """The release is unbiased (zero-mean noise added to the exact value)."""
        return 0.0


def calibrate_steps(noise, calibration, l2_sensitivity, dim, steps, epsilon, delta) -> StepCalibration:
    """Per-coordinate noise for ``steps`` adaptive releases of a d-vector of L2 sensitivity Δ₂.

    =================================  ==============================================
    ``laplace`` / ``"pure"``            b = T√d·Δ₂/ε (:func:`calibrate_laplace_pure`):
                                        L1 sensitivity √d·Δ₂, basic composition; (ε, 0)
    ``laplace`` / ``"coordinate"``      Lap(Δ₂/ε₀), advanced composition over the T·d
                                        coordinate mechanisms
                                        (:func:`calibrate_laplace_coordinate`)
    ``laplace`` / ``"l2"``              the smallest b with :func:`laplace_l2_epsilon`
                                        ≤ ε (Stemmer lecture 10, Thm 3, over T steps);
                                        δ = 0 spent when its basic branch binds
    ``gaussian``                        N(0, σ²), exactly μ-GDP with μ = √T·Δ₂/σ
                                        (Dong–Roth–Su; :func:`calibrate_gaussian`)
    =================================  ==============================================

    ``calibration`` is ignored for Gaussian noise (it must still be one of the three).
    """
    if noise not in STEP_NOISES:
        raise ValueError(f"noise must be one of {STEP_NOISES}, got {noise!r}")
    if calibration not in STEP_CALIBRATIONS:
        raise ValueError(f"calibration must be one of {STEP_CALIBRATIONS}, got {calibration!r}")
    dim = check_scalar(dim, "dim", low=1, integer=True)
    if noise == "gaussian":
        sigma = calibrate_gaussian(l2_sensitivity, steps, epsilon, delta)
        mu = math.sqrt(steps) * l2_sensitivity / sigma
        # σ is certified for (ε, δ) (calibrate_gaussian); gaussian_epsilon, rounded up, may be
        # a hair smaller — both statements hold, report the tighter.
        return StepCalibration(noise, calibration, sigma, min(epsilon, gaussian_epsilon(mu, delta)), delta)
    if calibration == "pure":
        b = calibrate_laplace_pure(l2_sensitivity, dim, steps, epsilon)
        return StepCalibration(noise, calibration, b, steps * math.sqrt(dim) * l2_sensitivity / b, 0.0)
    if calibration == "coordinate":
        b, eps0 = calibrate_laplace_coordinate(l2_sensitivity, dim, steps, epsilon, delta)
        eps_spent, delta_spent = advanced_composition(eps0, 0.0, steps * dim, delta)
        return StepCalibration(noise, calibration, b, eps_spent, delta_spent)
    b = calibrate_laplace_l2(l2_sensitivity, dim, steps, epsilon, delta)
    basic = steps * math.sqrt(dim) * (l2_sensitivity / b)
    eps_spent = laplace_l2_epsilon(b, l2_sensitivity, dim, steps, delta)
    # When the basic-composition branch is the binding one, no δ is spent.
    return StepCalibration(noise, calibration, b, eps_spent, 0.0 if basic <= eps_spent else delta)


def noise_scale(noise, calibration, l2_sensitivity, dim, steps, epsilon, delta):
    """:func:`calibrate_steps` as a tuple ``(scale, E‖h‖², ε spent, δ spent)`` for a d-vector."""
    cal = calibrate_steps(noise, calibration, l2_sensitivity, dim, steps, epsilon, delta)
    return cal.noise_scale, cal.noise_sq(dim), cal.epsilon, cal.delta


def noise_sq_of_steps(noise, calibration, l2_sensitivity, dim, epsilon, delta):
    """T ↦ E‖h_t‖² per step of :func:`calibrate_steps` for a budget (ε, δ): the
    calibration part of a default-T rule (which minimises a utility bound over T).

    Gaussian: σ_T² = T·(Δ₂/μ)² with μ = :func:`gaussian_mu` (ε, δ) independent
    of T, so one calibration serves every T; Laplace: one calibration per T.
    """
    if noise == "gaussian":
        per_step = (l2_sensitivity / gaussian_mu(epsilon, delta)) ** 2
        return lambda T: dim * T * per_step
    return lambda T: calibrate_steps(noise, calibration, l2_sensitivity, dim, T, epsilon, delta).noise_sq(dim)


def clear_caches() -> None:
    """Forget the memoised Gaussian calibrations (for timing a first, "cold" fit)."""
    _gaussian_mu.cache_clear()
    _gaussian_epsilon.cache_clear()
    _calibrate_gaussian.cache_clear()
    _sgd_pld.cache_clear()
    _upper_step.cache_clear()
    _sgd_epsilon.cache_clear()
    _calibrate_sgd_sigma.cache_clear()
