"""The projected-gradient step loop that every first-order solver of fasterm drives.

One run, from w_0 (the feasible set's centre, data independent):

    for t = 0, …, T − 1:
        y_t = w_t + β_t (w_t − w_{t−1})       momentum (optional; y_t = w_t without it)
        acc += y_t                            averaging (the points where gradients are taken)
        g   = s · grad_sum(y_t)               gradient-sum callable, s = 1/n or 1/(batch size)
        g̃   = noise.release(g, ρ·y_t)         noise backend: g + ρ·y_t + h_t, h_t its noise
        w_{t+1} = Π_C(y_t − η_t g̃)            step-size schedule, projection
    return Π_C(acc/T) (average=True) or w_T (the last iterate)

The pieces a solver supplies are the arguments of :func:`descend`.  The
gradient sum must bound each example's contribution wherever it is evaluated
(per-example clipping; y_t may leave C under momentum): that bound times
``scale`` is the sensitivity the noise backend (:mod:`fasterm.erm._backends`) was
calibrated for.

:func:`run` is the in-memory driver of a linear-model loss (:func:`steps_on` its
steps): when the backend's noise can be drawn inside the compiled loop (float
noise), the set has a compiled projection and the schedules are Python
numbers, one call of ``_losses.pgd_loop`` (dense X) or ``_sparse.pgd_loop``
(CSR X) runs every step with the GIL released — src/cpp/fasterm/loops.hpp,
momentum, step schedules and averaging included, the same arithmetic as
:func:`descend` in the same order (tests/erm/test_loops.py compares both with a
numpy reference bit for bit).  :func:`descend` drives the gradient sums that
cannot run inside it: the dask driver's map-reduce
(:func:`fasterm.erm._dask.run`), secure mode's exact grid release (its
arithmetic is exact rationals, drawn from Python), sets projected in Python,
and the numpy reference loops of noisy SGD.  Each step releases one noisy
gradient and everything else (momentum, regulariser, step, projection,
averaging) is post-processing, so the privacy of a run is the backend's
calibration for T releases, whatever the driver.
"""

from __future__ import annotations

import numpy as np

import fasterm.erm._float_margin as _float_margin
import fasterm.erm._losses as _losses  # compiled (src/fasterm/erm/_losses.pyx)
import fasterm.erm._sparse as _sparse  # compiled (src/fasterm/erm/_sparse.pyx)
from .losses import _grad_sum_kernel
from .._validation import is_sparse
from .._warnings import progress, warn_cost

__all__ = ["descend", "finish", "run", "steps_on"]


def finish(constraint, w, acc, steps, dtype):
    """The returned point, in ``dtype``: Π_C(acc/T) when averaging, else the last iterate."""
    if acc is not None:
        # The average of points of a convex set lies in it; projecting removes
        # the rounding of the sum (a no-op up to ulps).
        return constraint.project((acc / steps).astype(dtype))
    if w.dtype != dtype:  # rounded to a narrower dtype: back into C
        return constraint.project(w.astype(dtype))
    return w


def _schedule(value):
    return value if callable(value) else (lambda t: value)


def descend(grad_sum, w, constraint, steps, lr, *, scale, noise, reg=0.0, average=True, momentum=None,
            out_dtype=None):
    """T projected (noisy) gradient steps from ``w`` (updated in place); the loop of the module docstring.

    ``w``'s dtype is the work dtype (the dtype ``grad_sum`` writes); the result
    is returned in ``out_dtype`` (default: the work dtype).  Each step is, in w's
    dtype, y = w + β·(w − w_prev), g = s·Σ(y) (+ ρ·y) (+ h_t), w ← Π_C(y + (−η)·g)
    — the arithmetic of the compiled loop (src/cpp/fasterm/loops.hpp) when η and
    β are Python numbers.

    ``grad_sum(w, out)``
        out ← Σ_{i∈B_t} ∇ℓ_i(w) in the work dtype; called once per step, in step
        order, so it may keep state (a full batch: the compiled ``_losses.grad_sum``;
        a Poisson minibatch: a sampler drawing its batch from its own Generator; on
        dask: a map-reduce over row chunks, :mod:`fasterm.erm._dask`).  It must bound
        each example's contribution wherever it is evaluated (per-example clipping):
        that bound, times ``scale``, is the sensitivity the backend was calibrated for.
    ``scale``
        the factor s that turns the sum into the released average (1/n; 1/(q·n) for
        Poisson sampling at rate q).
    ``reg``
        ρ, the data-independent L2 regulariser's weight: ρ·y is added to the
        gradient (a function of earlier releases only, so post-processing).
    ``lr``
        η: a float, or a callable t ↦ η_t (a schedule).
    ``momentum``
        None, a float β or a callable t ↦ β_t (Nesterov extrapolation, as in
        accelerated projected gradient / FISTA; y_t may leave C, hence the clipping
        requirement above).  Privacy is unaffected: y_t is a function of the
        earlier releases.
    ``noise``
        a noise backend (:mod:`fasterm.erm._backends`): ``release(g, shift)`` returns
        the noisy gradient g + shift + h (it may work in place on g), and
        ``work_dtype(dtype)`` says in which dtype gradients must be summed (the
        exact-grid backend needs float64 sums); ``fused(dtype)`` returns the
        compiled loop's noise arguments, or None.
    ``average``
        return the average of the y_t (Theorems 1/2 of :mod:`fasterm.erm.optimize`
        bound it) or the last iterate.

    Under :func:`fasterm._warnings.verbose` the steps done are shown (:func:`fasterm._warnings.progress`).
    """
    d, dtype = w.shape[0], w.dtype
    acc = np.zeros(d, dtype=np.float64) if average else None
    grad = np.empty(d, dtype=dtype)
    step = np.empty(d, dtype=dtype)
    shift_buf = np.empty(d, dtype=dtype) if reg else None
    project = constraint._project
    eta = None if callable(lr) else lr
    lr_of = _schedule(lr)
    beta_of = None if momentum is None else _schedule(momentum)
    prev = w.copy() if beta_of is not None else None
    y = w
    with progress(steps, "steps") as report:
        for t in range(steps):
            if beta_of is not None:
                beta = beta_of(t)
                y = w + beta * (w - prev)
                prev[:] = w
            if average:
                acc += y  # Theorems 1/2 bound the average of the points where gradients are taken
            grad_sum(y, grad)
            grad *= scale
            shift = None
            if reg:
                np.multiply(y, reg, out=shift_buf)
                shift = shift_buf
            g = noise.release(grad, shift)
            np.multiply(g, -(eta if eta is not None else lr_of(t)), out=step)
            step += y
            project(step, w)
            if report is not None:
                report(t + 1)
    return finish(constraint, w, acc, steps, dtype if out_dtype is None else out_dtype)


def release_clip(loss, constraint, c, dtype, m, d, *, scale, weight_bound=1.0, sparse=False,
                 momentum=False, theta=None):
    """The clip the kernels get for a release of m summed rows at ``scale``: c/(1 + Θ),
    Θ = :func:`fasterm.erm._float_margin.margin` (public numbers only), so that the
    computed pre-noise vector moves by at most the sensitivity 2·B·c·scale
    reported for c (docs/guarantees.rst, "Floating point"); computed once per public
    configuration (:func:`fasterm.erm._float_margin.release_clip`).  c = 0 (no clip: a
    non-private run) is returned unchanged."""
    if not c:
        return c
    # "any": the larger of the dense and CSR kernels' θ, so a CSR X and its dense copy get one clip
    return _float_margin.release_clip("any", np.dtype(dtype), int(m), int(d), float(c), float(scale),
                                      float(weight_bound * c), float(loss.l2), float(constraint.norm_bound),
                                      bool(momentum), theta)


def run(loss, X, y, constraint, steps, lr, average, *, data_norm, clip, noise, label_bound=None,
        momentum=None, weights=None, checked=False, weight_bound=1.0):
    """Projected (noisy) gradient descent of a linear-model loss on in-memory X.

    Inputs are validated once here (``loss._prepare``, in the backend's work
    dtype; X's dtype is kept otherwise); then the fused compiled loop when
    possible (module docstring), else :func:`descend` around the compiled
    clipped gradient sum.  ``weights``: checked sample weights (float64,
    one per row, :func:`fasterm._validation.check_sample_weight`) that
    multiply the clipped per-example gradients, or None.  ``checked``: X
    and y come from :func:`fasterm._validation.check_X_y` (or X from
    ``check_csr``), so ``loss._prepare`` does not check them again.  Returns
    the point in X's dtype.  ``weight_bound``: B, the weights' public bound (the
    per-example bound is B·clip).  The kernels clip at :func:`release_clip`'s
    c/(1 + Θ), the floating-point margin of a full-batch release.
    """
    out_dtype = X.dtype
    dtype = np.dtype(noise.work_dtype(X.dtype))
    sparse = is_sparse(X)
    if dtype != X.dtype:
        X = X.astype(dtype) if sparse else np.asarray(X, dtype=dtype)
        y = None if y is None else np.asarray(y, dtype=dtype)
    w, X, y, c, dn, ybound, norms, nt = loss._prepare(
        constraint.center.astype(dtype, copy=False), X, y, clip=clip, data_norm=data_norm, label_bound=label_bound,
        accept_sparse=True, checked=checked)
    c = release_clip(loss, constraint, c, dtype, X.shape[0], X.shape[1], scale=1.0 / X.shape[0],
                     weight_bound=weight_bound, sparse=sparse, momentum=momentum is not None)
    warn_cost(steps, X.shape[0], X.shape[1])
    acc = np.zeros(X.shape[1], dtype=np.float64) if average else None
    w = steps_on(loss, X, y, norms, dn, c, ybound, nt, weights, w, constraint, steps, lr, noise, momentum, acc)
    return finish(constraint, w, acc, steps, out_dtype)


def _schedules(lr, momentum, steps):
    """(η, η_t or None, β_t or None) for the compiled loop (float64 arrays of the values
    :func:`descend` would use), or None when a value is not a Python number: :func:`descend`'s
    numpy would then compute that step in the value's dtype, not the work dtype."""
    lrs = betas = None
    if callable(lr):
        lrs = [lr(t) for t in range(steps)]
        if not all(type(v) in (float, int) for v in lrs):
            return None
        lr, lrs = 0.0, np.array(lrs, dtype=np.float64)
    elif type(lr) not in (float, int):
        return None
    if momentum is not None:
        betas = [momentum(t) for t in range(steps)] if callable(momentum) else [momentum] * steps
        if not all(type(v) in (float, int) for v in betas):
            return None
        betas = np.array(betas, dtype=np.float64)
    return float(lr), lrs, betas


def steps_on(loss, X, y, norms, dn, c, ybound, nt, weights, w, constraint, steps, lr, noise, momentum, acc,
             acc_from=0):
    """The T steps of :func:`descend` on prepared data (``loss._prepare``'s X, y, norms, dn,
    clip c, ybound, nt) from ``w`` (in place; returned, the last iterate, in the work dtype):
    the gradient sum :func:`fasterm.erm.losses._grad_sum_kernel` over all rows at scale
    1/n, the regulariser ``loss.l2``; ``acc`` (float64, or None) += y_t for t ≥ ``acc_from``.

    One compiled call (``_losses.pgd_loop``, ``_sparse.pgd_loop`` for CSR:
    src/cpp/fasterm/loops.hpp, the GIL released) when the backend's noise is fused, the set
    has a compiled projection and the schedules are Python numbers; else :func:`descend`
    around the compiled gradient sum (secure mode's exact grid release, a set projected in
    Python).  Both compute the same bits (tests/erm/test_loops.py)."""
    dtype = w.dtype
    spec = constraint._loop_spec(dtype)
    fused = noise.fused(dtype) if spec is not None else None
    sched = _schedules(lr, momentum, steps) if fused is not None else None
    if sched is not None:
        code, scale, bit_generator = fused
        eta, lrs, betas = sched
        with progress(steps, "steps") as report:
            if is_sparse(X):
                _sparse.pgd_loop(loss._kind, X.data, X.indices, X.indptr, X.shape[1], y, norms, dn, c, ybound, w,
                                 steps, eta, float(loss.l2), code, scale, bit_generator, *spec, acc, nt, weights,
                                 progress=report, betas=betas, lrs=lrs, acc_from=acc_from)
            else:
                _losses.pgd_loop(loss._kind, X, y, norms, dn, c, ybound, w, steps, eta, float(loss.l2), code,
                                 scale, bit_generator, *spec, acc, nt, weights, progress=report, betas=betas,
                                 lrs=lrs, acc_from=acc_from)
        return w
    kind, calls = loss._kind, [0]

    def grad_sum(point, out):
        if acc is not None and calls[0] >= acc_from:
            np.add(acc, point, out=acc)
        calls[0] += 1
        _grad_sum_kernel(kind, X, y, point, norms, dn, c, ybound, out, nt, weights)

    return descend(grad_sum, w, constraint, steps, lr, scale=1.0 / X.shape[0], noise=noise,
                   reg=float(loss.l2), average=False, momentum=momentum)
