"""List and check the members of fasterm's sdist and wheel archives.

    python .ci/check_dist.py DIST_DIR

Checks every ``*.tar.gz`` (sdist) and ``*.whl`` (wheel) in DIST_DIR and prints
their members and sizes; exits non-zero with the reasons if one is wrong.

* sdist: every file the build reads (CMakeLists.txt, cmake/, the .pyx/.pxd
  sources, the C++ headers, the Python package with its stubs, py.typed and
  data, README, pyproject.toml) and no build directory or compiled file.
* wheel: the Python package, one compiled module per .pyx with its .pyi stub,
  py.typed, the data CSV, the generated _config.py -- and no C++/Cython
  sources, CMake files, tests, caches or object files.
"""

from __future__ import annotations

import re
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list[str]:
    """Compiled modules as wing/name paths, from the fasterm_add_module calls in CMakeLists.txt."""
    text = (ROOT / "CMakeLists.txt").read_text()
    return [f"{w}/{m}" for w, m in re.findall(r"^fasterm_add_module\((\w+) (\w+)\b", text, flags=re.M)]


def _tracked_sources() -> list[str]:
    """Source files the build needs, relative to the project root."""
    files = ["CMakeLists.txt", "pyproject.toml", "README.md", "cmake/fasterm_config.cmake",
             "cmake/_config.py.in", "cmake/wheel/CMakeLists.txt", "fasterm/py.typed", "fasterm/data/breast_cancer.csv.gz"]
    for pattern in ("src/fasterm/*.pxd", "src/fasterm/*/*.pyx", "src/fasterm/*/*.pxd", "src/cpp/fasterm/*.hpp",
                    "src/cpp/fasterm/*.cpp", "fasterm/*.py", "fasterm/*/*.py", "fasterm/*/*.pyi"):
        files += [p.relative_to(ROOT).as_posix() for p in sorted(ROOT.glob(pattern))]
    if (ROOT / "LICENSE").exists():
        files.append("LICENSE")
    return files


def check_sdist(path: Path) -> list[str]:
    with tarfile.open(path) as tf:
        names = [m.name for m in tf.getmembers() if m.isfile()]
        sizes = {m.name: m.size for m in tf.getmembers() if m.isfile()}
    top = names[0].split("/")[0]
    rel = {n[len(top) + 1:] for n in names}
    problems = [f"sdist lacks {f}" for f in _tracked_sources() if f not in rel]
    problems += [f"sdist holds a build leftover {f}" for f in sorted(rel)
                 if f.startswith(("build/", "dist/", "docs/_build/")) or "__pycache__" in f
                 or f.endswith((".so", ".pyd", ".o", ".pyc"))]
    if "PKG-INFO" not in rel:
        problems.append("sdist lacks PKG-INFO")
    _print(path, sizes)
    return problems


def check_wheel(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as zf:
        sizes = {i.filename: i.file_size for i in zf.infolist() if not i.is_dir()}
    names = set(sizes)
    pkg = sorted(n for n in names if n.startswith("fasterm/"))
    problems = []
    for m in _modules():
        if not any(re.fullmatch(rf"fasterm/{m}\..*(so|pyd)", n) for n in pkg):
            problems.append(f"wheel lacks the compiled module fasterm.{m.replace('/', '.')}")
        if f"fasterm/{m}.pyi" not in names:
            problems.append(f"wheel lacks the stub fasterm/{m}.pyi")
    for f in ("fasterm/py.typed", "fasterm/_config.py", "fasterm/__init__.py",
              "fasterm/data/breast_cancer.csv.gz"):
        if f not in names:
            problems.append(f"wheel lacks {f}")
    for p in [*(ROOT / "fasterm").glob("*.py"), *(ROOT / "fasterm").glob("*/*.py")]:
        rel = p.relative_to(ROOT).as_posix()
        if rel not in names:
            problems.append(f"wheel lacks {rel}")
    allowed = re.compile(r"fasterm/((\w+/)?\w+\.(py|pyi)|py\.typed|data/[\w.]+|\w+/_\w+\..*\.(so|pyd))")
    for n in pkg:
        if not allowed.fullmatch(n):
            problems.append(f"wheel holds an unexpected file {n}")
    others = [n for n in names if not n.startswith(("fasterm/", "fasterm-"))]
    problems += [f"wheel holds a file outside the package: {n}" for n in others]
    _print(path, sizes)
    return problems


def _print(path: Path, sizes: dict[str, int]) -> None:
    print(f"{path.name}: {path.stat().st_size / 1024:.0f} KiB compressed, {len(sizes)} files, "
          f"{sum(sizes.values()) / 1024:.0f} KiB uncompressed")
    for name in sorted(sizes):
        print(f"  {sizes[name]:>10}  {name}")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    dist = Path(argv[1])
    archives = sorted(dist.glob("*.tar.gz")) + sorted(dist.glob("*.whl"))
    if not archives:
        print(f"no sdist or wheel in {dist}")
        return 1
    problems = []
    for a in archives:
        problems += check_sdist(a) if a.name.endswith(".tar.gz") else check_wheel(a)
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
