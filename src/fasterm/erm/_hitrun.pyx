# Compiled hit-and-run for fasterm.erm.expmech (the exponential mechanism of
# convex ERM), over src/cpp/fasterm/hitrun.hpp.
#
# Randomness comes from the caller's Generator through its bitgen_t, taken
# under the bit generator's lock with the GIL released, so a seed reproduces a
# chain.  The public layer validates every value (finite data, k > 0, the set's
# parameters) and prepares row scales and labels; the checks here only keep
# the kernel inside its buffers.
from fasterm._bitgen cimport _bitgen
from fasterm._interrupt cimport Interrupt, raise_if_stopped, watch
from fasterm._codes cimport (kAbsolute, kArs, kAuto, kBox, kDirect, kHinge, kL2Ball, kLinear, kLogistic,
                             kMixed, kSimplex, kSphere, kSquared)
from numpy.random cimport bitgen_t
from cython cimport floating

cdef extern from "fasterm/hitrun.hpp" namespace "fasterm::hitrun" nogil:
    void _run_chain "fasterm::hitrun::run_chain_args"[T](
        int kind, const T* X, Py_ssize_t n, Py_ssize_t d, const double* scale, const double* y,
        const double* g, double kappa, double lam, int method, int set_kind,
        const double* center, double radius, const double* low, const double* high,
        double total, int directions, double margin_bound, double* w, double* z, bint fresh_margins,
        Py_ssize_t steps, double* trace, Py_ssize_t thin, bitgen_t* rng, long long* evaluations,
        Interrupt* stop) except +
    void _line_sample_many "fasterm::hitrun::line_sample_many"(
        int kind, Py_ssize_t n, const double* z, const double* c, const double* y,
        double kappa, double lam, double wu, double uu, double a, double b, double margin_bound,
        int method, bitgen_t* rng, double* out, Py_ssize_t size, long long* evaluations) except +
    void _log1p_unit_many "fasterm::hitrun::log1p_unit_many"(const double* e, double* out, Py_ssize_t n)

# Loss codes (as fasterm.erm._losses), feasible sets, line-sampler methods, chain
# directions: the values of src/cpp/fasterm/codes.hpp, for Python.
LOGISTIC = kLogistic
HINGE = kHinge
SQUARED = kSquared
ABSOLUTE = kAbsolute
LINEAR = kLinear
BALL = kL2Ball
BOX = kBox
SIMPLEX = kSimplex
AUTO = kAuto
DIRECT = kDirect
ARS = kArs
SPHERE = kSphere
MIXED = kMixed


cdef const double* _ptr(const double[::1] a, Py_ssize_t size, str name) except? NULL:
    if a is None:
        return NULL
    if a.shape[0] != size:
        raise ValueError(f"{name} has {a.shape[0]} entries, expected {size}")
    if size == 0:
        return NULL
    return &a[0]


def run_chain(object bit_generator, int kind, const floating[:, ::1] X, const double[::1] y,
              const double[::1] scale, const double[::1] g, double kappa, double lam, int method,
              int set_kind, const double[::1] center, double radius, const double[::1] low,
              const double[::1] high, double total, int directions, double margin_bound,
              double[::1] w, double[::1] z, Py_ssize_t steps, double[:, ::1] trace=None,
              Py_ssize_t thin=1, bint fresh_margins=True, object progress=None):
    """Run ``steps`` hit-and-run steps from ``w`` (updated in place).

    ``z`` receives the margins s_i <x_i, w> kept along the chain (not used,
    may be None, for the linear loss, which needs ``g`` = sum_i s_i x_i);
    with ``fresh_margins=False`` it must already hold them for ``w`` (to
    continue a chain without a pass over X).
    ``y``: labels as the loss sees them (exactly +-1 for the logistic and
    hinge losses, checked; clipped for regression); ``scale``: row scales
    (None: 1).  ``margin_bound``: a bound on |s_i <x_i, w>| over C (norm
    bound times data norm; inf if unknown).  Every ``thin`` steps w is
    written to the next row of ``trace``.  Returns the number of passes over
    the rows made by the line samplers.  Between steps, about every 100 ms,
    Python's signal handlers run (Ctrl-C raises KeyboardInterrupt here; ``w``
    then holds a partial chain) and ``progress(t)`` (or None) is told the
    steps done (src/fasterm/_interrupt.pxd).
    """
    cdef bitgen_t* rng = _bitgen(bit_generator)
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef long long evals = 0
    cdef double* zp = NULL
    cdef double* tp = NULL
    cdef Py_ssize_t i
    if kind < LOGISTIC or kind > LINEAR:
        raise ValueError(f"kind must be in 0..4, got {kind}")
    if set_kind < BALL or set_kind > SIMPLEX:
        raise ValueError(f"set_kind must be in 0..2, got {set_kind}")
    if n < 1 or d < 1:
        raise ValueError(f"X must be non-empty, got shape ({n}, {d})")
    if w.shape[0] != d:
        raise ValueError(f"w has {w.shape[0]} entries but X has {d} columns")
    if directions != SPHERE and directions != MIXED:
        raise ValueError(f"directions must be 0 or 1, got {directions}")
    if steps < 0 or thin < 1:
        raise ValueError("need steps >= 0 and thin >= 1")
    if not (kappa >= 0.0 and lam >= 0.0):
        raise ValueError("need kappa >= 0 and lam >= 0")
    if not margin_bound > 0.0:
        raise ValueError("margin_bound must be > 0 (inf if unknown)")
    cdef const double* yp = _ptr(y, n, "y")
    cdef const double* sp = _ptr(scale, n, "scale")
    cdef const double* gp = _ptr(g, d, "g")
    cdef const double* cp = NULL
    cdef const double* lp = NULL
    cdef const double* hp = NULL
    if kind == LINEAR:
        if gp == NULL:
            raise ValueError("g is required for the linear loss")
    else:
        if yp == NULL:
            raise ValueError("y is required for this loss")
        if kind == LOGISTIC or kind == HINGE:
            for i in range(n):  # the chain keeps y_i z_i and flips the sign back exactly
                if yp[i] != 1.0 and yp[i] != -1.0:
                    raise ValueError("classification labels must be exactly +1 or -1 here")
        if z is None or z.shape[0] != n:
            raise ValueError(f"z must have {n} entries")
        zp = &z[0]
    if set_kind == BALL:
        cp = _ptr(center, d, "center")
        if cp == NULL or not radius > 0.0:
            raise ValueError("the ball needs a center and a radius > 0")
    elif set_kind == BOX:
        lp = _ptr(low, d, "low")
        hp = _ptr(high, d, "high")
        if lp == NULL or hp == NULL:
            raise ValueError("the box needs low and high")
    elif not total > 0.0:
        raise ValueError("the simplex needs total > 0")
    if trace is not None:
        if trace.shape[1] != d or trace.shape[0] < steps // thin:
            raise ValueError(f"trace must have shape ({steps // thin}, {d})")
        if trace.shape[0] > 0:
            tp = &trace[0, 0]
    cdef Interrupt stop
    state = watch(&stop, progress)
    with bit_generator.lock, nogil:
        _run_chain(kind, &X[0, 0], n, d, sp, yp, gp, kappa, lam, method, set_kind, cp, radius,
                   lp, hp, total, directions, margin_bound, &w[0], zp, fresh_margins, steps, tp, thin, rng, &evals,
                   &stop)
    raise_if_stopped(&stop, state)
    return evals


def line_sample(object bit_generator, int kind, const double[::1] z, const double[::1] c,
                const double[::1] y, double kappa, double lam, double wu, double uu, double a,
                double b, double[::1] out, int method=AUTO, double margin_bound=float("inf")):
    """Test hook: len(out) independent draws of t on [a, b] (a <= 0 <= b) with density

        prop. to exp(-kappa sum_i (l_i(z_i + t c_i) - l_i(z_i)) - lam (t wu + t^2 uu / 2)),

    the line density of one hit-and-run step (the linear loss uses sum(c)).
    ``margin_bound``: a bound on every |y_i (z_i + t c_i)| on [a, b] that the
    logistic sampler may use (inf: it bounds them itself).
    Returns the number of passes over the rows.
    """
    cdef bitgen_t* rng = _bitgen(bit_generator)
    cdef Py_ssize_t n = c.shape[0]
    cdef long long evals = 0
    if kind < LOGISTIC or kind > LINEAR:
        raise ValueError(f"kind must be in 0..4, got {kind}")
    if z.shape[0] != n or (kind != LINEAR and (y is None or y.shape[0] != n)):
        raise ValueError("z, c and y must have the same length")
    if n < 1:
        raise ValueError("need at least one row")
    if not (a <= 0.0 <= b):
        raise ValueError("need a <= 0 <= b")
    if not margin_bound > 0.0:
        raise ValueError("margin_bound must be > 0")
    if not (kappa >= 0.0 and lam >= 0.0):
        raise ValueError("need kappa >= 0 and lam >= 0")
    cdef const double* yp = NULL
    if kind != LINEAR:
        yp = &y[0]
    if out.shape[0] == 0:
        return 0
    with bit_generator.lock, nogil:
        _line_sample_many(kind, n, &z[0], &c[0], yp, kappa, lam, wu, uu, a, b, margin_bound, method,
                          rng, &out[0], out.shape[0], &evals)
    return evals


def _log1p_unit(const double[::1] e, double[::1] out):
    """Test hook: the kernels' log(1 + e) for 0 <= e <= 1."""
    if out.shape[0] != e.shape[0]:
        raise ValueError("out must have the length of e")
    if e.shape[0] == 0:
        return
    with nogil:
        _log1p_unit_many(&e[0], &out[0], e.shape[0])
