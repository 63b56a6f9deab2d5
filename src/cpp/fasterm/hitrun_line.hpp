// Hit-and-run (hitrun.hpp), its line samplers: exact draws from the
// one-dimensional density of the target on a chord (the methods are listed in
// hitrun.hpp's opening comment).  Header-only, no Python.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include "numpy/random/bitgen.h"
#include "fasterm/codes.hpp"
#include "fasterm/hitrun_math.hpp"
#include "fasterm/truncnorm.hpp"

namespace fasterm {
namespace hitrun {

// Loss kinds and line methods: the codes of fasterm/codes.hpp.

// Above this many rows, hinge/absolute lines use ARS (O(n) per evaluation, a
// few evaluations) instead of sorting every kink (O(n log n)); both are exact.
constexpr index_t kPiecewiseMaxRows = 2048;

constexpr int kArsMaxPoints = 200;

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
FASTERM_ALWAYS_INLINE void line_sums(const Line& L, const double* t, int K, double* F, double* D, double* C,
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
FASTERM_ALWAYS_INLINE double line_h(const Line& L, double t, double F, double F0) noexcept
{
    return -L.kappa * (F - F0) - L.lam * t * (L.wu + 0.5 * t * L.uu);
}
FASTERM_ALWAYS_INLINE double line_g(const Line& L, double t, double D) noexcept
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
FASTERM_ALWAYS_INLINE double piecewise_exp_sample(const double* p, const double* H, const double* s, index_t P,
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
FASTERM_ALWAYS_INLINE double tail_offset(double lo, double hi, bitgen_t* rng)
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

FASTERM_ALWAYS_INLINE double truncnorm_line(double mu, double sigma, double a, double b, bitgen_t* rng)
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
FASTERM_ALWAYS_INLINE double quadratic_line(double A, double B, double a, double b, std::vector<double>& mass,
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
FASTERM_ALWAYS_INLINE double piecewise_linear_line(const Line& L, Workspace& wk, bitgen_t* rng)
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
FASTERM_ALWAYS_INLINE void ars_insert(Workspace& wk, double x, double h, double g)
{
    auto it = std::lower_bound(wk.ax.begin(), wk.ax.end(), x);
    const std::size_t pos = static_cast<std::size_t>(it - wk.ax.begin());
    if (it != wk.ax.end() && *it == x) return;
    wk.ax.insert(it, x);
    wk.ah.insert(wk.ah.begin() + static_cast<std::ptrdiff_t>(pos), h);
    wk.ag.insert(wk.ag.begin() + static_cast<std::ptrdiff_t>(pos), g);
}

FASTERM_ALWAYS_INLINE double ars_line(const Line& L, Workspace& wk, bitgen_t* rng)
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
FASTERM_ALWAYS_INLINE LogisticPass0 logistic_pass0_init(const Line& L) noexcept
{
    LogisticPass0 r{0.0, 0.0, {0.0, 0.0, 0.0, 0.0}, !(L.mbound <= 2.0)};
    return r;
}

// Rows [lo, lo + cnt) of the pass (cnt <= kRows), accumulated into r.
FASTERM_ALWAYS_INLINE void logistic_pass0_block(const Line& L, index_t lo, index_t cnt, LogisticPass0& r)
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

FASTERM_ALWAYS_INLINE LogisticPass0 logistic_pass0(const Line& L)
{
    LogisticPass0 r = logistic_pass0_init(L);
    for (index_t lo = 0; lo < L.n; lo += kRows) logistic_pass0_block(L, lo, std::min(kRows, L.n - lo), r);
    return r;
}

// pre: the pass already made (fused with the computation of c by the chain),
// or null.
FASTERM_ALWAYS_INLINE double logistic_line(const Line& L, int method, Workspace& wk, bitgen_t* rng,
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
FASTERM_ALWAYS_INLINE double sample_line(const Line& L, int method, Workspace& wk, bitgen_t* rng,
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

}  // namespace hitrun
}  // namespace fasterm
