"""Exponential-mechanism benchmarks: private median/quantile and the finite
exponential mechanism, against the NumPy way.

    pytest bench/bench_expmech.py --benchmark-enable --benchmark-group-by=group

Target: a private median of 1e6 points in <= 1.5x the time of
``np.sort`` of the same data.  Each median group holds ``np.sort`` and the
public ``fe.median`` calls (validation, sort and sampling included) on the same
1e6 standard-normal points, on the interval (-10, 10), so the ratio is read off
one run.  eps = 1 is the usual setting; at eps = 1e-3 the density is spread
over every piece, so no piece is skipped: the worst case of the O(n) pass.

The exponential mechanism over 1e6 scores is timed against the NumPy user's
version (normalised exponentials, then ``Generator.choice`` with ``p``).
"""

from __future__ import annotations

import numpy as np
import pytest

import fasterm as fe
from fasterm import mechanisms

N = 1_000_000


@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(0).normal(size=N)


@pytest.fixture(scope="module")
def data32(data):
    return data.astype(np.float32)


@pytest.mark.benchmark(group="median-1e6-float64")
def test_np_sort(benchmark, data):
    benchmark(np.sort, data)


@pytest.mark.parametrize("eps", [1.0, 1e-3])
@pytest.mark.parametrize("method", ["erm", "rank"])
@pytest.mark.benchmark(group="median-1e6-float64")
def test_fe_median(benchmark, data, method, eps):
    rng = np.random.default_rng(1)
    benchmark(fe.median, data, (-10.0, 10.0), eps, method=method, random_state=rng)


@pytest.mark.benchmark(group="median-1e6-float32")
def test_np_sort_float32(benchmark, data32):
    benchmark(np.sort, data32)


@pytest.mark.parametrize("eps", [1.0, 1e-3])
@pytest.mark.benchmark(group="median-1e6-float32")
def test_fe_median_float32(benchmark, data32, eps):
    rng = np.random.default_rng(1)
    benchmark(fe.median, data32, (-10.0, 10.0), eps, random_state=rng)


@pytest.mark.benchmark(group="median-1e6-presorted")
def test_fe_median_presorted(benchmark, data):
    # Already ascending input skips the sort: only the O(n) pass remains.
    xs = np.sort(data)
    rng = np.random.default_rng(1)
    benchmark(fe.median, xs, (-10.0, 10.0), 1e-3, random_state=rng)


def _numpy_exponential(scores, sensitivity, epsilon, rng):
    p = np.exp(-(epsilon * (scores - scores.min())) / (2 * sensitivity))
    return rng.choice(len(scores), p=p / p.sum())


@pytest.mark.benchmark(group="expmech-1e6")
def test_numpy_exponential(benchmark, data):
    rng = np.random.default_rng(2)
    benchmark(_numpy_exponential, data, 0.1, 1.0, rng)


@pytest.mark.benchmark(group="expmech-1e6")
def test_fe_exponential(benchmark, data):
    rng = np.random.default_rng(2)
    benchmark(mechanisms.exponential, data, 0.1, 1.0, random_state=rng)
