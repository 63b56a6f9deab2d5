"""The installed package: its version, its build record (show_config), its files.

These tests read the *installed* fasterm (pytest runs with
--import-mode=importlib, and CI installs a wheel); they prove that the suite
does not test the source folder, and that the wheel carries what it must.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import json
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fasterm
from fasterm import _config

HERE = Path(__file__).resolve().parents[1]  # tests/
PKG = Path(fasterm.__file__).resolve().parent
# Every compiled module has a stub beside it, in its wing (erm/, mechanisms/, learning/); the
# stubs name the compiled modules, as "wing._name" (the keys of _config.modules).
COMPILED = sorted(f"{p.parent.name}.{p.stem}" for p in PKG.glob("*/_*.pyi"))


def _origin(name: str) -> Path:
    return Path(importlib.util.find_spec(f"fasterm.{name}").origin)


def _installed() -> bool:
    try:
        importlib.metadata.distribution("fasterm")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _editable() -> bool:
    if not _installed():
        return False
    text = importlib.metadata.distribution("fasterm").read_text("direct_url.json")
    return bool(text) and json.loads(text).get("dir_info", {}).get("editable", False)


# A source checkout with its compiled modules copied in, on sys.path and not pip-installed (a
# development set-up): the tests of what pip installed are skipped there; CI installs the package.
needs_install = pytest.mark.skipif(not _installed(), reason="fasterm is not pip-installed (a source tree on sys.path)")


def test_compiled_modules_present():
    # nine at the time of writing; each one is an extension module with a stub,
    # registered in the build record
    assert len(COMPILED) >= 6, COMPILED
    assert sorted(_config.modules) == COMPILED
    for m in COMPILED:
        assert _origin(m).suffix in (".so", ".pyd"), m


@pytest.mark.skipif(_editable(), reason="editable install: the package *is* the source folder")
@needs_install
def test_suite_imports_the_installed_package():
    # The source folder sits next to tests/ in a checkout; the imported package
    # must be the installed copy (site-packages), not that folder.
    source_pkg = (HERE.parent / "fasterm").resolve()
    assert not PKG.is_relative_to(source_pkg)
    site = [Path(p).resolve() for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    assert any(PKG.parent == s for s in site), (PKG, site)


@pytest.mark.skipif(_editable(), reason="editable install: the package *is* the source folder")
@needs_install
def test_installed_files():
    files = {p.relative_to(PKG).as_posix() for p in PKG.rglob("*") if p.is_file()
             and "__pycache__" not in p.parts}
    assert "py.typed" in files
    assert "_config.py" in files
    assert "data/breast_cancer.csv.gz" in files
    for m in COMPILED:
        assert _origin(m).parent == PKG / m.split(".")[0], m
    leftovers = [f for f in files if f.endswith((".pyx", ".pxd", ".hpp", ".cxx", ".cpp", ".o", ".txt", ".cmake"))]
    assert leftovers == []


@needs_install
def test_version_single_source():
    assert fasterm.__version__ == _config.version == importlib.metadata.version("fasterm")
    pyproject = HERE.parent / "pyproject.toml"
    if pyproject.exists():  # in a checkout, and in the copies CI and cibuildwheel test from
        import tomllib
        assert fasterm.__version__ == tomllib.loads(pyproject.read_text())["project"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?\w+)*", fasterm.__version__)


def test_show_config_prints_the_build_record():
    out = io.StringIO()
    fasterm.show_config(file=out)
    text = out.getvalue()
    b = _config.build
    assert f"fasterm {fasterm.__version__}" in text
    assert b["compiler"]["id"] and b["compiler"]["id"] in text
    assert re.fullmatch(r"\d+(\.\d+)+", b["compiler"]["version"])
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?\w*", b["cython"])
    assert f"built against {b['numpy']}, running {np.__version__}" in text
    assert b["python"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}")
    assert f"running {platform.python_version()}" in text
    for m in COMPILED:
        assert f"fasterm.{m}" in text
        assert " ".join(_config.modules[m]["cxx_flags"]) in text


def test_numpy_built_against_is_abi_compatible():
    built = tuple(int(x) for x in _config.build["numpy"].split(".")[:2])
    running = tuple(int(x) for x in np.__version__.split(".")[:2])
    # numpy 2.x extensions run on any numpy 2.x, not on 1.x
    assert built[0] == running[0] == 2


def test_flags_match_the_build_variant():
    debug = _config.build["fasterm_debug"]
    directives = _config.build["cython_directives"]
    for m in COMPILED:
        flags = _config.modules[m]["cxx_flags"]
        assert "-fno-math-errno" in flags, m
        assert any(f.startswith("-std=") for f in flags), m
        # the last -O wins on GCC/Clang command lines
        opt = [f for f in flags if re.fullmatch(r"-O\d", f)]
        assert opt and opt[-1] == ("-O1" if debug else "-O3"), (m, flags)
        assert "NPY_NO_DEPRECATED_API=NPY_2_0_API_VERSION" in _config.modules[m]["definitions"]
        if debug:
            # CMake's release flags define NDEBUG; the debug variant undefines it after them
            assert "-UNDEBUG" in flags and flags.index("-UNDEBUG") > flags.index("-DNDEBUG")
    assert ("boundscheck=True" in directives) == debug
    assert ("boundscheck=False" in directives) == (not debug)


def test_per_module_flags():
    mods = _config.modules
    for m in ("mechanisms._expmech", "erm._hitrun"):  # bit-identical instruction-set clones
        assert {"-fno-trapping-math", "-ffp-contract=off"} <= set(mods[m]["cxx_flags"]), m
    assert "-fno-trapping-math" in mods["learning._online"]["cxx_flags"]
    assert "-ffp-contract=off" not in mods["learning._online"]["cxx_flags"]  # FMA kept on: see CMakeLists
    for m in ("mechanisms._noise", "erm._projections", "erm._losses"):
        assert "-fno-trapping-math" not in mods[m]["cxx_flags"], m


def test_isa_dispatch_record():
    mods = _config.modules
    b = _config.build
    for m in ("mechanisms._noise", "erm._projections"):
        assert mods[m]["isa_dispatch"] == []
    gcc12_x86_linux = (b["compiler"]["id"] == "GNU" and int(b["compiler"]["version"].split(".")[0]) >= 12
                       and b["platform"] == "Linux-x86_64")
    if gcc12_x86_linux:
        assert mods["erm._losses"]["isa_dispatch"] == ["arch=x86-64-v3", "default"]
        assert mods["mechanisms._expmech"]["isa_dispatch"] == ["avx512f", "avx2", "default"]
        assert mods["erm._hitrun"]["isa_dispatch"] == ["avx2", "default"]  # AVX-512 did not pay: hitrun.hpp
        assert set(mods["learning._online"]["isa_dispatch"]) == {"default", "arch=x86-64-v3", "arch=x86-64-v4"}
    elif b["compiler"]["id"] != "GNU":
        assert all(mods[m]["isa_dispatch"] == []
                   for m in ("erm._losses", "mechanisms._expmech", "erm._hitrun", "learning._online"))


@pytest.mark.skipif(sys.platform != "linux", reason="reads the ELF .comment section GCC writes")
def test_recorded_compiler_is_the_one_that_built_the_modules():
    # GCC stamps "GCC: (...) <version>" into every object it compiles; the
    # record must name the same version (an independent check of the record).
    b = _config.build
    if b["compiler"]["id"] != "GNU":
        pytest.skip("not built with GCC")
    so = _origin("erm._losses").read_bytes()
    stamps = set(re.findall(rb"GCC: \([^)]*\) (\d+\.\d+\.\d+)", so))
    assert b["compiler"]["version"].encode() in stamps, stamps


def test_source_folder_without_compiled_modules_says_what_to_do(tmp_path):
    # Python started in a checkout's root imports the source folder fasterm/,
    # which has no compiled modules unless they were built into it: it must say
    # in one line what to do, not die as a "circular import".  The folder is
    # copied without its compiled modules (the checkout's if the tests run from
    # one, else the installed package's Python files) and imported from its parent.
    src = HERE.parent / "fasterm"
    if not (src / "__init__.py").is_file():
        src = PKG
    shutil.copytree(src, tmp_path / "fasterm",
                    ignore=lambda d, names: [n for n in names if n == "_config.py" or n == "__pycache__"
                                             or n.endswith((".so", ".pyd"))])
    for args in (["-c", "import fasterm"], ["-m", "fasterm"]):
        r = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 1, (args, r.stderr)
        assert "circular" not in r.stderr, r.stderr
        last = r.stderr.strip().splitlines()[-1]
        assert f"{tmp_path / 'fasterm'} is the source folder, without its compiled modules" in last
        assert "use the `fasterm` command" in last and "pip install" in last
        for m in COMPILED:
            assert m in last
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr  # python -m: the message alone
