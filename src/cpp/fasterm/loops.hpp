// The projected (noisy) gradient step loop of fasterm.erm._engine, compiled: one template
// over the gradient sum (a functor: dense rows of losses.hpp, CSR rows of csr.hpp) and the
// dtype T (float, double).
//
// Step t, from w_0 (in place on w):
//   y_t = w_t + β_t (w_t − w_{t−1})          betas (float64, one per step) or none: y_t = w_t
//   acc += y_t                               from step acc_from on (float64), or no acc
//   g   = S(y_t)·s + ρ·y_t + h_t             S the gradient sum, s = 1/n, h_t the next d draws
//   w_{t+1} = Π_C(y_t + (−η_t)·g)            η_t = lrs[t] (float64) or one η
// every operation in T and in this order — what fasterm.erm._engine's numpy loop
// (tests/reference_loops.py) computes, so one seed gives the same bits.  The noise h_t is the
// next d draws of the caller's bit generator: numpy's ziggurat normals times the scale
// (what fasterm.mechanisms.noise.gaussian draws) or fasterm's Laplace ziggurat (ziggurat.hpp).
// Ctrl-C: Interrupt::stop between steps (interrupt.hpp).
//
// Header-only; included by the Cython wrappers (src/fasterm/erm/_loops.pxd).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "numpy/random/distributions.h"
#include "fasterm/codes.hpp"
#include "fasterm/csr.hpp"
#include "fasterm/interrupt.hpp"
#include "fasterm/losses.hpp"
#include "fasterm/projections.hpp"
#include "fasterm/ziggurat.hpp"

namespace fasterm {
namespace loops {

// The feasible set C (codes.hpp's SetKind): an L2 ball (param = radius, a = centre or null),
// a box (a = low, b = high), a simplex (param = total) or an L1 ball (param = radius).
template <class T>
struct Set {
    int kind;
    double param;
    const T* a;
    const T* b;
};

// w ← Π_C(step); work: d scratch values (simplex, L1 ball).
template <class T>
inline void project(const Set<T>& c, const T* step, T* w, std::ptrdiff_t d, T* work) {
    const std::size_t n = static_cast<std::size_t>(d);
    if (c.kind == kL2Ball) {
        project_l2_ball(step, w, n, c.a, c.param);
    } else if (c.kind == kBox) {
        project_box(step, w, n, c.a, c.b);
    } else if (c.kind == kSimplex) {
        project_simplex(step, w, n, c.param, work);
    } else {
        project_l1_ball(step, w, n, c.param, work);
    }
}

// out ← the next d draws of Laplace(0, scale) (kNoiseLaplace) or N(0, scale²) (kNoiseGaussian:
// numpy's ziggurat normals, then the product with the scale).
template <class T>
inline void noise_fill(bitgen_t* rng, int noise, T* out, std::ptrdiff_t d, T scale) {
    if (noise == kNoiseLaplace) {
        laplace_fill(rng, out, d, scale);
        return;
    }
    if constexpr (std::is_same_v<T, double>) {
        random_standard_normal_fill(rng, d, out);
    } else {
        random_standard_normal_fill_f(rng, d, out);
    }
    for (std::ptrdiff_t j = 0; j < d; ++j) out[j] *= scale;
}

// The step parameters of gd_loop.
template <class T>
struct Steps {
    std::ptrdiff_t steps;
    T scale;              // s: the gradient sum's factor (1/n)
    T reg;                // ρ (0: no term)
    double lr;            // η when lrs is null
    const double* lrs;    // η_t, one per step, or null
    const double* betas;  // β_t, one per step, or null (no momentum)
    int noise;            // kNoiseNone, kNoiseLaplace, kNoiseGaussian
    T noise_scale;
    bitgen_t* rng;        // null without noise
    double* acc;          // += y_t for t ≥ acc_from, or null
    std::ptrdiff_t acc_from;
    std::int64_t work;    // the multiply-adds of one step (Interrupt's budget)
};

// Buffers of gd_loop: 6·d values of T.
constexpr std::ptrdiff_t kBuffers = 6;

// The T steps (file comment).  grad_sum(at, out): out ← S(at), d values of T.  Returns the
// steps done (fewer when the Interrupt stopped the loop).
template <class T, class GradSum>
std::ptrdiff_t gd_loop(GradSum& grad_sum, T* w, std::ptrdiff_t d, const Steps<T>& p, const Set<T>& c, T* buf,
                       Interrupt* stop) {
    T* grad = buf;
    T* step = buf + d;
    T* noise = buf + 2 * d;
    T* work = buf + 3 * d;
    T* prev = buf + 4 * d;
    T* ybuf = buf + 5 * d;
    const std::size_t bytes = static_cast<std::size_t>(d) * sizeof(T);
    if (p.betas != nullptr) std::memcpy(prev, w, bytes);  // w_{−1} = w_0
    const T neg_lr0 = static_cast<T>(-p.lr);
    for (std::ptrdiff_t t = 0; t < p.steps; ++t) {
        if (stop->stop(p.work, t)) return t;
        const T* y = w;
        if (p.betas != nullptr) {
            const T b = static_cast<T>(p.betas[t]);
            for (std::ptrdiff_t j = 0; j < d; ++j) ybuf[j] = w[j] + b * (w[j] - prev[j]);
            std::memcpy(prev, w, bytes);
            y = ybuf;
        }
        if (p.acc != nullptr && t >= p.acc_from) {
            for (std::ptrdiff_t j = 0; j < d; ++j) p.acc[j] += static_cast<double>(y[j]);
        }
        grad_sum(y, grad);
        if (p.noise != kNoiseNone) noise_fill(p.rng, p.noise, noise, d, p.noise_scale);
        const T neg_lr = p.lrs != nullptr ? static_cast<T>(-p.lrs[t]) : neg_lr0;
        for (std::ptrdiff_t j = 0; j < d; ++j) {
            T g = grad[j] * p.scale;
            if (p.reg != 0) g = g + y[j] * p.reg;
            if (p.noise != kNoiseNone) g = g + noise[j];
            step[j] = g * neg_lr + y[j];
        }
        project(c, step, w, d, work);
    }
    return p.steps;
}

// The gradient sums of gd_loop.  Dense rows: losses.hpp's grad_sum.
template <class T>
struct DenseSum {
    int kind;
    const T* X;
    const T* y;
    const double* norms;
    std::ptrdiff_t n, d;
    losses::Options o;
    int n_threads;
    void operator()(const T* at, T* out) { losses::grad_sum<T>(kind, X, y, at, norms, n, d, o, out, n_threads); }
};

// CSR rows: csr.hpp's csr_grad_sum; bad counts the stored values outside the columns (skipped).
template <class T, class I>
struct CsrSum {
    int kind;
    const I* indptr;
    const I* indices;
    const T* data;
    const T* y;
    const double* norms;
    std::ptrdiff_t n, d;
    losses::Options o;
    int n_threads;
    std::ptrdiff_t bad;
    void operator()(const T* at, T* out) {
        bad += losses::csr_grad_sum<T, I>(kind, indptr, indices, data, y, at, norms, n, d, o, out, n_threads);
    }
};

}  // namespace loops
}  // namespace fasterm
