"""Private one-dimensional statistics on a public interval: median, quantile, mean.

Each is an exponential mechanism over w ∈ [a, b] (McSherry & Talwar 2007;
Dwork–Roth, *The Algorithmic Foundations of Differential Privacy*, Thm 3.10,
whose proof carries over verbatim from a finite range to a density on [a, b]):
a release with density ∝ exp(−ε·u(w; S) / (2Δ)), where the score u changes by
at most Δ between neighbouring data sets, is (ε, 0)-DP.  Here the samples are
**exact**: no MCMC, only a sort (O(n log n)) and a compiled O(n) pass.

* ``median(..., method="erm")`` — ERM form (Smith–Ullman lecture 11, Alg. 1):
  u(w) = n·L(w) with L(w) = (1/n) Σ |w − x_i|.  For w, x, x' ∈ [a, b],
  | |w − x| − |w − x'| | ≤ |x − x'| ≤ b − a, so the loss is Δ-bounded with
  Δ = b − a and L has sensitivity (b − a)/n; the density
  ∝ exp(−ε Σ|w − x_i| / (2(b − a))) is piecewise exponential between the
  sorted points, sampled exactly (piece by inversion, then a truncated
  exponential by inversion).
* ``quantile`` and ``median(..., method="rank")`` — the classic rank mechanism
  (Smith 2011): u(w) = |#{i : x_i < w} − q·n|, which one changed record moves
  by at most 1 (Δ = 1); the density ∝ exp(−ε·u(w)/2) is constant between
  consecutive sorted points, so a gap is chosen with probability
  ∝ length·exp(−ε|j − qn|/2) and the release is uniform inside it.
* ``mean`` — ERM form with ℓ(w; x) = (w − x)²: both values lie in
  [0, (b − a)²], so Δ = (b − a)², and since n·L(w) = n(w − x̄)² + const the
  density ∝ exp(−ε·n·L(w) / (2(b − a)²)) is N(x̄, (b − a)²/(ε n)) truncated to
  [a, b], sampled exactly in every regime (Botev's case split).

Neighbours: replace-one (n is public).  Data outside [a, b] are clipped to it —
a per-record map, so clipped neighbours are still neighbours — and the bounds
must be public: never derive them from the data.  The samplers are exact up to
floating-point rounding (densities below 1e-270 times the mode's are set to 0); like
every textbook sampler they are not hardened against floating-point attacks
(Mironov 2012), and they have no secure mode: under
:func:`fasterm.secure_mode` / :func:`fasterm.set_secure` they raise
``ValueError`` instead of running.

Randomness comes from ``random_state`` (None, an int seed, or a
``numpy.random.Generator``, whose bit generator the compiled code draws from),
so a seed reproduces a release.
"""

from __future__ import annotations

import math

import numpy as np

import fasterm.mechanisms._expmech as _expmech  # compiled (src/fasterm/mechanisms/_expmech.pyx)
import fasterm.mechanisms.secure as _secure
from .._validation import check_array, check_bounds, check_epsilon, check_random_state, check_scalar

__all__ = ["median", "quantile", "mean"]

_METHODS = ("erm", "rank")


def _sorted(x: np.ndarray) -> np.ndarray:
    # Sorted input (checked in one pass that stops at the first descent) is
    # used as is; otherwise numpy's sort (SIMD on x86) on a copy.
    return x if _expmech.is_sorted(x) else np.sort(x)


def _sample(kind, x, bounds, epsilon, *, q=0.5, method="erm", random_state=None, size=None):
    """Shared path of the public functions; ``size`` draws from one table.

    Each of ``size`` draws is a separate (ε, 0)-DP release of the same data
    (together (size·ε, 0)-DP by basic composition): the public functions ask
    for one; the tests ask for many.
    """
    _secure.check_not_secure(f"fasterm.{kind}")
    x = check_array(x, "x", ndim=1)
    if kind == "quantile":
        q = check_scalar(q, "q", low=0.0, high=1.0)
    a, b = check_bounds(bounds)
    eps = check_epsilon(epsilon)
    if kind != "mean":
        if not isinstance(method, str):
            raise TypeError(f"method must be a str, got {type(method).__name__}")
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    rng = check_random_state(random_state)
    out = np.empty(1 if size is None else size, dtype=np.float64)
    if kind == "mean":
        n = x.shape[0]
        mu = float(np.clip(x, a, b, dtype=np.float64).mean())
        sigma = (b - a) / math.sqrt(eps * n)
        if not sigma > 0.0:  # eps * n beyond the double range: a point mass
            out.fill(min(max(mu, a), b))
        else:
            _expmech.truncnorm_sample(rng.bit_generator, mu, sigma, a, b, out)
    elif kind == "median" and method == "erm":
        _expmech.median_erm_sample(rng.bit_generator, _sorted(x), a, b, eps, out)
    else:
        _expmech.quantile_rank_sample(rng.bit_generator, _sorted(x), a, b, eps, q, out)
    return float(out[0]) if size is None else out


def median(x: np.typing.ArrayLike, bounds: tuple[float, float], epsilon: float, method: str = "erm",
           random_state: None | int | np.random.Generator = None) -> float:
    """A private median of ``x`` on the public interval ``bounds = (a, b)``: (ε, 0)-DP.

    ``method="erm"`` (default) samples the exponential-mechanism ERM density
    ∝ exp(−ε Σ_i |w − x_i| / (2(b − a))) on [a, b] exactly; ``"rank"`` is the
    classic rank mechanism (``quantile(x, 0.5, ...)``).  Privacy (module
    docstring): loss |w − x| is (b − a)-bounded on [a, b], so L has
    sensitivity (b − a)/n; the exponential mechanism is (ε, 0)-DP
    (McSherry–Talwar 2007; Dwork–Roth Thm 3.10).

    ``x``: 1-D, finite, non-empty, float32 or float64 (other real dtypes are
    converted); values outside [a, b] are clipped to it.  Cost: one sort
    (skipped when ``x`` is already ascending) and one compiled pass.
    Returns a Python float in [a, b].
    """
    return _sample("median", x, bounds, epsilon, method=method, random_state=random_state)


def quantile(x: np.typing.ArrayLike, q: float, bounds: tuple[float, float], epsilon: float,
             random_state: None | int | np.random.Generator = None) -> float:
    """A private q-quantile of ``x`` on the public interval ``bounds = (a, b)``: (ε, 0)-DP.

    The rank mechanism (Smith 2011): w ∈ [a, b] with density
    ∝ exp(−ε·|#{i : x_i < w} − q·n| / 2).  The score changes by at most 1 when
    one record changes, so this is the exponential mechanism with sensitivity
    1: (ε, 0)-DP (McSherry–Talwar 2007; Dwork–Roth Thm 3.10).  Sampled exactly:
    a gap between consecutive sorted (clipped) points with probability
    ∝ length·exp(−ε|j − qn|/2) (ties make empty gaps, of mass 0), then a
    uniform point in it.

    ``q`` in [0, 1]; ``x`` as in :func:`median`.  Returns a Python float.
    """
    return _sample("quantile", x, bounds, epsilon, q=q, method="rank", random_state=random_state)


def mean(x: np.typing.ArrayLike, bounds: tuple[float, float], epsilon: float, random_state: None | int | np.random.Generator = None) -> float:
    """A private mean of ``x`` on the public interval ``bounds = (a, b)``: (ε, 0)-DP.

    The exponential-mechanism ERM release for the squared loss: density
    ∝ exp(−ε·n·L(w) / (2(b − a)²)), L(w) = (1/n) Σ (w − x_i)², on [a, b].
    (w − x)² ∈ [0, (b − a)²] for w, x ∈ [a, b], so L has sensitivity
    (b − a)²/n and the release is (ε, 0)-DP (McSherry–Talwar 2007; Dwork–Roth
    Thm 3.10).  The density is N(x̄, (b − a)²/(ε n)) truncated to [a, b], x̄
    the mean of the clipped data; it is sampled exactly.

    ``x`` as in :func:`median`.  Returns a Python float in [a, b].
    """
    return _sample("mean", x, bounds, epsilon, random_state=random_state)
