// Hit-and-run for the exponential mechanism of convex ERM (fasterm.erm.expmech):
// a Markov chain on a feasible set C (L2 ball, box, simplex) whose stationary
// density is proportional to exp(-k L(w)), L(w) = (1/n) sum_i l(<w, s_i x_i>, y_i)
// + l2/2 |w|^2, for the losses of linear models.
//
// Header-only, no Python; in layers: hitrun_math.hpp (arithmetic),
// hitrun_line.hpp (line samplers), hitrun_geometry.hpp (feasible sets) and
// here the chain.  The Cython layer validates everything; the public
// layer prepares the per-row scales s_i (rows beyond the data norm) and the
// labels (+-1 for classification, clipped for regression).
//
// One step from w (Smith-Ullman lecture 11 Alg. 1; docs/guarantees.rst):
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
#include <vector>

#include "numpy/random/bitgen.h"
#include "fasterm/codes.hpp"
#include "fasterm/hitrun_geometry.hpp"  // feasible sets
#include "fasterm/hitrun_line.hpp"      // line samplers
#include "fasterm/hitrun_math.hpp"      // arithmetic
#include "fasterm/interrupt.hpp"        // Ctrl-C between steps
#include "fasterm/simd.hpp"

// The chain (run_chain) has an AVX2 version and the baseline (the same bits:
// -ffp-contract=off, CMakeLists.txt), without expmech.hpp's AVX-512 version
// (why: docs/building.rst, "Build cost").
//
// FASTERM_HITRUN_DISPATCH (CMakeLists.txt, GCC on x86-64): the units
// hitrun_f32.cpp and hitrun_f64.cpp are compiled twice, with
// FASTERM_HITRUN_ISA = avx2 (at -O3) and = baseline (at -O1, which only CPUs
// without AVX2 run), into namespaces avx2:: and baseline::, and
// run_chain_args picks one per call (simd.hpp's per-call dispatch, the test
// of target_clones("avx2", "default")).  Without it one baseline version is
// built.
#if defined(FASTERM_HITRUN_DISPATCH) && defined(FASTERM_HITRUN_ISA)
#define FASTERM_HITRUN_CLONES FASTERM_ISA_TARGET(FASTERM_HITRUN_ISA)
#define FASTERM_HITRUN_ISA_BEGIN namespace FASTERM_HITRUN_ISA {
#define FASTERM_HITRUN_ISA_END }
#else
#define FASTERM_HITRUN_CLONES
#define FASTERM_HITRUN_ISA_BEGIN
#define FASTERM_HITRUN_ISA_END
#endif

namespace fasterm {
namespace hitrun {

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

// run_chain with plain arguments (what the Cython layer calls).
#define FASTERM_HITRUN_CHAIN_ARGS(T)                                                                   \
    void run_chain_args(int kind, const T* X, index_t n, index_t d, const double* scale, const double* y, \
                        const double* g, double kappa, double lam, int method, int set_kind,          \
                        const double* center, double radius, const double* low, const double* high,  \
                        double total, int directions, double margin_bound, double* w, double* z,      \
                        bool fresh_margins, index_t steps, double* trace, index_t thin, bitgen_t* rng, \
                        long long* evaluations, Interrupt* stop)

#if !defined(FASTERM_HITRUN_DISPATCH) || defined(FASTERM_HITRUN_ISA)
FASTERM_HITRUN_ISA_BEGIN
// Runs `steps` steps from w (updated in place).  z: the margins (n; computed
// here unless the caller says they are current; ignored for the linear loss).  Every `thin` steps w is appended to trace
// (steps / thin rows of d), when trace is not null.  stop (or null) is polled
// before each step (interrupt.hpp); when it says stop, the chain ends there
// (w, z and the bit generator hold a partial run; the caller raises).
template <class T>
FASTERM_HITRUN_CLONES void run_chain(const Problem<T>& P, const Geometry& G, double* w, double* z, bool fresh_margins,
                              index_t steps, double* trace, index_t thin, bitgen_t* rng, ChainStats* stats,
                              Interrupt* stop)
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
        if (stop && stop->stop(n * (d + 1) + d, step)) break;
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

template <class T>
FASTERM_HITRUN_CLONES FASTERM_HITRUN_CHAIN_ARGS(T)
{
    const Problem<T> P{kind, X, n, d, scale, y, g, kappa, lam, method, margin_bound};
    const Geometry G{set_kind, d, center, radius, low, high, total, directions};
    ChainStats st{0};
    run_chain(P, G, w, z, fresh_margins, steps, trace, thin, rng, &st, stop);
    if (evaluations) *evaluations = st.evaluations;
}

FASTERM_HITRUN_ISA_END

// The chain for each dtype is instantiated in a translation unit of its own
// (src/cpp/fasterm/hitrun_f32.cpp, hitrun_f64.cpp), which the build compiles
// in parallel with the Cython wrapper: in one unit, the four inlined copies
// of the chain (two dtypes, two instruction sets) were the longest
// compilation of the whole build.
FASTERM_HITRUN_ISA_BEGIN
extern template FASTERM_HITRUN_CHAIN_ARGS(float);
extern template FASTERM_HITRUN_CHAIN_ARGS(double);
FASTERM_HITRUN_ISA_END
#else  // FASTERM_HITRUN_DISPATCH, outside the units: declarations, and the choice
namespace avx2 {
template <class T>
FASTERM_ISA_TARGET(avx2) FASTERM_HITRUN_CHAIN_ARGS(T);
}  // namespace avx2
namespace baseline {
template <class T>
FASTERM_HITRUN_CHAIN_ARGS(T);
}  // namespace baseline
template <class T, class... A>
inline void run_chain_args(const A&... a)
{
    FASTERM_ISA_USE(avx2) ? avx2::run_chain_args<T>(a...) : baseline::run_chain_args<T>(a...);
}
#endif

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
