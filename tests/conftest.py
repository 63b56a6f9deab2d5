"""Shared fixtures."""

import math

import numpy as np
import pytest


def _logistic_data(n, d, seed, dtype=np.float64):
    """Rows in the unit ball, labels ±1 drawn from a logistic model with ‖w*‖ = 2."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / math.sqrt(d)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    w = rng.standard_normal(d)
    w *= 2.0 / np.linalg.norm(w)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return X.astype(dtype), y.astype(dtype)


@pytest.fixture(scope="session")
def logistic_data():
    """``logistic_data(n, d, seed, dtype=np.float64) -> (X, y)``: synthetic logistic-model data."""
    return _logistic_data
