"""Feasible sets C ⊆ R^dim of private ERM and their Euclidean projections.

Every class here is a closed convex set with a cheap Euclidean projection

    Π_C(v) = argmin_{w ∈ C} ‖w − v‖₂,

computed by the compiled kernels of ``fasterm.erm._projections`` for a vector of
shape ``(dim,)`` or for each row of a batch ``(m, dim)``, in float32 or
float64 (other real dtypes are converted to float64).

Besides ``project``, each set exposes the public quantities the private
algorithms are calibrated with: ``diameter`` (the L2 diameter, the R_C of the
PGD step size), ``norm_bound`` (max_{w ∈ C} ‖w‖₂, the R that enters the loss
constants, e.g. |⟨w, x⟩| ≤ norm_bound·X), ``radius`` (the set's own radius
parameter: the ball's R, the L1 ball's r; for the box and the simplex, which
have none, the norm bound), ``center`` (a data-independent point of
C to start from), ``contains`` and ``chord`` (the intersection of C with a
line, for hit-and-run).  All of them depend only on the set's parameters,
never on data.
"""

from __future__ import annotations

import abc
import math

import numpy as np

import fasterm.erm._losses as _losses  # compiled (src/fasterm/erm/_losses.pyx)
import fasterm.erm._projections as _projections  # compiled (src/fasterm/erm/_projections.pyx)
from .._validation import check_array, check_out, check_positive, check_scalar

__all__ = ["Constraint", "L2Ball", "Box", "Simplex", "L1Ball"]

_EPS64 = float(np.finfo(np.float64).eps)


def _norm2(x: np.ndarray) -> float:
    """‖x‖₂ without overflow or underflow of the squares."""
    m = float(np.max(np.abs(x))) if x.size else 0.0
    if m == 0.0:
        return 0.0
    return m * math.sqrt(float(np.dot(x / m, x / m)))


def _in_dtype(a: np.ndarray, dtype: np.dtype, name: str) -> np.ndarray:
    """A set parameter rounded to the input's dtype, for the kernels."""
    if a.dtype == dtype:
        return a
    with np.errstate(over="ignore"):
        out = a.astype(dtype)
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"{name} does not fit in {dtype}; project {np.dtype(np.float64)} input instead"
        )
    return out


def _short(a: np.ndarray) -> str:
    return np.array2string(np.asarray(a), separator=", ", threshold=6, edgeitems=2)


class Constraint(abc.ABC):
    """A closed convex set C ⊆ R^dim with a Euclidean projection.

    Subclasses provide the projection kernel, the membership test, the chord
    and the geometric constants; this base class does the validation shared
    by all of them.
    """

    def __init__(self, dim):
        self._dim = check_scalar(dim, "dim", low=1, integer=True)

    # ---- public interface ----------------------------------------------

    @property
    def dim(self) -> int:
        """Dimension d of the ambient space R^d."""
        return self._dim

    @property
    @abc.abstractmethod
    def diameter(self) -> float:
        """L2 diameter max_{w, w' ∈ C} ‖w − w'‖₂."""

    @property
    def radius(self) -> float:
        """The set's radius parameter; for sets without one, ``norm_bound``."""
        return self.norm_bound

    @property
    @abc.abstractmethod
    def norm_bound(self) -> float:
        """max_{w ∈ C} ‖w‖₂: the norm bound R of C used by the loss constants."""

    @property
    def center(self) -> np.ndarray:
        """A point of C that depends only on C's parameters (a fresh float64 copy)."""
        return self._center.copy()

    def project(self, v, out=None) -> np.ndarray:
        """Euclidean projection Π_C(v) of a vector ``(dim,)`` or of each row of ``(m, dim)``.

        float32 and float64 input keep their dtype; other real dtypes are
        converted to float64.  ``out`` (same shape and result dtype,
        C-contiguous) receives the result and may be ``v`` itself for an
        in-place projection; ``v`` is never modified otherwise.  Returns
        ``out`` (a new array when it is None).
        """
        v = self._check_points(v, "v", finite=True)
        if out is None:
            out = np.empty_like(v)
        else:
            out = check_out(out, "out", v.shape, v.dtype)
            if out is not v and np.may_share_memory(out, v):
                # Same start, shape and layout is an in-place projection; any
                # other overlap would let the kernel read what it just wrote.
                if out.__array_interface__["data"][0] != v.__array_interface__["data"][0]:
                    v = v.copy()
        self._project(v, out)
        return out

    def contains(self, v: np.typing.ArrayLike, atol: float | None = None) -> bool | np.ndarray:
        """Whether v (a vector, or each row of a batch) lies in C up to ``atol``.

        ``atol`` is an absolute slack on the set's defining inequality (see
        the class docstring).  The default, ``4·s·(ε + dim·ε₆₄)`` with ε the
        machine epsilon of v's dtype and s the set's scale (‖center‖₂ + R for
        a ball, max(|low|, |high|) for a box, ``total`` for the simplex, the
        radius for the L1 ball), covers the rounding error the projections
        leave.  Returns a bool for a vector, a boolean array for a batch; NaN
        or infinite entries are never inside.
        """
        v = self._check_points(v, "v", finite=False)
        if atol is None:
            eps = float(np.finfo(v.dtype).eps)
            atol = 4.0 * self._scale * (eps + self._dim * _EPS64)
        else:
            atol = check_scalar(atol, "atol", low=0.0)
        rows = v.reshape(-1, self._dim).astype(np.float64, copy=False)
        with np.errstate(invalid="ignore", over="ignore"):
            inside = np.isfinite(rows).all(axis=1) & self._contains(rows, atol)
        return bool(inside[0]) if v.ndim == 1 else inside

    def chord(self, w, u) -> tuple[float, float]:
        """(t_min, t_max) such that {w + t·u : t_min ≤ t ≤ t_max} = C ∩ {w + t·u : t ∈ R}.

        ``w`` and ``u`` are vectors of length dim, ``u`` nonzero; for
        hit-and-run w is the current point of C and u a random direction.
        Raises ``ValueError`` when the line misses C.
        """
        w = check_array(w, "w", ndim=1, dtype=np.float64, shape=(self._dim,))
        u = check_array(u, "u", ndim=1, dtype=np.float64, shape=(self._dim,))
        if not np.any(u):
            raise ValueError("u must be a nonzero direction")
        t_min, t_max = self._chord(w, u)
        if not t_min <= t_max:
            raise ValueError("the line {w + t u} does not meet the set")
        return float(t_min), float(t_max)

    # ---- helpers for subclasses ------------------------------------------

    def _check_points(self, v, name: str, *, finite: bool) -> np.ndarray:
        arr = check_array(v, name, ndim=(1, 2), allow_empty=True, finite=finite)
        if arr.shape[-1] != self._dim:
            raise ValueError(
                f"{name} has shape {arr.shape}; expected ({self._dim},) or (m, {self._dim})"
            )
        return arr

    @abc.abstractmethod
    def _project(self, v: np.ndarray, out: np.ndarray) -> None:
        """Subclass kernel (inputs already validated)."""

    def _loop_spec(self, dtype):
        """(code, scalar, a, b) describing the projection to the compiled PGD loop.

        Codes ``_losses.SET_*`` (src/cpp/fasterm/codes.hpp): L2 ball (radius,
        centre or None), box (low, high in ``dtype``), simplex (total), L1
        ball (radius).  The loop runs the same kernels as :meth:`project`.
        None (the default for a set defined elsewhere) makes the optimisers
        call :meth:`_project` from Python at every step instead.
        """
        return None

    def _chain_spec(self):
        """The set as hit-and-run's kernel reads it (:mod:`fasterm.erm.expmech`), or None.

        A dict with ``set_kind`` (a ``_losses.SET_*`` code: L2 ball, box or
        simplex), ``center``, ``radius`` (ball), ``low``, ``high`` (box),
        ``total`` (simplex) and ``affine_dim``, the dimension of the set's
        affine hull (the chain's mixing and the exact 0/1-dimensional cases
        depend on it).  None: the compiled chain has no chords for this set.
        """
        return None

    @abc.abstractmethod
    def _contains(self, rows: np.ndarray, atol: float) -> np.ndarray:
        """Subclass kernel (inputs already validated)."""

    @abc.abstractmethod
    def _chord(self, w: np.ndarray, u: np.ndarray) -> tuple[float, float]:
        """Subclass kernel (inputs already validated)."""


class L2Ball(Constraint):
    """The Euclidean ball {w : ‖w − center‖₂ ≤ radius} in R^dim.

    Projection by radial scaling, Π(v) = c + (v − c)·min(1, R/‖v − c‖₂).
    ``radius`` must be finite and > 0; ``center`` (default 0) is a vector of
    length dim.

    ``radius`` is the ball's radius R; ``norm_bound`` = max_{w ∈ C} ‖w‖₂ =
    ‖center‖₂ + R is the bound the loss constants use (equal to R when the
    ball is centred at 0).
    ``contains(v, atol)`` tests ‖v − c‖₂ ≤ R + atol.
    """

    def __init__(self, radius: float, dim: int, center: np.typing.ArrayLike | None = None) -> None:
        super().__init__(dim)
        self._R = check_positive(radius, "radius")
        self._has_center = center is not None
        if center is None:
            self._center = np.zeros(self._dim)
        else:
            self._center = check_array(
                center, "center", ndim=1, dtype=np.float64, shape=(self._dim,)
            ).copy()
        self._kernel_center = {}  # the centre in each input dtype, made on first use
        self._scale = self._R + (_norm2(self._center) if self._has_center else 0.0)

    @property
    def radius(self) -> float:
        """The ball's radius R."""
        return self._R

    @property
    def diameter(self) -> float:
        return 2.0 * self._R

    @property
    def norm_bound(self) -> float:
        """max_{w ∈ C} ‖w‖₂ = ‖center‖₂ + R (attained at c + R·c/‖c‖)."""
        if not self._has_center:
            return self._R  # 0 + R, without a pass over the zero centre
        return _norm2(self._center) + self._R

    def _project(self, v, out):
        c = None
        if self._has_center:
            c = self._kernel_center.get(v.dtype)
            if c is None:
                c = self._kernel_center[v.dtype] = _in_dtype(self._center, v.dtype, "center")
        _projections.l2_ball(v, out, c, self._R)

    def _loop_spec(self, dtype):
        c = None
        if self._has_center:
            c = self._kernel_center.get(dtype)
            if c is None:
                c = self._kernel_center[dtype] = _in_dtype(self._center, dtype, "center")
        return _losses.SET_L2_BALL, self._R, c, None

    def _chain_spec(self):
        return dict(set_kind=_losses.SET_L2_BALL, center=self.center, radius=self.radius, low=None,
                    high=None, total=1.0, affine_dim=self._dim)

    def _contains(self, rows, atol):
        d = rows - self._center
        m = np.max(np.abs(d), axis=1)
        safe = np.where(m > 0, m, 1.0)
        norms = m * np.sqrt(np.einsum("ij,ij->i", d / safe[:, None], d / safe[:, None]))
        return norms <= self._R + atol

    def _chord(self, w, u):
        # ‖p + t u‖² = R² with p = w − c: a t² + 2 b t + q = 0.  The root of
        # larger magnitude first, the other from the product of the roots,
        # so that neither suffers cancellation.
        s = float(np.max(np.abs(u)))
        u = u / s  # keeps a = ‖u‖² in [1, dim]; t scales back by 1/s
        p = w - self._center
        a = float(u @ u)
        b = float(u @ p)
        pn = _norm2(p)
        q = (pn - self._R) * (pn + self._R)
        disc = b * b - a * q
        if disc < 0.0:
            return math.inf, -math.inf
        h = -(b + math.copysign(math.sqrt(disc), b))
        if h == 0.0:
            return 0.0, 0.0
        r1, r2 = h / a, q / h
        return min(r1, r2) / s, max(r1, r2) / s

    def __repr__(self):
        c = f", center={_short(self._center)}" if self._has_center else ""
        return f"L2Ball(radius={self._R!r}, dim={self._dim}{c})"


class Box(Constraint):
    """The box {w : low ≤ w ≤ high} (coordinatewise) in R^dim.

    ``low`` and ``high`` are finite scalars (the cube [low, high]^dim) or
    vectors of length dim, with low ≤ high.  Projection by clipping,
    Π(v)_i = min(max(v_i, low_i), high_i).  ``contains(v, atol)`` tests
    low − atol ≤ v ≤ high + atol.
    """

    def __init__(self, low: np.typing.ArrayLike, high: np.typing.ArrayLike, dim: int) -> None:
        super().__init__(dim)
        self._scalar = np.ndim(low) == 0 and np.ndim(high) == 0
        lo = self._bound(low, "low")
        hi = self._bound(high, "high")
        bad = np.flatnonzero(lo > hi)
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"low must be <= high, got low[{i}]={lo[i]!r} > high[{i}]={hi[i]!r}")
        self._low, self._high = lo, hi
        self._center = 0.5 * lo + 0.5 * hi  # (lo + hi)/2 could overflow
        self._scale = float(max(np.max(np.abs(lo)), np.max(np.abs(hi))))
        self._kernel_bounds = {}  # (low, high) in each input dtype, made on first use

    def _bound(self, b, name):
        if np.ndim(b) == 0:
            return np.full(self._dim, check_scalar(b, name))
        return check_array(b, name, ndim=1, dtype=np.float64, shape=(self._dim,)).copy()

    @property
    def low(self) -> np.ndarray:
        return self._low.copy()

    @property
    def high(self) -> np.ndarray:
        return self._high.copy()

    @property
    def diameter(self) -> float:
        """‖high − low‖₂, the distance between opposite corners."""
        return _norm2(0.5 * self._high - 0.5 * self._low) * 2.0

    @property
    def norm_bound(self) -> float:
        """‖w*‖₂ for the corner w*_i = argmax(|low_i|, |high_i|) farthest from 0."""
        return _norm2(np.maximum(np.abs(self._low), np.abs(self._high)))

    def _project(self, v, out):
        bounds = self._kernel_bounds.get(v.dtype)
        if bounds is None:
            bounds = self._kernel_bounds[v.dtype] = (
                _in_dtype(self._low, v.dtype, "low"),
                _in_dtype(self._high, v.dtype, "high"),
            )
        if self._scalar:
            _projections.box(v, out, float(bounds[0][0]), float(bounds[1][0]))
        else:
            _projections.box(v, out, *bounds)

    def _loop_spec(self, dtype):
        # Clamping to per-coordinate bounds equal to the cube's gives the same numbers.
        bounds = self._kernel_bounds.get(dtype)
        if bounds is None:
            bounds = self._kernel_bounds[dtype] = (
                _in_dtype(self._low, dtype, "low"), _in_dtype(self._high, dtype, "high"))
        return _losses.SET_BOX, 0.0, bounds[0], bounds[1]

    def _chain_spec(self):
        low, high = self.low, self.high
        return dict(set_kind=_losses.SET_BOX, center=None, radius=1.0, low=low, high=high, total=1.0,
                    affine_dim=int(np.count_nonzero(low < high)))

    def _contains(self, rows, atol):
        return ((rows >= self._low - atol) & (rows <= self._high + atol)).all(axis=1)

    def _chord(self, w, u):
        # Each coordinate confines t to an interval; the chord is their
        # intersection (2·dim faces).  u_i = 0 leaves t free if w_i is inside.
        moving = u != 0
        still = ~moving
        if np.any((w[still] < self._low[still]) | (w[still] > self._high[still])):
            return math.inf, -math.inf
        um = u[moving]
        t1 = (self._low[moving] - w[moving]) / um
        t2 = (self._high[moving] - w[moving]) / um
        return float(np.max(np.minimum(t1, t2))), float(np.min(np.maximum(t1, t2)))

    def __repr__(self):
        if self._scalar:
            return f"Box(low={float(self._low[0])!r}, high={float(self._high[0])!r}, dim={self._dim})"
        return f"Box(low={_short(self._low)}, high={_short(self._high)}, dim={self._dim})"


class Simplex(Constraint):
    """The scaled probability simplex {w : w ≥ 0, Σ w_i = total} in R^dim.

    Projection Π(v)_i = max(v_i − τ, 0) with the threshold τ found by Condat's
    algorithm: L. Condat, "Fast projection onto the simplex and the l1 ball",
    Mathematical Programming 158 (2016) 575–585 — expected O(dim) time, no
    sort.  τ is computed in double precision, shifted by max v so that the
    output keeps its accuracy even when |v| ≫ total.  ``total`` must be
    finite and > 0.  ``contains(v, atol)`` tests v ≥ −atol and
    |Σv − total| ≤ atol.

    ``chord(w, u)`` needs u in the direction space {Σ u_i = 0} of the
    simplex and w on its hyperplane {Σ w_i = total} (both to rounding).
    """

    def __init__(self, dim: int, total: float = 1.0) -> None:
        super().__init__(dim)
        self._total = check_positive(total, "total")
        self._center = np.full(self._dim, self._total / self._dim)
        self._scale = self._total

    @property
    def total(self) -> float:
        return self._total

    @property
    def diameter(self) -> float:
        """total·√2 (between two vertices) for dim ≥ 2; 0 for dim 1 (a single point)."""
        return self._total * math.sqrt(2.0) if self._dim >= 2 else 0.0

    @property
    def norm_bound(self) -> float:
        """total: ‖w‖₂ ≤ ‖w‖₁ = total, attained at the vertices."""
        return self._total

    def _project(self, v, out):
        _projections.simplex(v, out, self._total)

    def _loop_spec(self, dtype):
        return _losses.SET_SIMPLEX, self._total, None, None

    def _chain_spec(self):
        return dict(set_kind=_losses.SET_SIMPLEX, center=None, radius=1.0, low=None, high=None,
                    total=self.total, affine_dim=self._dim - 1)

    def _contains(self, rows, atol):
        return (rows >= -atol).all(axis=1) & (np.abs(rows.sum(axis=1) - self._total) <= atol)

    def _chord(self, w, u):
        tol = 8.0 * self._dim * _EPS64
        if abs(float(u.sum())) > tol * float(np.abs(u).sum()):
            raise ValueError("u must satisfy sum(u) = 0 (a direction within the simplex's hyperplane)")
        if abs(float(w.sum()) - self._total) > tol * (self._total + float(np.abs(w).sum())):
            raise ValueError(f"w must satisfy sum(w) = total = {self._total}")
        # Faces w_i + t u_i >= 0, one per coordinate.
        pos, neg = u > 0, u < 0
        if np.any(w[~(pos | neg)] < 0):
            return math.inf, -math.inf
        t_min = float(np.max(-w[pos] / u[pos])) if pos.any() else -math.inf
        t_max = float(np.min(-w[neg] / u[neg])) if neg.any() else math.inf
        return t_min, t_max

    def __repr__(self):
        return f"Simplex(dim={self._dim}, total={self._total!r})"


class L1Ball(Constraint):
    """The L1 ball {w : ‖w‖₁ ≤ radius} in R^dim.

    Projection: v itself when ‖v‖₁ ≤ radius, otherwise
    Π(v)_i = sign(v_i)·max(|v_i| − τ, 0) where τ is the threshold of the
    projection of |v| onto the simplex of total ``radius`` (the reduction
    recalled in section 2 of Condat, Math. Programming 158, 2016; Duchi et
    al., ICML 2008), τ found by Condat's algorithm.  ``contains(v, atol)``
    tests ‖v‖₁ ≤ radius + atol.

    ``chord`` follows the convex piecewise-linear t ↦ ‖w + t u‖₁ through its
    sorted kinks t_i = −w_i/u_i (O(dim log dim)).
    """

    def __init__(self, radius: float, dim: int) -> None:
        super().__init__(dim)
        self._r = check_positive(radius, "radius")
        self._center = np.zeros(self._dim)
        self._scale = self._r

    @property
    def diameter(self) -> float:
        """2·radius (between the vertices ±radius·e_1)."""
        return 2.0 * self._r

    @property
    def radius(self) -> float:
        """The L1 radius r."""
        return self._r

    @property
    def norm_bound(self) -> float:
        """max ‖w‖₂ = r, attained at the vertices ±r·e_i."""
        return self._r

    def _project(self, v, out):
        _projections.l1_ball(v, out, self._r)

    def _loop_spec(self, dtype):
        return _losses.SET_L1_BALL, self._r, None, None

    def _contains(self, rows, atol):
        return np.abs(rows).sum(axis=1) <= self._r + atol

    def _chord(self, w, u):
        r = self._r
        moving = u != 0

        def f_at(t):
            return float(np.abs(w + t * u).sum())

        kinks = -w[moving] / u[moving]
        slopes = np.abs(u[moving])
        order = np.argsort(kinks, kind="stable")
        kinks, slopes = kinks[order], slopes[order]
        # f(k_j) = base + Σ_i a_i |k_j − k_i| from prefix sums; only used to
        # locate the segments where f crosses r, whose end values are then
        # recomputed exactly.
        base = float(np.abs(w[~moving]).sum())
        A, B = np.cumsum(slopes), np.cumsum(slopes * kinks)
        f = base + kinks * (2.0 * A - A[-1]) - (2.0 * B - B[-1])
        j_star = int(np.argmin(f))
        if f_at(kinks[j_star]) > r:
            return math.inf, -math.inf
        total_slope = float(A[-1])
        left = np.flatnonzero(f[:j_star] > r)
        right = np.flatnonzero(f[j_star + 1 :] > r)
        if left.size == 0:  # f = f(k_0) + S (k_0 − t) for t ≤ k_0
            t_min = kinks[0] - (r - f_at(kinks[0])) / total_slope
        else:
            j = int(left[-1])
            t_min = self._cross(kinks[j], kinks[j + 1], f_at(kinks[j]), f_at(kinks[j + 1]), r)
        if right.size == 0:
            t_max = kinks[-1] + (r - f_at(kinks[-1])) / total_slope
        else:
            j = j_star + 1 + int(right[0])
            t_max = self._cross(kinks[j - 1], kinks[j], f_at(kinks[j - 1]), f_at(kinks[j]), r)
        return float(t_min), float(t_max)

    @staticmethod
    def _cross(t0, t1, f0, f1, r):
        # f is linear on [t0, t1] and crosses the level r there.
        if f0 == f1:
            return t0
        return t0 + (r - f0) / (f1 - f0) * (t1 - t0)

    def __repr__(self):
        return f"L1Ball(radius={self._r!r}, dim={self._dim})"
