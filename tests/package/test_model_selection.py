"""fasterm.model_selection.PrivateSearch and its accounting (Papernot & Steinke 2022, Thm. 2).

The accounting is checked against an independent evaluation of the theorem written here
(the distribution's mean by summing its probabilities, the inner minimum and the RDP → (ε, δ)
conversion by numerical minimisation); the search never reports more than its budget, its runs
spend what the plan says, its score noise has the planned scale, and it is reproducible."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

pytest.importorskip("sklearn")

import fasterm as fe  # noqa: E402
from fasterm import accounting as A  # noqa: E402
from fasterm.datasets import load_breast_cancer, train_test_split  # noqa: E402
from fasterm.model_selection import SCORE_FRACTION, PrivateSearch, _draw_runs  # noqa: E402


# ---------------------------------------------------------------------------
# Independent reference of the theorem
# ---------------------------------------------------------------------------
def _tnb_pmf(eta, gamma, kmax):
    """P[K = k], k = 1..kmax, from Papernot & Steinke's Definition 1:
    (1 − γ)^k/(γ^{−η} − 1)·Π_{ℓ<k}(ℓ + η)/(ℓ + 1) (η ≠ 0), (1 − γ)^k/(k log(1/γ)) (η = 0)."""
    k = np.arange(1, kmax + 1, dtype=np.float64)
    if eta == 0:
        return k, (1 - gamma) ** k / (k * math.log(1 / gamma))
    logprod = np.cumsum(np.log((np.arange(kmax) + eta) / (np.arange(kmax) + 1.0)))
    return k, np.exp(k * math.log(1 - gamma) + logprod) / (gamma ** (-eta) - 1)


def _expected_runs(eta, gamma):
    k, p = _tnb_pmf(eta, gamma, 200_000)
    assert abs(p.sum() - 1) < 1e-9  # the truncation keeps all the mass
    return float(np.dot(k, p))


def _reference_epsilon(mu, delta, eta, gamma):
    """Thm. 2 with ε_λ = λμ²/2, minimised numerically over λ̂ ≥ 1, then Balle et al. (2020,
    Thm. 21): ε = min_λ ε′(λ) + log((λ − 1)/λ) − (log δ + log λ)/(λ − 1), minimised numerically."""
    L = math.log(1 / gamma)
    inner = minimize_scalar(lambda t: (1 - 1 / math.exp(t)) * math.exp(t) * mu * mu / 2 + L / math.exp(t),
                            bounds=(0.0, 30.0), method="bounded", options={"xatol": 1e-12}).fun
    log_ek = math.log(_expected_runs(eta, gamma))

    def eps_of(t):  # λ = 1 + e^t
        lam = 1 + math.exp(t)
        rdp = lam * mu * mu / 2 + (1 + eta) * inner + log_ek / (lam - 1)
        return rdp + math.log((lam - 1) / lam) - (math.log(delta) + math.log(lam)) / (lam - 1)

    ts = np.linspace(-12, 16, 4000)
    t0 = ts[int(np.argmin([eps_of(t) for t in ts]))]
    return minimize_scalar(eps_of, bounds=(t0 - 0.05, t0 + 0.05), method="bounded",
                           options={"xatol": 1e-12}).fun


@pytest.mark.parametrize("mu", [0.02, 0.15, 0.6, 2.0])
@pytest.mark.parametrize("eta, gamma", [(0.0, 0.05), (1.0, 0.25), (0.5, 0.01), (0.0, 0.5)])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_private_search_epsilon_against_reference(mu, eta, gamma, delta):
    ref = _reference_epsilon(mu, delta, eta, gamma)
    got = A.private_search_epsilon(mu, delta, eta=eta, gamma=gamma)
    assert got >= ref * (1 - 1e-9) - 1e-12  # never below the theorem's value
    assert got <= ref * (1 + 1e-4) + 1e-9    # and tight (a fine grid of orders)


@pytest.mark.parametrize("mu, eta, runs", [(0.15, 0.0, 8), (0.5, 1.0, 4), (2.0, 0.5, 10), (0.03, 0.0, 20)])
def test_private_search_epsilon_against_dp_accounting(mu, eta, runs):
    """Google's dp-accounting implements the same theorem (RepeatAndSelectDpEvent over a Gaussian
    event of noise multiplier 1/μ, i.e. μ-GDP) on its own grid of orders: the two agree to 1e-4."""
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    orders = list(np.concatenate([np.linspace(1.01, 10, 500), np.geomspace(10, 1e5, 500)]))
    acc = rdp.RdpAccountant(orders=orders, neighboring_relation=rdp.NeighborRel.REPLACE_ONE)
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(1.0 / mu), runs, eta))
    theirs = acc.get_epsilon(1e-5)
    _, gamma = A.calibrate_private_search(1.0, 1e-5, eta=eta, expected_runs=runs)
    ours = A.private_search_epsilon(mu, 1e-5, eta=eta, gamma=gamma)
    assert ours == pytest.approx(theirs, rel=1e-4)


@pytest.mark.parametrize("eta", [0.0, 1.0, 0.5])
@pytest.mark.parametrize("eps, runs", [(1.0, 8), (0.3, 4), (5.0, 20)])
def test_calibrate_private_search_meets_budget_tightly(eta, eps, runs):
    mu, gamma = A.calibrate_private_search(eps, 1e-5, eta=eta, expected_runs=runs)
    assert _expected_runs(eta, gamma) == pytest.approx(runs, rel=1e-6)
    assert _expected_runs(eta, gamma) >= runs * (1 - 1e-9)
    assert _reference_epsilon(mu, 1e-5, eta, gamma) <= eps * (1 + 1e-9)
    assert A.private_search_epsilon(mu * (1 + 1e-4), 1e-5, eta=eta, gamma=gamma) > eps


@pytest.mark.parametrize("eta", [0.0, 1.0, 0.5])
def test_number_of_runs_follows_the_truncated_negative_binomial(eta):
    gamma = 0.1
    rng = np.random.default_rng(11)
    draws = np.array([_draw_runs(rng, eta, gamma) for _ in range(20_000)])
    k, p = _tnb_pmf(eta, gamma, 10_000)
    mean = float(np.dot(k, p))
    sd = math.sqrt(float(np.dot(k * k, p)) - mean * mean)
    assert draws.min() >= 1
    assert abs(draws.mean() - mean) < 4 * sd / math.sqrt(draws.size)
    for j in range(1, 6):  # the first probabilities, each within 4 standard errors
        pj = p[j - 1]
        assert abs(np.mean(draws == j) - pj) < 4 * math.sqrt(pj * (1 - pj) / draws.size)


# ---------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(scaled=True)
    return train_test_split(X, y, 0.3, random_state=0)


GRID = {"max_steps": [10, 20, 40], "intercept_scaling": [0.25, 0.5]}


@pytest.mark.parametrize("eps, delta", [(0.5, 1e-6), (1.0, 1e-5), (3.0, 1e-5)])
@pytest.mark.parametrize("cls, eta", [(fe.DPLogisticRegression, 0.0), (fe.DPLinearSVC, 1.0)])
# a released run may reach the default radius (the search's summary says so): not what is tested
@pytest.mark.filterwarnings("ignore:.*on the boundary of the parameter ball:fasterm.DataWarning")
def test_search_never_reports_more_than_the_budget(cancer, eps, delta, cls, eta):
    Xtr, _, ytr, _ = cancer
    for seed in range(3):
        s = PrivateSearch(cls(), GRID, epsilon=eps, delta=delta, eta=eta, random_state=seed).fit(Xtr, ytr)
        assert s.epsilon_ <= eps and s.delta_ <= delta
        mu, gamma = A.calibrate_private_search(eps, delta, eta=eta, expected_runs=2 * 6)
        assert s.mu_ <= mu * (1 + 1e-12)
        # the released run spent its planned share: μ_fit = √T·Δ₂/σ ≤ μ·√(1 − f)
        r = s.best_estimator_.result_
        mu_fit = math.sqrt(r.steps) * r.sensitivity / r.noise_scale
        assert mu_fit <= mu * math.sqrt(1 - SCORE_FRACTION) * (1 + 1e-12)
        assert mu_fit >= mu * math.sqrt(1 - SCORE_FRACTION) * (1 - 1e-6)
        assert s.best_params_ in [dict(max_steps=m, intercept_scaling=i) for m in (10, 20, 40) for i in (0.25, 0.5)]
        # the released constants are the calibration's, not the runs' (docs/guarantees.rst)
        assert s.mu_ == mu and s.epsilon_ == A.private_search_epsilon(mu, delta, eta=eta, gamma=gamma)
        assert s.expected_runs_ == 12.0 and not hasattr(s, "n_runs_")
        assert s.best_estimator_.random_state is None


def test_score_noise_has_the_planned_scale(cancer):
    """One candidate and E[K] ≈ 1 (η = 1, K = 1 almost surely): the released noisy count minus the
    model's true count is the score's N(0, (1/μ_score)²) noise; its spread over 800 searches
    matches 1/μ_score within 10% (the standard error of a standard deviation is 2.5%)."""
    Xtr, _, ytr, _ = cancer
    n = Xtr.shape[0]
    diffs = []
    for seed in range(800):
        s = PrivateSearch(fe.DPLogisticRegression(), {"max_steps": [20]}, epsilon=1.0, eta=1.0,
                          expected_runs=1.0 + 1e-9, random_state=seed).fit(Xtr, ytr)
        true = np.count_nonzero(s.best_estimator_.predict(Xtr) == ytr)
        diffs.append(s.best_score_ * n - true)
    mu, _ = A.calibrate_private_search(1.0, 1e-5, eta=1.0, expected_runs=1.0 + 1e-9)
    assert np.std(diffs) == pytest.approx(1.0 / (mu * math.sqrt(SCORE_FRACTION)), rel=0.10)
    assert abs(np.mean(diffs)) < 4 * np.std(diffs) / math.sqrt(800)


def test_regression_score_clips_to_target_bounds_and_has_their_noise_scale():
    """DPLinearRegression(target_bounds=(low, high)): the score −Σ(y − ŷ)² clips y and ŷ to [low, high]
    in the caller's units, so a row moves it by at most (high − low)² (not 4·label_bound²).  One
    candidate and K = 1: the released score minus the model's clipped score, written out here, is
    N(0, ((high − low)²/μ_score)²); its spread over 800 searches matches within 10%."""
    rng = np.random.default_rng(3)
    n, low, high = 200, 0.0, 100.0
    X = rng.uniform(-1, 1, (n, 3)) / 2
    y = 50 + 40 * (X @ [1.0, -0.5, 0.2]) + 5 * rng.normal(size=n)
    y[:10] = 130.0  # beyond the declared range: clipped in the score as in the fit
    est = fe.DPLinearRegression(target_bounds=(low, high), solver="noisy_gd", max_steps=5)
    diffs = []
    for seed in range(800):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fe.DataWarning)  # 5% of the labels are clipped, as meant
            s = PrivateSearch(est, {"alpha": [1e-4]}, epsilon=1.0, eta=1.0, expected_runs=1.0 + 1e-9,
                              random_state=seed).fit(X, y)
        pred = s.best_estimator_.predict(X)
        true = -sum((min(max(a, low), high) - min(max(b, low), high)) ** 2 for a, b in zip(y, pred))
        diffs.append(s.best_score_ * n - true)
    mu, _ = A.calibrate_private_search(1.0, 1e-5, eta=1.0, expected_runs=1.0 + 1e-9)
    assert np.std(diffs) == pytest.approx((high - low) ** 2 / (mu * math.sqrt(SCORE_FRACTION)), rel=0.10)
    assert abs(np.mean(diffs)) < 4 * np.std(diffs) / math.sqrt(800)


def test_search_prefers_the_better_candidate_when_the_budget_is_large(cancer):
    Xtr, Xte, ytr, yte = cancer
    # one step from w = 0 predicts the majority class (training accuracy 0.65 against 0.96).
    # Random stopping tries a random candidate per run: with geometric K of mean 200 (η = 1)
    # only the bad one is tried with probability γ/(1 + γ) ≈ 0.005 per search.
    picks = [PrivateSearch(fe.DPLogisticRegression(), {"max_steps": [1, 40]}, epsilon=5.0, eta=1.0,
                           expected_runs=200, random_state=s).fit(Xtr, ytr).best_params_["max_steps"]
             for s in range(20)]
    assert picks.count(40) >= 19


def test_caller_generator_does_not_learn_the_number_of_runs(cancer):
    # a Generator given as random_state stays on the search: after the fit its state may not
    # depend on K (hidden by the theorem) nor on the data, and nothing may be spawned from it
    # (its seed sequence would count K children and re-spawning them would replay every run)
    Xtr, _, ytr, _ = cancer
    X2, y2 = Xtr.copy(), ytr.copy()
    X2[0], y2[0] = -X2[0], 1 - y2[0]
    for seed in range(3):
        states = set()
        for runs, (X, y) in ((2.5, (Xtr, ytr)), (40.0, (Xtr, ytr)), (40.0, (X2, y2))):
            g = np.random.default_rng(seed)
            s = PrivateSearch(fe.DPLogisticRegression(solver="noisy_gd", max_steps=5), GRID, epsilon=1.0,
                              expected_runs=runs, random_state=g).fit(X, y)
            assert s.random_state is g
            assert g.bit_generator.seed_seq.n_children_spawned == 0
            states.add(repr(g.bit_generator.state))
        assert len(states) == 1, seed


def test_reproducible_and_delegates(cancer):
    Xtr, Xte, ytr, yte = cancer
    a = PrivateSearch(fe.DPLogisticRegression(), GRID, epsilon=1.0, random_state=5).fit(Xtr, ytr)
    b = PrivateSearch(fe.DPLogisticRegression(), GRID, epsilon=1.0, random_state=5).fit(Xtr, ytr)
    c = PrivateSearch(fe.DPLogisticRegression(), GRID, epsilon=1.0,
                      random_state=np.random.default_rng(5)).fit(Xtr, ytr)
    for other in (b, c):
        assert other.best_params_ == a.best_params_ and other.best_score_ == a.best_score_
        np.testing.assert_array_equal(other.best_estimator_.coef_, a.best_estimator_.coef_)
    np.testing.assert_array_equal(a.predict(Xte), a.best_estimator_.predict(Xte))
    assert a.score(Xte, yte) == a.best_estimator_.score(Xte, yte)
    np.testing.assert_array_equal(a.predict_proba(Xte), a.best_estimator_.predict_proba(Xte))
    np.testing.assert_array_equal(a.decision_function(Xte), a.best_estimator_.decision_function(Xte))
    assert list(a.classes_) == [0, 1]


def test_regression_and_multiclass_candidates():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4)) / 4
    y = np.clip(X @ np.array([1.0, -0.5, 0.3, 0.0]), -1, 1)
    s = PrivateSearch(fe.DPLinearRegression(), {"alpha": [1e-4, 1e-2]}, epsilon=2.0, random_state=0).fit(X, y)
    assert s.epsilon_ <= 2.0 and s.best_score_ <= 4.0 * 1.0  # −noisy MSE, Δ = 4Y² per row
    y3 = np.digitize(X[:, 0], [-0.1, 0.1])
    m = PrivateSearch(fe.DPLogisticRegression(), {"max_steps": [20, 40]}, epsilon=2.0, random_state=0).fit(X, y3)
    assert m.best_estimator_.coef_.shape == (3, 4) and m.epsilon_ <= 2.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(param_grid={"epsilon": [1.0, 2.0]}), "may not set 'epsilon'"),
    (dict(param_grid={"random_state": [1]}), "may not set 'random_state'"),
    (dict(param_grid={"nonsense": [1]}), "not a parameter"),
    (dict(param_grid={"noise": ["laplace"]}), "Gaussian-noise fits"),
    (dict(param_grid={"secure": [True]}), "Gaussian-noise fits"),
    (dict(param_grid={"solver": ["objpert"]}), "Gaussian-noise fits"),
    (dict(param_grid={"solver": ["noisy_sgd"]}), "Gaussian-noise fits"),
    (dict(param_grid={"solver": ["sgd"]}), "solver"),
    (dict(param_grid=[]), "no candidate"),
    (dict(param_grid={"alpha": 3.0}), "param_grid"),
    (dict(delta=0.0), "delta"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(eta=-0.5), "eta"),
    (dict(expected_runs=1.0), "expected_runs"),
    (dict(score_fraction=1.0), "score_fraction"),
])
def test_bad_parameters_raise_before_any_fit(cancer, kwargs, match):
    Xtr, _, ytr, _ = cancer
    params = dict(param_grid={"alpha": [1e-4]}, epsilon=1.0)
    params.update(kwargs)
    with pytest.raises(ValueError, match=match):
        PrivateSearch(fe.DPLogisticRegression(), **params).fit(Xtr, ytr)


def test_refuses_foreign_estimators_and_sgd_by_default():
    from sklearn.linear_model import LogisticRegression
    X = np.zeros((6000, 2))
    y = np.arange(6000) % 2
    with pytest.raises(TypeError, match="fasterm estimator"):
        PrivateSearch(LogisticRegression(), {"C": [1.0]}).fit(X[:10], y[:10])
    with pytest.raises(ValueError, match="solver='noisy_gd'"):
        PrivateSearch(fe.DPLogisticRegression(), {"alpha": [1e-4]}).fit(X, y)
    s = PrivateSearch(fe.DPLogisticRegression(solver="noisy_gd"), {"alpha": [1e-4]}, random_state=0).fit(X, y)
    assert s.epsilon_ <= 1.0


def test_exported():
    assert fe.PrivateSearch is PrivateSearch
    assert "PrivateSearch" in fe.__all__


# ---------------------------------------------------------------------------
# Column selectors of a ColumnTransformer (issue #35, item 2)
# ---------------------------------------------------------------------------
def _frame(n=120, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.uniform(0, 1, n), "b": rng.uniform(0, 1, n), "c": rng.integers(0, 2, n)})
    return df, (df["a"].to_numpy() > 0.5).astype(int)


def _search(prep, grid=None):
    from sklearn.pipeline import Pipeline
    return PrivateSearch(Pipeline([("prep", prep), ("m", fe.DPLogisticRegression(data_norm=math.sqrt(3)))]),
                         grid or {"m__max_steps": [5, 10]}, random_state=0)


def test_a_callable_selector_reads_the_data():
    # why callables are refused: make_column_selector(dtype_include=...) selects by the dtype pandas
    # inferred from the values, and one changed record (an integer column given a fractional value)
    # changes the selected columns, the fitted transformers_ and the shape of coef_
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.pipeline import make_pipeline

    df, y = _frame()
    df2 = df.copy()
    df2["c"] = df2["c"].astype(float)
    df2.loc[0, "c"] = 0.5
    shapes = []
    for data in (df, df2):
        ct = ColumnTransformer([("f", "passthrough", make_column_selector(dtype_include="float"))], sparse_threshold=0)
        pipe = make_pipeline(ct, fe.DPLogisticRegression(data_norm=math.sqrt(3), random_state=0)).fit(data, y)
        shapes.append(pipe[-1].coef_.shape)
    assert shapes == [(1, 2), (1, 3)]


@pytest.mark.parametrize("selector", ["lambda", "dtype", "pattern"])
def test_private_search_refuses_callable_column_selectors(selector):
    from sklearn.compose import ColumnTransformer, make_column_selector

    df, y = _frame()
    columns = {"lambda": lambda X: [c for c in X.columns if X[c].max() > 0.9],
               "dtype": make_column_selector(dtype_include="number"),
               "pattern": make_column_selector(pattern="^[ab]$")}[selector]
    ct = ColumnTransformer([("num", "passthrough", columns)], sparse_threshold=0)
    with pytest.raises(TypeError, match=r"step 'prep' \(ColumnTransformer\), transformer 'num': columns=.* is a "
                                        r"callable.*pass the column names"):
        _search(ct).fit(df, y)
    if selector != "lambda":  # the message shows the selector's arguments
        shown = r"columns=make_column_selector\((dtype_include='number'|pattern='\^\[ab\]\$')\)"
        with pytest.raises(TypeError, match=shown):
            _search(ct).fit(df, y)


def test_private_search_refuses_nested_callable_selectors_before_any_fit():
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.pipeline import Pipeline

    df, y = _frame()
    inner = ColumnTransformer([("num", "passthrough", make_column_selector(dtype_include="float"))], sparse_threshold=0)
    outer = ColumnTransformer([("block", Pipeline([("ct", inner)]), ["a", "b"])], sparse_threshold=0)
    calls = []
    orig = fe.DPLogisticRegression.fit
    try:
        fe.DPLogisticRegression.fit = lambda self, *a, **k: calls.append(1) or orig(self, *a, **k)
        with pytest.raises(TypeError, match=r"step 'prep' \(ColumnTransformer\), transformer 'block' \(Pipeline\), "
                                            r"step 'ct' \(ColumnTransformer\), transformer 'num': columns="):
            _search(outer).fit(df, y)
        # a grid that swaps a public selector for a callable is refused as well
        ct = ColumnTransformer([("num", "passthrough", ["a", "b"])], sparse_threshold=0)
        with pytest.raises(TypeError, match="transformer 'num': columns=.* is a callable"):
            _search(ct, {"prep__transformers": [[("num", "passthrough", lambda X: ["a"])]]}).fit(df, y)
    finally:
        fe.DPLogisticRegression.fit = orig
    assert calls == []


@pytest.mark.parametrize("columns", [["a", "b"], ("a", "b"), [0, 1], np.array([0, 1]), slice("a", "b"), slice(0, 2),
                                     [True, True, False], np.array([True, True, False]), "index"])
def test_private_search_accepts_public_column_selectors(columns):
    from sklearn.compose import ColumnTransformer

    from fasterm.preprocessing import BoundedScaler

    df, y = _frame()
    if isinstance(columns, str):
        columns = df.columns[:2]  # a pandas Index of names
    ct = ColumnTransformer([("num", BoundedScaler(([0.0, 0.0], [1.0, 1.0])), columns)],
                           remainder="passthrough", sparse_threshold=0)
    s = _search(ct).fit(df, y)
    assert s.best_estimator_[-1].coef_.shape == (1, 3)


def test_private_search_refusal_names_sparse_threshold():
    # issue #35, item 9: the refusal names the parameter and its value
    from sklearn.compose import ColumnTransformer

    df, y = _frame()
    ct = ColumnTransformer([("num", "passthrough", ["a", "b"])], sparse_threshold=0.3)
    with pytest.raises(TypeError, match=r"step 'prep' \(ColumnTransformer\): sparse_threshold=0\.3 .*set "
                                        r"sparse_threshold=0"):
        _search(ct).fit(df, y)


# ---------------------------------------------------------------------------
# Warnings of the hidden runs (issue #35, item 5)
# ---------------------------------------------------------------------------
def _recorded(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fit()
    return out, caught


def test_hidden_runs_give_one_summary_warning_that_does_not_depend_on_k(cancer):
    # every run clips rows to data_norm (rows × 4): one DataWarning per search, the same text
    # whatever the grid size and the seed (K varies among them), with no number in it
    Xtr, _, ytr, _ = cancer
    texts = set()
    for size in (2, 5):
        for seed in range(4):
            grid = {"max_steps": [10, 15, 20, 25, 30][:size]}
            _, caught = _recorded(lambda: PrivateSearch(fe.DPLogisticRegression(radius=100.0), grid, epsilon=1.0,
                                                        random_state=seed).fit(4 * Xtr, ytr))
            assert [w.category for w in caught] == [fe.DataWarning], (size, seed)
            texts.add(str(caught[0].message))
    assert len(texts) == 1
    (text,) = texts
    assert "rows with a norm above data_norm were clipped" in text
    assert not re.search(r"\d", text)


def test_summary_warning_is_that_of_the_released_run(cancer):
    # one candidate clips every row (data_norm=0.05) and learns nothing (1 step); the other
    # clips none: the summary mentions clipping exactly when the released candidate clips, even
    # when a hidden run of the other candidate clipped
    Xtr, _, ytr, _ = cancer
    grid = [{"max_steps": [40]}, {"max_steps": [1], "data_norm": [0.05]}]
    orig = fe.DPLogisticRegression.fit
    hidden_clipping = 0
    for seed in range(8):
        runs = []
        try:
            fe.DPLogisticRegression.fit = lambda self, *a, **k: runs.append(self.data_norm) or orig(self, *a, **k)
            s, caught = _recorded(lambda: PrivateSearch(fe.DPLogisticRegression(), grid, epsilon=2.0,
                                                        random_state=seed).fit(Xtr, ytr))
        finally:
            fe.DPLogisticRegression.fit = orig
        clipped = s.best_params_.get("data_norm") == 0.05
        mentions = [w for w in caught if "rows with a norm above data_norm were clipped" in str(w.message)]
        assert len(mentions) == int(clipped), seed
        assert all(w.category is fe.DataWarning for w in caught) and len(caught) <= 1, seed
        hidden_clipping += (not clipped) and 0.05 in runs
    assert hidden_clipping >= 1  # the test saw a hidden run that clipped behind a released one that did not


def test_every_data_warning_of_a_fit_has_a_kind():
    # the summary names each DataWarning a fit emits by its kind (never the fallback, which keeps
    # the message's first line): each one triggered by a plain fit and classified
    from fasterm.model_selection import _WARNING_KINDS, _warning_kind

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 3)) / 2
    y = (X[:, 0] > 0.25).astype(int)
    fits = [
        (fe.DPLogisticRegression(random_state=0), 4 * X, y),                                   # rows clipped
        (fe.DPLinearRegression(label_bound=0.1, random_state=0), X, X[:, 0] * 4),            # labels clipped
        (fe.DPLogisticRegression(bounds=([5.0] * 3, [6.0] * 3), random_state=0), X, y),      # bounds missed
        (fe.DPLogisticRegression(radius=0.01, epsilon=5.0, random_state=0), X, y),             # boundary
    ]
    seen = []
    for (est, Xf, yf), (_, kind) in zip(fits, _WARNING_KINDS):
        _, caught = _recorded(lambda: est.fit(Xf, yf))
        kinds = [_warning_kind(w) for w in caught if w.category is fe.DataWarning]
        assert kind in kinds, (kind, [str(w.message) for w in caught])
        seen += kinds
    assert set(seen) <= {k for _, k in _WARNING_KINDS}


def test_other_warnings_are_summarised_without_numbers():
    from fasterm.model_selection import _warning_kind, _warning_summary

    class Rec:
        def __init__(self, category, message):
            self.category, self.message = category, message

    records = [Rec(RuntimeWarning, "overflow encountered in exp at 12 of 300 rows, 1.5e3 and -0.25%"),
               Rec(fe.DataWarning, "17 of 300 rows (6%) have a norm above data_norm=1 and are clipped")]
    assert _warning_kind(records[0]) == "RuntimeWarning: overflow encountered in exp at # of # rows, # and #"
    summary = str(_warning_summary(records))
    assert summary.index("rows with a norm above data_norm") < summary.index("RuntimeWarning")
    assert _warning_summary([]) is None
