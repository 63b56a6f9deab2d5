// The standard normal truncated to an interval (Botev's exact sampler), for
// expmech.hpp (fasterm.erm.expmech.truncnorm_sample) and hitrun.hpp's quadratic
// line densities.  Header-only, no Python.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "numpy/random/bitgen.h"

// numpy's ziggurat normal from libnpyrandom (numpy/random/distributions.h,
// which cannot be included here because it pulls in Python.h).
extern "C" double random_standard_normal(bitgen_t* bitgen_state);

namespace fasterm {

// ---------------------------------------------------------------------------
// Standard normal truncated to [lo, hi] (lo < hi, either may be infinite),
// exact up to rounding in every regime, including intervals far in a tail.
// The case split is Botev's (J. R. Stat. Soc. B 79, 2017, "trandn"); each
// branch is a rejection sampler whose accepted draws have exactly the target
// density:
//   lo >= kTail:  Rayleigh proposal truncated to [lo, hi] by inversion,
//                 density prop. to x exp(-x^2/2), accepted with probability
//                 lo / x (Marsaglia 1964); acceptance >= lo / (lo + 1/lo).
//   hi <= -kTail: the mirror image.
//   otherwise the interval meets [-kTail, kTail]:
//     wide (hi - lo > kWide): N(0, 1) draws until one lands inside
//                 (acceptance >= P(0.66 < Z < 2.71) = 0.25);
//     narrow:     uniform proposal, accepted with probability
//                 exp((c^2 - x^2) / 2), c the point of [lo, hi] nearest 0
//                 (acceptance >= 0.38 over the possible intervals).
// The tail branch adds the overshoot to lo, lo + 2e / (lo + sqrt(lo^2 + 2e)),
// instead of taking sqrt(lo^2 + 2e): the draw keeps its digits when lo is
// large, and nothing overflows even for lo near the double range.
// ---------------------------------------------------------------------------
namespace detail {

inline double normal_tail(double lo, double hi, bitgen_t* rng)
{
    // f = exp(-(hi^2 - lo^2) / 2) - 1; (hi - lo)(hi + lo) cannot lose the
    // leading digits the way hi^2 - lo^2 would.
    const double f = std::isinf(hi) ? -1.0 : std::expm1(-0.5 * (hi - lo) * (hi + lo));
    for (;;) {
        const double u = rng->next_double(rng->state);
        const double v = rng->next_double(rng->state);
        const double e = -std::log1p(u * f);  // (x^2 - lo^2) / 2 of the proposal
        const double t = 2.0 * e / (lo + std::hypot(lo, std::sqrt(2.0 * e)));
        // accept with probability lo / (lo + t)
        if (v * t <= lo * (1.0 - v)) return std::min(lo + t, hi);
    }
}

}  // namespace detail

inline double truncnorm_std(double lo, double hi, bitgen_t* rng)
{
    constexpr double kTail = 0.66;
    constexpr double kWide = 2.05;
    if (lo >= kTail) return detail::normal_tail(lo, hi, rng);
    if (hi <= -kTail) return -detail::normal_tail(-hi, -lo, rng);
    if (hi - lo > kWide) {
        for (;;) {
            const double z = random_standard_normal(rng);
            if (z >= lo && z <= hi) return z;
        }
    }
    const double c = lo > 0.0 ? lo : (hi < 0.0 ? hi : 0.0);
    for (;;) {
        const double x = std::min(lo + (hi - lo) * rng->next_double(rng->state), hi);
        const double v = rng->next_double(rng->state);
        if (v <= std::exp(0.5 * (c - x) * (c + x))) return x;
    }
}

// Normal(mu, sigma^2) truncated to [a, b]; the draw is clamped to [a, b]
// against rounding in mu + sigma * z.
inline void truncnorm_sample(double mu, double sigma, double a, double b, bitgen_t* rng,
                             double* out, std::ptrdiff_t size)
{
    const double lo = (a - mu) / sigma, hi = (b - mu) / sigma;
    for (std::ptrdiff_t r = 0; r < size; ++r) {
        const double z = truncnorm_std(lo, hi, rng);
        out[r] = std::min(std::max(mu + sigma * z, a), b);
    }
}

}  // namespace fasterm
