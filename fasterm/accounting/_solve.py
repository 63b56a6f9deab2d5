"""Monotone root finding for the calibrations: bisection in log space to (near)
machine precision, and rounding a noise scale up until its exact ε is within budget.
"""

from __future__ import annotations

import math


# ---------------------------------------------------------------------------
# Monotone root finding
# ---------------------------------------------------------------------------
def _solve_increasing(f, target: float, lo: float, hi: float, *, upper: bool = False) -> float:
    """The x in (lo, hi) with f(x) = target, f increasing; a bracketing solver in log x.

    The bracket [lo, hi] always keeps f(lo) ≤ target < f(hi) and shrinks
    until lo and hi are adjacent floats (or within 4 ulps).  Each step tries
    the false-position point in log x (Illinois variant: an endpoint kept
    twice has its distance to the target halved, so neither side stalls),
    and bisects in log x whenever the bracket failed to halve over the last
    two steps — so it never takes more steps than bisection's ~2·log2 of
    the bracket, and typically 15–30 evaluations instead of 60–120.
    Returns the largest evaluated x with f(x) ≤ target (``upper=False``:
    the side that keeps a privacy loss below its budget when f is the loss
    of a noise parameter x) or the smallest with f(x) > target
    (``upper=True``: the side that never under-reports a spent ε).  An f
    that overflows counts as +inf (e.g. e^ε for an absurd ε).
    """
    def g(x):
        try:
            return f(x)
        except OverflowError:
            return math.inf

    fhi = g(hi)
    while fhi <= target:
        hi *= 2.0
        if hi > 1e300:
            raise ArithmeticError("calibration did not bracket a root")
        fhi = g(hi)
    flo = g(lo)
    while flo > target:
        lo /= 2.0
        if lo < 1e-300:
            raise ArithmeticError("calibration did not bracket a root")
        flo = g(lo)
    # Effective endpoint values for the false-position step (Illinois halving).
    elo, ehi = flo - target, fhi - target
    last = None  # the endpoint the previous step replaced
    widths = [math.inf, math.inf]  # bracket widths (log x) one and two steps back
    for _ in range(400):
        width = math.log(hi / lo)
        x = math.sqrt(lo * hi)
        if not lo < x < hi or hi - lo <= 4.0 * math.ulp(lo):
            break
        if width <= 0.5 * widths[0] and math.isfinite(elo) and math.isfinite(ehi) and ehi > elo:
            t = -elo / (ehi - elo)
            xf = lo * math.exp(t * width)
            if lo < xf < hi:
                x = xf
        widths = [widths[1], width]
        fx = g(x)
        if fx <= target:
            lo, elo = x, fx - target
            if last == "lo":  # hi kept twice: halve its weight
                ehi *= 0.5
            last = "lo"
        else:
            hi, ehi = x, fx - target
            if last == "hi":
                elo *= 0.5
            last = "hi"
    return hi if upper else lo


def _round_scale_up(scale: float, eps_of_scale, epsilon: float) -> float:
    """Smallest float ≥ ``scale`` whose evaluated privacy loss is ≤ ε.

    A scale computed as Δ/ε (or from a solved root) can, once the loss is
    recomputed from it, overshoot ε by an ulp; stepping the scale up by ulps
    makes the reported ε never exceed the requested one.
    """
    for _ in range(1000):
        if eps_of_scale(scale) <= epsilon:
            return scale
        scale = math.nextafter(scale, math.inf)
    raise ArithmeticError("calibration could not meet the budget to rounding")  # pragma: no cover
