"""The integer codes shared by Python, Cython and C++ have one definition: src/cpp/fasterm/codes.hpp.

Loss kinds, feasible-set kinds, the fused loop's noise kinds and hit-and-run's
line methods and directions cross three languages.  They are written once, in
the header; ``src/fasterm/_codes.pxd`` declares them to Cython, and the
compiled modules export their values to Python.  The tests read the header,
compare the values the compiled modules export, and check that no other
source file writes one of these codes down again.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from fasterm import losses
from fasterm.erm import _hitrun, _losses, constraints

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "src" / "cpp" / "fasterm" / "codes.hpp"

pytestmark = pytest.mark.skipif(not HEADER.exists(), reason="needs the source tree")


def _enums():
    """{enum name: {enumerator: value}} parsed from the header."""
    text = HEADER.read_text(encoding="utf-8")
    out = {}
    for name, body in re.findall(r"enum (\w+) : int \{([^}]*)\}", text):
        out[name] = {k: int(v) for k, v in re.findall(r"(\w+) = (\d+)", body)}
    return out


def test_header_defines_each_code_once():
    enums = _enums()
    assert set(enums) == {"LossKind", "SetKind", "NoiseKind", "LineMethod", "Directions"}
    for values in enums.values():
        assert sorted(values.values()) == list(range(len(values)))  # dense, no duplicates


def test_compiled_modules_export_the_header_values():
    e = _enums()
    loss = e["LossKind"]
    for mod in (_losses, _hitrun):
        assert (mod.LOGISTIC, mod.HINGE, mod.SQUARED, mod.ABSOLUTE, mod.LINEAR) == (
            loss["kLogistic"], loss["kHinge"], loss["kSquared"], loss["kAbsolute"], loss["kLinear"])
    sets = e["SetKind"]
    assert (_losses.SET_L2_BALL, _losses.SET_BOX, _losses.SET_SIMPLEX, _losses.SET_L1_BALL) == (
        sets["kL2Ball"], sets["kBox"], sets["kSimplex"], sets["kL1Ball"])
    assert (_hitrun.BALL, _hitrun.BOX, _hitrun.SIMPLEX) == (sets["kL2Ball"], sets["kBox"], sets["kSimplex"])
    noise = e["NoiseKind"]
    assert (_losses.NOISE_NONE, _losses.NOISE_LAPLACE, _losses.NOISE_GAUSSIAN) == (
        noise["kNoiseNone"], noise["kNoiseLaplace"], noise["kNoiseGaussian"])
    assert (_hitrun.AUTO, _hitrun.DIRECT, _hitrun.ARS) == tuple(e["LineMethod"].values())
    assert (_hitrun.SPHERE, _hitrun.MIXED) == tuple(e["Directions"].values())


def test_python_reads_the_codes_from_the_compiled_modules():
    assert [cls._kind for cls in (losses.Logistic, losses.Hinge, losses.Squared, losses.Absolute,
                                  losses.Linear)] == [_losses.LOGISTIC, _losses.HINGE, _losses.SQUARED,
                                                      _losses.ABSOLUTE, _losses.LINEAR]
    sets = [constraints.L2Ball(1.0, 3), constraints.Box(-1.0, 1.0, 3), constraints.Simplex(3),
            constraints.L1Ball(1.0, 3)]
    assert [c._loop_spec(np.float64)[0] for c in sets] == [
        _losses.SET_L2_BALL, _losses.SET_BOX, _losses.SET_SIMPLEX, _losses.SET_L1_BALL]
    assert [c._chain_spec() and c._chain_spec()["set_kind"] for c in sets] == [
        _hitrun.BALL, _hitrun.BOX, _hitrun.SIMPLEX, None]


def test_no_other_source_writes_the_codes_again():
    names = {k for values in _enums().values() for k in values}
    python_names = {"LOGISTIC", "HINGE", "SQUARED", "ABSOLUTE", "LINEAR", "BALL", "BOX", "SIMPLEX",
                    "SET_L2_BALL", "SET_BOX", "SET_SIMPLEX", "SET_L1_BALL", "NOISE_NONE",
                    "NOISE_LAPLACE", "NOISE_GAUSSIAN", "AUTO", "DIRECT", "ARS", "SPHERE", "MIXED"}
    literal = re.compile(r"\b(\w+)\s*=\s*\d+\b")
    offenders = []
    for path in list((ROOT / "src").rglob("*.hpp")) + list((ROOT / "src").rglob("*.pyx")) + \
            list((ROOT / "src").rglob("*.pxd")) + list((ROOT / "fasterm").glob("*.py")):
        if path == HEADER:
            continue
        for m in literal.finditer(path.read_text(encoding="utf-8")):
            if m.group(1) in names or m.group(1) in python_names:
                offenders.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert offenders == []
