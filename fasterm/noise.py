"""Laplace and Gaussian noise vectors from a caller's ``numpy.random.Generator``.

The samplers are compiled (``fasterm._noise``) and draw from the Generator's
own bit generator, so ``random_state`` reproduces a run exactly:

* ``gaussian`` uses numpy's ziggurat normal: for float64 it returns exactly
  ``Generator.normal(0, scale, size)`` for the same Generator state.
* ``laplace`` draws Laplace(0, b) as ``b * E * S``, E from numpy's ziggurat
  exponential and S a fair sign (one 64-bit draw gives 64 signs).  If
  E ~ Exp(1) and S = ±1 with probability 1/2, then b·E·S has density
  exp(-|x|/b) / (2b), the Laplace density.

These are the *fast* floating-point samplers: like every textbook sampler they
are exposed to the floating-point attacks of Mironov (2012), which the
``secure`` samplers of a later release address.
"""

from __future__ import annotations

import numpy as np

from . import _noise
from ._validation import check_out, check_random_state, check_scalar, check_size

__all__ = ["laplace", "gaussian"]


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
    # The largest draw of either sampler is below 64 scales (an exponential
    # from a 53-bit uniform is at most ~45; the normal ziggurat's tail is
    # smaller): beyond max/64 a draw could overflow to ±inf.
    if not scale * 64.0 < float(np.finfo(out.dtype).max):
        raise ValueError(f"scale={scale:g} is too large for {out.dtype} draws (must be < max/64)")
    return out, scale, rng


def laplace(size=None, scale=1.0, *, random_state=None, dtype=np.float64, out=None):
    """I.i.d. Laplace(0, ``scale``) draws, shape ``size`` (or written into ``out``).

    ``random_state``: None, an int seed or a ``numpy.random.Generator``
    (whose state advances).  ``dtype``: float64 or float32.
    """
    out, scale, rng = _prepare(size, scale, dtype, out, random_state)
    _noise.laplace_fill(rng.bit_generator, out.reshape(-1), scale)
    return out


def gaussian(size=None, scale=1.0, *, random_state=None, dtype=np.float64, out=None):
    """I.i.d. N(0, ``scale``²) draws, shape ``size`` (or written into ``out``).

    For float64 the output equals ``Generator.normal(0, scale, size)`` for the
    same Generator state, bit for bit.
    """
    out, scale, rng = _prepare(size, scale, dtype, out, random_state)
    _noise.gaussian_fill(rng.bit_generator, out.reshape(-1), scale)
    return out
