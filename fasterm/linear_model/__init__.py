"""Differentially private linear models as scikit-learn estimators.

``DPLogisticRegression`` (logistic loss), ``DPLinearSVC`` (hinge + L2) and
``DPLinearRegression`` (squared loss), with scikit-learn's ``fit``/``predict``/
``score``/``get_params``/``clone`` (``pip install "fasterm[sklearn]"``;
``import fasterm`` does not need it).  The rules behind every default:
:mod:`fasterm.linear_model._rules` and docs/solvers.rst; the guarantees:
docs/guarantees.rst ("scikit-learn estimators").

Privacy.  A fit is (``epsilon_``, ``delta_``)-DP for replacing one row
(x_i, y_i), given: the *public bounds* (``data_norm`` — rows clipped to it;
scale with bounds fixed in advance: ``bounds=(low, high)``,
:class:`fasterm.preprocessing.BoundedScaler`, never statistics of the data;
``bounds="private"`` spends part of the budget on private ranges —
``label_bound`` or ``target_bounds`` for regression, ``radius``); n, the number of features and the
label set, public; fresh randomness (``random_state=None`` in deployment: a
known seed removes the noise).  Everything else stored (``n_iter_``, the step,
the clip, ``result_`` but the weights) is a public constant.  ``fit``'s
:class:`fasterm.DataWarning` goes to the caller only; tune with
:class:`fasterm.PrivateSearch`, not ``GridSearchCV``.

How a fit is made: ``solver`` — "auto" (objective perturbation at δ = 0, else
the rule of docs/solvers.rst), "noisy_gd", "noisy_sgd", "noisy_pgd" (with
``noise`` and, for Laplace, ``calibration``), "objpert"
(:func:`fasterm.objective_perturbation`), "objpert_threshold" (objective
perturbation, then a private intercept; classifiers), "expmech"
(:func:`fasterm.expmech_erm`: a finite chain, so ``delta=0`` is refused and
``delta_`` is nan); ``DPLinearRegression`` also "adassp" (:mod:`fasterm.erm.ssp`).

Sparse X (scipy.sparse, converted to CSR) runs the compiled CSR kernel of the
gradient solvers (and of the δ = 0 class sums for K > 2), never densified;
the other solvers raise ``TypeError``.
``sample_weight`` needs the declared ``weight_bound``.  With K > 2 classes one
(d + 1) × K model is fitted on the whole budget (docs/multiclass.rst; at
δ = 0 "auto" releases the noisy class sums); ``coef_`` has shape (K, d).
"""


from typing import TYPE_CHECKING, Any

__all__ = ["DPLinearRegression", "DPLinearSVC", "DPLogisticRegression", "EXPECTED_FAILED_CHECKS", "FitPlan",
           "TAG_REASONS", "make_plan"]

# The estimators need scikit-learn; the public rules (:mod:`._rules`) do not,
# and ``python -m fasterm`` uses them without it: the names below load on
# first use.
if TYPE_CHECKING:
    from ._base import EXPECTED_FAILED_CHECKS, TAG_REASONS
    from ._estimators import DPLinearRegression, DPLinearSVC, DPLogisticRegression
    from ._plan import FitPlan, make_plan


def __getattr__(name: str) -> Any:
    # A name, once loaded, is bound in the module: later look-ups do not come here.
    from .._buildinfo import needs_sklearn

    if name in ("EXPECTED_FAILED_CHECKS", "TAG_REASONS"):
        with needs_sklearn(f"{__name__}.{name}"):
            from . import _base
        value = getattr(_base, name)
    elif name in ("DPLinearRegression", "DPLinearSVC", "DPLogisticRegression"):
        with needs_sklearn(f"{__name__}.{name}"):  # scipy, then scikit-learn
            from . import _estimators
        value = getattr(_estimators, name)
    elif name in ("FitPlan", "make_plan"):  # numpy only
        from . import _plan
        value = getattr(_plan, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
