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

**One record at a time.**  Both bounds above need each term to depend on one
example only: a "query" such as ``y.max()`` or ``x > median(X)`` mixes
records, and one changed example can then move every term (sensitivity up to
1, not 1/n).  So :class:`SQOracle` and :func:`private_pac_learner_from_callables`
never hand the caller's function the whole sample: it is called once per
example, on that example alone (a one-row block ``X[i:i+1]``, and
``y[i:i+1]``, so that a function written for whole arrays works unchanged),
and must return one value.  This makes the per-record property hold by
construction for any *pure* function; what the API cannot see — a function
that keeps state between calls, reads the data from elsewhere, or signals
through exceptions or side effects — is outside every guarantee.  The price
is n Python calls per query (a few µs each for a numpy one-liner).
"""

from __future__ import annotations

import math

import numpy as np

import fasterm.accounting as accounting
import fasterm.mechanisms as mechanisms
import fasterm.mechanisms.noise as noise
import fasterm.mechanisms.secure as _secure
from ..accounting import BudgetExceededError
import fasterm._warnings as _warnings
from .._validation import (check_array, check_delta, check_derived, check_epsilon, check_random_state, check_scalar,
                          derived_from)


def _per_example(f, arrays, n, what):
    """``out[i] = f(*(a[i:i+1] for a in arrays))`` as float64: f sees one example per call.

    Each call must return one number (a scalar or a one-element array);
    anything else raises ``ValueError`` naming ``what`` (a fixed property of f,
    not of the data).  Values are not otherwise checked here.
    """
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        v = f(*(a[i:i + 1] for a in arrays))
        if type(v) is not float:
            try:
                v = np.asarray(v, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"{what} must return a real number per example, got {type(v).__name__}") from None
            if v.size != 1:
                raise ValueError(f"{what} must return one value per example (it is called on one example "
                                 f"at a time, as a 1-row block), got shape {v.shape}")
            v = v.reshape(-1)[0]
        out[i] = v
    return out

__all__ = ["SQOracle", "pac_learner_bound", "private_pac_learner", "private_pac_learner_from_callables"]


class SQOracle:
    """Answers up to ``max_queries`` statistical queries on (X, y) with Laplace noise.

    Parameters
    ----------
    X : (n, d) array of examples; y : (n,) labels (in {0, 1} in the SQ model;
        passed to φ as given).
    epsilon, delta : the total budget for all ``max_queries`` answers.
    max_queries : int ≥ 1, m — query m + 1 is refused.
    random_state : None, int or numpy.random.Generator (secure mode: also
        ``"os"``, operating-system entropy).
    secure : None (the :func:`fasterm.secure_mode` setting when the oracle
        is created), True or False; keyword only.

    Notes
    -----
    ``query(phi)`` calls φ once per example, on that example alone:
    ``phi(X[i:i+1], y[i:i+1])``, a one-row block and one label, which must
    give one value (a scalar or a one-element array; anything else raises
    ``ValueError``).  A φ written for whole arrays, e.g.
    ``lambda X, y: (X[:, 0] > 0) == (y == 1)``, works unchanged; one that
    mixes examples (``y.max()``) becomes its per-example version (y_i) — the
    only way the 1/n sensitivity below holds by construction (module
    docstring).  Values are clipped to [0, 1] (NaN counts as 0, +inf as 1):
    φ is then a statistical query whatever the data, and no value is ever
    rejected — an error that depended on the data would itself leak it.  The
    answer is

        (1/n) Σ_i clip(φ(x_i, y_i)) + Lap(b),   b = 1/(n ε₀),

    which is ε₀-DP (sensitivity 1/n under replace-one neighbours; Laplace
    mechanism).  Secure mode answers with the secure Laplace mechanism
    instead (:func:`fasterm.mechanisms.laplace` with ``secure=True``: the mean
    rounded to a power-of-two grid plus exact discrete Laplace noise,
    (ε₀, 0)-DP with the rounding accounted, :mod:`fasterm.mechanisms.secure`); then
    :attr:`noise_scale` is the discrete noise's scale in data units and
    :attr:`epsilon_per_query` the ε it spends (≤ ε₀).  An oracle created
    outside secure mode (``secure=None``) refuses to answer inside a
    :func:`fasterm.secure_mode` block rather than use its float sampler.
    ε₀ comes from the total budget over m adaptive queries:

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
                 random_state: None | int | np.random.Generator | str = None, secure: bool | None = None) -> None:
        X = check_array(X, "X", ndim=2)
        y = check_array(y, "y", ndim=1)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
        eps = check_epsilon(epsilon)
        delta = check_delta(delta)
        m = check_scalar(max_queries, "max_queries", low=1, integer=True)
        _warnings.warn_large_delta(delta, X.shape[0], "SQOracle")
        self._X, self._y = X, y
        self._n = X.shape[0]
        self.epsilon, self.delta, self.max_queries = eps, delta, m
        self._secure_arg = secure
        self.secure = _secure.resolve(secure)
        self._rng = _secure.secure_rng(random_state) if self.secure else check_random_state(random_state)

        with derived_from("epsilon, delta and max_queries"):
            eps0, self.composition = accounting.pure_share(eps, delta, m)
        self.epsilon_per_query = eps0
        self._cal = None
        if self.secure:
            # Δ₁ = 1/n rounded up: the grid calibration takes it as an exact rational.
            with derived_from("epsilon and max_queries"):
                self._cal = _secure.laplace_calibration(math.nextafter(1.0 / self._n, math.inf), eps0, 1)
            self.epsilon_per_query = self._cal.epsilon
            self.noise_scale = self._cal.noise_scale
        else:
            # b = 1/(n ε₀) must leave room for the Laplace draws (< 64 b, fasterm.mechanisms.noise).
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
        """The noisy mean of clip(phi(x_i, y_i), 0, 1), φ called on one example at a time
        (class docstring); refuses beyond ``max_queries``."""
        if not callable(phi):
            raise TypeError(f"phi must be callable, got {type(phi).__name__}")
        if self.queries_answered >= self.max_queries:
            raise BudgetExceededError(
                f"SQOracle: all max_queries={self.max_queries} queries have been answered; "
                f"query {self.max_queries + 1} is refused"
            )
        if not self.secure and self._secure_arg is None and _secure.is_secure():
            raise ValueError("this SQOracle was created outside secure mode and secure mode is now on "
                             "(fasterm.secure_mode / fasterm.set_secure): create the oracle inside the "
                             "secure_mode block, or with secure=True, for secure answers")
        values = _per_example(phi, (self._X, self._y), self._n, "phi")
        values = np.clip(np.nan_to_num(values, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
        mean = float(values.sum()) / self._n
        if self._cal is not None:
            answer = float(_secure.release(np.array([mean]), self._cal.granularity, self._cal.params,
                                           self._rng)[0])
        else:
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

    Returns ``(index, hypothesis)``.  Each f is applied to one example at a
    time, ``f(X[i:i+1])`` (a one-row block, so a function written for whole
    arrays works unchanged), and must return one label: a hypothesis is a
    function of x, and applied to the whole X it could mix examples (e.g.
    ``x > median(X)``), so that one changed example moves many errors and the
    1/n sensitivity behind the guarantee fails (module docstring).  Costs
    |C|·n calls.
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
        preds[j] = _per_example(f, (X,), X.shape[0], f"hypothesis {j}")
    idx = private_pac_learner(preds, y, epsilon, random_state=random_state)
    return idx, hyps[idx]
