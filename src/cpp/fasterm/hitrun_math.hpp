// Hit-and-run (hitrun.hpp), its arithmetic: the logistic loss's pieces
// (log1p, sigmoid) branch-free, and the row dot products, each in a fixed
// order of operations, so that every instruction-set version of the chain gives
// the same bits.  Header-only, no Python.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fasterm/simd.hpp"

namespace fasterm {
namespace hitrun {

using index_t = std::ptrdiff_t;
using simd::bits_to_double;
using simd::block_sum;
using simd::double_to_bits;
using simd::exp_nonpos;

// Rows per block of the line passes: per-row values are written to buffers of
// this size by loops the compiler vectorises, then summed in a fixed order.
constexpr index_t kRows = 256;

// ---------------------------------------------------------------------------
// log(1 + e) for 0 <= e <= 1, branch-free: fdlibm's e_log.c with its range
// reduction 1 + e = 2^j (1 + f), |f| <= sqrt(2) - 1, and its minimax
// polynomial in s = f / (2 + f) (error below 1 ulp).
// ---------------------------------------------------------------------------
FASTERM_ALWAYS_INLINE double log1p_unit(double e) noexcept
{
    constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    constexpr double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                     Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                     Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                     Lg7 = 1.479819860511658591e-01;
    const bool big = e > 0.41421356237309503;  // 1 + e > sqrt(2): halve it
    const double f = big ? 0.5 * (e - 1.0) : e;
    const double dk = big ? 1.0 : 0.0;
    const double s = f / (2.0 + f);
    const double z = s * s, w = z * z;
    const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
    const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
    const double R = t2 + t1;
    const double hfsq = 0.5 * f * f;
    return dk * ln2_hi - ((hfsq - (s * (hfsq + R) + dk * ln2_lo)) - f);
}

// sigmoid(-m) = 1 / (1 + e^m), branch-free, with one division: e^{-|m|} =
// 2^k (Q + rP) / (Q - rP) with m = k ln2 + r, |r| <= ln2 / 2 (Cody-Waite), the
// Pade form and coefficients of Cephes' exp (relative error ~1e-16), and the
// sigmoid's own division merged with the Pade quotient.  For |m| > 708,
// 2^k would be subnormal: the result is then 0 or 1, the exact value to
// within 1e-307.
// sigmoid(-m) = p / q, without the division (p, q in [0, 5] and [1.5, 5]).
FASTERM_ALWAYS_INLINE void sigmoid_neg_fraction(double m, double& p, double& q) noexcept
{
    constexpr double P0 = 1.26177193074810590878e-4, P1 = 3.02994407707441961300e-2,
                     P2 = 9.99999999999999999910e-1;
    constexpr double Q0 = 3.00198505138664455042e-6, Q1 = 2.52448340349684104192e-3,
                     Q2 = 2.27265548208155028766e-1, Q3 = 2.00000000000000000009e0;
    const double x = -std::fabs(m);
    const bool under = !(x > -708.0);
    const double xc = under ? 0.0 : x;
    double shifted;
    const double r = simd::exp_reduce(xc, shifted);
    const double rr = r * r;
    const double px = r * ((P0 * rr + P1) * rr + P2);
    const double qx = ((Q0 * rr + Q1) * rr + Q2) * rr + Q3;
    const double s = under ? 0.0 : bits_to_double(simd::exp2_bits(double_to_bits(shifted)));
    const double num = s * (qx + px);  // e^{-|m|} * (qx - px)
    const double den = qx - px;
    p = m >= 0.0 ? num : den;
    q = num + den;
}

FASTERM_ALWAYS_INLINE double sigmoid_neg(double m) noexcept
{
    double p, q;
    sigmoid_neg_fraction(m, p, q);
    return p / q;
}

// sum_i w_i sigmoid(-m_i) for cnt <= kRows rows with one division per four
// rows: the fractions w p / q of rows i, i + h, i + 2h, i + 3h (h = cnt / 4)
// are added as ((a d + c b) f h' + (e h' + g f) b d) / (b d f h'); every q is
// in [1.5, 5], so nothing over- or underflows.  The divider, not the
// arithmetic, limits this loop otherwise.
FASTERM_ALWAYS_INLINE double weighted_sigmoid_sum(const double* w, const double* m, index_t cnt) noexcept
{
    double pv[kRows], qv[kRows], rv[kRows / 4];
    for (index_t i = 0; i < cnt; ++i) {
        double p, q;
        sigmoid_neg_fraction(m[i], p, q);
        pv[i] = w[i] * p;
        qv[i] = q;
    }
    const index_t h = cnt / 4;
    for (index_t i = 0; i < h; ++i) {
        const double n1 = pv[i] * qv[i + h] + pv[i + h] * qv[i];
        const double d1 = qv[i] * qv[i + h];
        const double n2 = pv[i + 2 * h] * qv[i + 3 * h] + pv[i + 3 * h] * qv[i + 2 * h];
        const double d2 = qv[i + 2 * h] * qv[i + 3 * h];
        rv[i] = (n1 * d2 + n2 * d1) / (d1 * d2);
    }
    double sum = block_sum(rv, h);
    for (index_t i = 4 * h; i < cnt; ++i) sum += pv[i] / qv[i];
    return sum;
}

// softplus(-m) = log(1 + e^{-m}) and its derivative pieces, for a block.
// val = log1p(e^{-|m|}) + max(-m, 0); sig = sigmoid(-m); e r^2 = s(m) s(-m).
FASTERM_ALWAYS_INLINE void logistic_row(double m, double& val, double& sig, double& curv) noexcept
{
    double e, em1;
    exp_nonpos(-std::fabs(m), e, em1);
    const double r = 1.0 / (1.0 + e);
    sig = m >= 0.0 ? e * r : r;
    val = log1p_unit(e) + (m < 0.0 ? -m : 0.0);
    curv = e * r * r;
}

// ---------------------------------------------------------------------------
// Row dot products c_i = <x_i, u> in double (float data are widened before the
// products), four rows at a time with four lanes over the columns: a fixed
// order of operations, so every instruction-set version gives the same bits.
// (The four lane sums of four rows are added as one transposed vector.)
// ---------------------------------------------------------------------------
#if defined(__GNUC__) || defined(__clang__)
typedef simd::Vec<double, 4>::type v4d;

template <class T>
FASTERM_ALWAYS_INLINE v4d load4(const T* p) noexcept
{
    if constexpr (sizeof(T) == sizeof(double)) {
        v4d v;
        std::memcpy(&v, p, sizeof v);
        return v;
    } else {
        typedef float v4f __attribute__((vector_size(16)));
        v4f f;
        std::memcpy(&f, p, sizeof f);
        return __builtin_convertvector(f, v4d);
    }
}

#if defined(__clang__)
#define FASTERM_SHUFFLE2(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
typedef long long v4i __attribute__((vector_size(32)));
#define FASTERM_SHUFFLE2(a, b, i, j, k, l) __builtin_shuffle(a, b, v4i{i, j, k, l})
#endif

// {sum s0, sum s1, sum s2, sum s3}, each as (v[0] + v[1]) + (v[2] + v[3]).
FASTERM_ALWAYS_INLINE v4d hsum4(v4d s0, v4d s1, v4d s2, v4d s3) noexcept
{
    const v4d a = FASTERM_SHUFFLE2(s0, s1, 0, 4, 2, 6) + FASTERM_SHUFFLE2(s0, s1, 1, 5, 3, 7);
    const v4d b = FASTERM_SHUFFLE2(s2, s3, 0, 4, 2, 6) + FASTERM_SHUFFLE2(s2, s3, 1, 5, 3, 7);
    return FASTERM_SHUFFLE2(a, b, 0, 1, 4, 5) + FASTERM_SHUFFLE2(a, b, 2, 3, 6, 7);
}

template <class T>
FASTERM_ALWAYS_INLINE void row_dots(const T* X, index_t n, index_t d, const double* u, double* out) noexcept
{
    const index_t dv = d - d % 4;
    // Columns dv..d-1 (fewer than 4): one 4-wide load ending at the row's end,
    // against u with zeros in the lanes that overlap columns already summed.
    const bool tail = dv < d && d >= 4;
    v4d ut = {0, 0, 0, 0};
    for (index_t l = 0; tail && l < 4; ++l) ut[l] = d - 4 + l >= dv ? u[d - 4 + l] : 0.0;
    index_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const T* x0 = X + i * d;
        const T* x1 = x0 + d;
        const T* x2 = x1 + d;
        const T* x3 = x2 + d;
        v4d s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
        for (index_t j = 0; j < dv; j += 4) {
            v4d uj;
            std::memcpy(&uj, u + j, sizeof uj);
            s0 += load4(x0 + j) * uj;
            s1 += load4(x1 + j) * uj;
            s2 += load4(x2 + j) * uj;
            s3 += load4(x3 + j) * uj;
        }
        if (tail) {
            s0 += load4(x0 + d - 4) * ut;
            s1 += load4(x1 + d - 4) * ut;
            s2 += load4(x2 + d - 4) * ut;
            s3 += load4(x3 + d - 4) * ut;
        }
        v4d t = hsum4(s0, s1, s2, s3);
        if (d < 4) {
            for (index_t j = 0; j < d; ++j) {
                const v4d col = {double(x0[j]), double(x1[j]), double(x2[j]), double(x3[j])};
                t += col * u[j];
            }
        }
        std::memcpy(out + i, &t, sizeof t);
    }
    for (; i < n; ++i) {
        const T* x = X + i * d;
        v4d s = {0, 0, 0, 0};
        for (index_t j = 0; j < dv; j += 4) {
            v4d uj;
            std::memcpy(&uj, u + j, sizeof uj);
            s += load4(x + j) * uj;
        }
        if (tail) s += load4(x + d - 4) * ut;
        double t = (s[0] + s[1]) + (s[2] + s[3]);
        if (d < 4)
            for (index_t j = 0; j < d; ++j) t += double(x[j]) * u[j];
        out[i] = t;
    }
}
#else
template <class T>
inline void row_dots(const T* X, index_t n, index_t d, const double* u, double* out) noexcept
{
    for (index_t i = 0; i < n; ++i) {
        const T* x = X + i * d;
        double s[4] = {0.0, 0.0, 0.0, 0.0};
        index_t j = 0;
        for (; j + 4 <= d; j += 4)
            for (int l = 0; l < 4; ++l) s[l] += double(x[j + l]) * u[j + l];
        double t = (s[0] + s[1]) + (s[2] + s[3]);
        for (; j < d; ++j) t += double(x[j]) * u[j];
        out[i] = t;
    }
}
#endif

}  // namespace hitrun
}  // namespace fasterm
