"""fasterm.preprocessing.BoundedScaler: the declared-bounds map, and that its fit learns nothing."""

from __future__ import annotations

import math

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
    assert sorted(vars(a)) == sorted(vars(b)) == ["bounds", "bounds_", "n_features_in_"]
    for k in vars(a):
        va, vb = getattr(a, k), getattr(b, k)
        if k == "bounds_":
            for x, y in zip(va, vb):
                np.testing.assert_array_equal(x, y)
        elif k != "bounds":
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
