"""The solver core's door for the estimators: the internal API that :mod:`fasterm.linear_model` calls.

The public solvers (:func:`fasterm.noisy_gd`, :func:`fasterm.noisy_sgd`,
:func:`fasterm.noisy_pgd`, ...) check their arguments on every call; the
estimators check them once, in their fit plan
(:func:`fasterm.linear_model._plan.make_plan`), and then run the core through
the names below.  Names without an underscore: this module is the one place
where the estimators reach into :mod:`fasterm.erm`, :mod:`fasterm.mechanisms`
and :mod:`fasterm.accounting` below the public API.  Not part of the
documented user API (it may change between releases); the flow estimator →
plan → core → kernel: docs/estimators.rst ("How a fit is decided").
"""

from __future__ import annotations

from . import optimize as _optimize
from . import solvers as _solvers

__all__ = ["fista", "gd_params", "gd_plan", "gd_run", "laplace_steps", "noisy_gd", "noisy_sgd", "pgd_bound",
           "pgd_steps", "register_cache", "sample_weights", "smoothness"]


def smoothness(loss, data_norm, label_bound, weight_bound=1.0) -> float:
    """β_L = B·β + l2 of ``loss`` for rows of norm ≤ ``data_norm`` and weights in [0, B] (public)."""
    return _solvers._smoothness(loss, data_norm, label_bound, weight_bound)


def gd_params(loss, constraint, epsilon, delta, steps, noise, data_norm, clip, label_bound, lr, accelerate, output,
              max_steps, calibration) -> dict:
    """:func:`fasterm.noisy_gd`'s parameter checks (before any data check): the checked values."""
    return _solvers._gd_params(loss, constraint, epsilon, delta, steps, noise, data_norm, clip, label_bound, lr,
                               accelerate, output, max_steps, calibration)


def gd_plan(loss, constraint, n, weight_bound, params) -> dict:
    """Everything :func:`fasterm.noisy_gd` derives from public numbers for n rows and the weight bound
    (``params`` from :func:`gd_params`): smoothness, clip level, sensitivity, step, T, calibration."""
    return _solvers._gd_plan(loss, constraint, n, weight_bound, params)


def gd_run(loss, constraint, plan, X, y, rng, weights):
    """The steps of :func:`fasterm.noisy_gd` on checked X and y as ``plan`` (:func:`gd_plan`) says."""
    return _solvers._gd_run(loss, constraint, plan, X, y, rng, weights)


def noisy_gd(loss, X, y, constraint, epsilon, delta, steps, noise, *, calibration, lr, max_steps, accelerate,
             output, checked, data_norm, clip, random_state, label_bound, sample_weight, weight_bound):
    """:func:`fasterm.noisy_gd` with ``checked`` (X and y validated by the caller)."""
    return _solvers._noisy_gd(loss, X, y, constraint, epsilon, delta, steps, noise, data_norm, clip, random_state,
                              label_bound=label_bound, lr=lr, accelerate=accelerate, output=output,
                              max_steps=max_steps, calibration=calibration, sample_weight=sample_weight,
                              weight_bound=weight_bound, checked=checked)


def noisy_sgd(loss, X, y, constraint, epsilon, delta, steps, **kwargs):
    """:func:`fasterm.noisy_sgd` with the core's options: ``intercept=(row bound, s)`` (X raw, the design
    rows built per minibatch), ``checked`` and ``row_norms`` (X validated by the caller)."""
    return _solvers._noisy_sgd(loss, X, y, constraint, epsilon, delta, steps, **kwargs)


def sample_weights(sample_weight, weight_bound, n, chunked=False):
    """(checked weights in [0, B] or None, the sensitivity factor B; 1 without weights)."""
    return _optimize._sample_weights(sample_weight, weight_bound, n, chunked)


def pgd_bound(R, G, noise_sq, T):
    """(Theorem 2's bound R·G_eff/√T, its step size R/(G_eff·√T)) of noisy PGD (:mod:`fasterm.erm.optimize`)."""
    return _optimize._bound_for(R, G, noise_sq, T)


def pgd_steps(noise, calibration, sens, dim, epsilon, delta, R, G, max_steps) -> int:
    """noisy PGD's default T: the minimiser of Theorem 2's bound over 1..``max_steps``."""
    return _optimize._default_steps(noise, calibration, sens, dim, epsilon, delta, R, G, max_steps)


def laplace_steps(beta, lr, R, sens, d, eps, delta, calibration, max_steps) -> int:
    """noisy GD's T for Laplace noise: the minimiser of Theorem A's bound within the budget."""
    return _solvers._laplace_steps(beta, lr, R, sens, d, eps, delta, calibration, max_steps)


def fista(steps):
    """FISTA's momentum sequence β_t for ``steps`` steps (Beck & Teboulle 2009)."""
    return _solvers._fista(steps)


def register_cache(clear) -> None:
    """Register the ``clear()`` of a memo of public calibrations kept above the core, so that
    clearing the calibration caches (a "cold" fit) clears it too."""
    _optimize._CACHE_CLEARERS.append(clear)
