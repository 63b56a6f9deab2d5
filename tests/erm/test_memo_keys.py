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


@pytest.mark.parametrize("classes", [2, 3])
def test_release_clip_cache_is_keyed_by_public_numbers_only(classes, monkeypatch):
    """The float margin's one cache (:func:`fasterm.erm._float_margin.release_clip`): every argument
    a fit passes is a public scalar (no array, nothing of the rows), and two data sets of the same
    public shape (n, d, dtype, the label set) call it with the same arguments."""
    from fractions import Fraction

    from fasterm.erm import _float_margin

    real = _float_margin.release_clip
    seen = []

    def spy(*args, **kw):
        seen.append((args, tuple(sorted(kw.items()))))
        return real(*args, **kw)

    monkeypatch.setattr(_float_margin, "release_clip", spy)
    calls = []
    for seed in (0, 1):
        X, y = _data(**DATA, seed=seed)
        if classes == 3:
            y = y + (X[:, 1] > 0)  # labels 0, 1, 2
        seen.clear()
        fe.DPLogisticRegression(**BASE, solver="noisy_gd", random_state=SEED).fit(X, y)
        assert seen, "the fit did not compute its clip through the cache"
        calls.append(list(seen))
    for args, kw in calls[0]:
        for value in (*args, *(v for _, v in kw)):
            assert value is None or isinstance(value, (str, int, float, bool, np.dtype, Fraction)), value
    assert calls[0] == calls[1]


def test_release_clip_cache_returns_the_uncached_clip():
    """A cached clip is the clip computed afresh (effective_clip of margin), for each public argument
    changed alone; the estimators' cold-cache switch clears it."""
    from fasterm.erm import _float_margin

    base = ("any", np.dtype(np.float64), 300, 9, 0.25, 1.0 / 300, 0.25, 1e-4, 5.0, False, None)
    variants = [base]
    for i, alt in enumerate(("dense", np.dtype(np.float32), 301, 10, 0.5, 1.0 / 301, 0.5, 1e-3, 6.0, True, None)):
        variants.append(base[:i] + (alt,) + base[i + 1:])
    fe.erm.optimize._clear_calibration_caches()
    assert _float_margin.release_clip.cache_info().currsize == 0
    for _ in range(2):  # computed, then from the cache
        for kernel, dtype, m, d, c, scale, bound, reg, radius, momentum, theta in variants:
            want = _float_margin.effective_clip(c, _float_margin.margin(
                kernel, dtype, m, d, scale=scale, bound=bound, reg=reg, radius=radius, momentum=momentum))
            assert _float_margin.release_clip(kernel, dtype, m, d, c, scale, bound, reg, radius, momentum,
                                              theta) == want
    assert _float_margin.release_clip.cache_info().hits >= len(variants)
