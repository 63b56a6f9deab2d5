# Compiled exponential-mechanism samplers for fasterm.mechanisms.exponential
# and fasterm.mechanisms.univariate (median, quantile, mean).
#
# Thin wrappers over the header-only kernels of fasterm/expmech.hpp.  They
# draw from a caller's numpy Generator through its bitgen_t, under the bit
# generator's lock with the GIL released (as fasterm.mechanisms._noise does), so a seed
# reproduces a release.  Each fills ``out`` with len(out) independent draws
# from one precomputed table: the public functions ask for one.  The public
# layer validates every value (finite data, a < b, epsilon > 0, no NaN or
# -inf score); the checks here only keep the kernels inside their buffers.
from fasterm._bitgen cimport _bitgen
from libc.stdint cimport int64_t
from libcpp cimport bool as cbool
from numpy.random cimport bitgen_t
from cython cimport floating

cdef extern from "fasterm/expmech.hpp" namespace "fasterm" nogil:
    void _expmech "fasterm::expmech_sample"[T](const T* scores, Py_ssize_t n, double s_min, double k,
                                               bitgen_t* rng, int64_t* out, Py_ssize_t size) except +
    void _median_erm "fasterm::median_erm_sample"[T](const T* x, Py_ssize_t n, double a, double b,
                                                     double eps, bitgen_t* rng, double* out,
                                                     Py_ssize_t size) except +
    void _quantile_rank "fasterm::quantile_rank_sample"[T](const T* x, Py_ssize_t n, double a, double b,
                                                           double eps, double q, bitgen_t* rng,
                                                           double* out, Py_ssize_t size) except +
    void _truncnorm "fasterm::truncnorm_sample"(double mu, double sigma, double a, double b,
                                                bitgen_t* rng, double* out, Py_ssize_t size)
    cbool _is_sorted "fasterm::is_sorted"[T](const T* x, Py_ssize_t n)
    void _exp_nonpos_c "fasterm::exp_nonpos"(double x, double& e, double& em1)


cdef int _check_interval(double a, double b) except -1:
    if not (a < b and b - a < float("inf")):
        raise ValueError("need finite a < b")
    return 0


def exponential_sample(object bit_generator, const floating[::1] scores, double s_min, double k,
                       int64_t[::1] out):
    """Indices i with P(i) proportional to exp(-k (scores[i] - s_min)).

    ``s_min`` must be the (finite) minimum of ``scores`` and ``k`` >= 0; +inf
    scores are never chosen.
    """
    cdef bitgen_t* rng = _bitgen(bit_generator)
    if scores.shape[0] == 0:
        raise ValueError("scores must not be empty")
    if not k >= 0.0:
        raise ValueError("k must be >= 0")
    if out.shape[0] == 0:
        return
    with bit_generator.lock, nogil:
        _expmech(&scores[0], scores.shape[0], s_min, k, rng, &out[0], out.shape[0])


def median_erm_sample(object bit_generator, const floating[::1] x_sorted, double a, double b,
                      double epsilon, double[::1] out):
    """Draws from the density proportional to exp(-epsilon * sum|w - x_i| / (2 (b - a))) on [a, b].

    ``x_sorted`` ascending; values outside [a, b] count as a or b.
    """
    cdef bitgen_t* rng = _bitgen(bit_generator)
    if x_sorted.shape[0] == 0:
        raise ValueError("x must not be empty")
    _check_interval(a, b)
    if not epsilon > 0.0:
        raise ValueError("epsilon must be > 0")
    if out.shape[0] == 0:
        return
    with bit_generator.lock, nogil:
        _median_erm(&x_sorted[0], x_sorted.shape[0], a, b, epsilon, rng, &out[0], out.shape[0])


def quantile_rank_sample(object bit_generator, const floating[::1] x_sorted, double a, double b,
                         double epsilon, double q, double[::1] out):
    """Rank quantile: gap j w.p. proportional to len_j exp(-epsilon |j - q n| / 2), uniform inside.

    ``x_sorted`` ascending; values outside [a, b] count as a or b.
    """
    cdef bitgen_t* rng = _bitgen(bit_generator)
    if x_sorted.shape[0] == 0:
        raise ValueError("x must not be empty")
    _check_interval(a, b)
    if not epsilon > 0.0:
        raise ValueError("epsilon must be > 0")
    if not (0.0 <= q <= 1.0):
        raise ValueError("q must be in [0, 1]")
    if out.shape[0] == 0:
        return
    with bit_generator.lock, nogil:
        _quantile_rank(&x_sorted[0], x_sorted.shape[0], a, b, epsilon, q, rng, &out[0], out.shape[0])


def truncnorm_sample(object bit_generator, double mu, double sigma, double a, double b,
                     double[::1] out):
    """N(mu, sigma^2) truncated to [a, b] (a < b, either may be infinite), exact in every regime."""
    cdef bitgen_t* rng = _bitgen(bit_generator)
    if not a < b:
        raise ValueError("need a < b")
    if not (sigma > 0.0 and sigma < float("inf")):
        raise ValueError("sigma must be finite and > 0")
    if mu != mu or mu in (float("inf"), float("-inf")):
        raise ValueError("mu must be finite")
    if out.shape[0] == 0:
        return
    with bit_generator.lock, nogil:
        _truncnorm(mu, sigma, a, b, rng, &out[0], out.shape[0])


def is_sorted(const floating[::1] x):
    """True when x is ascending (stops at the first descent)."""
    if x.shape[0] < 2:
        return True
    cdef cbool r
    with nogil:
        r = _is_sorted(&x[0], x.shape[0])
    return r


def _exp_nonpos(const double[::1] x, double[::1] e, double[::1] em1):
    """Test hook: the kernels' exp(x) and expm1(x) for x <= 0."""
    cdef Py_ssize_t i
    if e.shape[0] != x.shape[0] or em1.shape[0] != x.shape[0]:
        raise ValueError("e and em1 must have the length of x")
    with nogil:
        for i in range(x.shape[0]):
            _exp_nonpos_c(x[i], e[i], em1[i])
