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
one seed gives the same bits on either path (tests/linear_model/test_multiclass_loop.py).  The numpy loop
runs a backend without fused noise (secure mode), or a numpy whose ``Generator`` the compiled
sampler does not reproduce (:func:`fasterm.erm._sgdrun.sampler_matches_numpy`).  Privacy is the
same on both paths: the releases are the same random variables.

Every batch of a run is clipped at one clip (:class:`fasterm.erm._sgdrun.RunClip`: the one-sided
floating-point margin of batches of at most a public cap M rows,
:func:`fasterm.erm._float_margin.run_clip` with θ the multiclass kernel's γ_M; docs/guarantees.rst,
"The margin of Poisson-subsampled SGD"), whatever the batch's size.
"""

from __future__ import annotations

import numpy as np

import fasterm.erm._mclosses as _mclosses  # compiled (src/fasterm/erm/_mclosses.pyx)
import fasterm.erm._engine as _engine
import fasterm.erm._sgdrun as _sgdrun
from ..erm.constraints import L2Ball
from .._validation import is_sparse
from .._warnings import progress

__all__ = ["gd", "runs", "sgd"]

#: False: every fit takes the numpy loop (the tests compare the two).
COMPILED = True


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
    Σ_{start < t ≤ T} w_t (float64).  ``clips``: the run's :class:`fasterm.erm._sgdrun.RunClip`; ``inner``
    maps its release clip to the kernel's (:func:`fasterm.linear_model._multiclass.inner_clip`)."""
    _, scale, bit_generator = backend.fused(w.dtype)
    data, radius = _data(X), float(ball._loop_spec(w.dtype)[1])
    tail = np.zeros(w.shape[0], dtype=np.float64)
    with progress(steps, "steps") as report:
        _mclosses.sgd_loop(code, w, K, *data, y, norms, data_norm, s_col, float(inner(clips.clip)), steps,
                           start, q, 1.0 / m, lr, reg, scale, bit_generator, radius, tail, weights, report)
    return tail


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
    with progress(steps, "steps") as report:
        _mclosses.gd_loop(code, w, K, *_data(X), y, norms, data_norm, s_col, clip, steps, lr, reg, noise, scale,
                          bit_generator, float(ball._loop_spec(w.dtype)[1]), betas, acc, weights, report)
    return _engine.finish(ball, w, acc, steps, out_dtype)
