# Compiled Euclidean projections for fasterm.erm.constraints.
#
# Thin wrappers over the header-only kernels of fasterm/projections.hpp.  Each
# takes a 1-D vector or a C-contiguous 2-D batch of row vectors (float32 or
# float64) and an output of the same shape and dtype, which may be the input
# itself.  The public classes in fasterm/erm/constraints.py validate every value
# (finite input, radius > 0, lo <= hi, no partial overlap of out and v); the
# checks here are only those that keep the kernels inside their buffers.
from cython cimport floating

cdef extern from "fasterm/projections.hpp" namespace "fasterm" nogil:
    void project_simplex_rows[T](const T* y, T* x, size_t m, size_t d, double total) except +
    void project_l1_ball_rows[T](const T* y, T* x, size_t m, size_t d, double radius) except +
    void project_l2_ball_rows[T](const T* y, T* x, size_t m, size_t d,
                                 const T* center, double radius)
    void project_box_rows[T](const T* y, T* x, size_t m, size_t d, const T* lo, const T* hi)
    void project_box_scalar_rows[T](const T* y, T* x, size_t m, size_t d, T lo, T hi)


cdef object _rows(object a, str name):
    # A 1-D vector is the batch of its one row; a reshape of a contiguous
    # vector is a view, so writes into it land in the caller's array.
    ndim = getattr(a, "ndim", None)
    if ndim == 1:
        if not a.flags.c_contiguous:
            raise ValueError(f"{name} must be C-contiguous")
        return a.reshape(1, a.shape[0])
    if ndim != 2:
        raise ValueError(f"{name} must be a 1-D or 2-D array")
    return a


cdef int _same_shape(const Py_ssize_t* a, const Py_ssize_t* b) except -1:
    if a[0] != b[0] or a[1] != b[1]:
        raise ValueError(f"out has shape ({b[0]}, {b[1]}) but v has shape ({a[0]}, {a[1]})")
    return 0


def _simplex(const floating[:, ::1] v, floating[:, ::1] out, double total):
    _same_shape(v.shape, out.shape)
    if not total > 0.0:
        raise ValueError("total must be > 0")
    if v.shape[0] == 0 or v.shape[1] == 0:
        return
    with nogil:
        project_simplex_rows(&v[0, 0], &out[0, 0], v.shape[0], v.shape[1], total)


def _l1_ball(const floating[:, ::1] v, floating[:, ::1] out, double radius):
    _same_shape(v.shape, out.shape)
    if not radius > 0.0:
        raise ValueError("radius must be > 0")
    if v.shape[0] == 0 or v.shape[1] == 0:
        return
    with nogil:
        project_l1_ball_rows(&v[0, 0], &out[0, 0], v.shape[0], v.shape[1], radius)


def _l2_ball(const floating[:, ::1] v, floating[:, ::1] out, const floating[::1] center,
             double radius):
    _same_shape(v.shape, out.shape)
    cdef const floating* c = NULL
    if center is not None:
        if center.shape[0] != v.shape[1]:
            raise ValueError(f"center has {center.shape[0]} entries, rows have {v.shape[1]}")
        if center.shape[0] > 0:
            c = &center[0]
    if v.shape[0] == 0 or v.shape[1] == 0:
        return
    with nogil:
        project_l2_ball_rows(&v[0, 0], &out[0, 0], v.shape[0], v.shape[1], c, radius)


def _box(const floating[:, ::1] v, floating[:, ::1] out, const floating[::1] low,
         const floating[::1] high):
    _same_shape(v.shape, out.shape)
    if low.shape[0] != v.shape[1] or high.shape[0] != v.shape[1]:
        raise ValueError(f"low and high must have {v.shape[1]} entries")
    if v.shape[0] == 0 or v.shape[1] == 0:
        return
    with nogil:
        project_box_rows(&v[0, 0], &out[0, 0], v.shape[0], v.shape[1], &low[0], &high[0])


def _box_scalar(const floating[:, ::1] v, floating[:, ::1] out, double low, double high):
    _same_shape(v.shape, out.shape)
    if v.shape[0] == 0 or v.shape[1] == 0:
        return
    with nogil:
        project_box_scalar_rows(&v[0, 0], &out[0, 0], v.shape[0], v.shape[1],
                                <floating>low, <floating>high)


def simplex(v, out, double total):
    """Project v (a vector or each row of a batch) onto {w >= 0, sum w = total}.

    Condat's algorithm (Math. Programming 158, 2016), expected O(d) per row.
    Writes into ``out`` (same shape and dtype; may be ``v``).
    """
    _simplex(_rows(v, "v"), _rows(out, "out"), total)


def l1_ball(v, out, double radius):
    """Project v (a vector or each row of a batch) onto {||w||_1 <= radius}."""
    _l1_ball(_rows(v, "v"), _rows(out, "out"), radius)


def l2_ball(v, out, center, double radius):
    """Project v (a vector or each row) onto {||w - center||_2 <= radius}; center may be None."""
    _l2_ball(_rows(v, "v"), _rows(out, "out"), center, radius)


def box(v, out, low, high):
    """Project v (a vector or each row) onto {low <= w <= high}.

    ``low`` and ``high`` are both Python floats (a cube) or both 1-D arrays of
    the row length and of v's dtype.
    """
    if isinstance(low, float) and isinstance(high, float):
        _box_scalar(_rows(v, "v"), _rows(out, "out"), low, high)
    else:
        _box(_rows(v, "v"), _rows(out, "out"), low, high)
