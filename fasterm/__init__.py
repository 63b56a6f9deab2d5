"""fasterm: differentially private empirical risk minimization, compiled.

Public names only; see README.md and the docstrings for the theorems behind
every constant.
"""

from typing import TYPE_CHECKING, Any

from . import accounting, datasets, learning, losses, mechanisms, noise, objpert, online, secure
from .constraints import Box, L1Ball, L2Ball, Simplex
from .expmech import expmech_erm
from .objpert import objective_perturbation
from .optimize import OptimizeResult, noisy_pgd, pgd
from .solvers import noisy_gd, noisy_sgd
from .secure import secure_mode, set_secure
from .univariate import mean, median, quantile
from ._buildinfo import show_config
# Written by CMake at build time from [project] version in pyproject.toml.
from ._config import version as __version__

__all__ = [
    "Box", "DPLinearRegression", "DPLinearSVC", "DPLogisticRegression", "L1Ball", "L2Ball",
    "OptimizeResult", "Simplex", "accounting", "datasets", "expmech_erm", "learning", "losses", "mechanisms",
    "mean", "median", "noise", "noisy_gd", "noisy_pgd", "noisy_sgd", "online", "pgd", "quantile", "secure", "secure_mode",
    "set_secure", "show_config", "__version__",
]

# The scikit-learn estimators load on first use, so that `import fasterm`
# works without scikit-learn (an optional extra: fasterm[sklearn]).
_ESTIMATORS = ("DPLinearRegression", "DPLinearSVC", "DPLogisticRegression")
if TYPE_CHECKING:  # type checkers see them; at run time __getattr__ imports them
    from .linear_model import DPLinearRegression, DPLinearSVC, DPLogisticRegression


def __getattr__(name: str) -> Any:
    if name in _ESTIMATORS:
        try:
            from . import linear_model
        except ImportError as exc:
            raise ImportError(
                f"fasterm.{name} needs scikit-learn: pip install 'fasterm[sklearn]'") from exc
        return getattr(linear_model, name)
    raise AttributeError(f"module 'fasterm' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ESTIMATORS))
