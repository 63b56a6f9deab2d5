# Compiled kernels for the losses of linear models (fasterm.losses).
#
# The arithmetic lives in src/cpp/fasterm/losses.hpp (header-only C++, one
# template per kernel for float and double).  These wrappers re-check the
# shapes they are given, so that no call from Python can read out of bounds,
# then run the kernel with the GIL released.  Values (finiteness, declared
# bounds) are validated once, upstream, in fasterm.losses.
from cython cimport floating

cdef extern from "fasterm/losses.hpp" namespace "fasterm::losses" nogil:
    cdef struct Options:
        double data_norm
        double clip
        double label_bound

    void cpp_grad_sum "fasterm::losses::grad_sum"[T](
        int kind, const T* X, const T* y, const T* w, const double* norms,
        Py_ssize_t n, Py_ssize_t d, Options o, T* out, int n_threads) except +
    double cpp_value_sum "fasterm::losses::value_sum"[T](
        int kind, const T* X, const T* y, const T* w, const double* norms,
        Py_ssize_t n, Py_ssize_t d, Options o, int n_threads, Py_ssize_t* nonfinite) except +
    void cpp_grad_matrix "fasterm::losses::grad_matrix"[T](
        int kind, const T* X, const T* y, const T* w, const double* norms,
        Py_ssize_t n, Py_ssize_t d, Options o, T* G, int n_threads) except +
    void cpp_row_norms "fasterm::losses::row_norms"[T](
        const T* X, Py_ssize_t n, Py_ssize_t d, double* out, int n_threads) except +

# Loss codes, as in losses.hpp.
LOGISTIC = 0
HINGE = 1
SQUARED = 2
ABSOLUTE = 3
LINEAR = 4


cdef Options _options(int kind, Py_ssize_t n, Py_ssize_t d, Py_ssize_t y_len, Py_ssize_t w_len,
                      Py_ssize_t norms_len, double data_norm, double clip,
                      double label_bound, int n_threads) except *:
    """Shape checks shared by the kernels; -1 lengths stand for None."""
    cdef Options o
    if kind < LOGISTIC or kind > LINEAR:
        raise ValueError(f"kind must be in 0..4, got {kind}")
    if n < 1 or d < 1:
        raise ValueError(f"X must be non-empty, got shape ({n}, {d})")
    if w_len != d:
        raise ValueError(f"w has {w_len} entries but X has {d} columns")
    if kind != LINEAR and y_len == -1:
        raise ValueError("y is required for this loss")
    if y_len != -1 and y_len != n:
        raise ValueError(f"y has {y_len} entries but X has {n} rows")
    if (data_norm > 0 or clip > 0) and norms_len == -1:
        raise ValueError("row norms are required with data_norm or clip")
    if norms_len != -1 and norms_len != n:
        raise ValueError(f"row norms have {norms_len} entries but X has {n} rows")
    if not label_bound > 0:
        raise ValueError(f"label_bound must be > 0, got {label_bound}")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    o.data_norm = data_norm
    o.clip = clip
    o.label_bound = label_bound
    return o


def grad_sum(int kind, const floating[:, ::1] X, const floating[::1] y,
             const floating[::1] w, const double[::1] norms, double data_norm,
             double clip, double label_bound, floating[::1] out, int n_threads=1):
    """out = sum_i of the (clipped) per-example gradients, in one pass over X.

    data_norm <= 0: rows are not rescaled; clip <= 0: no clipping;
    label_bound = inf: regression labels are not clipped.  norms: row norms
    of X (float64), required when data_norm > 0 or clip > 0.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef Options o = _options(kind, n, d, -1 if y is None else y.shape[0], w.shape[0],
                              -1 if norms is None else norms.shape[0],
                              data_norm, clip, label_bound, n_threads)
    if out.shape[0] != d:
        raise ValueError(f"out has {out.shape[0]} entries but X has {d} columns")
    cdef const floating* yp = NULL
    cdef const double* np_ = NULL
    if y is not None:
        yp = &y[0]
    if norms is not None:
        np_ = &norms[0]
    with nogil:
        cpp_grad_sum(kind, &X[0, 0], yp, &w[0], np_, n, d, o, &out[0], n_threads)


def value_sum(int kind, const floating[:, ::1] X, const floating[::1] y,
              const floating[::1] w, const double[::1] norms, double data_norm,
              double label_bound, int n_threads=1):
    """(sum_i phi(s_i <w, x_i>, y_i), number of rows whose margin is not finite).

    Rows are rescaled to data_norm if > 0.  A NaN or an infinity in a row
    always makes its margin non-finite (w is finite), while phi may still be
    finite there: the count is what tells the caller to check X.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef Options o = _options(kind, n, d, -1 if y is None else y.shape[0], w.shape[0],
                              -1 if norms is None else norms.shape[0],
                              data_norm, 0.0, label_bound, n_threads)
    cdef const floating* yp = NULL
    cdef const double* np_ = NULL
    if y is not None:
        yp = &y[0]
    if norms is not None:
        np_ = &norms[0]
    cdef double total
    cdef Py_ssize_t nonfinite = 0
    with nogil:
        total = cpp_value_sum(kind, &X[0, 0], yp, &w[0], np_, n, d, o, n_threads, &nonfinite)
    return total, nonfinite


def grad_matrix(int kind, const floating[:, ::1] X, const floating[::1] y,
                const floating[::1] w, const double[::1] norms, double data_norm,
                double clip, double label_bound, floating[:, ::1] out, int n_threads=1):
    """out[i] = (clipped) gradient of example i; out has X's shape."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef Options o = _options(kind, n, d, -1 if y is None else y.shape[0], w.shape[0],
                              -1 if norms is None else norms.shape[0],
                              data_norm, clip, label_bound, n_threads)
    if out.shape[0] != n or out.shape[1] != d:
        raise ValueError(f"out has shape ({out.shape[0]}, {out.shape[1]}), expected ({n}, {d})")
    cdef const floating* yp = NULL
    cdef const double* np_ = NULL
    if y is not None:
        yp = &y[0]
    if norms is not None:
        np_ = &norms[0]
    with nogil:
        cpp_grad_matrix(kind, &X[0, 0], yp, &w[0], np_, n, d, o, &out[0, 0], n_threads)


def row_norms(const floating[:, ::1] X, double[::1] out, int n_threads=1):
    """out[i] = ||X[i]||_2 (float64, accumulated in double, overflow-safe)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    if n < 1 or d < 1:
        raise ValueError(f"X must be non-empty, got shape ({n}, {d})")
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} entries but X has {n} rows")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    with nogil:
        cpp_row_norms(&X[0, 0], n, d, &out[0], n_threads)
