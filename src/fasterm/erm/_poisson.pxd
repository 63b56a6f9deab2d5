# The Poisson sampler of the compiled noisy-SGD loops (_losses.sgd_loop, the binary one, and
# _mclosses.sgd_loop, the multiclass one): one definition, inlined into each module.
#
# Each batch draws from the caller's bit generator exactly what the Python reference loops draw
# through numpy's Generator, in the same order, so both give the same bits for a seed:
#   |B| = Generator.binomial(n, q)            numpy's random_binomial
#   B   = Generator.choice(n, |B|, replace=False), sorted
#         (numpy's algorithm: Floyd's sampling -- numpy tests membership in
#         a hash set, here in a bitmap of the rows, which also gives the
#         sorted batch -- then the shuffle of the sample, whose draws are
#         consumed, the order being discarded by the sort; or, for
#         n > 10,000 and |B| > n // 50, the tail of a partial Fisher-Yates
#         shuffle of 0..n-1; |B| = n: all rows)
# fasterm.erm._sgdrun.sampler_matches_numpy checks once per process that this reproduces the
# installed numpy's Generator (numpy makes no promise that choice's algorithm never changes);
# the Python loops run otherwise.
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport binomial_t, random_binomial, random_bounded_uint64


cdef extern from "<algorithm>" namespace "std" nogil:
    void _sort_rows "std::sort"(int64_t* first, int64_t* last)


cdef extern from *:
    """
    static inline long long fasterm_ctz64(unsigned long long v) { return __builtin_ctzll(v); }
    """
    long long _ctz "fasterm_ctz64"(uint64_t v) noexcept nogil


cdef struct _Sampler:
    binomial_t binom          # random_binomial's cache of constants (n, q fixed)
    int64_t* idx              # the batch (capacity n)
    uint64_t* bits            # Floyd's membership bitmap of the n rows (all zero between draws)
    uint64_t* summary         # bit j: word j of bits is non-zero (all zero between draws)
    int64_t* pool             # the tail shuffle's 0..n-1 (allocated on first use)


cdef inline void _shuffle_draws(bitgen_t* rng, Py_ssize_t n, Py_ssize_t first, int64_t* data) noexcept nogil:
    # numpy's _shuffle_int: positions n-1 .. first, each swapped with a uniform one below it.
    cdef Py_ssize_t i
    cdef uint64_t j
    cdef int64_t tmp
    i = n - 1
    while i >= first:
        j = random_bounded_uint64(rng, 0, <uint64_t>i, 0, 0)
        tmp = data[j]
        data[j] = data[i]
        data[i] = tmp
        i -= 1


cdef inline Py_ssize_t _poisson_rows(bitgen_t* rng, _Sampler* s, Py_ssize_t n, double q) except -1 nogil:
    """The next Poisson batch into s.idx (ascending); returns its size."""
    cdef int64_t size = random_binomial(rng, q, <int64_t>n, &s.binom)
    cdef int64_t j, k, b
    cdef uint64_t val, top
    cdef int64_t* idx = s.idx
    if size == 0:
        return 0
    if size >= n:
        for j in range(n):
            idx[j] = j
        return n
    if n > 10000 and size > n // 50:
        if s.pool == NULL:
            s.pool = <int64_t*> malloc(n * sizeof(int64_t))
            if s.pool == NULL:
                with gil:
                    raise MemoryError()
        for j in range(n):
            s.pool[j] = j
        _shuffle_draws(rng, n, max(n - size, 1), s.pool)
        memcpy(idx, s.pool + (n - size), size * sizeof(int64_t))
    else:
        # Floyd's algorithm as numpy runs it; membership in a bitmap of the n rows (numpy keeps a
        # hash set: the same answers, so the same sample), which also gives the sorted batch.
        if s.bits == NULL:
            s.bits = <uint64_t*> calloc((n + 63) // 64, sizeof(uint64_t))
            s.summary = <uint64_t*> calloc((n + 4095) // 4096, sizeof(uint64_t))
            if s.bits == NULL or s.summary == NULL:
                with gil:
                    raise MemoryError()
        for j in range(n - size, n):
            val = random_bounded_uint64(rng, 0, <uint64_t>j, 0, 0)
            if s.bits[val >> 6] & (<uint64_t>1 << (val & 63)):
                val = <uint64_t>j  # val already drawn: j instead (never drawn before: j > every earlier bound)
            s.bits[val >> 6] |= <uint64_t>1 << (val & 63)
            s.summary[val >> 12] |= <uint64_t>1 << ((val >> 6) & 63)
            idx[j - n + size] = <int64_t>val
        _shuffle_draws(rng, size, 1, idx)  # numpy's shuffle=True: its draws (the order is discarded)
        if (n + 4095) // 4096 <= 16 * size:
            # the sorted batch read off the bitmap (its non-zero words found through the summary),
            # cleared as it is read
            k = 0
            for b in range((n + 4095) // 4096):
                top = s.summary[b]
                while top:
                    j = b * 64 + _ctz(top)
                    top &= top - 1
                    val = s.bits[j]
                    while val:
                        idx[k] = j * 64 + _ctz(val)
                        k += 1
                        val &= val - 1
                    s.bits[j] = 0
                s.summary[b] = 0
            return size
        for k in range(size):
            s.bits[idx[k] >> 6] = 0
            s.summary[idx[k] >> 12] = 0
    _sort_rows(idx, idx + size)
    return size


cdef inline void _free_sampler(_Sampler* s) noexcept nogil:
    free(s.idx)
    free(s.bits)
    free(s.summary)
    free(s.pool)


cdef inline int _init_sampler(_Sampler* s, Py_ssize_t n) except -1:
    memset(s, 0, sizeof(_Sampler))
    s.idx = <int64_t*> malloc(max(n, 1) * sizeof(int64_t))
    if s.idx == NULL:
        raise MemoryError()
    return 0
