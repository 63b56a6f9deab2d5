"""Private hyperparameter search: every candidate's training *and* the selection on one budget.

:class:`PrivateSearch` accounts for the privacy that tuning on private data
spends (scikit-learn's ``GridSearchCV`` and ``cross_val_score`` on private
data spend privacy nobody counts).  Why random stopping, what the search
costs against the default estimator, and the measurements:
docs/model_selection.rst.  Needs scikit-learn (``pip install "fasterm[sklearn]"``).

Algorithm (random stopping, Liu & Talwar 2019, in the form of Papernot &
Steinke 2022).  Draw K ~ D_{η,γ}, the truncated negative binomial
distribution (``eta`` = 0: logarithmic, η = 1: geometric), with E[K] =
``expected_runs`` (public; default twice the number of candidates).  Each of
the K runs, with fresh randomness: pick a candidate uniformly at random; fit
it (μ_fit-GDP); score the model on the same data with a Gaussian mechanism —
correct classifications (sensitivity 1, replace-one) or −Σ(y − ŷ)² with y, ŷ
clipped to [−Y, Y] (sensitivity 4Y²; to ``target_bounds`` [low, high] when declared,
sensitivity (high − low)²), noise N(0, (Δ/μ_score)²).  A run is
μ-GDP, μ² = μ_fit² + μ_score² (Dong, Roth & Su 2022, Cor. 3.3).  Only the
best-scoring run is released.

**Theorem** (Papernot & Steinke, ICLR 2022, Thm. 2;
:func:`fasterm.accounting.private_search_epsilon`): if a run is (λ, ε_λ)-RDP
for all λ > 1, the search is (λ, ε_λ + (1 + η)(1 − 1/λ̂)ε_λ̂ +
(1 + η)·log(1/γ)/λ̂ + log E[K]/(λ − 1))-RDP for every λ̂ ≥ 1.  μ is the largest
within the budget (:func:`fasterm.accounting.calibrate_private_search`);
``score_fraction`` of μ² goes to the score.  ``mu_``, ``epsilon_`` (≤
``epsilon``) and ``delta_`` are public constants of the budget, E[K] and η.

Stored: the release and public constants only (docs/guarantees.rst, "The
release surface") — not K, the other runs, their scores or realised μ (the
theorem averages over a hidden K); ``best_estimator_.random_state`` is reset
to None.  Candidates must be Gaussian-noise fits accounted in GDP (no noisy
SGD); the grid may not set ``epsilon``, ``delta`` or ``random_state``.

Warnings go to the caller only (they are not released): each run's warnings are
caught, and after the search one :class:`fasterm.DataWarning` names the kinds
of those of the released run, without counts or values — shown run by run,
they would count the hidden K and carry the hidden runs' values
(docs/model_selection.rst, "Warnings").
"""

from __future__ import annotations

import math
import re
import warnings
from numbers import Integral, Real

import numpy as np

from ._buildinfo import needs_sklearn

with needs_sklearn("fasterm.model_selection"):  # the extra: pip install "fasterm[sklearn]"
    from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
    from sklearn.model_selection import ParameterGrid
    from sklearn.utils._param_validation import Interval
    from sklearn.utils.validation import check_is_fitted, check_X_y

import fasterm.accounting as accounting
import fasterm._warnings as _warnings
from .linear_model import DPLinearRegression, DPLinearSVC, DPLogisticRegression
from ._validation import check_random_state
from ._warnings import DataWarning

__all__ = ["PrivateSearch", "check_pipeline"]

#: The share of each run's μ² spent on the score (a public constant).
SCORE_FRACTION = 0.1
_RESERVED = ("epsilon", "delta", "random_state")
#: The estimators a search runs (their subclasses too): the private linear models.
_ESTIMATORS = (DPLogisticRegression, DPLinearSVC, DPLinearRegression)
# A run's fit targets μ·(1 − MU_MARGIN): the estimator's own rounding may not push its μ above the plan.
_MU_MARGIN = 1e-9
#: The δ at which each run's fit is given its budget (any δ names the same μ-GDP fit).
RUN_DELTA = 1e-6


def _draw_runs(rng, eta, gamma):
    """K ~ D_{η,γ} (Papernot & Steinke 2022, Def. 1): the logarithmic distribution for η = 0
    (numpy's logseries with p = 1 − γ: P[K = k] = (1 − γ)^k/(k log(1/γ))); for η > 0 by
    inversion of P[K = 1] = η(1 − γ)/(γ^{−η} − 1), P[K = k + 1] = P[K = k]·(1 − γ)(k + η)/(k + 1)."""
    if eta == 0.0:
        return int(rng.logseries(1.0 - gamma))
    u = rng.random()
    k, p = 1, eta * (1.0 - gamma) / math.expm1(-eta * math.log(gamma))
    cdf = p
    # p reaches 0 only where the remaining mass is below the float resolution of u
    while cdf < u and p > 0.0:
        p *= (1.0 - gamma) * (k + eta) / (k + 1.0)
        k += 1
        cdf += p
    return k


def _run_mu(fitted) -> float:
    """The GDP μ a fit spent: √T·Δ₂/σ for its T Gaussian releases (Dong, Roth & Su 2022); the fit's
    plan (``plan_``) says whether it was T full-batch Gaussian releases."""
    result = fitted.result_
    if not fitted.plan_.full_batch_gaussian or not getattr(result, "sensitivity", None):
        raise ValueError("PrivateSearch composes Gaussian-noise fits in GDP: each candidate needs "
                         "solver 'noisy_gd' or 'noisy_pgd' (or 'auto' below 5,000 rows), Gaussian noise and "
                         "secure=False ('auto' picks noisy_sgd from 5,000 rows: set solver='noisy_gd')")
    return math.sqrt(result.steps) * result.sensitivity / result.noise_scale


_ACCEPTED = ("PrivateSearch accepts preprocessing that learns nothing: fasterm.preprocessing.BoundedScaler, "
             "FunctionTransformer (a per-record map fixed in advance), OneHotEncoder with declared categories "
             "and no min_frequency, max_categories or handle_unknown='infrequent_if_exist', Pipeline of these "
             "and ColumnTransformer of these with sparse_threshold=0 and columns given as names, indices, a "
             "slice or a boolean mask (docs/model_selection.rst, \"Pipelines\")")


def _describe(columns) -> str:
    """A short public description of a column selector for an error message."""
    from sklearn.compose import make_column_selector

    if isinstance(columns, make_column_selector):
        args = {k: getattr(columns, k) for k in ("pattern", "dtype_include", "dtype_exclude")}
        return "make_column_selector(" + ", ".join(f"{k}={v!r}" for k, v in args.items() if v is not None) + ")"
    text = repr(columns)
    return text if len(text) <= 80 else text[:77] + "..."


def _column_refusal(columns):
    """None if a ColumnTransformer's ``columns`` are public constants — a column name or index, a
    list/tuple/array/Index of names, of indices or of booleans (a mask), or a slice of these — else
    why not.  A callable (``make_column_selector`` included) chooses the columns from the data
    passed to ``fit``: docs/model_selection.rst, "Pipelines"."""
    if callable(columns):
        return ("is a callable, which chooses the columns from the data passed to fit (make_column_selector "
                "reads that data's dtypes and names; a dtype is inferred from the values: one missing value "
                "makes an integer column float), so a neighbouring data set can select other columns and "
                "change transformers_ and the shape of coef_; pass the column names (a list), indices, a "
                "slice or a boolean mask")
    if isinstance(columns, (str, Integral)):
        return None
    if isinstance(columns, slice):
        ends = (columns.start, columns.stop, columns.step)
        return None if all(e is None or isinstance(e, (str, Integral)) for e in ends) else \
            "is a slice whose ends are not column names or indices"
    try:
        items = np.asarray(columns, dtype=object)
    except (TypeError, ValueError):
        items = None
    if items is not None and items.ndim == 1 and all(isinstance(c, (str, Integral)) for c in items):
        return None
    return "is not a column name or index, a list of names or indices, a slice or a boolean mask"


def _refusal(step):
    """None if a preprocessing step's ``fit`` learns nothing from the values of X (a public rule on
    its type and parameters), else where and why, naming the offending argument.

    Accepted: :class:`fasterm.preprocessing.BoundedScaler`; scikit-learn's
    ``FunctionTransformer`` (its function must be a per-record map fixed in advance: documented,
    not checkable); ``OneHotEncoder`` with declared ``categories`` (not "auto"), ``min_frequency``
    and ``max_categories`` None and ``handle_unknown`` not "infrequent_if_exist" (these count the
    rows of each category); "passthrough" and "drop"; a ``Pipeline`` of these, or a
    ``ColumnTransformer`` of these with ``sparse_threshold=0`` (otherwise its ``sparse_output_`` is
    decided from the density of the data) whose ``columns`` are public constants
    (:func:`_column_refusal`: names, indices, slices, boolean masks; never a callable, which reads
    the data).  The remainder's columns are the complement of those in the data's public schema.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

    from .preprocessing import BoundedScaler

    if step is None or (isinstance(step, str) and step in ("passthrough", "drop")):
        return None
    if type(step) in (BoundedScaler, FunctionTransformer):
        return None
    if type(step) is OneHotEncoder:
        # min_frequency / max_categories / 'infrequent_if_exist' count the rows of each category
        # (infrequent_categories_ would then depend on the private data)
        if isinstance(step.categories, str) and step.categories == "auto":
            return ": categories='auto' learns the categories from the rows; declare them (categories=[[...], ...])"
        for name in ("min_frequency", "max_categories"):
            if getattr(step, name) is not None:
                return f": {name}={getattr(step, name)!r} counts the rows of each category; set {name}=None"
        if isinstance(step.handle_unknown, str) and step.handle_unknown == "infrequent_if_exist":
            return (": handle_unknown='infrequent_if_exist' counts the rows of each category; "
                    "use handle_unknown='error' or 'ignore'")
        return None
    if type(step) is Pipeline:
        for name, s in step.steps:
            why = _refusal(s)
            if why is not None:
                return f", step {name!r} ({type(s).__name__}){why}"
        return None
    if type(step) is ColumnTransformer:
        if step.sparse_threshold != 0:
            return (f": sparse_threshold={step.sparse_threshold!r} decides sparse_output_ (and the output's "
                    "format) from the density of the data; set sparse_threshold=0")
        for name, t, columns in step.transformers:
            why = _column_refusal(columns)
            if why is not None:
                return f", transformer {name!r}: columns={_describe(columns)} {why}"
            why = _refusal(t)
            if why is not None:
                return f", transformer {name!r} ({type(t).__name__}){why}"
        why = _refusal(step.remainder)
        return None if why is None else f", remainder ({type(step.remainder).__name__}){why}"
    return " may learn from the data"


def _final(estimator):
    """``(the fasterm estimator, its parameter prefix)`` of an estimator or a Pipeline ending in one;
    TypeError for anything else, or for preprocessing that learns from the data (:func:`_refusal`)."""
    from sklearn.pipeline import Pipeline

    if isinstance(estimator, _ESTIMATORS):
        final, prefix = estimator, ""
    elif type(estimator) is Pipeline and estimator.steps and isinstance(estimator.steps[-1][1], _ESTIMATORS):
        for name, step in estimator.steps[:-1]:
            why = _refusal(step)
            if why is not None:
                raise TypeError(f"estimator: pipeline step {name!r} ({type(step).__name__}){why}.  Preprocessing "
                                f"that learns from the private rows spends privacy no accountant sees; {_ACCEPTED}")
        final, prefix = estimator.steps[-1][1], estimator.steps[-1][0] + "__"
    else:
        raise TypeError(f"estimator must be a fasterm estimator (DPLogisticRegression, DPLinearSVC, "
                        f"DPLinearRegression) or a Pipeline ending in one, got {type(estimator).__name__}")
    if final.bounds is not None and isinstance(final.bounds, str):
        raise TypeError("estimator: bounds='private' spends part of each fit's budget on ranges outside the "
                        "GDP accounting of PrivateSearch; declare bounds=(low, high) or use a BoundedScaler")
    return final, prefix


#: The kinds of :class:`fasterm.DataWarning` a fit emits, each recognised by a phrase of its message,
#: and the search's name for it (without the counts, norms and feature names of the message).
_WARNING_KINDS = (
    ("have a norm above data_norm", "rows with a norm above data_norm were clipped to it"),
    ("have |y| > label_bound", "labels with |y| above label_bound were clipped to it"),
    ("missed the data on", "the declared feature bounds missed the data of some features"),
    ("boundary of the parameter ball", "the fitted parameters lie on the boundary of the parameter ball (radius)"),
)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?%?(?!\w)")


def _warning_kind(record) -> str:
    """A caught warning as a kind without numbers: a known DataWarning by its name in
    :data:`_WARNING_KINDS`, any other warning by its category and first line, numbers replaced by '#'."""
    message = str(record.message)
    if issubclass(record.category, DataWarning):
        for phrase, kind in _WARNING_KINDS:
            if phrase in message:
                return kind
    line = _NUMBER.sub("#", message.split("\n")[0])
    return f"{record.category.__name__}: {line if len(line) <= 160 else line[:157] + '...'}"


def _warning_summary(records):
    """The search's one :class:`fasterm.DataWarning`, from the warnings of the released run only
    (None if it gave none): their kinds, de-duplicated, in a fixed order, without counts or values."""
    kinds = {_warning_kind(r) for r in records}
    if not kinds:
        return None
    known = [k for _, k in _WARNING_KINDS if k in kinds]
    kinds = known + sorted(kinds.difference(known))
    return DataWarning(
        "PrivateSearch: the released run (the fit of best_params_ and its score) warned: " + "; ".join(kinds)
        + ".  The other runs' warnings are not shown, since their number and fits stay hidden "
        "(docs/model_selection.rst, \"Warnings\"); a single fit of the estimator explains each kind.  Silence "
        "with warnings.simplefilter('ignore', fasterm.DataWarning).")


def _score(estimator, X, y, classifier):
    """(score, sensitivity): correct predictions (Δ = 1), or −Σ(y − ŷ)² with y and ŷ clipped to the
    target's declared range [low, high] — ``target_bounds``, else [−Y, Y] for Y = ``label_bound`` —
    (each term in [0, (high − low)²]: Δ = (high − low)², 4Y² for [−Y, Y])."""
    pred = estimator.predict(X)
    if classifier:  # y is 1-d with n entries: an elementwise count
        return float(np.count_nonzero(np.asarray(pred) == y)), 1.0
    final = _final(estimator)[0]
    if final.target_bounds is None:
        low, high = -float(final.label_bound), float(final.label_bound)
    else:
        low, high = (float(b) for b in final.target_bounds)
    r = np.clip(np.asarray(y, dtype=np.float64), low, high) - np.clip(np.asarray(pred, dtype=np.float64), low, high)
    return -float(np.dot(r, r)), (high - low) ** 2


class PrivateSearch(MetaEstimatorMixin, BaseEstimator):
    """Differentially private hyperparameter search over a grid (random stopping).

    Parameters
    ----------
    estimator : a fasterm estimator (``DPLogisticRegression``, ``DPLinearSVC``,
        ``DPLinearRegression``), or a scikit-learn ``Pipeline`` ending in one
        whose other steps learn nothing from the data:
        :class:`fasterm.preprocessing.BoundedScaler`, ``FunctionTransformer``
        (its function must be a per-record map fixed in advance, which cannot
        be checked), ``OneHotEncoder`` with declared ``categories`` (and
        ``min_frequency``/``max_categories`` None, ``handle_unknown`` not
        "infrequent_if_exist": those count rows), "passthrough"/"drop",
        ``Pipeline`` made of these and ``ColumnTransformer`` made of these
        with ``sparse_threshold=0`` whose ``columns`` are given as column
        names, indices, slices or boolean masks; anything else
        (``StandardScaler``, an encoder with ``categories="auto"``, a
        callable column selector — ``make_column_selector`` too: it chooses
        from the dtypes pandas inferred from the values, which one record can
        change —, …) may learn from the private rows and raises ``TypeError``
        naming the step and the argument, as does ``bounds="private"`` (its
        ranges are not in the search's GDP accounting).  Not fitted; its
        parameters are the defaults of every candidate.
    param_grid : dict of lists, or list of such dicts (scikit-learn's
        ``ParameterGrid``; for a pipeline, ``step__parameter`` names); may not
        set epsilon, delta or random_state.
    epsilon, delta : the total budget of the search (training of every run
        and the selection), δ > 0.
    random_state : None, int or numpy.random.Generator — a fixed-size draw
        from it seeds an internal ``SeedSequence``, which gives K and one
        child stream per run (the choice of the candidate, the fit's noise and
        the score's noise); a Generator advances by the same amount whatever
        K, and nothing is spawned from it.  An int or a Generator stays on the
        search as its parameter and reproduces the noise: None in deployment.
    expected_runs : float > 1 or None, default=None
        E[K]; None: 2 × the number of candidates.  Larger values try more
        candidates at a slightly smaller budget per run (log E[K] in the
        theorem).
    eta : float ≥ 0, default=0.0
        η of D_{η,γ}: 0 the logarithmic distribution, 1 the geometric
        (Liu & Talwar's random stopping).  The cost grows with 1 + η.
    score_fraction : float in (0, 1), default=0.1
        Share of each run's μ² spent on the noisy score.

    Attributes
    ----------
    best_estimator_ : the fitted estimator of the best run (its own
        ``epsilon_`` is that run's share; the search's total is below).
    best_params_ : dict, the candidate of the best run.
    best_score_ : float, its noisy score divided by n (noisy training
        accuracy for classifiers, −noisy mean squared error for regressors).
    epsilon_, delta_ : the privacy spent by the whole search (≤ the budget),
        Papernot & Steinke's bound at the calibrated ``mu_``.
    expected_runs_ : float, E[K] (public: the number of runs K itself is not
        released, module docstring).
    mu_ : float, the calibrated GDP μ of each run (fit and score), a public
        constant of (epsilon, delta, eta, expected_runs).

    Warns
    -----
    DataWarning
        At most one per ``fit``, after the search: the kinds of warnings the
        released run gave (rows clipped to ``data_norm``, labels clipped to
        ``label_bound``, bounds that miss the data, a model on the boundary of
        the ``radius`` ball; another warning by its category and first line
        with its numbers replaced by "#"), without counts or values.  The
        other runs' warnings are caught and dropped: their number is K and
        their values are those of models that are not released
        (docs/model_selection.rst, "Warnings").

    The theorem and the algorithm: module docstring.
    """

    _parameter_constraints: dict = {
        "estimator": [BaseEstimator],
        "param_grid": [dict, list],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "random_state": [Interval(Integral, 0, None, closed="left"), np.random.Generator, None],
        "expected_runs": [Interval(Real, 1, None, closed="neither"), None],
        "eta": [Interval(Real, 0, None, closed="left")],
        "score_fraction": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, estimator, param_grid, *, epsilon=1.0, delta=1e-5, random_state=None,
                 expected_runs=None, eta=0.0, score_fraction=SCORE_FRACTION) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.expected_runs = expected_runs
        self.eta = eta
        self.score_fraction = score_fraction

    def _candidates(self, n):
        """The grid, each candidate checked before any fit: a parameter of the estimator, and a
        Gaussian-noise fit in GDP (public checks: the parameters and n)."""
        final, prefix = _final(self.estimator)
        try:
            grid = list(ParameterGrid(self.param_grid))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"param_grid: {exc}") from exc
        if not grid:
            raise ValueError("param_grid has no candidate")
        valid = self.estimator.get_params(deep=bool(prefix))
        for params in grid:
            for name in params:
                if name in _RESERVED or name in {prefix + r for r in _RESERVED}:
                    raise ValueError(f"param_grid may not set {name!r}: PrivateSearch sets epsilon, delta "
                                     "and random_state of every run")
                if name not in valid:
                    raise ValueError(f"param_grid: {name!r} is not a parameter of {type(self.estimator).__name__}")
            # the candidate checked as a whole (a grid may change a pipeline step, or set bounds), then
            # its fit plan for n rows (d is not needed for the solver and the noise)
            candidate = clone(_final(clone(self.estimator).set_params(**params))[0])
            try:
                plan = candidate.set_params(epsilon=float(self.epsilon), delta=float(self.delta)).plan(n, None)
            except ValueError as exc:
                plan, problem = None, exc
            else:
                problem = None
            if plan is None or not plan.full_batch_gaussian:
                raise ValueError(
                    f"param_grid candidate {params}: PrivateSearch composes Gaussian-noise fits in GDP, so "
                    "each candidate needs solver 'noisy_gd' or 'noisy_pgd' (or 'auto'), Gaussian noise and "
                    "secure=False ('auto' picks noisy_sgd from 5,000 rows: set solver='noisy_gd')") from problem
        return grid

    def fit(self, X, y):
        """Run the search on (X, y); returns ``self`` (module docstring)."""
        self._validate_params()
        # y 1-d with n entries: the score is an elementwise count (sensitivity 1)
        if _final(self.estimator)[1]:  # a pipeline takes X as its first step does (a DataFrame, strings)
            from sklearn.utils import check_consistent_length, column_or_1d
            from sklearn.utils.validation import _num_samples

            y_arr = column_or_1d(y)
            if not is_classifier(self.estimator):
                y_arr = np.asarray(y_arr, dtype=np.float64)
            check_consistent_length(X, y_arr)
            n = _num_samples(X)
        else:
            X, y_arr = check_X_y(X, y, dtype=[np.float64, np.float32],
                                 y_numeric=not is_classifier(self.estimator))
            n = X.shape[0]
        grid = self._candidates(n)
        runs = 2.0 * len(grid) if self.expected_runs is None else float(self.expected_runs)
        eps, delta, eta = float(self.epsilon), float(self.delta), float(self.eta)
        mu, gamma = accounting.calibrate_private_search(eps, delta, eta=eta, expected_runs=runs)
        f = float(self.score_fraction)
        mu_fit, mu_score = mu * math.sqrt(1.0 - f), mu * math.sqrt(f)
        # Each fit is asked for (ε_run, δ_run) on the μ_fit-GDP curve: its σ depends on μ only, so δ_run
        # is a fixed public value, small enough to keep ε_run > 0 and far from underflow.
        run_delta = RUN_DELTA
        run_eps = accounting.gaussian_epsilon(mu_fit * (1.0 - _MU_MARGIN), run_delta)
        if not run_eps > 0.0:
            raise ValueError(f"epsilon, delta, eta and expected_runs leave no budget for a run (mu={mu:.3g})")
        classifier = is_classifier(self.estimator)
        # The caller's generator (stored on the search as its parameter) gives a FIXED-size draw:
        # it advances by the same amount whatever K and the data, and spawns nothing (spawning K
        # children from it would record K in its seed sequence and let it replay every run's noise).
        # K and the runs' streams come from an internal seed sequence built from that draw.
        entropy = check_random_state(self.random_state).integers(0, 2**63, size=4, dtype=np.uint64)
        k_seq, runs_seq = np.random.SeedSequence([int(e) for e in entropy]).spawn(2)
        k = _draw_runs(np.random.default_rng(k_seq), eta, gamma)
        best = None
        _warnings.warn_large_delta(delta, n, type(self).__name__)  # the search's δ, once
        with _warnings.delta_checked_outside():  # not again by each run, at its own δ (RUN_DELTA)
            for child in (np.random.default_rng(c) for c in runs_seq.spawn(k)):
                params = grid[int(child.integers(len(grid)))]
                prefix = _final(self.estimator)[1]
                est = clone(self.estimator).set_params(**params, **{prefix + "epsilon": run_eps, prefix + "delta": run_delta,
                                                                    prefix + "random_state": child})
                # each run's warnings are caught: shown one by one, they would count the hidden runs K
                # and carry each run's values (‖w‖ of a model that is not released)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    est.fit(X, y_arr)
                    value, sens = _score(est, X, y_arr, classifier)
                run_mu = _run_mu(_final(est)[0])
                if math.hypot(run_mu, mu_score) > mu:  # pragma: no cover - fits target μ_fit(1 − 1e-9)
                    raise ArithmeticError(f"a run spent mu={run_mu} > its share {mu_fit}")
                noisy = value + float(child.normal(0.0, sens / mu_score))
                # the run's stream is not part of the release: its seed would reproduce the noise
                _final(est)[0].random_state = None
                if best is None or noisy > best[0]:
                    best = (noisy, params, est, caught)
        # To the caller only: the released run's warnings as kinds (a function of the data and the
        # release), before the attributes are set: an "error" filter leaves them as they were.
        summary = _warning_summary(best[3])
        if summary is not None:
            warnings.warn(summary, stacklevel=2)
        # Public constants: the calibrated μ (every run's Q within it, checked above) and the
        # theorem's ε at it; neither K nor the runs' realised μ is stored.
        total_mu = mu
        self.epsilon_ = accounting.private_search_epsilon(total_mu, delta, eta=eta, gamma=gamma)
        if self.epsilon_ > eps:  # pragma: no cover - calibrate_private_search keeps it within the budget
            raise ArithmeticError(f"the search spent epsilon={self.epsilon_} > {eps}")
        self.delta_ = delta
        self.mu_ = total_mu
        self.expected_runs_ = runs
        self.best_score_ = best[0] / n
        self.best_params_ = dict(best[1])
        self.best_estimator_ = best[2]
        if hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_
        self.n_features_in_ = self.best_estimator_.n_features_in_
        return self

    def predict(self, X):
        """``best_estimator_.predict``."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def decision_function(self, X):
        """``best_estimator_.decision_function`` (classifiers)."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def predict_proba(self, X):
        """``best_estimator_.predict_proba`` (logistic regression)."""
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    def score(self, X, y):
        """``best_estimator_.score`` (accuracy, or R²): post-processing of the released model."""
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)


def check_pipeline(estimator) -> list[str]:
    """The steps before a fasterm estimator that may learn from the data; warns when there are any.

    A fasterm estimator inside a scikit-learn ``Pipeline`` is handed the rows
    that the steps before it produce, and cannot see those steps: its
    (ε, δ) covers its own fit only.  A step whose ``fit`` learns from the
    values of X — ``SimpleImputer`` (its mean, median or most frequent
    value), ``StandardScaler``, ``MinMaxScaler``, an encoder with
    ``categories="auto"`` — makes every transformed row depend on every
    other record, a release that no accountant sees.  This applies the rule
    :class:`PrivateSearch` refuses such steps by (:func:`_refusal`, on
    the steps' types and parameters only, so the pipeline may be fitted or
    not) and warns (:class:`fasterm.PrivacyWarning`) naming each step outside
    it.  The rule is conservative: a step it does not know (one's own
    transformer) is named too.  ``bounds="private"`` is not a step: its
    ranges are in the estimator's ``epsilon_``.

    Parameters
    ----------
    estimator : a fasterm estimator, or a scikit-learn ``Pipeline`` ending in one

    Returns
    -------
    list of str
        The names of the steps that may learn from the data (empty: none).
    """
    from sklearn.pipeline import Pipeline

    from ._warnings import PrivacyWarning

    if isinstance(estimator, _ESTIMATORS):
        return []
    if not (type(estimator) is Pipeline and estimator.steps and isinstance(estimator.steps[-1][1], _ESTIMATORS)):
        raise TypeError(f"estimator must be a fasterm estimator or a Pipeline ending in one, got "
                        f"{type(estimator).__name__}")
    found = [(name, step) for name, step in estimator.steps[:-1] if _refusal(step) is not None]
    if found:
        import warnings

        steps = ", ".join(f"{name!r} ({type(step).__name__})" for name, step in found)
        warnings.warn(f"pipeline step(s) {steps} may learn from the data before {type(estimator.steps[-1][1]).__name__}: "
                      "what they learn from the private rows (a mean, a median, a range, the categories) is a "
                      "release that no accountant sees.  Use preprocessing that learns nothing: "
                      "fasterm.preprocessing.BoundedScaler (with fill_value= for missing values), "
                      "FunctionTransformer, OneHotEncoder with declared categories (docs/getting_started.rst, "
                      "\"Missing values\").", PrivacyWarning, stacklevel=2)
    return [name for name, _ in found]
