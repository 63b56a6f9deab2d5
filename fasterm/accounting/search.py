"""Private selection by random stopping (private hyperparameter search).

Papernot & Steinke ("Hyperparameter tuning with Rényi differential privacy",
ICLR 2022, Thm 2, improving Liu & Talwar, STOC 2019): running a mechanism a
random number K ~ D_{η,γ} of times (truncated negative binomial) and releasing
only the best run costs a bounded multiple of one run's RDP plus
log E[K]/(λ − 1): :func:`private_search_epsilon`,
:func:`calibrate_private_search` (behind
:class:`fasterm.model_selection.PrivateSearch`).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_delta, check_derived, check_positive, check_scalar, derived_from
from ._solve import _solve_increasing
from .gaussian import check_gaussian_epsilon
from .rdp import _rdp_to_eps


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
    eps = check_gaussian_epsilon(epsilon)
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
        mu = _solve_increasing(lambda m: _search_epsilon(m, delta, eta, gamma), eps, 1e-6, 1.0)
        mu = check_derived(mu, "mu", names)
    return mu, gamma
