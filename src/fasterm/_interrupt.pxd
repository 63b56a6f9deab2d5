# The interruption check of the compiled loops (src/cpp/fasterm/interrupt.hpp): a long loop that
# runs with the GIL released polls an Interrupt between units of its work; about every 100 ms
# the check below takes the GIL, runs Python's signal handlers (Ctrl-C raises KeyboardInterrupt
# there) and tells the progress callback, if any, the step reached.  An exception raised by
# either stops the loop, which returns early; its wrapper then calls raise_if_stopped (with the
# GIL, after the loop's nogil block), which raises it.  Nothing of the loop's data, buffers or
# random state is read or written: an uninterrupted loop computes the same bits.
#
# Use, in a wrapper:
#     cdef Interrupt stop
#     state = watch(&stop, progress)      # keep `state` alive while the loop runs
#     with nogil:
#         loop(..., &stop)                # polls stop.stop(work, t); returns when it is true
#     raise_if_stopped(&stop, state)
from cpython.exc cimport PyErr_CheckSignals
from libc.stdint cimport int64_t


cdef extern from "fasterm/interrupt.hpp" namespace "fasterm" nogil:
    cdef cppclass Interrupt "fasterm::Interrupt":
        Interrupt()
        void watch(int (*check)(void*, int64_t) noexcept nogil, void* ctx)
        bint stop(int64_t work, int64_t step)
        bint stop(int64_t work)
        bint stopped()


cdef inline int _check(void* ctx, int64_t step) noexcept nogil:
    # Interrupt's check; ctx: watch's state [progress or None, the exception that stopped the loop].
    # 1 (stop) when a signal handler or the progress callback raised.
    with gil:
        state = <list> ctx
        try:
            PyErr_CheckSignals()
            if state[0] is not None:
                state[0](step)
        except BaseException as e:
            state[1] = e
            return 1
    return 0


cdef inline list watch(Interrupt* stop, object progress):
    """Arm ``stop`` with the signal check and ``progress(step)`` (a callable, or None) at each check;
    returns the check's state, which the caller keeps alive while the loop runs."""
    state = [progress, None]
    stop.watch(_check, <void*> state)
    return state


cdef inline int raise_if_stopped(Interrupt* stop, list state) except -1:
    """Raise the exception that stopped the loop (none: return 0)."""
    if stop.stopped():
        e = state[1]
        state[1] = None
        raise e if e is not None else KeyboardInterrupt()
    return 0
