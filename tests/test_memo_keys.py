"""The estimators memoise public work (noisy_gd's checked plan and calibration, valid parameter
settings) per configuration.  A memo keyed by too little would hand one configuration another's
noise scale: a privacy bug that no single fit shows.  Here every public quantity the plan
depends on is changed alone, right after the base configuration warmed the memos, and the fit
must equal the same fit made with every memo cleared: the noise scale, sensitivity, T, step,
E‖h‖² and the released coefficients, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

import fasterm as fe  # noqa: E402

SEED = 11


def _data(n, d, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(np.int64)
    return X.astype(dtype), y


BASE = dict(epsilon=1.0, delta=1e-5)
DATA = dict(n=300, d=8, dtype=np.float64)

# (estimator params, data params): each differs from the base in one public quantity.
VARIANTS = [
    ({}, dict(n=301)),
    ({}, dict(d=9)),
    ({}, dict(dtype=np.float32)),
    (dict(fit_intercept=False), {}),
    (dict(intercept_scaling=0.5), {}),
    (dict(data_norm=0.5), {}),
    (dict(radius=0.5), {}),
    (dict(alpha=1e-2), {}),
    (dict(clip=0.1), {}),
    (dict(epsilon=2.0), {}),
    (dict(delta=1e-6), {}),
    (dict(max_steps=7), {}),
    (dict(steps=5), {}),
    (dict(noise="laplace", calibration="l2"), {}),
]

# the data_norm=0.5 variant clips every row and the radius=0.5 variant ends on the ball: their
# DataWarnings are expected, and not what is tested
_VARIANT_WARNINGS = pytest.mark.filterwarnings(
    "ignore:.*have a norm above data_norm=0.5:fasterm.DataWarning",
    "ignore:.*on the boundary of the parameter ball radius=0.5:fasterm.DataWarning")


def _fit(params, data, *, cold):
    if cold:
        fe.erm.optimize._clear_calibration_caches()
    X, y = _data(**{**DATA, **data})
    est = fe.DPLogisticRegression(**{**BASE, **params}, solver="noisy_gd", random_state=SEED)
    return est.fit(X, y)


def _released(est):
    r = est.result_
    return (r.noise_scale, r.sensitivity, r.steps, r.lr, r.noise_norm_sq, r.epsilon, r.delta,
            est.coef_.tobytes(), np.asarray(est.intercept_).tobytes())


@pytest.mark.parametrize("params,data", VARIANTS, ids=lambda v: repr(v))
@_VARIANT_WARNINGS
def test_each_public_quantity_gets_its_own_plan(params, data):
    cold = _released(_fit(params, data, cold=True))
    _fit({}, {}, cold=True)  # warm every memo with the base configuration
    warm = _released(_fit(params, data, cold=False))
    assert warm == cold


@_VARIANT_WARNINGS
def test_variants_really_differ_from_the_base():
    """Each variant changes the calibration or the release (else it would test nothing)."""
    base = _released(_fit({}, {}, cold=True))
    for params, data in VARIANTS:
        assert _released(_fit(params, data, cold=True)) != base, (params, data)
