"""Noise backends of the gradient engine (:mod:`fasterm.erm._engine`): how a step's gradient is released.

A backend is chosen once per fit (:func:`for_fit`) and has one interface:

``calibrate(l2_sensitivity, dim, steps, epsilon, delta)``
    the noise for ``steps`` adaptive releases of a d-vector of L2 sensitivity
    Δ₂, returned (and kept) as a calibration object with ``noise_scale``,
    ``noise_sq(d)`` (E‖h‖² per release), ``bias_norm(d)`` (the largest
    systematic error of a release), ``epsilon`` and ``delta`` (the privacy
    spent; the theorems are in the calibrations' docstrings);
``release(g, shift)``
    the released gradient g + shift + h, h fresh noise (``shift`` is ρ·w, the
    regulariser's data-independent term, or None);
``work_dtype(dtype)``
    the dtype gradients must be summed in;
``fused(dtype)``
    ``(noise code, scale, bit generator)`` when ``_losses.pgd_loop`` can draw
    the same noise inside the compiled loop in ``dtype``, else None.

:class:`FloatNoise` — Laplace or Gaussian noise from fasterm's fast float
samplers, calibrated by :func:`fasterm.accounting.calibrate_steps`; step t
adds the next d draws of the Generator's bit generator in the work dtype
(X's), inside the compiled loop when fused; in float32 the scale is rounded
up, never to nearest (``fasterm.mechanisms.noise.scale_for``: less noise than
certified would spend more than the reported ε).  :class:`GridNoise` — secure
mode (:mod:`fasterm.mechanisms.secure`): the averaged data gradient is rounded to the
grid γ·ℤ and exact discrete noise is added, γ·(round(g/γ) + Z); the
regulariser's term is added after the release (post-processing), sums are in
float64 (a float32 sum of n gradients is only good to ~6e-8·n·G, beyond the
grid's rounding allowance for large n).  :class:`NoNoise` — non-private
``pgd``.
"""

from __future__ import annotations

import math

import numpy as np

import fasterm.erm._losses as _losses  # compiled (src/fasterm/erm/_losses.pyx)
import fasterm.mechanisms._noise as _noise
import fasterm.accounting as accounting
import fasterm.mechanisms.noise as _noise_mod
import fasterm.mechanisms.secure as _secure
from .._validation import check_random_state

__all__ = ["FloatNoise", "GridNoise", "NoNoise", "for_fit"]


class NoNoise:
    """The exact gradient (non-private ``pgd``)."""

    secure_calibration = None
    parameters = ()

    def work_dtype(self, dtype):
        return dtype

    def fused(self, dtype):
        return _losses.NOISE_NONE, 0.0, None

    def release(self, g, shift):
        if shift is not None:
            g += shift
        return g


class FloatNoise:
    """Laplace (``"pure"``, ``"coordinate"``, ``"l2"`` calibrations) or Gaussian float noise."""

    secure_calibration = None
    parameters = ()

    def __init__(self, noise, calibration, rng, scale=None):
        self.noise, self.calibration, self.rng = noise, calibration, rng
        self.scale = scale
        self.cal = None
        self._fill = _noise.gaussian_fill if noise == "gaussian" else _noise.laplace_fill
        self._row = self._row_scale = None

    def calibrate(self, l2_sensitivity, dim, steps, epsilon, delta):
        self.cal = accounting.calibrate_steps(self.noise, self.calibration, l2_sensitivity, dim, steps,
                                              epsilon, delta)
        self.scale = self.cal.noise_scale
        return self.cal

    def work_dtype(self, dtype):
        return dtype

    def fused(self, dtype):
        code = _losses.NOISE_GAUSSIAN if self.noise == "gaussian" else _losses.NOISE_LAPLACE
        return code, _noise_mod.scale_for(self.scale, dtype), self.rng.bit_generator

    def advance(self, bit_generator, dim, dtype):
        """Draw from ``bit_generator`` what one :meth:`release` of a ``dim``-vector in ``dtype``
        draws, and discard it (a look-ahead copy of the stream is kept in step with the run:
        :class:`fasterm.erm._dask.SampledRows`)."""
        self._fill(bit_generator, np.empty(dim, dtype=dtype), _noise_mod.scale_for(self.scale, dtype))

    def release(self, g, shift):
        if shift is not None:
            g += shift  # before the noise: the order of the compiled loop
        if self._row is None or self._row.shape != g.shape or self._row.dtype != g.dtype:
            self._row = np.empty_like(g)
            self._row_scale = _noise_mod.scale_for(self.scale, g.dtype)
        self._fill(self.rng.bit_generator, self._row, self._row_scale)
        g += self._row
        return g


class GridNoise:
    """Secure mode: exact discrete Laplace/Gaussian noise on a power-of-two grid."""

    parameters = ("granularity",)

    def __init__(self, noise, calibration, rng, granularity=None):
        self.noise, self.calibration, self.rng = noise, calibration, rng
        self.granularity = granularity
        self.cal = None

    @property
    def secure_calibration(self):
        return self.cal

    def calibrate(self, l2_sensitivity, dim, steps, epsilon, delta):
        # Δ₂ rounded up: the grid calibrations are exact rationals of it.
        self.cal = _secure.calibrate(self.noise, self.calibration, math.nextafter(l2_sensitivity, math.inf),
                                     dim, steps, epsilon, delta, self.granularity)
        return self.cal

    def work_dtype(self, dtype):
        return np.float64

    def fused(self, dtype):
        return None

    def release(self, g, shift):
        out = _secure.release(g, self.cal.granularity, self.cal.params, self.rng)
        if shift is not None:
            out += shift
        return out


def for_fit(secure, noise, calibration, random_state, granularity=None):
    """The backend of one private fit: secure mode (``secure``: None → the current
    setting, :func:`fasterm.mechanisms.secure.resolve`) or float noise, with its random stream."""
    if _secure.resolve(secure):
        if granularity is not None:
            granularity = _secure.check_granularity(granularity)
        return GridNoise(noise, calibration, _secure.secure_rng(random_state), granularity)
    if granularity is not None:
        raise ValueError("granularity is only used in secure mode (secure=True)")
    return FloatNoise(noise, calibration, check_random_state(random_state))
