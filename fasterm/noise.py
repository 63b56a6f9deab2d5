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
from ._validation import check_out, check_random_state, check_scalar

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
        if size is not None and np.shape(np.empty(size, dtype=np.int8)) != out.shape:
            raise ValueError(f"size {size} does not match out.shape {out.shape}")
    else:
        if size is None:
            raise ValueError("size must be given when out is None")
        dt = np.dtype(dtype)
        if dt not in (np.float32, np.float64):
            raise TypeError(f"dtype must be float32 or float64, got {dt}")
        try:
            shape = tuple(int(s) for s in np.atleast_1d(np.asarray(size, dtype=np.int64)))
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"size must be an int or a tuple of ints, got {size!r}") from None
        if any(s < 0 for s in shape):
            raise ValueError(f"size must be non-negative, got {size!r}")
        out = np.empty(shape if np.ndim(size) else shape[0], dtype=dt)
    return out, scale, rng


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
