"""Every noise calibration against an independent reference written here from its theorem.

Each reference below is the theorem's formula evaluated in 40-digit
arithmetic (mpmath); none calls fasterm's own ``*_epsilon``/``*_delta``
evaluation, so a bug shared by a calibration and the function that reports
its ε cannot cancel.  For every calibration the checks are:

* honest: the (ε, δ) the theorem gives for the noise actually chosen is
  within the requested budget and not above the reported (ε, δ);
* tight: 10⁻⁶ less noise would break the budget (the calibration is the
  theorem's, not a looser one that a test with slack would also accept).

"Within the budget" allows ``ULPS`` = 10⁻¹⁴ relative: the library certifies
its scales with its formulas evaluated in double precision, and the exact
value of the formula at that scale can exceed ε by an ulp or two (seen for the
"pure" and "l2" Laplace scales: 1.1e-16 relative) — rounding, not a
calibration error; every mutant of a constant or a count is far above it.

Theorems (as stated in Dwork & Roth 2014 unless noted):

* Laplace mechanism (Thm 3.6) + basic composition (Thm 3.16): T releases of
  Lap(b) per coordinate with L1 sensitivity √d·Δ₂ are (T√dΔ₂/b, 0)-DP.
* Advanced composition (Thm 3.20, Dwork–Rothblum–Vadhan 2010): k ε₀-DP
  mechanisms are (√(2k ln(1/δ'))ε₀ + kε₀(e^{ε₀} − 1), δ')-DP.
* Heterogeneous advanced composition (Kairouz–Oh–Viswanath 2015; the DRV
  proof with per-mechanism ε_i): (√(2 ln(1/δ') Σε_i²) + Σε_i(e^{ε_i} − 1), δ').
  Coordinate i of one Lap(b) release with sensitivity vector α is
  |α_i|/b-DP; over T steps Σε_i² ≤ TΔ₂²/b² and Σε_i(e^{ε_i} − 1) ≤ Ts(e^s − 1),
  s = Δ₂/b — checked numerically below against random α.
* μ-GDP (Dong, Roth & Su 2022): T Gaussian steps with noise σ and sensitivity
  Δ₂ are μ-GDP, μ = √T·Δ₂/σ (Thm 2.7, Cor. 3.3), and μ-GDP is (ε, δ(ε))-DP with
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Cor. 2.13).
* zCDP (Bun & Steinke 2016; Canonne, Kamath & Steinke 2020): the discrete
  Gaussian with integer sensitivity Δ and variance parameter σ² is
  Δ²/(2σ²)-zCDP, T steps add, and ρ-zCDP is (ε, δ)-DP with
  δ = inf_{α>1} e^{(α−1)(αρ−ε)}/(α−1)·(1 − 1/α)^α.
* Grid rounding (secure mode): |round(a/γ) − round(b/γ)| ≤ |a − b|/γ + 1, so
  the L1 grid sensitivity is ⌊Δ₁/γ⌋ + d and the squared L2 one ⌊(Δ₂/γ + √d)²⌋.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

import fasterm as fe
from fasterm import accounting
from fasterm import secure as sec



@pytest.fixture(autouse=True)
def _forty_digits():
    # every reference in 40 digits, whatever precision another test module left set
    with mp.workdps(40):
        yield

ULPS = 1 + mp.mpf(1e-14)  # see the module docstring


# ---------------------------------------------------------------------------
# The references
# ---------------------------------------------------------------------------
def ref_laplace_pure(b, sens, d, T):
    return mp.mpf(T) * mp.sqrt(d) * mp.mpf(sens) / mp.mpf(b)


def ref_advanced(eps0, k, delta):
    eps0 = mp.mpf(eps0)
    return mp.sqrt(2 * k * mp.log(1 / mp.mpf(delta))) * eps0 + k * eps0 * mp.expm1(eps0)


def ref_heterogeneous(eps_list, delta):
    e = [mp.mpf(x) for x in eps_list]
    return mp.sqrt(2 * mp.log(1 / mp.mpf(delta)) * mp.fsum(x * x for x in e)) + mp.fsum(x * mp.expm1(x) for x in e)


def ref_laplace_l2(b, sens, d, T, delta):
    s = mp.mpf(sens) / mp.mpf(b)
    basic = T * mp.sqrt(d) * s
    if delta == 0:
        return basic
    return min(basic, mp.sqrt(2 * T * mp.log(1 / mp.mpf(delta))) * s + T * s * mp.expm1(s))


def ref_gdp_delta(mu, eps):
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def _zcdp_log_delta(rho, eps, a):
    return (a - 1) * (a * rho - eps) + a * mp.log1p(-1 / a) - mp.log(a - 1)


def ref_zcdp_delta(rho, eps):
    """inf over α > 1, by golden section in 40 digits on log α (the log δ is unimodal in α)."""
    rho, eps = mp.mpf(rho), mp.mpf(eps)
    f = lambda t: _zcdp_log_delta(rho, eps, 1 + mp.exp(t))  # noqa: E731  α = 1 + e^t
    grid = [mp.mpf(t) / 4 for t in range(-120, 121)]
    vals = [f(t) for t in grid]
    i = min(range(len(vals)), key=lambda j: vals[j])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    g = (mp.sqrt(5) - 1) / 2
    for _ in range(200):
        a, c = hi - g * (hi - lo), lo + g * (hi - lo)
        if f(a) < f(c):
            hi = c
        else:
            lo = a
    return min(mp.mpf(1), mp.exp(f((lo + hi) / 2)))


def _pgd(noise, calibration, eps, delta, d, T, n=5, data_norm=1.0, clip=None, **kw):
    """noisy_pgd on tiny data: the calibration is what we read (sensitivity 2G/n)."""
    X = np.full((n, d), 0.1 / math.sqrt(d))
    return fe.noisy_pgd(fe.losses.Linear(), X, None, fe.L2Ball(10.0, d), eps, delta, steps=T, noise=noise,
                        calibration=calibration, data_norm=data_norm, clip=clip, lr=0.1, random_state=0, **kw)


GRID = [  # (ε, δ, d, T)
    (1.0, 1e-5, 1, 1), (1.0, 1e-5, 3, 5), (0.3, 1e-6, 10, 50), (2.0, 1e-3, 2, 200), (8.0, 1e-8, 5, 20),
    (0.05, 1e-5, 1, 3),
]


# ---------------------------------------------------------------------------
# Laplace: pure (basic composition of L1-calibrated releases)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("eps,delta,d,T", GRID)
def test_laplace_pure(eps, delta, d, T):
    r = _pgd("laplace", "pure", eps, 0.0, d, T)
    b, sens = r.noise_scale, r.sensitivity
    assert sens == pytest.approx(2.0 / 5, rel=1e-15)
    assert ref_laplace_pure(b, sens, d, T) <= eps * ULPS and r.epsilon <= eps and r.delta == 0.0
    assert ref_laplace_pure(b, sens, d, T) <= mp.mpf(r.epsilon) * (1 + mp.mpf(1e-15))
    assert ref_laplace_pure(b * (1 - 1e-6), sens, d, T) > eps  # tight
    b2 = accounting.calibrate_laplace_pure(0.37, d, T, eps)
    assert ref_laplace_pure(b2, 0.37, d, T) <= eps * ULPS and eps < ref_laplace_pure(b2 * (1 - 1e-9), 0.37, d, T)


# ---------------------------------------------------------------------------
# Laplace: "coordinate" (advanced composition over the T·d coordinate mechanisms)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("eps,delta,d,T", GRID)
def test_laplace_coordinate(eps, delta, d, T):
    r = _pgd("laplace", "coordinate", eps, delta, d, T)
    b, sens = r.noise_scale, r.sensitivity
    k = T * d
    ref = ref_advanced(sens / b, k, delta)
    assert ref <= eps * ULPS and r.epsilon <= eps and r.delta <= delta
    assert ref <= mp.mpf(r.epsilon) * (1 + mp.mpf(1e-12))
    assert r.delta == pytest.approx(delta, rel=1e-15)
    assert ref_advanced(sens / (b * (1 - 1e-6)), k, delta) > eps  # tight
    b2, eps0 = accounting.calibrate_laplace_coordinate(0.37, d, T, eps, delta)
    assert eps0 == pytest.approx(0.37 / b2, rel=1e-15)
    assert ref_advanced(0.37 / b2, k, delta) <= eps * ULPS and eps < ref_advanced(0.37 / (b2 * (1 - 1e-9)), k, delta)


# ---------------------------------------------------------------------------
# Laplace: "l2" (heterogeneous advanced composition, Stemmer lecture 10 Thm 3)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("eps,delta,d,T", GRID + [(1.0, 0.0, 4, 3), (0.5, 1e-5, 100, 1)])
def test_laplace_l2(eps, delta, d, T):
    r = _pgd("laplace", "l2", eps, delta, d, T)
    b, sens = r.noise_scale, r.sensitivity
    ref = ref_laplace_l2(b, sens, d, T, delta)
    assert ref <= eps * ULPS and r.epsilon <= eps
    assert ref <= mp.mpf(r.epsilon) * (1 + mp.mpf(1e-12))
    assert ref_laplace_l2(b * (1 - 1e-6), sens, d, T, delta) > eps  # tight
    # δ is spent unless the basic (pure) branch alone meets ε
    basic = ref_laplace_pure(b, sens, d, T)
    if basic > eps * (1 + 1e-9):
        assert r.delta == delta
    else:
        assert r.delta in (0.0, delta)
    b2 = accounting.calibrate_laplace_l2(0.37, d, T, eps, delta)
    assert ref_laplace_l2(b2, 0.37, d, T, delta) <= eps * ULPS and eps < ref_laplace_l2(b2 * (1 - 1e-9), 0.37, d, T, delta)


def test_laplace_l2_bound_dominates_heterogeneous_composition():
    # The "l2" formula is heterogeneous advanced composition over the T·d
    # coordinates for the worst sensitivity vector: for any α with ‖α‖₂ = Δ₂
    # per step (here random ones, and the extremes e₁ and (1, …, 1)/√d·Δ₂),
    # composing ε_i = |α_i|/b over all coordinates never exceeds it.
    rng = np.random.default_rng(0)
    sens, d, T, delta = 0.4, 6, 4, 1e-5
    for b in (0.05, 0.3, 2.0, 20.0):
        bound = ref_laplace_l2(b, sens, d, T, delta)
        alphas = [np.eye(d)[0] * sens, np.full(d, sens / math.sqrt(d))]
        alphas += [a * sens / np.linalg.norm(a) for a in rng.standard_normal((30, d))]
        s = mp.mpf(sens) / b
        adv = mp.sqrt(2 * T * mp.log(1 / mp.mpf(delta))) * s + T * s * mp.expm1(s)
        assert bound == min(adv, ref_laplace_pure(b, sens, d, T))
        for a in alphas:
            eps_list = np.tile(np.abs(a) / b, T)
            assert ref_heterogeneous(eps_list, delta) <= adv * ULPS  # ε_i are float64
        # e₁ attains the advanced branch exactly
        eps_list = np.tile(np.eye(d)[0] * sens / b, T)
        adv = ref_heterogeneous(eps_list, delta)
        assert adv == pytest.approx(float(mp.sqrt(2 * T * mp.log(1 / mp.mpf(delta))) * sens / b
                                          + T * (sens / b) * mp.expm1(sens / b)), rel=1e-12)


def test_mechanism_laplace_l2_scale():
    # mechanisms.laplace_l2 is one release (T = 1) of the same calibration;
    # its noise on a zero vector has mean |.| = b
    d, sens, eps, delta = 40_000, 0.5, 1.0, 1e-6
    out = fe.mechanisms.laplace_l2(np.zeros(d), sens, eps, delta, random_state=1)
    b_hat = float(np.mean(np.abs(out)))
    # the reference b: the smallest with ref_laplace_l2(b) ≤ ε (bisection in mpmath)
    lo, hi = mp.mpf("1e-3"), mp.mpf(1e3)
    for _ in range(200):
        mid = mp.sqrt(lo * hi)
        if ref_laplace_l2(mid, sens, d, 1, delta) <= eps:
            hi = mid
        else:
            lo = mid
    assert b_hat == pytest.approx(float(hi), rel=0.03)


# ---------------------------------------------------------------------------
# Gaussian: exact μ-GDP
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("eps,delta,d,T", GRID)
def test_gaussian_gdp(eps, delta, d, T):
    r = _pgd("gaussian", "l2", eps, delta, d, T)
    sigma, sens = r.noise_scale, r.sensitivity
    mu = math.sqrt(T) * sens / sigma
    assert ref_gdp_delta(mu, eps) <= delta * (1 + 1e-9)
    assert ref_gdp_delta(mu * (1 + 1e-6), eps) > delta  # tight
    assert r.epsilon <= eps and r.delta == delta
    assert ref_gdp_delta(mu, r.epsilon) <= delta * (1 + 1e-9)  # the reported ε is honest
    # the library's δ(ε) and μ(ε, δ) against the reference
    assert accounting.gaussian_delta(mu, eps) == pytest.approx(float(ref_gdp_delta(mu, eps)), rel=1e-9)
    m = accounting.gaussian_mu(eps, delta)
    assert ref_gdp_delta(m, eps) <= delta * (1 + 1e-9) < ref_gdp_delta(m * (1 + 1e-6), eps)
    s2 = accounting.calibrate_gaussian(0.37, T, eps, delta)
    assert ref_gdp_delta(math.sqrt(T) * 0.37 / s2, eps) <= delta * (1 + 1e-9)
    assert ref_gdp_delta(math.sqrt(T) * 0.37 / (s2 * (1 - 1e-6)), eps) > delta


def test_gaussian_epsilon_and_delta_curve_against_reference():
    for mu in (0.05, 0.5, 1.0, 3.0, 10.0):
        for eps in (0.0, 0.1, 1.0, 5.0, 30.0):
            ref = ref_gdp_delta(mu, eps)
            got = accounting.gaussian_delta(mu, eps)
            assert got == pytest.approx(float(ref), rel=1e-9, abs=1e-300)
        for delta in (1e-3, 1e-6, 1e-10):
            e = accounting.gaussian_epsilon(mu, delta)
            assert ref_gdp_delta(mu, e) <= delta * (1 + 1e-9)
            if e > 0:
                assert ref_gdp_delta(mu, e * (1 - 1e-6)) > delta


# ---------------------------------------------------------------------------
# Composition theorems
# ---------------------------------------------------------------------------
def test_composition_functions_against_theorems():
    for eps0, k, dp in [(0.1, 10, 1e-5), (0.01, 1000, 1e-8), (1.0, 3, 0.1)]:
        e, d = accounting.advanced_composition(eps0, 1e-7, k, dp)
        assert e == pytest.approx(float(ref_advanced(eps0, k, dp)), rel=1e-12)
        assert d == pytest.approx(k * 1e-7 + dp, rel=1e-12)
    eps_list = [0.1, 0.5, 0.02, 1.3]
    e, d = accounting.heterogeneous_composition(eps_list, 1e-6, [1e-7] * 4)
    assert e == pytest.approx(float(ref_heterogeneous(eps_list, 1e-6)), rel=1e-12)
    assert d == pytest.approx(4e-7 + 1e-6, rel=1e-12)
    assert accounting.basic_composition(eps_list, [1e-7] * 4) == pytest.approx((sum(eps_list), 4e-7), rel=1e-14)


def test_budget_accountant_refuses_overspend():
    acc = accounting.BudgetAccountant(1.0, 1e-5)
    for _ in range(10):
        acc.spend(0.1, 1e-6)
    with pytest.raises(accounting.BudgetExceededError):
        acc.spend(1e-6)
    with pytest.raises(accounting.BudgetExceededError):
        acc.spend(0.0, 1e-11)
    assert acc.spent == pytest.approx((1.0, 1e-5))


# ---------------------------------------------------------------------------
# zCDP (secure mode's discrete Gaussian)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("rho,eps", [(0.01, 0.5), (0.1, 1.0), (0.5, 3.0), (2.0, 1.0), (1e-4, 0.05)])
def test_zcdp_delta_against_cks_conversion(rho, eps):
    ref = ref_zcdp_delta(rho, eps)
    got = accounting.zcdp_delta(rho, eps)
    assert got >= ref * (1 - mp.mpf(1e-12))   # never below the infimum: a valid δ
    assert got <= ref * (1 + mp.mpf(1e-6))     # and (nearly) the infimum


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-5), (0.3, 1e-6), (5.0, 1e-8)])
def test_zcdp_rho_against_cks_conversion(eps, delta):
    rho = accounting.zcdp_rho(eps, delta)
    assert ref_zcdp_delta(rho, eps) <= delta * (1 + 1e-9)
    assert ref_zcdp_delta(rho * (1 + 1e-4), eps) > delta


def ref_l2_grid_sq(sens, gamma, d):
    """⌊(Δ₂/γ + √d)²⌋ in 40 digits (rounding enlarges each coordinate's shift by ≤ 1)."""
    return int(mp.floor((mp.mpf(sens) / mp.mpf(gamma) + mp.sqrt(d)) ** 2))


@pytest.mark.parametrize("gamma", [None, 2.0 ** -3])
@pytest.mark.parametrize("eps,delta,d,T", [(1.0, 1e-5, 3, 4), (0.5, 1e-6, 10, 20), (4.0, 1e-8, 1, 1)])
def test_secure_gaussian_zcdp(eps, delta, d, T, gamma):
    r = _pgd("gaussian", "l2", eps, delta, d, T, secure=True, granularity=gamma)
    cal = r.info["secure"]
    g = cal.granularity
    if gamma is not None:
        assert g == gamma
    sens_sq = ref_l2_grid_sq(r.sensitivity, g, d)
    assert cal.grid_sensitivity ** 2 >= sens_sq * (1 - 1e-15)
    sigma2 = mp.mpf(cal.params.sigma2)                 # the discrete Gaussian's σ² (grid units²)
    assert math.sqrt(float(sigma2)) * g == pytest.approx(r.noise_scale, rel=1e-12)
    rho = T * sens_sq / (2 * sigma2)                  # Bun–Steinke composition of Δ²/(2σ²)
    assert ref_zcdp_delta(rho, eps) <= mp.mpf(r.delta) * (1 + mp.mpf(1e-9))
    assert r.delta <= delta and r.epsilon <= eps


@pytest.mark.parametrize("calibration", ["l2", "coordinate", "pure"])
@pytest.mark.parametrize("gamma", [None, 2.0 ** -3])
def test_secure_laplace_l2_grid(calibration, gamma):
    eps, delta, d, T = 1.0, 1e-5, 4, 6
    r = _pgd("laplace", calibration, eps, 0.0 if calibration == "pure" else delta, d, T, secure=True,
             granularity=gamma)
    cal = r.info["secure"]
    g = cal.granularity
    sens_grid = mp.sqrt(ref_l2_grid_sq(r.sensitivity, g, d))
    assert cal.grid_sensitivity >= sens_grid * (1 - mp.mpf(1e-15))
    t = mp.mpf(Fraction(cal.params.scale).numerator) / Fraction(cal.params.scale).denominator
    if calibration == "pure":
        ref = ref_laplace_pure(t, sens_grid, d, T)
    elif calibration == "l2":
        ref = ref_laplace_l2(t, sens_grid, d, T, delta)
    else:
        ref = ref_advanced(sens_grid / t, T * d, delta)
    assert ref <= eps * ULPS and ref <= mp.mpf(r.epsilon) * (1 + mp.mpf(1e-12))


@pytest.mark.parametrize("gamma", [None, 2.0 ** -2, 2.0 ** -6])
# ε not a power of two: T·Δ₁,grid/ε is then not a dyadic rational, and its rounding to n/2^K matters
@pytest.mark.parametrize("sens,eps,d,T", [(1.0, 0.3, 1, 1), (0.3, 0.7, 7, 3), (2.5, 1.3, 3, 10)])
def test_secure_l1_laplace_grid(sens, eps, d, T, gamma):
    cal = sec.laplace_calibration(sens, eps, d, gamma, T)
    g = Fraction(cal.granularity)
    sens_grid = math.floor(Fraction(sens) / g) + d       # ⌊Δ₁/γ⌋ + d
    assert cal.grid_sensitivity == sens_grid
    t = Fraction(cal.params.scale)
    assert T * sens_grid / t <= Fraction(eps)           # exact: (T·Δ₁,grid/t, 0)-DP ≤ ε
    assert Fraction(cal.epsilon) >= T * sens_grid / t * (1 - Fraction(1, 10 ** 15))


@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize("gamma", [None, 2.0 ** -2])
def test_secure_exponential_grid(monotonic, gamma):
    sens, eps = 0.7, 1.3
    cal = sec.exponential_calibration(sens, eps, monotonic, gamma)
    g = Fraction(cal.granularity)
    sens_grid = math.floor(Fraction(sens) / g) + 1       # ⌊Δ/γ⌋ + 1
    assert cal.grid_sensitivity == sens_grid
    # McSherry–Talwar: rate t = ε/(2Δ_g), ε/Δ_g for monotone scores, never more
    assert cal.rate <= Fraction(eps) / (sens_grid if monotonic else 2 * sens_grid)
