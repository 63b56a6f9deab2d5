# Compiled kernels for the losses of linear models (fasterm.losses).
#
# The arithmetic lives in src/cpp/fasterm/losses.hpp (C++ templates for float
# and double; their entry points are compiled in src/cpp/fasterm/losses_*.cpp).  These wrappers re-check the
# shapes they are given, so that no call from Python can read out of bounds,
# then run the kernel with the GIL released.  Values (finiteness, declared
# bounds) are validated once, upstream, in fasterm.losses.
from cython cimport floating
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_standard_normal_fill, random_standard_normal_fill_f,
)

from fasterm._bitgen cimport _bitgen
from fasterm._loss_options cimport Options, _or_null, _weights
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
# The projected-gradient loop of fasterm.optimize, compiled.
#
# One call runs all T steps with the GIL released: gradient sum (the kernel
# above), regulariser, noise drawn from the caller's bit generator, step and
# projection, with buffers allocated once.  The arithmetic is that of the
# Python reference loop in fasterm/optimize.py (_run_python), operation for
# operation in the data's precision, and the noise of step t is the next d
# draws of the sampler, so both loops give the same numbers for a seed.

cdef extern from "fasterm/ziggurat.hpp" namespace "fasterm" nogil:
    void _laplace_zig "fasterm::laplace_fill"[T](bitgen_t* rng, T* out, Py_ssize_t n, T scale)

cdef extern from "fasterm/projections.hpp" namespace "fasterm" nogil:
    void _proj_simplex "fasterm::project_simplex"[T](const T* y, T* x, size_t n, double total,
                                                     T* work)
    void _proj_l1 "fasterm::project_l1_ball"[T](const T* y, T* x, size_t n, double radius,
                                                T* work)
    void _proj_l2 "fasterm::project_l2_ball"[T](const T* y, T* x, size_t n, const T* center,
                                                double radius)
    void _proj_box "fasterm::project_box"[T](const T* y, T* x, size_t n, const T* lo,
                                             const T* hi)

# Noise and feasible-set codes of pgd_loop (codes.hpp), for Python.
NOISE_NONE = kNoiseNone
NOISE_LAPLACE = kNoiseLaplace
NOISE_GAUSSIAN = kNoiseGaussian
SET_L2_BALL = kL2Ball
SET_BOX = kBox
SET_SIMPLEX = kSimplex
SET_L1_BALL = kL1Ball


cdef void _noise_fill(bitgen_t* rng, int noise, floating* out, Py_ssize_t d,
                      floating scale) noexcept nogil:
    cdef Py_ssize_t j
    if noise == kNoiseLaplace:
        _laplace_zig(rng, out, d, scale)
    else:
        # numpy's ziggurat normal, then the scale: what noise.gaussian does.
        if floating is double:
            random_standard_normal_fill(rng, d, out)
        else:
            random_standard_normal_fill_f(rng, d, out)
        for j in range(d):
            out[j] *= scale


cdef int _loop(int kind, const floating* X, const floating* y, const double* norms,
                Py_ssize_t n, Py_ssize_t d, Options o, floating* w, Py_ssize_t steps,
                floating inv_n, floating reg, floating neg_lr, int noise, floating scale,
                bitgen_t* rng, int set_kind, double set_param, const floating* set_a,
                const floating* set_b, double* acc, int n_threads, floating* grad,
                floating* step, floating* noise_buf, floating* work) except -1 nogil:
    cdef Py_ssize_t t, j
    cdef floating g
    for t in range(steps):
        if acc != NULL:
            for j in range(d):
                acc[j] += w[j]
        cpp_grad_sum(kind, X, y, w, norms, n, d, o, grad, n_threads)
        if noise != kNoiseNone:
            _noise_fill(rng, noise, noise_buf, d, scale)
        for j in range(d):
            # grad/n, + reg·w, + noise, then w − η·grad: the reference's order.
            g = grad[j] * inv_n
            if reg != 0:
                g = g + w[j] * reg
            if noise != kNoiseNone:
                g = g + noise_buf[j]
            step[j] = g * neg_lr + w[j]
        if set_kind == kL2Ball:
            _proj_l2(step, w, d, set_a, set_param)
        elif set_kind == kBox:
            _proj_box(step, w, d, set_a, set_b)
        elif set_kind == kSimplex:
            _proj_simplex(step, w, d, set_param, work)
        else:
            _proj_l1(step, w, d, set_param, work)
    return 0


def pgd_loop(int kind, const floating[:, ::1] X, const floating[::1] y,
             const double[::1] norms, double data_norm, double clip, double label_bound,
             floating[::1] w, Py_ssize_t steps, double lr, double reg, int noise,
             double scale, object bit_generator, int set_kind, double set_param,
             const floating[::1] set_a, const floating[::1] set_b, double[::1] acc,
             int n_threads=1, const double[::1] weights=None):
    """Run ``steps`` projected (noisy) gradient steps in place on ``w``.

    Step: g = grad_sum(w)/n + reg·w + h_t;  w ← Π_C(w − lr·g), with h_t the
    next d draws of Laplace(0, scale) (noise=1) or N(0, scale²) (noise=2)
    from ``bit_generator`` (held under its lock for the whole run), none for
    noise=0.  If ``acc`` is given, every iterate at which a gradient is taken
    (w_0 … w_{T−1}) is added to it (float64).  C: set_kind 0 L2 ball
    (set_param = radius, set_a = centre or None), 1 box (set_a = low,
    set_b = high), 2 simplex (set_param = total), 3 L1 ball (radius).
    weights: sample weights of the rows (as in grad_sum), or None.  Values
    are validated by fasterm.optimize; here only what keeps the kernels
    inside their buffers.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef Options o = _options(kind, n, d, -1 if y is None else y.shape[0], w.shape[0],
                              -1 if norms is None else norms.shape[0],
                              data_norm, clip, label_bound, n_threads)
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if noise < kNoiseNone or noise > kNoiseGaussian:
        raise ValueError(f"noise must be 0, 1 or 2, got {noise}")
    if set_kind < kL2Ball or set_kind > kL1Ball:
        raise ValueError(f"set_kind must be in 0..3, got {set_kind}")
    if set_kind == kBox and (set_a is None or set_b is None):
        raise ValueError("a box needs set_a (low) and set_b (high)")
    if set_a is not None and set_a.shape[0] != d:
        raise ValueError(f"set_a has {set_a.shape[0]} entries but X has {d} columns")
    if set_b is not None and set_b.shape[0] != d:
        raise ValueError(f"set_b has {set_b.shape[0]} entries but X has {d} columns")
    if set_kind != kBox and not set_param > 0.0:
        raise ValueError(f"set_param must be > 0, got {set_param}")
    if acc is not None and acc.shape[0] != d:
        raise ValueError(f"acc has {acc.shape[0]} entries but X has {d} columns")
    o.weights = _weights(weights, n)
    cdef bitgen_t* rng = NULL
    if noise != kNoiseNone:
        if bit_generator is None:
            raise ValueError("a bit generator is required for noise")
        rng = _bitgen(bit_generator)
    cdef const floating* yp = _or_null(y)
    cdef const double* np_ = _or_null(norms)
    cdef const floating* ap = _or_null(set_a)
    cdef const floating* bp = _or_null(set_b)
    cdef double* accp = NULL
    if acc is not None:
        accp = &acc[0]
    if steps == 0:
        return
    # grad, step, noise and the projections' scratch: one allocation.
    cdef floating* buf = <floating*> malloc(4 * d * sizeof(floating))
    if buf == NULL:
        raise MemoryError()
    cdef floating inv_n = <floating>(1.0 / n)
    try:
        if rng != NULL:
            with bit_generator.lock, nogil:
                _loop(kind, &X[0, 0], yp, np_, n, d, o, &w[0], steps, inv_n, <floating>reg,
                      <floating>(-lr), noise, <floating>scale, rng, set_kind, set_param, ap, bp,
                      accp, n_threads, buf, buf + d, buf + 2 * d, buf + 3 * d)
        else:
            with nogil:
                _loop(kind, &X[0, 0], yp, np_, n, d, o, &w[0], steps, inv_n, <floating>reg,
                      <floating>(-lr), noise, <floating>scale, rng, set_kind, set_param, ap, bp,
                      accp, n_threads, buf, buf + d, buf + 2 * d, buf + 3 * d)
    finally:
        free(buf)
