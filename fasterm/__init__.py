"""fasterm: differentially private empirical risk minimization, compiled.

Public names only; see README.md and the docstrings for the theorems behind
every constant.
"""

from typing import TYPE_CHECKING, Any


def _check_built() -> None:
    """Fail in one line when this is the source folder without its compiled modules.

    Python run from the repository root (``python -m fasterm``, ``python -c``, a
    notebook) puts the root first on ``sys.path``, so it imports the source folder
    ``fasterm/`` instead of the installed package.  That folder holds no compiled
    modules unless they were built into it, and the first compiled import would
    die as a misleading "circular import".  Every compiled module has a ``.pyi``
    stub beside it (in its wing: erm/, mechanisms/, learning/), so the stubs name
    what must be importable.
    """
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))

    def built(folder: str, name: str) -> bool:
        # Asked of the import system's finders (an editable install maps
        # modules elsewhere), without importing the wing: its __init__ would
        # die on the first missing module.
        return any(getattr(f, "find_spec", None) and f.find_spec(name, [folder]) is not None for f in sys.meta_path)

    missing = [] if built(here, f"{__name__}._config") else ["_config"]
    for wing in ("erm", "mechanisms", "learning"):
        folder = os.path.join(here, wing)
        missing += [f"{wing}.{f[:-4]}" for f in sorted(os.listdir(folder))
                    if f.startswith("_") and f.endswith(".pyi") and not built(folder, f"{__name__}.{wing}.{f[:-4]}")]
    if missing:
        raise ImportError(
            f"fasterm: {here} is the source folder, without its compiled modules "
            f"({', '.join(missing)}); Python imports it instead of the installed fasterm when started "
            "in the repository root.  Run from another directory or use the `fasterm` command, or build "
            "the modules into the folder: pip install -Ceditable.mode=inplace -e .", name=__name__, path=here)


_check_built()
del _check_built

from . import accounting, datasets, learning, losses, mechanisms, online
from .erm import objpert, ssp
from .erm.constraints import Box, L1Ball, L2Ball, Simplex
from .erm.expmech import expmech_erm
from .erm.objpert import objective_perturbation
from .erm.optimize import OptimizeResult, noisy_pgd, pgd
from .erm.solvers import noisy_gd, noisy_sgd
from .mechanisms import noise, secure
from .mechanisms.secure import secure_mode, set_secure
from .mechanisms.univariate import mean, median, quantile
from ._buildinfo import show_config
from ._warnings import CostWarning, DataWarning, PrivacyWarning
# Written by CMake at build time from [project] version in pyproject.toml.
from ._config import version as __version__

__all__ = [
    "Box", "CostWarning", "DataWarning", "DPLinearRegression", "DPLinearSVC", "DPLogisticRegression", "L1Ball", "L2Ball",
    "OptimizeResult", "PrivacyWarning", "PrivateSearch", "Simplex", "accounting", "datasets", "expmech_erm", "learning", "losses", "mechanisms",
    "mean", "median", "noise", "ssp", "noisy_gd", "noisy_pgd", "noisy_sgd", "online", "pgd", "quantile", "secure", "secure_mode",
    "set_secure", "show_config", "__version__",
]

# Loaded on first use (PEP 562), so that `import fasterm` needs numpy only: the
# scikit-learn estimators and search (an optional extra: fasterm[sklearn]), and the
# modules that `import fasterm` does not import (fe.preprocessing, as scikit-learn's
# sklearn.preprocessing after `import sklearn`).
_ESTIMATORS = ("DPLinearRegression", "DPLinearSVC", "DPLogisticRegression")
_SEARCH = ("PrivateSearch",)
_LAZY_MODULES = ("audit", "linear_model", "model_selection", "preprocessing")
if TYPE_CHECKING:  # type checkers see them; at run time __getattr__ imports them
    from . import audit, linear_model, model_selection, preprocessing
    from .linear_model import DPLinearRegression, DPLinearSVC, DPLogisticRegression
    from .model_selection import PrivateSearch


def __getattr__(name: str) -> Any:
    import importlib

    from ._buildinfo import needs_sklearn

    # A name, once loaded, is bound in the module: later look-ups do not come here.
    if name in _LAZY_MODULES:
        with needs_sklearn(f"{__name__}.{name}"):
            value = importlib.import_module(f"{__name__}.{name}")
    elif name in _ESTIMATORS or name in _SEARCH:
        with needs_sklearn(f"{__name__}.{name}"):
            module = importlib.import_module(f"{__name__}.{'model_selection' if name in _SEARCH else 'linear_model'}")
            value = getattr(module, name)  # the estimators' module imports scikit-learn here
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ESTIMATORS) | set(_SEARCH) | set(_LAZY_MODULES))
