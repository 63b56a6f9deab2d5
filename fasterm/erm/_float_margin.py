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
every calibration stay those of c.  This module is the ONE place that
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

import numpy as np

__all__ = ["MarginTooLarge", "class_sums_floor", "class_sums_theta", "clip_table", "dask_sum_theta", "effective_clip",
           "margin", "plan", "sum_theta"]

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


@functools.lru_cache(maxsize=4096)
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


def clip_table(c: float, dtype, lo: int, hi: int, d: int, *, scale: float, bound: float, reg: float = 0.0,
               radius: float = 0.0, momentum: bool = False) -> np.ndarray:
    """``effective_clip(c, margin("any", dtype, m, d, ...))`` for m = lo, …, hi (float64 array).

    The same numbers, bit for bit (tests/test_float_margin_table.py), in integer arithmetic
    (a few µs per m instead of ~150 µs of :class:`~fractions.Fraction`s), for the clips of
    every minibatch size a noisy-SGD run may draw.  The algebra: with θ(m) = ``sum_theta("any")``,
    g₃ = γ₃(u_T), v′ = u_T when ρ > 0 (else 0) and P(m) = (1 + θ)(1 + g₃)(1 + v′),
    1 + Θ₁ = 1 + m·(P − 1) (:func:`margin`'s Θ₁) and 1 + Θ = (1 + Θ₁)/(1 − τ), τ free of m;
    so the clip is c·(1 − τ)/(1 + m(P − 1)) rounded down."""
    lo, hi, d = int(lo), int(hi), int(d)
    if not 1 <= lo <= hi:
        raise ValueError(f"need 1 <= lo <= hi, got lo={lo}, hi={hi}")
    c = float(c)
    out = np.empty(hi - lo + 1, dtype=np.float64)
    if c == 0.0:
        out.fill(c)
        return out
    dt = np.dtype(dtype)
    f32 = dt == np.float32
    p = 24 if f32 else 53
    reg = float(reg)
    if reg > 0 and math.isfinite(float(radius)):
        radius_y = Fraction(4 if momentum else 2) * Fraction(float(radius))
        v = unit_roundoff(dt)
        tau = v * (1 + v) ** 2 * Fraction(reg) * radius_y / (Fraction(float(scale)) * Fraction(float(bound)))
    else:
        tau = Fraction(0)
    if (reg > 0 and not math.isfinite(float(radius))) or tau >= Fraction(1, 2):
        # margin()'s MarginTooLarge (an unbounded set with ρ > 0, or τ ≥ 1/2), raised by margin() itself
        margin("any", dtype, lo, d, scale=scale, bound=bound, reg=reg, radius=radius, momentum=momentum)
    one_minus_tau = 1 - tau
    ca, cb = c.as_integer_ratio()
    num_c = ca * one_minus_tau.numerator       # c·(1 − τ) = num_c / den_c
    den_c = cb * one_minus_tau.denominator
    two53, two24 = 1 << 53, 1 << 24
    two_p = 1 << p
    # (1 + g₃)(1 + v′) = gn / gd
    gn, gd = two_p, two_p - 3
    if reg > 0:
        gn, gd = gn * (two_p + 1), gd * two_p
    half53 = 1 << 52
    itemsize = dt.itemsize
    row_bytes = max(d * itemsize, 1)
    block = min(max(4096 // row_bytes, 4), 64) & ~3
    max_chunks = min(max((1 << 22) // max(d, 1), 1), 64)
    min_chunk = -(-(1 << 20) // row_bytes)
    for i, m in enumerate(range(lo, hi + 1)):
        chunk = max(min_chunk, -(-m // max_chunks))
        chunk = -(-chunk // block) * block
        r, K = min(chunk, m), max(-(-m // chunk), 1)
        if f32:
            kd, kc = r // 4 + K, r + K
            if 2 * max(kd, kc) >= two53:
                raise MarginTooLarge(f"{max(kd, kc)} roundings: no useful error bound")
            # 1 + t: dense (f = 21) two24/(two24 − 21) · two53/(two53 − kd); CSR two53/(two53 − kc)
            an, ad = two24 * two53, (two24 - 21) * (two53 - kd)
            bn, bd = two53, two53 - kc
            tn, td = (an, ad) if an * bd >= bn * ad else (bn, bd)
            tn, td = tn * (two24 + 1), td * two24          # 1 + θ = (1 + t)(1 + u₃₂)
        else:
            k = max(r // 4 + K + 5, r + K)
            if k >= half53:
                raise MarginTooLarge(f"{k} roundings of unit roundoff 1.11e-16: no useful error bound")
            tn, td = two53, two53 - k                      # 1 + θ = 1/(1 − k·u)
        pn, pd = tn * gn, td * gd                          # P = pn / pd
        num = num_c * pd
        den = den_c * (pd + m * (pn - pd))                 # c(1 − τ)/(1 + m(P − 1)) = num / den
        q = num / den                                      # correctly rounded (int true division)
        a, b = q.as_integer_ratio()
        if a * den > num * b:
            q = math.nextafter(q, 0.0)
        out[i] = q
    return out
