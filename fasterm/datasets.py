"""A real data set that ships with fasterm, and private-safe feature scaling.

:func:`load_breast_cancer` loads the Wisconsin Diagnostic Breast Cancer data
(569 tumours × 30 features, 212 malignant / 357 benign) from a compressed CSV
inside the package: numpy only, no download, no scikit-learn.  Source: UCI
Machine Learning Repository, CC BY 4.0 (Street, Wolberg & Mangasarian 1993);
see ``fasterm/data/README.md``.  The values are identical to scikit-learn's
copy (``sklearn.datasets.load_breast_cancer``), as a test checks.

Scaling without spending privacy.  A private model needs rows in a declared
ball ‖x‖₂ ≤ X; scaling with the minimum and maximum of the *training data*
(``MinMaxScaler``, ``StandardScaler``) would make the scaled data depend on
every record and void the guarantee.  :func:`scale_to_unit_ball` uses declared
per-feature bounds instead: min-max into [0, 1] with clipping, centring to
[−0.5, 0.5], and division by √d/2, after which every row has norm ≤ 1 whatever
the data.  For this data set the bounds are :data:`FEATURE_BOUNDS`, the ranges
published in the data set's description (scikit-learn's DESCR); in a real
deployment they would come from domain knowledge (instrument ranges, physical
limits), never from the private records.
"""

from __future__ import annotations

import gzip
import math
from importlib import resources

import numpy as np

from ._validation import check_array, check_random_state, check_scalar

__all__ = [
    "FEATURE_BOUNDS",
    "FEATURE_NAMES",
    "TARGET_NAMES",
    "load_breast_cancer",
    "scale_to_unit_ball",
    "train_test_split",
]

TARGET_NAMES = ("malignant", "benign")  # label 0, label 1 (scikit-learn's convention)

# Declared public bounds (min, max) of the 30 features: the "Summary Statistics"
# table of the data set's published description (scikit-learn's
# sklearn/datasets/descr/breast_cancer.rst, from the UCI documentation).  They
# are rounded; values outside them are clipped by scale_to_unit_ball.
_PUBLISHED_RANGES = (
    ("mean radius", 6.981, 28.11),
    ("mean texture", 9.71, 39.28),
    ("mean perimeter", 43.79, 188.5),
    ("mean area", 143.5, 2501.0),
    ("mean smoothness", 0.053, 0.163),
    ("mean compactness", 0.019, 0.345),
    ("mean concavity", 0.0, 0.427),
    ("mean concave points", 0.0, 0.201),
    ("mean symmetry", 0.106, 0.304),
    ("mean fractal dimension", 0.05, 0.097),
    ("radius error", 0.112, 2.873),
    ("texture error", 0.36, 4.885),
    ("perimeter error", 0.757, 21.98),
    ("area error", 6.802, 542.2),
    ("smoothness error", 0.002, 0.031),
    ("compactness error", 0.002, 0.135),
    ("concavity error", 0.0, 0.396),
    ("concave points error", 0.0, 0.053),
    ("symmetry error", 0.008, 0.079),
    ("fractal dimension error", 0.001, 0.03),
    ("worst radius", 7.93, 36.04),
    ("worst texture", 12.02, 49.54),
    ("worst perimeter", 50.41, 251.2),
    ("worst area", 185.2, 4254.0),
    ("worst smoothness", 0.071, 0.223),
    ("worst compactness", 0.027, 1.058),
    ("worst concavity", 0.0, 1.252),
    ("worst concave points", 0.0, 0.291),
    ("worst symmetry", 0.156, 0.664),
    ("worst fractal dimension", 0.055, 0.208),
)

FEATURE_NAMES = tuple(name for name, _, _ in _PUBLISHED_RANGES)
FEATURE_BOUNDS = (
    np.array([lo for _, lo, _ in _PUBLISHED_RANGES]),
    np.array([hi for _, _, hi in _PUBLISHED_RANGES]),
)


def scale_to_unit_ball(X, low, high) -> np.ndarray:
    """Rows of X mapped into the unit ball using declared per-feature bounds.

    x ↦ (clip((x − low)/(high − low), 0, 1) − 0.5) / (√d/2): each coordinate
    lands in [−1/√d, 1/√d], so ‖x‖₂ ≤ 1 for every row (equality only at a
    corner of the box).  ``low`` and ``high`` (length d, low < high) must be
    public — fixed before looking at the data — for the result to be usable by
    a private model with ``data_norm=1``.  The map is applied row by row, so
    one record's scaled value never depends on another record.  Returns a new
    float64 array.
    """
    X = check_array(X, "X", ndim=2, dtype=np.float64)
    d = X.shape[1]
    low = check_array(low, "low", ndim=1, dtype=np.float64, shape=(d,))
    high = check_array(high, "high", ndim=1, dtype=np.float64, shape=(d,))
    if not np.all(low < high):
        raise ValueError("low must be < high for every feature")
    unit = np.clip((X - low) / (high - low), 0.0, 1.0)
    return (unit - 0.5) / (math.sqrt(d) / 2.0)


def load_breast_cancer(*, scaled=False) -> tuple[np.ndarray, np.ndarray]:
    """The Wisconsin Diagnostic Breast Cancer data, shipped inside fasterm.

    Returns ``(X, y)``: X float64 of shape (569, 30) in the order of
    :data:`FEATURE_NAMES`, y int64 with 0 = malignant and 1 = benign
    (:data:`TARGET_NAMES`), as scikit-learn's ``load_breast_cancer``.

    ``scaled=True`` returns X through :func:`scale_to_unit_ball` with the
    published ranges :data:`FEATURE_BOUNDS`: every row has ‖x‖₂ ≤ 1, ready for
    a private model with ``data_norm=1``, and no statistic of the records was
    used to scale them.

    Street, W. N., Wolberg, W. H. & Mangasarian, O. L. (1993), "Nuclear feature
    extraction for breast tumor diagnosis", IS&T/SPIE Symposium on Electronic
    Imaging, Proc. SPIE 1905, 861–870.  Data: Breast Cancer Wisconsin
    (Diagnostic), UCI Machine Learning Repository (CC BY 4.0),
    https://archive.ics.uci.edu/dataset/17/breast+cancer+wisconsin+diagnostic
    """
    ref = resources.files("fasterm").joinpath("data", "breast_cancer.csv.gz")
    with ref.open("rb") as raw, gzip.open(raw, "rt", encoding="ascii") as f:
        header = f.readline().strip().split(",")
        table = np.loadtxt(f, delimiter=",", dtype=np.float64)
    if tuple(header[:-1]) != FEATURE_NAMES or header[-1] != "target" or table.shape != (569, 31):
        raise RuntimeError("fasterm/data/breast_cancer.csv.gz is damaged (unexpected header or shape)")
    X = np.ascontiguousarray(table[:, :-1])
    y = table[:, -1].astype(np.int64)
    if scaled:
        X = scale_to_unit_ball(X, *FEATURE_BOUNDS)
    return X, y


def train_test_split(X: np.typing.ArrayLike, y: np.typing.ArrayLike, test_size: float = 0.3, random_state: None | int | np.random.Generator = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A random split into train and test rows: ``X_train, X_test, y_train, y_test``.

    ``round(test_size · n)`` rows (at least 1, at most n − 1) go to the test
    set, chosen by a permutation from ``random_state`` (None, an int or a
    ``numpy.random.Generator``).  A numpy-only stand-in for scikit-learn's
    function of the same name, so that ``python -m fasterm`` needs numpy only.
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"X must be (n, d) and y (n,), got {X.shape} and {y.shape}")
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"X and y need at least 2 rows to split, got {n}")
    test_size = check_scalar(test_size, "test_size", low=0.0, high=1.0, low_inclusive=False,
                             high_inclusive=False)
    n_test = min(max(int(round(test_size * n)), 1), n - 1)
    perm = check_random_state(random_state).permutation(n)
    test, train = perm[:n_test], perm[n_test:]
    return X[train], X[test], y[train], y[test]
