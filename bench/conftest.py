"""Benchmarks run only on request: ``pytest bench --benchmark-enable``.

Each kernel is timed beside the way a numpy user would write it; compare the
ratios within one run (the machine is shared and noisy).

Thread counts are pinned on both sides and named in every benchmark group:
the ``threads`` fixture (parametrized 1 and all CPUs) limits the BLAS pools
with threadpoolctl and restricts the process's CPU affinity to that many
CPUs, so fasterm calls without an ``n_threads`` argument (their default is
the CPUs this process may run on) use the same count; calls that take
``n_threads`` get it explicitly.  ``all_threads`` pins all CPUs only.  Every
other benchmark (single-threaded code on both sides) runs pinned to one
thread, and "-1-thread" is added to its group.
"""

from __future__ import annotations

import contextlib
import os

import pytest
from threadpoolctl import threadpool_limits

ALL_CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
THREADS = sorted({1, ALL_CPUS})


@contextlib.contextmanager
def pinned(n: int):
    """BLAS pools limited to n threads, and the process to its first n CPUs."""
    has_affinity = hasattr(os, "sched_setaffinity")
    before = os.sched_getaffinity(0) if has_affinity else None
    try:
        if has_affinity:
            os.sched_setaffinity(0, sorted(before)[:n])
        with threadpool_limits(limits=n):
            yield n
    finally:
        if has_affinity:
            os.sched_setaffinity(0, before)


@pytest.fixture(params=THREADS, ids=[f"{t}-thread{'s' if t > 1 else ''}" for t in THREADS])
def threads(request):
    """n threads for both sides: BLAS, the process's CPUs, and fasterm's n_threads."""
    with pinned(request.param) as n:
        yield n


@pytest.fixture
def all_threads():
    """All CPUs on both sides (BLAS pools and fasterm)."""
    with pinned(ALL_CPUS) as n:
        yield n


@pytest.fixture(autouse=True)
def _one_thread_unless_asked(request):
    """Benchmarks that name no thread count run on one thread, and say so."""
    if {"threads", "all_threads"} & set(request.fixturenames):
        yield
        return
    if "benchmark" in request.fixturenames:
        bm = request.getfixturevalue("benchmark")
        if bm.group and not bm.group.endswith("-1-thread"):
            bm.group = f"{bm.group}-1-thread"
    with pinned(1):
        yield
