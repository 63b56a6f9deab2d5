"""Exact discrete samplers: integer arithmetic only (Canonne, Kamath & Steinke 2020).

Every probability used here is a rational number compared with a uniform
*integer*: Bernoulli(a/b) is ``U < a`` for U uniform on {0, …, b−1}.  No
floating-point number enters a sampler, so the output distributions are the
stated ones exactly (given exact uniform integers; see ``_below``).

Algorithms (written from the paper: C. Canonne, G. Kamath, T. Steinke, "The
Discrete Gaussian for Differential Privacy", NeurIPS 2020, arXiv:2004.00010,
§5 "Sampling"):

* Bernoulli(exp(−γ)), γ = a/b ∈ [0, 1] rational: draw A_k ~ Bernoulli(γ/k)
  for k = 1, 2, … until the first A_k = 0 at step K; return [K odd].
  P[K > k] = γ^k/k!, so P[K odd] = Σ_k (−γ)^k/k! = e^{−γ}.
  For γ > 1: e^{−γ} = (e^{−1})^{⌊γ⌋}·e^{−(γ−⌊γ⌋)}: ⌊γ⌋ independent
  Bernoulli(e^{−1}) trials and one Bernoulli(e^{−frac γ}), all must succeed.
* Discrete Laplace P[Z = z] ∝ exp(−|z|·s/n) (scale n/s, integers n, s ≥ 1):
  U uniform on {0..n−1} kept with probability e^{−U/n}, V = number of
  successes of Bernoulli(e^{−1}) before the first failure; X = U + n·V has
  P[X = x] ∝ e^{−x/n} on x ≥ 0, so Y = ⌊X/s⌋ has P[Y = y] ∝ e^{−ys/n}; a fair
  sign B, rejecting (B = 1, Y = 0) so that 0 is not counted twice.
* Discrete Gaussian P[Z = z] ∝ exp(−z²/(2σ²)), σ² = p/q rational: Y from the
  discrete Laplace of scale t (any integer t ≥ 1; t = ⌊σ⌋ + 1 makes the
  acceptance rate largest), accepted with probability
  exp(−(|Y| − σ²/t)²/(2σ²)); exp(−|y|/t − (|y| − σ²/t)²/(2σ²)) =
  exp(−y²/(2σ²) − σ²/(2t²)), a constant times the target.  When σ² = t·m
  (how :mod:`fasterm.mechanisms.secure` chooses it) the exponent is the small integer
  ratio (|Y| − m)²/(2tm).

Three implementations of each, picked by ``discrete_laplace``,
``discrete_gaussian`` and ``bernoulli_exp``: compiled (``fasterm.mechanisms._discrete``,
``src/cpp/fasterm/discrete.hpp``; uint64 with 128-bit products, from a
Generator's bit generator without the GIL) for parameters below 2^62;
vectorised numpy on int64 when every integer provably stays below 2^62 (the
path for :class:`OSRandom`, and a reference for the compiled one); scalar on
Python ints, the obviously-correct reference and the fallback beyond those
bounds.  The numpy paths consume only uniform integers from ``rng.integers``
(exact by rejection, Lemire's method) or from :class:`OSRandom`.
"""

from __future__ import annotations

import os
from fractions import Fraction
from math import isqrt

import numpy as np

import fasterm.mechanisms._discrete as _discrete  # compiled (src/fasterm/mechanisms/_discrete.pyx)
from .._validation import check_random_state, check_scalar, check_size

# The vectorised paths keep every intermediate below 2^62: denominators < 2^_DEN_BITS,
# times a series index K < 2^(62 − _DEN_BITS).
_DEN_BITS = 50
_K_LIMIT = 1 << (62 - _DEN_BITS)
_INT_LIMIT = 1 << 62


class OSRandom:
    """Uniform integers from the operating system's entropy (``os.urandom``).

    Use ``random_state=fasterm.mechanisms.noise.OSRandom()`` (or ``random_state="os"``)
    in secure mode when the noise must not be predictable from a seed: the
    output is not reproducible.  ``integers(low, high)`` draws exact uniform
    integers in [low, high) by masked rejection from fresh random bytes
    (broadcasting over an int64 ``high`` array, like numpy's method).
    """

    def integers(self, low, high, size=None, dtype=np.int64):
        low, high = _int64_arg(low, "low"), _int64_arg(high, "high")
        if np.any((low < 0) & (high > np.iinfo(np.int64).max + np.minimum(low, 0))):
            raise ValueError("high - low must be below 2**63")
        span = high - low
        shape = np.broadcast_shapes(low.shape, span.shape) if size is None else check_size(size)
        try:
            span = np.broadcast_to(span, shape).reshape(-1)
        except ValueError:
            raise ValueError(f"size {shape} does not match the shapes of low and high") from None
        if span.size and span.min() < 1:
            raise ValueError("high must be larger than low")
        # mask = 2^bitlength(span−1) − 1 per element (exact integer ops).
        mask = (span - 1).astype(np.uint64)
        for sh in (1, 2, 4, 8, 16, 32):
            mask |= mask >> np.uint64(sh)
        out = np.empty(span.size, dtype=np.int64)
        todo = np.arange(span.size)
        while todo.size:
            raw = np.frombuffer(os.urandom(8 * todo.size), dtype=np.uint64) & mask[todo]
            ok = raw < span[todo].astype(np.uint64)
            out[todo[ok]] = raw[ok].astype(np.int64)
            todo = todo[~ok]
        out = out.reshape(shape) + np.broadcast_to(low, shape)
        return out if shape else out.reshape(()).astype(dtype)[()]

    def randbits(self, k: int) -> int:
        k = check_scalar(k, "k", low=0, integer=True)
        return int.from_bytes(os.urandom((k + 7) // 8), "little") >> (-k % 8) if k > 0 else 0


def secure_rng(random_state, name: str = "random_state"):
    """None/int/Generator (reproducible) or ``"os"``/:class:`OSRandom` (OS entropy)."""
    if isinstance(random_state, OSRandom):
        return random_state
    if isinstance(random_state, str):
        if random_state == "os":
            return OSRandom()
        raise ValueError(f"{name} must be None, an int, a Generator or 'os', got {random_state!r}")
    return check_random_state(random_state, name)


def _int64_arg(x, name: str) -> np.ndarray:
    """An int or an integer array within int64, as an int64 array."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool")
    if isinstance(x, int):  # a Python int of any size: range-checked before numpy sees it
        if not -(1 << 63) <= x < (1 << 63):
            raise ValueError(f"{name} must be within the int64 range, got {x}")
        return np.asarray(x, dtype=np.int64)
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer or an integer array, got {type(x).__name__} "
                        f"(dtype {a.dtype})")
    if a.dtype.kind == "u" and a.size and a.max() >= (1 << 63):
        raise ValueError(f"{name} must be within the int64 range")
    return a.astype(np.int64)


def _randbits(rng, k: int) -> int:
    if isinstance(rng, OSRandom):
        return rng.randbits(k)
    words = rng.integers(0, 1 << 62, size=(k + 61) // 62, dtype=np.int64)
    v = 0
    for w in words:
        v = (v << 62) | int(w)
    return v >> (-k % 62)


def below_int(rng, m: int) -> int:
    """Uniform on {0, …, m−1} for a Python int m ≥ 1 of any size (rejection)."""
    if m <= _INT_LIMIT:
        return int(rng.integers(0, m, dtype=np.int64))
    k = (m - 1).bit_length()
    while True:
        v = _randbits(rng, k)
        if v < m:
            return v


def _below(rng, high: int, size: int):
    """``size`` uniform int64 draws on {0, …, high − 1} (1 ≤ high ≤ 2^62)."""
    return np.asarray(rng.integers(0, high, size=size, dtype=np.int64), dtype=np.int64)


# ---------------------------------------------------------------------------
# scalar reference samplers (Python ints, any size)
# ---------------------------------------------------------------------------
def bernoulli_exp_frac_scalar(a: int, b: int, rng, k: int = 1) -> bool:
    """Bernoulli(exp(−a/b)) for 0 ≤ a ≤ b, the alternating series from index ``k``."""
    while below_int(rng, b * k) < a:  # A_k ~ Bernoulli(a/(b·k))
        k += 1
    return k % 2 == 1


def bernoulli_exp_scalar(a: int, b: int, rng) -> bool:
    """Bernoulli(exp(−a/b)) for integers a ≥ 0, b ≥ 1."""
    q, r = divmod(a, b)
    for _ in range(q):
        if not bernoulli_exp_frac_scalar(1, 1, rng):
            return False
    return bernoulli_exp_frac_scalar(r, b, rng)


def discrete_laplace_scalar(n: int, s: int, rng) -> int:
    """P[Z = z] ∝ exp(−|z|·s/n)."""
    while True:
        u = below_int(rng, n)
        if not bernoulli_exp_frac_scalar(u, n, rng):
            continue
        v = 0
        while bernoulli_exp_frac_scalar(1, 1, rng):
            v += 1
        y = (u + n * v) // s
        sign = below_int(rng, 2)
        if sign and y == 0:
            continue
        return -y if sign else y


def gaussian_t(p: int, q: int) -> int:
    """t = ⌊σ⌋ + 1 for σ² = p/q (⌊√x⌋ = isqrt(⌊x⌋))."""
    return isqrt(p // q) + 1


def discrete_gaussian_scalar(p: int, q: int, rng, t: int | None = None) -> int:
    """P[Z = z] ∝ exp(−z²·q/(2p)), i.e. σ² = p/q."""
    t = gaussian_t(p, q) if t is None else t
    den = 2 * p * q * t * t
    while True:
        y = discrete_laplace_scalar(t, 1, rng)
        a = abs(y) * t * q - p  # (|y| − σ²/t)²/(2σ²) = a²/(2pqt²)
        if bernoulli_exp_scalar(a * a, den, rng):
            return y


# ---------------------------------------------------------------------------
# vectorised samplers (int64, bounds checked)
# ---------------------------------------------------------------------------
def bernoulli_exp_vec(a: np.ndarray, b: int, rng) -> np.ndarray:
    """Bernoulli(exp(−a_i/b)) for an int64 array a ≥ 0 and an int 1 ≤ b < 2^50."""
    a = np.asarray(a, dtype=np.int64)
    b = int(b)
    q, r = np.divmod(a, np.int64(b))
    alive = np.ones(a.shape, dtype=bool)
    # ⌊γ⌋ Bernoulli(e^{−1}) trials; an element stops at its first failure, so
    # the loop runs about log(size) rounds whatever ⌊γ⌋ is.
    j = 0
    while True:
        idx = np.flatnonzero(alive & (q > j))
        if idx.size == 0:
            break
        alive[idx] = _bern_frac_vec(np.ones(idx.size, np.int64), 1, rng)
        j += 1
    idx = np.flatnonzero(alive)
    if idx.size:
        alive[idx] = _bern_frac_vec(r[idx], b, rng)
    return alive


def _bern_frac_vec(a, b: int, rng):
    """Bernoulli(exp(−a_i/b)), 0 ≤ a_i ≤ b < 2^50: the alternating series, vectorised.

    The survivors of round K all have the same index K, so each round is one
    draw of uniform integers below the scalar b·K.
    """
    odd = np.ones(a.shape, dtype=bool)
    todo = np.arange(a.size)
    k = 1
    while todo.size:
        if k >= _K_LIMIT:  # b·k would leave the int64 range: finish with Python ints
            for i in todo:
                odd[i] = bernoulli_exp_frac_scalar(int(a[i]), b, rng, k)
            break
        hit = _below(rng, b * k, todo.size) < a[todo]
        todo = todo[hit]
        k += 1
        odd[todo] = (k & 1) == 1
    return odd


def _geometric_e1_vec(size, rng):
    """Number of successes of Bernoulli(e^{−1}) before the first failure."""
    v = np.zeros(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        ok = _bern_frac_vec(np.ones(todo.size, np.int64), 1, rng)
        todo = todo[ok]
        v[todo] += 1
    return v


def discrete_laplace_vec(size: int, n: int, s: int, rng) -> np.ndarray:
    """``size`` draws of P[Z = z] ∝ exp(−|z|·s/n); int64 path when n, s < 2^50.

    A draw with |Z| ≥ 2^62 (probability below exp(−2^12) for these bounds) is
    clamped to ±(2^62 − 1); callers clamp far tighter anyway.
    """
    if n >= (1 << _DEN_BITS) or s >= (1 << _DEN_BITS):
        return np.array([discrete_laplace_scalar(n, s, rng) for _ in range(size)], dtype=np.int64)
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    n64 = np.int64(n)
    while todo.size:
        m = todo.size
        u = _below(rng, n, m)
        keep = _bern_frac_vec(u, n, rng)
        u = u[keep]
        v = _geometric_e1_vec(u.size, rng)
        big = v >= (_INT_LIMIT - n) // n
        y = np.empty(u.size, dtype=np.int64)
        y[~big] = (u[~big] + n64 * v[~big]) // s
        for i in np.flatnonzero(big):
            y[i] = min((int(u[i]) + n * int(v[i])) // s, _INT_LIMIT - 1)
        sign = _below(rng, 2, u.size) == 1
        ok = ~(sign & (y == 0))
        pos = np.flatnonzero(keep)[ok]  # positions in todo that got a draw
        out[todo[pos]] = np.where(sign, -y, y)[ok]
        done = np.zeros(m, dtype=bool)
        done[pos] = True
        todo = todo[~done]
    return out


def discrete_gaussian_vec(size: int, t: int, m: int, rng) -> np.ndarray:
    """``size`` draws of the discrete Gaussian with σ² = t·m (integers t, m ≥ 1).

    Rejection from the discrete Laplace of scale t with acceptance
    exp(−(|Y| − m)²/(2tm)); int64 path when 2tm < 2^50.
    """
    den = 2 * t * m
    if den >= (1 << _DEN_BITS):
        return np.array([discrete_gaussian_scalar(t * m, 1, rng, t) for _ in range(size)], dtype=np.int64)
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        y = discrete_laplace_vec(todo.size, t, 1, rng)
        diff = np.abs(y) - m
        small = np.abs(diff) < (1 << 31)  # diff² < 2^62
        acc = np.zeros(y.size, dtype=bool)
        acc[small] = bernoulli_exp_vec(diff[small] * diff[small], den, rng)
        for i in np.flatnonzero(~small):
            acc[i] = bernoulli_exp_scalar(int(diff[i]) ** 2, den, rng)
        out[todo[acc]] = y[acc]
        todo = todo[~acc]
    return out


def as_fraction(x, name: str, *, allow_zero: bool = False) -> Fraction:
    """A positive (or, with ``allow_zero``, non-negative) finite number as an exact Fraction.

    ints and Fractions are taken as they are; a float is the dyadic rational it
    represents (``float.as_integer_ratio``), so nothing is rounded.  A 0-d
    array is its scalar.
    """
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, Fraction, np.integer, np.floating)):
        raise TypeError(f"{name} must be an int, float or Fraction, got {type(x).__name__}")
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            raise ValueError(f"{name} must be finite, got {x!r}")
        f = Fraction(*float(x).as_integer_ratio())
    else:
        f = Fraction(int(x)) if isinstance(x, np.integer) else Fraction(x)
    if f < 0 or (f == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {x!r}")
    return f


# ---------------------------------------------------------------------------
# dispatch: compiled when a Generator and parameters below 2^62
# ---------------------------------------------------------------------------
def _compiled(rng) -> bool:
    return isinstance(rng, np.random.Generator)


def discrete_laplace(size: int, n: int, s: int, rng) -> np.ndarray:
    """``size`` draws of P[Z = z] ∝ exp(−|z|·s/n) (integers n, s ≥ 1)."""
    if _compiled(rng) and n < _discrete.LIMIT and s < _discrete.LIMIT:
        out = np.empty(size, dtype=np.int64)
        _discrete.laplace_fill(rng.bit_generator, out, n, s)
        return out
    return discrete_laplace_vec(size, n, s, rng)


def discrete_gaussian(size: int, t: int, m: int, rng) -> np.ndarray:
    """``size`` draws of the discrete Gaussian with σ² = t·m (integers t, m ≥ 1)."""
    if _compiled(rng) and t * m < _discrete.LIMIT:
        out = np.empty(size, dtype=np.int64)
        _discrete.gaussian_fill(rng.bit_generator, out, t, m)
        return out
    return discrete_gaussian_vec(size, t, m, rng)


def bernoulli_exp(size: int, a: int, b: int, rng) -> np.ndarray:
    """``size`` Bernoulli(exp(−a/b)) draws (bool) for integers a ≥ 0, b ≥ 1."""
    if _compiled(rng) and a < (1 << 64) and b < (1 << 64):
        out = np.empty(size, dtype=np.uint8)
        _discrete.bernoulli_exp_fill(rng.bit_generator, out, a, b)
        return out.view(bool)
    if b < (1 << _DEN_BITS) and a < (1 << 62):
        return bernoulli_exp_vec(np.full(size, a, dtype=np.int64), b, rng)
    return np.array([bernoulli_exp_scalar(a, b, rng) for _ in range(size)], dtype=bool)


# ---------------------------------------------------------------------------
# the exponential mechanism on integer scores (exact)
# ---------------------------------------------------------------------------
# P[i] ∝ exp(−(a/b)·d_i) for non-negative integer scores d with min(d) = 0:
# propose i uniformly on {0..m−1} (exact), accept with Bernoulli(exp(−a·d_i/b))
# (exact), repeat.  P[propose i and accept] = w_i/m, so an accepted index has
# law w_i/Σ_j w_j exactly, and the accepted proposals of one i.i.d. sequence
# of trials are i.i.d. draws; each trial succeeds with probability Σw/m ≥ 1/m.
def expmech_scalar(d, a: int, b: int, rng) -> int:
    """One index, Python ints of any size (the reference and the fallback)."""
    m = len(d)
    while True:
        i = below_int(rng, m)
        if bernoulli_exp_scalar(a * int(d[i]), b, rng):
            return i


def expmech_vec(size: int, d: np.ndarray, a: int, b: int, rng) -> np.ndarray:
    """``size`` indices, int64 path: needs b < 2^50 and a·max(d) < 2^62 (a < 2^62).

    Trials are drawn in batches (64, doubling up to 4096 while draws are
    missing); the accepted ones, in order, are the draws.
    """
    m = d.shape[0]
    batch = 64
    out = np.empty(size, dtype=np.int64)
    filled = 0
    a64 = np.int64(a)
    while filled < size:
        i = _below(rng, m, batch)
        got = i[bernoulli_exp_vec(a64 * d[i], b, rng)][: size - filled]
        out[filled:filled + got.size] = got
        filled += got.size
        batch = min(2 * batch, 4096)
    return out


def expmech(size: int, d, a: int, b: int, rng) -> np.ndarray:
    """``size`` i.i.d. indices with P[i] ∝ exp(−(a/b)·d_i), exactly.

    ``d``: non-negative integer scores with min 0, an int64 array (compiled
    path for a Generator with a, b < 2^64; numpy path when the products fit
    in int64) or a list of Python ints of any size (scalar path).
    """
    if isinstance(d, np.ndarray):
        if _compiled(rng) and a < (1 << 64) and b < (1 << 64):
            out = np.empty(size, dtype=np.int64)
            _discrete.expmech_fill(rng.bit_generator, d, out, a, b)
            return out
        if b < (1 << _DEN_BITS) and a < _INT_LIMIT and a * int(d.max()) < _INT_LIMIT:
            return expmech_vec(size, d, a, b, rng)
        d = [int(x) for x in d]
    return np.array([expmech_scalar(d, a, b, rng) for _ in range(size)], dtype=np.int64)
