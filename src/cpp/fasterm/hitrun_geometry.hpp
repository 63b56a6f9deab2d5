// Hit-and-run (hitrun.hpp), its feasible sets (L2 ball, box, simplex):
// random directions, the chord through a point, and the projection that keeps
// the chain inside against rounding.  Header-only, no Python.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "numpy/random/bitgen.h"
#include "fasterm/codes.hpp"
#include "fasterm/hitrun_math.hpp"
#include "fasterm/truncnorm.hpp"  // random_standard_normal

namespace fasterm {
namespace hitrun {

// Set kinds and directions: the codes of fasterm/codes.hpp.

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
FASTERM_ALWAYS_INLINE void direction(const Geometry& G, bitgen_t* rng, double* u)
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
FASTERM_ALWAYS_INLINE void chord(const Geometry& G, const double* w, const double* u, double& a, double& b)
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
FASTERM_ALWAYS_INLINE void keep_inside(const Geometry& G, double* w)
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

}  // namespace hitrun
}  // namespace fasterm
