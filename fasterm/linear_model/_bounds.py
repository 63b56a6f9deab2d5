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

Private ranges (``bounds="private"``; the rule, how it was chosen and its
measurements: docs/guarantees.rst, "Declared and private feature bounds", and
``experiments/private_bounds.py``).  ``PRIVATE_SHARE`` = 1/2 of (ε, δ) goes to
the ranges.  Per feature, two private medians by the rank mechanism (exact
sampling, :func:`fasterm.quantile` with q = 1/2) on public monotone
transforms of the values clipped to ``PRIVATE_LIMIT``: the centre
m = τ·sinh(median of asinh(x/τ)) and the spread s = τ·sinh(median of
asinh(abs(x − m)/τ)) (the median absolute deviation about the released m),
τ = ``PRIVATE_TAU``; the range is m ± ``PRIVATE_WIDEN``·s.

Privacy: each median is the exponential mechanism with a score of sensitivity
1 under replace-one (McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10),
ε_q-DP and ε_q-bounded-range, hence ε_q²/8-zCDP (Cesar & Rogers 2021, Lemma
3.2); the 2d medians compose adaptively to ρ = 2d·ε_q²/8 (Bun & Steinke 2016,
Lemma 2.3).  With a full-batch Gaussian fit (exactly μ-GDP, hence
μ²/2-zCDP) the whole is accounted in zCDP and converted once (Canonne, Kamath
& Steinke 2020; :func:`private_plan`, :func:`total`).  With a noisy SGD fit
(T Poisson-subsampled Gaussian steps) in Rényi DP: ρ-zCDP is (α, ρα)-RDP at
every order α > 1 (Bun & Steinke 2016, Def. 1.1), the fit's replace-one RDP
curve is :func:`fasterm.accounting.rdp_subsampled_gaussian`'s carried over by
Mironov's weak triangle inequality (:mod:`fasterm.accounting.sgd`), curves of
adaptively composed mechanisms add (Mironov 2017, Prop. 1), and the sum is
converted once (Balle et al. 2020, Thm. 21).  Otherwise (ε_r, δ_r)
from :func:`fasterm.accounting.zcdp_rho` for the ranges plus the fit's
(ε, δ) by adaptive basic composition (Dwork & Roth 2014, Thm 3.16); δ = 0:
ε_q = ε_r/(2d).  The released ranges are private output (stored, used at
predict time).

The target map (``DPLinearRegression(target_bounds=(low, high))``): with
c = (low + high)/2 and h = (high − low)/2, in float64,

    y ↦ (y − c)/h,

which sends [low, high] onto [−1, 1], the label bound the fit then uses
(labels outside are clipped there, per record).  The model of the mapped
target, (w, b), is reported in the caller's units as (h·w, h·b + c), so that
⟨``coef_``, x⟩ + ``intercept_`` predicts y itself (:func:`resolve_target`,
:func:`map_target`, :func:`unmap_target`).  Public constants only: no privacy
spent.
"""

from __future__ import annotations

import math
from fractions import Fraction
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

import fasterm.accounting as accounting
from ..accounting.rdp import rdp_to_epsilon, sgd_rdp
import fasterm.erm._float_margin as _float_margin
import fasterm.mechanisms.univariate as univariate
from .._validation import check_random_state

__all__ = ["PRIVATE_LIMIT", "PRIVATE_MECHANISMS", "PRIVATE_SHARE", "PRIVATE_TAU", "PRIVATE_WIDEN", "PrivatePlan", "fit_budget", "map_rows", "private_plan", "total",
           "private_ranges", "resolve", "sgd_joint_rho", "resolve_target", "map_target",
           "unmap_target"]

#: Share of the estimator's ε (and of its δ) spent on private ranges (``bounds="private"``).
PRIVATE_SHARE = 0.5
#: Private releases per feature: the median, then the median absolute deviation about it.
PRIVATE_MECHANISMS = 2
#: The range is the released median ± this many released median absolute deviations.
PRIVATE_WIDEN = 2.0
#: The linear-core width τ of the transforms asinh(·/τ).
PRIVATE_TAU = 1e-3
#: The public interval abs(x) ≤ this on which the medians are released.
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


def resolve_target(target_bounds, label_bound=1.0):
    """``(c, h)`` of declared target bounds (low, high): c = (low + high)/2, h = (high − low)/2.

    ``target_bounds``: a pair (tuple or list) of finite numbers, low < high,
    declared from public knowledge.  The fit then bounds the mapped target by 1,
    so a ``label_bound`` other than its default 1 is refused with it.  Raises
    ValueError naming ``target_bounds`` (and ``label_bound``).
    """
    if not isinstance(target_bounds, (tuple, list)) or len(target_bounds) != 2:
        raise ValueError(f"target_bounds must be None or a pair (low, high) of finite numbers, got "
                         f"{target_bounds!r}"[:300])
    try:
        low, high = float(target_bounds[0]), float(target_bounds[1])
    except (TypeError, ValueError):
        raise ValueError(f"target_bounds must be a pair (low, high) of finite numbers, got "
                         f"{target_bounds!r}"[:300]) from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"target_bounds must be finite, got ({low!r}, {high!r})")
    if not low < high:
        raise ValueError(f"target_bounds must have low < high, got ({low!r}, {high!r})")
    c, h = (low + high) / 2.0, (high - low) / 2.0
    if not (math.isfinite(c) and math.isfinite(h) and h > 0.0):
        raise ValueError(f"target_bounds=({low!r}, {high!r}): the centre or the half-width overflows")
    if label_bound != 1.0:
        raise ValueError(f"target_bounds and label_bound={label_bound!r} were both given: with target_bounds "
                         "the fit maps y into [-1, 1] and uses label_bound=1; give one of them")
    return c, h


def map_target(y, c, h):
    """(y − c)/h in float64 (module docstring): a new array."""
    return (np.asarray(y, dtype=np.float64) - c) / h


def unmap_target(coef, intercept, c, h):
    """The model (coef, intercept) of the mapped target in the caller's units: (h·coef, h·intercept + c),
    computed in float64, coef returned in its own dtype."""
    return (h * coef.astype(np.float64)).astype(coef.dtype, copy=False), h * float(intercept) + c


def _rest(total, share):
    """total − share, rounded down until (total − share) + share ≤ total in floating point."""
    rest = total - share
    while rest > 0.0 and rest + share > total:
        rest = math.nextafter(rest, 0.0)
    return rest


class PrivatePlan(NamedTuple):
    """The public budget plan of ``bounds="private"`` (:func:`private_plan`)."""

    epsilon: float      # the estimator's (ε, δ)
    delta: float
    eps_fit: float      # what the fit is calibrated to
    delta_fit: float
    eps_q: float        # each of the 2d medians is ε_q-DP, ε_q-bounded-range, ε_q²/8-zCDP
    eps_r: float        # basic composition: the ranges' (ε_r, δ_r)
    delta_r: float
    rho_r: float | None  # joint: the ranges' zCDP ρ_r (None: basic composition)
    sgd: tuple | None = None  # joint with a noisy SGD fit: its planned (q, T) (None: Gaussian full batch)


def fit_budget(epsilon, delta) -> tuple[float, float]:
    """``(ε_fit, δ_fit)``: what the fit is calibrated to under ``bounds="private"`` — (ε, δ) less the
    ranges' share ``PRIVATE_SHARE`` (rounded down so that the two add up to at most the total);
    the fit plan (:func:`fasterm.linear_model._plan.make_plan`) is made for it."""
    epsilon, delta = float(epsilon), float(delta)
    return _rest(epsilon, PRIVATE_SHARE * epsilon), _rest(delta, PRIVATE_SHARE * delta)


def sgd_joint_rho(epsilon, delta, q, sigma, steps) -> float:
    """The largest ρ for which ρ-zCDP ranges and the noisy SGD fit (q, σ, T; replace-one) are
    together (ε, δ)-DP, in Rényi DP (module docstring): the ranges are (α, ρα)-RDP, the fit
    (α, r(α))-RDP with r the replace-one curve of :mod:`fasterm.accounting.sgd`, the sum is
    (ε(α), δ)-DP with ε(α) = r(α) + ρα + log(1 − 1/α) − (log δ + log α)/(α − 1) (Balle et al.
    2020, Thm. 21) at each order α of ``RDP_ORDERS``, so ρ = max_α (ε − ε(α)|_{ρ=0})/α
    (0 if no order leaves room), rounded down so that :func:`fasterm.accounting.rdp.rdp_to_epsilon` confirms it."""
    orders, r = sgd_rdp(float(q), float(sigma), int(steps), "replace_one")
    room = (float(epsilon) - (r + np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)))
    rho = max(0.0, float(np.max(np.where(np.isfinite(room), room, -np.inf) / orders)))
    rho *= 1.0 - 1e-9
    for _ in range(100):  # _rdp_to_eps rounds up by ~1e-12·|log δ|: a step or two at most
        if rho == 0.0 or rdp_to_epsilon(r + rho * orders, orders, delta) <= epsilon:
            return rho
        rho *= 1.0 - 1e-6
    raise RuntimeError("bounds='private': the joint Rényi-DP plan does not meet its budget (a bug)")


def sgd_joint_delta(epsilon, delta, eps_fit, delta_fit) -> float:
    """The δ of the joint Rényi-DP conversion of ranges and a noisy SGD fit planned for (ε_fit, δ_fit):
    δ − η_max·(1 + e^ε)/(1 + e^ε_fit), rounded down, with η_max = :func:`fasterm.erm._float_margin.sgd_delta`
    (δ_fit)[1].  The fit's batch cap M keeps (1 + e^ε_fit)·P[a batch above M] ≤ η_max; the whole
    mechanism equals the capped one (every batch exact-margined) except on that event, which costs
    (1 + e^ε)·P ≤ η_max(1 + e^ε)/(1 + e^ε_fit) of δ at the overall ε (Theorem "capped batches" of
    docs/guarantees.rst)."""
    eta = _float_margin.sgd_delta(delta_fit)[1]
    ratio = (1.0 + math.exp(min(float(epsilon), 700.0))) / (1.0 + math.exp(min(float(eps_fit), 700.0)))
    return float(delta) - eta * ratio * (1.0 + 1e-9)


def private_plan(epsilon, delta, n_features, gaussian=False, sgd=None) -> PrivatePlan:
    """The public plan of ``bounds="private"`` (module docstring, "Privacy").

    The fit is calibrated to (ε − ε_r, δ − δ_r), ε_r = ``PRIVATE_SHARE``·ε,
    δ_r = ``PRIVATE_SHARE``·δ.  Basic composition (``gaussian=False``): the
    2d medians share (ε_r, δ_r), ε_q = √(4ρ/d) with ρ = zcdp_rho(ε_r, δ_r) for
    δ > 0, ε_r/(2d) for δ = 0.  Joint zCDP (``gaussian=True``, a fit of
    full-batch Gaussian steps, μ-GDP hence μ²/2-zCDP with μ at most
    μ_fit = gaussian_mu(ε_fit, δ_fit)): the medians get
    ρ_r = zcdp_rho(ε, δ) − μ_fit²/2, so that the whole is zcdp_rho(ε, δ)-zCDP,
    hence (ε, δ)-DP — when that gives them more than basic composition would
    (from 1.8 to 2.9 times the ρ for ε from 30 down to 0.05), else basic.
    Joint Rényi DP (``sgd=(q, T)``, a noisy SGD fit: the fit plan's
    :attr:`~fasterm.linear_model._plan.FitPlan.sgd`): the fit's σ
    is :func:`fasterm.accounting.calibrate_sgd_sigma` (q, T, ε_fit, δ_fit), as
    the fit computes it, and the medians get ρ_r = :func:`sgd_joint_rho` (ε, δ,
    q, σ, T) when that is more than basic composition gives them, else basic.
    """
    epsilon, delta, d = float(epsilon), float(delta), int(n_features)
    if delta > 0.0:  # the ranges are accounted in zCDP: the error names the whole epsilon, not its share
        accounting.check_gaussian_epsilon(epsilon)
    eps_r, delta_r = PRIVATE_SHARE * epsilon, PRIVATE_SHARE * delta
    eps_fit, delta_fit = fit_budget(epsilon, delta)
    k = PRIVATE_MECHANISMS * d
    if delta_r == 0.0:
        eps_q = eps_r / k
        while Fraction(eps_q) * k > Fraction(eps_r):  # basic composition of k releases: never above ε_r
            eps_q = math.nextafter(eps_q, 0.0)
        return PrivatePlan(epsilon, delta, eps_fit, delta_fit, eps_q, eps_r, delta_r, None)
    rho = accounting.zcdp_rho(eps_r, delta_r)
    rho_r = None
    if gaussian:
        mu_fit = accounting.gaussian_mu(eps_fit, delta_fit) * (1.0 + 1e-9)  # σ's rounding: μ ≤ this
        joint = (accounting.zcdp_rho(epsilon, delta) - mu_fit * mu_fit / 2.0) * (1.0 - 1e-9)
        if joint > rho:
            rho = rho_r = joint
    elif sgd is not None:
        q, steps = float(sgd[0]), int(sgd[1])
        # σ as the fit computes it, lowered by 1e-9 (a larger RDP curve: the plan never counts on
        # more noise than the fit adds; total() re-checks with the fit's recorded σ)
        sigma = accounting.calibrate_sgd_sigma(q, steps, eps_fit, _float_margin.sgd_delta(delta_fit)[0],
                                               "replace_one") * (1.0 - 1e-9)
        joint = sgd_joint_rho(epsilon, sgd_joint_delta(epsilon, delta, eps_fit, delta_fit), q, sigma, steps)
        if joint > rho:
            rho = rho_r = joint
    eps_q = math.sqrt(8.0 * rho / k) * (1.0 - 1e-12)  # rounding never pushes k·ε_q²/8 above ρ
    return PrivatePlan(epsilon, delta, eps_fit, delta_fit, eps_q, eps_r, delta_r, rho_r,
                       None if rho_r is None or gaussian else (q, steps))


def total(plan, result):
    """``(epsilon_, delta_)`` of a fit: the result's own (ε, δ) (``plan=None``: no private
    ranges), or with the ranges of ``plan`` — basic composition (ε_fit + ε_r, δ_fit + δ_r), or
    for a joint plan the requested (ε, δ) after checking, from the result's public calibration
    (T, Δ₂, σ: μ = √T·Δ₂/σ), that ρ_r + μ²/2 is (ε, δ)-DP by the CKS conversion
    (:func:`fasterm.accounting.zcdp_delta`).  A δ of None (an uncertified release) is NaN.
    """
    if plan is None or plan.rho_r is None:
        eps_r, delta_r = (0.0, 0.0) if plan is None else (plan.eps_r, plan.delta_r)
        return float(result.epsilon) + eps_r, (math.nan if result.delta is None else float(result.delta) + delta_r)
    info = getattr(result, "info", None) or {}
    if plan.sgd is not None:
        # joint Rényi DP with a noisy SGD fit: from its recorded public calibration (q, σ, T)
        if (getattr(result, "noise", None) != "gaussian" or info.get("neighbors") != "replace_one"
                or "sample_rate" not in info or info.get("secure")):
            raise RuntimeError("bounds='private' planned a noisy SGD fit, and the fit was not one")
        orders, r = sgd_rdp(float(info["sample_rate"]), float(info["noise_multiplier"]), int(result.steps),
                             "replace_one")
        joint_delta = sgd_joint_delta(plan.epsilon, plan.delta, plan.eps_fit, plan.delta_fit)
        if not rdp_to_epsilon(r + plan.rho_r * orders, orders, joint_delta) <= plan.epsilon:
            raise RuntimeError("bounds='private': the ranges and the fit exceed the budget (a bug)")
        return plan.epsilon, plan.delta
    if getattr(result, "noise", None) != "gaussian" or "sample_rate" in info or info.get("secure"):
        raise RuntimeError("bounds='private' planned a full-batch Gaussian fit, and the fit was not one")
    mu = math.sqrt(result.steps) * float(result.sensitivity) / float(result.noise_scale)
    if not accounting.zcdp_delta(plan.rho_r + mu * mu / 2.0, plan.epsilon) <= plan.delta:
        raise RuntimeError("bounds='private': the ranges and the fit exceed the budget (a bug)")
    return plan.epsilon, plan.delta


def private_ranges(X, eps_q, random_state=None):
    """Private per-feature ranges of the dense rows X: ``(low, high)`` (module docstring).

    2d mechanisms of ε_q each (``eps_q`` from :func:`private_plan`; the caller
    reports the total).  ``random_state``: a Generator (advanced) or a seed.
    Per feature, the median m then the median absolute deviation s, drawn in
    that order from one stream; the range is m ± ``PRIVATE_WIDEN``·s.
    """
    rng = check_random_state(random_state)
    d = X.shape[1]
    zmax = float(np.arcsinh(PRIVATE_LIMIT / PRIVATE_TAU))
    umax = float(np.arcsinh(2.0 * PRIVATE_LIMIT / PRIVATE_TAU))
    low = np.empty(d)
    high = np.empty(d)
    for j in range(d):
        x = np.clip(np.asarray(X[:, j], dtype=np.float64), -PRIVATE_LIMIT, PRIVATE_LIMIT)
        m = float(np.sinh(univariate.quantile(np.arcsinh(x / PRIVATE_TAU), 0.5, (-zmax, zmax), eps_q,
                                              random_state=rng)) * PRIVATE_TAU)
        u = np.arcsinh(np.abs(x - m) / PRIVATE_TAU)
        s = float(np.sinh(univariate.quantile(u, 0.5, (0.0, umax), eps_q, random_state=rng)) * PRIVATE_TAU)
        half = max(PRIVATE_WIDEN * s, 1e-9 * max(1.0, abs(m)))
        low[j], high[j] = m - half, m + half
    return low, high
