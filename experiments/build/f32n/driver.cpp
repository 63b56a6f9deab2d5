// f32n: A/B of the float32 clipped logistic gradient sum, two builds of
// losses.hpp ("base" and "nv", see run.sh) in one process, interleaved.
#include "fasterm/losses.hpp"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>
#include <sys/mman.h>
namespace fasterm { namespace losses {
#define DECL(ns) namespace ns { FASTERM_LOSSES_DECLARE_ENTRY_POINTS(Logistic, float, ) FASTERM_LOSSES_NORMS_ENTRY(float); }
DECL(base)
DECL(nv)
}}
using namespace fasterm::losses;
typedef void (*Fn)(Logistic, const float*, const float*, const float*, const double*,
                   const std::int64_t*, index_t, index_t, index_t, index_t, const Options&,
                   double*, float*);
typedef void (*Nf)(const float*, index_t, index_t, index_t, double*);

static double run(Fn f, int threads, const float* X, const float* y, const float* w,
                  const double* norms, index_t n, index_t d, const Options& o, double* out) {
    const index_t block = make_plan(n, d, 4).block;
    std::vector<std::vector<double>> acc(threads, std::vector<double>(d, 0.0));
    std::vector<std::vector<float>> scr(threads, std::vector<float>(d, 0.0f));
    auto t0 = std::chrono::steady_clock::now();
    if (threads == 1) {
        f(Logistic{}, X, y, w, norms, nullptr, 0, n, d, block, o, acc[0].data(), scr[0].data());
    } else {
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t)
            pool.emplace_back([&, t] {
                f(Logistic{}, X, y, w, norms, nullptr, n * t / threads, n * (t + 1) / threads, d,
                  block, o, acc[t].data(), scr[t].data());
            });
        f(Logistic{}, X, y, w, norms, nullptr, 0, n / threads, d, block, o, acc[0].data(), scr[0].data());
        for (auto& th : pool) th.join();
    }
    auto t1 = std::chrono::steady_clock::now();
    for (index_t j = 0; j < d; ++j) { double s = 0; for (int t = 0; t < threads; ++t) s += acc[t][j]; out[j] = s; }
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 100;
    const index_t n = argc > 2 ? std::atol(argv[2]) : 100000, d = argc > 3 ? std::atol(argv[3]) : 100;
    const int hot = argc > 4 ? std::atoi(argv[4]) : 0;  // repeat a small X (L2) instead
    const char* names[] = {"base", "nv"};
    Fn fns[] = {base::grad_sum_entry, nv::grad_sum_entry};
    Nf nfs[] = {base::norms_entry, nv::norms_entry};
    std::mt19937_64 g(0);
    std::normal_distribution<float> nd;
    const int huge = getenv("F32N_HUGE") ? atoi(getenv("F32N_HUGE")) : 1;
    std::size_t bytes = ((n * d * 4) + (2 << 20) - 1) / (2 << 20) * (2 << 20);
    float* Xp = static_cast<float*>(std::aligned_alloc(2 << 20, bytes));
    if (huge) madvise(Xp, bytes, MADV_HUGEPAGE);
    struct { float* p; index_t sz; float* data() const { return p; } float* begin() { return p; } float* end() { return p + sz; } float& operator[](index_t i) { return p[i]; } } X{Xp, n * d};
    std::vector<float> y(n), w(d);
    for (auto& v : X) v = nd(g);
    for (auto& v : y) v = nd(g) > 0 ? 1.f : -1.f;
    for (auto& v : w) v = 0.1f * nd(g);
    std::vector<double> out(d), ref(d);
    Options o{0.0, 0.5, INFINITY};
    o.hot = hot;
    // accuracy vs a long-double reference
    {
        std::vector<long double> r(d, 0.0L);
        for (index_t i = 0; i < n; ++i) {
            long double z = 0, s = 0;
            for (index_t j = 0; j < d; ++j) { z += (long double)X[i*d+j] * w[j]; s += (long double)X[i*d+j] * X[i*d+j]; }
            long double nr = sqrtl(s);
            long double a = -y[i] / (1 + expl(y[i] * z));
            if (fabsl(a) * nr > 0.5L) a = copysignl(0.5L / nr, a);
            for (index_t j = 0; j < d; ++j) r[j] += a * X[i*d+j];
        }
        for (int k = 0; k < 2; ++k) {
            std::vector<double> nr(n);
            nfs[k](X.data(), 0, n, d, nr.data());
            for (int cached = 0; cached < 2; ++cached) {
                run(fns[k], 1, X.data(), y.data(), w.data(), cached ? nr.data() : nullptr, n, d, o, out.data());
                double e = 0, m = 0;
                for (index_t j = 0; j < d; ++j) { e = std::max(e, (double)fabsl(out[j] - r[j])); m = std::max(m, (double)fabsl(r[j])); }
                if (cached == 0) ref = out;
                bool same = std::memcmp(ref.data(), out.data(), d * 8) == 0;
                std::printf("%s cached=%d max err %.3g (rel to max %.3g) same-as-in-pass=%d\n", names[k], cached, e, e / m, (int)same);
            }
        }
    }
    std::vector<double> nr(n);
    base::norms_entry(X.data(), 0, n, d, nr.data());
    for (int th = 1; th <= 2; ++th)
        for (int cached = 0; cached < 2; ++cached) {
            double best[2] = {1e9, 1e9};
            for (int r = 0; r < reps; ++r)
                for (int k = 0; k < 2; ++k)
                    best[k] = std::min(best[k], run(fns[k], th, X.data(), y.data(), w.data(),
                                                    cached ? nr.data() : nullptr, n, d, o, out.data()));
            std::printf("n=%td d=%td hot=%d threads=%d %s: base %.3f ms  nv %.3f ms  (nv/base %.3f)\n", n, d, hot, th,
                        cached ? "cached " : "in-pass", best[0], best[1], best[1] / best[0]);
        }
}
