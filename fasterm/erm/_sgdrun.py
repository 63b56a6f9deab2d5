"""The whole noisy-SGD run of :func:`fasterm.erm.solvers.noisy_sgd` in one compiled call.

On a dense X (``_losses.sgd_loop``: the GIL released, the bit generator's lock
held) the loop runs the Poisson batch, the gathered rows (and, for the
estimators, their design rows), the clipped gradient sum, the noise, the step
and the projection.  It draws exactly what the Python loop of
:func:`fasterm.erm.solvers._noisy_sgd` draws through numpy's ``Generator`` —
the batch size ``binomial(n, q)``, the rows ``choice(n, size,
replace=False)``, then the d normals — so one seed gives the same bits on
either path (tests/erm/test_sgd_compiled.py); the Python loop is the reference and
runs a CSR X, a set without a compiled projection, or a numpy whose
``Generator`` the compiled sampler is found not to reproduce (checked once per
process, :func:`sampler_matches_numpy`).  The privacy argument is the same on
both paths: the releases are the same random variables.

Both clip every batch of a run at one clip c* (:class:`RunClip`,
:func:`fasterm.erm._float_margin.run_clip`: the one-sided floating-point margin of batches of at
most a public cap M rows, docs/guarantees.rst "The margin of Poisson-subsampled SGD"), whatever
the batch's size.
"""

from __future__ import annotations

import numpy as np

import fasterm.erm._engine as _engine
import fasterm.erm._losses as _losses  # compiled (src/fasterm/erm/_losses.pyx)
from .._warnings import progress

#: False: every run takes the Python reference loop (the tests compare the two).
COMPILED = True
_SAMPLER_OK = None


def sampler_matches_numpy() -> bool:
    """Whether the compiled Poisson sampler (:func:`fasterm.erm._losses.poisson_rows`) draws what the
    reference loop draws through this numpy's ``Generator`` (binomial size, then
    ``choice(replace=False)``, sorted) — checked once per process on a few seeds and sizes that
    reach every branch of numpy's ``choice``; numpy does not promise that its algorithm never
    changes, and the compiled loop is used only while it reproduces the reference bit for bit."""
    global _SAMPLER_OK
    if _SAMPLER_OK is None:
        ok = True
        for n, q in ((7, 0.5), (9_000, 0.03), (20_000, 0.01), (12_000, 0.05), (20, 1.0)):
            for seed in (0, 1):
                rng = np.random.default_rng(seed)
                ref = []
                for _ in range(3):
                    size = int(rng.binomial(n, q))
                    ref.append(np.empty(0, np.int64) if size == 0 else
                               np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n))
                after = rng.standard_normal()
                bg = np.random.default_rng(seed).bit_generator
                got = _losses.poisson_rows(bg, n, q, 3)
                ok = ok and all(np.array_equal(a, b) for a, b in zip(ref, got)) and (
                    np.random.Generator(bg).standard_normal() == after)
        _SAMPLER_OK = ok
    return _SAMPLER_OK


class RunClip:
    """The one clip of a noisy-SGD run (``clip``), for a batch of any size."""

    def __init__(self, clip: float):
        self.clip = float(clip)

    def __call__(self, m: int) -> float:
        return self.clip


def runs(X, y, constraint, backend) -> bool:
    """Whether this run is compiled: a dense C-contiguous float X (y alike), a set with a
    compiled projection, a fused noise backend, and a numpy whose sampler is reproduced."""
    if not COMPILED:
        return False
    if type(X) is not np.ndarray or X.dtype not in (np.float32, np.float64) or not X.flags.c_contiguous:
        return False
    if y is not None and not (type(y) is np.ndarray and y.dtype == X.dtype and y.flags.c_contiguous):
        return False
    if constraint._loop_spec(X.dtype) is None or backend.fused(X.dtype) is None:
        return False
    return sampler_matches_numpy()


def run(kind, X, y, norms, dn, clips, ybound, w, steps, q, inv_m, lr, reg, backend, constraint, average, nt,
        weights, intercept):
    """The T steps from w (updated in place); returns the released point (the last iterate, or
    the projected average of the iterates with ``average``)."""
    _, noise_scale, bit_generator = backend.fused(X.dtype)
    spec = constraint._loop_spec(X.dtype)
    acc = np.zeros(w.shape[0], dtype=np.float64) if average else None
    row_bound, s_col = (0.0, 0.0) if intercept is None else (float(intercept[0]), float(intercept[1]))
    # No row beyond row_bound (read off the norms): no design row is scaled, and the run need not
    # read the norms (a choice of computation only: the same bits either way).
    within = intercept is not None and norms is not None and bool(norms.max() <= row_bound)
    with progress(steps, "steps") as report:
        _losses.sgd_loop(kind, X, y, norms, dn, clips.clip, ybound, w, steps, q, inv_m, lr, reg,
                         noise_scale, bit_generator, *spec, acc, nt, weights, row_bound=row_bound,
                         intercept_scaling=s_col, rows_within_bound=within, progress=report)
    if acc is not None:
        return constraint.project((acc / steps).astype(X.dtype))
    return w


def reference(batch, w, constraint, steps, lr, inv_m, backend, reg, average, dtype):
    """The Python loop of the run (the reference of :func:`run`, and the loop of a CSR or a dask
    X): :func:`fasterm.erm._engine.descend` around ``batch``; with ``average`` the projected
    average of the iterates w_1 … w_T, else the last one."""
    if not average:
        return _engine.descend(batch, w, constraint, steps, lr, scale=inv_m, noise=backend, reg=reg, average=False)
    acc, calls = np.zeros(w.shape[0], dtype=np.float64), [0]

    def recorded(point, out):
        if calls[0]:
            np.add(acc, point, out=acc)
        calls[0] += 1
        batch(point, out)

    last = _engine.descend(recorded, w, constraint, steps, lr, scale=inv_m, noise=backend, reg=reg, average=False)
    acc += last
    return constraint.project((acc / steps).astype(dtype))
