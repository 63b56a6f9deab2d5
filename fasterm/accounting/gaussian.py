"""Gaussian differential privacy and zero-concentrated DP.

* **GDP** (Dong, Roth & Su, *Gaussian Differential Privacy*, JRSS-B 2022): the
  Gaussian mechanism with L2 sensitivity Δ and noise N(0, σ²) is μ-GDP with
  μ = Δ/σ (Thm 2.7); T adaptive μ_t-GDP mechanisms are √(Σμ_t²)-GDP (Cor. 3.3);
  μ-GDP is (ε, δ(ε))-DP with δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
  (Cor. 2.13) — exact, the curve of the analytic Gaussian mechanism (Balle &
  Wang 2018).  :func:`gaussian_delta`, :func:`gaussian_epsilon`,
  :func:`gaussian_mu`, :func:`calibrate_gaussian`.
* **zCDP** (secure mode's discrete Gaussian): ρ-zCDP mechanisms compose to Σρ_t
  (Bun & Steinke 2016, Lemma 2.3), and ρ-zCDP implies (ε, δ)-DP with
  δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1)·(1−1/α)^α (Canonne, Kamath & Steinke
  2020, §2.3): :func:`zcdp_delta`, :func:`zcdp_rho`.

The solvers invert these formulas by bisection in log space to (near) machine
precision, far below the 1e-9 relative accuracy the tests demand.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validation import check_delta, check_derived, check_epsilon, check_positive, check_scalar
from ._solve import _solve_increasing


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
#: The largest ε the Gaussian calibrations (GDP, zCDP, the subsampled Gaussian, private search) accept.
GAUSSIAN_EPSILON_CAP = 1e4
_MACH_EPS = 2.0**-52


def check_gaussian_epsilon(epsilon, name: str = "epsilon") -> float:
    """ε for a Gaussian calibration: finite, > 0 and at most :data:`GAUSSIAN_EPSILON_CAP` (10⁴).

    One maximum for every Gaussian calibration (:func:`gaussian_mu`,
    :func:`calibrate_gaussian`, :func:`zcdp_rho`,
    :func:`fasterm.accounting.calibrate_sgd_sigma`,
    :func:`fasterm.accounting.calibrate_private_search`), up to which their
    solvers are tested.  A larger ε is refused rather than calibrated as 10⁴,
    which would spend less than asked with more noise than needed and report
    10⁴ as the ε spent.  At ε = 10⁴ the guarantee bounds likelihood ratios by
    e^ε, beyond any floating-point number: no privacy to speak of.
    """
    eps = check_epsilon(epsilon, name)
    if not eps <= GAUSSIAN_EPSILON_CAP:
        raise ValueError(f"{name}={eps:g} is above {GAUSSIAN_EPSILON_CAP:g}, the largest epsilon the Gaussian "
                         f"calibrations (delta > 0) accept; at such an epsilon the noise protects no one: pass "
                         f"{name} <= {GAUSSIAN_EPSILON_CAP:g} (or delta=0 with Laplace noise)")
    return eps


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
    eps = check_gaussian_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0 for Gaussian noise (μ-GDP gives δ(ε) > 0 for every ε)")
    return _gaussian_mu(eps, delta)


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
    eps = check_gaussian_epsilon(epsilon)
    delta = check_delta(delta)
    return _calibrate_gaussian(sens, steps, eps, delta)


@functools.lru_cache(maxsize=1024)
def _calibrate_gaussian(sens: float, steps: int, eps: float, delta: float) -> float:
    mu = gaussian_mu(eps, delta)
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
    eps = check_gaussian_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: zCDP gives (ε, 0)-DP for no finite ε")
    return _solve_increasing(lambda r: zcdp_delta(r, eps), delta, 1e-6, 1.0)
