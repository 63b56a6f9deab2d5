// Hit-and-run for the exponential mechanism of convex ERM (fasterm.expmech):
// a Markov chain on a feasible set C (L2 ball, box, simplex) whose stationary
// density is proportional to exp(-k L(w)), L(w) = (1/n) sum_i l(<w, s_i x_i>, y_i)
// + l2/2 |w|^2, for the losses of linear models.
//
// Header-only, no Python.  The Cython layer validates everything; the public
// layer prepares the per-row scales s_i (rows beyond the data norm) and the
// labels (+-1 for classification, clipped for regression).
//
// One step from w (Smith-Ullman lecture 11 Alg. 1, sampled as in SPEC 4.2):
//   1. a direction u, symmetric about 0 (normal draws, normalised; on the
//      simplex the mean is removed, so sum u = 0; fixed box coordinates stay 0;
//      with kMixed, half of the steps on a box or simplex take an edge
//      direction e_j or (e_i - e_j)/sqrt(2) instead, which mixes far faster
//      where the density sits in a corner);
//   2. the chord [a, b] = {t : w + t u in C} in closed form (0 is in it);
//   3. t drawn exactly from the line density prop. to
//      exp(h(t)), h(t) = -kappa sum_i (l_i(z_i + t c_i) - l_i(z_i))
//                       - lam (t <w, u> + t^2 |u|^2 / 2),
//      with z_i = s_i <x_i, w> (kept), c_i = s_i <x_i, u> (one pass over X),
//      kappa = eps / (2 Delta), lam = kappa n l2;
//   4. w += t u, z += t c (done block by block in the next step's pass).
// Hit-and-run with exact line draws and a direction law invariant under
// u -> -u is reversible with respect to the target (the line through w and
// w + t u is the same line seen from both points), whatever the exact law of
// u, and so is a fixed mixture of such laws.  For the classification losses
// the chain keeps the signed margins y_i z_i (labels are +-1).
//
// Line samplers, all exact up to floating-point rounding:
//   squared (any l2), linear with l2 > 0: h is a concave quadratic ->
//       truncated normal (Botev's case split, as fasterm::truncnorm_std, with
//       the tail draw kept as an offset from the near end of the chord);
//   linear, l2 = 0: h is linear -> truncated exponential by inversion;
//   hinge, absolute, l2 = 0, n <= kPiecewiseMaxRows: h is concave piecewise
//       linear with a kink per row -> the kinks inside the chord are sorted
//       and the piecewise-exponential density is inverted exactly;
//   logistic: rejection from the Gaussian envelope given by bounds on h''
//       over the chord (softplus'' = s(m)s(-m) lies in [s(M)s(-M), 1/4] for
//       |m| <= M), with the matching lower bound as a squeeze: one pass over
//       the rows with one exp per row, fused with the pass that computes c,
//       and an exact evaluation of h for the few proposals the squeeze
//       leaves undecided;
//   logistic when those bounds are loose, hinge/absolute with l2 > 0 or many
//       rows: adaptive rejection sampling (Gilks & Wild 1992) with tangent
//       envelopes of the concave h on the bounded chord.
// Every accepted draw has exactly the line density.
// Densities are handled only through differences h(t) - h(t'), normalised
// by their maximum: never exp(-k L) itself.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fasterm/codes.hpp"
#include "fasterm/expmech.hpp"  // exp_nonpos, block_sum, random_standard_normal, FASTERM_* macros

namespace fasterm {
namespace hitrun {

using index_t = std::ptrdiff_t;

// Loss kinds, set kinds, line methods and directions: the codes of fasterm/codes.hpp.

// Rows per block of the line passes: per-row values are written to buffers of
// this size by loops the compiler vectorises, then summed in a fixed order.
constexpr index_t kRows = 256;

// Above this many rows, hinge/absolute lines use ARS (O(n) per evaluation, a
// few evaluations) instead of sorting every kink (O(n log n)); both are exact.
constexpr index_t kPiecewiseMaxRows = 2048;

constexpr int kArsMaxPoints = 200;

// ---------------------------------------------------------------------------
// log(1 + e) for 0 <= e <= 1, branch-free: fdlibm's e_log.c with its range
// reduction 1 + e = 2^j (1 + f), |f| <= sqrt(2) - 1, and its minimax
// polynomial in s = f / (2 + f) (error below 1 ulp).
// ---------------------------------------------------------------------------
FASTERM_INLINE double log1p_unit(double e) noexcept
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
FASTERM_INLINE void sigmoid_neg_fraction(double m, double& p, double& q) noexcept
{
    constexpr double P0 = 1.26177193074810590878e-4, P1 = 3.02994407707441961300e-2,
                     P2 = 9.99999999999999999910e-1;
    constexpr double Q0 = 3.00198505138664455042e-6, Q1 = 2.52448340349684104192e-3,
                     Q2 = 2.27265548208155028766e-1, Q3 = 2.00000000000000000009e0;
    const double x = -std::fabs(m);
    const bool under = !(x > -708.0);
    const double xc = under ? 0.0 : x;
    constexpr double kShift = 0x1.8p52;
    const double ks = xc * 1.4426950408889634074 + kShift;
    const std::uint64_t kbits = double_to_bits(ks);
    const double kd = ks - kShift;
    const double r = (xc - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10;
    const double rr = r * r;
    const double px = r * ((P0 * rr + P1) * rr + P2);
    const double qx = ((Q0 * rr + Q1) * rr + Q2) * rr + Q3;
    const double s = under ? 0.0 : bits_to_double((kbits + 1023u) << 52);
    const double num = s * (qx + px);  // e^{-|m|} * (qx - px)
    const double den = qx - px;
    p = m >= 0.0 ? num : den;
    q = num + den;
}

FASTERM_INLINE double sigmoid_neg(double m) noexcept
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
FASTERM_INLINE double weighted_sigmoid_sum(const double* w, const double* m, index_t cnt) noexcept
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
FASTERM_INLINE void logistic_row(double m, double& val, double& sig, double& curv) noexcept
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
// order of operations, so every instruction-set clone gives the same bits.
// (The four lane sums of four rows are added as one transposed vector.)
// ---------------------------------------------------------------------------
#if defined(__GNUC__) || defined(__clang__)
typedef double v4d __attribute__((vector_size(32)));

template <class T>
FASTERM_INLINE v4d load4(const T* p) noexcept
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
FASTERM_INLINE v4d hsum4(v4d s0, v4d s1, v4d s2, v4d s3) noexcept
{
    const v4d a = FASTERM_SHUFFLE2(s0, s1, 0, 4, 2, 6) + FASTERM_SHUFFLE2(s0, s1, 1, 5, 3, 7);
    const v4d b = FASTERM_SHUFFLE2(s2, s3, 0, 4, 2, 6) + FASTERM_SHUFFLE2(s2, s3, 1, 5, 3, 7);
    return FASTERM_SHUFFLE2(a, b, 0, 1, 4, 5) + FASTERM_SHUFFLE2(a, b, 2, 3, 6, 7);
}

template <class T>
FASTERM_INLINE void row_dots(const T* X, index_t n, index_t d, const double* u, double* out) noexcept
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

// ---------------------------------------------------------------------------
// The line: everything the 1-D density needs.  z, c, y have n entries (y may
// be null for the linear loss, whose line only needs sum_c).
// ---------------------------------------------------------------------------
struct Line {
    int kind;
    index_t n;
    const double* z;
    const double* c;
    const double* y;
    double sum_c;   // linear loss: sum_i c_i
    double kappa;   // eps / (2 Delta)
    double lam;     // kappa * n * l2
    double wu, uu;  // <w, u>, |u|^2
    double a, b;    // the chord, a <= 0 <= b
    double mbound;  // a bound on every |margin| over C (norm bound x data norm), or +inf
    bool unit_labels = false;  // y is all ones (the chain's signed margins); pass0 skips it
};

struct Workspace {
    std::vector<double> p, H, s, mass;      // piecewise-exponential pieces
    std::vector<std::pair<double, double>> kinks;
    std::vector<double> ax, ah, ag;         // ARS abscissae, h, h'
    long long evaluations = 0;              // line passes (diagnostics)
};

// ---------------------------------------------------------------------------
// Sums over rows of the loss along the line at up to 3 points t[k], for the
// losses sampled by ARS (logistic, hinge, absolute):
// F[k] = sum_i l_i(z_i + t c_i), D[k] = d/dt F, and, with want_curv,
// C[k] = d^2/dt^2 F (logistic only; piecewise-linear losses have 0).
// ---------------------------------------------------------------------------
FASTERM_INLINE void line_sums(const Line& L, const double* t, int K, double* F, double* D, double* C,
                              bool want_curv, Workspace& wk)
{
    wk.evaluations += 1;
    double fv[kRows], dv[kRows], cv[kRows];
    for (int k = 0; k < K; ++k) F[k] = D[k] = C[k] = 0.0;
    for (index_t lo = 0; lo < L.n; lo += kRows) {
        const index_t cnt = std::min(kRows, L.n - lo);
        const double* z = L.z + lo;
        const double* c = L.c + lo;
        const double* y = L.y + lo;
        for (int k = 0; k < K; ++k) {
            const double tk = t[k];
            switch (L.kind) {
            case kLogistic:
                for (index_t i = 0; i < cnt; ++i) {
                    const double yc = y[i] * c[i];
                    const double m = y[i] * z[i] + tk * yc;
                    double val, sig, curv;
                    logistic_row(m, val, sig, curv);
                    fv[i] = val;
                    dv[i] = -yc * sig;
                    cv[i] = c[i] * c[i] * curv;
                }
                break;
            case kHinge:
                for (index_t i = 0; i < cnt; ++i) {
                    const double yc = y[i] * c[i];
                    const double rho = 1.0 - (y[i] * z[i] + tk * yc);
                    fv[i] = rho > 0.0 ? rho : 0.0;
                    dv[i] = rho > 0.0 ? -yc : 0.0;  // 0 at margin exactly 1 (a supergradient of h)
                }
                break;
            case kAbsolute:
                for (index_t i = 0; i < cnt; ++i) {
                    const double r = y[i] - (z[i] + tk * c[i]);
                    fv[i] = std::fabs(r);
                    dv[i] = r > 0.0 ? -c[i] : (r < 0.0 ? c[i] : 0.0);
                }
                break;
            default:
                break;
            }
            F[k] += block_sum(fv, cnt);
            D[k] += block_sum(dv, cnt);
            if (want_curv && L.kind == kLogistic) C[k] += block_sum(cv, cnt);
        }
    }
}

// h(t) - h(0) and h'(t) from the sums (F0 = F at t = 0).
FASTERM_INLINE double line_h(const Line& L, double t, double F, double F0) noexcept
{
    return -L.kappa * (F - F0) - L.lam * t * (L.wu + 0.5 * t * L.uu);
}
FASTERM_INLINE double line_g(const Line& L, double t, double D) noexcept
{
    return -L.kappa * D - L.lam * (L.wu + t * L.uu);
}

// ---------------------------------------------------------------------------
// Piecewise-exponential density: piece j on [p[j], p[j+1]] with log-density
// H[j] at p[j] and slope s[j].  A piece's mass relative to the highest point
// of the density is exp(top_j - max top) * len * (1 - e^{-x}) / x, x = |s| len,
// top_j the log-density at its higher end; the draw inside the piece is a
// truncated exponential measured from that end, by inversion.
// ---------------------------------------------------------------------------
FASTERM_INLINE double piecewise_exp_sample(const double* p, const double* H, const double* s, index_t P,
                                           std::vector<double>& mass, bitgen_t* rng)
{
    mass.resize(static_cast<std::size_t>(P));
    double top_max = -std::numeric_limits<double>::infinity();
    for (index_t j = 0; j < P; ++j) {
        const double len = p[j + 1] - p[j];
        const double top = H[j] + (s[j] > 0.0 && len > 0.0 ? s[j] * len : 0.0);
        mass[j] = top;
        if (len > 0.0 && top > top_max) top_max = top;
    }
    double* m = mass.data();
    for (index_t j = 0; j < P; ++j) {
        const double len = p[j + 1] - p[j];
        const double x = std::fabs(s[j]) * len;
        double e, em1, f, fm1;
        exp_nonpos(m[j] - top_max, e, em1);
        exp_nonpos(-x, f, fm1);
        const double shape = x > 0.0 ? -fm1 / x : 1.0;  // (1 - e^{-x}) / x
        m[j] = len > 0.0 ? e * len * shape : 0.0;
    }
    double total = 0.0;
    for (index_t j = 0; j < P; ++j) total += m[j];
    const double target = rng->next_double(rng->state) * total;
    const double v = rng->next_double(rng->state);
    index_t j = 0, last = -1;
    double acc = 0.0;
    for (; j < P; ++j) {
        if (m[j] > 0.0) {
            last = j;
            acc += m[j];
            if (acc > target) break;
        }
    }
    if (j >= P) j = last;  // rounding pushed the target past the end
    if (j < 0) return 0.5 * (p[0] + p[P]);  // no mass anywhere: cannot happen for finite input
    const double lo = p[j], hi = p[j + 1], len = hi - lo;
    const double aa = std::fabs(s[j]);
    const double x = aa * len;
    double off;
    if (x > 0.0) {
        off = -std::log1p(v * std::expm1(-x)) / aa;
        off = std::min(std::max(off, 0.0), len);
    } else {
        off = v * len;
    }
    return s[j] > 0.0 ? std::max(hi - off, lo) : std::min(lo + off, hi);
}

// ---------------------------------------------------------------------------
// Truncated normal N(mu, sigma^2) on [a, b], returned as t itself: in the
// tails (the chord far from mu) the draw is formed as an offset from the near
// end of the chord, so no digits are lost when |mu| >> b - a.  The branches
// and their acceptance rules are those of fasterm::truncnorm_std (Botev 2017).
// ---------------------------------------------------------------------------
FASTERM_INLINE double tail_offset(double lo, double hi, bitgen_t* rng)
{
    // Rayleigh proposal on [lo, hi], lo >= 0.66, returned as x - lo.
    const double f = std::isinf(hi) ? -1.0 : std::expm1(-0.5 * (hi - lo) * (hi + lo));
    for (;;) {
        const double u = rng->next_double(rng->state);
        const double v = rng->next_double(rng->state);
        const double e = -std::log1p(u * f);
        const double t = 2.0 * e / (lo + std::hypot(lo, std::sqrt(2.0 * e)));
        if (v * t <= lo * (1.0 - v)) return std::min(t, hi - lo);
    }
}

FASTERM_INLINE double truncnorm_line(double mu, double sigma, double a, double b, bitgen_t* rng)
{
    const double lo = (a - mu) / sigma, hi = (b - mu) / sigma;
    constexpr double kTail = 0.66;
    double t;
    if (lo >= kTail) {
        t = a + sigma * tail_offset(lo, hi, rng);
    } else if (hi <= -kTail) {
        t = b - sigma * tail_offset(-hi, -lo, rng);
    } else {
        t = mu + sigma * truncnorm_std(lo, hi, rng);
    }
    return std::min(std::max(t, a), b);
}

// h(t) = -A t^2 + B t on [a, b].
FASTERM_INLINE double quadratic_line(double A, double B, double a, double b, std::vector<double>& mass,
                                     bitgen_t* rng)
{
    if (A > 0.0) {
        const double sigma = 1.0 / std::sqrt(2.0 * A);
        const double mu = B / (2.0 * A);
        if (std::isfinite(mu) && std::isfinite(sigma) && sigma > 0.0) return truncnorm_line(mu, sigma, a, b, rng);
    }
    // Linear: one piecewise-exponential piece.
    const double p[2] = {a, b};
    const double H[1] = {B * a};
    const double s[1] = {B};
    return piecewise_exp_sample(p, H, s, 1, mass, rng);
}

// ---------------------------------------------------------------------------
// Hinge / absolute, l2 = 0: every row's loss is piecewise linear in t with
// one kink tau_i = rho_i / c'_i, where the slope of sum_i l_i rises by jump_i
// (|c'| for the hinge, 2|c'| for the absolute loss).  Sorting the kinks inside
// (a, b) gives the exact piecewise-linear h.
// ---------------------------------------------------------------------------
FASTERM_INLINE double piecewise_linear_line(const Line& L, Workspace& wk, bitgen_t* rng)
{
    const double a = L.a, b = L.b;
    wk.kinks.clear();
    double slope = 0.0;  // d/dt sum_i l_i just right of a
    const bool hinge = L.kind == kHinge;
    for (index_t i = 0; i < L.n; ++i) {
        double rho, cp;
        if (hinge) {  // l = (rho - t c')_+, rho = 1 - y z, c' = y c
            rho = 1.0 - L.y[i] * L.z[i];
            cp = L.y[i] * L.c[i];
        } else {      // l = |rho - t c'|, rho = y - z, c' = c
            rho = L.y[i] - L.z[i];
            cp = L.c[i];
        }
        if (cp == 0.0) continue;
        const double tau = rho / cp;
        const double jump = hinge ? std::fabs(cp) : 2.0 * std::fabs(cp);
        // slope left of the kink: -|c'| for the absolute loss; for the hinge
        // -c' if the row is active left of its kink (c' > 0), else 0.
        const double left = hinge ? (cp > 0.0 ? -cp : 0.0) : -std::fabs(cp);
        slope += left;
        if (tau <= a) {
            slope += jump;
        } else if (tau < b) {
            wk.kinks.emplace_back(tau, jump);
        }
    }
    std::sort(wk.kinks.begin(), wk.kinks.end(),
              [](const std::pair<double, double>& u, const std::pair<double, double>& v) { return u.first < v.first; });
    const index_t K = static_cast<index_t>(wk.kinks.size());
    wk.p.resize(static_cast<std::size_t>(K + 2));
    wk.H.resize(static_cast<std::size_t>(K + 1));
    wk.s.resize(static_cast<std::size_t>(K + 1));
    double* p = wk.p.data();
    double* H = wk.H.data();
    double* s = wk.s.data();
    p[0] = a;
    H[0] = 0.0;
    for (index_t j = 0; j <= K; ++j) {
        p[j + 1] = j < K ? wk.kinks[static_cast<std::size_t>(j)].first : b;
        s[j] = -L.kappa * slope;
        if (j < K) {
            H[j + 1] = H[j] + s[j] * (p[j + 1] - p[j]);
            slope += wk.kinks[static_cast<std::size_t>(j)].second;
        }
    }
    return piecewise_exp_sample(p, H, s, K + 1, wk.mass, rng);
}

// ---------------------------------------------------------------------------
// Adaptive rejection sampling (Gilks & Wild 1992) of the concave h on [a, b].
// The envelope is the minimum of the tangent lines at the abscissae (with a
// supergradient where h has a kink): above h by concavity, so an accepted
// point has exactly the density exp(h) / Z.  The squeeze (chords between
// abscissae, below h) accepts most draws without a pass over the rows.
// ---------------------------------------------------------------------------
FASTERM_INLINE void ars_insert(Workspace& wk, double x, double h, double g)
{
    auto it = std::lower_bound(wk.ax.begin(), wk.ax.end(), x);
    const std::size_t pos = static_cast<std::size_t>(it - wk.ax.begin());
    if (it != wk.ax.end() && *it == x) return;
    wk.ax.insert(it, x);
    wk.ah.insert(wk.ah.begin() + static_cast<std::ptrdiff_t>(pos), h);
    wk.ag.insert(wk.ag.begin() + static_cast<std::ptrdiff_t>(pos), g);
}

FASTERM_INLINE double ars_line(const Line& L, Workspace& wk, bitgen_t* rng)
{
    const double a = L.a, b = L.b;
    const bool smooth = L.kind == kLogistic;
    // Pass 1 at t = 0: F(0) (the reference), h'(0) and the curvature.
    double F[3], D[3], C[3];
    const double t0[1] = {0.0};
    line_sums(L, t0, 1, F, D, C, smooth, wk);
    const double F0 = F[0];
    const double g0 = line_g(L, 0.0, D[0]);
    const double curv = L.kappa * C[0] + L.lam * L.uu;  // -h''(0)
    wk.ax.assign(1, 0.0);
    wk.ah.assign(1, 0.0);
    wk.ag.assign(1, g0);
    // Pass 2: a Newton step gives the mode's neighbourhood; abscissae one
    // curvature radius either side of it.
    double cand[2];
    int K = 0;
    if (curv > 0.0 && std::isfinite(curv)) {
        const double sd = 1.0 / std::sqrt(curv);
        const double mode = std::min(std::max(g0 / curv, a), b);
        cand[0] = std::max(mode - sd, a);
        cand[1] = std::min(mode + sd, b);
    } else {
        cand[0] = a;
        cand[1] = b;
    }
    const double tiny = 1e-12 * (b - a);
    for (int k = 0; k < 2; ++k) {
        bool dup = std::fabs(cand[k]) <= tiny;
        for (int j = 0; j < K; ++j) dup = dup || std::fabs(cand[k] - cand[j]) <= tiny;
        if (!dup) cand[K++] = cand[k];
    }
    if (K > 0) {
        line_sums(L, cand, K, F, D, C, false, wk);
        for (int k = 0; k < K; ++k)
            ars_insert(wk, cand[k], line_h(L, cand[k], F[k], F0), line_g(L, cand[k], D[k]));
    }
    for (int iter = 0; iter < kArsMaxPoints; ++iter) {
        // Upper hull: piece j uses tangent j on [zb[j], zb[j+1]].
        const index_t m = static_cast<index_t>(wk.ax.size());
        wk.p.resize(static_cast<std::size_t>(m + 1));
        wk.H.resize(static_cast<std::size_t>(m));
        wk.s.resize(static_cast<std::size_t>(m));
        double* zb = wk.p.data();
        const double* x = wk.ax.data();
        const double* h = wk.ah.data();
        const double* g = wk.ag.data();
        zb[0] = a;
        zb[m] = b;
        for (index_t j = 0; j + 1 < m; ++j) {
            const double dg = g[j] - g[j + 1];
            const double dx = x[j + 1] - x[j];
            double zj;
            if (dg > 0.0) {
                zj = x[j] + (h[j + 1] - h[j] - g[j + 1] * dx) / dg;
                if (!(zj >= x[j])) zj = x[j];  // also NaN
                if (zj > x[j + 1]) zj = x[j + 1];
            } else {
                zj = 0.5 * (x[j] + x[j + 1]);  // equal slopes: h is linear here
            }
            zb[j + 1] = zj;
        }
        for (index_t j = 0; j < m; ++j) {
            wk.H[static_cast<std::size_t>(j)] = h[j] + g[j] * (zb[j] - x[j]);
            wk.s[static_cast<std::size_t>(j)] = g[j];
        }
        const double xs = piecewise_exp_sample(zb, wk.H.data(), wk.s.data(), m, wk.mass, rng);
        // The tangent in force at xs.
        index_t j = static_cast<index_t>(std::upper_bound(zb + 1, zb + m, xs) - (zb + 1));
        if (j >= m) j = m - 1;
        const double up = h[j] + g[j] * (xs - x[j]);
        const double logu = std::log(rng->next_double(rng->state));
        // Squeeze between the abscissae around xs.
        const index_t r = static_cast<index_t>(std::upper_bound(x, x + m, xs) - x);
        if (r > 0 && r < m) {
            const double low = h[r - 1] + (h[r] - h[r - 1]) * ((xs - x[r - 1]) / (x[r] - x[r - 1]));
            if (logu <= low - up) return xs;
        }
        const double tt[1] = {xs};
        line_sums(L, tt, 1, F, D, C, false, wk);
        const double hx = line_h(L, xs, F[0], F0);
        if (logu <= hx - up) return xs;
        ars_insert(wk, xs, hx, line_g(L, xs, D[0]));
    }
    throw std::runtime_error("hit-and-run: adaptive rejection sampling did not converge (non-finite line density?)");
}

// ---------------------------------------------------------------------------
// Logistic line by rejection from curvature bounds.  On the chord every row's
// margin m_i(t) = y_i (z_i + t c_i) stays within [-M, M], M the largest
// |m_i(a)|, |m_i(b)|, and softplus''(m) = s(m) s(-m) lies in [s(M) s(-M), 1/4]
// there, so for all t in [a, b]
//     A_lo <= -h''(t) <= A_up,  A_lo = kappa s(M)s(-M) sum c_i^2 + lam |u|^2,
//                               A_up = kappa / 4 sum c_i^2 + lam |u|^2,
// and with h(0) = 0, g0 = h'(0) (Taylor with integral remainder):
//     g0 t - A_up t^2 / 2  <=  h(t)  <=  g0 t - A_lo t^2 / 2  =: U(t).
// Proposals come from exp(U) (a truncated normal), accepted with probability
// exp(h(x) - U(x)): exact.  The lower bound (the squeeze) accepts most of
// them without evaluating h; the rest cost one pass.  One pass over the rows
// with one exp per row gives g0, the bounds and the exact curvature at 0
// (which seeds ARS when the bounds are too loose to pay).
// ---------------------------------------------------------------------------
struct LogisticPass0 {
    double D0;     // sum_i d/dt l_i at t = 0
    double S2;     // sum_i c_i^2
    double mx[4];  // max |m_i| over the rows and the chord's ends, four lanes (if per_row)
    bool per_row;  // false: the a-priori bound L.mbound is used instead
    double M(const Line& L) const
    {
        return per_row ? std::max(std::max(mx[0], mx[1]), std::max(mx[2], mx[3])) : L.mbound;
    }
};

// The a-priori bound |m| <= mbound is enough when it keeps A_up <= 4 A_lo
// (s(M)s(-M) >= 1/16, M <= 2.06); the per-row bound over the chord costs a
// few operations per row and is only computed otherwise.
FASTERM_INLINE LogisticPass0 logistic_pass0_init(const Line& L) noexcept
{
    LogisticPass0 r{0.0, 0.0, {0.0, 0.0, 0.0, 0.0}, !(L.mbound <= 2.0)};
    return r;
}

// Rows [lo, lo + cnt) of the pass (cnt <= kRows), accumulated into r.
FASTERM_INLINE void logistic_pass0_block(const Line& L, index_t lo, index_t cnt, LogisticPass0& r)
{
    double wv[kRows], mv[kRows], qv[kRows];
    const double* z = L.z + lo;
    const double* c = L.c + lo;
    const double* y = L.y + lo;
    if (L.unit_labels) {  // z and c already carry the labels (signed margins)
        for (index_t i = 0; i < cnt; ++i) {
            wv[i] = -c[i];
            mv[i] = z[i];
            qv[i] = c[i] * c[i];
        }
    } else {
        for (index_t i = 0; i < cnt; ++i) {
            wv[i] = -(y[i] * c[i]);  // d/dt of the margin, negated
            mv[i] = y[i] * z[i];     // the margin at t = 0
            qv[i] = c[i] * c[i];
        }
    }
    r.D0 += weighted_sigmoid_sum(wv, mv, cnt);  // sum_i -y c sigmoid(-m)
    r.S2 += block_sum(qv, cnt);
    if (r.per_row) {
        const double a = L.a, b = L.b;
        for (index_t i = 0; i < cnt; ++i)  // |m(t)| is largest at an end of the chord
            qv[i] = std::max(std::fabs(mv[i] - a * wv[i]), std::fabs(mv[i] - b * wv[i]));
        index_t i = 0;
        for (; i + 4 <= cnt; i += 4)
            for (int l = 0; l < 4; ++l) r.mx[l] = std::max(r.mx[l], qv[i + l]);
        for (; i < cnt; ++i) r.mx[0] = std::max(r.mx[0], qv[i]);
    }
}

FASTERM_INLINE LogisticPass0 logistic_pass0(const Line& L)
{
    LogisticPass0 r = logistic_pass0_init(L);
    for (index_t lo = 0; lo < L.n; lo += kRows) logistic_pass0_block(L, lo, std::min(kRows, L.n - lo), r);
    return r;
}

// pre: the pass already made (fused with the computation of c by the chain),
// or null.
FASTERM_INLINE double logistic_line(const Line& L, int method, Workspace& wk, bitgen_t* rng,
                                    const LogisticPass0* pre)
{
    if (method == kArs) return ars_line(L, wk, rng);
    wk.evaluations += 1;
    const LogisticPass0 p0 = pre ? *pre : logistic_pass0(L);
    const double g0 = line_g(L, 0.0, p0.D0);
    double e, em1;
    exp_nonpos(-p0.M(L), e, em1);
    const double ss = e / ((1.0 + e) * (1.0 + e));  // s(M) s(-M)
    const double reg = L.lam * L.uu;
    // A relative margin far above the rounding of the sums keeps the bounds
    // valid in floating point.
    const double A_lo = (L.kappa * ss * p0.S2 + reg) * (1.0 - 1e-9);
    const double A_up = (L.kappa * 0.25 * p0.S2 + reg) * (1.0 + 1e-9);
    bool use = A_lo > 0.0 && std::isfinite(A_up);
    // The squeeze accepts a proposal x with probability exp(-(A_up - A_lo) x^2 / 2):
    // with A_up <= 4 A_lo, at least 1/2 of them on average when the mode is
    // near 0 (as it is once the chain has mixed).  Looser bounds go to ARS.
    if (use && method == kAuto) use = A_up <= 4.0 * A_lo;
    if (use) {
        const double mu = g0 / A_lo, sigma = 1.0 / std::sqrt(A_lo);
        const double dA = A_up - A_lo;
        for (int trial = 0; trial < 4; ++trial) {
            const double x = truncnorm_line(mu, sigma, L.a, L.b, rng);
            const double logv = std::log(rng->next_double(rng->state));
            if (logv <= -0.5 * dA * x * x) return x;
            const double t2[2] = {0.0, x};
            double F[3], D[3], C[3];
            line_sums(L, t2, 2, F, D, C, false, wk);
            const double hx = line_h(L, x, F[1], F[0]);
            const double ux = x * (g0 - 0.5 * A_lo * x);
            if (logv <= hx - ux) return x;
        }
        // Four rejections: the bounds are loose here; ARS is exact too, and
        // independent of the rejected proposals, so the draw stays exact.
    }
    return ars_line(L, wk, rng);
}

// One exact draw from the line density.
FASTERM_INLINE double sample_line(const Line& L, int method, Workspace& wk, bitgen_t* rng,
                                  const LogisticPass0* pre = nullptr)
{
    if (!(L.b > L.a)) return 0.0;
    switch (L.kind) {
    case kSquared: {
        double S2 = 0.0, SR = 0.0;
        double q[kRows], r2[kRows];
        for (index_t lo = 0; lo < L.n; lo += kRows) {
            const index_t cnt = std::min(kRows, L.n - lo);
            for (index_t i = 0; i < cnt; ++i) {
                const double ci = L.c[lo + i];
                q[i] = ci * ci;
                r2[i] = (L.y[lo + i] - L.z[lo + i]) * ci;
            }
            S2 += block_sum(q, cnt);
            SR += block_sum(r2, cnt);
        }
        wk.evaluations += 1;
        // sum (r - t c)^2 - r^2 = t^2 S2 - 2 t SR
        const double A = L.kappa * S2 + 0.5 * L.lam * L.uu;
        const double B = 2.0 * L.kappa * SR - L.lam * L.wu;
        return quadratic_line(A, B, L.a, L.b, wk.mass, rng);
    }
    case kLinear: {
        const double A = 0.5 * L.lam * L.uu;
        const double B = -L.kappa * L.sum_c - L.lam * L.wu;
        return quadratic_line(A, B, L.a, L.b, wk.mass, rng);
    }
    case kHinge:
    case kAbsolute: {
        const bool pw = method == kDirect || (method == kAuto && L.n <= kPiecewiseMaxRows);
        if (pw && L.lam == 0.0) return piecewise_linear_line(L, wk, rng);
        return ars_line(L, wk, rng);
    }
    default:
        return logistic_line(L, method, wk, rng, pre);
    }
}

// ---------------------------------------------------------------------------
// Feasible sets: directions and chords.
// ---------------------------------------------------------------------------
struct Geometry {
    int kind;
    index_t d;
    const double* center;  // ball
    double radius;         // ball
    const double* low;     // box
    const double* high;    // box
    double total;          // simplex
    int directions;        // kSphere, or kMixed: half of the steps along an edge direction
};

// A direction: normal draws on the free coordinates (box coordinates with
// low == high stay 0), mean removed on the simplex, normalised.
FASTERM_INLINE void direction(const Geometry& G, bitgen_t* rng, double* u)
{
    const index_t d = G.d;
    const bool edges = G.kind == kBox || (G.kind == kSimplex && d >= 2);
    if (G.directions == kMixed && edges && rng->next_double(rng->state) < 0.5) {
        // An edge direction of the set: e_j (a free coordinate of the box) or
        // (e_i - e_j) / sqrt(2), i != j (the simplex), uniformly.  The line
        // through w is the same for u and -u, so no sign is drawn.
        auto pick = [&](index_t range) {
            const index_t r = static_cast<index_t>(rng->next_double(rng->state) * static_cast<double>(range));
            return std::min(r, range - 1);
        };
        std::fill(u, u + d, 0.0);
        if (G.kind == kBox) {
            index_t j;
            do {
                j = pick(d);
            } while (!(G.low[j] < G.high[j]));
            u[j] = 1.0;
        } else {
            const index_t i = pick(d);
            index_t j = pick(d - 1);
            if (j >= i) ++j;
            u[i] = 0.70710678118654752440;
            u[j] = -0.70710678118654752440;
        }
        return;
    }
    for (;;) {
        double ss = 0.0;
        for (index_t j = 0; j < d; ++j) {
            const bool fixed = G.kind == kBox && !(G.low[j] < G.high[j]);
            u[j] = fixed ? 0.0 : random_standard_normal(rng);
        }
        if (G.kind == kSimplex) {
            double mean = 0.0;
            for (index_t j = 0; j < d; ++j) mean += u[j];
            mean /= static_cast<double>(d);
            for (index_t j = 0; j < d; ++j) u[j] -= mean;
        }
        for (index_t j = 0; j < d; ++j) ss += u[j] * u[j];
        if (ss > 0.0) {
            const double inv = 1.0 / std::sqrt(ss);
            for (index_t j = 0; j < d; ++j) u[j] *= inv;
            return;
        }
    }
}

// The chord {t : w + t u in C}, forced to contain 0 (w is in C up to rounding).
FASTERM_INLINE void chord(const Geometry& G, const double* w, const double* u, double& a, double& b)
{
    const index_t d = G.d;
    a = -std::numeric_limits<double>::infinity();
    b = std::numeric_limits<double>::infinity();
    if (G.kind == kL2Ball) {
        // |p + t u|^2 = R^2, p = w - c: t^2 uu + 2 t up + (|p| - R)(|p| + R) = 0;
        // the root of larger magnitude first, the other from their product.
        double uu = 0.0, up = 0.0, pp = 0.0;
        for (index_t j = 0; j < d; ++j) {
            const double pj = w[j] - G.center[j];
            uu += u[j] * u[j];
            up += u[j] * pj;
            pp += pj * pj;
        }
        const double pn = std::sqrt(pp);
        const double q = std::min((pn - G.radius) * (pn + G.radius), 0.0);
        const double disc = std::max(up * up - uu * q, 0.0);
        const double hq = -(up + std::copysign(std::sqrt(disc), up));
        if (hq == 0.0) {
            a = b = 0.0;
        } else {
            const double r1 = hq / uu, r2 = q / hq;
            a = std::min(r1, r2);
            b = std::max(r1, r2);
        }
    } else if (G.kind == kBox) {
        for (index_t j = 0; j < d; ++j) {
            if (u[j] == 0.0) continue;
            const double t1 = (G.low[j] - w[j]) / u[j], t2 = (G.high[j] - w[j]) / u[j];
            a = std::max(a, std::min(t1, t2));
            b = std::min(b, std::max(t1, t2));
        }
    } else {
        for (index_t j = 0; j < d; ++j) {
            if (u[j] > 0.0) a = std::max(a, -w[j] / u[j]);
            else if (u[j] < 0.0) b = std::min(b, -w[j] / u[j]);
        }
    }
    a = std::min(a, 0.0);
    b = std::max(b, 0.0);
}

// Undo rounding that left w a hair outside C (w moved by t u with t in the chord).
FASTERM_INLINE void keep_inside(const Geometry& G, double* w)
{
    const index_t d = G.d;
    if (G.kind == kL2Ball) {
        double pp = 0.0;
        for (index_t j = 0; j < d; ++j) pp += (w[j] - G.center[j]) * (w[j] - G.center[j]);
        const double pn = std::sqrt(pp);
        if (pn > G.radius) {
            const double f = G.radius / pn;
            for (index_t j = 0; j < d; ++j) w[j] = G.center[j] + (w[j] - G.center[j]) * f;
        }
    } else if (G.kind == kBox) {
        for (index_t j = 0; j < d; ++j) w[j] = std::min(std::max(w[j], G.low[j]), G.high[j]);
    } else {
        // Also put sum w back on total: the rounding of w += t u would
        // otherwise let it drift like a random walk over many steps.
        double sum = 0.0;
        for (index_t j = 0; j < d; ++j) {
            w[j] = std::max(w[j], 0.0);
            sum += w[j];
        }
        const double corr = (G.total - sum) / static_cast<double>(d);
        if (corr != 0.0)
            for (index_t j = 0; j < d; ++j) w[j] = std::max(w[j] + corr, 0.0);
    }
}

// ---------------------------------------------------------------------------
// The chain.
// ---------------------------------------------------------------------------
template <class T>
struct Problem {
    int kind;
    const T* X;            // n x d, row-major (unused for the linear loss)
    index_t n, d;
    const double* scale;   // row scales s_i (n), or null: all 1
    const double* y;       // labels as the loss sees them (n), or null (linear)
    const double* g;       // linear loss: sum_i s_i x_i (d)
    double kappa, lam;
    int method;
    double mbound;         // norm bound of C x data norm (+inf: unknown)
};

struct ChainStats {
    long long evaluations;  // line passes over the rows, all steps
};

// Test hook for the polynomial log1p.
inline void log1p_unit_many(const double* e, double* out, index_t n)
{
    for (index_t i = 0; i < n; ++i) out[i] = log1p_unit(e[i]);
}

// Runs `steps` steps from w (updated in place).  z: the margins (n; computed
// here unless the caller says they are current; ignored for the linear loss).  Every `thin` steps w is appended to trace
// (steps / thin rows of d), when trace is not null.
template <class T>
FASTERM_CLONES void run_chain(const Problem<T>& P, const Geometry& G, double* w, double* z, bool fresh_margins,
                              index_t steps, double* trace, index_t thin, bitgen_t* rng, ChainStats* stats)
{
    const index_t n = P.n, d = P.d;
    const bool linear = P.kind == kLinear;
    std::vector<double> u(static_cast<std::size_t>(d)), c(linear ? 0 : static_cast<std::size_t>(n));
    std::vector<T> uT(static_cast<std::size_t>(d));
    Workspace wk;
    // Classification losses see only y_i z_i and y_i c_i: the chain keeps
    // those signed margins, with the label folded into the row scale (y = +-1,
    // so the signs come and go exactly), and one array fewer is read per step.
    const bool signed_margins = P.kind == kLogistic || P.kind == kHinge;
    std::vector<double> ys, ones;
    const double* scale = P.scale;
    if (signed_margins) {
        ys.resize(static_cast<std::size_t>(n));
        ones.assign(static_cast<std::size_t>(n), 1.0);
        for (index_t i = 0; i < n; ++i) ys[i] = P.scale ? P.y[i] * P.scale[i] : P.y[i];
        scale = ys.data();
        if (!fresh_margins)
            for (index_t i = 0; i < n; ++i) z[i] *= P.y[i];
    }
    if (!linear && fresh_margins) {
        row_dots(P.X, n, d, w, z);
        if (scale)
            for (index_t i = 0; i < n; ++i) z[i] *= scale[i];
    }
    double pending = 0.0;
    Line L{};
    L.kind = P.kind;
    L.n = n;
    L.z = z;
    L.c = c.data();
    L.y = signed_margins ? ones.data() : P.y;
    L.unit_labels = signed_margins;
    L.kappa = P.kappa;
    L.lam = P.lam;
    // Every margin over C is at most mbound in absolute value; the factor
    // covers rounding in the chord's ends and the row scales.
    L.mbound = P.mbound * (1.0 + 1e-12);
    for (index_t step = 0; step < steps; ++step) {
        direction(G, rng, u.data());
        // For float data the direction is rounded to float first, so that
        // <x_i, u> is exact in double for the u actually taken (the law of u
        // stays symmetric about 0, which is all reversibility needs).
        if (sizeof(T) < sizeof(double)) {
            for (index_t j = 0; j < d; ++j) u[j] = static_cast<double>(static_cast<T>(u[j]));
        }
        chord(G, w, u.data(), L.a, L.b);
        double wu = 0.0, uu = 0.0;
        for (index_t j = 0; j < d; ++j) {
            wu += w[j] * u[j];
            uu += u[j] * u[j];
        }
        L.wu = wu;
        L.uu = uu;
        if (linear) {
            double sc = 0.0;
            for (index_t j = 0; j < d; ++j) sc += P.g[j] * u[j];
            L.sum_c = sc;
        }
        const LogisticPass0* pre = nullptr;
        LogisticPass0 p0 = logistic_pass0_init(L);
        if (P.kind == kLogistic && P.method != kArs && L.b > L.a) {
            // Block by block, while the block is in L1: the margin update of
            // the previous step, c, and the pass the logistic line sampler
            // starts with.
            for (index_t lo = 0; lo < n; lo += kRows) {
                const index_t cnt = std::min(kRows, n - lo);
                double* cb = c.data() + lo;
                if (pending != 0.0)
                    for (index_t i = 0; i < cnt; ++i) z[lo + i] += pending * cb[i];
                row_dots(P.X + lo * d, cnt, d, u.data(), cb);
                if (scale)
                    for (index_t i = 0; i < cnt; ++i) cb[i] *= scale[lo + i];
                logistic_pass0_block(L, lo, cnt, p0);
            }
            pre = &p0;
        } else if (!linear) {
            if (pending != 0.0)
                for (index_t i = 0; i < n; ++i) z[i] += pending * c[i];
            row_dots(P.X, n, d, u.data(), c.data());
            if (scale)
                for (index_t i = 0; i < n; ++i) c[i] *= scale[i];
        }
        pending = 0.0;
        const double t = sample_line(L, P.method, wk, rng, pre);
        if (t != 0.0) {
            for (index_t j = 0; j < d; ++j) w[j] += t * u[j];
            keep_inside(G, w);
            pending = linear ? 0.0 : t;  // z += t c, done with the next pass over the rows
        }
        if (trace && thin > 0 && (step + 1) % thin == 0) {
            double* row = trace + ((step + 1) / thin - 1) * d;
            for (index_t j = 0; j < d; ++j) row[j] = w[j];
        }
    }
    if (pending != 0.0)
        for (index_t i = 0; i < n; ++i) z[i] += pending * c[i];
    if (signed_margins)
        for (index_t i = 0; i < n; ++i) z[i] *= P.y[i];
    if (stats) stats->evaluations = wk.evaluations;
}

// run_chain with plain arguments (what the Cython layer calls).
template <class T>
void run_chain_args(int kind, const T* X, index_t n, index_t d, const double* scale, const double* y,
                    const double* g, double kappa, double lam, int method, int set_kind,
                    const double* center, double radius, const double* low, const double* high,
                    double total, int directions, double margin_bound, double* w, double* z,
                    bool fresh_margins, index_t steps, double* trace, index_t thin, bitgen_t* rng,
                    long long* evaluations)
{
    const Problem<T> P{kind, X, n, d, scale, y, g, kappa, lam, method, margin_bound};
    const Geometry G{set_kind, d, center, radius, low, high, total, directions};
    ChainStats st{0};
    run_chain(P, G, w, z, fresh_margins, steps, trace, thin, rng, &st);
    if (evaluations) *evaluations = st.evaluations;
}

// Test hook: `size` independent draws from one line density.
inline void line_sample_many(int kind, index_t n, const double* z, const double* c, const double* y,
                             double kappa, double lam, double wu, double uu, double a, double b,
                             double margin_bound, int method, bitgen_t* rng, double* out, index_t size,
                             long long* evaluations)
{
    Line L{kind, n, z, c, y, 0.0, kappa, lam, wu, uu, a, b, margin_bound};
    if (kind == kLinear)
        for (index_t i = 0; i < n; ++i) L.sum_c += c[i];
    Workspace wk;
    for (index_t r = 0; r < size; ++r) out[r] = sample_line(L, method, wk, rng);
    if (evaluations) *evaluations = wk.evaluations;
}

}  // namespace hitrun
}  // namespace fasterm
