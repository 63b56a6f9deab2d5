"""The design matrix of the linear models: rows clipped to the declared bound, an intercept column.

One place for numpy, scipy.sparse CSR and ``dask.array`` input (the
estimators, the main job and the benchmarks call :func:`design`): row i
becomes x_i·min(1, X/‖x_i‖) and, with ``fit_intercept``, the constant
``intercept_scaling`` s is appended (augmented rows have norm ≤ √(X² + s²);
:mod:`fasterm.linear_model._rules`).  A dask X is transformed chunk by chunk, lazily, by
the same function as a numpy X; a CSR X stays sparse (its design is a CSR
matrix with one more stored value per row, never a dense array).
"""

from __future__ import annotations

import numpy as np

import math

import fasterm.erm._dask as _dask
from .._validation import FLOAT_DTYPES, is_sparse
from .losses import _available_cpus, _row_norms_kernel, row_norms

__all__ = ["clip_rows", "design", "row_norms_unchecked"]


def clip_rows(X, data_norm):
    """x ↦ x·min(1, X/‖x‖) row by row (a copy; rows within the bound unchanged)."""
    norms = row_norms(X)
    scale = np.minimum(1.0, data_norm / np.maximum(norms, np.finfo(np.float64).tiny))
    if is_sparse(X):
        out = X.copy()
        out.data *= np.repeat(scale.astype(X.dtype), np.diff(X.indptr))
        return out
    return X * scale.astype(X.dtype)[:, None]


def _design_block_csr(X, data_norm, intercept_scaling):
    """The CSR design: the clipped rows with the value s stored in column d of every row."""
    import scipy.sparse as sp

    n, d = X.shape
    C = clip_rows(X, data_norm)
    ends = C.indptr[1:]
    idx_dtype = np.result_type(C.indices.dtype, np.min_scalar_type(C.nnz + n), np.min_scalar_type(d + 1))
    data = np.insert(C.data, ends, np.asarray(intercept_scaling, dtype=C.dtype))
    indices = np.insert(C.indices.astype(idx_dtype, copy=False), ends, d)
    indptr = C.indptr.astype(idx_dtype) + np.arange(n + 1, dtype=idx_dtype)
    return sp.csr_matrix((data, indices, indptr), shape=(n, d + 1))


def row_norms_unchecked(X):
    """``row_norms(X)`` for a non-empty C-contiguous float32/float64 ndarray X, without its
    argument checks: a NaN or an infinity gives its row a non-finite norm (not an error)."""
    norms = np.empty(X.shape[0], dtype=np.float64)
    _row_norms_kernel(X, norms, _available_cpus())
    return norms


def _design_block(X, data_norm, intercept_scaling, norms=None):
    if is_sparse(X):
        return _design_block_csr(X, data_norm, intercept_scaling)
    n, d = X.shape
    if norms is not None or (type(X) is np.ndarray and X.dtype in FLOAT_DTYPES and X.flags.c_contiguous and n):
        # the largest norm is non-finite if X is, and then row_norms' check reports it
        if norms is None:
            norms = row_norms_unchecked(X)
        largest = float(norms.max())
        if not math.isfinite(largest):
            norms = row_norms(X)
    else:
        norms = row_norms(X)
        largest = float(norms.max()) if n else 0.0
    A = np.empty((n, d + 1), dtype=X.dtype)
    # clip_rows(X, data_norm), written into A: rows within the bound are copied
    # (their scale is 1, which changes no bit), the others scaled in place.
    A[:, :d] = X
    if not largest <= data_norm:  # some row is over the bound (or a norm overflowed to inf)
        over = norms > data_norm
        scale = np.ones(n, dtype=X.dtype)
        scale[over] = data_norm / np.maximum(norms[over], np.finfo(np.float64).tiny)
        # in place, row by row where over (no temporary copy of the clipped rows)
        np.multiply(A[:, :d], scale[:, None], out=A[:, :d], where=over[:, None])
    A[:, d] = intercept_scaling
    return A


def design(X, data_norm, fit_intercept, intercept_scaling, row_norms=None):
    """Rows clipped to ``data_norm``, with the constant column appended if asked.

    Without an intercept X is returned as is (the kernels clip rows to
    ``data_norm`` on the fly); a dask X is validated from its metadata
    (:func:`fasterm.erm._dask.check_X_y`) and mapped over its row chunks.
    ``row_norms``: X's row norms as :func:`row_norms_unchecked` computes them
    (the estimators' data check computed them already), or None.
    """
    if _dask.is_dask_collection(X):
        X, _ = _dask.check_X_y(X, None)
        if not fit_intercept:
            return X
        return X.map_blocks(_design_block, data_norm, intercept_scaling,
                            chunks=(X.chunks[0], (X.shape[1] + 1,)), dtype=X.dtype)
    if not fit_intercept:
        return X
    return _design_block(X, data_norm, intercept_scaling, None if is_sparse(X) else row_norms)
