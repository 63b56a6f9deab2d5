"""Pure-ε fits: objective perturbation against the other pure-ε route and the non-private fit.

    pytest bench/bench_objpert.py --benchmark-enable --benchmark-group-by=group

Breast-cancer training size (n = 398, d = 30 + intercept): the default
pure-ε estimator (objective perturbation, one certified Newton solve), the
Laplace noisy-PGD estimator, and scikit-learn's non-private
``LogisticRegression`` (L-BFGS) — the fit a user would otherwise run.  A
larger synthetic problem (n = 1e5, d = 50) shows the O(nd²) Newton cost.
Pin BLAS threads when comparing (``threadpoolctl``).
"""

from __future__ import annotations

import numpy as np
import pytest

import fasterm as fe
from fasterm.datasets import load_breast_cancer, train_test_split


@pytest.fixture(scope="module")
def bc():
    X, y = load_breast_cancer(scaled=True)
    X_tr, _, y_tr, _ = train_test_split(X, y, 0.3, random_state=0)
    return X_tr, y_tr


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100_000, 50)) / 8
    return X, (X[:, 0] + 0.1 * rng.standard_normal(100_000) > 0).astype(int)


@pytest.mark.benchmark(group="pure-eps-breast-cancer")
def test_objpert_estimator(benchmark, bc):
    benchmark(lambda: fe.DPLogisticRegression(delta=0.0, random_state=0).fit(*bc))


@pytest.mark.benchmark(group="pure-eps-breast-cancer")
def test_laplace_pgd_estimator(benchmark, bc):
    benchmark(lambda: fe.DPLogisticRegression(delta=0.0, noise="laplace",
                                              random_state=0).fit(*bc))


@pytest.mark.benchmark(group="pure-eps-breast-cancer")
def test_sklearn_nonprivate(benchmark, bc):
    from sklearn.linear_model import LogisticRegression
    benchmark(lambda: LogisticRegression().fit(*bc))


@pytest.mark.benchmark(group="pure-eps-1e5x50")
def test_objpert_function_big(benchmark, big):
    X, y = big
    benchmark.pedantic(lambda: fe.objective_perturbation(fe.objpert.SmoothHinge(), X, y, 1.0, data_norm=1.0,
                                                         random_state=0), rounds=3)


@pytest.mark.benchmark(group="pure-eps-1e5x50")
def test_sklearn_nonprivate_big(benchmark, big):
    from sklearn.linear_model import LogisticRegression
    benchmark.pedantic(lambda: LogisticRegression().fit(*big), rounds=3)
