"""The fit shared by the scikit-learn estimators and ``python -m fasterm`` (numpy only).

The rules below are applied once per fit by the fit plan
(:func:`fasterm.linear_model._plan.make_plan`); :func:`fit_binary` runs a plan
of two classes or regression.  The scikit-learn estimators
(:mod:`fasterm.linear_model`) and the main job call them, the main job
without scikit-learn.  The rules and defaults below
read public quantities only; why each was chosen: docs/solvers.rst ("The
default rule", "How the constants were chosen", "The estimators' public
defaults") and docs/pure.rst (the intercept column of objective perturbation).

``solver`` names the private algorithm (:data:`SOLVER_PARTS`: "noisy_gd",
"noisy_sgd", "noisy_pgd" — the noisy gradient solvers —, "objpert",
"objpert_threshold", "expmech", "adassp"); :func:`resolve_solver` and
:func:`resolve_noise` hold the rules linking it to ``noise``, ``calibration``,
δ and secure mode.  One fit of the noisy gradient solvers:

1. Rows are clipped to ``data_norm`` X; with ``fit_intercept`` a constant
   column s (``intercept_scaling``; "auto": 0.25, or
   ``OBJPERT_INTERCEPT_SCALING`` = 0.125 for classifiers fitted by objective
   perturbation) is appended, so rows have norm ≤ X_aug = √(X² + s²), and
   (coef, intercept/s) lie in the ball of radius ``radius``.
2. Per-example gradients are clipped at c (``clip="auto"``, :func:`auto_clip`:
   X_aug/(1 + e) logistic, X_aug/2 hinge, Y·X_aug/2 squared), so the averaged
   gradient has L2 sensitivity 2c/n under replace-one neighbours: noisy PGD on
   the c-Lipschitz Huberized surrogate (Song, Thakkar & Thakurta 2020), convex
   and, for classification, classification-calibrated (Bartlett, Jordan &
   McAuliffe 2006, Thm 6).
3. ``solver="auto"`` (:func:`resolve_method`, then :func:`choose_solver`):
   objective perturbation for δ = 0; else :func:`fasterm.noisy_pgd` for
   the hinge loss, secure mode and dask arrays below n = 5,000 or with Laplace
   noise (Theorem 2's T within ``max_steps``, default 100);
   :func:`fasterm.noisy_sgd` for n ≥ 5,000 (a dask X too)
   (logistic, Gaussian; B = clamp(n/100, 128, 1024), 2 epochs below n = 10⁵
   and 1 above, at least 160 steps; the squared loss with Gaussian noise
   takes noisy_gd with :func:`regression_gd_rule` there); :func:`fasterm.noisy_gd` otherwise
   (step 4/β, T = min(T*, :func:`gd_budget`), momentum by the public noise
   ratio ν).  The step 4/β is a public multiple of the largest step the smooth
   analysis covers (its bound is then not claimed; privacy does not depend on
   the step).  The privacy spent is the result's (ε, δ); nothing else touches
   the data.
"""

from __future__ import annotations

import math

import numpy as np

import fasterm.erm._dask as _dask
import fasterm.erm.expmech as expmech
import fasterm.erm.losses as _losses_mod
from ..erm._design import design
from ..erm.constraints import L2Ball
import fasterm.erm.core as core
from ..erm.optimize import noisy_pgd
from ..erm.solvers import GD_MAX_STEPS as _GD_MAX_STEPS
from ..mechanisms.secure import resolve as resolve_secure
from .._validation import FLOAT_DTYPES, check_csr, check_positive, check_random_state, is_sparse

__all__ = ["KINDS", "SOLVERS", "auto_clip", "design", "fit_linear", "resolve_intercept_scaling", "resolve_method",
           "resolve_noise", "resolve_solver"]

KINDS = ("logistic", "hinge", "squared")

# Defaults shared by the estimators and the main job (their meaning and origin: docs/solvers.rst, "The estimators' public defaults").
DEFAULTS = dict(
    epsilon=1.0, delta=1e-5, data_norm=1.0, alpha=1e-4, fit_intercept=True,
    intercept_scaling="auto", solver="auto", noise=None, calibration=None,
    clip="auto", steps=None, max_steps=None, weight_bound=1.0,
)

#: ``solver`` (the one parameter that says how a fit is made) -> (the algorithm,
#: the gradient optimiser) the fit dispatches on.  "gradient" is the family of
#: noisy gradient solvers, whose optimiser "auto" is :func:`choose_solver`'s rule.
SOLVER_PARTS = {
    "auto": ("auto", "auto"),
    "noisy_gd": ("gradient", "gd"), "noisy_sgd": ("gradient", "sgd"), "noisy_pgd": ("gradient", "pgd"),
    "objpert": ("objpert", None), "objpert_threshold": ("objpert_threshold", None),
    "expmech": ("expmech", None), "adassp": ("adassp", None),
}
SOLVERS = tuple(SOLVER_PARTS)
#: The solvers of the classifiers (``python -m fasterm``): all but AdaSSP, which is least squares.
CLASSIFIER_SOLVERS = tuple(s for s in SOLVERS if s != "adassp")
#: The solvers that take ``noise`` (and, for Laplace noise, ``calibration``).
GRADIENT_SOLVERS = ("noisy_gd", "noisy_sgd", "noisy_pgd")
NOISES = ("gaussian", "laplace")
CALIBRATIONS = ("l2", "pure", "coordinate")
#: The public name of each gradient optimiser ("gd" -> "noisy_gd"), for messages.
OPTIMISER_SOLVER = {"gd": "noisy_gd", "sgd": "noisy_sgd", "pgd": "noisy_pgd"}

# The data-independent solver rule (docs/solvers.rst): constants chosen by the
# experiments written up there (scikit-learn's digits and synthetic data).
PGD_MAX_STEPS = 100      # noisy_pgd's compute budget (docs/solvers.rst)
GD_MAX_STEPS = _GD_MAX_STEPS  # noisy_gd's compute budget (40)
GD_SMALL_ROWS = 1_000    # below this n, noisy_gd's budget is GD_SMALL_MAX_STEPS
GD_SMALL_MAX_STEPS = 20  # (why 20: docs/solvers.rst, "How the constants were chosen", item 5)
SGD_MIN_ROWS = 5_000     # from this n on, noisy_sgd
SGD_STEPS_PER_EPOCH = 100
SGD_BATCH = (128, 1024)  # the expected batch size n/100, clamped to this range
SGD_MIN_STEPS = 160      # at least this many sgd steps (more epochs at moderate n)
LR_MULTIPLE = 4.0        # step = LR_MULTIPLE/β for gd and sgd


def gd_budget(kind, n, noise="gaussian") -> int:
    """noisy_gd's default compute budget: for the logistic loss with Gaussian noise 20 below
    n = 1,000 rows, else 40 (why: docs/solvers.rst, "How the constants were chosen", item 5)."""
    small = kind == "logistic" and noise == "gaussian" and n < GD_SMALL_ROWS
    return GD_SMALL_MAX_STEPS if small else GD_MAX_STEPS


def choose_solver(kind, n, noise, secure, chunked, solver="auto"):
    """The gradient optimiser and its settings from public quantities only (docs/solvers.rst).

    ``solver``: "auto", "gd", "sgd" or "pgd" (the optimiser of ``solver="noisy_gd"``,
    ``"noisy_sgd"``, ``"noisy_pgd"``, :data:`SOLVER_PARTS`).  Returns ``(solver, options)``; ``options`` holds ``batch_size`` and
    ``epochs`` for "sgd".  "auto": noisy_pgd for the hinge loss (not smooth),
    secure mode (the paths that only PGD has) and dask arrays where noisy_gd
    would run in memory; noisy_gd for Laplace noise and for n < SGD_MIN_ROWS;
    noisy_sgd otherwise (a dask X too: docs/dask.rst), with the
    expected batch size B = clamp(n/100, 128, 1024) and
    max(2 epochs below n = 1e5 and 1 above, SGD_MIN_STEPS steps).
    """
    if solver == "auto":
        # a dask X: noisy_sgd where it would run in memory (its batches fetched in blocks,
        # fasterm.erm._dask.SampledRows), else noisy_pgd (noisy_gd has no dask path)
        if kind == "hinge" or secure or (chunked and (noise == "laplace" or n < SGD_MIN_ROWS)):
            solver = "pgd"
        elif noise == "laplace" or n < SGD_MIN_ROWS:
            solver = "gd"
        else:
            solver = "sgd"
    if solver == "sgd":
        batch = min(float(n), max(n / SGD_STEPS_PER_EPOCH, SGD_BATCH[0]), SGD_BATCH[1])
        epochs = max(2.0 if n < 100_000 else 1.0, SGD_MIN_STEPS * batch / n)
        return solver, {"batch_size": batch, "epochs": epochs}
    return solver, {}


DEFAULT_RADIUS = {"logistic": 50.0, "hinge": 50.0, "squared": 5.0}
#: ``intercept_scaling="auto"``: the column s, and its value for objective-perturbation classifiers.
DEFAULT_INTERCEPT_SCALING = 0.25
OBJPERT_INTERCEPT_SCALING = 0.125


def resolve_intercept_scaling(kind, method, intercept_scaling) -> float:
    """``intercept_scaling="auto"`` for a resolved algorithm (:func:`resolve_solver`); a number is kept.

    A public rule: the model kind and the method only.
    """
    if not (isinstance(intercept_scaling, str) and intercept_scaling == "auto"):
        return intercept_scaling
    if method == "objpert" and kind != "squared":
        return OBJPERT_INTERCEPT_SCALING
    return DEFAULT_INTERCEPT_SCALING


def make_loss(kind, alpha, label_bound=None):
    if kind == "logistic":
        return _losses_mod.Logistic(l2=alpha)
    if kind == "hinge":
        return _losses_mod.Hinge(l2=alpha)
    if kind == "squared":
        return _losses_mod.Squared(label_bound=label_bound, l2=alpha)
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def augmented_norm(data_norm, fit_intercept, intercept_scaling) -> float:
    """X_aug = √(X² + s²) with an intercept column, X without."""
    return math.hypot(data_norm, intercept_scaling) if fit_intercept else float(data_norm)


def auto_clip(kind, data_norm, label_bound=None) -> float:
    """The ``clip="auto"`` rule for a row bound ``data_norm`` (X_aug): module docstring."""
    if kind == "logistic":
        return data_norm / (1.0 + math.e)
    if kind == "hinge":
        return data_norm / 2.0
    if kind == "squared":
        return label_bound * data_norm / 2.0
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def _fit_expmech(loss, X, y, constraint, epsilon, *, data_norm, steps, random_state, label_bound):
    """``solver="expmech"``: the exponential mechanism (Smith–Ullman Alg. 1) by :func:`fasterm.expmech_erm`.

    Samples w ∝ exp(−ε·n·L(w)/(2Δ)) on the parameter ball; pure ε-DP when
    exact (one dimension), approximate for the hit-and-run chain (δ not
    certified: ``result.delta`` is None; see its docstring).
    """
    return expmech.expmech_erm(loss, X, y, constraint, epsilon, data_norm=data_norm, steps=steps,
                               random_state=random_state, label_bound=label_bound)


def _fit_objpert(kind, X, y, epsilon, *, data_norm, alpha, label_bound, random_state, secure):
    """``solver="objpert"``: :func:`fasterm.objective_perturbation`, pure ε.

    The loss is the smooth surrogate of the estimator's loss that the theorem
    needs (C², bounded ψ''): ``SmoothHinge()`` for "logistic" and "hinge"
    (the C² Huberized logistic / smoothed hinge, module docstring of
    :mod:`fasterm.erm.objpert`), ``LogCosh(width=label_bound)`` for "squared"
    (quadratic for residuals below Y, linear beyond).  ``alpha`` is a floor
    for the regularization μ.
    """
    import fasterm.erm.objpert as objpert

    if kind == "squared":
        loss = objpert.LogCosh(width=label_bound, l2=alpha)
    else:
        loss = objpert.SmoothHinge(l2=alpha)
    return objpert.objective_perturbation(loss, X, y, epsilon, data_norm=data_norm,
                                          label_bound=label_bound, random_state=random_state,
                                          secure=secure)


#: The algorithms that work in floating point (no secure mode).
FLOAT_METHODS = ("adassp", "objpert", "objpert_threshold", "expmech")
#: The algorithms that need X in memory and refuse secure mode at the fit (objpert's solve, expmech's sampler).
IN_MEMORY_METHODS = ("objpert", "objpert_threshold", "expmech")
#: Objective perturbation and its two-stage variant.
OBJPERT_METHODS = ("objpert", "objpert_threshold")
#: The optimisers that need a smooth loss, X in memory and no secure mode.
SMOOTH_OPTIMISERS = ("gd", "sgd")


def check_float_in_memory(method, chunked, secure):
    """objpert's solve and expmech's sampler: floating point, on an in-memory X."""
    if secure:
        raise ValueError(f"secure=True needs solver='noisy_pgd' (or 'auto'; solver={method!r} has no "
                         "floating-point-safe mode)")
    if chunked:
        raise ValueError(f"solver={method!r} needs X in memory; dask arrays are fitted with "
                         "solver='noisy_pgd' (or 'auto')")


def check_adassp(kind, secure, chunked):
    """``solver="adassp"``: least squares, no secure mode, X in memory."""
    if kind != "squared":
        raise ValueError("solver='adassp' is least-squares regression (DPLinearRegression) only")
    if secure:
        raise ValueError("secure=True (or fasterm.secure_mode) needs solver='noisy_pgd' (or 'auto'): AdaSSP's "
                         "releases have no floating-point-safe mode")
    if chunked:
        raise ValueError("solver='adassp' needs X in memory; dask arrays are fitted with solver='noisy_pgd' "
                         "(or 'auto')")


def smoothness(kind, alpha, label_bound, data_norm, weight_bound) -> float:
    """β of the (weighted) objective for rows of norm ≤ ``data_norm``: B·β_loss + α (public)."""
    return core.smoothness(make_loss(kind, alpha, label_bound), data_norm, label_bound, weight_bound)


def _fit_objpert_threshold(A, y, epsilon, *, data_norm, intercept_scaling, alpha, random_state, secure):
    """``solver="objpert_threshold"`` (classifiers): objective perturbation, then a private threshold.

    Stage 1 spends ε₁ = (1 − f)ε on :func:`fasterm.objective_perturbation`
    (``SmoothHinge()``, μ by the rule a·X²/(ε₁n) with a =
    ``THRESHOLD_REGULARIZATION``, larger than the default's: the threshold is
    no longer left to the ridge-shrunk intercept); stage 2 spends the rest,
    f = ``THRESHOLD_FRACTION``, on :func:`fasterm.erm.objpert.private_threshold`
    over the scores ⟨coef, x⟩ of the clipped rows, whose bound ‖coef‖·X is
    public after stage 1.  Basic composition (adaptive): (ε₁ + ε₂, 0).  The
    stage-1 intercept is discarded (post-processing).
    """
    import dataclasses

    import fasterm.erm.objpert as objpert
    from ..accounting import basic_composition
    from .._validation import check_random_state

    rng = check_random_state(random_state)
    dn = augmented_norm(data_norm, True, intercept_scaling)
    eps1 = (1.0 - objpert.THRESHOLD_FRACTION) * epsilon
    eps2 = math.nextafter(epsilon - eps1, 0.0)
    n = A.shape[0]
    mu = max(alpha, objpert.THRESHOLD_REGULARIZATION * dn * dn / (eps1 * n))
    res = objpert.objective_perturbation(objpert.SmoothHinge(l2=alpha), A, y, eps1, data_norm=dn,
                                         regularization=mu, random_state=rng, secure=secure)
    d = A.shape[1] - 1
    coef = np.asarray(res.w[:d], dtype=np.float64)
    bound = float(np.linalg.norm(coef)) * data_norm
    if not bound > 0.0:  # coef = 0 (probability 0): every threshold classifies alike
        bound = 1.0
    # A's first d columns are the rows clipped to data_norm: |⟨coef, x⟩| ≤ bound
    t = objpert.private_threshold(A[:, :d] @ coef.astype(A.dtype), y, eps2, bound=bound, random_state=rng)
    total, _ = basic_composition([res.epsilon, eps2])
    while total > epsilon:  # rounding of the sum: spend a hair less on the threshold (never taken)
        eps2 = math.nextafter(eps2, 0.0)  # pragma: no cover
        total, _ = basic_composition([res.epsilon, eps2])  # pragma: no cover
    w = np.append(coef, -t / intercept_scaling)
    info = dict(res.info, stage1_epsilon=res.epsilon, threshold_epsilon=eps2, threshold=t)
    return dataclasses.replace(res, w=w, epsilon=total, info=info)


#: noisy_gd's plans (:func:`fasterm.erm.solvers._gd_plan`) of the estimators' unweighted fits,
#: keyed by the public configuration with the types of its values: refitting one
#: configuration (a benchmark, a search over seeds) checks and calibrates it once.
_GD_PLANS: dict = {}
_GD_PLANS_MAX = 256
core.register_cache(_GD_PLANS.clear)


def _gd_plan(loss, ball, *config):
    """The plan of an unweighted noisy_gd fit for ``config`` (public numbers only: the loss's
    kind, alpha and label bound, the ball's radius, n, X_aug, c, ε, δ, T, the noise, its
    calibration, the budget, the step and the weight bound), made on first use by the
    checks of :func:`fasterm.noisy_gd`; None if a value cannot be a key."""
    try:
        # the ball's dimension too: E‖h‖² = dσ², and with it the momentum, depends on d
        key = (ball.dim,) + config + tuple(map(type, config))
        plan = _GD_PLANS.get(key)
    except TypeError:  # an unhashable value: no memo
        return None
    if plan is None:
        kind, alpha, label_bound, radius, n, dn, c, epsilon, delta, steps, noise, calibration, max_steps, lr, \
            weight_bound = config
        params = core.gd_params(loss, ball, epsilon, delta, steps, noise, dn, c, label_bound, lr, "auto",
                                     "last", max_steps, calibration)
        _, wb = core.sample_weights(None, weight_bound, n)  # the weight_bound check of an unweighted fit
        plan = core.gd_plan(loss, ball, n, wb, params)
        if len(_GD_PLANS) >= _GD_PLANS_MAX:
            _GD_PLANS.clear()
        _GD_PLANS[key] = plan
    return plan


#: ``solver="auto"`` for regression (the squared loss), by δ > 0 and δ = 0 (why: docs/solvers.rst,
#: "Regression").
REGRESSION_AUTO = {"approx": "gradient", "pure": "objpert"}

#: The regression rule of noisy_gd from this n on (docs/solvers.rst, "Regression"): T and R grow with n.
REGRESSION_GD_MIN_ROWS = SGD_MIN_ROWS
REGRESSION_GD_STEPS = (200, 1000)   # T = clamp(⌈n/50⌉, 200, 1000)
REGRESSION_GD_ROWS_PER_STEP = 50
REGRESSION_GD_RADIUS = (5.0, 100.0)  # R = clamp(n·μ/(10·p), 5, 100)
REGRESSION_GD_RADIUS_DIVISOR = 10.0
REGRESSION_GD_ALPHA = 0.0            # alpha=None on that path: no ridge (the ball bounds the iterates)


def regression_rule_applies(kind, n, noise, delta, secure, chunked, optimiser) -> bool:
    """Whether :func:`fit_linear` takes the regression rule (noisy_gd, :func:`regression_gd_rule`):
    the squared loss, the optimiser "auto", Gaussian noise, δ > 0, X in memory, no secure
    mode and n ≥ :data:`REGRESSION_GD_MIN_ROWS`.  Public quantities only."""
    return (kind == "squared" and optimiser == "auto" and noise == "gaussian" and delta > 0.0
            and not resolve_secure(secure) and not chunked and n >= REGRESSION_GD_MIN_ROWS)


def regression_gd_rule(n, dim, epsilon, delta):
    """(T, R) of the regression rule for n ≥ :data:`REGRESSION_GD_MIN_ROWS` (Gaussian noise, δ > 0).

    T = clamp(⌈n/50⌉, 200, 1000) steps of noisy_gd and the radius
    R = clamp(n·μ/(10·p), 5, 100), μ = :func:`fasterm.accounting.gaussian_mu` (ε, δ)
    and p = ``dim`` (the coefficients with the intercept column).  Public:
    n, p, ε, δ (why these constants: docs/solvers.rst, "Regression").
    """
    from ..accounting import gaussian_mu

    steps = int(min(REGRESSION_GD_STEPS[1], max(REGRESSION_GD_STEPS[0], math.ceil(n / REGRESSION_GD_ROWS_PER_STEP))))
    mu = gaussian_mu(epsilon, delta)
    radius = float(min(REGRESSION_GD_RADIUS[1], max(REGRESSION_GD_RADIUS[0],
                                                   n * mu / (REGRESSION_GD_RADIUS_DIVISOR * dim))))
    return steps, radius


def resolve_method(method, delta, secure=None, chunked=False, kind=None) -> str:
    """The algorithm of ``solver="auto"``: "objpert" when δ = 0 (pure ε), else
    "gradient" (the noisy gradient solvers); for regression (``kind="squared"``)
    :data:`REGRESSION_AUTO`, the same two after the comparison of
    docs/solvers.rst ("Regression") with sufficient statistics perturbation
    ("adassp", :mod:`fasterm.erm.ssp`).  Any other algorithm is kept.

    Exceptions, because objective perturbation and AdaSSP need X in memory and
    have no secure mode: a dask X or secure mode resolve to "gradient" (with
    Laplace noise for δ = 0).  A public rule: δ, the loss, and the user's choices.
    """
    if method != "auto":
        return method
    if kind == "squared" and not chunked and not resolve_secure(secure):
        return REGRESSION_AUTO["pure" if delta == 0.0 else "approx"]
    if delta == 0.0 and not chunked and not resolve_secure(secure):
        return "objpert"
    return "gradient"


def resolve_solver(solver, delta, noise=None, secure=None, chunked=False, kind=None) -> tuple[str, str | None]:
    """``(algorithm, optimiser)`` of a public ``solver`` (:data:`SOLVER_PARTS`).

    The algorithm is "gradient", "objpert", "objpert_threshold", "expmech" or
    "adassp"; the optimiser ("auto", "gd", "sgd", "pgd") only for "gradient".
    ``solver="auto"`` resolves by :func:`resolve_method`, except that an
    explicit ``noise`` keeps it among the noisy gradient solvers (the only ones
    that take one).  A public rule.
    """
    if solver not in SOLVER_PARTS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    method, optimiser = SOLVER_PARTS[solver]
    if method == "auto" and noise is not None:
        method = "gradient"
    method = resolve_method(method, delta, secure, chunked, kind)
    return method, (optimiser if method == "gradient" else None)


def resolve_noise(method, delta, noise, calibration, solver="auto") -> tuple[str | None, str | None]:
    """``noise``/``calibration`` of the noisy gradient solvers; errors where they mean nothing.

    ``noise=None``: Gaussian for δ > 0, Laplace for δ = 0 (pure ε);
    ``calibration=None``: "l2" (Laplace noise only: Gaussian noise has one
    calibration, exact μ-GDP).  Other algorithms take neither (ValueError).
    """
    if method != "gradient":
        for name, value in (("noise", noise), ("calibration", calibration)):
            if value is not None:
                raise ValueError(f"{name}={value!r} applies to the noisy gradient solvers "
                                 f"({', '.join(map(repr, GRADIENT_SOLVERS))}) only; solver={solver!r} runs "
                                 f"{method!r}, which has its own noise: leave {name}=None")
        return None, None
    if noise is None:
        noise = "laplace" if delta == 0.0 else "gaussian"
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES} or None, got {noise!r}")
    if calibration is not None and noise != "laplace":
        raise ValueError(f"calibration={calibration!r} applies to Laplace noise only (Gaussian noise is "
                         "calibrated exactly in μ-GDP); leave calibration=None or pass noise='laplace'")
    if calibration is None:
        calibration = "l2"
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS} or None, got {calibration!r}")
    if delta == 0.0 and (noise == "gaussian" or calibration == "coordinate"):
        raise ValueError(
            f"delta=0 (pure ε-DP) with the noisy gradient solvers needs noise='laplace' with calibration "
            f"'pure' or 'l2', got noise={noise!r}, calibration={calibration!r} "
            "(solver='auto' or 'objpert' fits delta=0 by objective perturbation)")
    return noise, calibration


def _fit_adassp(plan, X, y, *, random_state, sample_weight, row_norms):
    """``solver="adassp"`` (regression): :func:`fasterm.erm.ssp.adassp` on the design rows.

    The design is the one of every method (rows clipped to ``data_norm``, the
    column s appended), so the statistics' row bound is X_aug = √(X² + s²).
    With ``radius=None`` (the estimator's default) θ is returned as it is —
    AdaSSP needs no parameter bound; a numeric ``radius`` projects θ onto the
    ball (post-processing).  δ > 0: Gaussian releases composed by GDP; δ = 0:
    Laplace releases, (ε, 0)-DP (:mod:`fasterm.erm.ssp`).
    """
    import fasterm.erm.ssp as ssp

    if is_sparse(X):
        X = check_csr(X, "X")
    s, fit_intercept, radius = plan.intercept_scaling, plan.fit_intercept, plan.radius
    A = design(X, plan.data_norm, fit_intercept, s, row_norms)
    result = ssp.adassp(A, y, plan.epsilon, plan.delta, data_norm=plan.augmented_norm, label_bound=plan.label_bound,
                        sample_weight=sample_weight, weight_bound=plan.weight_bound, random_state=random_state)
    if radius is not None:
        result.w = L2Ball(radius, A.shape[1]).project(result.w)
        result.info["radius"] = float(radius)
    w = np.asarray(result.w)
    d = X.shape[1]
    coef = w[:d].astype(X.dtype, copy=True)
    intercept = float(w[d]) * s if fit_intercept else 0.0
    return coef, intercept, result


def fit_binary(plan, X, y, *, random_state, sample_weight=None, checked=False, row_norms=None):
    """Fit one private linear model as ``plan`` says; returns ``(coef, intercept, result)``.

    ``plan``: the :class:`fasterm.linear_model._plan.FitPlan` of this X (two
    classes or regression).  ``kind`` (the plan's): "logistic", "hinge" (y in
    {−1, +1}; the kernels read y > 0 as +1) or "squared" (|y| ≤
    ``label_bound``, clipped).  ``coef`` has X's dtype and shape (d,);
    ``intercept`` is a float (0.0 without intercept); ``result`` is the
    :class:`fasterm.OptimizeResult` with the (ε, δ) spent.
    ``sample_weight`` (None or n weights, mapped into [0, ``weight_bound``])
    is passed to the noisy gradient solvers, whose sensitivity scales with
    ``weight_bound`` (:func:`fasterm.noisy_pgd`).  ``checked``: the caller
    has validated X and y as the estimators do (finite, float32 or float64,
    one label per row), so the solver does not scan them again;
    ``row_norms``: X's row norms from that check
    (:func:`fasterm.erm._design.row_norms_unchecked`), or None.
    """
    method, solver = plan.method, plan.optimiser
    if method == "adassp":
        return _fit_adassp(plan, X, y, random_state=random_state, sample_weight=sample_weight, row_norms=row_norms)
    kind, epsilon, delta, noise, calibration = plan.kind, plan.epsilon, plan.delta, plan.noise, plan.calibration
    data_norm, fit_intercept, intercept_scaling = plan.data_norm, plan.fit_intercept, plan.intercept_scaling
    radius, alpha, label_bound, steps, secure = plan.radius, plan.alpha, plan.label_bound, plan.steps, plan.secure
    weight_bound = plan.weight_bound
    if is_sparse(X):
        X = check_csr(X, "X")  # canonical once, for every pass of the fit
    loss = make_loss(kind, alpha, label_bound)
    dn = plan.augmented_norm
    ball = L2Ball(radius, X.shape[1] + bool(fit_intercept))
    # noisy_sgd builds the design rows of each minibatch itself: no (n, d + 1) copy of X.
    A = X if solver == "sgd" else design(X, data_norm, fit_intercept, intercept_scaling, row_norms)
    if method == "objpert_threshold":
        result = _fit_objpert_threshold(A, y, epsilon, data_norm=data_norm,
                                        intercept_scaling=intercept_scaling, alpha=alpha,
                                        random_state=random_state, secure=secure)
        result.w = ball.project(result.w)
    elif method == "objpert":
        result = _fit_objpert(kind, A, y, epsilon, data_norm=dn, alpha=alpha,
                              label_bound=label_bound, random_state=random_state, secure=secure)
        # Projection onto the parameter ball is post-processing of the release.
        result.w = ball.project(result.w)
    elif method == "expmech":
        result = _fit_expmech(loss, A, y, ball, epsilon, data_norm=dn, steps=steps,
                              random_state=random_state, label_bound=label_bound)
    else:
        c = plan.clip
        common = dict(data_norm=dn, clip=c, random_state=random_state, label_bound=label_bound,
                      sample_weight=sample_weight, weight_bound=weight_bound)
        if solver == "pgd":
            result = noisy_pgd(loss, A, y, ball, epsilon, delta=delta, steps=steps, noise=noise,
                               calibration=calibration, max_steps=plan.max_steps, secure=secure, **common)
        else:
            lr = plan.lr
            if solver == "gd":
                # A checked X gives a checked design: C-contiguous, finite, y in its dtype.
                checked = (checked and type(A) is np.ndarray and A.flags.c_contiguous and A.dtype in FLOAT_DTYPES
                           and type(y) is np.ndarray and y.dtype == A.dtype and y.flags.c_contiguous
                           and y.shape == (A.shape[0],))
                gd_plan = None
                if checked and sample_weight is None:
                    gd_plan = _gd_plan(loss, ball, kind, alpha, label_bound, radius, A.shape[0], dn, c, epsilon,
                                       delta, steps, noise, calibration, plan.max_steps, lr, weight_bound)
                if gd_plan is not None:
                    result = core.gd_run(loss, ball, gd_plan, A, y, check_random_state(random_state), None)
                else:
                    result = core.noisy_gd(loss, A, y, ball, epsilon, delta, steps, noise,
                                           calibration=calibration, lr=lr, max_steps=plan.max_steps,
                                           accelerate="auto", output="last", checked=checked, **common)
            else:
                result = core.noisy_sgd(loss, X, y, ball, epsilon, delta, steps, lr=lr, sample_rate=None,
                                        output="last", neighbors="replace_one",
                                        intercept=(data_norm, intercept_scaling) if fit_intercept else None,
                                        checked=checked, row_norms=row_norms if checked else None,
                                        batch_size=plan.batch_size, epochs=plan.epochs, **common)
    if isinstance(getattr(result, "info", None), dict):
        result.info["radius"] = float(radius)  # the resolved public bound (fasterm._warnings.warn_on_boundary)
    w = np.asarray(result.w)
    d = X.shape[1]
    coef = w[:d].astype(X.dtype, copy=True)
    intercept = float(w[d]) * intercept_scaling if fit_intercept else 0.0
    return coef, intercept, result
