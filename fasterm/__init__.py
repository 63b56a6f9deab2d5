"""fasterm: differentially private empirical risk minimization, compiled.

Public names only; see README.md and the docstrings for the theorems behind
every constant.
"""

from importlib.metadata import PackageNotFoundError, version as _version

from . import losses, noise

try:
    __version__ = _version("fasterm")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["losses", "noise", "__version__"]
