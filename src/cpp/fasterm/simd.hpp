// What the compiled kernels share: forced inlining, load-time instruction-set
// dispatch, vector types, and the pieces of the branch-free exp.
//
// Each module keeps its own floating-point policy, set per target in
// CMakeLists.txt (_expmech and _hitrun: -ffp-contract=off, so that every
// instruction-set version computes the same bits; _losses and _online:
// contraction on).  Nothing here depends on it: the functions below are
// inlined into each module and compiled under that module's flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

// Everything hot is forced inline into the dispatched entry points, so that
// it is compiled once per instruction set.
#if defined(__GNUC__) || defined(__clang__)
#define FASTERM_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define FASTERM_ALWAYS_INLINE inline
#endif

// Load-time dispatch: FASTERM_TARGET_CLONES("isa", ..., "default") compiles a
// function once per listed instruction set and lets the dynamic loader pick
// one (GCC function multiversioning through an ifunc), so a wheel runs on any
// x86-64 CPU.  Only where ifuncs exist (GCC 12+ on x86-64 Linux, glibc);
// elsewhere, or with -DFASTERM_NO_MULTIVERSIONING, one baseline version is
// built.  Each module names its own list (FASTERM_EXPMECH_CLONES; online.hpp,
// whose versions differ in vector width, uses target("...") overloads under
// the same condition; losses.hpp and hitrun.hpp compile their two versions in
// units of their own and pick one per call, below), kept only where a
// benchmark showed it pays: see those headers and docs/building.rst.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && defined(__x86_64__) && \
    defined(__linux__) && defined(__GLIBC__) && !defined(FASTERM_NO_MULTIVERSIONING)
#define FASTERM_MULTIVERSIONING 1
#define FASTERM_TARGET_CLONES(...) __attribute__((target_clones(__VA_ARGS__)))
#else
#define FASTERM_MULTIVERSIONING 0
#define FASTERM_TARGET_CLONES(...)
#endif

// Per-call dispatch, for modules whose versions are compiled in translation
// units of their own (fasterm_isa_units in CMakeLists.txt: the vector version
// at the module's -O3, the baseline at -O1; target_clones would compile both
// at -O3, and the baseline only runs on CPUs without AVX2).  A module's units
// are compiled with FASTERM_<MODULE>_ISA = the vector version's name (v3 or
// avx2 below) and = baseline, and define their entry points in namespaces of
// those names (FASTERM_ISA_TARGET(isa) on each); its other sources get
// -DFASTERM_<MODULE>_DISPATCH and call FASTERM_ISA_USE(isa) ? isa::f(...) :
// baseline::f(...).  FASTERM_ISA_USE makes the test GCC's target_clones
// resolver makes for the same target string, once; with
// -DFASTERM_NO_MULTIVERSIONING it is false and the vector version is
// compiled for the baseline too (how the tests reach the baseline on an AVX2
// machine).  Each module's header says which version it keeps and why.
#define FASTERM_CAT_(a, b) a##b
#define FASTERM_CAT(a, b) FASTERM_CAT_(a, b)
#if defined(__GNUC__) && defined(__x86_64__) && !defined(FASTERM_NO_MULTIVERSIONING)
// x86-64-v3: AVX2 + FMA ("arch=haswell" would test the CPU *model*).
#define FASTERM_ISA_TARGET_v3 __attribute__((target("arch=x86-64-v3")))
#define FASTERM_ISA_TARGET_avx2 __attribute__((target("avx2")))
#define FASTERM_ISA_USE(isa) ::fasterm::simd::cpu_has(::fasterm::simd::Isa::isa)
#else
#define FASTERM_ISA_TARGET_v3
#define FASTERM_ISA_TARGET_avx2
#define FASTERM_ISA_USE(isa) false
#endif
#define FASTERM_ISA_TARGET_baseline
#define FASTERM_ISA_TARGET(isa) FASTERM_CAT(FASTERM_ISA_TARGET_, isa)

namespace fasterm {
namespace simd {

// FASTERM_ISA_USE's answer: the CPU tests of GCC's resolvers, made once.
enum class Isa { v3, avx2 };
inline bool cpu_has(Isa isa) noexcept
{
#if defined(__GNUC__) && defined(__x86_64__)
    static const bool v3 = (__builtin_cpu_init(), __builtin_cpu_supports("x86-64-v3") != 0);
    static const bool avx2 = __builtin_cpu_supports("avx2") != 0;
    return isa == Isa::v3 ? v3 : avx2;
#else
    return false;
#endif
}

// W lanes of T as one GCC/Clang vector (W = 1: T itself), and the unsigned
// integers of the same width (comparison masks, exponent bits).
template <class T>
using uint_of = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
template <class T, int W>
struct Vec {
    typedef T type __attribute__((vector_size(sizeof(T) * W)));
    typedef uint_of<T> bits __attribute__((vector_size(sizeof(T) * W)));
};
template <class T>
struct Vec<T, 1> {
    typedef T type;
    typedef uint_of<T> bits;
};

inline double bits_to_double(std::uint64_t u) noexcept
{
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
}

inline std::uint64_t double_to_bits(double d) noexcept
{
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
}

// ---------------------------------------------------------------------------
// exp of x <= 0, branch-free, in pieces that work lane by lane on a double or
// a vector of doubles (libm's exp is a scalar call).  Each module assembles
// its own exp from them (the clamp of tiny arguments, the polynomial, how 2^k
// is applied); those choices fix its bits, which its tests pin.
//
// Range reduction (Cody-Waite): x = k ln2 + r, |r| <= ln2 / 2.  k is the
// round-to-nearest of x log2(e), obtained by adding the shifter 1.5 * 2^52
// (the sum's low mantissa bits then hold k in two's complement); ln2 is split
// as fdlibm does, so that k * ln2_hi is exact.
constexpr double kLog2e = 0x1.71547652b82fep0;
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;   // 6.93147180369123816490e-01
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;  // 1.90821492927058770002e-10
constexpr double kShifter = 0x1.8p52;

// r, with `shifted` = k + 1.5 * 2^52 (exactly representable).
template <class V>
FASTERM_ALWAYS_INLINE V exp_reduce(V x, V& shifted) noexcept
{
    shifted = x * kLog2e + kShifter;
    const V k = shifted - kShifter;
    return (x - k * kLn2Hi) - k * kLn2Lo;
}

// The bits of 2^k, from the bits of `shifted` (k >= -1022): k + 1023 in the
// exponent field (the shifter's own bits all shift out).
template <class U>
FASTERM_ALWAYS_INLINE U exp2_bits(U shifted_bits) noexcept
{
    return (shifted_bits + 1023u) << 52;
}

// 1 / j!, correctly rounded (j! is exact in double for j <= 18).
constexpr double kInvFactorial[] = {
    1.0, 1.0, 1.0 / 2.0, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0,
    1.0 / 5040.0, 1.0 / 40320.0, 1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0,
    1.0 / 479001600.0, 1.0 / 6227020800.0};

// The Taylor polynomial of exp of degree Deg at x, by Horner's rule (fewest
// operations: these loops are throughput bound); for |x| <= a its error is
// below a^(Deg+1) / (Deg+1)! plus rounding.
template <int Deg, class V>
FASTERM_ALWAYS_INLINE V exp_taylor(V x) noexcept
{
    static_assert(Deg >= 1 && Deg < int(sizeof kInvFactorial / sizeof kInvFactorial[0]), "degree");
    V p = V{} + kInvFactorial[Deg];
    for (int j = Deg - 1; j >= 0; --j) p = p * x + kInvFactorial[j];
    return p;
}

// P(r) = sum_k r^k / (k + 2)!, k = 0..11, so that e^r - 1 = r + r^2 P(r) to
// within 1.2e-17 relative for |r| <= ln2 / 2; Estrin's scheme keeps the
// dependency chain short, so consecutive elements overlap in the pipeline.
FASTERM_ALWAYS_INLINE double expm1_poly(double r) noexcept
{
    const double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    const double p01 = 1.0 / 2.0 + r * (1.0 / 6.0);
    const double p23 = 1.0 / 24.0 + r * (1.0 / 120.0);
    const double p45 = 1.0 / 720.0 + r * (1.0 / 5040.0);
    const double p67 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    const double p89 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
    const double pab = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
    return (p01 + r2 * p23) + r4 * (p45 + r2 * p67) + r8 * (p89 + r2 * pab);
}

// e^x and e^x - 1 for x <= 0 (expmech.hpp's weights, hitrun.hpp's line
// densities): e^r - 1 = r + r^2 P(r) (truncation < 1.2e-17 relative), then
// e^x = 2^k (1 + q) and e^x - 1 = 2^k q + (2^k - 1), which keeps full
// relative accuracy of expm1 for tiny |x| (k = 0: it is q itself) and needs no
// division.  Arguments below -708 give e = 0, em1 = -1 (2^k would be
// subnormal), and so does NaN (the comparison with -708 fails).  Written for
// one double: the callers' loops over blocks are what the compiler
// vectorises, and the selects are if-converted only when the module is built
// with -fno-trapping-math (CMakeLists.txt): GCC otherwise refuses to compute
// the polynomial for lanes whose result it can predict.
FASTERM_ALWAYS_INLINE void exp_nonpos(double x, double& e, double& em1) noexcept
{
    const bool under = !(x > -708.0);
    const double xc = under ? 0.0 : (x < 0.0 ? x : 0.0);
    double shifted;
    const double r = exp_reduce(xc, shifted);
    const double q = r + (r * r) * expm1_poly(r);
    const double s = bits_to_double(exp2_bits(double_to_bits(shifted)));
    e = under ? 0.0 : s + s * q;
    em1 = under ? -1.0 : s * q + (s - 1.0);
}

// sum of w[0..cnt) in four interleaved partial sums, added as
// (s0 + s1) + (s2 + s3): the loop is not a chain of dependent adds, and every
// caller that sums the same block gets the same number.
FASTERM_ALWAYS_INLINE double block_sum(const double* w, std::ptrdiff_t cnt) noexcept
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    std::ptrdiff_t i = 0;
    for (; i + 4 <= cnt; i += 4) {
        s0 += w[i];
        s1 += w[i + 1];
        s2 += w[i + 2];
        s3 += w[i + 3];
    }
    for (; i < cnt; ++i) s0 += w[i];
    return (s0 + s1) + (s2 + s3);
}

}  // namespace simd
}  // namespace fasterm
