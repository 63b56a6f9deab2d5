"""Online learning from expert advice, non-private and private (Dwork & Roth §11.2–11.3).

k experts; in round t the learner plays an expert a_t, then sees the loss
vector ℓ^t and pays ℓ^t_{a_t}.  **Randomized weighted majority** RWM(η)
(multiplicative weights, Hedge; Dwork–Roth Algorithms 15/16) plays expert i
with probability proportional to exp(−η Σ_{j<t} ℓ^j_i).

**Theorem 11.1** (Dwork–Roth).  For losses in [0, 1] and any loss sequence of
length T fixed in advance,

    E[Regret] = E[(1/T) Σ_t ℓ^t_{a_t}] − min_i (1/T) Σ_t ℓ^t_i ≤ η + ln k/(ηT),

2√(ln k/T) at η = √(ln k/T).  For losses in [lo, hi] of width Δ = hi − lo,
RWM(η) on ℓ is RWM(ηΔ) on (ℓ − lo)/Δ ∈ [0, 1] (the distribution is invariant
to shifting all losses of a round), so E[Regret] ≤ ηΔ² + ln k/(ηT)
(:func:`regret_bound`).

**Privacy** (Theorems 11.2/11.3, derived in :class:`PrivateRWM`): each round
is an exponential mechanism, so RWM with a small enough η is differentially
private *without modification*.

Implementation (``fasterm.learning._online``, ``src/cpp/fasterm/online.hpp``): the
state is kept in log space — cumulative losses re-centred on their minimum
every round, so weights exp(−η(L_i − min L)) lie in (0, 1] with the best one
≈ 1, and nothing under- or overflows however long the run or large η is.  A
draw uses exactly **one** uniform, ``next_double`` of the Generator's bit
generator (the value ``Generator.random()`` would return), inverted over the
cumulative weights.  "The same seed" therefore means: the same Generator state
before the first round; a run of T rounds consumes exactly T doubles, and the
streaming object (``choose``/``update`` alternated) and the batch functions
call the same compiled functions, so they produce the same actions and leave
the Generator in the same state.  Weights are exact to ~1e-14 relative (see
the header for the incremental update and its periodic exact recomputation).

Floating point: like every textbook implementation, the sampler uses
floating-point weights and a 53-bit uniform, so probabilities below ~2^-53 are
not reproduced exactly; the privacy statements are for the exact-arithmetic
mechanism (the same caveat as :mod:`fasterm.mechanisms.noise`).  There is no secure
mode: under :func:`fasterm.secure_mode` / :func:`fasterm.set_secure` every
learner here raises ``ValueError`` instead of drawing (:mod:`fasterm.mechanisms.secure`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import fasterm.learning._online as _online  # compiled (src/fasterm/learning/_online.pyx)
import fasterm.accounting as accounting
from ..accounting import BudgetExceededError
from ..mechanisms.secure import check_not_secure
from .._validation import (
    check_array,
    check_delta,
    check_derived,
    check_epsilon,
    check_positive,
    check_random_state,
    check_scalar,
    derived_from,
)

__all__ = [
    "LinearLearnerResult",
    "PrivateRWM",
    "PrivateRWMRun",
    "RWM",
    "RWMCalibration",
    "RWMRun",
    "calibrate_eta",
    "linear_learner",
    "regret_bound",
    "run_rwm",
]

_CALIBRATIONS = ("exact", "closed_form")


# ---------------------------------------------------------------------------
# Bounds and calibration
# ---------------------------------------------------------------------------
def regret_bound(eta, n_experts, rounds, loss_range=(0.0, 1.0)) -> float:
    """Theorem 11.1's bound on E[Regret] of RWM(η), rescaled to the loss range.

    η + ln k/(ηT) for losses in [0, 1]; ηΔ² + ln k/(ηT) for losses in an
    interval of width Δ (see the module docstring).
    """
    eta = check_positive(eta, "eta")
    k = check_scalar(n_experts, "n_experts", low=1, integer=True)
    T = check_scalar(rounds, "rounds", low=1, integer=True)
    lo, hi = _check_loss_range(loss_range)
    width = hi - lo
    return eta * width * width + math.log(k) / (eta * T)


def _run_batch(state, rng, L: np.ndarray, eta: float) -> "RWMRun":
    """One compiled pass of RWM over the rows of L, from ``state`` and ``rng``.

    The non-finite check happens inside the kernel's single pass (a separate
    pass costs as much as the run); on failure the learner's state and the
    Generator are restored, so the effect is that of checking first.
    """
    T = L.shape[0]
    actions = np.empty(T, dtype=np.int64)
    incurred = np.empty(T, dtype=np.float64)
    before = state.cumulative_losses
    snap = state.snapshot()
    bit_generator = rng.bit_generator
    rng_state = bit_generator.state
    if state.run(bit_generator, L, actions, incurred, None) < 0:
        state.restore(snap)
        bit_generator.state = rng_state
        raise ValueError("loss_matrix must contain only finite values (found NaN or inf)")
    expert_losses = state.cumulative_losses - before
    if not np.isfinite(expert_losses).all():  # finite losses whose sums overflow a double
        state.restore(snap)
        bit_generator.state = rng_state
        raise ValueError("loss_matrix: the cumulative losses overflow a double (losses near 1e308)")
    return RWMRun(actions, incurred, expert_losses, eta)


@dataclass(frozen=True)
class RWMCalibration:
    """How η was chosen for (ε, δ) over T rounds.

    ``epsilon_round`` = ε₀ = 2ηΔℓ, the privacy of one round; ``composition`` is
    ``"basic"`` (T rounds are (Tε₀, 0)-DP) or ``"advanced"`` (Dwork–Roth
    Thm 3.20 with δ' = δ); ``epsilon``/``delta`` the guarantee actually
    obtained (≤ the requested ε; δ = 0 under basic composition).
    """

    eta: float
    epsilon_round: float
    composition: str
    epsilon: float
    delta: float
    rounds: int
    loss_sensitivity: float
    calibration: str


def calibrate_eta(epsilon, delta, rounds, loss_sensitivity=1.0, calibration="exact") -> RWMCalibration:
    """η for RWM over T rounds to be (ε, δ)-DP when one round's loss vector may change.

    One round is ε₀-DP with ε₀ = 2ηΔℓ (:class:`PrivateRWM`), and the T rounds
    compose.  ``calibration``:

    * ``"exact"``: the largest ε₀ for which basic composition (Tε₀ ≤ ε) or
      advanced composition (√(2T ln(1/δ))·ε₀ + Tε₀(e^{ε₀} − 1) ≤ ε, Dwork–Roth
      Thm 3.20 with δ' = δ)
      holds — whichever allows the larger ε₀, hence the smaller regret bound
      (:func:`fasterm.accounting.pure_share`); η = ε₀/(2Δℓ).  δ = 0 uses basic composition only.
    * ``"closed_form"``: the notes' Theorem 11.2, ε₀ = ε/√(8T ln(1/δ)), i.e.
      η = ε/√(32T ln(1/δ)) for Δℓ = 1; for other Δℓ this means
      η = ε₀/(2Δℓ) (the same per-round ε₀).  The notes' step "ε₀ =
      ε/√(8T ln(1/δ)) suffices" drops the term Tε₀(e^{ε₀} − 1); we check the
      exact formula and refuse (ValueError) the rare parameters where it
      fails.  Needs δ > 0.
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    T = check_scalar(rounds, "rounds", low=1, integer=True)
    sens = check_positive(loss_sensitivity, "loss_sensitivity")
    if calibration not in _CALIBRATIONS:
        raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}")
    if calibration == "closed_form":
        if delta == 0.0:
            raise ValueError("delta must be > 0 for calibration='closed_form' (Theorem 11.2)")
        eps0 = eps / math.sqrt(8.0 * T * -math.log(delta))
        spent, spent_delta, how = accounting.compose_pure(eps0, T, delta)
        if spent > eps:
            raise ValueError(
                f"calibration='closed_form' is not (epsilon={eps}, delta={delta})-DP for rounds={T}: "
                f"exact composition gives epsilon={spent}; use calibration='exact'"
            )
    else:
        with derived_from("epsilon, delta and rounds"):
            eps0 = accounting.pure_share(eps, delta, T)[0]
        spent, spent_delta, how = accounting.compose_pure(eps0, T, delta)
    check_derived(eps0 / (2.0 * sens), "eta", "epsilon, rounds and loss_sensitivity")
    return RWMCalibration(
        eta=eps0 / (2.0 * sens),
        epsilon_round=eps0,
        composition=how,
        epsilon=spent,
        delta=spent_delta,
        rounds=T,
        loss_sensitivity=sens,
        calibration=calibration,
    )


# ---------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------
def _check_loss_range(loss_range) -> tuple[float, float]:
    try:
        lo, hi = loss_range
    except (TypeError, ValueError):
        raise TypeError(f"loss_range must be a pair (low, high), got {loss_range!r}") from None
    lo = check_scalar(lo, "loss_range[0]")
    hi = check_scalar(hi, "loss_range[1]")
    if not lo < hi:
        raise ValueError(f"loss_range must have low < high, got ({lo}, {hi})")
    if not math.isfinite(hi - lo):
        raise ValueError(f"loss_range: the width high - low overflows, got ({lo}, {hi})")
    return lo, hi


def _check_losses(losses, k: int) -> np.ndarray:
    return check_array(losses, "losses", ndim=1, dtype=np.float64, shape=(k,))


def _check_loss_matrix(loss_matrix, k: int | None, name: str = "loss_matrix") -> np.ndarray:
    # Finiteness is checked inside the kernel's single pass (a separate pass
    # over a large matrix would cost as much as the run); a failed run is
    # rolled back, so the effect is that of checking first.
    L = check_array(loss_matrix, name, ndim=2, finite=False, allow_empty=True)
    if k is not None and L.shape[1] != k:
        raise ValueError(f"{name} has {L.shape[1]} columns; expected one per expert ({k})")
    if L.shape[1] == 0:
        raise ValueError(f"{name} must have at least one column (expert)")
    return L


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------
@dataclass
class RWMRun:
    """What a batch run returns.

    Attributes
    ----------
    actions : int64 array (T,), the expert played in each round.
    losses : float64 array (T,), the loss paid in each round (after clipping
        to the learner's loss range, if it has one).
    expert_losses : float64 array (k,), each expert's total loss over these
        rounds (clipped likewise).
    eta : the learning rate.
    """

    actions: np.ndarray
    losses: np.ndarray
    expert_losses: np.ndarray
    eta: float

    @property
    def rounds(self) -> int:
        return int(self.actions.shape[0])

    @property
    def regret(self) -> float:
        """(1/T) Σ_t ℓ^t_{a_t} − min_i (1/T) Σ_t ℓ^t_i: the realised regret."""
        T = max(self.rounds, 1)
        return (float(self.losses.sum()) - float(self.expert_losses.min())) / T


@dataclass
class PrivateRWMRun:
    """What :meth:`PrivateRWM.run` returns: the actions, its private output, and public η.

    Attributes
    ----------
    actions : int64 array (T,), the expert played in each round — the
        (ε, δ)-DP output of the learner.
    eta : the calibrated learning rate; loss_range : the declared (lo, hi).

    Nothing computed from the losses is stored (docs/guarantees.rst, "The
    release surface"): the losses paid and the regret are functions of the
    data, so they are not part of the release.  The caller, who holds the
    losses, computes them with :meth:`evaluate_nonprivate`.
    """

    actions: np.ndarray
    eta: float
    loss_range: tuple[float, float]

    @property
    def rounds(self) -> int:
        return int(self.actions.shape[0])

    def evaluate_nonprivate(self, loss_matrix) -> RWMRun:
        """NOT PRIVATE: these actions' losses on ``loss_matrix`` (clipped to ``loss_range``), as an
        :class:`RWMRun` with its realised ``regret`` — a function of the caller's data, for the
        caller's own evaluation, never a release."""
        L = check_array(loss_matrix, "loss_matrix", ndim=2, dtype=np.float64)
        if L.shape[0] != self.rounds:
            raise ValueError(f"loss_matrix has {L.shape[0]} rows but the run has {self.rounds} actions")
        if L.shape[1] <= int(self.actions.max(initial=0)):
            raise ValueError(f"loss_matrix has {L.shape[1]} columns, fewer than the experts played")
        L = np.clip(L, *self.loss_range)
        incurred = L[np.arange(self.rounds), self.actions]
        return RWMRun(self.actions.copy(), incurred, L.sum(axis=0), self.eta)


# ---------------------------------------------------------------------------
# The learners
# ---------------------------------------------------------------------------
class RWM:
    """Randomized weighted majority, streaming: ``choose()``, then ``update(losses)``.

    Parameters
    ----------
    n_experts : int ≥ 1
    eta : float > 0, the learning rate (Theorem 11.1: η = √(ln k/T) for T rounds
        of losses in [0, 1]).
    random_state : None, int or numpy.random.Generator (whose state advances).

    Notes
    -----
    ``choose()`` before any ``update`` plays uniformly.  Each ``choose()`` draws
    a fresh action with one uniform; ``update`` takes one loss vector of
    length k (finite reals, any range).  :meth:`run` plays a whole loss matrix
    in compiled code, exactly as alternating ``choose``/``update`` would.
    Not thread-safe.
    """

    _lo = -math.inf
    _hi = math.inf

    def __init__(self, n_experts: int, eta: float, random_state: None | int | np.random.Generator = None) -> None:
        check_not_secure("fasterm.online.RWM")
        k = check_scalar(n_experts, "n_experts", low=1, integer=True)
        eta = check_positive(eta, "eta")
        self._rng = check_random_state(random_state)
        self._state = _online.RWMState(k, eta, self._lo, self._hi)
        self._k = k
        self._eta = eta
        self._rounds = 0

    @property
    def n_experts(self) -> int:
        return self._k

    @property
    def eta(self) -> float:
        return self._eta

    @property
    def rounds_played(self) -> int:
        """Number of loss vectors seen so far."""
        return self._rounds

    @property
    def weights(self) -> np.ndarray:
        """The normalised probabilities the next ``choose()`` samples from (float64, sums to 1)."""
        return self._state.probabilities()

    @property
    def cumulative_losses(self) -> np.ndarray:
        """Σ_t ℓ^t_i for each expert so far."""
        return self._state.cumulative_losses

    def choose(self) -> int:
        """Draw an expert with probability ∝ exp(−η · its cumulative loss)."""
        check_not_secure("fasterm.online.RWM")
        return int(self._state.choose(self._rng.bit_generator))

    def update(self, losses) -> None:
        """Observe one round's loss vector (length ``n_experts``)."""
        loss = _check_losses(losses, self._k)
        if not self._state.update(loss):  # pragma: no cover - check_array rejects non-finite input
            raise ValueError("losses must contain only finite values")
        self._rounds += 1

    def run(self, loss_matrix) -> RWMRun:
        """Play one round per row of the (T, k) ``loss_matrix`` (float32 or float64).

        Equivalent to ``a = choose(); update(row)`` for each row, and the same
        draws.  A matrix with a NaN or an infinity raises ValueError and leaves
        the learner and its Generator untouched.
        """
        L = _check_loss_matrix(loss_matrix, self._k)
        return self._run(L)

    def _run(self, L: np.ndarray) -> RWMRun:
        check_not_secure("fasterm.online.RWM")
        result = _run_batch(self._state, self._rng, L, self._eta)
        self._rounds += L.shape[0]
        return result


def run_rwm(loss_matrix, eta, random_state=None) -> RWMRun:
    """RWM(η) over a (T, k) loss matrix in one compiled pass.

    Returns an :class:`RWMRun` (actions, the losses incurred, each expert's
    total loss).  Identical to ``RWM(k, eta, random_state)`` with ``choose()``
    and ``update(row)`` alternated, for the same seed (see the module
    docstring).  A float32 matrix is read as is, without a float64 copy (the
    learner's state is float64 either way).
    """
    L = _check_loss_matrix(loss_matrix, None)
    return RWM(L.shape[1], eta, random_state)._run(L)


class PrivateRWM:
    """RWM with η calibrated so that its T actions are (ε, δ)-differentially private.

    Parameters
    ----------
    n_experts : int ≥ 1
    rounds : int ≥ 1, T — the number of actions the guarantee covers;
        ``choose()`` refuses to draw more.
    epsilon, delta : the privacy budget (ε > 0, δ ∈ [0, 1)).
    loss_range : (lo, hi), the declared range of every loss.  Losses outside
        it are **clipped** to it, never rejected (see below).
    random_state : None, int or numpy.random.Generator.
    calibration : ``"exact"`` (default) or ``"closed_form"``
        (:func:`calibrate_eta`); keyword only.

    Notes
    -----
    **Neighbouring relation.**  The database is the loss sequence ℓ¹, …, ℓ^T,
    fixed in advance (an oblivious adversary, as in Dwork–Roth §11.2).  Two
    sequences are neighbours if they differ in the loss vector of **one**
    round t₀ — arbitrarily, within [lo, hi]^k.  The output is the sequence of
    actions a_1, …, a_T.

    **Claim.**  The actions are (ε, δ)-DP, with ε₀ = 2ηΔℓ per round,
    Δℓ = hi − lo, and η from :func:`calibrate_eta`.

    **Proof.**  Round t draws a_t from exp(−η q_t(i)) / Z_t with score
    q_t(i) = Σ_{j<t} ℓ^j_i: an exponential mechanism (the notes' rewriting of
    RWM as Algorithm 16).  For neighbours, q_t and q̂_t differ only for
    t > t₀ and then by c_i = ℓ^{t₀}_i − ℓ̂^{t₀}_i ∈ [−Δℓ, Δℓ] in each
    coordinate.  Hence for every i

        p_t(i)/p̂_t(i) = e^{−η c_i} · Σ_j e^{−η q̂_t(j)} / Σ_j e^{−η q̂_t(j) − η c_j}
                      ≤ e^{ηΔℓ} · e^{ηΔℓ} = e^{2ηΔℓ},

    so each round is (2ηΔℓ, 0)-DP (the notes: "ε = 2η" for losses in [0, 1],
    where the score's sensitivity is 1).  The T rounds compose adaptively:
    basic composition gives (Tε₀, 0), advanced composition (Dwork–Roth
    Thm 3.20, δ' = δ) gives (√(2T ln(1/δ))ε₀ + Tε₀(e^{ε₀} − 1), δ);
    :func:`calibrate_eta` takes the largest ε₀ for which one of them is at
    most ε.  Clipping each loss to [lo, hi] is a fixed per-coordinate map
    applied before the mechanism, so clipped neighbours are still neighbours
    within [lo, hi]^k and the claim holds for *any* input; rejecting
    out-of-range losses instead would make the error itself a data-dependent
    output that no ε covers.  (Non-finite losses lie outside the data domain
    and raise, like every fasterm input check.)

    Only the actions are covered: the weights and cumulative losses are
    functions of the data, and this class does not expose them.  Regret: Theorem 11.3 is
    Theorem 11.1 at the calibrated η, :attr:`regret_bound`.
    """

    def __init__(self, n_experts: int, rounds: int, epsilon: float, delta: float,
                 loss_range: tuple[float, float] = (0.0, 1.0), random_state: None | int | np.random.Generator = None, *,
                 calibration: str = "exact") -> None:
        check_not_secure("fasterm.online.PrivateRWM")
        k = check_scalar(n_experts, "n_experts", low=1, integer=True)
        T = check_scalar(rounds, "rounds", low=1, integer=True)
        lo, hi = _check_loss_range(loss_range)
        cal = calibrate_eta(epsilon, delta, T, loss_sensitivity=hi - lo, calibration=calibration)
        self._rng = check_random_state(random_state)
        self._state = _online.RWMState(k, cal.eta, lo, hi)
        self._k = k
        self._range = (lo, hi)
        self.calibration = cal
        self._chosen = 0

    # Public, data-independent facts ------------------------------------------
    @property
    def n_experts(self) -> int:
        return self._k

    @property
    def rounds(self) -> int:
        return self.calibration.rounds

    @property
    def eta(self) -> float:
        return self.calibration.eta

    @property
    def epsilon(self) -> float:
        """ε of the guarantee for all T actions (≤ the requested ε)."""
        return self.calibration.epsilon

    @property
    def delta(self) -> float:
        return self.calibration.delta

    @property
    def loss_range(self) -> tuple[float, float]:
        return self._range

    @property
    def rounds_remaining(self) -> int:
        return self.rounds - self._chosen

    @property
    def regret_bound(self) -> float:
        """Theorem 11.3: Theorem 11.1's ηΔ² + ln k/(ηT) at the calibrated η."""
        return regret_bound(self.eta, self._k, self.rounds, self._range)

    # Rounds -------------------------------------------------------------------
    def _spend(self, n: int) -> None:
        if n > self.rounds_remaining:
            raise BudgetExceededError(
                f"PrivateRWM was calibrated for rounds={self.rounds} actions; "
                f"{self._chosen} have been drawn and {n} more were requested"
            )

    def choose(self) -> int:
        """Draw this round's action; refuses beyond ``rounds`` draws."""
        check_not_secure("fasterm.online.PrivateRWM")
        self._spend(1)
        a = int(self._state.choose(self._rng.bit_generator))
        self._chosen += 1
        return a

    def update(self, losses) -> None:
        """Observe one loss vector; entries are clipped to ``loss_range``."""
        loss = _check_losses(losses, self._k)
        if not self._state.update(loss):  # pragma: no cover - check_array rejects non-finite input
            raise ValueError("losses must contain only finite values")

    def run(self, loss_matrix) -> PrivateRWMRun:
        """Play one round per row (choose, then update), compiled; counts against ``rounds``.

        Returns the actions (the private output) and η only,
        :class:`PrivateRWMRun`; the losses paid and the regret are functions of
        the data and are not part of the release
        (:meth:`PrivateRWMRun.evaluate_nonprivate` computes them from the
        caller's losses).
        """
        check_not_secure("fasterm.online.PrivateRWM")
        L = _check_loss_matrix(loss_matrix, self._k)
        T = L.shape[0]
        self._spend(T)
        result = _run_batch(self._state, self._rng, L, self.eta)
        self._chosen += T
        return PrivateRWMRun(result.actions, self.eta, self._range)


# ---------------------------------------------------------------------------
# Linear learner (Dwork–Roth Algorithm 17)
# ---------------------------------------------------------------------------
@dataclass
class LinearLearnerResult:
    """The output θ of the linear learner and what was calibrated.

    Attributes
    ----------
    w : float64 array (d,) on the simplex, θ = (1/T) Σ_t a_t (also ``theta``).
    epsilon, delta : the guarantee, over replace-one neighbours of S.
    eta, calibration : η and its :class:`RWMCalibration` (Δℓ = 2).
    rounds : T = n, one round per example.
    counts : int64 array (d,), how often each coordinate was played.
    """

    w: np.ndarray
    epsilon: float
    delta: float
    eta: float
    rounds: int
    calibration: RWMCalibration
    counts: np.ndarray = field(repr=False)

    @property
    def theta(self) -> np.ndarray:
        return self.w

    @property
    def regret_bound(self) -> float:
        """Theorem 11.1 for losses in [−1, 1]: 4η + ln d/(ηT)."""
        return regret_bound(self.eta, self.w.shape[0], self.rounds, (-1.0, 1.0))

    def risk_bound(self, beta) -> float:
        """Theorem 11.6 with explicit constants, for S drawn i.i.d. from a distribution 𝒟.

        With probability ≥ 1 − β (over S and the algorithm),

            E_{x∼𝒟}⟨θ, x⟩ − min_θ* E_{x∼𝒟}⟨θ*, x⟩ ≤ 4η + ln d/(ηT) + 3√(2 ln(3/β)/T),

        for the (clipped) distribution 𝒟.  Proof: with μ = E x and i* = argmin μ,
        ⟨θ, μ⟩ − μ_{i*} = A + B + C + E where
        A = (1/T)Σ⟨e_{a_t} − p_t, μ⟩ and B = (1/T)Σ⟨p_t, μ − x_t⟩ are averages
        of martingale differences lying in intervals of length ≤ 2
        (Azuma–Hoeffding: each ≤ √(2 ln(3/β)/T) except with probability β/3),
        C = (1/T)Σ⟨p_t, x_t⟩ − (1/T)Σ x_{t,i*} ≤ 4η + ln d/(ηT) for every
        realisation (Theorem 11.1 for losses in [−1, 1], applied to the fixed
        sequence x_1..x_T), and E = (1/T)Σ x_{t,i*} − μ_{i*} ≤ √(2 ln(3/β)/T)
        (Hoeffding) except with probability β/3.  The notes state the same
        result as O(√ln(1/δ) ln(d/β)/(ε√T)).
        """
        beta = check_scalar(beta, "beta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        return self.regret_bound + 3.0 * math.sqrt(2.0 * math.log(3.0 / beta) / self.rounds)


def linear_learner(S, epsilon, delta, random_state=None, *, calibration="exact") -> LinearLearnerResult:
    """Dwork–Roth Algorithm 17: a private linear function on the simplex, one pass over S.

    Experts are the basis vectors e_1..e_d; example t is the loss vector
    ℓ^t = x_t ∈ [−1, 1]^d (rows outside are **clipped** to [−1, 1], never
    rejected); RWM(η) runs one round per example and the output is
    θ = (1/T) Σ_t a_t, on the simplex.

    Privacy: neighbouring data sets S, S' differ in one example (replace-one,
    in the same position).  That changes one loss vector, each coordinate by
    at most **Δℓ = 2** (two points of [−1, 1]); θ is post-processing of the
    actions, so :class:`PrivateRWM`'s proof gives (ε, δ)-DP with
    η = ε₀/(2·2).  (The notes reuse η = ε/√(32T ln(1/δ)), the calibration
    for losses in [0, 1], whose Δℓ is 1; with losses in [−1, 1] that η would
    give ε₀ = 2ε/√(8T ln(1/δ)).  fasterm calibrates for Δℓ = 2.)  δ = 0 is
    allowed (basic composition).  ``calibration="closed_form"`` uses the
    notes' per-round ε₀ = ε/√(8T ln(1/δ)) with η = ε₀/4.

    Utility: :meth:`LinearLearnerResult.risk_bound` (Theorem 11.6).

    ``S``: (n, d) float32 or float64 array, n ≥ 1 rows.
    """
    check_not_secure("fasterm.online.linear_learner")
    X = check_array(S, "S", ndim=2, finite=False)
    T, d = X.shape
    cal = calibrate_eta(epsilon, delta, T, loss_sensitivity=2.0, calibration=calibration)
    rng = check_random_state(random_state)
    state = _online.RWMState(d, cal.eta, -1.0, 1.0)
    counts = np.zeros(d, dtype=np.int64)
    bit_generator = rng.bit_generator
    rng_state = bit_generator.state
    status = state.run(bit_generator, X, None, None, counts)
    if status < 0:
        bit_generator.state = rng_state
        raise ValueError("S must contain only finite values (found NaN or inf)")
    theta = counts / float(T)
    return LinearLearnerResult(
        w=theta, epsilon=cal.epsilon, delta=cal.delta, eta=cal.eta, rounds=T, calibration=cal, counts=counts
    )
