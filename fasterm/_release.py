"""The release surface: which attributes of each released object are the private output.

This mapping is the one declaration of fasterm's release boundary.  An object
that a public entry point hands back (a fitted estimator, a result, a
learner) releases

* its **private output** — the attributes named here, and anything computed
  from them alone (post-processing);
* **public constants** — every other attribute: a function of the public
  parameters only (n, d, ε, δ, the declared bounds, the label set, the
  estimator's parameters), never of the data values or of the noise drawn.

Nothing else may be stored on a released object (docs/guarantees.rst, "The
release surface", whose table mirrors this mapping;
tests/package/test_release_surface.py walks every attribute of every such object,
nested results and dicts included, and checks that each one not named here is
bit-identical across neighbouring data sets and across seeds).  For fitted
estimators and results "every attribute" is the whole ``__dict__``,
leading-underscore entries included (pickling the object releases them), and
every public property.

Keys are class names; values are attribute paths relative to an object of that
class, dots descending into attributes and dict entries (``"info.threshold"``:
the entry ``threshold`` of the dict ``info``).  A path that an object does not
have is simply absent (``info.threshold`` exists only for
``solver="objpert_threshold"``).  A nested object with an entry of its own
(an estimator's ``result_``, a search's ``best_estimator_``) is governed by
its own entry.  Leading-underscore attributes of the learners that keep state
between calls (``PrivateRWM``, ``SQOracle``) are the curator's working state
— the data and the running sums the next answer needs — and not part of the
release; their public attributes are.
"""

from __future__ import annotations

__all__ = ["RELEASED", "released"]

# bounds_: the ranges of bounds="private" are a private release (for declared bounds a constant)
_ESTIMATOR = ("coef_", "intercept_", "bounds_")

#: class name -> attribute paths that are the private output (module docstring).
RELEASED: dict[str, tuple[str, ...]] = {
    # scikit-learn estimators: the model; result_ by its own class below.
    "DPLogisticRegression": _ESTIMATOR,
    "DPLinearSVC": _ESTIMATOR,
    "DPLinearRegression": _ESTIMATOR,
    # results of the optimisers
    "OptimizeResult": ("w",),
    # objpert_threshold: the threshold t is the intercept, w[d] = -t/s
    "ObjPertResult": ("w", "info.threshold"),
    "MultiObjPertResult": ("W",),
    "ExpMechResult": ("w",),
    # hyperparameter search: the best run's candidate and noisy score; best_estimator_ by its
    # own entry, whose other attributes are public constants of best_params_
    "PrivateSearch": ("best_params_", "best_score_"),
    # a search's best_estimator_ may be a Pipeline: its final estimator's model is the output (by
    # that estimator's entry); the steps before it learn nothing from the data
    # (model_selection._refusal), so all their fitted attributes are public constants
    "Pipeline": (),
    "ColumnTransformer": (),
    "OneHotEncoder": (),
    "FunctionTransformer": (),
    "BoundedScaler": (),
    # online learning: the actions (PrivateRWM.choose and .run), θ and its counts
    "PrivateRWMRun": ("actions",),
    "PrivateRWM": (),
    "LinearLearnerResult": ("w", "theta", "counts"),
    # statistical queries: the answers returned by query()
    "SQOracle": (),
}


def released(obj) -> tuple[str, ...]:
    """The declared private output of ``obj`` (:data:`RELEASED`); KeyError for an undeclared class."""
    return RELEASED[type(obj).__name__]
