// Laplace sampler: a 256-layer ziggurat for Exp(1) (Marsaglia & Tsang, "The
// Ziggurat Method for Generating Random Variables", J. Stat. Softw. 5(8), 2000)
// whose random word also carries the sign.
//
// Why our own ziggurat rather than numpy's exponential times a separate sign:
// the bit generator call dominates the cost, and numpy's exponential ziggurat
// throws away low bits of its 64-bit word.  Taking the sign from one of those
// bits makes Laplace cost exactly one 64-bit draw per sample (in the ~99% fast
// path), where exponential-then-sign costs 1 + 1/64 draws plus a second pass.
//
// Bit layout of one 64-bit word:   bit 0 -> sign, bits 1..8 -> layer, bits 9..63
// -> 55-bit position within the layer.  The three fields are disjoint bits of a
// uniform word, hence independent.  (float32: a 32-bit word, 23-bit position.)
//
// Layers (exponential density f(x) = exp(-x), x >= 0, each layer of area V):
//   X[1] = R (start of the tail), X[i+1] = f^{-1}(f(X[i]) + V / X[i]),
//   layer i >= 1 is the rectangle [0, X[i]] x [f(X[i]), f(X[i+1])], and the
//   top layer reaches f = 1 (X[256] = 0).  Layer 0 is the base strip
//   [0, R] x [0, f(R)] plus the tail x > R, drawn as a rectangle of virtual
//   width X[0] = V / f(R).  A uniform point of a layer is accepted at once when
//   x < X[i+1] (it lies under f for sure); otherwise layer 0 samples the tail
//   as R + Exp(1) (memorylessness), and the other layers test the wedge with a
//   fresh uniform height.  A rejected point restarts from scratch, so the
//   output is exactly Exp(1) up to floating-point rounding.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "numpy/random/bitgen.h"

namespace fasterm {

struct ZigguratTables {
    // Marsaglia-Tsang constants for 256 layers.
    static constexpr double R = 7.69711747013104972;
    static constexpr double V = 3.949659822581572e-3;

    double x[257];        // layer widths X[0..256], X[256] = 0
    double f[257];        // f(X[i]); f[256] = 1
    double w64[256];      // X[i] / 2^55: 55-bit integer -> position
    uint64_t k64[256];    // fast-accept threshold: floor(X[i+1] / X[i] * 2^55)
    double w32[256];      // X[i] / 2^23
    uint32_t k32[256];    // floor(X[i+1] / X[i] * 2^23)

    ZigguratTables() {
        x[0] = V / std::exp(-R);
        x[1] = R;
        for (int i = 1; i < 255; ++i) {
            x[i + 1] = -std::log(std::exp(-x[i]) + V / x[i]);
        }
        x[256] = 0.0;
        for (int i = 0; i < 256; ++i) f[i] = std::exp(-x[i]);
        f[0] = std::exp(-R);  // base layer: its height is f(R), not f(X[0])
        f[256] = 1.0;
        const double two55 = 36028797018963968.0;  // 2^55
        const double two23 = 8388608.0;            // 2^23
        for (int i = 0; i < 256; ++i) {
            const double ratio = x[i + 1] / x[i];
            w64[i] = x[i] / two55;
            k64[i] = static_cast<uint64_t>(ratio * two55);
            w32[i] = x[i] / two23;
            k32[i] = static_cast<uint32_t>(ratio * two23);
        }
    }
};

inline const ZigguratTables& ziggurat_tables() {
    static const ZigguratTables tables;
    return tables;
}

// x with its sign bit flipped when `bit` is 1.  Branch-free on purpose: a
// branch on a random bit mispredicts half the time, which costs more than the
// rest of the fast path.
inline double flip_sign(double x, uint64_t bit) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    b ^= bit << 63;
    std::memcpy(&x, &b, sizeof b);
    return x;
}

inline float flip_sign(float x, uint32_t bit) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    b ^= bit << 31;
    std::memcpy(&x, &b, sizeof b);
    return x;
}

// Rare path of one draw: wedge test or tail.  Returns a magnitude >= 0, or a
// negative number to ask the caller to start over with a fresh word.
inline double ziggurat_slow(bitgen_t* rng, const ZigguratTables& T, int layer, double x) {
    if (layer == 0) {
        // Tail beyond R: R + Exp(1); 1 - U lies in (0, 1], so the log is finite.
        return ZigguratTables::R - std::log1p(-rng->next_double(rng->state));
    }
    const double height = T.f[layer] + rng->next_double(rng->state) * (T.f[layer + 1] - T.f[layer]);
    return (height < std::exp(-x)) ? x : -1.0;
}

// Finish a draw whose first word missed the fast path (about 1% of draws):
// wedge or tail for that word, then fresh words until one is accepted.
inline double laplace_slow(bitgen_t* rng, const ZigguratTables& T, uint64_t word) {
    for (;;) {
        const int layer = static_cast<int>((word >> 1) & 0xFF);
        const uint64_t pos = word >> 9;
        double x = static_cast<double>(static_cast<int64_t>(pos)) * T.w64[layer];
        if (pos < T.k64[layer]) return flip_sign(x, word & 1);
        x = ziggurat_slow(rng, T, layer, x);
        if (x >= 0.0) return flip_sign(x, word & 1);
        word = rng->next_uint64(rng->state);
    }
}

inline float laplace_slow_f(bitgen_t* rng, const ZigguratTables& T, uint32_t word) {
    for (;;) {
        const int layer = static_cast<int>((word >> 1) & 0xFF);
        const uint32_t pos = word >> 9;
        double x = static_cast<double>(static_cast<int32_t>(pos)) * T.w32[layer];
        if (pos < T.k32[layer]) return flip_sign(static_cast<float>(x), word & 1u);
        x = ziggurat_slow(rng, T, layer, x);
        if (x >= 0.0) return flip_sign(static_cast<float>(x), word & 1u);
        word = rng->next_uint32(rng->state);
    }
}

// out[i] = scale * Laplace(0, 1), i < n.
//
// The fast path is written out here rather than in a per-draw function: the bit
// generator's function pointer and state are read once into locals (the
// compiler cannot hoist them itself, since the indirect call might change
// *rng), and the sign is applied to the scaled value with one XOR.
template <class T>
void laplace_fill(bitgen_t* rng, T* out, std::ptrdiff_t n, T scale) {
    const ZigguratTables& tables = ziggurat_tables();
    if constexpr (sizeof(T) == sizeof(float)) {
        uint32_t (*const next)(void*) = rng->next_uint32;
        void* const state = rng->state;
        const double s = static_cast<double>(scale);
        for (std::ptrdiff_t i = 0; i < n; ++i) {
            const uint32_t word = next(state);
            const int layer = static_cast<int>((word >> 1) & 0xFF);
            const uint32_t pos = word >> 9;
            if (pos < tables.k32[layer]) {
                const double x = static_cast<double>(static_cast<int32_t>(pos)) * tables.w32[layer];
                out[i] = flip_sign(static_cast<float>(x) * scale, word & 1u);
            } else {
                out[i] = static_cast<T>(s * static_cast<double>(laplace_slow_f(rng, tables, word)));
            }
        }
    } else {
        uint64_t (*const next)(void*) = rng->next_uint64;
        void* const state = rng->state;
        for (std::ptrdiff_t i = 0; i < n; ++i) {
            const uint64_t word = next(state);
            const int layer = static_cast<int>((word >> 1) & 0xFF);
            const uint64_t pos = word >> 9;
            if (pos < tables.k64[layer]) {
                const double x = static_cast<double>(static_cast<int64_t>(pos)) * tables.w64[layer];
                out[i] = flip_sign(x * scale, word & 1);
            } else {
                out[i] = scale * laplace_slow(rng, tables, word);
            }
        }
    }
}

}  // namespace fasterm
