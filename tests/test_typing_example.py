"""tests/typing/api_example.py -- checked by mypy --strict in CI -- also runs."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

pytest.importorskip("sklearn")


def test_api_example_runs():
    path = Path(__file__).resolve().parent / "typing" / "api_example.py"
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
    # eps_sgd and eps_rdp are the same add/remove Rényi-DP bound, computed two ways.  (At the
    # replace-one σ, calibrated tightly by the PLD accountant, this loose add/remove bound may
    # exceed the replace-one ε = 1; the tight add/remove ε does not.)
    assert out["eps_sgd"] == pytest.approx(out["eps_rdp"], rel=1e-9)
    assert out["theta"] == pytest.approx(1.0)
