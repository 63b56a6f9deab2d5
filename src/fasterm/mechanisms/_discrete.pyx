# Exact discrete samplers (compiled twin of fasterm/mechanisms/_exact.py), drawing from a
# caller's numpy Generator through its bitgen_t, under its lock, without the GIL.
# Parameters are checked by the caller (fasterm/mechanisms/_exact.py): the bounds below are
# what src/cpp/fasterm/discrete.hpp needs to stay overflow-free.
from fasterm._bitgen cimport _bitgen
from libc.stdint cimport int64_t, uint64_t, uint8_t
from numpy.random cimport bitgen_t

cdef extern from "fasterm/discrete.hpp" namespace "fasterm::discrete" nogil:
    void _laplace_fill "fasterm::discrete::laplace_fill"(bitgen_t* rng, int64_t* out, int64_t count, uint64_t n, uint64_t s)
    void _gaussian_fill "fasterm::discrete::gaussian_fill"(bitgen_t* rng, int64_t* out, int64_t count, uint64_t t, uint64_t m)
    void _bernoulli_exp_fill "fasterm::discrete::bernoulli_exp_fill"(bitgen_t* rng, uint8_t* out, int64_t count, uint64_t a, uint64_t b)
    void _expmech_fill "fasterm::discrete::expmech_fill"(bitgen_t* rng, const int64_t* d, int64_t m, uint64_t a, uint64_t b, int64_t* out, int64_t count)

#: Parameters must be below this (2^62).
LIMIT = 1 << 62


def laplace_fill(object bit_generator, int64_t[::1] out, n, s):
    """Fill ``out`` with P[Z = z] ∝ exp(−|z|·s/n); 1 ≤ n, s < 2^62."""
    if not (1 <= n < LIMIT and 1 <= s < LIMIT):
        raise ValueError("n and s must be in [1, 2^62)")
    cdef uint64_t n_ = n, s_ = s
    cdef bitgen_t* rng = _bitgen(bit_generator)
    if out.shape[0] == 0:
        return
    with bit_generator.lock, nogil:
        _laplace_fill(rng, &out[0], out.shape[0], n_, s_)


def gaussian_fill(object bit_generator, int64_t[::1] out, t, m):
    """Fill ``out`` with P[Z = z] ∝ exp(−z²/(2tm)); t, m ≥ 1, t·m < 2^62."""
    if not (t >= 1 and m >= 1 and t * m < LIMIT):
        raise ValueError("t, m must be >= 1 with t*m < 2^62")
    cdef uint64_t t_ = t, m_ = m
    cdef bitgen_t* rng = _bitgen(bit_generator)
    if out.shape[0] == 0:
        return
    with bit_generator.lock, nogil:
        _gaussian_fill(rng, &out[0], out.shape[0], t_, m_)


def bernoulli_exp_fill(object bit_generator, uint8_t[::1] out, a, b):
    """Fill ``out`` with Bernoulli(exp(−a/b)) draws (0/1); 0 ≤ a < 2^64, 1 ≤ b < 2^64."""
    if not (0 <= a < (1 << 64) and 1 <= b < (1 << 64)):
        raise ValueError("a, b must be in [0, 2^64) and [1, 2^64)")
    cdef uint64_t a_ = a, b_ = b
    cdef bitgen_t* rng = _bitgen(bit_generator)
    if out.shape[0] == 0:
        return
    with bit_generator.lock, nogil:
        _bernoulli_exp_fill(rng, &out[0], out.shape[0], a_, b_)


def expmech_fill(object bit_generator, const int64_t[::1] d, int64_t[::1] out, a, b):
    """Fill ``out`` with indices i drawn with probability ∝ exp(−(a/b)·d[i]), exactly.

    ``d``: non-negative int64 grid scores with min(d) = 0 (the caller subtracts
    the smallest); 1 ≤ a, b < 2^64.  Rejection with exact uniform proposals and
    exact Bernoulli(exp(−a·d[i]/b)) acceptance (``expmech_index`` in discrete.hpp).
    """
    if not (1 <= a < (1 << 64) and 1 <= b < (1 << 64)):
        raise ValueError("a, b must be in [1, 2^64)")
    cdef Py_ssize_t m = d.shape[0], i
    if m == 0:
        raise ValueError("d must not be empty")
    cdef int64_t lo = d[0]
    for i in range(m):
        if d[i] < 0:
            raise ValueError("d must be non-negative")
        if d[i] < lo:
            lo = d[i]
    if lo != 0:
        raise ValueError("min(d) must be 0")
    cdef uint64_t a_ = a, b_ = b
    cdef bitgen_t* rng = _bitgen(bit_generator)
    if out.shape[0] == 0:
        return
    with bit_generator.lock, nogil:
        _expmech_fill(rng, &d[0], m, a_, b_, &out[0], out.shape[0])
