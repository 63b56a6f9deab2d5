"""The fit plan: every decision of a fit, made once from public quantities.

:func:`make_plan` is the one function that turns the estimators' public
parameters and the public sizes of the data into a :class:`FitPlan` — which
algorithm runs, which gradient optimiser, which noise and calibration, T or
its budget, the step size, the radius, α, the intercept column, the clip and
the minibatch sampling rate.  The estimators (binary, multiclass,
regression), ``bounds="private"``'s accounting
(:mod:`fasterm.linear_model._bounds`), :class:`fasterm.PrivateSearch` and
``python -m fasterm`` read the plan; nothing else re-derives a decision.  The
rules themselves (and why each constant): :mod:`fasterm.linear_model._rules`
and docs/solvers.rst; the flow estimator → plan → core → kernel:
docs/estimators.rst ("How a fit is decided").

Everything in a plan is public: the inputs are n, d, K, the dtype, the
storage (dense or sparse, in memory or a dask array), whether weights are
given, ε, δ, secure mode and the estimator's parameters — never a value of the
data.  The plan is stored on a fitted estimator as ``plan_``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..mechanisms.secure import resolve as resolve_secure
from .._validation import check_positive
from . import _rules

__all__ = ["FitPlan", "make_plan"]

#: What :attr:`FitPlan.method` can be: the algorithm that runs.
METHODS = ("gradient", "objpert", "objpert_threshold", "expmech", "adassp", "class_sums")
#: What :attr:`FitPlan.optimiser` can be for ``method="gradient"``: noisy GD, noisy SGD, noisy PGD.
OPTIMISERS = ("gd", "sgd", "pgd")


@dataclass(frozen=True)
class FitPlan:
    """Every decision of one private fit, from public quantities only (:func:`make_plan`).

    Made by :func:`make_plan` (not by hand); frozen, and compared field by field.

    Parameters
    ----------
    kind : {"logistic", "hinge", "squared"}
        The loss of the estimator.
    n, d, n_classes : int
        Rows, features and classes (2 for the binary models and regression);
        ``d`` may be None for a plan made before d is known (then the
        quantities that depend on it are None).
    dtype : str
        The floating-point type of X ("float32" or "float64").
    sparse, chunked, weighted : bool
        X is scipy.sparse; X is a dask array; ``sample_weight`` is given.
    epsilon, delta : float
        The budget the fit is calibrated to (with ``bounds="private"``, what
        is left after the private ranges).
    solver : str
        The public ``solver`` parameter as given.
    method : str
        The algorithm that runs: "gradient" (the noisy gradient solvers),
        "objpert", "objpert_threshold", "expmech", "adassp" or "class_sums"
        (K > 2 classes with δ = 0).
    optimiser : {"gd", "sgd", "pgd"} or None
        The gradient optimiser (``method="gradient"`` only).
    noise, calibration : str or None
        The noise law and, for Laplace noise, its calibration (gradient only).
    secure : bool
        Secure mode, resolved (``secure=None`` reads :func:`fasterm.secure_mode`).
    steps : int or None
        T as given or set by a rule (None: the optimiser's own T rule within
        ``max_steps``).
    max_steps : int or None
        The compute budget of T (gd, pgd).
    lr : float or None
        The step size of the binary gd and sgd optimisers (multiclass: set by
        the core from the calibration).
    radius, alpha : float or None
        The parameter ball and the ridge (adassp may keep ``radius=None``).
    fit_intercept : bool
    intercept_scaling : float
        The intercept column s, resolved from "auto".
    data_norm, augmented_norm : float
        The row bound X and X_aug = √(X² + s²) (X without intercept).
    label_bound : float or None
        The label bound of regression.
    clip : float or None
        The per-example gradient clip c (gradient only).
    weight_bound : float
    batch_size, epochs, sample_rate : float or None
        noisy SGD: expected batch, epochs, Poisson rate q = min(1, B/n).
    sgd_steps : int or None
        noisy SGD: the T its run takes.
    regression_rule : bool
        The regression rule (noisy_gd with T and R growing with n) applies.
    """

    kind: str
    n: int
    d: int | None
    n_classes: int
    dtype: str
    sparse: bool
    chunked: bool
    weighted: bool
    epsilon: float
    delta: float
    solver: str
    method: str
    optimiser: str | None
    noise: str | None
    calibration: str | None
    secure: bool
    steps: int | None
    max_steps: int | None
    lr: float | None
    radius: float | None
    alpha: float | None
    fit_intercept: bool
    intercept_scaling: float
    data_norm: float
    augmented_norm: float
    label_bound: float | None
    clip: float | None
    weight_bound: float
    batch_size: float | None = None
    epochs: float | None = None
    sample_rate: float | None = None
    sgd_steps: int | None = None
    regression_rule: bool = False

    @property
    def full_batch_gaussian(self) -> bool:
        """The fit is T full-batch Gaussian releases (exactly μ-GDP): δ > 0, the noisy gradient
        algorithm with Gaussian noise, an optimiser other than "sgd", no secure mode."""
        return (self.delta > 0.0 and self.method == "gradient" and self.noise == "gaussian"
                and self.optimiser != "sgd" and not self.secure)

    @property
    def sgd(self) -> tuple[float, int] | None:
        """``(q, T)`` of a noisy SGD fit (T Poisson-subsampled Gaussian steps, replace-one), else None."""
        if not self.is_sgd or self.sample_rate is None or self.sgd_steps is None:
            return None
        return self.sample_rate, self.sgd_steps

    @property
    def is_gd(self) -> bool:
        """The optimiser is noisy GD (full batch, the last iterate)."""
        return self.method == "gradient" and self.optimiser == "gd"

    @property
    def is_sgd(self) -> bool:
        """The optimiser is noisy SGD (Poisson minibatches)."""
        return self.method == "gradient" and self.optimiser == "sgd"

    @property
    def is_class_sums(self) -> bool:
        """K > 2 classes with δ = 0: the noisy class sums (one Laplace release)."""
        return self.method == "class_sums"

    @property
    def public_solver(self) -> str:
        """The public name of what runs: "noisy_gd", "noisy_sgd", "noisy_pgd" for the noisy gradient
        algorithm, else :attr:`method` ("objpert", "adassp", "class_sums", ...)."""
        if self.method == "gradient" and self.optimiser is not None:
            return _rules.OPTIMISER_SOLVER[self.optimiser]
        return self.method

    @property
    def iteration_cap(self) -> bool:
        """The result's ``steps`` is an iteration cap of a solve (objective perturbation), not T releases."""
        return self.method in _rules.OBJPERT_METHODS

    def as_dict(self) -> dict:
        """The plan's fields as a plain dict."""
        return asdict(self)


def make_plan(kind, *, n, d, n_classes=2, dtype="float64", sparse=False, chunked=False, weighted=False,
              epsilon, delta, data_norm, radius, alpha, fit_intercept, intercept_scaling, solver,
              noise, calibration, clip, steps, max_steps, secure=None, label_bound=None,
              weight_bound=1.0) -> FitPlan:
    """The :class:`FitPlan` of one fit, from public quantities only; raises ValueError/TypeError
    naming the parameter for a combination that cannot be fitted.

    Parameters
    ----------
    kind : {"logistic", "hinge", "squared"}
        The estimator's loss.
    n, d, n_classes : int
        The public sizes (``d=None``: not known yet, d-dependent fields None).
    dtype : str or numpy dtype
        X's floating-point type.
    sparse, chunked, weighted : bool
        X is scipy.sparse; X is a dask array; ``sample_weight`` is given.
    epsilon, delta : float
        The budget the fit is calibrated to.
    data_norm, radius, alpha, fit_intercept, intercept_scaling, solver, noise, calibration, clip, steps, max_steps, secure, label_bound, weight_bound
        The estimator's parameters (validated one by one before; the rules
        linking them are checked here).

    Returns
    -------
    FitPlan

    Notes
    -----
    The rules are those of :mod:`fasterm.linear_model._rules` (the solver
    rule, the regression rule, the defaults); docs/solvers.rst says why.
    """
    L = _rules
    n = int(n)
    K = int(n_classes)
    sec = resolve_secure(secure)
    # 1. The rules linking solver, noise, calibration, δ and secure mode (parameters only).
    method, optimiser = L.resolve_solver(solver, delta, noise, secure, kind=kind)
    noise_p, _ = L.resolve_noise(method, delta, noise, calibration, solver)
    if method == "adassp" and kind != "squared":
        raise ValueError("solver='adassp' (sufficient statistics perturbation) is for DPLinearRegression only")
    if method == "objpert_threshold" and kind == "squared":
        raise ValueError("solver='objpert_threshold' is for the classifiers (it chooses their intercept privately)")
    if method in L.FLOAT_METHODS and sec:
        raise ValueError(f"secure=True (or fasterm.secure_mode) needs solver='noisy_pgd' (or 'auto'): "
                     f"solver={method!r} has no floating-point-safe mode")
    if optimiser in L.SMOOTH_OPTIMISERS and (kind == "hinge" or sec):
        raise ValueError(f"solver={solver!r} needs a smooth loss (logistic, squared) and secure=False; use "
                     "solver='noisy_pgd' (or 'auto')")
    if optimiser == "sgd" and noise_p != "gaussian":
        raise ValueError("solver='noisy_sgd' needs noise='gaussian' (its accounting is for the subsampled Gaussian)")
    # 2. A dask X: noisy SGD (its batches fetched in blocks, docs/dask.rst) or noisy PGD.
    if chunked:
        method_c, optimiser_c = L.resolve_solver(solver, delta, noise, secure, chunked=True, kind=kind)
        if method_c != "gradient" or optimiser_c == "gd":
            raise ValueError(f"solver={solver!r} needs X in memory; dask arrays are fitted with "
                             "solver='noisy_sgd', 'noisy_pgd' (or 'auto')")
    common = dict(kind=kind, n=n, d=None if d is None else int(d), n_classes=K, dtype=np.dtype(dtype).name,
                  sparse=bool(sparse), chunked=bool(chunked), weighted=bool(weighted), epsilon=epsilon,
                  delta=delta, solver=solver, secure=sec, fit_intercept=fit_intercept, data_norm=data_norm,
                  label_bound=label_bound, weight_bound=weight_bound)
    if K > 2:
        return _multiclass_plan(common, method, optimiser, noise, calibration, radius=radius, alpha=alpha,
                                intercept_scaling=intercept_scaling, clip=clip, steps=steps, max_steps=max_steps)
    return _binary_plan(common, method, optimiser, noise, calibration, radius=radius, alpha=alpha,
                        intercept_scaling=intercept_scaling, clip=clip, steps=steps, max_steps=max_steps)


def _binary_plan(common, method, optimiser, noise, calibration, *, radius, alpha, intercept_scaling, clip, steps,
                 max_steps):
    """Two classes and regression (the rules of :func:`fasterm.linear_model._rules.fit_linear`)."""
    L = _rules
    kind, n, d, delta, epsilon = common["kind"], common["n"], common["d"], common["delta"], common["epsilon"]
    chunked, sec, solver = common["chunked"], common["secure"], common["solver"]
    fit_intercept, data_norm, label_bound = common["fit_intercept"], common["data_norm"], common["label_bound"]
    method, optimiser = L.resolve_solver(solver, delta, noise, sec, chunked, kind)
    noise, calibration = L.resolve_noise(method, delta, noise, calibration, solver)
    if method == "adassp":
        L.check_adassp(kind, sec, chunked)
        s = L.resolve_intercept_scaling(kind, "adassp", intercept_scaling)
        return FitPlan(**common, method=method, optimiser=None, noise=None, calibration=None, steps=steps,
                       max_steps=max_steps, lr=None, radius=radius, alpha=alpha,
                       intercept_scaling=s, augmented_norm=L.augmented_norm(data_norm, fit_intercept, s), clip=None)
    rule = False
    if method == "gradient" and L.regression_rule_applies(kind, n, noise, delta, sec, chunked, optimiser):
        # the regression rule (docs/solvers.rst, "Regression"): noisy_gd, T and R growing with n
        rule = True
        optimiser = "gd"
        if d is not None:
            rule_steps, rule_radius = L.regression_gd_rule(n, d + bool(fit_intercept), epsilon, delta)
            if steps is None:
                steps = rule_steps
            if radius is None:
                radius = rule_radius
        if alpha is None:
            alpha = L.REGRESSION_GD_ALPHA
    if radius is None and not (rule and d is None):
        radius = L.DEFAULT_RADIUS[kind]
    if alpha is None:
        alpha = L.DEFAULTS["alpha"]
    if common["sparse"] and method != "gradient":
        raise TypeError(f"X is a scipy.sparse matrix: sparse input is fitted by the noisy gradient solvers "
                        f"only, not {method!r} (delta=0 with sparse X: solver='noisy_gd' or 'noisy_pgd', "
                        "noise='laplace')")
    if common["weighted"] and method != "gradient":
        raise ValueError(f"sample_weight is supported by the noisy gradient solvers only, not {method!r}"
                     + (" (delta=0 under solver='auto' is objective perturbation; for pure epsilon "
                        "with weights use solver='noisy_gd' or 'noisy_pgd', noise='laplace')"
                        if delta == 0.0 else ""))
    s = L.resolve_intercept_scaling(kind, method, intercept_scaling)
    if method in L.IN_MEMORY_METHODS:
        L.check_float_in_memory(method, chunked, sec)
    if method == "objpert_threshold" and (kind == "squared" or not fit_intercept):
        raise ValueError("solver='objpert_threshold' is for classifiers with fit_intercept=True "
                     "(it chooses the intercept privately)")
    if method == "expmech" and delta == 0.0 and d is not None and d + bool(fit_intercept) > 1:
        # Beyond one dimension the hit-and-run chain is not an exact sample
        # (fasterm.erm.expmech): only (ε, (1 + e^ε)·δ_TV)-DP with δ_TV unknown, so
        # δ = 0 cannot be promised.  In one dimension it is one exact draw.
        raise ValueError("solver='expmech' with delta=0: the hit-and-run chain only approximates "
                     "the exponential mechanism (its distance delta_tv from it is not known), "
                     "so the fit is not (epsilon, 0)-DP; use solver='objpert' (or 'auto') for "
                     "pure epsilon, or pass delta > 0 to accept an approximate, uncertified "
                     "release (reported with delta_ = nan)")
    dn = L.augmented_norm(data_norm, fit_intercept, s)
    fields = dict(common, method=method, noise=noise, calibration=calibration, steps=steps,
                  radius=radius, alpha=alpha, intercept_scaling=s,
                  augmented_norm=dn, regression_rule=rule)
    if method != "gradient":
        return FitPlan(**fields, optimiser=None, max_steps=max_steps, lr=None, clip=None)
    optimiser, opts = L.choose_solver(kind, n, noise, sec, chunked, optimiser)
    c = L.auto_clip(kind, dn, label_bound) if clip == "auto" else clip
    if optimiser != "pgd" and (kind == "hinge" or sec or (chunked and optimiser == "gd")):
        raise ValueError(f"solver={L.OPTIMISER_SOLVER[optimiser]!r} needs a smooth loss (logistic, squared), "
                         "secure=False" + (" and X in memory" if optimiser == "gd" else "")
                         + "; use solver='noisy_pgd' (or 'auto')")
    if optimiser == "sgd" and noise != "gaussian":
        raise ValueError("solver='noisy_sgd' needs noise='gaussian' (its accounting is for the subsampled Gaussian)")
    if optimiser == "pgd":
        return FitPlan(**fields, optimiser="pgd", max_steps=max_steps or L.PGD_MAX_STEPS, lr=None, clip=c)
    # the weighted objective's smoothness: B·β + l2, B = 1 unweighted
    wb = check_positive(common["weight_bound"], "weight_bound") if common["weighted"] else 1.0
    lr = L.LR_MULTIPLE / L.smoothness(kind, alpha, label_bound, dn, wb)
    if optimiser == "gd":
        return FitPlan(**fields, optimiser="gd", max_steps=max_steps or L.gd_budget(kind, n, noise), lr=lr, clip=c)
    q = min(1.0, opts["batch_size"] / n)
    return FitPlan(**fields, optimiser="sgd", max_steps=max_steps, lr=lr, clip=c, batch_size=opts["batch_size"],
                   epochs=opts["epochs"], sample_rate=q,
                   sgd_steps=int(steps) if steps is not None else int(math.ceil(opts["epochs"] / q)))


def _multiclass_plan(common, method, optimiser, noise, calibration, *, radius, alpha, intercept_scaling, clip,
                     steps, max_steps):
    """K > 2 classes (the rules of :mod:`fasterm.linear_model._multiclass`)."""
    import fasterm.linear_model._multiclass as M

    L = _rules
    kind, n, d, K, delta = common["kind"], common["n"], common["d"], common["n_classes"], common["delta"]
    chunked, sec, solver = common["chunked"], common["secure"], common["solver"]
    fit_intercept, data_norm = common["fit_intercept"], common["data_norm"]
    if kind not in M.KINDS:
        raise ValueError(f"kind must be one of {M.KINDS}, got {kind!r}")
    method, optimiser = L.resolve_solver(solver, delta, noise, sec, chunked)
    if solver == "auto" and method == "objpert":
        # δ = 0, no noise given, X in memory, no secure mode: the binary rule's objective
        # perturbation has no multinomial version; K > 2 fits the noisy class sums
        L.resolve_noise("class_sums", delta, noise, calibration, solver)  # calibration=... raises
        s = L.resolve_intercept_scaling("logistic", "gradient", intercept_scaling)
        return FitPlan(**common, method="class_sums", optimiser=None, noise="laplace", calibration="pure",
                       steps=1, max_steps=None, lr=None, radius=radius, alpha=alpha, intercept_scaling=s,
                       augmented_norm=L.augmented_norm(data_norm, fit_intercept, s), clip=None)
    if chunked:
        raise ValueError("more than two classes need X in memory (numpy): dask arrays are fitted for "
                     "binary labels only")
    if method != "gradient":
        raise ValueError(f"solver={method!r} is binary only; more than two classes are fitted with "
                     "solver 'auto', 'noisy_gd', 'noisy_sgd' or 'noisy_pgd' (for delta=0 with a gradient "
                     "solver: noise='laplace', calibration 'pure' or 'l2')")
    noise, calibration = L.resolve_noise(method, delta, noise, calibration, solver)
    if noise == "gaussian" and delta > 0.0:
        from ..accounting import check_gaussian_epsilon

        check_gaussian_epsilon(common["epsilon"])  # before the calibrations: the error names epsilon
    optimiser, opts = L.choose_solver(kind, n, noise, sec, False, optimiser)
    if optimiser in L.SMOOTH_OPTIMISERS and (kind == "hinge" or sec):
        raise ValueError(f"solver={L.OPTIMISER_SOLVER[optimiser]!r} needs a smooth loss (logistic) and secure=False; "
                     "use solver='noisy_pgd' (or 'auto')")
    if optimiser == "sgd" and noise != "gaussian":
        raise ValueError("solver='noisy_sgd' needs noise='gaussian' (its accounting is Rényi DP)")
    if optimiser == "sgd" and delta == 0.0:
        raise ValueError("solver='noisy_sgd' needs delta > 0 (Rényi DP gives no pure ε)")
    s = L.resolve_intercept_scaling(kind, method, intercept_scaling)
    if fit_intercept and not s > 0:
        raise ValueError(f"intercept_scaling must be > 0, got {s!r}")
    dn = L.augmented_norm(data_norm, fit_intercept, s)
    G = M.lipschitz(dn)
    c = min(L.auto_clip(kind, dn) if clip == "auto" else (G if clip is None else clip), G)
    fields = dict(common, method=method, optimiser=optimiser, noise=noise, calibration=calibration,
                  radius=radius, alpha=alpha, intercept_scaling=s, augmented_norm=dn, clip=c, lr=None)
    if optimiser == "sgd":
        q = opts["batch_size"] / n
        T = int(steps) if steps is not None else int(math.ceil(M.SGD_EPOCHS * opts["epochs"] / q))
        return FitPlan(**fields, steps=T, max_steps=max_steps, batch_size=opts["batch_size"],
                       epochs=M.SGD_EPOCHS * opts["epochs"], sample_rate=q, sgd_steps=T)
    if optimiser == "gd":
        budget = max_steps or (None if d is None else M.gd_budget(n, d + bool(fit_intercept), K))
        return FitPlan(**fields, steps=steps, max_steps=budget)
    return FitPlan(**fields, steps=steps, max_steps=max_steps or L.PGD_MAX_STEPS)


def plan_for(kind, X, *, sample_weight=None, n_classes=2, **params) -> FitPlan:
    """:func:`make_plan` for the data X (its public sizes and storage; no value of X is read)."""
    from .._validation import is_sparse
    from ..erm._dask import is_dask_collection

    return make_plan(kind, n=X.shape[0], d=X.shape[1], n_classes=n_classes, dtype=X.dtype, sparse=is_sparse(X),
                     chunked=is_dask_collection(X), weighted=sample_weight is not None, **params)


def fit_linear(kind, X, y, *, random_state, sample_weight=None, checked=False, row_norms=None, **params):
    """Fit one binary (or regression) model with the estimators' parameters ``params``: :func:`plan_for`,
    then :func:`fasterm.linear_model._rules.fit_binary`; returns ``(coef, intercept, result)``."""
    plan = plan_for(kind, X, sample_weight=sample_weight, **params)
    return _rules.fit_binary(plan, X, y, random_state=random_state, sample_weight=sample_weight, checked=checked,
                             row_norms=row_norms)

