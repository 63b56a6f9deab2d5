"""``fasterm.show_config()``: how the installed build was made.

The facts come from ``fasterm/_config.py``, which CMake writes while it
configures the build (``cmake/fasterm_config.cmake``): compiler, the C++ flags
of every compiled module, the instruction-set versions each one dispatches
between, build type, FASTERM_DEBUG, and the numpy / Cython / Python versions
the modules were compiled against.  Only the "running" lines are read at run
time (the numpy and Python that import the modules now).

:func:`needs_sklearn` turns the ImportError of a module that needs the
optional scikit-learn extra into one that says how to install it.
"""

from __future__ import annotations

import contextlib
import platform
import sys
from collections.abc import Iterator
from typing import Any, TextIO

import numpy as np

import fasterm._config as _config


#: The scikit-learn that the estimators, BoundedScaler and PrivateSearch need (pyproject.toml's extra).
SKLEARN_EXTRA = 'pip install "fasterm[sklearn]"'


@contextlib.contextmanager
def needs_sklearn(what: str) -> Iterator[None]:
    """Imports inside raise an ImportError that names the extra when scikit-learn (or scipy,
    which comes with it) is missing, and the version when scikit-learn is too old.

    ``what`` names the thing being loaded (``"fasterm.preprocessing"``).  Any
    other ImportError passes through unchanged; the error raised has
    ``name=None``, so an enclosing ``needs_sklearn`` passes it through too.
    """
    try:
        yield
    except ImportError as exc:
        top = (exc.name or "").partition(".")[0]
        if top not in ("sklearn", "scipy"):
            raise
        try:
            import sklearn
        except ImportError:
            raise ImportError(f"{what} needs scikit-learn, which is not installed: {SKLEARN_EXTRA}") from exc
        if top == "scipy":  # scikit-learn imports scipy itself: a broken installation
            raise ImportError(f"{what} needs scipy (a dependency of scikit-learn), which is not installed: "
                              f"{SKLEARN_EXTRA}") from exc
        raise ImportError(  # installed, but older than the estimators need
            f"{what} needs scikit-learn >= 1.6, found {getattr(sklearn, '__version__', '?')}: "
            "pip install -U 'scikit-learn>=1.6'") from exc


def build_config() -> dict[str, Any]:
    """The build record as a dict (a copy): ``version``, ``build``, ``modules``, ``running``."""
    return {
        "version": _config.version,
        "build": {k: (dict(v) if isinstance(v, dict) else v) for k, v in _config.build.items()},
        "modules": {name: dict(info) for name, info in _config.modules.items()},
        "running": {
            "numpy": np.__version__,
            "python": platform.python_version(),
            "platform": f"{platform.system()}-{platform.machine()}",
        },
    }


def show_config(file: TextIO | None = None) -> None:
    """Print how this fasterm build was made (recorded by CMake at build time).

    Parameters
    ----------
    file : text stream, optional
        Where to print; ``sys.stdout`` by default.
    """
    out = sys.stdout if file is None else file
    cfg = build_config()
    b = cfg["build"]
    run = cfg["running"]
    lines = [
        f"fasterm {cfg['version']}",
        f"  build type     : {b['build_type']}"
        f" (FASTERM_DEBUG={'ON' if b['fasterm_debug'] else 'OFF'})",
        f"  compiler       : {b['compiler']['id']} {b['compiler']['version']}"
        f" ({b['compiler']['path']})",
        f"  cmake          : {b['cmake']} ({b['generator']})",
        f"  cython         : {b['cython']}  directives: {b['cython_directives']}",
        f"  numpy          : built against {b['numpy']}, running {run['numpy']}",
        f"  python         : built for {b['python']}, running {run['python']}",
        f"  platform       : built on {b['platform']}, running {run['platform']}",
        "  modules (C++ flags; definitions; instruction-set dispatch):",
    ]
    for name, info in cfg["modules"].items():
        isa = ", ".join(info["isa_dispatch"]) or "none (one baseline version)"
        lines += [
            f"    fasterm.{name}",
            f"      flags      : {' '.join(info['cxx_flags'])}",
            f"      defines    : {' '.join(info['definitions'])}",
            f"      dispatch   : {isa}",
        ]
    print("\n".join(lines), file=out)
