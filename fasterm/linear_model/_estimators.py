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


class DPLogisticRegression(_DPLinearClassifier):
    """Differentially private logistic regression: binary, or multinomial for K > 2 classes.

    Minimises (1/n) Σ log(1 + exp(−y_i(⟨w, x_i⟩ + b))) + α/2·‖(w, b/s)‖² over
    ‖(w, b/s)‖₂ ≤ ``radius`` privately; for K > 2 classes the multinomial
    loss (1/n) Σ −log softmax(Wᵀ(x_i, s))_{y_i} + α/2·‖W‖²_F over the
    Frobenius ball ‖W‖_F ≤ ``radius`` (:mod:`fasterm.linear_model._multiclass`).  See the
    module docstring for the privacy statement and :mod:`fasterm.linear_model._rules` for
    the defaults.

    Tuning: scikit-learn's ``GridSearchCV``, ``cross_val_score`` and the like,
    run on private data, spend privacy that nobody counts (every fit spends
    its (ε, δ), and the exact scores and the choice among them are further
    releases); use :class:`fasterm.PrivateSearch`, which accounts for both.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        Privacy budget ε (finite).
    delta : float in [0, 1), default=1e-5
        Privacy budget δ; keep it well below 1/n.  ``delta=0`` gives pure
        ε-DP: by objective perturbation with the default ``solver="auto"``
        (for K > 2 classes: one Laplace release of the clipped per-class sums,
        docs/multiclass.rst, which ignores ``clip``, ``steps`` and
        ``max_steps``), or with a noisy gradient solver and Laplace noise
        (``calibration`` "pure" or "l2").
    data_norm : float > 0, default=1.0
        Public bound X on ‖x‖₂: rows are assumed (and clipped) to norm ≤ X —
        scale features with public bounds first.
    radius : float > 0, default=50.0
        Public bound on ‖(coef, intercept/intercept_scaling)‖₂ (the feasible
        set of PGD).  The noise does not depend on it; it sets the step size
        and caps |logit| at radius·√(data_norm² + intercept_scaling²).  A fit
        whose released parameters end on the ball emits a
        :class:`fasterm.DataWarning` (from the released model only, never stored).
    alpha : float >= 0, default=1e-4
        Data-independent L2 regularization α/2·‖w‖² (w includes the intercept
        coordinate).
    fit_intercept : bool, default=True
        Append a constant column ``intercept_scaling``; the augmented rows then
        have norm ≤ √(data_norm² + intercept_scaling²), which is the data norm
        the noise is calibrated with.
    intercept_scaling : float > 0 or "auto", default="auto"
        Value of the constant column; |intercept| ≤ intercept_scaling·radius.
        "auto": 0.25, or 0.125 for classifiers fitted by objective
        perturbation (``solver="objpert"``, also through "auto"), where it
        sets the ridge μ/(2s²) on the intercept (chosen on data other than
        the breast-cancer set: ``docs/pure.rst``).
    solver : {"auto", "noisy_gd", "noisy_sgd", "noisy_pgd", "objpert", "objpert_threshold", "expmech"}, default="auto"
        The private algorithm (docs/solvers.rst).  "auto": "objpert" for
        ``delta=0`` (unless secure mode or a dask X), else a noisy gradient
        solver picked from n, the loss, the noise and the mode only:
        "noisy_sgd" from 5,000 rows, "noisy_gd" below (and for Laplace
        noise), "noisy_pgd" for the hinge loss, secure mode and dask arrays;
        an explicit ``noise`` keeps "auto" among these three.
        "noisy_gd": noisy gradient descent with the smooth step
        (:func:`fasterm.noisy_gd`); "noisy_sgd": Poisson-subsampled noisy SGD
        (:func:`fasterm.noisy_sgd`, Gaussian noise); "noisy_pgd": noisy
        projected gradient descent (:func:`fasterm.noisy_pgd`).  "objpert":
        objective perturbation (:func:`fasterm.objective_perturbation` on
        ``SmoothHinge()`` — ``LogCosh(width=label_bound)`` for regression —,
        (ε, 0)-DP; ``alpha`` is a floor of its regularization, the result is
        projected onto the ``radius`` ball; ``clip``, ``steps``,
        ``max_steps`` are unused); "objpert_threshold" (classifiers with an
        intercept): objective perturbation with 0.8ε and the intercept chosen
        privately with 0.2ε (docs/pure.rst); "expmech": the exponential
        mechanism (``fasterm.expmech_erm``, an uncertified hit-and-run chain:
        needs ``delta > 0`` and reports ``delta_ = nan``; ``steps`` is the
        sampler's).
    noise : {"gaussian", "laplace"} or None, default=None
        The noise of the noisy gradient solvers (others refuse it): None is
        Gaussian for ``delta > 0`` and Laplace for ``delta=0``.
    calibration : {"l2", "pure", "coordinate"} or None, default=None
        Laplace noise only (see :func:`fasterm.noisy_pgd`); None is "l2".
        Gaussian noise is calibrated exactly through μ-GDP and refuses it.
    clip : float > 0, "auto" or None, default="auto"
        Per-example gradient clipping norm c (the noise scales with c).
        "auto": c = X_aug/(1 + e), the gradient norm of a full-norm row at
        margin 1 (:mod:`fasterm.linear_model._rules`); None: no clipping (c = G).
    steps : int >= 1 or None, default=None
        Number of gradient steps T; None: the solver's rule (:mod:`fasterm.linear_model._rules`).
    max_steps : int >= 1 or None, default=None
        Compute budget for the default T of noisy_pgd (None: 100) and
        noisy_gd (None: 40, and 20 below n = 1,000 rows for the binary logistic
        model with Gaussian noise; 80 for K > 2 classes); unused by noisy_sgd.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise.  Use None for a release; an int reproduces a fit.
    secure : bool or None, default=None
        Floating-point-safe noise (exact discrete noise on a power-of-two grid,
        :mod:`fasterm.mechanisms.secure`); None follows :func:`fasterm.secure_mode`.
        Needs ``solver="noisy_pgd"`` (or "auto"); then ``random_state="os"`` draws the
        noise from operating-system entropy.
    weight_bound : float > 0, default=1.0
        Public bound B on the sample weights of ``fit(X, y, sample_weight)``
        (declared like ``data_norm``): each weight is mapped to
        min(max(w, 0), B) (NaN to 0), never refused.  The objective becomes
        (1/n) Σ w_i ℓ_i + α/2·‖(w, b/s)‖² (normalised by n, which is
        public, not by Σ w_i).  A record is the triple (x_i, y_i, w_i); its
        clipped gradient times w_i has norm ≤ B·c, so the sensitivity — and
        the noise — scale by B (:func:`fasterm.noisy_pgd`).  Unused without
        weights; ``sample_weight=np.ones(n)`` with B = 1 gives the
        unweighted fit bit for bit.  Only the noisy gradient solvers take
        weights (the others raise ``ValueError`` naming sample_weight).
    classes : sequence of K ≥ 2 distinct labels or None, default=None
        The declared label set (for two: (negative, positive)).  Given, a
        label equal to ``classes[k]`` is class k, and a label outside the set
        raises ``ValueError`` (it is outside the data domain, like a NaN; it
        used to be merged into ``classes[0]`` in silence); nothing about y
        beyond that enters the fit.  None: ``np.unique(y)`` (scikit-learn's
        convention; the set of label values is then treated as public); a y
        with more than 100 distinct values, and more than half as many as
        rows, is refused (``ValueError``: a continuous target?).
    bounds : None, (low, high), dict or "private", default=None
        Per-feature bounds that map every row into the unit ball inside
        ``fit`` *and* ``predict``/``decision_function``/``predict_proba``:
        x_j ↦ (clip((x_j − low_j)/(high_j − low_j), 0, 1) − 1/2)/(√d/2)
        (:mod:`fasterm.linear_model._bounds`; the same code as
        :class:`fasterm.preprocessing.BoundedScaler`).  None: rows are used
        as given and must lie in the ``data_norm`` ball (longer rows are
        clipped; ``fit`` warns when more than 1% are).  ``(low, high)``:
        scalars or per-feature arrays declared from public knowledge
        (documentation, instrument ranges), never from the private rows; a
        dict {column: (low, high)} for a DataFrame X names every column.
        ``"private"``: fits with half of ε and δ and spends the rest on
        private per-feature ranges (a private median ± 2 private median
        absolute deviations per feature; accounted with a Gaussian fit in
        zCDP; the rule and its theorems in :mod:`fasterm.linear_model._bounds`),
        and reports the total in ``epsilon_``/``delta_``; needs many rows per
        feature (docs/getting_started.rst).  Keep ``data_norm=1``
        with bounds.  Dense X only.
    verbose : int >= 0 or bool, default=0
        ≥ 1: each run of the fit shows its steps done on stderr (tqdm where
        installed): step counts only, never a value computed from the data,
        and nothing is stored.  Any fit can be stopped with Ctrl-C, and one
        whose work (T·m·p·K multiply-adds, public sizes) is far beyond a
        normal fit's warns first (:class:`fasterm.CostWarning`;
        docs/performance.rst, "Long fits").

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features), or (K, n_features) for K > 2 classes
    intercept_ : ndarray of shape (1,), or (K,)
    classes_ : ndarray of shape (K,)
    n_features_in_ : int
    bounds_ : (ndarray, ndarray)
        With ``bounds`` given: the (low, high) used, float64 per feature — the
        declared bounds (a public constant), or for ``"private"`` the private
        ranges, which are part of the private output (covered by
        ``epsilon_``/``delta_``).  Absent with ``bounds=None``.
    epsilon_, delta_ : float
        The privacy actually spent by the fit (``epsilon_`` ≤ epsilon, ``delta_`` ≤ delta),
        including the private ranges of ``bounds="private"``.
    n_iter_ : int
        Number of gradient steps T (sampler steps for "expmech"); for
        objective perturbation ("objpert", "objpert_threshold", and "auto"
        with ``delta=0``) the solver's iteration cap
        ``fasterm.erm.objpert.MAX_STEPS`` — a public constant, since the number
        of Newton iterations run depends on the data and the noise.
    result_ : fasterm.OptimizeResult (fasterm.erm.objpert.ObjPertResult for objective perturbation)
        Everything the optimiser calibrated (noise scale, step size, bound):
        public constants, apart from the release itself.
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
    z = Wᵀ(x_i, s), over the Frobenius ball (:mod:`fasterm.linear_model._multiclass`).  Parameters and attributes are those of
    :class:`DPLogisticRegression` (no ``predict_proba``), except that
    ``clip="auto"`` is c = X_aug/2 (clipped hinge gradients are scale-free, so
    the fit depends little on c).

    Tuning: ``GridSearchCV`` and ``cross_val_score`` on private data spend
    privacy that nobody counts; use :class:`fasterm.PrivateSearch`.
    """

    _kind = "hinge"


class DPLinearRegression(RegressorMixin, _DPLinearModel):
    """Differentially private least-squares regression.

    Fits y ≈ ⟨w, x⟩ + b privately, with rows clipped to ‖x‖ ≤ ``data_norm`` and
    labels clipped to [−label_bound, label_bound].  The noisy gradient solvers
    (through ``solver="auto"``, the default for δ > 0) and objective perturbation
    (``"objpert"``, the default for δ = 0) minimise
    (1/n) Σ (y_i − ⟨w, x_i⟩ − b)² + α/2·‖(w, b/s)‖² over ‖(w, b/s)‖₂ ≤ R.

    Default rule (docs/solvers.rst, "Regression"; public quantities only): with
    Gaussian noise, X in memory and n ≥ 5,000 rows, ``solver="auto"`` is
    "noisy_gd" with T = clamp(⌈n/50⌉, 200, 1000) steps and, for ``radius=None``,
    R = clamp(n·μ/(10·p), 5, 100) (μ the GDP parameter of (ε, δ), p = d + 1
    with the intercept; :func:`fasterm.linear_model._rules.regression_gd_rule`): the
    number of steps and the ball grow with n, so an ill-conditioned problem
    converges where the noise is small, and clipped gradients keep the noise
    independent of R; ``alpha=None`` is no ridge there.  Below 5,000 rows the previous rule (noisy_gd, T ≤ 40,
    R = 5).  ``solver="adassp"`` is sufficient-statistics perturbation (AdaSSP
    of Wang 2018, :func:`fasterm.erm.ssp.adassp`, δ > 0 or δ = 0, dense or CSR X,
    weights): no ball and no steps, but on the comparison data its noise on
    Σ aaᵀ cost far more than the gradient methods' (docs/solvers.rst).
    Tuning: ``GridSearchCV`` and ``cross_val_score`` on private data spend
    privacy that nobody counts; use :class:`fasterm.PrivateSearch`.

    Parameters as :class:`DPLogisticRegression`, and:

    label_bound : float > 0, default=1.0
        Public bound Y on |y|: labels are clipped to [−Y, Y] (``fit`` warns,
        :class:`fasterm.DataWarning`, when more than 1% are).  Scale targets
        with public bounds first.
    bounds : None, (low, high), dict or "private", default=None
        As for :class:`DPLogisticRegression` (the features only).
    alpha : float >= 0 or None, default=None
        The ridge α/2·‖(w, b/s)‖².  None: 0 on the n ≥ 5,000 Gaussian path
        above (the ball bounds the iterates; a ridge of 1e-4 shrank the
        weak directions of an ill-conditioned problem: docs/solvers.rst),
        1e-4 on every other path (as the classifiers).  Unused by AdaSSP.
    radius : float > 0 or None, default=None
        The public bound R on ‖(coef, intercept/s)‖₂.  None: the rule above
        for the n ≥ 5,000 Gaussian path, 5.0 for the other gradient methods
        and objective perturbation (the squared loss's step size must stay
        within its curvature's stability limit), no bound for ``"adassp"``.
        A number is used as given (AdaSSP's θ is then projected onto the
        ball, post-processing).  A fit whose ‖(coef, intercept/s)‖ ends on
        the boundary emits a :class:`fasterm.DataWarning` (computed from the
        released coefficients only, never stored).
    clip : "auto" means c = label_bound·X_aug/2 (a full-norm row is clipped once
        its residual exceeds label_bound/4).
    sample_weight (``fit``) : the noisy gradient solvers and ``"adassp"`` take weights
        mapped into [0, ``weight_bound``]; every sensitivity scales by
        ``weight_bound`` (:mod:`fasterm.erm.ssp` for AdaSSP's proof).

    Attributes: ``coef_`` (n_features,), ``intercept_`` (float), and
    ``n_features_in_``, ``bounds_``, ``epsilon_``, ``delta_``, ``n_iter_`` (gradient steps;
    3, the three releases, for AdaSSP), ``result_`` (public constants only;
    ``result_.info["radius"]`` is the resolved R).
    """

    _kind = "squared"
    _parameter_constraints: dict = {
        **_PRIVATE_PARAMS, "label_bound": [Interval(Real, 0, None, closed="neither")],
        "radius": [Interval(Real, 0, None, closed="neither"), None],
        "alpha": [Interval(Real, 0, None, closed="left"), None]}

    def __init__(self, *, epsilon=_D["epsilon"], delta=_D["delta"], data_norm=_D["data_norm"],
                 label_bound=1.0, radius=None, alpha=None,
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

    def fit(self, X: np.typing.ArrayLike, y: np.typing.ArrayLike,
            sample_weight: np.typing.ArrayLike | None = None):  # returns self
        """Fit the private model on (X, y); returns ``self``.

        Rows with ‖x‖ > ``data_norm`` and labels with |y| > ``label_bound``
        are clipped to the bounds; ``sample_weight`` (None or one weight per
        row) is mapped into [0, ``weight_bound``].
        """
        # verbose >= 1: each run of the fit shows its steps done on stderr (fasterm._warnings.progress)
        reporting = _warnings.start_reporting(getattr(self, "verbose", 0), type(self).__name__)
        try:
            self._check_params()
            if _dask.is_dask_collection(X):
                X, y = self._validate_dask(X, y)
                # clipped into X's dtype, not cast: a huge finite label must not become inf
                y = y.map_blocks(labels_as, X.dtype, dtype=X.dtype)
                norms = None
            else:
                X, y, norms = self._validate_fit_data(X, y, y_numeric=True, accept_sparse="csr")
                y = labels_as(np.asarray(y), X.dtype)
                _warn_clipped_labels(y, self.label_bound)
            X, norms = self._rows(X, norms, _dask.is_dask_collection(X))
            coef, intercept = self._fit_linear(X, y, sample_weight, norms)
            self.coef_ = coef
            self.intercept_ = intercept
            return self
        finally:
            # the fit's budget and random state (a Generator for bounds="private"): never kept,
            # also when the fit raises after the private ranges were drawn
            self.__dict__.pop("_plan", None)
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
