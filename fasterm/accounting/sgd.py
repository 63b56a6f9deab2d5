"""The (ε, δ) of noisy minibatch SGD and its noise multiplier.

:func:`sgd_epsilon` reports the smaller of two valid bounds — the PLD accountant
(:mod:`.pld`, and :mod:`.tilted` for small δ or many steps) and Rényi DP
(:mod:`.rdp`); :func:`calibrate_sgd_sigma` inverts it by bisection.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validation import check_delta, check_scalar, derived_from
from ._solve import _solve_increasing
from .gaussian import _gaussian_mu, check_gaussian_epsilon
from .pld import _pld_epsilon, _pld_grid_step, _sgd_pld
from .rdp import _check_neighbors, _check_sgd_inputs, _rdp_to_eps, _sgd_rdp
from .tilted import _tilted_sgd_epsilon


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
    loss; where that FFT composition's error allowance at +∞ exceeds δ/16
    (δ ≲ 1e-9, or T ≳ 1e4), also composed through the exponentially tilted
    step (:mod:`fasterm.accounting.tilted`: the Esscher identity
    ``p^{*T}(s) = Z^T e^{−λs}·p_λ^{*T}(s)``, one DFT, its rounding bounded after
    Higham 2002, Thm. 24.2, and the folding by Chernoff bounds, all paid
    relative to δ).  (2) The Rényi-DP bound: :func:`rdp_subsampled_gaussian`
    (Mironov, Talwar & Zhang 2019) converted by :func:`rdp_epsilon` (Balle et
    al. 2020, Thm. 21), for replace-one carried over by Mironov's weak triangle
    inequality (2017, Prop. 11 with p = q = 2:
    ε_rep(α) ≤ (α − ½)/(α − 1)·ε_ar(2α) + ε_ar(2α − 1)).  The PLD bound is
    within about 0.5% of the exact ε (tests/accounting/test_pld.py,
    tests/accounting/test_pld_small_delta.py: within 0.4% from δ = 1e-5 down to 1e-12,
    T up to 1e6) and wins except at absurdly small σ.
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
    """ε of the pair ``kind``: the FFT composition of :mod:`.pld` where its error allowance at
    +∞ is at most δ/16; beyond, also the tilted composition of :mod:`.tilted` (whose errors
    are paid relative to δ), and the smaller of the two valid bounds."""
    h = _pld_grid_step(steps)
    eps = allowance = math.inf
    if steps * 1e-12 < delta / 16.0:  # else the per-step allowance alone exceeds δ/16
        pld = _sgd_pld(q, sigma, steps, h, kind)
        if pld is not None:
            eps, allowance = _pld_epsilon(pld, delta), pld[2]
        if math.isfinite(eps) and (0.5 * steps * h * h > 0.005 * eps or eps < 20.0 * h):
            finer = max(min(math.sqrt(0.01 * eps / steps), eps / 20.0), h / 50.0)
            pld = _sgd_pld(q, sigma, steps, finer, kind)
            if pld is not None:
                eps = min(eps, _pld_epsilon(pld, delta))
    if allowance > delta / 16.0:
        eps = min(eps, _tilted_sgd_epsilon(kind, q, sigma, steps, delta, h))
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
    (ε, δ); it is within about 1% of it (tests/accounting/test_pld.py checks 5%
    against dp-accounting, both relations).  A pure function of
    public numbers: results are cached; one calibration takes tens of
    milliseconds at the estimators' defaults, seconds where δ is tiny and T
    large (the tilted composition; docs/solvers.rst).
    """
    q = check_scalar(sample_rate, "sample_rate", low=0.0, high=1.0, low_inclusive=False)
    steps = check_scalar(steps, "steps", low=1, integer=True)
    eps = check_gaussian_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0: the subsampled Gaussian is (ε, 0)-DP for no finite ε")
    neighbors = _check_neighbors(neighbors)
    with derived_from("sample_rate, steps, epsilon and delta"):
        return _calibrate_sgd_sigma(q, steps, eps, delta, neighbors)


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
    if sigma is None:  # absurd parameters: no bracket
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
