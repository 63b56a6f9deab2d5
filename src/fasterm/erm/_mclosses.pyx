# Compiled kernels of the multiclass losses (fasterm.linear_model._multiclass): the clipped
# per-example gradient sum of the multinomial logistic and Crammer-Singer
# losses over a (p x K) weight matrix, dense and CSR, in one pass over the rows.
#
# The arithmetic lives in src/cpp/fasterm/multiclass.hpp.  These wrappers check
# what keeps the kernels inside their buffers -- shapes, the CSR row offsets;
# a label outside [0, K), a row index outside [0, n) and a column index outside
# [0, d) are skipped by the kernel and reported here as a ValueError -- then run
# the kernel with the GIL released.  Values (finiteness, declared bounds) are
# validated upstream, in fasterm._validation and fasterm.linear_model._multiclass.
from cython cimport floating
from libc.stdint cimport int32_t, int64_t

from fasterm._codes cimport kHinge, kLogistic

ctypedef fused index_t:
    int32_t
    int64_t

cdef extern from "fasterm/multiclass.hpp" namespace "fasterm::multiclass" nogil:
    cdef struct McOptions:
        double data_norm
        double intercept
        double clip
        const double* weights

    cdef struct McProblem:
        const int64_t* y
        const double* norms
        Py_ssize_t n
        Py_ssize_t d
        Py_ssize_t K
        const int64_t* rows
        Py_ssize_t m

    Py_ssize_t cpp_grad_sum "fasterm::multiclass::grad_sum"[T](
        int kind, const T* X, const McProblem& P, const McOptions& o, const T* W, T* out) except +
    Py_ssize_t cpp_csr_grad_sum "fasterm::multiclass::csr_grad_sum"[T, I](
        int kind, const I* indptr, const I* indices, const T* data, const McProblem& P,
        const McOptions& o, const T* W, T* out) except +

LOGISTIC = kLogistic
HINGE = kHinge


cdef int _setup(int kind, Py_ssize_t n, Py_ssize_t d, const int64_t[::1] y, Py_ssize_t p, Py_ssize_t K,
                Py_ssize_t outp, Py_ssize_t outK, const double[::1] norms, double data_norm,
                double intercept, double clip, const double[::1] weights, const int64_t[::1] rows,
                McProblem* P, McOptions* o) except -1:
    if kind != kLogistic and kind != kHinge:
        raise ValueError(f"kind must be {kLogistic} (logistic) or {kHinge} (hinge), got {kind}")
    if n < 1 or d < 1:
        raise ValueError(f"X must be non-empty, got shape ({max(n, 0)}, {d})")
    if K < 2:
        raise ValueError(f"W must have at least 2 columns (classes), got {K}")
    if not (intercept >= 0.0):
        raise ValueError(f"intercept must be >= 0 (0: no intercept column), got {intercept}")
    if p != d + (intercept > 0.0):
        raise ValueError(f"W has {p} rows but X has {d} columns"
                         + (" plus the intercept column" if intercept > 0.0 else ""))
    if outp != p or outK != K:
        raise ValueError(f"out has shape ({outp}, {outK}) but W has ({p}, {K})")
    if y is None or y.shape[0] != n:
        raise ValueError(f"y must have {n} entries (one class index per row of X)")
    if norms is not None and norms.shape[0] != n:
        raise ValueError(f"row norms have {norms.shape[0]} entries but X has {n} rows")
    if weights is not None and weights.shape[0] != n:
        raise ValueError(f"weights have {weights.shape[0]} entries but X has {n} rows")
    if data_norm != data_norm or clip != clip:
        raise ValueError("data_norm and clip must not be NaN")
    P.y = &y[0]
    P.norms = NULL
    if norms is not None:
        P.norms = &norms[0]
    P.n = n
    P.d = d
    P.K = K
    P.rows = NULL
    P.m = n
    if rows is not None:
        P.m = rows.shape[0]
        if P.m > 0:
            P.rows = &rows[0]
    o.data_norm = data_norm
    o.intercept = intercept
    o.clip = clip
    o.weights = NULL
    if weights is not None:
        o.weights = &weights[0]
    return 0


def grad_sum(int kind, const floating[:, ::1] X, const int64_t[::1] y, const floating[:, ::1] W,
             const double[::1] norms, double data_norm, double intercept, double clip, floating[:, ::1] out,
             const double[::1] weights=None, const int64_t[::1] rows=None):
    """out = sum over the rows of the clipped per-example gradients of the (p, K) matrix W.

    Row i of X (n x d) becomes the design row a_i = (x_i min(1, data_norm/||x_i||), s)
    (no scaling for data_norm <= 0; the column s = intercept only if > 0, then
    p = d + 1); its gradient a_i u_i^T (u_i = softmax(W^T a_i) - e_{y_i} for
    kind LOGISTIC, e_j - e_{y_i} for HINGE, Crammer-Singer) is scaled by
    min(1, clip/(||a_i|| ||u_i||)) (clip <= 0: not clipped) and by weights[i].
    y: class indices (int64) in [0, K); norms: ||x_i|| (float64) or None
    (computed in the pass); rows: int64 indices of the rows to sum over (a
    minibatch, read in place; repeats count twice) or None for all.  All
    arithmetic in double (multiclass.hpp); single-threaded; GIL released.
    """
    cdef McProblem P
    cdef McOptions o
    _setup(kind, X.shape[0], X.shape[1], y, W.shape[0], W.shape[1], out.shape[0], out.shape[1], norms,
           data_norm, intercept, clip, weights, rows, &P, &o)
    cdef Py_ssize_t bad
    with nogil:
        bad = cpp_grad_sum(kind, &X[0, 0], P, o, &W[0, 0], &out[0, 0])
    if bad:
        raise ValueError(f"{bad} rows have a class index outside [0, {P.K}) or a row index outside [0, {P.n})")


def csr_grad_sum(int kind, const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                 Py_ssize_t d, const int64_t[::1] y, const floating[:, ::1] W, const double[::1] norms,
                 double data_norm, double intercept, double clip, floating[:, ::1] out,
                 const double[::1] weights=None, const int64_t[::1] rows=None):
    """grad_sum for the n x d CSR matrix (data, indices, indptr); duplicates add up, as in scipy."""
    if indptr is None or indices is None or data is None:
        raise ValueError("data, indices and indptr are required")
    cdef Py_ssize_t n = indptr.shape[0] - 1, i
    if indices.shape[0] != data.shape[0]:
        raise ValueError(f"indices has {indices.shape[0]} entries but data has {data.shape[0]}")
    cdef bint ok = n >= 1 and indptr[0] == 0
    if ok:
        with nogil:
            for i in range(n):
                if indptr[i + 1] < indptr[i]:
                    ok = False
                    break
    if n >= 1 and (not ok or indptr[n] > data.shape[0]):
        raise ValueError("indptr must start at 0, not decrease and end within data")
    cdef McProblem P
    cdef McOptions o
    _setup(kind, n, d, y, W.shape[0], W.shape[1], out.shape[0], out.shape[1], norms,
           data_norm, intercept, clip, weights, rows, &P, &o)
    cdef floating zero = 0
    cdef index_t izero = 0
    cdef const floating* dp = &zero
    cdef const index_t* ip = &izero
    if data.shape[0] > 0:
        dp = &data[0]
        ip = &indices[0]
    cdef Py_ssize_t bad
    with nogil:
        bad = cpp_csr_grad_sum(kind, &indptr[0], ip, dp, P, o, &W[0, 0], &out[0, 0])
    if bad:
        raise ValueError(f"{bad} entries are out of range: a class index outside [0, {P.K}), a row index "
                         f"outside [0, {P.n}) or a column index outside [0, {d})")
