"""Privacy accounting: pure functions of public numbers (ε, δ, sensitivities, dimensions, steps).

Nothing here sees data.  Every calibration of the library's float mechanisms
lives in this package, one module per family of theorems:

* :mod:`.composition` — basic, advanced and heterogeneous composition
  (Dwork & Roth, Thms 3.16 and 3.20), pure shares, the budget accountant;
* :mod:`.laplace` — L2-sensitivity Laplace noise over T steps (Stemmer, lecture 10, Thm 3);
* :mod:`.gaussian` — Gaussian DP (Dong, Roth & Su 2022) and zCDP (Bun & Steinke 2016);
* :mod:`.steps` — the noise of T noisy gradient steps (behind ``noisy_pgd``/``noisy_gd``);
* :mod:`.rdp`, :mod:`.pld`, :mod:`.sgd` — the Poisson-subsampled Gaussian of
  noisy SGD: Rényi DP (Mironov, Talwar & Zhang 2019) and the privacy loss
  distribution (Zhu, Dong & Wang 2022), the tighter of the two reported;
* :mod:`.objpert` — objective perturbation (Chaudhuri, Monteleoni & Sarwate
  2011; Kifer, Smith & Thakurta 2012);
* :mod:`.search` — private selection by random stopping (Papernot & Steinke 2022).

Secure mode's grid calibrations (:mod:`fasterm.mechanisms.secure`) apply these
theorems to the rounding-enlarged grid sensitivities.  Why each bound was
chosen, and how tight it is: docs/guarantees.rst and docs/solvers.rst.
"""

from .composition import (BudgetAccountant, BudgetExceededError, advanced_composition, basic_composition,
                          compose_pure, heterogeneous_composition, pure_share)
from .laplace import calibrate_laplace_coordinate, calibrate_laplace_l2, calibrate_laplace_pure, laplace_l2_epsilon
from .gaussian import calibrate_gaussian, gaussian_delta, gaussian_epsilon, gaussian_mu, zcdp_delta, zcdp_rho
from .steps import calibrate_steps
from .rdp import rdp_epsilon, rdp_subsampled_gaussian
from .sgd import calibrate_sgd_sigma, sgd_epsilon
from .objpert import calibrate_objpert, norm_laplace_scale, objpert_epsilon, objpert_regularization
from .search import calibrate_private_search, private_search_epsilon

# Public constants and helpers outside __all__, re-exported explicitly ("X as X").
from .gaussian import GAUSSIAN_EPSILON_CAP as GAUSSIAN_EPSILON_CAP, check_gaussian_epsilon as check_gaussian_epsilon
from .rdp import RDP_ORDERS as RDP_ORDERS
from .search import SEARCH_ORDERS as SEARCH_ORDERS
from .sgd import SGD_SIGMA_RTOL as SGD_SIGMA_RTOL
from .steps import STEP_CALIBRATIONS as STEP_CALIBRATIONS, STEP_NOISES as STEP_NOISES
from .steps import StepCalibration as StepCalibration, clear_caches as clear_caches
from .steps import noise_scale as noise_scale, noise_sq_of_steps as noise_sq_of_steps

__all__ = [
    "BudgetAccountant",
    "BudgetExceededError",
    "advanced_composition",
    "basic_composition",
    "calibrate_gaussian",
    "calibrate_laplace_coordinate",
    "calibrate_laplace_l2",
    "calibrate_laplace_pure",
    "calibrate_sgd_sigma",
    "calibrate_objpert",
    "calibrate_private_search",
    "calibrate_steps",
    "compose_pure",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "heterogeneous_composition",
    "laplace_l2_epsilon",
    "norm_laplace_scale",
    "objpert_epsilon",
    "objpert_regularization",
    "private_search_epsilon",
    "pure_share",
    "rdp_epsilon",
    "rdp_subsampled_gaussian",
    "sgd_epsilon",
    "zcdp_delta",
    "zcdp_rho",
]
