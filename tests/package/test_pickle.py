"""Pickles of fitted estimators: they load and predict the same, and name only stable module paths.

A pickle stores, for every object in it, the module and name of its class;
those paths are the package's layout.  Since 0.3 (CHANGELOG.md) they are the
wings' paths (``fasterm.linear_model._estimators``, ``fasterm.erm.optimize``,
...), each importable; the flat modules of 0.1–0.2 (``fasterm.optimize``,
``fasterm.solvers``, ...) must not appear.
"""

from __future__ import annotations

import importlib
import pickle
import pickletools
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")

import fasterm as fe  # noqa: E402
from fasterm.datasets import FEATURE_BOUNDS, load_breast_cancer  # noqa: E402
from fasterm.preprocessing import BoundedScaler  # noqa: E402

#: The modules of the flat layout (0.1–0.2) that moved into wings.
FLAT = {"optimize", "solvers", "constraints", "expmech", "objpert", "ssp", "noise", "secure", "univariate",
        "_linear", "_multiclass", "_bounds", "_design", "_dask", "_engine", "_backends", "_exact",
        "_float_margin", "_losses", "_sparse", "_noise", "_online", "_hitrun", "_expmech", "_discrete",
        "_projections"}


def _globals(data: bytes) -> set[tuple[str, str]]:
    """(module, name) of every class or function a pickle refers to (protocol 2+ opcodes)."""
    out, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            out.add((strings[-2], strings[-1]))
        elif op.name == "GLOBAL":
            out.add(tuple(arg.split(" ", 1)))
    return out


def _fits():
    X, y = load_breast_cancer(scaled=True)
    Xraw, _ = load_breast_cancer()
    rng = np.random.default_rng(0)
    y3 = rng.integers(0, 3, size=X.shape[0])
    yr = np.clip(X[:, 0] - X[:, 1], -1, 1)
    return [
        ("logistic gd", fe.DPLogisticRegression(random_state=0).fit(X, y), X),
        ("logistic objpert", fe.DPLogisticRegression(delta=0.0, random_state=0).fit(X, y), X),
        ("logistic multiclass", fe.DPLogisticRegression(classes=[0, 1, 2], random_state=0).fit(X, y3), X),
        ("svc pgd", fe.DPLinearSVC(solver="noisy_pgd", random_state=0).fit(X, y), X),
        ("logistic bounds", fe.DPLogisticRegression(bounds=FEATURE_BOUNDS, random_state=0).fit(Xraw, y), Xraw),
        ("regression", fe.DPLinearRegression(random_state=0).fit(X, yr), X),
        ("regression adassp", fe.DPLinearRegression(solver="adassp", random_state=0).fit(X, yr), X),
        ("scaler", BoundedScaler(FEATURE_BOUNDS).fit(Xraw), Xraw),
    ]


@pytest.mark.parametrize("name, est, X", _fits(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_fitted_estimator_round_trips(name, est, X):
    data = pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL)
    back = pickle.loads(data)
    if hasattr(est, "predict"):
        np.testing.assert_array_equal(back.predict(X), est.predict(X))
        for attr in ("coef_", "intercept_", "epsilon_", "delta_", "n_iter_", "classes_"):
            if hasattr(est, attr):
                np.testing.assert_array_equal(getattr(back, attr), getattr(est, attr))
        a, b = back.get_params(), est.get_params()
        assert a.keys() == b.keys()
        for k in a:  # bounds=(low, high) holds arrays
            np.testing.assert_equal(a[k], b[k])
    else:
        np.testing.assert_array_equal(back.transform(X), est.transform(X))
    refs = {(m, n) for m, n in _globals(data) if m.split(".")[0] == "fasterm"}
    assert refs, "the pickle names no fasterm class: the check below would be empty"
    for module, qualname in refs:
        parts = module.split(".")
        assert len(parts) >= 2 and parts[1] not in FLAT, f"{module}.{qualname}: a flat-layout path"
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)


def test_a_pickle_loads_in_a_fresh_interpreter(tmp_path):
    # No state of this process (an imported module, a cache) helps the load.
    X, y = load_breast_cancer(scaled=True)
    est = fe.DPLogisticRegression(random_state=1).fit(X, y)
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(est))
    code = ("import pickle, sys, numpy as np; m = pickle.load(open(sys.argv[1], 'rb')); "
            "np.save(sys.argv[2], m.decision_function(np.load(sys.argv[3])))")
    np.save(tmp_path / "X.npy", X)
    subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "d.npy"), str(tmp_path / "X.npy")],
                   check=True, cwd=tmp_path)
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), est.decision_function(X))
