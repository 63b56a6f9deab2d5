"""The public estimators: ``DPLogisticRegression``, ``DPLinearSVC``, ``DPLinearRegression``.

Each is a thin subclass that fixes the loss and documents the parameters; the
privacy statement is the package docstring of :mod:`fasterm.linear_model`, the
rules behind every default are in :mod:`fasterm.linear_model._rules`
(docs/solvers.rst says why).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import Interval

import fasterm.linear_model._bounds as _bounds
import fasterm.linear_model._rules as _linear
import fasterm.linear_model._multiclass as _multiclass
import fasterm.erm._dask as _dask
from .._validation import labels_as
import fasterm._warnings as _warnings
from .._warnings import DataWarning
from ._base import _D, _DPLinearClassifier, _DPLinearModel, _PRIVATE_PARAMS
from ._checks import _warn_clipped_labels


def _labels_block(y, dtype, target):
    """Regression labels in X's dtype, mapped by the declared target bounds first (``target``: (c, h)
    of :func:`fasterm.linear_model._bounds.resolve_target`, or None)."""
    y = np.asarray(y) if target is None else _bounds.map_target(y, *target)
    return labels_as(y, dtype)


class DPLogisticRegression(_DPLinearClassifier):
    """Differentially private logistic regression: binary, or multinomial for K > 2 classes.

    Minimises the L2-regularised logistic loss (multinomial for K > 2 classes,
    :mod:`fasterm.linear_model._multiclass`) over the ball ‖(w, b/s)‖₂ ≤ ``radius``
    (Frobenius for K > 2), privately.  Privacy: :mod:`fasterm.linear_model` (theorems:
    docs/guarantees.rst); each parameter and the objective in full: docs/estimators.rst.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        Privacy budget ε (finite; Gaussian noise takes ε ≤ 10⁴).
    delta : float in [0, 1), default=1e-5
        Privacy budget δ, well below 1/n; ``delta=0`` is pure ε-DP.
    data_norm : float > 0, default=1.0
        Public bound X on ‖x‖₂; longer rows are clipped.
    radius : float > 0, default=50.0
        Public bound on ‖(coef, intercept/s)‖₂; sets the step size, not the noise.
    alpha : float >= 0, default=1e-4
        Data-independent L2 regularization α/2·‖w‖² (w includes the intercept).
    fit_intercept : bool, default=True
        Append the constant column s (the noise uses the augmented row norm).
    intercept_scaling : float > 0 or "auto", default="auto"
        s; "auto": 0.25, or 0.125 under objective perturbation (docs/pure.rst).
    solver : {"auto", "noisy_gd", "noisy_sgd", "noisy_pgd", "objpert", "objpert_threshold", "expmech"}, default="auto"
        The private algorithm (docs/solvers.rst).  "auto" reads n, the loss,
        the noise and the mode only (:mod:`fasterm.linear_model._rules`).
    noise : {"gaussian", "laplace"} or None, default=None
        Noise of the noisy gradient solvers; None: Gaussian for δ > 0, else Laplace.
    calibration : {"l2", "pure", "coordinate"} or None, default=None
        Laplace noise only (:func:`fasterm.noisy_pgd`); None is "l2".
    clip : float > 0, "auto" or None, default="auto"
        Per-example gradient clipping norm c; "auto": X_aug/(1 + e); None: none.
    steps : int >= 1 or None, default=None
        Number of gradient steps T; None: the solver's rule.
    max_steps : int >= 1 or None, default=None
        Compute budget for the default T of noisy_pgd (None: 100) and noisy_gd
        (None: 40; 20 below n = 1,000 binary Gaussian; 80 for K > 2 classes).
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise: None for a release; an int reproduces a fit.
    secure : bool or None, default=None
        Exact discrete noise (:mod:`fasterm.mechanisms.secure`); None follows secure_mode.
    weight_bound : float > 0, default=1.0
        Public bound B on ``sample_weight`` (mapped into [0, B]); the noise scales by B.
    classes : sequence of K ≥ 2 distinct labels or None, default=None
        The declared label set; a label outside it raises ``ValueError``.
        None: ``np.unique(y)`` (treated as public; a y of > 100 values, > n/2, is refused).
    bounds : None, (low, high), dict or "private", default=None
        Per-feature public bounds mapping rows into the unit ball (fit and predict);
        "private" spends half of (ε, δ) on private ranges (:mod:`fasterm.linear_model._bounds`).
    verbose : int >= 0 or bool, default=0
        ≥ 1: the steps done, on stderr (no data-dependent value; docs/performance.rst, "Long fits").

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features), or (K, n_features) for K > 2 classes
    intercept_ : ndarray of shape (1,), or (K,)
    classes_ : ndarray of shape (K,)
    n_features_in_ : int
    bounds_ : (ndarray, ndarray)
        The (low, high) used (private output for ``bounds="private"``).
    epsilon_, delta_ : float
        The privacy spent (≤ epsilon, delta), ``bounds="private"`` included.
    n_iter_ : int
        Gradient (or sampler) steps; objective perturbation: its public cap.
    result_ : fasterm.OptimizeResult or fasterm.erm.objpert.ObjPertResult
        What the optimiser calibrated: public constants, apart from the release.
    plan_ : fasterm.linear_model.FitPlan (every decision of the fit, public; :meth:`plan`)

    See Also
    --------
    fasterm.PrivateSearch : Tuning that counts the privacy; ``GridSearchCV`` and
        ``cross_val_score`` on private data spend privacy that nobody counts.

    Examples
    --------
    >>> from fasterm.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(scaled=True)
    >>> DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y).coef_.shape
    (1, 30)
    """

    _kind = "logistic"

    def predict_proba(self, X: np.typing.ArrayLike) -> np.ndarray:
        """[P(classes_[0]), P(classes_[1])] = [1 − σ(z), σ(z)] for the binary decision
        value z; for K > 2 classes softmax of the K scores (the multinomial model)."""
        z = self.decision_function(X)
        if z.ndim == 2:
            return softmax(z, axis=1)
        return np.column_stack([expit(-z), expit(z)])

    def predict_log_proba(self, X: np.typing.ArrayLike) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        return np.log(self.predict_proba(X))


class DPLinearSVC(_DPLinearClassifier):
    """Differentially private linear support vector classifier (hinge loss + L2).

    Minimises (1/n) Σ max(0, 1 − y_i(⟨w, x_i⟩ + b)) + α/2·‖(w, b/s)‖² over
    ‖(w, b/s)‖₂ ≤ ``radius`` privately; for K > 2 classes the Crammer–Singer
    multiclass hinge (1/n) Σ [max_k (z_k + [k ≠ y_i]) − z_{y_i}] of the scores
    z = Wᵀ(x_i, s), over the Frobenius ball (:mod:`fasterm.linear_model._multiclass`).

    Parameters
    ----------
    clip : float > 0, "auto" or None, default="auto"
        As for :class:`DPLogisticRegression`, except that "auto" is c = X_aug/2
        (clipped hinge gradients are scale-free, so the fit depends little on c).

    Other Parameters
    ----------------
    epsilon, delta, data_norm, radius, alpha, fit_intercept, intercept_scaling, solver, noise, calibration, steps, max_steps, random_state, secure, weight_bound, classes, bounds
        Those of :class:`DPLogisticRegression` (docs/estimators.rst).

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_, bounds_, epsilon_, delta_, n_iter_, result_, plan_
        Those of :class:`DPLogisticRegression` (no ``predict_proba``).

    See Also
    --------
    fasterm.PrivateSearch : Tuning that counts the privacy; ``GridSearchCV`` and
        ``cross_val_score`` on private data spend privacy that nobody counts.
    """

    _kind = "hinge"


class DPLinearRegression(RegressorMixin, _DPLinearModel):
    """Differentially private least-squares regression.

    Fits y ≈ ⟨w, x⟩ + b privately, with rows clipped to ‖x‖ ≤ ``data_norm`` and
    labels clipped to [−label_bound, label_bound].  The noisy gradient solvers
    (through ``solver="auto"``, the default for δ > 0) and objective perturbation
    (``"objpert"``, the default for δ = 0) minimise
    (1/n) Σ (y_i − ⟨w, x_i⟩ − b)² + α/2·‖(w, b/s)‖² over ‖(w, b/s)‖₂ ≤ R.

    Default rule (public quantities only; docs/solvers.rst, "Regression"): with
    Gaussian noise, X in memory and n ≥ 5,000 rows, ``solver="auto"`` is
    "noisy_gd" with T = clamp(⌈n/50⌉, 200, 1000) steps and, for ``radius=None``,
    R = clamp(n·μ/(10·p), 5, 100) (μ the GDP parameter of (ε, δ), p = d + 1
    with the intercept; :func:`fasterm.linear_model._rules.regression_gd_rule`);
    below 5,000 rows noisy_gd with T ≤ 40 and R = 5.  ``solver="adassp"`` is
    sufficient-statistics perturbation (AdaSSP of Wang 2018,
    :func:`fasterm.erm.ssp.adassp`).  Each parameter in full: docs/estimators.rst.

    Parameters
    ----------
    label_bound : float > 0, default=1.0
        Public bound Y on |y|: labels are clipped to [−Y, Y] (``fit`` warns,
        :class:`fasterm.DataWarning`, when more than 1% are).
    target_bounds : (low, high) or None, default=None
        The public range of the target, declared from outside the data: ``fit``
        maps y to (y − c)/h (c the midpoint, h the half-width) and fits it with
        label_bound 1; ``coef_``, ``intercept_``, ``predict`` and ``score`` are in
        the caller's units.  Public constants: no privacy spent
        (:mod:`fasterm.linear_model._bounds`).  Refuses a ``label_bound`` other than 1.
    bounds : None, (low, high), dict or "private", default=None
        As for :class:`DPLogisticRegression` (the features only).
    alpha : float >= 0 or None, default=None
        The ridge α/2·‖(w, b/s)‖².  None: 0 on the n ≥ 5,000 Gaussian path
        above, 1e-4 on every other path.  Unused by AdaSSP.
    radius : float > 0 or None, default=None
        The public bound R on ‖(coef, intercept/s)‖₂.  None: the rule above for
        the n ≥ 5,000 Gaussian path, 5.0 for the other gradient methods and
        objective perturbation, no bound for ``"adassp"`` (a number projects
        AdaSSP's θ onto the ball, post-processing).
    clip : float > 0, "auto" or None, default="auto"
        "auto" means c = label_bound·X_aug/2 (a full-norm row is clipped once
        its residual exceeds label_bound/4).
    solver : {"auto", "noisy_gd", "noisy_sgd", "noisy_pgd", "objpert", "expmech", "adassp"}, default="auto"
        As for :class:`DPLogisticRegression` (no "objpert_threshold"), and
        "adassp" (dense or CSR X, weights, δ ≥ 0).

    Other Parameters
    ----------------
    epsilon, delta, data_norm, fit_intercept, intercept_scaling, noise, calibration, steps, max_steps, random_state, secure, weight_bound
        Those of :class:`DPLogisticRegression`.  ``sample_weight`` of ``fit``:
        the noisy gradient solvers and ``"adassp"`` take weights mapped into
        [0, ``weight_bound``]; every sensitivity scales by ``weight_bound``
        (:mod:`fasterm.erm.ssp` for AdaSSP's proof).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_ : int
        Gradient steps; 3, the three releases, for AdaSSP.
    result_ : fasterm.OptimizeResult
        Public constants only; ``result_.info["radius"]`` is the resolved R; with
        ``target_bounds``, ``result_.w`` is the model of the mapped target.
    n_features_in_, bounds_, epsilon_, delta_, plan_
        As for :class:`DPLogisticRegression`.

    See Also
    --------
    fasterm.PrivateSearch : Tuning that counts the privacy; ``GridSearchCV`` and
        ``cross_val_score`` on private data spend privacy that nobody counts.
    """

    _kind = "squared"
    _parameter_constraints: dict = {
        **_PRIVATE_PARAMS, "label_bound": [Interval(Real, 0, None, closed="neither")],
        "target_bounds": [None, tuple, list],
        "radius": [Interval(Real, 0, None, closed="neither"), None],
        "alpha": [Interval(Real, 0, None, closed="left"), None]}

    def __init__(self, *, epsilon=_D["epsilon"], delta=_D["delta"], data_norm=_D["data_norm"],
                 label_bound=1.0, target_bounds=None, radius=None, alpha=None,
                 fit_intercept=_D["fit_intercept"], intercept_scaling=_D["intercept_scaling"],
                 solver=_D["solver"], noise=_D["noise"], calibration=_D["calibration"],
                 clip=_D["clip"], steps=_D["steps"], max_steps=_D["max_steps"], random_state=None,
                 secure=None, weight_bound=_D["weight_bound"], bounds=None, verbose=0) -> None:
        self.verbose = verbose
        self.bounds = bounds
        self.weight_bound = weight_bound
        self.solver = solver
        self.secure = secure
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.label_bound = label_bound
        self.target_bounds = target_bounds
        self.radius = radius
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.noise = noise
        self.calibration = calibration
        self.clip = clip
        self.steps = steps
        self.max_steps = max_steps
        self.random_state = random_state

    def _label_bound(self):
        # with target_bounds the fit sees the target mapped into [-1, 1]
        return self.label_bound if self.target_bounds is None else 1.0

    def fit(self, X: np.typing.ArrayLike, y: np.typing.ArrayLike,
            sample_weight: np.typing.ArrayLike | None = None):  # returns self
        """Fit the private model on (X, y); returns ``self``.

        Rows with ‖x‖ > ``data_norm`` and labels with |y| > ``label_bound``
        (outside ``target_bounds``) are clipped to the bounds; ``sample_weight``
        (None or one weight per row) is mapped into [0, ``weight_bound``].
        """
        # verbose >= 1: each run of the fit shows its steps done on stderr (fasterm._warnings.progress)
        reporting = _warnings.start_reporting(getattr(self, "verbose", 0), type(self).__name__)
        try:
            self._check_params()
            target = None if self.target_bounds is None else _bounds.resolve_target(self.target_bounds,
                                                                                     self.label_bound)
            if _dask.is_dask_collection(X):
                X, y = self._validate_dask(X, y)
                # clipped into X's dtype, not cast: a huge finite label must not become inf
                y = y.map_blocks(_labels_block, X.dtype, target=target, dtype=X.dtype)
                norms = None
            else:
                X, y, norms = self._validate_fit_data(X, y, y_numeric=True, accept_sparse="csr")
                y = _labels_block(y, X.dtype, target)
                _warn_clipped_labels(y, self.label_bound if target is None else 1.0, self.target_bounds)
            plan = self._plan_for(X, 2, sample_weight)  # every decision of the fit, once
            X, norms = self._rows(X, norms, _dask.is_dask_collection(X), plan)
            coef, intercept = self._fit_linear(X, y, plan, sample_weight, norms)
            if target is not None:  # the model in the caller's units (fasterm.linear_model._bounds)
                coef, intercept = _bounds.unmap_target(coef, intercept, *target)
            self.coef_ = coef
            self.intercept_ = intercept
            return self
        finally:
            # the fit's budget and random state (a Generator for bounds="private"): never kept,
            # also when the fit raises after the private ranges were drawn
            self.__dict__.pop("_budget", None)
            _warnings.stop_reporting(reporting)

    def predict(self, X: np.typing.ArrayLike) -> np.ndarray:
        """⟨coef, x⟩ + intercept for each row."""
        return self._decision(X)

    def __sklearn_tags__(self):
        """``poor_score = True``: the default bounds clip the checks' data; :data:`TAG_REASONS`.

        Only the sample-weight equivalence checks are expected to fail
        (:data:`EXPECTED_FAILED_CHECKS`, by design).
        """
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags
