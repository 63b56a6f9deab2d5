# Compiled kernels for the losses of linear models (fasterm.losses).
#
# The arithmetic lives in src/cpp/fasterm/losses.hpp (C++ templates for float
# and double; their entry points are compiled in src/cpp/fasterm/losses_*.cpp).  These wrappers re-check the
# shapes they are given, so that no call from Python can read out of bounds,
# then run the kernel with the GIL released.  Values (finiteness, declared
# bounds) are validated once, upstream, in fasterm.losses.
from cython cimport floating
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.math cimport sqrt, INFINITY
from libc.string cimport memcpy, memset
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    binomial_t, random_binomial, random_bounded_uint64, random_standard_normal_fill,
    random_standard_normal_fill_f,
)

from fasterm._bitgen cimport _bitgen
from fasterm._interrupt cimport Interrupt, raise_if_stopped, watch
from fasterm._loss_options cimport Options, _or_null, _weights
from fasterm.erm._loops cimport DenseSum, Set, Steps, check_set, gd_loop, kBuffers, noise_fill, project, steps_set
from fasterm._codes cimport (kAbsolute, kBox, kHinge, kL1Ball, kL2Ball, kLinear, kLogistic, kNoiseGaussian,
                             kNoiseLaplace, kNoiseNone, kSimplex, kSquared)

cdef extern from "fasterm/losses.hpp" namespace "fasterm::losses" nogil:
    void cpp_grad_sum "fasterm::losses::grad_sum"[T](
        int kind, const T* X, const T* y, const T* w, const double* norms,
        Py_ssize_t n, Py_ssize_t d, Options o, T* out, int n_threads) except +
    void cpp_grad_sum_rows "fasterm::losses::grad_sum_rows"[T](
        int kind, const T* X, const T* y, const T* w, const double* norms,
        const int64_t* idx, Py_ssize_t m, Py_ssize_t d, Options o, T* out,
        int n_threads) except +
    double cpp_value_sum "fasterm::losses::value_sum"[T](
        int kind, const T* X, const T* y, const T* w, const double* norms,
        Py_ssize_t n, Py_ssize_t d, Options o, int n_threads, Py_ssize_t* nonfinite) except +
    void cpp_grad_matrix "fasterm::losses::grad_matrix"[T](
        int kind, const T* X, const T* y, const T* w, const double* norms,
        Py_ssize_t n, Py_ssize_t d, Options o, T* G, int n_threads) except +
    void cpp_row_norms "fasterm::losses::row_norms"[T](
        const T* X, Py_ssize_t n, Py_ssize_t d, double* out, int n_threads) except +

# Loss codes: the values of src/cpp/fasterm/codes.hpp, for Python.
LOGISTIC = kLogistic
HINGE = kHinge
SQUARED = kSquared
ABSOLUTE = kAbsolute
LINEAR = kLinear


cdef Options _options(int kind, Py_ssize_t n, Py_ssize_t d, Py_ssize_t y_len, Py_ssize_t w_len,
                      Py_ssize_t norms_len, double data_norm, double clip,
                      double label_bound, int n_threads, bint norms_required=False) except *:
    """Shape checks shared by the kernels; -1 lengths stand for None.

    Without cached row norms the gradient kernels compute them in their pass
    over X; value_sum needs them with data_norm (norms_required).
    """
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
    if norms_required and (data_norm > 0 or clip > 0) and norms_len == -1:
        raise ValueError("row norms are required with data_norm")
    if norms_len != -1 and norms_len != n:
        raise ValueError(f"row norms have {norms_len} entries but X has {n} rows")
    if not label_bound > 0:
        raise ValueError(f"label_bound must be > 0, got {label_bound}")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    o.data_norm = data_norm
    o.clip = clip
    o.label_bound = label_bound
    o.weights = NULL
    return o


def grad_sum(int kind, const floating[:, ::1] X, const floating[::1] y,
             const floating[::1] w, const double[::1] norms, double data_norm,
             double clip, double label_bound, floating[::1] out, int n_threads=1,
             const double[::1] weights=None):
    """out = sum_i of the (clipped) per-example gradients, in one pass over X.

    weights: per-row multipliers of the clipped gradients (sample weights,
    float64, length n), or None.

    data_norm <= 0: rows are not rescaled; clip <= 0: no clipping;
    label_bound = inf: regression labels are not clipped.  norms: row norms
    of X (float64, as row_norms gives them), or None: computed in the same
    pass when data_norm > 0 or clip > 0 (the same bits).
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef Options o = _options(kind, n, d, -1 if y is None else y.shape[0], w.shape[0],
                              -1 if norms is None else norms.shape[0],
                              data_norm, clip, label_bound, n_threads)
    if out.shape[0] != d:
        raise ValueError(f"out has {out.shape[0]} entries but X has {d} columns")
    o.weights = _weights(weights, n)
    cdef const floating* yp = _or_null(y)
    cdef const double* np_ = _or_null(norms)
    with nogil:
        cpp_grad_sum(kind, &X[0, 0], yp, &w[0], np_, n, d, o, &out[0], n_threads)


def grad_sum_rows(int kind, const floating[:, ::1] X, const floating[::1] y,
                  const floating[::1] w, const double[::1] norms, double data_norm,
                  double clip, double label_bound, const int64_t[::1] rows,
                  floating[::1] out, int n_threads=1, const double[::1] weights=None):
    """grad_sum over the rows ``rows`` of X only (a minibatch), read in place.

    rows: int64 row indices, ascending for a sequential read (any order is
    correct), possibly empty (out = 0).  Bit-for-bit grad_sum(X[rows],
    y[rows], w, norms[rows], ...); y and norms are X's, full length.  Indices
    outside [0, n) raise IndexError before the kernel runs.  weights: X's
    (length n), as in grad_sum.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef Options o = _options(kind, n, d, -1 if y is None else y.shape[0], w.shape[0],
                              -1 if norms is None else norms.shape[0],
                              data_norm, clip, label_bound, n_threads)
    if out.shape[0] != d:
        raise ValueError(f"out has {out.shape[0]} entries but X has {d} columns")
    if rows is None:
        raise ValueError("rows is required")
    o.weights = _weights(weights, n)
    cdef Py_ssize_t m = rows.shape[0], k
    cdef bint bad = False
    with nogil:
        for k in range(m):
            if rows[k] < 0 or rows[k] >= n:
                bad = True
                break
    if bad:
        raise IndexError(f"rows[{k}] = {rows[k]} is outside [0, {n})")
    cdef const floating* yp = _or_null(y)
    cdef const double* np_ = _or_null(norms)
    cdef const int64_t* ip = NULL
    if m > 0:
        ip = &rows[0]
    with nogil:
        cpp_grad_sum_rows(kind, &X[0, 0], yp, &w[0], np_, ip, m, d, o, &out[0], n_threads)


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
                              data_norm, 0.0, label_bound, n_threads, True)
    cdef const floating* yp = _or_null(y)
    cdef const double* np_ = _or_null(norms)
    cdef double total
    cdef Py_ssize_t nonfinite = 0
    with nogil:
        total = cpp_value_sum(kind, &X[0, 0], yp, &w[0], np_, n, d, o, n_threads, &nonfinite)
    return total, nonfinite


def grad_matrix(int kind, const floating[:, ::1] X, const floating[::1] y,
                const floating[::1] w, const double[::1] norms, double data_norm,
                double clip, double label_bound, floating[:, ::1] out, int n_threads=1):
    """out[i] = (clipped) gradient of example i; out has X's shape.

    norms: as in grad_sum (None: computed in the pass).
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef Options o = _options(kind, n, d, -1 if y is None else y.shape[0], w.shape[0],
                              -1 if norms is None else norms.shape[0],
                              data_norm, clip, label_bound, n_threads)
    if out.shape[0] != n or out.shape[1] != d:
        raise ValueError(f"out has shape ({out.shape[0]}, {out.shape[1]}), expected ({n}, {d})")
    cdef const floating* yp = _or_null(y)
    cdef const double* np_ = _or_null(norms)
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


def check_probed_row_norms(const floating[:, ::1] X, const double[::1] norms,
                           const Py_ssize_t[::1] probes, double rtol):
    """Whether each probed row's norm, as row_norms() computes it, is within
    ``rtol`` (relative) of the given one: the spot check of caller-supplied
    row norms.  Rows whose computed norm is not finite pass (X is then
    reported by the caller's own check).  (The same in numpy, ~10 small
    operations on the gathered rows, took 0.12 ms right after a pass over a
    40 MB X.)
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], m = probes.shape[0], k
    cdef double exact
    cdef bint ok = True
    if norms.shape[0] != n:
        raise ValueError(f"row norms have {norms.shape[0]} entries but X has {n} rows")
    for k in range(m):
        if probes[k] < 0 or probes[k] >= n:
            raise ValueError(f"probe {probes[k]} is not a row of X ({n} rows)")
    if d < 1 and m > 0:
        raise ValueError("X has no columns")
    with nogil:
        for k in range(m):
            cpp_row_norms(&X[probes[k], 0], 1, d, &exact, 1)
            if exact - exact == 0.0 and not (abs(norms[probes[k]] - exact) <= rtol * abs(exact)):
                ok = False
    return ok


# ---------------------------------------------------------------------------
# The projected-gradient loop of fasterm.erm.optimize, compiled.
#
# One call runs all T steps with the GIL released: gradient sum (the kernel
# above), regulariser, noise drawn from the caller's bit generator, step and
# projection, with buffers allocated once.  The arithmetic is that of the
# Python reference loop in fasterm/erm/optimize.py (_run_python), operation for
# operation in the data's precision, and the noise of step t is the next d
# draws of the sampler, so both loops give the same numbers for a seed.

# Noise and feasible-set codes of pgd_loop (codes.hpp), for Python.
NOISE_NONE = kNoiseNone
NOISE_LAPLACE = kNoiseLaplace
NOISE_GAUSSIAN = kNoiseGaussian
SET_L2_BALL = kL2Ball
SET_BOX = kBox
SET_SIMPLEX = kSimplex
SET_L1_BALL = kL1Ball


def pgd_loop(int kind, const floating[:, ::1] X, const floating[::1] y,
             const double[::1] norms, double data_norm, double clip, double label_bound,
             floating[::1] w, Py_ssize_t steps, double lr, double reg, int noise,
             double scale, object bit_generator, int set_kind, double set_param,
             const floating[::1] set_a, const floating[::1] set_b, double[::1] acc,
             int n_threads=1, const double[::1] weights=None, object progress=None,
             const double[::1] betas=None, const double[::1] lrs=None, Py_ssize_t acc_from=0):
    """Run ``steps`` projected (noisy) gradient steps in place on ``w`` (src/cpp/fasterm/loops.hpp).

    Step t: y_t = w_t + β_t(w_t − w_{t−1}) (``betas``: float64, one per step;
    None: y_t = w_t); g = grad_sum(y_t)/n + reg·y_t + h_t; w ← Π_C(y_t − η_t·g),
    η_t = ``lrs[t]`` (float64, one per step) or ``lr``; h_t the next d draws of
    Laplace(0, scale) (noise=1) or N(0, scale²) (noise=2) from ``bit_generator``
    (held under its lock for the whole run), none for noise=0.  If ``acc`` is
    given, the points y_t at which gradients are taken from step ``acc_from``
    on are added to it (float64).  C: set_kind 0 L2 ball (set_param = radius,
    set_a = centre or None), 1 box (set_a = low, set_b = high), 2 simplex
    (set_param = total), 3 L1 ball (radius).  weights: sample weights of the
    rows (as in grad_sum), or None.  Values are validated by
    fasterm.erm._engine; here only what keeps the kernels inside their
    buffers.  Between steps, about every 100 ms, Python's signal handlers run
    (Ctrl-C raises KeyboardInterrupt here, ``w`` then holds a partial run) and
    ``progress(t)`` (or None) is told the steps done (src/fasterm/_interrupt.pxd).
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef DenseSum[floating] S
    S.o = _options(kind, n, d, -1 if y is None else y.shape[0], w.shape[0],
                   -1 if norms is None else norms.shape[0], data_norm, clip, label_bound, n_threads)
    S.o.weights = _weights(weights, n)
    S.kind, S.X, S.y, S.norms, S.n, S.d, S.n_threads = kind, &X[0, 0], _or_null(y), _or_null(norms), n, d, n_threads
    cdef Steps[floating] p
    cdef Set[floating] c
    steps_set(&p, &c, steps, lr, reg, noise, scale, bit_generator, set_kind, set_param, set_a, set_b, acc,
               betas, lrs, acc_from, n, d)
    p.work = (n + 1) * d
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


# ---------------------------------------------------------------------------
# The step loop of noisy minibatch SGD (fasterm.erm.solvers._noisy_sgd), compiled.
#
# One call runs all T steps with the GIL released and the bit generator's lock
# held: the Poisson batch, the gather, the clipped gradient sum, the noise, the
# step and the projection.  Each step draws from the caller's bit generator
# exactly what the Python reference loop draws through numpy's Generator, in
# the same order, so both loops give the same bits for a seed:
#   |B| = Generator.binomial(n, q)            numpy's random_binomial
#   B   = Generator.choice(n, |B|, replace=False), sorted
#         (numpy's algorithm: Floyd's sampling -- numpy tests membership in
#         a hash set, here in a bitmap of the rows, which also gives the
#         sorted batch -- then the shuffle of the sample, whose draws are
#         consumed, the order being discarded by the sort; or, for
#         n > 10,000 and |B| > n // 50, the tail of a partial Fisher-Yates
#         shuffle of 0..n-1; |B| = n: all rows)
#   h_t = the next d standard normals (numpy's ziggurat) times the scale.
# fasterm.erm.solvers checks once per process that poisson_rows() reproduces the
# installed numpy's Generator (numpy makes no promise that choice's algorithm
# never changes) and runs the Python loop otherwise.

# The sampler (src/fasterm/erm/_poisson.pxd, shared with _mclosses.sgd_loop).
from fasterm.erm._poisson cimport _Sampler, _free_sampler, _init_sampler, _poisson_rows


def poisson_rows(object bit_generator, Py_ssize_t n, double q, Py_ssize_t draws):
    """``draws`` Poisson batches of the rows 0..n-1 at rate q, as sgd_loop samples them.

    Returns a list of int64 arrays (ascending): for each, exactly
    ``np.sort(rng.choice(n, rng.binomial(n, q), replace=False))`` (all rows
    when the size is n, none when 0) for a Generator ``rng`` on the same bit
    generator state.  For the tests and for fasterm.erm.solvers' check of the
    installed numpy.
    """
    import numpy as np
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not (0.0 <= q <= 1.0):
        raise ValueError(f"q must be in [0, 1], got {q}")
    cdef bitgen_t* rng = _bitgen(bit_generator)
    cdef _Sampler s
    cdef Py_ssize_t t, m
    _init_sampler(&s, n)
    out = []
    try:
        for t in range(draws):
            with bit_generator.lock, nogil:
                m = _poisson_rows(rng, &s, n, q)
            out.append(np.array(<int64_t[:m]> s.idx, dtype=np.int64) if m else np.empty(0, dtype=np.int64))
    finally:
        _free_sampler(&s)
    return out


cdef extern from *:
    """
    /* Each cache line of [p, p + bytes) requested; an asm statement, since GCC (12, at the
       glue's -O1) dropped __builtin_prefetch here. */
    static inline void fasterm_prefetch_span(const void* p, size_t bytes) {
        const char* c = (const char*)p;
        for (size_t k = 0; k < bytes; k += 64) {
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
            __asm__ volatile("prefetcht0 %0" : : "m"(*(c + k)));
    #else
            __builtin_prefetch(c + k, 0, 3);
    #endif
        }
    }
    """
    void _prefetch_row "fasterm_prefetch_span"(const void* p, size_t bytes) noexcept nogil

cdef enum:
    kPrefetchRows = 8   # rows of a batch prefetched ahead of the one being copied


cdef inline void _prefetch_batch_row(const floating* X, const floating* y, const double* weights,
                                     const double* norms, int64_t i, Py_ssize_t d0) noexcept nogil:
    # Row i of X, its label, its weight and its cached norm: each a cache miss of its own when
    # rows are far apart (the norm, read first, unprefetched was a quarter of a float32 fit).
    _prefetch_row(X + i * d0, d0 * sizeof(floating))
    if y != NULL:
        _prefetch_row(y + i, 1)
    if weights != NULL:
        _prefetch_row(weights + i, 1)
    if norms != NULL:
        _prefetch_row(norms + i, 1)


cdef struct _Rows:
    # A batch's design rows, labels, norms and weights (grown to the largest batch so far).
    Py_ssize_t cap
    void* A
    void* y
    double* norms
    double* weights


cdef int _reserve(_Rows* rb, Py_ssize_t m, size_t row_bytes, size_t item) except -1 nogil:
    if m <= rb.cap:
        return 0
    m = m + m // 4 + 16
    free(rb.A)
    free(rb.y)
    free(rb.norms)
    free(rb.weights)
    rb.A = malloc(m * row_bytes)
    rb.y = malloc(m * item)
    rb.norms = <double*> malloc(m * sizeof(double))
    rb.weights = <double*> malloc(m * sizeof(double))
    rb.cap = m
    if rb.A == NULL or rb.y == NULL or rb.norms == NULL or rb.weights == NULL:
        rb.cap = 0
        with gil:
            raise MemoryError()
    return 0


cdef Py_ssize_t _sgd_steps(int kind, const floating* X, const floating* y, const double* norms,
                    Py_ssize_t n, Py_ssize_t d0, Py_ssize_t d, Options o, const double* weights,
                    floating* w, Py_ssize_t steps, double q, floating inv_m, floating reg,
                    floating neg_lr, floating scale, bitgen_t* rng, _Sampler* smp, double row_bound,
                    floating s_col, int set_kind, double set_param, const floating* set_a,
                    const floating* set_b, double* acc, int n_threads, floating* grad, floating* step,
                    floating* noise_buf, floating* work, _Rows* rb, bint within, Interrupt* stop) except -1 nogil:
    # Returns 0 after the T steps, or when ``stop`` says so (Ctrl-C: the wrapper raises).
    cdef Py_ssize_t t, j, r, m
    cdef const floating* x
    cdef floating* a
    cdef floating sc
    cdef double nrm
    cdef floating g
    cdef bint design = row_bound > 0.0
    cdef floating* A
    cdef floating* yb
    cdef double* nb
    cdef double* wb
    # within: no row's norm exceeds row_bound (the caller read it off the norms), so no design row
    # is scaled and the norms need not be read (each a cache miss of its own).
    cdef const double* pnorms = norms
    cdef Set[floating] cset
    cset.kind, cset.param, cset.a, cset.b = set_kind, set_param, set_a, set_b
    if design and within:
        pnorms = <const double*> 0
    m = 0
    for t in range(steps):
        if stop.stop((m + 1) * d, t):  # the previous step's work (src/fasterm/_interrupt.pxd)
            return 0
        if acc != NULL and t > 0:
            for j in range(d):
                acc[j] += w[j]
        m = _poisson_rows(rng, smp, n, q)
        if m == 0:
            for j in range(d):
                grad[j] = 0
        else:
            # The batch's rows copied out, as the reference's X[B] (and, with row_bound, the rows
            # of fasterm.erm._design.design(X[B]): clipped to row_bound, s appended); the rows ahead
            # are prefetched (sorted but far apart, no hardware prefetcher follows them).
            _reserve(rb, m, d * sizeof(floating), sizeof(floating))
            A = <floating*> rb.A
            yb = <floating*> rb.y
            nb = rb.norms
            wb = rb.weights
            for r in range(min(m, kPrefetchRows)):
                _prefetch_batch_row(X, y, weights, pnorms, smp.idx[r], d0)
            for r in range(m):
                if r + kPrefetchRows < m:
                    _prefetch_batch_row(X, y, weights, pnorms, smp.idx[r + kPrefetchRows], d0)
                x = X + smp.idx[r] * d0
                a = A + r * d
                memcpy(a, x, d0 * sizeof(floating))
                if design:
                    if within:
                        nrm = 0.0
                    elif norms != NULL:  # X's row norms, computed by row_norms: the same bits
                        nrm = norms[smp.idx[r]]
                    else:
                        cpp_row_norms(a, 1, d0, &nrm, 1)
                    if nrm > row_bound:
                        sc = <floating>(row_bound / max(nrm, 2.2250738585072014e-308))
                        for j in range(d0):
                            a[j] = a[j] * sc
                    a[d0] = s_col
                elif norms != NULL:
                    nb[r] = norms[smp.idx[r]]
                if y != NULL:
                    yb[r] = y[smp.idx[r]]
                if weights != NULL:
                    wb[r] = weights[smp.idx[r]]
            o.weights = wb if weights != NULL else NULL
            # The design rows' norms are computed in the kernel's pass (no norms given): the bits
            # of the reference's row_norms(A) handed to it (losses.hpp: row_norm either way).
            cpp_grad_sum(kind, A, yb if y != NULL else NULL, w, nb if (not design and norms != NULL) else NULL,
                         m, d, o, grad, n_threads)
        noise_fill(rng, kNoiseGaussian, noise_buf, d, scale)
        for j in range(d):
            # sum/m, + reg·w, + noise, then w − η·g: the reference's order (fasterm.erm._engine.descend).
            g = grad[j] * inv_m
            if reg != 0:
                g = g + w[j] * reg
            g = g + noise_buf[j]
            step[j] = g * neg_lr + w[j]
        project(cset, step, w, d, work)
    if acc != NULL:
        for j in range(d):
            acc[j] += w[j]
    return 0


def sgd_loop(int kind, const floating[:, ::1] X, const floating[::1] y, const double[::1] norms,
             double data_norm, double clip, double label_bound,
             floating[::1] w, Py_ssize_t steps,
             double q, double inv_m, double lr, double reg, double scale, object bit_generator,
             int set_kind, double set_param, const floating[::1] set_a, const floating[::1] set_b,
             double[::1] acc, int n_threads=1, const double[::1] weights=None,
             double row_bound=0.0, double intercept_scaling=0.0, bint rows_within_bound=False,
             object progress=None):
    """Run ``steps`` noisy Poisson-minibatch SGD steps in place on ``w``.

    ``clip``: the run's one clip, every batch clipped at it whatever its size
    (fasterm.erm._float_margin.run_clip).  ``clip`` and the noise ``scale`` must be finite and > 0
    (ValueError).

    Step t: B_t Poisson(q) over the n rows (module comment above for the exact
    draws); g = Σ_{i∈B_t} clipped ∇ℓ_i(w)·inv_m + reg·w + h_t, h_t the next
    d draws of N(0, scale²) from ``bit_generator`` (held under its lock for
    the whole run); w ← Π_C(w − lr·g).  ``row_bound`` > 0: X is the raw
    (n, d0) data and the rows of the batch are those of the design
    (clipped to ``row_bound``, the constant ``intercept_scaling`` appended,
    w of length d0 + 1), built for the batch only, as fasterm.erm.solvers'
    reference loop builds them; otherwise the batch's rows of X, copied out.  ``norms``: X's row norms as row_norms computes them, or None (with
    row_bound: computed per batch row).  ``rows_within_bound``: the caller
    guarantees that no row of X has a norm above ``row_bound`` (as row_norms
    computes it), so that no design row is scaled and none is read.  ``acc`` (or None):
    w_1 + … + w_T is added to it (float64), the sum the reference's
    ``output="average"`` forms.  C as in pgd_loop.  Values are validated by
    fasterm.erm.solvers; here only what keeps the kernels inside their buffers.
    Ctrl-C and ``progress`` as in pgd_loop.
    """
    cdef Py_ssize_t n = X.shape[0], d0 = X.shape[1]
    cdef bint design = row_bound > 0.0
    cdef Py_ssize_t d = d0 + 1 if design else d0
    if w.shape[0] != d:
        raise ValueError(f"w has {w.shape[0]} entries, expected {d}")
    if not 0.0 < clip < INFINITY:
        raise ValueError(f"clip must be finite and > 0, got {clip}")
    if not 0.0 < scale < INFINITY:
        raise ValueError(f"scale must be finite and > 0, got {scale}")
    cdef Options o = _options(kind, n, d, -1 if y is None else y.shape[0], d,
                              -1 if norms is None else norms.shape[0],
                              data_norm, clip, label_bound, n_threads)
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if not (0.0 < q <= 1.0):
        raise ValueError(f"q must be in (0, 1], got {q}")
    check_set(set_kind, set_param, -1 if set_a is None else set_a.shape[0],
               -1 if set_b is None else set_b.shape[0], -1 if acc is None else acc.shape[0], d)
    if bit_generator is None:
        raise ValueError("a bit generator is required")
    cdef const double* wp = _weights(weights, n)
    cdef bitgen_t* rng = _bitgen(bit_generator)
    cdef const floating* yp = _or_null(y)
    cdef const double* np_ = _or_null(norms)
    cdef const floating* ap = _or_null(set_a)
    cdef const floating* bp = _or_null(set_b)
    cdef double* accp = NULL
    if acc is not None:
        accp = &acc[0]
    if steps == 0:
        return
    cdef _Sampler smp
    _init_sampler(&smp, n)
    cdef _Rows rb
    memset(&rb, 0, sizeof(_Rows))
    # grad, step, noise and the projections' scratch: one allocation.
    cdef floating* buf = <floating*> malloc(4 * d * sizeof(floating))
    cdef Interrupt stop
    state = watch(&stop, progress)
    try:
        if buf == NULL:
            raise MemoryError()
        if design:  # room for the batches expected (E|B| = qn), grown if one is larger
            _reserve(&rb, min(n, <Py_ssize_t>(q * n + 8.0 * sqrt(q * n) + 16.0)), d * sizeof(floating),
                     sizeof(floating))
        with bit_generator.lock, nogil:
            _sgd_steps(kind, &X[0, 0], yp, np_, n, d0, d, o, wp, &w[0], steps, q, <floating>inv_m,
                       <floating>reg, <floating>(-lr), <floating>scale, rng, &smp, row_bound,
                       <floating>intercept_scaling, set_kind, set_param, ap, bp, accp, n_threads,
                       buf, buf + d, buf + 2 * d, buf + 3 * d, &rb, rows_within_bound, &stop)
    finally:
        free(buf)
        free(rb.A)
        free(rb.y)
        free(rb.norms)
        free(rb.weights)
        _free_sampler(&smp)
    raise_if_stopped(&stop, state)
