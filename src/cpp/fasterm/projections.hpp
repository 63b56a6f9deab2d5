// Euclidean projections onto the feasible sets of fasterm.
//
// Header-only, templated on the element type (float or double); every
// threshold, norm and sum is accumulated in double.  No Python here: the
// Cython layer validates its input (finite, contiguous, consistent shapes)
// before calling in, with the GIL released.
//
//   simplex   {w >= 0, sum w = s}     Condat (2016), expected O(d)
//   L1 ball   {||w||_1 <= r}          simplex projection of |v|, signs restored
//   L2 ball   {||w - c||_2 <= R}      radial scaling
//   box       {lo <= w <= hi}         coordinatewise clipping
//
// Every *_rows function projects the m rows of a C-contiguous (m, d) array y
// into x.  x may be y itself (in place) but must not partially overlap it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>

namespace fasterm {

namespace detail {

// Threshold tau of a simplex projection, x_i = max(y_i - tau, 0), stored as
// tau = shift + offset with shift = max_i y_i.  Active entries y_i lie within
// `a` of the maximum, so y_i - shift is exact (Sterbenz) wherever it matters
// and offset is of the size of `a`: the output keeps full relative accuracy
// even when |y| is many orders of magnitude larger than the total `a`, where
// y_i - tau in one double would lose every digit of x_i.
struct Threshold {
    double shift;
    double offset;
    bool finite() const noexcept { return std::isfinite(shift) && std::isfinite(offset); }
};

// Slack under the running threshold for the filter tests.  Every rho below
// is the threshold of *some* subset B, tau_B = (sum_B y - a)/|B|, and
// tau_B <= tau* for all B (Condat 2016; the reason discarding y <= rho is
// safe).  rho carries rounding error (a running sum over up to n entries, and
// for float input the rounding of the level to float), so an entry is
// discarded only when it lies clearly below rho.  Extra candidates cost next
// to nothing; losing an active one (a tie at the maximum with |y| >> a, say)
// would be wrong.
inline double filter_level(double rho, double a) noexcept
{
    return rho - 0x1p-20 * (std::fabs(rho) + a);
}

// z_1 + ... + z_k, z_j = v[j] - shift, with Knuth's TwoSum error terms:
// nearly exact, as the final threshold (hence the output sum) comes from it.
// Four independent lanes so that consecutive adds do not wait on each other.
template <class T>
double shifted_sum(const T* v, std::size_t k, double shift) noexcept
{
    double s[4] = {0.0, 0.0, 0.0, 0.0}, e[4] = {0.0, 0.0, 0.0, 0.0};
    std::size_t j = 0;
    for (; j + 4 <= k; j += 4) {
        for (int l = 0; l < 4; ++l) {
            const double z = double(v[j + l]) - shift;
            const double t = s[l] + z;
            const double bp = t - s[l];
            e[l] += (s[l] - (t - bp)) + (z - bp);
            s[l] = t;
        }
    }
    for (; j < k; ++j) {
        const double z = double(v[j]) - shift;
        const double t = s[0] + z;
        const double bp = t - s[0];
        e[0] += (s[0] - (t - bp)) + (z - bp);
        s[0] = t;
    }
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((e[0] + e[1]) + (e[2] + e[3]));
}

// Threshold of the projection of (get(0), ..., get(n-1)) onto the simplex of
// total a > 0, by Condat's algorithm ("Fast projection onto the simplex and
// the l1 ball", Math. Programming 158 (2016), section 3, the algorithm with
// the pivot lists v and v~).  get(i) returns the i-th entry as a T; n >= 1.
// `lower` is any known lower bound on tau (-inf when none).  `work` holds n
// T's; its contents are overwritten.  Returns a non-finite threshold only if
// an intermediate overflowed (|y| or a near DBL_MAX); the caller rescales.
template <class T, class Get>
Threshold condat_threshold(Get get, std::size_t n, double a, double lower, T* work) noexcept
{
    // work[0, nt) is the set-aside list v~, work[nt, nt + nv) the current
    // list v: moving v into v~ is then just nt += nv, no copying.
    std::size_t nt = 0, nv = 1;
    work[0] = get(0);
    // v is tracked by its sum S, not by rho = (S - a)/|v| updated in place as
    // in the paper: then the only loop-carried chain is an add, and the
    // division that refreshes the filter level hangs off it.  (In the paper's
    // form an input inside the simplex, where every entry is kept, runs at
    // the latency of one division per entry.)
    double S = double(work[0]);
    double cmax = S;  // the maximum always passes the filter: max_i y_i
    double level = std::max(filter_level(S - a, a), lower);
    T tlevel = T(level);  // compared in T: no per-entry float -> double

    // Step 2, one pass over the data.  The threshold of v only increases, and
    // almost every entry falls below it after the first few: the loop is a
    // compare and a well-predicted branch per entry.
    for (std::size_t i = 1; i < n; ++i) {
        const T yi = get(i);
        if (yi > tlevel) {
            const double y = double(yi);
            cmax = std::max(cmax, y);
            // Keep y in v iff tau(v + y) = (S + y - a)/(|v| + 1) > y - a.
            if (S > double(nv) * (y - a)) {
                work[nt + nv] = yi;
                ++nv;
                S += y;
            } else {
                // y alone gives a larger threshold than v with y: restart v
                // from y and keep the old v aside for step 3.
                nt += nv;
                work[nt] = yi;
                nv = 1;
                S = y;
            }
            level = std::max(filter_level((S - a) / double(nv), a), lower);
            tlevel = T(level);
        }
    }

    // Step 3: bring back the set-aside entries still above the level.  They are
    // compacted towards the end of v~ so that v stays contiguous.
    std::size_t first = nt;
    for (std::size_t j = nt; j-- > 0;) {
        const double y = double(work[j]);
        if (y > level) {
            work[--first] = work[j];
            ++nv;
            S += y;
            level = std::max(filter_level((S - a) / double(nv), a), lower);
        }
    }
    if (!std::isfinite(level))
        return {level, level};
    T* v = work + first;
    std::size_t k = nv;

    // tau >= c - a, the threshold of the maximum c alone: entries at or below
    // c - a go now, which leaves shifted values z = y - c in (-a, 0].
    const double c = cmax;
    {
        std::size_t kept = 0;
        for (std::size_t j = 0; j < k; ++j)
            if (double(v[j]) - c > -a)
                v[kept++] = v[j];
        k = kept;
    }
    if (k == 0)  // unreachable unless rounding lost the maximum: tau({c})
        return {c, -a};

    // Step 4 (Michelot's iteration with Condat's in-pass updates), run on the
    // shifted values.  Each round restarts from a compensated sum, so drift
    // of the incremental updates stays small; it ends when a sweep against
    // the recomputed threshold removes nothing.  z == 0 (the maximum and its
    // ties) is never removed: tau < c always.
    double off;
    for (;;) {
        off = (shifted_sum(v, k, c) - a) / double(k);
        double run = off;
        std::size_t kept = 0, count = k;
        for (std::size_t j = 0; j < k; ++j) {
            const double z = double(v[j]) - c;
            if (z < 0.0 && z <= run) {
                --count;
                run += (run - z) / double(count);
            } else {
                v[kept++] = v[j];
            }
        }
        if (kept == k)
            break;
        k = kept;
    }
    return {c, off};
}

// The same threshold, recomputed on data scaled by a power of two when an
// intermediate overflowed (double input within a factor ~n of DBL_MAX).
// Power-of-two scaling is exact, so the result is the same projection.
template <class T, class Get>
Threshold robust_threshold(Get get, std::size_t n, double a, double lower, T* work) noexcept
{
    Threshold t = condat_threshold<T>(get, n, a, lower, work);
    if (t.finite())
        return t;
    const int e = std::ilogb(double(n)) + 3;
    const T scale = T(std::ldexp(1.0, -e));
    auto scaled = [&get, scale](std::size_t i) { return T(get(i) * scale); };
    t = condat_threshold<T>(scaled, n, std::ldexp(a, -e), std::ldexp(lower, -e), work);
    return {std::ldexp(t.shift, e), std::ldexp(t.offset, e)};
}

// Scratch for one row: the output row itself when it is not the input (no
// allocation at all), otherwise one buffer shared by all rows.
template <class T>
struct Scratch {
    std::unique_ptr<T[]> owned;
    T* get(const T* y, T* x, std::size_t d)
    {
        if (x != y)
            return x;
        if (!owned)
            owned.reset(new T[d]);  // uninitialised on purpose: touched lazily
        return owned.get();
    }
};

}  // namespace detail

// Euclidean projection of y (n entries) onto {w >= 0, sum w = total}:
// x_i = max(y_i - tau, 0), tau by Condat's algorithm.  x may equal y; `work`
// holds n T's and must alias neither y nor, if x == y, x (it may be x when
// x != y).
template <class T>
void project_simplex(const T* y, T* x, std::size_t n, double total, T* work) noexcept
{
    if (n == 0)
        return;
    const auto t = detail::robust_threshold<T>(
        [y](std::size_t i) { return y[i]; }, n, total,
        -std::numeric_limits<double>::infinity(), work);
    const double c = t.shift, off = t.offset;
    // max taken after rounding to T (rounding is monotone, so it is the same
    // number) because GCC vectorises a max in T but not the mixed-width one.
    for (std::size_t i = 0; i < n; ++i)
        x[i] = std::max(T(0), T((double(y[i]) - c) - off));
}

// Euclidean projection onto {||w||_1 <= radius}: y itself when inside,
// otherwise sign(y_i) * max(|y_i| - tau, 0) with tau the threshold of the
// projection of |y| onto the simplex of total `radius` (Condat 2016, sect. 2;
// Duchi et al. 2008).  Same aliasing rules as project_simplex.
template <class T>
void project_l1_ball(const T* y, T* x, std::size_t n, double radius, T* work) noexcept
{
    if (n == 0)
        return;
    // Four partial sums: lets the compiler vectorise the reduction without
    // reassociating a single floating-point chain.
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int l = 0; l < 4; ++l)
            s[l] += std::fabs(double(y[i + l]));
    for (; i < n; ++i)
        s[0] += std::fabs(double(y[i]));
    const double norm1 = (s[0] + s[1]) + (s[2] + s[3]);
    if (norm1 <= radius) {
        if (x != y)
            std::copy(y, y + n, x);
        return;
    }
    // The threshold of the whole vector bounds tau from below and lets the
    // first pass discard small entries straight away.
    // (With the filter's slack: when |y| >> radius it rounds onto the entries.)
    const double lower = std::isfinite(norm1)
        ? detail::filter_level((norm1 - radius) / double(n), radius)
        : -std::numeric_limits<double>::infinity();
    const auto t = detail::robust_threshold<T>(
        [y](std::size_t j) { return T(std::fabs(y[j])); }, n, radius, lower, work);
    const double c = t.shift, off = t.offset;
    for (std::size_t j = 0; j < n; ++j) {
        const T m = std::max(T(0), T((std::fabs(double(y[j])) - c) - off));
        x[j] = std::copysign(m, y[j]);
    }
}

// Euclidean projection onto {||w - center||_2 <= radius} (center may be
// nullptr for 0): w = center + (y - center) * min(1, radius / ||y - center||).
template <class T>
void project_l2_ball(const T* y, T* x, std::size_t n, const T* center, double radius) noexcept
{
    auto diff = [y, center](std::size_t i) {
        return center ? double(y[i]) - double(center[i]) : double(y[i]);
    };
    double ss = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double t = diff(i);
        ss += t * t;
    }
    if (ss > 0x1p-900 && ss < 0x1p+900) {
        const double norm = std::sqrt(ss);
        if (norm <= radius) {
            if (x != y)
                std::copy(y, y + n, x);
            return;
        }
        const double f = radius / norm;
        for (std::size_t i = 0; i < n; ++i)
            x[i] = T((center ? double(center[i]) : 0.0) + diff(i) * f);
        return;
    }
    // The squares under- or overflowed: redo with u = (y - c) / m, m the
    // largest |y_i - c_i| (formed as y/2 - c/2, which cannot overflow), so
    // that 1 <= ||u|| <= sqrt(n).
    auto half = [y, center](std::size_t i) {
        return 0.5 * double(y[i]) - (center ? 0.5 * double(center[i]) : 0.0);
    };
    double m = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        m = std::max(m, std::fabs(half(i)));
    if (m == 0.0) {
        if (x != y)
            std::copy(y, y + n, x);
        return;
    }
    double su = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double u = half(i) / m;
        su += u * u;
    }
    const double unorm = std::sqrt(su);
    // ||y - c|| = 2 m ||u||; compare without forming it (it may overflow).
    if (m <= 0.5 * radius / unorm) {
        if (x != y)
            std::copy(y, y + n, x);
        return;
    }
    const double f = radius / unorm;
    for (std::size_t i = 0; i < n; ++i)
        x[i] = T((center ? double(center[i]) : 0.0) + (half(i) / m) * f);
}

// Euclidean projection onto the box {lo_i <= w_i <= hi_i} (lo <= hi).
template <class T>
void project_box(const T* y, T* x, std::size_t n, const T* lo, const T* hi) noexcept
{
    for (std::size_t i = 0; i < n; ++i)
        x[i] = std::min(std::max(y[i], lo[i]), hi[i]);
}

// Euclidean projection onto the cube [lo, hi]^n (lo <= hi).
template <class T>
void project_box(const T* y, T* x, std::size_t n, T lo, T hi) noexcept
{
    for (std::size_t i = 0; i < n; ++i)
        x[i] = std::min(std::max(y[i], lo), hi);
}

// ---- (m, d) row batches -------------------------------------------------

// Allocates one scratch row of d T's only when x == y (may throw bad_alloc).
template <class T>
void project_simplex_rows(const T* y, T* x, std::size_t m, std::size_t d, double total)
{
    detail::Scratch<T> scratch;
    for (std::size_t r = 0; r < m; ++r)
        project_simplex(y + r * d, x + r * d, d, total, scratch.get(y + r * d, x + r * d, d));
}

template <class T>
void project_l1_ball_rows(const T* y, T* x, std::size_t m, std::size_t d, double radius)
{
    detail::Scratch<T> scratch;
    for (std::size_t r = 0; r < m; ++r)
        project_l1_ball(y + r * d, x + r * d, d, radius, scratch.get(y + r * d, x + r * d, d));
}

template <class T>
void project_l2_ball_rows(const T* y, T* x, std::size_t m, std::size_t d, const T* center,
                         double radius) noexcept
{
    for (std::size_t r = 0; r < m; ++r)
        project_l2_ball(y + r * d, x + r * d, d, center, radius);
}

template <class T>
void project_box_rows(const T* y, T* x, std::size_t m, std::size_t d, const T* lo,
                      const T* hi) noexcept
{
    for (std::size_t r = 0; r < m; ++r)
        project_box(y + r * d, x + r * d, d, lo, hi);
}

template <class T>
void project_box_scalar_rows(const T* y, T* x, std::size_t m, std::size_t d, T lo,
                             T hi) noexcept
{
    // A batch of rows against scalar bounds is one long vector.
    project_box(y, x, m * d, lo, hi);
}

}  // namespace fasterm
