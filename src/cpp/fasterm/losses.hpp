// Losses of linear models, l(w; x, y) = phi(<w, x>, y): value sum, per-example
// gradients, row norms and the fused per-example-clipped gradient sum.
//
// Header-only, no Python.h.  X is a row-major n x d array of float or double.
// Vector arithmetic runs in the data's precision; sums over more than 64 rows
// (or 256 columns), the per-row scalar calculus and the row norms are in
// double.
//
// Determinism: rows are split into chunks whose boundaries depend only on
// (n, d, sizeof(T)); each chunk writes its own partial sum and the partials
// are added in chunk order.  Results are bit-for-bit the same for any number
// of threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "fasterm/codes.hpp"
#include "fasterm/simd.hpp"

// An x86-64-v3 (AVX2 + FMA) version of the hot loops and the baseline (SSE2),
// chosen once at run time, each with flatten: every loss and loop inlined
// into it.  ("arch=haswell" would dispatch on the CPU *model*, not its
// features, and never fire on newer CPUs; "avx2" alone leaves out FMA.)
// Why both: docs/building.rst, "Build cost".
//
// FASTERM_LOSSES_DISPATCH (CMakeLists.txt, GCC on x86-64): each loss unit
// (losses_*.cpp) is compiled twice, with FASTERM_LOSSES_ISA = v3 and
// = baseline, into entry points of namespaces v3:: and baseline::, and the
// entry points below pick one per call with the test GCC's target_clones
// resolver makes for "arch=x86-64-v3" (simd.hpp's per-call dispatch).  Not
// target_clones: that compiles every version at the unit's -O3, and the
// baseline costs as much to compile as the x86-64-v3 version; in a unit of
// its own it is compiled at -O1 (the same bits: no FMA to contract, no
// reassociation at any level).  Without FASTERM_LOSSES_DISPATCH one baseline
// version is built.
#if defined(FASTERM_LOSSES_DISPATCH) && defined(FASTERM_LOSSES_ISA)
#define FASTERM_LOSSES_CLONES FASTERM_ISA_TARGET(FASTERM_LOSSES_ISA) __attribute__((flatten))
#define FASTERM_LOSSES_ISA_BEGIN namespace FASTERM_LOSSES_ISA {
#define FASTERM_LOSSES_ISA_END }
#elif defined(FASTERM_LOSSES_DISPATCH)  // a unit outside the two object libraries
#define FASTERM_LOSSES_CLONES
#define FASTERM_LOSSES_ISA_BEGIN static_assert(false, "loss units need FASTERM_LOSSES_ISA");
#define FASTERM_LOSSES_ISA_END
#else
#define FASTERM_LOSSES_CLONES
#define FASTERM_LOSSES_ISA_BEGIN
#define FASTERM_LOSSES_ISA_END
#endif

// Two steps per iteration halve the loop overhead of the short row loops.
#if defined(__GNUC__) && !defined(__clang__)
#define FASTERM_UNROLL2 _Pragma("GCC unroll 2")
#elif defined(__clang__)
#define FASTERM_UNROLL2 _Pragma("unroll 2")
#else
#define FASTERM_UNROLL2
#endif

namespace fasterm {
namespace losses {

using index_t = std::ptrdiff_t;

// Loss kinds (kLogistic, ...): fasterm/codes.hpp.

// Work plan: blocks of rows small enough to stay in L1 between their dot
// products and their accumulation; chunks of blocks as the unit of parallel
// work and of partial sums (see make_plan).
// 4 KiB: 4 rows of 100 doubles, 8 of 100 floats (why: docs/performance.rst,
// "The constants of losses.hpp, measured").
constexpr index_t kBlockBytes = 4 * 1024;
constexpr index_t kMaxBlock = 64;
constexpr index_t kChunkBytes = 1024 * 1024;   // less work than this does not pay a thread
constexpr index_t kMaxChunks = 64;
constexpr index_t kPartialBudget = 1 << 22;    // doubles in all partial sums (32 MiB)
// Up to this size X counts as cache resident (Options::hot): cached norms are
// read instead of recomputed (why this size: docs/performance.rst).
constexpr index_t kHotBytes = index_t(16) << 20;

// Caller-declared bounds.  data_norm <= 0: rows are not rescaled; clip <= 0:
// no per-example clipping; label_bound = inf: labels are not clipped.
// weights: per-row multipliers of the (clipped) gradients (sample weights,
// indexed like y and the norms), or null: unweighted.  Applied to each row's
// coefficient after the clip (weigh() below), so weights of 1 give the
// unweighted bits.
struct Options {
    double data_norm;
    double clip;
    double label_bound;
    const double* weights = nullptr;
    // Set by the entry points (callers leave it): X is small enough to stay
    // in cache from one call to the next (kHotBytes), so that cached row
    // norms are read instead of being recomputed in the pass (see
    // grad_sum_range).
    bool hot = false;
};

// GCC/Clang vector extensions; -DFASTERM_NO_VECTOR_EXTENSIONS builds the
// portable path (plain structs and scalar loops) that other compilers get.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(FASTERM_NO_VECTOR_EXTENSIONS)
#define FASTERM_VECTOR_EXTENSIONS 1
#endif
// Lane shuffles between vectors (widening a half vector, summing four
// vectors' lanes at once) need __builtin_shufflevector: GCC 12+ or Clang;
// and, on x86, an empty asm that pins a rounded product (see add_low).
#if defined(FASTERM_VECTOR_EXTENSIONS) && (defined(__clang__) || __GNUC__ >= 12) && \
    (defined(__x86_64__) || defined(__i386__))
#define FASTERM_SHUFFLE 1
#endif

#ifdef FASTERM_VECTOR_EXTENSIONS
// Four doubles, and the 64-bit integers of the same width (comparison masks,
// exponent bits).
typedef simd::Vec<double, 4>::type vd;
typedef long long vi __attribute__((vector_size(32)));
typedef simd::Vec<double, 4>::bits vu;
inline vd vsplat(double a) { return vd{a, a, a, a}; }
inline vd vload(const double* p) { vd v; std::memcpy(&v, p, sizeof v); return v; }
inline void vstore(double* p, vd v) { std::memcpy(p, &v, sizeof v); }
inline vd vabs(vd a) { return a < 0.0 ? -a : a; }

// e^x for x <= 0, four lanes at once (the logistic derivative needs one per
// row), from simd.hpp's pieces: Cody-Waite reduction x = k ln2 + r, e^r by
// its degree-12 Taylor polynomial (truncation error < 2.5e-16 relative), 2^k
// through the exponent bits.  x < -708 is raised to -708 so 2^k stays normal:
// the result is then e^-708 ~ 3.3e-308 instead of something smaller, an
// absolute error below 3.3e-308.  A NaN still comes out NaN (through the
// polynomial).  Tested against numpy.exp to a few ulp.
inline vd vexp_nonpositive(vd x) {
    x = x < -708.0 ? vsplat(-708.0) : x;
    vd shifted;
    const vd r = simd::exp_reduce(x, shifted);
    // Unsigned: the bit arithmetic wraps by definition, whatever the input.
    return simd::exp_taylor<12>(r) * (vd)simd::exp2_bits((vu)shifted);
}
#endif

// ---------------------------------------------------------------------------
// The five losses.  value(z, y) = phi(z, y), deriv(z, y) = d phi / dz, with
// fixed subgradients at the kinks: sign(0) = 0 for the absolute loss, and the
// hinge derivative is 0 at margin exactly 1.  label() maps a raw
// label to the one the loss sees: classification labels become +-1 (y > 0 is
// the positive class, so {0, 1} labels work), regression labels are clipped
// to [-Y, Y].  All scalar, all in double.

struct Logistic {
    static constexpr bool uses_labels = true;
    static double label(double y, double) { return y > 0 ? 1.0 : -1.0; }
    static double value(double z, double y) {
        // log(1 + e^{-m}) = log1p(e^{-|m|}) + max(-m, 0): no overflow for any m.
        const double m = y * z;
        return std::log1p(std::exp(-std::fabs(m))) + std::max(-m, 0.0);
    }
    static double deriv(double z, double y) {
        // -y * sigmoid(-m) through e^{-|m|} <= 1, so nothing overflows.
        const double m = y * z;
        const double e = std::exp(-std::fabs(m));
        return -y * ((m >= 0 ? e : 1.0) / (1.0 + e));
    }
#ifdef FASTERM_VECTOR_EXTENSIONS
    static vd vlabel(vd y, double) { return y > 0.0 ? vsplat(1.0) : vsplat(-1.0); }
    static vd vderiv(vd z, vd y) {
        const vd m = y * z;
        const vd e = vexp_nonpositive(-vabs(m));
        return -y * ((m >= 0.0 ? e : vsplat(1.0)) / (1.0 + e));
    }
#endif
};

struct Hinge {
    static constexpr bool uses_labels = true;
    static double label(double y, double) { return y > 0 ? 1.0 : -1.0; }
    static double value(double z, double y) { return std::max(1.0 - y * z, 0.0); }
    // Margin exactly 1 takes the subgradient 0.
    static double deriv(double z, double y) { return y * z < 1.0 ? -y : 0.0; }
#ifdef FASTERM_VECTOR_EXTENSIONS
    static vd vlabel(vd y, double) { return y > 0.0 ? vsplat(1.0) : vsplat(-1.0); }
    static vd vderiv(vd z, vd y) { return y * z < 1.0 ? -y : vsplat(0.0); }
#endif
};

struct Squared {
    static constexpr bool uses_labels = true;
    static double label(double y, double bound) { return std::min(std::max(y, -bound), bound); }
    static double value(double z, double y) { const double r = y - z; return r * r; }
    static double deriv(double z, double y) { return 2.0 * (z - y); }
#ifdef FASTERM_VECTOR_EXTENSIONS
    static vd vlabel(vd y, double bound) {
        y = y < -bound ? vsplat(-bound) : y;
        return y > bound ? vsplat(bound) : y;
    }
    static vd vderiv(vd z, vd y) { return 2.0 * (z - y); }
#endif
};

struct Absolute {
    static constexpr bool uses_labels = true;
    static double label(double y, double bound) { return std::min(std::max(y, -bound), bound); }
    static double value(double z, double y) { return std::fabs(y - z); }
    // sign(z - y) with sign(0) = 0.
    static double deriv(double z, double y) { return double(z > y) - double(z < y); }
#ifdef FASTERM_VECTOR_EXTENSIONS
    static vd vlabel(vd y, double bound) { return Squared::vlabel(y, bound); }
    static vd vderiv(vd z, vd y) {
        return (z > y ? vsplat(1.0) : vsplat(0.0)) - (z < y ? vsplat(1.0) : vsplat(0.0));
    }
#endif
};

struct Linear {
    static constexpr bool uses_labels = false;
    static double label(double, double) { return 0.0; }
    static double value(double z, double) { return z; }
    static double deriv(double, double) { return 1.0; }
#ifdef FASTERM_VECTOR_EXTENSIONS
    static vd vlabel(vd, double) { return vsplat(0.0); }
    static vd vderiv(vd, vd) { return vsplat(1.0); }
#endif
};

// ---------------------------------------------------------------------------
// 32-byte vectors of T (4 doubles or 8 floats), and 16-byte halves for the
// tail of a row (d = 100 floats leaves 4 after the 8-lane steps).  GCC/Clang
// vector extensions make the lanes explicit: the baseline clone lowers them to pairs of SSE2
// operations, the AVX2 clone to single 256-bit ones (left to itself the
// compiler shuffled lanes and spilled).  Other compilers get a plain struct
// with the same semantics.  Nothing is reassociated (no -ffast-math): every
// result has one fixed summation order.

template <class T, int Bytes = 32>
struct Simd {
    static constexpr int N = Bytes / int(sizeof(T));
#ifdef FASTERM_VECTOR_EXTENSIONS
    typedef typename simd::Vec<T, N>::type V;
    static T lane(const V& v, int k) { return v[k]; }
#else
    struct V {
        T v[N];
        V& operator+=(const V& o) { for (int k = 0; k < N; ++k) v[k] += o.v[k]; return *this; }
        friend V operator+(V a, const V& b) { return a += b; }
        friend V operator*(V a, const V& b) { for (int k = 0; k < N; ++k) a.v[k] *= b.v[k]; return a; }
    };
    static T lane(const V& v, int k) { return v.v[k]; }
#endif
    static V load(const T* p) { V v; std::memcpy(&v, p, sizeof v); return v; }
    static void store(T* p, const V& v) { std::memcpy(p, &v, sizeof v); }
    static V splat(T a) {
#ifdef FASTERM_VECTOR_EXTENSIONS
        // A broadcast in registers.  (Filling an array and loading it as a
        // vector cost a failed store forward per splat: at d = 31 the four
        // splats of each group of rows took a third of the gradient sum.)
        if constexpr (N == 2) return V{a, a};
        else if constexpr (N == 4) return V{a, a, a, a};
        else if constexpr (N == 8) return V{a, a, a, a, a, a, a, a};
#endif
        T t[N];
        for (int k = 0; k < N; ++k) t[k] = a;
        return load(t);
    }
    // Lanes summed as a fixed pairwise tree: the first level in T when there
    // are more than four lanes (float), the rest in double.
    static double sum(const V& v) {
        constexpr int M = N > 4 ? N / 2 : N;
        double h[M];
        for (int k = 0; k < M; ++k)
            h[k] = M < N ? double(lane(v, k) + lane(v, k + M)) : double(lane(v, k));
        for (int width = M / 2; width >= 1; width /= 2)
            for (int k = 0; k < width; ++k) h[k] += h[k + width];
        return h[0];
    }
#ifdef FASTERM_SHUFFLE
    // sum() of four vectors at once, {sum(a), sum(b), sum(c), sum(e)}, with
    // the same additions in the same order, done across vectors instead of
    // lane by lane (a quarter of the shuffles and scalar adds per row).
    static vd sum4(const V& a, const V& b, const V& c, const V& e) {
        static_assert(N == 4 || N == 8, "32-byte vectors of float or double");
        if constexpr (N == 8) {
            // First level in T: lane k + lane k + 4, then to double.
            typedef T Q __attribute__((vector_size(16)));
            auto fold = [](const V& v) {
                const Q lo = __builtin_shufflevector(v, v, 0, 1, 2, 3);
                const Q hi = __builtin_shufflevector(v, v, 4, 5, 6, 7);
                return __builtin_convertvector(lo + hi, vd);
            };
            return sum4_lanes(fold(a), fold(b), fold(c), fold(e));
        } else {
            return sum4_lanes(a, b, c, e);
        }
    }
    // Four lanes each: (l0 + l2) + (l1 + l3), as in sum().
    static vd sum4_lanes(vd a, vd b, vd c, vd e) {
        const vd ab = __builtin_shufflevector(a, b, 0, 1, 4, 5) + __builtin_shufflevector(a, b, 2, 3, 6, 7);
        const vd ce = __builtin_shufflevector(c, e, 0, 1, 4, 5) + __builtin_shufflevector(c, e, 2, 3, 6, 7);
        return __builtin_shufflevector(ab, ce, 0, 2, 4, 6) + __builtin_shufflevector(ab, ce, 1, 3, 5, 7);
    }
#endif
    // v with the N/2 lanes of a half vector added to its low lanes (the
    // high lanes get + 0).  The half is widened in registers: through memory,
    // a 16-byte store read back by a 32-byte load cannot be store-forwarded
    // and stalled every row tail (a quarter of the time at d = 31).
    template <class H>
    static V add_low(V v, const H& h) {
#ifdef FASTERM_SHUFFLE
        static_assert(N == 4 || N == 8, "32-byte vectors of float or double");
        // h is usually a product: the empty asm keeps it rounded as it is,
        // so the compiler cannot fuse it into the addition (an FMA would
        // round once and change the result; the memory round trip above
        // never was fused).
        H p = h;
        asm("" : "+x"(p));
        if constexpr (N == 4)
            return v + __builtin_shufflevector(p, H{}, 0, 1, 2, 3);
        else
            return v + __builtin_shufflevector(p, H{}, 0, 1, 2, 3, 4, 5, 6, 7);
#else
        T t[N] = {};
        std::memcpy(t, &h, sizeof h);
        return v + load(t);
#endif
    }
};
template <class T>
using Half = Simd<T, 16>;

// Lanes hold at most this many terms before they are moved into a double:
// float lanes over a long row would otherwise lose digits.
constexpr index_t kFlush = 256;

// <x, w>: lanes of T summed over at most kFlush elements at a time, then in
// double.  A half-vector tail joins the last group's lanes.
template <class T>
inline double dot(const T* x, const T* w, index_t d) {
    using S = Simd<T>;
    using H = Half<T>;
    const index_t dv = d - d % S::N;
    const bool half = d - dv >= H::N;
    double total = 0.0;
    index_t j = 0;
    do {
        const index_t e = std::min(dv, j + kFlush);
        typename S::V s = S::splat(T(0));
        for (; j < e; j += S::N) s += S::load(x + j) * S::load(w + j);
        if (j == dv && half) {
            s = S::add_low(s, H::load(x + j) * H::load(w + j));
            j += H::N;
        }
        total += S::sum(s);
    } while (j < dv);
    for (; j < d; ++j) total += double(x[j]) * double(w[j]);
    return total;
}

// How far ahead of the dot products to prefetch (one core's hardware
// prefetchers keep too few misses in flight to reach the memory bandwidth):
// 2 KiB for double rows, 6 KiB for float rows, which take half the arithmetic
// per byte.  Why these distances: docs/performance.rst, "Prefetch distance".
// Only the prefetches depend on them: the arithmetic, and so the bits, do not.
constexpr index_t kPrefetchBytes = 2048;
template <class T>
constexpr index_t kPrefetchAhead = std::is_same<T, float>::value ? 6144 : kPrefetchBytes;

// Float data: besides the prefetch into L1 above, the rows 32 KiB ahead are
// prefetched into L2 only (prefetcht2).  An L1 prefetch holds one of the
// core's few L1 miss buffers until its line arrives from memory, so too few
// lines are in flight to reach the memory bandwidth; L2 keeps many more
// misses in flight, and the L1 prefetch then finds its line in L2.  Used in
// the loop without norms only (dot4<false>, cached norms read: see
// grad_sum_range); double data has the L1 prefetch only.  Only prefetches
// depend on it: the bits do not.  Why: docs/performance.rst, "The L2
// prefetch of float rows".
constexpr index_t kPrefetchFarBytes = 32768;

// Prefetch the cache line `ahead` bytes past p, into L1 (Far = false) or
// into L2 only (Far = true).  The address is formed as an integer: it may lie
// past the end of X, where a prefetch is simply dropped (it never faults),
// while a pointer there would be undefined behaviour.
template <bool Far = false>
inline void prefetch_at(const void* p, index_t ahead) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) + ahead), 0,
                       Far ? 1 : 3);
#else
    (void)p;
    (void)ahead;
#endif
}

// Row norms, in double for float data too (computed once per row and reused
// by every clip, so worth the exact-ish value).  Lane k of SqLanes sums the
// squares of the elements j = k (mod 4) of the first 4 floor(d/4) elements,
// in order of j; norm_finish adds the lanes as (l0 + l2) + (l1 + l3), then
// the last d mod 4 squares.  row_norm() and the dot products that compute
// norms in the same pass over X (dot4<true>) go through these same steps, so
// a norm computed on the fly is bit-for-bit the cached one.
template <class T>
struct SqLanes {
#ifdef FASTERM_VECTOR_EXTENSIONS
    vd s = vd{0.0, 0.0, 0.0, 0.0};
    // Elements of one vector of T (4 or 8 lanes; a 2-lane half of doubles
    // is left to the scalar tail).
    template <int B>
    void add(const typename Simd<T, B>::V& v) {
        constexpr int N = Simd<T, B>::N;
        static_assert(N % 4 == 0, "whole groups of four elements");
        for (int g = 0; g < N; g += 4) {
            const vd u = vd{double(v[g]), double(v[g + 1]), double(v[g + 2]), double(v[g + 3])};
            s = s + u * u;
        }
    }
    double total() const { return (s[0] + s[2]) + (s[1] + s[3]); }
#else
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    template <int B>
    void add(const typename Simd<T, B>::V& v) {
        constexpr int N = Simd<T, B>::N;
        static_assert(N % 4 == 0, "whole groups of four elements");
        for (int g = 0; g < N; g += 4)
            for (int k = 0; k < 4; ++k) {
                const double u = double(Simd<T, B>::lane(v, g + k));
                s[k] = s[k] + u * u;
            }
    }
    double total() const { return (s[0] + s[2]) + (s[1] + s[3]); }
#endif
};

// Whether the d - d % N elements in full vectors of N lanes plus a half
// vector (if d % N >= N/2) are exactly the first 4 floor(d/4) elements: true
// for float (8 + 4 lanes); for double the half (2 lanes) joins the tail.
template <class T>
constexpr bool kHalfInLanes = Half<T>::N % 4 == 0;

template <class T>
inline double norm_finish(double ss, const T* x, index_t d) {
    for (index_t j = d - d % 4; j < d; ++j) ss += double(x[j]) * double(x[j]);
    if (ss <= std::numeric_limits<double>::max()) return std::sqrt(ss);
    // The squares overflowed (entries above ~1e154), or x holds a NaN:
    // rescale by the largest entry, as BLAS nrm2 does, on this rare path only.
    double big = 0.0;
    for (index_t j = 0; j < d; ++j) big = std::max(big, std::fabs(double(x[j])));
    double t = 0.0;
    for (index_t j = 0; j < d; ++j) { const double u = double(x[j]) / big; t += u * u; }
    return big * std::sqrt(t);
}

// ||x||_2 (overflow-safe).
template <class T>
inline double row_norm(const T* x, index_t d) {
    using S = Simd<T>;
    using H = Half<T>;
    SqLanes<T> q;
    const index_t dv = d - d % S::N;
    for (index_t j = 0; j < dv; j += S::N) q.template add<32>(S::load(x + j));
    if constexpr (kHalfInLanes<T>)
        if (d - dv >= H::N) q.template add<16>(H::load(x + dv));
    return norm_finish(q.total(), x, d);
}

// dot() of four rows at once: each load of w serves four rows, and each
// row's arithmetic is exactly that of dot(), so results do not depend on how
// rows were grouped.  Norms (if true): the rows' norms as row_norm() gives
// them, into nrm, from the same loads.  With prefetch (the rows must then be
// consecutive), the rows kPrefetchAhead<T> bytes ahead are prefetched two lines per
// step: a steady trickle, where a burst would stall on the full miss buffers.
template <bool Norms, class T>
inline void dot4(const T* x0, const T* x1, const T* x2, const T* x3, const T* w, index_t d,
                 double* z, double* nrm, bool prefetch) {
    using S = Simd<T>;
    using H = Half<T>;
    const index_t dv = d - d % S::N;
    const bool half = d - dv >= H::N;
    double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    SqLanes<T> q0, q1, q2, q3;
    index_t j = 0;
    do {
        const index_t e = std::min(dv, j + kFlush);
        typename S::V s0 = S::splat(T(0)), s1 = s0, s2 = s0, s3 = s0;
        FASTERM_UNROLL2
        for (; j < e; j += S::N) {
            if (prefetch) {
                // Four rows advance 4 * 32 bytes per step: two lines.
                prefetch_at(x0 + 4 * j, kPrefetchAhead<T>);
                prefetch_at(x0 + 4 * j, kPrefetchAhead<T> + 64);
                if constexpr (std::is_same<T, float>::value && !Norms) {
                    prefetch_at<true>(x0 + 4 * j, kPrefetchFarBytes);
                    prefetch_at<true>(x0 + 4 * j, kPrefetchFarBytes + 64);
                }
            }
            const typename S::V wj = S::load(w + j);
            const typename S::V a0 = S::load(x0 + j), a1 = S::load(x1 + j), a2 = S::load(x2 + j),
                                a3 = S::load(x3 + j);
            s0 += a0 * wj;
            s1 += a1 * wj;
            s2 += a2 * wj;
            s3 += a3 * wj;
            if constexpr (Norms) {
                q0.template add<32>(a0);
                q1.template add<32>(a1);
                q2.template add<32>(a2);
                q3.template add<32>(a3);
            }
        }
        if (j == dv && half) {
            const typename H::V wj = H::load(w + j);
            const typename H::V a0 = H::load(x0 + j), a1 = H::load(x1 + j), a2 = H::load(x2 + j),
                                a3 = H::load(x3 + j);
            s0 = S::add_low(s0, a0 * wj);
            s1 = S::add_low(s1, a1 * wj);
            s2 = S::add_low(s2, a2 * wj);
            s3 = S::add_low(s3, a3 * wj);
            if constexpr (Norms && kHalfInLanes<T>) {
                q0.template add<16>(a0);
                q1.template add<16>(a1);
                q2.template add<16>(a2);
                q3.template add<16>(a3);
            }
            j += H::N;
        }
#ifdef FASTERM_SHUFFLE
        const vd t = vd{t0, t1, t2, t3} + S::sum4(s0, s1, s2, s3);
        t0 = t[0];
        t1 = t[1];
        t2 = t[2];
        t3 = t[3];
#else
        t0 += S::sum(s0);
        t1 += S::sum(s1);
        t2 += S::sum(s2);
        t3 += S::sum(s3);
#endif
    } while (j < dv);
    for (; j < d; ++j) {
        const double wj = double(w[j]);
        t0 += double(x0[j]) * wj;
        t1 += double(x1[j]) * wj;
        t2 += double(x2[j]) * wj;
        t3 += double(x3[j]) * wj;
    }
    z[0] = t0;
    z[1] = t1;
    z[2] = t2;
    z[3] = t3;
    if constexpr (Norms) {
        nrm[0] = norm_finish(q0.total(), x0, d);
        nrm[1] = norm_finish(q1.total(), x1, d);
        nrm[2] = norm_finish(q2.total(), x2, d);
        nrm[3] = norm_finish(q3.total(), x3, d);
    }
}

// Four consecutive rows.
template <class T>
inline void dot4(const T* x0, const T* w, index_t d, double* z) {
    dot4<false>(x0, x0 + d, x0 + 2 * d, x0 + 3 * d, w, d, z, nullptr, false);
}

// Where the rows are: row i of the problem is X's row i (DenseRows), or X's
// row idx[i] (IndexedRows: a subsample, read in place).  Labels and cached
// norms follow the same map.
template <class T>
struct DenseRows {
    static constexpr bool dense = true;
    const T* X;
    index_t d;
    const T* operator()(index_t i) const { return X + i * d; }
    index_t at(index_t i) const { return i; }
};

template <class T>
struct IndexedRows {
    static constexpr bool dense = false;
    const T* X;
    index_t d;
    const std::int64_t* idx;
    const T* operator()(index_t i) const { return X + index_t(idx[i]) * d; }
    index_t at(index_t i) const { return index_t(idx[i]); }
};

// Unscaled dot products (and, with Norms, the norms) of the m <= 4 rows
// i .. i + m - 1.
template <bool Norms, class T, class R>
inline void dot_group(const R& rows, index_t i, index_t m, const T* w, index_t d, double* z,
                      double* nrm, bool prefetch) {
    if (m == 4) {
        dot4<Norms>(rows(i), rows(i + 1), rows(i + 2), rows(i + 3), w, d, z, nrm,
                    R::dense && prefetch);
        return;
    }
    for (index_t r = 0; r < m; ++r) {
        const T* x = rows(i + r);
        z[r] = dot(x, w, d);
        if constexpr (Norms) nrm[r] = row_norm(x, d);
    }
}

// The same for m <= kMaxBlock rows, four at a time.
template <bool Norms, class T, class R>
inline void dots(const R& rows, index_t i, index_t m, const T* w, index_t d, double* z,
                 double* nrm) {
    for (index_t g = 0; g < m; g += 4)
        dot_group<Norms>(rows, i + g, std::min<index_t>(4, m - g), w, d, z + g, nrm + g, false);
}

// Every cache line of the `bytes` bytes from x: rows that are not
// consecutive (no hardware prefetcher follows them), the labels and norms of
// a block.
inline void prefetch_span(const void* x, index_t bytes) {
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(x);
    for (std::uintptr_t p = a & ~std::uintptr_t(63); p < a + std::uintptr_t(bytes); p += 64)
        prefetch_at(reinterpret_cast<const void*>(p), 0);
}

// <s * x, w> in double, for the rare rows whose unscaled dot product
// overflows: every s * x_j is then bounded by the declared data norm.
template <class T>
inline double dot_scaled(const T* x, const T* w, index_t d, double s) {
    double t = 0.0;
    for (index_t j = 0; j < d; ++j) t += (s * double(x[j])) * double(w[j]);
    return t;
}

// acc += sum_r coef[r] * x[r] for m <= 4 rows; acc is loaded and stored
// once per four rows.
template <class T>
inline void accumulate_rows(const T* const* x, const T* coef, index_t m, index_t d, T* acc) {
    using S = Simd<T>;
    const index_t dv = d - d % S::N;
    if (m == 4) {
        const T* x0 = x[0];
        const T* x1 = x[1];
        const T* x2 = x[2];
        const T* x3 = x[3];
        const T c0 = coef[0], c1 = coef[1], c2 = coef[2], c3 = coef[3];
        const typename S::V v0 = S::splat(c0), v1 = S::splat(c1), v2 = S::splat(c2),
                            v3 = S::splat(c3);
        index_t j = 0;
        FASTERM_UNROLL2
        for (; j < dv; j += S::N)
            S::store(acc + j, S::load(acc + j) + ((v0 * S::load(x0 + j) + v1 * S::load(x1 + j)) +
                                                  (v2 * S::load(x2 + j) + v3 * S::load(x3 + j))));
        if (d - j >= Half<T>::N) {
            using H = Half<T>;
            const typename H::V h0 = H::splat(c0), h1 = H::splat(c1), h2 = H::splat(c2),
                                h3 = H::splat(c3);
            H::store(acc + j, H::load(acc + j) + ((h0 * H::load(x0 + j) + h1 * H::load(x1 + j)) +
                                                  (h2 * H::load(x2 + j) + h3 * H::load(x3 + j))));
            j += H::N;
        }
        for (; j < d; ++j)
            acc[j] += (c0 * x0[j] + c1 * x1[j]) + (c2 * x2[j] + c3 * x3[j]);
        return;
    }
    for (index_t r = 0; r < m; ++r) {
        const T* xr = x[r];
        const T c = coef[r];
        const typename S::V v = S::splat(c);
        index_t j = 0;
        for (; j < dv; j += S::N) S::store(acc + j, S::load(acc + j) + v * S::load(xr + j));
        if (d - j >= Half<T>::N) {
            using H = Half<T>;
            H::store(acc + j, H::load(acc + j) + H::splat(c) * H::load(xr + j));
            j += H::N;
        }
        for (; j < d; ++j) acc[j] += c * xr[j];
    }
}

// dot4() of the four rows x0..x3 (the next block's, from memory) and, in the
// same loop over the columns, accumulate_rows() of the four rows xa[0..3] of
// the current block (from L1) with coefficients coef[0..3].  Each row's and
// each column's arithmetic is exactly that of the two separate calls (same
// operations, same order), so the results are the same bits; only the
// instruction stream is interleaved, so that the accumulation runs while
// the dot products' loads wait on memory (a dot4 group is longer than the
// out-of-order window).  Double data only: for float the fused loop needs
// more than the 16 vector registers.  Why: docs/performance.rst,
// "Dot products interleaved with the accumulation".
template <bool Norms, class T>
inline void dot4_accumulate4(const T* x0, const T* x1, const T* x2, const T* x3, const T* w,
                             index_t d, double* z, double* nrm, bool prefetch,
                             const T* const* xa, const T* coef, T* acc) {
    using S = Simd<T>;
    using H = Half<T>;
    const index_t dv = d - d % S::N;
    const bool half = d - dv >= H::N;
    double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    SqLanes<T> q0, q1, q2, q3;
    const T* const y0 = xa[0];
    const T* const y1 = xa[1];
    const T* const y2 = xa[2];
    const T* const y3 = xa[3];
    const T c0 = coef[0], c1 = coef[1], c2 = coef[2], c3 = coef[3];
    const typename S::V v0 = S::splat(c0), v1 = S::splat(c1), v2 = S::splat(c2), v3 = S::splat(c3);
    index_t j = 0;
    do {
        const index_t e = std::min(dv, j + kFlush);
        typename S::V s0 = S::splat(T(0)), s1 = s0, s2 = s0, s3 = s0;
        for (; j < e; j += S::N) {
            if (prefetch) {
                prefetch_at(x0 + 4 * j, kPrefetchAhead<T>);
                prefetch_at(x0 + 4 * j, kPrefetchAhead<T> + 64);
            }
            const typename S::V wj = S::load(w + j);
            const typename S::V a0 = S::load(x0 + j), a1 = S::load(x1 + j), a2 = S::load(x2 + j),
                                a3 = S::load(x3 + j);
            s0 += a0 * wj;
            s1 += a1 * wj;
            s2 += a2 * wj;
            s3 += a3 * wj;
            if constexpr (Norms) {
                q0.template add<32>(a0);
                q1.template add<32>(a1);
                q2.template add<32>(a2);
                q3.template add<32>(a3);
            }
            S::store(acc + j, S::load(acc + j) + ((v0 * S::load(y0 + j) + v1 * S::load(y1 + j)) +
                                                  (v2 * S::load(y2 + j) + v3 * S::load(y3 + j))));
        }
        if (j == dv && half) {
            const typename H::V wj = H::load(w + j);
            const typename H::V a0 = H::load(x0 + j), a1 = H::load(x1 + j), a2 = H::load(x2 + j),
                                a3 = H::load(x3 + j);
            s0 = S::add_low(s0, a0 * wj);
            s1 = S::add_low(s1, a1 * wj);
            s2 = S::add_low(s2, a2 * wj);
            s3 = S::add_low(s3, a3 * wj);
            if constexpr (Norms && kHalfInLanes<T>) {
                q0.template add<16>(a0);
                q1.template add<16>(a1);
                q2.template add<16>(a2);
                q3.template add<16>(a3);
            }
            j += H::N;
        }
#ifdef FASTERM_SHUFFLE
        const vd t = vd{t0, t1, t2, t3} + S::sum4(s0, s1, s2, s3);
        t0 = t[0];
        t1 = t[1];
        t2 = t[2];
        t3 = t[3];
#else
        t0 += S::sum(s0);
        t1 += S::sum(s1);
        t2 += S::sum(s2);
        t3 += S::sum(s3);
#endif
    } while (j < dv);
    for (; j < d; ++j) {
        const double wj = double(w[j]);
        t0 += double(x0[j]) * wj;
        t1 += double(x1[j]) * wj;
        t2 += double(x2[j]) * wj;
        t3 += double(x3[j]) * wj;
    }
    z[0] = t0;
    z[1] = t1;
    z[2] = t2;
    z[3] = t3;
    if constexpr (Norms) {
        nrm[0] = norm_finish(q0.total(), x0, d);
        nrm[1] = norm_finish(q1.total(), x1, d);
        nrm[2] = norm_finish(q2.total(), x2, d);
        nrm[3] = norm_finish(q3.total(), x3, d);
    }
    // The accumulation's tail, as accumulate_rows() does it.
    j = dv;
    if (d - j >= H::N) {
        const typename H::V h0 = H::splat(c0), h1 = H::splat(c1), h2 = H::splat(c2), h3 = H::splat(c3);
        H::store(acc + j, H::load(acc + j) + ((h0 * H::load(y0 + j) + h1 * H::load(y1 + j)) +
                                              (h2 * H::load(y2 + j) + h3 * H::load(y3 + j))));
        j += H::N;
    }
    for (; j < d; ++j) acc[j] += (c0 * y0[j] + c1 * y1[j]) + (c2 * y2[j] + c3 * y3[j]);
}

inline double row_scale(double norm, double data_norm) {
    return (data_norm > 0.0 && norm > data_norm) ? data_norm / norm : 1.0;
}

// The bound a kernel compares with and scales to in place of a declared bound
// B (the clip c, the data norm X) for rows of d values of T: B f with
// f = 1 - (d + 8) u - 3 u_T (u = 2^-53, u_T the unit roundoff of T), so that
// the gradient the kernel actually sums, the exact vector T(a) x, has exact
// norm <= c (and the row part s x of a gradient, s the row scale to the data
// norm, exact norm <= X), not just its computed norm.  Proof
// (docs/guarantees.rst, "Floating point"): the computed norm N of a row is
// >= ||x|| (1 - (d + 4) u) (each square rounds once and meets at most d - 1
// rounded additions, the square root rounds once; the overflow path adds a
// division, a product and one more rounding); the clip test |a| N > B f is a
// rounded product, the clipped coefficient B f / N a rounded quotient, T(a)
// one more rounding and a sample weight two more (the product in double,
// then T): with the rounding of B f itself at most (1 + u)^3 (1 + u_T)^2,
// and f (1 + u)^3 (1 + u_T)^2 <= (1 - u)(1 - (d + 4) u).  f is exact in
// double for d < 2^50 (1 - k 2^-53 is a double for integers k <= 2^52).
template <class T>
inline double inner_bound(double bound, index_t d) {
    constexpr double u = 0x1p-53;
    constexpr double uT = std::is_same<T, float>::value ? 0x1p-24 : 0x1p-53;
    return bound * ((1.0 - double(d + 8) * u) - 3.0 * uT);
}

// Scalar part of a row x with raw label y_raw and norm ||x||: the
// coefficient a with gradient a * x, where z = s <w, x> for the row scale s
// that brings x to the data norm.  (The reference for coefficients() below,
// and its version without vector extensions.)
// (Row: a dense row, const T*, or another row type with a dot_scaled overload: csr.hpp.)
template <class L, class T, class Row>
inline double coefficient(const Row& x, double dot_xw, double y_raw, double norm, const T* w,
                          index_t d, const Options& o) {
    // The margin is that of the row scaled to the data norm X by its computed
    // norm; the gradient's scale s uses inner_bound(X), so that the exact
    // norm of the gradient's row part s x stays <= X (rows whose computed
    // norm lies in (inner_bound(X), X] get s just below 1).
    const double sz = o.data_norm > 0.0 ? row_scale(norm, o.data_norm) : 1.0;
    double z = sz * dot_xw;
    if (!std::isfinite(z) && sz < 1.0) z = dot_scaled(x, w, d, sz);
    const double s = o.data_norm > 0.0 ? row_scale(norm, inner_bound<T>(o.data_norm, d)) : 1.0;
    const double yi = L::uses_labels ? L::label(y_raw, o.label_bound) : 0.0;
    double a = L::deriv(z, yi) * s;
    if (o.clip > 0.0) {
        // copysign(c' / |x|, a) rather than a * c' / |a x|: a rescale to
        // norm c' = inner_bound(c) (up to rounding, hence c' < c), finite
        // even if a overflowed.
        const double c = inner_bound<T>(o.clip, d);
        if (std::fabs(a) * norm > c) a = std::copysign(c / norm, a);
    }
    return a;
}

// coefficient() for the m <= kMaxBlock rows of a block: row r is rows(i0 + r),
// its dot product dots[r], its raw label yb[r] (Y: T or double) and its norm
// nb[r] (nb may be null when neither data_norm nor clip is set).  Four rows
// per vector step: the per-row divisions, the exponential and the selects
// cost as much as the arithmetic on the row itself when done one row at a
// time.
template <class L, class T, class Y, class R>
inline void coefficients(const R& rows, index_t i0, const double* dots, const Y* yb,
                         const double* nb, const T* w, index_t m, index_t d, const Options& o,
                         T* coef) {
    const bool need_norms = o.data_norm > 0.0 || o.clip > 0.0;
#ifdef FASTERM_VECTOR_EXTENSIONS
    // The bounds as compared and scaled to (inner_bound: coefficient()'s).
    const double dn = inner_bound<T>(o.data_norm, d), clip = inner_bound<T>(o.clip, d);
    // Full steps read the dot products, labels and norms straight into
    // vectors; only the last, partial step goes through small buffers, with
    // padding rows (zero dot product, label 1, norm 0).  (Filling
    // whole-block buffers with scalar stores and reading them back as
    // vectors stalled on store forwarding in every step; the buffers here
    // were written a whole block earlier.)
    // From cache (Options::hot), three passes over the block, four rows per
    // vector step: the margins, then the loss derivatives alone, then the
    // scales and the clipping.  The derivative (the logistic's exponential
    // and division: a chain of ~15 dependent operations) then runs in a short
    // loop whose steps overlap in the out-of-order window; in one long step
    // per four rows, the chains of successive steps would run one after the
    // other.  Streaming from memory the one-pass loop is kept (why, in both
    // cases: docs/performance.rst, "Three passes over a cached block").  Each
    // lane's arithmetic is the same either way.
    const vd one = vsplat(1.0);
    // Margin z (scaled), label, norm and row scale of rows r .. r + 3;
    // returns whether a row was scaled.
    auto margins = [&](index_t r, vd& z, vd& yl, vd& nv, vd& s) {
        vd yv = one;
        nv = vsplat(0.0);
        if (r + 4 <= m) {
            z = vload(dots + r);
            if (L::uses_labels) {
                const Y* yp = yb + r;
                yv = vd{double(yp[0]), double(yp[1]), double(yp[2]), double(yp[3])};
            }
            if (need_norms) nv = vload(nb + r);
        } else {
            alignas(32) double zt[4] = {0.0, 0.0, 0.0, 0.0}, yt[4] = {1.0, 1.0, 1.0, 1.0},
                               nt[4] = {0.0, 0.0, 0.0, 0.0};
            for (index_t k = 0; k < m - r; ++k) {
                zt[k] = dots[r + k];
                if (L::uses_labels) yt[k] = double(yb[r + k]);
                if (need_norms) nt[k] = nb[r + k];
            }
            z = vload(zt);
            yv = vload(yt);
            nv = vload(nt);
        }
        // The row scales, only when a row of the four exceeds the data norm
        // (a scale of 1 changes no bit, and rows usually come clipped): the
        // margin's, to X, and the gradient's s, to inner_bound(X) (as in
        // coefficient()).
        s = one;
        vi over = vi{0, 0, 0, 0};
        if (o.data_norm > 0.0) over = (vi)(nv > dn);
        const bool scaled = (over[0] | over[1] | over[2] | over[3]) != 0;
        if (scaled) {
            s = over ? dn / nv : one;
            const vi zover = (vi)(nv > o.data_norm);
            if (zover[0] | zover[1] | zover[2] | zover[3]) {
                const vd sz = zover ? o.data_norm / nv : one;
                z = sz * z;
                // Rare: a dot product that overflowed, on a row the data norm scales down.
                const vi bad = (!(vabs(z) <= std::numeric_limits<double>::max())) & (sz < 1.0);
                if (bad[0] | bad[1] | bad[2] | bad[3]) {
                    alignas(32) double zt[4];
                    vstore(zt, z);
                    for (index_t k = 0; k < 4 && r + k < m; ++k)
                        if (bad[k]) zt[k] = dot_scaled(rows(i0 + r + k), w, d, sz[k]);
                    z = vload(zt);
                }
            }
        }
        yl = L::vlabel(yv, o.label_bound);
        return scaled;
    };
    // The coefficients of rows r .. r + 3 from their derivatives a.
    auto finish = [&](index_t r, vd a, vd nv, vd s, bool scaled) {
        if (scaled) a = a * s;
        if (o.clip > 0.0) {
            const vd c = clip / nv;  // inf on zero rows, never selected there
            a = vabs(a) * nv > clip ? (a < 0.0 ? -c : c) : a;
        }
        if (r + 4 <= m) {
            if constexpr (std::is_same<T, double>::value) {
                vstore(coef + r, a);
            } else {
                typedef T Q __attribute__((vector_size(4 * sizeof(T))));
                const Q q = __builtin_convertvector(a, Q);  // T(a[k]) in each lane
                std::memcpy(coef + r, &q, sizeof q);
            }
        } else {
            for (index_t k = 0; k < m - r; ++k) coef[r + k] = T(a[k]);
        }
    };
    if (!o.hot) {
        for (index_t r = 0; r < m; r += 4) {
            vd z, yl, nv, s;
            const bool scaled = margins(r, z, yl, nv, s);
            finish(r, L::vderiv(z, yl), nv, s, scaled);
        }
        return;
    }
    alignas(32) double zs[kMaxBlock], ls[kMaxBlock], as[kMaxBlock], ns[kMaxBlock], ss[kMaxBlock];
    bool scaled_any[kMaxBlock / 4];
    for (index_t r = 0; r < m; r += 4) {
        vd z, yl, nv, s;
        scaled_any[r / 4] = margins(r, z, yl, nv, s);
        vstore(zs + r, z);
        vstore(ls + r, yl);
        vstore(ns + r, nv);
        vstore(ss + r, s);
    }
    for (index_t r = 0; r < m; r += 4) vstore(as + r, L::vderiv(vload(zs + r), vload(ls + r)));
    for (index_t r = 0; r < m; r += 4)
        finish(r, vload(as + r), vload(ns + r), vload(ss + r), scaled_any[r / 4]);
#else
    for (index_t r = 0; r < m; ++r)
        coef[r] = T(coefficient<L>(rows(i0 + r), dots[r], L::uses_labels ? double(yb[r]) : 0.0,
                                   need_norms ? nb[r] : 0.0, w, d, o));
#endif
}

// coef[r] *= weight of row rows.at(i0 + r), for the m rows of a block.  The
// coefficient is already rounded to T: for float data the weighted one is
// T(double(T(a)) * w), a second rounding (none for w = 1 or double data).
template <class R, class T>
inline void weigh(const R& rows, index_t i0, index_t m, const double* weights, T* coef) {
    for (index_t r = 0; r < m; ++r) coef[r] = T(double(coef[r]) * weights[rows.at(i0 + r)]);
}

// phi(z_i, y_i); margins that are not finite are counted in *nonfinite: a NaN
// or an infinity in x_i always makes z_i non-finite, though phi may map an
// infinite margin to a finite value (hinge, logistic at z y = +inf).
template <class L, class T>
inline double loss_value(const T* x, double dot_xw, const T* y, const T* w, const double* norms,
                         index_t i, index_t d, const Options& o, index_t* nonfinite) {
    const double s = o.data_norm > 0.0 ? row_scale(norms[i], o.data_norm) : 1.0;
    double z = s * dot_xw;
    if (!std::isfinite(z)) {
        if (s < 1.0) z = dot_scaled(x, w, d, s);
        *nonfinite += !std::isfinite(z);
    }
    const double yi = L::uses_labels ? L::label(double(y[i]), o.label_bound) : 0.0;
    return L::value(z, yi);
}

// ---------------------------------------------------------------------------
// Scheduling.


struct Plan {
    index_t block, chunk, nchunks;
};

inline Plan make_plan(index_t n, index_t d, index_t elem_size) {
    const index_t row_bytes = std::max<index_t>(d * elem_size, 1);
    const index_t block = std::clamp<index_t>(kBlockBytes / row_bytes, 4, kMaxBlock) & ~index_t(3);
    const index_t max_chunks = std::clamp<index_t>(kPartialBudget / std::max<index_t>(d, 1), 1, kMaxChunks);
    index_t chunk = std::max<index_t>((kChunkBytes + row_bytes - 1) / row_bytes,
                                      (n + max_chunks - 1) / max_chunks);
    chunk = (chunk + block - 1) / block * block;
    const index_t nchunks = std::max<index_t>((n + chunk - 1) / chunk, 1);
    return {block, chunk, nchunks};
}

inline int worker_count(index_t nchunks, int n_threads) {
    return int(std::min<index_t>(std::max(n_threads, 1), nchunks));
}

// Run work(k, t) for every chunk k = 0..nchunks-1 on `workers` threads (the
// caller's included), t being the worker's index.  If the system refuses a
// thread, the others do its share.
template <class F>
inline void for_each_chunk(index_t nchunks, int workers, const F& work) {
    std::atomic<index_t> next{0};
    auto run = [&](int t) noexcept {
        for (index_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < nchunks;) work(k, t);
    };
    std::vector<std::thread> pool;
    if (workers > 1) {
        try {
            pool.reserve(std::size_t(workers - 1));
            for (int t = 1; t < workers; ++t) pool.emplace_back(run, t);
        } catch (const std::system_error&) {
        }
    }
    run(0);
    for (auto& th : pool) th.join();
}

// ---------------------------------------------------------------------------
// Row-range kernels, rows [r0, r1) of a DenseRows or IndexedRows map.

// acc += sum_i a_i x_i, each row read from memory once, its norm (when no
// cached norms are given but data_norm or clip needs them) computed from the
// same loads as its dot product.  Software-pipelined by blocks: the
// coefficients of block b are computed from its dot products, then, four
// rows at a time, the dot products of block b+1 (from memory, prefetched)
// alternate with the accumulation of block b (from L1), so the memory stream
// never waits for the arithmetic.  For float data the rows are summed in a
// float scratch row that is added into the double acc every kFlushRows rows:
// float sums never run over more rows than that (a term meets at most 21
// float roundings before its flush: the error bound of the sum in
// docs/guarantees.rst, "Floating point", counts on it).  The arithmetic
// depends only on the rows' positions in the map, so a subsample read
// through IndexedRows gives the bits of the same rows copied out and read
// densely.
constexpr index_t kFlushRows = 64;

template <class L, class T, class R>
inline void grad_sum_range(const R& rows, const T* y, const T* w, const double* norms,
                           index_t r0, index_t r1, index_t d, index_t block, const Options& o,
                           double* acc, T* scratch) {
    const bool need_norms = o.data_norm > 0.0 || o.clip > 0.0;
    // Cached norms are read, and none are computed in the pass, from cache
    // (Options::hot) and for consecutive float rows streaming from memory:
    // there, with the L2 prefetch of kPrefetchFarBytes, the pass without the
    // norms' arithmetic streams at the memory's pace (docs/performance.rst,
    // "Reading cached norms").  Otherwise, streaming (double rows; rows read through
    // an index, whose cached norms would be a gather of their own) the norms
    // are computed in the pass anyway (norms_in_pass below): they are used,
    // and cached ones are not read.  Either way the bits are the same:
    // row_norm() and the pass compute a norm the same way.
    constexpr bool stream_cached = std::is_same<T, float>::value && R::dense;
    const bool fused = need_norms && (norms == nullptr || (!o.hot && !stream_cached));
    const double* const weights = o.weights;  // sample weights, or null (loop-invariant)
    double zbuf[2][kMaxBlock], nbuf[2][kMaxBlock];
    // Labels of an indexed block, gathered when its dot products are taken.
    double ybuf[R::dense ? 1 : 2][R::dense ? 1 : kMaxBlock];
    T coef[kMaxBlock];
    constexpr bool direct = std::is_same<T, double>::value;
    T* bacc = direct ? reinterpret_cast<T*>(acc) : scratch;
    index_t pending = 0;  // rows in the float scratch row
    if (!direct) std::fill(bacc, bacc + d, T(0));
    const index_t row_bytes = d * index_t(sizeof(T));
    // Norms in the pass even when they are cached or unused, streaming double
    // rows or indexed ones from memory: the extra arithmetic hides under the
    // loads there; from cache it would cost a third of the time (kHotBytes).
    // Why: docs/performance.rst, "Norms computed in the pass anyway".
    const bool norms_in_pass = fused || (!o.hot && !stream_cached);

    // Labels and cached norms of the m rows from b into slot k's buffers
    // (IndexedRows only; dense blocks read them in place).
    auto gather = [&](index_t b, index_t m, int k) {
        if constexpr (!R::dense) {
            for (index_t r = 0; r < m; ++r) {
                const index_t i = rows.at(b + r);
                if (L::uses_labels) ybuf[k][r] = double(y[i]);
                if (need_norms && !fused) nbuf[k][r] = norms[i];
            }
        } else {
            (void)b, (void)m, (void)k;
        }
    };
    auto group = [&](index_t i, index_t m, int k, index_t g) {
        if (norms_in_pass)
            dot_group<true>(rows, i + g, m, w, d, zbuf[k] + g, nbuf[k] + g, true);
        else
            dot_group<false>(rows, i + g, m, w, d, zbuf[k] + g, nbuf[k] + g, true);
    };
    auto labels = [&](index_t b, int k) {
        if constexpr (R::dense) {
            (void)k;
            return y == nullptr ? nullptr : y + b;
        } else {
            (void)b;
            return static_cast<const double*>(ybuf[k]);
        }
    };
    auto block_norms = [&](index_t b, int k) -> const double* {
        if (!need_norms) return nullptr;
        if (R::dense && !fused) return norms + b;
        return nbuf[k];
    };

    int k = 0;
    index_t b = r0;
    index_t m = std::min(block, r1 - b);
    gather(b, m, k);
    for (index_t g = 0; g < m; g += 4) group(b, std::min<index_t>(4, m - g), k, g);
    while (m > 0) {
        coefficients<L>(rows, b, zbuf[k], labels(b, k), block_norms(b, k), w, m, d, o, coef);
        if (weights != nullptr) weigh(rows, b, m, weights, coef);
        const index_t nb = b + m;
        const index_t mn = std::min(block, r1 - nb);
        const index_t nn = nb + mn;  // the block after next: prefetched (indexed rows)
        const index_t mnn = std::min(block, r1 - nn);
        gather(nb, mn, k ^ 1);
        if constexpr (R::dense) {
            // Labels and cached norms are streams of their own, read by the
            // coefficients at the start of a block, where a miss would
            // stall everything behind it: fetch them a block ahead.
            if (mnn > 0) {
                if (L::uses_labels) prefetch_span(y + nn, mnn * index_t(sizeof(T)));
                if (need_norms && !fused) prefetch_span(norms + nn, mnn * index_t(sizeof(double)));
            }
        }
        for (index_t g = 0; g < std::max(m, mn); g += 4) {
            if constexpr (!R::dense)
                for (index_t r = g; r < std::min(g + 4, mnn); ++r) prefetch_span(rows(nn + r), row_bytes);
            // (double only: for float, the fused loop, with the norms'
            // conversions, needs more than the 16 vector registers; see
            // dot4_accumulate4.)
            if (std::is_same<T, double>::value && g + 4 <= mn && g + 4 <= m) {
                const T* x[4];
                for (index_t r = 0; r < 4; ++r) x[r] = rows(b + g + r);
                const bool pf = R::dense;
                if (norms_in_pass)
                    dot4_accumulate4<true>(rows(nb + g), rows(nb + g + 1), rows(nb + g + 2),
                                           rows(nb + g + 3), w, d, zbuf[k ^ 1] + g,
                                           nbuf[k ^ 1] + g, pf, x, coef + g, bacc);
                else
                    dot4_accumulate4<false>(rows(nb + g), rows(nb + g + 1), rows(nb + g + 2),
                                            rows(nb + g + 3), w, d, zbuf[k ^ 1] + g,
                                            nbuf[k ^ 1] + g, pf, x, coef + g, bacc);
                continue;
            }
            if (g < mn) group(nb, std::min<index_t>(4, mn - g), k ^ 1, g);
            if (g < m) {
                const index_t c = std::min<index_t>(4, m - g);
                const T* x[4];
                for (index_t r = 0; r < c; ++r) x[r] = rows(b + g + r);
                accumulate_rows(x, coef + g, c, d, bacc);
            }
        }
        pending += m;
        if (!direct && (pending + block > kFlushRows || mn == 0)) {
            for (index_t j = 0; j < d; ++j) acc[j] += double(bacc[j]);
            std::fill(bacc, bacc + d, T(0));
            pending = 0;
        }
        k ^= 1;
        b = nb;
        m = mn;
    }
}

template <class L, class T>
inline double value_rows(const T* X, const T* y, const T* w, const double* norms, index_t r0,
                         index_t r1, index_t d, const Options& o, index_t* nonfinite) {
    double total = 0.0;
    double z[4];
    index_t i = r0;
    for (; i + 4 <= r1; i += 4) {
        dot4(X + i * d, w, d, z);
        for (int r = 0; r < 4; ++r)
            total += loss_value<L>(X + (i + r) * d, z[r], y, w, norms, i + r, d, o, nonfinite);
    }
    for (; i < r1; ++i)
        total += loss_value<L>(X + i * d, dot(X + i * d, w, d), y, w, norms, i, d, o, nonfinite);
    return total;
}

// Rows of G = the per-example gradients; norms as in grad_sum_range.
template <class L, class T>
inline void grad_rows(const T* X, const T* y, const T* w, const double* norms, index_t r0,
                      index_t r1, index_t d, index_t block, const Options& o, T* G) {
    const bool need_norms = o.data_norm > 0.0 || o.clip > 0.0;
    const bool fused = need_norms && norms == nullptr;
    const DenseRows<T> rows{X, d};
    double z[kMaxBlock], nbuf[kMaxBlock];
    T coef[kMaxBlock];
    for (index_t b = r0; b < r1; b += block) {
        const index_t m = std::min(block, r1 - b);
        const T* xb = X + b * d;
        if (fused)
            dots<true>(rows, b, m, w, d, z, nbuf);
        else
            dots<false>(rows, b, m, w, d, z, nbuf);
        const double* nb = !need_norms ? nullptr : fused ? nbuf : norms + b;
        coefficients<L>(rows, b, z, y == nullptr ? nullptr : y + b, nb, w, m, d, o, coef);
        // The same products c * x_j (in T) that grad_sum accumulates.
        for (index_t r = 0; r < m; ++r) {
            const T* x = xb + r * d;
            T* g = G + (b + r) * d;
            for (index_t j = 0; j < d; ++j) g[j] = coef[r] * x[j];
        }
    }
}

template <class F>
inline void dispatch(int kind, const F& f) {
    switch (kind) {
        case kLogistic: f(Logistic{}); break;
        case kHinge: f(Hinge{}); break;
        case kSquared: f(Squared{}); break;
        case kAbsolute: f(Absolute{}); break;
        default: f(Linear{}); break;
    }
}

// Chunk kernels: rows r0..r1-1 for one loss L.  grad_sum: idx null reads
// rows r0..r1-1 of X, otherwise rows idx[r0..r1-1].
template <class L, class T>
inline void grad_sum_chunk(const T* X, const T* y, const T* w, const double* norms,
                           const std::int64_t* idx, index_t r0, index_t r1, index_t d,
                           index_t block, const Options& o, double* acc, T* scratch) {
    if (idx == nullptr)
        grad_sum_range<L>(DenseRows<T>{X, d}, y, w, norms, r0, r1, d, block, o, acc, scratch);
    else
        grad_sum_range<L>(IndexedRows<T>{X, d, idx}, y, w, norms, r0, r1, d, block, o, acc,
                          scratch);
}

// The rows kPrefetchFarBytes ahead are requested into L2 as the pass goes, a
// row's worth of lines per row (as the gradient pass does for float data;
// why: docs/performance.rst, "The row-norm pass's L2 prefetch").  Only
// prefetches: the bits are row_norm's.
template <class T>
inline void norms_chunk(const T* X, index_t r0, index_t r1, index_t d, double* out) {
    const index_t row_bytes = d * index_t(sizeof(T));
    for (index_t i = r0; i < r1; ++i) {
        const T* x = X + i * d;
        for (index_t b = 0; b < row_bytes; b += 64) prefetch_at<true>(x, kPrefetchFarBytes + b);
        out[i] = row_norm(x, d);
    }
}

// Their non-template entry points, one per loss and dtype (overloads on the
// loss type L), so that each instruction-set version is one function and
// flatten inlines the loss and every loop into it.  Declared here, defined
// (FASTERM_LOSSES_DEFINE_ENTRY_POINTS) in src/cpp/fasterm/losses_*.cpp:
// translation units of the _losses module that the build compiles in
// parallel, a function per loss (why: docs/building.rst, "Build cost").
// A new kernel gets an entry point here (declared for both namespaces by
// FASTERM_LOSSES_DECLARE_ALL, a dispatcher below) and its definition in the
// units; nothing in CMakeLists.txt changes.

#define FASTERM_LOSSES_GRAD_SUM_ENTRY(L, T)                                                     \
    void grad_sum_entry(L, const T* X, const T* y, const T* w, const double* norms,             \
                        const std::int64_t* idx, index_t r0, index_t r1, index_t d,             \
                        index_t block, const Options& o, double* acc, T* scratch)
#define FASTERM_LOSSES_VALUE_ENTRY(L, T)                                                        \
    double value_entry(L, const T* X, const T* y, const T* w, const double* norms, index_t r0,  \
                       index_t r1, index_t d, const Options& o, index_t* nonfinite)
#define FASTERM_LOSSES_GRAD_ENTRY(L, T)                                                         \
    void grad_entry(L, const T* X, const T* y, const T* w, const double* norms, index_t r0,     \
                    index_t r1, index_t d, index_t block, const Options& o, T* G)
#define FASTERM_LOSSES_NORMS_ENTRY(T) \
    void norms_entry(const T* X, index_t r0, index_t r1, index_t d, double* out)

#define FASTERM_LOSSES_DECLARE_ENTRY_POINTS(L, T, attr) \
    attr FASTERM_LOSSES_GRAD_SUM_ENTRY(L, T);           \
    attr FASTERM_LOSSES_VALUE_ENTRY(L, T);              \
    attr FASTERM_LOSSES_GRAD_ENTRY(L, T);

#define FASTERM_LOSSES_DEFINE_ENTRY_POINTS(L, T)                                              \
    FASTERM_LOSSES_ISA_BEGIN                                                                   \
    FASTERM_LOSSES_CLONES FASTERM_LOSSES_GRAD_SUM_ENTRY(L, T) {                               \
        grad_sum_chunk<L>(X, y, w, norms, idx, r0, r1, d, block, o, acc, scratch);             \
    }                                                                                          \
    FASTERM_LOSSES_CLONES FASTERM_LOSSES_VALUE_ENTRY(L, T) {                                  \
        return value_rows<L>(X, y, w, norms, r0, r1, d, o, nonfinite);                         \
    }                                                                                          \
    FASTERM_LOSSES_CLONES FASTERM_LOSSES_GRAD_ENTRY(L, T) {                                   \
        grad_rows<L>(X, y, w, norms, r0, r1, d, block, o, G);                                  \
    }                                                                                          \
    FASTERM_LOSSES_ISA_END
#define FASTERM_LOSSES_DEFINE_NORMS_ENTRY(T)                                         \
    FASTERM_LOSSES_ISA_BEGIN                                                          \
    FASTERM_LOSSES_CLONES FASTERM_LOSSES_NORMS_ENTRY(T) { norms_chunk(X, r0, r1, d, out); } \
    FASTERM_LOSSES_ISA_END

#define FASTERM_LOSSES_DECLARE_ALL(T, attr)                     \
    FASTERM_LOSSES_DECLARE_ENTRY_POINTS(Logistic, T, attr)      \
    FASTERM_LOSSES_DECLARE_ENTRY_POINTS(Hinge, T, attr)         \
    FASTERM_LOSSES_DECLARE_ENTRY_POINTS(Squared, T, attr)       \
    FASTERM_LOSSES_DECLARE_ENTRY_POINTS(Absolute, T, attr)      \
    FASTERM_LOSSES_DECLARE_ENTRY_POINTS(Linear, T, attr)        \
    attr FASTERM_LOSSES_NORMS_ENTRY(T);
#if defined(FASTERM_LOSSES_DISPATCH)
namespace v3 {
FASTERM_LOSSES_DECLARE_ALL(double, FASTERM_ISA_TARGET(v3))
FASTERM_LOSSES_DECLARE_ALL(float, FASTERM_ISA_TARGET(v3))
}  // namespace v3
namespace baseline {
FASTERM_LOSSES_DECLARE_ALL(double, )
FASTERM_LOSSES_DECLARE_ALL(float, )
}  // namespace baseline

template <class... A>
inline void grad_sum_entry(const A&... a) {
    FASTERM_ISA_USE(v3) ? v3::grad_sum_entry(a...) : baseline::grad_sum_entry(a...);
}
template <class... A>
inline double value_entry(const A&... a) {
    return FASTERM_ISA_USE(v3) ? v3::value_entry(a...) : baseline::value_entry(a...);
}
template <class... A>
inline void grad_entry(const A&... a) {
    FASTERM_ISA_USE(v3) ? v3::grad_entry(a...) : baseline::grad_entry(a...);
}
template <class... A>
inline void norms_entry(const A&... a) {
    FASTERM_ISA_USE(v3) ? v3::norms_entry(a...) : baseline::norms_entry(a...);
}
#else
FASTERM_LOSSES_DECLARE_ALL(double, )
FASTERM_LOSSES_DECLARE_ALL(float, )
#endif
#undef FASTERM_LOSSES_DECLARE_ALL

// ---------------------------------------------------------------------------
// Public kernels.  Inputs are assumed validated: C-contiguous, finite, n >= 1,
// d >= 1, y non-null for losses that use labels.  norms: the row norms of X
// (in double, as row_norms gives them), or null: grad_sum, grad_sum_rows and
// grad_matrix then compute them in their pass over X (the same bits);
// value_sum needs them whenever data_norm > 0.  They may throw std::bad_alloc
// (buffers of O(d) and at most kPartialBudget doubles).

namespace detail {
template <class T>
void grad_sum(int kind, const T* X, const T* y, const T* w, const double* norms,
              const std::int64_t* idx, index_t n, index_t d, const Options& o, T* out,
              int n_threads) {
    const Plan p = make_plan(n, d, sizeof(T));
    const int workers = worker_count(p.nchunks, n_threads);
    Options oh = o;
    // (A subsample's rows are scattered over a larger X: not counted as hot.)
    oh.hot = idx == nullptr && n * d * index_t(sizeof(T)) <= kHotBytes;
    std::vector<double> partial(std::size_t(p.nchunks * d), 0.0);
    std::vector<T> scratch(std::is_same<T, double>::value ? 0 : std::size_t(workers * d));
    for_each_chunk(p.nchunks, workers, [&](index_t k, int t) {
        const index_t r0 = k * p.chunk, r1 = std::min(n, r0 + p.chunk);
        T* const sc = scratch.empty() ? nullptr : &scratch[t * d];
        dispatch(kind, [&](auto loss) {
            grad_sum_entry(loss, X, y, w, norms, idx, r0, r1, d, p.block, oh, &partial[k * d], sc);
        });
    });
    for (index_t j = 0; j < d; ++j) {
        double s = 0.0;
        for (index_t k = 0; k < p.nchunks; ++k) s += partial[k * d + j];
        out[j] = T(s);
    }
}
}  // namespace detail

// out[j] = sum_i a_i x_ij: the sum of the (clipped) per-example gradients.
template <class T>
void grad_sum(int kind, const T* X, const T* y, const T* w, const double* norms, index_t n,
              index_t d, Options o, T* out, int n_threads) {
    detail::grad_sum(kind, X, y, w, norms, nullptr, n, d, o, out, n_threads);
}

// The same sum over the rows idx[0..m-1] of the n x d matrix X (each in
// [0, n); y and norms are X's), read in place: bit-for-bit grad_sum of the
// m x d matrix X[idx] with y[idx] and norms[idx].  m = 0 gives zeros.
template <class T>
void grad_sum_rows(int kind, const T* X, const T* y, const T* w, const double* norms,
                   const std::int64_t* idx, index_t m, index_t d, Options o, T* out,
                   int n_threads) {
    if (m == 0) {
        std::fill(out, out + d, T(0));
        return;
    }
    detail::grad_sum(kind, X, y, w, norms, idx, m, d, o, out, n_threads);
}

// sum_i phi(z_i, y_i); *nonfinite (if not null) receives the number of
// rows whose margin is not finite.
template <class T>
double value_sum(int kind, const T* X, const T* y, const T* w, const double* norms, index_t n,
                 index_t d, Options o, int n_threads, index_t* nonfinite = nullptr) {
    const Plan p = make_plan(n, d, sizeof(T));
    std::vector<double> partial(std::size_t(p.nchunks), 0.0);
    std::vector<index_t> bad(std::size_t(p.nchunks), 0);
    for_each_chunk(p.nchunks, worker_count(p.nchunks, n_threads), [&](index_t k, int) {
        const index_t r0 = k * p.chunk, r1 = std::min(n, r0 + p.chunk);
        dispatch(kind, [&](auto loss) {
            partial[k] = value_entry(loss, X, y, w, norms, r0, r1, d, o, &bad[k]);
        });
    });
    double s = 0.0;
    index_t nb = 0;
    for (index_t k = 0; k < p.nchunks; ++k) {
        s += partial[k];
        nb += bad[k];
    }
    if (nonfinite) *nonfinite = nb;
    return s;
}

// G (n x d): row i is the (clipped) gradient of example i.
template <class T>
void grad_matrix(int kind, const T* X, const T* y, const T* w, const double* norms, index_t n,
                 index_t d, Options o, T* G, int n_threads) {
    const Plan p = make_plan(n, d, sizeof(T));
    for_each_chunk(p.nchunks, worker_count(p.nchunks, n_threads), [&](index_t k, int) {
        const index_t r0 = k * p.chunk, r1 = std::min(n, r0 + p.chunk);
        dispatch(kind, [&](auto loss) { grad_entry(loss, X, y, w, norms, r0, r1, d, p.block, o, G); });
    });
}

// out[i] = ||x_i||_2 in double (overflow-safe).
template <class T>
void row_norms(const T* X, index_t n, index_t d, double* out, int n_threads) {
    const Plan p = make_plan(n, d, sizeof(T));
    for_each_chunk(p.nchunks, worker_count(p.nchunks, n_threads), [&](index_t k, int) {
        const index_t r0 = k * p.chunk, r1 = std::min(n, r0 + p.chunk);
        norms_entry(X, r0, r1, d, out);
    });
}

}  // namespace losses
}  // namespace fasterm
