# Compiled randomized weighted majority for fasterm.online.
#
# RWMState holds one learner's log-domain state (see fasterm/online.hpp) and
# exposes the two steps of a round — choose (one uniform from the caller's
# Generator) and update (one loss vector) — and a batch run over a loss
# matrix that calls the same two C++ functions per row, so batch and
# streaming agree exactly.  The uniform comes from the Generator's own bit
# generator through numpy's C API, under the bit generator's lock with the
# GIL released (as in fasterm.mechanisms._noise).  fasterm.online validates every
# parameter and array; the checks here only keep the kernels inside their
# buffers.
from fasterm._bitgen cimport _bitgen
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t
from libcpp cimport bool as cbool
from numpy.random cimport bitgen_t
from cython cimport floating

import numpy as np

cdef extern from "fasterm/online.hpp" namespace "fasterm" nogil:
    cdef struct CState "fasterm::RWMState":
        double* D
        double* cum
        double* w
        double* bs
        size_t k
        double eta
        double lo
        double hi
        double m
        double total
        int since

    size_t rwm_padded(size_t k)
    void rwm_reset_weights(CState& s)
    int64_t rwm_choose(const CState& s, bitgen_t* rng)
    cbool rwm_update(CState& s, const double* loss)
    ptrdiff_t rwm_run[T](CState& s, const T* L, size_t rows, bitgen_t* rng, int64_t* actions,
                         double* incurred, int64_t* counts)
    void exp_nonpos_fill(const double* x, double* out, size_t n)

cdef extern from "fasterm/online.hpp" namespace "fasterm::rwm" nogil:
    size_t n_blocks(size_t k)


cdef class RWMState:
    """State of RWM(eta) over ``k`` experts, losses clipped to [lo, hi].

    ``lo = -inf, hi = inf``: no clipping.  Not thread-safe: one learner is one
    sequence of rounds.
    """

    cdef CState st
    cdef object _D, _cum, _w, _bs

    def __init__(self, Py_ssize_t k, double eta, double lo, double hi):
        if k < 1:
            raise ValueError("k must be >= 1")
        if not (eta > 0.0 and eta < np.inf):
            raise ValueError("eta must be finite and > 0")
        if not lo < hi:
            raise ValueError("lo must be < hi")
        kp = rwm_padded(k)
        self._D = np.full(kp, np.inf)
        self._D[:k] = 0.0
        self._cum = np.zeros(k)
        self._w = np.zeros(kp)
        self._bs = np.zeros(n_blocks(k))
        cdef double[::1] D = self._D, cum = self._cum, w = self._w, bs = self._bs
        self.st.D = &D[0]
        self.st.cum = &cum[0]
        self.st.w = &w[0]
        self.st.bs = &bs[0]
        self.st.k = k
        self.st.eta = eta
        self.st.lo = lo
        self.st.hi = hi
        self.st.m = 0.0
        rwm_reset_weights(self.st)

    @property
    def k(self):
        return self.st.k

    @property
    def eta(self):
        return self.st.eta

    @property
    def cumulative_losses(self):
        """L_i = sum of the (clipped) losses of expert i so far (a copy)."""
        return self._cum.copy()

    def probabilities(self):
        """w_i / S: the distribution the next choose() samples from (a new array)."""
        return self._w[:self.st.k] / self.st.total

    def choose(self, object bit_generator):
        """One action, drawn with exactly one ``next_double`` of the bit generator."""
        cdef bitgen_t* rng = _bitgen(bit_generator)
        cdef int64_t a
        with bit_generator.lock, nogil:
            a = rwm_choose(self.st, rng)
        return a

    def update(self, const double[::1] loss):
        """Apply one length-k loss vector; False if it held a NaN or an infinity."""
        if loss.shape[0] != <Py_ssize_t>self.st.k:
            raise ValueError(f"loss has {loss.shape[0]} entries, expected {self.st.k}")
        cdef cbool ok
        with nogil:
            ok = rwm_update(self.st, &loss[0])
        return ok

    def snapshot(self):
        """A copy of the state, for restore()."""
        return (self._D.copy(), self._cum.copy(), self._w.copy(), self._bs.copy(),
                self.st.m, self.st.total, self.st.since)

    def restore(self, snap):
        D, cum, w, bs, m, total, since = snap
        self._D[:] = D
        self._cum[:] = cum
        self._w[:] = w
        self._bs[:] = bs
        self.st.m = m
        self.st.total = total
        self.st.since = since

    def run(self, object bit_generator, const floating[:, ::1] L, int64_t[::1] actions=None,
            double[::1] incurred=None, int64_t[::1] counts=None):
        """Rounds over the rows of L: choose, record, update for each.

        ``actions``/``incurred`` need one entry per row, ``counts`` one per
        expert (incremented); each may be None.  Returns the number of rows,
        or -(t + 1) if row t held a NaN or an infinity (state and generator
        have then advanced: see snapshot/restore).
        """
        cdef size_t rows = L.shape[0]
        if L.shape[1] != <Py_ssize_t>self.st.k:
            raise ValueError(f"loss matrix has {L.shape[1]} columns, expected {self.st.k}")
        if actions is not None and <size_t>actions.shape[0] != rows:
            raise ValueError("actions must have one entry per row")
        if incurred is not None and <size_t>incurred.shape[0] != rows:
            raise ValueError("incurred must have one entry per row")
        if counts is not None and counts.shape[0] != <Py_ssize_t>self.st.k:
            raise ValueError("counts must have one entry per expert")
        if rows == 0:
            return 0
        cdef int64_t* pa = &actions[0] if actions is not None else NULL
        cdef double* pi = &incurred[0] if incurred is not None else NULL
        cdef int64_t* pc = &counts[0] if counts is not None else NULL
        cdef bitgen_t* rng = _bitgen(bit_generator)
        cdef ptrdiff_t status
        with bit_generator.lock, nogil:
            status = rwm_run(self.st, &L[0, 0], rows, rng, pa, pi, pc)
        return status


def exp_nonpos(const double[::1] x):
    """The kernel's exp for x <= 0 (accuracy tests only)."""
    out = np.empty(x.shape[0])
    cdef double[::1] o = out
    if x.shape[0]:
        with nogil:
            exp_nonpos_fill(&x[0], &o[0], x.shape[0])
    return out
