"""The fit shared by the scikit-learn estimators and ``python -m fasterm`` (numpy only).

:mod:`fasterm.linear_model` wraps :func:`fit_linear` in scikit-learn
estimators (and validates their parameters there, once); the main job calls it
directly so that it runs without scikit-learn.  The public bounds and the
defaults chosen from them are documented here once.

Pipeline of one fit (``method="noisy_pgd"``)
--------------------------------------------
1. Rows are clipped to the declared ``data_norm`` X (x ↦ x·min(1, X/‖x‖)), and,
   with ``fit_intercept``, a constant column ``intercept_scaling`` s is
   appended: the augmented rows have norm ≤ X_aug = √(X² + s²), and the
   parameter ball of radius ``radius`` constrains (coef, intercept/s) jointly.
2. Per-example gradients are clipped at ``clip`` c (``"auto"``: below), so
   the averaged gradient has L2 sensitivity 2c/n under replace-one
   neighbours; for a linear model this is noisy PGD on the c-Lipschitz
   Huberized surrogate of the loss (Song, Thakkar & Thakurta 2020; see
   :mod:`fasterm.optimize`), still convex, and for classification still
   classification-calibrated (a convex margin loss with negative derivative at
   0, Bartlett, Jordan & McAuliffe 2006, Thm 6).
3. :func:`fasterm.noisy_pgd` with the chosen noise and calibration, T steps
   (default: Theorem 2's rule with the compute budget ``max_steps``), η from
   Theorem 2, the average of the iterates returned.  The privacy spent is the
   result's (ε, δ); nothing else touches the data.

``clip="auto"`` (public: depends on X_aug and Y only)
    logistic  c = X_aug·σ(−1) = X_aug/(1 + e) ≈ 0.27·X_aug: the gradient norm of a
              full-norm row at margin 1, so gradients are clipped exactly where the
              hinge loss would be active and the surrogate behaves like a smooth hinge;
    hinge     c = X_aug/2;
    squared   c = Y·X_aug/2: a full-norm row is clipped once its residual exceeds Y/4.
    Smaller c means less noise (σ ∝ c) and more examples clipped.  These values
    come from the reasoning above and were compared with c = X_aug/2, 0.35·X_aug,
    X_aug/4 and no clipping on a synthetic problem and on scikit-learn's
    *digits* data (pixels in the public range [0, 16]); clipping at any of
    these levels beat no clipping, and for the hinge loss the result is nearly
    independent of c (clipped hinge gradients are scale-free).  The
    breast-cancer accuracies were printed alongside during that comparison, so
    the README's figures are development-set figures, not a held-out test.

Defaults (their meaning; none depends on data values)
    ``epsilon=1.0, delta=1e-5``; ``delta=0`` needs ``noise="laplace"`` with
    calibration ``"pure"`` or ``"l2"`` (then the fit is (ε, 0)-DP).
    ``data_norm=1.0``: rows are assumed (and clipped) to ‖x‖₂ ≤ 1 — scale the
    features with public bounds first (:func:`fasterm.datasets.scale_to_unit_ball`).
    ``intercept_scaling=0.25``: the constant column; it adds 3% to the row norm
    at X = 1 (√(1 + 0.25²) = 1.031) and allows |intercept| ≤ 0.25·radius.
    ``radius=50`` (classifiers), ``5`` (regression): the L2 bound on
    (coef, intercept/s).  For logistic and hinge losses the noise does not
    depend on the radius (G = X); it sets the step size (η ∝ R) and how
    confident the model may become (|logit| ≤ R·X_aug).  For the squared
    loss a large radius makes η exceed the curvature's stability limit, hence 5.
    ``alpha=1e-4``: data-independent L2 regularization α/2·‖w‖² (scikit-learn's
    SGD default).  ``max_steps=100``: compute budget of the default T (with the
    step size of the clipped surrogate, accuracy on the comparison data did not
    change between 100 and 400 steps; Theorem 2's bound improves only as
    √(1 + a/T) → 1 with a = n²μ²/(4d) for Gaussian noise, μ the GDP parameter).
"""

from __future__ import annotations

import math

import numpy as np

from . import _dask, expmech
from . import losses as _losses_mod
from ._design import design
from .constraints import L2Ball
from .optimize import noisy_pgd
from .secure import resolve as resolve_secure

__all__ = ["KINDS", "auto_clip", "design", "fit_linear"]

KINDS = ("logistic", "hinge", "squared")

# Defaults shared by the estimators and the main job (see the module docstring).
DEFAULTS = dict(
    epsilon=1.0, delta=1e-5, data_norm=1.0, alpha=1e-4, fit_intercept=True,
    intercept_scaling=0.25, method="noisy_pgd", noise="gaussian", calibration="l2",
    clip="auto", steps=None, max_steps=100,
)
DEFAULT_RADIUS = {"logistic": 50.0, "hinge": 50.0, "squared": 5.0}


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
    """``method="expmech"``: the exponential mechanism (SPEC §4.2) by :func:`fasterm.expmech_erm`.

    Samples w ∝ exp(−ε·n·L(w)/(2Δ)) on the parameter ball; pure ε-DP when
    exact, (ε, δ_TV) for the hit-and-run chain (see its docstring).
    """
    return expmech.expmech_erm(loss, X, y, constraint, epsilon, data_norm=data_norm, steps=steps,
                               random_state=random_state, label_bound=label_bound)


def fit_linear(kind, X, y, *, epsilon, delta, data_norm, radius, alpha, fit_intercept,
               intercept_scaling, method, noise, calibration, clip, steps, max_steps,
               random_state, label_bound=None, secure=None):
    """Fit one private linear model; returns ``(coef, intercept, result)``.

    ``kind``: "logistic", "hinge" (y in {−1, +1}; the kernels read y > 0 as
    +1) or "squared" (|y| ≤ ``label_bound``, clipped).  ``coef`` has X's
    dtype and shape (d,); ``intercept`` is a float (0.0 without intercept);
    ``result`` is the :class:`fasterm.OptimizeResult` with the (ε, δ) spent.
    Parameters are those of the estimators (module docstring); callers
    validate them.
    """
    loss = make_loss(kind, alpha, label_bound)
    A = design(X, data_norm, fit_intercept, intercept_scaling)
    dn = augmented_norm(data_norm, fit_intercept, intercept_scaling)
    ball = L2Ball(radius, A.shape[1])
    if method == "expmech":
        if resolve_secure(secure):
            raise ValueError("secure=True needs method='noisy_pgd' (the exponential-mechanism "
                             "sampler has no floating-point-safe mode)")
        if _dask.is_dask_collection(X):
            raise ValueError("method='expmech' needs X in memory; dask arrays are fitted with "
                             "method='noisy_pgd'")
        result = _fit_expmech(loss, A, y, ball, epsilon, data_norm=dn, steps=steps,
                              random_state=random_state, label_bound=label_bound)
    else:
        c = auto_clip(kind, dn, label_bound) if clip == "auto" else clip
        result = noisy_pgd(loss, A, y, ball, epsilon, delta=delta, steps=steps, noise=noise,
                           calibration=calibration, data_norm=dn, clip=c,
                           random_state=random_state, label_bound=label_bound,
                           max_steps=max_steps, secure=secure)
    w = np.asarray(result.w)
    d = X.shape[1]
    coef = w[:d].astype(X.dtype, copy=True)
    intercept = float(w[d]) * intercept_scaling if fit_intercept else 0.0
    return coef, intercept, result
