"""Feature scaling for private models that learns nothing from the data.

:class:`BoundedScaler` maps rows into the unit ball with *declared* per-feature
bounds — the map of the estimators' ``bounds=`` parameter, by the same code
(:mod:`fasterm.linear_model._bounds`): x_j ↦ (clip((x_j − low_j)/(high_j − low_j), 0, 1) − 1/2)/(√d/2),
so ‖x‖₂ ≤ 1 for every row.  Its ``fit`` reads only the number of columns and
their names, never a value, so a pipeline ``BoundedScaler → DPLogisticRegression``
spends exactly the estimator's (ε, δ), and rows at predict time are mapped as
the training rows were.  Needs scikit-learn.

Scikit-learn's ``StandardScaler`` and ``MinMaxScaler`` learn means, variances,
minima and maxima from the training rows: every scaled row then depends on
every other record, a release no accountant sees, and the rows still do not
fit a declared norm.  Use declared bounds instead (docs/getting_started.rst
says where they come from).

Categorical columns.  A ``OneHotEncoder(categories=...)`` with *declared*
categories learns nothing either; beside a ``BoundedScaler`` in a
``ColumnTransformer`` each encoded categorical column adds one coordinate
equal to 1 (0 for an unknown category with ``handle_unknown="ignore"``), so a
row of the combined output has

    ‖x‖₂² ≤ 1 + k        (k categorical columns),

and the estimator needs ``data_norm=√(1 + k)`` — or, to keep ``data_norm=1``,
the ``ColumnTransformer``'s ``transformer_weights`` {numeric: √(1/2), one-hot:
√(1/(2k))} (each block then contributes at most 1/2 to ‖x‖²).  The noise is
calibrated to the data norm, so a larger norm buys room for the categories
with noise; the weights trade the two blocks' share of the signal instead.
"""

from __future__ import annotations

import numpy as np

from ._buildinfo import needs_sklearn

with needs_sklearn("fasterm.preprocessing"):  # the extra: pip install "fasterm[sklearn]"
    from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
    from sklearn.utils.validation import check_is_fitted, validate_data

import fasterm.linear_model._bounds as _bounds

__all__ = ["BoundedScaler"]


class BoundedScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Rows mapped into the unit ball with declared per-feature bounds; learns nothing from values.

    Parameters
    ----------
    bounds : pair (low, high) or dict
        Public bounds of the features: a pair of scalars or per-feature
        sequences, or a dict {column name: (low, high)} naming every column of
        a DataFrame X (and no other).  low < high, finite.  Values outside are
        clipped to them.  They must come from outside the private data
        (documentation, instrument ranges, physical limits).

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input only)
    bounds_ : (ndarray, ndarray)
        The declared bounds as two float64 arrays in column order (a public
        constant: a function of ``bounds`` and the column names).

    ``fit`` checks X's shape and dtype (numbers, finite) and stores the
    attributes above: nothing else of X is read or kept.  ``transform``
    returns one new array of X's float dtype (float32 stays float32; other
    dtypes become float64); ``get_feature_names_out`` and ``set_output``
    (pandas output) work as for scikit-learn's scalers.
    """

    _parameter_constraints: dict = {"bounds": [tuple, list, dict]}

    def __init__(self, bounds=(0.0, 1.0)):
        self.bounds = bounds

    def fit(self, X, y=None):
        """Check X (shape, dtype, finiteness) and resolve the bounds; nothing of X's values is kept."""
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=True)
        self.bounds_ = _bounds.resolve(self.bounds, X.shape[1], getattr(self, "feature_names_in_", None))
        return self

    def transform(self, X):
        """Rows mapped into the unit ball (:mod:`fasterm.linear_model._bounds`), a new array."""
        check_is_fitted(self, "bounds_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return _bounds.map_rows(X, *self.bounds_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.input_tags.allow_nan = False
        return tags
