"""One parameter says how a fit is made: the estimators' ``solver`` (0.3; CHANGELOG.md).

``solver`` names the private algorithm; ``noise`` and ``calibration`` exist only
where they mean something (the noisy gradient solvers; Laplace noise).  The
spellings of the rule's own choices give the rule's fits bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

import fasterm as fe  # noqa: E402
from fasterm.linear_model import _rules  # noqa: E402


def _data(n, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = (X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _same(a, b):
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert (a.epsilon_, a.delta_, a.n_iter_) == (b.epsilon_, b.delta_, b.n_iter_)


@pytest.mark.parametrize("n, named", [(400, "noisy_gd"), (6000, "noisy_sgd")])
def test_auto_is_the_named_solver_it_picks(n, named):
    X, y = _data(n)
    auto = fe.DPLogisticRegression(random_state=3).fit(X, y)
    assert auto.result_.info["solver"] == named.removeprefix("noisy_")
    _same(auto, fe.DPLogisticRegression(solver=named, random_state=3).fit(X, y))


def test_auto_is_objective_perturbation_for_delta_0_and_pgd_for_the_hinge_loss():
    X, y = _data(300)
    _same(fe.DPLogisticRegression(delta=0.0, random_state=1).fit(X, y),
          fe.DPLogisticRegression(delta=0.0, solver="objpert", random_state=1).fit(X, y))
    _same(fe.DPLinearSVC(random_state=1).fit(X, y), fe.DPLinearSVC(solver="noisy_pgd", random_state=1).fit(X, y))


def test_named_solvers_differ_from_each_other():
    # not vacuous: the names do select different algorithms on the same data and seed
    X, y = _data(400)
    coefs = [fe.DPLogisticRegression(solver=s, random_state=2, delta=1e-5).fit(X, y).coef_
             for s in ("noisy_gd", "noisy_pgd", "objpert")]
    assert not np.array_equal(coefs[0], coefs[1]) and not np.array_equal(coefs[0], coefs[2])


def test_noise_defaults_to_laplace_for_delta_0_on_the_gradient_solvers():
    X, y = _data(300)
    m = fe.DPLogisticRegression(solver="noisy_gd", delta=0.0, epsilon=1.0, random_state=0).fit(X, y)
    assert m.result_.noise == "laplace" and m.delta_ == 0.0 and m.epsilon_ <= 1.0
    explicit = fe.DPLogisticRegression(solver="noisy_gd", delta=0.0, noise="laplace", calibration="l2",
                                       random_state=0).fit(X, y)
    _same(m, explicit)
    # an explicit noise keeps "auto" among the noisy gradient solvers (δ = 0 would be objpert)
    a = fe.DPLogisticRegression(delta=0.0, noise="laplace", random_state=0).fit(X, y)
    assert a.result_.noise == "laplace" and a.result_.info["solver"] == "gd"
    g = fe.DPLogisticRegression(random_state=0).fit(X, y)
    assert g.result_.noise == "gaussian"


@pytest.mark.parametrize("kw, name", [
    (dict(solver="objpert", noise="laplace", delta=0.0), "noise"),
    (dict(solver="expmech", calibration="pure"), "calibration"),
    (dict(noise="gaussian", calibration="pure"), "calibration"),
    (dict(calibration="coordinate"), "calibration"),  # δ > 0 resolves to Gaussian noise
    (dict(solver="noisy_sgd", noise="laplace"), "noise='gaussian'"),
    (dict(solver="noisy_gd", delta=0.0, noise="gaussian"), "noise='laplace'"),
    (dict(solver="adassp"), "DPLinearRegression only"),
    (dict(solver="gd"), "solver"),  # the 0.2 optimiser names are not solvers
])
def test_meaningless_combinations_raise_naming_the_parameter(kw, name):
    X, y = _data(200)
    with pytest.raises(ValueError, match=name):
        fe.DPLogisticRegression(random_state=0, **kw).fit(X, y)


def test_method_is_gone_and_get_params_shows_solver():
    with pytest.raises(TypeError, match="DPLogisticRegression"):
        fe.DPLogisticRegression(method="objpert")
    params = fe.DPLinearRegression().get_params()
    assert "method" not in params and params["solver"] == "auto"
    assert params["noise"] is None and params["calibration"] is None


def test_every_public_solver_name_fits_or_refuses_clearly():
    X, y = _data(200, d=2)
    yr = np.clip(X[:, 0], -1, 1)
    for name in _rules.SOLVERS:
        for cls, target in ((fe.DPLogisticRegression, y), (fe.DPLinearRegression, yr)):
            kw = dict(solver=name, random_state=0)
            try:
                m = cls(**kw).fit(X, target)
            except ValueError as exc:
                assert "solver" in str(exc), (name, cls, exc)
                assert (name, cls) in {("adassp", fe.DPLogisticRegression),
                                       ("objpert_threshold", fe.DPLinearRegression)}, (name, cls, exc)
            else:
                assert np.all(np.isfinite(m.coef_)), (name, cls)
