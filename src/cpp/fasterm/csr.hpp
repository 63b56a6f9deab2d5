// The clipped gradient sum and the row norms of losses.hpp over a matrix in
// CSR form (scipy.sparse.csr_matrix / csr_array), without densifying it.
//
// Header-only, no Python.h.  X is n x d, given by indptr (n + 1 offsets),
// indices (column of each stored value) and data (the values), with 32- or
// 64-bit indices and float or double values; duplicate or unsorted column
// indices are allowed (duplicates add up, as in scipy).  The per-row scalar
// calculus is losses.hpp's own: the same coefficients<L>() (row scale to the
// data norm, label map, derivative, per-example clip) and the same weigh()
// for sample weights, so a CSR row and its dense copy get the same
// coefficient whenever their dot products and norms agree.  Those are
// summed here over the stored values only, in column-storage order, in
// double: the bits can differ from the dense kernel's (whose lanes sum in
// another order, in float for float data) by rounding only.
//
// Determinism: rows are split into the chunks of losses.hpp's make_plan
// (they depend only on n, d and the value type), each chunk sums into its own
// double partial row, and the partials are added in chunk order, so results
// are the same for any number of threads.
//
// Memory safety does not rest on the caller: a column index outside [0, d)
// is skipped and counted (*bad), and the wrapper raises on a nonzero count.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "fasterm/losses.hpp"

namespace fasterm {
namespace losses {

// One stored row: nnz values and their columns.
template <class T, class I>
struct CsrRow {
    const I* idx;
    const T* val;
    index_t nnz;
};

// The rows of a CSR matrix, in the row-map interface of losses.hpp
// (DenseRows, IndexedRows): rows(i) is row i, rows.at(i) its index for the
// labels, norms and weights.
template <class T, class I>
struct CsrRows {
    static constexpr bool dense = false;
    const I* indptr;
    const I* indices;
    const T* data;
    CsrRow<T, I> operator()(index_t i) const {
        const index_t a = index_t(indptr[i]);
        return {indices + a, data + a, index_t(indptr[i + 1]) - a};
    }
    index_t at(index_t i) const { return i; }
};

template <class I>
inline bool column_ok(I j, index_t d) {
    using U = typename std::make_unsigned<I>::type;
    return U(j) < U(d);  // negative columns wrap to huge values
}

// <x, w> in double over the stored values (bad columns skipped, counted).
template <class T, class I>
inline double csr_dot(const CsrRow<T, I>& x, const T* w, index_t d, index_t* bad) {
    double t = 0.0;
    for (index_t k = 0; k < x.nnz; ++k) {
        const I j = x.idx[k];
        if (!column_ok(j, d)) {
            ++*bad;
            continue;
        }
        t += double(x.val[k]) * double(w[j]);
    }
    return t;
}

// <s * x, w> for the rare rows whose unscaled dot product overflows (the
// overload that losses.hpp's coefficients() finds for a CSR row).
template <class T, class I>
inline double dot_scaled(const CsrRow<T, I>& x, const T* w, index_t d, double s) {
    double t = 0.0;
    for (index_t k = 0; k < x.nnz; ++k)
        if (column_ok(x.idx[k], d)) t += (s * double(x.val[k])) * double(w[x.idx[k]]);
    return t;
}

// ||x||_2 in double, overflow-safe as losses.hpp's norm_finish (rescaled by
// the largest entry on the rare path).  Stored zeros and duplicates count as
// stored: a duplicated column is two entries here, their sum in the dense
// copy (callers pass canonical matrices; scipy's sum_duplicates).
template <class T, class I>
inline double csr_norm(const CsrRow<T, I>& x) {
    double ss = 0.0;
    for (index_t k = 0; k < x.nnz; ++k) ss += double(x.val[k]) * double(x.val[k]);
    if (ss <= std::numeric_limits<double>::max()) return std::sqrt(ss);
    double big = 0.0;
    for (index_t k = 0; k < x.nnz; ++k) big = std::max(big, std::fabs(double(x.val[k])));
    double t = 0.0;
    for (index_t k = 0; k < x.nnz; ++k) {
        const double u = double(x.val[k]) / big;
        t += u * u;
    }
    return big * std::sqrt(t);
}

// acc += sum over rows [r0, r1) of a_i x_i, in blocks of kMaxBlock rows: the
// dot products and norms of a block, its coefficients (losses.hpp), then the
// scatter of a_i x_i into acc (rows whose coefficient is 0 are skipped).
template <class L, class T, class I>
inline void csr_grad_sum_range(const CsrRows<T, I>& rows, const T* y, const T* w, const double* norms,
                               index_t r0, index_t r1, index_t d, const Options& o, double* acc,
                               index_t* bad) {
    const bool need_norms = o.data_norm > 0.0 || o.clip > 0.0;
    double z[kMaxBlock], nb[kMaxBlock];
    T coef[kMaxBlock];
    for (index_t b = r0; b < r1; b += kMaxBlock) {
        const index_t m = std::min(kMaxBlock, r1 - b);
        for (index_t r = 0; r < m; ++r) {
            const CsrRow<T, I> x = rows(b + r);
            z[r] = csr_dot(x, w, d, bad);
            if (need_norms) nb[r] = norms != nullptr ? norms[b + r] : csr_norm(x);
        }
        coefficients<L>(rows, b, z, y == nullptr ? nullptr : y + b, need_norms ? nb : nullptr, w, m, d, o,
                        coef);
        if (o.weights != nullptr) weigh(rows, b, m, o.weights, coef);
        for (index_t r = 0; r < m; ++r) {
            const double c = double(coef[r]);
            if (c == 0.0) continue;
            const CsrRow<T, I> x = rows(b + r);
            for (index_t k = 0; k < x.nnz; ++k) {
                const I j = x.idx[k];
                if (column_ok(j, d)) acc[j] += c * double(x.val[k]);
            }
        }
    }
}

// out[j] = sum_i a_i x_ij over the n rows; returns the number of stored
// values whose column lies outside [0, d) (skipped).  Inputs as grad_sum of
// losses.hpp (y non-null for losses with labels; norms: cached row norms of
// X from csr_row_norms, or null to compute them in the pass).
template <class T, class I>
index_t csr_grad_sum(int kind, const I* indptr, const I* indices, const T* data, const T* y, const T* w,
                     const double* norms, index_t n, index_t d, Options o, T* out, int n_threads) {
    const Plan p = make_plan(n, d, sizeof(T));
    const CsrRows<T, I> rows{indptr, indices, data};
    std::vector<double> partial(std::size_t(p.nchunks * d), 0.0);
    std::vector<index_t> bad(std::size_t(p.nchunks), 0);
    for_each_chunk(p.nchunks, worker_count(p.nchunks, n_threads), [&](index_t k, int) {
        const index_t r0 = k * p.chunk, r1 = std::min(n, r0 + p.chunk);
        dispatch(kind, [&](auto loss) {
            csr_grad_sum_range<decltype(loss)>(rows, y, w, norms, r0, r1, d, o, &partial[k * d], &bad[k]);
        });
    });
    index_t nbad = 0;
    for (index_t k = 0; k < p.nchunks; ++k) nbad += bad[k];
    for (index_t j = 0; j < d; ++j) {
        double s = 0.0;
        for (index_t k = 0; k < p.nchunks; ++k) s += partial[k * d + j];
        out[j] = T(s);
    }
    return nbad;
}

// out[i] = ||x_i||_2 (double), the norms csr_grad_sum computes in its pass.
template <class T, class I>
void csr_row_norms(const I* indptr, const I* indices, const T* data, index_t n, index_t d, double* out,
                   int n_threads) {
    const Plan p = make_plan(n, d, sizeof(T));
    const CsrRows<T, I> rows{indptr, indices, data};
    for_each_chunk(p.nchunks, worker_count(p.nchunks, n_threads), [&](index_t k, int) {
        const index_t r0 = k * p.chunk, r1 = std::min(n, r0 + p.chunk);
        for (index_t i = r0; i < r1; ++i) out[i] = csr_norm(rows(i));
    });
}

// Instantiated in src/cpp/fasterm/csr_f32.cpp and csr_f64.cpp (both index
// widths each): translation units compiled at full optimisation in parallel,
// while the Cython wrapper that calls them, glue only, is compiled at -O1
// (CMakeLists.txt).
#define FASTERM_CSR_GRAD_SUM(T, I)                                                                      \
    index_t csr_grad_sum(int kind, const I* indptr, const I* indices, const T* data, const T* y,        \
                         const T* w, const double* norms, index_t n, index_t d, Options o, T* out,      \
                         int n_threads)
#define FASTERM_CSR_ROW_NORMS(T, I) \
    void csr_row_norms(const I* indptr, const I* indices, const T* data, index_t n, index_t d, double* out, int n_threads)
#define FASTERM_CSR_INSTANTIATE(EXTERN, T)                      \
    EXTERN template FASTERM_CSR_GRAD_SUM(T, std::int32_t);      \
    EXTERN template FASTERM_CSR_GRAD_SUM(T, std::int64_t);      \
    EXTERN template FASTERM_CSR_ROW_NORMS(T, std::int32_t);     \
    EXTERN template FASTERM_CSR_ROW_NORMS(T, std::int64_t);
FASTERM_CSR_INSTANTIATE(extern, float)
FASTERM_CSR_INSTANTIATE(extern, double)

}  // namespace losses
}  // namespace fasterm
