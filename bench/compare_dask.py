"""The default private fit on dask vs in memory vs dask-ml (binary logistic regression).

One invocation, for each n and dtype:

* fasterm in memory (``DPLogisticRegression()`` on a numpy X: noisy SGD, compiled);
* fasterm on dask's local threaded scheduler (no cluster) and on a 2-worker
  ``LocalCluster`` (the default for a dask X: the same noisy SGD, its batches
  fetched from the chunks, ``fasterm.erm._dask.SampledRows``);
* dask-ml's ``LogisticRegression`` (non-private; solvers lbfgs and admm) on the
  same cluster, if dask-ml is installed (``pip install ".[bench]"`` or
  ``pip install dask-ml``; never required by fasterm).

    nice -n 5 python bench/compare_dask.py --n 1000000 4000000 --dtype float64 float32

Data: d = 100 (``--d``), rows uniform on the sphere of radius 0.9 (inside the
unit ball the estimator declares), labels y ~ Bernoulli(sigmoid(s·⟨w*, x⟩)), s = 3·√d/0.9 (a logit of standard deviation 3),
for a fixed unit w* (Bayes accuracy 0.836), generated chunk by chunk
on the workers (8 row chunks); accuracy on 200,000 fresh rows.  ε = 1,
δ = 1e-5.  X is persisted on the cluster before any dask fit is timed; the
in-memory fit gets X already in memory.  Prints time (s), test accuracy and
rounds (fasterm on dask: its round trips; in memory: its steps; dask-ml: its
iterations).
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np

D_DEFAULT, CHUNKS, LOGIT_SD, RADIUS = 100, 8, 3.0, 0.9


def w_star(d):
    w = np.random.default_rng(12345).standard_normal(d)
    return w / np.linalg.norm(w)


def make(n, d, dtype, seed, chunks=CHUNKS):
    """(X, y) as dask arrays, y in {0, 1}, generated chunk by chunk where they are computed."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    rows = -(-n // chunks)
    G = rng.standard_normal((n, d), chunks=(rows, d))
    X = (G / da.linalg.norm(G, axis=1, keepdims=True) * RADIUS).astype(dtype)
    scale = LOGIT_SD * np.sqrt(d) / RADIUS  # the logit's standard deviation: LOGIT_SD
    p = 1.0 / (1.0 + da.exp(-scale * (X.astype(np.float64) @ w_star(d))))
    y = (rng.random(n, chunks=rows) < p).astype(np.int64)
    return X, y


def accuracy(est, Xt, yt):
    return float(np.mean(est.predict(Xt) == yt))


def run_fasterm(X, y, client=None):
    import warnings

    import fasterm as fe

    warnings.simplefilter("ignore", fe.DataWarning)  # delta >= 1/n at small n (a smoke run)
    t = time.perf_counter()
    if client is None:
        est = fe.DPLogisticRegression(random_state=0).fit(X, y)
    else:
        with client.as_current():
            est = fe.DPLogisticRegression(random_state=0).fit(X, y)
    return time.perf_counter() - t, est


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=float, nargs="+", default=[1e6, 4e6])
    p.add_argument("--d", type=int, default=D_DEFAULT)
    p.add_argument("--dtype", nargs="+", default=["float64", "float32"])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--skip-dask-ml", action="store_true")
    p.add_argument("--dask-ml-solvers", nargs="+", default=["lbfgs", "admm"])
    args = p.parse_args(argv)

    import dask
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    try:
        import dask_ml.linear_model as dml
    except ImportError:
        dml = None
    if args.skip_dask_ml:
        dml = None

    rows = []
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster, set_as_default=False) as client:
        # the one-off imports (the workers', and scikit-learn's at the client): not timed
        client.run(lambda: __import__("fasterm.linear_model"))
        import fasterm.linear_model  # noqa: F401
        for n in map(int, args.n):
            for dtype in args.dtype:
                Xt_d, yt_d = make(200_000, args.d, dtype, seed=99, chunks=1)
                Xt, yt = dask.compute(Xt_d, yt_d, scheduler="threads")
                X, y = make(n, args.d, dtype, seed=1)
                X, y = client.persist([X, y])
                with client.as_current():
                    wait([X, y])
                t, est = run_fasterm(X, y, client)
                info = est.result_.info
                rows.append((n, dtype, "fasterm, LocalCluster (2 workers)", t, accuracy(est, Xt, yt),
                             f"{info.get('dask_rounds', est.n_iter_)} round trips, {est.n_iter_} steps"))
                print(rows[-1], flush=True)
                if dml is not None:
                    for solver in args.dask_ml_solvers:
                        with client.as_current():
                            t0 = time.perf_counter()
                            m = dml.LogisticRegression(solver=solver).fit(X, y)
                            t1 = time.perf_counter() - t0
                        acc = float(np.mean((Xt @ m.coef_.ravel() + m.intercept_ > 0) == yt))
                        rows.append((n, dtype, f"dask-ml LogisticRegression ({solver}, non-private)", t1, acc,
                                     f"max_iter={m.max_iter}"))
                        print(rows[-1], flush=True)
                Xn, yn = client.compute([X, y], sync=True)
                del X, y
                gc.collect()
                t, est = run_fasterm(Xn, yn)
                rows.append((n, dtype, "fasterm, in memory (numpy)", t, accuracy(est, Xt, yt),
                             f"{est.n_iter_} steps"))
                print(rows[-1], flush=True)
                Xl = da.from_array(Xn, chunks=(-(-n // CHUNKS), -1))
                yl = da.from_array(yn, chunks=-(-n // CHUNKS))
                with dask.config.set(scheduler="threads"):
                    t, est = run_fasterm(Xl, yl)
                info = est.result_.info
                rows.append((n, dtype, "fasterm, local threaded scheduler", t, accuracy(est, Xt, yt),
                             f"{info.get('dask_rounds')} round trips, {est.n_iter_} steps"))
                print(rows[-1], flush=True)
                del Xn, yn, Xl, yl
                gc.collect()
    print()
    print(f"{'n':>9} {'dtype':8} {'fit':50} {'time (s)':>9} {'accuracy':>9}  rounds")
    for n, dtype, name, t, acc, r in rows:
        print(f"{n:>9.0e} {dtype:8} {name:50} {t:9.2f} {acc:9.4f}  {r}")


if __name__ == "__main__":
    main()
