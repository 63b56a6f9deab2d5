"""The exponential mechanism for convex ERM, sampled by compiled hit-and-run.

The theorems, the table of Δ and the measurements behind the default T:
docs/guarantees.rst ("Exponential mechanism ERM").

**Mechanism** (Smith–Ullman, lecture 11, Algorithm 1; Stemmer, lecture 9).
Release ŵ ∈ C with density

    p(w) ∝ exp(−k·L(w; S)),   k = ε·n / (2Δ),
    L(w; S) = (1/n) Σ_i ℓ(⟨w, x_i⟩, y_i) + l2/2·‖w‖²,

Δ bounding |ℓ(w; x, y) − ℓ(w; x', y')| over w ∈ C and admissible records
(``loss.sensitivity``; replace-one).  Sampled exactly, (ε, 0)-DP (Lemma 2.4;
McSherry–Talwar 2007).

**Sampler.**  Hit-and-run from ``constraint.center`` (data independent): a
direction u (``directions="sphere"``: uniform; ``"mixed"``, the default: half
the steps on a box or simplex along an edge direction — still a symmetric law
of lines), the chord of C along u in closed form, and an *exact* draw from the
density on the chord (``src/cpp/fasterm/hitrun_line.hpp``); the margins
z = X̃w are updated in one O(nd) pass per step.  The chain leaves p invariant.

**Privacy of a finite chain**: (ε, (1 + e^ε)·δ_TV)-DP, δ_TV = sup TV(p_T, p)
unknown numerically, so the result reports ``delta = None``,
``delta_tv = None``, ``exact = False``.  For sets of affine dimension ≤ 1 one
exact line draw is an exact sample: ``exact = True``, ``delta = 0.0``.

**Default steps** (``default_steps``): T = 50·m² for affine dimension m ≥ 2,
measured (``experiments/mixing_hitrun.py``), not a bound; raise ``steps`` when
in doubt.  **Utility** (``utility_bound``; lecture 11, Thm 2.5 with Δ kept
apart from G): for C the L2 ball of radius ρ and an exact draw, with
probability ≥ 1 − β, L(ŵ) − min_C L ≤ 2ρG·d/(εn) + 2Δ·(d·ln(εn/d) + ln(1/β))/(εn).

Data conventions are those of :mod:`fasterm.erm.losses` (rows scaled to
``data_norm``, labels y > 0 → +1, regression labels clipped to [−Y, Y]);
``coord_bound=B`` (linear loss on the simplex) clips X coordinate-wise to
[−B, B], Δ = 2·total·B (``Linear.sensitivity_simplex``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import fasterm.erm._hitrun as _hitrun  # compiled (src/fasterm/erm/_hitrun.pyx)
import fasterm.erm.constraints as _constraints
import fasterm.erm.losses as _losses_mod
import fasterm.mechanisms.secure as _secure
from .._validation import (
    check_epsilon,
    check_positive,
    check_random_state,
    check_scalar,
    check_X_y,
)
from .._warnings import progress, warn_cost

__all__ = ["ExpMechResult", "default_steps", "expmech_erm"]

# The default T = 50·m² (docs/guarantees.rst: >= 2.5·T_mix and >= 7 autocorrelation
# times in every case measured by experiments/mixing_hitrun.py).
_STEPS_PER_DIM2 = 50

_NOTE_CHAIN = ("approximate: sampled by hit-and-run for a finite number of steps, the release is "
               "(epsilon, (1 + e^epsilon) * delta_tv)-DP, delta_tv = the chain's total-variation "
               "distance from the exact density, which is not known numerically (delta_tv=None), "
               "so no delta is certified (delta=None); only the exact exponential mechanism has "
               "delta = 0")
_NOTE_EXACT = ("sampled exactly (the feasible set has affine dimension <= 1: one exact line "
               "draw, no MCMC): (epsilon, 0)-DP")


@dataclass
class ExpMechResult:
    """What :func:`expmech_erm` returns.

    Attributes
    ----------
    w : ndarray (float64, shape (d,)), the release, in C.
    epsilon : the ε of the exponential mechanism.
    delta : 0.0 when sampled exactly (pure ε); None for a finite chain —
        not certified, since the chain's δ_TV is unknown (``note``).  Never
        feed None to an accountant as 0.
    delta_tv : 0.0 when sampled exactly; None when sampled by a finite chain
        (the guarantee is then (ε, (1 + e^ε)·δ_TV)-DP with δ_TV the chain's
        unknown total-variation distance from the exact density).
    exact : whether ŵ is an exact draw (affine dimension ≤ 1).
    steps : hit-and-run steps taken (1 exact line draw when ``exact``; 0 for a
        single-point set).
    sensitivity : Δ used; k : the inverse temperature εn/(2Δ).
    lipschitz : G of L on C (loss plus regularizer), used by the bound.
    utility_bound : the Theorem 2.5 bound (module docstring) at ``beta`` on
        the excess empirical risk of an exact draw, for an L2 ball; None for
        other sets.
    beta : the failure probability of ``utility_bound``.
    note : the privacy statement in words.
    info : n, d, the affine dimension, the direction rule — public.  (Changed
        in 0.x: ``line_passes``, the line samplers' passes over the rows, is no
        longer reported: it depends on the data and the chain's randomness.)
    """

    w: np.ndarray
    epsilon: float
    delta: float | None
    delta_tv: float | None
    exact: bool
    steps: int
    sensitivity: float
    k: float
    lipschitz: float
    utility_bound: float | None
    beta: float
    note: str
    info: dict = field(default_factory=dict, repr=False)


def default_steps(dim: int) -> int:
    """Default hit-and-run steps for a set of affine dimension ``dim``: 50·dim².

    1 for dim = 1 (an exact draw) and 0 for dim = 0.  The measurements behind
    the constant: docs/guarantees.rst ("Exponential mechanism ERM").
    """
    m = check_scalar(dim, "dim", low=0, integer=True)
    if m <= 1:
        return m
    return _STEPS_PER_DIM2 * m * m


@dataclass
class _Problem:
    """Everything the kernel needs, validated once (see ``_problem``)."""

    kind: int
    X: np.ndarray
    y: np.ndarray | None
    scale: np.ndarray | None
    g: np.ndarray | None
    kappa: float
    lam: float
    set_kind: int
    center: np.ndarray | None
    radius: float
    low: np.ndarray | None
    high: np.ndarray | None
    total: float
    start: np.ndarray
    affine_dim: int
    margin_bound: float
    sensitivity: float
    lipschitz: float
    k: float


def _weighted_row_sum(X: np.ndarray, s: np.ndarray | None, clip: float | None = None) -> np.ndarray:
    """Σ_i s_i x_i in float64 (x_i clipped to [−clip, clip] first if given), in row blocks."""
    n, d = X.shape
    out = np.zeros(d, dtype=np.float64)
    block = max(1, (1 << 20) // max(d, 1))
    for lo in range(0, n, block):
        xb = X[lo:lo + block].astype(np.float64, copy=False)
        if clip is not None:
            xb = np.clip(xb, -clip, clip)
        out += xb.sum(axis=0) if s is None else s[lo:lo + block] @ xb
    return out


def _problem(loss, X, y, constraint, epsilon, data_norm, label_bound, coord_bound) -> _Problem:
    """Validate the inputs (nothing about data values beyond finiteness) and prepare the kernel's."""
    if not isinstance(loss, _losses_mod._LinearModelLoss):
        raise TypeError(f"loss must be a fasterm.losses loss (e.g. Logistic()), got {type(loss).__name__}")
    spec = constraint._chain_spec() if isinstance(constraint, _constraints.Constraint) else None
    if spec is None:
        raise TypeError("constraint must be an L2Ball, Box or Simplex (hit-and-run needs their chords), "
                        f"got {type(constraint).__name__}")
    eps = check_epsilon(epsilon)
    linear = isinstance(loss, _losses_mod.Linear)
    R = float(constraint.norm_bound)
    if coord_bound is not None:
        if not (linear and isinstance(constraint, _constraints.Simplex)):
            raise ValueError("coord_bound applies to the Linear loss on a Simplex only "
                             "(x in [-B, B]^d); use data_norm otherwise")
        if data_norm is not None:
            raise ValueError("give either data_norm or coord_bound, not both")
        B = check_positive(coord_bound, "coord_bound")
    else:
        if data_norm is None:
            raise ValueError("data_norm (the public bound on ‖x_i‖₂) is required for a private release")
        data_norm = check_positive(data_norm, "data_norm")
    if label_bound is not None:
        label_bound = check_positive(label_bound, "label_bound")
    if coord_bound is not None:
        delta_sens = _losses_mod.Linear.sensitivity_simplex(B, constraint.total)
        G = _losses_mod.Linear.lipschitz_simplex(constraint.dim, B)
    else:
        delta_sens = float(loss.sensitivity(data_norm, label_bound, radius=R))
        G = float(loss.lipschitz(data_norm, label_bound, radius=R))
    G += float(loss.l2) * R
    X, y = check_X_y(X, y, y_required=not linear, classification=not linear and not loss._regression)
    n, d = X.shape
    if d != constraint.dim:
        raise ValueError(f"X has {d} columns but constraint has dim {constraint.dim}")
    kappa = eps / (2.0 * delta_sens)
    if not (math.isfinite(kappa) and kappa > 0.0 and math.isfinite(kappa * n)):
        raise ValueError(f"epsilon / (2 * sensitivity) = {kappa!r} is not a usable inverse temperature "
                         f"(epsilon={eps!r}, sensitivity={delta_sens!r}, from data_norm, label_bound, "
                         f"coord_bound and the constraint's radius)")
    lam = kappa * n * float(loss.l2)
    if not math.isfinite(lam):
        raise ValueError("l2 * epsilon * n / (2 * sensitivity) overflows")

    scale = None
    if coord_bound is None:
        norms = _losses_mod.row_norms(X)
        if np.any(norms > data_norm):
            with np.errstate(divide="ignore"):
                scale = np.where(norms > data_norm, data_norm / norms, 1.0)
    labels = g = None
    if linear:
        g = _weighted_row_sum(X, scale, clip=B if coord_bound is not None else None)
    elif loss._regression:
        Y = loss._label_bound_for_kernel(label_bound)
        labels = np.clip(y, -Y, Y).astype(np.float64)
    else:
        labels = np.where(y > 0, 1.0, -1.0)

    return _Problem(
        kind=loss._kind, X=X, y=labels, scale=scale, g=g, kappa=kappa, lam=lam, **spec,
        start=constraint.center, sensitivity=delta_sens, lipschitz=G, k=kappa * n,
        # |⟨w, x̃⟩| ≤ ‖w‖‖x̃‖ over C: the logistic line sampler's a-priori curvature bound.
        margin_bound=R * data_norm if coord_bound is None else math.inf,
    )


def _sample(prob: _Problem, rng: np.random.Generator, steps: int, *, thin: int = 0, method: int = 0,
            w=None, z=None, directions: int = 1):
    """Run the chain: ``steps`` steps from ``w`` (default: the centre of C).

    Returns (w, z, trace, evaluations): the final point, the kept margins
    (None for the linear loss), every ``thin``-th point (``thin > 0``) and the
    line samplers' passes over the rows.  ``z`` continues a chain whose margins
    are known.  (Tests and diagnostics use this; the release is ``expmech_erm``.)
    """
    w = prob.start.copy() if w is None else np.array(w, dtype=np.float64)
    fresh = z is None
    if prob.kind == _hitrun.LINEAR:
        z = None
    elif z is None:
        z = np.empty(prob.X.shape[0], dtype=np.float64)
    trace = np.empty((steps // thin, w.size)) if thin > 0 else None
    warn_cost(steps, prob.X.shape[0], prob.X.shape[1], what="this hit-and-run chain")
    with progress(steps, "hit-and-run steps") as report:
        evals = _hitrun.run_chain(
            rng.bit_generator, prob.kind, prob.X, prob.y, prob.scale, prob.g, prob.kappa, prob.lam, method,
            prob.set_kind, prob.center, prob.radius, prob.low, prob.high, prob.total, directions,
            prob.margin_bound, w, z, steps,
            trace, max(thin, 1), fresh, progress=report)
    return w, z, trace, evals


def utility_bound(rho, G, sensitivity, n, d, epsilon, beta) -> float:
    """Theorem 2.5 (lecture 11) for the L2 ball of radius ρ, general Δ (module docstring).

    min(2ρG, 2ρG·d/(εn) + 2Δ(d ln(εn/d) + ln(1/β))/(εn)) when εn ≥ d, else 2ρG.
    """
    en = epsilon * n
    trivial = 2.0 * rho * G
    if en < d:
        return trivial
    b = 2.0 * rho * G * d / en + 2.0 * sensitivity * (d * math.log(en / d) + math.log(1.0 / beta)) / en
    return min(trivial, b)


_DIRECTIONS = {"sphere": _hitrun.SPHERE, "mixed": _hitrun.MIXED}


def expmech_erm(loss: _losses_mod._LinearModelLoss, X: np.typing.ArrayLike, y: np.typing.ArrayLike | None,
                constraint: _constraints.Constraint, epsilon: float, data_norm: float | None = None,
                steps: int | None = None, random_state: None | int | np.random.Generator = None, *,
                label_bound: float | None = None, coord_bound: float | None = None,
                directions: str = "mixed", beta: float = 0.05) -> ExpMechResult:
    """Private ERM by the exponential mechanism: ŵ ∝ exp(−εn·L(w)/(2Δ)) on C.

    Parameters
    ----------
    loss : a :mod:`fasterm.losses` instance (``Logistic``, ``Hinge``,
        ``Squared``, ``Absolute``, ``Linear``; its ``l2`` regularizer enters
        L and adds no sensitivity).
    X, y : data, (n, d) and (n,), float32 or float64 (``y`` is ignored, and
        may be None, for ``Linear``).  Out-of-bound rows and labels are
        clipped, never rejected (module docstring).
    constraint : :class:`~fasterm.L2Ball`, :class:`~fasterm.Box` or
        :class:`~fasterm.Simplex` (the L1 ball is not supported).
    epsilon : ε > 0.
    data_norm : the declared bound X on ‖x_i‖₂ (required unless
        ``coord_bound``).
    steps : hit-and-run steps; default :func:`default_steps` of the set's
        affine dimension.  Ignored for sets of affine dimension ≤ 1, which
        are sampled exactly.
    random_state : None, an int or a ``numpy.random.Generator``; the kernel
        draws from its bit generator, so a seed reproduces the release.
    label_bound : Y with |y| ≤ Y (``Squared``, ``Absolute``; defaults to the
        loss's own).
    coord_bound : B for the ``Linear`` loss on a ``Simplex`` with
        x ∈ [−B, B]^d: Δ = 2·total·B instead of the L2 constant (docs/guarantees.rst).
    directions : ``"mixed"`` (default) or ``"sphere"``.  ``"sphere"`` draws
        every direction uniformly (on the simplex: in its hyperplane), the
        textbook hit-and-run.  ``"mixed"`` replaces half of the steps on a box
        or simplex by steps along an edge direction (e_j; e_i − e_j), which
        mix far faster where the density sits in a corner (docs/guarantees.rst, "Directions");
        the ball always uses ``"sphere"``.  Both leave the target invariant.
    beta : failure probability of the reported ``utility_bound``.

    Returns
    -------
    ExpMechResult
        ``w``, ``epsilon``, ``delta``, and ``delta_tv``/``exact``/``note``:
        the release is (ε, 0)-DP when ``exact`` (``delta = 0.0``), otherwise
        (ε, (1 + e^ε)·δ_TV)-DP for the chain's unknown TV distance δ_TV from
        the exact density, and ``delta = None`` (module docstring).  Also Δ, k = εn/(2Δ), G, the steps and
        Theorem 2.5's bound.

    No secure mode: under :func:`fasterm.secure_mode` it raises ``ValueError``
    (the sampler is floating point, :mod:`fasterm.mechanisms.secure`).

    Cost: O(nd) per step (one pass over X for X̃u) plus the line draw — O(n)
    (squared, logistic), O(n log n) (hinge/absolute, n ≤ 2048), O(d)
    (linear).
    """
    _secure.check_not_secure("fasterm.expmech_erm")
    prob = _problem(loss, X, y, constraint, epsilon, data_norm, label_bound, coord_bound)
    if steps is not None:
        steps = check_scalar(steps, "steps", low=1, integer=True)
    if not isinstance(directions, str) or directions not in _DIRECTIONS:
        raise ValueError(f"directions must be one of {tuple(_DIRECTIONS)}, got {directions!r}")
    beta = check_scalar(beta, "beta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    rng = check_random_state(random_state)
    eps = float(epsilon)
    n, d = prob.X.shape
    m = prob.affine_dim
    exact = m <= 1
    if exact:
        steps = m  # 0: a single point; 1: one exact line draw through the centre
    elif steps is None:
        steps = default_steps(m)
    # The samplers' pass count (_sample's fourth value) depends on the data and
    # the draws: not released.
    w, _, _, _ = _sample(prob, rng, steps, directions=_DIRECTIONS[directions])
    w = constraint.project(w)  # removes rounding only: the chain never leaves C
    bound = None
    if isinstance(constraint, _constraints.L2Ball):
        bound = utility_bound(constraint.radius, prob.lipschitz, prob.sensitivity, n, d, eps, beta)
    return ExpMechResult(
        w=w, epsilon=eps, delta=0.0 if exact else None, delta_tv=0.0 if exact else None, exact=exact, steps=steps,
        sensitivity=prob.sensitivity, k=prob.k, lipschitz=prob.lipschitz, utility_bound=bound,
        beta=beta, note=_NOTE_EXACT if exact else _NOTE_CHAIN,
        info={"n": n, "d": d, "affine_dim": m, "directions": directions},
    )
