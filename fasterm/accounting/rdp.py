"""Rényi DP of the Poisson-subsampled Gaussian (noisy minibatch SGD).

The integer-order formula of Mironov, Talwar & Zhang (2019, "Rényi differential
privacy of the sampled Gaussian mechanism", §3.3), composed additively over steps
(Mironov 2017, Prop. 1), converted to (ε, δ) by Balle et al. (2020, "Hypothesis
testing interpretations and Rényi differential privacy", Thm 21; the bound of
Canonne, Kamath & Steinke 2020, Prop. 12), and carried from add/remove to
replace-one neighbours by Mironov's weak triangle inequality (2017, Prop. 11).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validation import check_delta, check_positive, check_scalar, derived_from


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


def rdp_to_epsilon(rdp, orders, delta) -> float:
    """:func:`rdp_epsilon` for arguments already checked (1-d float arrays of orders > 1, δ in (0, 1)):
    the conversion of Balle et al. (2020, Thm. 21), rounded up."""
    return _rdp_to_eps(rdp, orders, delta)


def sgd_rdp(q: float, sigma: float, steps: int, neighbors: str) -> tuple[np.ndarray, np.ndarray]:
    """``(orders, ε(α))``: the RDP curve at :data:`RDP_ORDERS` of ``steps`` Poisson-subsampled Gaussian
    steps of rate ``q`` and noise multiplier ``sigma`` (Mironov, Talwar & Zhang 2019), for ``neighbors``
    "add_remove", or "replace_one" by Mironov's weak triangle inequality (2017, Prop. 11).  Cached."""
    return _sgd_rdp(q, sigma, steps, neighbors)

