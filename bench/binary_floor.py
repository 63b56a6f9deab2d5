"""Where the binary default fit's time goes, in passes of one ``X @ w`` (issue 29's ≤ 3 target).

    python bench/binary_floor.py [--sizes 160000 1000000] [--reps 5]

For n in ``--sizes`` (d = 100, bench/binary_passes.py's data) and X in float64 and float32,
each line the minimum over ``--reps`` calls, on one pinned thread (bench/conftest.py
``pinned``):

* ``X @ w`` — the unit (numpy's gemv, min over 9 calls);
* ``fit`` — ``DPLogisticRegression(epsilon=1, delta=1e-5)`` with its defaults;
* ``data check`` — the estimators' one pass over X (its row norms, from which finiteness
  is read: ``fasterm.erm._design.row_norms_unchecked``);
* ``run clip`` — the run's one clip and its batch-size cap (``_float_margin.batch_cap`` and
  ``_float_margin.run_clip``);
* ``sampling`` — the fit's T Poisson batches alone (``_losses.poisson_rows``, which also
  copies each batch into a new array);
* ``streaming gradient`` — one compiled clipped-gradient sum over all n rows of X in order
  (``_losses.grad_sum``): the arithmetic of one epoch without its random reads, a lower
  bound for the run's gradient work.

The fit cannot cost less than data check + sampling + streaming gradient (the run reads
about n rows, each sampled row from wherever it lies); the lines show that sum.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from binary_passes import _gemv_time, synthetic  # noqa: E402
from conftest import pinned  # noqa: E402

import fasterm as fe  # noqa: E402
from fasterm.erm import _float_margin, _losses  # noqa: E402
from fasterm.erm._design import row_norms_unchecked  # noqa: E402


def _best(f, reps):
    out = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        out = min(out, time.perf_counter() - t0)
    return out


def run(n, dtype, reps):
    X, y = synthetic(n)
    X = np.ascontiguousarray(X, dtype=dtype)
    ypm = np.where(y > 0, 1.0, -1.0).astype(dtype)
    unit = _gemv_time(X)
    calls, caps = [], []
    real, real_cap = _float_margin.run_clip, _float_margin.batch_cap
    _float_margin.run_clip = lambda *a, **k: (calls.append((a, k)), real(*a, **k))[1]
    _float_margin.batch_cap = lambda *a, **k: (caps.append((a, k)), real_cap(*a, **k))[1]
    try:
        model = fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y)
    finally:
        _float_margin.run_clip, _float_margin.batch_cap = real, real_cap
    q, T = model.result_.info["sample_rate"], model.result_.steps
    out = {"fit": _best(lambda: fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y), reps),
           "data check": _best(lambda: row_norms_unchecked(X), reps)}
    (a, k), (ac, kc) = calls[0], caps[0]
    out["run clip"] = _best(lambda: (real_cap(*ac, **kc), real(*a, **k)), reps)
    bg = np.random.default_rng(0).bit_generator
    out["sampling"] = _best(lambda: _losses.poisson_rows(bg, n, q, T), reps)
    w = np.full(X.shape[1], 0.01, dtype=dtype)
    g = np.zeros(X.shape[1], dtype=dtype)
    out["streaming gradient"] = _best(lambda: _losses.grad_sum(0, X, ypm, w, None, 1.0, 0.25, np.inf, g), reps)
    return unit, q, T, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[160_000, 1_000_000])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    with pinned(1):
        for n in args.sizes:
            for dtype in (np.float64, np.float32):
                unit, q, T, out = run(n, dtype, args.reps)
                floor = out["data check"] + out["sampling"] + out["streaming gradient"]
                parts = ", ".join(f"{k} {v * 1e3:.1f} ms = {v / unit:.2f}" for k, v in out.items())
                print(f"n={n:,} {np.dtype(dtype).name} (T={T}, q={q:.3g}): X @ w {unit * 1e3:.1f} ms; {parts}; "
                      f"check + sampling + streaming gradient = {floor / unit:.2f} passes", flush=True)


if __name__ == "__main__":
    main()
