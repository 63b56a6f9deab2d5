"""Composition formulas, calibration solvers (plugged back in), budget accountant."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from fasterm import accounting as A

RTOL = 1e-9


# ---------------------------------------------------------------------------
# Composition formulas against direct evaluation
# ---------------------------------------------------------------------------
def test_basic_composition():
    assert A.basic_composition([0.1] * 10) == (pytest.approx(1.0, rel=1e-15), 0.0)
    e, d = A.basic_composition([0.5, 0.25], [1e-6, 2e-6])
    assert e == 0.75 and d == pytest.approx(3e-6)
    with pytest.raises(ValueError, match="deltas"):
        A.basic_composition([0.5, 0.25], [1e-6])
    with pytest.raises(ValueError, match="epsilons"):
        A.basic_composition([-0.5])


@pytest.mark.parametrize("eps0,k,dp", [(0.01, 100, 1e-5), (0.5, 7, 1e-3), (1e-4, 10**6, 1e-9)])
def test_advanced_composition_formula(eps0, k, dp):
    e, d = A.advanced_composition(eps0, 1e-7, k, dp)
    assert e == pytest.approx(math.sqrt(2 * k * math.log(1 / dp)) * eps0 + k * eps0 * (math.exp(eps0) - 1), rel=1e-12)
    assert d == pytest.approx(k * 1e-7 + dp)


def test_heterogeneous_reduces_to_advanced_and_is_monotone():
    e_het, d_het = A.heterogeneous_composition([0.05] * 40, 1e-6)
    e_adv, d_adv = A.advanced_composition(0.05, 0.0, 40, 1e-6)
    assert e_het == pytest.approx(e_adv, rel=1e-12) and d_het == d_adv
    # Replacing one ε_i by a larger one never lowers the total.
    assert A.heterogeneous_composition([0.05] * 39 + [0.2], 1e-6)[0] > e_het


@pytest.mark.parametrize(
    "call,param",
    [
        (lambda: A.advanced_composition(0.1, 0.0, 10, 0.0), "delta_prime"),
        (lambda: A.advanced_composition(0.1, 0.0, 0, 1e-5), "k"),
        (lambda: A.advanced_composition(0.1, 0.0, 2.5, 1e-5), "k"),
        (lambda: A.advanced_composition(float("nan"), 0.0, 10, 1e-5), "epsilon"),
        (lambda: A.heterogeneous_composition([0.1], 1.0), "delta_prime"),
        (lambda: A.calibrate_laplace_pure(-1.0, 3, 2, 1.0), "l2_sensitivity"),
        (lambda: A.calibrate_laplace_pure(1.0, 0, 2, 1.0), "dim"),
        (lambda: A.calibrate_laplace_pure(1.0, 3, 0, 1.0), "steps"),
        (lambda: A.calibrate_laplace_pure(1.0, 3, 2, 0.0), "epsilon"),
        (lambda: A.calibrate_laplace_pure(1.0, 3, 2, float("inf")), "epsilon"),
        (lambda: A.calibrate_laplace_coordinate(1.0, 3, 2, 1.0, 0.0), "delta"),
        (lambda: A.calibrate_laplace_l2(1.0, 3, 2, 1.0, 1.0), "delta"),
        (lambda: A.calibrate_gaussian(1.0, 3, 1.0, 0.0), "delta"),
        (lambda: A.calibrate_gaussian(1.0, 3, 1.0, -1e-5), "delta"),
    ],
)
def test_bad_parameters_name_themselves(call, param):
    with pytest.raises((ValueError, TypeError), match=param):
        call()


# ---------------------------------------------------------------------------
# Calibrations plugged back into their own formulas
# ---------------------------------------------------------------------------
GRID = list(itertools.product([0.1, 1.0, 8.0], [1e-8, 1e-5, 0.1], [1, 10, 1000], [1, 10, 100]))


@pytest.mark.parametrize("eps,delta,T,d", GRID)
def test_laplace_l2_roundtrip(eps, delta, T, d):
    sens = 0.37
    b = A.calibrate_laplace_l2(sens, d, T, eps, delta)
    assert A.laplace_l2_epsilon(b, sens, d, T, delta) == pytest.approx(eps, rel=RTOL)
    # smallest such b: a slightly smaller scale overspends
    assert A.laplace_l2_epsilon(b * (1 - 1e-6), sens, d, T, delta) > eps


@pytest.mark.parametrize("eps,delta,T,d", GRID)
def test_laplace_coordinate_roundtrip(eps, delta, T, d):
    sens = 0.37
    b, eps0 = A.calibrate_laplace_coordinate(sens, d, T, eps, delta)
    assert b == pytest.approx(sens / eps0, rel=1e-15)
    k = T * d
    total = math.sqrt(2 * k * math.log(1 / delta)) * eps0 + k * eps0 * math.expm1(eps0)
    assert total == pytest.approx(eps, rel=RTOL)


@pytest.mark.parametrize("eps,T,d", [(0.1, 1, 1), (1.0, 10, 100), (8.0, 1000, 10)])
def test_laplace_pure_roundtrip(eps, T, d):
    b = A.calibrate_laplace_pure(0.37, d, T, eps)
    # basic composition of T Laplace mechanisms with L1 sensitivity sqrt(d)*0.37
    assert T * (math.sqrt(d) * 0.37 / b) == pytest.approx(eps, rel=1e-14)
    # and laplace_l2_epsilon with delta = 0 reduces to exactly this
    assert A.laplace_l2_epsilon(b, 0.37, d, T, 0.0) == pytest.approx(eps, rel=1e-14)


@pytest.mark.parametrize("eps,delta,T", list(itertools.product([0.05, 1.0, 10.0, 40.0], [1e-12, 1e-5, 0.2], [1, 50, 10**4])))
def test_gaussian_roundtrip(eps, delta, T):
    sens = 0.37
    sigma = A.calibrate_gaussian(sens, T, eps, delta)
    mu = math.sqrt(T) * sens / sigma
    assert A.gaussian_delta(mu, eps) == pytest.approx(delta, rel=RTOL)
    assert A.gaussian_epsilon(mu, delta) == pytest.approx(eps, rel=1e-7)


def _delta_by_integration(mu, eps):
    """δ(ε) = ∫ (p(x) − e^ε q(x))₊ dx, P = N(0,1), Q = N(μ,1): the hockey-stick
    divergence of the two output distributions, computed by quadrature."""
    # p > e^ε q  iff  x < μ/2 − ε/μ: integrate up to the crossing point only.
    cross = mu / 2 - eps / mu
    f = lambda x: stats.norm.pdf(x) - math.exp(eps) * stats.norm.pdf(x, loc=mu)
    val, _ = integrate.quad(f, -np.inf, cross, epsabs=0, epsrel=1e-12, limit=200)
    return val


@pytest.mark.parametrize("mu,eps", [(0.3, 0.1), (1.0, 0.5), (1.0, 2.0), (2.5, 3.0), (0.8, 4.0)])
def test_gaussian_delta_matches_privacy_loss_integration(mu, eps):
    assert A.gaussian_delta(mu, eps) == pytest.approx(_delta_by_integration(mu, eps), rel=1e-7)


def test_gaussian_delta_far_tail_no_overflow():
    # e^ε overflows a double at ε = 800 and Φ(−41.7) is ~1e-380 — each factor
    # alone is out of range; the log-space evaluation still gives the right,
    # positive δ (reference: the same formula with scipy's log_ndtr).
    from scipy.special import log_ndtr

    for mu, eps in [(30.0, 800.0), (5.0, 30.0), (40.0, 700.0)]:
        a, b = -eps / mu + mu / 2, -eps / mu - mu / 2
        ref = math.exp(log_ndtr(a)) - math.exp(eps + log_ndtr(b))
        got = A.gaussian_delta(mu, eps)
        assert 0 < got < 1 and got == pytest.approx(ref, rel=1e-9)
    with np.errstate(over="raise"):
        assert math.isfinite(A.gaussian_delta(0.05, 800.0))


# ---------------------------------------------------------------------------
# Monotonicity the theory demands
# ---------------------------------------------------------------------------
def _scales(eps, delta, T, n, d=20, G=1.0):
    sens = 2 * G / n
    return {
        "pure": A.calibrate_laplace_pure(sens, d, T, eps),
        "coordinate": A.calibrate_laplace_coordinate(sens, d, T, eps, delta)[0],
        "l2": A.calibrate_laplace_l2(sens, d, T, eps, delta),
        "gaussian": A.calibrate_gaussian(sens, T, eps, delta),
    }


def test_calibrations_monotone():
    base = _scales(1.0, 1e-5, 100, 1000)
    more_eps = _scales(2.0, 1e-5, 100, 1000)
    more_delta = _scales(1.0, 1e-3, 100, 1000)
    more_T = _scales(1.0, 1e-5, 400, 1000)
    more_n = _scales(1.0, 1e-5, 100, 5000)
    for k in base:
        assert more_eps[k] < base[k], k
        assert more_T[k] > base[k], k
        assert more_n[k] == pytest.approx(base[k] / 5, rel=1e-9), k
        if k != "pure":
            assert more_delta[k] < base[k], k


@pytest.mark.parametrize("d", [10, 30, 100, 1000])
def test_l2_beats_coordinate_and_gaussian_beats_both(d):
    # Per-coordinate variance: Laplace 2b², Gaussian σ².
    for eps, delta, T in [(1.0, 1e-5, 100), (0.5, 1e-6, 1000), (4.0, 1e-5, 10)]:
        sens = 0.01
        var_coord = 2 * A.calibrate_laplace_coordinate(sens, d, T, eps, delta)[0] ** 2
        var_l2 = 2 * A.calibrate_laplace_l2(sens, d, T, eps, delta) ** 2
        var_gauss = A.calibrate_gaussian(sens, T, eps, delta) ** 2
        assert var_l2 < var_coord
        assert var_gauss < var_l2


# ---------------------------------------------------------------------------
# Budget accountant
# ---------------------------------------------------------------------------
def test_accountant_refuses_overspend_and_records_nothing():
    acc = A.BudgetAccountant(1.0, 1e-5)
    for _ in range(10):
        acc.spend(0.1, 1e-6)
    assert acc.spent[0] == pytest.approx(1.0) and acc.remaining[0] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(A.BudgetExceededError):
        acc.spend(1e-3)
    with pytest.raises(ValueError):  # BudgetExceededError is a ValueError
        acc.spend(0.0, 1e-6)
    assert len(acc.history) == 10


def test_accountant_delta_budget_and_validation():
    acc = A.BudgetAccountant(5.0)
    with pytest.raises(A.BudgetExceededError):
        acc.spend(0.1, 1e-9)  # no delta budget at all
    acc.spend(0.1, 0.0, label="count")
    assert acc.history[0][2] == "count"
    assert acc.check(4.9) and not acc.check(4.91)
    with pytest.raises(ValueError, match="epsilon"):
        A.BudgetAccountant(0.0)
    with pytest.raises(ValueError, match="delta"):
        A.BudgetAccountant(1.0, 1.5)
    with pytest.raises(ValueError, match="epsilon"):
        acc.spend(-0.1)


# ---------------------------------------------------------------------------
# Certified rounding: checked against 50-digit arithmetic
# ---------------------------------------------------------------------------
def test_gaussian_calibration_never_overspends_in_exact_arithmetic():
    mp = pytest.importorskip("mpmath")
    with mp.workdps(50):  # local: other tests keep mpmath's default precision

        def delta_exact(mu, eps):
            mu, eps = mp.mpf(mu), mp.mpf(eps)
            return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)

        rng = np.random.default_rng(1)
        for _ in range(150):
            eps = 10 ** rng.uniform(-3, math.log10(60))
            delta = 10 ** rng.uniform(-14, -0.3)
            mu = A.gaussian_mu(eps, delta)
            assert delta_exact(mu, eps) <= delta  # the σ it implies is never too small
            assert delta_exact(mu * (1 + 1e-9), eps) > delta  # and not loose by more than 1e-9
            assert delta_exact(mu, A.gaussian_epsilon(mu, delta)) <= delta  # ε never under-reported
            sigma = A.calibrate_gaussian(1.0, 7, eps, delta)
            assert delta_exact(math.sqrt(7) / sigma, eps) <= delta


def test_laplace_calibrations_report_at_most_the_budget_exactly():
    rng = np.random.default_rng(2)
    for _ in range(300):
        eps, delta = 10 ** rng.uniform(-2, 1), 10 ** rng.uniform(-10, -2)
        sens, d, T = 10 ** rng.uniform(-4, 0), int(rng.integers(1, 200)), int(rng.integers(1, 500))
        b = A.calibrate_laplace_l2(sens, d, T, eps, delta)
        assert A.laplace_l2_epsilon(b, sens, d, T, delta) <= eps
        b = A.calibrate_laplace_pure(sens, d, T, eps)
        assert T * (math.sqrt(d) * sens / b) <= eps
        b, eps0 = A.calibrate_laplace_coordinate(sens, d, T, eps, delta)
        assert A.advanced_composition(eps0, 0.0, T * d, delta)[0] <= eps


def test_absurd_epsilon_does_not_overflow():
    assert math.isfinite(A.calibrate_laplace_l2(1.0, 3, 2, 1e300, 0.5))
    assert math.isfinite(A.calibrate_laplace_coordinate(1.0, 3, 2, 1e300, 0.5)[0])
    # Gaussian calibrations refuse ε above their maximum (it was calibrated as 1e4 and reported as such)
    with pytest.raises(ValueError, match="epsilon=1e\\+300 is above 10000"):
        A.calibrate_gaussian(1.0, 1, 1e300, 1e-5)
    assert math.isfinite(A.calibrate_gaussian(1.0, 1, A.GAUSSIAN_EPSILON_CAP, 1e-5))


@pytest.mark.parametrize(
    "f,lo,hi",
    [
        (lambda x: x**3, 1e-3, 1.0),
        (lambda x: math.log(x), 1e-6, 10.0),
        (lambda x: math.expm1(x) * 1e6, 1e-9, 1e-3),
        (lambda x: x if x < 2.0 else 2.0 + 1e9 * (x - 2.0), 1e-2, 50.0),  # a kink: false position stalls
        (lambda x: math.floor(x * 7.0) / 7.0, 0.01, 3.0),  # a step function
    ],
)
@pytest.mark.parametrize("target", [0.3, 1.7])
def test_solver_brackets_the_root_to_ulps(f, lo, hi, target):
    calls = []

    def counted(x):
        calls.append(x)
        return f(x)

    x_lo = A._solve._solve_increasing(counted, target, lo, hi)
    n_lo = len(calls)
    x_hi = A._solve._solve_increasing(f, target, lo, hi, upper=True)
    # The returned sides keep their promise, and nothing lies between them but rounding.
    assert f(x_lo) <= target < f(x_hi)
    assert x_hi - x_lo <= 4.0 * math.ulp(x_lo)
    # Bisection in log x to 4 ulps takes ~52 halvings of these brackets; the safeguard
    # bisects at least every other step, so even the kink and the steps stay below 2×.
    assert n_lo <= 110


def test_gaussian_solvers_are_cached_and_agree_with_a_fresh_solve():
    A.gaussian._gaussian_mu.cache_clear()
    mu = A.gaussian_mu(0.7, 1e-6)
    assert A.gaussian._gaussian_mu.cache_info().misses == 1
    assert A.gaussian_mu(0.7, 1e-6) == mu and A.gaussian._gaussian_mu.cache_info().hits == 1
    fresh = A._solve._solve_increasing(lambda m: A.gaussian._gaussian_delta_upper(m, 0.7), 1e-6, 1e-3, 1.0)
    assert fresh == mu


# ---------------------------------------------------------------------------
# Composition of k pure mechanisms, and the calibration of noisy gradient steps
# ---------------------------------------------------------------------------
def _adv_reference(eps0, k, delta):
    # Dwork–Roth Thm 3.20 with δ' = δ, written out here
    return math.sqrt(2 * k * math.log(1 / delta)) * eps0 + k * eps0 * (math.exp(eps0) - 1)


@pytest.mark.parametrize("eps,delta,k", [(1.0, 0.0, 10), (1.0, 1e-5, 10), (1.0, 1e-5, 1000),
                                         (0.1, 1e-8, 50_000), (5.0, 1e-3, 3)])
def test_pure_share_is_the_largest_admissible_share(eps, delta, k):
    eps0, how = A.pure_share(eps, delta, k)
    basic_ok = k * eps0 <= eps
    adv_ok = delta > 0 and _adv_reference(eps0, k, delta) <= eps * (1 + 1e-12)
    assert basic_ok or adv_ok
    # maximal: 1e-9 more violates both theorems
    bigger = eps0 * (1 + 1e-9)
    assert k * bigger > eps and (delta == 0 or _adv_reference(bigger, k, delta) > eps)
    assert how == ("advanced" if eps0 > eps / k * (1 + 1e-15) else "basic")


@pytest.mark.parametrize("eps0,k,delta", [(0.01, 100, 1e-5), (0.5, 3, 1e-5), (0.2, 10, 0.0), (1e-4, 10**6, 1e-9)])
def test_compose_pure_takes_the_better_theorem(eps0, k, delta):
    eps, d, how = A.compose_pure(eps0, k, delta)
    adv = _adv_reference(eps0, k, delta) if delta > 0 else math.inf
    assert eps == pytest.approx(min(k * eps0, adv), rel=1e-12)
    assert (how, d) == (("basic", 0.0) if k * eps0 <= adv else ("advanced", delta))


@pytest.mark.parametrize("noise,calibration,delta", [("gaussian", "l2", 1e-6), ("laplace", "pure", 0.0),
                                                     ("laplace", "l2", 1e-6), ("laplace", "coordinate", 1e-6)])
def test_calibrate_steps(noise, calibration, delta):
    sens, d, T, eps = 0.01, 7, 40, 0.8
    cal = A.calibrate_steps(noise, calibration, sens, d, T, eps, delta)
    s = cal.noise_scale
    assert cal.noise_sq(d) == pytest.approx(d * s * s * (1 if noise == "gaussian" else 2), rel=1e-15)
    assert cal.bias_norm(d) == 0.0 and cal.epsilon <= eps and cal.delta <= delta
    assert A.noise_scale(noise, calibration, sens, d, T, eps, delta) == (s, cal.noise_sq(d), cal.epsilon,
                                                                         cal.delta)
    if noise == "gaussian":  # T steps of N(0, σ²): μ = √T Δ/σ; δ(ε) from Dong–Roth–Su Cor. 2.13
        mu = math.sqrt(T) * sens / s
        ref = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
        assert ref == pytest.approx(delta, rel=1e-6)
    elif calibration == "pure":  # L1 sensitivity √d Δ per step, basic composition
        assert T * math.sqrt(d) * sens / s == pytest.approx(eps, rel=1e-12)
    elif calibration == "coordinate":  # T·d coordinate mechanisms of ε₀ = Δ/b, advanced composition
        assert _adv_reference(sens / s, T * d, delta) == pytest.approx(eps, rel=1e-9)
    else:  # min(T√d s, √(2T ln 1/δ) s + T s(e^s − 1)), s = Δ/b
        r = sens / s
        ref = min(T * math.sqrt(d) * r, math.sqrt(2 * T * math.log(1 / delta)) * r + T * r * math.expm1(r))
        assert ref == pytest.approx(eps, rel=1e-9)


def test_noise_sq_of_steps_matches_the_calibration():
    for noise, calibration in [("gaussian", "l2"), ("laplace", "l2"), ("laplace", "pure")]:
        curve = A.noise_sq_of_steps(noise, calibration, 0.01, 5, 1.0, 1e-6)
        for T in (1, 17, 300):
            exact = A.calibrate_steps(noise, calibration, 0.01, 5, T, 1.0, 1e-6).noise_sq(5)
            # Gaussian: σ_T² = T (Δ/μ)² before σ's rounding up by a few ulps
            assert curve(T) == pytest.approx(exact, rel=1e-12)


def test_gaussian_accountant_uses_its_own_16_point_rule():
    # δ(ε)'s short-interval Φ(b) − Φ(a) is the 16-point Gauss–Legendre rule its docstring and
    # error bound describe; until 0.3 the PLD code's 8-point rule, defined later in the same
    # module, re-bound the shared name (CHANGELOG.md).  Each module now has its own.
    import mpmath

    from fasterm.accounting import gaussian, pld

    assert len(gaussian._GL_NODES) == 16 and len(pld._GL_NODES) == 8
    mpmath.mp.dps = 50
    # Intervals short on the density's scale (the quadrature branch): within the error
    # allowance the accountant adds to δ (8 ulps per unit of log magnitude, _gaussian_delta_terms).
    for mid, half in [(-0.3, 0.05), (-2.0, 0.1), (0.0, 0.01), (-0.2, 0.2), (-3.0, 0.05)]:
        assert gaussian._log_ndtr(mid - half) - gaussian._log_ndtr(mid + half) >= -0.5
        exact = mpmath.ncdf(mid + half) - mpmath.ncdf(mid - half)
        got = gaussian._ndtr_diff(mid, half)
        scale = 2.0 + abs(gaussian._log_ndtr(-abs(mid) + half)) + abs(gaussian._log_ndtr(-abs(mid) - half)) + abs(mid)
        assert abs(mpmath.mpf(got) - exact) <= 8 * 2.0**-52 * scale * exact, (mid, half)
