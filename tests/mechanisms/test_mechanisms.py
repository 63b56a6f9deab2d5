"""Laplace / L2-Laplace / Gaussian release mechanisms."""

import math

import numpy as np
import pytest
from scipy import stats

from fasterm import accounting, mechanisms


def test_laplace_scalar_distribution():
    out = np.array([mechanisms.laplace(3.0, 2.0, 0.5, random_state=np.random.default_rng(i)) for i in range(20000)])
    assert stats.kstest(out, stats.laplace(loc=3.0, scale=4.0).cdf).pvalue > 1e-3
    assert isinstance(mechanisms.laplace(3.0, 2.0, 0.5, random_state=0), float)


def test_laplace_vector_shape_dtype_and_noise_scale():
    v = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = mechanisms.laplace(v, 1.0, 2.0, random_state=1)
    assert out.shape == v.shape and out.dtype == np.float32
    big = mechanisms.laplace(np.zeros(200_000), 1.0, 2.0, random_state=2)
    assert stats.kstest(big, stats.laplace(scale=0.5).cdf).pvalue > 1e-3
    np.testing.assert_array_equal(v, np.arange(12, dtype=np.float32).reshape(3, 4))  # input untouched


def test_laplace_l2_uses_l2_calibration():
    d, eps, delta, sens = 50, 1.0, 1e-5, 0.3
    b = accounting.calibrate_laplace_l2(sens, d, 1, eps, delta)
    draws = np.stack([mechanisms.laplace_l2(np.zeros(d), sens, eps, delta, random_state=s) for s in range(2000)])
    assert stats.kstest(draws.ravel(), stats.laplace(scale=b).cdf).pvalue > 1e-3


def test_gaussian_uses_exact_calibration():
    eps, delta, sens = 1.0, 1e-5, 2.0
    sigma = accounting.calibrate_gaussian(sens, 1, eps, delta)
    x = mechanisms.gaussian(np.full(100_000, 5.0), sens, eps, delta, random_state=3)
    assert stats.kstest(x, stats.norm(loc=5.0, scale=sigma).cdf).pvalue > 1e-3
    # exactly value + numpy's normal stream for the same seed
    ref = 5.0 + np.random.default_rng(3).normal(0.0, sigma, 100_000)
    np.testing.assert_array_equal(x, ref)


def test_reproducible_from_seed():
    for mech, args in [(mechanisms.laplace, (1.0, 1.0)), (mechanisms.laplace_l2, (1.0, 1.0, 1e-6)),
                       (mechanisms.gaussian, (1.0, 1.0, 1e-6))]:
        a = mech(np.ones(10), *args, random_state=7)
        b = mech(np.ones(10), *args, random_state=7)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "call,param,exc",
    [
        (lambda: mechanisms.laplace(1.0, 1.0, 0.0), "epsilon", ValueError),
        (lambda: mechanisms.laplace(1.0, 1.0, -1.0), "epsilon", ValueError),
        (lambda: mechanisms.laplace(1.0, 0.0, 1.0), "sensitivity", ValueError),
        (lambda: mechanisms.laplace(float("nan"), 1.0, 1.0), "value", ValueError),
        (lambda: mechanisms.laplace(np.array([1, np.inf]), 1.0, 1.0), "value", ValueError),
        (lambda: mechanisms.laplace(np.array(["a"]), 1.0, 1.0), "value", TypeError),
        (lambda: mechanisms.laplace(np.array([1 + 1j]), 1.0, 1.0), "value", TypeError),
        (lambda: mechanisms.laplace_l2(np.ones(3), 1.0, 1.0, 1.0), "delta", ValueError),
        (lambda: mechanisms.laplace_l2(np.ones(3), -1.0, 1.0, 0.1), "l2_sensitivity", ValueError),
        (lambda: mechanisms.gaussian(np.ones(3), 1.0, 1.0, 0.0), "delta", ValueError),
        (lambda: mechanisms.gaussian(np.ones(3), 1.0, math.inf, 0.1), "epsilon", ValueError),
        (lambda: mechanisms.gaussian(np.ones(3), 1.0, 1.0, 0.1, random_state=1.5), "random_state", TypeError),
    ],
)
def test_bad_parameters(call, param, exc):
    with pytest.raises(exc, match=param):
        call()
