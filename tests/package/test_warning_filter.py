"""The test configuration makes an unexpected :class:`fasterm.DataWarning` an error.

pyproject.toml's ``filterwarnings = ["error::fasterm.DataWarning"]`` must be in
force in every run (from the repository root, and from a copy of ``tests/`` and
pyproject.toml against an installed wheel): pytest drops a filter whose class
it cannot import with only a PytestConfigWarning, and then every unexpected
DataWarning would pass unseen.  docs/testing.rst, "Warnings".
"""

import warnings

import numpy as np
import pytest

import fasterm as fe


def _raw_rows():
    X = np.full((40, 3), 2.0)  # every row beyond data_norm = 1
    X[::2] *= -1.0
    return X, np.arange(40) % 2


def test_an_unexpected_data_warning_is_an_error():
    with pytest.raises(fe.DataWarning, match="planted"):
        warnings.warn("planted", fe.DataWarning)
    X, y = _raw_rows()
    with pytest.raises(fe.DataWarning, match="40 of 40 rows"):
        fe.DPLogisticRegression(random_state=0).fit(X, y)
    # other warnings keep their default action
    with pytest.warns(UserWarning, match="not data"):
        warnings.warn("not data", UserWarning)


def test_an_expected_data_warning_is_caught():
    X, y = _raw_rows()
    with pytest.warns(fe.DataWarning, match="40 of 40 rows"):
        fe.DPLogisticRegression(random_state=0).fit(X, y)


# the scoped mark of a test that fits on such rows on purpose
@pytest.mark.filterwarnings("ignore:.*have a norm above data_norm:fasterm.DataWarning")
def test_a_scoped_filter_silences_only_its_kind():
    X, y = _raw_rows()
    fe.DPLogisticRegression(random_state=0).fit(X, y)
    with pytest.raises(fe.DataWarning, match="boundary"):
        warnings.warn("on the boundary of the parameter ball radius=1", fe.DataWarning)
