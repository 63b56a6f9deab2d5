"""Labels and the analyst-side data warnings of ``fit``.

Label sets (declared ``classes`` or the public ``np.unique(y)``), and the
:class:`fasterm.DataWarning` messages for clipped rows and labels, and for
feature bounds that miss the data.  The
warnings are computed from the data for the caller only; nothing of them is
stored on the fitted estimator (docs/guarantees.rst, "What is released").
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from ..erm._design import row_norms_unchecked
from .._validation import is_sparse
from .._warnings import DataWarning


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


#: Labels taken from y (``classes=None``): more distinct values than this *and* than half the rows
#: are refused (:func:`_check_class_count`).
MANY_CLASSES = 100


def _check_class_count(K, n):
    """Raise ValueError when y, read for its label set (``classes=None``), has K > ``MANY_CLASSES``
    distinct values for n < 2K rows: on average fewer than two rows per class, the mark of a
    continuous target, and a fit whose work grows with K.

    K and n are public here (the label set is treated as public with ``classes=None``); the
    error goes to the caller, nothing is stored.  Declared ``classes`` are never refused by
    this rule (their cost is :func:`fasterm._warnings.warn_cost`'s)."""
    if K > MANY_CLASSES and 2 * K > n:
        raise ValueError(
            f"y has {K} distinct values for {n} rows: did you pass a continuous target?  For a regression "
            "use DPLinearRegression; to fit this many classes pass classes=... explicitly (the fit's work "
            "grows with the number of classes)")


#: Declared label sets of more classes than this are matched through y's distinct values
#: (:func:`_class_lookup`) instead of one pass over y per class.
LOOKUP_CLASSES = 64


def _class_lookup(y, classes):
    """``index[i] = k`` where ``y[i] == classes[k]``, −1 where no declared label equals it — for
    more than ``LOOKUP_CLASSES`` classes, else None (the callers' loop of one ``y == c`` per class).

    y's distinct values (one sort) are looked up in a dict of the classes, whose equality is
    Python's: it agrees with numpy's ``==`` exactly when both y and the classes are integers or
    bools, or both strings, the cases taken here (floats compare in the array's precision in
    numpy, objects may not sort: None, the loop)."""
    if classes.shape[0] <= LOOKUP_CLASSES or np.ndim(y) != 1:
        return None
    kinds = (np.asarray(y).dtype.kind, classes.dtype.kind)
    if not (set(kinds) <= set("biu") or kinds == ("U", "U")):
        return None
    values, inverse = np.unique(y, return_inverse=True)
    position = {c: k for k, c in enumerate(classes.tolist())}
    found = np.fromiter((position.get(v, -1) for v in values.tolist()), dtype=np.intp, count=values.shape[0])
    return found[inverse.reshape(-1)]


def _declared_index(y, classes):
    """Class indices for a declared label set: ``classes[k]`` → k for k ≥ 1, any other label → 0.

    No label of y is checked against the set (that would reveal whether the
    data hold a label outside it): the binary rule "not positive is
    negative", extended to K classes.
    """
    index = _class_lookup(y, classes)
    if index is not None:
        return np.maximum(index, 0)
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
        from ..erm.losses import row_norms

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


#: A feature's range "missed" the data when more than this share of its values lie outside it ...
MISSED_CLIPPED_SHARE = 0.5
#: ... or when its mapped values, in [0, 1], have a standard deviation below this (the data fill
#: well under 1% of the range: the model sees almost nothing of the feature).
MISSED_SPREAD = 0.005


def _warn_missed_features(X, low, high, private, feature_names=None):
    """Warn the caller (:class:`fasterm.DataWarning`) when the bounds miss the data of some features.

    Per feature j, with u = clip((x_j − low_j)/(high_j − low_j), 0, 1) as the
    map computes it: more than ``MISSED_CLIPPED_SHARE`` of the values outside
    [low_j, high_j] (clipped), or std(u) < ``MISSED_SPREAD`` for a feature that is
    not constant.  Private ranges (``private=True``) miss when the budget is too
    thin for the number of rows and features; declared ones when they are in the
    wrong units.  Above ``WARN_SAMPLE_ROWS`` rows, evenly spaced rows (public
    indices) are read.  Computed from the data for the caller only: not stored,
    not part of the release (docs/guarantees.rst).
    """
    n, d = X.shape
    if not n or type(X) is not np.ndarray:
        return
    step = -(-n // WARN_SAMPLE_ROWS)
    sub = np.asarray(X[::step], dtype=np.float64)
    width = high - low
    with np.errstate(over="ignore", invalid="ignore"):
        u = (sub - low) / width
    clipped = np.count_nonzero((u < 0.0) | (u > 1.0), axis=0) / sub.shape[0]
    np.clip(u, 0.0, 1.0, out=u)
    varies = np.ptp(sub, axis=0) > 0.0
    missed = np.flatnonzero((clipped > MISSED_CLIPPED_SHARE) | ((u.std(axis=0) < MISSED_SPREAD) & varies))
    if not missed.size:
        return
    names = [repr(str(feature_names[j])) if feature_names is not None else str(int(j)) for j in missed[:8]]
    more = ", ..." if missed.size > 8 else ""
    which = "the private ranges (bounds='private')" if private else "the declared bounds"
    fix = ("private ranges need many rows per feature at this epsilon (docs/getting_started.rst, "
           "\"How much data bounds='private' needs\"): declare bounds=(low, high) from public knowledge, give the fit more "
           "rows or a larger epsilon" if private else
           "check the declared bounds against the data's documentation (units, scale)")
    warnings.warn(f"{which} missed the data on {missed.size} of {d} features ({', '.join(names)}{more}): "
                  f"more than half of their values lie outside the range and are clipped, or the values fill "
                  f"under 1% of it, so the model sees little of them.  Fix: {fix}.", DataWarning, stacklevel=4)


def _warn_clipped_labels(y, label_bound, target_bounds=None):
    """Warn the caller when more than ``CLIPPED_ROWS_WARN`` of the labels exceed ``label_bound``.

    With ``target_bounds`` (low, high), y is the mapped target (bound 1) and the
    message speaks of the caller's range.
    """
    n = y.shape[0]
    over = int(np.count_nonzero(np.abs(y) > label_bound))
    if over <= CLIPPED_ROWS_WARN * n:
        return
    if target_bounds is not None:
        low, high = (float(b) for b in target_bounds)
        warnings.warn(f"{over} of {n} labels ({over / n:.0%}) lie outside target_bounds=({low:g}, {high:g}) and "
                      "are clipped to it: predictions are then confined to about that range.  Fix: declare "
                      "public target_bounds that cover the target.", DataWarning, stacklevel=3)
        return
    warnings.warn(f"{over} of {n} labels ({over / n:.0%}) have |y| > label_bound={label_bound:g} and are "
                  "clipped to it: predictions are then confined to about [-label_bound, label_bound].  Fix: "
                  "declare the target's public range, target_bounds=(low, high), or a public label_bound "
                  "that covers a target already centred and scaled.", DataWarning, stacklevel=3)


def _is_missing(value) -> bool:
    """None, a float NaN or pandas' NA: a missing entry of an object array."""
    if value is None or type(value).__name__ == "NAType":
        return True
    return isinstance(value, (float, np.floating)) and value != value


def _refuse_missing_labels(y):
    """Raise ValueError naming y when y holds missing labels (None, NaN, pandas' NA) as objects.

    scikit-learn's check finds NaN in a float y but not None in an object y
    (a list with a None): it reaches the fit as NaN (regression) or fails inside
    numpy (classification).  The error goes to the caller, who holds the data;
    it gives the count, not the rows.
    """
    if y is None or (type(y) is np.ndarray and y.dtype.kind != "O"):
        return
    try:
        arr = np.asarray(y)
    except (TypeError, ValueError):  # ragged input: scikit-learn's check speaks
        return
    if arr.dtype.kind != "O":
        return
    missing = sum(map(_is_missing, arr.ravel().tolist()))
    if missing:
        raise ValueError(f"y holds {missing} missing label(s) (None, NaN or pandas.NA) of {arr.size}: a "
                         "missing label is neither a class nor a number; drop those rows, or give them a "
                         "value, before the fit")


def _check_declared_labels(y, classes, chunked):
    """Raise ValueError if a label of y is not one of the declared ``classes``.

    A label outside the declared label set is outside the data domain, like a
    NaN in X (which raises too): it is refused, not merged into ``classes[0]``
    (as fasterm did before), which fitted a model of labels the caller never
    meant — in the worst case every row in one class.  The error goes to the
    caller, who holds the data; nothing is released.  The message gives the
    count, not the values.
    """
    index = None if chunked else _class_lookup(y, classes)
    if index is not None:
        bad = int(np.count_nonzero(index < 0))
    else:
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
        shown = (repr(classes.tolist()) if classes.shape[0] <= 20 else
                 repr(classes[:10].tolist())[:-1] + f", ...] ({classes.shape[0]} classes)")
        raise ValueError(f"{bad} of {y.shape[0]} labels of y are not in the declared classes={shown}: "
                         "map y onto the declared labels first, or pass classes=None to take np.unique(y) "
                         "(then the label set is treated as public)")
