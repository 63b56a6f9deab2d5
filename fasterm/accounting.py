"""Composition theorems, noise calibration solvers and a budget accountant.

Pure functions of public quantities (ε, δ, sensitivities, dimensions, number of
steps); nothing here ever sees data.

Theorems used (numbering as in Dwork & Roth, *The Algorithmic Foundations of
Differential Privacy*, 2014, unless stated):

* **Basic composition** (Thm 3.16): k mechanisms (ε_i, δ_i)-DP compose to
  (Σε_i, Σδ_i)-DP, adaptively.
* **Advanced composition** (Thm 3.20, Dwork–Rothblum–Vadhan 2010): k adaptive
  (ε₀, δ₀)-DP mechanisms are (√(2k ln(1/δ')) ε₀ + k ε₀ (e^{ε₀} − 1), kδ₀ + δ')-DP
  for every δ' > 0.
* **Heterogeneous advanced composition** (the same proof with per-mechanism ε_i,
  Kairouz–Oh–Viswanath 2015 / Dwork–Roth Thm 3.20 as generalised in Stemmer's
  lecture 10): (√(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e^{ε_i} − 1), Σδ_i + δ').
* **Gaussian differential privacy** (Dong, Roth & Su, *Gaussian Differential
  Privacy*, JRSS-B 2022): the Gaussian mechanism with L2 sensitivity Δ and noise
  N(0, σ²) is μ-GDP with μ = Δ/σ (Thm 2.7); T adaptive μ_t-GDP mechanisms are
  √(Σμ_t²)-GDP (Cor. 3.3); μ-GDP is (ε, δ(ε))-DP for every ε ≥ 0 with
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Cor. 2.13) — exact, the same curve
  as the analytic Gaussian mechanism of Balle & Wang (2018).
* **Privacy loss distribution of the Poisson-subsampled Gaussian**
  (noisy minibatch SGD): for replace-one neighbours (fasterm's relation) the
  dominating pair (1−q)N(0, σ²) + qN(±1, σ²) (the pair of dp-accounting's
  ``REPLACE_ONE``; for add/remove neighbours the two orderings of
  ((1−q)N(0, σ²) + qN(1, σ²), N(0, σ²))), discretised pessimistically by connect-the-dots
  (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022), composed by FFT
  (Koskela, Jälkö & Honkela 2020) under the composition theorem for
  dominating pairs (Zhu, Dong & Wang 2022, Thm. 10), every numerical error
  rounded towards more loss: :func:`sgd_epsilon`, :func:`calibrate_sgd_sigma`
  (the notes above ``_pld_pair`` give the proof).
* **Rényi DP of the Poisson-subsampled Gaussian** (a second bound, for δ
  below the PLD's error allowance): the integer-order formula of Mironov, Talwar &
  Zhang (2019, "Rényi differential privacy of the sampled Gaussian
  mechanism", §3.3), composed additively over steps (Mironov 2017, Prop. 1),
  converted to (ε, δ) by Balle et al. (2020, "Hypothesis testing
  interpretations and Rényi differential privacy", Thm. 21; the same bound as
  Canonne, Kamath & Steinke 2020, Prop. 12), and carried from add/remove to
  replace-one neighbours by Mironov's weak triangle inequality (2017,
  Prop. 11): :func:`rdp_subsampled_gaussian`, :func:`rdp_epsilon`;
  :func:`sgd_epsilon` reports the smaller of the two bounds.
* **Private selection by random stopping** (Papernot & Steinke, "Hyperparameter
  tuning with Rényi differential privacy", ICLR 2022, Thm. 2, improving Liu &
  Talwar, STOC 2019): running a mechanism a random number K ~ D_{η,γ} of times
  and releasing only the best run costs a bounded multiple of one run's RDP,
  plus log E[K]/(λ − 1): :func:`private_search_epsilon`,
  :func:`calibrate_private_search` (behind :class:`fasterm.model_selection.PrivateSearch`).
* **Zero-concentrated DP** (secure mode's discrete Gaussian): ρ-zCDP mechanisms
  compose adaptively to Σρ_t (Bun & Steinke 2016, Lemma 2.3), and ρ-zCDP
  implies (ε, δ)-DP with δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1)·(1−1/α)^α
  (Canonne, Kamath & Steinke 2020, §2.3): :func:`zcdp_delta`, :func:`zcdp_rho`.

The calibration solvers invert these formulas by bisection on a monotone
function, in log space, to (near) machine precision — far below the 1e-9
relative accuracy the tests demand.

Every calibration of the library's float mechanisms is here: the noise of T
noisy gradient steps (:func:`calibrate_steps`, behind ``noisy_pgd``; its
calibration object has the interface of secure mode's
:class:`fasterm.secure.SecureCalibration`), and the share of a budget per
mechanism when k pure mechanisms compose (:func:`pure_share`,
:func:`compose_pure`, behind ``PrivateRWM``, ``linear_learner`` and
``SQOracle``).  Secure mode's grid calibrations (:mod:`fasterm.secure`) apply
these theorems to the rounding-enlarged grid sensitivities.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_delta, check_derived, check_epsilon, check_positive, check_scalar, derived_from

__all__ = [
    "BudgetAccountant",
    "BudgetExceededError",
    "advanced_composition",
    "basic_composition",
    "calibrate_gaussian",
    "calibrate_laplace_coordinate",
    "calibrate_laplace_l2",
    "calibrate_laplace_pure",
    "calibrate_sgd_sigma",
    "calibrate_objpert",
    "calibrate_private_search",
    "calibrate_steps",
    "compose_pure",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "heterogeneous_composition",
    "laplace_l2_epsilon",
    "norm_laplace_scale",
    "objpert_epsilon",
    "objpert_regularization",
    "private_search_epsilon",
    "pure_share",
    "rdp_epsilon",
    "rdp_subsampled_gaussian",
    "sgd_epsilon",
    "zcdp_delta",
    "zcdp_rho",
]


# ---------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------
def _as_list(values, name):
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        return [values]
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"{name} must be a number or a sequence of numbers") from None


def basic_composition(epsilons, deltas=None) -> tuple[float, float]:
    """(Σε_i, Σδ_i): basic composition (Dwork–Roth Thm 3.16), valid adaptively.

    ``epsilons``/``deltas`` are sequences (or single numbers); ``deltas``
    defaults to all zeros.
    """
    eps = [check_scalar(e, "epsilons", low=0.0) for e in _as_list(epsilons, "epsilons")]
    if deltas is None:
        dels = [0.0] * len(eps)
    else:
        dels = [check_scalar(d, "deltas", low=0.0, high=1.0) for d in _as_list(deltas, "deltas")]
        if len(dels) != len(eps):
            raise ValueError(f"deltas has {len(dels)} entries but epsilons has {len(eps)}")
    with derived_from("epsilons"):
        total = math.fsum(eps)
    if not math.isfinite(total):
        raise ValueError(f"epsilons are outside the usable floating-point range: their sum is {total}")
    return total, min(1.0, math.fsum(dels))


def _advanced_eps(eps0: float, k: float, delta_prime: float) -> float:
    try:
        return math.sqrt(2.0 * k * -math.log(delta_prime)) * eps0 + k * eps0 * math.expm1(eps0)
    except OverflowError:  # e^{ε₀} beyond a double: the bound is vacuous
        return math.inf


def advanced_composition(epsilon, delta, k, delta_prime) -> tuple[float, float]:
    """k-fold adaptive composition of (ε₀, δ₀)-DP mechanisms (Dwork–Roth Thm 3.20).

    Returns (√(2k ln(1/δ')) ε₀ + k ε₀ (e^{ε₀} − 1), k δ₀ + δ').
    ``epsilon`` = ε₀ ≥ 0, ``delta`` = δ₀ ∈ [0, 1], ``k`` ≥ 1 an integer,
    ``delta_prime`` = δ' ∈ (0, 1).
    """
    eps0 = check_scalar(epsilon, "epsilon", low=0.0)
    d0 = check_scalar(delta, "delta", low=0.0, high=1.0)
    k = check_scalar(k, "k", low=1, integer=True)
    dp = check_scalar(delta_prime, "delta_prime", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    eps = _advanced_eps(eps0, k, dp)
    if not math.isfinite(eps):
        raise ValueError(f"epsilon={eps0} and k={k} are outside the usable floating-point range: "
                         "the composed epsilon overflows")
    return eps, min(1.0, k * d0 + dp)


def _heterogeneous_eps(eps_list, delta_prime: float) -> float:
    sq = math.fsum(e * e for e in eps_list)
    return math.sqrt(2.0 * -math.log(delta_prime) * sq) + math.fsum(e * math.expm1(e) for e in eps_list)


def heterogeneous_composition(epsilons, delta_prime, deltas=None) -> tuple[float, float]:
    """Adaptive composition of ε_i-DP mechanisms with different ε_i.

    (√(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e^{ε_i} − 1), Σ δ_i + δ') — the proof of
    Dwork–Roth Thm 3.20 with per-mechanism privacy losses (the privacy loss of
    mechanism i has mean ≤ ε_i (e^{ε_i} − 1) and range [−ε_i, ε_i]; Azuma).
    """
    eps = [check_scalar(e, "epsilons", low=0.0) for e in _as_list(epsilons, "epsilons")]
    dp = check_scalar(delta_prime, "delta_prime", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    if deltas is None:
        dsum = 0.0
    else:
        dels = [check_scalar(d, "deltas", low=0.0, high=1.0) for d in _as_list(deltas, "deltas")]
        if len(dels) != len(eps):
            raise ValueError(f"deltas has {len(dels)} entries but epsilons has {len(eps)}")
        dsum = math.fsum(dels)
    with derived_from("epsilons"):
        total = _heterogeneous_eps(eps, dp)
    if not math.isfinite(total):
        raise ValueError("epsilons are outside the usable floating-point range: the composed epsilon overflows")
    return total, min(1.0, dsum + dp)


def compose_pure(epsilon, k, delta) -> tuple[float, float, str]:
    """The better of basic and advanced composition of k adaptive ε₀-DP mechanisms.

    Returns ``(ε, δ, how)``: basic composition (Dwork–Roth Thm 3.16) gives
    (kε₀, 0); advanced composition (Thm 3.20 with δ' = δ) gives
    (√(2k ln(1/δ))ε₀ + kε₀(e^{ε₀} − 1), δ).  The smaller ε is returned, with
    ``how`` = ``"basic"`` or ``"advanced"``; δ = 0 allows only basic composition.
    """
    eps0 = check_scalar(epsilon, "epsilon", low=0.0)
    k = check_scalar(k, "k", low=1, integer=True)
    delta = check_delta(delta)
    basic = k * eps0
    adv = _advanced_eps(eps0, k, delta) if delta > 0.0 else math.inf
    if not math.isfinite(min(basic, adv)):
        raise ValueError(f"epsilon={eps0} and k={k} are outside the usable floating-point range: "
                         "the composed epsilon overflows")
    if basic <= adv:
        return basic, 0.0, "basic"
    return adv, delta, "advanced"


def _basic_share(eps: float, k: int) -> float:
    """The largest ε₀ with k·ε₀ ≤ ε in floating point (ε/k, or one ulp below)."""
    eps0 = eps / k
    while k * eps0 > eps:
        eps0 = math.nextafter(eps0, 0.0)
    return eps0


def pure_share(epsilon, delta, k) -> tuple[float, str]:
    """The largest ε₀ such that k adaptive ε₀-DP mechanisms are (ε, δ)-DP.

    The larger of the basic-composition share (kε₀ ≤ ε, Dwork–Roth Thm 3.16)
    and the root of √(2k ln(1/δ))·ε₀ + kε₀(e^{ε₀} − 1) = ε (advanced
    composition, Thm 3.20 with δ' = δ; δ > 0 only), taken on the side that
    keeps the composed ε ≤ ε.  Returns ``(ε₀, how)`` with ``how`` the theorem
    that allows it (``"advanced"`` only when it beats basic composition).
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_scalar(k, "k", low=1, integer=True)
    eps0, how = _basic_share(eps, k), "basic"
    if delta > 0.0:
        with derived_from("epsilon, delta and k"):
            adv = _solve_increasing(lambda e0: _advanced_eps(e0, k, delta), eps, 1e-3 * eps / k, eps)
        if adv > eps0:
            eps0, how = adv, "advanced"
    return eps0, how


# ---------------------------------------------------------------------------
# Monotone root finding
# ---------------------------------------------------------------------------
def _solve_increasing(f, target: float, lo: float, hi: float, *, upper: bool = False) -> float:
    """The x in (lo, hi) with f(x) = target, f increasing; a bracketing solver in log x.

    The bracket [lo, hi] always keeps f(lo) ≤ target < f(hi) and shrinks
    until lo and hi are adjacent floats (or within 4 ulps).  Each step tries
    the false-position point in log x (Illinois variant: an endpoint kept
    twice has its distance to the target halved, so neither side stalls),
    and bisects in log x whenever the bracket failed to halve over the last
    two steps — so it never takes more steps than bisection's ~2·log2 of
    the bracket, and typically 15–30 evaluations instead of 60–120.
    Returns the largest evaluated x with f(x) ≤ target (``upper=False``:
    the side that keeps a privacy loss below its budget when f is the loss
    of a noise parameter x) or the smallest with f(x) > target
    (``upper=True``: the side that never under-reports a spent ε).  An f
    that overflows counts as +inf (e.g. e^ε for an absurd ε).
    """
    def g(x):
        try:
            return f(x)
        except OverflowError:
            return math.inf

    fhi = g(hi)
    while fhi <= target:
        hi *= 2.0
        if hi > 1e300:
            raise ArithmeticError("calibration did not bracket a root")
        fhi = g(hi)
    flo = g(lo)
    while flo > target:
        lo /= 2.0
        if lo < 1e-300:
            raise ArithmeticError("calibration did not bracket a root")
        flo = g(lo)
    # Effective endpoint values for the false-position step (Illinois halving).
    elo, ehi = flo - target, fhi - target
    last = None  # the endpoint the previous step replaced
    widths = [math.inf, math.inf]  # bracket widths (log x) one and two steps back
    for _ in range(400):
        width = math.log(hi / lo)
        x = math.sqrt(lo * hi)
        if not lo < x < hi or hi - lo <= 4.0 * math.ulp(lo):
            break
        if width <= 0.5 * widths[0] and math.isfinite(elo) and math.isfinite(ehi) and ehi > elo:
            t = -elo / (ehi - elo)
            xf = lo * math.exp(t * width)
            if lo < xf < hi:
                x = xf
        widths = [widths[1], width]
        fx = g(x)
        if fx <= target:
            lo, elo = x, fx - target
            if last == "lo":  # hi kept twice: halve its weight
                ehi *= 0.5
            last = "lo"
        else:
            hi, ehi = x, fx - target
            if last == "hi":
                elo *= 0.5
            last = "hi"
    return hi if upper else lo


def _round_scale_up(scale: float, eps_of_scale, epsilon: float) -> float:
    """Smallest float ≥ ``scale`` whose evaluated privacy loss is ≤ ε.

    A scale computed as Δ/ε (or from a solved root) can, once the loss is
    recomputed from it, overshoot ε by an ulp; stepping the scale up by ulps
    makes the reported ε never exceed the requested one.
    """
    for _ in range(1000):
        if eps_of_scale(scale) <= epsilon:
            return scale
        scale = math.nextafter(scale, math.inf)
    raise ArithmeticError("calibration could not meet the budget to rounding")  # pragma: no cover


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


# ---------------------------------------------------------------------------
# Gaussian: exact μ-GDP accounting
# ---------------------------------------------------------------------------
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT2 = math.sqrt(2.0)


def _log_ndtr(x: float) -> float:
    """log Φ(x), accurate in the far left tail where Φ underflows."""
    if x > -36.0:
        return math.log(0.5 * math.erfc(-x / _SQRT2))
    # Asymptotic expansion Φ(x) = φ(x)/|x| · (1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸ − …);
    # at x ≤ −36 the truncation error is below 1e-14 relative (and erfc,
    # accurate above, would soon underflow).
    x2 = x * x
    series = 1.0 - 1.0 / x2 + 3.0 / x2**2 - 15.0 / x2**3 + 105.0 / x2**4 - 945.0 / x2**5
    return -0.5 * x2 - math.log(-x) - _LOG_SQRT_2PI + math.log(series)


def gaussian_delta(mu, epsilon) -> float:
    """δ(ε) of a μ-GDP mechanism: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

    Dong–Roth–Su (2022) Cor. 2.13; exact (it is the tight privacy profile of
    the Gaussian mechanism, Balle & Wang 2018 Thm 8).
    """
    mu = check_positive(mu, "mu")
    eps = check_scalar(epsilon, "epsilon", low=0.0)
    return _gaussian_delta(mu, eps)


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)
GAUSSIAN_EPSILON_CAP = 1e4
_MACH_EPS = 2.0**-52


def _ndtr_diff(mid: float, half: float) -> float:
    """Φ(mid + half) − Φ(mid − half), half ≥ 0, to a few ulps relative, also when tiny.

    Taking the interval as centre and half-width matters: forming a − b from
    two rounded endpoints would lose the digits of a short interval.
    Reflected so that the interval's centre is ≤ 0; when the two masses differ
    by a factor > e^½ the difference is Φ(a)·(1 − e^{logΦ(b) − logΦ(a)})
    with expm1; otherwise the interval is short on the density's scale and a
    16-point Gauss–Legendre rule on φ is exact to rounding.
    """
    if mid > 0.0:
        mid = -mid
    a, b = mid + half, mid - half
    la, lb = _log_ndtr(a), _log_ndtr(b)
    r = lb - la
    if r < -0.5:
        return -math.exp(la) * math.expm1(r)
    x = mid + half * _GL_NODES
    return float(half * np.dot(_GL_WEIGHTS, np.exp(-0.5 * x * x))) / math.sqrt(2.0 * math.pi)


def _gaussian_delta_terms(mu: float, eps: float) -> tuple[float, float, float]:
    """δ(ε) = [Φ(a) − Φ(b)] − (e^ε − 1)Φ(b), a, b = −ε/μ ± μ/2: (term1, term2, error bound).

    Written this way the cancellation of Φ(a) against e^ε Φ(b) is confined to
    one subtraction of two accurately computed terms.  Each term is an exp of
    a sum of logs, so its relative error is a few ulps times the magnitude of
    those logs; the returned bound (8 ulps per unit of log magnitude) covers
    it with room, and the certified solvers below add it to δ.
    """
    mid, half = -eps / mu, mu / 2.0
    b = mid - half
    diff = _ndtr_diff(mid, half)
    lb = _log_ndtr(b)
    scale_d = 2.0 + abs(_log_ndtr(-abs(mid) + half)) + abs(_log_ndtr(-abs(mid) - half)) + abs(mid)
    if eps == 0.0:
        return diff, 0.0, 8.0 * _MACH_EPS * diff * scale_d
    log_expm1 = eps + math.log1p(-math.exp(-eps)) if eps > 1.0 else math.log(math.expm1(eps))
    t = math.exp(log_expm1 + lb)
    err = 8.0 * _MACH_EPS * (diff * scale_d + t * (2.0 + eps + abs(lb) + abs(b)))
    return diff, t, err


def _gaussian_delta(mu: float, eps: float) -> float:
    # Unchecked twin for the solvers below, which call it ~100 times per solve.
    d, t, _ = _gaussian_delta_terms(mu, eps)
    return max(0.0, d - t)


def _gaussian_delta_upper(mu: float, eps: float) -> float:
    """δ(ε; μ) plus a bound on its evaluation error."""
    d, t, err = _gaussian_delta_terms(mu, eps)
    return (d - t) + err


def gaussian_epsilon(mu, delta) -> float:
    """Smallest ε with δ(ε) ≤ δ for a μ-GDP mechanism (δ(ε) is decreasing in ε).

    Rounded up: the returned ε satisfies δ(ε) ≤ δ even after the evaluation
    error of δ(ε) is accounted for, so it never under-reports.
    """
    mu = check_positive(mu, "mu")
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: a Gaussian mechanism is not (ε, 0)-DP for any finite ε")
    return _gaussian_epsilon(mu, delta)


# The Gaussian solvers are pure functions of public floats, called with the same
# arguments at every fit of the same configuration (cross-validation, repeated
# seeds): their results are kept.
@functools.lru_cache(maxsize=1024)
def _gaussian_epsilon(mu: float, delta: float) -> float:
    if _gaussian_delta_upper(mu, 0.0) <= delta:
        return 0.0
    if not mu * mu < 1e300:
        raise ValueError(f"mu={mu} is outside the usable floating-point range (no finite epsilon)")
    # -δ(ε) is increasing in ε; take the side where δ(ε) ≤ δ, with the error bound.
    return _solve_increasing(lambda e: -_gaussian_delta_upper(mu, e), -delta, 1e-12,
                             max(1.0, mu * mu + 2 * mu), upper=True)


def gaussian_mu(epsilon, delta) -> float:
    """Largest μ such that μ-GDP implies (ε, δ)-DP (δ(ε; μ) is increasing in μ).

    Certified: δ(ε; μ) plus its evaluation-error bound is ≤ δ at the returned μ.
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0 for Gaussian noise (μ-GDP gives δ(ε) > 0 for every ε)")
    # Beyond ε = 1e4 (no privacy to speak of) calibrate for 1e4: more noise than
    # needed, so still (ε, δ)-DP, and the tail functions stay in range.
    return _gaussian_mu(min(eps, GAUSSIAN_EPSILON_CAP), delta)


@functools.lru_cache(maxsize=1024)
def _gaussian_mu(eps: float, delta: float) -> float:
    return _solve_increasing(lambda m: _gaussian_delta_upper(m, eps), delta, 1e-3, 1.0)


def calibrate_gaussian(l2_sensitivity, steps, epsilon, delta) -> float:
    """σ for T adaptive Gaussian releases of L2 sensitivity Δ₂ to be (ε, δ)-DP.

    T steps of N(0, σ²) noise are exactly μ-GDP with μ = √T·Δ₂/σ (Dong–Roth–
    Su Thm 2.7 and Cor. 3.3); μ is the largest with δ(ε; μ) ≤ δ
    (:func:`gaussian_mu`), so σ = √T·Δ₂/μ, rounded up so that the μ recomputed
    from σ still meets δ.  No slack beyond rounding: :func:`gaussian_delta` at
    the returned σ equals δ to ~1e-12 relative.
    """
    sens = check_positive(l2_sensitivity, "l2_sensitivity")
    steps = check_scalar(steps, "steps", low=1, integer=True)
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    return _calibrate_gaussian(sens, steps, eps, delta)


@functools.lru_cache(maxsize=1024)
def _calibrate_gaussian(sens: float, steps: int, eps: float, delta: float) -> float:
    mu = gaussian_mu(eps, delta)
    eps = min(eps, GAUSSIAN_EPSILON_CAP)
    root_t = math.sqrt(steps)
    sigma = check_derived(root_t * sens / mu, "sigma", "l2_sensitivity, steps, epsilon and delta")
    if not math.isfinite(root_t * sens):
        raise ValueError("l2_sensitivity and steps are outside the usable floating-point range")
    for _ in range(1000):
        if _gaussian_delta_upper(root_t * sens / sigma, eps) <= delta:
            break
        sigma = math.nextafter(sigma, math.inf)
    return sigma


# ---------------------------------------------------------------------------
# Zero-concentrated DP (the discrete Gaussian of secure mode)
# ---------------------------------------------------------------------------
def _zcdp_log_delta(rho: float, eps: float, alpha: float) -> float:
    return ((alpha - 1.0) * (alpha * rho - eps) + alpha * math.log1p(-1.0 / alpha)
            - math.log(alpha - 1.0))


def zcdp_delta(rho, epsilon) -> float:
    """δ such that ρ-zCDP implies (ε, δ)-DP.

    Canonne, Kamath & Steinke 2020 (arXiv:2004.00010, §2.3, the conversion from
    concentrated to approximate DP): for every α > 1, ρ-zCDP implies (ε, δ)-DP
    with δ = exp((α−1)(αρ−ε))/(α−1) · (1 − 1/α)^α.  Every α gives a valid δ,
    so the minimisation over α (golden section on log δ, from the bracket
    α ∈ (1, (ε+1)/(2ρ) + 2]) only has to be good, not exact; the value returned
    is the formula at the α found, raised by a relative 1e-9 to cover the
    rounding of its few floating-point operations.
    """
    rho = check_scalar(rho, "rho", low=0.0)
    eps = check_scalar(epsilon, "epsilon", low=0.0)
    if rho == 0.0:
        return 0.0
    lo, hi = 1.0 + 1e-9, (eps + 1.0) / (2.0 * rho) + 2.0
    f = lambda a: _zcdp_log_delta(rho, eps, a)  # noqa: E731
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo + (1 - g) * (hi - lo), lo + g * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(200):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = lo + (1 - g) * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = f(b)
    best = min(fa, fb)
    if best >= 0.0:  # δ ≥ 1 (a huge ρ): the trivial bound, without overflowing exp
        return 1.0
    # ρ > 0 is never (ε, 0)-DP: a δ below the smallest float is reported as that
    # float, not as 0 (exp underflows below ~1e-308).
    return min(1.0, max(math.ulp(0.0), math.exp(best + 1e-9 * (1.0 + abs(best)))))


def zcdp_rho(epsilon, delta) -> float:
    """Largest ρ for which :func:`zcdp_delta` (ρ, ε) ≤ δ (bisection; δ increases with ρ)."""
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: zCDP gives (ε, 0)-DP for no finite ε")
    eps = min(eps, GAUSSIAN_EPSILON_CAP)
    return _solve_increasing(lambda r: zcdp_delta(r, eps), delta, 1e-6, 1.0)


# ---------------------------------------------------------------------------
# Noisy gradient steps (noisy projected gradient descent, Stemmer lecture 10)
# ---------------------------------------------------------------------------
STEP_NOISES = ("laplace", "gaussian")
STEP_CALIBRATIONS = ("pure", "coordinate", "l2")


@dataclass(frozen=True)
class StepCalibration:
    """The float noise of T noisy gradient releases, each of L2 sensitivity Δ₂.

    The interface shared with :class:`fasterm.secure.SecureCalibration`:
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
    _sgd_epsilon.cache_clear()
    _calibrate_sgd_sigma.cache_clear()


# ---------------------------------------------------------------------------
# Budget accountant
# ---------------------------------------------------------------------------
class BudgetExceededError(ValueError):
    """A spend that would take the accountant past its total budget."""


@dataclass
class BudgetAccountant:
    """Tracks (ε, δ) spent under basic composition and refuses to overspend.

    ``spend(epsilon, delta)`` records a mechanism's cost, or raises
    :class:`BudgetExceededError` (a ValueError) and records nothing if the
    running totals Σε_i, Σδ_i (Dwork–Roth Thm 3.16, valid for adaptive use)
    would exceed the totals.  Sums are exact (``math.fsum``) and compared with a
    relative slack of 1e-12, so a budget split in ten spends of ε/10 fits.
    """

    epsilon: float
    delta: float = 0.0
    history: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        self.epsilon = check_positive(self.epsilon, "epsilon", allow_inf=True)
        self.delta = check_scalar(self.delta, "delta", low=0.0, high=1.0)

    @property
    def spent(self) -> tuple[float, float]:
        return (math.fsum(e for e, _, _ in self.history), math.fsum(d for _, d, _ in self.history))

    @property
    def remaining(self) -> tuple[float, float]:
        e, d = self.spent
        return (max(0.0, self.epsilon - e), max(0.0, self.delta - d))

    def check(self, epsilon, delta=0.0) -> bool:
        """Whether a spend of (ε, δ) would fit, without recording it."""
        eps = check_scalar(epsilon, "epsilon", low=0.0)
        dl = check_scalar(delta, "delta", low=0.0, high=1.0)
        e, d = self.spent
        fits_e = math.fsum([e, eps]) <= self.epsilon * (1.0 + 1e-12)
        fits_d = math.fsum([d, dl]) <= self.delta * (1.0 + 1e-12)
        return fits_e and fits_d

    def spend(self, epsilon, delta=0.0, label: str | None = None) -> None:
        """Record a spend, or raise BudgetExceededError and record nothing."""
        if not self.check(epsilon, delta):
            e, d = self.spent
            raise BudgetExceededError(
                f"spending (epsilon={float(epsilon)}, delta={float(delta)}) would exceed the budget "
                f"(epsilon={self.epsilon}, delta={self.delta}); already spent ({e}, {d})"
            )
        self.history.append((float(epsilon), float(delta), label))


# ---------------------------------------------------------------------------
# Rényi DP of the Poisson-subsampled Gaussian (noisy minibatch SGD)
# ---------------------------------------------------------------------------
#: The integer Rényi orders the SGD accountant optimises over (for replace-one
#: neighbours it also evaluates the add/remove RDP at 2α − 1 and 2α).
RDP_ORDERS = tuple(range(2, 65)) + tuple(range(72, 257, 8))


@functools.lru_cache(maxsize=8)
def _log_binomials(orders: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(log C(α, k) with −inf for k > α, k) for the orders α: the σ- and q-free part of A_α."""
    a = np.asarray(orders, dtype=np.float64)[:, None]
    k = np.arange(int(a.max()) + 1, dtype=np.float64)
    # log m! for m = 0 … max α, exactly as math.lgamma gives it (numpy has no lgamma).
    log_fact = np.array([math.lgamma(m + 1.0) for m in range(k.size)])
    ai, ki = a.astype(np.intp), k.astype(np.intp)
    lb = log_fact[ai] - log_fact[ki][None, :] - log_fact[np.maximum(ai - ki, 0)]
    return np.where(k[None, :] <= a, lb, -np.inf), k


def _rdp_sampled_gaussian_int(q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """A_α for integer α ≥ 2 (Mironov, Talwar & Zhang 2019, §3.3), vectorised.

    A_α = (1/(α−1)) log Σ_{k=0}^{α} C(α, k) (1−q)^{α−k} q^k exp((k² − k)/(2σ²)),
    the Rényi divergence of order α between (1−q)N(0, σ²) + qN(1, σ²) and
    N(0, σ²) — the Poisson-subsampled Gaussian of noise multiplier σ
    (sensitivity 1), which bounds both directions of add/remove neighbours
    (their Thm. 5).  Every term is positive: summed in log space, exactly.
    """
    orders = np.asarray(orders, dtype=np.float64)
    if q == 1.0:  # no subsampling: the Gaussian mechanism, α/(2σ²)
        return orders / (2.0 * sigma * sigma)
    log_binom, k = _log_binomials(tuple(orders.tolist()))
    a = orders[:, None]
    terms = log_binom + (a - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2.0 * sigma * sigma)
    top = terms.max(axis=1)  # k = 0 is finite, so top is finite unless a term overflowed to +inf
    with np.errstate(invalid="ignore", over="ignore"):
        total = top + np.log(np.exp(terms - top[:, None]).sum(axis=1))
    return np.where(np.isfinite(top), total, np.inf) / (orders - 1.0)


def _check_sgd_inputs(sample_rate, noise_multiplier, steps):
    q = check_scalar(sample_rate, "sample_rate", low=0.0, high=1.0, low_inclusive=False)
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    steps = check_scalar(steps, "steps", low=1, integer=True)
    return q, sigma, steps


def _check_neighbors(neighbors):
    if neighbors not in ("replace_one", "add_remove"):
        raise ValueError(f"neighbors must be 'replace_one' or 'add_remove', got {neighbors!r}")
    return neighbors


def rdp_subsampled_gaussian(sample_rate, noise_multiplier, steps, orders=RDP_ORDERS) -> np.ndarray:
    """RDP ε(α) of ``steps`` Poisson-subsampled Gaussian releases, add/remove neighbours.

    Each release is Σ_{i∈B} g_i + N(0, σ²c²I) with B a Poisson sample (each
    row independently with probability q = ``sample_rate``), ‖g_i‖ ≤ c and
    σ = ``noise_multiplier``.  Per release, for integer α ≥ 2, Mironov, Talwar
    & Zhang (2019, §3.3, Thm. 5) give ε(α) = A_α (see the code); T adaptive
    releases compose to T·A_α (Mironov 2017, Prop. 1).  ``orders`` must be
    integers ≥ 2.  Returns an array of ε(α), one per order.
    """
    q, sigma, steps = _check_sgd_inputs(sample_rate, noise_multiplier, steps)
    orders = np.asarray(orders)
    if orders.ndim != 1 or orders.size == 0 or orders.dtype.kind not in "iuf" or not np.all(
            (orders == np.floor(orders)) & (orders >= 2) & (orders <= 100_000)):
        raise ValueError("orders must be a non-empty 1-d sequence of integers in [2, 100000]")
    with derived_from("sample_rate, noise_multiplier and steps"):
        rdp = steps * _rdp_sampled_gaussian_int(q, sigma, orders.astype(np.float64))
    if not np.all(np.isfinite(rdp)):
        raise ValueError("sample_rate, noise_multiplier and steps are outside the usable floating-point "
                         "range: the Rényi DP overflows (noise_multiplier too small)")
    return rdp


def rdp_epsilon(rdp, orders, delta) -> float:
    """The smallest ε over the orders for which (α, ε(α))-RDP gives (ε, δ)-DP.

    Balle, Barthe, Gaboardi, Hsu & Sato (2020, Thm. 21): (α, ρ)-RDP implies
    (ρ + log((α−1)/α) − (log δ + log α)/(α − 1), δ)-DP (also Canonne, Kamath
    & Steinke 2020, Prop. 12).  Every order gives a valid ε; the minimum is
    returned (at least 0).
    """
    rdp = np.asarray(rdp, dtype=np.float64)
    orders = np.asarray(orders, dtype=np.float64)
    if rdp.shape != orders.shape or rdp.ndim != 1 or rdp.size == 0:
        raise ValueError("rdp and orders must be 1-d arrays of the same non-zero length")
    if not np.all(orders > 1.0) or np.isnan(rdp).any() or np.any(rdp < 0):
        raise ValueError("orders must be > 1 and rdp values >= 0 (not NaN)")
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: Rényi DP gives (ε, 0)-DP for no finite ε")
    return _rdp_to_eps(rdp, orders, delta)


def _rdp_to_eps(rdp, orders, delta):
    eps = rdp + np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)
    best = float(np.min(eps))
    # A few flops of rounding on a quantity of size |log δ|: report it rounded up.
    return max(0.0, best + 1e-12 * (1.0 + abs(best) + abs(math.log(delta))))


@functools.lru_cache(maxsize=1024)
def _sgd_rdp(q: float, sigma: float, steps: int, neighbors: str) -> tuple[np.ndarray, np.ndarray]:
    orders = np.asarray(RDP_ORDERS, dtype=np.float64)
    if neighbors == "add_remove":
        return orders, steps * _rdp_sampled_gaussian_int(q, sigma, orders)
    # Replace-one: D and D' differ in row i; D⁻ = D without row i is an add/remove
    # neighbour of both.  Mironov (2017, Prop. 11, weak triangle inequality, p = q = 2):
    # D_α(P‖R) ≤ (α − 1/2)/(α − 1)·D_{2α}(P‖Q) + D_{2α−1}(Q‖R), applied to the T-fold
    # compositions P = M(D), Q = M(D⁻), R = M(D'); both terms are add/remove RDPs.
    double = np.concatenate([2.0 * orders, 2.0 * orders - 1.0])
    a_all = steps * _rdp_sampled_gaussian_int(q, sigma, double)
    a_2a, a_2a1 = a_all[:orders.size], a_all[orders.size:]
    return orders, (orders - 0.5) / (orders - 1.0) * a_2a + a_2a1


# ---------------------------------------------------------------------------
# Privacy loss distribution of the Poisson-subsampled Gaussian, replace-one
# ---------------------------------------------------------------------------
# The accountant below is numpy only.  Its four steps, and the theorem behind each:
#
# 1. Dominating pair (one step).  A step releases Σ_{j∈B} g_j + N(0, σ²c²I), B a
#    Poisson sample of rate q, ‖g_j‖ ≤ c.  Neighbours D, D' differ in row i, whose
#    clipped gradient is u in D and v in D'; the other rows' contribution is common
#    to both, so by joint convexity of the hockey-stick divergence H_α(P‖Q) =
#    sup_S P(S) − αQ(S) it suffices to bound, in units of c,
#    H_α((1−q)N(0,σ²I) + qN(u,σ²I) ‖ (1−q)N(0,σ²I) + qN(v,σ²I)).  Its supremum over
#    ‖u‖, ‖v‖ ≤ 1 is attained at u = −v, ‖u‖ = 1, i.e. by the one-dimensional pair
#        P = (1−q)N(0,σ²) + qN(1,σ²),   Q = (1−q)N(0,σ²) + qN(−1,σ²)
#    — the pair of Google's dp-accounting for NeighboringRelation.REPLACE_ONE
#    (AdjacencyType.REPLACE with sensitivity 1: Doroshenko, Ghazi, Kamath, Kumar &
#    Manurangsi 2022, and the "substitution" relation of Zhu, Dong & Wang 2022).
#    For antipodal u = −v, ‖u‖ ≤ 1 it is exact (the d-dimensional pair is the
#    1-D pair along u, post-processed by adding independent noise orthogonal to u,
#    and shrinking ‖u‖ is a post-processing too); tests/test_pld.py checks the
#    supremum over all u, v in one and two dimensions by numerical integration.
#    P and Q are mirror images (P(x) = Q(−x)), so the privacy loss L = log P/Q has
#    the same law under P as −L under Q: one ordering of the pair suffices.
#    Add/remove neighbours (D' = D plus a row): the pair is ((1−q)N(0,σ²) + qN(1,σ²),
#    N(0,σ²)) in the order "remove" and its reverse "add" (the standard DP-SGD pair;
#    dp-accounting's ADD_OR_REMOVE_ONE); the pair of data sets is the same at every
#    step, so each ordering composes on its own and the ε reported is the larger.
# 2. Composition.  Dominating pairs compose: if (P_t, Q_t) dominates step t for
#    every adaptive choice, (⊗P_t, ⊗Q_t) dominates the composition (Zhu, Dong &
#    Wang 2022, "Optimal accounting of differential privacy via characteristic
#    function", Thm. 10), and H_α(⊗P_t‖⊗Q_t) = E[(1 − α e^{−ΣL_t})_+] + P(ΣL_t = ∞)
#    with L_t i.i.d. from the privacy loss distribution (PLD) of one step under P:
#    the T-fold convolution of the PLD (Koskela, Jälkö & Honkela 2020; Meiser &
#    Mohammadi 2018), computed here by FFT and repeated squaring.
# 3. Pessimistic discretisation ("connect the dots", Doroshenko et al. 2022): on
#    the loss grid ε_k = k·h, P-mass at a loss l ∈ (ε_k, ε_{k+1}] is split between
#    ε_k and ε_{k+1} with weights a = (e^{−l} − e^{−ε_{k+1}})/(e^{−ε_k} − e^{−ε_{k+1}})
#    and 1 − a.  For each l, α ↦ (1 − α e^{−l})_+ is convex, and the split replaces
#    it by its piecewise-linear interpolation at the nodes α = e^{ε_j}, which lies
#    above it; the split keeps each bin's P-mass and its Q-mass ∫e^{−l}dP, so the
#    discrete pair is a pair of (sub-)probability distributions whose H_α is ≥ the
#    true one for every α ≥ 0: it dominates (P, Q).  Loss mass below ε_{−K} is
#    moved up to ε_{−K}, mass above ε_K to +∞ (both only raise H_α).
# 4. Numerical error, always towards more privacy loss: any step that moves mass
#    to a larger loss, or adds mass at +∞, can only raise δ(ε) = E[(1 − e^{ε−L})_+]
#    (a non-decreasing function of L), before or after further convolutions.  Each
#    FFT convolution's rounding error is bounded in ℓ1 by the radix-2 FFT error
#    bound (Higham 2002, "Accuracy and Stability of Numerical Algorithms", Thm. 24.2,
#    with a ×2 margin), and that bound is added at +∞; tails whose mass is below
#    it are moved up (lower tail) or to +∞ (upper tail); entries made negative by
#    rounding are set to zero (covered by the same bound).
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)
_UNIT_ROUNDOFF = float(np.finfo(np.float64).eps) / 2.0
#: Standard-normal quantile beyond which one step's loss mass is sent to +∞ (Φ̄ ≈ 1e-21).
_PLD_TAIL_Z = 9.5
#: Below this δ the calibration uses the Rényi-DP bound alone: the
#: PLD's numerical-error allowance at +∞ (~1e-12 to 1e-10) would be a sizeable
#: part of δ.  (sgd_epsilon still reports the smaller of the two bounds.)
_PLD_MIN_DELTA = 1e-9
#: Largest loss grid (points per step) the accountant builds before it gives up
#: and lets the RDP bound stand alone (absurdly small σ or huge T).
_PLD_MAX_POINTS = 2_000_000


def _pld_grid_step(steps: int) -> float:
    """Loss-grid spacing h for a T-step composition: min(0.01, 0.05/√T).

    Connect-the-dots errs by O(h²) per step (the interpolation of a convex
    function), so the T-fold error is O(T·h²): this h keeps it near 0.0025·c
    in ε, well inside the 5% on σ the calibration promises (measured in
    tests/test_pld.py against dp-accounting at a 1e-4 grid).
    """
    return min(0.01, 0.05 / math.sqrt(steps))


def _pld_loss(x, q: float, sigma: float):
    """L(x) = log P(x)/Q(x) for the replace-one pair: increasing and odd in x."""
    log_q = math.log(q)
    log_1q = math.log1p(-q) if q < 1.0 else -math.inf
    c = 1.0 / (2.0 * sigma * sigma)
    return np.logaddexp(log_1q, log_q + (2.0 * x - 1.0) * c) - np.logaddexp(log_1q, log_q + (-2.0 * x - 1.0) * c)


def _pld_loss_inverse(loss, q: float, sigma: float):
    """The x with L(x) = loss (closed form: a quadratic in t = e^{x/σ²})."""
    loss = np.asarray(loss, dtype=np.float64)
    a = np.abs(loss)
    b = (1.0 - q) * np.expm1(a)
    log_shift = -1.0 / (2.0 * sigma * sigma)  # log e^{−1/(2σ²)}
    root = b + np.hypot(b, 2.0 * q * np.exp(log_shift + 0.5 * a))
    return np.sign(loss) * sigma * sigma * (np.log(root) - math.log(2.0 * q) - log_shift)


def _normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _pld_pair(kind: str, q: float, sigma: float):
    """(P's mixture weights {mean: weight}, L, L⁻¹, x_lo, x_hi) of one step's dominating pair.

    x is oriented so that the privacy loss L(x) = log P(x)/Q(x) increases.
    ``"replace"``: P = (1−q)N(0,σ²) + qN(1,σ²), Q = (1−q)N(0,σ²) + qN(−1,σ²).
    ``"remove"``: P = (1−q)N(0,σ²) + qN(1,σ²), Q = N(0,σ²);
    ``"add"``: P = N(0,σ²), Q = (1−q)N(0,σ²) + qN(−1,σ²) (the mirror image of
    the pair (N(0,σ²), (1−q)N(0,σ²) + qN(1,σ²))) — the two orderings of the
    add/remove dominating pair of the Poisson-subsampled Gaussian (Zhu, Dong &
    Wang 2022, Poisson subsampling; dp-accounting's ``ADD_OR_REMOVE_ONE``;
    the d-dimensional mechanism reduces to it by rotation, and a contribution
    shorter than c is dominated by one of norm c).  [x_lo, x_hi] is where P has all
    but Φ̄(9.5)-tails of its mass.
    """
    log_q = math.log(q)
    log_1q = math.log1p(-q) if q < 1.0 else -math.inf
    c = 1.0 / (2.0 * sigma * sigma)
    z = _PLD_TAIL_Z * sigma
    if kind == "replace":
        return ({0.0: 1.0 - q, 1.0: q}, lambda x: _pld_loss(x, q, sigma),
                lambda l: _pld_loss_inverse(l, q, sigma), -1.0 - z, 1.0 + z)
    if kind == "remove":
        def loss(x):
            return np.logaddexp(log_1q, log_q + (2.0 * x - 1.0) * c)

        def inverse(l):
            with np.errstate(invalid="ignore", divide="ignore"):
                return sigma * sigma * (np.log(np.expm1(l) + q) - log_q) + 0.5
        return {0.0: 1.0 - q, 1.0: q}, loss, inverse, -z, 1.0 + z
    if kind == "add":
        def loss(x):
            return -np.logaddexp(log_1q, log_q + (-2.0 * x - 1.0) * c)

        def inverse(l):
            with np.errstate(invalid="ignore", divide="ignore"):
                return -sigma * sigma * (np.log(np.expm1(-l) + q) - log_q) - 0.5
        return {0.0: 1.0}, loss, inverse, -z, z
    raise ValueError(kind)  # pragma: no cover


def _pld_replace_one_step(q: float, sigma: float, h: float):
    """One replace-one step's discretised PLD (see :func:`_pld_step`)."""
    return _pld_step("replace", q, sigma, h)


def _pld_step(kind: str, q: float, sigma: float, h: float):
    """One step's discretised PLD: (offset, pmf, mass at +∞, h), losses (offset + k)·h.

    Connect-the-dots split (see the notes above) of the P-mass of each bin
    (ε_k, ε_{k+1}] of the loss grid from ε_{k0} = ⌊L(x_lo)/h⌋h to
    ε_{k1} = ⌈L(x_hi)/h⌉h, each bin's integrals ∫p(x)a(L(x))dx computed by
    8-point Gauss–Legendre on pieces no wider than σ/4 (the weights written
    with expm1, so no cancellation).  The P-mass at x below x_lo (all of its
    losses < ε_{k0+1}) is moved up to ε_{k0+1}; the mass above
    min(L⁻¹(ε_{k1}), x_hi) goes to +∞; the total's shortfall from 1
    (quadrature and rounding) and an allowance are added at +∞.  The h
    returned is the one used: h itself, or the loss range/64 when the step's
    losses span fewer than 64 steps of h.  Returns None if the grid would
    exceed :data:`_PLD_MAX_POINTS` or a loss 500.
    """
    comps, loss_fn, inverse, x_lo, x_hi = _pld_pair(kind, q, sigma)
    l_lo, l_hi = float(loss_fn(np.float64(x_lo))), float(loss_fn(np.float64(x_hi)))
    span = l_hi - l_lo
    if not (math.isfinite(span) and max(abs(l_lo), abs(l_hi)) <= 500.0 and span / h <= _PLD_MAX_POINTS):
        return None
    if span < 64.0 * h:  # resolve the step's own loss range with at least 64 grid steps
        h = span / 64.0
    k0, k1 = int(math.floor(l_lo / h)), int(math.ceil(l_hi / h))
    k1 = max(k1, k0 + 1)
    ks = np.arange(k0, k1 + 1)
    edges = inverse(ks * h)  # x at which L = k·h, increasing (undefined beyond L's range)
    # ε_{k0} ≤ L(x_lo) < ε_{k0+1}: the first bin starts at x_lo, and P's mass below x_lo
    # (losses < ε_{k0+1}) goes to ε_{k0+1}; the last bin ends at x_hi at the latest.
    edges[0] = x_lo
    edges[-1] = min(edges[-1], x_hi) if np.isfinite(edges[-1]) else x_hi
    sub = np.union1d(edges, np.arange(edges[0], edges[-1], sigma / 4.0))
    lo, hi = sub[:-1], sub[1:]
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    n_bins = ks.size - 1
    k = np.clip(np.searchsorted(edges, mid) - 1, 0, n_bins - 1)  # bin (ε_k, ε_{k+1}] holding the piece
    x = mid[:, None] + half[:, None] * _GL_NODES[None, :]
    inv = 1.0 / sigma
    dens = sum(w * np.exp(-0.5 * ((x - m) * inv) ** 2) for m, w in comps.items()) * (inv / math.sqrt(2.0 * math.pi))
    upper_loss = ((k + 1 + k0) * h)[:, None]
    lower_share = np.clip(np.expm1(upper_loss - loss_fn(x)) / math.expm1(h), 0.0, 1.0)
    to_lower = (dens * lower_share) @ _GL_WEIGHTS * half
    to_upper = (dens * (1.0 - lower_share)) @ _GL_WEIGHTS * half
    pmf = np.bincount(k, to_lower, minlength=n_bins + 1) + np.bincount(k + 1, to_upper, minlength=n_bins + 1)
    x_first, x_last = float(edges[0]), float(edges[-1])
    pmf[1] += sum(w * _normal_cdf((x_first - m) * inv) for m, w in comps.items())
    inf_mass = sum(w * _normal_cdf(-(x_last - m) * inv) for m, w in comps.items())
    total = math.fsum(pmf.tolist()) + inf_mass
    # The shortfall from 1, plus 1e-12 for the quadrature's per-piece errors (8-point
    # Gauss–Legendre on pieces ≤ σ/4 of a Gaussian integrand errs by ~1e-15 relative;
    # tests/test_pld.py compares it with 16 points) and the rounding of the sums.
    inf_mass += max(0.0, 1.0 - total) + 1e-12 + 64.0 * _UNIT_ROUNDOFF * math.sqrt(pmf.size)
    return k0, pmf, inf_mass, h


def _pld_trim(offset: int, pmf, inf_mass: float, tail: float):
    """Move an upper tail of mass ≤ ``tail`` to +∞ and a lower one up to the first kept point."""
    upper = np.cumsum(pmf[::-1])[::-1]  # upper[j] = Σ_{k ≥ j} pmf[k]
    j = int(np.searchsorted(-upper, -tail))  # first j with upper[j] ≤ tail
    if 0 < j < pmf.size:
        inf_mass += float(upper[j])
        pmf = pmf[:j]
    lower = np.cumsum(pmf)
    i = int(np.searchsorted(lower, tail, side="right"))  # lower[i−1] ≤ tail
    if 0 < i < pmf.size:
        pmf = pmf[i:].copy()
        pmf[0] += lower[i - 1]
        offset += i
    return offset, pmf, inf_mass


def _pld_convolve(a, b):
    """PLD of the composition of two independent steps: linear convolution by FFT.

    Power-of-two length N (no wrap-around); the ℓ1 rounding error is at most
    √N·κ·(‖a‖₂ + ‖b‖₂ + ‖c‖₂) with κ = log₂N·η, η ≈ 7.7u (Higham 2002,
    Thm. 24.2, three transforms and a pointwise product); twice that is added
    at +∞, and the same amount bounds the tails trimmed.
    """
    (oa, pa, ia), (ob, pb, ib) = a, b
    n = pa.size + pb.size - 1
    N = 1 << max(1, (n - 1).bit_length())
    c = np.fft.irfft(np.fft.rfft(pa, N) * np.fft.rfft(pb, N), N)[:n]
    np.maximum(c, 0.0, out=c)
    norms = float(np.linalg.norm(pa) + np.linalg.norm(pb) + np.linalg.norm(c))
    bound = 16.0 * _UNIT_ROUNDOFF * math.log2(N) * math.sqrt(N) * norms
    return _pld_trim(oa + ob, c, ia + ib + bound, bound)


@functools.lru_cache(maxsize=64)
def _sgd_pld(q: float, sigma: float, steps: int, h: float, kind: str = "replace"):
    """(offset, pmf, mass at +∞, h) of T steps of the pair ``kind`` on the grid h·Z, or None.

    None when the grid would be unreasonably large: losses beyond 500 per
    step, or a mean loss T·E[L] above 2000 (then ε is in the thousands; the
    Rényi-DP bound stands alone).
    """
    step = _pld_step(kind, q, sigma, h)
    if step is None:
        return None
    *step, h = step
    mean_loss = float(step[1] @ ((step[0] + np.arange(step[1].size)) * h))
    if steps * mean_loss > 2000.0:
        return None
    result, power, t = None, step, steps
    while True:
        if t & 1:
            result = power if result is None else _pld_convolve(result, power)
        t >>= 1
        if not t:
            break
        power = _pld_convolve(power, power)
        if power[1].size > 4 * _PLD_MAX_POINTS:  # pragma: no cover - absurd T
            return None
    offset, pmf, inf_mass = result
    pmf.setflags(write=False)
    return offset, pmf, inf_mass, h


def _pld_delta(pld, epsilon: float) -> float:
    """δ(ε) = Σ_{l>ε} (1 − e^{ε−l}) p(l) + p(∞) of a discretised PLD (ε ≥ 0)."""
    offset, pmf, inf_mass, h = pld
    losses = (offset + np.arange(pmf.size)) * h
    above = losses > epsilon
    finite = np.minimum(losses[above], epsilon + 700.0)  # e^{ε−l} underflows to 0 beyond
    return math.fsum((pmf[above] * -np.expm1(epsilon - finite)).tolist()) + inf_mass


def _pld_epsilon(pld, delta: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) = Σ_{l>ε}(1 − e^{ε−l}) p(l) + p(∞) ≤ δ (∞ if none).

    δ(ε) is continuous and decreasing; on (ε_{j−1}, ε_j] it equals
    A_j − e^{ε} B_j + p(∞) with A_j = Σ_{k≥j} p_k, B_j = Σ_{k≥j} p_k e^{−ε_k},
    solved in closed form; the result is rounded up by 1e-12·(1 + ε).
    """
    offset, pmf, inf_mass, h = pld
    if inf_mass >= delta:
        return math.inf
    losses = (offset + np.arange(pmf.size)) * h
    far = losses > 600.0  # e^{l} would overflow below: count such losses as +∞
    if far.any():
        inf_mass += math.fsum(pmf[far].tolist())
        if inf_mass >= delta:
            return math.inf
    keep = (losses > 0.0) & ~far
    p, l = pmf[keep], losses[keep]
    if p.size == 0:
        return 0.0
    A = np.cumsum(p[::-1])[::-1]
    B = np.cumsum((p * np.exp(-l))[::-1])[::-1]
    A_next, B_next = np.append(A[1:], 0.0), np.append(B[1:], 0.0)
    at_grid = A_next - np.exp(l) * B_next + inf_mass  # δ(ε_j) for the grid points ε_j > 0
    j = int(np.argmax(at_grid <= delta))
    if at_grid[j] > delta:  # pragma: no cover - the top point carries only p(∞) < δ
        return math.inf
    # ε in (ε_{j−1}, ε_j] (ε_{−1} := 0): A_j − e^ε B_j + p(∞) = δ.
    ratio = (A[j] + inf_mass - delta) / B[j]
    eps = math.log(ratio) if ratio > 1.0 else 0.0
    return eps + 1e-12 * (1.0 + eps)


def sgd_epsilon(sample_rate, noise_multiplier, steps, delta, neighbors="replace_one") -> float:
    """ε for which ``steps`` Poisson-subsampled Gaussian releases are (ε, δ)-DP.

    The smaller of two proven upper bounds.  (1) The privacy-loss-distribution
    accountant of this module: for ``neighbors="replace_one"`` (fasterm's
    relation, the default) the dominating pair (1−q)N(0, σ²) + qN(±1, σ²)
    (dp-accounting's ``REPLACE_ONE``), for ``"add_remove"`` the larger ε of
    the two orderings of ((1−q)N(0, σ²) + qN(1, σ²), N(0, σ²))
    (``ADD_OR_REMOVE_ONE``); discretised pessimistically by connect-the-dots
    (Doroshenko et al. 2022), composed T times by FFT (Koskela, Jälkö &
    Honkela 2020) under the composition theorem for dominating pairs (Zhu,
    Dong & Wang 2022, Thm. 10), every numerical error rounded towards more
    loss.  (2) The Rényi-DP bound: :func:`rdp_subsampled_gaussian` (Mironov,
    Talwar & Zhang 2019) converted by :func:`rdp_epsilon` (Balle et al.
    2020, Thm. 21), for replace-one carried over by Mironov's weak triangle
    inequality (2017, Prop. 11 with p = q = 2:
    ε_rep(α) ≤ (α − ½)/(α − 1)·ε_ar(2α) + ε_ar(2α − 1)).  The PLD bound is
    within about 0.5% of the exact ε and wins wherever δ is not tiny; the RDP
    one only matters for δ ≲ 1e-9 (the PLD's numerical-error allowance,
    ~1e-10 at +∞, is then a large part of δ) or absurdly small σ.
    """
    q, sigma, steps = _check_sgd_inputs(sample_rate, noise_multiplier, steps)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: the subsampled Gaussian is (ε, 0)-DP for no finite ε")
    neighbors = _check_neighbors(neighbors)
    with derived_from("sample_rate, noise_multiplier, steps and delta"):
        eps = _sgd_epsilon(q, sigma, steps, delta, neighbors)
    if not math.isfinite(eps):
        raise ValueError("sample_rate, noise_multiplier, steps and delta are outside the usable "
                         "floating-point range: no finite epsilon (noise_multiplier too small)")
    return eps


def _sgd_epsilon_rdp(q, sigma, steps, delta, neighbors):
    orders, rdp = _sgd_rdp(q, sigma, steps, neighbors)
    if not np.all(np.isfinite(rdp)):
        rdp = np.where(np.isfinite(rdp), rdp, np.inf)
    return _rdp_to_eps(rdp, orders, delta)


def _sgd_epsilon_pld(q, sigma, steps, delta, neighbors="replace_one"):
    """The PLD accountant's ε (∞ if it cannot serve), on a grid fine enough for it.

    Replace-one: the pair ``"replace"``; add/remove: the larger of the ε of
    the pairs ``"remove"`` and ``"add"`` (a neighbouring pair of data sets is
    fixed across the T steps, so each ordering composes on its own, and
    (ε, δ)-DP needs both).

    The grid h = :func:`_pld_grid_step` (T) errs by about T·h²/2 in ε; where
    that exceeds 0.5% of the ε found (small ε over many steps), the PLD is
    recomputed on the grid h' = min(√(0.01·ε/T), ε/20) (at least h/50; also
    when ε < 20h, where a grid step is a large part of ε) and the smaller
    of the two — both valid upper bounds — is returned.
    """
    kinds = ("replace",) if neighbors == "replace_one" else ("remove", "add")
    eps = max(_sgd_epsilon_pld_kind(q, sigma, steps, delta, kind) for kind in kinds)
    # The loss values themselves (grid edges, L(x) at the nodes) are computed to about
    # 1e-14; over T steps that is below 1e-14·T in ε: report ε raised by 1e-9 + 1e-13·T.
    return eps + 1e-9 + 1e-13 * steps


def _sgd_epsilon_pld_kind(q, sigma, steps, delta, kind):
    h = _pld_grid_step(steps)
    pld = _sgd_pld(q, sigma, steps, h, kind)
    eps = math.inf if pld is None else _pld_epsilon(pld, delta)
    if math.isfinite(eps) and (0.5 * steps * h * h > 0.005 * eps or eps < 20.0 * h):
        finer = max(min(math.sqrt(0.01 * eps / steps), eps / 20.0), h / 50.0)
        pld = _sgd_pld(q, sigma, steps, finer, kind)
        if pld is not None:
            eps = min(eps, _pld_epsilon(pld, delta))
    return eps


@functools.lru_cache(maxsize=4096)
def _sgd_epsilon(q, sigma, steps, delta, neighbors):
    return min(_sgd_epsilon_rdp(q, sigma, steps, delta, neighbors),
               _sgd_epsilon_pld(q, sigma, steps, delta, neighbors))


def calibrate_sgd_sigma(sample_rate, steps, epsilon, delta, neighbors="replace_one") -> float:
    """A noise multiplier σ with :func:`sgd_epsilon` (q, σ, T, δ) ≤ ε, at most
    :data:`SGD_SIGMA_RTOL` (1e-4) above the smallest σ the PLD certifies.

    ε(σ) is decreasing in σ; the solve brackets the root in log σ, starting
    from the Rényi-DP σ (which meets the budget, :func:`sgd_epsilon` being
    the smaller of the two bounds), and narrows the bracket by false
    position (Illinois halving) until it is 1e-4 wide.  The σ returned is an
    end that was evaluated to meet the budget, so the ε that
    :func:`sgd_epsilon` reports for it is ≤ ``epsilon``; as that ε bounds
    the true one from above, σ is never below the smallest σ that certifies
    (ε, δ); it is within about 1% of it (tests/test_pld.py checks 5%
    against dp-accounting, both relations).  For δ below 1e-9 the σ is the
    Rényi-DP one.  A pure function of
    public numbers: results are cached; one calibration takes tens of
    milliseconds.
    """
    q = check_scalar(sample_rate, "sample_rate", low=0.0, high=1.0, low_inclusive=False)
    steps = check_scalar(steps, "steps", low=1, integer=True)
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: the subsampled Gaussian is (ε, 0)-DP for no finite ε")
    neighbors = _check_neighbors(neighbors)
    with derived_from("sample_rate, steps, epsilon and delta"):
        return _calibrate_sgd_sigma(q, steps, min(eps, GAUSSIAN_EPSILON_CAP), delta, neighbors)


def _calibrate_sgd_sigma_rdp(q, steps, eps, delta, neighbors):
    # -ε(σ) is increasing in σ: take the smallest σ with ε(σ) ≤ eps, i.e. upper=True.
    f = lambda s: -_sgd_epsilon_rdp(q, s, steps, delta, neighbors)  # noqa: E731
    sigma = _solve_increasing(f, -eps, 0.05, 10.0, upper=True)
    for _ in range(1000):  # the solver's side guarantees it; keep it exact under rounding
        if _sgd_epsilon_rdp(q, sigma, steps, delta, neighbors) <= eps:
            return sigma
        sigma = math.nextafter(sigma, math.inf) * (1 + 1e-12)
    raise ArithmeticError("calibration could not meet the budget")  # pragma: no cover


#: Relative width of the σ bracket at which the replace-one calibration stops.
SGD_SIGMA_RTOL = 1e-4


@functools.lru_cache(maxsize=1024)
def _calibrate_sgd_sigma(q, steps, eps, delta, neighbors):
    sigma = _calibrate_sgd_sigma_pld(q, steps, eps, delta, neighbors)
    if sigma is None:  # δ below the PLD's error allowance, or absurd parameters
        return _calibrate_sgd_sigma_rdp(q, steps, eps, delta, neighbors)
    if eps > 20.0:  # large ε: the PLD's grid limits can make the RDP σ the smaller one
        sigma = min(sigma, _calibrate_sgd_sigma_rdp(q, steps, eps, delta, neighbors))
    return sigma


def _calibrate_sgd_sigma_pld(q, steps, eps, delta, neighbors):
    """Smallest σ (to SGD_SIGMA_RTOL, from above) with the PLD ε ≤ eps, or None.

    g(σ) = log(ε_PLD(σ)/eps) is decreasing and nearly linear in log σ (slope
    about −1 to −2): steps of Δlog σ = g from σ = 1 find a bracket
    [lo, hi] with g(lo) > 0 ≥ g(hi) in a few evaluations, then false
    position in log σ (Illinois halving; trial points kept 2% inside the
    bracket) narrows it.  Returns hi, an evaluated point that meets eps.
    """
    if delta < _PLD_MIN_DELTA:
        return None

    def g(s):
        e = _sgd_epsilon_pld(q, s, steps, delta, neighbors)
        if not math.isfinite(e):  # losses beyond the grid: far too little noise
            return math.inf
        return math.log(e / eps) if e > 0.0 else -math.inf

    # Start from the central-limit approximation (Bu, Dong, Long & Su 2020: the
    # subsampled Gaussian composes to about μ = q√(T(e^{1/σ²} − 1))-GDP under
    # add/remove; replace-one doubles the shift, hence 2q): a guess only.
    try:
        mu = _gaussian_mu(eps, delta)
        shift = 2.0 if neighbors == "replace_one" else 1.0
        start = 1.0 / math.sqrt(math.log1p((mu / (shift * q)) ** 2 / steps))
    except (ArithmeticError, ValueError):  # pragma: no cover - an extreme budget
        start = 1.0
    if not 1e-2 < start < 1e5:
        start = 1.0
    return _pld_solve(g, start)


def _pld_solve(g, start):
    lo = hi = None
    s, gs = start, g(start)
    for _ in range(60):
        if gs > 0.0:
            lo, g_lo = s, gs
        else:
            hi, g_hi = s, gs
        if lo is not None and hi is not None:
            break
        step = min(max(gs, -1.0), 1.0) if math.isfinite(gs) else 1.0
        s *= math.exp(step + (0.05 if step > 0 else -0.05))
        if not 1e-3 < s < 1e6:
            return None
        gs = g(s)
    else:  # pragma: no cover
        return None
    side = 0
    for _ in range(200):
        if hi / lo - 1.0 <= SGD_SIGMA_RTOL:
            break
        x_lo, x_hi = math.log(lo), math.log(hi)
        if math.isfinite(g_lo) and math.isfinite(g_hi) and g_lo > g_hi:
            x = x_lo + g_lo / (g_lo - g_hi) * (x_hi - x_lo)
        else:
            x = 0.5 * (x_lo + x_hi)
        pad = 0.02 * (x_hi - x_lo)
        x = min(max(x, x_lo + pad), x_hi - pad)
        s = math.exp(x)
        gs = g(s)
        if gs <= 0.0:
            hi, g_hi = s, gs
            if side == 1:
                g_lo *= 0.5
            side = 1
        else:
            lo, g_lo = s, gs
            if side == -1:
                g_hi *= 0.5
            side = -1
    return hi


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


def objpert_epsilon(noise_epsilon, curvature, n, regularization, output_epsilon=0.0) -> float:
    """ε of objective perturbation: ε_b + log(1 + c/(nμ)) + ε_out (rounded up).

    The theorem (Chaudhuri, Monteleoni & Sarwate 2011, Thm 9, with the
    determinant bound of Kifer, Smith & Thakurta 2012, Thm 2, for loss
    Hessians of rank one; proof in :mod:`fasterm.objpert`): minimising
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
    rule (n, ε, the loss's curvature bound c): see :mod:`fasterm.objpert`.
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
# Private hyperparameter search: random stopping (Papernot & Steinke 2022)
# ---------------------------------------------------------------------------
#: Real Rényi orders λ over which the search's RDP curve is converted to (ε, δ)
#: (every order gives a valid ε; a fine grid gives the smallest).
SEARCH_ORDERS = np.geomspace(1.0 + 1e-4, 1e6, 4001)


def _check_eta(eta) -> float:
    eta = check_scalar(eta, "eta", low=-1.0, low_inclusive=False)
    if not math.isfinite(eta):
        raise ValueError(f"eta must be finite, got {eta}")
    return eta


def _tnb_expected_runs(eta: float, gamma: float) -> float:
    """E[K] for K ~ D_{η,γ}, the truncated negative binomial distribution (Papernot & Steinke
    2022, Def. 1 and §3): (1/γ − 1)/log(1/γ) for η = 0 (the logarithmic distribution),
    η(1 − γ)/(γ(1 − γ^η)) otherwise (η = 1: the geometric distribution, mean 1/γ)."""
    if eta == 0.0:
        return (1.0 / gamma - 1.0) / -math.log(gamma)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * math.log(gamma)))


def _tnb_gamma(eta: float, expected_runs: float) -> float:
    """The γ ∈ (0, 1) of D_{η,γ} with E[K] = ``expected_runs`` (at least it; E[K] decreases in γ)."""
    return _solve_increasing(lambda g: -_tnb_expected_runs(eta, g) if g < 1.0 else -1.0,
                             -expected_runs, 1e-12, 1.0 - 1e-12)


def _search_epsilon(mu: float, delta: float, eta: float, gamma: float) -> float:
    L = -math.log(gamma)
    # min over λ̂ ≥ 1 of (λ̂ − 1)μ²/2 + L/λ̂ (convex): at λ̂ = √(2L)/μ, or at λ̂ = 1
    if math.sqrt(2.0 * L) >= mu:
        inner = mu * math.sqrt(2.0 * L) - 0.5 * mu * mu
    else:
        inner = L
    lam = SEARCH_ORDERS
    rdp = 0.5 * mu * mu * lam + (1.0 + eta) * inner + math.log(_tnb_expected_runs(eta, gamma)) / (lam - 1.0)
    return _rdp_to_eps(rdp, lam, delta)


def private_search_epsilon(mu, delta, *, eta=0.0, gamma) -> float:
    """ε of the random-stopping search over μ-GDP runs, at δ (Papernot & Steinke 2022, Thm. 2).

    The search draws K ~ D_{η,γ} (the truncated negative binomial distribution;
    η = 0: logarithmic, η = 1: geometric, Liu & Talwar 2019's random stopping),
    runs a mechanism Q K times with fresh randomness and outputs only the run
    with the best score.  **Theorem** (Papernot & Steinke, ICLR 2022, Thm. 2):
    if Q is (λ, ε_λ)-RDP and (λ̂, ε_λ̂)-RDP then the search is (λ, ε′)-RDP with

        ε′ = ε_λ + (1 + η)(1 − 1/λ̂)·ε_λ̂ + (1 + η)·log(1/γ)/λ̂ + log E[K]/(λ − 1)

    for every λ > 1 and λ̂ ≥ 1.  A μ-GDP mechanism is (λ, λμ²/2)-RDP for every
    λ > 1 (its output pair is a post-processing of N(0, 1) and N(μ, 1),
    Dong, Roth & Su 2022, and Rényi divergences obey data processing), so
    (1 − 1/λ̂)ε_λ̂ = (λ̂ − 1)μ²/2, minimised over λ̂ ≥ 1 in closed form
    (λ̂ = √(2 log(1/γ))/μ when that is ≥ 1, value μ√(2 log(1/γ)) − μ²/2; else
    λ̂ = 1, value log(1/γ)).  The RDP curve is converted to (ε, δ) by Balle et
    al. (2020, Thm. 21), :func:`rdp_epsilon`, minimised over the real orders
    :data:`SEARCH_ORDERS`.  E[K] is :func:`_tnb_expected_runs`.  ``eta`` > −1,
    ``gamma`` in (0, 1), ``delta`` in (0, 1).
    """
    mu = check_positive(mu, "mu")
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: Rényi DP gives (ε, 0)-DP for no finite ε")
    eta = _check_eta(eta)
    gamma = check_scalar(gamma, "gamma", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    with derived_from("mu, delta, eta and gamma"):
        eps = check_derived(_search_epsilon(mu, delta, eta, gamma), "epsilon", "mu, delta, eta and gamma")
    return eps


def calibrate_private_search(epsilon, delta, *, eta=0.0, expected_runs) -> tuple[float, float]:
    """(μ, γ) for a random-stopping search with budget (ε, δ): γ such that K ~ D_{η,γ} has
    E[K] ≥ ``expected_runs`` (> 1), and the largest μ (to solver precision) whose
    :func:`private_search_epsilon` (μ, δ, η, γ) is ≤ ε.  Each run of the search may then be
    any μ-GDP mechanism (Papernot & Steinke 2022, Thm. 2; see :func:`private_search_epsilon`).
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: Rényi DP gives (ε, 0)-DP for no finite ε")
    eta = _check_eta(eta)
    runs = check_scalar(expected_runs, "expected_runs", low=1.0, low_inclusive=False)
    if not runs <= 1e12:
        raise ValueError(f"expected_runs must be at most 1e12, got {runs}")
    names = "epsilon, delta, eta and expected_runs"
    with derived_from(names):
        gamma = _tnb_gamma(eta, runs)
        if not 0.0 < gamma < 1.0:  # pragma: no cover - the bracket keeps it inside
            raise ArithmeticError("no gamma for expected_runs")
        eps = min(eps, GAUSSIAN_EPSILON_CAP)
        mu = _solve_increasing(lambda m: _search_epsilon(m, delta, eta, gamma), eps, 1e-6, 1.0)
        mu = check_derived(mu, "mu", names)
    return mu, gamma
