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

Missing values.  ``BoundedScaler`` refuses a NaN unless ``fill_value``
declares a public constant for its column (a per-record substitution, fixed
before the data are seen).  scikit-learn's ``SimpleImputer`` with
``strategy="mean"``, ``"median"`` or ``"most_frequent"`` learns its fill from
the private rows, like ``StandardScaler``.  In a categorical column a NaN (or
None) is not one of the declared categories: ``OneHotEncoder`` with
``handle_unknown="ignore"`` encodes it as all zeros without a word, with
``"error"`` it refuses it; declare ``np.nan`` as a category (last in its list)
to give missing values their own coordinate.
:func:`fasterm.model_selection.check_pipeline` names the steps before a
fasterm estimator that may learn from the data (docs/getting_started.rst,
"Missing values").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real

import numpy as np

from ._buildinfo import needs_sklearn

with needs_sklearn("fasterm.preprocessing"):  # the extra: pip install "fasterm[sklearn]"
    from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
    from sklearn.utils.validation import check_array, check_is_fitted, validate_data

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
    fill_value : None, number, sequence or dict, default=None
        Public constants that replace missing values (NaN) before the map: one
        number for every feature, one per feature, or a dict {column name:
        number} for some columns of a DataFrame X (the others have none).
        Finite; declared from outside the private data (a codebook's typical
        value, the middle of the bounds), never a statistic of the rows
        (scikit-learn's ``SimpleImputer(strategy="median")`` learns one).  A
        NaN in a column without a fill raises ``ValueError`` naming the
        column.  Infinities are refused in any case.

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input only)
    bounds_ : (ndarray, ndarray)
        The declared bounds as two float64 arrays in column order (a public
        constant: a function of ``bounds`` and the column names).

    ``fit`` checks X's shape and dtype (numbers; no infinity; NaN only where
    ``fill_value`` declares a fill) and stores the attributes above: nothing
    else of X is read or kept.  ``transform`` returns one new array of X's
    float dtype (float32 stays float32; other dtypes become float64);
    ``inverse_transform`` undoes the map; ``get_feature_names_out`` and
    ``set_output`` (pandas output) work as for scikit-learn's scalers.
    """

    _parameter_constraints: dict = {"bounds": [tuple, list, dict],
                                    "fill_value": [None, Real, "array-like", dict]}

    def __init__(self, bounds=(0.0, 1.0), fill_value=None):
        self.bounds = bounds
        self.fill_value = fill_value

    def fit(self, X, y=None):
        """Check X (shape, dtype, finiteness or a declared fill) and resolve the bounds; nothing of X's
        values is kept."""
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=True, ensure_all_finite="allow-nan")
        self.bounds_ = _bounds.resolve(self.bounds, X.shape[1], getattr(self, "feature_names_in_", None))
        self._filled(X)
        return self

    def transform(self, X):
        """Rows mapped into the unit ball (:mod:`fasterm.linear_model._bounds`), missing values
        replaced by ``fill_value`` first; a new array."""
        check_is_fitted(self, "bounds_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False, ensure_all_finite="allow-nan")
        return _bounds.map_rows(self._filled(X), *self.bounds_)

    def inverse_transform(self, X):
        """Mapped rows back in the features' units: x_j = low_j + (z_j·√d/2 + 1/2)·(high_j − low_j).

        The inverse of the affine map, computed in float64 and returned in X's
        float dtype: a value that was inside its bounds comes back up to
        rounding; one that was clipped comes back as the bound, and a filled
        NaN as its ``fill_value`` (neither is restored).
        """
        check_is_fitted(self, "bounds_")
        X = check_array(X, dtype=[np.float64, np.float32])
        low, high = self.bounds_
        if X.shape[1] != low.shape[0]:
            raise ValueError(f"X has {X.shape[1]} features, but BoundedScaler is expecting {low.shape[0]} "
                             "features as input")
        u = np.asarray(X, dtype=np.float64) * (math.sqrt(X.shape[1]) / 2.0) + 0.5
        return (low + u * (high - low)).astype(X.dtype, copy=False)

    def _fill_values(self, d):
        """Per-feature fill values, float64, NaN where none is declared; None without ``fill_value``."""
        fill = self.fill_value
        if fill is None:
            return None
        names = getattr(self, "feature_names_in_", None)
        if isinstance(fill, Mapping):
            if names is None:
                raise ValueError("fill_value given by column name (a dict) needs X with column names (a "
                                 "pandas DataFrame); pass one number per feature for an array X")
            columns = [str(c) for c in names]
            keys = {str(k): v for k, v in fill.items()}
            extra = sorted(set(keys) - set(columns))
            if extra:
                raise ValueError(f"fill_value names column(s) {extra[:5]} that X does not have")
            values = [keys.get(c, math.nan) for c in columns]
            given = np.array([c in keys for c in columns])
        else:
            values, given = fill, np.ones(d, dtype=bool)
        try:
            out = np.array(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"fill_value must hold numbers, got {fill!r}"[:300]) from None
        if out.ndim == 0:
            out = np.full(d, float(out))
        if out.shape != (d,):
            raise ValueError(f"fill_value must be a number, one number per feature ({d}) or a dict by column, "
                             f"got shape {out.shape}")
        if not np.all(np.isfinite(out[given])):
            raise ValueError("fill_value must be finite (a declared public constant)")
        return out

    def _filled(self, X):
        """X with its NaN replaced by the declared fill (a new array), or X itself without NaN;
        ValueError naming the columns with a NaN and no fill."""
        fill = self._fill_values(X.shape[1])
        missing = np.isnan(X)
        if not missing.any():
            return X
        bad = np.flatnonzero(missing.any(axis=0) & (True if fill is None else np.isnan(fill)))
        if bad.size:
            names = getattr(self, "feature_names_in_", None)
            cols = [repr(str(names[j])) if names is not None else str(int(j)) for j in bad[:5]]
            more = ", ..." if bad.size > 5 else ""
            raise ValueError(f"X contains NaN (missing values) in column(s) {', '.join(cols)}{more}: declare a "
                             "public fill_value for them (BoundedScaler(bounds, fill_value=...), a constant from "
                             "outside the data), or drop those rows; a fill learned from the private rows "
                             "(SimpleImputer's mean or median) is a release no accountant sees")
        return np.where(missing, fill.astype(X.dtype), X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.input_tags.allow_nan = self.fill_value is not None
        return tags
