"""Private learning with finite classes and statistical queries (Dwork & Roth §11.1).

**Finite classes.** :func:`private_pac_learner` picks a hypothesis from a
finite class C by the exponential mechanism with score = empirical error
err(f, S) = (1/n)·#{i : f(x_i) ≠ y_i}, which has sensitivity 1/n under
replace-one neighbours (one example changes at most one term).  It is
(ε, 0)-DP (Dwork–Roth Thm 3.10), and by the exponential mechanism's utility
theorem (Dwork–Roth Thm 3.11 with Δ = 1/n) with probability ≥ 1 − β the
chosen f satisfies err(f, S) ≤ OPT + 2(ln|C| + ln(1/β))/(εn).

**Statistical queries.**
A statistical query is a function φ: 𝒳 × {0, 1} → [0, 1]; the answer wanted is
E_{(x,y)}[φ(x, y)], estimated on the sample by the mean (1/n) Σ_i φ(x_i, y_i).
Under replace-one neighbours that mean has sensitivity 1/n, so the Laplace
mechanism answers it privately (Dwork–Roth Thm 3.6), and any learner that
touches the data only through such queries (an SQ learner, Definition 11.5)
becomes private by answering them this way.
"""

from __future__ import annotations

import math

import numpy as np

from . import accounting, mechanisms, noise
from .accounting import BudgetExceededError
from ._validation import (check_array, check_delta, check_derived, check_epsilon, check_random_state, check_scalar,
                          derived_from)

__all__ = ["SQOracle", "pac_learner_bound", "private_pac_learner", "private_pac_learner_from_callables"]


class SQOracle:
    """Answers up to ``max_queries`` statistical queries on (X, y) with Laplace noise.

    Parameters
    ----------
    X : (n, d) array of examples; y : (n,) labels (in {0, 1} in the SQ model;
        passed to φ as given).
    epsilon, delta : the total budget for all ``max_queries`` answers.
    max_queries : int ≥ 1, m — query m + 1 is refused.
    random_state : None, int or numpy.random.Generator.

    Notes
    -----
    ``query(phi)`` calls ``phi(X, y)``, which must return n values (or a
    scalar, broadcast), one per example.  Values are clipped to [0, 1] (NaN
    counts as 0, +inf as 1): φ is then a statistical query whatever the data,
    and no value is ever rejected — an error that depended on the data would
    itself leak it.  The answer is

        (1/n) Σ_i clip(φ(x_i, y_i)) + Lap(b),   b = 1/(n ε₀),

    which is ε₀-DP (sensitivity 1/n under replace-one neighbours; Laplace
    mechanism).  ε₀ comes from the total budget over m adaptive queries:

    * δ = 0: basic composition, ε₀ = ε/m;
    * δ > 0: the larger of ε/m and the ε₀ solving
      √(2m ln(1/δ))·ε₀ + mε₀(e^{ε₀} − 1) = ε (advanced composition,
      Dwork–Roth Thm 3.20 with δ' = δ) — whichever theorem allows the larger
      ε₀, i.e. the smaller noise.

    :attr:`epsilon_per_query`, :attr:`noise_scale` and :attr:`composition`
    record the derivation; :attr:`spent` the guarantee of the answers given so
    far.
    """

    def __init__(self, X: np.typing.ArrayLike, y: np.typing.ArrayLike, epsilon: float, delta: float = 0.0, *, max_queries: int,
                 random_state: None | int | np.random.Generator = None) -> None:
        X = check_array(X, "X", ndim=2)
        y = check_array(y, "y", ndim=1)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
        eps = check_epsilon(epsilon)
        delta = check_delta(delta)
        m = check_scalar(max_queries, "max_queries", low=1, integer=True)
        self._X, self._y = X, y
        self._n = X.shape[0]
        self.epsilon, self.delta, self.max_queries = eps, delta, m
        self._rng = check_random_state(random_state)

        with derived_from("epsilon, delta and max_queries"):
            eps0, self.composition = accounting.pure_share(eps, delta, m)
        self.epsilon_per_query = eps0
        # b = 1/(n ε₀) must leave room for the Laplace draws (< 64 b, fasterm.noise).
        self.noise_scale = 1.0 / (self._n * eps0) if eps0 > 0 else math.inf
        check_derived(64.0 * self.noise_scale, "64 x the noise scale", "epsilon and max_queries")
        self.queries_answered = 0

    @property
    def n(self) -> int:
        return self._n

    @property
    def queries_remaining(self) -> int:
        return self.max_queries - self.queries_answered

    @property
    def spent(self) -> tuple[float, float]:
        """(ε, δ) guaranteed for the q answers given so far: basic (qε₀, 0), or
        under advanced composition (√(2q ln(1/δ))ε₀ + qε₀(e^{ε₀} − 1), δ) if
        that is smaller."""
        q = self.queries_answered
        if q == 0 or self.composition == "basic":
            return q * self.epsilon_per_query, 0.0
        return accounting.compose_pure(self.epsilon_per_query, q, self.delta)[:2]

    def query(self, phi) -> float:
        """The noisy mean of clip(phi(X, y), 0, 1); refuses beyond ``max_queries``."""
        if not callable(phi):
            raise TypeError(f"phi must be callable, got {type(phi).__name__}")
        if self.queries_answered >= self.max_queries:
            raise BudgetExceededError(
                f"SQOracle: all max_queries={self.max_queries} queries have been answered; "
                f"query {self.max_queries + 1} is refused"
            )
        values = np.asarray(phi(self._X, self._y), dtype=np.float64)
        try:
            values = np.broadcast_to(values, (self._n,))
        except ValueError:
            raise ValueError(
                f"phi must return one value per example ({self._n}), got shape {values.shape}"
            ) from None
        values = np.clip(np.nan_to_num(values, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
        mean = float(values.sum()) / self._n
        answer = mean + float(noise.laplace(1, self.noise_scale, random_state=self._rng)[0])
        self.queries_answered += 1
        return answer


def pac_learner_bound(n_hypotheses, n, epsilon, beta) -> float:
    """2(ln|C| + ln(1/β))/(εn): the excess empirical error of
    :func:`private_pac_learner` over the best hypothesis, exceeded with
    probability at most β (Dwork–Roth Thm 3.11 with sensitivity 1/n)."""
    k = check_scalar(n_hypotheses, "n_hypotheses", low=1, integer=True)
    n = check_scalar(n, "n", low=1, integer=True)
    eps = check_epsilon(epsilon)
    beta = check_scalar(beta, "beta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    return 2.0 * (np.log(k) + np.log(1.0 / beta)) / (eps * n)


def private_pac_learner(predictions, y, epsilon, random_state=None) -> int:
    """Index of a hypothesis chosen privately from a finite class.

    ``predictions`` is the |C| × n matrix of the hypotheses' labels on the n
    examples (row j = f_j(x_1), …, f_j(x_n)); ``y`` the n true labels, in the
    same encoding (compared for equality).  The empirical errors
    err_j = (1/n)·#{i : predictions[j, i] ≠ y_i} are the scores of the
    exponential mechanism with sensitivity 1/n: (ε, 0)-DP under replace-one
    neighbours on the examples (Dwork–Roth Thm 3.10), and with probability
    ≥ 1 − β the error of the chosen hypothesis is within
    :func:`pac_learner_bound` of the best one's.  The class itself (the
    matrix's rows, as functions of x) must not depend on the labels.
    """
    P = check_array(predictions, "predictions", ndim=2)
    y = check_array(y, "y", ndim=1, dtype=P.dtype)
    if y.shape[0] != P.shape[1]:
        raise ValueError(f"y has {y.shape[0]} labels but predictions has {P.shape[1]} columns")
    eps = check_epsilon(epsilon)
    rng = check_random_state(random_state)
    n = y.shape[0]
    errors = np.count_nonzero(P != y[None, :], axis=1) / n
    return mechanisms.exponential(errors, 1.0 / n, eps, random_state=rng)


def private_pac_learner_from_callables(hypotheses: list, X: np.typing.ArrayLike, y: np.typing.ArrayLike, epsilon: float,
                                       random_state: None | int | np.random.Generator = None) -> int:
    """:func:`private_pac_learner` over a list of callables f(X) -> labels.

    Returns ``(index, hypothesis)``.  Each f is applied to the whole X (n rows)
    and must return n labels.
    """
    try:
        hyps = list(hypotheses)
    except TypeError:
        raise TypeError(f"hypotheses must be a non-empty sequence of callables, got {type(hypotheses).__name__}") \
            from None
    if not hyps or not all(callable(f) for f in hyps):
        raise TypeError("hypotheses must be a non-empty sequence of callables")
    X = np.asarray(X)
    if X.ndim == 0 or X.shape[0] == 0:
        raise ValueError("X must hold at least one example")
    preds = np.empty((len(hyps), X.shape[0]), dtype=np.float64)
    for j, f in enumerate(hyps):
        out = np.asarray(f(X), dtype=np.float64).reshape(-1)
        if out.shape[0] != X.shape[0]:
            raise ValueError(f"hypothesis {j} returned {out.shape[0]} labels for {X.shape[0]} examples")
        preds[j] = out
    idx = private_pac_learner(preds, y, epsilon, random_state=random_state)
    return idx, hyps[idx]
