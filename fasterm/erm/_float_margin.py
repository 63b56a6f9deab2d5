"""The floating-point margin of a gradient release (docs/guarantees.rst, "Floating point").

A release of fasterm's gradient methods is, before its noise, the vector

    V = fl(fl(Ŝ · s) + fl(ρ · y)),   Ŝ = T(the kernel's sum of the m clipped gradients g_i),

s = 1/n (full batch) or 1/m̄ (Poisson minibatch, m̄ the expected batch size),
ρ the L2 regulariser, y the query point.  Its sensitivity is *reported* and
*calibrated* as that of the exact average, 2·G·s for a per-example bound
G = B·c (c the clip, B the sample-weight bound, 1 unweighted).  The rounding
makes ‖V(D) − V(D′)‖ larger than the exact difference by at most a relative
Θ (proved in the docs; every quantity in it is public: m, d, the dtype, the
kernel's chunk plan, s, ρ, R).  So the kernels clip at

    c_eff = c / (1 + Θ)                                      (:func:`effective_clip`)

and ‖V(D) − V(D′)‖ ≤ 2·B·c_eff·s·(1 + Θ) ≤ 2·G·s: the reported sensitivity and
every calibration stay those of c.  Poisson-subsampled SGD needs the one-sided bound
between a batch and the same batch plus one row: one clip per run, :func:`run_clip`,
for batches of at most a public cap M (:func:`batch_cap`), the rest of δ set aside for a
larger batch (:func:`sgd_delta`).  This module is the ONE place that
computes Θ: the solvers call it, and the tests (and the Python references of
the bit-exactness tests) call the same functions.

Notation: u = 2⁻⁵³, v = u_T the unit roundoff of the data's dtype T,
γ_k(w) = k·w/(1 − k·w) (Higham 2002, Lemma 3.1).  All arithmetic here is in
exact rationals (:class:`fractions.Fraction`); the clip is rounded down.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

__all__ = ["ETA_SHARE", "MarginTooLarge", "SSP_BLOCK", "SspPlan", "batch_cap", "binom_tail_bound", "class_sums_floor",
           "class_sums_theta", "dask_sum_theta", "effective_clip", "margin", "plan", "release_clip", "run_clip", "sgd_delta",
           "ssp_plan", "sum_theta", "sum_theta_upto"]

U = Fraction(1, 2 ** 53)
U32 = Fraction(1, 2 ** 24)


class MarginTooLarge(ValueError):
    """The float32 rounding of a release is too large to be bounded below its sensitivity."""


def unit_roundoff(dtype) -> Fraction:
    return U32 if np.dtype(dtype) == np.float32 else U


def gamma(k, w) -> Fraction:
    k = Fraction(k)
    if k * w >= Fraction(1, 2):
        raise MarginTooLarge(f"{k} roundings of unit roundoff {float(w):.3g}: no useful error bound")
    return k * w / (1 - k * w)


def plan(n: int, d: int, itemsize: int):
    """``make_plan`` of src/cpp/fasterm/losses.hpp: (block, rows per chunk r, chunks K).

    A function of (n, d, itemsize) only; both the dense and the CSR kernels use it."""
    row_bytes = max(d * itemsize, 1)
    block = min(max(4096 // row_bytes, 4), 64) & ~3
    max_chunks = min(max((1 << 22) // max(d, 1), 1), 64)
    chunk = max(-(-(1 << 20) // row_bytes), -(-n // max_chunks))
    chunk = -(-chunk // block) * block
    return block, min(chunk, n), max(-(-n // chunk), 1)


@functools.lru_cache(maxsize=4096)
def sum_theta(kernel: str, dtype, m: int, d: int) -> Fraction:
    """θ of the compiled sum of m rows: |Ŝ_j − S_j| ≤ θ Σ_i |g_ij| (Ŝ rounded to T).

    ``kernel``: "dense" (``_losses.grad_sum``/``grad_sum_rows``/``pgd_loop``),
    "csr" (``_sparse.grad_sum``) or "any" (the larger: what the solvers use, so that a
    CSR X and its dense copy are clipped alike).  θ′ = (1 + γ_f(u_T))(1 + γ_k(u)) − 1 for at
    most f roundings in float32 and k in double per term; θ = θ′ + u_T(1 + θ′)
    for float32 (the rounding of the double total), θ′ for float64.
    Dense float64: f = 0, k = ⌊r/4⌋ + K + 5; dense float32: f = 21,
    k = ⌊r/4⌋ + K; CSR: f = 0, k = r + K (docs/guarantees.rst, "The sum")."""
    dt = np.dtype(dtype)
    if m <= 0:
        return Fraction(0)
    _, r, K = plan(int(m), int(d), dt.itemsize)
    f32 = dt == np.float32
    if kernel == "dense":
        f, k = (21, r // 4 + K) if f32 else (0, r // 4 + K + 5)
    elif kernel == "csr":
        f, k = 0, r + K
    elif kernel == "any":  # the larger of the two: dense and CSR data then get the same clip
        return max(sum_theta("dense", dtype, m, d), sum_theta("csr", dtype, m, d))
    else:
        raise ValueError(f"kernel must be 'dense', 'csr' or 'any', got {kernel!r}")
    t = (1 + gamma(f, U32)) * (1 + gamma(k, U)) - 1
    return t + U32 * (1 + t) if f32 else t


def dask_sum_theta(dtype, chunk_rows, d: int) -> Fraction:
    """θ of the dask backend's sum: each chunk k summed by the dense kernel (θ_k for its
    n_k rows, rounded to T), the C results added in float64 in chunk order and rounded
    to T: θ = (1 + max θ_k)(1 + γ_{C−1}(u)) − 1, plus u_T(1 + θ) for float32."""
    rows = [int(r) for r in chunk_rows if int(r) > 0]
    if not rows:
        return Fraction(0)
    tk = max(sum_theta("dense", dtype, r, d) for r in rows)
    t = (1 + tk) * (1 + gamma(len(rows) - 1, U)) - 1
    return t + U32 * (1 + t) if np.dtype(dtype) == np.float32 else t


def _margin(theta: Fraction, v: Fraction, m: int, scale: Fraction, reg: Fraction, radius_y: Fraction,
            bound: Fraction) -> Fraction:
    g3 = gamma(3, v)
    t1 = m * (theta + g3 * (1 + theta))
    if reg > 0:
        t1 += m * v * (1 + g3) * (1 + theta)
        tau = v * (1 + v) ** 2 * reg * radius_y / (scale * bound)
    else:
        tau = Fraction(0)
    if tau >= Fraction(1, 2):
        return Fraction(-1)
    return (1 + t1) / (1 - tau) - 1


def margin(kernel: str, dtype, m: int, d: int, *, scale: float, bound: float, reg: float = 0.0,
           radius: float = 0.0, momentum: bool = False, theta: Fraction | None = None) -> Fraction:
    """Θ of one release V = fl(fl(Ŝ·s) + fl(ρ·y)) of m summed rows (module docstring).

    Θ = (1 + Θ₁)/(1 − τ) − 1 with
    Θ₁ = m·(θ + γ_3(1 + θ)) [+ m·u_T(1 + γ_3)(1 + θ) when ρ > 0],
    τ = u_T(1 + u_T)²·ρ·R_y/(s·G), R_y = 2R (4R with momentum: y_t may leave C by
    2βR, β ≤ 1; the factor 2 also covers the rounding of the projections),
    θ = :func:`sum_theta` (or ``theta``, e.g. :func:`dask_sum_theta`),
    s = ``scale``, G = ``bound`` (B·c), R = ``radius`` (max_{w∈C} ‖w‖).  Raises
    :class:`MarginTooLarge` when τ ≥ 1/2 (the regulariser's rounding alone is of the
    order of the sensitivity: fit float64)."""
    if theta is None:
        theta = sum_theta(kernel, dtype, int(m), int(d))
    v = unit_roundoff(dtype)
    reg = float(reg)
    if reg > 0 and not math.isfinite(float(radius)):
        raise MarginTooLarge("an L2 regulariser needs a bounded constraint set for the float margin")
    radius_y = Fraction(4 if momentum else 2) * Fraction(float(radius)) if reg > 0 else Fraction(0)
    out = _margin(theta, v, int(m), Fraction(float(scale)), Fraction(reg), radius_y, Fraction(float(bound)))
    if out < 0:
        raise MarginTooLarge(
            f"in {np.dtype(dtype).name}, the rounding of the regulariser's shift (l2={reg}, radius {radius}) is "
            f"of the order of the sensitivity {2 * float(bound) * float(scale):.3g} of the averaged gradient "
            f"(2·clip·weight_bound/n): raise clip or weight_bound, lower l2/alpha or the radius"
            + (", or fit float64 data" if np.dtype(dtype) == np.float32 else ""))
    return out


@functools.lru_cache(maxsize=4096)
def release_clip(kernel: str, dtype, m: int, d: int, c: float, scale: float, bound: float, reg: float = 0.0,
                 radius: float = 0.0, momentum: bool = False, theta: Fraction | None = None) -> float:
    """:func:`effective_clip` (c, :func:`margin` (kernel, dtype, m, d, scale=…, bound=…, reg=…,
    radius=…, momentum=…, theta=…)): the clip of a release of m summed rows, a double.

    The margin's one cache: every argument is a public number (the kernel's name, the dtype,
    m, d, the clip c, s, G = B·c, ρ, R, the momentum switch, a kernel's θ), so a fit of a
    configuration already seen skips the exact-rational arithmetic and gets the same double
    (a pure function of its arguments).  Raises :class:`MarginTooLarge` as :func:`margin`
    (an exception is not cached).  c = 0 (no clip) is returned unchanged."""
    if not c:
        return c
    return effective_clip(c, margin(kernel, dtype, m, d, scale=scale, bound=bound, reg=reg, radius=radius,
                                    momentum=momentum, theta=theta))


@functools.lru_cache(maxsize=1024)
def class_sums_theta(n: int, d: int) -> Fraction:
    """Θ of the δ = 0 class sums (:func:`fasterm.linear_model._multiclass.class_sums`), whose rows are
    clipped in L1 at c = c₁/(1 + Θ) so that the computed sums of neighbouring data differ by
    at most 2B·c₁ in L1 (B the weight bound), the reported Laplace sensitivity:

        1 + Θ = ρ·(1 + n·γ_n(u))·(1 + u),   ρ = (1 + 2u)²/(1 − γ_{d−1}(u)),   u = 2⁻⁵³,

    all in double (float32 data widened exactly).  ρ: a row's coefficient o (fl(c/l) for its
    L1 norm l, or less, times its weight w ≤ B) has o·‖x‖₁ ≤ w·c·ρ exactly (l ≥
    ‖x‖₁(1 − γ_{d−1}), d − 1 additions of |x_j|; each of the quotient and the weight's
    product rounds up by at most 1 + 2u, the 2u covering a result rounded up to the smallest
    normal; subnormal coefficients are set to 0).  n·γ_n(u): the product Xᵀ(o e_yᵀ) adds n
    terms per entry in any order, |Ŝ − S| ≤ γ_n Σ|terms| entrywise, so in L1 the sums of D
    and of D′ are each within γ_n·n·B·c·ρ of exact, and the exact sums differ by ≤ 2B·c·ρ
    (each row's o is a function of that row alone, so the other rows' terms are equal).
    (1 + u): room for the underflow of the n·d products (absolute error ≤ 2⁻¹⁰⁷⁵ each,
    (1 + γ_n)·n·d·2⁻¹⁰⁷⁵ in L1 per data set), which needs B·c₁ ≥ :func:`class_sums_floor`.
    Total: 2B·c·ρ(1 + n·γ_n) + 2(1 + γ_n)·n·d·2⁻¹⁰⁷⁵ ≤ 2B·c₁/(1 + u) + 2B·c₁·u/(1 + u)."""
    n, d = max(int(n), 1), max(int(d), 1)
    rho = (1 + 2 * U) ** 2 / (1 - gamma(d - 1, U))
    return rho * (1 + n * gamma(n, U)) * (1 + U) - 1


def class_sums_floor(n: int, d: int) -> Fraction:
    """The smallest B·c₁ for which :func:`class_sums_theta` covers the products' underflow:
    (1 + γ_n(u))·n·d·2⁻¹⁰⁷⁵·(1 + u)/u (about n·d·2⁻¹⁰²²)."""
    n, d = max(int(n), 1), max(int(d), 1)
    return (1 + gamma(n, U)) * n * d * Fraction(1, 2 ** 1075) * (1 + U) / U


def effective_clip(c: float, theta: Fraction) -> float:
    """fl(c/(1 + Θ)) rounded down (a double ≤ the exact quotient); c = 0 (no clip) stays 0."""
    if c == 0.0 or theta == 0:
        return float(c)
    exact = Fraction(float(c)) / (1 + theta)
    out = float(exact)
    if Fraction(out) > exact:
        out = math.nextafter(out, 0.0)
    return out


# ---------------------------------------------------------------------------------------------
# One clip per noisy-SGD run (docs/guarantees.rst, "The margin of Poisson-subsampled SGD").

#: η_max = δ·ETA_SHARE: the share of δ set aside for a batch larger than the run's cap M.
ETA_SHARE = 2.0 ** -20


def sum_theta_upto(kernel: str, dtype, M: int, d: int) -> Fraction:
    """An upper bound on max_{1 ≤ m ≤ M} :func:`sum_theta` (kernel, dtype, m, d).

    θ(m) increases with the kernel's rounding count k(m) (r/4 + K, r + K, …: r the rows per
    chunk, K the chunks of :func:`plan`), which is not monotone in m (K may drop when the chunk
    grows).  For m ≤ M: r(m) = min(chunk(m), m) ≤ r(M) (chunk(m) is nondecreasing in m) and
    K(m) = ⌈m/chunk(m)⌉ ≤ min(max_chunks, ⌈M/chunk(1)⌉) (chunk(m) ≥ m/max_chunks and
    ≥ chunk(1)); θ is evaluated at those two bounds."""
    dt = np.dtype(dtype)
    M, d = int(M), int(d)
    if M <= 0:
        return Fraction(0)
    if kernel == "any":
        return max(sum_theta_upto("dense", dtype, M, d), sum_theta_upto("csr", dtype, M, d))
    _, r_max, _ = plan(M, d, dt.itemsize)
    row_bytes = max(d * dt.itemsize, 1)
    block = min(max(4096 // row_bytes, 4), 64) & ~3
    chunk1 = -(-max(-(-(1 << 20) // row_bytes), 1) // block) * block   # chunk(1) before min(·, m)
    max_chunks = min(max((1 << 22) // max(d, 1), 1), 64)
    K_max = max(1, min(max_chunks, -(-M // chunk1)))
    f32 = dt == np.float32
    if kernel == "dense":
        f, k = (21, r_max // 4 + K_max) if f32 else (0, r_max // 4 + K_max + 5)
    elif kernel == "csr":
        f, k = 0, r_max + K_max
    else:
        raise ValueError(f"kernel must be 'dense', 'csr' or 'any', got {kernel!r}")
    t = (1 + gamma(f, U32)) * (1 + gamma(k, U)) - 1
    return t + U32 * (1 + t) if f32 else t


def run_clip(c: float, dtype, M: int, d: int, *, scale: float, bound: float, reg: float = 0.0,
             radius: float = 0.0, kernel: str = "any", theta: Fraction | None = None) -> float:
    """The one clip c* of a noisy-SGD run whose batches have at most M rows (a public cap):

        c* = c·(1 − 2τ)/(1 + 2Θ₁)   rounded down,

    Θ₁ = M·(θ + γ₃(1 + θ)) [+ M·u_T(1 + γ₃)(1 + θ) when ρ > 0] and τ = u_T(1 + u_T)²ρ·2R/(s·G)
    as in :func:`margin` (no momentum), θ = :func:`sum_theta_upto` (kernel, dtype, M, d) or
    ``theta`` (a bound on the kernel's θ for every m ≤ M).  Lemma (docs/guarantees.rst, "The
    margin of Poisson-subsampled SGD"): for batches B′ of m − 1 rows and B′ ∪ {x} of m ≤ M rows,
    both clipped at c*, the computed releases satisfy ‖Ṽ(B′ ∪ {x}) − Ṽ(B′)‖ ≤ s·B·c* +
    2(s·B·c*·Θ₁ + s·G·τ) ≤ s·G (G = B·c), the one-sided sensitivity the Poisson accountant
    needs.  c = 0 stays 0.  Raises :class:`MarginTooLarge` when 2τ ≥ 1/2."""
    c = float(c)
    if c == 0.0:
        return c
    dt = np.dtype(dtype)
    M = max(int(M), 1)
    if theta is None:
        theta = sum_theta_upto(kernel, dt, M, d)
    v = unit_roundoff(dt)
    reg = float(reg)
    if reg > 0 and not math.isfinite(float(radius)):
        raise MarginTooLarge("an L2 regulariser needs a bounded constraint set for the float margin")
    g3 = gamma(3, v)
    t1 = M * (theta + g3 * (1 + theta))
    tau = Fraction(0)
    if reg > 0:
        t1 += M * v * (1 + g3) * (1 + theta)
        tau = v * (1 + v) ** 2 * Fraction(reg) * 2 * Fraction(float(radius)) / (
            Fraction(float(scale)) * Fraction(float(bound)))
    if 2 * tau >= Fraction(1, 2):
        raise MarginTooLarge(
            f"in {dt.name}, the rounding of the regulariser's shift (l2={reg}, radius {radius}) is of the order "
            f"of the sensitivity {float(bound) * float(scale):.3g} of a minibatch release: raise clip or "
            "weight_bound, lower l2/alpha or the radius" + (", or fit float64 data" if dt == np.float32 else ""))
    exact = Fraction(c) * (1 - 2 * tau) / (1 + 2 * t1)
    out = float(exact)
    if Fraction(out) > exact:
        out = math.nextafter(out, 0.0)
    return out


def binom_tail_bound(n: int, q: float, k: int) -> float:
    """An upper bound on P[Bin(n, q) > k]: 1 for k < n·q, 0 for k ≥ n, else the Chernoff bound
    exp(−n·KL(a‖q)), a = (k + 1)/n (P[X ≥ a·n] ≤ exp(−n·KL(a‖q)) for a ≥ q; Hoeffding 1963).
    The exponent is computed in double and lowered by 10⁻¹² times the sum of the magnitudes of
    its two terms (far above the few roundings of each), and the result rounded up."""
    n, k, q = int(n), int(k), float(q)
    if k >= n:
        return 0.0
    if q >= 1.0:
        return 1.0
    a = (k + 1) / n
    if not a > q * (1 + 1e-12):
        return 1.0
    t1 = a * math.log(a / q)
    t2 = (1.0 - a) * (math.log1p(-a) - math.log1p(-q)) if a < 1.0 else 0.0
    kl = t1 + t2 - 1e-12 * (abs(t1) + abs(t2))
    if kl <= 0.0:
        return 1.0
    return min(1.0, math.nextafter(math.exp(-n * kl), math.inf))


def batch_cap(n: int, q: float, steps: int, epsilon: float, eta: float) -> int:
    """M: the smallest k ≥ ⌈n·q⌉ with (1 + e^ε)·T·:func:`binom_tail_bound` (n, q, k) ≤ η (n at most:
    P[Bin(n, q) > n] = 0).  Public: n (replace-one), q, T, ε, η."""
    n, steps = int(n), int(steps)
    factor = (1.0 + math.exp(min(float(epsilon), 700.0))) * steps

    def ok(k):
        return factor * binom_tail_bound(n, q, k) <= eta

    lo, hi = min(n, max(0, math.ceil(n * q))), n
    if ok(lo):
        return max(lo, 1)
    while hi - lo > 1:  # ok(hi) holds, ok(lo) does not; the bound decreases in k
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return max(hi, 1)


def sgd_delta(delta: float) -> tuple[float, float]:
    """(δ_fit, η_max) of a noisy-SGD run asked for δ: η_max = δ·2⁻²⁰ (exact: a power of two) and
    δ_fit the largest double with δ_fit + η_max ≤ δ in exact arithmetic.  The accountant calibrates σ
    for δ_fit; a batch above the cap M costs at most (1 + e^ε)·η ≤ η_max more, so the run is
    (ε, δ)-DP for the δ asked for (docs/guarantees.rst, "The margin of Poisson-subsampled SGD")."""
    delta = float(delta)
    eta = delta * ETA_SHARE
    fit = delta - eta
    while Fraction(fit) + Fraction(eta) > Fraction(delta):
        fit = math.nextafter(fit, 0.0)
    return fit, eta


# ---------------------------------------------------------------------------------------------
# AdaSSP's statistics (docs/guarantees.rst, "Sufficient statistics perturbation", "Floating point").

#: Rows per block of AdaSSP's statistics: G = Σ_k A_kᵀW_kA_k and b = Σ_k A_kᵀW_k y_k over blocks of
#: this many rows, each block one BLAS (or scipy) product, the K blocks added in order.
SSP_BLOCK = 1 << 16
#: The smallest positive double (subnormal): the absolute error of a product that underflows is ≤ ETA/2.
ETA = Fraction(1, 2 ** 1074)


class SspPlan(NamedTuple):
    """The public constants of AdaSSP's floating-point margin (:func:`ssp_plan`)."""

    clip: float        # X_c: the rows are clipped to it (a double ≤ X)
    scale: float       # 2^s: the Cholesky tests run on 2^s·(Ĝ − tI), 2^s·t_max in [1, 2)
    width: float       # W: the bracket of the certified λ_min
    lo: float          # the bisection's bracket [lo, hi] ∋ λ_min(Ĝ)
    hi: float
    lam_error: Fraction  # E: |λ_min release − λ_min(Ĝ)| ≤ E, certified
    theta: Fraction    # X²/X_c² − 1


def _ssp_bounds(n, p, X, Y, B, Xc):
    """(ok, E, lo, hi, W, scale, t_max): the conditions of :func:`ssp_plan` for rows clipped to Xc."""
    r, K = min(n, SSP_BLOCK), -(-n // SSP_BLOCK)
    gG, gb = gamma(r + K + 1, U), gamma(r + K, U)
    Xr = Xc * (1 + gamma(2 * p + 8, U))          # ‖â‖ ≤ Xr: the computed clipped row, exactly
    ufG, ufb = 2 * n * (Xr + 1) * ETA, 2 * n * (Y + 1) * ETA   # underflow, per entry
    Sg = n * B * Xr * Xr                          # ≥ Σ w‖â‖² ≥ ‖S‖_F, tr G
    eG = gG * Sg + p * ufG                        # ≥ ‖Ĝ − G‖_F
    eG1 = gG * n * B * Fraction(p + 1, 2) * Xr * Xr + Fraction(p * (p + 1), 2) * ufG   # L1, upper triangle
    eb = gb * n * B * Y * Xr + p * ufb            # ≥ ‖b̂ − b‖₂, and ≥ ‖b̂ − b‖₁/√p
    # the certified λ_min (:func:`fasterm.erm.ssp._lambda_min`)
    t_max = Sg * (1 + gG) + p * ufG               # ≥ tr Ĝ (its diagonal is ≥ 0)
    d_max = Sg + eG                               # ≥ max Ĝ_ii
    gc = gamma(p + 2, U)                          # Higham's γ_{p+1}, one more for a rounded reciprocal pivot
    if p * gc >= Fraction(1, 2):
        raise MarginTooLarge(f"{p} columns: the Cholesky test of AdaSSP's λ_min has no useful error bound")
    cp = p * gc / (1 - p * gc)                    # Demmel's bound for the Cholesky test
    # every tested t lies in [lo, hi] ⊂ [−tb, tb]; W, lo and hi depend on the slacks, which depend
    # on tb: fixed point in two passes from tb = t_max/p + 2·eG (the slacks are ≪ t_max/p)
    tb = t_max / p + 2 * eG + 1
    for _ in range(3):
        frac, ex = math.frexp(float(tb))
        scale = Fraction(2) ** (1 - ex)           # 2^s with tb·2^s in [1, 2)… up to float rounding of tb
        uf = 8 * (p + 2) ** 2 * ETA / scale
        sC = gc / (1 - gc) * (1 + U) * (t_max + p * tb) + U * (d_max + tb) + uf
        sD = (cp * (1 + U) + U) * (d_max + tb) + uf
        smax = max(sC, sD)
        W = _up(Fraction(5, 2) * smax + 32 * (p + 1) * U * t_max)   # the doubles the code uses
        lo, hi = _down(-(eG + W)), _up(t_max / p + eG + W)
        need = max(-Fraction(lo), Fraction(hi))
        if need <= tb:
            break
        tb = 2 * need
    else:  # pragma: no cover - the slacks are far below t_max/p
        raise MarginTooLarge("AdaSSP's λ_min bracket does not close")
    E = Fraction(W) / (2 * (1 - U)) + 2 * U * tb + smax
    dX2 = X * X - Xr * Xr
    ok = (dX2 > 0
          and 4 * eG * eG <= 2 * (B * dX2) ** 2                    # G, L2: √2·B·Xr² + 2eG ≤ √2·B·X²
          and 2 * eG1 <= B * (p + 1) * dX2                        # G, L1: B(p+1)Xr² + 2eG1 ≤ B(p+1)X²
          and 2 * eG + 2 * E <= B * dX2                           # λ_min: B·Xr² + 2eG + 2E ≤ B·X²
          and B * Xr * Y + eb <= B * X * Y                        # b, L2 (and L1): 2B·Xr·Y + 2eb ≤ 2B·X·Y
          and t_max + hi < Fraction(2) ** 1000)                   # no overflow
    return ok, E, lo, hi, W, scale


@functools.lru_cache(maxsize=256)
def ssp_plan(n: int, p: int, data_norm: float, label_bound: float, weight_bound: float) -> SspPlan:
    """The row clip X_c of AdaSSP and the constants of its certified λ_min (docs/guarantees.rst).

    The three releases of :func:`fasterm.erm.ssp.adassp` — λ_min(G), the upper triangle of
    G = Σ wᵢâᵢâᵢᵀ and b = Σ wᵢyᵢâᵢ — are computed in double: G and b as K = ⌈n/r⌉ BLAS (or
    scipy) products of blocks of r ≤ ``SSP_BLOCK`` rows added in order, G symmetrised as
    ½(Ĝ + Ĝᵀ).  An entry's term meets at most r + K + 1 roundings (two products, r − 1 and
    K − 1 additions, the symmetrisation) in any order: |Ĝ − G| ≤ γ_{r+K+1}·S entrywise,
    S = Σ wᵢ|âᵢ||âᵢ|ᵀ, ‖S‖_F ≤ n·B·X_r² (Higham 2002, Lemma 3.1 and (3.5)), and likewise
    |b̂ − b| ≤ γ_{r+K}·Σ wᵢ|yᵢ||âᵢ|; an underflowing product adds ≤ 2⁻¹⁰⁷⁵ (the ``2n(X_r + 1)·η``
    terms).  The computed clipped rows satisfy ‖âᵢ‖ ≤ X_r = X_c(1 + γ_{2p+8}) exactly (the norm's
    p squares, additions and root, the quotient, the product).  λ_min is certified within E of
    λ_min(Ĝ) (:func:`fasterm.erm.ssp._lambda_min`), and λ_min(Ĝ) is within ‖Ĝ − G‖₂ ≤ e_G of
    λ_min(G) (Weyl).  So the computed releases of neighbours differ by at most
    √2·B·X_r² + 2e_G (upper triangle, L2), B(p + 1)X_r² + 2e_G¹ (L1), B·X_r² + 2e_G + 2E
    (λ_min) and 2B·X_r·Y + 2e_b (b, L2; L1 with √p): X_c is the largest double (found from
    below, each candidate checked exactly in rationals) for which all are within the declared
    sensitivities of :func:`fasterm.erm.ssp.adassp_scales` — √2·B·X², B(p + 1)X², B·X², 2B·X·Y.
    ``weight_bound``: B (1 unweighted).  Raises :class:`MarginTooLarge` when no clip above X/2
    qualifies (n·p² too large for double) or the statistics could overflow."""
    n, p = int(n), int(p)
    X, Y, B = Fraction(float(data_norm)), Fraction(float(label_bound)), Fraction(float(weight_bound))
    # X_c = X/√(1 + θ) for the smallest θ that passes (to a relative 2⁻²⁰ of θ): every error term
    # grows with X_c and the room X² − X_r² shrinks, so the conditions are monotone in θ.
    r, K = min(n, SSP_BLOCK), -(-n // SSP_BLOCK)
    rough = float(2 * gamma(r + K + 1, U) * n + 8 * Fraction(p * (p + 2) * n) * U
                  + 3 * gamma(2 * p + 8, U)) + 2.0 ** -50

    def attempt(theta):
        xc = float(X) / math.sqrt(1.0 + theta)
        if not xc > float(X) / 2:
            return None
        ok, E, lo, hi, W, scale = _ssp_bounds(n, p, X, Y, B, Fraction(xc))
        return SspPlan(xc, float(scale), W, lo, hi, E, X * X / Fraction(xc) ** 2 - 1) if ok else None

    t_hi = rough
    best = attempt(t_hi)
    while best is None and t_hi < 3.0:
        t_hi *= 2.0
        best = attempt(t_hi)
    if best is None:
        raise MarginTooLarge(f"n = {n}, {p} columns, data_norm = {data_norm}, label_bound = {label_bound}, "
                             f"weight_bound = {weight_bound}: AdaSSP's rounding cannot be bounded below its "
                             "sensitivities (too many rows and columns for double, or values near the ends of "
                             "the double range)")
    t_lo = 0.0
    for _ in range(20):
        mid = 0.5 * (t_lo + t_hi)
        got = attempt(mid)
        if got is None:
            t_lo = mid
        else:
            t_hi, best = mid, got
    return best


def _up(x: Fraction) -> float:
    out = float(x)
    return math.nextafter(out, math.inf) if Fraction(out) < x else out


def _down(x: Fraction) -> float:
    out = float(x)
    return math.nextafter(out, -math.inf) if Fraction(out) > x else out
