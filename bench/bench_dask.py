"""Noisy PGD on a dask cluster vs in memory (fasterm.erm._dask).

Full run (n = 1e6, d = 100, float64, a 2-worker LocalCluster; ~1 GB per copy of X):

    python bench/bench_dask.py [--n 1000000] [--d 100] [--steps 20] [--chunks 2 4 8 16]

prints the time per iteration in memory, on the cluster for each number of
row chunks, and with dask's local threaded scheduler.  The time per
iteration is (time of a run of 1 + S steps − time of a 1-step run) / S, so
the one-off preparation (row norms; on the cluster also the task round trip
of the finiteness flags) is left out; it is printed separately.

Small pytest-benchmark version (n = 2e5):

    pytest bench/bench_dask.py --benchmark-enable
"""

import argparse
import time

import numpy as np
import pytest

import fasterm as fe

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

CLIP, RADIUS, LR = 0.5, 5.0, 0.1


def make_X(n, d, chunks):
    """Gaussian rows of norm ≈ 1 and ±1 labels, generated chunk by chunk where X lives."""
    rng = da.random.default_rng(0)
    X = rng.standard_normal((n, d), chunks=(chunks, d)) / np.sqrt(d)
    y = da.where(rng.random(n, chunks=chunks) < 0.5, -1.0, 1.0)
    return X, y


def fit(X, y, steps, client=None):
    kw = {} if client is None else {"client": client}
    return fe.noisy_pgd(fe.losses.Logistic(), X, y, fe.L2Ball(RADIUS, X.shape[1]), 1.0,
                        delta=1e-6, steps=steps, clip=CLIP, data_norm=1.0, lr=LR,
                        average=False, random_state=1, **kw)


def timed(X, y, steps, client=None):
    t = time.perf_counter()
    fit(X, y, steps, client)
    return time.perf_counter() - t


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--d", type=int, default=100)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--chunks", type=int, nargs="+", default=[2, 4, 8, 16])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    n, d, S = a.n, a.d, a.steps
    print(f"n={n}, d={d}, float64, clipped logistic, Laplace l2 noise; time per iteration = "
          f"(t(1+{S} steps) - t(1 step))/{S}, each the best of {a.repeat} interleaved runs")
    with distributed.LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        X, y = make_X(n, d, n // max(a.chunks))
        X, y = client.persist([X, y])
        Xm, ym = client.compute([X, y], sync=True)  # the in-memory copy, for the reference
        configs = [(f"in memory (numpy, {fe.losses._available_cpus()} kernel threads)", Xm, ym, None)]
        for k in a.chunks:
            Xk, yk = client.persist([X.rechunk((-(-n // k), d)), y.rechunk(-(-n // k))])
            configs.append((f"dask, {a.workers}-worker LocalCluster, {k:2d} chunks", Xk, yk, client))
        k = a.workers
        configs.append((f"dask, local threaded scheduler, {k:2d} chunks",
                        da.from_array(Xm, chunks=(-(-n // k), d)), da.from_array(ym, chunks=-(-n // k)),
                        None))
        with client.as_current():
            distributed.wait([c[1] for c in configs[1:-1]] + [c[2] for c in configs[1:-1]])
        best = {name: [np.inf, np.inf] for name, *_ in configs}
        for _ in range(a.repeat):
            for name, Xc, yc, cl in configs:
                b = best[name]
                b[0] = min(b[0], timed(Xc, yc, 1, cl))
                b[1] = min(b[1], timed(Xc, yc, 1 + S, cl))
        # the scheduler's round trip alone: k trivial tasks, mapped and gathered
        overhead = {}
        for k in a.chunks:
            small = client.scatter([np.zeros(d) for _ in range(k)])
            runs = []
            for _ in range(20):
                t = time.perf_counter()
                client.gather(client.map(np.sum, small, pure=False))
                runs.append(time.perf_counter() - t)
            overhead[k] = np.median(runs)
        ref = None
        for name, *_ in configs:
            t1, ts = best[name]
            it = (ts - t1) / S
            ref = it if ref is None else ref
            print(f"{name:45s} {it * 1e3:7.1f} ms/iteration  ({it / ref:4.2f}x in memory; "
                  f"one-off {max(t1 - it, 0) * 1e3:4.0f} ms)")
        for k, t in overhead.items():
            print(f"round trip of {k:2d} trivial tasks on the cluster (median of 20): {t * 1e3:5.1f} ms")


# -- pytest-benchmark (small) ---------------------------------------------------------------

N_SMALL, D_SMALL, STEPS = 200_000, 100, 10


@pytest.fixture(scope="module")
def cluster_data():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        X, y = make_X(N_SMALL, D_SMALL, N_SMALL // 4)
        X, y = client.persist([X, y])
        Xm, ym = client.compute([X, y], sync=True)
        yield client, X, y, Xm, ym


# Two threads on both sides: the cluster's 2 workers × 1 thread, and the in-memory fit
# pinned to all CPUs (conftest.py's all_threads; the machine has 2).
@pytest.mark.benchmark(group=f"dask-noisy-pgd-{STEPS}-steps-n2e5-d100-2-workers-x-1-thread-vs-in-memory-all-cpus")
def test_in_memory(benchmark, cluster_data, all_threads):
    _, _, _, Xm, ym = cluster_data
    benchmark(fit, Xm, ym, STEPS)


@pytest.mark.benchmark(group=f"dask-noisy-pgd-{STEPS}-steps-n2e5-d100-2-workers-x-1-thread-vs-in-memory-all-cpus")
def test_dask_2_workers_4_chunks(benchmark, cluster_data, all_threads):
    client, X, y, _, _ = cluster_data
    benchmark(fit, X, y, STEPS, client)


if __name__ == "__main__":
    main()
