"""Privacy loss distribution of the Poisson-subsampled Gaussian (noisy minibatch SGD).

For replace-one neighbours the dominating pair (1−q)N(0, σ²) + qN(±1, σ²) (the
pair of dp-accounting's ``REPLACE_ONE``); for add/remove the two orderings of
((1−q)N(0, σ²) + qN(1, σ²), N(0, σ²)).  Discretised pessimistically by
connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022), composed
by FFT (Koskela, Jälkö & Honkela 2020) under the composition theorem for
dominating pairs (Zhu, Dong & Wang 2022, Thm 10), every numerical error rounded
towards more loss.  The notes above ``_pld_pair`` give the proof; the
measurements against dp-accounting: docs/solvers.rst.
"""

from __future__ import annotations

import functools
import math

import numpy as np


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
#    and shrinking ‖u‖ is a post-processing too); tests/accounting/test_pld.py checks the
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
#: Largest loss grid (points per step) the accountant builds before it gives up
#: and lets the RDP bound stand alone (absurdly small σ or huge T).
_PLD_MAX_POINTS = 2_000_000


def _pld_grid_step(steps: int) -> float:
    """Loss-grid spacing h for a T-step composition: min(0.01, 0.05/√T).

    Connect-the-dots errs by O(h²) per step (the interpolation of a convex
    function), so the T-fold error is O(T·h²): this h keeps it near 0.0025·c
    in ε, well inside the 5% on σ the calibration promises (measured in
    tests/accounting/test_pld.py against dp-accounting at a 1e-4 grid).
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

    The masses of :func:`_pld_step_masses`, with the total's shortfall from 1
    (quadrature and rounding) and an allowance added at +∞.  Returns None if
    the grid would exceed :data:`_PLD_MAX_POINTS` or a loss 500.
    """
    step = _pld_step_masses(kind, q, sigma, h)
    if step is None:
        return None
    k0, pmf, inf_mass, h = step
    total = math.fsum(pmf.tolist()) + inf_mass
    # The shortfall from 1, plus 1e-12 for the quadrature's per-piece errors (8-point
    # Gauss–Legendre on pieces ≤ σ/4 of a Gaussian integrand errs by ~1e-15 relative;
    # tests/accounting/test_pld.py compares it with 16 points) and the rounding of the sums.
    inf_mass += max(0.0, 1.0 - total) + 1e-12 + 64.0 * _UNIT_ROUNDOFF * math.sqrt(pmf.size)
    return k0, pmf, inf_mass, h


def _pld_step_masses(kind: str, q: float, sigma: float, h: float, x_range=None):
    """One step's connect-the-dots masses: (offset, pmf, P-mass sent to +∞, h), or None.

    Connect-the-dots split (see the notes above) of the P-mass of each bin
    (ε_k, ε_{k+1}] of the loss grid from ε_{k0} = ⌊L(x_lo)/h⌋h to
    ε_{k1} = ⌈L(x_hi)/h⌉h, each bin's integrals ∫p(x)a(L(x))dx computed by
    8-point Gauss–Legendre on pieces no wider than σ/4 (the weights written
    with expm1, so no cancellation).  The P-mass at x below x_lo (all of its
    losses < ε_{k0+1}) is moved up to ε_{k0+1}; the mass above
    min(L⁻¹(ε_{k1}), x_hi) goes to +∞ (its normal tail, the third element:
    no allowance for rounding yet).  The h returned is the one used: h
    itself, or the loss range/64 when the step's losses span fewer than 64
    steps of h.  ``x_range`` narrows [x_lo, x_hi] (the mass outside goes
    to the same places).  Returns None if the grid would exceed
    :data:`_PLD_MAX_POINTS` or a loss 500.
    """
    comps, loss_fn, inverse, x_lo, x_hi = _pld_pair(kind, q, sigma)
    if x_range is not None:
        x_lo, x_hi = max(x_lo, x_range[0]), min(x_hi, x_range[1])
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
