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
#
# sgd_loop and gd_loop run a whole multiclass fit's step loop in one call (below).
from cython cimport floating
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy
from numpy.random cimport bitgen_t

from fasterm._bitgen cimport _bitgen
from fasterm._interrupt cimport Interrupt, raise_if_stopped, watch
from fasterm._codes cimport kHinge, kLogistic, kNoiseGaussian, kNoiseLaplace, kNoiseNone
from fasterm.erm._loops cimport noise_fill, project_l2_ball
from fasterm.erm._poisson cimport _Sampler, _free_sampler, _init_sampler, _poisson_rows

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
        Interrupt* stop

    Py_ssize_t cpp_grad_sum "fasterm::multiclass::grad_sum"[T](
        int kind, const T* X, const McProblem& P, const McOptions& o, const T* W, T* out) except +
    Py_ssize_t cpp_csr_grad_sum "fasterm::multiclass::csr_grad_sum"[T, I](
        int kind, const I* indptr, const I* indices, const T* data, const McProblem& P,
        const McOptions& o, const T* W, T* out) except +
    Py_ssize_t cpp_grad_sum_into "fasterm::multiclass::grad_sum_into"[T](
        int kind, const T* X, const McProblem& P, const McOptions& o, const T* W, T* out, double* Wd,
        double* acc) except +
    Py_ssize_t cpp_csr_grad_sum_into "fasterm::multiclass::csr_grad_sum_into"[T, I](
        int kind, const I* indptr, const I* indices, const T* data, const McProblem& P,
        const McOptions& o, const T* W, T* out, double* Wd, double* acc) except +
    Py_ssize_t cpp_padded "fasterm::multiclass::padded"(Py_ssize_t K)

LOGISTIC = kLogistic
HINGE = kHinge
# The noise codes of gd_loop (codes.hpp), as _losses.NOISE_*.
NOISE_NONE = kNoiseNone
NOISE_LAPLACE = kNoiseLaplace
NOISE_GAUSSIAN = kNoiseGaussian


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
    P.stop = NULL
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
    arithmetic in double (multiclass.hpp); single-threaded; GIL released (Ctrl-C
    is honoured between blocks of rows, src/fasterm/_interrupt.pxd).
    """
    cdef McProblem P
    cdef McOptions o
    _setup(kind, X.shape[0], X.shape[1], y, W.shape[0], W.shape[1], out.shape[0], out.shape[1], norms,
           data_norm, intercept, clip, weights, rows, &P, &o)
    cdef Py_ssize_t bad
    cdef Interrupt stop
    state = watch(&stop, None)
    P.stop = &stop
    with nogil:
        bad = cpp_grad_sum(kind, &X[0, 0], P, o, &W[0, 0], &out[0, 0])
    raise_if_stopped(&stop, state)
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
    cdef Interrupt stop
    state = watch(&stop, None)
    P.stop = &stop
    with nogil:
        bad = cpp_csr_grad_sum(kind, &indptr[0], ip, dp, P, o, &W[0, 0], &out[0, 0])
    raise_if_stopped(&stop, state)
    if bad:
        raise ValueError(f"{bad} entries are out of range: a class index outside [0, {P.K}), a row index "
                         f"outside [0, {P.n}) or a column index outside [0, {d})")


# ---------------------------------------------------------------------------
# The step loops of the multiclass fits (fasterm.linear_model._mcrun), compiled.
#
# One call runs all T steps with the GIL released and the caller's bit generator held under
# its lock: (SGD) the Poisson batch (src/fasterm/erm/_poisson.pxd, the sampler of the binary
# _losses.sgd_loop), the batch's clip read off a table of sizes, the clipped gradient sum of
# the rows read in place (multiclass.hpp, the kernel of grad_sum), the noise, the step and
# the projection onto the Frobenius ball; (GD) the momentum point, the running sum of the
# points (averaging), the full gradient sum, the noise, the step, the projection.  The
# arithmetic is that of fasterm.erm._engine.descend around grad_sum, operation for
# operation in W's dtype (this glue is compiled for the baseline instruction set: no FMA
# contraction), and the draws are those of the Python loop through numpy's Generator, in
# the same order, so both give the same bits for a seed (tests/linear_model/test_multiclass_loop.py).

cdef struct _Rows:
    # the data: dense rows (X), or CSR (X NULL; int64 indices and row offsets)
    const void* X
    const int64_t* indptr
    const int64_t* indices
    const void* data


cdef inline Py_ssize_t _grad(int kind, const _Rows* D, const McProblem* P, const McOptions* o, const floating* W,
                             floating* out, double* Wd, double* acc) except -1 nogil:
    if D.X != NULL:
        return cpp_grad_sum_into(kind, <const floating*> D.X, P[0], o[0], W, out, Wd, acc)
    if floating is double:
        return cpp_csr_grad_sum_into[double, int64_t](kind, D.indptr, D.indices, <const double*> D.data, P[0], o[0],
                                                      W, out, Wd, acc)
    else:
        return cpp_csr_grad_sum_into[float, int64_t](kind, D.indptr, D.indices, <const float*> D.data, P[0], o[0],
                                                     W, out, Wd, acc)


cdef int _setup_rows(int kind, Py_ssize_t dim, Py_ssize_t K, const void* X, Py_ssize_t xn, Py_ssize_t xd,
                     const int64_t[::1] indices, const int64_t[::1] indptr, Py_ssize_t data_len, const void* data,
                     Py_ssize_t d, const int64_t[::1] y, const double[::1] norms, double data_norm,
                     double intercept, const double[::1] weights, _Rows* D, McProblem* P,
                     McOptions* o) except -1:
    """The shape checks of grad_sum / csr_grad_sum for a run: X (dense, xn x xd) or the CSR arrays."""
    cdef Py_ssize_t n, i, p
    cdef bint ok
    if K < 2 or dim % K != 0:
        raise ValueError(f"w has {dim} entries: not a whole number of rows of K = {K} classes")
    p = dim // K
    if X != NULL:
        if indices is not None or indptr is not None or data != NULL:
            raise ValueError("give X (dense) or data, indices and indptr (CSR), not both")
        n, d = xn, xd
        D.X = X
        D.indptr = NULL
        D.indices = NULL
        D.data = NULL
    else:
        if indptr is None or indices is None or data == NULL:
            raise ValueError("X, or data, indices and indptr, are required")
        n = indptr.shape[0] - 1
        if indices.shape[0] != data_len:
            raise ValueError(f"indices has {indices.shape[0]} entries but data has {data_len}")
        ok = n >= 1 and indptr[0] == 0
        if ok:
            with nogil:
                for i in range(n):
                    if indptr[i + 1] < indptr[i]:
                        ok = False
                        break
        if n >= 1 and (not ok or indptr[n] > data_len):
            raise ValueError("indptr must start at 0, not decrease and end within data")
        D.X = NULL
        D.indptr = &indptr[0]
        D.indices = &indices[0] if indices.shape[0] > 0 else NULL
        D.data = data
    _setup(kind, n, d, y, p, K, p, K, norms, data_norm, intercept, 0.0, weights, None, P, o)
    return 0




cdef inline void _descend(const floating* grad, floating inv, const floating* at, bint has_reg, floating reg,
                          const floating* noise, floating neg_lr, floating* step, Py_ssize_t dim) noexcept nogil:
    # g = sum·inv (+ reg·at) + noise, then at − η·g: the order of fasterm.erm._engine.descend
    cdef Py_ssize_t j
    cdef floating g
    for j in range(dim):
        g = grad[j] * inv
        if has_reg:
            g = g + at[j] * reg
        g = g + noise[j]
        step[j] = g * neg_lr + at[j]

cdef int _bind_rows(int kind, floating[::1] w, Py_ssize_t K, const floating[:, ::1] X, const floating[::1] data,
                    const int64_t[::1] indices, const int64_t[::1] indptr, Py_ssize_t d, const int64_t[::1] y,
                    const double[::1] norms, double data_norm, double intercept, const double[::1] weights,
                    _Rows* D, McProblem* P, McOptions* o) except -1:
    """_setup_rows for a run's arguments: the dense X (or None) or the CSR values ``data`` (or None).

    An empty array is bound to w's address (never read: its row count is 0)."""
    cdef const void* xp = NULL
    cdef const void* dp = NULL
    cdef Py_ssize_t xn = 0, xd = 0, nd = 0
    if X is not None:
        xn, xd = X.shape[0], X.shape[1]
        xp = <const void*> &X[0, 0] if xn > 0 and xd > 0 else <const void*> &w[0]
    if data is not None:
        nd = data.shape[0]
        dp = <const void*> &data[0] if nd > 0 else <const void*> &w[0]
    return _setup_rows(kind, w.shape[0], K, xp, xn, xd, indices, indptr, nd, dp, d, y, norms, data_norm,
                       intercept, weights, D, P, o)


def sgd_loop(int kind, floating[::1] w, Py_ssize_t K, const floating[:, ::1] X, const floating[::1] data,
             const int64_t[::1] indices, const int64_t[::1] indptr, Py_ssize_t d, const int64_t[::1] y,
             const double[::1] norms, double data_norm, double intercept, double clip, Py_ssize_t steps, Py_ssize_t start, double q, double inv_m, double lr,
             double reg, double scale, object bit_generator, double radius, double[::1] tail,
             const double[::1] weights=None, object progress=None):
    """Run ``steps`` noisy Poisson-minibatch SGD steps of the (p, K) matrix ``w`` (flat, in place).

    Step t: B_t Poisson(q) over the n rows (src/fasterm/erm/_poisson.pxd for the exact draws);
    g = S_t·inv_m + reg·w + h_t with S_t the sum of grad_sum over the rows of B_t, clipped at
    ``clip`` (the kernel's clip, already the inner bound; finite and > 0), h_t the next
    p·K draws of N(0, scale²) from ``bit_generator``; w ← Π(w − lr·g), Π the projection onto
    the Frobenius ball of radius ``radius`` centred at 0.  ``tail`` (float64, or None):
    w_t is added to it for start < t ≤ T (the tail average's sum).  The data: dense ``X``
    (data, indices, indptr None) or the n x ``d`` CSR matrix (X None; int64 indices);
    y, norms, data_norm, intercept and weights as in grad_sum.  Values are validated by
    fasterm.linear_model._multiclass; here only what keeps the kernels inside their buffers.
    About every 100 ms (between steps, and between blocks of rows within a step) Python's
    signal handlers run (Ctrl-C raises KeyboardInterrupt here; ``w`` then holds a partial
    run) and ``progress(t)`` (or None) is told the steps done (src/fasterm/_interrupt.pxd).
    """
    cdef _Rows D
    cdef McProblem P
    cdef McOptions o
    cdef Py_ssize_t dim = w.shape[0]
    _bind_rows(kind, w, K, X, data, indices, indptr, d, y, norms, data_norm, intercept, weights, &D, &P, &o)
    if not 0.0 < clip < INFINITY:
        raise ValueError(f"clip must be finite and > 0, got {clip}")
    o.clip = clip
    if not 0.0 < scale < INFINITY:
        raise ValueError(f"scale must be finite and > 0, got {scale}")
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if not (0.0 < q <= 1.0):
        raise ValueError(f"q must be in (0, 1], got {q}")
    if not radius > 0.0:
        raise ValueError(f"radius must be > 0, got {radius}")
    if tail is not None and tail.shape[0] != dim:
        raise ValueError(f"tail has {tail.shape[0]} entries, expected {dim}")
    if bit_generator is None:
        raise ValueError("a bit generator is required")
    cdef bitgen_t* rng = _bitgen(bit_generator)
    cdef double* tp = NULL
    if tail is not None:
        tp = &tail[0]
    if steps == 0:
        return
    cdef Py_ssize_t bad = 0
    cdef Py_ssize_t wsize = (dim // K) * cpp_padded(K)
    cdef _Sampler smp
    _init_sampler(&smp, P.n)
    # grad, step, noise: one allocation; the kernel's double W and accumulator (Wd's padding zero)
    cdef floating* buf = <floating*> malloc(3 * dim * sizeof(floating))
    cdef double* wd = <double*> calloc(2 * wsize, sizeof(double))
    cdef Interrupt stop
    state = watch(&stop, progress)
    P.stop = &stop
    try:
        if buf == NULL or wd == NULL:
            raise MemoryError()
        with bit_generator.lock, nogil:
            _sgd_steps(kind, &D, &P, &o, &w[0], dim, steps, start,
                                 q, <floating> inv_m, reg != 0.0, <floating> reg, <floating> (-lr), <floating> scale,
                                 rng, &smp, radius, tp, buf, buf + dim, buf + 2 * dim, wd, wd + wsize, &bad)
    finally:
        free(buf)
        free(wd)
        _free_sampler(&smp)
    raise_if_stopped(&stop, state)
    if bad:
        raise ValueError(f"{bad} rows have a class index outside [0, {K}) (or, CSR, a column outside [0, {d}))")


cdef Py_ssize_t _sgd_steps(int kind, const _Rows* D, McProblem* P, McOptions* o, floating* w, Py_ssize_t dim,
                           Py_ssize_t steps, Py_ssize_t start, double q, floating inv_m, bint has_reg,
                           floating reg, floating neg_lr, floating scale, bitgen_t* rng, _Sampler* smp,
                           double radius, double* tail, floating* grad, floating* step, floating* noise_buf,
                           double* Wd, double* acc, Py_ssize_t* bad) except -1 nogil:
    cdef Py_ssize_t t, j, m
    for t in range(steps):
        # P.stop, also polled by the kernel: Ctrl-C (src/fasterm/_interrupt.pxd), the wrapper raises
        if P.stop.stop(dim, t):
            return 0
        if tail != NULL and t > start:  # the tail average's iterates w_t, start < t
            for j in range(dim):
                tail[j] += w[j]
        m = _poisson_rows(rng, smp, P.n, q)
        if m == 0:
            for j in range(dim):
                grad[j] = 0
        else:
            P.rows = smp.idx
            P.m = m
            bad[0] += _grad(kind, D, P, o, w, grad, Wd, acc)
            if P.stop.stopped():
                return 0
        noise_fill(rng, kNoiseGaussian, noise_buf, dim, scale)
        _descend(grad, inv_m, w, has_reg, reg, noise_buf, neg_lr, step, dim)
        project_l2_ball(step, w, dim, <const floating*> NULL, radius)
    if tail != NULL:
        for j in range(dim):
            tail[j] += w[j]
    return 0


def gd_loop(int kind, floating[::1] w, Py_ssize_t K, const floating[:, ::1] X, const floating[::1] data,
            const int64_t[::1] indices, const int64_t[::1] indptr, Py_ssize_t d, const int64_t[::1] y,
            const double[::1] norms, double data_norm, double intercept, double clip, Py_ssize_t steps,
            double lr, double reg, int noise, double scale, object bit_generator, double radius,
            const double[::1] betas, double[::1] avg, const double[::1] weights=None, object progress=None):
    """Run ``steps`` projected noisy gradient steps of the (p, K) matrix ``w`` (flat, in place).

    Step t: y_t = w_t + β_t(w_t − w_{t−1}) (``betas``, float64, one per step; None: y_t = w_t);
    ``avg`` (float64, or None) += y_t; g = S(y_t)/n + reg·y_t + h_t with S the grad_sum of all
    n rows clipped at ``clip`` (the kernel's clip, already the inner bound), h_t the next p·K
    draws of Laplace(0, scale) (noise NOISE_LAPLACE) or N(0, scale²) (NOISE_GAUSSIAN) from
    ``bit_generator``; w_{t+1} = Π(y_t − lr·g), Π the projection onto the Frobenius ball of
    radius ``radius`` centred at 0.  The data, Ctrl-C and ``progress`` as in sgd_loop.
    """
    cdef _Rows D
    cdef McProblem P
    cdef McOptions o
    cdef Py_ssize_t dim = w.shape[0]
    _bind_rows(kind, w, K, X, data, indices, indptr, d, y, norms, data_norm, intercept, weights, &D, &P, &o)
    if not 0.0 < clip < INFINITY:
        raise ValueError(f"clip must be finite and > 0, got {clip}")
    if not 0.0 < scale < INFINITY:
        raise ValueError(f"scale must be finite and > 0, got {scale}")
    o.clip = clip
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if noise != kNoiseLaplace and noise != kNoiseGaussian:
        raise ValueError(f"noise must be {kNoiseLaplace} (Laplace) or {kNoiseGaussian} (Gaussian), got {noise}")
    if not radius > 0.0:
        raise ValueError(f"radius must be > 0, got {radius}")
    if betas is not None and betas.shape[0] < steps:
        raise ValueError(f"betas has {betas.shape[0]} entries, expected {steps}")
    if avg is not None and avg.shape[0] != dim:
        raise ValueError(f"avg has {avg.shape[0]} entries, expected {dim}")
    if bit_generator is None:
        raise ValueError("a bit generator is required")
    cdef bitgen_t* rng = _bitgen(bit_generator)
    cdef const double* bp = NULL
    cdef double* ap = NULL
    if betas is not None and steps > 0:
        bp = &betas[0]
    if avg is not None:
        ap = &avg[0]
    if steps == 0:
        return
    cdef Py_ssize_t bad = 0
    cdef Py_ssize_t wsize = (dim // K) * cpp_padded(K)
    # grad, step, noise, the previous iterate and the momentum point: one allocation
    cdef floating* buf = <floating*> malloc(5 * dim * sizeof(floating))
    cdef double* wd = <double*> calloc(2 * wsize, sizeof(double))
    cdef Interrupt stop
    state = watch(&stop, progress)
    P.stop = &stop
    try:
        if buf == NULL or wd == NULL:
            raise MemoryError()
        memcpy(buf + 3 * dim, &w[0], dim * sizeof(floating))  # w_{−1} = w_0
        with bit_generator.lock, nogil:
            _gd_steps(kind, &D, &P, &o, &w[0], dim, steps, <floating> (1.0 / P.n), reg != 0.0, <floating> reg,
                      <floating> (-lr), noise, <floating> scale, rng, radius, bp, buf + 3 * dim, buf + 4 * dim, ap,
                      buf, buf + dim, buf + 2 * dim, wd, wd + wsize, &bad)
    finally:
        free(buf)
        free(wd)
    raise_if_stopped(&stop, state)
    if bad:
        raise ValueError(f"{bad} rows have a class index outside [0, {K}) (or, CSR, a column outside [0, {d}))")


cdef int _gd_steps(int kind, const _Rows* D, const McProblem* P, const McOptions* o, floating* w, Py_ssize_t dim,
                   Py_ssize_t steps, floating inv_n, bint has_reg, floating reg, floating neg_lr, int noise,
                   floating scale, bitgen_t* rng, double radius, const double* betas, floating* prev,
                   floating* ybuf, double* avg, floating* grad, floating* step, floating* noise_buf,
                   double* Wd, double* acc, Py_ssize_t* bad) except -1 nogil:
    cdef Py_ssize_t t, j
    cdef floating b
    cdef floating* y = w
    for t in range(steps):
        if P.stop.stop(dim, t):  # also polled by the kernel (sgd_loop)
            return 0
        if betas != NULL:  # y_t = w_t + β_t (w_t − w_{t−1}), in W's dtype, as descend's numpy
            b = <floating> betas[t]
            for j in range(dim):
                ybuf[j] = w[j] + b * (w[j] - prev[j])
            memcpy(prev, w, dim * sizeof(floating))
            y = ybuf
        if avg != NULL:
            for j in range(dim):
                avg[j] += y[j]
        bad[0] += _grad(kind, D, P, o, y, grad, Wd, acc)
        if P.stop.stopped():
            return 0
        noise_fill(rng, noise, noise_buf, dim, scale)
        _descend(grad, inv_n, y, has_reg, reg, noise_buf, neg_lr, step, dim)
        project_l2_ball(step, w, dim, <const floating*> NULL, radius)
    return 0
