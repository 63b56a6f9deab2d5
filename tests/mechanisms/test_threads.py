"""Thread safety: the compiled kernels release the GIL, and threaded calls equal sequential ones.

* Each task gets its own Generator (seed i); run on 8 threads
  (ThreadPoolExecutor) the results are bit-for-bit those of a sequential
  loop — for the noise fills, grad_sum (also with n_threads=2 inside),
  projections, the exponential mechanism, median, noisy_pgd, expmech_erm and
  run_rwm.
* The GIL really is released: while one thread runs a long kernel, the main
  thread keeps executing Python bytecode.  We count the main thread's 1-ms
  wake-ups during the kernel; a kernel that held the GIL would leave it none
  (checked on a control, ``list.sort`` of Python floats, which holds it).
  This needs only the OS to schedule the main thread now and then, not a
  free second core, so it is robust on a loaded 2-core machine — unlike a
  wall-time speedup measurement.  grad_sum is covered by reading the pyx
  (see the kernels' comment below).
* One Generator shared by many threads: numpy's bit-generator lock, which
  every fasterm sampler holds for its whole fill, serialises the calls, so
  each call's output is one whole block of the sequential stream, in some
  order.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import fasterm as fe
from fasterm import mechanisms
from fasterm.mechanisms import _noise, univariate

THREADS = 8
TASKS = 16

_rng = np.random.default_rng(123)
X = _rng.standard_normal((4000, 20)) / 5
Y = np.where(_rng.random(4000) < 0.5, -1.0, 1.0)
XS = X[:200].copy()
YS = Y[:200].copy()


def _task_functions():
    loss = fe.losses.Logistic()
    ball = fe.L2Ball(1.0, 20)
    simplex = fe.Simplex(50_000)
    scores = np.random.default_rng(5).random(10_000)
    data = np.random.default_rng(6).random(20_000)
    loss_matrix = np.random.default_rng(7).random((2000, 50))
    return {
        "noise.laplace": lambda i: fe.noise.laplace(200_000, 1.5, random_state=np.random.default_rng(i)),
        "noise.gaussian32": lambda i: fe.noise.gaussian(200_000, 0.5, random_state=np.random.default_rng(i),
                                                        dtype=np.float32),
        "grad_sum": lambda i: loss.grad_sum(np.full(20, 0.01 * i), X, Y, clip=0.5, n_threads=1),
        "grad_sum(n_threads=2)": lambda i: loss.grad_sum(np.full(20, 0.01 * i), X, Y, clip=0.5, n_threads=2),
        "simplex.project": lambda i: simplex.project(np.random.default_rng(i).standard_normal(50_000)),
        "ball.project": lambda i: ball.project(np.random.default_rng(i).standard_normal((500, 20))),
        "exponential": lambda i: mechanisms.releases._exponential(scores, 1.0, 1.0, np.random.default_rng(i), False, 5000),
        "exponential(secure)": lambda i: mechanisms.releases._exponential(scores, 1.0, 1.0, np.random.default_rng(i), False,
                                                                  20_000, True),
        "median": lambda i: univariate._sample("median", data, (0.0, 1.0), 1.0, random_state=i, size=2000),
        "noisy_pgd": lambda i: fe.noisy_pgd(loss, XS, YS, ball, 1.0, 1e-5, steps=50, noise="gaussian",
                                            data_norm=1.0, random_state=i).w,
        "expmech_erm": lambda i: fe.expmech_erm(loss, XS, YS, ball, 1.0, data_norm=1.0, steps=20,
                                                random_state=i).w,
        "run_rwm": lambda i: fe.online.run_rwm(loss_matrix, 0.1, random_state=i).actions,
    }


TASK_FUNCTIONS = _task_functions()


@pytest.mark.parametrize("name", list(TASK_FUNCTIONS))
def test_threaded_calls_equal_sequential(name):
    f = TASK_FUNCTIONS[name]
    sequential = [f(i) for i in range(TASKS)]
    with ThreadPoolExecutor(THREADS) as pool:
        threaded = list(pool.map(f, range(TASKS)))
    for s, t in zip(sequential, threaded):
        np.testing.assert_array_equal(s, t)
    # the tasks are not trivially equal to each other (each seed/input differs)
    assert not np.array_equal(sequential[0], sequential[1])


# ---------------------------------------------------------------------------
# The GIL is released
# ---------------------------------------------------------------------------
def _main_thread_steps_during(kernel):
    """Run ``kernel`` in a thread; count the main thread's wake-ups while it runs.

    The main thread sleeps 1 ms at a time (releasing the GIL at once, so it
    never starves the worker) and stamps each wake-up, which needs the GIL.
    Returns (wake-ups strictly between the kernel's start and end, kernel
    wall time): a kernel holding the GIL allows at most one or two (around
    its entry); one that releases it allows one per few ms, even when the
    OS deschedules the main thread for a while on a loaded machine.
    """
    started = threading.Event()
    times = {}

    def work():
        times["start"] = time.perf_counter()
        started.set()
        kernel()
        times["end"] = time.perf_counter()

    stamps = []
    th = threading.Thread(target=work)
    th.start()
    started.wait()
    while th.is_alive():
        stamps.append(time.perf_counter())
        time.sleep(0.001)
    th.join()
    t = np.array(stamps)
    steps = int(np.count_nonzero((t > times["start"]) & (t < times["end"])))
    return steps, times["end"] - times["start"]


# Each kernel below is ONE compiled call lasting 40 ms or more (a Python loop
# of short calls would switch threads between the calls and prove nothing).
# grad_sum is not timed here: one call long enough would need a ~200 MB X; its
# four entry points in src/fasterm/_losses.pyx (grad_sum, value_sum,
# grad_matrix, row_norms) run their kernels inside `with nogil:`, and the
# threaded-equality tests above exercise it.
def _prepared(f, *args, **kw):
    return lambda: f(*args, **kw)


_GIL_KERNELS = {  # name -> factory of a zero-argument call whose inputs are built beforehand
    "laplace_fill": lambda: _prepared(_noise.laplace_fill, np.random.default_rng(0).bit_generator,
                                      np.empty(20_000_000), 1.0),
    "gaussian_fill": lambda: _prepared(_noise.gaussian_fill, np.random.default_rng(0).bit_generator,
                                       np.empty(20_000_000), 1.0),
    "simplex_project": lambda: _prepared(fe.Simplex(5_000_000)._project,
                                         np.random.default_rng(0).standard_normal(5_000_000),
                                         np.empty(5_000_000)),
    "run_rwm": lambda: _prepared(fe.online.run_rwm, np.random.default_rng(0).random((20_000, 500)), 0.1,
                                 np.random.default_rng(0)),
    "exponential": lambda: _prepared(mechanisms.releases._exponential, np.random.default_rng(0).random(1000), 1.0, 1.0,
                                     np.random.default_rng(0), False, 300_000),
    "median": lambda: _prepared(univariate._sample, "median", np.sort(np.random.default_rng(0).random(100_000)),
                                (0.0, 1.0), 1.0, random_state=0, size=40_000),
}


@pytest.mark.parametrize("name", list(_GIL_KERNELS))
def test_kernel_releases_the_gil(name):
    kernel = _GIL_KERNELS[name]()  # inputs built here, outside the timed call
    # A kernel that held the GIL could never let the main thread wake 6 times
    # while it runs (the control below: <= 3), so one such attempt is proof;
    # up to 5 attempts absorb a loaded machine descheduling the main thread.
    for _ in range(5):
        steps, wall = _main_thread_steps_during(kernel)
        if steps >= 6:
            break
    assert steps >= 6, f"the main thread woke {steps} times during a {wall:.3f} s kernel"


def test_gil_check_detects_a_kernel_that_holds_the_gil():
    # Control (the power of the check above): sorting a list of Python floats
    # is C code (list.sort, C float comparisons) that keeps the GIL for the
    # whole call.
    # As above, up to 5 attempts absorb a loaded machine (where the main thread
    # can also run between the timer start and the call's first instruction).
    data = np.random.default_rng(11).random(1_000_000).tolist()
    for _ in range(5):
        floats = list(data)  # unsorted again for each attempt
        steps, wall = _main_thread_steps_during(lambda: floats.sort())
        if steps <= 3:
            break
    assert wall > 0.1
    assert steps <= 3, f"the main thread woke {steps} times while list.sort held the GIL"


# ---------------------------------------------------------------------------
# One Generator shared by many threads
# ---------------------------------------------------------------------------
def _blocks(outputs):
    return sorted(tuple(np.asarray(o).ravel().tolist()) for o in outputs)


@pytest.mark.parametrize("sampler", ["laplace", "gaussian", "run_rwm", "median"])
def test_shared_generator_gives_an_interleaving_of_whole_calls(sampler):
    calls, size = 64, 3000
    lm = np.random.default_rng(1).random((size, 8))
    data = np.random.default_rng(2).random(500)

    def draw(rng):
        if sampler == "laplace":
            return fe.noise.laplace(size, 1.0, random_state=rng)
        if sampler == "gaussian":
            return fe.noise.gaussian(size, 1.0, random_state=rng)
        if sampler == "run_rwm":
            return fe.online.run_rwm(lm, 0.3, random_state=rng).actions
        return univariate._sample("median", data, (0.0, 1.0), 1.0, random_state=rng, size=size)

    seq_rng = np.random.default_rng(42)
    sequential = [draw(seq_rng) for _ in range(calls)]
    shared = np.random.default_rng(42)
    with ThreadPoolExecutor(THREADS) as pool:
        threaded = list(pool.map(lambda _: draw(shared), range(calls)))
    # Every call holds the bit generator's lock for its whole draw, so each
    # threaded output is one of the sequential blocks (in some order), and the
    # Generator ends where the sequential one does.
    assert _blocks(threaded) == _blocks(sequential)
    assert shared.bit_generator.state == seq_rng.bit_generator.state
