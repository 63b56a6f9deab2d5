"""The privacy-loss-distribution (PLD) accountant of replace-one noisy SGD.

fasterm.accounting's PLD accountant (``sgd_epsilon``/``calibrate_sgd_sigma``
with ``neighbors="replace_one"``) must report an ε that is never below the true
ε of the Poisson-subsampled Gaussian under replace-one neighbours, and close to
it.  The references here are independent of its code:

* one step (T = 1) has a closed form: δ(ε) = S_P(x_ε) − e^ε S_Q(x_ε) for the pair
  P = (1−q)N(0,σ²) + qN(1,σ²), Q = (1−q)N(0,σ²) + qN(−1,σ²), with x_ε the root
  of the privacy loss (scipy's brentq and normal survival functions), itself
  checked against direct numerical integration (scipy quad and mpmath);
* q = 1 is the Gaussian mechanism with shift 2, whose T-fold composition is
  exactly (2√T/σ)-GDP (Dong, Roth & Su 2022);
* Google's dp-accounting PLD accountant with ``NeighboringRelation.REPLACE_ONE``
  (its pessimistic estimate is an upper bound on the true ε, its optimistic one a
  lower bound: a valid accountant can never report less than the lower bound).

dp-accounting is a test-only oracle: those tests skip cleanly without it.
"""

import math
import time

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import fasterm.accounting as A


# ---------------------------------------------------------------------------
# Independent one-step references
# ---------------------------------------------------------------------------
def _mixture_pdfs(q, sigma, u, v):
    p = lambda z: (1 - q) * stats.norm.pdf(z, 0, sigma) + q * stats.norm.pdf(z, u, sigma)  # noqa: E731
    pp = lambda z: (1 - q) * stats.norm.pdf(z, 0, sigma) + q * stats.norm.pdf(z, v, sigma)  # noqa: E731
    return p, pp


def _exact_delta(q, sigma, eps):
    """δ(ε) of one replace-one step, closed form (crossing point by brentq, not the library's inverse)."""
    def loss(x):
        return (np.logaddexp(math.log1p(-q) if q < 1 else -np.inf, math.log(q) + (2 * x - 1) / (2 * sigma**2))
                - np.logaddexp(math.log1p(-q) if q < 1 else -np.inf, math.log(q) + (-2 * x - 1) / (2 * sigma**2)))
    x = optimize.brentq(lambda t: loss(t) - eps, -200 * sigma - 200, 200 * sigma + 200, xtol=1e-14, rtol=1e-15)
    sp = (1 - q) * stats.norm.sf(x, 0, sigma) + q * stats.norm.sf(x, 1, sigma)
    sq = (1 - q) * stats.norm.sf(x, 0, sigma) + q * stats.norm.sf(x, -1, sigma)
    return sp - math.exp(eps) * sq


def _exact_epsilon(q, sigma, delta):
    if _exact_delta(q, sigma, 0.0) <= delta:
        return 0.0
    return optimize.brentq(lambda e: _exact_delta(q, sigma, e) - delta, 0.0, 20.0, xtol=1e-13)


def _quad_delta(q, sigma, eps, u=1.0, v=-1.0):
    """δ(ε) = ∫ max(0, p − e^ε p') by adaptive quadrature (1-D, any u, v)."""
    p, pp = _mixture_pdfs(q, sigma, u, v)
    val, _ = integrate.quad(lambda z: max(0.0, p(z) - math.exp(eps) * pp(z)), -30 * sigma - 2, 30 * sigma + 2,
                            limit=800, points=[-1.0, 0.0, 1.0], epsabs=1e-15, epsrel=1e-10)
    return val


@pytest.mark.parametrize("q, sigma, eps", [(0.05, 0.9, 0.3), (0.3, 1.5, 1.0), (0.9, 2.0, 0.5), (0.01, 0.6, 2.0)])
def test_closed_form_matches_numerical_integration(q, sigma, eps):
    assert _exact_delta(q, sigma, eps) == pytest.approx(_quad_delta(q, sigma, eps), rel=1e-6, abs=1e-13)


def test_closed_form_matches_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    q, sigma, eps = 0.2, 1.1, 0.7

    def dens(z, mu):
        return mp.exp(-(z - mu) ** 2 / (2 * sigma**2)) / (sigma * mp.sqrt(2 * mp.pi))

    def f(z):
        diff = (1 - q) * dens(z, 0) + q * dens(z, 1) - mp.e**eps * ((1 - q) * dens(z, 0) + q * dens(z, -1))
        return diff if diff > 0 else 0
    x = optimize.brentq(lambda t: _exact_delta(q, sigma, eps) * 0 + (math.log(
        ((1 - q) * stats.norm.pdf(t, 0, sigma) + q * stats.norm.pdf(t, 1, sigma))
        / ((1 - q) * stats.norm.pdf(t, 0, sigma) + q * stats.norm.pdf(t, -1, sigma))) - eps), -20, 20)
    ref = mp.quad(f, [x, x + 5, x + 15, 40])
    assert _exact_delta(q, sigma, eps) == pytest.approx(float(ref), rel=1e-9)


# ---------------------------------------------------------------------------
# T = 1: the accountant against the closed form
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("q, sigma, delta", [
    (0.01, 0.7, 1e-5), (0.05, 0.9, 1e-5), (0.2, 1.2, 1e-6), (0.5, 2.0, 1e-5), (0.9, 2.0, 1e-5),
    (1.0, 3.0, 1e-5), (0.003, 5.0, 1e-8), (0.1, 0.4, 1e-3)])
def test_one_step_epsilon_is_a_tight_upper_bound(q, sigma, delta):
    eps = A.sgd_epsilon(q, sigma, 1, delta)
    # valid: the exact δ at the reported ε is within δ
    assert _exact_delta(q, sigma, eps) <= delta * (1 + 1e-9)
    # tight: within 0.2% (+1e-4) of the exact ε
    exact = _exact_epsilon(q, sigma, delta)
    assert exact <= eps <= exact * 1.002 + 1e-4


@pytest.mark.parametrize("q, sigma", [(0.02, 0.8), (0.3, 1.5), (1.0, 2.5)])
def test_one_step_discrete_pld_dominates_the_exact_profile(q, sigma):
    # The discretised one-step PLD's δ(ε) is ≥ the exact δ(ε) at every ε (connect-the-dots
    # is a dominating pair), and only slightly above it.
    pld = A.pld._sgd_pld(q, sigma, 1, A.pld._pld_grid_step(1))
    for eps in np.linspace(0.0, 6.0, 37):
        exact = _exact_delta(q, sigma, float(eps))
        mine = A.pld._pld_delta(pld, float(eps))
        assert mine >= exact - 1e-15
        assert mine <= exact * 1.01 + 1e-11


# ---------------------------------------------------------------------------
# The dominating pair: the antipodal 1-D pair is the worst case over ‖u‖, ‖v‖ ≤ 1
# ---------------------------------------------------------------------------
def _grid_delta_1d(q, sigma, eps, u, v, n=100001):
    x = np.linspace(-40 * sigma - 2, 40 * sigma + 2, n)
    base = (1 - q) * stats.norm.pdf(x, 0, sigma)
    diff = base + q * stats.norm.pdf(x, u, sigma) - math.exp(eps) * (base + q * stats.norm.pdf(x, v, sigma))
    return float(np.maximum(diff, 0.0).sum() * (x[1] - x[0]))


@pytest.mark.parametrize("q, sigma", [(0.05, 0.7), (0.4, 1.0), (0.95, 2.0)])
def test_antipodal_pair_dominates_one_dimensional_configurations(q, sigma):
    for eps in (0.0, 0.5, 1.5, 3.0):
        ref = _grid_delta_1d(q, sigma, eps, 1.0, -1.0)
        assert ref == pytest.approx(_exact_delta(q, sigma, eps), rel=1e-6, abs=1e-14)
        for u, v in [(1.0, 0.0), (0.0, 1.0), (1.0, 0.5), (1.0, -0.5), (0.5, -1.0), (0.3, -0.3), (-1.0, 0.2)]:
            assert _grid_delta_1d(q, sigma, eps, u, v) <= ref * (1 + 1e-7) + 1e-14


def _grid_delta_2d(q, sigma, eps, u, v, n=801):
    half = 10 * sigma + 2
    g = np.linspace(-half, half, n)
    X, Y = np.meshgrid(g, g)

    def pdf(m):
        return np.exp(-((X - m[0]) ** 2 + (Y - m[1]) ** 2) / (2 * sigma**2)) / (2 * math.pi * sigma**2)
    base = (1 - q) * pdf((0.0, 0.0))
    diff = base + q * pdf(u) - math.exp(eps) * (base + q * pdf(v))
    return float(np.maximum(diff, 0.0).sum() * (g[1] - g[0]) ** 2)


@pytest.mark.parametrize("q, sigma, eps", [(0.1, 0.8, 0.5), (0.5, 1.2, 1.0), (0.9, 1.5, 0.3)])
def test_antipodal_pair_dominates_two_dimensional_configurations(q, sigma, eps):
    # Every configuration of the two clipped gradients lies in the plane of 0, u, v.
    ref = _grid_delta_2d(q, sigma, eps, (1.0, 0.0), (-1.0, 0.0))
    assert ref == pytest.approx(_exact_delta(q, sigma, eps), rel=5e-4)  # the grid is accurate
    for angle in (0.6, 1.2, 1.8, 2.4, 3.0):
        for r in (1.0, 0.6):
            v = (r * math.cos(angle), r * math.sin(angle))
            assert _grid_delta_2d(q, sigma, eps, (1.0, 0.0), v) <= ref * (1 + 1e-6)


# ---------------------------------------------------------------------------
# q = 1: T Gaussian steps with shift 2 compose exactly to (2√T/σ)-GDP
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("sigma, T, delta", [(4.0, 10, 1e-5), (20.0, 200, 1e-6), (2.5, 3, 1e-5)])
def test_no_subsampling_matches_gaussian_dp(sigma, T, delta):
    exact = A.gaussian_epsilon(2 * math.sqrt(T) / sigma, delta)
    eps = A.sgd_epsilon(1.0, sigma, T, delta)
    assert exact <= eps <= exact * 1.005


def _exact_delta_add_remove(q, sigma, eps):
    """One add/remove step: the larger δ(ε) of (P, Q) and (Q, P), P = (1−q)N(0,σ²) + qN(1,σ²),
    Q = N(0,σ²), each by brentq on its likelihood ratio and normal survival functions."""
    c = 1 / (2 * sigma**2)
    log_1q = math.log1p(-q) if q < 1 else -np.inf
    remove = lambda x: float(np.logaddexp(log_1q, math.log(q) + (2 * x - 1) * c))  # log P/Q, increasing  # noqa: E731
    out = 0.0
    if eps > log_1q:  # P over Q: the set {log P/Q > ε} = {x > x_ε}
        x = optimize.brentq(lambda t: remove(t) - eps, -200 * sigma - 200, 200 * sigma + 200, xtol=1e-14)
        sp = (1 - q) * stats.norm.sf(x, 0, sigma) + q * stats.norm.sf(x, 1, sigma)
        out = max(out, sp - math.exp(eps) * stats.norm.sf(x, 0, sigma))
    if -eps > log_1q:  # Q over P: {log Q/P > ε} = {log P/Q < −ε} = {x < x'}
        x = optimize.brentq(lambda t: remove(t) + eps, -200 * sigma - 200, 200 * sigma + 200, xtol=1e-14)
        sp = (1 - q) * stats.norm.cdf(x, 0, sigma) + q * stats.norm.cdf(x, 1, sigma)
        out = max(out, stats.norm.cdf(x, 0, sigma) - math.exp(eps) * sp)
    return out


@pytest.mark.parametrize("q, sigma, delta", [
    (0.01, 0.7, 1e-5), (0.2, 1.2, 1e-6), (0.5, 2.0, 1e-5), (0.9, 2.0, 1e-5), (1.0, 3.0, 1e-5)])
def test_one_step_add_remove_epsilon_is_a_tight_upper_bound(q, sigma, delta):
    eps = A.sgd_epsilon(q, sigma, 1, delta, "add_remove")
    assert _exact_delta_add_remove(q, sigma, eps) <= delta * (1 + 1e-9)
    exact = optimize.brentq(lambda e: _exact_delta_add_remove(q, sigma, e) - delta, 0.0, 20.0, xtol=1e-13)
    assert exact <= eps <= exact * 1.002 + 1e-4


@pytest.mark.parametrize("sigma, T, delta", [(2.0, 10, 1e-5), (10.0, 200, 1e-6)])
def test_no_subsampling_add_remove_matches_gaussian_dp(sigma, T, delta):
    exact = A.gaussian_epsilon(math.sqrt(T) / sigma, delta)
    eps = A.sgd_epsilon(1.0, sigma, T, delta, "add_remove")
    assert exact <= eps <= exact * 1.005


# ---------------------------------------------------------------------------
# The numerical steps only ever move loss upwards
# ---------------------------------------------------------------------------
def test_fft_composition_dominates_exact_convolution():
    rng = np.random.default_rng(3)
    for n_a, n_b in [(50, 70), (1000, 1000), (3000, 257)]:
        a = rng.exponential(size=n_a) ** 4
        b = rng.exponential(size=n_b) ** 4
        a[::7] *= 1e-12  # a wide dynamic range, as in real tails
        a, b = a / a.sum() * (1 - 1e-9), b / b.sum()
        off, pmf, inf = A.pld._pld_convolve((-5, a, 1e-9), (3, b, 0.0))
        exact = np.convolve(a, b)  # offset −2
        # for every threshold t: exact mass at losses ≥ t ≤ ours at ≥ t plus ours at +∞
        ours = np.zeros(exact.size)
        ours[off + 2: off + 2 + pmf.size] = pmf
        assert off >= -2 and off + 2 + pmf.size <= exact.size
        tail_exact = np.cumsum(exact[::-1])[::-1]
        tail_ours = np.cumsum(ours[::-1])[::-1]
        assert np.all(tail_exact <= tail_ours + (inf - 1e-9) + 1e-18)
        assert inf - 1e-9 < 1e-9  # the allowance is small


def test_epsilon_reading_inverts_delta():
    pld = A.pld._sgd_pld(0.02, 1.0, 100, A.pld._pld_grid_step(100))
    for delta in (1e-3, 1e-5, 1e-7):
        eps = A.pld._pld_epsilon(pld, delta)
        assert A.pld._pld_delta(pld, eps) <= delta
        assert A.pld._pld_delta(pld, eps * (1 - 1e-6)) > delta


def test_sgd_epsilon_is_the_smaller_of_the_pld_and_rdp_bounds():
    q, sigma, T = 0.02, 1.3, 50
    for delta in (1e-5, 1e-12):
        pld = A.sgd._sgd_epsilon_pld(q, sigma, T, delta)
        rdp = A.sgd._sgd_epsilon_rdp(q, sigma, T, delta, "replace_one")
        assert A.sgd_epsilon(q, sigma, T, delta) == min(pld, rdp)
    assert A.sgd._sgd_epsilon_pld(q, sigma, T, 1e-5) < 0.8 * A.sgd._sgd_epsilon_rdp(q, sigma, T, 1e-5, "replace_one")
    # at δ = 1e-12 (the tilted composition: the FFT one's allowance is not small against δ) too
    assert A.sgd_epsilon(q, sigma, T, 1e-12) < 0.8 * A.sgd._sgd_epsilon_rdp(q, sigma, T, 1e-12, "replace_one")
    # add/remove: the same, with the larger ε of the two orderings of the add/remove pair
    pld = A.sgd._sgd_epsilon_pld(q, sigma, T, 1e-5, "add_remove")
    assert pld == pytest.approx(max(A.sgd._sgd_epsilon_pld_kind(q, sigma, T, 1e-5, k) for k in ("remove", "add")),
                                abs=1e-8)
    assert A.sgd_epsilon(q, sigma, T, 1e-5, "add_remove") == min(
        pld, A.sgd._sgd_epsilon_rdp(q, sigma, T, 1e-5, "add_remove"))


# ---------------------------------------------------------------------------
# dp-accounting's PLD accountant, REPLACE_ONE
# ---------------------------------------------------------------------------
GRID = [  # (q, σ, T, δ)
    (0.01, 0.8, 1, 1e-5), (0.3, 1.5, 1, 1e-6), (1.0, 3.0, 1, 1e-5),
    (0.02, 1.0, 100, 1e-5), (1024 / 160000, 0.8, 160, 1e-5), (0.01, 0.9, 1000, 1e-6),
    (0.1, 2.0, 20, 1e-5), (0.5, 4.0, 10, 1e-5), (0.001, 0.7, 3000, 1e-5), (0.05, 5.0, 300, 1e-8),
]
FIVE = [  # (q, T, ε, δ): the five points
    (0.02, 100, 1.0, 1e-5), (512 / 20000, 79, 1.0, 1e-5), (1024 / 160000, 160, 1.0, 1e-5),
    (0.01, 1000, 2.0, 1e-6), (0.1, 20, 0.5, 1e-5),
]
VDI = 1e-3  # dp-accounting's loss grid (its connect-the-dots is already accurate to ~1e-4 here)


def _dpa_epsilon(q, sigma, T, delta, pessimistic=True, neighbors="replace_one"):
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
    relation = {"replace_one": dpa.NeighboringRelation.REPLACE_ONE,
                "add_remove": dpa.NeighboringRelation.ADD_OR_REMOVE_ONE}[neighbors]
    pld = pld_lib.from_gaussian_mechanism(
        standard_deviation=sigma, sensitivity=1.0, pessimistic_estimate=pessimistic,
        value_discretization_interval=VDI, sampling_prob=q, use_connect_dots=pessimistic,
        neighboring_relation=relation)
    return pld.self_compose(T).get_epsilon_for_delta(delta)


@pytest.fixture(scope="module")
def dpa_refs():
    pytest.importorskip("dp_accounting")
    return {(args, nb): (_dpa_epsilon(*args, neighbors=nb), _dpa_epsilon(*args, pessimistic=False, neighbors=nb))
            for args in GRID for nb in ("replace_one", "add_remove")}


def test_dp_accounting_accountant_is_the_pair_we_cross_check():
    # PLDAccountant(REPLACE_ONE) on a Poisson-sampled Gaussian event is from_gaussian_mechanism above.
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant
    acc = pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE, value_discretization_interval=VDI)
    acc.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.02, dpa.GaussianDpEvent(1.0)), 100))
    assert acc.get_epsilon(1e-5) == pytest.approx(_dpa_epsilon(0.02, 1.0, 100, 1e-5), rel=1e-9)


@pytest.mark.parametrize("neighbors", ["replace_one", "add_remove"])
@pytest.mark.parametrize("args", GRID)
def test_epsilon_matches_dp_accounting(args, neighbors, dpa_refs):
    pess, opt = dpa_refs[(args, neighbors)]
    mine = A.sgd_epsilon(*args, neighbors)
    # guaranteed: an upper bound on the true ε is never below a lower bound on it
    assert mine >= opt
    # both accountants are tight: ours within 1% (+1e-3) of dp-accounting's pessimistic value,
    # and not below it by more than that value's own discretisation slack (~1e-4 at this grid)
    assert mine <= pess * 1.01 + 1e-3
    assert mine >= pess - 2e-3 * (1 + pess)


def _dpa_sigma(q, T, eps, delta, neighbors, near):
    """dp-accounting's tight σ: bisection in log σ on its pessimistic ε, to 1e-4, from a bracket near σ."""
    lo, hi = near / 1.2, near * 1.05
    assert _dpa_epsilon(q, lo, T, delta, neighbors=neighbors) > eps
    assert _dpa_epsilon(q, hi, T, delta, neighbors=neighbors) <= eps
    while hi / lo > 1 + 1e-4:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if _dpa_epsilon(q, mid, T, delta, neighbors=neighbors) <= eps else (mid, hi)
    return hi


@pytest.fixture(scope="module")
def dpa_sigmas():
    pytest.importorskip("dp_accounting")
    return {point: _dpa_sigma(*point, "replace_one", A.calibrate_sgd_sigma(*point)) for point in FIVE}


@pytest.mark.parametrize("point", FIVE)
def test_calibrated_sigma_within_5_percent_of_tight_and_never_below(point, dpa_sigmas):
    q, T, eps, delta = point
    tight = dpa_sigmas[point]
    mine = A.calibrate_sgd_sigma(q, T, eps, delta)
    assert A.sgd_epsilon(q, mine, T, delta) <= eps
    assert tight <= mine <= 1.05 * tight
    # in fact within 1%, where the Rényi-DP calibration was 1.15–1.71× the tight σ
    assert mine <= 1.01 * tight


@pytest.mark.parametrize("point", [FIVE[0], FIVE[2]])
def test_add_remove_calibrated_sigma_within_1_percent_of_tight(point):
    q, T, eps, delta = point
    mine = A.calibrate_sgd_sigma(q, T, eps, delta, "add_remove")
    assert A.sgd_epsilon(q, mine, T, delta, "add_remove") <= eps
    tight = _dpa_sigma(q, T, eps, delta, "add_remove", mine)
    assert tight <= mine <= 1.01 * tight
    # the replace-one σ is larger: its pair dominates both add/remove orderings
    assert mine < A.calibrate_sgd_sigma(q, T, eps, delta)


def test_calibration_is_fast():
    A.clear_caches()
    start = time.perf_counter()
    for q, T, eps, delta in FIVE:
        A.calibrate_sgd_sigma(q, T, eps, delta)
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0  # measured ~0.2 s for all five on an idle core


@pytest.mark.parametrize("q, T, eps, delta", [(0.01, 300, 1.0, 1e-5), (0.3, 5, 3.0, 1e-6), (0.02, 100, 1.0, 1e-11)])
def test_calibration_meets_the_budget_and_stops_within_tolerance(q, T, eps, delta):
    s = A.calibrate_sgd_sigma(q, T, eps, delta)
    assert A.sgd_epsilon(q, s, T, delta) <= eps
    assert A.sgd_epsilon(q, s * (1 - 3 * A.SGD_SIGMA_RTOL), T, delta) > eps


def test_quadrature_is_far_below_its_allowance():
    # The one-step masses with 8 Gauss–Legendre nodes per piece against 16 nodes (the PLD's own
    # rule; the Gaussian accountant has its 16 in fasterm.accounting.gaussian): per grid
    # point and in total far below the 1e-12 the accountant adds at +∞ for them.
    q, sigma = 0.02, 0.9
    h = A.pld._pld_grid_step(100)
    off, pmf, inf, _ = A.pld._pld_replace_one_step(q, sigma, h)
    nodes, weights = A.pld._GL_NODES, A.pld._GL_WEIGHTS
    try:
        A.pld._GL_NODES, A.pld._GL_WEIGHTS = np.polynomial.legendre.leggauss(16)
        off16, pmf16, _, _ = A.pld._pld_replace_one_step(q, sigma, h)
    finally:
        A.pld._GL_NODES, A.pld._GL_WEIGHTS = nodes, weights
    assert off == off16
    assert np.abs(pmf - pmf16).sum() < 1e-14
    assert math.fsum(pmf.tolist()) + inf >= 1.0
