"""Laplace and Gaussian noise vectors from a caller's ``numpy.random.Generator``.

The samplers are compiled (``fasterm.mechanisms._noise``) and draw from the Generator's
own bit generator, so ``random_state`` reproduces a run exactly:

* ``gaussian`` uses numpy's ziggurat normal: for float64 it returns exactly
  ``Generator.normal(0, scale, size)`` for the same Generator state.
* ``laplace`` draws Laplace(0, b) as ``b * E * S`` from fasterm's own
  256-layer ziggurat for Exp(1) (Marsaglia & Tsang 2000,
  ``src/cpp/fasterm/ziggurat.hpp``), not numpy's exponential: one uniform
  64-bit word gives the sign S from bit 0, the layer from bits 1–8 and the
  position in the layer from bits 9–63 (float32 output: a 32-bit word, a
  23-bit position).  The fields are disjoint bits of a uniform word, hence
  independent; the rare wedge/tail draws (about 1%) take further uniforms
  and the tail is R + Exp(1) by inversion.  If E ~ Exp(1) and S = ±1 with
  probability 1/2, then b·E·S has density exp(-|x|/b) / (2b), the Laplace
  density.  The stream therefore differs from ``Generator.laplace``.

These are the *fast* floating-point samplers: private in the real-number
model, exposed in principle to Mironov's (2012) attack on the low-order bits
of value + float noise (docs/secure.rst, "The threat").

Secure (floating-point-safe) samplers, used by ``secure=True`` /
:func:`fasterm.secure_mode` (:mod:`fasterm.mechanisms.secure`: the grid, the accounting
of the rounding and the theorems; docs/secure.rst: their cost):

* ``discrete_laplace(size, scale)``: P[Z = z] ∝ exp(−|z|/scale) on ℤ;
* ``discrete_gaussian(size, sigma2)``: P[Z = z] ∝ exp(−z²/(2·sigma2)) on ℤ;
* ``bernoulli_exp(gamma, size)``: Bernoulli(exp(−gamma)) for rational gamma ≥ 0.

They are exact: the parameters are taken as exact rationals (a float is a
dyadic rational, ``float.as_integer_ratio``), and the algorithms of Canonne,
Kamath & Steinke (2020, "The Discrete Gaussian for Differential Privacy",
§5) use integer arithmetic and uniform integers only (:mod:`fasterm.mechanisms._exact`).
``random_state``: None/int/Generator (reproducible; uniform integers from
``Generator.integers``, exact by rejection) or ``"os"`` / :class:`OSRandom`
(operating-system entropy from ``os.urandom``; not reproducible).
"""

from __future__ import annotations

import numpy as np

import fasterm.mechanisms._exact as _exact
import fasterm.mechanisms._noise as _noise  # compiled (src/fasterm/mechanisms/_noise.pyx)
from ._exact import OSRandom
from .._validation import check_out, check_random_state, check_scalar, check_size

__all__ = ["laplace", "gaussian", "discrete_laplace", "discrete_gaussian", "bernoulli_exp", "OSRandom"]


def _scale_for(scale: float, dtype) -> float:
    """The smallest value of ``dtype`` that is ≥ ``scale``, as a Python float.

    Noise scales are calibrated (and certified) in float64; a float32 sampler
    or loop would cast them to float32 with round-to-nearest, which rounds down
    about half the time: less noise than certified, a privacy loss above the
    reported ε or δ.  Rounding up only adds noise.  The float returned is
    exactly representable in ``dtype``, so the kernels' cast is exact.
    """
    if np.dtype(dtype) != np.float32:
        return scale
    with np.errstate(over="ignore"):
        s = np.float32(scale)
    if float(s) < scale:
        s = np.nextafter(s, np.float32(np.inf))
    return float(s)



#: The name the other wings use (:mod:`fasterm.erm._backends`, the multiclass class sums).
scale_for = _scale_for

def _prepare(size, scale, dtype, out, random_state):
    scale = check_scalar(scale, "scale", low=0.0)
    rng = check_random_state(random_state)
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
        if out.dtype not in (np.float32, np.float64):
            raise TypeError(f"out must be float32 or float64, got {out.dtype}")
        out = check_out(out, "out", out.shape, out.dtype)
        if size is not None and check_size(size) != out.shape:
            raise ValueError(f"size {size} does not match out.shape {out.shape}")
    else:
        if size is None:
            raise ValueError("size must be given when out is None")
        try:
            dt = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"dtype must be float32 or float64, got {dtype!r}") from None
        if dt not in (np.float32, np.float64):
            raise TypeError(f"dtype must be float32 or float64, got {dt}")
        out = np.empty(check_size(size), dtype=dt)
    # The largest draw of either sampler is below 64 scales (the Laplace
    # ziggurat's tail R - log(1 - U), U a 53-bit uniform, is at most ~45; the
    # normal ziggurat's tail is smaller): beyond max/64 a draw could overflow to ±inf.
    if not scale * 64.0 < float(np.finfo(out.dtype).max):
        raise ValueError(f"scale={scale:g} is too large for {out.dtype} draws (must be < max/64)")
    return out, _scale_for(scale, out.dtype), rng


def laplace(size: int | tuple[int, ...] | None = None, scale: float = 1.0, *, random_state: None | int | np.random.Generator = None,
            dtype: np.typing.DTypeLike = np.float64, out: np.ndarray | None = None) -> np.ndarray:
    """I.i.d. Laplace(0, ``scale``) draws, shape ``size`` (or written into ``out``).

    ``random_state``: None, an int seed or a ``numpy.random.Generator``
    (whose state advances).  ``dtype``: float64 or float32.
    """
    out, scale, rng = _prepare(size, scale, dtype, out, random_state)
    _noise.laplace_fill(rng.bit_generator, out.reshape(-1), scale)
    return out


def gaussian(size: int | tuple[int, ...] | None = None, scale: float = 1.0, *, random_state: None | int | np.random.Generator = None,
             dtype: np.typing.DTypeLike = np.float64, out: np.ndarray | None = None) -> np.ndarray:
    """I.i.d. N(0, ``scale``²) draws, shape ``size`` (or written into ``out``).

    For float64 the output equals ``Generator.normal(0, scale, size)`` for the
    same Generator state, bit for bit.
    """
    out, scale, rng = _prepare(size, scale, dtype, out, random_state)
    _noise.gaussian_fill(rng.bit_generator, out.reshape(-1), scale)
    return out


def _size(size) -> int:
    if isinstance(size, np.ndarray) and size.ndim == 0:  # a 0-d array spells its scalar
        size = size[()]
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"size must be an int, got {type(size).__name__}")
    if size < 0:
        raise ValueError(f"size must be non-negative, got {size}")
    return int(size)


# The draws are int64: a scale beyond 2^56 would overflow them beyond 128 scales
# (the probability of exceeding 64 scales is e^−64 already).
_DISCRETE_SCALE_LIMIT = 2 ** 56


def discrete_laplace(size, scale, *, random_state=None) -> np.ndarray:
    """``size`` i.i.d. draws (int64) of P[Z = z] ∝ exp(−|z|/scale), z ∈ ℤ.

    ``scale``: a positive int, float or ``fractions.Fraction`` up to 2^56,
    used exactly (CKS 2020 Algorithm 2 with scale = n/s in lowest terms).
    Exact for every scale; int64 arithmetic when n, s < 2^50, Python integers
    beyond.
    """
    n = _size(size)
    t = _exact.as_fraction(scale, "scale")
    if t > _DISCRETE_SCALE_LIMIT:
        raise ValueError(f"scale must be at most 2**56 (the draws are int64), got {scale!r}")
    return _exact.discrete_laplace(n, t.numerator, t.denominator, _exact.secure_rng(random_state))


def discrete_gaussian(size, sigma2, *, random_state=None) -> np.ndarray:
    """``size`` i.i.d. draws (int64) of P[Z = z] ∝ exp(−z²/(2·sigma2)), z ∈ ℤ.

    ``sigma2`` (σ²): a positive int, float or Fraction up to 2^112 (σ ≤ 2^56,
    the draws are int64), used exactly.  CKS 2020
    Algorithm 3: rejection from the discrete Laplace of scale t = ⌊σ⌋ + 1.
    Compiled/vectorised when σ² is an integer multiple of t (what secure mode
    uses, :func:`fasterm.mechanisms.secure.gaussian_params`), else a scalar loop on
    Python ints.
    """
    n = _size(size)
    s2 = _exact.as_fraction(sigma2, "sigma2")
    if s2 > _DISCRETE_SCALE_LIMIT ** 2:
        raise ValueError(f"sigma2 must be at most 2**112 (the draws are int64), got {sigma2!r}")
    rng = _exact.secure_rng(random_state)
    t = _exact.gaussian_t(s2.numerator, s2.denominator)
    if s2.denominator == 1 and s2.numerator % t == 0:
        return _exact.discrete_gaussian(n, t, s2.numerator // t, rng)
    return np.array([_exact.discrete_gaussian_scalar(s2.numerator, s2.denominator, rng, t)
                     for _ in range(n)], dtype=np.int64)


def bernoulli_exp(gamma, size, *, random_state=None) -> np.ndarray:
    """``size`` i.i.d. Bernoulli(exp(−gamma)) draws (bool), gamma ≥ 0 rational (exact)."""
    n = _size(size)
    g = _exact.as_fraction(gamma, "gamma", allow_zero=True)
    rng = _exact.secure_rng(random_state)
    return _exact.bernoulli_exp(n, g.numerator, g.denominator, rng)
