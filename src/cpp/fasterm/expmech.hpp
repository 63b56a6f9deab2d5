// Exact samplers for the exponential mechanism over a finite range and for the
// one-dimensional private median, quantile and mean (fasterm.mechanisms,
// fasterm.mechanisms.univariate).
//
// Header-only, no Python.  The Cython layer validates everything (finite data,
// a < b, epsilon > 0, scores without NaN or -inf) and hands over the caller's
// bitgen_t, taken under its lock with the GIL released.
//
// One idea serves the three discrete choices (an index of a score vector, a
// piece of the median's piecewise-exponential density, a gap of the rank
// quantile): weights are produced in blocks of kBlock, normalised so that the
// largest is about 1 (log domain: the best score, the mode of the density), and
// only the block sums are kept.  A draw is one uniform U: the block holding
// U * total is found in the block prefix sums, that block's weights are
// recomputed by the same code, and the index is found by a scan.  Memory is
// O(n / kBlock) and a batch of draws costs O(kBlock + log n) each after the
// O(n) pass.
//
// The weights are exponentials of non-positive numbers, computed by
// exp_nonpos(): a branch-free exp/expm1 pair that the compiler vectorises
// (libm's exp is a scalar call).  Weights below e^-708 (finite range, rank
// quantile) or 2^-900 (median) times the largest are set to 0 — they would be
// subnormal, and the rounding moves less than 1e-250 of probability; no other
// approximation is made.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "numpy/random/bitgen.h"
#include "fasterm/simd.hpp"
#include "fasterm/truncnorm.hpp"

namespace fasterm {

constexpr std::ptrdiff_t kBlock = 256;
constexpr std::ptrdiff_t kPad = kBlock + 4;  // room to pad a block to a multiple of 4

// The sampling entry points are compiled three times on x86-64 Linux with
// GCC, for AVX-512F, AVX2 and the baseline, and picked at load time (an
// ifunc); everything hot is forced inline into them so that it is compiled
// for each.  The module is built with -ffp-contract=off (CMakeLists.txt): no
// FMA contraction, so every version performs the same IEEE operations lane by
// lane and a seed gives the same bits whichever version the CPU picks.  Each
// version pays for itself (docs/building.rst, "Build cost").
// -DFASTERM_NO_MULTIVERSIONING builds the baseline alone (simd.hpp).
#define FASTERM_EXPMECH_CLONES FASTERM_TARGET_CLONES("avx512f", "avx2", "default")

// 0, 1, ..., kBlock - 1 as doubles: offsets inside a block without an
// int64 -> double conversion, which SSE2 cannot vectorise.
struct BlockIota {
    double v[kBlock];
    constexpr BlockIota() : v()
    {
        for (std::ptrdiff_t i = 0; i < kBlock; ++i) v[i] = static_cast<double>(i);
    }
};
inline constexpr BlockIota kIota{};

// exp and expm1 of x <= 0, branch-free, and the fixed-order block sum: one
// implementation each in simd.hpp, shared with hitrun.hpp.
using simd::bits_to_double;
using simd::block_sum;
using simd::double_to_bits;
using simd::exp_nonpos;
using simd::expm1_poly;

constexpr double kHalfLn2 = 0.34657359027997264;  // below ln2 / 2

// ---------------------------------------------------------------------------
// Inversion over block sums.
// ---------------------------------------------------------------------------
class BlockCdf {
public:
    void clear(std::ptrdiff_t expected_blocks)
    {
        cum_.clear();
        cum_.reserve(static_cast<std::size_t>(expected_blocks) + 1);
        cum_.push_back(0.0);
    }
    void push(double block_sum) { cum_.push_back(cum_.back() + block_sum); }
    std::ptrdiff_t n_blocks() const { return static_cast<std::ptrdiff_t>(cum_.size()) - 1; }
    double total() const { return cum_.back(); }
    double before(std::ptrdiff_t b) const { return cum_[static_cast<std::size_t>(b)]; }

    // The block b with cum[b] <= target < cum[b + 1], for 0 <= target < total.
    // Rounding can only push target to total itself; the last block of
    // positive mass takes it then.
    std::ptrdiff_t find(double target) const
    {
        const auto first = cum_.begin() + 1;
        std::ptrdiff_t b = std::upper_bound(first, cum_.end(), target) - first;
        if (b >= n_blocks()) {
            b = n_blocks() - 1;
            while (b > 0 && !(cum_[b + 1] > cum_[b])) --b;
        }
        return b;
    }

private:
    std::vector<double> cum_;
};

// The index i of a block with sum_{k<i} w[k] <= t < sum_{k<=i} w[k]; when
// rounding runs past the end, the last positive weight.  Never returns an
// index of zero weight unless every weight is zero.
FASTERM_ALWAYS_INLINE std::ptrdiff_t pick_in_block(const double* w, std::ptrdiff_t cnt, double t) noexcept
{
    double c = 0.0;
    std::ptrdiff_t last = 0;
    for (std::ptrdiff_t i = 0; i < cnt; ++i) {
        if (w[i] > 0.0) {
            c += w[i];
            last = i;
            if (c > t) return i;
        }
    }
    return last;
}

// ---------------------------------------------------------------------------
// Exponential mechanism over a finite range: P(i) proportional to
// exp(-k (s_i - s_min)).  The difference is taken in halves,
// s_i / 2 - s_min / 2, which cannot overflow for any two finite doubles (the
// halving is exact), and scaled by 2k.  s_i = +inf has weight 0 (so does the
// NaN of 0 * inf when k = 0: exp_nonpos maps NaN to 0); k = +inf (an
// overflowed eps / sensitivity) gives the uniform choice among the
// minimisers, the limit.
// ---------------------------------------------------------------------------
template <class T>
class ScoreWeights {
public:
    ScoreWeights(const T* s, std::ptrdiff_t n, double s_min, double k)
        : s_(s), n_(n), half_min_(0.5 * s_min), k2_(2.0 * k) {}

    std::ptrdiff_t n_blocks() const { return (n_ + kBlock - 1) / kBlock; }
    std::ptrdiff_t start(std::ptrdiff_t b) const { return b * kBlock; }

    FASTERM_ALWAYS_INLINE std::ptrdiff_t fill(std::ptrdiff_t b, double* w) const noexcept
    {
        const std::ptrdiff_t lo = b * kBlock;
        const std::ptrdiff_t cnt = std::min(kBlock, n_ - lo);
        const T* s = s_ + lo;
        for (std::ptrdiff_t i = 0; i < cnt; ++i) {
            const double d = 0.5 * static_cast<double>(s[i]) - half_min_;
            const double x = d > 0.0 ? -k2_ * d : 0.0;
            double e, em1;
            exp_nonpos(x, e, em1);
            w[i] = e;
        }
        return cnt;
    }

private:
    const T* s_;
    std::ptrdiff_t n_;
    double half_min_, k2_;
};

template <class Weights>
FASTERM_ALWAYS_INLINE void build_table(const Weights& src, BlockCdf& cdf)
{
    double w[kBlock];
    const std::ptrdiff_t nb = src.n_blocks();
    cdf.clear(nb);
    for (std::ptrdiff_t b = 0; b < nb; ++b) cdf.push(block_sum(w, src.fill(b, w)));
}

template <class T>
FASTERM_EXPMECH_CLONES void expmech_sample(const T* scores, std::ptrdiff_t n, double s_min, double k, bitgen_t* rng,
                    std::int64_t* out, std::ptrdiff_t size)
{
    ScoreWeights<T> src(scores, n, s_min, k);
    BlockCdf cdf;
    build_table(src, cdf);
    const double total = cdf.total();  // >= 1: the minimum has weight 1
    double w[kBlock];
    for (std::ptrdiff_t r = 0; r < size; ++r) {
        const double target = rng->next_double(rng->state) * total;
        const std::ptrdiff_t b = cdf.find(target);
        const std::ptrdiff_t cnt = src.fill(b, w);
        out[r] = src.start(b) + pick_in_block(w, cnt, target - cdf.before(b));
    }
}

// ---------------------------------------------------------------------------
// Sorted data clipped to [a, b]: breakpoints p_0 = a, p_j = clip(x_(j)),
// p_{n+1} = b; piece (gap) j = [p_j, p_{j+1}], j = 0..n, has j points at or
// left of it.  Lengths are in units of b - a.
// ---------------------------------------------------------------------------
template <class T>
class ClippedBreaks {
public:
    ClippedBreaks(const T* x, std::ptrdiff_t n, double a, double b)
        : x_(x), n_(n), a_(a), b_(b), inv_(1.0 / (b - a)) {}

    double point(std::ptrdiff_t j) const noexcept
    {
        if (j <= 0) return a_;
        if (j > n_) return b_;
        return std::min(std::max(static_cast<double>(x_[j - 1]), a_), b_);
    }

    // p[0..cnt] = p_lo .. p_{lo+cnt}; the interior loop has no branches.
    FASTERM_ALWAYS_INLINE void points(std::ptrdiff_t lo, std::ptrdiff_t cnt, double* p) const noexcept
    {
        const std::ptrdiff_t i0 = lo == 0 ? 1 : 0;
        const std::ptrdiff_t i1 = lo + cnt > n_ ? n_ - lo : cnt;  // last interior i
        for (std::ptrdiff_t i = i0; i <= i1; ++i)
            p[i] = std::min(std::max(static_cast<double>(x_[lo - 1 + i]), a_), b_);
        if (i0 == 1) p[0] = a_;
        if (i1 < cnt) p[cnt] = b_;
    }

    std::ptrdiff_t n() const { return n_; }
    double a() const { return a_; }
    double b() const { return b_; }
    double inv_width() const { return inv_; }

private:
    const T* x_;
    std::ptrdiff_t n_;
    double a_, b_, inv_;
};

// ---------------------------------------------------------------------------
// ERM median: density proportional to exp(-h * sum_i |w - x_i| / (b - a)),
// h = eps / 2.  On piece j the exponent is linear with slope
// alpha_j = h (n - 2j) (per unit of b - a): rising left of the mode
// p_m, m = floor((n + 1) / 2), falling right of it (flat on piece m when n is
// even).  D_j = density at a breakpoint / density at the mode is built from
// the mode outwards, D_{next} = D * exp(-|alpha_j| len_j): a product of
// factors <= 1, so never an overflow, and its relative error grows like
// (number of pieces from the mode) * ulp, independent of how large the
// exponent itself is.  A piece's mass, in units of (b - a) * density(mode), is
//   D_inner * (1 - exp(-|alpha| len)) / |alpha|      (= D_inner * len if alpha = 0),
// with D_inner the density at its end nearer the mode, computed with expm1, or
// as len * (1 - e^-z) / z by its series when every z = |alpha| len of a block
// is at most ln2 / 2.
// ---------------------------------------------------------------------------
template <class T>
class MedianErm {
public:
    static constexpr double kFlush = 0x1p-900;

    struct Block {
        std::ptrdiff_t lo, hi;  // pieces [lo, hi)
        double d_inner;         // D at the block's end nearer the mode
        bool left;              // left of the mode: pieces taken from hi - 1 down to lo
    };

    MedianErm(const T* x, std::ptrdiff_t n, double a, double b, double eps)
        : br_(x, n, a, b), h_(0.5 * eps), m_((n + 1) / 2) {}

    // The piece at position k of a block, positions counted from the mode.
    static std::ptrdiff_t piece(const Block& bl, std::ptrdiff_t k) noexcept
    {
        return bl.left ? bl.hi - 1 - k : bl.lo + k;
    }

    // Masses of a block's pieces into w[0, cnt) by position (w needs kPad
    // entries).  Returns D at the block's outer end.
    FASTERM_ALWAYS_INLINE double fill(const Block& bl, double* w) const noexcept
    {
        const std::ptrdiff_t cnt = bl.hi - bl.lo;
        const double inv = br_.inv_width();
        double p[kBlock + 1], ratio[kPad];
        br_.points(bl.lo, cnt, p);
        if (bl.left) std::reverse(p, p + cnt + 1);
        // n - 2j by position, exact (integers below 2^53): alpha is exactly
        // 0 on the flat piece.
        const double c0 = static_cast<double>(br_.n() - 2 * piece(bl, 0));
        const double step = bl.left ? 2.0 : -2.0;
        // z = |alpha| len of every piece is at most max|alpha| * (block span).
        const double span = std::fabs(p[cnt] - p[0]) * inv;
        const double aa_max = h_ * std::max(std::fabs(c0), std::fabs(c0 + step * static_cast<double>(cnt - 1)));
        const bool smooth = aa_max * span <= kHalfLn2;
        if (smooth) {
            // All z <= ln2 / 2 (dense data, small eps: the costly case, where
            // no piece can be skipped): with r = -z, g = (1 - e^-z) / z =
            // 1 + r P(r), so the unit mass is len * g, no division and no
            // range reduction, and e^-z = 1 + r g.
            for (std::ptrdiff_t k = 0; k < cnt; ++k) {
                const double lenp = std::fabs(p[k + 1] - p[k]) * inv;
                const double r = -std::fabs(h_ * (c0 + step * kIota.v[k])) * lenp;
                const double g = 1.0 + r * expm1_poly(r);
                ratio[k] = 1.0 + r * g;
                w[k] = lenp * g;
            }
        } else {
            for (std::ptrdiff_t k = 0; k < cnt; ++k) {
                const double lenp = std::fabs(p[k + 1] - p[k]) * inv;
                const double aa = std::fabs(h_ * (c0 + step * kIota.v[k]));
                const double z = lenp > 0.0 ? aa * lenp : 0.0;
                double e, m1;
                exp_nonpos(-z, e, m1);
                ratio[k] = e;
                w[k] = aa > 0.0 ? -m1 / aa : lenp;  // unit mass; times D below
            }
        }
        // D along the positions, as four interleaved chains of products (one
        // chain would wait on the multiplier's latency at every piece), each
        // relative to its segment's start, then scaled by the segment offsets.
        const std::ptrdiff_t len = (cnt + 3) / 4;
        for (std::ptrdiff_t k = cnt; k < 4 * len; ++k) {
            w[k] = 0.0;
            ratio[k] = 1.0;
        }
        double d[4] = {1.0, 1.0, 1.0, 1.0};
        if (smooth) {
            // Every ratio is >= e^(-ln2/2), so a segment's relative product
            // stays >= 2^-(kBlock/8): never subnormal, no test needed.
            for (std::ptrdiff_t k = 0; k < len; ++k) {
                for (int c = 0; c < 4; ++c) {
                    const std::ptrdiff_t i = c * len + k;
                    w[i] *= d[c];
                    d[c] *= ratio[i];
                }
            }
        } else {
            for (std::ptrdiff_t k = 0; k < len; ++k) {
                for (int c = 0; c < 4; ++c) {
                    const std::ptrdiff_t i = c * len + k;
                    w[i] *= d[c];
                    d[c] *= ratio[i];
                    // Below kFlush, D is 0 for good: those pieces are over
                    // 2^900 times less likely than the mode's, and subnormal
                    // products would cost a microcode assist each.
                    if (d[c] < kFlush) d[c] = 0.0;
                }
            }
        }
        double off = bl.d_inner;
        for (int c = 0; c < 4; ++c) {
            double* ws = w + c * len;
            if (off > 0.0) {
                // Weights below 2^-1000 become 0; clamping first keeps every
                // product normal.
                const double tiny = 0x1p-1000 / off;
                for (std::ptrdiff_t k = 0; k < len; ++k) {
                    const double v = ws[k];
                    ws[k] = v < tiny ? 0.0 : std::max(v, tiny) * off;
                }
            } else {
                std::fill(ws, ws + len, 0.0);
            }
            off *= d[c];
            if (off < kFlush) off = 0.0;
        }
        return off;
    }

    FASTERM_ALWAYS_INLINE void build(BlockCdf& cdf)
    {
        const std::ptrdiff_t n = br_.n();
        double w[kPad];
        blocks_.clear();
        cdf.clear((n + 1) / kBlock + 2);
        double d = 1.0;
        for (std::ptrdiff_t lo = m_; lo <= n && d > 0.0; lo += kBlock) {
            const Block bl{lo, std::min(lo + kBlock, n + 1), d, false};
            d = fill(bl, w);
            blocks_.push_back(bl);
            cdf.push(block_sum(w, bl.hi - bl.lo));
        }
        d = 1.0;
        for (std::ptrdiff_t hi = m_; hi > 0 && d > 0.0; hi -= kBlock) {
            const Block bl{std::max<std::ptrdiff_t>(hi - kBlock, 0), hi, d, true};
            d = fill(bl, w);
            blocks_.push_back(bl);
            cdf.push(block_sum(w, bl.hi - bl.lo));
        }
    }

    FASTERM_ALWAYS_INLINE double draw(const BlockCdf& cdf, bitgen_t* rng) const
    {
        const double total = cdf.total();
        const double u = rng->next_double(rng->state);
        const double v = rng->next_double(rng->state);
        if (!(total > 0.0) || !std::isfinite(total)) {
            // Only when eps * n overflows the double range: the density is
            // then a point mass at the mode to within rounding.
            return br_.point(m_);
        }
        const double target = u * total;
        const std::ptrdiff_t b = cdf.find(target);
        const Block& bl = blocks_[static_cast<std::size_t>(b)];
        double w[kPad];
        fill(bl, w);
        const std::ptrdiff_t j = piece(bl, pick_in_block(w, bl.hi - bl.lo, target - cdf.before(b)));
        // Inside the piece: the truncated exponential on [0, len] with rate
        // |alpha| by inversion, measured from the end nearer the mode.
        const double lo = br_.point(j), hi = br_.point(j + 1);
        const double lenp = (hi - lo) * br_.inv_width();
        const double aa = std::fabs(h_ * static_cast<double>(br_.n() - 2 * j));
        const double em1 = std::expm1(-aa * lenp);
        double t = em1 < 0.0 ? -std::log1p(v * em1) / aa : v * lenp;
        t = std::min(std::max(t, 0.0), lenp) * (br_.b() - br_.a());
        return bl.left ? std::max(hi - t, lo) : std::min(lo + t, hi);
    }

private:
    ClippedBreaks<T> br_;
    double h_;
    std::ptrdiff_t m_;
    std::vector<Block> blocks_;
};

template <class T>
FASTERM_EXPMECH_CLONES void median_erm_sample(const T* x, std::ptrdiff_t n, double a, double b, double eps,
                       bitgen_t* rng, double* out, std::ptrdiff_t size)
{
    MedianErm<T> s(x, n, a, b, eps);
    BlockCdf cdf;
    s.build(cdf);
    for (std::ptrdiff_t r = 0; r < size; ++r) out[r] = s.draw(cdf, rng);
}

// ---------------------------------------------------------------------------
// Rank quantile (Smith 2011): gap j is chosen with probability proportional to
// len_j * exp(-h |j - q n|), h = eps / 2, then a uniform point inside it.
// Normalised by the best gap of positive length, d_min = min |j - q n| over
// such gaps, so the largest weight is that gap's length (never all zero).
// ---------------------------------------------------------------------------
template <class T>
class RankQuantile {
public:
    RankQuantile(const T* x, std::ptrdiff_t n, double a, double b, double eps, double q)
        : br_(x, n, a, b), h_(0.5 * eps), qn_(q * static_cast<double>(n))
    {
        // The positive-length gaps nearest q n on either side.
        const std::ptrdiff_t j0 = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(std::floor(qn_)), n);
        double best = std::numeric_limits<double>::infinity();
        for (std::ptrdiff_t j = j0; j >= 0; --j) {
            if (positive(j)) {
                best = qn_ - static_cast<double>(j);
                break;
            }
        }
        for (std::ptrdiff_t j = j0 + 1; j <= n; ++j) {
            if (static_cast<double>(j) - qn_ >= best) break;
            if (positive(j)) {
                best = static_cast<double>(j) - qn_;
                break;
            }
        }
        dmin_ = best;
        for (std::ptrdiff_t k = 0; k < kBlock; ++k) pow_[k] = std::exp(-h_ * static_cast<double>(k));
    }

    std::ptrdiff_t n_blocks() const { return (br_.n() + 1 + kBlock - 1) / kBlock; }
    std::ptrdiff_t start(std::ptrdiff_t b) const { return b * kBlock; }

    FASTERM_ALWAYS_INLINE std::ptrdiff_t fill(std::ptrdiff_t b, double* w) const noexcept
    {
        const std::ptrdiff_t lo = b * kBlock;
        const std::ptrdiff_t cnt = std::min(kBlock, br_.n() + 1 - lo);
        // The whole block underflows when its gap nearest q n does.
        const double jn = std::min(std::max(qn_, static_cast<double>(lo)), static_cast<double>(lo + cnt - 1));
        if (h_ * (std::fabs(jn - qn_) - dmin_) > 745.0) {
            std::fill(w, w + cnt, 0.0);
            return cnt;
        }
        const double inv = br_.inv_width();
        double p[kBlock + 1];
        br_.points(lo, cnt, p);
        // A block on one side of q n: exp(-h d) is exp(-h d_near) times
        // e^(-h k), k the distance in gaps from the block's gap nearest q n,
        // from a table: one exp per block.  Only when every such weight is
        // normal (d_near >= 0, h d_far <= 700); otherwise one exp per gap.
        const double j0 = static_cast<double>(lo) - qn_;
        const double last = static_cast<double>(cnt - 1);
        const bool right = j0 >= 0.0, left = j0 + last <= 0.0;
        const double d_near = right ? j0 - dmin_ : -(j0 + last) - dmin_;
        if ((right || left) && d_near >= 0.0 && h_ * (d_near + last) <= 700.0) {
            const double base = std::exp(-h_ * d_near);
            if (right) {
                for (std::ptrdiff_t i = 0; i < cnt; ++i)
                    w[i] = (p[i + 1] - p[i]) * inv * (base * pow_[i]);
            } else {
                const double* pw = pow_ + (cnt - 1);
                for (std::ptrdiff_t i = 0; i < cnt; ++i)
                    w[i] = (p[i + 1] - p[i]) * inv * (base * pw[-i]);
            }
            return cnt;
        }
        for (std::ptrdiff_t i = 0; i < cnt; ++i) {
            const double lenp = (p[i + 1] - p[i]) * inv;
            const double d = std::fabs(j0 + kIota.v[i]) - dmin_;
            double e, em1;
            exp_nonpos(d > 0.0 ? -h_ * d : 0.0, e, em1);
            w[i] = lenp * e;
        }
        return cnt;
    }

    FASTERM_ALWAYS_INLINE double draw(const BlockCdf& cdf, bitgen_t* rng) const
    {
        const double u = rng->next_double(rng->state);
        const double v = rng->next_double(rng->state);
        const double target = u * cdf.total();
        const std::ptrdiff_t b = cdf.find(target);
        double w[kBlock];
        const std::ptrdiff_t cnt = fill(b, w);
        const std::ptrdiff_t j = start(b) + pick_in_block(w, cnt, target - cdf.before(b));
        const double lo = br_.point(j), hi = br_.point(j + 1);
        return std::min(lo + v * (hi - lo), hi);
    }

private:
    // Gap j has positive weight exactly when its scaled length does.
    bool positive(std::ptrdiff_t j) const noexcept
    {
        return (br_.point(j + 1) - br_.point(j)) * br_.inv_width() > 0.0;
    }

    ClippedBreaks<T> br_;
    double h_, qn_, dmin_;
    double pow_[kBlock];  // e^(-h k)
};

template <class T>
FASTERM_EXPMECH_CLONES void quantile_rank_sample(const T* x, std::ptrdiff_t n, double a, double b, double eps, double q,
                          bitgen_t* rng, double* out, std::ptrdiff_t size)
{
    RankQuantile<T> s(x, n, a, b, eps, q);
    BlockCdf cdf;
    build_table(s, cdf);
    for (std::ptrdiff_t r = 0; r < size; ++r) out[r] = s.draw(cdf, rng);
}

template <class T>
bool is_sorted(const T* x, std::ptrdiff_t n) noexcept
{
    return std::is_sorted(x, x + n);
}

}  // namespace fasterm
