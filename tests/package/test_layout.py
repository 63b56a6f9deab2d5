"""The tests are grouped by wing: a change to ``fasterm/<wing>/`` names its tests in ``tests/<wing>/``.

``tests/package/`` holds the whole-package checks (imports, packaging, docs, the release surface,
hostile input) and the top-level modules' tests (model_selection, preprocessing, datasets, the
command line); ``tests/audit/`` the empirical privacy audits (``fasterm.audit``).
"""
from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
WINGS = {"accounting", "mechanisms", "erm", "linear_model", "learning", "audit", "package"}


def test_no_test_module_outside_a_wing_folder():
    loose = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert loose == [], f"test modules at tests/ top level (move them into tests/<wing>/): {loose}"


def test_every_test_folder_is_a_wing():
    folders = {p.parent.name for p in TESTS.glob("*/test_*.py")}
    assert folders <= WINGS, f"test folders that are no wing: {sorted(folders - WINGS)}"
    assert {"accounting", "mechanisms", "erm", "linear_model", "learning"} <= folders
