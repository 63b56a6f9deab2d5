// Exact discrete samplers in unsigned integer arithmetic (Canonne, Kamath &
// Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, §5).
//
// The compiled twin of fasterm/mechanisms/_exact.py: the same three algorithms, with every
// probability a ratio of integers compared against an exact uniform integer.
// No floating-point operation touches a sample.
//
// Overflow safety: products that can exceed 64 bits (b·k in the alternating
// series, u + n·v and the squared offset of the Gaussian's acceptance test) are
// formed in unsigned __int128.  The callers guarantee n, s < 2^62 (Laplace) and
// t·m < 2^62 (Gaussian); then every 128-bit quantity below stays < 2^126.  The
// series index k and the geometric count v are 64-bit counters that could only
// wrap after 2^64 loop iterations, which no run can perform.
#pragma once

#include <cstdint>

#include "numpy/random/bitgen.h"

namespace fasterm {
namespace discrete {

using u64 = std::uint64_t;
using i64 = std::int64_t;
using u128 = unsigned __int128;

// Uniform on {0, ..., m-1}, 1 <= m < 2^64: Lemire's multiply-shift with the
// rejection step that makes it exact ("Fast random integer generation in an
// interval", ACM TOMACS 2019).
inline u64 below64(bitgen_t* rng, u64 m) {
    u64 x = rng->next_uint64(rng->state);
    u128 p = static_cast<u128>(x) * m;
    u64 lo = static_cast<u64>(p);
    if (lo < m) {
        const u64 threshold = (0 - m) % m;  // 2^64 mod m
        while (lo < threshold) {
            x = rng->next_uint64(rng->state);
            p = static_cast<u128>(x) * m;
            lo = static_cast<u64>(p);
        }
    }
    return static_cast<u64>(p >> 64);
}

// Uniform on {0, ..., m-1} for 1 <= m < 2^127: masked rejection on 128 bits.
inline u128 below128(bitgen_t* rng, u128 m) {
    if ((m >> 64) == 0) return below64(rng, static_cast<u64>(m));
    const u64 hi_max = static_cast<u64>((m - 1) >> 64);
    u64 mask = hi_max;
    mask |= mask >> 1; mask |= mask >> 2; mask |= mask >> 4;
    mask |= mask >> 8; mask |= mask >> 16; mask |= mask >> 32;
    for (;;) {
        const u64 hi = rng->next_uint64(rng->state) & mask;
        const u64 lo = rng->next_uint64(rng->state);
        const u128 v = (static_cast<u128>(hi) << 64) | lo;
        if (v < m) return v;
    }
}

// Bernoulli(exp(-a/b)) for 0 <= a <= b, b >= 1: A_k ~ Bernoulli(a/(b k)) until
// the first failure at K; the result is [K odd] (P[K > k] = (a/b)^k / k!).
inline bool bern_exp_frac(bitgen_t* rng, u128 a, u128 b) {
    u64 k = 1;
    while (below128(rng, b * k) < a) ++k;
    return (k & 1) == 1;
}

// Bernoulli(exp(-a/b)) for any a >= 0, 1 <= b < 2^64: floor(a/b) trials of
// Bernoulli(e^-1) (all must succeed), then Bernoulli(exp(-(a mod b)/b)).
inline bool bern_exp(bitgen_t* rng, u128 a, u64 b) {
    u128 q = a / b;
    const u128 r = a % b;
    for (; q > 0; --q)
        if (!bern_exp_frac(rng, 1, 1)) return false;
    return bern_exp_frac(rng, r, b);
}

constexpr u64 kClamp = (u64{1} << 62) - 1;

// P[Z = z] ∝ exp(-|z| s / n), 1 <= n, s < 2^62.  Draws beyond ±(2^62 - 1)
// (probability < exp(-2^62 s/n)) are clamped to it.
inline i64 laplace(bitgen_t* rng, u64 n, u64 s) {
    for (;;) {
        const u64 u = below64(rng, n);
        if (!bern_exp_frac(rng, u, n)) continue;
        u64 v = 0;
        while (bern_exp_frac(rng, 1, 1)) ++v;
        const u128 x = static_cast<u128>(u) + static_cast<u128>(n) * v;
        const u128 y128 = x / s;
        const u64 y = y128 > kClamp ? kClamp : static_cast<u64>(y128);
        const bool negative = below64(rng, 2) == 1;
        if (negative && y == 0) continue;  // 0 would otherwise be counted twice
        return negative ? -static_cast<i64>(y) : static_cast<i64>(y);
    }
}

// P[Z = z] ∝ exp(-z^2 / (2 t m)): rejection from laplace(t, 1) with acceptance
// exp(-(|y| - m)^2 / (2 t m)).  1 <= t, m and t m < 2^62.
inline i64 gaussian(bitgen_t* rng, u64 t, u64 m) {
    const u64 den = 2 * t * m;
    for (;;) {
        const i64 y = laplace(rng, t, 1);
        const u64 ay = y < 0 ? static_cast<u64>(-y) : static_cast<u64>(y);
        const u64 diff = ay > m ? ay - m : m - ay;
        if (bern_exp(rng, static_cast<u128>(diff) * diff, den)) return y;
    }
}

inline void laplace_fill(bitgen_t* rng, i64* out, std::int64_t count, u64 n, u64 s) {
    for (std::int64_t i = 0; i < count; ++i) out[i] = laplace(rng, n, s);
}

inline void gaussian_fill(bitgen_t* rng, i64* out, std::int64_t count, u64 t, u64 m) {
    for (std::int64_t i = 0; i < count; ++i) out[i] = gaussian(rng, t, m);
}

inline void bernoulli_exp_fill(bitgen_t* rng, std::uint8_t* out, std::int64_t count, u64 a, u64 b) {
    for (std::int64_t i = 0; i < count; ++i) out[i] = bern_exp(rng, a, b) ? 1 : 0;
}

// The exponential mechanism on integer scores, exactly: index i in {0..m-1}
// with probability proportional to exp(-(a/b) d_i), d_i >= 0 (the caller
// subtracts the smallest score, so some d_i = 0 and every weight is <= 1).
// Rejection: propose i uniformly (exact), accept with Bernoulli(exp(-a d_i/b)).
// An accepted index has exactly the target law; each proposal is accepted with
// probability sum_i w_i / m >= 1/m.  A tiny weight costs O(1) expected work:
// bern_exp stops at the first failed Bernoulli(e^-1) trial.
// Bounds (checked by the caller): m >= 1, 0 <= d_i < 2^63, 1 <= a, b < 2^64;
// a d_i < 2^127 fits the 128-bit numerator of bern_exp.
inline i64 expmech_index(bitgen_t* rng, const i64* d, i64 m, u64 a, u64 b) {
    for (;;) {
        const u64 i = below64(rng, static_cast<u64>(m));
        if (bern_exp(rng, static_cast<u128>(a) * static_cast<u64>(d[i]), b)) return static_cast<i64>(i);
    }
}

inline void expmech_fill(bitgen_t* rng, const i64* d, i64 m, u64 a, u64 b, i64* out, std::int64_t count) {
    for (std::int64_t j = 0; j < count; ++j) out[j] = expmech_index(rng, d, m, a, b);
}

}  // namespace discrete
}  // namespace fasterm
