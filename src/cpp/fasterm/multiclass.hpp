// The clipped per-example gradient sum of the multiclass losses of
// fasterm/linear_model/_multiclass.py over a (p x K) weight matrix W, in one pass over the
// rows: dense (row-major n x d) and CSR, float and double, sample weights,
// optionally over a subset of the rows (a Poisson minibatch) read in place.
//
// Header-only, no Python.h.  For the row x_i (n x d data) the kernel builds
// the design row a_i of fasterm.erm._design.design on the fly:
//     a_i = (x_i * r_i, s),  r_i = min(1, X / ||x_i||)   (data_norm X > 0)
// with the constant column s when intercept > 0 (W then has p = d + 1 rows,
// the last multiplying s; p = d without it).  Then, all in double:
//     z = W^T a_i                      the K scores
//     logistic: u = softmax(z) - e_y   (max subtracted before exp: no overflow)
//     hinge:    u = e_j - e_y, j the first index maximising z_k + [k != y]
//               (u = 0 when j = y; Crammer & Singer 2001)
//     ||grad||_F = ||a_i|| * ||u||, ||a_i|| = sqrt((r_i ||x_i||)^2 + s^2)
//     f_i = c / max(||grad||_F, c)     (= min(1, c/||grad||), 1 for a zero
//                                       gradient; no clipping when c <= 0)
//     f_i *= w_i                       (sample weight, if any)
//     out += f_i * a_i u^T
// Arithmetic: every product and sum is in double.  For float data and
// weights, the product of two floats is exact in double, so the scores are
// the double-precision sums of exact products; the accumulator is one
// (p x K) double matrix, rounded to T once at the end.  The order of the
// sums is fixed by (n, d, K) and the row order: one thread, and the same bits
// on every call (not across instruction sets: the x86-64-v3 version contracts
// a*b + c into an FMA).
//
// Layout: the K columns are padded to Kp, a multiple of 4, so that the inner
// loops run over whole 4-double vectors; rows are taken four at a time (the
// dense path), so each load of a row of W serves four rows of X and each
// load/store of the accumulator four rank-1 updates.  The row block and its
// scores stay in L1 between the scores and the accumulation.
//
// Memory safety does not rest on the caller: a label outside [0, K), a row
// index outside [0, n) (subsets) and a CSR column outside [0, d) are skipped
// and counted; the wrapper raises on a nonzero count.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "fasterm/codes.hpp"
#include "fasterm/interrupt.hpp"
#include "fasterm/simd.hpp"

#if defined(FASTERM_MCLOSSES_DISPATCH) && defined(FASTERM_MCLOSSES_ISA)
#define FASTERM_MC_CLONES FASTERM_ISA_TARGET(FASTERM_MCLOSSES_ISA) __attribute__((flatten))
#define FASTERM_MC_ISA_BEGIN namespace FASTERM_MCLOSSES_ISA {
#define FASTERM_MC_ISA_END }
#elif defined(FASTERM_MCLOSSES_DISPATCH)
#define FASTERM_MC_CLONES
#define FASTERM_MC_ISA_BEGIN static_assert(false, "multiclass units need FASTERM_MCLOSSES_ISA");
#define FASTERM_MC_ISA_END
#else
#define FASTERM_MC_CLONES
#define FASTERM_MC_ISA_BEGIN
#define FASTERM_MC_ISA_END
#endif

namespace fasterm {
namespace multiclass {

using index_t = std::ptrdiff_t;

// The declared bounds: data_norm X (<= 0: rows as given), the intercept
// column s (<= 0: none), the Frobenius clip c (<= 0: none), sample weights
// (per row of X, or null).
struct McOptions {
    double data_norm;
    double intercept;
    double clip;
    const double* weights = nullptr;
};

// The inputs of one call.  rows: indices of the rows to sum over (m of
// them), or null for all n rows in order.  stop: polled between blocks of
// rows (interrupt.hpp; null: none); when it says stop, the pass ends there
// and the sum is partial (the caller discards it and raises).
struct McProblem {
    const std::int64_t* y;  // class of each row of X, in [0, K)
    const double* norms;    // ||x_i|| (double), or null: computed in the pass
    index_t n, d, K;
    const std::int64_t* rows;
    index_t m;
    Interrupt* stop = nullptr;
};

constexpr index_t kRowBlock = 4;

inline index_t padded(index_t K) { return (K + 3) / 4 * 4; }

// ||x||_2 of a dense row in double (overflow-safe: rescaled by its largest
// entry on the rare path where the sum of squares overflows).
template <class T>
inline double dense_norm(const T* x, index_t d) {
    double ss = 0.0;
    for (index_t j = 0; j < d; ++j) ss += double(x[j]) * double(x[j]);
    if (ss <= std::numeric_limits<double>::max()) return std::sqrt(ss);
    double big = 0.0;
    for (index_t j = 0; j < d; ++j) big = std::max(big, std::fabs(double(x[j])));
    double t = 0.0;
    for (index_t j = 0; j < d; ++j) {
        const double u = double(x[j]) / big;
        t += u * u;
    }
    return big * std::sqrt(t);
}

template <class T, class I>
inline double csr_norm(const I* idx, const T* val, index_t nnz) {
    (void)idx;
    return dense_norm(val, nnz);  // the stored values (duplicates count as stored)
}

// One row's scalar calculus: from its raw scores zr (K of them, W^T x over the
// first d rows of W, unscaled), its norm, label and weight, the K
// coefficients v (of x, already times r_i f_i) and vs (of the intercept
// column: f_i s u).  Returns false when the row contributes nothing.
template <int Kind>
inline bool row_coefficients(const double* zr, const double* Wlast, double xnorm, std::int64_t y, double wt,
                             index_t K, const McOptions& o, double* z, double* v, double* vs,
                             bool prescaled = false) {
    double r = 1.0;
    if (o.data_norm > 0.0 && xnorm > o.data_norm) r = o.data_norm / xnorm;
    const double s = o.intercept > 0.0 ? o.intercept : 0.0;
    const double rz = prescaled ? 1.0 : r;  // zr already holds W^T (r x) (see rescaled_scores)
    for (index_t k = 0; k < K; ++k) z[k] = rz * zr[k] + (Wlast ? s * Wlast[k] : 0.0);
    double unorm2;
    if (Kind == kLogistic) {
        double mx = z[0];
        for (index_t k = 1; k < K; ++k) mx = std::max(mx, z[k]);
        double tot = 0.0;
        for (index_t k = 0; k < K; ++k) {
            z[k] = std::exp(z[k] - mx);
            tot += z[k];
        }
        unorm2 = 0.0;
        for (index_t k = 0; k < K; ++k) {
            z[k] = z[k] / tot - (k == y ? 1.0 : 0.0);
            unorm2 += z[k] * z[k];
        }
    } else {
        index_t j = 0;
        double best = z[0] + (y != 0 ? 1.0 : 0.0);
        for (index_t k = 1; k < K; ++k) {
            const double t = z[k] + (k != y ? 1.0 : 0.0);
            if (t > best) {  // the first maximiser, as numpy's argmax
                best = t;
                j = k;
            }
        }
        if (j == y) return false;
        for (index_t k = 0; k < K; ++k) z[k] = 0.0;
        z[j] = 1.0;
        z[y] = -1.0;
        unorm2 = 2.0;
    }
    const double an = r * xnorm;
    const double anorm = std::sqrt(an * an + s * s);
    const double g = anorm * std::sqrt(unorm2);
    double f = 1.0;
    if (o.clip > 0.0) f = o.clip / std::max(g, o.clip);
    f *= wt;
    if (f == 0.0) return false;
    const double fr = f * r, fs = f * s;
    for (index_t k = 0; k < K; ++k) {
        v[k] = fr * z[k];
        vs[k] = fs * z[k];
    }
    return true;
}

// The rare rows whose unscaled scores W^T x overflow (a row far beyond the
// data norm): the scores of the scaled row r x, recomputed in double, so the
// design row's scores stay finite as they are for the clipped row itself.
// Returns true when it replaced zr (then row_coefficients takes it as
// prescaled).
template <class T>
inline bool rescaled_scores(const T* x, index_t d, const double* Wd, index_t K, index_t Kp, double xnorm,
                            const McOptions& o, double* zr) {
    bool finite = true;
    for (index_t k = 0; k < K; ++k) finite = finite && std::isfinite(zr[k]);
    if (finite || !(o.data_norm > 0.0 && xnorm > o.data_norm)) return false;
    const double r = o.data_norm / xnorm;
    std::fill(zr, zr + Kp, 0.0);
    for (index_t j = 0; j < d; ++j) {
        const double xs = r * double(x[j]);
        for (index_t k = 0; k < Kp; ++k) zr[k] += xs * Wd[j * Kp + k];
    }
    return true;
}

template <class T, class I>
inline bool rescaled_scores_csr(const I* idx, const T* val, index_t nnz, index_t d, const double* Wd, index_t K,
                                index_t Kp, double xnorm, const McOptions& o, double* zr) {
    using U = typename std::make_unsigned<I>::type;
    bool finite = true;
    for (index_t k = 0; k < K; ++k) finite = finite && std::isfinite(zr[k]);
    if (finite || !(o.data_norm > 0.0 && xnorm > o.data_norm)) return false;
    const double r = o.data_norm / xnorm;
    std::fill(zr, zr + Kp, 0.0);
    for (index_t q = 0; q < nnz; ++q) {
        if (!(U(idx[q]) < U(d))) continue;
        const double xs = r * double(val[q]);
        for (index_t k = 0; k < Kp; ++k) zr[k] += xs * Wd[index_t(idx[q]) * Kp + k];
    }
    return true;
}

// Resolve one position of the row list into a row index (or -1 if bad) and
// count what is out of range.
inline index_t row_at(const McProblem& P, index_t t, index_t* bad) {
    const index_t i = P.rows ? index_t(P.rows[t]) : t;
    if (i < 0 || i >= P.n) {
        ++*bad;
        return -1;
    }
    const std::int64_t y = P.y[i];
    if (y < 0 || y >= P.K) {
        ++*bad;
        return -1;
    }
    return i;
}

// The two loops over a block of four rows, as register-blocked micro-kernels
// for K <= 16 (NV = Kp/4 vectors of four doubles per row of W; the
// accumulators stay in registers for the whole pass over the d columns), and
// a plain loop for larger K.  The same products and the same order of the
// sums in every version: per column j, the four rows' terms are added to the
// running score in row order (scores), and acc[j] gets
// ((x0 v0 + x1 v1) + (x2 v2 + x3 v3)) (accumulate).
#if (defined(__GNUC__) || defined(__clang__))
typedef double mvd __attribute__((vector_size(32)));
inline mvd mload(const double* p) { mvd v; std::memcpy(&v, p, sizeof v); return v; }
inline void mstore(double* p, mvd v) { std::memcpy(p, &v, sizeof v); }

template <int NV, class T>
inline void scores_nv(const T* const* xr, const double* Wd, index_t d, double* zr) {
    constexpr index_t Kp = 4 * NV;
    mvd z0[NV], z1[NV], z2[NV], z3[NV];
    for (int v = 0; v < NV; ++v) z0[v] = z1[v] = z2[v] = z3[v] = mvd{0.0, 0.0, 0.0, 0.0};
    const T *p0 = xr[0], *p1 = xr[1], *p2 = xr[2], *p3 = xr[3];
    for (index_t j = 0; j < d; ++j) {
        const double* w = Wd + j * Kp;
        const double x0 = double(p0[j]), x1 = double(p1[j]), x2 = double(p2[j]), x3 = double(p3[j]);
        for (int v = 0; v < NV; ++v) {
            const mvd wv = mload(w + 4 * v);
            z0[v] += x0 * wv;
            z1[v] += x1 * wv;
            z2[v] += x2 * wv;
            z3[v] += x3 * wv;
        }
    }
    for (int v = 0; v < NV; ++v) {
        mstore(zr + 4 * v, z0[v]);
        mstore(zr + Kp + 4 * v, z1[v]);
        mstore(zr + 2 * Kp + 4 * v, z2[v]);
        mstore(zr + 3 * Kp + 4 * v, z3[v]);
    }
}

template <int NV, class T>
inline void accumulate_nv(const T* const* xr, const double* vv, index_t d, double* acc) {
    constexpr index_t Kp = 4 * NV;
    mvd v0[NV], v1[NV], v2[NV], v3[NV];
    for (int v = 0; v < NV; ++v) {
        v0[v] = mload(vv + 4 * v);
        v1[v] = mload(vv + Kp + 4 * v);
        v2[v] = mload(vv + 2 * Kp + 4 * v);
        v3[v] = mload(vv + 3 * Kp + 4 * v);
    }
    const T *p0 = xr[0], *p1 = xr[1], *p2 = xr[2], *p3 = xr[3];
    for (index_t j = 0; j < d; ++j) {
        double* a = acc + j * Kp;
        const double x0 = double(p0[j]), x1 = double(p1[j]), x2 = double(p2[j]), x3 = double(p3[j]);
        for (int v = 0; v < NV; ++v)
            mstore(a + 4 * v, mload(a + 4 * v) + ((x0 * v0[v] + x1 * v1[v]) + (x2 * v2[v] + x3 * v3[v])));
    }
}
#define FASTERM_MC_MICRO 1
#endif

template <class T>
inline void scores(const T* const* xr, const double* Wd, index_t d, index_t Kp, double* zr) {
#ifdef FASTERM_MC_MICRO
    switch (Kp) {
        case 4: return scores_nv<1>(xr, Wd, d, zr);
        case 8: return scores_nv<2>(xr, Wd, d, zr);
        case 12: return scores_nv<3>(xr, Wd, d, zr);
        case 16: return scores_nv<4>(xr, Wd, d, zr);
        default: break;
    }
#endif
    std::fill(zr, zr + kRowBlock * Kp, 0.0);
    for (index_t j = 0; j < d; ++j) {
        const double* w = Wd + j * Kp;
        const double x0 = double(xr[0][j]), x1 = double(xr[1][j]), x2 = double(xr[2][j]), x3 = double(xr[3][j]);
        for (index_t k = 0; k < Kp; ++k) {
            const double wk = w[k];
            zr[k] += x0 * wk;
            zr[Kp + k] += x1 * wk;
            zr[2 * Kp + k] += x2 * wk;
            zr[3 * Kp + k] += x3 * wk;
        }
    }
}

template <class T>
inline void accumulate(const T* const* xr, const double* vv, index_t d, index_t Kp, double* acc) {
#ifdef FASTERM_MC_MICRO
    switch (Kp) {
        case 4: return accumulate_nv<1>(xr, vv, d, acc);
        case 8: return accumulate_nv<2>(xr, vv, d, acc);
        case 12: return accumulate_nv<3>(xr, vv, d, acc);
        case 16: return accumulate_nv<4>(xr, vv, d, acc);
        default: break;
    }
#endif
    const double *v0 = vv, *v1 = vv + Kp, *v2 = vv + 2 * Kp, *v3 = vv + 3 * Kp;
    for (index_t j = 0; j < d; ++j) {
        double* a = acc + j * Kp;
        const double x0 = double(xr[0][j]), x1 = double(xr[1][j]), x2 = double(xr[2][j]), x3 = double(xr[3][j]);
        for (index_t k = 0; k < Kp; ++k) a[k] += ((x0 * v0[k] + x1 * v1[k]) + (x2 * v2[k] + x3 * v3[k]));
    }
}

// The dense kernel: acc (p x Kp, double, zeroed by the caller) += the
// clipped gradients of the listed rows.  Wd: W in double, (p x Kp), padded
// columns zero.  Returns the number of skipped (bad) rows.
template <int Kind, class T>
index_t dense_sum(const T* X, const McProblem& P, const McOptions& o, const double* Wd, double* acc) {
    const index_t d = P.d, K = P.K, Kp = padded(K);
    const double* Wlast = o.intercept > 0.0 ? Wd + d * Kp : nullptr;
    double* acclast = o.intercept > 0.0 ? acc + d * Kp : nullptr;
    index_t bad = 0;
    std::vector<double> buf(std::size_t(kRowBlock * 3 * Kp + 2 * Kp), 0.0);
    double* zr = buf.data();                 // kRowBlock x Kp raw scores
    double* vv = zr + kRowBlock * Kp;        // kRowBlock x Kp coefficients of x
    double* z = vv + kRowBlock * Kp;         // kRowBlock x Kp work
    double* vs = z + kRowBlock * Kp;         // Kp
    double* vsum = vs + Kp;                  // Kp: the intercept row's update of a block
    const T* xr[kRowBlock];
    index_t rid[kRowBlock];
    index_t t = 0;
    while (t < P.m) {
        // Up to four good rows.
        index_t nb = 0;
        while (nb < kRowBlock && t < P.m) {
            const index_t i = row_at(P, t++, &bad);
            if (i < 0) continue;
            rid[nb] = i;
            xr[nb] = X + i * d;
            ++nb;
        }
        if (nb == 0) break;
        if (P.stop && P.stop->stop(nb * d * Kp)) break;
        for (index_t b = nb; b < kRowBlock; ++b) xr[b] = xr[0];  // padding rows: computed, unused
        // Scores: zr[b] = W[:d]^T x_b.
        scores(xr, Wd, d, Kp, zr);
        // Per-row calculus; rows contributing nothing get v = 0.
        std::fill(vv, vv + kRowBlock * Kp, 0.0);
        std::fill(vsum, vsum + Kp, 0.0);
        bool any = false;
        for (index_t b = 0; b < nb; ++b) {
            const index_t i = rid[b];
            const double xn = P.norms ? P.norms[i] : dense_norm(xr[b], d);
            const double wt = o.weights ? o.weights[i] : 1.0;
            const bool pre = rescaled_scores(xr[b], d, Wd, K, Kp, xn, o, zr + b * Kp);
            if (row_coefficients<Kind>(zr + b * Kp, Wlast, xn, P.y[i], wt, K, o, z + b * Kp, vv + b * Kp, vs, pre)) {
                any = true;
                for (index_t k = 0; k < K; ++k) vsum[k] += vs[k];
            }
        }
        if (!any) continue;
        // Accumulate: acc[j] += sum_b x_bj v_b.
        accumulate(xr, vv, d, Kp, acc);
        if (acclast)
            for (index_t k = 0; k < K; ++k) acclast[k] += vsum[k];
    }
    return bad;
}

// The CSR row's scores and accumulation (stored values in storage order; a
// column outside [0, d) is skipped, and counted once, by the scores), with
// the accumulators in registers for K <= 16 as the dense micro-kernels.
template <class I>
inline bool column_ok(I j, index_t d) {
    using U = typename std::make_unsigned<I>::type;
    return U(j) < U(d);  // negative columns wrap to huge values
}

#ifdef FASTERM_MC_MICRO
template <int NV, class T, class I>
inline void csr_scores_nv(const I* idx, const T* val, index_t nnz, const double* Wd, index_t d, double* zr,
                          index_t* bad) {
    constexpr index_t Kp = 4 * NV;
    mvd z[NV];
    for (int v = 0; v < NV; ++v) z[v] = mvd{0.0, 0.0, 0.0, 0.0};
    for (index_t q = 0; q < nnz; ++q) {
        const I j = idx[q];
        if (!column_ok(j, d)) {
            ++*bad;
            continue;
        }
        const double x = double(val[q]);
        const double* w = Wd + index_t(j) * Kp;
        for (int v = 0; v < NV; ++v) z[v] += x * mload(w + 4 * v);
    }
    for (int v = 0; v < NV; ++v) mstore(zr + 4 * v, z[v]);
}

template <int NV, class T, class I>
inline void csr_accumulate_nv(const I* idx, const T* val, index_t nnz, const double* vv, index_t d, double* acc) {
    constexpr index_t Kp = 4 * NV;
    mvd c[NV];
    for (int v = 0; v < NV; ++v) c[v] = mload(vv + 4 * v);
    for (index_t q = 0; q < nnz; ++q) {
        const I j = idx[q];
        if (!column_ok(j, d)) continue;
        const double x = double(val[q]);
        double* a = acc + index_t(j) * Kp;
        for (int v = 0; v < NV; ++v) mstore(a + 4 * v, mload(a + 4 * v) + x * c[v]);
    }
}
#endif

template <class T, class I>
inline void csr_scores(const I* idx, const T* val, index_t nnz, const double* Wd, index_t d, index_t Kp,
                       double* zr, index_t* bad) {
#ifdef FASTERM_MC_MICRO
    switch (Kp) {
        case 4: return csr_scores_nv<1>(idx, val, nnz, Wd, d, zr, bad);
        case 8: return csr_scores_nv<2>(idx, val, nnz, Wd, d, zr, bad);
        case 12: return csr_scores_nv<3>(idx, val, nnz, Wd, d, zr, bad);
        case 16: return csr_scores_nv<4>(idx, val, nnz, Wd, d, zr, bad);
        default: break;
    }
#endif
    std::fill(zr, zr + Kp, 0.0);
    for (index_t q = 0; q < nnz; ++q) {
        const I j = idx[q];
        if (!column_ok(j, d)) {
            ++*bad;
            continue;
        }
        const double x = double(val[q]);
        const double* w = Wd + index_t(j) * Kp;
        for (index_t k = 0; k < Kp; ++k) zr[k] += x * w[k];
    }
}

template <class T, class I>
inline void csr_accumulate(const I* idx, const T* val, index_t nnz, const double* v, index_t d, index_t Kp,
                           double* acc) {
#ifdef FASTERM_MC_MICRO
    switch (Kp) {
        case 4: return csr_accumulate_nv<1>(idx, val, nnz, v, d, acc);
        case 8: return csr_accumulate_nv<2>(idx, val, nnz, v, d, acc);
        case 12: return csr_accumulate_nv<3>(idx, val, nnz, v, d, acc);
        case 16: return csr_accumulate_nv<4>(idx, val, nnz, v, d, acc);
        default: break;
    }
#endif
    for (index_t q = 0; q < nnz; ++q) {
        const I j = idx[q];
        if (!column_ok(j, d)) continue;
        const double x = double(val[q]);
        double* a = acc + index_t(j) * Kp;
        for (index_t k = 0; k < Kp; ++k) a[k] += x * v[k];
    }
}

// The CSR kernel, one row at a time (scatter-gather over the stored values).
template <int Kind, class T, class I>
index_t csr_sum(const I* indptr, const I* indices, const T* data, const McProblem& P, const McOptions& o,
                const double* Wd, double* acc) {
    const index_t d = P.d, K = P.K, Kp = padded(K);
    const double* Wlast = o.intercept > 0.0 ? Wd + d * Kp : nullptr;
    double* acclast = o.intercept > 0.0 ? acc + d * Kp : nullptr;
    index_t bad = 0;
    std::vector<double> buf(std::size_t(4 * Kp), 0.0);
    double* zr = buf.data();
    double* z = zr + Kp;
    double* v = z + Kp;
    double* vs = v + Kp;
    for (index_t t = 0; t < P.m; ++t) {
        const index_t i = row_at(P, t, &bad);
        if (i < 0) continue;
        const index_t a = index_t(indptr[i]), nnz = index_t(indptr[i + 1]) - a;
        const I* idx = indices + a;
        const T* val = data + a;
        csr_scores(idx, val, nnz, Wd, d, Kp, zr, &bad);
        const double xn = P.norms ? P.norms[i] : csr_norm(idx, val, nnz);
        const double wt = o.weights ? o.weights[i] : 1.0;
        std::fill(v, v + Kp, 0.0);
        const bool pre = rescaled_scores_csr(idx, val, nnz, d, Wd, K, Kp, xn, o, zr);
        if (P.stop && P.stop->stop((nnz + 1) * Kp)) break;
        if (!row_coefficients<Kind>(zr, Wlast, xn, P.y[i], wt, K, o, z, v, vs, pre)) continue;
        csr_accumulate(idx, val, nnz, v, d, Kp, acc);
        if (acclast)
            for (index_t k = 0; k < K; ++k) acclast[k] += vs[k];
    }
    return bad;
}

// Entry points, one per (loss, dtype, layout) and instruction set (the units
// multiclass_f32.cpp / multiclass_f64.cpp define them; CMakeLists.txt
// compiles each twice, x86-64-v3 and baseline, as the _losses units).
#define FASTERM_MC_DENSE_ENTRY(T)                                                                   \
    index_t dense_entry(int kind, const T* X, const McProblem& P, const McOptions& o, const double* Wd, \
                        double* acc)
#define FASTERM_MC_CSR_ENTRY(T, I)                                                                  \
    index_t csr_entry(int kind, const I* indptr, const I* indices, const T* data, const McProblem& P,  \
                      const McOptions& o, const double* Wd, double* acc)

#define FASTERM_MC_DEFINE_ENTRY_POINTS(T)                                                          \
    FASTERM_MC_ISA_BEGIN                                                                            \
    FASTERM_MC_CLONES FASTERM_MC_DENSE_ENTRY(T) {                                                   \
        return kind == kLogistic ? dense_sum<kLogistic>(X, P, o, Wd, acc)                          \
                                 : dense_sum<kHinge>(X, P, o, Wd, acc);                            \
    }                                                                                               \
    FASTERM_MC_CLONES FASTERM_MC_CSR_ENTRY(T, std::int32_t) {                                       \
        return kind == kLogistic ? csr_sum<kLogistic>(indptr, indices, data, P, o, Wd, acc)        \
                                 : csr_sum<kHinge>(indptr, indices, data, P, o, Wd, acc);          \
    }                                                                                               \
    FASTERM_MC_CLONES FASTERM_MC_CSR_ENTRY(T, std::int64_t) {                                       \
        return kind == kLogistic ? csr_sum<kLogistic>(indptr, indices, data, P, o, Wd, acc)        \
                                 : csr_sum<kHinge>(indptr, indices, data, P, o, Wd, acc);          \
    }                                                                                               \
    FASTERM_MC_ISA_END

#define FASTERM_MC_DECLARE_ALL(T, attr)             \
    attr FASTERM_MC_DENSE_ENTRY(T);                 \
    attr FASTERM_MC_CSR_ENTRY(T, std::int32_t);     \
    attr FASTERM_MC_CSR_ENTRY(T, std::int64_t);
#if defined(FASTERM_MCLOSSES_DISPATCH)
namespace v3 {
FASTERM_MC_DECLARE_ALL(double, FASTERM_ISA_TARGET(v3))
FASTERM_MC_DECLARE_ALL(float, FASTERM_ISA_TARGET(v3))
}  // namespace v3
namespace baseline {
FASTERM_MC_DECLARE_ALL(double, )
FASTERM_MC_DECLARE_ALL(float, )
}  // namespace baseline
template <class... A>
inline index_t dense_entry(const A&... a) {
    return FASTERM_ISA_USE(v3) ? v3::dense_entry(a...) : baseline::dense_entry(a...);
}
template <class... A>
inline index_t csr_entry(const A&... a) {
    return FASTERM_ISA_USE(v3) ? v3::csr_entry(a...) : baseline::csr_entry(a...);
}
#else
FASTERM_MC_DECLARE_ALL(double, )
FASTERM_MC_DECLARE_ALL(float, )
#endif
#undef FASTERM_MC_DECLARE_ALL

// W (p x K, T) into the padded double matrix Wd (p x Kp; its padding columns are left as they
// are: zero from the caller).
template <class T>
inline void widen_into(const T* W, index_t p, index_t K, double* Wd) {
    const index_t Kp = padded(K);
    for (index_t j = 0; j < p; ++j)
        for (index_t k = 0; k < K; ++k) Wd[j * Kp + k] = double(W[j * K + k]);
}

template <class T>
inline void narrow_into(const double* acc, index_t p, index_t K, T* out) {
    const index_t Kp = padded(K);
    for (index_t j = 0; j < p; ++j)
        for (index_t k = 0; k < K; ++k) out[j * K + k] = T(acc[j * Kp + k]);
}

// out (p x K) = the sum over the listed rows of the clipped per-example
// gradients (the header's comment), with the caller's double buffers Wd and
// acc (p x Kp each, Kp = padded(K); Wd's padding columns zero): what
// grad_sum / csr_grad_sum compute, for the step loops of _mclosses, which
// allocate them once per run.  Returns the number of skipped entries.
template <class T>
index_t grad_sum_into(int kind, const T* X, const McProblem& P, const McOptions& o, const T* W, T* out,
                      double* Wd, double* acc) {
    const index_t p = P.d + (o.intercept > 0.0 ? 1 : 0);
    widen_into(W, p, P.K, Wd);
    std::fill(acc, acc + p * padded(P.K), 0.0);
    const index_t bad = dense_entry(kind, X, P, o, Wd, acc);
    narrow_into(acc, p, P.K, out);
    return bad;
}

template <class T, class I>
index_t csr_grad_sum_into(int kind, const I* indptr, const I* indices, const T* data, const McProblem& P,
                          const McOptions& o, const T* W, T* out, double* Wd, double* acc) {
    const index_t p = P.d + (o.intercept > 0.0 ? 1 : 0);
    widen_into(W, p, P.K, Wd);
    std::fill(acc, acc + p * padded(P.K), 0.0);
    const index_t bad = csr_entry(kind, indptr, indices, data, P, o, Wd, acc);
    narrow_into(acc, p, P.K, out);
    return bad;
}

// out (p x K) = the sum over the listed rows of the clipped per-example
// gradients (the header's comment).  Returns the number of skipped entries
// (bad labels, row indices or columns).  Inputs: X n x d row-major; W and
// out p x K row-major with p = d + (intercept > 0).  May throw bad_alloc.
template <class T>
index_t grad_sum(int kind, const T* X, const McProblem& P, const McOptions& o, const T* W, T* out) {
    const index_t p = P.d + (o.intercept > 0.0 ? 1 : 0);
    std::vector<double> Wd(std::size_t(p * padded(P.K)), 0.0), acc(Wd.size());
    return grad_sum_into(kind, X, P, o, W, out, Wd.data(), acc.data());
}

template <class T, class I>
index_t csr_grad_sum(int kind, const I* indptr, const I* indices, const T* data, const McProblem& P,
                     const McOptions& o, const T* W, T* out) {
    const index_t p = P.d + (o.intercept > 0.0 ? 1 : 0);
    std::vector<double> Wd(std::size_t(p * padded(P.K)), 0.0), acc(Wd.size());
    return csr_grad_sum_into(kind, indptr, indices, data, P, o, W, out, Wd.data(), acc.data());
}

}  // namespace multiclass
}  // namespace fasterm
