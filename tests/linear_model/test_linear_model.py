"""The scikit-learn estimators: API conformance, accuracy on real data, privacy bookkeeping."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import fasterm as fe  # noqa: E402
from fasterm import OptimizeResult
from fasterm.linear_model import _rules as _linear  # noqa: E402
from fasterm import accounting as A  # noqa: E402
from fasterm.datasets import load_breast_cancer, train_test_split  # noqa: E402
from fasterm.linear_model import EXPECTED_FAILED_CHECKS  # noqa: E402

ESTIMATORS = [fe.DPLogisticRegression, fe.DPLinearSVC, fe.DPLinearRegression]


# ---------------------------------------------------------------------------
# scikit-learn's own estimator checks, random_state fixed
# ---------------------------------------------------------------------------
@parametrize_with_checks(
    [cls(random_state=0) for cls in ESTIMATORS],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS[type(est).__name__],
)
# scikit-learn's checks fit raw data (rows beyond data_norm, labels beyond label_bound) by design
@pytest.mark.filterwarnings("ignore::fasterm.DataWarning")
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


def test_tags_state_what_is_relaxed():
    for cls in (fe.DPLogisticRegression, fe.DPLinearSVC):
        tags = cls().__sklearn_tags__()
        assert tags.classifier_tags.multi_class is True  # the checks run on multiclass data too
        assert tags.classifier_tags.poor_score is False  # the classifiers pass the score checks
        assert tags.non_deterministic is False
    assert fe.DPLinearRegression().__sklearn_tags__().regressor_tags.poor_score is True
    # only the weights-as-repetitions and all-zero-weights checks, by design (reasons in EXPECTED_FAILED_CHECKS)
    assert all(set(v) == {"check_sample_weight_equivalence_on_dense_data",
                          "check_sample_weight_equivalence_on_sparse_data",
                          "check_all_zero_sample_weights_error"} for v in EXPECTED_FAILED_CHECKS.values())
    assert all(cls().__sklearn_tags__().input_tags.sparse for cls in ESTIMATORS)  # CSR kernels


# ---------------------------------------------------------------------------
# Accuracy on the shipped real data set (breast cancer, rows in the unit ball
# with the published feature ranges, random 70/30 splits)
# ---------------------------------------------------------------------------
SEEDS = 30


@pytest.fixture(scope="module")
def splits():
    X, y = load_breast_cancer(scaled=True)
    return [train_test_split(X, y, 0.3, random_state=s) for s in range(SEEDS)]


def _mean_accuracy(splits, make):
    return float(np.mean([make(s).fit(Xtr, ytr).score(Xte, yte)
                          for s, (Xtr, Xte, ytr, yte) in enumerate(splits)]))


@pytest.mark.parametrize("cls,kwargs,epsilons", [
    (fe.DPLogisticRegression, {}, [0.1, 0.3, 1.0, 3.0]),
    (fe.DPLogisticRegression, dict(noise="laplace", calibration="l2"), [0.1, 0.3, 1.0, 3.0]),
    (fe.DPLogisticRegression, dict(noise="laplace", calibration="coordinate"), [0.3, 1.0, 3.0, 10.0]),
    (fe.DPLogisticRegression, dict(noise="laplace", calibration="pure", delta=0.0),
     [0.3, 1.0, 3.0, 10.0]),
    (fe.DPLogisticRegression, dict(delta=0.0), [0.3, 1.0, 3.0, 10.0]),
    (fe.DPLinearSVC, {}, [0.1, 0.3, 1.0, 3.0]),
], ids=["logistic-gaussian", "logistic-laplace-l2", "logistic-laplace-coordinate",
        "logistic-laplace-pure", "logistic-objpert", "svc-gaussian"])
# some high-ε fits reach the default radius: a remark on the model, not what is measured here
@pytest.mark.filterwarnings("ignore:.*on the boundary of the parameter ball:fasterm.DataWarning")
def test_accuracy_increases_with_epsilon(splits, cls, kwargs, epsilons):
    acc = [_mean_accuracy(splits, lambda s: cls(epsilon=eps, random_state=s, **kwargs))
           for eps in epsilons]
    assert all(a < b for a, b in zip(acc, acc[1:])), acc


def test_accuracy_at_epsilon_1_beats_diffprivlib(splits):
    # diffprivlib 0.6.6's LogisticRegression(epsilon=1, data_norm=1) on the same
    # data reaches about 0.68 (issue 6; bench/compare_diffprivlib.py measured
    # 0.668 over 50 splits).  On these 30 splits fasterm measured 0.907
    # (logistic) and 0.908 (SVC), Gaussian noise, δ = 1e-5, against 0.937
    # (scikit-learn LogisticRegression()) and 0.955 (fasterm.pgd) non-private.
    acc = _mean_accuracy(splits, lambda s: fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=s))
    assert acc > 0.68
    assert acc > 0.88
    svc = _mean_accuracy(splits, lambda s: fe.DPLinearSVC(epsilon=1.0, delta=1e-5, random_state=s))
    assert svc > 0.88


def test_regression_r2_increases_with_epsilon():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 10)) / math.sqrt(10)
    w = rng.standard_normal(10)
    w *= 2 / np.linalg.norm(w)
    y = np.clip(X @ w + 0.3 + 0.1 * rng.standard_normal(2000), -1, 1)
    parts = [train_test_split(X, y, 0.3, random_state=s) for s in range(10)]
    r2 = [np.mean([fe.DPLinearRegression(epsilon=eps, random_state=s).fit(a, c).score(b, d)
                   for s, (a, b, c, d) in enumerate(parts)]) for eps in [0.1, 0.3, 1.0]]
    assert r2[0] < r2[1] < r2[2]
    assert r2[2] > 0.85  # least squares reaches 0.92 on these data


# ---------------------------------------------------------------------------
# Privacy bookkeeping
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small():
    X, y = load_breast_cancer(scaled=True)
    return X[:300], y[:300]


@pytest.mark.parametrize("noise,cal,delta", [
    ("gaussian", None, 1e-5), ("laplace", "l2", 1e-5), ("laplace", "coordinate", 1e-6),
    ("laplace", "pure", 0.0), ("laplace", "l2", 0.0),
])
@pytest.mark.parametrize("eps", [0.2, 1.0, 4.0])
def test_privacy_spent_equals_requested(small, noise, cal, delta, eps):
    X, y = small
    m = fe.DPLogisticRegression(epsilon=eps, delta=delta, noise=noise, calibration=cal,
                                random_state=0).fit(X, y)
    assert m.epsilon_ == pytest.approx(eps, rel=1e-9) and m.epsilon_ <= eps * (1 + 1e-9)
    assert 0.0 <= m.delta_ <= delta
    if noise == "gaussian":
        assert m.delta_ == delta
        mu = math.sqrt(m.n_iter_) * m.result_.sensitivity / m.result_.noise_scale
        assert A.gaussian_delta(mu, m.epsilon_) == pytest.approx(delta, rel=1e-9)
    if delta == 0.0:
        assert m.delta_ == 0.0
    assert m.result_.steps == m.n_iter_ >= 1


def test_noise_is_calibrated_to_public_quantities_only(small):
    X, y = small
    n = X.shape[0]
    m = fe.DPLogisticRegression(random_state=0).fit(X, y)
    x_aug = math.hypot(1.0, 0.25)
    clip = x_aug / (1 + math.e)  # clip="auto" for the logistic loss
    assert m.result_.lipschitz == pytest.approx(clip)
    assert m.result_.sensitivity == pytest.approx(2 * clip / n)
    assert m.result_.noise_scale == pytest.approx(
        A.calibrate_gaussian(2 * clip / n, m.n_iter_, 1.0, 1e-5), rel=1e-12)
    # Different data, same public quantities: same T, step size and noise scale.
    rng = np.random.default_rng(5)
    other = fe.DPLogisticRegression(random_state=0).fit(0.01 * rng.standard_normal(X.shape),
                                                         rng.integers(0, 2, n))
    r1, r2 = m.result_, other.result_
    assert (r1.steps, r1.lr, r1.noise_scale) == (r2.steps, r2.lr, r2.noise_scale)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("fit_intercept", [True, False])
# the regression on labels at ±1 ends on the default radius: not what is tested here
@pytest.mark.filterwarnings("ignore:.*on the boundary of the parameter ball:fasterm.DataWarning")
def test_rows_outside_the_bounds_are_clipped(small, cls, fit_intercept):
    X, y = small
    X_big = X.copy()
    X_big[::7] *= 25.0  # far outside data_norm = 1
    X_clipped = X_big / np.maximum(1.0, np.linalg.norm(X_big, axis=1, keepdims=True))
    if cls is fe.DPLinearRegression:
        y_big = np.where(y == 1, 3.0, -5.0)  # outside label_bound = 1
        y_clipped = np.clip(y_big, -1.0, 1.0)
    else:
        y_big = y_clipped = y
    with pytest.warns(fe.DataWarning) as rec:  # the clipping is told to the caller
        a = cls(fit_intercept=fit_intercept, random_state=3).fit(X_big, y_big)
    said = [str(w.message) for w in rec]
    assert any("43 of 300 rows (14%) have a norm above data_norm=1" in m for m in said), said
    if cls is fe.DPLinearRegression:
        assert any("300 of 300 labels (100%) have |y| > label_bound=1" in m for m in said), said
    b = cls(fit_intercept=fit_intercept, random_state=3).fit(X_clipped, y_clipped)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-9, atol=1e-12)
    c = cls(fit_intercept=fit_intercept, random_state=3).fit(X, y_clipped)
    assert not np.allclose(a.coef_, c.coef_)  # the scaled rows did change the data


# radius=2.0 (and the default for clip=None) is reached on these data: not what is tested here
@pytest.mark.filterwarnings("ignore:.*on the boundary of the parameter ball:fasterm.DataWarning")
def test_intercept_column_and_radius(small):
    X, y = small
    m = fe.DPLogisticRegression(radius=2.0, intercept_scaling=0.5, random_state=0).fit(X, y)
    w = np.append(m.coef_.ravel(), m.intercept_[0] / 0.5)
    np.testing.assert_allclose(w, m.result_.w, rtol=1e-12)
    assert np.linalg.norm(w) <= 2.0 * (1 + 1e-12)
    assert m.result_.info["d"] == X.shape[1] + 1
    # the noise is calibrated to the augmented row norm √(X² + s²)
    assert m.result_.lipschitz == pytest.approx(math.hypot(1.0, 0.5) / (1 + math.e))
    m0 = fe.DPLogisticRegression(fit_intercept=False, clip=None, random_state=0).fit(X, y)
    assert m0.intercept_[0] == 0.0 and m0.result_.lipschitz == pytest.approx(1.0)


@pytest.mark.parametrize("cls, delta, method, s", [
    (fe.DPLogisticRegression, 1e-5, "auto", 0.25),      # noisy PGD
    (fe.DPLogisticRegression, 0.0, "auto", 0.125),      # objective perturbation
    (fe.DPLinearSVC, 0.0, "objpert", 0.125),
    (fe.DPLogisticRegression, 0.0, "objpert_threshold", 0.25),
    (fe.DPLinearRegression, 0.0, "auto", 0.25),         # LogCosh: not part of the comparison
])
# the regression ends on its default radius here: not what is tested
@pytest.mark.filterwarnings("ignore:.*on the boundary of the parameter ball:fasterm.DataWarning")
def test_intercept_scaling_auto(small, cls, delta, method, s):
    # "auto" depends on the kind and the resolved method only (fasterm.linear_model._rules);
    # the column it picks is the one the noise is calibrated with.
    X, y = small
    if cls is fe.DPLinearRegression:
        y = np.clip(X[:, 0], -1, 1)
    kw = dict(delta=delta, solver=method, random_state=0)
    m = cls(**kw).fit(X, y)
    ref = cls(intercept_scaling=s, **kw).fit(X, y)
    np.testing.assert_array_equal(m.coef_, ref.coef_)
    np.testing.assert_array_equal(m.intercept_, ref.intercept_)
    other = cls(intercept_scaling=0.375, **kw).fit(X, y)  # an explicit value is kept
    assert not np.array_equal(other.coef_, m.coef_)
    if method in ("auto", "objpert") and delta == 0.0:
        # L = X_aug (padded by (d + 8)·4u, d counting the column) and c = sup ψ''·X_aug²,
        # sup ψ'' = 1 for SmoothHinge(0.25) and for LogCosh(width=label_bound=1)
        L = math.hypot(1.0, s) * (1 + 4.0 * (X.shape[1] + 9) * 2.0 ** -53)
        assert m.result_.lipschitz == pytest.approx(L, rel=1e-15)
        assert m.result_.curvature == pytest.approx(L * L, rel=1e-14)


# ---------------------------------------------------------------------------
# Estimator behaviour
# ---------------------------------------------------------------------------
def test_labels_are_mapped_consistently(small):
    X, y = small
    ref = fe.DPLogisticRegression(random_state=1).fit(X, y)
    for labels in (np.array(["malignant", "benign"]), np.array([-1, 1]), np.array([7, 3])):
        # classes_ is sorted; the larger label is the positive class
        yy = labels[y] if labels[0] < labels[1] else labels[1 - y]
        m = fe.DPLogisticRegression(random_state=1).fit(X, yy)
        assert list(m.classes_) == sorted(labels)
        np.testing.assert_array_equal(m.coef_, ref.coef_)
        np.testing.assert_array_equal(m.predict(X), m.classes_[ref.predict(X)])


def test_predict_proba_and_decision_function(small):
    X, y = small
    m = fe.DPLogisticRegression(random_state=0).fit(X, y)
    z = m.decision_function(X)
    np.testing.assert_allclose(z, X @ m.coef_.ravel() + m.intercept_[0])
    p = m.predict_proba(X)
    assert p.shape == (X.shape[0], 2)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(p[:, 1], 1 / (1 + np.exp(-z)))
    np.testing.assert_array_equal(m.predict(X), m.classes_[(p[:, 1] > 0.5).astype(int)])
    np.testing.assert_allclose(m.predict_log_proba(X), np.log(p))
    assert not hasattr(fe.DPLinearSVC(), "predict_proba")


def test_get_set_params_and_clone(small):
    X, y = small
    est = fe.DPLogisticRegression(epsilon=0.5, noise="laplace", random_state=7)
    params = est.get_params()
    assert params["epsilon"] == 0.5 and params["noise"] == "laplace" and params["random_state"] == 7
    assert params["delta"] == 1e-5 and params["data_norm"] == 1.0 and params["clip"] == "auto"
    twin = clone(est)
    assert twin.get_params() == params and twin is not est
    est.fit(X, y)
    assert not hasattr(clone(est), "coef_")
    np.testing.assert_array_equal(clone(est).fit(X, y).coef_, est.coef_)
    est.set_params(epsilon=2.0, random_state=8)
    assert est.get_params()["epsilon"] == 2.0
    assert est.fit(X, y).epsilon_ == pytest.approx(2.0)
    reg = fe.DPLinearRegression(label_bound=3.0)
    assert clone(reg).get_params()["label_bound"] == 3.0


def test_random_state_reproduces_and_generators_advance(small):
    X, y = small
    a = fe.DPLinearSVC(random_state=11).fit(X, y).coef_
    b = fe.DPLinearSVC(random_state=11).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, fe.DPLinearSVC(random_state=12).fit(X, y).coef_)
    gen = np.random.default_rng(11)
    m = fe.DPLinearSVC(random_state=gen)
    first = m.fit(X, y).coef_.copy()
    np.testing.assert_array_equal(first, a)  # default_rng(11) is what the int seed means
    assert not np.array_equal(first, m.fit(X, y).coef_)  # the Generator's state moved on
    c = fe.DPLinearSVC().fit(X, y).coef_
    d = fe.DPLinearSVC().fit(X, y).coef_
    assert not np.array_equal(c, d)  # random_state=None: fresh noise at every fit


def test_float32_stays_float32(small):
    X, y = small
    m = fe.DPLogisticRegression(random_state=0).fit(X.astype(np.float32), y)
    assert m.coef_.dtype == np.float32 and m.intercept_.dtype == np.float32
    assert m.score(X, y) > 0.8


@pytest.mark.parametrize("kwargs,match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=math.inf), "epsilon"),
    (dict(delta=1.0), "delta"),
    (dict(delta=0.0, solver="noisy_gd", noise="gaussian"), "delta=0"),
    (dict(delta=0.0, noise="laplace", calibration="coordinate"), "delta=0"),
    (dict(data_norm=0.0), "data_norm"),
    (dict(radius=-1.0), "radius"),
    (dict(radius=math.inf), "radius"),
    (dict(data_norm=math.nan), "data_norm"),
    (dict(alpha=-1e-3), "alpha"),
    (dict(clip=0.0), "clip"),
    (dict(clip="big"), "clip"),
    (dict(noise="cauchy"), "noise"),
    (dict(calibration="rdp"), "calibration"),
    (dict(solver="objective"), "solver"),
    (dict(steps=0), "steps"),
    (dict(max_steps=2.5), "max_steps"),
    (dict(random_state=-3), "random_state"),
    (dict(random_state=np.random.RandomState(0)), "random_state"),
])
def test_bad_parameters_raise_before_fitting(small, kwargs, match):
    X, y = small
    with pytest.raises(ValueError, match=match):
        fe.DPLogisticRegression(**kwargs).fit(X, y)


# one fit reaches the default radius: not what is tested here
@pytest.mark.filterwarnings("ignore:.*on the boundary of the parameter ball:fasterm.DataWarning")
def test_parameter_memo_never_lets_a_bad_value_through(small):
    # _check_params remembers settings found valid; the key holds every value and its
    # type, so a bad value after a good one (or a good value of the wrong type) still raises.
    from fasterm import linear_model

    X, y = small
    fe.DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    fe.DPLogisticRegression(epsilon=1, random_state=0).fit(X, y)
    assert any(key[0] is fe.DPLogisticRegression for key in linear_model._base._PLAIN_PARAMS)
    for kwargs, match in [(dict(epsilon=True), "epsilon"), (dict(epsilon=math.nan), "epsilon"),
                          (dict(epsilon=-1.0), "epsilon"), (dict(random_state=-1), "random_state"),
                          (dict(random_state=1.5), "random_state"), (dict(max_steps=2.0), "max_steps")]:
        with pytest.raises((ValueError, TypeError), match=match):
            fe.DPLogisticRegression(**kwargs).fit(X, y)
    est = fe.DPLogisticRegression(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="delta"):
        est.set_params(delta=2.0).fit(X, y)  # a known class, a new value
    with pytest.raises(ValueError, match="delta=0"):  # the rules linking parameters run every time
        fe.DPLogisticRegression(delta=0.0, solver="noisy_pgd", noise="gaussian").fit(X, y)
    # unhashable parameters take scikit-learn's validation, and work
    m = fe.DPLogisticRegression(classes=[0, 1], random_state=0).fit(X, y)
    np.testing.assert_array_equal(m.classes_, [0, 1])
    size = len(linear_model._base._PLAIN_PARAMS)
    try:  # the memo is bounded
        linear_model._base._PLAIN_PARAMS_MAX, before = size + 1, linear_model._base._PLAIN_PARAMS_MAX
        for eps in (0.5, 0.25, 0.125):
            fe.DPLogisticRegression(epsilon=eps, random_state=0).fit(X, y)
        assert len(linear_model._base._PLAIN_PARAMS) <= size + 1
    finally:
        linear_model._base._PLAIN_PARAMS_MAX = before


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cls", ESTIMATORS)
# the regression ends on its default radius here: not what is tested
@pytest.mark.filterwarnings("ignore:.*on the boundary of the parameter ball:fasterm.DataWarning")
def test_finiteness_read_off_the_row_norms(cls, dtype, small):
    # The plain-input path checks X through its row norms: a NaN or an infinity
    # anywhere is refused (scikit-learn's message), a huge finite row whose norm
    # overflows is clipped like any other row, and the fit equals the fit of the
    # same data through scikit-learn's own check (an F-ordered copy takes that path).
    X, y = small
    X = X.astype(dtype)
    for bad in (np.nan, np.inf, -np.inf):
        Xb = X.copy()
        Xb[7, 2] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            cls(random_state=0).fit(Xb, y)
    Xh = X.copy()
    Xh[7] = np.finfo(dtype).max / 2
    a = cls(random_state=0).fit(Xh, y)
    b = cls(random_state=0).fit(np.asfortranarray(Xh), y)
    assert np.isfinite(a.coef_).all()
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(cls(random_state=0).fit(X, y).coef_,
                                  cls(random_state=0).fit(np.asfortranarray(X), y).coef_)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.bool_, np.float64])
def test_unique_labels_is_np_unique(dtype):
    from fasterm.linear_model._checks import _COUNTED_LABELS, _unique_labels

    rng = np.random.default_rng(0)
    for low, high in [(0, 2), (0, 1), (-3, 3), (5, 9), (0, _COUNTED_LABELS + 5), (120, 128)]:
        y = rng.integers(low, high, size=60, endpoint=True).astype(dtype)
        got, want = _unique_labels(y), np.unique(y)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("cls", [fe.DPLogisticRegression, fe.DPLinearSVC, fe.DPLinearRegression])
def test_unknown_argument_names_the_public_class(cls):
    with pytest.raises(TypeError, match=rf"^{cls.__name__}\.__init__\(\) got an unexpected keyword argument 'epsilom'"):
        cls(epsilom=1.0)
    # the same clear message for every estimator (issue 35: DPLinearRegression(1.0) gave Python's
    # generic "takes 1 positional argument but 2 were given")
    with pytest.raises(TypeError, match=rf"^{cls.__name__}\(\) takes keyword arguments only, got 1 positional"):
        cls(1.0)
    # the signature scikit-learn reads is the full one, and the defaults are unchanged
    est = cls(epsilon=2.0)
    assert est.get_params()["epsilon"] == 2.0
    assert set(est.get_params()) == set(fe.DPLogisticRegression().get_params()) - (
        {"classes"} if cls is fe.DPLinearRegression else set()) | (
        {"label_bound", "target_bounds"} if cls is fe.DPLinearRegression else set())


def test_bad_targets(small):
    X, y = small
    with pytest.raises(ValueError, match="classes must be a sequence of at least two distinct"):
        fe.DPLogisticRegression(classes=[1, 2, 1]).fit(X, np.arange(X.shape[0]) % 3)
    with pytest.raises(ValueError, match="at least two distinct"):
        fe.DPLogisticRegression(classes=[1]).fit(X, y)
    with pytest.raises(ValueError, match="class"):
        fe.DPLinearSVC().fit(X, np.ones(X.shape[0]))
    with pytest.raises(ValueError, match="Unknown label type"):
        fe.DPLogisticRegression().fit(X, np.linspace(0, 1, X.shape[0]))
    with pytest.raises(ValueError, match="label_bound"):
        fe.DPLinearRegression(label_bound=0.0).fit(X, y)
    with pytest.raises(ValueError, match="NaN|infinity"):
        fe.DPLogisticRegression().fit(np.full_like(X, np.nan), y)


def test_missing_labels_are_refused_naming_y(small):
    # issue 35: a None label reached the regression fit as NaN (a NaN model, or an error from the
    # solver) and crashed the classifiers inside numpy ("'<' not supported"); now one ValueError
    pd = pytest.importorskip("pandas")
    X, y = small
    yr = list(np.where(y == 1, 0.5, -0.5))
    yc = list(y)
    for labels, est in ((yr, fe.DPLinearRegression), (yc, fe.DPLogisticRegression), (yc, fe.DPLinearSVC)):
        for missing in (None, pd.NA, float("nan")):
            bad = labels[:-1] + [missing]
            forms = [np.array(bad, dtype=object), pd.Series(bad, dtype=object)]
            if missing is not None and missing is not pd.NA:
                forms = forms[:1]  # a list or Series of floats with a NaN is numeric: scikit-learn's check
            else:
                forms.append(bad)
            for form in forms:
                for kw in ({}, {"solver": "adassp"} if est is fe.DPLinearRegression else {"classes": [0, 1]}):
                    with pytest.raises(ValueError, match=r"^y holds 1 missing label\(s\)"):
                        est(random_state=0, **kw).fit(X, form)
    # a numeric y with a NaN keeps scikit-learn's message (it names y too), a clean object y still fits
    with pytest.raises(ValueError, match="y contains NaN"):
        fe.DPLinearRegression().fit(X, np.array(yr[:-1] + [np.nan]))
    assert fe.DPLinearRegression(random_state=0, solver="adassp").fit(X, np.array(yr, dtype=object)).coef_.shape \
        == (X.shape[1],)
    assert list(fe.DPLogisticRegression(random_state=0).fit(X, np.array(["a", "b"], dtype=object)[y]).classes_) \
        == ["a", "b"]


# ---------------------------------------------------------------------------
# solver="expmech": the hook into fasterm.expmech_erm
# ---------------------------------------------------------------------------
def test_expmech_refuses_delta_0_for_a_chain_and_stays_pure_when_exact(small):
    # Beyond one dimension the hit-and-run chain is approximate: no (ε, 0) claim.
    X, y = small
    with pytest.raises(ValueError, match="delta=0"):
        fe.DPLogisticRegression(solver="expmech", delta=0.0).fit(X, y)
    with pytest.raises(ValueError, match="delta=0"):
        fe.DPLinearRegression(solver="expmech", delta=0.0, fit_intercept=False).fit(X[:, :2], y)
    # one feature, no intercept: one exact line draw, pure ε, δ = 0 reported
    m = fe.DPLogisticRegression(solver="expmech", delta=0.0, fit_intercept=False, random_state=0)
    m.fit(X[:, :1], y)
    assert m.delta_ == 0.0 and m.result_.exact and m.epsilon_ == 1.0
    # δ > 0 with a chain: fitted, δ reported as nan (not certified), never 0
    m = fe.DPLogisticRegression(solver="expmech", delta=1e-5, steps=20, random_state=0).fit(X, y)
    assert math.isnan(m.delta_) and m.result_.delta is None


@pytest.mark.parametrize("cls,label_bound", [(fe.DPLogisticRegression, None), (fe.DPLinearRegression, 2.0)])
def test_expmech_hook_passes_the_public_bounds(small, monkeypatch, cls, label_bound):
    # A recording double for the call only: it checks what the estimator hands
    # to fasterm.expmech_erm and what it reads back, not any sampling.
    X, y = small
    calls = []

    def recorder(loss, X_, y_, constraint, epsilon, *, data_norm, steps, random_state, label_bound):
        calls.append(dict(loss=loss, X=X_, y=y_, constraint=constraint, epsilon=epsilon,
                          data_norm=data_norm, steps=steps, random_state=random_state,
                          label_bound=label_bound))
        return OptimizeResult(w=constraint.center, epsilon=epsilon, delta=0.0, steps=steps or 1, lr=0.0)

    monkeypatch.setattr(fe.erm.expmech, "expmech_erm", recorder)
    kw = {} if label_bound is None else dict(label_bound=label_bound)
    m = cls(solver="expmech", epsilon=0.7, radius=3.0, steps=40, random_state=5, **kw).fit(X, y)
    (call,) = calls
    assert call["epsilon"] == 0.7 and call["steps"] == 40 and call["random_state"] == 5
    assert call["data_norm"] == pytest.approx(math.hypot(1.0, 0.25))
    assert call["constraint"].radius == 3.0 and call["constraint"].dim == X.shape[1] + 1
    assert call["X"].shape == (X.shape[0], X.shape[1] + 1) and np.all(call["X"][:, -1] == 0.25)
    assert call["label_bound"] == label_bound
    if label_bound is None:
        assert set(np.unique(call["y"])) == {-1.0, 1.0}
    assert (m.epsilon_, m.delta_, m.n_iter_) == (0.7, 0.0, 40)


# ---------------------------------------------------------------------------
# Optional dependency: `import fasterm` works without scikit-learn
# ---------------------------------------------------------------------------
# (run outside the repository, so that the installed fasterm is imported)
def test_import_fasterm_does_not_import_sklearn(tmp_path):
    code = ("import sys, fasterm; assert 'sklearn' not in sys.modules; "
            "fasterm.DPLogisticRegression; assert 'sklearn' in sys.modules; "
            "assert 'DPLinearSVC' in dir(fasterm)")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_estimators_without_sklearn_say_how_to_install(tmp_path):
    code = ("import sys; sys.modules['sklearn'] = None; import fasterm\n"
            "try:\n    fasterm.DPLinearSVC\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         cwd=tmp_path)
    assert "fasterm[sklearn]" in out.stdout
    with pytest.raises(AttributeError):
        fe.no_such_name  # noqa: B018


# a fresh interpreter in which scikit-learn and scipy cannot be imported (not installed)
_NO_SKLEARN = ("import sys\n"
               "class _Missing:\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name.partition('.')[0] in ('sklearn', 'scipy'):\n"
               "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
               "sys.meta_path.insert(0, _Missing())\n"
               "import fasterm as fe\n")


@pytest.mark.parametrize("statement", [
    "fe.DPLogisticRegression", "fe.DPLinearSVC", "fe.DPLinearRegression", "fe.PrivateSearch",
    "fe.preprocessing.BoundedScaler", "fe.model_selection", "fe.linear_model.DPLogisticRegression",
    "from fasterm.preprocessing import BoundedScaler", "from fasterm.linear_model import DPLinearSVC",
    "from fasterm.model_selection import PrivateSearch", "from fasterm.linear_model import TAG_REASONS",
])
def test_without_the_sklearn_extra_the_error_names_it(tmp_path, statement):
    # issue 35: without the extra (no scikit-learn, hence no scipy) the estimators failed with
    # "No module named 'scipy'" and BoundedScaler with "No module named 'sklearn'"
    code = _NO_SKLEARN + f"try:\n    {statement}\nexcept ImportError as e:\n    print(e)\n"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert 'needs scikit-learn, which is not installed: pip install "fasterm[sklearn]"' in out.stdout, out.stdout
    # what needs no scikit-learn still works without it
    code = _NO_SKLEARN + "fe.linear_model; fe.audit; fe.noisy_gd; fe.datasets.load_breast_cancer()\n"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_estimators_with_an_old_sklearn_name_the_version(tmp_path):
    # a scikit-learn that imports but lacks what the estimators use (validate_data is 1.6+)
    fake = tmp_path / "sklearn"
    fake.mkdir()
    (fake / "__init__.py").write_text("__version__ = '1.5.0'\n")
    code = ("import fasterm\n"
            "try:\n    fasterm.DPLogisticRegression\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                             [str(tmp_path), os.path.dirname(os.path.dirname(fe.__file__))])})
    assert "needs scikit-learn >= 1.6, found 1.5.0" in out.stdout


# ---------------------------------------------------------------------------
# noisy_pgd's step rule under clipping (what clip="auto" relies on)
# ---------------------------------------------------------------------------
def _huberized_logistic(w, X, y, c):
    """Reference: the convex surrogate whose gradients are the clipped logistic ones.

    Per example, with m = y⟨w, x⟩ and r = ‖x‖: ψ'(m) = max(−σ(−m), −c/r), i.e.
    ψ = log(1 + e^{−m}) for m ≥ m* = log(r/c − 1) (where σ(−m*) = c/r) and linear with
    slope −c/r below.
    """
    m = y * (X @ w)
    r = np.linalg.norm(X, axis=1)
    out = np.logaddexp(0.0, -m)
    clipped = r > c  # σ(−m) < 1, so rows with r ≤ c are never clipped
    ms = np.log(r[clipped] / c - 1.0)
    lin = np.logaddexp(0.0, -ms) + (c / r[clipped]) * (ms - m[clipped])
    out[clipped] = np.where(m[clipped] < ms, lin, out[clipped])
    return float(out.mean())


def test_clipped_noisy_pgd_is_pgd_on_the_huberized_surrogate():
    from scipy import optimize as sopt

    rng = np.random.default_rng(3)
    n, d, c, R = 3000, 4, 0.3, 8.0
    X = rng.standard_normal((n, d)) / math.sqrt(d)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ np.array([2.0, -1.0, 0.5, 0.0]))), 1.0, -1.0)
    ball = fe.L2Ball(R, d)
    # the kernels' clipped gradient sum is the surrogate's gradient
    w0 = rng.standard_normal(d)
    num = sopt.approx_fprime(w0, lambda w: _huberized_logistic(w, X, y, c), 1e-7)
    np.testing.assert_allclose(fe.losses.Logistic().grad_sum(w0, X, y, clip=c) / n, num, atol=1e-6)
    star = sopt.minimize(lambda w: _huberized_logistic(w, X, y, c), np.zeros(d), method="Nelder-Mead",
                         options=dict(xatol=1e-10, fatol=1e-13, maxiter=20000))
    assert np.linalg.norm(star.x) < R  # the constraint is inactive: star.fun is the minimum over C
    excess, res = [], None
    for seed in range(12):
        res = fe.noisy_pgd(fe.losses.Logistic(), X, y, ball, 1.0, delta=1e-6, noise="gaussian",
                           data_norm=1.0, clip=c, random_state=seed)
        excess.append(_huberized_logistic(res.w, X, y, c) - star.fun)
    # the default η is Theorem 2's for G = c, and the reported bound is the surrogate's
    g_eff = math.sqrt(c * c + res.noise_norm_sq)
    assert res.lr == pytest.approx(2 * R / (g_eff * math.sqrt(res.steps)))
    bound = res.info["surrogate_utility_bound"]
    assert bound == pytest.approx(2 * R * g_eff / math.sqrt(res.steps))
    assert res.utility_bound is None  # not a bound for the unclipped logistic objective
    assert -1e-9 <= np.mean(excess) <= bound


# a few of the Gaussian rows lie beyond data_norm: not what is tested here
@pytest.mark.filterwarnings("ignore:.*rows .* have a norm above data_norm:fasterm.DataWarning")
def test_declared_classes_release_nothing_about_the_label_set():
    # With classes declared, a y holding one label, or extra labels, fits
    # without error and maps labels record by record (positive vs the rest).
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3)) / 3
    y = np.where(X[:, 0] > 0, 1, 0)
    est = fe.DPLogisticRegression(random_state=0, classes=(0, 1)).fit(X, y)
    np.testing.assert_array_equal(est.classes_, [0, 1])
    one = fe.DPLogisticRegression(random_state=0, classes=(0, 1)).fit(X, np.zeros(200, int))
    assert one.classes_.tolist() == [0, 1]
    # A label outside the declared set is refused (like a NaN), never merged into classes[0];
    # the message gives the count, not the value.
    three = np.where(y == 0, np.where(X[:, 1] > 0, 0, 7), 1)
    with pytest.raises(ValueError, match="not in the declared classes") as err:
        fe.DPLogisticRegression(random_state=3, classes=(0, 1)).fit(X, three)
    assert f"{int(np.sum(three == 7))} of 200 labels" in str(err.value) and "7," not in str(err.value)
    with pytest.raises(ValueError, match="classes"):
        fe.DPLogisticRegression(classes=(1, 1)).fit(X, y)
    # without declared classes, the error does not quote the label value
    with pytest.raises(ValueError) as err:
        fe.DPLogisticRegression().fit(X, np.full(200, 12345))
    assert "12345" not in str(err.value)


def test_expmech_method_end_to_end():
    # The exponential-mechanism path (hit-and-run, pure ε): beats chance clearly on
    # the breast-cancer data at ε = 1 and reports (ε, 0) spent.
    X, y = load_breast_cancer(scaled=True)
    accs = []
    for s in range(3):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=s)
        est = fe.DPLogisticRegression(solver="expmech", epsilon=1.0, random_state=s).fit(Xtr, ytr)
        # an approximate sampler: no δ is certified (not even the 1e-5 asked for)
        assert est.epsilon_ == 1.0 and math.isnan(est.delta_) and est.result_.delta is None
        accs.append(est.score(Xte, yte))
    assert np.mean(accs) > 0.7  # majority class is 0.63; measured 0.79 over 5 splits
    a = fe.DPLinearSVC(solver="expmech", epsilon=2.0, random_state=4).fit(X[:200], y[:200])
    b = fe.DPLinearSVC(solver="expmech", epsilon=2.0, random_state=4).fit(X[:200], y[:200])
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_gd_plan_memo_is_keyed_by_the_dimension():
    # Same n, ε, bounds and budget, d = 30 and d = 4: E‖h‖² = dσ² differs and with it the
    # momentum (ν ≈ 0.62 against 0.25 at T = 20), so the plan of one must not serve the other.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 30)) / 8.0
    y = (X[:, 0] + 0.1 * rng.standard_normal(300) > 0).astype(int)
    _linear._GD_PLANS.clear()
    fresh = fe.DPLogisticRegression(random_state=0).fit(X[:, :4], y)
    _linear._GD_PLANS.clear()
    wide = fe.DPLogisticRegression(random_state=0).fit(X, y)
    assert not wide.result_.info["accelerate"]
    again = fe.DPLogisticRegression(random_state=0).fit(X[:, :4], y)
    assert fresh.result_.info["accelerate"] and again.result_.info["accelerate"]
    np.testing.assert_array_equal(again.coef_, fresh.coef_)
