# Compiled noise samplers that draw from a caller's numpy Generator.
#
# Randomness comes from the Generator's own bit generator through numpy's C API
# (the ``bitgen_t`` behind its capsule), taken under the bit generator's lock
# with the GIL released, so one seed reproduces a run and threads that share a
# Generator stay consistent.  No private RNG, no reduction to a 31-bit seed.
from fasterm._bitgen cimport _bitgen
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_standard_normal_fill, random_standard_normal_fill_f,
)
from cython cimport floating

cdef extern from "fasterm/ziggurat.hpp" namespace "fasterm" nogil:
    void _laplace_zig "fasterm::laplace_fill"[T](bitgen_t* rng, T* out, Py_ssize_t n, T scale)


# Gaussian samples are produced in blocks that stay in L1 while the scale is
# applied (one pass over the output, not two).
cdef enum:
    BLOCK = 1024


cdef inline void _normal_block(bitgen_t* rng, floating* out, Py_ssize_t m) noexcept nogil:
    if floating is double:
        random_standard_normal_fill(rng, m, out)
    else:
        random_standard_normal_fill_f(rng, m, out)


cdef void _scale_fill(bitgen_t* rng, floating* out, Py_ssize_t n, floating scale) noexcept nogil:
    cdef Py_ssize_t start, j, m
    start = 0
    while start < n:
        m = min(<Py_ssize_t>BLOCK, n - start)
        _normal_block(rng, out + start, m)
        for j in range(m):
            out[start + j] *= scale
        start += m


def laplace_fill(object bit_generator, floating[::1] out, double scale):
    """Fill ``out`` with i.i.d. Laplace(0, scale) draws (scale >= 0, checked by the caller).

    A ziggurat for Exp(1) whose 64-bit word also carries the sign (see
    ``src/cpp/fasterm/ziggurat.hpp``); float32 output draws 32-bit words.
    """
    cdef bitgen_t* rng = _bitgen(bit_generator)
    cdef Py_ssize_t n = out.shape[0]
    if n == 0:
        return
    with bit_generator.lock, nogil:
        _laplace_zig(rng, &out[0], n, <floating>scale)


def gaussian_fill(object bit_generator, floating[::1] out, double scale):
    """Fill ``out`` with i.i.d. N(0, scale^2) draws from numpy's ziggurat.

    For float64 the stream is exactly ``Generator.normal(0, scale, n)`` for the
    same generator state (same algorithm, same bits).
    """
    cdef bitgen_t* rng = _bitgen(bit_generator)
    cdef Py_ssize_t n = out.shape[0]
    if n == 0:
        return
    with bit_generator.lock, nogil:
        _scale_fill(rng, &out[0], n, <floating>scale)
