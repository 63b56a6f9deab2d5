// The interruption check of the compiled loops (Ctrl-C during a long fit).
//
// A loop that runs with the GIL released calls Interrupt::stop(work) between
// units of its work (a step; in the multiclass kernel, a block of rows), with
// `work` the multiply-adds the unit made.  After every kBudget units it reads a
// monotonic clock, and at most once per kPeriod it calls the caller's check
// (the Cython layer's, src/fasterm/_interrupt.pxd: the GIL taken, Python's
// signal handlers run, the progress callback told the step); a nonzero answer
// stops the loop, which returns to its caller, where the exception the check
// left set propagates (KeyboardInterrupt).  The check touches no data, no
// buffer of the loop and no random state: a loop that is not stopped computes
// the same bits as without it.
//
// Header-only, no Python.h.
#pragma once

#include <chrono>
#include <cstdint>

namespace fasterm {

class Interrupt {
public:
    // check(ctx, step): nonzero to stop; null: never stops (the clock is still read).
    using Check = int (*)(void*, std::int64_t);
    // Units of work between two clock readings (a reading costs tens of ns; 2^20
    // multiply-adds take about a millisecond).
    static constexpr std::int64_t kBudget = std::int64_t(1) << 20;
    // The least time between two checks (each takes the GIL).
    static constexpr std::chrono::milliseconds kPeriod{100};

    Interrupt() : next_(clock::now() + kPeriod) {}

    void watch(Check check, void* ctx) {
        check_ = check;
        ctx_ = ctx;
    }

    // After `work` units at step `step` (the progress shown): true when the loop must stop.
    bool stop(std::int64_t work, std::int64_t step) {
        step_ = step;
        return stop(work);
    }

    // The same within a step (the step last given).
    bool stop(std::int64_t work) {
        if (stopped_) return true;
        left_ -= work;
        if (left_ > 0) return false;
        left_ = kBudget;
        const clock::time_point now = clock::now();
        if (now < next_) return false;
        stopped_ = check_ != nullptr && check_(ctx_, step_) != 0;
        next_ = clock::now() + kPeriod;  // after the check: its own time is not counted
        return stopped_;
    }

    // Whether a check asked the loop to stop (the caller then raises what it left set).
    bool stopped() const { return stopped_; }

private:
    using clock = std::chrono::steady_clock;
    Check check_ = nullptr;
    void* ctx_ = nullptr;
    std::int64_t left_ = kBudget;
    std::int64_t step_ = 0;
    bool stopped_ = false;
    clock::time_point next_;
};

}  // namespace fasterm
