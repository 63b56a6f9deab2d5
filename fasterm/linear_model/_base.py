"""The estimators' shared machinery: declared parameters, checks once per fit, one call to the fit.

:class:`_DPLinearModel` validates the public parameters (scikit-learn's
``_parameter_constraints``) and the data, maps rows with the declared bounds,
and calls :func:`fasterm.linear_model._rules.fit_linear`; :class:`_DPLinearClassifier`
adds labels, binary and multiclass fits.  The privacy statement: the package
docstring of :mod:`fasterm.linear_model`.
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

import fasterm.linear_model._bounds as _bounds
import fasterm.linear_model._rules as _linear
import fasterm.linear_model._multiclass as _multiclass
import fasterm.erm._dask as _dask
import fasterm.erm.optimize as _optimize
from ..mechanisms.secure import resolve as resolve_secure
from ..erm._design import row_norms_unchecked
from .._validation import check_csr, check_random_state, is_sparse, plain_X_y
import fasterm._warnings as _warnings
from .._warnings import DataWarning
from ._checks import (_check_class_count, _check_declared_labels, _declared_index, _integral_labels,
                      _refuse_missing_labels, _unique_labels, _warn_clipped_rows, _warn_missed_features)


#: scikit-learn ``check_estimator`` checks that are expected to fail, with the
#: reason, per estimator (passed as ``expected_failed_checks`` in the tests).
#: Only the sample-weight equivalence checks (dense and sparse X) and, from
#: scikit-learn 1.9, the all-zero-weights error, by design (their reasons);
#: every other applicable check passes with ``random_state`` fixed.  The
#: tags that make scikit-learn skip or relax checks are explained in
#: :data:`TAG_REASONS`.  scikit-learn also skips, by itself, checks whose
#: optional dependencies are absent: the ``*_data_not_an_array`` checks
#: without pandas (the ``test`` extra installs it) and, from scikit-learn 1.9,
#: ``check_array_api_input`` unless ``SCIPY_ARRAY_API=1`` (it passes when set).
_WEIGHTS_ARE_NOT_REPETITIONS = (
    "a weight is not a repetition under differential privacy: the weighted objective is normalised "
    "by the public n (not by the data-dependent sum of the weights), weights are clipped to the "
    "declared weight_bound, and the noise is calibrated to one record of weight at most weight_bound, "
    "while k copies of a row are k records (a different n, hence a different noise and step); "
    "sample_weight=ones equals the unweighted fit bit for bit (tests/test_sample_weight.py)")
_ZERO_WEIGHTS_ARE_DATA = (
    "weights are data: refusing all-zero weights would be an error that one record's weight "
    "switches on and off (an output that is not differentially private), so such a fit runs like "
    "any other and releases the noisy minimiser of the ridge term alone "
    "(tests/test_sample_weight.py); scikit-learn >= 1.9 asks for a ValueError")
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    name: {**{f"check_sample_weight_equivalence_on_{kind}_data": _WEIGHTS_ARE_NOT_REPETITIONS
              for kind in ("dense", "sparse")},
           "check_all_zero_sample_weights_error": _ZERO_WEIGHTS_ARE_DATA}
    for name in ("DPLogisticRegression", "DPLinearSVC", "DPLinearRegression")
}

#: Why each estimator sets the tags that make scikit-learn skip or relax checks.
TAG_REASONS = {
    "regressor_tags.poor_score = True": (
        "DPLinearRegression only: check_regressors_train asks for R^2 > 0.5 on standardized "
        "data whose rows have norm about sqrt(10) and whose labels are standardized, while the "
        "default public bounds clip rows to norm 1 and labels to [-1, 1] (and the fit is noisy); "
        "the classifiers pass the checks' accuracy threshold and keep poor_score = False"),
}

_PRIVATE_PARAMS = {
    "epsilon": [Interval(Real, 0, None, closed="neither")],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "data_norm": [Interval(Real, 0, None, closed="neither")],
    "radius": [Interval(Real, 0, None, closed="neither")],
    "alpha": [Interval(Real, 0, None, closed="left")],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "solver": [StrOptions(set(_linear.SOLVERS))],
    "noise": [StrOptions(set(_linear.NOISES)), None],
    "calibration": [StrOptions(set(_linear.CALIBRATIONS)), None],
    "clip": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"}), None],
    "steps": [Interval(Integral, 1, None, closed="left"), None],
    "max_steps": [Interval(Integral, 1, None, closed="left"), None],
    "random_state": [Interval(Integral, 0, None, closed="left"), np.random.Generator, None,
                     StrOptions({"os"})],
    "secure": ["boolean", None],
    "weight_bound": [Interval(Real, 0, None, closed="neither")],
    "bounds": [None, StrOptions({"private"}), tuple, list, dict],
    "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
}

_FLOATS = [np.float64, np.float32]
_D = _linear.DEFAULTS  # one source for the defaults shared with `python -m fasterm`


@functools.lru_cache(maxsize=None)
def _accepts(kind, t) -> bool:
    return issubclass(t, kind)


def _within(value, interval) -> bool:
    """``value in interval`` (scikit-learn's ``Interval.__contains__``) for a plain int or float."""
    if value != value:  # NaN
        return False
    left = -math.inf if interval.left is None else interval.left
    right = math.inf if interval.right is None else interval.right
    if (value < left) if interval.closed in ("left", "both") else (value <= left):
        return False
    if (value > right) if interval.closed in ("right", "both") else (value >= right):
        return False
    return True


def _plainly_satisfied(value, constraints) -> bool:
    """Whether ``value`` meets one of scikit-learn's ``constraints`` as a plain value.

    A cheap subset of scikit-learn's own check (``validate_parameter_constraints``):
    None, a Python bool, int, float or str, or an instance of a listed class,
    tested against the same Interval and StrOptions objects.  False means
    "ask scikit-learn", which accepts or raises with its own message.
    """
    t = type(value)
    for c in constraints:
        if c is None:
            if value is None:
                return True
        elif isinstance(c, Interval):
            if (t is int or t is float) and _accepts(c.type, t) and _within(value, c):
                return True
        elif isinstance(c, Options):
            if t is c.type and value in c.options and value not in c.deprecated:
                return True
        elif c == "boolean":
            if t is bool:
                return True
        elif isinstance(c, type):
            if isinstance(value, c):
                return True
    return False


#: Parameter settings already found plainly valid (:func:`_plainly_satisfied`), keyed by
#: the estimator class and the values with their types: a repeated fit of one
#: configuration (a benchmark, a search) skips the per-parameter checks.  Only
#: valid settings are stored (never a NaN, which no constraint accepts); the
#: rules linking parameters still run at every fit (they read ``secure_mode``).
_PLAIN_PARAMS: dict = {}
_PLAIN_PARAMS_MAX = 1024
_optimize._CACHE_CLEARERS.append(_PLAIN_PARAMS.clear)


class _DPLinearModel(BaseEstimator):
    """Shared fit: parameter checks, data checks, one call to ``_linear.fit_linear``."""

    _kind: str
    _parameter_constraints: dict = dict(_PRIVATE_PARAMS)

    def __sklearn_tags__(self):
        """``input_tags.sparse = True``: a scipy.sparse X is fitted by the CSR kernels
        (other formats are converted to CSR by scikit-learn's ``validate_data``)."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def __init_subclass__(cls, **kwargs):
        # A public estimator gets an __init__ with the same signature that reports a
        # positional or misspelt argument under the class the user wrote: one that inherits
        # its __init__ (DPLogisticRegression, DPLinearSVC) would otherwise name the private
        # base class, and one of fasterm's own (DPLinearRegression) Python's generic error.
        super().__init_subclass__(**kwargs)
        if cls.__name__.startswith("_") or ("__init__" in cls.__dict__
                                            and not cls.__module__.startswith("fasterm.")):
            return
        base_init = cls.__init__
        signature = inspect.signature(base_init)
        names = frozenset(signature.parameters) - {"self"}

        def __init__(self, *args, **params):
            if args:
                raise TypeError(f"{cls.__name__}() takes keyword arguments only, got {len(args)} positional")
            for name in params:
                if name not in names:
                    raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {name!r}")
            base_init(self, **params)

        __init__.__signature__ = signature
        __init__.__qualname__ = f"{cls.__name__}.__init__"
        __init__.__doc__ = base_init.__doc__
        cls.__init__ = __init__

    @classmethod
    def _get_param_names(cls):
        # scikit-learn re-reads the __init__ signature (inspect) at every get_params, i.e.
        # at every fit's parameter validation: a fixed per-class list, computed once.
        names = cls.__dict__.get("_param_names")
        if names is None:
            names = super()._get_param_names()
            cls._param_names = names
        return names

    @classmethod
    def _keyed_params(cls):
        """``operator.attrgetter`` of every parameter but random_state (computed once per class)."""
        getter = cls.__dict__.get("_keyed_getter")
        if getter is None:
            getter = operator.attrgetter(*(name for name in cls._get_param_names() if name != "random_state"))
            cls._keyed_getter = getter
        return getter

    def _check_params(self):
        """All parameter checks, run first in ``fit``: the declared constraints, then
        the rules linking several parameters (an open-ended Interval excludes inf).

        Plain values (numbers, strings, None, a Generator) are checked against
        the constraints directly; scikit-learn's generic validation (its
        messages, its other types) runs whenever one is not plainly valid.  A
        setting found plainly valid is remembered (:data:`_PLAIN_PARAMS`), so
        refitting one configuration checks only its ``random_state`` again.
        """
        constraints = self._parameter_constraints
        rs_ok = _plainly_satisfied(self.random_state, constraints["random_state"])
        try:
            # Values with their types (1, 1.0 and True are different settings); random_state
            # is left out (a new seed per fit; a Generator would be kept alive by the key).
            values = self._keyed_params()(self)
            key = (type(self), values, tuple(map(type, values)))
            known = rs_ok and key in _PLAIN_PARAMS
        except TypeError:  # an unhashable value (a list of classes)
            key, known = None, False
        if not known:
            if rs_ok and all(_plainly_satisfied(getattr(self, name), constraints[name])
                             for name in self._get_param_names()):
                if key is not None:
                    if len(_PLAIN_PARAMS) >= _PLAIN_PARAMS_MAX:
                        _PLAIN_PARAMS.clear()
                    _PLAIN_PARAMS[key] = True
            else:
                self._validate_params()
        # The rules linking solver, noise, calibration, delta and secure mode, in one place.
        method, optimiser = _linear.resolve_solver(self.solver, self.delta, self.noise, self.secure,
                                                   kind=self._kind)
        noise, _ = _linear.resolve_noise(method, self.delta, self.noise, self.calibration, self.solver)
        if method == "adassp" and self._kind != "squared":
            raise ValueError("solver='adassp' (sufficient statistics perturbation) is for "
                             "DPLinearRegression only")
        if method == "objpert_threshold" and self._kind == "squared":
            raise ValueError("solver='objpert_threshold' is for the classifiers (it chooses their "
                             "intercept privately)")
        if method in ("adassp", "objpert", "objpert_threshold", "expmech") and resolve_secure(self.secure):
            raise ValueError(f"secure=True (or fasterm.secure_mode) needs solver='noisy_pgd' (or 'auto'): "
                             f"solver={method!r} has no floating-point-safe mode")
        if optimiser in ("gd", "sgd") and (self._kind == "hinge" or resolve_secure(self.secure)):
            raise ValueError(f"solver={self.solver!r} needs a smooth loss (logistic, squared) and "
                             "secure=False; use solver='noisy_pgd' (or 'auto')")
        if optimiser == "sgd" and noise != "gaussian":
            raise ValueError("solver='noisy_sgd' needs noise='gaussian' (its accounting is for the "
                             "subsampled Gaussian)")

    def _validate_fit_data(self, X, y, **kw):
        """``(X, y, row norms or None)``: ``validate_data(self, X, y, dtype=(float64, float32),
        **kw)``, skipped when :func:`fasterm._validation.plain_X_y` shows it would return X
        and y unchanged (then only its attribute updates remain: ``n_features_in_``, and
        no ``feature_names_in_`` for an ndarray X).

        On that path X's finiteness is read off its row norms, which the design
        matrix needs anyway (:func:`fasterm.erm._design.design`): a NaN or an
        infinity makes its row's norm non-finite, and then (or if a huge finite
        row overflows its norm) scikit-learn's check runs and speaks.  One pass
        over X instead of two.
        """
        _refuse_missing_labels(y)
        if plain_X_y(X, y, finite_X=False) and X.flags.c_contiguous:
            norms = row_norms_unchecked(X)
            if math.isfinite(norms.max()):
                self.n_features_in_ = X.shape[1]
                if hasattr(self, "feature_names_in_"):
                    del self.feature_names_in_
                return X, y, norms
        X, y = validate_data(self, X, y, dtype=_FLOATS, **kw)
        return X, y, None

    def _validate_dask(self, X, y):
        """``validate_data`` for a dask X (:mod:`fasterm.erm._dask`): metadata checks only.

        X stays chunked (the fit runs on the cluster); y must be a numeric 1-d
        array of n entries (dask or numpy), returned as a dask array in X's row
        chunks with its dtype unchanged.
        """
        method, optimiser = _linear.resolve_solver(self.solver, self.delta, self.noise, self.secure,
                                                   chunked=True, kind=self._kind)
        if method != "gradient" or optimiser == "gd":
            raise ValueError(f"solver={self.solver!r} needs X in memory; dask arrays are fitted "
                             "with solver='noisy_sgd', 'noisy_pgd' (or 'auto')")
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        X, _ = _dask.check_X_y(X, None)
        y = _dask.check_y(y, X)
        self.n_features_in_ = X.shape[1]
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return X, y

    def _rows(self, X, norms, chunked, n_classes=2):
        """The rows the fit sees, ``(X, row norms or None)``: X itself (``bounds=None``), or X mapped
        into the unit ball with the declared or private bounds (:mod:`fasterm.linear_model._bounds`).

        Sets the budget of the fit (``_plan``: ε, δ, random state for the fit, the
        private-range plan, and the bounds that :meth:`_record` stores as ``bounds_``
        once the fit has succeeded — a failed refit leaves the previous model whole).  ``bounds=None``: warns (a
        :class:`fasterm.DataWarning`, to the caller only) when more than
        ``CLIPPED_ROWS_WARN`` of the rows exceed ``data_norm``.
        """
        self._plan = (self.epsilon, self.delta, self.random_state, None, None)
        bounds = self.bounds
        if bounds is None:
            if not chunked:
                norms = _warn_clipped_rows(X, norms, self.data_norm)
            return X, norms
        if is_sparse(X):
            raise TypeError("X is a scipy.sparse matrix: bounds= maps every feature to [-1, 1] around its "
                            "centre, which does not keep zeros; pass dense X, or bounds=None with rows "
                            "already in the data_norm ball")
        d = X.shape[1]
        if isinstance(bounds, str):  # "private" (the only string the constraints accept)
            if chunked:
                raise ValueError("bounds='private' needs X in memory (its quantiles sort every column); "
                                 "declare bounds=(low, high) for a dask X")
            if resolve_secure(self.secure) or isinstance(self.random_state, str):
                raise ValueError("bounds='private' has no secure mode (its quantile sampler works in floating "
                                 "point); declare bounds=(low, high), or secure=False")
            rng = check_random_state(self.random_state)
            plan = _bounds.private_plan(self.epsilon, self.delta, d, _bounds.gaussian_fit(self, X.shape[0]),
                                        sgd=_bounds.sgd_fit(self, X.shape[0], n_classes))
            low, high = _bounds.private_ranges(X, plan.eps_q, rng)
            self._plan = (plan.eps_fit, plan.delta_fit, rng, plan, None)
        else:
            low, high = _bounds.resolve(bounds, d, getattr(self, "feature_names_in_", None))
        self._plan = self._plan[:4] + ((low, high),)
        if not chunked:  # to the caller only, nothing stored
            _warn_missed_features(X, low, high, isinstance(bounds, str), getattr(self, "feature_names_in_", None))
        return (_bounds.map_chunked(X, low, high) if chunked else _bounds.map_rows(X, low, high)), None

    @_warnings.checks_delta  # δ ≥ 1/n: one DataWarning, to the caller, for the δ spent
    def _fit_linear(self, X, y, sample_weight=None, row_norms=None, label_bound=None):
        # X and y passed _validate_fit_data (or _validate_dask): checked=True, with its row norms;
        # label_bound: the bound of the y passed here (None: the estimator's label_bound)
        epsilon, delta, random_state = self._plan[:3]
        coef, intercept, result = _linear.fit_linear(
            self._kind, X, y, epsilon=epsilon, delta=delta, data_norm=self.data_norm,
            radius=self.radius, alpha=self.alpha, fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling, solver=self.solver, noise=self.noise,
            calibration=self.calibration, clip=self.clip, steps=self.steps,
            max_steps=self.max_steps, random_state=random_state,
            label_bound=getattr(self, "label_bound", None) if label_bound is None else label_bound,
            secure=self.secure,
            sample_weight=sample_weight, weight_bound=self.weight_bound, checked=True, row_norms=row_norms)
        self._record(result)
        return coef, intercept

    def _record(self, result):
        # The fit's (ε, δ), with what bounds="private" spent on the ranges (basic composition, or
        # zCDP for a Gaussian fit; adaptive: fasterm.linear_model._bounds).  NaN δ: an approximate
        # release whose δ is not certified (solver="expmech").
        plan, bounds = self._plan[3:5]
        del self._plan  # the fit's budget and random state: not kept on the fitted object
        if bounds is None:
            self.__dict__.pop("bounds_", None)
        else:
            self.bounds_ = bounds
        self.result_ = result
        self.epsilon_, self.delta_ = _bounds.total(plan, result)
        # A public count for every method: T for the noisy gradient methods, the
        # sampler's steps for expmech, objective perturbation's iteration cap.
        self.n_iter_ = int(result.steps)
        _warnings.warn_on_boundary(self, result)  # to the caller only, nothing stored (fasterm._warnings)

    def _decision(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=_FLOATS, accept_sparse="csr")
        if is_sparse(X):  # scipy's product reads X.indices unchecked: an index past the columns reads past coef_
            X = check_csr(X, "X")
        bounds = getattr(self, "bounds_", None)
        if bounds is not None:  # the rows as the fit saw them: the same map
            if is_sparse(X):
                raise TypeError("X is a scipy.sparse matrix: this model was fitted with bounds=, whose "
                                "map does not keep zeros; pass dense X")
            X = _bounds.map_rows(X, *bounds)
        return X @ self.coef_.T + self.intercept_


class _DPLinearClassifier(ClassifierMixin, _DPLinearModel):
    _parameter_constraints: dict = {**_PRIVATE_PARAMS, "classes": ["array-like", None]}

    def __init__(self, *, epsilon=_D["epsilon"], delta=_D["delta"], data_norm=_D["data_norm"],
                 radius=_linear.DEFAULT_RADIUS["logistic"], alpha=_D["alpha"],
                 fit_intercept=_D["fit_intercept"], intercept_scaling=_D["intercept_scaling"],
                 solver=_D["solver"], noise=_D["noise"], calibration=_D["calibration"],
                 clip=_D["clip"], steps=_D["steps"], max_steps=_D["max_steps"], random_state=None,
                 classes=None, secure=None, weight_bound=_D["weight_bound"], bounds=None, verbose=0) -> None:
        self.verbose = verbose
        self.bounds = bounds
        self.weight_bound = weight_bound
        self.solver = solver
        self.classes = classes
        self.secure = secure
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
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
        """Fit the private model on (X, y).  Returns ``self``.

        ``sample_weight``: None or one weight per row, mapped into the
        declared range [0, ``weight_bound``] (see ``weight_bound``).

        Labels.  With ``classes`` given (the private way), the label set is
        public: a label equal to ``classes[k]`` is class k, record by record,
        and a label outside the set raises ``ValueError`` (a message to the
        caller, not a release) — nothing else about y is released.  With ``classes=None`` (the scikit-learn
        convention, the default so that the estimator works as a drop-in),
        ``classes_`` is ``np.unique(y)``: the *set of label values* is then
        treated as public, like n and d, and a y with a single label raises —
        pass ``classes`` when the label set itself is sensitive.  Two classes
        fit the binary model, K > 2 the multiclass model on the same budget
        (:mod:`fasterm.linear_model._multiclass`).  Rows with ‖x‖ > ``data_norm`` are
        clipped to it (with ``bounds``: mapped first, see ``bounds``); when
        more than 1% are, ``fit`` warns (:class:`fasterm.DataWarning`, to the
        caller only: not stored, not part of the release).
        """
        # verbose >= 1: each run of the fit shows its steps done on stderr (fasterm._warnings.progress)
        reporting = _warnings.start_reporting(getattr(self, "verbose", 0), type(self).__name__)
        try:
            self._check_params()
            chunked = _dask.is_dask_collection(X)
            X, y, norms = (*self._validate_dask(X, y), None) if chunked else self._validate_fit_data(
                X, y, accept_sparse="csr")
            if self.classes is not None:
                classes = np.asarray(self.classes)
                if classes.ndim != 1 or classes.shape[0] < 2 or len(set(classes.tolist())) != classes.shape[0]:
                    raise ValueError("classes must be a sequence of at least two distinct labels "
                                     "(for two: negative, positive)")
                _check_declared_labels(y, classes, chunked)
            else:
                # The target type of a 1-d y is decided by its set of values: checking the
                # unique labels is scikit-learn's check at the cost of one np.unique (its
                # type_of_target on all of y sorts y again).  For dask, only the label set
                # comes to the client, never y itself.
                classes = _dask.unique(y) if chunked else _unique_labels(y)
                if not _integral_labels(classes):
                    check_classification_targets(classes)
                if classes.shape[0] < 2:
                    raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; y has only one "
                                     "class (pass classes=(negative, positive) to declare them)")
                if not chunked:
                    _check_class_count(classes.shape[0], X.shape[0])
            # the rows after bounds= (K, public, sets bounds="private"'s plan for a multiclass SGD fit)
            X, norms = self._rows(X, norms, chunked, classes.shape[0])
            if classes.shape[0] > 2:
                if chunked:
                    index = None
                elif self.classes is not None:
                    index = _declared_index(y, classes)
                else:
                    index = np.searchsorted(classes, y)  # y's values are all in classes
                return self._fit_multiclass(X, index, classes, chunked, sample_weight)
            return self._fit_binary(X, y, classes, sample_weight, norms)
        finally:
            # the fit's budget and random state (a Generator for bounds="private"): never kept,
            # also when the fit raises after the private ranges were drawn
            self.__dict__.pop("_plan", None)
            _warnings.stop_reporting(reporting)

    def _fit_binary(self, X, y, classes, sample_weight, norms):
        """Two classes: ``classes[1]`` is the positive class, every other label the negative one."""
        y_pm = np.where(y == classes[1], 1.0, -1.0).astype(X.dtype, copy=False)
        coef, intercept = self._fit_linear(X, y_pm, sample_weight, norms)
        self.classes_ = classes
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept], dtype=coef.dtype)
        return self

    @_warnings.checks_delta  # δ ≥ 1/n: one DataWarning, to the caller, for the δ spent
    def _fit_multiclass(self, X, index, classes, chunked, sample_weight=None):
        """K > 2 classes: one (d + 1) × K model on the whole budget (:mod:`fasterm.linear_model._multiclass`)."""
        coef, intercept, result = _multiclass.fit_multiclass(
            self._kind, X, index, classes.shape[0], epsilon=self._plan[0], delta=self._plan[1],
            data_norm=self.data_norm, radius=self.radius, alpha=self.alpha,
            fit_intercept=self.fit_intercept, intercept_scaling=self.intercept_scaling,
            solver=self.solver, noise=self.noise, calibration=self.calibration, clip=self.clip,
            steps=self.steps, max_steps=self.max_steps, random_state=self._plan[2],
            secure=self.secure, chunked=chunked, sample_weight=sample_weight,
            weight_bound=self.weight_bound)
        self._record(result)
        self.classes_ = classes
        self.coef_ = coef
        self.intercept_ = intercept
        return self

    def decision_function(self, X: np.typing.ArrayLike) -> np.ndarray:
        """Binary: the signed score ⟨coef, x⟩ + intercept, shape (n,), positive
        meaning ``classes_[1]``; K > 2 classes: the (n, K) class scores."""
        scores = self._decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X: np.typing.ArrayLike) -> np.ndarray:
        """The class of each row: ``classes_[1]`` where the binary decision
        function is > 0; for K > 2 the class of the largest score."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(np.intp) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]
