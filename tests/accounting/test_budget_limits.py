"""The budget at its limits (issue #35, item 12): δ ≥ 1/n warns, an ε the Gaussian
calibrations cannot honour is refused, and a negligible ε reports what the noise spends."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import fasterm as fe
from fasterm import accounting as A
from fasterm import model_selection

N = 200
CAP = A.GAUSSIAN_EPSILON_CAP


@pytest.fixture(scope="module")
def data():
    X, y = fe.datasets.load_breast_cancer(scaled=True)
    X, y = X[:N], y[:N]
    return X, y, np.where(y > 0, 1.0, -1.0), np.arange(N) % 3, X[:, 0].copy()


def _delta_warnings(fit):
    """The δ ≥ 1/n DataWarnings that ``fit()`` gives (every one, not deduplicated)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in caught
            if issubclass(w.category, fe.DataWarning) and "is at least 1/n" in str(w.message)]


def _loss_ball(X):
    return fe.losses.Logistic(), fe.L2Ball(5.0, X.shape[1])


# ---------------------------------------------------------------------------
# δ ≥ 1/n: one DataWarning per fit, for the δ spent, in every fit path
# ---------------------------------------------------------------------------
def _paths(X, y, ypm, y3, yr, delta):
    loss, ball = _loss_ball(X)
    est = dict(delta=delta, random_state=0)
    return {
        "DPLogisticRegression": lambda: fe.DPLogisticRegression(**est).fit(X, y),
        "DPLogisticRegression noisy_sgd": lambda: fe.DPLogisticRegression(solver="noisy_sgd", **est).fit(X, y),
        "DPLogisticRegression noisy_pgd": lambda: fe.DPLogisticRegression(solver="noisy_pgd", **est).fit(X, y),
        "DPLogisticRegression K=3": lambda: fe.DPLogisticRegression(**est).fit(X, y3),
        "DPLogisticRegression K=3 noisy_sgd": lambda: fe.DPLogisticRegression(solver="noisy_sgd", **est).fit(X, y3),
        "DPLinearSVC": lambda: fe.DPLinearSVC(**est).fit(X, y),
        "DPLinearRegression": lambda: fe.DPLinearRegression(**est).fit(X, yr),
        "DPLinearRegression adassp": lambda: fe.DPLinearRegression(solver="adassp", **est).fit(X, yr),
        "PrivateSearch": lambda: fe.PrivateSearch(fe.DPLogisticRegression(), {"max_steps": [10, 20]}, epsilon=1.0,
                                                  delta=delta, random_state=0).fit(X, y),
        "noisy_gd": lambda: fe.noisy_gd(loss, X, ypm, ball, 1.0, delta=delta, data_norm=1.0, random_state=0),
        "noisy_sgd": lambda: fe.noisy_sgd(loss, X, ypm, ball, 1.0, delta=delta, data_norm=1.0, random_state=0),
        "noisy_pgd": lambda: fe.noisy_pgd(loss, X, ypm, ball, 1.0, delta=delta, noise="gaussian", data_norm=1.0,
                                          random_state=0),
        "adassp": lambda: fe.ssp.adassp(X, yr, 1.0, delta, random_state=0),
        "SQOracle": lambda: fe.learning.SQOracle(X, ypm, 1.0, delta, max_queries=3),
    }


PATHS = ("DPLogisticRegression", "DPLogisticRegression noisy_sgd", "DPLogisticRegression noisy_pgd",
         "DPLogisticRegression K=3", "DPLogisticRegression K=3 noisy_sgd", "DPLinearSVC", "DPLinearRegression",
         "DPLinearRegression adassp", "PrivateSearch", "noisy_gd", "noisy_sgd", "noisy_pgd", "adassp", "SQOracle")


@pytest.mark.parametrize("path", PATHS)
def test_delta_of_at_least_one_over_n_warns_once(data, path):
    # the issue: δ = 0.5 at n = 200 was accepted silently
    assert sorted(_paths(*data, 0.5)) == sorted(PATHS)
    messages = _delta_warnings(_paths(*data, 0.5)[path])
    assert len(messages) == 1, messages  # an estimator's solvers do not warn a second time
    who = path.split()[0]
    assert messages[0].startswith(f"{who}: delta=0.5 is at least 1/n for the n = {N} rows"), messages
    assert "publishes whole records" in messages[0] and "Dwork & Roth" in messages[0]


@pytest.mark.parametrize("path", ["DPLogisticRegression", "DPLogisticRegression K=3", "DPLinearRegression adassp",
                                  "PrivateSearch", "noisy_gd", "noisy_sgd", "noisy_pgd", "adassp", "SQOracle"])
def test_the_threshold_is_one_over_n(data, path):
    assert len(_delta_warnings(_paths(*data, 1.0 / N)[path])) == 1
    assert _delta_warnings(_paths(*data, math.nextafter(1.0 / N, 0.0))[path]) == []


def test_the_warning_is_for_the_delta_spent(data):
    X, y = data[:2]
    # bounds="private": δ/2 to the ranges and δ/2 to the fit, each < 1/n, the total is not
    assert len(_delta_warnings(lambda: fe.DPLogisticRegression(delta=1.6 / N, bounds="private",
                                                               random_state=0).fit(X, y))) == 1
    # objective perturbation and the exponential mechanism spend no certified δ: nothing to warn about
    for solver in ("objpert", "objpert_threshold", "expmech"):
        assert _delta_warnings(lambda: fe.DPLogisticRegression(solver=solver, delta=0.5, random_state=0)
                               .fit(X, y)) == [], solver


def test_the_search_runs_do_not_warn_at_their_own_delta(data, monkeypatch):
    # each run is an estimator fit at RUN_DELTA; the search checks its own δ, once
    X, y = data[:2]
    monkeypatch.setattr(model_selection, "RUN_DELTA", 2.0 / N)
    search = fe.PrivateSearch(fe.DPLogisticRegression(), {"max_steps": [10, 20]}, epsilon=1.0, delta=1e-5,
                              random_state=0)
    assert _delta_warnings(lambda: search.fit(X, y)) == []


def test_the_warning_stores_nothing(data):
    X, y = data[:2]
    quiet = fe.DPLogisticRegression(delta=1e-5, random_state=0).fit(X, y)
    loud = fe.DPLogisticRegression(delta=0.5, random_state=0)
    assert len(_delta_warnings(lambda: loud.fit(X, y))) == 1
    assert sorted(vars(loud)) == sorted(vars(quiet))
    assert sorted(vars(loud.result_)) == sorted(vars(quiet.result_))
    assert loud.result_.info.keys() == quiet.result_.info.keys()


# ---------------------------------------------------------------------------
# ε above the Gaussian calibrations' maximum: refused, naming epsilon and the maximum
# ---------------------------------------------------------------------------
REFUSED = r"epsilon=50000 is above 10000, the largest epsilon the Gaussian calibrations"


@pytest.mark.parametrize("calibrate", [
    lambda e: A.gaussian_mu(e, 1e-5),
    lambda e: A.calibrate_gaussian(1.0, 10, e, 1e-5),
    lambda e: A.zcdp_rho(e, 1e-5),
    lambda e: A.calibrate_sgd_sigma(0.05, 100, e, 1e-5),
    lambda e: A.calibrate_private_search(e, 1e-5, expected_runs=4),
])
def test_gaussian_calibrations_refuse_epsilon_above_the_maximum(calibrate):
    # the issue: epsilon=5e4 was calibrated as 1e4 and reported as 1e4
    with pytest.raises(ValueError, match=REFUSED):
        calibrate(5e4)
    with pytest.raises(ValueError, match="epsilon=1e\\+300 is above 10000"):
        calibrate(1e300)
    assert calibrate(CAP)  # the maximum itself is calibrated


def test_at_the_maximum_the_epsilon_asked_is_spent():
    # not capped below: the calibration honours ε = 10⁴ (to the solvers' precision)
    delta = 1e-5
    mu = A.gaussian_mu(CAP, delta)
    assert CAP * (1 - 1e-9) <= A.gaussian_epsilon(mu, delta) <= CAP
    sigma = A.calibrate_gaussian(1.0, 10, CAP, delta)
    assert A.gaussian_delta(math.sqrt(10) / sigma, CAP) <= delta
    assert A.gaussian_delta(math.sqrt(10) / sigma * (1 + 1e-6), CAP) > delta


@pytest.mark.parametrize("path", ["DPLogisticRegression", "DPLogisticRegression noisy_sgd",
                                  "DPLogisticRegression noisy_pgd", "DPLogisticRegression K=3",
                                  "DPLogisticRegression K=3 noisy_sgd", "DPLinearRegression",
                                  "DPLinearRegression adassp", "private ranges", "secure", "PrivateSearch",
                                  "noisy_gd", "noisy_sgd", "noisy_pgd", "adassp"])
def test_every_gaussian_fit_refuses_epsilon_above_the_maximum(data, path):
    X, y, ypm, y3, yr = data
    loss, ball = _loss_ball(X)
    est = dict(epsilon=5e4, random_state=0)
    fit = {
        "DPLogisticRegression": lambda: fe.DPLogisticRegression(**est).fit(X, y),
        "DPLogisticRegression noisy_sgd": lambda: fe.DPLogisticRegression(solver="noisy_sgd", **est).fit(X, y),
        "DPLogisticRegression noisy_pgd": lambda: fe.DPLogisticRegression(solver="noisy_pgd", **est).fit(X, y),
        "DPLogisticRegression K=3": lambda: fe.DPLogisticRegression(**est).fit(X, y3),
        "DPLogisticRegression K=3 noisy_sgd": lambda: fe.DPLogisticRegression(solver="noisy_sgd", **est).fit(X, y3),
        "DPLinearRegression": lambda: fe.DPLinearRegression(**est).fit(X, yr),
        "DPLinearRegression adassp": lambda: fe.DPLinearRegression(solver="adassp", **est).fit(X, yr),
        "private ranges": lambda: fe.DPLogisticRegression(bounds="private", noise="laplace", **est).fit(X, y),
        "secure": lambda: fe.DPLogisticRegression(secure=True, **est).fit(X, y),
        "PrivateSearch": lambda: fe.PrivateSearch(fe.DPLogisticRegression(), {"max_steps": [10, 20]}, epsilon=5e4,
                                                  random_state=0).fit(X, y),
        "noisy_gd": lambda: fe.noisy_gd(loss, X, ypm, ball, 5e4, data_norm=1.0),
        "noisy_sgd": lambda: fe.noisy_sgd(loss, X, ypm, ball, 5e4, data_norm=1.0),
        "noisy_pgd": lambda: fe.noisy_pgd(loss, X, ypm, ball, 5e4, delta=1e-5, noise="gaussian", data_norm=1.0),
        "adassp": lambda: fe.ssp.adassp(X, yr, 5e4, 1e-5),
    }[path]
    with pytest.raises(ValueError, match=REFUSED) as exc:
        fit()
    # the whole epsilon (not bounds="private"'s share), not as a floating-point failure
    assert "outside the usable floating-point range" not in str(exc.value)


def test_laplace_and_pure_fits_honour_a_large_epsilon(data):
    X, y = data[:2]
    for kw in (dict(noise="laplace"), dict(delta=0.0), dict(solver="objpert"), dict(delta=0.0, solver="noisy_gd")):
        assert fe.DPLogisticRegression(epsilon=5e4, random_state=0, **kw).fit(X, y).epsilon_ == 5e4, kw


# ---------------------------------------------------------------------------
# a negligible ε: what the noise spends (0.0 for Gaussian noise set by δ alone), or refused
# ---------------------------------------------------------------------------
def test_gaussian_noise_for_a_negligible_epsilon_is_zero_delta_dp(data):
    # ε = 1e-300 reports epsilon_ = 0.0: the noise is set by δ alone, and the release is
    # (0, δ)-DP — checked here against δ(0; μ) = Φ(μ/2) − Φ(−μ/2) = erf(μ/(2√2)) (Dong, Roth &
    # Su 2022, Cor. 2.13 at ε = 0), μ = √T·Δ₂/σ from the released calibration
    X, y, ypm = data[:3]
    loss, ball = _loss_ball(X)
    delta = 1e-5
    for name, fit in [
        ("noisy_gd", lambda: fe.noisy_gd(loss, X, ypm, ball, 1e-300, delta=delta, data_norm=1.0, random_state=0)),
        ("noisy_pgd", lambda: fe.noisy_pgd(loss, X, ypm, ball, 1e-300, delta=delta, noise="gaussian",
                                           data_norm=1.0, random_state=0)),
        ("estimator", lambda: fe.DPLogisticRegression(epsilon=1e-300, delta=delta, random_state=0).fit(X, y).result_),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fe.DataWarning)  # the fit ends on the ball's boundary
            res = fit()
        assert res.epsilon == 0.0 and res.delta == delta, name
        mu = math.sqrt(res.steps) * float(res.sensitivity) / float(res.noise_scale)
        assert math.erf(mu / (2.0 * math.sqrt(2.0))) <= delta, name
        assert math.erf(mu * (1 + 1e-6) / (2.0 * math.sqrt(2.0))) > delta, name  # and no more noise than that


def test_pure_fits_report_a_negligible_epsilon_or_refuse_one_that_underflows(data):
    X, y = data[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fe.DataWarning)
        for kw in (dict(delta=0.0), dict(delta=0.0, solver="noisy_gd")):
            assert fe.DPLogisticRegression(epsilon=1e-300, random_state=0, **kw).fit(X, y).epsilon_ == 1e-300
        for kw in (dict(delta=0.0), dict(delta=0.0, solver="noisy_gd"), dict(solver="noisy_sgd", epsilon=1e-300)):
            kw = dict(dict(epsilon=1e-320), **kw)
            with pytest.raises(ValueError, match="^epsilon"):  # the scale overflows: named, never inf or 0
                fe.DPLogisticRegression(random_state=0, **kw).fit(X, y)
