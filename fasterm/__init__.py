"""fasterm: differentially private empirical risk minimization, compiled.

Public names only; see README.md and the docstrings for the theorems behind
every constant.
"""

from importlib.metadata import PackageNotFoundError, version as _version

from . import accounting, datasets, learning, losses, mechanisms, noise, online, secure
from .constraints import Box, L1Ball, L2Ball, Simplex
from .expmech import expmech_erm
from .optimize import OptimizeResult, noisy_pgd, pgd
from .secure import secure_mode, set_secure
from .univariate import mean, median, quantile

try:
    __version__ = _version("fasterm")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "Box", "DPLinearRegression", "DPLinearSVC", "DPLogisticRegression", "L1Ball", "L2Ball",
    "OptimizeResult", "Simplex", "accounting", "datasets", "expmech_erm", "learning", "losses", "mechanisms",
    "mean", "median", "noise", "noisy_pgd", "online", "pgd", "quantile", "secure", "secure_mode",
    "set_secure", "__version__",
]

# The scikit-learn estimators load on first use, so that `import fasterm`
# works without scikit-learn (an optional extra: fasterm[sklearn]).
_ESTIMATORS = ("DPLinearRegression", "DPLinearSVC", "DPLogisticRegression")


def __getattr__(name):
    if name in _ESTIMATORS:
        try:
            from . import linear_model
        except ImportError as exc:
            raise ImportError(
                f"fasterm.{name} needs scikit-learn: pip install 'fasterm[sklearn]'") from exc
        return getattr(linear_model, name)
    raise AttributeError(f"module 'fasterm' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_ESTIMATORS))
