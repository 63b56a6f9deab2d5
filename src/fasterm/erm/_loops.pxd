# The step loop of the first-order solvers (src/cpp/fasterm/loops.hpp) and the pieces the
# compiled loops share -- the noise of a step, the projection onto a feasible set -- declared
# once, here, for the wrappers of _losses (dense rows, and the noisy-SGD loop), _sparse (CSR
# rows) and _mclosses (the multiclass loops).
from cython cimport floating
from libc.stdint cimport int64_t
from numpy.random cimport bitgen_t

from fasterm._bitgen cimport _bitgen
from fasterm._codes cimport kBox, kL1Ball, kL2Ball, kNoiseGaussian, kNoiseNone
from fasterm._interrupt cimport Interrupt
from fasterm._loss_options cimport Options, _or_null

cdef extern from "fasterm/ziggurat.hpp" namespace "fasterm" nogil:
    void laplace_fill "fasterm::laplace_fill"[T](bitgen_t* rng, T* out, Py_ssize_t n, T scale)

cdef extern from "fasterm/projections.hpp" namespace "fasterm" nogil:
    void project_l2_ball "fasterm::project_l2_ball"[T](const T* y, T* x, size_t n, const T* center,
                                                       double radius)

cdef extern from "fasterm/loops.hpp" namespace "fasterm::loops" nogil:
    cdef cppclass Set "fasterm::loops::Set"[T]:
        int kind
        double param
        const T* a
        const T* b

    cdef cppclass Steps "fasterm::loops::Steps"[T]:
        Py_ssize_t steps
        T scale
        T reg
        double lr
        const double* lrs
        const double* betas
        int noise
        T noise_scale
        bitgen_t* rng
        double* acc
        Py_ssize_t acc_from
        int64_t work

    cdef cppclass DenseSum "fasterm::loops::DenseSum"[T]:
        int kind
        const T* X
        const T* y
        const double* norms
        Py_ssize_t n
        Py_ssize_t d
        Options o
        int n_threads

    cdef cppclass CsrSum "fasterm::loops::CsrSum"[T, I]:
        int kind
        const I* indptr
        const I* indices
        const T* data
        const T* y
        const double* norms
        Py_ssize_t n
        Py_ssize_t d
        Options o
        int n_threads
        Py_ssize_t bad

    const Py_ssize_t kBuffers "fasterm::loops::kBuffers"

    Py_ssize_t gd_loop "fasterm::loops::gd_loop"[T, G](G& grad_sum, T* w, Py_ssize_t d, const Steps[T]& p,
                                                       const Set[T]& c, T* buf, Interrupt* stop) except +
    void noise_fill "fasterm::loops::noise_fill"[T](bitgen_t* rng, int noise, T* out, Py_ssize_t d, T scale)
    void project "fasterm::loops::project"[T](const Set[T]& c, const T* step, T* w, Py_ssize_t d, T* work)


cdef inline int check_set(int set_kind, double set_param, Py_ssize_t a_len, Py_ssize_t b_len, Py_ssize_t acc_len,
                          Py_ssize_t d) except -1:
    """The feasible set's arguments of pgd_loop and sgd_loop (lengths -1: None), for d parameters."""
    if set_kind < kL2Ball or set_kind > kL1Ball:
        raise ValueError(f"set_kind must be in 0..3, got {set_kind}")
    if set_kind == kBox and (a_len < 0 or b_len < 0):
        raise ValueError("a box needs set_a (low) and set_b (high)")
    for name, length in (("set_a", a_len), ("set_b", b_len), ("acc", acc_len)):
        if length >= 0 and length != d:
            raise ValueError(f"{name} has {length} entries, expected {d}")
    if set_kind != kBox and not set_param > 0.0:
        raise ValueError(f"set_param must be > 0, got {set_param}")
    return 0


cdef inline int steps_set(Steps[floating]* p, Set[floating]* c, Py_ssize_t steps, double lr, double reg, int noise,
                          double scale, object bit_generator, int set_kind, double set_param,
                          const floating[::1] set_a, const floating[::1] set_b, double[::1] acc,
                          const double[::1] betas, const double[::1] lrs, Py_ssize_t acc_from, Py_ssize_t n,
                          Py_ssize_t d) except -1:
    """gd_loop's step parameters and set from the arguments of a pgd_loop wrapper (checked: what
    keeps the loop inside its buffers); ``work`` is left to the wrapper."""
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if noise < kNoiseNone or noise > kNoiseGaussian:
        raise ValueError(f"noise must be 0, 1 or 2, got {noise}")
    check_set(set_kind, set_param, -1 if set_a is None else set_a.shape[0],
              -1 if set_b is None else set_b.shape[0], -1 if acc is None else acc.shape[0], d)
    if betas is not None and betas.shape[0] < steps:
        raise ValueError(f"betas has {betas.shape[0]} entries, expected {steps}")
    if lrs is not None and lrs.shape[0] < steps:
        raise ValueError(f"lrs has {lrs.shape[0]} entries, expected {steps}")
    if acc_from < 0:
        raise ValueError(f"acc_from must be >= 0, got {acc_from}")
    p.steps = steps
    p.scale = <floating> (1.0 / n)
    p.reg = <floating> reg
    p.lr = lr
    p.lrs = NULL
    p.betas = NULL
    if steps > 0:
        if lrs is not None:
            p.lrs = &lrs[0]
        if betas is not None:
            p.betas = &betas[0]
    p.noise = noise
    p.noise_scale = <floating> scale
    p.rng = NULL
    if noise != kNoiseNone:
        if bit_generator is None:
            raise ValueError("a bit generator is required for noise")
        p.rng = _bitgen(bit_generator)
    p.acc = NULL
    if acc is not None:
        p.acc = &acc[0]
    p.acc_from = acc_from
    p.work = 0
    c.kind = set_kind
    c.param = set_param
    c.a = _or_null(set_a)
    c.b = _or_null(set_b)
    return 0
