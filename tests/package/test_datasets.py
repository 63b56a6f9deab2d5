"""The shipped breast-cancer data, the public-bounds scaling and the numpy-only splitter."""

import math
from importlib import resources

import numpy as np
import pytest

from fasterm import datasets as D


def test_data_file_ships_inside_the_package():
    ref = resources.files("fasterm").joinpath("data", "breast_cancer.csv.gz")
    assert ref.is_file()
    assert resources.files("fasterm").joinpath("data", "README.md").is_file()  # licence, citation


def test_load_breast_cancer_shape_and_labels():
    X, y = D.load_breast_cancer()
    assert X.shape == (569, 30) and X.dtype == np.float64 and X.flags.c_contiguous
    assert y.shape == (569,) and y.dtype == np.int64
    assert np.bincount(y).tolist() == [212, 357]  # 0 = malignant, 1 = benign
    assert D.TARGET_NAMES == ("malignant", "benign")
    assert len(D.FEATURE_NAMES) == 30 and D.FEATURE_NAMES[0] == "mean radius"
    # first record of the UCI file (id 842302, malignant)
    assert X[0, :4].tolist() == [17.99, 10.38, 122.8, 1001.0] and y[0] == 0
    assert np.isfinite(X).all()


def test_shipped_copy_equals_scikit_learns():
    datasets = pytest.importorskip("sklearn.datasets")
    bunch = datasets.load_breast_cancer()
    X, y = D.load_breast_cancer()
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(y, bunch.target)
    assert D.FEATURE_NAMES == tuple(str(n) for n in bunch.feature_names)
    assert D.TARGET_NAMES == tuple(str(n) for n in bunch.target_names)


def test_feature_bounds_are_the_published_ranges():
    low, high = D.FEATURE_BOUNDS
    assert low.shape == high.shape == (30,) and np.all(low < high)
    named = dict(zip(D.FEATURE_NAMES, zip(low, high)))
    assert named["mean area"] == (143.5, 2501.0)
    assert named["worst concavity"] == (0.0, 1.252)
    assert named["fractal dimension error"] == (0.001, 0.03)
    # The published table is rounded: the data stray outside it only by rounding.
    X, _ = D.load_breast_cancer()
    width = high - low
    assert np.all(X >= low - 0.05 * width) and np.all(X <= high + 0.05 * width)


def test_published_ranges_match_scikit_learns_description():
    datasets = pytest.importorskip("sklearn.datasets")
    descr = datasets.load_breast_cancer().DESCR
    low, high = D.FEATURE_BOUNDS
    for name, lo, hi in zip(D.FEATURE_NAMES, low, high):
        # DESCR names "mean radius" "radius (mean):", "radius error" "radius (standard error):"
        base, kind = (name[5:], "mean") if name.startswith("mean ") else (
            (name[6:], "worst") if name.startswith("worst ") else (name[:-6], "standard error"))
        line = next(ln for ln in descr.splitlines() if ln.startswith(f"{base} ({kind}):"))
        assert [float(v) for v in line.split(":")[1].split()] == [lo, hi]


def _reference_scale(X, low, high):
    d = X.shape[1]
    out = np.empty_like(X, dtype=float)
    for i in range(X.shape[0]):
        for j in range(d):
            u = min(max((X[i, j] - low[j]) / (high[j] - low[j]), 0.0), 1.0)
            out[i, j] = (u - 0.5) / (math.sqrt(d) / 2)
    return out


def test_scaled_rows_lie_in_the_unit_ball():
    X, y = D.load_breast_cancer()
    Xs, ys = D.load_breast_cancer(scaled=True)
    np.testing.assert_array_equal(ys, y)
    np.testing.assert_allclose(Xs, _reference_scale(X, *D.FEATURE_BOUNDS), rtol=1e-14, atol=1e-15)
    assert np.linalg.norm(Xs, axis=1).max() <= 1.0
    assert np.abs(Xs).max() <= 1 / math.sqrt(30) * (1 + 1e-15)


def test_scale_to_unit_ball_clips_and_is_row_by_row():
    low, high = np.zeros(4), np.array([1.0, 2.0, 4.0, 8.0])
    X = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 4.0, 8.0], [-5.0, 9.0, 2.0, 4.0], [0.5, 1.0, 2.0, 4.0]])
    S = D.scale_to_unit_ball(X, low, high)
    np.testing.assert_allclose(np.linalg.norm(S[:2], axis=1), 1.0)  # corners: norm exactly 1
    np.testing.assert_allclose(S[2], [-0.5, 0.5, 0.0, 0.0])  # out-of-range values clipped
    np.testing.assert_allclose(S[3], 0.0)  # the box centre maps to 0
    for i in range(4):  # one record's scaled value never depends on another's
        np.testing.assert_array_equal(D.scale_to_unit_ball(X[i:i + 1], low, high)[0], S[i])
    with pytest.raises(ValueError, match="low must be < high"):
        D.scale_to_unit_ball(X, high, low)
    with pytest.raises(ValueError, match="low"):
        D.scale_to_unit_ball(X, np.zeros(3), high)
    with pytest.raises(ValueError, match="X"):
        D.scale_to_unit_ball(np.array([np.nan, 1.0, 1.0, 1.0])[None], low, high)


def test_train_test_split():
    X, y = D.load_breast_cancer()
    Xtr, Xte, ytr, yte = D.train_test_split(X, y, 0.3, random_state=4)
    assert Xte.shape == (171, 30) and Xtr.shape == (398, 30) and ytr.shape == (398,)
    rows = np.concatenate([Xtr, Xte])
    assert sorted(map(tuple, rows)) == sorted(map(tuple, X))  # a partition of the rows
    again = D.train_test_split(X, y, 0.3, random_state=4)
    for a, b in zip((Xtr, Xte, ytr, yte), again):
        np.testing.assert_array_equal(a, b)
    other = D.train_test_split(X, y, 0.3, random_state=5)
    assert not np.array_equal(other[1], Xte)
    assert D.train_test_split(X[:3], y[:3], 0.01, random_state=0)[1].shape[0] == 1
    with pytest.raises(ValueError, match="test_size"):
        D.train_test_split(X, y, 1.0)
    with pytest.raises(ValueError, match="y"):
        D.train_test_split(X, y[:-1])
