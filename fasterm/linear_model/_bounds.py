"""Per-feature bounds and the map of rows into the unit ball: one implementation.

Used by the estimators' ``bounds=`` parameter (:mod:`fasterm.linear_model`)
and by :class:`fasterm.preprocessing.BoundedScaler`, so that a pipeline and an
estimator with the same bounds see the same rows, bit for bit.  numpy only.
Why this map and this rule, and how much data the private ranges need:
docs/guarantees.rst ("Declared and private feature bounds") and
docs/getting_started.rst.

The map: for public bounds low_j < high_j of the d features,

    x_j ↦ (clip((x_j − low_j)/(high_j − low_j), 0, 1) − 1/2) / (√d/2),

so ‖x‖₂ ≤ 1 whatever the data; it is
:func:`fasterm.datasets.scale_to_unit_ball`, the same operations in the same
order (bit for bit on float64).  Per record and fixed before the data are
seen: mapped neighbours are neighbours, no privacy spent.  The output is a new
array of X's shape and dtype; X is never modified; sparse X is refused.

Private ranges (``bounds="private"``): ``PRIVATE_SHARE`` = 1/4 of ε and of δ
go to 2d private quartiles (q = 0.25, 0.75) by the rank mechanism
(:func:`fasterm.quantile`, exact sampling) on z = asinh(x/τ),
τ = ``PRIVATE_TAU``, over abs(x) ≤ ``PRIVATE_LIMIT`` (clipped); back-transformed,
sorted and widened by the interquartile range on each side (a width below
1e-9·max(1, abs(a), abs(b)) raised to it, post-processing).

Privacy: each quantile is the exponential mechanism with a score of
sensitivity 1 under replace-one (McSherry & Talwar 2007; Dwork & Roth 2014,
Thm 3.10), ε_q-DP and ε_q-bounded-range, hence ε_q²/8-zCDP (Cesar & Rogers
2021, Lemma 3.2); 2d of them compose to ρ = 2d·ε_q²/8 (Bun & Steinke 2016,
Lemma 2.3), (ε_r, δ_r)-DP by :func:`fasterm.accounting.zcdp_delta` (Canonne,
Kamath & Steinke 2020): ε_q is the largest with ρ ≤
:func:`fasterm.accounting.zcdp_rho` (ε_r, δ_r); for δ = 0, ε_q = ε_r/(2d).
The fit on the mapped rows makes the whole (ε_r + ε_fit, δ_r + δ_fit)-DP by
adaptive basic composition (Dwork & Roth 2014, Thm 3.16).  The released
ranges are private output (stored, used at predict time).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .. import accounting
from ..mechanisms import univariate
from .._validation import check_random_state

__all__ = ["PRIVATE_LIMIT", "PRIVATE_QUANTILES", "PRIVATE_SHARE", "PRIVATE_TAU", "map_rows", "private_budget",
           "private_ranges", "resolve"]

#: Share of the estimator's ε (and of its δ) spent on private ranges (``bounds="private"``).
PRIVATE_SHARE = 0.25
#: The two quantiles released per feature.
PRIVATE_QUANTILES = (0.25, 0.75)
#: The linear-core width τ of the transform z = asinh(x/τ).
PRIVATE_TAU = 1e-3
#: The public interval abs(x) ≤ this on which the quantiles are released.
PRIVATE_LIMIT = 1e9


def _pair(value, name):
    """(low, high) of one entry of a dict of bounds: two finite reals."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"{name} must be a pair (low, high) of numbers, got {value!r}")
    return value[0], value[1]


def _as_floats(value, name, d):
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold numbers: {exc}") from None
    if arr.ndim == 0:
        arr = np.full(d, float(arr))
    if arr.shape != (d,):
        raise ValueError(f"{name} must be a number or hold one number per feature ({d}), got shape {arr.shape}")
    return arr


def resolve(bounds, n_features, feature_names=None, name="bounds"):
    """Declared ``bounds`` as two float64 arrays (low, high) of length ``n_features``.

    ``bounds``: a pair (low, high) of scalars or per-feature sequences, or a
    dict {column name: (low, high)} naming every column of ``feature_names``
    (the DataFrame's columns) and no other.  Raises ValueError/TypeError naming
    ``name`` for anything else, a non-finite value or low ≥ high.
    """
    d = int(n_features)
    if isinstance(bounds, Mapping):
        if feature_names is None:
            raise ValueError(f"{name} given by column name (a dict) needs X with column names (a pandas "
                             "DataFrame); pass a pair (low, high) of per-feature arrays for an array X")
        names = [str(c) for c in feature_names]
        keys = {str(k): v for k, v in bounds.items()}
        missing = [c for c in names if c not in keys]
        if missing:
            raise ValueError(f"{name} has no (low, high) for column(s) {missing[:5]} of X")
        extra = sorted(set(keys) - set(names))
        if extra:
            raise ValueError(f"{name} names column(s) {extra[:5]} that X does not have")
        pairs = [_pair(keys[c], f"{name}[{c!r}]") for c in names]
        low = _as_floats([p[0] for p in pairs], name, d)
        high = _as_floats([p[1] for p in pairs], name, d)
    else:
        if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
            raise ValueError(f"{name} must be None, 'private', a pair (low, high) of numbers or per-feature "
                             f"arrays, or a dict {{column: (low, high)}}, got {bounds!r}"[:400])
        low = _as_floats(bounds[0], f"{name}[0] (low)", d)
        high = _as_floats(bounds[1], f"{name}[1] (high)", d)
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        raise ValueError(f"{name} must be finite")
    bad = np.flatnonzero(~(low < high))
    if bad.size:
        j = int(bad[0])
        where = f"column {feature_names[j]!r}" if feature_names is not None else f"feature {j}"
        raise ValueError(f"{name} must have low < high for every feature; {where} has ({low[j]}, {high[j]})")
    if not np.all(np.isfinite(high - low)):
        raise ValueError(f"{name}: a width high - low overflows")
    return low, high


def map_rows(X, low, high):
    """Rows of a dense float32/float64 ndarray X mapped into the unit ball (module docstring).

    One new C-contiguous array of X's shape and dtype; the arithmetic is in X's dtype.
    """
    dtype = X.dtype
    d = X.shape[1]
    low_t = low.astype(dtype)
    width = (high - low).astype(dtype)
    out = np.empty(X.shape, dtype=dtype)  # C order whatever X's layout (a DataFrame gives F order)
    np.subtract(X, low_t, out=out)
    np.divide(out, width, out=out)
    np.clip(out, 0.0, 1.0, out=out)
    out -= dtype.type(0.5)
    out /= dtype.type(math.sqrt(d) / 2.0)
    return out


def map_chunked(X, low, high):
    """:func:`map_rows` over the row chunks of a dask array (lazily)."""
    return X.map_blocks(map_rows, low, high, dtype=X.dtype)


def private_budget(epsilon, delta, n_features):
    """The public plan of ``bounds="private"``: ``(eps_ranges, delta_ranges, eps_quantile)``.

    ε_r = ``PRIVATE_SHARE``·ε, δ_r = ``PRIVATE_SHARE``·δ; ε_q is the ε of each
    of the 2d quantiles: √(4ρ/d) with ρ = zcdp_rho(ε_r, δ_r) for δ > 0 (2d
    mechanisms of ε_q²/8-zCDP each), ε_r/(2d) for δ = 0 (module docstring).
    """
    eps_r = PRIVATE_SHARE * float(epsilon)
    delta_r = PRIVATE_SHARE * float(delta)
    k = len(PRIVATE_QUANTILES) * int(n_features)
    if delta_r > 0.0:
        rho = accounting.zcdp_rho(eps_r, delta_r)
        eps_q = math.sqrt(8.0 * rho / k) * (1.0 - 1e-12)  # rounding never pushes k·ε_q²/8 above ρ
    else:
        eps_q = eps_r / k
    return eps_r, delta_r, eps_q


def _transform(x):
    return np.arcsinh(np.clip(x, -PRIVATE_LIMIT, PRIVATE_LIMIT) / PRIVATE_TAU)


def private_ranges(X, epsilon, delta, random_state=None):
    """Private per-feature ranges of the dense rows X: ``(low, high)`` (module docstring).

    Spends (ε_r, δ_r) of :func:`private_budget` (epsilon, delta, d); the
    caller reports it.  ``random_state``: a Generator (advanced) or a seed.
    """
    rng = check_random_state(random_state)
    d = X.shape[1]
    _, _, eps_q = private_budget(epsilon, delta, d)
    zmax = float(np.arcsinh(PRIVATE_LIMIT / PRIVATE_TAU))
    low = np.empty(d)
    high = np.empty(d)
    for j in range(d):
        z = _transform(np.asarray(X[:, j], dtype=np.float64))
        qs = sorted(univariate.quantile(z, q, (-zmax, zmax), eps_q, random_state=rng)
                    for q in PRIVATE_QUANTILES)
        a, b = (float(np.sinh(v) * PRIVATE_TAU) for v in qs)
        spread = b - a
        lo, hi = a - spread, b + spread
        floor = 1e-9 * max(1.0, abs(a), abs(b))
        if not hi - lo >= floor:
            mid = 0.5 * (a + b)
            lo, hi = mid - floor, mid + floor
        low[j], high[j] = lo, hi
    return low, high

