"""Private empirical risk minimisation: losses, constraints and the private solvers.

* :mod:`.losses`, :mod:`.constraints` — the loss and constraint strategies
  (exact Lipschitz constants and sensitivities; projections);
* :mod:`.optimize` — (noisy) projected gradient descent, ``pgd`` and
  ``noisy_pgd``, and the result type of every solver (Stemmer lecture 10; Bassily, Smith & Thakurta 2014);
* :mod:`.solvers` — noisy gradient descent and Poisson-subsampled noisy SGD,
  ``noisy_gd`` and ``noisy_sgd`` (accounted in :mod:`fasterm.accounting`);
* :mod:`.objpert` — objective perturbation, pure ε (Chaudhuri, Monteleoni &
  Sarwate 2011; Kifer, Smith & Thakurta 2012);
* :mod:`.expmech` — the exponential mechanism over a convex set, sampled by
  hit-and-run (Smith–Ullman, Alg. 1; Bassily, Smith & Thakurta 2014);
* :mod:`.ssp` — sufficient-statistics perturbation for least squares (AdaSSP,
  Wang 2018);
* :mod:`.core` — the door through which the estimators (:mod:`fasterm.linear_model`)
  run the solvers once their fit plan has checked the parameters;
* the step engine (``_engine``) and its noise backends (``_backends``), the
  design matrix of the augmented rows (``_design``), the floating-point
  margin of the clipped sums (``_float_margin``) and dask arrays (``_dask``).

Below it: :mod:`fasterm.mechanisms` (noise) and :mod:`fasterm.accounting`
(calibration).  Above it: the estimators of :mod:`fasterm.linear_model`.
"""

from . import constraints, expmech, losses, objpert, optimize, solvers, ssp
from .constraints import Box, L1Ball, L2Ball, Simplex
from .expmech import expmech_erm
from .objpert import objective_perturbation
from .optimize import OptimizeResult, noisy_pgd, pgd
from .solvers import noisy_gd, noisy_sgd

__all__ = ["Box", "L1Ball", "L2Ball", "OptimizeResult", "Simplex", "constraints", "expmech", "expmech_erm", "losses",
           "noisy_gd", "noisy_pgd", "noisy_sgd", "objective_perturbation", "objpert", "optimize",
           "pgd", "solvers", "ssp"]
