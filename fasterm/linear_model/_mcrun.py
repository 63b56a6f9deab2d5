"""The step loops of the multiclass fits (:func:`fasterm.linear_model._multiclass.fit_multiclass`) in one
compiled call each.

``_mclosses.sgd_loop`` (noisy Poisson-minibatch SGD) and ``_mclosses.gd_loop`` (noisy GD and PGD:
momentum, averaging) run every step with the GIL released and the bit generator's lock held —
the batch, its clip, the clipped gradient sum of the (p, K) matrix over the rows read in place
(dense or CSR), the noise from the caller's Generator, the step and the projection onto the
Frobenius ball.  The arithmetic is that of :func:`fasterm.erm._engine.descend` around
:func:`fasterm.linear_model._multiclass.kernel_sum`, and the draws are those of the numpy loop
(the batch size ``binomial(n, q)``, the rows ``choice(n, size, replace=False)``, then the p·K
noise draws; the sampler is the binary ``_losses.sgd_loop``'s, src/fasterm/erm/_poisson.pxd), so
one seed gives the same bits on either path (tests/test_multiclass_loop.py).  The numpy loop
runs a backend without fused noise (secure mode), or a numpy whose ``Generator`` the compiled
sampler does not reproduce (:func:`fasterm.erm._sgdrun.sampler_matches_numpy`).  Privacy is the
same on both paths: the releases are the same random variables.

A batch of |B| rows is clipped at c/(1 + Θ(|B|)), its floating-point margin
(:func:`clip_table`: ``effective_clip(c, margin(...))`` with θ the multiclass kernel's
γ_|B|, in integer arithmetic), read from a table of the sizes within ``CLIP_TABLE_SDS``
standard deviations of q·n; a size outside it extends the table and the compiled run starts
again from its saved state (the same draws, the same result): the range decides what is
computed ahead, never a value.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import fasterm.erm._mclosses as _mclosses  # compiled (src/fasterm/erm/_mclosses.pyx)
from ..erm import _engine, _float_margin, _sgdrun
from ..erm.constraints import L2Ball
from .._validation import is_sparse

__all__ = ["BatchClips", "clip_table", "gd", "runs", "sgd"]

#: False: every fit takes the numpy loop (the tests compare the two).
COMPILED = True
#: The clip table's half-width in standard deviations of Bin(n, q) (the binary run's).
CLIP_TABLE_SDS = _sgdrun.CLIP_TABLE_SDS


def clip_table(c: float, dtype, lo: int, hi: int, dim: int, *, scale: float, bound: float, reg: float = 0.0,
               radius: float = 0.0) -> np.ndarray:
    """The release clips of multiclass SGD for batch sizes m = lo, …, hi (float64 array):
    ``effective_clip(c, margin("dense", dtype, m, dim, scale=…, bound=…, reg=…, radius=…,
    theta=θ(m)))`` with θ(m) = γ_m(2⁻⁵³) (+ u₃₂(1 + γ_m) for float32), the bound of
    :func:`fasterm.linear_model._multiclass.sum_theta` — the same numbers, bit for bit
    (tests/test_multiclass_loop.py), in integer arithmetic.  The algebra (as
    :func:`fasterm.erm._float_margin.clip_table`'s): 1 + θ = 2⁵³/(2⁵³ − m) (times (2²⁴ + 1)/2²⁴),
    1 + γ₃(u_T) = 2ᵖ/(2ᵖ − 3), v′ = u_T when ρ > 0, P = (1 + θ)(1 + γ₃)(1 + v′),
    1 + Θ = (1 + m(P − 1))/(1 − τ), τ free of m; the clip is c(1 − τ)/(1 + m(P − 1)) rounded down."""
    lo, hi = int(lo), int(hi)
    if not 1 <= lo <= hi:
        raise ValueError(f"need 1 <= lo <= hi, got lo={lo}, hi={hi}")
    c, reg = float(c), float(reg)
    out = np.empty(hi - lo + 1, dtype=np.float64)
    if c == 0.0:
        out.fill(c)
        return out
    f32 = np.dtype(dtype) == np.float32
    p = 24 if f32 else 53
    if reg > 0 and math.isfinite(float(radius)):
        v = _float_margin.unit_roundoff(dtype)
        tau = v * (1 + v) ** 2 * Fraction(reg) * 2 * Fraction(float(radius)) / (
            Fraction(float(scale)) * Fraction(float(bound)))
    else:
        tau = Fraction(0)
    if (reg > 0 and not math.isfinite(float(radius))) or tau >= Fraction(1, 2):
        # margin()'s MarginTooLarge, raised by margin() itself
        _float_margin.margin("dense", dtype, lo, dim, scale=scale, bound=bound, reg=reg, radius=radius,
                             theta=Fraction(0))
    omt = 1 - tau
    ca, cb = c.as_integer_ratio()
    num_c, den_c = ca * omt.numerator, cb * omt.denominator
    two_p, two53, two24 = 1 << p, 1 << 53, 1 << 24
    gn, gd = two_p, two_p - 3                    # 1 + γ₃(u_T)
    if reg > 0:
        gn, gd = gn * (two_p + 1), gd * two_p    # (1 + v′)
    for i, m in enumerate(range(lo, hi + 1)):
        if 2 * m >= two53:
            raise _float_margin.MarginTooLarge(f"{m} roundings of unit roundoff 1.11e-16: no useful error bound")
        tn, td = two53, two53 - m                # 1 + γ_m(2⁻⁵³)
        if f32:
            tn, td = tn * (two24 + 1), td * two24
        pn, pd = tn * gn, td * gd
        num, den = num_c * pd, den_c * (pd + m * (pn - pd))
        q = num / den                            # correctly rounded (int true division)
        a, b = q.as_integer_ratio()
        if a * den > num * b:
            q = math.nextafter(q, 0.0)
        out[i] = q
    return out


class BatchClips(_engine.BatchClips):
    """:func:`clip_table` for every batch size a run may draw, extended on demand
    (:class:`fasterm.erm._engine.BatchClips`' table, with the multiclass kernel's θ)."""

    def __init__(self, c, dtype, dim, n, q, *, scale, bound, reg, radius):
        self._args = (float(c), np.dtype(dtype), int(dim))
        self._kw = dict(scale=scale, bound=bound, reg=float(reg), radius=float(radius))
        mean, sd = q * n, CLIP_TABLE_SDS * math.sqrt(n * q * (1.0 - q))
        lo, hi = max(1, math.floor(mean - sd) - 1), max(1, min(n, math.ceil(mean + sd) + 1))
        self.lo, self.table = lo, self._compute(lo, hi)

    def _compute(self, lo, hi):
        c, dtype, dim = self._args
        return clip_table(c, dtype, lo, hi, dim, **self._kw)


def _data(X):
    """The data arguments of the compiled loops: dense X, or the CSR arrays (int64 indices)."""
    if is_sparse(X):
        return (None, X.data, X.indices.astype(np.int64, copy=False), X.indptr.astype(np.int64, copy=False),
                X.shape[1])
    return X, None, None, None, X.shape[1]


def runs(X, ball, backend, sgd) -> bool:
    """Whether the run is compiled: float data (C-contiguous dense, or CSR), the Frobenius ball
    centred at 0, fused float noise, and (SGD) a numpy whose sampler is reproduced."""
    if not COMPILED:
        return False
    if X.dtype not in (np.float32, np.float64) or not (is_sparse(X) or X.flags.c_contiguous):
        return False
    if type(ball) is not L2Ball or ball._loop_spec(X.dtype)[2] is not None or backend.fused(X.dtype) is None:
        return False
    return _sgdrun.sampler_matches_numpy() if sgd else True


def sgd(code, X, y, norms, data_norm, s_col, K, clips, inner, w, steps, start, q, m, lr, reg, backend, ball,
        weights):
    """The T steps of multiclass SGD from w (updated in place); returns the tail sum
    Σ_{start < t ≤ T} w_t (float64).  ``clips``: :class:`BatchClips`; ``inner`` maps its release
    clips to the kernel's (:func:`fasterm.linear_model._multiclass.inner_clip`)."""
    _, scale, bit_generator = backend.fused(w.dtype)
    data, radius = _data(X), float(ball._loop_spec(w.dtype)[1])
    tail = np.zeros(w.shape[0], dtype=np.float64)
    state, w_start = bit_generator.state, w.copy()
    while True:
        stopped = _mclosses.sgd_loop(code, w, K, *data, y, norms, data_norm, s_col, inner(clips.table), clips.lo,
                                     steps, start, q, 1.0 / m, lr, reg, scale, bit_generator, radius, tail, weights)
        if not stopped:
            return tail
        # a batch size outside the table: extend it, and run again from the same state
        clips.cover(stopped)
        bit_generator.state = state
        w[...] = w_start
        tail.fill(0.0)


def gd(code, X, y, norms, data_norm, s_col, K, clip, w, steps, lr, reg, backend, ball, momentum, average, weights,
       out_dtype):
    """The T steps of multiclass noisy GD/PGD from w (updated in place); returns the released point
    in ``out_dtype`` (:func:`fasterm.erm._engine.finish`).  ``momentum``: None, a float or a
    schedule t ↦ β_t (as :func:`fasterm.erm._engine.descend`'s); ``clip``: the kernel's."""
    noise, scale, bit_generator = backend.fused(w.dtype)
    betas = None
    if momentum is not None:
        betas = np.array([momentum(t) if callable(momentum) else momentum for t in range(steps)], dtype=np.float64)
    acc = np.zeros(w.shape[0], dtype=np.float64) if average else None
    _mclosses.gd_loop(code, w, K, *_data(X), y, norms, data_norm, s_col, clip, steps, lr, reg, noise, scale,
                      bit_generator, float(ball._loop_spec(w.dtype)[1]), betas, acc, weights)
    return _engine.finish(ball, w, acc, steps, out_dtype)
