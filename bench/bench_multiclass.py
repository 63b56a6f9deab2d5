"""Multiclass fits (one (d + 1) × K model on one budget) beside scikit-learn's non-private fit.

    pytest bench/bench_multiclass.py --benchmark-enable --benchmark-group-by=group

scikit-learn's digits (1,257 training rows, 64 pixels, 10 classes, x/128 in
the unit ball): the private multinomial logistic regression (noisy gradient
descent; the gradient of the matrix model is two BLAS products per step,
:mod:`fasterm.linear_model._multiclass`), the Crammer–Singer SVC (noisy PGD) and
scikit-learn's ``LogisticRegression`` (L-BFGS, multinomial), the fit a user
would otherwise run.  A larger synthetic problem (n = 1e5, d = 50, K = 10)
shows the per-step cost.  BLAS threads are pinned by the benchmarks' conftest.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

import fasterm as fe


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    Xtr, _, ytr, _ = train_test_split(X / 128.0, y, test_size=0.3, random_state=0)
    return Xtr, ytr


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100_000, 50)) / 8
    return X, (X[:, :10].argmax(axis=1))


@pytest.mark.benchmark(group="multiclass-digits")
def test_multinomial_estimator(benchmark, digits):
    benchmark(lambda: fe.DPLogisticRegression(random_state=0).fit(*digits))


@pytest.mark.benchmark(group="multiclass-digits")
def test_crammer_singer_estimator(benchmark, digits):
    benchmark(lambda: fe.DPLinearSVC(random_state=0).fit(*digits))


@pytest.mark.benchmark(group="multiclass-digits")
def test_sklearn_nonprivate(benchmark, digits):
    benchmark(lambda: LogisticRegression(max_iter=1000).fit(*digits))


@pytest.mark.benchmark(group="multiclass-1e5x50-K10")
def test_multinomial_estimator_large(benchmark, big):
    benchmark.pedantic(lambda: fe.DPLogisticRegression(random_state=0, solver="noisy_gd").fit(*big), rounds=3)


@pytest.mark.benchmark(group="multiclass-1e5x50-K10")
def test_sklearn_nonprivate_large(benchmark, big):
    benchmark.pedantic(lambda: LogisticRegression(max_iter=1000).fit(*big), rounds=3)
