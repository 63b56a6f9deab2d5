"""Release a value privately: Laplace, Laplace with L2 sensitivity, Gaussian;
choose an index privately: the exponential mechanism.

Each function validates its parameters, calibrates the noise scale with
:mod:`fasterm.accounting`, and adds noise drawn by the compiled samplers of
:mod:`fasterm.mechanisms.noise` from ``random_state`` (None, an int, or a Generator).
The value is public-shaped: scalars give a Python float back, arrays an array
of the same shape (float32 stays float32).

Neighbouring relation: whatever relation the caller's sensitivity refers to;
the guarantee is for two inputs whose values differ by at most the stated
sensitivity in the stated norm.

``secure=True`` (or :func:`fasterm.secure_mode` / :func:`fasterm.set_secure`)
releases on a power-of-two grid with exact discrete noise instead
(:mod:`fasterm.mechanisms.secure`: the threat, the grid, the theorems); the release is
then float64 and every value is an integer multiple of ``granularity``.  The
exponential mechanism in secure mode rounds the scores to the grid and draws
the index exactly (no floating-point step in the sampling).
"""

from __future__ import annotations

import numpy as np

import math

import fasterm.mechanisms.noise as noise
import fasterm.mechanisms._expmech as _expmech  # compiled (src/fasterm/mechanisms/_expmech.pyx)
import fasterm.accounting as accounting
import fasterm.mechanisms.secure as _secure
from .._validation import check_array, check_delta, check_epsilon, check_positive, check_random_state, derived_from

__all__ = ["laplace", "laplace_l2", "gaussian", "exponential"]


def _value(value):
    scalar = np.ndim(value) == 0
    arr = check_array(np.atleast_1d(value) if scalar else value, "value", ndim=tuple(range(1, 33)), allow_empty=True)
    return arr, scalar


def _release(arr, scalar, sampler, scale, rng, params="sensitivity and epsilon"):
    # Data-independent check: a noise scale this large would overflow the
    # value's dtype (silently, to ±inf) for most draws.
    if not (math.isfinite(scale) and scale * 64.0 < float(np.finfo(arr.dtype).max)):
        raise ValueError(
            f"the calibrated noise scale {scale:g} (from {params}) is too large for "
            f"{arr.dtype} values: increase epsilon or release a float64 value")
    noisy = sampler(arr.shape, scale, random_state=rng, dtype=arr.dtype)
    noisy += arr
    return float(noisy[0]) if scalar else noisy


def laplace(value: np.typing.ArrayLike, sensitivity: float, epsilon: float,
            random_state: None | int | np.random.Generator | str = None, *, secure: bool | None = None,
            granularity: float | None = None) -> float | np.ndarray:
    """value + Lap(sensitivity/ε) per coordinate: (ε, 0)-DP.

    ``sensitivity`` is the **L1** sensitivity of ``value``: max over
    neighbouring inputs of Σ_i |f(S)_i − f(S')_i|.  Laplace mechanism,
    Dwork–Roth Thm 3.6.

    Secure mode: γ·(round(value/γ) + Z), Z discrete Laplace of scale t grid
    units with t ≥ Δ₁,grid/ε, Δ₁,grid = ⌊Δ₁/γ⌋ + d the rounding-enlarged L1
    sensitivity; (ε, 0)-DP (:func:`fasterm.mechanisms.secure.laplace_calibration`).
    """
    arr, scalar = _value(value)
    sens = check_positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    if _secure_on(secure, granularity):
        with derived_from("sensitivity, epsilon and granularity"):
            cal = _secure.laplace_calibration(sens, eps, max(arr.size, 1), granularity)
        return _secure_release(arr, scalar, cal, random_state)
    rng = check_random_state(random_state)
    return _release(arr, scalar, noise.laplace, sens / eps, rng)


def _secure_on(secure, granularity) -> bool:
    on = _secure.resolve(secure)
    if granularity is not None:
        if not on:
            raise ValueError("granularity is only used in secure mode (secure=True)")
        _secure.check_granularity(granularity)  # before the calibration (which rewords its errors)
    return on


def _secure_release(arr, scalar, cal, random_state):
    rng = _secure.secure_rng(random_state)
    out = _secure.release(arr, cal.granularity, cal.params, rng)
    return float(out.reshape(-1)[0]) if scalar else out


def laplace_l2(value: np.typing.ArrayLike, l2_sensitivity: float, epsilon: float, delta: float,
               random_state: None | int | np.random.Generator | str = None, *, secure: bool | None = None,
               granularity: float | None = None) -> float | np.ndarray:
    """value + Lap(b) per coordinate for a vector with **L2** sensitivity Δ₂.

    b is :func:`fasterm.accounting.calibrate_laplace_l2` with one release:
    the smallest b with min(√d·Δ₂/b, √(2 ln(1/δ))·s + s(e^s − 1)) ≤ ε,
    s = Δ₂/b (Stemmer lecture 10, Thm 3: heterogeneous advanced composition
    over the coordinates).  (ε, δ)-DP; with δ = 0 it is the L1 Laplace
    mechanism with Δ₁ = √d·Δ₂.

    Secure mode: per-coordinate discrete Laplace on the grid, the same
    calibration with the rounding-enlarged Δ₂,grid ≥ Δ₂/γ + √d (each coordinate
    of the discrete Laplace is (|v_i|/b, 0)-DP, all the theorem uses).
    """
    arr, scalar = _value(value)
    sens = check_positive(l2_sensitivity, "l2_sensitivity")
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if _secure_on(secure, granularity):
        with derived_from("l2_sensitivity, epsilon, delta and granularity"):
            cal = _secure.laplace_l2_calibration(sens, eps, delta, max(arr.size, 1), 1, granularity)
        return _secure_release(arr, scalar, cal, random_state)
    rng = check_random_state(random_state)
    b = accounting.calibrate_laplace_l2(sens, max(arr.size, 1), 1, eps, delta)
    return _release(arr, scalar, noise.laplace, b, rng, "l2_sensitivity and epsilon")


def gaussian(value: np.typing.ArrayLike, l2_sensitivity: float, epsilon: float, delta: float,
             random_state: None | int | np.random.Generator | str = None, *, secure: bool | None = None,
             granularity: float | None = None) -> float | np.ndarray:
    """value + N(0, σ²) per coordinate, σ the exact (ε, δ) calibration.

    σ = Δ₂/μ with μ the largest value for which μ-GDP implies (ε, δ)-DP
    (Dong–Roth–Su 2022 Cor. 2.13; the analytic Gaussian mechanism of Balle &
    Wang 2018).  Requires δ > 0.

    Secure mode: discrete Gaussian noise on the grid, σ² (grid units²) from
    zero-concentrated DP: ρ = Δ₂,grid²/(2σ²) (CKS 2020) with ρ the largest
    value whose CKS conversion gives δ(ε) ≤ δ
    (:func:`fasterm.mechanisms.secure.gaussian_calibration`).
    """
    arr, scalar = _value(value)
    sens = check_positive(l2_sensitivity, "l2_sensitivity")
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if _secure_on(secure, granularity):
        with derived_from("l2_sensitivity, epsilon, delta and granularity"):
            cal = _secure.gaussian_calibration(sens, eps, delta, max(arr.size, 1), 1, granularity)
        return _secure_release(arr, scalar, cal, random_state)
    rng = check_random_state(random_state)
    sigma = accounting.calibrate_gaussian(sens, 1, eps, delta)
    return _release(arr, scalar, noise.gaussian, sigma, rng, "l2_sensitivity, epsilon and delta")


def _score_min(scores: np.ndarray) -> float:
    # np.min propagates NaN, so one pass both checks and finds the minimum.
    m = float(np.min(scores))
    if math.isnan(m):
        raise ValueError("scores must not contain NaN")
    if m == -math.inf:
        raise ValueError("scores must not contain -inf (lower is better: -inf would be a certain choice)")
    if m == math.inf:
        raise ValueError("scores must contain at least one finite score (all are +inf)")
    return m


def _exponential(scores, sensitivity, epsilon, random_state, monotonic, size, secure=False, granularity=None):
    s = check_array(scores, "scores", ndim=1, finite=False)
    sens = check_positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    if not isinstance(monotonic, (bool, np.bool_)):
        raise TypeError(f"monotonic must be a bool, got {type(monotonic).__name__}")
    if _secure_on(secure, granularity):
        with derived_from("sensitivity, epsilon and granularity"):
            cal = _secure.exponential_calibration(sens, eps, bool(monotonic), granularity)
        rng = _secure.secure_rng(random_state)
        _score_min(s)
        return _secure.exponential_indices(s, cal, rng, size)
    rng = check_random_state(random_state)
    s_min = _score_min(s)
    # (eps / 2) / sens, not eps / (2 sens): 2 sens may overflow.  k itself may
    # overflow to inf (eps / sensitivity beyond the double range): the kernel
    # then returns a uniform choice among the minimisers, the limit.
    k = eps / sens if monotonic else (0.5 * eps) / sens
    out = np.empty(size, dtype=np.int64)
    _expmech.exponential_sample(rng.bit_generator, s, s_min, k, out)
    return out


def exponential(scores: np.typing.ArrayLike, sensitivity: float, epsilon: float,
                random_state: None | int | np.random.Generator | str = None, *, monotonic: bool = False,
                secure: bool | None = None, granularity: float | None = None) -> int:
    """Index i of ``scores`` with probability ∝ exp(−ε·scores[i] / (2·sensitivity)).

    The exponential mechanism over the finite range {0, …, k−1}, **lower score
    = better** (score = −utility).  ``sensitivity`` bounds, for every i, how
    much scores[i] can change between neighbouring data sets (the scores are a
    function of the private data; the caller derives their sensitivity).  Then
    the release is (ε, 0)-DP: McSherry & Talwar 2007; Dwork–Roth, *The
    Algorithmic Foundations of Differential Privacy*, Thm 3.10.

    ``monotonic=True`` uses exp(−ε·scores[i] / sensitivity), which is (ε, 0)-DP
    only when the scores are monotone in the data: for every pair of
    neighbours, either no score decreases or no score increases (Dwork–Roth
    §3.4, the remark after Thm 3.10: the normaliser then moves in the same
    direction as the chosen weight, so only one factor e^{ε/2} remains).

    Numerics (fast path, the default): weights are exp(−k·(s_i − min s)), so
    the best score has weight 1 and nothing overflows, whatever the offset or
    range of the scores (1e300 works); weights below e^−708 are rounded to 0.
    A +inf score is never chosen; NaN or −inf raise ``ValueError``.  One
    compiled pass over the scores and one uniform draw (inversion) from
    ``random_state`` (None, an int seed or a ``numpy.random.Generator``).
    Exact up to floating-point rounding (not hardened against floating-point
    attacks, Mironov 2012).

    Secure mode (``secure=True``, or ``secure=None`` under
    :func:`fasterm.secure_mode` / :func:`fasterm.set_secure`): no float enters
    the sampling.

    * Each score is rounded to the power-of-two grid γ = ``granularity``
      (default: the largest power of two ≤ Δ/2^10, public): k_i = round(s_i/γ),
      exact.  Since |round(a/γ) − round(b/γ)| ≤ |a − b|/γ + 1, neighbouring
      rounded scores differ by at most Δ_g = ⌊Δ/γ⌋ + 1 grid units (an
      integer); rounding is monotone, so monotone scores stay monotone.
    * i is drawn with probability exactly ∝ exp(−t·(k_i − min_j k_j)),
      t = ε/(2Δ_g) (ε/Δ_g if ``monotonic``) the exact rational value of ε's
      float over an integer: propose i uniformly (exact uniform integers),
      accept with an exact Bernoulli(exp(−t·(k_i − min k))) (Canonne–Kamath–
      Steinke 2020), repeat.  P[propose i, accept] = w_i/m, so the accepted
      index has exactly the target law; a proposal is accepted with probability
      Σw/m ≥ 1/m (expected ≤ m proposals, each O(1) expected work even for
      tiny weights).
    * Privacy: McSherry–Talwar with sensitivity Δ_g on the rounded scores
      (rounding is applied to every score by the mechanism itself):
      (ε, 0)-DP exactly, not up to rounding.  +inf scores have weight 0 and
      are never chosen; NaN/−inf raise as above.  Any finite scores work
      (1e300: exact Python-integer path); Δ/γ > 2^47 is refused
      (ValueError), as for the secure Laplace mechanism
      (:mod:`fasterm.mechanisms.secure`).  ``random_state`` may also be ``"os"`` or a
      :class:`fasterm.mechanisms.noise.OSRandom` (operating-system entropy).  Compiled
      loop for a Generator; about 2.5–3× the fast path's time on 1e4 scores
      (README, "Floating-point safety").

    Returns a Python int.
    """
    return int(_exponential(scores, sensitivity, epsilon, random_state, monotonic, 1, secure, granularity)[0])
