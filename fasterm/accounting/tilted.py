"""Exponentially tilted composition of the PLD: the SGD accountant for small δ and many steps.

The FFT composition of :mod:`.pld` bounds each transform's rounding error in
ℓ1 and puts the bound at +∞.  That bound is absolute: T steps pay about T times
the first transform's, more than δ once δ ≲ 1e-9 or T ≳ 1e4.  Here the same
dominating pair (:func:`.pld._pld_pair`) on the same kind of connect-the-dots
grid is composed so that every numerical error is paid relative to δ.  The
theorems, in the order they are used:

1. Masses.  One step's connect-the-dots masses p̃ (:func:`.pld._pld_step_masses`;
   the discrete pair dominates the step's pair, so its δ(ε) is an upper bound
   for every ε: Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect
   the dots: tighter discrete approximations of privacy loss distributions",
   the pessimistic estimate) are raised to
   p̄_k = p̃_k + ρ(p̃_{k−1} + p̃_k + p̃_{k+1}), ρ = 1e-12 + 16u·max|l|/h: an
   entrywise upper bound on the exact masses, covering the quadrature and the
   rounding of the split weights (tests/accounting/test_pld_small_delta.py holds the
   8-point quadrature against 16 points to ρ/4).  The step's P-mass beyond
   2⁻¹⁰δ/T in either tail of x goes to +∞ (upper) or up to the lowest grid
   point (lower) (:func:`_tail_range`).  More mass, or mass at a larger loss,
   only raises δ(ε) = Σ_{s>ε}(1 − e^{ε−s})p(s) + p(∞), before or after
   composition (a non-decreasing function of the loss; convolution of
   non-negative measures is monotone).  Errors in the loss values themselves
   (≲ 1e-13 per step) are a shift of the losses, paid in ε by
   :func:`fasterm.accounting.sgd._sgd_epsilon_pld`.
2. Composition: dominating pairs compose (Zhu, Dong & Wang 2022, Thm. 10), the
   T-fold PLD is the T-fold convolution p̄^{*T} (Koskela, Jälkö & Honkela 2020).
3. Tilting (the Esscher transform).  For λ > 0 the tilted step
   p_λ(l) = p̄(l)e^{λl}/Z, Z = Σ p̄(l)e^{λl}, satisfies
   p_λ^{*T}(s) = p̄^{*T}(s)e^{λs}/Z^T exactly, so p̄^{*T}(s) = Z^T e^{−λs}·p_λ^{*T}(s):
   an error e(s) in the tilted T-fold costs Z^T e^{−λs}|e(s)| at the loss s,
   of the order of δ at s > ε when λ puts the tilted distribution near ε (the
   saddle point TK'(λ) ≈ ε of the cumulant function K = log Z; any λ > 0
   gives a valid bound, λ only decides how tight).
4. One DFT.  p_λ is folded modulo N onto the window [0, Nh) of the loss grid
   and its DFT raised to the T-th power: by the convolution theorem for cyclic
   convolution the inverse DFT is p_λ^{*T} folded modulo N.
5. Error bounds, each added to δ(ε):
   - rounding.  A radix-2 DFT of f errs componentwise by at most
     ((1 + η)^{log₂N} − 1)‖f‖₁: in the proof of Higham 2002 ("Accuracy and
     Stability of Numerical Algorithms", Thm. 24.2) the butterfly factors are
     computed with componentwise relative error η = 7.7u, have entries of
     modulus 1 and one path from each input to each output; taken twice.  A
     T-th power of a number known to ±κ errs by at most Tκ(|y| + κ)^{T−1},
     plus the rounding of the power (≤ 4uT(|log|y|| + π + 2) relative); the
     inverse DFT errs normwise (Thm. 24.2).  Their ℓ2 sum E bounds the ℓ2
     error of the window, which costs at most
     E·‖Z^T e^{−λs}1_{s>ε}‖₂ ≤ E·Z^T e^{−λs₁}/√(1 − e^{−2λh}) (Cauchy–Schwarz),
     s₁ the first grid point above ε.  Negative entries are set to zero
     (closer to the exact, non-negative, values).
   - folding.  With U(b) = min_θ (Σ p_λ e^{θl})^T e^{−θb}, the Chernoff bound
     on the tilted mass at losses ≥ b (the moment bounds of Koskela, Jälkö,
     Prediger & Honkela 2021): the tilted mass above the window is missing
     from it, at most Z^T e^{−λNh}U(Nh), and folds onto losses above ε only
     from beyond Nh + ε, at most Z^T e^{−λε}U(Nh + ε).  Mass below the window
     folds at least Nh higher, where the tilt makes it cost at most e^{−λNh}.
6. The mass at +∞: a step sends ι there, T steps 1 − (1 − ι)^T ≤ Tι.
δ(ε) is read in closed form on each grid interval as in
:func:`.pld._pld_epsilon`, the bounds raised by a relative 1e-9 + 4(n + N)u
for the rounding of the sums.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .pld import _PLD_MAX_POINTS, _UNIT_ROUNDOFF, _normal_cdf, _pld_pair, _pld_step_masses

#: The largest window (points) of the tilted T-fold PLD.
_TILT_MAX_WINDOW = 1 << 22
#: Share of δ the numerical and folding terms may take before λ and the window are re-chosen.
_TILT_ERROR_SHARE = 1e-2


@functools.lru_cache(maxsize=4)
def _upper_step(kind: str, q: float, sigma: float, h: float, x_range):
    """(offset, p̄, log p̄, ι, h) of one step on [x_lo, x_hi] = ``x_range``: p̄ the entrywise
    upper bound of note 1, ι the P-mass sent to +∞; or None."""
    step = _pld_step_masses(kind, q, sigma, h, x_range)
    if step is None:
        return None
    k0, pmf, tail, h = step
    rho = 1e-12 + 16.0 * _UNIT_ROUNDOFF * max(abs(k0), abs(k0 + pmf.size - 1))  # 16u·max|l|/h
    local = pmf.copy()
    local[1:] += pmf[:-1]
    local[:-1] += pmf[1:]
    upper = pmf + rho * local
    with np.errstate(divide="ignore"):
        log_upper = np.log(upper)
    upper.setflags(write=False)
    log_upper.setflags(write=False)
    return k0, upper, log_upper, tail * (1.0 + 1e-9), h


def _moments(log_p, s, lam: float):
    """(K, K', K'') of the cumulant function K(λ) = log Σ p e^{λs} at λ (for choosing λ and h)."""
    a = log_p + lam * s
    i = int(np.argmax(a))
    w = np.exp(a - a[i])
    d = s - s[i]  # centred at the heaviest point: no cancellation in the variance
    z = float(w.sum())
    m1 = float(w @ d) / z
    var = max(float(w @ (d * d)) / z - m1 * m1, 0.0)
    return float(a[i]) + math.log(z), float(s[i]) + m1, var


def _log_mgf(log_p, s, theta: float) -> float:
    """log Σ e^{log p + θs}, raised by 2n·u for the rounding of the sum (of positive terms)."""
    a = log_p + theta * s
    top = float(a.max())
    return top + math.log(float(np.exp(a - top).sum())) + 2.0 * s.size * _UNIT_ROUNDOFF


def _coarse(log_p, s, points: int = 4096):
    """(log p, s) summed in blocks to at most ``points`` entries (block sums at their mean loss):
    for choosing λ and the window, which need no precision."""
    if s.size <= points:
        return log_p, s
    b = -(-s.size // points)
    pad = b * points - s.size
    p = np.append(np.exp(log_p), np.zeros(pad)).reshape(points, b)
    ps = np.append(np.exp(log_p) * s, np.zeros(pad)).reshape(points, b)
    mass = p.sum(axis=1)
    keep = mass > 0.0
    return np.log(mass[keep]), ps.sum(axis=1)[keep] / mass[keep]


def _erfcx(x: float) -> float:
    """e^{x²}·erfc(x) for x ≥ 0 (asymptotic series beyond 26, where e^{x²} would overflow)."""
    if x < 26.0:
        return math.exp(x * x) * math.erfc(x)
    r = 1.0 / (x * x)
    return (1.0 - 0.5 * r + 0.75 * r * r - 1.875 * r ** 3) / (x * math.sqrt(math.pi))


def _saddle_lambda(log_p, s, steps: int, delta: float) -> float:
    """The tilt whose saddle-point estimate of δ(TK'(λ)) is δ: a guess of the best λ, no more.

    With the tilted T-fold sum taken as normal, N(TK', TK''), δ(ε) at ε = TK'(λ)
    is about e^{T(K − λK')}·(M(λ) − M(λ + 1)), M(b) = e^{b²v/2}Φ̄(b√v), v = TK''.
    """
    def excess(lam):
        k, k1, k2 = _moments(log_p, s, lam)
        v = steps * k2
        m = [0.5 * _erfcx(b * math.sqrt(0.5 * v)) for b in (lam, lam + 1.0)]
        gap = m[0] - m[1]
        if not gap > 0.0:
            return -math.inf
        return steps * (k - lam * k1) + math.log(gap) - math.log(delta)

    lo, hi = 1e-4, 1e4
    while hi / lo > 1.03:
        mid = math.sqrt(lo * hi)
        if excess(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def _mean_lambda(log_p, s, steps: int, eps: float, near: float) -> float:
    """The tilt whose tilted mean TK'(λ) is ε (the Chernoff-optimal λ for ε), to 1%, searched
    within a factor 64 of ``near`` (K' is increasing)."""
    lo, hi = near / 64.0, near * 64.0
    while hi / lo > 1.01:
        mid = math.sqrt(lo * hi)
        if steps * _moments(log_p, s, mid)[1] < eps:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def _tilted_pld(step, steps: int, delta: float, lam: float, eps_low: float):
    """The tilted T-fold PLD on a window, with its error terms (notes 3-5), or None.

    Returns (r, log_scale, λ, E, log_u, h, n, rel): r the window's tilted masses
    at losses jh, j = 0 … N − 1, log_scale = T·K(λ), E the ℓ2 error bound, log_u
    the logs of the Chernoff bounds U(Nh) and U(Nh + eps_low) and eps_low, n the
    step's size, rel the factor for the rounding of the tilt and the fold.  The
    window reaches high enough that the folding terms are below 1e-4·δ for
    ε ≥ eps_low (θ chosen on a coarse copy, U then evaluated on the step).
    """
    k0, upper, log_upper, _, h = step
    s = (k0 + np.arange(upper.size)) * h
    log_z = _log_mgf(log_upper, s, lam)
    log_tilted = log_upper + lam * s - log_z
    tilted = np.exp(log_tilted)
    # top: T·log Σ p_λ e^{θl} − θ·top ≤ log U_target, the best θ of a grid
    log_target = math.log(1e-4 * delta) - steps * log_z + lam * eps_low - math.log(2.0)
    c_log, c_s = _coarse(log_tilted, s)
    thetas = lam * np.exp2(np.arange(-8.0, 3.01, 0.25))
    mgfs = np.array([steps * _log_mgf(c_log, c_s, t) for t in thetas])
    # the fold term needs U(top + ε), ε ≥ eps_low; the mass above the window Z^T e^{−λ·top}U(top)
    tops = (mgfs - log_target) / thetas - eps_low
    best = int(np.argmin(tops))
    above = float(np.min((mgfs + steps * log_z - math.log(1e-4 * delta)) / (lam + thetas)))
    need = max(tops[best] / h, above / h, math.log(1e4 / delta) / (lam * h)) + 1.0
    if not need < _TILT_MAX_WINDOW:
        return None
    n_win = 1 << max(4, int(math.ceil(need)).bit_length())
    top = n_win * h
    near = [steps * _log_mgf(log_tilted, s, t) for t in thetas[max(best - 1, 0):best + 2]]
    log_u = (min(m - t * top for m, t in zip(near, thetas[max(best - 1, 0):])),
             min(m - t * (top + eps_low) for m, t in zip(near, thetas[max(best - 1, 0):])), eps_low)
    folded = np.bincount((k0 + np.arange(upper.size)) % n_win, weights=tilted, minlength=n_win)
    f1 = float(folded.sum()) * (1.0 + 2.0 * folded.size * _UNIT_ROUNDOFF)
    levels = math.log2(n_win)
    kappa = 2.0 * math.expm1(levels * math.log1p(7.7 * _UNIT_ROUNDOFF))
    y = np.fft.rfft(folded)
    mag = np.abs(y)
    with np.errstate(divide="ignore"):
        log_mag = np.log(mag)
    power = np.exp(steps * log_mag) * np.exp(1j * (steps * np.angle(y)))
    # |ŷ^T − y^T| ≤ Tκ(|ŷ| + κ)^{T−1}, κ = kappa·‖f‖₁, and the power's own rounding
    rounding = np.expm1(4.0 * _UNIT_ROUNDOFF * steps * (np.abs(np.where(mag > 0, log_mag, 0.0)) + math.pi + 2.0))
    dev = (steps * kappa * f1 * np.exp((steps - 1) * np.log(mag + kappa * f1))
           + (rounding + 4.0 * _UNIT_ROUNDOFF) * np.abs(power))
    weights = np.full(dev.size, 2.0)
    weights[0] = weights[-1] = 1.0
    freq_err = math.sqrt(float(weights @ (dev * dev)) / n_win)
    r = np.fft.irfft(power, n_win)
    err = (freq_err + kappa * (float(np.linalg.norm(r)) + freq_err)) * (1.0 + 1e-6)
    np.maximum(r, 0.0, out=r)
    # The stored tilted masses and their fold are the exact ones to a relative
    # 4u(2 + |argument of exp|) and ⌈n/N⌉u (sums of non-negative terms): exact ≤ stored/(1 − ρ),
    # so the exact T-fold is at most (1 − ρ)^{−T} ≤ e^{1.01Tρ} times the stored one's.
    finite = log_upper[np.isfinite(log_upper)]
    arg = float(np.max(np.abs(finite))) + lam * float(np.max(np.abs(s))) + abs(log_z)
    rho = 4.0 * _UNIT_ROUNDOFF * (2.0 + arg) + (-(-upper.size // n_win) + 1) * _UNIT_ROUNDOFF
    # U was computed for the intended tilted masses; the stored ones are at most (1 + ρ) times them
    log_u = (log_u[0] + 1.01 * steps * rho, log_u[1] + 1.01 * steps * rho, log_u[2])
    return r, steps * log_z, lam, err, log_u, h, upper.size, math.exp(1.01 * steps * rho)


def _tilted_epsilon(tp, delta: float, inf_mass: float):
    """(ε, share of δ taken by the error terms) from a tilted PLD (∞ if the window cannot certify δ).

    On (s_{j−1}, s_j] the bound is A_j − e^ε B_j + C_j (A_j, B_j the suffix sums of
    p_k and p_k e^{−s_k}, p the untilted masses), C_j the ℓ2 error term at s₁ = s_j
    and the folding terms at ε ≥ s_{j−1} — all raised by the relative margin — plus Tι.
    """
    r, log_scale, lam, err, log_u, h, n, rel_tilt = tp
    n_win = r.size
    # grid points s_j = jh ≥ h with weights Z^T e^{−λ s_j} below e^{700} (further down the
    # error term alone exceeds δ)
    first = max(1, int(math.ceil((log_scale - 700.0) / (lam * h))))
    if first >= n_win:
        return math.inf, math.inf
    losses = np.arange(first, n_win) * h
    w = np.exp(log_scale - lam * losses)
    p = r[first:] * w
    A = np.cumsum(p[::-1])[::-1]
    B = np.cumsum((p * np.exp(-losses))[::-1])[::-1]
    A_next, B_next = np.append(A[1:], 0.0), np.append(B[1:], 0.0)
    log_u_top, log_u_fold, eps_low = log_u
    fold = np.where(losses - h >= eps_low, math.exp(lam * h + log_u_fold), math.exp(lam * h + log_u_top))
    extra = (w * (err / math.sqrt(-math.expm1(-2.0 * lam * h)) + fold)
             + math.exp(log_scale - lam * n_win * h + log_u_top) + math.exp(-lam * n_win * h))
    # the tilt's rounding, the untilting exp's (relative 4u(1 + |argument|)) and the sums'
    untilt = 4.0 * _UNIT_ROUNDOFF * (1.0 + abs(log_scale) + lam * n_win * h)
    rel = rel_tilt * (1.0 + untilt) * (1.0 + 1e-9 + 4.0 * (n + n_win) * _UNIT_ROUNDOFF)
    with np.errstate(over="ignore", invalid="ignore"):
        at_grid = rel * (A_next - np.exp(losses) * B_next + extra) + inf_mass
    ok = at_grid <= delta
    if not ok.any():
        return math.inf, math.inf
    j = int(np.argmax(ok))
    share = float(rel * extra[j] / delta)
    left = float(losses[j]) - h
    if j == 0 and first > 1:  # the bound was not evaluated below s_first
        return float(losses[0]), share
    ratio = (A[j] + extra[j] - (delta - inf_mass) / rel) / B[j]
    if not math.isfinite(ratio):
        return float(losses[j]), share
    eps = max(math.log(ratio) if ratio > 1.0 else 0.0, left)
    return eps + 1e-12 * (1.0 + eps), share


def _tail_range(kind: str, q: float, sigma: float, budget: float):
    """[x_lo, x_hi] with P-mass at most ``budget`` below x_lo and at most ``budget`` above x_hi.

    The step's mass above x_hi goes to +∞ and the mass below x_lo up to the lowest grid
    point, both of which only raise δ(ε); with budget = 2⁻¹⁰δ/T they cost at most 2⁻⁹δ in all.
    Without the cut, the far tails of the loss (Gaussian tails in x, long ones in l) would
    dominate the moment generating function at the λ that reaches ε, where the tilted
    distribution would be a few rare large jumps, and would lengthen the grid.
    """
    comps = _pld_pair(kind, q, sigma)[0]

    def mass_above(x):
        return sum(w * _normal_cdf(-(x - m) / sigma) for m, w in comps.items())

    def mass_below(x):
        return sum(w * _normal_cdf((x - m) / sigma) for m, w in comps.items())

    def solve(f, lo, hi):  # f decreasing from > budget at lo to ≤ budget at hi: the hi end
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            lo, hi = (mid, hi) if f(mid) > budget else (lo, mid)
        return hi

    span = 40.0 * sigma + 2.0
    x_hi = solve(mass_above, -span, span)
    x_lo = -solve(lambda x: mass_below(-x), -span, span)
    return x_lo, x_hi


def _tilted_grid_step(step, steps: int, lam: float) -> float:
    """A grid step fine enough for the connect-the-dots spread: h²/v ≤ 0.02.

    Connect-the-dots adds a variance of at most h²/4 per step (about h²/6 on
    average) to the loss; against the per-step variance v of the loss (the
    smaller of the untilted and the tilted one) that is a relative error of
    about h²/(12v) in the spread of the sum, hence in ε.
    """
    k0, upper, log_upper, _, h = step
    s = (k0 + np.arange(upper.size)) * h
    v = min(_moments(log_upper, s, 0.0)[2], _moments(log_upper, s, lam)[2])
    return math.sqrt(0.02 * v)


def _tilted_sgd_epsilon(kind: str, q: float, sigma: float, steps: int, delta: float, h: float) -> float:
    """ε of T steps of the pair ``kind`` at δ by the tilted composition (∞ if it cannot serve).

    The grid is h, or finer where :func:`_tilted_grid_step` asks for it (down to
    h/16); λ is the saddle-point guess (on the grid h), and where the error terms take more than
    :data:`_TILT_ERROR_SHARE` of δ, the λ whose tilted mean is the ε found is
    tried too (the smaller ε of the two, both valid bounds, is returned).
    """
    x_range = _tail_range(kind, q, sigma, 2.0 ** -10 * delta / steps)
    step = _upper_step(kind, q, sigma, h, x_range)
    if step is None:
        return math.inf
    s = (step[0] + np.arange(step[1].size)) * step[4]
    lam = _saddle_lambda(step[2], s, steps, delta)
    fine = _tilted_grid_step(step, steps, lam)
    if fine < step[4]:
        h = max(fine, step[4] / 16.0, step[1].size * step[4] / _PLD_MAX_POINTS)
        step = _upper_step(kind, q, sigma, h, x_range)
        if step is None:
            return math.inf
        s = (step[0] + np.arange(step[1].size)) * step[4]
    inf_mass = steps * step[3]
    if inf_mass >= delta or steps * _moments(step[2], s, 0.0)[1] > 2000.0:
        return math.inf  # ε in the thousands (far too little noise): the Rényi-DP bound stands
    guess = steps * _moments(step[2], s, lam)[1]
    best, share = math.inf, math.inf
    tp = _tilted_pld(step, steps, delta, lam, 0.9 * guess)
    if tp is not None:
        best, share = _tilted_epsilon(tp, delta, inf_mass)
    if share > _TILT_ERROR_SHARE and math.isfinite(best) and best > 0.0:
        lam = _mean_lambda(step[2], s, steps, best, lam)
        tp = _tilted_pld(step, steps, delta, lam, 0.9 * best)
        if tp is not None:
            best = min(best, _tilted_epsilon(tp, delta, inf_mass)[0])
    return best
