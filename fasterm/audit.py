"""Empirical privacy auditing: a high-confidence *lower* bound on ε from samples.

A mechanism M is (ε, δ)-DP if for every pair of neighbouring data sets D, D'
and every set S of outputs

    P[M(D) ∈ S] ≤ e^ε · P[M(D') ∈ S] + δ,   so   ε ≥ log((P[M(D) ∈ S] − δ) / P[M(D') ∈ S]).

An audit runs M many times on one fixed pair, estimates the two probabilities
for one rejection set S, and replaces them by Clopper–Pearson confidence
bounds (a lower bound for the numerator, an upper bound for the denominator).
The result is a statistically valid lower bound on the ε of M: if it exceeds
the claimed ε, the claim is false (or the sampler is not the mechanism the
proof describes); below the claim it proves nothing.  (The "hypothesis test"
view of DP, Kairouz–Oh–Viswanath 2015; auditing in this form: Jagielski,
Ullman & Oprea 2020; Nasr et al. 2021.)

The outputs are reduced to one real number per run (a scalar release, an
index, or a 1-D projection of a vector, see :func:`project`), and S ranges
over threshold sets {o > τ} and {o < τ}, in both directions (D against D' and
D' against D).  For one-dimensional monotone-likelihood-ratio families
(Laplace and Gaussian shifts, exponential mechanisms on an ordered range)
threshold sets are the optimal tests, so nothing is lost by this restriction.

**Multiple comparisons.**  Choosing the best of many thresholds on the same
samples that are then used to bound the probabilities would overstate ε.
:func:`epsilon_lower_bound` therefore splits the runs: the first half of each
sample *selects* (τ, side, direction) — the candidate with the largest
bound computed on that half — and the second half, untouched by the
selection, *evaluates* it.  When the candidate thresholds are fixed in
advance instead (``thresholds=``), all runs are used and the selection is
paid for by a union bound (Bonferroni) over the candidates.  The two one-sided
Clopper–Pearson bounds each hold with probability ≥ ``confidence``, so the
lower bound holds with probability ≥ 1 − 2(1 − ``confidence``) (90% at the
default 0.95) — for the pair of data sets audited.

Clopper–Pearson bounds are computed from the beta distribution
(``scipy.stats.beta``): lower = Beta⁻¹(α; k, n − k + 1), upper =
Beta⁻¹(1 − α; k + 1, n − k), exact (conservative) one-sided bounds for a
binomial proportion (Clopper & Pearson 1934).  SciPy is needed only here:
``pip install 'fasterm[audit]'``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import check_array, check_delta, check_scalar

__all__ = ["AuditResult", "clopper_pearson", "epsilon_lower_bound", "project"]


def _beta():
    try:
        from scipy.stats import beta
    except ImportError as exc:  # pragma: no cover - scipy is in the test extra
        raise ImportError("fasterm.audit needs scipy: pip install 'fasterm[audit]'") from exc
    return beta


def clopper_pearson(k, n, confidence=0.95):
    """One-sided Clopper–Pearson bounds (lower, upper) for k successes in n trials.

    ``lower`` is the bound with P(p ≥ lower) ≥ ``confidence`` and ``upper``
    the bound with P(p ≤ upper) ≥ ``confidence`` (each one-sided).  ``k`` may
    be an array (of the same ``n``); 0 and n give the exact edge values 0 and 1.
    """
    conf = check_scalar(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False,
                        high_inclusive=False)
    n = check_scalar(n, "n", low=1, integer=True)
    k = np.asarray(k)
    if k.dtype.kind not in "biuf":
        raise TypeError(f"k must be an integer or an array of integers, got {k.dtype}")
    k = k.astype(np.float64)
    if np.any((k < 0) | (k > n)) or np.any(k != np.floor(k)):
        raise ValueError("k must hold integers in [0, n]")
    beta = _beta()
    alpha = 1.0 - conf
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, beta.ppf(alpha, k, n - k + 1), 0.0)
        upper = np.where(k < n, beta.ppf(1.0 - alpha, k + 1, n - k), 1.0)
    if lower.ndim == 0:
        return float(lower), float(upper)
    return lower, upper


def project(outputs, direction):
    """Outputs (runs, d) reduced to one number per run: ⟨o, u⟩ with u = direction/‖direction‖.

    For a vector release, use the difference of the two expected outputs
    (e.g. the two data sets' non-private answers) as ``direction``.
    """
    out = check_array(outputs, "outputs", ndim=2)
    u = check_array(direction, "direction", ndim=1, dtype=np.float64, shape=(out.shape[1],))
    norm = float(np.linalg.norm(u))
    if not norm > 0.0:
        raise ValueError("direction must be non-zero")
    return out @ (u / norm)


@dataclass(frozen=True)
class AuditResult:
    """The lower bound on ε and how it was obtained.

    ``epsilon_lb``: the bound (−inf when the chosen set gives nothing);
    ``threshold``, ``side`` (">" or "<"), ``direction`` ("D/D'" means
    P[M(D) ∈ S] over P[M(D') ∈ S]); ``counts`` = (k_num, k_den, n) on the
    evaluation half; ``p_num_lower``/``p_den_upper`` the Clopper–Pearson
    bounds; ``confidence`` the joint confidence of the bound (1 − 2α).
    """

    epsilon_lb: float
    threshold: float
    side: str
    direction: str
    counts: tuple
    p_num_lower: float
    p_den_upper: float
    confidence: float


def _candidates(pooled_sorted: np.ndarray, n_thresholds: int) -> np.ndarray:
    # Thresholds midway between consecutive distinct output values, so that
    # {o > τ} and {o < τ} never split a tie (discrete outputs: indices,
    # counts).  With more distinct values than n_thresholds, those next to
    # ranks spaced geometrically from both ends: the tails, where the privacy
    # loss is largest, get most candidates.
    u = np.unique(pooled_sorted)
    if u.shape[0] < 2:
        return u[:0]
    if u.shape[0] - 1 <= n_thresholds:
        j = np.arange(u.shape[0] - 1)
    else:
        m = pooled_sorted.shape[0]
        half = max(2, n_thresholds // 2)
        g = np.geomspace(1, m, half)
        ranks = np.concatenate([g - 1, m - g]).astype(np.int64).clip(0, m - 1)
        j = np.searchsorted(u, pooled_sorted[ranks])  # u[j] == the value at that rank
        j = np.unique(np.concatenate([j, j - 1]).clip(0, u.shape[0] - 2))
    return 0.5 * u[j] + 0.5 * u[j + 1]


def _counts(sorted_a: np.ndarray, taus: np.ndarray):
    n = sorted_a.shape[0]
    above = n - np.searchsorted(sorted_a, taus, side="right")
    below = np.searchsorted(sorted_a, taus, side="left")
    return above, below


def _bounds(k_num, k_den, n, delta, confidence):
    lower, _ = clopper_pearson(k_num, n, confidence)
    _, upper = clopper_pearson(k_den, n, confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (np.asarray(lower) - delta) / np.asarray(upper)
        eps = np.where(ratio > 0, np.log(np.where(ratio > 0, ratio, 1.0)), -np.inf)
    return eps, lower, upper


_SIDES = (">", "<")
_DIRECTIONS = ("D/D'", "D'/D")


def epsilon_lower_bound(outputs_d, outputs_dprime, *, delta=0.0, confidence=0.95, n_thresholds=400,
                        thresholds=None, sides=_SIDES, directions=_DIRECTIONS) -> AuditResult:
    """A lower bound on ε from runs of a mechanism on two neighbouring data sets.

    ``outputs_d``, ``outputs_dprime``: 1-D arrays of scalar outputs (one per
    independent run; use :func:`project` for vectors), of equal length ≥ 4.
    ``delta``: the δ of the claim being audited.

    Rejection sets: {o > τ} / {o < τ} (``sides``) with D against D' or D'
    against D (``directions``).

    * ``thresholds=None`` (default): the candidates τ come from the data, so
      the first half of the runs selects the best (τ, side, direction) and the
      second half evaluates it (module docstring).
    * ``thresholds`` given (fixed before seeing the outputs, e.g. from the
      theory of the worst case): all runs evaluate every candidate, and each
      Clopper–Pearson bound is taken at level 1 − (1 − ``confidence``)/m for
      the m = len(thresholds)·len(sides)·len(directions) candidates (a union
      bound over the selection).  One pre-registered set costs nothing.

    Either way the returned ``epsilon_lb`` holds with probability ≥
    1 − 2(1 − ``confidence``) for the audited pair.
    """
    a = check_array(outputs_d, "outputs_d", ndim=1, dtype=np.float64)
    b = check_array(outputs_dprime, "outputs_dprime", ndim=1, dtype=np.float64, shape=(a.shape[0],))
    delta = check_delta(delta)
    conf = check_scalar(confidence, "confidence", low=0.5, high=1.0, high_inclusive=False)
    n_thresholds = check_scalar(n_thresholds, "n_thresholds", low=2, integer=True)
    for name, value in (("sides", sides), ("directions", directions)):
        if not isinstance(value, str) and not hasattr(value, "__iter__"):
            raise TypeError(f"{name} must be a tuple of strings, got {value!r}")
    # one string is one side/direction (not its characters)
    sides = (sides,) if isinstance(sides, str) else tuple(sides)
    directions = (directions,) if isinstance(directions, str) else tuple(directions)
    if not sides or not set(sides) <= set(_SIDES):
        raise ValueError(f"sides must be a non-empty subset of {_SIDES}, got {sides!r}")
    if not directions or not set(directions) <= set(_DIRECTIONS):
        raise ValueError(f"directions must be a non-empty subset of {_DIRECTIONS}, got {directions!r}")
    if a.shape[0] < 4:
        raise ValueError(f"need at least 4 runs per data set, got {a.shape[0]}")
    joint = 1.0 - 2.0 * (1.0 - conf)

    if thresholds is None:
        h = a.shape[0] // 2
        sel_a, sel_b = np.sort(a[:h]), np.sort(b[:h])
        ev_a, ev_b = np.sort(a[h:2 * h]), np.sort(b[h:2 * h])
        taus = _candidates(np.sort(np.concatenate([sel_a, sel_b])), n_thresholds)
        level = conf
    else:
        taus = check_array(thresholds, "thresholds", ndim=1, dtype=np.float64)
        h = a.shape[0]
        sel_a = ev_a = np.sort(a)
        sel_b = ev_b = np.sort(b)
        level = 1.0 - (1.0 - conf) / (taus.size * len(sides) * len(directions))
    if taus.size == 0:  # every output identical: no threshold separates anything
        return AuditResult(-math.inf, math.nan, ">", "D/D'", (0, 0, h), 0.0, 1.0, joint)

    above_a, below_a = _counts(sel_a, taus)
    above_b, below_b = _counts(sel_b, taus)
    count = {(">", "D/D'"): (above_a, above_b), ("<", "D/D'"): (below_a, below_b),
             (">", "D'/D"): (above_b, above_a), ("<", "D'/D"): (below_b, below_a)}
    best = None
    for side in sides:
        for direction in directions:
            k_num, k_den = count[side, direction]
            eps, _, _ = _bounds(k_num, k_den, h, delta, level)
            i = int(np.argmax(eps))
            if best is None or eps[i] > best[0]:
                best = (float(eps[i]), float(taus[i]), side, direction)
    _, tau, side, direction = best

    num, den = (ev_a, ev_b) if direction == "D/D'" else (ev_b, ev_a)
    t = np.array([tau])
    k_num = int(_counts(num, t)[0 if side == ">" else 1][0])
    k_den = int(_counts(den, t)[0 if side == ">" else 1][0])
    eps, lower, upper = _bounds(k_num, k_den, h, delta, level)
    return AuditResult(float(eps), tau, side, direction, (k_num, k_den, h), float(lower), float(upper), joint)
