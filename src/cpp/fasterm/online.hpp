// Randomized weighted majority (multiplicative weights, Hedge) in log space.
//
// The learner plays expert i with probability proportional to
// exp(-eta L_i), L_i the cumulative loss of expert i (Dwork & Roth, Alg. 16).
// Its state (struct RWMState, arrays owned by the caller):
//
//   D[0..kp)   the log-domain truth: D_i = L_i - c_t for a common shift c_t
//              with min_i D_i = m.  Re-centred every round, so the numbers
//              stay of the size of the *gaps* between experts, not of the run
//              length, and precision does not decay over long runs.
//              D[k..kp) = +inf (padding, weight 0).
//   cum[0..k)  the unshifted cumulative losses L_i (reported only).
//   w[0..kp)   the weights the next draw uses, w_i = exp(-eta (D_i - r)) for
//              a reference r <= m, so w_i <= 1 (no overflow) and the best
//              expert's weight is >= exp(-31/4) (no underflow, see below);
//              w[k..kp) = 0.
//   bs[0..nb)  block sums of w over blocks of BLOCK = 32 entries; total their
//              sum S, accumulated block by block in index order.
//   m, since   min_i D_i; rounds since w was last computed exactly.
//
// A round:     u = next_double(rng)                 ONE uniform per draw
//              a = pick(w, bs, u * S)               inversion, O(k/32 + 32)
//              step(loss row)                       O(k): D, cum, m, w, bs, S
//
// step() has two ways of producing the next weights, chosen per row:
//  * exact:   w_i = exp(-eta (D_i - m)), r = m, by a vectorised exp (Cody-Waite
//             reduction, degree-13 polynomial, ~1 ulp): best weight exactly 1,
//             weights below exp(-707) flushed to 0 (their probability is
//             < 1e-307, far below what a 53-bit uniform resolves);
//  * incremental: w_i <- w_i * exp(-eta (l_i - c)), c = min_i l_i (or the
//             declared lower bound of the losses), when the row's spread
//             a = eta (max_i l_i - c) is at most 1/4: the factor's argument
//             lies in [-a, 0], where a Taylor polynomial of degree 7
//             (a <= 1/32), 10 (a <= 1/8) or 12 (a <= 1/4) is exact to
//             < 0.2 ulp with no range reduction (remainders a^8/8! < 2.3e-17,
//             a^11/11! < 3e-18, a^13/13! < 2.5e-18) — about half the exact
//             path's work.  In terms of the re-centred D the reference becomes
//             r' = r - m + c <= c <= m' (so still w <= 1), and the best weight
//             loses at most a factor exp(-a) per round.
// The exact path runs at least every SYNC = 32 rounds (and whenever a > 1/4),
// so the incremental weights never drift more than ~32 * 1.5 ulp (~1e-14
// relative) from exp(-eta (D_i - r)), and the best one stays >= exp(-31/4).
//
// rwm_run does choose/step for each row; the streaming learner calls the same
// two functions one at a time, so a batch run and a streaming run from the
// same generator state produce the same actions, bit for bit.
//
// No Python here; the Cython layer validates shapes and parameters.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "numpy/random/bitgen.h"
#include "fasterm/simd.hpp"

// The O(k) passes exist in three versions picked at load time (GCC function
// multiversioning on x86-64 Linux): SSE2 (2 doubles per vector), x86-64-v3
// (AVX2 + FMA, 4) and x86-64-v4 (AVX-512, 8), chosen by ISA level, not CPU
// model.  They compute the same operations in the same order, except that the
// v3/v4 versions may contract a*b + c into a fused multiply-add: weights can
// differ in the last bit between machines, which changes a sampled action only
// when the uniform falls within a few ulps of a boundary (probability ~1e-15
// per round).  On one machine every call goes through the same version, so
// batch and streaming runs agree exactly.  Elsewhere one version is compiled,
// with the widest vectors the compiler's target allows.  The vector types are
// GCC/Clang extensions.  Where the three versions are built: simd.hpp
// (FASTERM_MULTIVERSIONING; -DFASTERM_NO_MULTIVERSIONING builds one).
#if !defined(__GNUC__)
#error "fasterm/online.hpp needs GCC or Clang (vector extensions)"
#endif

namespace fasterm {

struct RWMState {
    double* D;
    double* cum;
    double* w;
    double* bs;
    std::size_t k;
    double eta;
    double lo, hi;  // losses are clipped to [lo, hi]; both finite: a declared range
    double m;
    double total;
    int since;
};

namespace rwm {

constexpr std::size_t LANES = 8;          // lanes of the block-sum accumulators
constexpr std::size_t BLOCK = 4 * LANES;  // entries per block sum
constexpr int SYNC = 32;                  // exact recomputation at least this often
constexpr double A_DEG7 = 1.0 / 32.0;     // largest spread eta * (max - min) of a
constexpr double A_DEG10 = 1.0 / 8.0;     // row for the incremental polynomial of
constexpr double A_DEG12 = 1.0 / 4.0;     // each degree

inline std::size_t n_blocks(std::size_t k) noexcept { return (k + BLOCK - 1) / BLOCK; }

// W doubles as one vector (GCC/Clang vector extensions); W = 1, plain scalars,
// is the scalar twin exp_nonpos_fill uses.
template <int W>
struct vec {
    typedef typename simd::Vec<double, W>::type d;
    typedef typename simd::Vec<double, W>::bits i;
    typedef typename simd::Vec<float, W>::type f;
};

template <int W>
FASTERM_ALWAYS_INLINE typename vec<W>::d load(const double* p) noexcept
{
    typename vec<W>::d v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <int W>
FASTERM_ALWAYS_INLINE typename vec<W>::d load(const float* p) noexcept
{
    if constexpr (W == 1) {
        return static_cast<double>(*p);
    } else {
        typename vec<W>::f v;
        std::memcpy(&v, p, sizeof v);
        return __builtin_convertvector(v, typename vec<W>::d);
    }
}

template <class V>
FASTERM_ALWAYS_INLINE void store(double* p, V v) noexcept
{
    std::memcpy(p, &v, sizeof v);
}

// mask ? a : b, lanewise.  Comparisons of vectors give all-ones / all-zeros
// integer lanes; a bitwise select compiles to a blend on every ISA (GCC's
// generic lowering of a vector ?: is elementwise when the width is not native).
template <class V, class I>
FASTERM_ALWAYS_INLINE V sel(I mask, V a, V b) noexcept
{
    return __builtin_bit_cast(V, (mask & __builtin_bit_cast(I, a)) | (~mask & __builtin_bit_cast(I, b)));
}
FASTERM_ALWAYS_INLINE double sel(bool mask, double a, double b) noexcept { return mask ? a : b; }

template <class V>
FASTERM_ALWAYS_INLINE V splat(double x) noexcept
{
    return V{} + x;
}

template <class V>
FASTERM_ALWAYS_INLINE double lane(const V& v, int j) noexcept
{
    if constexpr (sizeof(V) == sizeof(double)) {
        (void)j;
        return v;
    } else {
        return v[j];
    }
}

// NaN or +-inf in any lane (x - x is NaN exactly for those).
template <class V>
FASTERM_ALWAYS_INLINE auto nonfinite(V x) noexcept
{
    return (x - x) != 0.0;
}

template <class M>
FASTERM_ALWAYS_INLINE bool any(M mask, int w) noexcept
{
    bool out = false;
    for (int j = 0; j < w; ++j) out |= lane(mask, j) != 0;
    return out;
}
FASTERM_ALWAYS_INLINE bool any(bool mask, int) noexcept { return mask; }

// exp(x) for x <= 0, within ~1 ulp; exactly 1 at x = 0 and 0 for x < -707
// (and for x = -inf).  Branch free; V is double or a vector of doubles, I the
// matching uint64 type.
//   x = n ln2 + r, |r| <= ln2 / 2: n from the round-to-nearest of x log2(e)
//   by the 1.5 * 2^52 shifter (its low mantissa bits are n in two's
//   complement), r by Cody-Waite with ln2 split so that n * LN2_HI is exact;
//   exp(r) by its Taylor polynomial of degree 13 (remainder < 0.347^14/14! <
//   2e-17, Horner: fewest operations, and this loop is throughput bound);
//   2^n added to the exponent field (n >= -1020: the result stays normal).
template <class V, class I>
FASTERM_ALWAYS_INLINE V exp_nonpos(V x) noexcept
{
    const V zero{};
    const auto ok = x >= -707.0;  // false for -inf
    x = sel(ok, x, splat<V>(-707.0));
    V shifted;
    const V r = simd::exp_reduce(x, shifted);
    const V p = simd::exp_taylor<13>(r);
    const I bits = __builtin_bit_cast(I, p) + (__builtin_bit_cast(I, shifted) << 52);
    return sel(ok, __builtin_bit_cast(V, bits), zero);
}

// Taylor polynomial of exp of degree DEG at x (Horner; simd.hpp); for
// |x| <= a its error is below a^(DEG+1)/(DEG+1)! (plus rounding, < 1 ulp).
using simd::exp_taylor;

FASTERM_ALWAYS_INLINE double clip(double v, double lo, double hi) noexcept
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

template <class V>
FASTERM_ALWAYS_INLINE V clip(V v, V lo, V hi) noexcept
{
    v = sel(v < lo, lo, v);
    return sel(v > hi, hi, v);
}

// Prefetch one cache line of the next loss row per 8 entries processed, so
// that its load from memory overlaps the current (compute-bound) pass.
struct Prefetcher {
    const char* next;
    std::size_t bytes, done = 0;
    FASTERM_ALWAYS_INLINE void step() noexcept
    {
        if (next && done < bytes) {
            __builtin_prefetch(next + done);
            done += 64;
        }
    }
};

// Block sums of w[0..nb*BLOCK) and their total S = (...(bs_0 + bs_1) + ...).
// Lane j of a block's accumulator sums entries j, 8 + j, 16 + j, 24 + j in
// that order whatever the vector width, and the lanes are added in a fixed
// tree; pick() repeats the running sum over bs exactly, so it reaches S.
template <int W>
FASTERM_ALWAYS_INLINE double block_sums(const double* __restrict w, std::size_t nb, double* __restrict bs) noexcept
{
    using V = typename vec<W>::d;
    constexpr std::size_t NV = LANES / W;
    double total = 0.0;
    for (std::size_t b = 0; b < nb; ++b) {
        V acc[NV];
        for (std::size_t v = 0; v < NV; ++v) {
            const double* p = w + b * BLOCK + v * W;
            acc[v] = ((load<W>(p) + load<W>(p + LANES)) + load<W>(p + 2 * LANES)) + load<W>(p + 3 * LANES);
        }
        double l[LANES];
        for (std::size_t v = 0; v < NV; ++v)
            for (int j = 0; j < W; ++j) l[v * W + j] = lane(acc[v], j);
        bs[b] = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
        total += bs[b];
    }
    return total;
}

// Exact weights w_i = exp(-eta (D_i - m)) over all kp entries (the +inf
// padding gives 0), then block sums; returns S.
template <int W>
FASTERM_ALWAYS_INLINE double exact_weights_impl(const double* __restrict D, std::size_t nb, double m, double eta,
                                         double* __restrict w, double* __restrict bs, Prefetcher pf) noexcept
{
    using V = typename vec<W>::d;
    using I = typename vec<W>::i;
    const std::size_t kp = nb * BLOCK;
    for (std::size_t i = 0; i < kp; i += LANES) {
        pf.step();
        for (std::size_t v = 0; v < LANES; v += W) {
            store(w + i + v, exp_nonpos<V, I>((m - load<W>(D + i + v)) * eta));
        }
    }
    return block_sums<W>(w, nb, bs);
}

struct RowStats {
    double lo, hi;
    bool bad;
};

// min and max of one loss row, and whether it holds a NaN or an infinity.
template <int W, class T>
FASTERM_ALWAYS_INLINE RowStats row_stats(const T* __restrict loss, std::size_t k) noexcept
{
    using V = typename vec<W>::d;
    constexpr double INF = std::numeric_limits<double>::infinity();
    V mn = splat<V>(INF), mx = splat<V>(-INF);
    decltype(nonfinite(mn)) nf{};
    std::size_t i = 0;
    for (; i + W <= k; i += W) {
        const V v = load<W>(loss + i);
        nf |= nonfinite(v);
        mn = sel(v < mn, v, mn);
        mx = sel(v > mx, v, mx);
    }
    RowStats out{INF, -INF, any(nf, W)};
    for (; i < k; ++i) {
        const double v = static_cast<double>(loss[i]);
        out.bad |= !(v - v == 0.0);
        out.lo = v < out.lo ? v : out.lo;
        out.hi = v > out.hi ? v : out.hi;
    }
    for (int j = 0; j < W; ++j) {
        out.lo = lane(mn, j) < out.lo ? lane(mn, j) : out.lo;
        out.hi = lane(mx, j) > out.hi ? lane(mx, j) : out.hi;
    }
    return out;
}

// The shared part of both update passes for one vector of losses: clip (a
// declared range), D_i <- (D_i - m) + l_i, cum_i += l_i, running minimum and
// non-finite flag.  Returns the clipped losses.
template <int W, bool CLIP, class T, class V, class M>
FASTERM_ALWAYS_INLINE V update_lanes(double* __restrict D, double* __restrict cum, const T* __restrict loss,
                              std::size_t i, double m, V vlo, V vhi, V& mn, M& nf) noexcept
{
    V v = load<W>(loss + i);
    nf |= nonfinite(v);
    if constexpr (CLIP) v = clip(v, vlo, vhi);
    const V d = (load<W>(D + i) - m) + v;
    store(D + i, d);
    store(cum + i, load<W>(cum + i) + v);
    mn = sel(d < mn, d, mn);
    return v;
}

// One round's update.  DEG = 0: exact path (update D, then exact weights);
// DEG > 0: incremental path, fused with the update (w_i *= exp_taylor<DEG>(
// -eta (l_i - c))), then block sums.  Sets s.m, s.total; *bad if a loss was
// not finite before clipping (state then partly updated: the caller restores).
template <int W, int DEG, bool CLIP, class T>
FASTERM_ALWAYS_INLINE void update_pass(RWMState& s, const T* __restrict loss, double c, Prefetcher pf,
                                bool* bad) noexcept
{
    using V = typename vec<W>::d;
    constexpr double INF = std::numeric_limits<double>::infinity();
    const std::size_t k = s.k, nb = n_blocks(k);
    const double m = s.m, eta = s.eta;
    double* __restrict D = s.D;
    double* __restrict cum = s.cum;
    double* __restrict w = s.w;
    const V vlo = splat<V>(s.lo), vhi = splat<V>(s.hi), vc = splat<V>(c);
    V mn = splat<V>(INF);
    decltype(nonfinite(mn)) nf{};
    std::size_t i = 0;
    for (; i + LANES <= k; i += LANES) {
        if constexpr (DEG > 0) pf.step();
        for (std::size_t j = 0; j < LANES; j += W) {
            const V v = update_lanes<W, CLIP>(D, cum, loss, i + j, m, vlo, vhi, mn, nf);
            if constexpr (DEG > 0) store(w + i + j, load<W>(w + i + j) * exp_taylor<DEG>((vc - v) * eta));
        }
    }
    double mins = INF;
    bool b = any(nf, W);
    for (; i < k; ++i) {
        const double raw = static_cast<double>(loss[i]);
        b |= !(raw - raw == 0.0);
        const double v = CLIP ? clip(raw, s.lo, s.hi) : raw;
        const double d = (D[i] - m) + v;
        D[i] = d;
        cum[i] += v;
        mins = d < mins ? d : mins;
        if constexpr (DEG > 0) w[i] *= exp_taylor<DEG>((c - v) * eta);
    }
    for (int j = 0; j < W; ++j) mins = lane(mn, j) < mins ? lane(mn, j) : mins;
    *bad = b;
    s.m = mins;
    if constexpr (DEG > 0) {
        s.total = block_sums<W>(w, nb, s.bs);
        s.since += 1;
    } else {
        s.total = exact_weights_impl<W>(D, nb, mins, eta, w, s.bs, pf);
        s.since = 0;
    }
}

// Choose the path for one row and run it.
template <int W, bool RANGED, class T>
FASTERM_ALWAYS_INLINE bool step_impl(RWMState& s, const T* loss, const char* next, std::size_t next_bytes) noexcept
{
    double c, a;
    if constexpr (RANGED) {
        c = s.lo;
        a = s.eta * (s.hi - s.lo);
    } else {
        const RowStats st = row_stats<W>(loss, s.k);
        if (st.bad) return false;
        c = st.lo;
        a = s.eta * (st.hi - st.lo);
    }
    const Prefetcher pf{next, next_bytes};
    bool bad = false;
    if (s.since + 1 < SYNC && a <= A_DEG7) {
        update_pass<W, 7, RANGED>(s, loss, c, pf, &bad);
    } else if (s.since + 1 < SYNC && a <= A_DEG10) {
        update_pass<W, 10, RANGED>(s, loss, c, pf, &bad);
    } else if (s.since + 1 < SYNC && a <= A_DEG12) {
        update_pass<W, 12, RANGED>(s, loss, c, pf, &bad);
    } else {
        update_pass<W, 0, RANGED>(s, loss, c, pf, &bad);
    }
    return !bad;
}

template <int W>
FASTERM_ALWAYS_INLINE double exact_weights_v(const double* D, std::size_t nb, double m, double eta, double* w,
                                      double* bs) noexcept
{
    return exact_weights_impl<W>(D, nb, m, eta, w, bs, Prefetcher{nullptr, 0});
}

template <int W>
FASTERM_ALWAYS_INLINE bool step_f64_v(RWMState& s, const double* loss, const char* next, std::size_t nbytes) noexcept
{
    const bool ranged = std::isfinite(s.lo) && std::isfinite(s.hi);
    return ranged ? step_impl<W, true>(s, loss, next, nbytes) : step_impl<W, false>(s, loss, next, nbytes);
}

template <int W>
FASTERM_ALWAYS_INLINE bool step_f32_v(RWMState& s, const float* loss, const char* next, std::size_t nbytes) noexcept
{
    const bool ranged = std::isfinite(s.lo) && std::isfinite(s.hi);
    return ranged ? step_impl<W, true>(s, loss, next, nbytes) : step_impl<W, false>(s, loss, next, nbytes);
}

#if FASTERM_MULTIVERSIONING
#define FASTERM_VERSIONS(RET, NAME, PARAMS, ARGS)                                                  \
    __attribute__((target("default"))) static RET NAME PARAMS noexcept { return NAME##_v<2> ARGS; } \
    __attribute__((target("arch=x86-64-v3"))) static RET NAME PARAMS noexcept                     \
    {                                                                                             \
        return NAME##_v<4> ARGS;                                                                  \
    }                                                                                             \
    __attribute__((target("arch=x86-64-v4"))) static RET NAME PARAMS noexcept                     \
    {                                                                                             \
        return NAME##_v<8> ARGS;                                                                  \
    }
#else
// One version, as wide as the compiler's target allows (building with
// -DFASTERM_NO_MULTIVERSIONING and -march=... is how the tests reach each width).
#if defined(__AVX512F__)
#define FASTERM_WIDTH 8
#elif defined(__AVX2__)
#define FASTERM_WIDTH 4
#else
#define FASTERM_WIDTH 2
#endif
#define FASTERM_VERSIONS(RET, NAME, PARAMS, ARGS) \
    static RET NAME PARAMS noexcept { return NAME##_v<FASTERM_WIDTH> ARGS; }
#endif

FASTERM_VERSIONS(double, exact_weights,
                 (const double* D, std::size_t nb, double m, double eta, double* w, double* bs),
                 (D, nb, m, eta, w, bs))
FASTERM_VERSIONS(bool, step_f64, (RWMState & s, const double* loss, const char* next, std::size_t nbytes),
                 (s, loss, next, nbytes))
FASTERM_VERSIONS(bool, step_f32, (RWMState & s, const float* loss, const char* next, std::size_t nbytes),
                 (s, loss, next, nbytes))

#undef FASTERM_VERSIONS

// The index i whose interval [c_{i-1}, c_i) of the cumulative weights holds
// target = u * S, u in [0, 1): the first block whose running block sum
// exceeds target, then the first entry of that block whose running sum does.
// A zero weight never increases the running sum, so it is never picked.  The
// within-block sums are rounded differently from the block sum; if rounding
// leaves target at or above the block's last running sum (a window of a few
// ulps), the block's last positive entry is picked.
inline std::size_t pick(const double* w, const double* bs, std::size_t nb, double target) noexcept
{
    double c = 0.0;
    std::size_t b = 0;
    for (; b + 1 < nb; ++b) {
        const double next = c + bs[b];
        if (next > target) break;
        c = next;
    }
    const double* p = w + b * BLOCK;
    std::size_t last = 0;
    for (std::size_t j = 0; j < BLOCK; ++j) {
        if (p[j] > 0.0) last = j;
        c += p[j];
        if (c > target) return b * BLOCK + j;
    }
    return b * BLOCK + last;
}

inline bool step(RWMState& s, const double* loss, const char* next, std::size_t nbytes) noexcept
{
    return step_f64(s, loss, next, nbytes);
}

inline bool step(RWMState& s, const float* loss, const char* next, std::size_t nbytes) noexcept
{
    return step_f32(s, loss, next, nbytes);
}

}  // namespace rwm

// ---------------------------------------------------------------------------
// Entry points used by fasterm.learning._online.  D and w have kp = n_blocks(k) * BLOCK
// entries, D[k..kp) = +inf and w[k..kp) = 0; bs has n_blocks(k).
// ---------------------------------------------------------------------------

inline std::size_t rwm_padded(std::size_t k) noexcept { return rwm::n_blocks(k) * rwm::BLOCK; }

// (Re)compute w, bs and S exactly from D and m (a fresh learner: D = 0).
inline void rwm_reset_weights(RWMState& s) noexcept
{
    s.total = rwm::exact_weights(s.D, rwm::n_blocks(s.k), s.m, s.eta, s.w, s.bs);
    s.since = 0;
}

// One draw: one uniform from rng, inversion.  The caller holds the bit
// generator's lock.
inline std::int64_t rwm_choose(const RWMState& s, bitgen_t* rng) noexcept
{
    const double u = rng->next_double(rng->state);
    return static_cast<std::int64_t>(rwm::pick(s.w, s.bs, rwm::n_blocks(s.k), u * s.total));
}

// One loss vector; false (state partly updated) if it holds a NaN or an
// infinity.
inline bool rwm_update(RWMState& s, const double* loss) noexcept { return rwm::step(s, loss, nullptr, 0); }

// `rows` rounds over the C-contiguous (rows, k) loss matrix L: for each row,
// rwm_choose, record, rwm_update (plus a prefetch of the next row, which
// changes no value).  actions / incurred / counts may be null.  Returns rows,
// or -(t + 1) if row t holds a NaN or an infinity; the state and the
// generator have then advanced through round t, and the caller restores them
// (fasterm.online does).
template <class T>
std::ptrdiff_t rwm_run(RWMState& s, const T* L, std::size_t rows, bitgen_t* rng, std::int64_t* actions,
                       double* incurred, std::int64_t* counts) noexcept
{
    const std::size_t k = s.k;
    for (std::size_t t = 0; t < rows; ++t) {
        const T* row = L + t * k;
        const std::size_t a = static_cast<std::size_t>(rwm_choose(s, rng));
        if (actions) actions[t] = static_cast<std::int64_t>(a);
        if (incurred) incurred[t] = rwm::clip(static_cast<double>(row[a]), s.lo, s.hi);
        if (counts) counts[a] += 1;
        const char* next = t + 1 < rows ? reinterpret_cast<const char*>(row + k) : nullptr;
        if (!rwm::step(s, row, next, k * sizeof(T))) return -static_cast<std::ptrdiff_t>(t) - 1;
    }
    return static_cast<std::ptrdiff_t>(rows);
}

// The scalar exp_nonpos over an array (for the accuracy tests).
inline void exp_nonpos_fill(const double* x, double* out, std::size_t n) noexcept
{
    for (std::size_t i = 0; i < n; ++i) out[i] = rwm::exp_nonpos<double, std::uint64_t>(x[i]);
}

}  // namespace fasterm
