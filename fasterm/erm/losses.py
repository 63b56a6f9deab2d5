"""Losses of linear models, ℓ(w; x, y) = φ(⟨w, x⟩, y), with exact privacy constants.

Five losses (their constants are tabulated in docs/guarantees.rst)::

    Logistic   φ(z, y) = log(1 + exp(−y z))      y ∈ {−1, +1}
    Hinge      φ(z, y) = max(0, 1 − y z)          y ∈ {−1, +1}
    Squared    φ(z, y) = (y − z)²                 |y| ≤ Y
    Absolute   φ(z, y) = |y − z|                  |y| ≤ Y
    Linear     φ(z, y) = z                        (y ignored)

each with an optional data-independent L2 regularizer Λ(w) = l2/2 · ‖w‖², so that
the objective is L(w; S) = (1/n) Σ_i ℓ(w; x_i, y_i) + Λ(w).

Methods: ``value`` (L), ``grad`` (the n×d per-example gradients), ``grad_sum``
(their sum, optionally clipped per example, in one fused pass over X),
``reg_value``/``reg_grad``, and the constants ``lipschitz`` (G), ``sensitivity``
(Δ) and, for the smooth losses, ``smoothness`` (β) for the declared bounds.

Declared bounds and clipping (docs/guarantees.rst): privacy needs *public*
bounds, never ones estimated from the data, and nothing is rejected for being
out of bounds.  A row with ‖x_i‖ > ``data_norm`` X is used as x_i·X/‖x_i‖ by
every kernel (on the fly; X is never copied or modified).  Labels are clipped
to [−``label_bound``, ``label_bound``] (Squared, Absolute).  Classification
labels are each read on its own: y > 0 as +1, 0 or −1 as −1; any other value
raises ``ValueError`` naming y (:func:`fasterm._validation.check_class_labels`).
``clip`` c: each per-example gradient is scaled to norm ≤ c' = c·(1 − (d + 8)·2⁻⁵³
− 3u) (u the unit roundoff of X's dtype), so that the gradient as the kernels
form it has exact norm ≤ c (the proof: docs/guarantees.rst, "Floating point").

Only shapes, dtypes and finiteness are checked (:mod:`fasterm._validation`),
every error naming the parameter.  float32 and float64 data are computed in
their own precision (w and y converted to X's dtype); sums over rows, row
norms and the scalar calculus are in double.  Work is split over ``n_threads``
threads (default: the CPUs of this process) in chunks that depend only on
(n, d, dtype), summed in a fixed order: bit-for-bit the same for every
``n_threads``.
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np

import fasterm.erm._losses as _losses  # compiled (src/fasterm/erm/_losses.pyx)
import fasterm.erm._sparse as _sparse  # compiled (src/fasterm/erm/_sparse.pyx)
from .._validation import (FLOAT_DTYPES, check_array, check_class_labels, check_csr, check_derived, check_out,
                          check_positive, check_scalar, is_sparse, labels_as)

__all__ = ["Absolute", "Hinge", "Linear", "Logistic", "Squared", "row_norms"]



# Rows of X whose norms are compared with a caller's row_norms (see check_row_norms).
_ROW_NORM_PROBES = 16
# How far (relative) a probed row's given norm may be from its recomputed one.
_ROW_NORM_RTOL = 1e-6


@functools.lru_cache(maxsize=16)
def _row_norm_probes(n: int) -> np.ndarray:
    """The rows check_row_norms recomputes: a function of n alone (memoised)."""
    idx = np.unique(np.linspace(0, n - 1, min(n, _ROW_NORM_PROBES)).astype(np.intp))
    idx.flags.writeable = False
    return idx


def check_row_norms(row_norms, X: np.ndarray, name: str = "row_norms") -> np.ndarray:
    """Caller-supplied Euclidean norms of the rows of X: shape (n,), finite, >= 0, spot-checked.

    A full check would cost the pass over X that caching the norms saves, so
    up to 16 rows (evenly spaced, a data-independent choice) are recomputed
    and must agree to 1e-6 relative: norms computed for another matrix are
    caught; a deliberately forged vector need not be (the clipping that
    bounds the sensitivity trusts these norms — compute them with
    :func:`fasterm.losses.row_norms`).
    """
    n = X.shape[0]
    norms = check_array(row_norms, name, ndim=1, dtype=np.float64, shape=(n,), allow_empty=True)
    if n and float(norms.min()) < 0:
        raise ValueError(f"{name} must be non-negative (the norms of the rows of X)")
    idx = _row_norm_probes(n)
    if not idx.size:
        return norms
    if isinstance(X, np.ndarray) and X.dtype in FLOAT_DTYPES and X.flags.c_contiguous:
        # Compiled: a few small numpy operations cost more (docs/performance.rst,
        # "Small costs around the kernels").
        ok = _losses.check_probed_row_norms(X, norms, idx, _ROW_NORM_RTOL)
    else:  # a CSR X: its 16 probed rows densified
        with np.errstate(over="ignore"):
            rows = X[idx]
            rows = (rows.toarray() if is_sparse(rows) else rows).astype(np.float64)  # 16 rows at most
            scale = np.max(np.abs(rows), axis=1)
            safe = np.where(scale > 0, scale, 1.0)
            exact = scale * np.sqrt(np.sum((rows / safe[:, None]) ** 2, axis=1))
        good = ~np.isfinite(exact)  # a non-finite X is reported by the caller's own check
        with np.errstate(invalid="ignore"):
            good |= np.abs(norms[idx] - exact) <= _ROW_NORM_RTOL * np.abs(exact)
        ok = bool(good.all())
    if not ok:
        raise ValueError(f"{name} does not match the row norms of X (compute it with fasterm.losses.row_norms(X))")
    return norms


def _available_cpus() -> int:
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _check_threads(n_threads) -> int:
    if n_threads is None:
        return _available_cpus()
    return check_scalar(n_threads, "n_threads", low=1, integer=True)


def row_norms(X, *, n_threads=None) -> np.ndarray:
    """Euclidean norms of the rows of X, as float64 (accumulated in double).

    Compute them once and pass them as ``row_norms=`` to repeated ``grad_sum``
    calls on the same X (as an optimizer does): clipping and the data-norm
    row scale need them, and they cost one pass over X.  X may be a
    scipy.sparse CSR matrix (the norms of its stored values, never densified).
    """
    nt = _check_threads(n_threads)
    if is_sparse(X):
        X = check_csr(X, "X")
        out = np.empty(X.shape[0], dtype=np.float64)
        _row_norms_kernel(X, out, nt)
        return out
    X = check_array(X, "X", ndim=2, finite=False)
    out = np.empty(X.shape[0], dtype=np.float64)
    _losses.row_norms(X, out, nt)
    if not np.isfinite(out).all():  # a NaN/inf entry, or a norm above 1.8e308
        check_array(X, "X", ndim=2)
    return out


# The compiled kernels for a dense X (fasterm.erm._losses) or a checked CSR X
# (fasterm.erm._sparse, fasterm._validation.check_csr): one call site each for the solvers.
def _row_norms_kernel(X, out, nt):
    if is_sparse(X):
        _sparse.row_norms(X.data, X.indices, X.indptr, X.shape[1], out, nt)
    else:
        _losses.row_norms(X, out, nt)


def _grad_sum_kernel(kind, X, y, w, norms, dn, c, ybound, out, nt, weights=None):
    if is_sparse(X):
        _sparse.grad_sum(kind, X.data, X.indices, X.indptr, X.shape[1], y, w, norms, dn, c, ybound, out, nt,
                         weights)
    else:
        _losses.grad_sum(kind, X, y, w, norms, dn, c, ybound, out, nt, weights)


def _finite_constant(method):
    @functools.wraps(method)
    def checked(self, *args, **kw):
        try:
            value = method(self, *args, **kw)
        except OverflowError:  # float ** 2 raises instead of returning inf
            value = math.inf
        if value == 0.0 and method.__name__ == "smoothness" and self._kind == _losses.LINEAR:
            return 0.0  # exactly flat, not an underflow
        return check_derived(value, method.__name__, "data_norm, label_bound and radius")
    return checked


class _LinearModelLoss:
    """Shared machinery; subclasses set ``_kind`` and the two constants."""

    _kind: int
    _regression = False
    _uses_labels = True

    def __init__(self, *, l2: float = 0.0) -> None:
        self.l2 = check_scalar(l2, "l2", low=0.0)

    def __repr__(self) -> str:
        args = []
        if getattr(self, "label_bound", None) is not None:
            args.append(f"label_bound={self.label_bound!r}")
        if self.l2:
            args.append(f"l2={self.l2!r}")
        return f"{type(self).__name__}({', '.join(args)})"

    # -- validation ------------------------------------------------------------

    def _label_bound_for_kernel(self, label_bound) -> float:
        """The clipping bound Y for regression labels (inf: no clipping)."""
        if not self._regression:
            return math.inf
        if label_bound is None:
            label_bound = self.label_bound
        if label_bound is None:
            return math.inf
        return check_positive(label_bound, "label_bound", allow_inf=True)

    def _prepare(self, w, X, y, *, clip=None, data_norm=None, row_norms=None, label_bound=None,
                 n_threads=None, check_X_finite=False, kernel_norms=False, accept_sparse=False,
                 checked=False):
        # X's finiteness is checked up front only on request: a check is a full
        # extra pass over X, as long as the kernel itself.  The kernels' outputs
        # are non-finite whenever X holds a NaN or an infinity (see
        # _check_finite_output), so callers verify it afterwards, for free.
        # kernel_norms: the kernel computes missing row norms in its own pass.
        # accept_sparse: a CSR X (its values are always checked: they are small).
        # checked: the caller has run check_X_y on X and y (or check_csr on X) and
        # made w in X's dtype, so the array checks are not repeated (a small fit
        # pays them per call, not per row); the scalars are still checked.
        if checked:
            pass
        elif accept_sparse and is_sparse(X):
            X = check_csr(X, "X")
        else:
            X = check_array(X, "X", ndim=2, finite=check_X_finite)
        n, d = X.shape
        if y is None:
            if self._uses_labels:
                raise ValueError(f"y is required for {type(self).__name__}")
        elif not checked:
            y = labels_as(check_array(y, "y", ndim=1), X.dtype)
            if y.shape[0] != n:
                raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
            if self._uses_labels and not self._regression:
                check_class_labels(y)
        if not checked:
            w = check_array(w, "w", ndim=1, dtype=X.dtype, shape=(d,))
        c = 0.0
        if clip is not None:
            c = check_positive(clip, "clip", allow_inf=True)
            c = 0.0 if math.isinf(c) else c
        dn = 0.0
        if data_norm is not None:
            dn = check_positive(data_norm, "data_norm", allow_inf=True)
            dn = 0.0 if math.isinf(dn) else dn
        ybound = self._label_bound_for_kernel(label_bound)
        nt = _check_threads(n_threads)
        norms = None
        if row_norms is not None:
            norms = check_row_norms(row_norms, X)
        elif (c > 0 or dn > 0) and not kernel_norms:
            norms = np.empty(n, dtype=np.float64)
            _row_norms_kernel(X, norms, nt)
        return w, X, y, c, dn, ybound, norms, nt

    @staticmethod
    def _check_finite_output(result, X):
        """Raise the ValueError of a non-finite X, if that is why ``result`` is not finite.

        With w and y finite (checked up front), a NaN or an infinity in x_ij
        reaches the gradient sum's entry j as c_i · x_ij, which is NaN or ±inf
        whatever the coefficient c_i (0 · inf is NaN), and a sum with such a
        term is not finite.  So a finite gradient sum proves X finite, and only
        a non-finite one (X bad, or a genuine overflow on huge finite data)
        costs the full check.  (The value needs the kernel's count of
        non-finite margins instead: φ can be finite at an infinite margin.)
        """
        if not np.isfinite(result).all() and not is_sparse(X):  # a CSR X's values were checked up front
            check_array(X, "X", ndim=2)

    # -- objective and gradients -----------------------------------------------

    def value(self, w, X, y=None, *, data_norm=None, row_norms=None, label_bound=None,
              n_threads=None) -> float:
        """The objective (1/n) Σ_i ℓ(w; x_i, y_i) + l2/2 · ‖w‖².

        Rows longer than ``data_norm`` are scaled to it and labels are mapped or
        clipped as the module docstring says.  ``row_norms``: cached
        ``row_norms(X)``, used with ``data_norm``.  ``label_bound`` defaults to
        the loss's own.
        """
        w, X, y, _, dn, ybound, norms, nt = self._prepare(
            w, X, y, data_norm=data_norm, row_norms=row_norms, label_bound=label_bound,
            n_threads=n_threads)
        total, nonfinite = _losses.value_sum(self._kind, X, y, w, norms, dn, ybound, nt)
        if nonfinite:  # X holds a NaN/inf, or huge values overflowed the margins
            check_array(X, "X", ndim=2)
        return total / X.shape[0] + self.reg_value(w)

    def grad(self, w, X, y=None, *, clip=None, data_norm=None, row_norms=None, label_bound=None,
             n_threads=None) -> np.ndarray:
        """Per-example gradients ∇_w ℓ(w; x_i, y_i), an (n, d) array of X's dtype.

        Row i is φ'(z_i, y_i) · s_i x_i with z_i = s_i ⟨w, x_i⟩, s_i the
        data-norm row scale (1 without ``data_norm``), then clipped to norm
        ``clip`` if given.  The regularizer is not included (see ``reg_grad``).
        Builds the n×d matrix: use ``grad_sum`` when only the sum is needed.
        """
        w, X, y, c, dn, ybound, norms, nt = self._prepare(
            w, X, y, clip=clip, data_norm=data_norm, row_norms=row_norms,
            label_bound=label_bound, n_threads=n_threads, check_X_finite=True, kernel_norms=True)
        G = np.empty_like(X)
        _losses.grad_matrix(self._kind, X, y, w, norms, dn, c, ybound, G, nt)
        return G

    def grad_sum(self, w, X, y=None, clip=None, *, data_norm=None, row_norms=None,
                 label_bound=None, out=None, n_threads=None) -> np.ndarray:
        """Σ_i of the per-example gradients of ℓ (``grad(...)`` summed over rows).

        ``clip`` c: each per-example gradient g_i is scaled by min(1, c/‖g_i‖)
        before summing (c/‖g_i‖ a hair below: module docstring), so one example
        moves the exact sum of the gradients as computed by at most 2c in L2 norm
        (replace-one); the rounding of the float sum adds at most θ Σ‖g_i‖ on each
        side, θ per kernel and dtype in docs/guarantees.rst.  ``data_norm`` X: rows longer than X are scaled to it
        first.  Both come for free: ‖g_i‖ = |φ'(z_i, y_i)| · s_i ‖x_i‖, from the
        row norms (``row_norms``; if not given, the kernel computes them from
        the same loads as the margins, in the same pass, with the same bits —
        cached ones save that arithmetic, not a pass).  Caller-supplied norms are
        spot-checked on 16 evenly spaced rows (norms of another matrix raise
        ``ValueError``) but otherwise trusted: the clip and data-norm
        guarantees hold only if they are the true row norms of X (as
        ``row_norms(X)`` returns; ``fasterm.noisy_pgd`` always computes them
        itself).

        The regularizer's gradient is *not* included: add ``n * reg_grad(w)``
        for the gradient of n · L, or divide by n and add ``reg_grad(w)`` for ∇L.

        One pass over X in row blocks that stay in L1 between their dot
        products (and norms) and their accumulation; the n×d matrix is never
        formed.  Returns ``out`` (shape (d,), X's dtype) if given.  X may be
        a scipy.sparse CSR matrix: the compiled CSR kernel reads its stored
        values only, with the same per-row calculus (the sums over a row's
        values run in another order, in double: equal to the dense result
        up to rounding).
        """
        w, X, y, c, dn, ybound, norms, nt = self._prepare(
            w, X, y, clip=clip, data_norm=data_norm, row_norms=row_norms,
            label_bound=label_bound, n_threads=n_threads, kernel_norms=True, accept_sparse=True)
        if out is None:
            out = np.empty(X.shape[1], dtype=X.dtype)
        else:
            out = check_out(out, "out", (X.shape[1],), X.dtype)
        _grad_sum_kernel(self._kind, X, y, w, norms, dn, c, ybound, out, nt)
        self._check_finite_output(out, X)
        return out

    def reg_value(self, w) -> float:
        """Λ(w) = l2/2 · ‖w‖²."""
        if not self.l2:
            return 0.0
        w = check_array(w, "w", ndim=1)
        return 0.5 * self.l2 * float(np.dot(w, w))

    def reg_grad(self, w) -> np.ndarray:
        """∇Λ(w) = l2 · w (in w's floating dtype)."""
        w = check_array(w, "w", ndim=1)
        return self.l2 * w

    # -- constants ---------------------------------------------------------------

    def __init_subclass__(cls, **kw):
        # Every constant is a product of the declared bounds: absurd bounds
        # (1e308) overflow it, and the error then names the bounds.
        super().__init_subclass__(**kw)
        for name in ("lipschitz", "sensitivity", "smoothness"):
            if name in cls.__dict__:
                setattr(cls, name, _finite_constant(cls.__dict__[name]))

    @staticmethod
    def _bounds(data_norm, radius, *, need_radius=True):
        X = check_positive(data_norm, "data_norm")
        if radius is None:
            if need_radius:
                raise ValueError("radius must be given (R = max over the feasible set of ‖w‖₂)")
            return X, None
        return X, check_positive(radius, "radius")

    def _label_bound_for_constant(self, label_bound) -> float:
        if label_bound is None:
            label_bound = self.label_bound
        if label_bound is None:
            raise ValueError(
                f"label_bound must be given for {type(self).__name__} "
                "(declared |y| <= Y; pass it here or to the constructor)")
        return check_positive(label_bound, "label_bound")


class Logistic(_LinearModelLoss):
    """Logistic loss ℓ(w; x, y) = log(1 + exp(−y ⟨w, x⟩)), y ∈ {−1, +1}.

    Computed without overflow for any margin: the value as
    log1p(exp(−|m|)) + max(−m, 0) and the derivative −y·sigmoid(−m) through
    exp(−|m|) ≤ 1, m = y z.  ``l2``: weight of Λ(w) = l2/2 · ‖w‖².
    """

    _kind = _losses.LOGISTIC
    label_bound = None

    def lipschitz(self, data_norm, label_bound=None, *, radius=None) -> float:
        """G = X: ‖∇_w ℓ(w; x, y)‖ ≤ data_norm for every w.

        Proof: ∇_w ℓ = −y σ(−y z) x with σ the sigmoid, |y| = 1 and 0 < σ < 1,
        so ‖∇_w ℓ‖ < ‖x‖ ≤ X.  Tight: at margin y z = −RX the norm is
        X σ(RX), which tends to X as RX grows (≥ 0.99 X once RX ≥ 4.6), so no
        constant below X holds for every radius.  (For a fixed radius the exact
        supremum is X σ(RX); fasterm uses G = X, independent of R.)
        ``label_bound`` and ``radius`` are accepted for a uniform signature and
        not used.
        """
        X, _ = self._bounds(data_norm, radius, need_radius=False)
        return X

    def sensitivity(self, data_norm, label_bound=None, *, radius) -> float:
        """Δ = R·X: sup |ℓ(w; x, y) − ℓ(w; x', y')| over ‖w‖ ≤ R, ‖x‖, ‖x'‖ ≤ X.

        Proof: m = y⟨w, x⟩ ∈ [−RX, RX] by Cauchy–Schwarz and φ decreases in m,
        so ℓ ∈ [log(1 + e^{−RX}), log(1 + e^{RX})], and
        log(1 + e^{a}) − log(1 + e^{−a}) = a.  Tight (attained): w = R u,
        x = X u, x' = −X u, y = y' = 1 for a unit vector u.
        """
        X, R = self._bounds(data_norm, radius)
        return R * X

    def smoothness(self, data_norm, label_bound=None, *, radius=None) -> float:
        """β = X²/4: ∇_w ℓ is β-Lipschitz in w for every ‖x‖ ≤ X.

        Proof: ∇²_w ℓ = σ(m)(1 − σ(m))·x xᵀ with m = y⟨w, x⟩, and
        σ(1 − σ) ≤ 1/4, so the Hessian's norm is ≤ ‖x‖²/4 ≤ X²/4.  Tight
        (attained): at m = 0 the Hessian is x xᵀ/4, of norm X²/4 for ‖x‖ = X.
        The same β holds with per-example gradient clipping (a clamped
        derivative is as Lipschitz as the derivative).
        """
        X, _ = self._bounds(data_norm, radius, need_radius=False)
        return X * X / 4.0


class Hinge(_LinearModelLoss):
    """Hinge loss ℓ(w; x, y) = max(0, 1 − y ⟨w, x⟩), y ∈ {−1, +1}.

    Subgradient −y x where y z < 1 and 0 where y z ≥ 1 (0 at margin exactly 1).
    ``l2``: weight of Λ(w) = l2/2 · ‖w‖².
    """

    _kind = _losses.HINGE
    label_bound = None

    def lipschitz(self, data_norm, label_bound=None, *, radius=None) -> float:
        """G = X.

        Proof: the subgradient is −y x or 0 with |y| = 1, so its norm is at most
        ‖x‖ ≤ X.  Tight (attained): any w, x with ‖x‖ = X and y⟨w, x⟩ < 1 (e.g.
        w = 0).  ``label_bound`` and ``radius`` are not used.
        """
        X, _ = self._bounds(data_norm, radius, need_radius=False)
        return X

    def sensitivity(self, data_norm, label_bound=None, *, radius) -> float:
        """Δ = min(1 + RX, 2RX).

        Proof: m = y⟨w, x⟩ ∈ [−RX, RX] and φ = (1 − m)₊ decreases in m, so
        ℓ ∈ [(1 − RX)₊, 1 + RX] and Δ = 1 + RX − (1 − RX)₊ = min(1 + RX, 2RX).
        Tight (attained): w = R u, x = −X u, x' = X u, y = y' = 1.
        """
        X, R = self._bounds(data_norm, radius)
        return min(1.0 + R * X, 2.0 * R * X)


class Squared(_LinearModelLoss):
    """Squared loss ℓ(w; x, y) = (y − ⟨w, x⟩)², |y| ≤ Y.

    ``label_bound`` Y (optional here, required by the constants): labels are
    clipped to [−Y, Y] by every kernel.  ``l2``: weight of Λ(w) = l2/2 · ‖w‖².
    """

    _kind = _losses.SQUARED
    _regression = True

    def __init__(self, *, label_bound: float | None = None, l2: float = 0.0) -> None:
        super().__init__(l2=l2)
        self.label_bound = None if label_bound is None else check_positive(label_bound, "label_bound")

    def lipschitz(self, data_norm, label_bound=None, *, radius) -> float:
        """G = 2(Y + RX)·X.

        Proof: ∇_w ℓ = 2(z − y) x with |z| ≤ RX (Cauchy–Schwarz) and |y| ≤ Y, so
        ‖∇_w ℓ‖ ≤ 2(RX + Y)X.  Tight (attained): w = R u, x = X u, y = −Y.
        ``label_bound`` defaults to the loss's own.
        """
        X, R = self._bounds(data_norm, radius)
        Y = self._label_bound_for_constant(label_bound)
        return 2.0 * (Y + R * X) * X

    def sensitivity(self, data_norm, label_bound=None, *, radius) -> float:
        """Δ = (Y + RX)².

        Proof: |y − z| ≤ Y + RX gives ℓ ∈ [0, (Y + RX)²].  Tight (attained):
        ℓ(w; X u, −Y) = (Y + RX)² for w = R u, and ℓ(w; 0, 0) = 0.
        """
        X, R = self._bounds(data_norm, radius)
        Y = self._label_bound_for_constant(label_bound)
        return (Y + R * X) ** 2

    def smoothness(self, data_norm, label_bound=None, *, radius=None) -> float:
        """β = 2X²: ∇²_w ℓ = 2 x xᵀ, of norm 2‖x‖² ≤ 2X² (attained at ‖x‖ = X).

        Independent of the labels and of w; per-example clipping keeps it (a
        clamped derivative is as Lipschitz as the derivative).
        """
        X, _ = self._bounds(data_norm, radius, need_radius=False)
        return 2.0 * X * X


class Absolute(_LinearModelLoss):
    """Absolute loss ℓ(w; x, y) = |y − ⟨w, x⟩|, |y| ≤ Y.

    Subgradient sign(z − y) x with sign(0) = 0.  ``label_bound`` Y: labels are
    clipped to [−Y, Y] by every kernel.  ``l2``: weight of Λ(w) = l2/2 · ‖w‖².
    """

    _kind = _losses.ABSOLUTE
    _regression = True

    def __init__(self, *, label_bound: float | None = None, l2: float = 0.0) -> None:
        super().__init__(l2=l2)
        self.label_bound = None if label_bound is None else check_positive(label_bound, "label_bound")

    def lipschitz(self, data_norm, label_bound=None, *, radius=None) -> float:
        """G = X.

        Proof: the subgradient is sign(z − y) x, of norm at most ‖x‖ ≤ X.  Tight
        (attained): ‖x‖ = X and z ≠ y.  ``label_bound`` and ``radius`` are not
        used.
        """
        X, _ = self._bounds(data_norm, radius, need_radius=False)
        return X

    def sensitivity(self, data_norm, label_bound=None, *, radius) -> float:
        """Δ = Y + RX.

        Proof: |y − z| ≤ Y + RX gives ℓ ∈ [0, Y + RX].  Tight (attained):
        ℓ(R u; X u, −Y) = Y + RX and ℓ(w; 0, 0) = 0.
        """
        X, R = self._bounds(data_norm, radius)
        Y = self._label_bound_for_constant(label_bound)
        return Y + R * X


class Linear(_LinearModelLoss):
    """Linear loss ℓ(w; x) = ⟨w, x⟩ (labels, if given, are ignored).

    Two geometries, with separate, explicit constants:

    * L2 (``lipschitz``/``sensitivity``): ‖x‖₂ ≤ X, ‖w‖₂ ≤ R.
    * simplex (``lipschitz_simplex``/``sensitivity_simplex``):
      w in the simplex {w ≥ 0, Σ w = s}, x ∈ [−B, B]^d.  The kernels' row scale
      is Euclidean; data for this geometry should be clipped coordinate-wise,
      ``np.clip(X, -B, B)``, by the caller.

    ``l2``: weight of Λ(w) = l2/2 · ‖w‖².
    """

    _kind = _losses.LINEAR
    _uses_labels = False
    label_bound = None

    def lipschitz(self, data_norm, label_bound=None, *, radius=None) -> float:
        """G = X: ∇_w ℓ = x, of norm ≤ X; attained by any ‖x‖ = X."""
        X, _ = self._bounds(data_norm, radius, need_radius=False)
        return X

    def sensitivity(self, data_norm, label_bound=None, *, radius) -> float:
        """Δ = 2RX: ⟨w, x⟩ ∈ [−RX, RX]; attained by w = R u, x = X u, x' = −X u."""
        X, R = self._bounds(data_norm, radius)
        return 2.0 * R * X

    def smoothness(self, data_norm, label_bound=None, *, radius=None) -> float:
        """β = 0: the gradient x does not depend on w."""
        self._bounds(data_norm, radius, need_radius=False)
        return 0.0

    @staticmethod
    def lipschitz_simplex(dim, coord_bound=1.0) -> float:
        """G = √d·B for x ∈ [−B, B]^d (√d for B = 1).

        Proof: ∇_w ℓ = x and ‖x‖₂ ≤ √d ‖x‖∞ ≤ √d B.  Tight (attained): x = B·1.
        """
        d = check_scalar(dim, "dim", low=1, integer=True)
        B = check_positive(coord_bound, "coord_bound")
        return math.sqrt(d) * B

    @staticmethod
    def sensitivity_simplex(coord_bound=1.0, total=1.0) -> float:
        """Δ = 2·s·B on the simplex {w ≥ 0, Σ w = s}, x ∈ [−B, B]^d (2 for s = B = 1).

        Proof: |⟨w, x⟩| ≤ ‖w‖₁ ‖x‖∞ = s B (Hölder).  Tight (attained): any w in
        the simplex with x = B·1, x' = −B·1.
        """
        B = check_positive(coord_bound, "coord_bound")
        s = check_positive(total, "total")
        return 2.0 * s * B
