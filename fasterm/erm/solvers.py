"""Private solvers for smooth losses: noisy gradient descent and noisy minibatch SGD.

Both drive the step loop of :mod:`fasterm.erm._engine` with a float noise backend
(:class:`fasterm.erm._backends.FloatNoise`); what is new here is the step rule
(1/β from the loss's smoothness), the momentum, the default T and, for SGD,
the sampling and its accounting.  The guarantees in full, with the proofs:
docs/guarantees.rst ("Noisy gradient descent", "Noisy minibatch SGD"); the
default rule and the experiments behind it: docs/solvers.rst.

Problem: minimise L(w; S) = (1/n) Σ ψ_i(w) + l2/2·‖w‖² over a convex set C,
ψ_i the loss of example i with its gradient clipped at c (a Huberized
surrogate; Song, Thakkar & Thakurta 2020, :mod:`fasterm.erm.optimize`).  If
φ'' ≤ b (logistic 1/4, squared 2), L is β_L = b·X² + l2 smooth
(:meth:`fasterm.erm.losses.Logistic.smoothness`; clipping keeps ψ_i' b-Lipschitz).

**Theorem A** (projected noisy gradient descent on a smooth convex function;
e.g. Bubeck 2015, Thm. 6.3, with its constants).  Let L be convex and
β_L-smooth on C, w_0 ∈ C, w_{t+1} = Π_C(w_t − η(∇L(w_t) + h_t)) with
η ≤ 1/β_L and h_t independent, zero-mean, E‖h_t‖² ≤ s².  For every w* ∈ C and
w̄ = (1/T) Σ_{t=1}^{T} w_t

    E L(w̄) − L(w*) ≤ ‖w_0 − w*‖²/(2ηT) + η s².

Reported as ``utility_bound`` with η = 1/β_L and ‖w_0 − w*‖ ≤ R.

:func:`noisy_gd`: each step releases the averaged clipped gradient plus
N(0, σ²I), Δ₂ = 2c/n (replace-one); T steps are exactly μ-GDP, μ = √T·Δ₂/σ
(Dong, Roth & Su 2022, Thm. 2.7, Cor. 3.3; σ from
:func:`fasterm.accounting.calibrate_gaussian`); step, projection and momentum
are post-processing.  Default T = min(T*, ``max_steps``),
T* = β_L R μ/(Δ₂ √(2d)) the minimiser of Theorem A's bound.

:func:`noisy_sgd`: Poisson sampling with public q, the clipped sum plus
N(0, σ²c²I), divided by the public expected batch size q·n (or ``batch_size``
under ``neighbors="add_remove"``, where n is private).  Privacy: the PLD of the
subsampled Gaussian's dominating pair composed over T (Zhu, Dong & Wang 2022,
Thm. 10; discretised pessimistically, Doroshenko et al. 2022), or its Rényi DP
(Mironov, Talwar & Zhang 2019; Balle et al. 2020, Thm. 21) where smaller —
:func:`fasterm.accounting.sgd_epsilon`, at δ less δ·2⁻²⁰ for a batch above the run's
cap (one clip per run: Lemma "one-sided margin" and Theorem "capped batches" of
docs/guarantees.rst).  Theorem A applies with
s² = (1 − q)c²/(qn) + dσ²c²/(qn)² (not reported under add/remove).  On a
dense X the whole run is one compiled call with the Python loop's bits for a
seed (:mod:`fasterm.erm._sgdrun`).
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

import fasterm.erm._backends as _backends
import fasterm.erm._dask as _dask
import fasterm.erm._engine as _engine
import fasterm.erm._float_margin as _float_margin
import fasterm.erm._sgdrun as _sgdrun
import fasterm.accounting as accounting
import fasterm.erm.optimize as _optimize
import fasterm.erm.constraints as _constraints
import fasterm.erm.losses as _losses_mod
import fasterm._warnings as _warnings
from ._design import _design_block
from .losses import _grad_sum_kernel, _row_norms_kernel
from .optimize import OptimizeResult, _check_private_params, _norm_bound, _reg_lipschitz, _sample_weights
from .._validation import (
    check_derived,
    check_array,
    check_random_state,
    check_scalar,
    check_X_y,
    is_sparse,
    derived_from,
)
from .._warnings import warn_cost

__all__ = ["noisy_gd", "noisy_sgd", "gd_default_steps"]

_OUTPUTS = ("last", "average")
_USER_SCALES = "epsilon, delta, data_norm, clip, label_bound, lr, steps and weight_bound"

#: The default compute budget of :func:`noisy_gd` (chosen in docs/solvers.rst).
GD_MAX_STEPS = 40
#: ``accelerate="auto"`` of :func:`noisy_gd` caps FISTA's momentum coefficient at
#: 1 − this × ν, ν = √(E‖h_t‖²)/c (no momentum from ν = 1/3 on; docs/solvers.rst).
MOMENTUM_CAP_SLOPE = 3.0
#: The one-vs-rest gd rule of :mod:`fasterm.linear_model._multiclass`: momentum when ν ≤ this (the binary
#: rule before the momentum cap; docs/solvers.rst).
ACCELERATE_BELOW = 0.2
#: Under add/remove neighbours, noisy SGD takes data sets of at most
#: SGD_ADD_REMOVE_ROOM·⌈batch_size/sample_rate⌉ rows, its domain (a public bound on the private
#: n: the batch-size cap of the float margin is computed from it, docs/guarantees.rst); a larger X
#: is refused.
SGD_ADD_REMOVE_ROOM = 64


def _add_remove_domain(sample_rate: float, batch_size: float) -> int:
    """N = ``SGD_ADD_REMOVE_ROOM``·⌈m/q⌉: the largest data set :func:`noisy_sgd` takes under
    ``neighbors="add_remove"`` (m = ``batch_size``, q = ``sample_rate``, both public).

    The mechanism is defined on data sets of at most N rows, and its (ε, δ) holds for
    every neighbouring pair inside that domain (docs/guarantees.rst, "The margin of
    Poisson-subsampled SGD"); a larger X is refused.  ``ValueError`` when N would not
    stay below 2⁵³ (not exactly an integer in double)."""
    if not SGD_ADD_REMOVE_ROOM * (batch_size / sample_rate) < 2.0 ** 53:
        raise ValueError(f"batch_size/sample_rate = {batch_size / sample_rate:.3g}: the public bound "
                         f"{SGD_ADD_REMOVE_ROOM}·batch_size/sample_rate on n (neighbors='add_remove') must stay "
                         "below 2**53")
    return SGD_ADD_REMOVE_ROOM * math.ceil(batch_size / sample_rate)


def _smoothness(loss, data_norm, label_bound, weight_bound=1.0):
    """β_L = B·β + l2: weights in [0, B] scale each loss term, and its curvature, by at most B."""
    if not hasattr(loss, "smoothness"):
        raise ValueError(f"{type(loss).__name__} loss is not smooth; use fasterm.noisy_pgd")
    beta = float(loss.smoothness(data_norm, label_bound=label_bound))
    if beta > 0.0 and weight_bound != 1.0:
        beta = check_derived(beta * weight_bound, "the weighted smoothness", "data_norm, label_bound and weight_bound")
    return beta + float(loss.l2)




def _check_output(output):
    if output not in _OUTPUTS:
        raise ValueError(f"output must be one of {_OUTPUTS}, got {output!r}")
    return output


def _privacy_constants(loss, constraint, data_norm, clip, label_bound):
    """(G of the loss on C, the clip level c = min(clip, G) the sensitivity uses)."""
    G_loss = float(loss.lipschitz(data_norm, label_bound=label_bound, radius=_norm_bound(constraint)))
    c = G_loss if clip is None else min(clip, G_loss)
    return G_loss, c


@functools.lru_cache(maxsize=256)
def gd_default_steps(beta: float, radius: float, sensitivity: float, dim: int, epsilon: float,
                     delta: float, max_steps: int = GD_MAX_STEPS) -> int:
    """The default T of :func:`noisy_gd` (Gaussian noise): min(T*, ``max_steps``), T* ≥ 1.

    T* = β R μ/(Δ₂ √(2d)) minimises Theorem A's bound β R²/(2T) + d T Δ₂²/(μ² β)
    (module docstring), μ = :func:`fasterm.accounting.gaussian_mu` (ε, δ).
    A pure function of public numbers (cached).
    """
    mu = accounting.gaussian_mu(epsilon, delta)
    t_star = beta * radius * mu / (sensitivity * math.sqrt(2.0 * dim))
    if not math.isfinite(t_star):
        return int(max_steps)
    return int(max(1, min(int(max_steps), math.ceil(t_star))))


def _start_distance(constraint) -> float:
    """A bound on ‖w_0 − w*‖ for w_0 = ``constraint.center`` and any w* ∈ C (Theorem A's R):
    the radius of an L2 ball (w_0 its centre), the diameter of any other set."""
    if isinstance(constraint, _constraints.L2Ball):
        return float(constraint.radius)
    return float(constraint.diameter)


def _prepare(loss, X, y, constraint, data_norm, c, label_bound, row_norms=None):
    """The start point, the kernel constants and the row norms (computed once per fit, or
    ``row_norms``, X's as the estimators' data check computed them) for X and y from
    :func:`fasterm._validation.check_X_y` (checked once, not again here)."""
    return loss._prepare(constraint.center.astype(X.dtype), X, y, clip=c, data_norm=data_norm,
                         row_norms=row_norms, label_bound=label_bound, accept_sparse=True, checked=True)


def noisy_gd(loss: _losses_mod._LinearModelLoss, X: np.typing.ArrayLike, y: np.typing.ArrayLike | None,
             constraint: _constraints.Constraint, epsilon: float, delta: float = 1e-5,
             steps: int | None = None, noise: str = "gaussian", data_norm: float | None = None,
             clip: float | None = None, random_state: None | int | np.random.Generator = None, *,
             label_bound: float | None = None, lr: float | None = None, accelerate: bool | str = False,
             output: str = "last", max_steps: int = GD_MAX_STEPS, calibration: str = "l2",
             sample_weight: np.typing.ArrayLike | None = None, weight_bound: float = 1.0) -> OptimizeResult:
    """Differentially private full-batch gradient descent for smooth losses.

    Parameters are those of :func:`fasterm.noisy_pgd` (``X``, ``y`` — X may
    be a scipy.sparse CSR matrix —, the declared ``data_norm`` and
    ``label_bound``, per-example ``clip``), and:

    steps : T; default min(T*, ``max_steps``) with T* the minimiser of
        Theorem A's bound (:func:`gd_default_steps`; Laplace noise uses the
        same rule with its own noise level).
    lr : step size; default 1/β_L, β_L = ``loss.smoothness(data_norm)`` + l2
        (module docstring) — the largest step Theorem A covers.  Losses
        without ``smoothness`` (hinge, absolute) are rejected; for the linear
        loss (β = 0) give ``lr``.
    accelerate : Nesterov/FISTA momentum (the query point
        y_t = w_t + (k_{t−1} − 1)/k_t·(w_t − w_{t−1}), post-processing of the
        releases, so the privacy is unchanged).  Theorem A does not cover it:
        ``utility_bound`` is then None.  ``"auto"``: FISTA's coefficient
        capped at 1 − 3ν, ν = √(E‖h_t‖²)/c the noise per step against the
        clipped gradients (public: σ√d/c = 2√(Td)/(nμ) for Gaussian noise),
        so no momentum from ν = 1/3 on (``MOMENTUM_CAP_SLOPE``); momentum
        accumulates noise (why this cap: docs/solvers.rst, "Momentum against
        the noise ratio").  ``info["accelerate"]`` says whether
        momentum was used.
    output : "last" (w_T, the default) or "average" (the mean of
        w_1 … w_T, the point Theorem A bounds; with momentum, of the query
        points y_1 … y_{T−1} and w_T).  The steps run in the gradient engine
        (:mod:`fasterm.erm._engine`): in its compiled loop with float noise,
        around the compiled gradient sum in secure mode.
    sample_weight, weight_bound : per-record weights, mapped into the
        declared range [0, B] (as in :func:`fasterm.noisy_pgd`): the
        objective is (1/n) Σ w_i ψ_i + Λ, its smoothness B·β + l2 (the
        default step), and Δ₂ = 2B·c/n.

    Privacy: (ε, δ)-DP under replace-one neighbours — T Gaussian releases of
    sensitivity Δ₂ = 2c/n (2B·c/n with weights), μ-GDP with μ = √T·Δ₂/σ (Dong, Roth & Su 2022),
    σ from :func:`fasterm.accounting.calibrate_gaussian`; or Laplace noise
    calibrated as by :func:`fasterm.noisy_pgd` (``calibration``).  The result's
    ``epsilon``/``delta`` are what was spent.  Floating point: the kernels clip at
    c/(1 + Θ), Θ the proven relative rounding excess of a release
    (:mod:`fasterm.erm._float_margin`, docs/guarantees.rst "Floating point"), so Δ₂
    holds for the computed pre-noise vector, float32 and float64.
    """
    return _noisy_gd(loss, X, y, constraint, epsilon, delta, steps, noise, data_norm, clip, random_state,
                     label_bound=label_bound, lr=lr, accelerate=accelerate, output=output,
                     max_steps=max_steps, calibration=calibration, sample_weight=sample_weight,
                     weight_bound=weight_bound)


def _noisy_gd(loss, X, y, constraint, epsilon, delta, steps, noise, data_norm, clip, random_state, *,
              label_bound, lr, accelerate, output, max_steps, calibration, sample_weight, weight_bound,
              checked=False):
    """:func:`noisy_gd`; ``checked``: X and y come from :func:`fasterm._validation.check_X_y`
    (``accept_sparse=True``; the estimators' design matrix, built from validated data), so
    they are not checked again.  Every parameter is checked either way.

    Three stages, so that a caller fitting one public configuration repeatedly
    can keep the first two (:func:`fasterm.linear_model._rules.fit_binary`): the parameter
    checks (:func:`_gd_params`), the public calibration for n rows
    (:func:`_gd_plan`), and the steps on the data (:func:`_gd_run`).
    """
    params = _gd_params(loss, constraint, epsilon, delta, steps, noise, data_norm, clip, label_bound, lr,
                        accelerate, output, max_steps, calibration)
    rng = check_random_state(random_state)
    if not checked:
        X, y = check_X_y(X, y, y_required=False, accept_sparse=True,
                         classification=_optimize._is_classification(loss))
    n, d = X.shape
    if d != constraint.dim:
        raise ValueError(f"X has {d} columns but constraint has dim {constraint.dim}")
    weights, wb = _sample_weights(sample_weight, weight_bound, n)
    _warnings.warn_large_delta(params["delta"], n, "noisy_gd")
    return _gd_run(loss, constraint, _gd_plan(loss, constraint, n, wb, params), X, y, rng, weights)


def _gd_params(loss, constraint, epsilon, delta, steps, noise, data_norm, clip, label_bound, lr,
               accelerate, output, max_steps, calibration) -> dict:
    """:func:`noisy_gd`'s parameter checks (before any data check): the checked values."""
    eps, delta, data_norm, clip, label_bound, lr = _check_private_params(
        loss, constraint, epsilon, delta, noise, data_norm, clip, label_bound, lr)
    if noise == "gaussian" and delta == 0.0:
        raise ValueError("delta must be > 0 for noise='gaussian'")
    if calibration not in ("pure", "coordinate", "l2"):
        raise ValueError(f"calibration must be one of ('pure', 'coordinate', 'l2'), got {calibration!r}")
    if noise == "laplace" and delta == 0.0 and calibration == "coordinate":
        raise ValueError("delta must be > 0 for calibration='coordinate'")
    output = _check_output(output)
    if not (accelerate == "auto" or isinstance(accelerate, (bool, np.bool_))):
        raise TypeError(f"accelerate must be True, False or 'auto', got {accelerate!r}")
    max_steps = check_scalar(max_steps, "max_steps", low=1, integer=True)
    if steps is not None:
        steps = check_scalar(steps, "steps", low=1, integer=True)
    return dict(eps=eps, delta=delta, data_norm=data_norm, clip=clip, label_bound=label_bound, lr=lr,
                steps=steps, noise=noise, calibration=calibration, output=output, accelerate=accelerate,
                max_steps=max_steps)


def _gd_plan(loss, constraint, n, wb, params) -> dict:
    """Everything :func:`noisy_gd` derives from public numbers for n rows and the weight
    bound B (1 unweighted): smoothness, clip level, sensitivity, step, T and the noise
    calibration (``params`` from :func:`_gd_params`).  No data enters it."""
    p = params
    beta = _smoothness(loss, p["data_norm"], p["label_bound"], wb)
    if beta == 0.0 and p["lr"] is None:
        raise ValueError(f"{type(loss).__name__} with l2=0 has smoothness 0 (no 1/β step): give lr")
    G_loss, c_clip = _privacy_constants(loss, constraint, p["data_norm"], p["clip"], p["label_bound"])
    c = wb * c_clip  # a weighted record's clipped gradient has norm ≤ B·c
    sens = 2.0 * c / n
    R = _start_distance(constraint)
    d = constraint.dim
    lr, steps, cal, noise_sq, accelerate, auto_nu = _gd_calibration(
        p["noise"], p["calibration"], beta, p["lr"], p["steps"], p["max_steps"], p["accelerate"], R, sens, c,
        c + _reg_lipschitz(loss, constraint), d, p["eps"], p["delta"])
    return dict(p, n=n, d=d, wb=wb, beta=beta, G_loss=G_loss, c_clip=c_clip, c=c, sens=sens, R=R, lr=lr,
                steps=steps, cal=cal, noise_sq=noise_sq, accelerate=accelerate, auto_nu=auto_nu)


def _gd_run(loss, constraint, plan, X, y, rng, weights) -> OptimizeResult:
    """The steps of :func:`noisy_gd` on checked X (n × d, as planned) and y, noise from ``rng``;
    ``weights``: the checked sample weights or None."""
    n, d, steps, lr, accelerate, output = plan["n"], plan["d"], plan["steps"], plan["lr"], plan["accelerate"], \
        plan["output"]
    data_norm, label_bound, c_clip, noise = plan["data_norm"], plan["label_bound"], plan["c_clip"], plan["noise"]
    cal = plan["cal"]
    scale = cal.noise_scale
    backend = _backends.FloatNoise(noise, plan["calibration"], rng, scale=scale)
    momentum = (None if not accelerate else _fista(steps) if plan["auto_nu"] is None
                else _auto_momentum(steps, plan["auto_nu"]))
    if output == "last":
        # the engine's compiled loop (momentum included) with float noise
        w = _engine.run(loss, X, y, constraint, steps, lr, False, data_norm=data_norm, clip=c_clip, noise=backend,
                        label_bound=label_bound, momentum=momentum, weights=weights, checked=True,
                        weight_bound=plan["wb"])
    else:
        warn_cost(steps, n, d)
        w0, X, y, c_k, dn, ybound, norms, nt = _prepare(loss, X, y, constraint, data_norm, c_clip, label_bound)
        c_k = _engine.release_clip(loss, constraint, c_k, X.dtype, n, d, scale=1.0 / n, weight_bound=plan["wb"],
                                   sparse=is_sparse(X), momentum=momentum is not None)
        # the query points y_1 … y_{T−1} (= w_1 … w_{T−1} for plain steps), then w_T: Theorem A's average
        acc = np.zeros(d, dtype=np.float64)
        last = _engine.steps_on(loss, X, y, norms, dn, c_k, ybound, nt, weights, w0, constraint, steps, lr,
                                backend, momentum, acc, acc_from=1)
        acc += last
        w = constraint.project((acc / steps).astype(X.dtype))
    if not np.isfinite(w).all():
        loss._check_finite_output(w, X)

    bound = surrogate = None
    if not accelerate and output == "average" and lr <= 1.0 / plan["beta"] * (1 + 1e-12):
        surrogate = plan["R"] * plan["R"] / (2.0 * lr * steps) + lr * plan["noise_sq"]
        if plan["clip"] is None or plan["clip"] >= plan["G_loss"]:
            bound = surrogate
    return OptimizeResult(
        w=w, epsilon=cal.epsilon, delta=cal.delta, steps=steps, lr=lr, noise=noise,
        calibration=None if noise == "gaussian" else plan["calibration"], noise_scale=scale, lipschitz=plan["c"],
        sensitivity=plan["sens"], noise_norm_sq=plan["noise_sq"], utility_bound=bound,
        info={"n": n, "d": d, "solver": "gd", "smoothness": plan["beta"], "accelerate": accelerate,
              "output": output, "lipschitz_loss": plan["G_loss"], "surrogate_utility_bound": surrogate,
              "secure": None, "weight_bound": None if weights is None else plan["wb"]},
    )


@functools.lru_cache(maxsize=256, typed=True)
def _gd_calibration(noise, calibration, beta, lr, steps, max_steps, accelerate, R, sens, c, G_step, d, eps, delta):
    """The step, T, the noise calibration, E‖h‖² and the momentum switch of :func:`noisy_gd`.

    A pure function of public numbers (the checked parameters and the
    constants derived from them), so repeated fits of one configuration —
    a model-selection loop, a benchmark — compute it once.  Returns
    ``(lr, steps, calibration, noise_sq, accelerate, ν)``, ν = √(E‖h‖²)/c for
    ``accelerate="auto"`` (None otherwise).
    """
    with derived_from(_USER_SCALES):
        if lr is None:
            lr = check_derived(1.0 / beta, "the step size 1/β", "data_norm and label_bound")
        if steps is None:
            if noise == "gaussian":
                steps = gd_default_steps(max(beta, 1.0 / lr), R, sens, d, eps, delta, max_steps)
            else:
                steps = _laplace_steps(beta, lr, R, sens, d, eps, delta, calibration, max_steps)
        cal = accounting.calibrate_steps(noise, calibration, sens, d, steps, eps, delta)
        noise_sq = cal.noise_sq(d)
        auto_nu = None
        if accelerate == "auto":  # the schedule itself is made by _gd_run (_auto_momentum)
            auto_nu = math.sqrt(noise_sq) / c
            accelerate = _auto_momentum(steps, auto_nu) is not None
        accelerate = bool(accelerate)
        check_derived(1.0 + lr * (G_step + 64.0 * cal.noise_scale * math.sqrt(d)), "the largest step",
                      "lr, " + _USER_SCALES)
    return lr, steps, cal, noise_sq, accelerate, auto_nu


@functools.lru_cache(maxsize=256)
def _laplace_steps(beta, lr, R, sens, d, eps, delta, calibration, max_steps):
    """T minimising Theorem A's bound R²/(2ηT) + η s²(T) for Laplace noise, within the budget."""
    noise_sq_of = accounting.noise_sq_of_steps("laplace", calibration, sens, d, eps, delta)
    best, best_T = math.inf, 1
    for T in range(1, max_steps + 1):
        b = R * R / (2.0 * lr * T) + lr * noise_sq_of(T)
        if b < best * (1 - 1e-12):
            best, best_T = b, T
    return best_T


_optimize._CACHE_CLEARERS.extend([_gd_calibration.cache_clear, gd_default_steps.cache_clear,
                                  _laplace_steps.cache_clear, _float_margin.release_clip.cache_clear])


def _fista(steps):
    """The momentum of FISTA (Beck & Teboulle 2009) as the engine's β_t:
    β_t = (k_{t−1} − 1)/k_t, k_0 = 1, k_{t+1} = (1 + √(1 + 4k_t²))/2."""
    k = [1.0]
    for _ in range(steps):
        k.append(0.5 * (1.0 + math.sqrt(1.0 + 4.0 * k[-1] * k[-1])))
    return lambda t: (k[t - 1] - 1.0) / k[t] if t > 0 else 0.0


def _auto_momentum(steps, nu):
    """``accelerate="auto"``: the momentum schedule for T steps at the public relative noise
    ν = √(E‖h_t‖²)/c — FISTA's β_t capped at 1 − ``MOMENTUM_CAP_SLOPE``·ν — or None when the cap
    is ≤ 0.  Momentum adds up the noise of past steps (with coefficient b, about 1/(1 − b) of
    them), so the noisier the step the less of it; the cap is continuous in ν (why:
    docs/solvers.rst, "Momentum against the noise ratio")."""
    cap = 1.0 - MOMENTUM_CAP_SLOPE * nu
    if not cap > 0.0:
        return None
    fista = _fista(steps)
    return lambda t: min(fista(t), cap)


def noisy_sgd(loss: _losses_mod._LinearModelLoss, X: np.typing.ArrayLike, y: np.typing.ArrayLike | None,
              constraint: _constraints.Constraint, epsilon: float, delta: float = 1e-5,
              steps: int | None = None, *, sample_rate: float | None = None,
              batch_size: float | None = None, epochs: float = 1.0, data_norm: float | None = None,
              clip: float | None = None, random_state: None | int | np.random.Generator = None,
              label_bound: float | None = None, lr: float | None = None, output: str = "last",
              neighbors: str = "replace_one", sample_weight: np.typing.ArrayLike | None = None,
              weight_bound: float = 1.0, client=None) -> OptimizeResult:
    """Differentially private minibatch SGD with Poisson subsampling (DP-SGD).

    Each of the T steps samples every row independently with probability q,
    releases the clipped gradient sum of the sampled rows plus N(0, σ²c²I),
    divides it by the expected batch size q·n (under add/remove neighbours
    by the caller's public ``batch_size``) and takes a projected step η
    (default 1/β_L, Theorem A of the module docstring).

    steps : T; default ⌈``epochs``/q⌉ (``epochs`` passes over the data in
        expectation).
    sample_rate / batch_size : q, or the expected batch size q·n (give at
        most one; default q = min(1, 512/n)).  Under
        ``neighbors="add_remove"`` both are required and mean something
        else: q is ``sample_rate`` and ``batch_size`` is the public
        normaliser m (the expected batch size the caller assumes, e.g. q
        times a public estimate of n) that the gradient sum is divided by in
        place of q·n.
    neighbors : "replace_one" (fasterm's relation) or "add_remove": the
        relation the reported (ε, δ) holds for.  Under add/remove the number
        of rows n is private and is used only to draw the minibatches: the
        step count T = ⌈``epochs``/q⌉, the divisor m and every field of the
        result are functions of the caller's public parameters (no
        ``info["n"]``; no utility bound, whose scale q·n/m depends on n).
        Combinations that would need n raise ``ValueError``.
    sample_weight, weight_bound : per-record weights mapped into [0, B]
        (:func:`fasterm.noisy_pgd`); a record's contribution is then at most
        B·c, so the noise is N(0, σ²B²c²I) with the same σ (the accountant's
        noise multiplier is relative to the contribution bound), and the
        default step uses the smoothness B·β + l2.  Not for a dask X.
    client : for a dask X (as :func:`fasterm.noisy_pgd`'s): the in-memory run, batches fetched
        in blocks of steps (:class:`fasterm.erm._dask.SampledRows`; same ŵ, same accounting).

    Other parameters as :func:`noisy_gd` (Gaussian noise only).

    Privacy: σ = :func:`fasterm.accounting.calibrate_sgd_sigma` (q, T, ε, δ,
    ``neighbors``) — the privacy loss distribution of the Poisson-subsampled
    Gaussian's dominating pair for that relation, composed over T steps
    (Zhu, Dong & Wang 2022, Thm. 10; the Rényi DP bound of Mironov, Talwar &
    Zhang 2019 where smaller).  The sampling and the noise come
    from ``random_state``'s single stream; the privacy proof assumes the
    sampling is hidden (only the final model, or the noisy steps, are seen).

    Add/remove neighbours (D′ = D plus or minus one row).  The sum released at
    a step, Σ_{i∈B} clipped g_i + N(0, σ²c²I) with B Poisson(q), is the
    sampled Gaussian mechanism of sensitivity c, whose privacy is a function
    of (q, σ) alone, whatever n is: :func:`fasterm.accounting.sgd_epsilon`
    (q, σ, T, δ, "add_remove") bounds both directions — adding and removing
    a row (for the Rényi bound: A_α of Mironov, Talwar & Zhang 2019, Thm. 4,
    dominates the reverse divergence B_α, their Thm. 5).  Dividing by the
    caller's m, stepping, projecting and averaging use only public constants
    and earlier releases (post-processing), and T is fixed by (q,
    ``epochs``) or ``steps``; so the released w is (ε, δ)-DP for add/remove
    neighbours with ε the reported ``epsilon``, and the other fields are
    public constants.

    Floating point: every minibatch of a run is clipped at one c* =
    c(1 − 2τ)/(1 + 2Θ₁(M)) (:func:`fasterm.erm._float_margin.run_clip`), M the
    smallest public cap with (1 + e^ε)·T·P[Bin(n, q) > M] ≤ η_max = δ·2⁻²⁰
    (:func:`~fasterm.erm._float_margin.batch_cap`); σ is calibrated for
    δ_fit = δ − η_max (:func:`~fasterm.erm._float_margin.sgd_delta`).  Lemma
    "one-sided margin" and Theorem "capped batches" of docs/guarantees.rst ("The
    margin of Poisson-subsampled SGD"): the computed release of a batch and of
    the same batch plus one row differ by at most the sensitivity, for every
    batch of at most M rows, and a larger batch (probability ≤ η) costs
    (1 + e^ε)η ≤ η_max: the run is (ε, δ)-DP for the reported δ.  Under
    add/remove n is private, so the cap comes from a public bound on it: the
    mechanism's domain is the data sets of at most
    N = ``SGD_ADD_REMOVE_ROOM``·⌈m/q⌉ rows (m = ``batch_size``, m/q the
    caller's public estimate of n), the (ε, δ) holds for every neighbouring
    pair inside it, and an X of more than N rows raises ``ValueError``
    naming N — a refusal outside the domain only, where nothing is claimed.
    Float32 X raises ``ValueError`` (the float32 margin at that cap would
    cost a visible share of the clip).
    """
    return _noisy_sgd(loss, X, y, constraint, epsilon, delta, steps, sample_rate=sample_rate,
                      batch_size=batch_size, epochs=epochs, data_norm=data_norm, clip=clip,
                      random_state=random_state, label_bound=label_bound, lr=lr, output=output,
                      neighbors=neighbors, sample_weight=sample_weight, weight_bound=weight_bound,
                      client=client)


def _noisy_sgd(loss, X, y, constraint, epsilon, delta, steps, *, sample_rate, batch_size, epochs,
               data_norm, clip, random_state, label_bound, lr, output, neighbors, intercept=None,
               sample_weight=None, weight_bound=1.0, checked=False, row_norms=None, client=None):
    """:func:`noisy_sgd`; with ``intercept = (row_bound, s)`` X is the raw (n, d) data and each
    minibatch is built as :func:`fasterm.linear_model._rules.design` would build its rows (rows clipped to
    ``row_bound``, the constant column s appended), so the (n, d + 1) design is never formed.
    ``checked``: X and y passed the estimators' data check (X a finite C-contiguous float
    ndarray, y one label per row in X's dtype), so X is not scanned again; anything else is
    checked as usual.  ``row_norms``: X's row norms as
    :func:`fasterm.erm._design.row_norms_unchecked` computed them in that check (they decide
    which rows are clipped), or None: computed here (for each minibatch's rows with
    ``intercept``).  A dask X: :class:`fasterm.erm._dask.SampledRows` (on ``client``)."""
    eps, delta, data_norm, clip, label_bound, lr = _check_private_params(
        loss, constraint, epsilon, delta, "gaussian", data_norm, clip, label_bound, lr)
    if delta == 0.0:
        raise ValueError("delta must be > 0 for noisy_sgd (Rényi DP gives no pure ε)")
    output = _check_output(output)
    if neighbors not in ("replace_one", "add_remove"):
        raise ValueError(f"neighbors must be 'replace_one' or 'add_remove', got {neighbors!r}")
    epochs = check_scalar(epochs, "epochs", low=0.0, low_inclusive=False)
    if steps is not None:
        steps = check_scalar(steps, "steps", low=1, integer=True)
    if neighbors == "add_remove":
        # n is private: q and the divisor m must be public, from the caller (no default from n).
        if sample_rate is None:
            raise ValueError("neighbors='add_remove' needs sample_rate: under add/remove neighbours the number "
                             "of rows n is private, and the default q = min(1, 512/n) (or batch_size/n) would "
                             "depend on it; give sample_rate=q and batch_size=m (a public expected batch size)")
        if batch_size is None:
            raise ValueError("neighbors='add_remove' needs batch_size: the gradient sum is divided by a public "
                             "expected batch size m, not by q·n (n is private under add/remove); give "
                             "batch_size=m, e.g. sample_rate times a public estimate of n")
        m = check_scalar(batch_size, "batch_size", low=0.0, low_inclusive=False)
    elif sample_rate is not None and batch_size is not None:
        raise ValueError("give sample_rate or batch_size, not both")
    rng = check_random_state(random_state)
    chunked = _dask.is_dask_collection(X)
    if chunked:  # metadata only; the values are checked on the workers
        X, y, client = _dask.check_sgd(X, y, neighbors, client)
    elif not (checked and type(X) is np.ndarray and X.ndim == 2 and X.dtype in (np.float32, np.float64)
            and X.flags.c_contiguous and X.shape[0] >= 1 and X.shape[1] >= 1
            and (y is None or (type(y) is np.ndarray and y.dtype == X.dtype and y.flags.c_contiguous
                               and y.shape == (X.shape[0],)))):
        X, y = check_X_y(X, y, y_required=False, accept_sparse=True,
                         classification=_optimize._is_classification(loss))
    n, d = X.shape
    if intercept is not None:
        d += 1
    if d != constraint.dim:
        raise ValueError(f"X has {d} columns but constraint has dim {constraint.dim}")
    if neighbors == "add_remove" and X.dtype == np.float32:
        # The one-sided margin under add/remove needs a cap on the batch size from public numbers
        # only (a public bound on n, SGD_ADD_REMOVE_ROOM times the caller's estimate m/q): in float32
        # the margin of that cap would cost a visible share of the clip; float64 only.
        raise ValueError("neighbors='add_remove' needs float64 X: its batch-size cap comes from a public bound "
                         "on n, and the float32 rounding margin of that cap is too large")
    weights, wb = _sample_weights(sample_weight, weight_bound, n, chunked)
    _warnings.warn_large_delta(delta, n, "noisy_sgd")
    if sample_rate is not None:
        q = check_scalar(sample_rate, "sample_rate", low=0.0, high=1.0, low_inclusive=False)
    else:
        b = 512.0 if batch_size is None else check_scalar(batch_size, "batch_size", low=0.0,
                                                             low_inclusive=False)
        q = min(1.0, b / n)
    if neighbors == "add_remove":
        n_max = _add_remove_domain(q, m)
        if n > n_max:
            # The domain of the mechanism: outside it no guarantee is stated, and none is released.
            raise ValueError(f"neighbors='add_remove' takes data sets of at most {SGD_ADD_REMOVE_ROOM}·"
                             f"⌈batch_size/sample_rate⌉ = {n_max} rows (the public bound on the private n for "
                             "which the guarantee holds; the float margin's batch-size cap is computed from it), "
                             "and X has more: raise batch_size/sample_rate, the public estimate of n")
    beta = _smoothness(loss, data_norm, label_bound, wb)
    if beta == 0.0 and lr is None:
        raise ValueError(f"{type(loss).__name__} with l2=0 has smoothness 0 (no 1/β step): give lr")
    G_loss, c_clip = _privacy_constants(loss, constraint, data_norm, clip, label_bound)
    c = wb * c_clip  # a weighted record's clipped gradient has norm ≤ B·c
    R = _start_distance(constraint)
    scales = _USER_SCALES + ", sample_rate, batch_size and epochs"
    with derived_from(scales):
        if steps is None:
            steps = int(check_derived(math.ceil(epochs / q), "the number of steps", "epochs and sample_rate"))
            if steps > 10_000_000:
                raise ValueError(f"epochs/sample_rate gives {steps} steps; lower epochs or raise sample_rate")
        if lr is None:
            lr = check_derived(1.0 / beta, "the step size 1/β", "data_norm and label_bound")
        # δ = δ_fit + η_max: the accountant gets δ_fit, η_max pays for a batch above the cap M
        delta_fit, eta_max = _float_margin.sgd_delta(delta)
        sigma = accounting.calibrate_sgd_sigma(q, steps, eps, delta_fit, neighbors)
        eps_spent = min(eps, accounting.sgd_epsilon(q, sigma, steps, delta_fit, neighbors))
        if neighbors == "replace_one":
            m = q * n  # the expected batch size: a public normaliser (n is public under replace-one)
        scale = sigma * c
        noise_sq = d * scale * scale / (m * m)
        sampling_var = (1.0 - q) * c * c / m
        check_derived(1.0 + lr * (c / q + _reg_lipschitz(loss, constraint) + 64.0 * scale / m * math.sqrt(d)),
                      "the largest step", "lr, " + scales)

    kind = loss._kind
    if chunked:
        w, c_k, dn, ybound, nt = _dask.sgd_constants(loss, constraint, X, y, c_clip, data_norm, label_bound)
    elif intercept is None:
        w, X, y, c_k, dn, ybound, norms, nt = _prepare(loss, X, y, constraint, data_norm, c_clip, label_bound,
                                                       row_norms)

        def gather(rows):
            return X[rows], None if y is None else y[rows], None if norms is None else norms[rows]
    else:
        row_bound, s_col = intercept
        w = constraint.center.astype(X.dtype)
        norms = None
        _, _, _, c_k, dn, ybound, _, nt = loss._prepare(w[:-1], X[:1], None if y is None else y[:1],
                                                         clip=c_clip, data_norm=data_norm, label_bound=label_bound,
                                                         accept_sparse=True)
        if y is not None:
            y = check_array(y, "y", ndim=1, dtype=X.dtype)
            if y.shape[0] != n:
                raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")

        if row_norms is not None:
            norms = check_array(row_norms, "row_norms", ndim=1, dtype=np.float64, shape=(n,))

        def gather(rows):
            # The rows of fasterm.erm._design.design(X[rows], ...), built for this batch only.
            A = _design_block(X[rows], row_bound, s_col, None if norms is None else norms[rows])
            nb = np.empty(rows.shape[0], dtype=np.float64)
            _row_norms_kernel(A, nb, nt)
            return A, None if y is None else y[rows], nb

    # One clip for every batch (docs/guarantees.rst, "The margin of Poisson-subsampled SGD"): the
    # one-sided margin of batches of at most M rows, M a public cap (n under replace-one; under
    # add/remove from the domain's bound N = SGD_ADD_REMOVE_ROOM·⌈m/q⌉ on n, n itself being private).
    n_pub = n if neighbors == "replace_one" else n_max + 1
    cap = _float_margin.batch_cap(n_pub, q, steps, eps, eta_max)
    try:
        c_run = _float_margin.run_clip(c_k, X.dtype, cap, d, scale=1.0 / m, bound=wb * c_k, reg=float(loss.l2),
                                       radius=float(constraint.norm_bound))
    except _float_margin.MarginTooLarge as e:
        if neighbors == "replace_one":
            raise
        raise ValueError(f"batch_size/sample_rate = {m / q:.3g} (neighbors='add_remove'): the rounding margin of "
                         f"batches up to {cap} rows has no useful bound ({e})") from None
    if not c_run > 0.0:  # a subnormal clip: its margin rounds it to 0, which the kernels read as "no clip"
        raise ValueError(f"clip={c_k!r} (times weight_bound) is too small: the run's clip with its floating-point "
                         "margin rounds to 0")
    clips = _sgdrun.RunClip(c_run)

    def batch(point, out):
        # Poisson sampling: |B| ~ Bin(n, q), then a uniform subset of that size —
        # the same law as n independent q-coins, drawn in O(|B|).
        size = int(rng.binomial(n, q))
        if size == 0:
            out.fill(0.0)
            return
        rows = np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n)
        Xb, yb, nb = gather(rows)
        _grad_sum_kernel(kind, Xb, yb, point, nb, dn, clips.clip, ybound, out, nt,
                         None if weights is None else weights[rows])

    backend = _backends.FloatNoise("gaussian", "l2", rng, scale=scale / m)  # the noise of the averaged sum
    warn_cost(steps, m, d)  # m: the public expected batch size (n is private under add/remove)
    # a chunked X: the batches' rows fetched a block of steps at a time, drawn ahead on a copy of rng
    source = _dask.SampledRows.for_run(X, y, q, steps, d, rng, backend, intercept, dn > 0 or c_k > 0, _design_block,
                                       client) if chunked else None
    if source is not None:
        gather = source.gather
    with source or contextlib.nullcontext():  # closing the source cancels its requests (an interrupted run too)
        if _sgdrun.runs(X, y, constraint, backend):
            # The whole run in one compiled call: the same draws and arithmetic as the loop below.
            w = _sgdrun.run(kind, X, y, norms, dn, clips, ybound, w, steps, q, 1.0 / m, lr, float(loss.l2), backend,
                            constraint, output == "average", nt, weights, intercept)
        else:
            w = _sgdrun.reference(batch, w, constraint, steps, lr, 1.0 / m, backend, float(loss.l2),
                                  output == "average", X.dtype)
    if not np.isfinite(w).all() and not chunked:  # a chunked X was checked on the workers
        loss._check_finite_output(w, X)
    bound = surrogate = None
    # Theorem A needs an unbiased step: E[sum/m] = (q·n/m)·∇, which holds (m = q·n) under replace-one
    # only; under add/remove the bound's scale would be a function of the private n.
    if neighbors == "replace_one" and output == "average" and lr <= 1.0 / beta * (1 + 1e-12):
        surrogate = R * R / (2.0 * lr * steps) + lr * (noise_sq + sampling_var)
        if clip is None or clip >= G_loss:
            bound = surrogate
    if neighbors == "replace_one":
        info = {"n": n, "d": d}
    else:  # n is private: nothing computed from it is released; m is the caller's
        info = {"d": d, "batch_size": m}
    if chunked:  # public: the block plan is a function of (n, d, q, T, the dtype)
        info.update(source.plan)
    info.update({"solver": "sgd", "sample_rate": q, "noise_multiplier": sigma,
                 "neighbors": neighbors, "smoothness": beta, "output": output,
                 "lipschitz_loss": G_loss, "surrogate_utility_bound": surrogate, "secure": None,
                 "weight_bound": None if weights is None else wb})
    return OptimizeResult(
        w=w, epsilon=eps_spent, delta=delta, steps=steps, lr=lr, noise="gaussian", noise_scale=scale,
        lipschitz=c, sensitivity=c, noise_norm_sq=noise_sq, utility_bound=bound, info=info,
    )
