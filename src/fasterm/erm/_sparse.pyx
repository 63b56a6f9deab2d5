# Compiled kernels of the linear-model losses over a CSR matrix (fasterm.losses).
#
# The arithmetic lives in src/cpp/fasterm/csr.hpp (the per-row calculus of
# losses.hpp, summed over the stored values).  These wrappers check what keeps
# the kernels inside their buffers — array lengths and the row offsets; a
# column index outside [0, d) is skipped by the kernel and reported here as a
# ValueError — then run the kernel with the GIL released.  Values (finiteness,
# declared bounds) are validated upstream, in fasterm._validation.
from cython cimport floating
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc

from fasterm._codes cimport kLinear, kLogistic
from fasterm._interrupt cimport Interrupt, raise_if_stopped, watch
from fasterm._loss_options cimport Options, _or_null, _weights
from fasterm.erm._loops cimport CsrSum, Set, Steps, gd_loop, kBuffers, steps_set

ctypedef fused index_t:
    int32_t
    int64_t

cdef extern from "fasterm/csr.hpp" namespace "fasterm::losses" nogil:
    Py_ssize_t cpp_csr_grad_sum "fasterm::losses::csr_grad_sum"[T, I](
        int kind, const I* indptr, const I* indices, const T* data, const T* y, const T* w,
        const double* norms, Py_ssize_t n, Py_ssize_t d, Options o, T* out, int n_threads) except +
    void cpp_csr_row_norms "fasterm::losses::csr_row_norms"[T, I](
        const I* indptr, const I* indices, const T* data, Py_ssize_t n, Py_ssize_t d, double* out,
        int n_threads) except +


cdef Py_ssize_t _check_csr(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                           Py_ssize_t d) except -1:
    """The number of rows n, after the structural checks (O(n), not O(nnz))."""
    if indptr is None or indices is None or data is None:
        raise ValueError("data, indices and indptr are required")
    cdef Py_ssize_t n = indptr.shape[0] - 1, i
    if n < 1 or d < 1:
        raise ValueError(f"X must be non-empty, got shape ({max(n, 0)}, {d})")
    if indices.shape[0] != data.shape[0]:
        raise ValueError(f"indices has {indices.shape[0]} entries but data has {data.shape[0]}")
    cdef bint ok = indptr[0] == 0
    with nogil:
        for i in range(n):
            if indptr[i + 1] < indptr[i]:
                ok = False
                break
    if not ok or indptr[n] > data.shape[0]:
        raise ValueError("indptr must start at 0, not decrease and end within data")
    return n


cdef Options _checked_options(int kind, Py_ssize_t n, Py_ssize_t d, const floating[::1] y, Py_ssize_t w_len,
                              Py_ssize_t out_len, const double[::1] norms, double data_norm, double clip,
                              double label_bound, int n_threads, const double[::1] weights) except *:
    if kind < kLogistic or kind > kLinear:
        raise ValueError(f"kind must be in 0..4, got {kind}")
    if w_len != d:
        raise ValueError(f"w has {w_len} entries but X has {d} columns")
    if out_len != d:
        raise ValueError(f"out has {out_len} entries but X has {d} columns")
    if kind != kLinear and y is None:
        raise ValueError("y is required for this loss")
    if y is not None and y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if norms is not None and norms.shape[0] != n:
        raise ValueError(f"row norms have {norms.shape[0]} entries but X has {n} rows")
    if not label_bound > 0:
        raise ValueError(f"label_bound must be > 0, got {label_bound}")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    cdef Options o
    o.data_norm = data_norm
    o.clip = clip
    o.label_bound = label_bound
    o.weights = _weights(weights, n)
    return o


def grad_sum(int kind, const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
             Py_ssize_t d, const floating[::1] y, const floating[::1] w, const double[::1] norms,
             double data_norm, double clip, double label_bound, floating[::1] out, int n_threads=1,
             const double[::1] weights=None):
    """out = sum_i of the (clipped) per-example gradients of the CSR rows.

    As fasterm.erm._losses.grad_sum for the n x d matrix (data, indices, indptr):
    data_norm <= 0: rows not rescaled; clip <= 0: no clipping; norms: row
    norms (float64, csr row_norms) or None (computed in the pass); weights:
    sample weights (float64, length n) or None.
    """
    cdef Py_ssize_t n = _check_csr(data, indices, indptr, d)
    cdef Options o = _checked_options(kind, n, d, y, w.shape[0], out.shape[0], norms, data_norm, clip,
                                      label_bound, n_threads, weights)
    cdef const floating* yp = _or_null(y)
    cdef const double* np_ = _or_null(norms)
    # An empty data array still needs a valid pointer: no row then reads it.
    cdef floating zero = 0
    cdef index_t izero = 0
    cdef const floating* dp = &zero
    cdef const index_t* ip = &izero
    if data.shape[0] > 0:
        dp = &data[0]
        ip = &indices[0]
    cdef Py_ssize_t bad
    with nogil:
        bad = cpp_csr_grad_sum(kind, &indptr[0], ip, dp, yp, &w[0], np_, n, d, o, &out[0], n_threads)
    if bad:
        raise ValueError(f"X has {bad} column indices outside [0, {d})")


def row_norms(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
              Py_ssize_t d, double[::1] out, int n_threads=1):
    """out[i] = ||X[i]||_2 of the CSR rows (float64, overflow-safe)."""
    cdef Py_ssize_t n = _check_csr(data, indices, indptr, d)
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} entries but X has {n} rows")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    cdef floating zero = 0
    cdef index_t izero = 0
    cdef const floating* dp = &zero
    cdef const index_t* ip = &izero
    if data.shape[0] > 0:
        dp = &data[0]
        ip = &indices[0]
    with nogil:
        cpp_csr_row_norms(&indptr[0], ip, dp, n, d, &out[0], n_threads)


def pgd_loop(int kind, const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
             Py_ssize_t d, const floating[::1] y, const double[::1] norms, double data_norm, double clip,
             double label_bound, floating[::1] w, Py_ssize_t steps, double lr, double reg, int noise,
             double scale, object bit_generator, int set_kind, double set_param,
             const floating[::1] set_a, const floating[::1] set_b, double[::1] acc,
             int n_threads=1, const double[::1] weights=None, object progress=None,
             const double[::1] betas=None, const double[::1] lrs=None, Py_ssize_t acc_from=0):
    """fasterm.erm._losses.pgd_loop over the CSR rows (data, indices, indptr) of an n x d matrix:
    the same steps (src/cpp/fasterm/loops.hpp), the gradient sums of grad_sum above.  A column
    index outside [0, d) is skipped and reported as a ValueError after the run."""
    cdef Py_ssize_t n = _check_csr(data, indices, indptr, d)
    cdef CsrSum[floating, index_t] S
    S.o = _checked_options(kind, n, d, y, w.shape[0], d, norms, data_norm, clip, label_bound, n_threads, weights)
    # An empty data array still needs a valid pointer: no row then reads it.
    cdef floating zero = 0
    cdef index_t izero = 0
    S.data, S.indices = &zero, &izero
    if data.shape[0] > 0:
        S.data, S.indices = &data[0], &indices[0]
    S.kind, S.indptr, S.y, S.norms, S.n, S.d, S.n_threads, S.bad = (kind, &indptr[0], _or_null(y), _or_null(norms),
                                                                    n, d, n_threads, 0)
    cdef Steps[floating] p
    cdef Set[floating] c
    steps_set(&p, &c, steps, lr, reg, noise, scale, bit_generator, set_kind, set_param, set_a, set_b, acc,
              betas, lrs, acc_from, n, d)
    p.work = data.shape[0] + d
    if steps == 0:
        return
    cdef floating* buf = <floating*> malloc(kBuffers * d * sizeof(floating))
    if buf == NULL:
        raise MemoryError()
    cdef Interrupt stop
    state = watch(&stop, progress)
    try:
        if p.rng != NULL:
            with bit_generator.lock, nogil:
                gd_loop(S, &w[0], d, p, c, buf, &stop)
        else:
            with nogil:
                gd_loop(S, &w[0], d, p, c, buf, &stop)
    finally:
        free(buf)
    raise_if_stopped(&stop, state)
    if S.bad:
        raise ValueError(f"X has {S.bad} column indices outside [0, {d})")
