"""Secure (floating-point-safe) mode: exact discrete noise on a power-of-two grid.

Why (Mironov 2012's attack on float noise) and what it costs: docs/secure.rst.

Mechanism: the value is rounded to the grid γ = 2^k, k_i = round(f(x)_i/γ)
(exact); integer noise Z_i is drawn exactly (discrete Laplace or discrete
Gaussian in grid units, Canonne, Kamath & Steinke 2020, :mod:`fasterm.mechanisms._exact`);
the release γ·(k_i + Z_i) is an exact float64 (the value is clamped to ±2^52,
the release to ±2^53 grid units: data-independent 1-Lipschitz maps).
Rounding is accounted: in grid units ‖v‖₁ ≤ ⌊Δ₁/γ⌋ + d and
‖v‖₂² ≤ ⌊(Δ₂/γ + r_d)²⌋, r_d ≥ √d rational.

Theorems:

* Discrete Laplace, P[Z = z] ∝ exp(−|z|/t): (Δ₁,grid/t, 0)-DP (discrete
  analogue of Dwork–Roth Thm 3.6; CKS 2020 §1); coordinate i alone is
  (|v_i|/t, 0)-DP, as the ``"l2"`` calibrations' advanced composition needs.
* Discrete Gaussian: Rényi divergence ≤ α‖v‖₂²/(2σ²) (CKS 2020, Prop. 5;
  coordinates add), so ρ = Δ₂,grid²/(2σ²)-zCDP; T releases Tρ-zCDP (Bun &
  Steinke 2016, Lemma 2.3); (ε, δ) by CKS's conversion
  (:func:`fasterm.accounting.zcdp_delta`).
* Finite exponential mechanism (:func:`fasterm.mechanisms.exponential`):
  scores rounded to the grid (Δ_g = ⌊Δ/γ⌋ + 1), index drawn with probability
  exactly ∝ exp(−t·(k_i − min k)), t = ε/(2Δ_g) (ε/Δ_g monotone), by uniform
  proposals and exact Bernoulli acceptance (CKS 2020): McSherry–Talwar,
  (ε, 0)-DP (:func:`exponential_calibration`, :func:`exponential_indices`).

Default granularity: the largest power of two ≤ Δ₁/(2^10·d) (L1) or
Δ₂/(2^10·√d) (L2), public; calls whose grid sensitivity or noise scale exceeds
2^47 grid units are refused (:func:`check_grid_scale`).

Not covered (they raise ``ValueError`` in secure mode, :func:`check_not_secure`):
``median``, ``mean``, ``quantile``, ``expmech_erm``, ``RWM``, ``run_rwm``,
``PrivateRWM``, ``linear_learner``.  Covered besides the mechanisms and
``noisy_pgd``: :class:`fasterm.learning.SQOracle` and the private PAC learners.
Timing and the error of computing f itself are not covered (docs/secure.rst).

Setting: ``secure=None`` means the current setting: :func:`set_secure`
(process-wide) or :func:`secure_mode` (a ``with`` block, this thread / task).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass
from fractions import Fraction
from math import isqrt

import numpy as np

import fasterm.mechanisms._exact as _exact
import fasterm.accounting as accounting
from ._exact import OSRandom, secure_rng  # noqa: F401 - secure_rng: part of this module's interface
from .._validation import check_positive, check_scalar

__all__ = ["set_secure", "secure_mode", "is_secure", "default_granularity", "OSRandom"]

GRID_BITS = 10  # default γ = 2^⌊log2(Δ per coordinate · 2^−GRID_BITS)⌋
VALUE_LIMIT = float(2 ** 52)  # |value/γ| clamp before rounding
RELEASE_LIMIT = 2 ** 53  # |k + Z| clamp: γ·(k + Z) is then an exact float64
_MIN_EXP, _MAX_EXP = -1000, 960  # granularity range: γ·2^53 stays finite, γ normal
# Largest grid sensitivity and noise scale (t or σ), in grid units: a draw reaches the
# release clamp 2^53 only beyond 64 scales (probability < e^−64), as in fasterm.mechanisms.noise.
GRID_SCALE_LIMIT = 2 ** 47

_GLOBAL = [False]
_LOCAL: contextvars.ContextVar = contextvars.ContextVar("fasterm_secure", default=None)


def set_secure(flag: bool) -> None:
    """Make secure mode the process-wide default (``secure=None`` everywhere)."""
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"flag must be a bool, got {type(flag).__name__}")
    _GLOBAL[0] = bool(flag)


def is_secure() -> bool:
    """The current setting: a :func:`secure_mode` block's flag, else the global default."""
    local = _LOCAL.get()
    return _GLOBAL[0] if local is None else local


@contextlib.contextmanager
def secure_mode(flag: bool = True):
    """``with fasterm.secure_mode(): ...`` — secure by default in this thread/task only."""
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"flag must be a bool, got {type(flag).__name__}")
    token = _LOCAL.set(bool(flag))
    try:
        yield
    finally:
        _LOCAL.reset(token)


def resolve(secure) -> bool:
    """The ``secure`` argument of a public function: None → :func:`is_secure`."""
    if secure is None:
        return is_secure()
    if not isinstance(secure, (bool, np.bool_)):
        raise TypeError(f"secure must be None or a bool, got {type(secure).__name__}")
    return bool(secure)


def check_not_secure(what: str) -> None:
    """Refuse to run ``what`` (a floating-point sampler) while secure mode is on.

    Secure mode never falls back to a floating-point sampler silently: a
    function without a secure path raises ``ValueError`` instead (module
    docstring, "What is not covered").
    """
    if is_secure():
        raise ValueError(
            f"{what} has no secure (floating-point-safe) mode and secure mode is on "
            "(fasterm.secure_mode / fasterm.set_secure); run it outside the secure_mode block, "
            "or inside `with fasterm.secure_mode(False):` to accept the floating-point sampler")


def check_granularity(granularity, name: str = "granularity") -> float:
    """A power of two 2^k, −1000 ≤ k ≤ 960, as a float.

    Any exact spelling of it is accepted: a float, an int, a numpy scalar, a
    0-d array or a :class:`fractions.Fraction` (which must equal the power of
    two exactly, not only after rounding to a float).
    """
    if isinstance(granularity, np.ndarray) and granularity.ndim == 0:
        granularity = granularity[()]
    if isinstance(granularity, (bool, np.bool_)) or not isinstance(
            granularity, (int, float, Fraction, np.integer, np.floating)):
        raise TypeError(f"{name} must be a power of two (a float such as 2.0**-10), "
                        f"got {type(granularity).__name__}")
    try:
        g = float(granularity)
    except OverflowError:  # an int or Fraction beyond the double range
        raise ValueError(f"{name} must be between 2**{_MIN_EXP} and 2**{_MAX_EXP}, "
                         "got a value beyond the float range") from None
    if isinstance(granularity, Fraction) and math.isfinite(g) and Fraction(*g.as_integer_ratio()) != granularity:
        raise ValueError(f"{name} must be a power of two (2**k), got {granularity!r}")
    if not (math.isfinite(g) and g > 0):
        raise ValueError(f"{name} must be a positive power of two, got {granularity!r}")
    m, e = math.frexp(g)
    if m != 0.5:
        raise ValueError(f"{name} must be a power of two (2**k), got {granularity!r}")
    if not _MIN_EXP <= e - 1 <= _MAX_EXP:
        raise ValueError(f"{name} must be between 2**{_MIN_EXP} and 2**{_MAX_EXP}, got {granularity!r}")
    return g


def default_granularity(sensitivity: float, dim: int, norm: str = "l2") -> float:
    """Largest power of two ≤ Δ/(2^10·d) (``norm="l1"``) or Δ/(2^10·√d) (``"l2"``),
    kept within [2^−1000, 2^960].

    Depends only on the public sensitivity and dimension (module docstring).
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    dim = check_scalar(dim, "dim", low=1, integer=True)
    if norm not in ("l1", "l2"):
        raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}")
    per = sensitivity / dim if norm == "l1" else sensitivity / math.sqrt(dim)
    if per == 0.0:  # a subnormal sensitivity over many coordinates: the finest grid
        return math.ldexp(1.0, _MIN_EXP)
    # per = m·2^p, m ∈ [0.5, 1): 2^(p−1) ≤ per < 2^p, so 2^(p−1−GRID_BITS) ≤ per·2^−GRID_BITS
    # (exponents only: nothing underflows for a tiny sensitivity)
    e = math.frexp(per)[1] - 1 - GRID_BITS
    return math.ldexp(1.0, min(max(e, _MIN_EXP), _MAX_EXP))


def check_grid_scale(units, what: str) -> None:
    """A grid sensitivity or noise scale (grid units, exact) must be ≤ :data:`GRID_SCALE_LIMIT`.

    Beyond it the releases would hit the clamp ±2^53 (or int64 overflow):
    the output would be private but meaningless, so the call is refused
    (a data-independent check, like the fast path's scale limit).
    """
    if units > GRID_SCALE_LIMIT:
        raise ValueError(f"the {what} would be {float(units):.3g} grid units (at most 2^47 keeps the "
                         "releases exact): use a larger epsilon or a coarser granularity")


# ---------------------------------------------------------------------------
# Grid sensitivities (exact rational arithmetic)
# ---------------------------------------------------------------------------
def _frac(x) -> Fraction:
    return Fraction(*float(x).as_integer_ratio())


def _sqrt_up(d: int) -> Fraction:
    """A rational r ≥ √d within 2^−20 of it."""
    r = isqrt(d * (1 << 40))
    return Fraction(r if r * r == d * (1 << 40) else r + 1, 1 << 20)


def l1_grid_sensitivity(sensitivity, granularity, dim) -> int:
    """⌊Δ₁/γ⌋ + d ≥ ‖round(a/γ) − round(b/γ)‖₁ whenever ‖a − b‖₁ ≤ Δ₁."""
    return int(_frac(sensitivity) / _frac(granularity)) + int(dim)


def l2_grid_sensitivity_sq(sensitivity, granularity, dim) -> int:
    """⌊(Δ₂/γ + √d)²⌋ ≥ ‖round(a/γ) − round(b/γ)‖₂² whenever ‖a − b‖₂ ≤ Δ₂."""
    r = _frac(sensitivity) / _frac(granularity) + _sqrt_up(int(dim))
    return int(r * r)  # the squared norm of an integer vector is an integer


def sqrt_up(n: int) -> float:
    """A float ≥ √n (n a non-negative int)."""
    s = math.sqrt(n)
    while Fraction(*s.as_integer_ratio()) ** 2 < n:
        s = math.nextafter(s, math.inf)
    return s


# ---------------------------------------------------------------------------
# Discrete noise parameters
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class DiscreteLaplace:
    """P[Z = z] ∝ exp(−|z|·s/n): scale t = n/s grid units (exact rational)."""

    n: int
    s: int

    @property
    def scale(self) -> Fraction:
        return Fraction(self.n, self.s)

    @property
    def variance(self) -> float:
        """2e^{−1/t}/(1 − e^{−1/t})² ≤ 2t² (the variance of the two-sided geometric)."""
        q = math.exp(-self.s / self.n)
        return 2.0 * q / (1.0 - q) ** 2

    def sample(self, size, rng) -> np.ndarray:
        return _exact.discrete_laplace(size, self.n, self.s, rng)


@dataclass(frozen=True)
class DiscreteGaussian:
    """P[Z = z] ∝ exp(−z²/(2σ²)) with σ² = t·m grid units² (integers)."""

    t: int
    m: int

    @property
    def sigma2(self) -> int:
        return self.t * self.m

    @property
    def variance(self) -> float:
        """σ², an upper bound on the variance (CKS 2020 show Var N_ℤ(0, σ²) < σ²)."""
        return float(self.sigma2)

    def sample(self, size, rng) -> np.ndarray:
        return _exact.discrete_gaussian(size, self.t, self.m, rng)


def laplace_params(scale) -> DiscreteLaplace:
    """The smallest n/2^K ≥ ``scale`` (grid units) with n < 2^49 where possible, K ≤ 40.

    Rounding the scale up only lowers the privacy loss Δ/t.
    """
    t = scale if isinstance(scale, Fraction) else _frac(scale)
    whole = -(-t.numerator // t.denominator)
    k = min(40, max(0, 48 - whole.bit_length()))
    n = -(-(t * (1 << k)).numerator // (t * (1 << k)).denominator)
    return DiscreteLaplace(n, 1 << k)


def gaussian_params(sigma2) -> DiscreteGaussian:
    """σ² rounded up to t·m, t = ⌊σ⌋ + 1 and m = ⌈σ²/t⌉ (more noise, never less)."""
    s2 = sigma2 if isinstance(sigma2, Fraction) else _frac(sigma2)
    t = isqrt(s2.numerator // s2.denominator) + 1
    q = s2 / t
    return DiscreteGaussian(t, max(1, -(-q.numerator // q.denominator)))


# ---------------------------------------------------------------------------
# Release on the grid
# ---------------------------------------------------------------------------
def to_grid(values, granularity) -> np.ndarray:
    """round(clamp(values/γ, ±2^52)) as int64 (exact: γ is a power of two)."""
    with np.errstate(over="ignore"):  # |v| beyond 2^1023 becomes ±inf, then the clamp's bound
        v = np.asarray(values, dtype=np.float64).reshape(-1) / granularity
    np.clip(v, -VALUE_LIMIT, VALUE_LIMIT, out=v)
    return np.rint(v).astype(np.int64)


def from_grid(k: np.ndarray, granularity) -> np.ndarray:
    """γ·clamp(k, ±2^53) as float64: exact grid points."""
    k = np.clip(k, -RELEASE_LIMIT, RELEASE_LIMIT)
    return k.astype(np.float64) * granularity


def release(values, granularity, params, rng) -> np.ndarray:
    """γ·(round(values/γ) + Z), Z i.i.d. from ``params``; float64, shape of ``values``."""
    values = np.asarray(values)
    k = to_grid(values.reshape(-1), granularity)
    k += params.sample(k.size, rng)
    return from_grid(k, granularity).reshape(values.shape)


# ---------------------------------------------------------------------------
# Calibration: the noise for a target (ε, δ), from the theorems of the docstring
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SecureCalibration:
    """What secure mode calibrated.

    ``granularity`` γ; ``grid_sensitivity``: the rounding-enlarged sensitivity
    in grid units (L1 for ``calibration="l1"``, else L2, rounded up);
    ``params``: the discrete noise; ``epsilon``, ``delta``: the privacy spent
    (≤ the budget); ``rho``: the total zCDP parameter (Gaussian only).
    """

    granularity: float
    grid_sensitivity: float
    params: DiscreteLaplace | DiscreteGaussian
    epsilon: float
    delta: float
    rho: float | None = None

    @property
    def noise_scale(self) -> float:
        """Per-coordinate noise scale in data units: γ·t (Laplace) or γ·σ (Gaussian)."""
        p = self.params
        s = float(p.scale) if isinstance(p, DiscreteLaplace) else math.sqrt(p.sigma2)
        return self.granularity * s

    def noise_sq(self, dim: int) -> float:
        """E‖Z‖² in data units for a d-vector (the discrete variance, bounded above)."""
        return dim * self.params.variance * self.granularity ** 2

    def bias_norm(self, dim: int) -> float:
        """Largest ‖round(v/γ)·γ − v‖₂ = √d·γ/2: the rounding error of one release."""
        return math.sqrt(dim) * self.granularity / 2.0


def _granularity(granularity, sensitivity, dim, norm):
    g = default_granularity(sensitivity, dim, norm) if granularity is None else check_granularity(granularity)
    # before any arithmetic on the grid sensitivity (it may be a 1000-bit integer)
    check_grid_scale(_frac(sensitivity) / _frac(g), "sensitivity")
    return g


def laplace_calibration(sensitivity, epsilon, dim, granularity=None, steps=1) -> SecureCalibration:
    """Discrete Laplace for ``steps`` releases of L1 sensitivity Δ₁, (ε, 0)-DP.

    Δ₁,grid = ⌊Δ₁/γ⌋ + d; scale t = steps·Δ₁,grid/ε computed exactly as a
    rational and rounded up to n/2^K; ε spent = steps·Δ₁,grid·2^K/n ≤ ε
    (discrete Laplace mechanism + basic composition).
    """
    g = _granularity(granularity, sensitivity, dim, "l1")
    sens = l1_grid_sensitivity(sensitivity, g, dim)
    scale = Fraction(sens * steps) / _frac(epsilon)
    check_grid_scale(scale, "noise scale")
    params = laplace_params(scale)
    spent = float(Fraction(sens * steps * params.s, params.n))
    return SecureCalibration(g, float(sens), params, spent, 0.0)


def laplace_l2_calibration(sensitivity, epsilon, delta, dim, steps=1, granularity=None,
                           calibration="l2") -> SecureCalibration:
    """Discrete Laplace for ``steps`` releases of L2 sensitivity Δ₂ (calibrations of
    :func:`fasterm.accounting.calibrate_steps`), with Δ₂,grid = √⌊(Δ₂/γ + √d)²⌋ (rounded up).

    Those calibrations use only that coordinate i of one release is
    (|v_i|/b, 0)-DP with Σ v_i² ≤ Δ₂,grid², which holds for the discrete Laplace
    of scale b; the scale is rounded up to a rational (less privacy loss).
    """
    g = _granularity(granularity, sensitivity, dim, "l2")
    sens = sqrt_up(l2_grid_sensitivity_sq(sensitivity, g, dim))
    cal = accounting.calibrate_steps("laplace", calibration, sens, dim, steps, epsilon, delta)
    check_grid_scale(_frac(cal.noise_scale), "noise scale")
    return SecureCalibration(g, sens, laplace_params(cal.noise_scale), cal.epsilon, cal.delta)


def gaussian_calibration(sensitivity, epsilon, delta, dim, steps=1, granularity=None) -> SecureCalibration:
    """Discrete Gaussian for ``steps`` adaptive releases of L2 sensitivity Δ₂, (ε, δ)-DP.

    Each release is ρ₀-zCDP with ρ₀ = Δ₂,grid²/(2σ²) (CKS 2020), T releases are
    Tρ₀-zCDP (Bun–Steinke 2016), and ρ-zCDP gives (ε, δ) by CKS's conversion
    (:func:`fasterm.accounting.zcdp_delta`).  ρ = :func:`~fasterm.accounting.zcdp_rho`
    (ε, δ); σ² = T·Δ₂,grid²/(2ρ) rounded up to t·m (exact integers); the δ
    reported is the conversion at the ρ actually used (≤ δ).
    """
    g = _granularity(granularity, sensitivity, dim, "l2")
    sens_sq = l2_grid_sensitivity_sq(sensitivity, g, dim)
    rho = accounting.zcdp_rho(epsilon, delta)
    sigma2 = Fraction(sens_sq * steps) / (2 * _frac(rho))
    check_grid_scale(Fraction(isqrt(sigma2.numerator // sigma2.denominator)), "noise scale (σ)")
    params = gaussian_params(sigma2)
    used = Fraction(sens_sq * steps, 2 * params.sigma2)
    rho_used = float(used)
    if Fraction(*rho_used.as_integer_ratio()) < used:
        rho_used = math.nextafter(rho_used, math.inf)
    delta_spent = min(float(delta), accounting.zcdp_delta(rho_used, epsilon))
    return SecureCalibration(g, sqrt_up(sens_sq), params, float(epsilon), delta_spent, rho_used)


# ---------------------------------------------------------------------------
# The exponential mechanism on the grid
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ExpmechCalibration:
    """Secure exponential mechanism: ``granularity`` γ, ``grid_sensitivity``
    Δ_g = ⌊Δ/γ⌋ + 1 (integer) and ``rate`` t = ε/(2Δ_g) (ε/Δ_g if monotonic),
    an exact rational: P[i] ∝ exp(−t·(k_i − min_j k_j)), k_i = round(s_i/γ)."""

    granularity: float
    grid_sensitivity: int
    rate: Fraction


def exponential_calibration(sensitivity, epsilon, monotonic=False, granularity=None) -> ExpmechCalibration:
    """γ (default: largest power of two ≤ Δ/2^10), Δ_g = ⌊Δ/γ⌋ + 1, t = ε/(2Δ_g) or ε/Δ_g.

    |round(a/γ) − round(b/γ)| ≤ |a − b|/γ + 1, so scores that move by at most Δ
    move by at most Δ_g grid units (an integer); McSherry–Talwar on the rounded
    scores with sensitivity Δ_g is then (ε, 0)-DP with ε taken as the exact
    rational value of its float.  Refused (ValueError) when Δ/γ > 2^47
    (:func:`check_grid_scale`), as for the Laplace mechanism.
    """
    g = _granularity(granularity, sensitivity, 1, "l1")
    sens = l1_grid_sensitivity(sensitivity, g, 1)
    rate = _frac(epsilon) / (sens if monotonic else 2 * sens)
    return ExpmechCalibration(g, sens, rate)


def grid_scores(scores: np.ndarray, granularity: float):
    """d_i = round(s_i/γ) − min_j round(s_j/γ) for finite float scores, exactly.

    An int64 array when every |s_i/γ| < 2^62 (s_i/γ is then exact in float64:
    γ is a power of two — a subnormal quotient is below 1/2 and rounds to 0
    either way — and ``np.rint`` of a double is exact), else a list of Python
    ints computed from the exact rationals (scores up to 1.8e308 on any grid).
    Both round half to even.
    """
    s = np.asarray(scores, dtype=np.float64)
    with np.errstate(over="ignore"):
        v = s / granularity
    lo, hi = float(v.min()), float(v.max())
    if max(hi, -lo) < float(_exact._INT_LIMIT):
        np.rint(v, out=v)
        k = v.astype(np.int64)
        k -= np.int64(np.rint(lo))  # rint is monotone: the smallest k
        return k
    gf = _frac(granularity)
    k = [round(_frac(x) / gf) for x in s.tolist()]
    lo = min(k)
    return [x - lo for x in k]


def exponential_indices(scores: np.ndarray, cal: ExpmechCalibration, rng, size: int) -> np.ndarray:
    """``size`` i.i.d. indices of the secure exponential mechanism.

    ``scores``: float array without NaN/−inf and with a finite score; +inf
    scores have weight 0 and are excluded before sampling.
    """
    if np.max(scores) < np.inf:  # the common case: no +inf, no index map
        d = grid_scores(scores, cal.granularity)
        return _exact.expmech(size, d, cal.rate.numerator, cal.rate.denominator, rng)
    finite = np.flatnonzero(np.isfinite(scores))
    d = grid_scores(scores[finite], cal.granularity)
    idx = _exact.expmech(size, d, cal.rate.numerator, cal.rate.denominator, rng)
    return finite[idx]


def calibrate(noise, calibration, l2_sensitivity, dim, steps, epsilon, delta, granularity=None):
    """The secure calibration behind ``noisy_pgd(..., secure=True)`` (per-step L2 sensitivity)."""
    if noise == "gaussian":
        return gaussian_calibration(l2_sensitivity, epsilon, delta, dim, steps, granularity)
    return laplace_l2_calibration(l2_sensitivity, epsilon, delta, dim, steps, granularity, calibration)
