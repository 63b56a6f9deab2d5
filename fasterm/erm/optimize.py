"""Projected gradient descent, non-private and private (Stemmer, lecture 10).

Problem: minimise L(w; S) = (1/n) Σ ℓ(w; x_i, y_i) + Λ(w) over a convex set C.

**Theorem 1** (lecture 10).  If L is convex and G-Lipschitz on C and C has
diameter R, projected gradient descent with step η run for T steps satisfies,
for ŵ the average of the T points at which gradients were taken,

    L(ŵ) − L(w*) ≤ η G²/2 + R²/(2ηT),  which is R·G/√T at η = R/(G√T).

**Theorem 2** (lecture 10, exact form of its proof).  If each gradient is
replaced by g̃_t = g_t + h_t with independent zero-mean noise,

    E[L(ŵ) − L(w*)] ≤ η G_eff²/2 + R²/(2ηT),  G_eff² = G² + E‖h_t‖²,

minimised by η = R/(G_eff √T) at the value R·G_eff/√T.  These are the bounds
reported as ``utility_bound``.

Privacy (the noise table and its theorems: docs/guarantees.rst, "Noisy
projected gradient descent").  Under replace-one neighbours the averaged
gradient has L2 sensitivity Δ₂ = 2G/n (2c/n with per-example clipping at c;
the kernels clip at c/(1 + Θ), :mod:`fasterm.erm._float_margin`); every step
releases one noisy gradient, the rest is post-processing.  Clipping at c < G
is noisy PGD on the c-Lipschitz Huberized surrogate (Song, Thakkar & Thakurta
2020, arXiv:2006.06783), for which Theorem 2 holds:
``info["surrogate_utility_bound"]`` (``utility_bound`` is None unless c ≥ G).
Defaults (steps, step size) depend only on n, d, ε, δ and the declared bounds.

Secure mode (:mod:`fasterm.mechanisms.secure`): each step releases
γ·(round(ḡ_t/γ) + Z_t), Z_t exact discrete noise, with the rounding-enlarged
sensitivity Δ₂,grid ≤ Δ₂/γ + √d; Gaussian noise through zCDP.  The rounding
bias b = √d·γ/2 gives the reported bound
η((G + b)² + E‖h‖²)/2 + R²/(2ηT) + R·b.

Structure: calibrations in :mod:`fasterm.accounting`
(:func:`~fasterm.accounting.calibrate_steps`), the step loop in
:mod:`fasterm.erm._engine` (in memory or over dask row chunks, :mod:`fasterm.erm._dask`),
the noise backend in :mod:`fasterm.erm._backends`; this module checks the
parameters, picks T and η from Theorem 2 and reports the result.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

import fasterm.erm._backends as _backends
import fasterm.erm._dask as _dask
import fasterm.erm._engine as _engine
import fasterm.accounting as accounting
import fasterm.erm.constraints as _constraints
import fasterm.erm.losses as _losses_mod
import fasterm._warnings as _warnings
from .._validation import (
    check_delta,
    check_derived,
    check_epsilon,
    check_positive,
    check_sample_weight,
    check_scalar,
    check_X_y,
    derived_from,
)
from ..accounting import noise_scale  # noqa: F401 - public here (the calibration lives in accounting)

__all__ = ["OptimizeResult", "noisy_pgd", "pgd", "noise_scale"]

_NOISES = accounting.STEP_NOISES
_CALIBRATIONS = accounting.STEP_CALIBRATIONS
_USER_SCALES = ("epsilon", "delta", "data_norm", "clip", "label_bound", "steps", "weight_bound")


@dataclass
class OptimizeResult:
    """What an optimiser returns.

    Attributes
    ----------
    w : ndarray, the solution (in C).
    epsilon, delta : the privacy actually spent ((inf, 1.0)... for non-private
        ``pgd``: ``epsilon = inf``, ``delta = 1``, i.e. no guarantee).  For Gaussian
        noise, the smallest ε whose δ(ε; μ) ≤ δ (:func:`fasterm.accounting.gaussian_epsilon`):
        0.0 when δ covers the noise alone, δ ≥ δ(0; μ) = 2Φ(μ/2) − 1 (Dong, Roth & Su 2022,
        Cor. 2.13 at ε = 0), as for a negligible ε asked (1e-300): the release is (0, δ)-DP.
    steps, lr : the number of gradient steps T and the step size η used.
    noise, calibration, noise_scale : the noise family, its calibration and the
        per-coordinate scale (Laplace b or Gaussian σ; 0 for ``pgd``).
    lipschitz : G used for Δ₂ and the bound; sensitivity : the per-step L2
        sensitivity Δ₂ = 2G/n of the averaged gradient (None for ``pgd``).
    noise_norm_sq : E‖h_t‖² per step.
    utility_bound : Theorem 1/2's bound on (expected) excess empirical risk for
        the parameters used, or None when it does not apply (per-example
        clipping below the Lipschitz constant changes the objective).
    """

    w: np.ndarray
    epsilon: float
    delta: float
    steps: int
    lr: float
    noise: str | None = None
    calibration: str | None = None
    noise_scale: float = 0.0
    lipschitz: float = 0.0
    sensitivity: float | None = None
    noise_norm_sq: float = 0.0
    utility_bound: float | None = None
    info: dict = field(default_factory=dict, repr=False)


def _is_classification(loss) -> bool:
    """A binary classification loss (Logistic, Hinge): each label in {−1, 0, +1} (0, −1: negative)."""
    return bool(getattr(loss, "_uses_labels", False)) and not getattr(loss, "_regression", True)


def _check_loss_and_constraint(loss, constraint):
    if not isinstance(loss, _losses_mod._LinearModelLoss):
        raise TypeError(f"loss must be a fasterm.losses loss (e.g. Logistic()), got {type(loss).__name__}")
    if not isinstance(constraint, _constraints.Constraint):
        raise TypeError(f"constraint must be a fasterm feasible set (L2Ball, Box, Simplex, L1Ball), "
                        f"got {type(constraint).__name__}")


def _norm_bound(constraint) -> float:
    """max_{w∈C} ‖w‖₂ — the R that the loss constants of ``fasterm.losses`` use."""
    return float(constraint.norm_bound)


def _reg_lipschitz(loss, constraint) -> float:
    """Lipschitz constant on C of the data-independent regularizer's gradient term."""
    return float(loss.l2) * _norm_bound(constraint)


def pgd(loss: _losses_mod._LinearModelLoss, X: np.typing.ArrayLike, y: np.typing.ArrayLike | None,
        constraint: _constraints.Constraint, steps: int, lr: float | None = None,
        average: bool = True) -> OptimizeResult:
    """Non-private projected gradient descent (Theorem 1 of lecture 10).

    Starts at ``constraint.center`` (data independent), takes ``steps`` steps
    w_t = Π_C(w_{t−1} − η ∇L(w_{t−1})) and returns the average of the points
    w_0 … w_{T−1} at which gradients were taken (the point Theorem 1 bounds),
    or the last iterate w_T if ``average=False``.

    Default η = R/(G√T) with R = diam(C) and G the Lipschitz constant on C
    computed from the data (max row norm and label; this is not private —
    use :func:`noisy_pgd` for a private model).  The result's
    ``utility_bound`` is R·G/√T·(η-form of Thm 1 when ``lr`` is given).
    """
    _check_loss_and_constraint(loss, constraint)
    X, y = check_X_y(X, y, y_required=False, classification=_is_classification(loss))
    steps = check_scalar(steps, "steps", low=1, integer=True)
    if X.shape[1] != constraint.dim:
        raise ValueError(f"X has {X.shape[1]} columns but constraint has dim {constraint.dim}")
    x_max = float(_losses_mod.row_norms(X).max())
    y_max = float(np.abs(y).max()) if y is not None else 0.0
    G = float(loss.lipschitz(max(x_max, 1e-300), label_bound=max(y_max, 1e-300),
                             radius=_norm_bound(constraint)))
    G += _reg_lipschitz(loss, constraint)
    R = float(constraint.diameter)
    if lr is None:
        lr = R / (G * math.sqrt(steps)) if G > 0 and R > 0 else 0.0
        # Near-zero data make G tiny and η huge: cap η where -η still fits X's
        # dtype (float32: 1.8e19), or 0·(-inf) = NaN in the step.  Theorem 1's
        # bound below is computed for the η actually used.
        lr = min(lr, math.sqrt(float(np.finfo(X.dtype).max)))
    else:
        lr = check_positive(lr, "lr")
    w = _engine.run(loss, X, y, constraint, steps, lr, average, data_norm=None, clip=None,
                    noise=_backends.NoNoise())
    bound = lr * G * G / 2 + (R * R / (2 * lr * steps) if lr > 0 else (0.0 if R == 0 else math.inf))
    return OptimizeResult(w=w, epsilon=math.inf, delta=1.0, steps=steps, lr=lr, lipschitz=G,
                          utility_bound=bound if average else None)


def _bound_for(R, G, noise_sq, T):
    """(Theorem 2's bound R·G_eff/√T, its step size R/(G_eff √T))."""
    g_eff = math.hypot(G, math.sqrt(noise_sq))
    if g_eff == 0.0:  # no gradient and no noise: any step is optimal
        return 0.0, R / math.sqrt(T)
    return R * g_eff / math.sqrt(T), R / (g_eff * math.sqrt(T))


@functools.lru_cache(maxsize=256)
def _default_steps(noise, calibration, sens, dim, epsilon, delta, R, G, max_steps):
    """T minimising Theorem 2's bound R·G_eff(T)/√T over 1..max_steps.

    Evaluated on a geometric grid (the bound is unimodal in T for every
    calibration); among grid points within 1% of the best bound the smallest
    T is taken, since more steps cost time and buy under 1% of bound.  A pure
    function of public numbers, so repeated fits of one configuration reuse it.
    """
    grid = sorted({int(round(t)) for t in np.geomspace(1, max_steps, 64)} | {max_steps})
    noise_sq_of = accounting.noise_sq_of_steps(noise, calibration, sens, dim, epsilon, delta)
    bounds = [_bound_for(R, G, noise_sq_of(T), T)[0] for T in grid]
    best = min(bounds)
    for T, b in zip(grid, bounds):
        if b <= best * 1.01:
            return T
    return grid[-1]  # pragma: no cover - the loop always returns


#: ``clear()`` callables of the memos kept by the modules above this one (noisy_gd's
#: calibration, the estimators' plans and parameter checks), which register them on import.
_CACHE_CLEARERS: list = []


def _clear_calibration_caches():
    """Forget every cached calibration and plan (for timing a first, "cold" fit)."""
    _default_steps.cache_clear()
    for clear in _CACHE_CLEARERS:
        clear()
    accounting.clear_caches()


def _check_private_params(loss, constraint, epsilon, delta, noise, data_norm, clip, label_bound, lr,
                          calibration=None):
    """The parameter checks every private first-order solver starts with (before any data check)."""
    _check_loss_and_constraint(loss, constraint)
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if noise not in _NOISES:
        raise ValueError(f"noise must be one of {_NOISES}, got {noise!r}")
    if noise == "gaussian" and delta > 0.0:
        eps = accounting.check_gaussian_epsilon(eps)  # at most GAUSSIAN_EPSILON_CAP
    if calibration is not None and calibration not in _CALIBRATIONS:
        raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}")
    if data_norm is None:
        raise ValueError("data_norm (the public bound on ‖x_i‖₂) is required for a private fit")
    data_norm = check_positive(data_norm, "data_norm")
    if label_bound is not None:
        label_bound = check_positive(label_bound, "label_bound")
    if clip is not None:
        clip = check_positive(clip, "clip")
    if lr is not None:
        lr = check_positive(lr, "lr")
    return eps, delta, data_norm, clip, label_bound, lr


def _sample_weights(sample_weight, weight_bound, n, chunked=False):
    """(weights or None, the factor B of the sensitivity): B = 1 without weights.

    The weights are checked and mapped into [0, B] by
    :func:`fasterm._validation.check_sample_weight`; unweighted fits ignore
    ``weight_bound`` (every record then has weight 1).
    """
    check_positive(weight_bound, "weight_bound")  # checked even when unused
    if sample_weight is None:
        return None, 1.0
    if chunked:
        raise ValueError("sample_weight is not supported for a dask X (fit in memory, or without weights)")
    return check_sample_weight(sample_weight, n, weight_bound)


def noisy_pgd(loss: _losses_mod._LinearModelLoss, X: np.typing.ArrayLike, y: np.typing.ArrayLike | None,
              constraint: _constraints.Constraint, epsilon: float, delta: float = 0.0,
              steps: int | None = None, noise: str = "laplace", calibration: str = "l2",
              data_norm: float | None = None, clip: float | None = None,
              random_state: None | int | np.random.Generator | str = None, *,
              label_bound: float | None = None, lr: float | None = None, average: bool = True,
              max_steps: int = 1000, secure: bool | None = None, granularity: float | None = None,
              client: object = None, sample_weight: np.typing.ArrayLike | None = None,
              weight_bound: float = 1.0) -> OptimizeResult:
    """Differentially private projected gradient descent (Stemmer lecture 10).

    Parameters
    ----------
    loss : a :mod:`fasterm.losses` instance (its ``l2`` regularizer is data
        independent and adds no sensitivity).
    X, y : data, (n, d) and (n,); float32 or float64 (X's dtype is kept).
        Rows with ‖x_i‖ > ``data_norm`` are scaled to norm ``data_norm`` and
        labels clipped to [−label_bound, label_bound] inside the kernels —
        never rejected, never used to choose a bound.  X may be a
        ``scipy.sparse`` CSR matrix or array (int32/int64 indices; other
        sparse formats raise ``TypeError``: pass ``X.tocsr()``): the
        compiled CSR kernel (:mod:`fasterm.erm._sparse`) reads its stored values
        only, never a dense copy, with the dense kernel's per-row calculus;
        the result equals the fit on ``X.toarray()`` for the same seed up to
        the rounding of the sums over each row (the same noise, T and η).
    constraint : a feasible set (:mod:`fasterm.erm.constraints`).
    epsilon, delta : the privacy budget; ``delta = 0`` needs
        ``noise="laplace", calibration="pure"`` or ``"l2"`` (which then is pure).
    steps : T; default chosen from Theorem 2's bound (see ``max_steps``).
    noise : "laplace" or "gaussian"; calibration : "pure", "coordinate", "l2"
        for Laplace (ignored for Gaussian except that it must be one of them).
    data_norm : the declared public bound X on ‖x_i‖₂ (required).
    clip : per-example gradient clipping norm c; then G = c in Δ₂ = 2c/n, and
        the default T and η are those of the c-Lipschitz Huberized surrogate
        (module docstring).
    label_bound : the declared bound Y on |y_i| (regression losses).
    lr : step size; default R/(G_eff √T), the minimiser of Theorem 2's bound.
    max_steps : the compute budget for the default T (raise it for more
        accuracy when the noise allows).
    secure : None (the :func:`fasterm.secure_mode` setting), True or False:
        exact discrete noise on a power-of-two grid (module docstring);
        ``random_state`` may then also be ``"os"``.  ``granularity``: the
        grid spacing γ (a power of two; default from Δ₂ and d,
        :func:`fasterm.mechanisms.secure.default_granularity`); ``info["secure"]`` holds
        the calibration.
    client : where a ``dask.array`` X runs (``pip install "fasterm[dask]"``): a
        ``dask.distributed.Client``, a scheduler address such as
        ``"tcp://host:8786"``, or None for the default client if one is
        running and dask's local scheduler otherwise.  Unused for numpy X.
        X must be chunked along rows; each step maps the compiled gradient
        sum over the chunks on the workers and adds the noise once at the
        client (:mod:`fasterm.erm._dask`), so the result, the noise stream and
        the privacy spent are those of the in-memory call (secure mode
        included).
    sample_weight : None, or n weights: the objective becomes
        (1/n) Σ w_i ℓ(w; x_i, y_i) + Λ(w) (normalised by the public n, not
        by Σ w_i).  Each weight is mapped to the declared public range
        [0, ``weight_bound``] (NaN ↦ 0; never refused,
        :func:`fasterm._validation.check_sample_weight`).  Not for a dask X.
    weight_bound : B > 0, the declared bound on the weights (used only with
        ``sample_weight``).  **Weighted sensitivity.**  The record is the
        triple (x_i, y_i, w_i); its contribution w_i·ĝ_i, ĝ_i the gradient
        clipped at c, has norm ≤ B·c, so replacing one record moves the
        gradient sum by at most 2Bc: Δ₂ = 2B·c/n, and every calibration
        above applies with this Δ₂ (G is replaced by B·G, the Lipschitz
        constant of the weighted loss, in T, η and Theorem 2).  With
        ``sample_weight=np.ones(n)`` and B = 1 the fit is bit for bit the
        unweighted one.

    Returns
    -------
    An :class:`OptimizeResult` with the (ε, δ) spent, the noise
    scale, T, η, Δ₂, E‖h‖² and Theorem 2's bound.
    """
    eps, delta, data_norm, clip, label_bound, lr = _check_private_params(
        loss, constraint, epsilon, delta, noise, data_norm, clip, label_bound, lr,
        calibration=calibration)
    if delta == 0.0 and (noise == "gaussian" or calibration == "coordinate"):
        raise ValueError(f"delta must be > 0 for noise={noise!r}, calibration={calibration!r}")
    max_steps = check_scalar(max_steps, "max_steps", low=1, integer=True)
    if steps is not None:
        steps = check_scalar(steps, "steps", low=1, integer=True)
    # The noise backend, chosen once: float noise, or secure mode's exact grid (module docstring).
    backend = _backends.for_fit(secure, noise, calibration, random_state, granularity)
    client = _dask.check_client(client)
    # A dask X is checked from its metadata: check_X_y would pull it to the client.
    chunked = _dask.is_dask_collection(X)
    X, y = _dask.check_X_y(X, y) if chunked else check_X_y(X, y, y_required=False, accept_sparse=True,
                                                           classification=_is_classification(loss))
    n, d = X.shape
    if d != constraint.dim:
        raise ValueError(f"X has {d} columns but constraint has dim {constraint.dim}")
    weights, wb = _sample_weights(sample_weight, weight_bound, n, chunked)
    _warnings.warn_large_delta(delta, n, "noisy_pgd")  # n unknown (dask chunks): no warning

    R = float(constraint.diameter)
    G_loss = float(loss.lipschitz(data_norm, label_bound=label_bound, radius=_norm_bound(constraint)))
    G_clip = G_loss if clip is None else min(clip, G_loss)
    # Weighted records contribute w_i·(clipped gradient), of norm ≤ B·c (docstring).
    G_priv = wb * G_clip
    sens = 2.0 * G_priv / n
    # Clipped below G, the steps are those of the c-Lipschitz Huberized
    # surrogate (module docstring): its constant sets the default T and η.
    G_bound = G_priv + _reg_lipschitz(loss, constraint)

    # absurd bounds: name the caller's parameters (the backend's own, e.g. the grid spacing, too)
    names = _USER_SCALES + backend.parameters
    scales = ", ".join(names[:-1]) + " and " + names[-1]
    with derived_from(scales):
        if steps is None:
            steps = _default_steps(noise, calibration, sens, d, eps, delta, R, G_bound, max_steps)
        cal = backend.calibrate(sens, d, steps, eps, delta)
        scale, noise_sq, bias = cal.noise_scale, cal.noise_sq(d), cal.bias_norm(d)
        if lr is None:
            lr = _bound_for(R, G_bound + bias, noise_sq, steps)[1] if R > 0 else 0.0
        # One step moves w by at most lr·(G + ‖h‖), ‖h‖ < 64·scale·√d (noise.py): keep it finite.
        check_derived(1.0 + lr * (G_bound + bias + 64.0 * scale * math.sqrt(d)), "the largest step",
                      "lr, " + scales)

    # Clip per-example gradients at G_clip even when the user gave no clip: for
    # iterates in C it never binds (‖∇ℓ‖ ≤ G there), but it makes Δ₂ = 2G/n hold
    # by construction, rounding of the projection included.
    run = functools.partial(_dask.run, client=client) if chunked else _engine.run
    extra = {} if weights is None else {"weights": weights, "weight_bound": wb}
    w = run(loss, X, y, constraint, steps, lr, average, data_norm=data_norm, clip=G_clip,
            label_bound=label_bound, noise=backend, **extra)

    bound = surrogate_bound = None
    if average and lr > 0:
        surrogate_bound = lr * ((G_bound + bias)**2 + noise_sq) / 2 + R * R / (2 * lr * steps) + R * bias
        if clip is None or clip >= G_loss:
            bound = surrogate_bound
    return OptimizeResult(
        w=w, epsilon=cal.epsilon, delta=cal.delta, steps=steps, lr=lr, noise=noise,
        calibration=None if noise == "gaussian" else calibration, noise_scale=scale,
        lipschitz=G_priv, sensitivity=sens, noise_norm_sq=noise_sq, utility_bound=bound,
        info={"n": n, "d": d, "diameter": R, "lipschitz_loss": G_loss,
              "surrogate_utility_bound": surrogate_bound,
              "secure": backend.secure_calibration,
              "weight_bound": None if weights is None else wb},
    )
