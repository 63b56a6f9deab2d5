"""Every parameter and array check of fasterm, in one place.

Public functions call these at their boundary, once, before any compiled kernel
runs; the kernels then assume clean input (C-contiguous, finite, float32 or
float64, consistent shapes).  Every error names the offending parameter.

Privacy note: the checks here depend on the *data* only through finiteness and
shape.  Values that break declared bounds (data norm, label range) are never
rejected here; the callers clip them to the declared bounds.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

__all__ = [
    "FLOAT_DTYPES",
    "check_array",
    "check_bounds",
    "check_csr",
    "check_delta",
    "check_derived",
    "check_epsilon",
    "check_out",
    "check_positive",
    "check_random_state",
    "check_row_norms",
    "check_sample_weight",
    "check_scalar",
    "check_size",
    "check_X_y",
    "derived_from",
    "is_sparse",
    "check_class_labels",
    "labels_as",
    "plain_X_y",
    "result_dtype",
]

FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _is_real_scalar(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (numbers.Real, np.floating, np.integer))


def check_scalar(
    value,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    allow_inf: bool = False,
    integer: bool = False,
) -> float:
    """Return ``value`` as a Python float (or int) after checking its range.

    Raises ``TypeError`` for non-real values (bools, strings, arrays, complex)
    and ``ValueError`` for NaN, infinities (unless ``allow_inf``) and values
    outside ``[low, high]`` (open ends when the ``*_inclusive`` flags are off).
    """
    t = type(value)
    if integer and t is int:
        pass  # fast path: a plain Python int
    elif not integer and t is float:
        pass  # fast path: a plain Python float
    elif integer:
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
            raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
        value = int(value)
    else:
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if not _is_real_scalar(value):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
        try:
            value = float(value)
        except OverflowError:  # an int beyond the double range
            raise ValueError(f"{name} is too large for a float, got {value}") from None
    if not integer:
        if math.isnan(value):
            raise ValueError(f"{name} must not be NaN")
        if math.isinf(value) and not allow_inf:
            raise ValueError(f"{name} must be finite, got {value}")
    if low is not None:
        if (value < low) if low_inclusive else (value <= low):
            op = ">=" if low_inclusive else ">"
            raise ValueError(f"{name} must be {op} {low}, got {value}")
    if high is not None:
        if (value > high) if high_inclusive else (value >= high):
            op = "<=" if high_inclusive else "<"
            raise ValueError(f"{name} must be {op} {high}, got {value}")
    return value


def check_positive(value, name: str, *, allow_inf: bool = False) -> float:
    """A finite (or, if allowed, infinite) real number strictly greater than 0."""
    return check_scalar(value, name, low=0.0, low_inclusive=False, allow_inf=allow_inf)


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """Privacy parameter epsilon: finite and > 0."""
    return check_positive(epsilon, name)


def check_delta(delta, name: str = "delta") -> float:
    """Privacy parameter delta: in [0, 1)."""
    return check_scalar(delta, name, low=0.0, high=1.0, high_inclusive=False)


def check_random_state(random_state, name: str = "random_state") -> np.random.Generator:
    """None, an int seed, a SeedSequence or a ``numpy.random.Generator``.

    A Generator is returned as is (not copied), so a caller that passes one
    sees its state advance, as in numpy and scikit-learn.  ``RandomState`` is
    refused: its legacy stream cannot feed the compiled samplers.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"{name} must be None, an int or a numpy.random.Generator, got bool")
    if isinstance(random_state, (numbers.Integral, np.integer)):
        if int(random_state) < 0:
            raise ValueError(f"{name} must be a non-negative int seed, got {random_state}")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.BitGenerator):
        return np.random.Generator(random_state)
    raise TypeError(
        f"{name} must be None, an int or a numpy.random.Generator, "
        f"got {type(random_state).__name__}"
    )


def result_dtype(*arrays) -> np.dtype:
    """float32 if every floating input is float32, else float64."""
    dts = [np.asarray(a).dtype for a in arrays if a is not None]
    if dts and all(dt == np.float32 for dt in dts):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _all_finite(a: np.ndarray) -> bool:
    # Fast path: a finite sum proves every term finite (NaN and inf propagate);
    # only when the sum overflows do we pay for the elementwise test.
    if a.size == 0:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.add.reduce(a, axis=None)
    if math.isfinite(float(s)):
        return True
    return bool(np.isfinite(a).all())



def all_finite(a: np.ndarray) -> bool:
    """Whether every entry of the float array ``a`` is finite (a sum first; elementwise only if it overflows)."""
    return _all_finite(a)

def check_array(
    a,
    name: str,
    *,
    ndim: int | tuple[int, ...],
    dtype=None,
    allow_empty: bool = False,
    finite: bool = True,
    shape: tuple | None = None,
) -> np.ndarray:
    """Return ``a`` as a C-contiguous floating array, checked.

    ``dtype=None`` keeps float32 and float64 as they are and converts other
    real dtypes (bool, integers, float16) to float64 — a copy, which such
    input needs anyway.  Object, complex, string and datetime arrays raise
    ``TypeError``.  A float32/float64 C-contiguous input is returned without a
    copy.  ``shape`` entries that are not None must match.
    """
    if a is None:
        raise TypeError(f"{name} must be an array, got None")
    if is_sparse(a):
        raise TypeError(f"{name} is a scipy.sparse matrix, which this function does not take (sparse input "
                        f"is not supported here: pass a dense array, {name}.toarray())")
    try:
        arr = np.asarray(a) if not isinstance(a, np.ndarray) else a
    except (ValueError, TypeError) as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a rectangular array of numbers: {exc}") from None
    kind = arr.dtype.kind
    if kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    # The number of dimensions is checked before the conversion:
    # np.ascontiguousarray turns a 0-d array into a 1-d one.
    ndims = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if arr.ndim not in ndims:
        raise ValueError(f"{name} must have {' or '.join(map(str, ndims))} dimension(s), got {arr.ndim}")
    if dtype is None:
        target = arr.dtype if arr.dtype in FLOAT_DTYPES else np.dtype(np.float64)
    else:
        target = np.dtype(dtype)
    arr = np.ascontiguousarray(arr, dtype=target)
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} must not be empty (shape {arr.shape})")
    if shape is not None:
        for axis, want in enumerate(shape):
            if want is not None and arr.shape[axis] != want:
                raise ValueError(
                    f"{name} has shape {arr.shape}; expected size {want} along axis {axis}"
                )
    if finite and not _all_finite(arr):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def is_sparse(a) -> bool:
    """Whether ``a`` is a scipy.sparse matrix or array (without importing scipy)."""
    return type(a).__module__.startswith("scipy.sparse") and hasattr(a, "format")


_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _csr_structure_ok(indptr, nnz_stored, n) -> bool:
    """indptr has n + 1 offsets, starts at 0, never decreases and ends within the stored arrays: O(n)."""
    return (indptr.ndim == 1 and indptr.shape[0] == n + 1 and int(indptr[0]) == 0
            and int(indptr[-1]) <= nnz_stored and bool((indptr[1:] >= indptr[:-1]).all()))


def _csr_is_canonical(indptr, indices) -> bool:
    """Whether every row's column indices strictly increase (sorted, no duplicate entries).

    Read from the arrays themselves, never from scipy's cached ``has_canonical_format`` (a
    flag cached before ``indices`` was edited would let duplicates through).  O(nnz + n),
    vectorised: ``inc[k]`` says ``indices[k] > indices[k − 1]``, which must hold at every
    position k ≥ 1 that does not start a row; the row starts (``indptr``, valid by
    :func:`_csr_structure_ok`) are then marked True and the whole mask must be True.
    """
    nnz = int(indptr[-1])
    if nnz < 2:
        return True
    ind = indices[:nnz]
    inc = np.empty(nnz, dtype=bool)
    inc[0] = True
    np.greater(ind[1:], ind[:-1], out=inc[1:])
    starts = indptr[1:-1]  # non-decreasing; those in (0, nnz) are positions that begin a row
    lo, hi = np.searchsorted(starts, 0, "right"), np.searchsorted(starts, nnz, "left")
    inc[starts[lo:hi]] = True
    return bool(inc.all())


def _csr_index_range(indptr, indices) -> tuple[int, int] | None:
    """(smallest, largest) column index stored in the rows, or None when no row stores a value.

    Two vectorised reductions over the nnz stored indices, O(nnz) beside the canonical check
    (faster than gathering each row's first and last index, which would be O(n) reads but
    scattered ones).
    """
    nnz = int(indptr[-1])
    if nnz == 0:
        return None
    ind = indices[:nnz]
    return int(ind.min()), int(ind.max())


def check_csr(X, name: str = "X", *, dtype=None):
    """A scipy.sparse CSR matrix or array (n, d), checked for the CSR kernels.

    Other sparse formats (CSC, COO, ...) raise ``TypeError`` naming ``name``
    (convert with ``X.tocsr()``, a copy the caller chooses to make; the
    scikit-learn estimators convert them, as scikit-learn does).  The
    values keep float32 or float64 (other real dtypes are converted to
    float64, a copy of the values only; ``dtype`` forces one); the indices
    are int32 or int64.  A matrix whose rows are not canonical (column
    indices unsorted or repeated) is summed into a canonical copy first
    (scipy's ``sum_duplicates``), so every row holds its dense row's values
    once — the row norms, and so the sensitivity, are those of the dense
    matrix.  Canonical form is checked on the index arrays themselves
    (O(nnz), :func:`_csr_is_canonical`), not read from scipy's cached
    ``has_canonical_format``, which goes stale if ``indices`` is edited.
    ``indptr`` must be a valid offset array, and every stored column index
    must lie in [0, d) (``ValueError`` naming ``name`` and the indices' range
    otherwise: an index outside the columns is not a value of the (n, d)
    matrix — scipy's constructor does not check it — and an index equal to
    d would share the design matrix's intercept column, whose row norm
    would then count two values where the gradient adds them; two O(nnz)
    reductions, :func:`_csr_index_range`).  Values must be finite, the
    shape non-empty; nothing else about the data is looked at.  No copy for a canonical float32/float64 matrix: the
    result shares X's arrays.
    """
    if X.format != "csr":
        raise TypeError(f"{name} is a scipy.sparse matrix in {X.format!r} format; sparse input is taken in "
                        f"CSR format only: pass {name}.tocsr()")
    if X.ndim != 2:
        raise ValueError(f"{name} must have 2 dimensions, got {X.ndim}")
    n, d = X.shape
    if n == 0 or d == 0:
        raise ValueError(f"{name} must not be empty (shape {X.shape})")
    kind = X.dtype.kind
    if kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}")
    target = np.dtype(dtype) if dtype is not None else (
        X.dtype if X.dtype in FLOAT_DTYPES else np.dtype(np.float64))
    if X.indptr.dtype not in _INDEX_DTYPES or X.indices.dtype != X.indptr.dtype:
        raise TypeError(f"{name}: sparse indices must be int32 or int64 (one dtype for indices and indptr), got "
                        f"{X.indices.dtype} and {X.indptr.dtype}")
    if X.indices.ndim != 1 or X.data.ndim != 1:
        raise ValueError(f"{name}.indices and {name}.data must be 1-D arrays")
    if not _csr_structure_ok(X.indptr, min(X.indices.shape[0], X.data.shape[0]), n):
        raise ValueError(f"{name}.indptr is not a valid CSR offset array for {n} rows (it must have n + 1 "
                         f"entries, start at 0, never decrease and end within {name}.indices and {name}.data)")
    if X.dtype != target:
        X = X.astype(target)
    canonical = _csr_is_canonical(X.indptr, X.indices)
    span = _csr_index_range(X.indptr, X.indices)
    if span is not None and not (span[0] >= 0 and span[1] < d):
        raise ValueError(f"{name} has column indices outside [0, {d}) for its {d} columns (the stored indices "
                         f"range from {span[0]} to {span[1]}): {name}.indices must lie in 0..{d - 1}")
    if not canonical:
        X = X.copy()
        # The cached flags may claim canonical form (that is how this matrix got here): clear
        # them, or sum_duplicates would return at once.
        X.has_sorted_indices = False
        X.has_canonical_format = False
        X.sum_duplicates()
    if not _all_finite(X.data):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return X


def check_class_labels(y, name: str = "y"):
    """Labels of a binary classification loss: each in {−1, 0, +1}; ``y`` itself.

    A per-record rule: each label is read on its own as the kernels read it,
    y > 0 as +1 and anything else (0 or −1) as −1, so {0, 1} labels mean what
    they mean in scikit-learn (0 is the negative class) and {−1, +1} labels
    are themselves — whatever the other records hold (a whole-data-set rule,
    such as "all in {−1, +1} or all in {0, 1}", would let one record decide
    between a release and a refusal).  A value outside {−1, 0, +1} (2, 0.5,
    1e300) is outside the loss's label domain, like a NaN, and is refused with
    ``ValueError``: reading it by its sign would fit a model of labels the
    caller did not mean.  One pass over y.
    """
    y_arr = np.asarray(y)
    ok = (y_arr == 1) | (y_arr == 0) | (y_arr == -1)
    if not np.all(ok):
        bad = np.unique(y_arr[~np.asarray(ok, dtype=bool)])[:4].tolist()
        raise ValueError(f"{name}: a classification loss takes labels in {{-1, 0, +1}} (0 and -1 are the "
                         f"negative class), got other values, e.g. {bad}; map them first "
                         "(e.g. np.where(y == positive, 1, -1))")
    return y


def check_X_y(X, y, *, y_required: bool = True, dtype=None,
              accept_sparse: bool = False, classification: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Design matrix X (n, d) and labels y (n,), of one floating dtype.

    X keeps float32 or float64; y is checked in its own dtype and converted to
    X's by :func:`labels_as` (labels are small and a copy of y is cheap next to X).
    ``accept_sparse``: a scipy.sparse CSR X is taken (:func:`check_csr`).
    ``classification``: y must be binary labels (:func:`check_class_labels`).
    """
    if accept_sparse and is_sparse(X):
        X = check_csr(X, "X", dtype=dtype)
    else:
        X = check_array(X, "X", ndim=2, dtype=dtype)
    if y is None:
        if y_required:
            raise ValueError("y is required for this loss")
        return X, None
    y = labels_as(check_array(y, "y", ndim=1), X.dtype)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
    if classification:
        check_class_labels(y)
    return X, y


def plain_X_y(X, y, *, finite_X: bool = True) -> bool:
    """Whether (X, y) would pass a scikit-learn estimator's data checks unchanged.

    True only for the common case, decided cheaply: X an ndarray with 2
    dimensions, float64 or float32 in native byte order, at least one row and
    one column, all finite; y an ndarray with 1 dimension and X's number of
    rows, of a bool, integer or (finite) float dtype.  On exactly such input
    scikit-learn's ``check_X_y(X, y, dtype=[float64, float32])`` returns X
    and y as they are.  False means "run the full check", which converts the
    input or raises with its own message — so the estimators keep
    scikit-learn's behaviour and error messages on every other input, and
    skip its generic dispatch on this one (:mod:`fasterm.linear_model`; its cost:
    docs/performance.rst, "Small costs around the kernels").
    ``finite_X=False`` leaves X's finiteness to the caller (who must check it).
    """
    return (type(X) is np.ndarray and X.ndim == 2 and X.dtype in FLOAT_DTYPES
            and X.shape[0] >= 1 and X.shape[1] >= 1
            and type(y) is np.ndarray and y.ndim == 1 and y.shape[0] == X.shape[0]
            and y.dtype.kind in "biuf" and y.dtype.isnative
            and (not finite_X or _all_finite(X)) and (y.dtype.kind != "f" or _all_finite(y)))


def labels_as(y: np.ndarray, dtype) -> np.ndarray:
    """Labels ``y`` (a float array) in ``dtype``, finite labels beyond its range clipped first.

    A plain cast turns a finite float64 label of 1e300 into a float32 inf, and
    the data would then be refused as non-finite: one record would flip the
    output between a model and an error.  Finite labels are therefore clipped
    to ±``finfo(dtype).max`` before the cast — a fixed per-record map, applied
    before the kernels clip each label to the declared bound (or read its sign,
    for classification), so the fit equals the fit with that label at the
    bound.  Non-finite labels stay non-finite (and are refused, as ever).
    """
    dtype = np.dtype(dtype)
    if y.dtype == dtype:
        return y
    with np.errstate(over="ignore"):
        out = y.astype(dtype)
    if y.dtype.kind == "f" and np.finfo(dtype).max < np.finfo(y.dtype).max:
        big = np.isinf(out) & np.isfinite(y)
        if big.any():
            out[big] = np.copysign(np.finfo(dtype).max, y[big])
    return out


def check_sample_weight(sample_weight, n: int, weight_bound, name: str = "sample_weight"):
    """Sample weights of n records, mapped into the declared public range [0, ``weight_bound``].

    Returns ``(weights, bound)``: a new float64 array (the caller's is never
    written) and the bound as a float.  Shape, dtype and the bound are
    checked (errors name ``name`` or ``weight_bound``); values are not: each
    weight is mapped, record by record, by the fixed map
    w ↦ min(max(w, 0), B) with NaN ↦ 0 (a record with a NaN weight counts
    for nothing; ±inf go to B and 0), the declared-bound rule of the library
    (data beyond a bound are clipped, never refused), so every weight lies
    in [0, B] whatever the input.
    """
    bound = check_positive(weight_bound, "weight_bound")
    if sample_weight is None:
        raise TypeError(f"{name} must be an array of n weights, got None")
    w = check_array(sample_weight, name, ndim=1, dtype=np.float64, finite=False, shape=(n,))
    out = np.clip(w, 0.0, bound)  # a new array: NaN stays NaN here
    out[np.isnan(out)] = 0.0
    return out, bound


def check_out(out, name: str, shape: tuple, dtype) -> np.ndarray:
    """A caller-provided output buffer: exact shape and dtype, C-contiguous, writeable."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {out.shape}")
    if out.dtype != np.dtype(dtype):
        raise TypeError(f"{name} must have dtype {np.dtype(dtype)}, got {out.dtype}")
    if not out.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError(f"{name} must be writeable")
    return out


def check_bounds(bounds, name: str = "bounds") -> tuple[float, float]:
    """A public interval (a, b): a sequence of two finite reals with a < b.

    Returned as two Python floats.  The bounds must come from outside the
    data: callers clip the data to them and never estimate them from it.
    """
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__"):
        raise TypeError(f"{name} must be a sequence (a, b) of two numbers, got {type(bounds).__name__}")
    if isinstance(bounds, np.ndarray) and bounds.ndim != 1:
        raise ValueError(f"{name} must be a sequence (a, b) of two numbers, got shape {bounds.shape}")
    if len(bounds) != 2:
        raise ValueError(f"{name} must have exactly two entries (a, b), got {len(bounds)}")
    a = check_scalar(bounds[0], f"{name}[0]")
    b = check_scalar(bounds[1], f"{name}[1]")
    if not a < b:
        raise ValueError(f"{name} must satisfy a < b, got ({a}, {b})")
    if not math.isfinite(b - a):
        raise ValueError(f"{name}: the width b - a overflows, got ({a}, {b})")
    return a, b


def check_size(size, name: str = "size") -> tuple[int, ...]:
    """An output shape: a non-negative int or a sequence of them, returned as a tuple.

    Non-integers (3.5, "3", None, bool) raise ``TypeError`` rather than being
    truncated, as ``np.asarray(size, dtype=int)`` would do.
    """
    if isinstance(size, np.ndarray) and size.ndim == 0:
        size = size[()]
    items = size if isinstance(size, (tuple, list, np.ndarray)) else (size,)
    shape = []
    for s in items:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (numbers.Integral, np.integer)):
            raise TypeError(f"{name} must be an int or a tuple of ints, got {size!r}")
        if int(s) < 0:
            raise ValueError(f"{name} must be non-negative, got {size!r}")
        shape.append(int(s))
    return tuple(shape)


def check_derived(value, what: str, params: str) -> float:
    """A quantity computed from the caller's parameters must be finite and > 0.

    Absurd but individually valid parameters (ε = 1e-320, a bound of 1e308)
    can make a noise scale, a constant or a step overflow to inf or underflow
    to 0; the error then names the caller's ``params`` (e.g. ``"epsilon and
    l2_sensitivity"``), not the derived quantity ``what``.
    """
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{params} are outside the usable floating-point range: "
                         f"they give {what} = {value!r}")
    return v


class derived_from:
    """Context manager: arithmetic failures inside become a ValueError naming ``params``.

    Wraps calibration code that runs after every parameter has been checked
    on its own, so any ValueError or ArithmeticError (overflow, division by 0) raised
    inside comes from the *combination* being out of floating-point range.
    """

    def __init__(self, params: str):
        self.params = params

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, (ValueError, ArithmeticError)):
            if self.params in str(exc):  # already rewritten by an inner guard
                return False
            raise ValueError(f"{self.params} are outside the usable floating-point range ({exc})") from exc
        return False
