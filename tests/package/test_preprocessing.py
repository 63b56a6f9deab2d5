"""fasterm.preprocessing.BoundedScaler: the declared-bounds map, and that its fit learns nothing."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")

from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

import fasterm as fe  # noqa: E402
from fasterm.linear_model import _bounds  # noqa: E402
from fasterm.datasets import FEATURE_BOUNDS, FEATURE_NAMES, load_breast_cancer, scale_to_unit_ball  # noqa: E402
from fasterm.preprocessing import BoundedScaler  # noqa: E402


def _slow_map(X, low, high):
    """The map written out element by element in Python floats (the reference)."""
    n, d = X.shape
    out = np.empty((n, d))
    for i in range(n):
        for j in range(d):
            u = (float(X[i, j]) - float(low[j])) / (float(high[j]) - float(low[j]))
            u = min(max(u, 0.0), 1.0)
            out[i, j] = (u - 0.5) / (math.sqrt(d) / 2.0)
    return out


def _raw(n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(0.0, 3.0, (n, d)) * np.logspace(-2, 3, d)
    low = -5.0 * np.logspace(-2, 3, d)
    high = 4.0 * np.logspace(-2, 3, d)
    return X, low, high


def test_map_matches_the_slow_reference_and_keeps_dtype():
    X, low, high = _raw()
    ref = _slow_map(X, low, high)
    got = BoundedScaler((low, high)).fit_transform(X)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, ref)  # same operations, same order: the same bits
    assert np.all(np.linalg.norm(got, axis=1) <= 1.0 + 1e-12)
    assert np.any(np.abs(got) == 1 / (math.sqrt(5) / 2) / 2)  # some values were clipped to the box
    X32 = X.astype(np.float32)
    got32 = BoundedScaler((low, high)).fit_transform(X32)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, _slow_map(X32, low, high), atol=1e-6)
    # the input is not modified, and the output is a new array
    X_copy = X.copy()
    out = BoundedScaler((low, high)).fit(X).transform(X)
    np.testing.assert_array_equal(X, X_copy)
    assert not np.shares_memory(out, X)


def test_same_bits_as_scale_to_unit_ball_and_the_shipped_scaled_data():
    X, _ = load_breast_cancer()
    Xs, _ = load_breast_cancer(scaled=True)
    np.testing.assert_array_equal(BoundedScaler(FEATURE_BOUNDS).fit_transform(X), Xs)
    np.testing.assert_array_equal(_bounds.map_rows(X, *FEATURE_BOUNDS), scale_to_unit_ball(X, *FEATURE_BOUNDS))


def test_scalar_bounds_broadcast():
    X, _, _ = _raw(d=3)
    a = BoundedScaler((-10.0, 10.0)).fit_transform(X)
    b = BoundedScaler(([-10.0] * 3, [10.0] * 3)).fit_transform(X)
    np.testing.assert_array_equal(a, b)


def test_fit_learns_nothing_from_values():
    X1, low, high = _raw(seed=1)
    X2, _, _ = _raw(seed=2)
    X2[0] = 1e30  # wildly different values, same shape
    a = BoundedScaler((low, high)).fit(X1)
    b = BoundedScaler((low, high)).fit(X2)
    assert sorted(vars(a)) == sorted(vars(b)) == ["bounds", "bounds_", "fill_value", "n_features_in_"]
    for k in vars(a):
        va, vb = getattr(a, k), getattr(b, k)
        if k == "bounds_":
            for x, y in zip(va, vb):
                np.testing.assert_array_equal(x, y)
        elif k not in ("bounds", "fill_value"):
            assert va == vb
    # and a transform does not depend on the rows it was fitted on
    np.testing.assert_array_equal(a.transform(X2[1:]), b.transform(X2[1:]))


def test_dataframe_dict_bounds_feature_names_and_pandas_output():
    X, _ = load_breast_cancer()
    df = pd.DataFrame(X, columns=FEATURE_NAMES)
    as_dict = {name: (lo, hi) for name, lo, hi in zip(FEATURE_NAMES, *FEATURE_BOUNDS)}
    shuffled = dict(reversed(list(as_dict.items())))  # dict order does not matter, columns do
    s = BoundedScaler(shuffled).fit(df)
    np.testing.assert_array_equal(s.transform(df), load_breast_cancer(scaled=True)[0])
    assert list(s.get_feature_names_out()) == list(FEATURE_NAMES)
    out = BoundedScaler(as_dict).set_output(transform="pandas").fit_transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(FEATURE_NAMES)
    with pytest.raises(ValueError, match="bounds has no .* for column"):
        BoundedScaler({k: v for k, v in as_dict.items() if k != "mean radius"}).fit(df)
    with pytest.raises(ValueError, match="bounds names column"):
        BoundedScaler({**as_dict, "colour": (0, 1)}).fit(df)
    with pytest.raises(ValueError, match="bounds given by column name"):
        BoundedScaler(as_dict).fit(X)


@pytest.mark.parametrize("bounds, exc, words", [
    ((1.0, 1.0), ValueError, "low < high"),
    ((2.0, 1.0), ValueError, "low < high"),
    ((0.0, np.nan), ValueError, "finite"),
    ((-np.inf, 1.0), ValueError, "finite"),
    (([0.0, 0.0], [1.0, 1.0]), ValueError, "one number per feature"),
    (("a", "b"), TypeError, "numbers"),
    ((0.0, 1.0, 2.0), ValueError, "pair"),
    ({"x0": (0.0,)}, ValueError, "bounds"),
])
def test_bad_bounds_raise_naming_the_parameter(bounds, exc, words):
    X = np.zeros((4, 3))
    with pytest.raises(exc, match=words) as err:
        BoundedScaler(bounds).fit(X)
    assert "bounds" in str(err.value)


# scikit-learn skips its array API check unless SCIPY_ARRAY_API is set, and says so
@pytest.mark.filterwarnings("ignore:.*check_array_api_input:sklearn.exceptions.SkipTestWarning")
def test_check_estimator():
    check_estimator(BoundedScaler())


def test_column_transformer_beside_a_declared_one_hot_encoder():
    X, y = load_breast_cancer()
    df = pd.DataFrame(X[:, :4], columns=FEATURE_NAMES[:4])
    df["site"] = np.array(["a", "b", "c"])[np.arange(len(df)) % 3]
    df["grade"] = np.array(["low", "high"])[np.arange(len(df)) % 2]
    k = 2
    bounds = (FEATURE_BOUNDS[0][:4], FEATURE_BOUNDS[1][:4])
    enc = OneHotEncoder(categories=[["a", "b", "c"], ["low", "high"]], sparse_output=False)
    ct = ColumnTransformer([("num", BoundedScaler(bounds), list(FEATURE_NAMES[:4])), ("cat", enc, ["site", "grade"])])
    Z = ct.fit_transform(df)
    norms = np.linalg.norm(Z, axis=1)
    assert np.all(norms <= math.sqrt(1 + k) + 1e-12)  # the documented bound ‖x‖² ≤ 1 + k
    assert norms.max() > 1.0  # and the categories do push rows beyond 1
    # transformer_weights {num: √(1/2), cat: √(1/(2k))} keep rows in the unit ball
    ct_w = ColumnTransformer([("num", BoundedScaler(bounds), list(FEATURE_NAMES[:4])), ("cat", enc, ["site", "grade"])],
                             transformer_weights={"num": math.sqrt(0.5), "cat": math.sqrt(0.5 / k)})
    assert np.all(np.linalg.norm(ct_w.fit_transform(df), axis=1) <= 1.0 + 1e-12)
    names = list(ct.get_feature_names_out())
    assert names[:2] == ["num__mean radius", "num__mean texture"] and "cat__site_a" in names
    model = make_pipeline(ct, fe.DPLogisticRegression(data_norm=math.sqrt(1 + k), random_state=0)).fit(df, y)
    assert model.predict(df).shape == (len(df),)


def test_column_transformer_set_output_pandas_and_dict_bounds_feed_the_estimator():
    # issue 28 item 2: BoundedScaler with dict bounds beside a declared OneHotEncoder in a
    # ColumnTransformer with set_output(transform="pandas"): the estimator sees the same numbers as
    # with numpy output (bit for bit), learns the output's column names, and predict-time rows (a
    # shuffled frame) are mapped as the training rows were
    X, y = load_breast_cancer()
    cols = list(FEATURE_NAMES[:5])
    df = pd.DataFrame(X[:, :5], columns=cols)
    df["site"] = np.array(["a", "b", "c"])[np.arange(len(df)) % 3]
    bounds = {c: (lo, hi) for c, lo, hi in zip(cols, FEATURE_BOUNDS[0][:5], FEATURE_BOUNDS[1][:5])}

    def prep():
        return ColumnTransformer([("num", BoundedScaler(bounds), cols),
                                  ("cat", OneHotEncoder(categories=[["a", "b", "c"]], sparse_output=False), ["site"])],
                                 sparse_threshold=0)

    Z = prep().set_output(transform="pandas").fit_transform(df)
    assert isinstance(Z, pd.DataFrame) and list(Z.columns)[:2] == ["num__mean radius", "num__mean texture"]
    ref_num = scale_to_unit_ball(X[:, :5], FEATURE_BOUNDS[0][:5], FEATURE_BOUNDS[1][:5])
    np.testing.assert_array_equal(Z.to_numpy()[:, :5], ref_num)
    np.testing.assert_array_equal(Z.to_numpy()[:, 5:], np.eye(3)[np.arange(len(df)) % 3])
    est = dict(data_norm=math.sqrt(2), random_state=4)
    a = make_pipeline(prep().set_output(transform="pandas"), fe.DPLogisticRegression(**est)).fit(df, y)
    b = fe.DPLogisticRegression(**est).fit(np.c_[ref_num, np.eye(3)[np.arange(len(df)) % 3]], y)
    np.testing.assert_array_equal(a[-1].coef_, b.coef_)
    assert list(a[-1].feature_names_in_) == list(Z.columns)
    perm = np.random.default_rng(0).permutation(len(df))
    np.testing.assert_array_equal(a.predict(df.iloc[perm]), b.predict(Z.to_numpy()[perm]))
    # the whole pipeline's set_output gives the same model
    c = make_pipeline(prep(), fe.DPLogisticRegression(**est)).set_output(transform="pandas").fit(df, y)
    np.testing.assert_array_equal(c[-1].coef_, b.coef_)


# ---------------------------------------------------------------------------
# missing values (issue 35, item 10) and inverse_transform (item 14)
# ---------------------------------------------------------------------------
def _with_nan(seed=3):
    X, low, high = _raw(n=40, d=4, seed=seed)
    X[[1, 5, 9], 0] = np.nan
    X[[2, 5], 3] = np.nan
    return X, low, high


def test_nan_is_refused_naming_the_column_and_fill_value():
    X, low, high = _with_nan()
    for call in (lambda s: s.fit(X), lambda s: s.fit(np.nan_to_num(X)).transform(X)):
        with pytest.raises(ValueError, match=r"NaN \(missing values\) in column\(s\) 0, 3: declare a public fill_value"):
            call(BoundedScaler((low, high)))
    df = pd.DataFrame(X, columns=["age", "bp", "chol", "bmi"])
    with pytest.raises(ValueError, match=r"column\(s\) 'bmi'"):  # 'age' has a fill, 'bmi' none
        BoundedScaler(dict(zip(df.columns, zip(low, high))), fill_value={"age": 40.0}).fit(df)
    # an infinity is never a missing value
    X_inf = np.nan_to_num(X)
    X_inf[0, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        BoundedScaler((low, high), fill_value=0.0).fit(X_inf)


def test_fill_value_is_the_declared_constant_then_the_map():
    X, low, high = _with_nan()
    fill = np.array([1.5, -2.0, 0.25, 7.0])
    by_hand = np.where(np.isnan(X), fill, X)
    for dtype in (np.float64, np.float32):
        Xt = X.astype(dtype)
        got = BoundedScaler((low, high), fill_value=list(fill)).fit_transform(Xt)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, BoundedScaler((low, high)).fit_transform(by_hand.astype(dtype)))
    # a scalar for every column, and a dict by column name on a DataFrame
    np.testing.assert_array_equal(BoundedScaler((low, high), fill_value=0.5).fit_transform(X),
                                  _slow_map(np.where(np.isnan(X), 0.5, X), low, high))
    cols = ["age", "bp", "chol", "bmi"]
    df = pd.DataFrame(X, columns=cols)
    s = BoundedScaler(dict(zip(cols, zip(low, high))), fill_value={"bmi": 7.0, "age": 1.5}).fit(df)
    np.testing.assert_array_equal(s.transform(df), _slow_map(np.where(np.isnan(X), fill, X), low, high))
    # the fit learns nothing from values: where the NaN are, or how many, changes no attribute
    a = BoundedScaler((low, high), fill_value=0.5).fit(X)
    b = BoundedScaler((low, high), fill_value=0.5).fit(np.nan_to_num(_with_nan(seed=4)[0]) * 1e6)
    assert sorted(vars(a)) == sorted(vars(b)) == ["bounds", "bounds_", "fill_value", "n_features_in_"]
    for x, y in zip(a.bounds_, b.bounds_):
        np.testing.assert_array_equal(x, y)
    # and the input is left as it was
    X_copy = X.copy()
    a.transform(X)
    np.testing.assert_array_equal(X, X_copy)


@pytest.mark.parametrize("fill, exc, words", [
    (np.nan, ValueError, "finite"), ([0.0, np.inf, 0.0, 0.0], ValueError, "finite"),
    ([0.0, 1.0], ValueError, "one number per feature"), (["a", "b", "c", "d"], ValueError, "numbers"),
    ({"x0": 1.0}, ValueError, "column name"), ("zero", ValueError, "fill_value"),
])
def test_bad_fill_value_raises_naming_the_parameter(fill, exc, words):
    X, low, high = _with_nan()
    with pytest.raises(exc, match=words) as err:
        BoundedScaler((low, high), fill_value=fill).fit(X)
    assert "fill_value" in str(err.value)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    with pytest.raises(ValueError, match=r"fill_value names column\(s\) \['e'\]"):
        BoundedScaler((low, high), fill_value={"a": 1.0, "e": 2.0}).fit(df)


def test_check_estimator_with_a_fill():
    check_estimator(BoundedScaler(fill_value=0.5))


def test_inverse_transform_undoes_the_map_inside_the_bounds():
    X, low, high = _raw(n=200, d=5, seed=7)
    inside = np.clip(X, low, high)
    for dtype, tol in ((np.float64, 1e-13), (np.float32, 1e-6)):
        s = BoundedScaler((low, high)).fit(inside.astype(dtype))
        back = s.inverse_transform(s.transform(inside.astype(dtype)))
        assert back.dtype == dtype
        # relative to the width of each feature's range (the map's resolution)
        assert np.max(np.abs(back - inside) / (high - low)) < tol
    # clipped values come back as the bound they were clipped to (not restored), fills as the fill
    s = BoundedScaler((low, high)).fit(X)
    np.testing.assert_allclose(s.inverse_transform(s.transform(X)), inside, rtol=1e-13, atol=1e-12 * np.max(high - low))
    Xn, low4, high4 = _with_nan()
    s = BoundedScaler((low4, high4), fill_value=0.01).fit(Xn)  # inside every feature's range
    back = s.inverse_transform(s.transform(Xn))
    np.testing.assert_allclose(back[np.isnan(Xn)], 0.01, rtol=1e-10)
    # the formula, written out: x_j = low_j + (z_j·√d/2 + 1/2)·(high_j − low_j)
    z = np.random.default_rng(0).uniform(-1, 1, (6, 5)) / math.sqrt(5)
    ref = np.array([[low[j] + (z[i, j] * math.sqrt(5) / 2 + 0.5) * (high[j] - low[j]) for j in range(5)]
                    for i in range(6)])
    np.testing.assert_array_equal(BoundedScaler((low, high)).fit(X).inverse_transform(z), ref)
    with pytest.raises(ValueError, match="expecting 5 features"):
        BoundedScaler((low, high)).fit(X).inverse_transform(z[:, :3])


def test_check_pipeline_names_the_steps_that_learn_from_the_rows():
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    from fasterm.model_selection import check_pipeline

    est = fe.DPLinearRegression()
    leaky = make_pipeline(SimpleImputer(strategy="median"), BoundedScaler((0, 1)), est)
    with pytest.warns(fe.PrivacyWarning, match=r"'simpleimputer' \(SimpleImputer\) may learn from the data"):
        assert check_pipeline(leaky) == ["simpleimputer"]
    nested = Pipeline([("prep", ColumnTransformer([("num", StandardScaler(), [0])], sparse_threshold=0)),
                       ("fn", FunctionTransformer()), ("model", est)])
    with pytest.warns(fe.PrivacyWarning, match=r"'prep' \(ColumnTransformer\)"):
        assert check_pipeline(nested) == ["prep"]
    # the documented recipe learns nothing: no warning, fitted or not
    X, low, high = _with_nan()
    safe = make_pipeline(BoundedScaler((low, high), fill_value=0.0), fe.DPLinearRegression(random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", fe.PrivacyWarning)
        assert check_pipeline(safe) == []
        safe.fit(X, np.zeros(X.shape[0]))
        assert check_pipeline(safe) == [] and check_pipeline(est) == []
        assert check_pipeline(make_pipeline(BoundedScaler((0, 1)), fe.DPLogisticRegression(bounds="private"))) == []
    with pytest.raises(TypeError, match="Pipeline ending in one"):
        check_pipeline(make_pipeline(BoundedScaler((0, 1))))


def test_a_missing_category_is_all_zeros_unless_declared():
    # what docs/getting_started.rst ("Missing values") says of scikit-learn's OneHotEncoder
    df = pd.DataFrame({"smoker": ["never", "current", np.nan, None, "former"]})
    cats = ["never", "former", "current"]
    zeros = OneHotEncoder(categories=[cats], handle_unknown="ignore", sparse_output=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # silently: no warning either
        Z = zeros.fit_transform(df)
    np.testing.assert_array_equal(Z[2:4], 0.0)
    with pytest.raises(ValueError, match="unknown categories"):
        OneHotEncoder(categories=[cats], handle_unknown="error").fit(df)
    own = OneHotEncoder(categories=[cats + [np.nan]], sparse_output=False).fit_transform(df)
    np.testing.assert_array_equal(own[:, 3], [0, 0, 1, 1, 0])
    # the declared-NaN encoder learns nothing: PrivateSearch and check_pipeline accept it
    from fasterm.model_selection import check_pipeline

    with warnings.catch_warnings():
        warnings.simplefilter("error", fe.PrivacyWarning)
        assert check_pipeline(make_pipeline(OneHotEncoder(categories=[cats + [np.nan]]), fe.DPLogisticRegression())) == []
