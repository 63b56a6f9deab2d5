"""The fit-hash tool (tests/hashes/make.py) on a handful of configurations.

The full list takes minutes and is made by hand before and after a refactor
(docs/testing.rst, "Fit hashes"); here: a run is reproducible, a changed
seed, a changed value and a changed dtype are detected, ``--check`` exits 1
naming the configurations, ``--fields`` names the attribute that changed, and
the grid covers every estimator × solver.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")

HASHES = Path(__file__).resolve().parents[1] / "hashes"


def _load_make():
    spec = importlib.util.spec_from_file_location("fit_hash_make", HASHES / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make = _load_make()
configs = make.configs  # tests/hashes/configs.py, as make.py loaded it

#: A few fast configurations: estimators (binary, K = 3, declared classes, regression),
#: objective perturbation, AdaSSP, a functional solver, and a refused combination.
SAMPLE = (
    "DPLogisticRegression solver=auto noise=- cal=- float64 dense y=binary w=no delta=1e-05 n=300",
    "DPLinearSVC solver=noisy_pgd noise=laplace cal=l2 float32 csr y=multiclass w=yes delta=0 n=300",
    "DPLogisticRegression solver=objpert_threshold noise=- cal=- float64 dense y=binary-classes w=no delta=0 n=300",
    "DPLinearRegression solver=adassp noise=- cal=- float64 dense y=regression w=yes delta=1e-05 n=300",
    "fasterm.noisy_gd loss=Logistic delta=1e-05 noise=gaussian calibration=l2 float32 csr w=yes",
    "DPLinearSVC solver=noisy_sgd noise=- cal=- float32 dense y=binary w=no delta=1e-05 n=300",
)
ONLY = "^(" + "|".join(re.escape(c) for c in SAMPLE) + ")$"
RAISING = SAMPLE[-1]


@pytest.fixture(scope="module")
def sample():
    by_id = {c.id: c for c in configs.grid()}
    return [by_id[c] for c in SAMPLE]


def test_a_run_is_reproducible_and_raising_configurations_are_recorded(sample):
    first, second = make.make(sample), make.make(sample)
    assert first == second
    assert first[RAISING] == "raises ValueError"
    assert all(re.fullmatch("[0-9a-f]{64}", first[c]) for c in SAMPLE if c != RAISING)
    assert len({first[c] for c in SAMPLE}) == len(SAMPLE)


def test_check_passes_on_the_same_code_and_fails_naming_the_configurations_when_the_seed_changes(
        tmp_path, monkeypatch, capsys):
    ref = tmp_path / "ref.json"
    assert make.main(["--only", ONLY, "--out", str(ref)]) == 0
    written = json.loads(ref.read_text(encoding="utf-8"))
    assert sorted(k for k in written if k != "_env") == sorted(SAMPLE)
    assert list(written) == sorted(written)  # sorted keys
    assert make.main(["--only", ONLY, "--check", str(ref)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(configs, "SEED", configs.SEED + 1)
    assert make.main(["--only", ONLY, "--check", str(ref)]) == 1
    changed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("CHANGED")]
    # every fit that releases something changed; the refused one did not
    assert sorted(line.split(":")[0].removeprefix("CHANGED").strip() for line in changed) == sorted(SAMPLE[:-1])


def test_fields_mode_names_the_attributes_that_changed(tmp_path, monkeypatch, capsys):
    only = "^" + re.escape(SAMPLE[0]) + "$"
    ref = tmp_path / "fields.json"
    assert make.main(["--only", only, "--fields", "--out", str(ref)]) == 0
    entry = json.loads(ref.read_text(encoding="utf-8"))[SAMPLE[0]]
    assert {"coef_", "intercept_", "epsilon_", "delta_", "n_iter_", "classes_", "result_.noise_scale",
            "result_.lr", "result_.steps", "result_.w", "warnings"} <= set(entry)
    assert "random_state" not in entry and "epsilon" not in entry  # the caller's parameters
    capsys.readouterr()
    monkeypatch.setattr(configs, "SEED", configs.SEED + 1)
    assert make.main(["--only", only, "--fields", "--check", str(ref)]) == 1
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("CHANGED")]
    fields = set(line.split("fields ")[1].split(", "))
    # the noise changes the release only; the calibrated constants are public
    assert {"coef_", "intercept_", "result_.w"} <= fields
    assert not fields & {"epsilon_", "delta_", "n_iter_", "result_.noise_scale", "result_.lr", "result_.steps"}


def test_the_fingerprint_sees_one_ulp_a_dtype_a_shape_a_scalar_type_and_a_warning():
    @__import__("dataclasses").dataclass
    class Result:
        w: np.ndarray
        scale: float
        info: dict

    w = np.array([0.1, -2.5, 3.0])
    base = make.digest(make.fingerprint(Result(w, 0.5, {"steps": 20})))
    assert base == make.digest(make.fingerprint(Result(w.copy(), 0.5, {"steps": 20})))
    variants = [
        Result(np.array([0.1, -2.5, np.nextafter(3.0, 4.0)]), 0.5, {"steps": 20}),
        Result(w.astype(np.float32).astype(np.float64), 0.5, {"steps": 20}),
        Result(w.astype(np.float32), 0.5, {"steps": 20}),
        Result(w.view(np.int64), 0.5, {"steps": 20}),  # the same bytes, another dtype
        Result(w.reshape(1, 3), 0.5, {"steps": 20}),  # the same bytes, another shape
        Result(w, np.float64(0.5), {"steps": 20}),
        Result(w, 0.5, {"steps": 21}),
        Result(w, 0.5, {"steps": 20, "extra": None}),
    ]
    digests = {make.digest(make.fingerprint(v)) for v in variants}
    assert base not in digests and len(digests) == len(variants)
    leaves = make.fingerprint(Result(w, 0.5, {}))
    assert make.digest(leaves) != make.digest({**leaves, "warnings": "tuple:('DataWarning: x',)"})


def test_compare_reports_new_missing_and_changed_configurations():
    ref = {"a": "0" * 64, "b": "raises ValueError", "c": "1" * 64, "_env": {"numpy": "1"}}
    now = {"a": "0" * 64, "b": "2" * 64, "d": "3" * 64, "_env": {"numpy": "2"}}
    lines = make.compare(ref, now)
    assert [line.split()[0] for line in lines] == ["CHANGED", "MISSING", "NEW"]
    assert "raises ValueError -> 2222" in lines[0]


def test_the_grid_covers_every_estimator_and_solver():
    from fasterm.linear_model import _rules

    ids = [c.id for c in configs.grid()]
    assert len(ids) == len(set(ids))
    pairs = {tuple(i.split()[:2]) for i in ids if i.startswith("DP")}
    expected = {(name, f"solver={s}") for name in configs.ESTIMATOR_TASKS for s in _rules.SOLVERS}
    assert expected <= pairs
    for word in ("float32", "float64", "csr", "dense", "multiclass", "binary-classes", "w=yes", "delta=0",
                 "n=1500", "n=5000", "bounds=private", "bounds=(-3,5)", "secure=True", "secure_mode",
                 "PrivateSearch", "python -m fasterm", "fasterm.noisy_sgd", "fasterm.noisy_pgd",
                 "fasterm.objective_perturbation", "fasterm.expmech_erm", "fasterm.ssp.adassp"):
        assert any(word in i for i in ids), word
