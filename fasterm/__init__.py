"""fasterm: differentially private empirical risk minimization, compiled.

Public names only; see README.md and the docstrings for the theorems behind
every constant.
"""

from importlib.metadata import PackageNotFoundError, version as _version

from . import accounting, losses, mechanisms, noise
from .constraints import Box, L1Ball, L2Ball, Simplex
from .expmech import expmech_erm
from .optimize import OptimizeResult, noisy_pgd, pgd
from .univariate import mean, median, quantile

try:
    __version__ = _version("fasterm")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "Box", "L1Ball", "L2Ball", "OptimizeResult", "Simplex", "accounting", "expmech_erm", "losses", "mechanisms",
    "mean", "median", "noise", "noisy_pgd", "pgd", "quantile", "__version__",
]
