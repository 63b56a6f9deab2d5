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
other than the weights — depends only on these public quantities; see :mod:`fasterm.linear_model._rules` for the
rules behind every default and :func:`fasterm.noisy_pgd`,
:func:`fasterm.noisy_gd` and :func:`fasterm.noisy_sgd` for the theorems behind
the noise.  ``method="auto"`` (default) is "objpert" when ``delta=0`` and
"noisy_pgd" otherwise (:func:`fasterm.linear_model._rules.resolve_method`).
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
``method="adassp"`` (sufficient statistics perturbation, :mod:`fasterm.erm.ssp`)
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
whole budget (:mod:`fasterm.linear_model._multiclass`): the multinomial logistic loss for
``DPLogisticRegression``, the Crammer–Singer multiclass hinge for
``DPLinearSVC``; every step releases one noisy gradient of the whole
(d + 1) × K weight matrix, with the per-example sensitivity of that matrix,
so the fit spends (``epsilon_``, ``delta_``) in total, not per class
(one-vs-rest with ε/K per class is far less accurate: docs/multiclass.rst).
``coef_`` then has shape (K, d) and ``intercept_`` (K,), as in
scikit-learn.  K > 2 needs ``solver`` "auto" (δ > 0: the solver rule, noisy
SGD from n = 5,000 rows; δ = 0: the noisy class sums, one pure-ε Laplace
release), "noisy_gd", "noisy_sgd" or "noisy_pgd", and X in memory.
"""


from typing import TYPE_CHECKING, Any

__all__ = ["DPLinearRegression", "DPLinearSVC", "DPLogisticRegression", "EXPECTED_FAILED_CHECKS", "TAG_REASONS"]

# The estimators need scikit-learn; the public rules (:mod:`._rules`) do not,
# and ``python -m fasterm`` uses them without it: the names below load on
# first use.
if TYPE_CHECKING:
    from ._base import EXPECTED_FAILED_CHECKS, TAG_REASONS
    from ._estimators import DPLinearRegression, DPLinearSVC, DPLogisticRegression


def __getattr__(name: str) -> Any:
    if name in ("EXPECTED_FAILED_CHECKS", "TAG_REASONS"):
        from . import _base
        return getattr(_base, name)
    if name in ("DPLinearRegression", "DPLinearSVC", "DPLogisticRegression"):
        from . import _estimators
        return getattr(_estimators, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
