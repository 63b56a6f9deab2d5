"""Differentially private linear models as scikit-learn estimators.

``DPLogisticRegression`` (logistic loss), ``DPLinearSVC`` (hinge loss + L2) and
``DPLinearRegression`` (squared loss): ``fit``/``predict``/``score``,
``decision_function`` (classifiers), ``predict_proba`` (logistic), and
``get_params``/``set_params``/``clone`` like any scikit-learn estimator.  They
need scikit-learn (``pip install "fasterm[sklearn]"``); ``import fasterm``
does not.

Privacy.  A fit is (``epsilon_``, ``delta_``)-differentially private with
respect to replacing one row (x_i, y_i) of the training data, given:

* the *public bounds* — ``data_norm`` (rows are clipped to ‖x‖₂ ≤ data_norm;
  scale features with bounds fixed in advance — ``bounds=(low, high)`` on the
  estimator, :class:`fasterm.preprocessing.BoundedScaler`,
  :func:`fasterm.datasets.scale_to_unit_ball` —, never with statistics of the
  training data; ``bounds="private"`` spends part of the budget on private
  ranges instead), ``label_bound`` for regression (labels clipped), and the
  parameter ``radius``;
* the number of rows n, the number of features and, for classifiers, the set
  of the two labels, which are treated as public (as in every DP library);
* fresh randomness: ``random_state=None`` in deployment.  A fixed seed makes a
  run reproducible for experiments, but a seed known to an adversary removes
  the noise, and two releases computed with the same seed are not covered by
  composition.

``fit`` warns the caller (:class:`fasterm.DataWarning`) when many rows exceed
``data_norm`` or labels exceed ``label_bound``; the warnings are computed from
the data for the caller only and are not part of the release (nothing of them
is stored).  Tuning with scikit-learn's ``GridSearchCV`` or
``cross_val_score`` on private data spends privacy that nobody counts: use
:class:`fasterm.PrivateSearch`.

Everything else stored on a fitted estimator — the number of steps
(``n_iter_``), the step size, the clipping level, the fields of ``result_``
other than the weights — depends only on these public quantities; see :mod:`fasterm._linear` for the
rules behind every default and :func:`fasterm.noisy_pgd`,
:func:`fasterm.noisy_gd` and :func:`fasterm.noisy_sgd` for the theorems behind
the noise.  ``method="auto"`` (default) is "objpert" when ``delta=0`` and
"noisy_pgd" otherwise (:func:`fasterm._linear.resolve_method`).
``method="noisy_pgd"`` runs a noisy gradient method — ``solver`` "auto"
(default; docs/solvers.rst), "pgd", "gd" or "sgd" — with ``noise`` in
{"gaussian", "laplace"} and, for Laplace, ``calibration`` in {"l2", "pure",
"coordinate"}; ``method="objpert"`` is objective perturbation
(:func:`fasterm.objective_perturbation`, pure ε, one certified convex solve
on a smooth surrogate of the loss); ``method="expmech"`` samples from the
exponential mechanism through ``fasterm.expmech_erm`` by a finite
hit-and-run chain, which is *not* certified: it refuses ``delta=0`` and
reports ``delta_ = nan`` (the sampler ships separately, and the fit raises
``ValueError`` if it is absent).  ``DPLinearRegression`` also takes
``method="adassp"`` (sufficient statistics perturbation, :mod:`fasterm.ssp`)
and has its own default rule from n = 5,000 rows (its docstring;
docs/solvers.rst, "Regression").

Sparse input.  ``fit``, ``predict`` and ``decision_function`` take a
scipy.sparse matrix (any format, converted to CSR by scikit-learn's
``validate_data``); ``method="noisy_pgd"`` fits it with the compiled CSR
kernel of :func:`fasterm.noisy_pgd` — the intercept column is stored as one
more value per row, X is never densified — and gives the dense fit for the
same seed up to rounding.  The other methods refuse sparse X (``TypeError``
naming X).  Sample weights: ``fit(X, y, sample_weight)`` with the declared
bound ``weight_bound`` (see :class:`DPLogisticRegression`).

Multiclass.  With K > 2 classes the classifiers fit one K-class model on the
whole budget (:mod:`fasterm._multiclass`): the multinomial logistic loss for
``DPLogisticRegression``, the Crammer–Singer multiclass hinge for
``DPLinearSVC``; every step releases one noisy gradient of the whole
(d + 1) × K weight matrix, with the per-example sensitivity of that matrix,
so the fit spends (``epsilon_``, ``delta_``) in total, not per class
(one-vs-rest with ε/K per class is far less accurate: docs/multiclass.rst).
``coef_`` then has shape (K, d) and ``intercept_`` (K,), as in
scikit-learn.  K > 2 needs ``method="noisy_pgd"`` or "auto" (δ > 0: the
solver rule, noisy SGD from n = 5,000 rows; δ = 0: the noisy class sums, one
pure-ε Laplace release), and X in memory.
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _bounds, _dask, _linear, _multiclass
from . import optimize as _optimize
from .secure import resolve as resolve_secure
from ._design import row_norms_unchecked
from ._validation import check_random_state, is_sparse, labels_as, plain_X_y
from ._warnings import DataWarning

__all__ = ["DPLinearRegression", "DPLinearSVC", "DPLogisticRegression", "EXPECTED_FAILED_CHECKS"]

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
    "method": [StrOptions({"auto", "noisy_pgd", "objpert", "objpert_threshold", "expmech", "adassp"})],
    "noise": [StrOptions({"gaussian", "laplace"})],
    "calibration": [StrOptions({"l2", "pure", "coordinate"})],
    "clip": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"}), None],
    "steps": [Interval(Integral, 1, None, closed="left"), None],
    "max_steps": [Interval(Integral, 1, None, closed="left"), None],
    "solver": [StrOptions(set(_linear.SOLVERS))],
    "random_state": [Interval(Integral, 0, None, closed="left"), np.random.Generator, None,
                     StrOptions({"os"})],
    "secure": ["boolean", None],
    "weight_bound": [Interval(Real, 0, None, closed="neither")],
    "bounds": [None, StrOptions({"private"}), tuple, list, dict],
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


def _integral_labels(classes) -> bool:
    """Labels that scikit-learn's ``check_classification_targets`` accepts without a
    doubt: bools, integers, or floats with integral values (never "continuous");
    anything else is left to that check."""
    kind = classes.dtype.kind
    if kind in "biu":
        return True
    if kind == "f":
        with np.errstate(invalid="ignore"):
            return bool(np.all(classes == classes.astype(np.int64)))
    return False


#: Integer labels in [0, this) are collected by counting (:func:`_unique_labels`).
_COUNTED_LABELS = 1024


def _unique_labels(y) -> np.ndarray:
    """``np.unique(y)`` for a 1-d y; small non-negative integer labels (the usual 0/1, 0…K−1)
    by one count instead of a sort, which at a few hundred rows costs more than the count."""
    if y.dtype.kind == "i" and y.shape[0] and y.max() < _COUNTED_LABELS:
        try:
            counts = np.bincount(y)
        except ValueError:  # a negative label
            return np.unique(y)
        return counts.nonzero()[0].astype(y.dtype)
    return np.unique(y)


def _declared_index(y, classes):
    """Class indices for a declared label set: ``classes[k]`` → k for k ≥ 1, any other label → 0.

    No label of y is checked against the set (that would reveal whether the
    data hold a label outside it): the binary rule "not positive is
    negative", extended to K classes.
    """
    index = np.zeros(y.shape[0], dtype=np.intp)
    for k in range(1, classes.shape[0]):
        index[y == classes[k]] = k
    return index


#: Share of rows (or labels) beyond their declared bound above which ``fit`` warns.
CLIPPED_ROWS_WARN = 0.01
#: A non-C-contiguous X (a DataFrame's values) with more rows than this: the share of rows over
#: ``data_norm`` is estimated from this many evenly spaced rows (the C-contiguous path counts
#: exactly, from the row norms the fit computes anyway).
WARN_SAMPLE_ROWS = 20_000
_FIX_ROWS = ("map the features into the unit ball with public bounds: bounds=(low, high) (or a dict by "
             "column) on the estimator, or fasterm.preprocessing.BoundedScaler in a pipeline "
             "(docs/getting_started.rst); never with statistics of the private rows")


def _warn_clipped_rows(X, norms, data_norm):
    """Warn the caller (:class:`fasterm.DataWarning`) when many rows exceed ``data_norm``.

    Returns X's row norms (computed here if ``norms`` is None, then passed on to
    the design matrix, which needs them: no extra pass for the dense fits that
    build it).  The warning is computed from the data for the caller only: it is
    not stored and not part of the release (docs/guarantees.rst).
    """
    if norms is None:
        from .losses import row_norms

        if type(X) is np.ndarray and X.flags.c_contiguous and X.shape[0]:
            norms = row_norms_unchecked(X)
        elif is_sparse(X):
            over = np.count_nonzero(row_norms(X) > data_norm * (1.0 + 1e-6))
            _clipped_rows_message(over, X.shape[0], data_norm, None)
            return None
        elif type(X) is np.ndarray and X.shape[0]:
            # e.g. a DataFrame's F-ordered values: squared norms by einsum, in X's layout and without
            # a C copy (row_norms would make one); only counted, not passed on, so the design matrix
            # computes its own norms as before (the same bits).
            # Above WARN_SAMPLE_ROWS rows, evenly spaced rows (public indices) estimate the share.
            n = X.shape[0]
            step = -(-n // WARN_SAMPLE_ROWS)
            sub = X[::step]
            with np.errstate(over="ignore", invalid="ignore"):
                sq = np.einsum("ij,ij->i", sub, sub, dtype=np.float64)
            over = np.count_nonzero(sq > (data_norm * (1.0 + 1e-6)) ** 2)
            if step > 1:
                over = int(round(over * n / sub.shape[0]))
            _clipped_rows_message(over, n, data_norm, np.sqrt(sq), sample=sub.shape[0] if step > 1 else None)
            return None
        else:
            return None
    over = np.count_nonzero(norms > data_norm * (1.0 + 1e-6))
    _clipped_rows_message(over, X.shape[0], data_norm, norms)
    return norms


def _clipped_rows_message(over, n, data_norm, norms, sample=None):
    if over > CLIPPED_ROWS_WARN * n:
        median = "" if norms is None else f"; the median row norm is {float(np.median(norms)):.3g}"
        about, est = ("", "") if sample is None else ("about ", f", estimated from {sample} evenly spaced rows")
        warnings.warn(f"{about}{over} of {n} rows ({over / n:.0%}{est}) have a norm above data_norm={data_norm:g} and are "
                      f"clipped to it{median}: the model sees them shrunk, and raw features usually make it "
                      f"useless.  Fix: {_FIX_ROWS}.", DataWarning, stacklevel=5)


def _warn_clipped_labels(y, label_bound):
    """Warn the caller when more than ``CLIPPED_ROWS_WARN`` of the labels exceed ``label_bound``."""
    n = y.shape[0]
    over = int(np.count_nonzero(np.abs(y) > label_bound))
    if over > CLIPPED_ROWS_WARN * n:
        warnings.warn(f"{over} of {n} labels ({over / n:.0%}) have |y| > label_bound={label_bound:g} and are "
                      "clipped to it: predictions are then confined to about [-label_bound, label_bound].  Fix: "
                      "declare a public label_bound that covers the target, or rescale the target with public "
                      "constants before the fit (and undo it after predict).", DataWarning, stacklevel=3)


def _rest(total, share):
    """total − share, rounded down until (total − share) + share ≤ total in floating point, so the
    reported sum of the two parts never exceeds the requested budget."""
    rest = total - share
    while rest > 0.0 and rest + share > total:
        rest = math.nextafter(rest, 0.0)
    return rest


def _check_declared_labels(y, classes, chunked):
    """Raise ValueError if a label of y is not one of the declared ``classes``.

    A label outside the declared label set is outside the data domain, like a
    NaN in X (which raises too): it is refused, not merged into ``classes[0]``
    (as fasterm did before), which fitted a model of labels the caller never
    meant — in the worst case every row in one class.  The error goes to the
    caller, who holds the data; nothing is released.  The message gives the
    count, not the values.
    """
    known = None
    for c in classes.tolist():
        eq = y == c
        known = eq if known is None else known | eq
    if chunked:
        bad = int((~known).sum().compute())
    else:
        known = np.asarray(known, dtype=bool)
        bad = int(y.shape[0] - np.count_nonzero(known)) if known.shape == y.shape else int(y.shape[0])
    if bad:
        raise ValueError(f"{bad} of {y.shape[0]} labels of y are not in the declared classes={classes.tolist()!r}: "
                         "map y onto the declared labels first, or pass classes=None to take np.unique(y) "
                         "(then the label set is treated as public)")


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
        # A public estimator that inherits its __init__ (DPLogisticRegression, DPLinearSVC)
        # gets one of its own with the same signature, so that a misspelt argument is
        # reported under the class the user wrote, not the private base class.
        super().__init_subclass__(**kwargs)
        if cls.__name__.startswith("_") or "__init__" in cls.__dict__:
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
        method = _linear.resolve_method(self.method, self.delta, self.secure, kind=self._kind)
        if method == "adassp" and self._kind != "squared":
            raise ValueError("method='adassp' (sufficient statistics perturbation) is for "
                             "DPLinearRegression only")
        if method == "adassp" and resolve_secure(self.secure):
            raise ValueError("secure=True (or fasterm.secure_mode) needs method='noisy_pgd': AdaSSP's "
                             "releases have no floating-point-safe mode")
        if method == "noisy_pgd" and self.delta == 0.0 and (
                self.noise == "gaussian" or self.calibration == "coordinate"):
            raise ValueError(
                f"delta=0 (pure ε-DP) with method='noisy_pgd' needs noise='laplace' with calibration "
                f"'pure' or 'l2', got noise={self.noise!r}, calibration={self.calibration!r} "
                "(method='auto' or 'objpert' fits delta=0 by objective perturbation)")
        if method in ("objpert", "objpert_threshold") and resolve_secure(self.secure):
            raise ValueError("secure=True (or fasterm.secure_mode) needs method='noisy_pgd': objective "
                             "perturbation's convex solve has no floating-point-safe mode")
        if self.method == "expmech" and resolve_secure(self.secure):
            raise ValueError("secure=True (or fasterm.secure_mode) needs method='noisy_pgd': the "
                             "exponential-mechanism sampler has no floating-point-safe mode")
        if method == "noisy_pgd" and self.solver in ("gd", "sgd") and (
                self._kind == "hinge" or resolve_secure(self.secure)):
            raise ValueError(f"solver={self.solver!r} needs a smooth loss (logistic, squared) and "
                             "secure=False; use solver='pgd' (or 'auto')")
        if method == "noisy_pgd" and self.solver == "sgd" and self.noise != "gaussian":
            raise ValueError("solver='sgd' needs noise='gaussian' (its accounting is Rényi DP)")

    def _validate_fit_data(self, X, y, **kw):
        """``(X, y, row norms or None)``: ``validate_data(self, X, y, dtype=(float64, float32),
        **kw)``, skipped when :func:`fasterm._validation.plain_X_y` shows it would return X
        and y unchanged (then only its attribute updates remain: ``n_features_in_``, and
        no ``feature_names_in_`` for an ndarray X).

        On that path X's finiteness is read off its row norms, which the design
        matrix needs anyway (:func:`fasterm._design.design`): a NaN or an
        infinity makes its row's norm non-finite, and then (or if a huge finite
        row overflows its norm) scikit-learn's check runs and speaks.  One pass
        over X instead of two.
        """
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
        """``validate_data`` for a dask X (:mod:`fasterm._dask`): metadata checks only.

        X stays chunked (the fit runs on the cluster); y must be a numeric 1-d
        array of n entries (dask or numpy), returned as a dask array in X's row
        chunks with its dtype unchanged.
        """
        if _linear.resolve_method(self.method, self.delta, self.secure, chunked=True,
                                  kind=self._kind) != "noisy_pgd":
            raise ValueError(f"method={self.method!r} needs X in memory; dask arrays are fitted "
                             "with method='noisy_pgd'")
        if self.solver in ("gd", "sgd"):
            raise ValueError(f"solver={self.solver!r} needs X in memory; dask arrays are fitted "
                             "with solver='pgd' (or 'auto')")
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        X, _ = _dask.check_X_y(X, None)
        y = _dask.check_y(y, X)
        self.n_features_in_ = X.shape[1]
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return X, y

    def _rows(self, X, norms, chunked):
        """The rows the fit sees, ``(X, row norms or None)``: X itself (``bounds=None``), or X mapped
        into the unit ball with the declared or private bounds (:mod:`fasterm._bounds`).

        Sets ``bounds_`` and the budget of the fit (``_plan``: ε, δ, random state for the
        fit, and the (ε, δ) spent on private ranges).  ``bounds=None``: warns (a
        :class:`fasterm.DataWarning`, to the caller only) when more than
        ``CLIPPED_ROWS_WARN`` of the rows exceed ``data_norm``.
        """
        self._plan = (self.epsilon, self.delta, self.random_state, 0.0, 0.0)
        bounds = self.bounds
        if bounds is None:
            if hasattr(self, "bounds_"):
                del self.bounds_
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
            eps_r, delta_r, _ = _bounds.private_budget(self.epsilon, self.delta, d)
            low, high = _bounds.private_ranges(X, self.epsilon, self.delta, rng)
            self._plan = (_rest(self.epsilon, eps_r), _rest(self.delta, delta_r), rng, eps_r, delta_r)
        else:
            low, high = _bounds.resolve(bounds, d, getattr(self, "feature_names_in_", None))
        self.bounds_ = (low, high)
        return (_bounds.map_chunked(X, low, high) if chunked else _bounds.map_rows(X, low, high)), None

    def _fit_linear(self, X, y, sample_weight=None, row_norms=None):
        # X and y passed _validate_fit_data (or _validate_dask): checked=True, with its row norms
        epsilon, delta, random_state = self._plan[:3]
        coef, intercept, result = _linear.fit_linear(
            self._kind, X, y, epsilon=epsilon, delta=delta, data_norm=self.data_norm,
            radius=self.radius, alpha=self.alpha, fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling, method=self.method, noise=self.noise,
            calibration=self.calibration, clip=self.clip, steps=self.steps,
            max_steps=self.max_steps, random_state=random_state,
            label_bound=getattr(self, "label_bound", None), secure=self.secure, solver=self.solver,
            sample_weight=sample_weight, weight_bound=self.weight_bound, checked=True, row_norms=row_norms)
        self._record(result)
        return coef, intercept

    def _record(self, result):
        # The fit's (ε, δ), plus what bounds="private" spent on the ranges (basic
        # composition, adaptive: Dwork & Roth 2014, Thm 3.16; fasterm._bounds).
        eps_r, delta_r = self._plan[3:]
        del self._plan  # the fit's budget and random state: not kept on the fitted object
        self.result_ = result
        self.epsilon_ = float(result.epsilon) + eps_r
        # None: an approximate release whose δ is not certified (method="expmech").
        self.delta_ = math.nan if result.delta is None else float(result.delta) + delta_r
        # A public count for every method: T for the noisy gradient methods, the
        # sampler's steps for expmech, objective perturbation's iteration cap.
        self.n_iter_ = int(result.steps)

    def _decision(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=_FLOATS, accept_sparse="csr")
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
                 method=_D["method"], noise=_D["noise"], calibration=_D["calibration"],
                 clip=_D["clip"], steps=_D["steps"], max_steps=_D["max_steps"], random_state=None,
                 classes=None, secure=None, solver=_D["solver"], weight_bound=_D["weight_bound"],
                 bounds=None) -> None:
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
        self.method = method
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
        (:mod:`fasterm._multiclass`).  Rows with ‖x‖ > ``data_norm`` are
        clipped to it (with ``bounds``: mapped first, see ``bounds``); when
        more than 1% are, ``fit`` warns (:class:`fasterm.DataWarning`, to the
        caller only: not stored, not part of the release).
        """
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
            X, norms = self._rows(X, norms, chunked)
            if self.classes is not None:
                if classes.shape[0] > 2:
                    return self._fit_multiclass(X, None if chunked else _declared_index(y, classes), classes,
                                                chunked, sample_weight)
                return self._fit_binary(X, y, classes, sample_weight, norms)
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
            if classes.shape[0] > 2:
                index = None if chunked else np.searchsorted(classes, y)  # y's values are all in classes
                return self._fit_multiclass(X, index, classes, chunked, sample_weight)
            return self._fit_binary(X, y, classes, sample_weight, norms)
        finally:
            # the fit's budget and random state (a Generator for bounds="private"): never kept,
            # also when the fit raises after the private ranges were drawn
            self.__dict__.pop("_plan", None)

    def _fit_binary(self, X, y, classes, sample_weight, norms):
        """Two classes: ``classes[1]`` is the positive class, every other label the negative one."""
        y_pm = np.where(y == classes[1], 1.0, -1.0).astype(X.dtype, copy=False)
        coef, intercept = self._fit_linear(X, y_pm, sample_weight, norms)
        self.classes_ = classes
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept], dtype=coef.dtype)
        return self

    def _fit_multiclass(self, X, index, classes, chunked, sample_weight=None):
        """K > 2 classes: one (d + 1) × K model on the whole budget (:mod:`fasterm._multiclass`)."""
        coef, intercept, result = _multiclass.fit_multiclass(
            self._kind, X, index, classes.shape[0], epsilon=self._plan[0], delta=self._plan[1],
            data_norm=self.data_norm, radius=self.radius, alpha=self.alpha,
            fit_intercept=self.fit_intercept, intercept_scaling=self.intercept_scaling,
            method=self.method, noise=self.noise, calibration=self.calibration, clip=self.clip,
            steps=self.steps, max_steps=self.max_steps, random_state=self._plan[2],
            secure=self.secure, solver=self.solver, chunked=chunked, sample_weight=sample_weight,
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


class DPLogisticRegression(_DPLinearClassifier):
    """Differentially private logistic regression: binary, or multinomial for K > 2 classes.

    Minimises (1/n) Σ log(1 + exp(−y_i(⟨w, x_i⟩ + b))) + α/2·‖(w, b/s)‖² over
    ‖(w, b/s)‖₂ ≤ ``radius`` privately; for K > 2 classes the multinomial
    loss (1/n) Σ −log softmax(Wᵀ(x_i, s))_{y_i} + α/2·‖W‖²_F over the
    Frobenius ball ‖W‖_F ≤ ``radius`` (:mod:`fasterm._multiclass`).  See the
    module docstring for the privacy statement and :mod:`fasterm._linear` for
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
        ε-DP: by objective perturbation with the default ``method="auto"``,
        or with ``method="noisy_pgd"`` and ``noise="laplace"``
        (``calibration`` "pure" or "l2").
    data_norm : float > 0, default=1.0
        Public bound X on ‖x‖₂: rows are assumed (and clipped) to norm ≤ X —
        scale features with public bounds first.
    radius : float > 0, default=50.0
        Public bound on ‖(coef, intercept/intercept_scaling)‖₂ (the feasible
        set of PGD).  The noise does not depend on it; it sets the step size
        and caps |logit| at radius·√(data_norm² + intercept_scaling²).
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
        perturbation (``method="objpert"``, also through "auto"), where it
        sets the ridge μ/(2s²) on the intercept (chosen on data other than
        the breast-cancer set: ``docs/pure.rst``).
    method : {"auto", "noisy_pgd", "objpert", "objpert_threshold", "expmech"}, default="auto"
        "auto": "objpert" for ``delta=0`` (unless secure mode or a dask X:
        then "noisy_pgd"), "noisy_pgd" otherwise.  Noisy projected gradient
        descent; objective perturbation (:func:`fasterm.objective_perturbation`
        on ``SmoothHinge()`` — ``LogCosh(width=label_bound)`` for regression —,
        (ε, 0)-DP; ``alpha`` is a floor of its regularization, the result is
        projected onto the ``radius`` ball, ``noise``, ``calibration``,
        ``clip``, ``steps``, ``max_steps`` are unused); "objpert_threshold"
        (classifiers with an intercept): objective perturbation with 0.8ε and
        the intercept chosen privately with 0.2ε (docs/pure.rst); or the exponential
        mechanism (``fasterm.expmech_erm``, an uncertified hit-and-run chain:
        needs ``delta > 0`` and reports ``delta_ = nan``; ``noise``,
        ``calibration``, ``clip`` and ``max_steps`` are then unused,
        ``steps`` is the sampler's).
    noise : {"gaussian", "laplace"}, default="gaussian"
    calibration : {"l2", "pure", "coordinate"}, default="l2"
        Laplace calibration (see :func:`fasterm.noisy_pgd`); ignored for
        Gaussian noise, which is calibrated exactly through μ-GDP.
    clip : float > 0, "auto" or None, default="auto"
        Per-example gradient clipping norm c (the noise scales with c).
        "auto": c = X_aug/(1 + e), the gradient norm of a full-norm row at
        margin 1 (:mod:`fasterm._linear`); None: no clipping (c = G).
    steps : int >= 1 or None, default=None
        Number of gradient steps T; None: the solver's rule (:mod:`fasterm._linear`).
    max_steps : int >= 1 or None, default=None
        Compute budget for the default T of noisy_pgd (None: 100) and
        noisy_gd (None: 40, and 20 below n = 1,000 rows for the binary logistic
        model with Gaussian noise; 80 for K > 2 classes); unused by noisy_sgd.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise.  Use None for a release; an int reproduces a fit.
    secure : bool or None, default=None
        Floating-point-safe noise (exact discrete noise on a power-of-two grid,
        :mod:`fasterm.secure`); None follows :func:`fasterm.secure_mode`.
        Needs ``method="noisy_pgd"``; then ``random_state="os"`` draws the
        noise from operating-system entropy.
    solver : {"auto", "pgd", "gd", "sgd"}, default="auto"
        The private optimiser of ``method="noisy_pgd"``: noisy projected
        gradient descent (:func:`fasterm.noisy_pgd`), noisy gradient descent
        with the smooth step (:func:`fasterm.noisy_gd`) or Poisson-subsampled
        noisy SGD (:func:`fasterm.noisy_sgd`).  "auto" picks one from n, the
        loss, the noise and the mode only (docs/solvers.rst; hinge loss,
        secure mode and dask arrays use "pgd").
    weight_bound : float > 0, default=1.0
        Public bound B on the sample weights of ``fit(X, y, sample_weight)``
        (declared like ``data_norm``): each weight is mapped to
        min(max(w, 0), B) (NaN to 0), never refused.  The objective becomes
        (1/n) Σ w_i ℓ_i + α/2·‖(w, b/s)‖² (normalised by n, which is
        public, not by Σ w_i).  A record is the triple (x_i, y_i, w_i); its
        clipped gradient times w_i has norm ≤ B·c, so the sensitivity — and
        the noise — scale by B (:func:`fasterm.noisy_pgd`).  Unused without
        weights; ``sample_weight=np.ones(n)`` with B = 1 gives the
        unweighted fit bit for bit.  Only ``method="noisy_pgd"`` takes
        weights (other methods raise ``ValueError`` naming sample_weight).
    classes : sequence of K ≥ 2 distinct labels or None, default=None
        The declared label set (for two: (negative, positive)).  Given, a
        label equal to ``classes[k]`` is class k, and a label outside the set
        raises ``ValueError`` (it is outside the data domain, like a NaN; it
        used to be merged into ``classes[0]`` in silence); nothing about y
        beyond that enters the fit.  None: ``np.unique(y)`` (scikit-learn's
        convention; the set of label values is then treated as public).
    bounds : None, (low, high), dict or "private", default=None
        Per-feature bounds that map every row into the unit ball inside
        ``fit`` *and* ``predict``/``decision_function``/``predict_proba``:
        x_j ↦ (clip((x_j − low_j)/(high_j − low_j), 0, 1) − 1/2)/(√d/2)
        (:mod:`fasterm._bounds`; the same code as
        :class:`fasterm.preprocessing.BoundedScaler`).  None: rows are used
        as given and must lie in the ``data_norm`` ball (longer rows are
        clipped; ``fit`` warns when more than 1% are).  ``(low, high)``:
        scalars or per-feature arrays declared from public knowledge
        (documentation, instrument ranges), never from the private rows; a
        dict {column: (low, high)} for a DataFrame X names every column.
        ``"private"``: spends ε/4 and δ/4 on private per-feature ranges (two
        private quartiles per feature, widened by the interquartile range;
        the rule and its theorem in :mod:`fasterm._bounds`), fits with the
        rest, and reports the total in ``epsilon_``/``delta_``; needs many
        rows per feature (docs/getting_started.rst).  Keep ``data_norm=1``
        with bounds.  Dense X only.

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
        ``fasterm.objpert.MAX_STEPS`` — a public constant, since the number
        of Newton iterations run depends on the data and the noise.
    result_ : fasterm.OptimizeResult (fasterm.objpert.ObjPertResult for objective perturbation)
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
    z = Wᵀ(x_i, s), over the Frobenius ball (:mod:`fasterm._multiclass`).  Parameters and attributes are those of
    :class:`DPLogisticRegression` (no ``predict_proba``), except that
    ``clip="auto"`` is c = X_aug/2 (clipped hinge gradients are scale-free, so
    the fit depends little on c).
    """

    _kind = "hinge"


class DPLinearRegression(RegressorMixin, _DPLinearModel):
    """Differentially private least-squares regression.

    Fits y ≈ ⟨w, x⟩ + b privately, with rows clipped to ‖x‖ ≤ ``data_norm`` and
    labels clipped to [−label_bound, label_bound].  The gradient methods
    (``method="noisy_pgd"``, the default for δ > 0) and objective perturbation
    (``"objpert"``, the default for δ = 0) minimise
    (1/n) Σ (y_i − ⟨w, x_i⟩ − b)² + α/2·‖(w, b/s)‖² over ‖(w, b/s)‖₂ ≤ R.

    Default rule (docs/solvers.rst, "Regression"; public quantities only): with
    Gaussian noise, X in memory and n ≥ 5,000 rows, ``solver="auto"`` is
    noisy_gd with T = clamp(⌈n/50⌉, 200, 1000) steps and, for ``radius=None``,
    R = clamp(n·μ/(10·p), 5, 100) (μ the GDP parameter of (ε, δ), p = d + 1
    with the intercept; :func:`fasterm._linear.regression_gd_rule`): the
    number of steps and the ball grow with n, so an ill-conditioned problem
    converges where the noise is small, and clipped gradients keep the noise
    independent of R; ``alpha=None`` is no ridge there.  Below 5,000 rows the previous rule (noisy_gd, T ≤ 40,
    R = 5).  ``method="adassp"`` is sufficient-statistics perturbation (AdaSSP
    of Wang 2018, :func:`fasterm.ssp.adassp`, δ > 0 or δ = 0, dense or CSR X,
    weights): no ball and no steps, but on the comparison data its noise on
    Σ aaᵀ cost far more than the gradient methods' (docs/solvers.rst).
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
    sample_weight (``fit``) : ``"noisy_pgd"`` and ``"adassp"`` take weights
        mapped into [0, ``weight_bound``]; every sensitivity scales by
        ``weight_bound`` (:mod:`fasterm.ssp` for AdaSSP's proof).

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
                 method=_D["method"], noise=_D["noise"], calibration=_D["calibration"],
                 clip=_D["clip"], steps=_D["steps"], max_steps=_D["max_steps"], random_state=None,
                 secure=None, solver=_D["solver"], weight_bound=_D["weight_bound"], bounds=None) -> None:
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
        self.method = method
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
            _linear.warn_on_boundary(self._kind, self.result_, coef, intercept, self.radius, self.fit_intercept,
                                     self.intercept_scaling, type(self).__name__)
            return self
        finally:
            # the fit's budget and random state (a Generator for bounds="private"): never kept,
            # also when the fit raises after the private ranges were drawn
            self.__dict__.pop("_plan", None)

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
