"""Composition theorems and the budget accountant (pure functions of public numbers).

* **Basic composition** (Dwork & Roth 2014, Thm 3.16): k mechanisms (ε_i, δ_i)-DP
  compose to (Σε_i, Σδ_i)-DP, adaptively.
* **Advanced composition** (Dwork & Roth, Thm 3.20; Dwork–Rothblum–Vadhan 2010):
  k adaptive (ε₀, δ₀)-DP mechanisms are
  (√(2k ln(1/δ')) ε₀ + k ε₀ (e^{ε₀} − 1), kδ₀ + δ')-DP for every δ' > 0.
* **Heterogeneous advanced composition** (the same proof with per-mechanism ε_i;
  Kairouz–Oh–Viswanath 2015, Stemmer lecture 10):
  (√(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e^{ε_i} − 1), Σδ_i + δ').

:func:`pure_share` and :func:`compose_pure` give the share of a budget per
mechanism when k pure mechanisms compose (behind ``PrivateRWM``,
``linear_learner`` and ``SQOracle``); :class:`BudgetAccountant` tracks spending
by basic composition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .._validation import check_delta, check_epsilon, check_positive, check_scalar, derived_from
from ._solve import _solve_increasing


# ---------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------
def _as_list(values, name):
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        return [values]
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"{name} must be a number or a sequence of numbers") from None


def basic_composition(epsilons, deltas=None) -> tuple[float, float]:
    """(Σε_i, Σδ_i): basic composition (Dwork–Roth Thm 3.16), valid adaptively.

    ``epsilons``/``deltas`` are sequences (or single numbers); ``deltas``
    defaults to all zeros.
    """
    eps = [check_scalar(e, "epsilons", low=0.0) for e in _as_list(epsilons, "epsilons")]
    if deltas is None:
        dels = [0.0] * len(eps)
    else:
        dels = [check_scalar(d, "deltas", low=0.0, high=1.0) for d in _as_list(deltas, "deltas")]
        if len(dels) != len(eps):
            raise ValueError(f"deltas has {len(dels)} entries but epsilons has {len(eps)}")
    with derived_from("epsilons"):
        total = math.fsum(eps)
    if not math.isfinite(total):
        raise ValueError(f"epsilons are outside the usable floating-point range: their sum is {total}")
    return total, min(1.0, math.fsum(dels))


def _advanced_eps(eps0: float, k: float, delta_prime: float) -> float:
    try:
        return math.sqrt(2.0 * k * -math.log(delta_prime)) * eps0 + k * eps0 * math.expm1(eps0)
    except OverflowError:  # e^{ε₀} beyond a double: the bound is vacuous
        return math.inf


def advanced_composition(epsilon, delta, k, delta_prime) -> tuple[float, float]:
    """k-fold adaptive composition of (ε₀, δ₀)-DP mechanisms (Dwork–Roth Thm 3.20).

    Returns (√(2k ln(1/δ')) ε₀ + k ε₀ (e^{ε₀} − 1), k δ₀ + δ').
    ``epsilon`` = ε₀ ≥ 0, ``delta`` = δ₀ ∈ [0, 1], ``k`` ≥ 1 an integer,
    ``delta_prime`` = δ' ∈ (0, 1).
    """
    eps0 = check_scalar(epsilon, "epsilon", low=0.0)
    d0 = check_scalar(delta, "delta", low=0.0, high=1.0)
    k = check_scalar(k, "k", low=1, integer=True)
    dp = check_scalar(delta_prime, "delta_prime", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    eps = _advanced_eps(eps0, k, dp)
    if not math.isfinite(eps):
        raise ValueError(f"epsilon={eps0} and k={k} are outside the usable floating-point range: "
                         "the composed epsilon overflows")
    return eps, min(1.0, k * d0 + dp)


def _heterogeneous_eps(eps_list, delta_prime: float) -> float:
    sq = math.fsum(e * e for e in eps_list)
    return math.sqrt(2.0 * -math.log(delta_prime) * sq) + math.fsum(e * math.expm1(e) for e in eps_list)


def heterogeneous_composition(epsilons, delta_prime, deltas=None) -> tuple[float, float]:
    """Adaptive composition of ε_i-DP mechanisms with different ε_i.

    (√(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e^{ε_i} − 1), Σ δ_i + δ') — the proof of
    Dwork–Roth Thm 3.20 with per-mechanism privacy losses (the privacy loss of
    mechanism i has mean ≤ ε_i (e^{ε_i} − 1) and range [−ε_i, ε_i]; Azuma).
    """
    eps = [check_scalar(e, "epsilons", low=0.0) for e in _as_list(epsilons, "epsilons")]
    dp = check_scalar(delta_prime, "delta_prime", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    if deltas is None:
        dsum = 0.0
    else:
        dels = [check_scalar(d, "deltas", low=0.0, high=1.0) for d in _as_list(deltas, "deltas")]
        if len(dels) != len(eps):
            raise ValueError(f"deltas has {len(dels)} entries but epsilons has {len(eps)}")
        dsum = math.fsum(dels)
    with derived_from("epsilons"):
        total = _heterogeneous_eps(eps, dp)
    if not math.isfinite(total):
        raise ValueError("epsilons are outside the usable floating-point range: the composed epsilon overflows")
    return total, min(1.0, dsum + dp)


def compose_pure(epsilon, k, delta) -> tuple[float, float, str]:
    """The better of basic and advanced composition of k adaptive ε₀-DP mechanisms.

    Returns ``(ε, δ, how)``: basic composition (Dwork–Roth Thm 3.16) gives
    (kε₀, 0); advanced composition (Thm 3.20 with δ' = δ) gives
    (√(2k ln(1/δ))ε₀ + kε₀(e^{ε₀} − 1), δ).  The smaller ε is returned, with
    ``how`` = ``"basic"`` or ``"advanced"``; δ = 0 allows only basic composition.
    """
    eps0 = check_scalar(epsilon, "epsilon", low=0.0)
    k = check_scalar(k, "k", low=1, integer=True)
    delta = check_delta(delta)
    basic = k * eps0
    adv = _advanced_eps(eps0, k, delta) if delta > 0.0 else math.inf
    if not math.isfinite(min(basic, adv)):
        raise ValueError(f"epsilon={eps0} and k={k} are outside the usable floating-point range: "
                         "the composed epsilon overflows")
    if basic <= adv:
        return basic, 0.0, "basic"
    return adv, delta, "advanced"


def _basic_share(eps: float, k: int) -> float:
    """The largest ε₀ with k·ε₀ ≤ ε in floating point (ε/k, or one ulp below)."""
    eps0 = eps / k
    while k * eps0 > eps:
        eps0 = math.nextafter(eps0, 0.0)
    return eps0


def pure_share(epsilon, delta, k) -> tuple[float, str]:
    """The largest ε₀ such that k adaptive ε₀-DP mechanisms are (ε, δ)-DP.

    The larger of the basic-composition share (kε₀ ≤ ε, Dwork–Roth Thm 3.16)
    and the root of √(2k ln(1/δ))·ε₀ + kε₀(e^{ε₀} − 1) = ε (advanced
    composition, Thm 3.20 with δ' = δ; δ > 0 only), taken on the side that
    keeps the composed ε ≤ ε.  Returns ``(ε₀, how)`` with ``how`` the theorem
    that allows it (``"advanced"`` only when it beats basic composition).
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_scalar(k, "k", low=1, integer=True)
    eps0, how = _basic_share(eps, k), "basic"
    if delta > 0.0:
        with derived_from("epsilon, delta and k"):
            adv = _solve_increasing(lambda e0: _advanced_eps(e0, k, delta), eps, 1e-3 * eps / k, eps)
        if adv > eps0:
            eps0, how = adv, "advanced"
    return eps0, how


# ---------------------------------------------------------------------------
# Budget accountant
# ---------------------------------------------------------------------------
class BudgetExceededError(ValueError):
    """A spend that would take the accountant past its total budget."""


@dataclass
class BudgetAccountant:
    """Tracks (ε, δ) spent under basic composition and refuses to overspend.

    ``spend(epsilon, delta)`` records a mechanism's cost, or raises
    :class:`BudgetExceededError` (a ValueError) and records nothing if the
    running totals Σε_i, Σδ_i (Dwork–Roth Thm 3.16, valid for adaptive use)
    would exceed the totals.  Sums are exact (``math.fsum``) and compared with a
    relative slack of 1e-12, so a budget split in ten spends of ε/10 fits.
    """

    epsilon: float
    delta: float = 0.0
    history: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        self.epsilon = check_positive(self.epsilon, "epsilon", allow_inf=True)
        self.delta = check_scalar(self.delta, "delta", low=0.0, high=1.0)

    @property
    def spent(self) -> tuple[float, float]:
        return (math.fsum(e for e, _, _ in self.history), math.fsum(d for _, d, _ in self.history))

    @property
    def remaining(self) -> tuple[float, float]:
        e, d = self.spent
        return (max(0.0, self.epsilon - e), max(0.0, self.delta - d))

    def check(self, epsilon, delta=0.0) -> bool:
        """Whether a spend of (ε, δ) would fit, without recording it."""
        eps = check_scalar(epsilon, "epsilon", low=0.0)
        dl = check_scalar(delta, "delta", low=0.0, high=1.0)
        e, d = self.spent
        fits_e = math.fsum([e, eps]) <= self.epsilon * (1.0 + 1e-12)
        fits_d = math.fsum([d, dl]) <= self.delta * (1.0 + 1e-12)
        return fits_e and fits_d

    def spend(self, epsilon, delta=0.0, label: str | None = None) -> None:
        """Record a spend, or raise BudgetExceededError and record nothing."""
        if not self.check(epsilon, delta):
            e, d = self.spent
            raise BudgetExceededError(
                f"spending (epsilon={float(epsilon)}, delta={float(delta)}) would exceed the budget "
                f"(epsilon={self.epsilon}, delta={self.delta}); already spent ({e}, {d})"
            )
        self.history.append((float(epsilon), float(delta), label))
