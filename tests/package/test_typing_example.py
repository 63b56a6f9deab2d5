"""tests/typing/api_example.py -- checked by mypy --strict in CI -- also runs."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

pytest.importorskip("sklearn")


def test_api_example_runs():
    path = Path(__file__).resolve().parents[1] / "typing" / "api_example.py"
    spec = importlib.util.spec_from_file_location("fasterm_api_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main()
    assert all(math.isfinite(v) for v in out.values()), out
    assert out["pgd_eps"] == pytest.approx(1.0) and out["em_eps"] == 1.0
    assert 0.0 <= out["median"] <= 100.0 and 0.0 <= out["q90"] <= 100.0
    assert out["eps_b"] == 1.0 and out["delta_b"] == 1e-6
    assert out["remaining"] == 0.5
    assert out["beta"] == 0.25 and out["gd_eps"] <= 1.0 and out["sgd_eps"] <= 1.0
    # eps_sgd: add/remove by the PLD accountant, at most the add/remove Rényi-DP bound eps_rdp
    # and below the replace-one claim (the replace-one pair dominates the add/remove pairs);
    # eps_rdp itself may exceed 1 at the tightly calibrated replace-one σ.
    assert out["eps_sgd"] <= out["eps_rdp"] and out["eps_sgd"] <= 1.0
    assert out["theta"] == pytest.approx(1.0)
