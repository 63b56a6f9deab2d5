# losses.hpp's Options (the declared bounds and sample weights every loss
# kernel takes) and the pointer set-up of the wrappers that call those
# kernels (_losses, _sparse): declared once, here.
from cython cimport floating

cdef extern from "fasterm/losses.hpp" namespace "fasterm::losses" nogil:
    cdef struct Options:
        double data_norm
        double clip
        double label_bound
        const double* weights


cdef inline const double* _weights(const double[::1] weights, Py_ssize_t n) except? NULL:
    """The sample-weights pointer of Options (NULL: unweighted), length-checked."""
    if weights is None:
        return NULL
    if weights.shape[0] != n:
        raise ValueError(f"weights have {weights.shape[0]} entries but X has {n} rows")
    return &weights[0]


cdef inline const floating* _or_null(const floating[::1] a) noexcept:
    """The first element of an optional array (labels, cached norms), or NULL for None."""
    if a is None:
        return NULL
    return &a[0]
