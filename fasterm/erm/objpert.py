"""Objective perturbation: pure ε-DP empirical risk minimisation by one perturbed convex solve.

Why it is the δ = 0 default, how its defaults were chosen, its cost and the
proof of the theorem: docs/pure.rst ("Objective perturbation").

**Mechanism** (Chaudhuri, Monteleoni & Sarwate 2011, JMLR 12, Algorithm 2;
Kifer, Smith & Thakurta 2012, COLT, Algorithm 1).  Rows clipped to
‖x_i‖₂ ≤ X; b ∈ R^d of density ∝ exp(−ε_b‖b‖₂/(2L)) (uniform direction,
norm ~ Gamma(d, 2L/ε_b)); release the minimiser over R^d of

    J(w) = (1/n) Σ_i ψ(⟨w, x_i⟩, y_i) + (μ/2)‖w‖² + ⟨b, w⟩/n.

**Theorem** (CMS 2011, Thm 9; the Jacobian bound of KST 2012, Thm 2).  ψ
convex and C² in z, |ψ'| ≤ 1, 0 ≤ ψ'' ≤ h (L = X, c = h·X²): the exact
minimiser is (ε_b + log(1 + c/(nμ)), 0)-DP under **replace-one** neighbours
(n public).  ψ must be C² (a hard clamp of ψ' breaks the change of variables).

**Certified solve** (the idea of Iyengar et al. 2019, approximate minima
perturbation, with pure-ε output noise).  Newton stops only when
‖∇J(ŵ)‖ ≤ g is certified (Higham's summation bounds, double or
``numpy.longdouble``; else ``ArithmeticError``); μ-strong convexity gives
‖ŵ − w*‖ ≤ ρ = g/μ, and ŵ + e, e ∝ exp(−ε_out‖e‖/(2ρ)), is
(ε_b + log(1 + c/(nμ)) + ε_out, 0)-DP.  g = ``GRADIENT_TOLERANCE``·(L + d·s_b/n),
ε_out = ``OUTPUT_FRACTION``·ε, both public.

**Released**: ŵ + e and public constants (ε terms, μ, L, c, the scales, g,
the cap ``MAX_STEPS``); ‖b‖, the residual and the Newton count identify the
data set, so they exist only behind ``nonprivate_diagnostics=True``.

**Budget split** (:func:`default_regularization`,
:func:`fasterm.accounting.calibrate_objpert`): μ = max(l2, a·X²/(εn),
c/(n(e^{fε} − 1))), a = ``REGULARIZATION``, f = ``JACOBIAN_FRACTION``;
ε_b = ε − log(1 + c/(nμ)) − ε_out.  Public: ε, n, d, X and the loss only.

**Losses**: ``SmoothHinge(smoothness=τ, margin=h)``, ψ(m) = τ·log(1 + e^{(h − m)/τ})
(1-Lipschitz, ψ'' ≤ 1/(4τ); logistic at h = 0, τ = 1); ``LogCosh(width=κ)``,
ψ(r) = κ·log cosh(r/κ) (1-Lipschitz, ψ'' ≤ 1/κ).  Defaults τ = 0.25,
margin 1, a = 8 (chosen on data other than breast cancer, docs/pure.rst
"Choosing the defaults").  No secure mode: ``secure=True`` raises ``ValueError``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import fasterm.accounting as accounting
import fasterm.erm.losses as _losses_mod
import fasterm.mechanisms.secure as _secure
from .._validation import (
    check_array,
    check_derived,
    check_epsilon,
    check_positive,
    check_random_state,
    check_scalar,
    check_X_y,
    derived_from,
)

__all__ = ["LogCosh", "ObjPertResult", "SmoothHinge", "default_regularization", "objective_perturbation",
           "private_threshold"]

#: Smoothness τ of the default ``SmoothHinge`` (chosen on data other than breast cancer: docs/pure.rst, "Choosing the defaults").
DEFAULT_SMOOTHNESS = 0.25
#: a in the default regularization μ = a·X²/(εn) (chosen on data other than breast cancer: docs/pure.rst, "Choosing the defaults").
REGULARIZATION = 8.0
#: Largest fraction of ε the default regularization leaves to the Jacobian term (a floor for μ).
JACOBIAN_FRACTION = 0.5
#: ``solver="objpert_threshold"``: share of ε for the private threshold, a of its μ, grid size.
THRESHOLD_FRACTION = 0.2
THRESHOLD_REGULARIZATION = 32.0
THRESHOLD_GRID = 256
#: Fraction of ε spent on the output noise that covers the solver's tolerance.
OUTPUT_FRACTION = 0.01
#: Certified gradient norm at which the solver stops, relative to L + E‖b‖/n (raised to the rounding floor).
GRADIENT_TOLERANCE = 1e-9

#: The solver's caps: damped Newton iterations, then (a fallback never needed in the
#: tests) plain gradient steps; past both the call raises ``ArithmeticError``.
MAX_NEWTON_STEPS = 200
MAX_GRADIENT_STEPS = 20_000
#: ``ObjPertResult.steps`` (and the estimators' ``n_iter_``): the solver's iteration cap,
#: a public constant.  The number of iterations actually run depends on the data and on
#: the noise b, so it is not released (``nonprivate_diagnostics`` has it).
MAX_STEPS = MAX_NEWTON_STEPS + MAX_GRADIENT_STEPS

_U = 2.0 ** -53
_HESSIAN_ROWS = 16_384  # rows (at least) in Newton's Hessian


class SmoothHinge:
    """ψ(m) = τ·log(1 + exp((h − m)/τ)), m = y·⟨w, x⟩, y ∈ {−1, +1} (y > 0 read as +1).

    Convex, C^∞, |ψ'| ≤ 1, 0 < ψ'' ≤ 1/(4τ).  τ = ``smoothness`` > 0, h =
    ``margin`` (real); ``l2`` a data-independent ridge weight (a floor for μ).
    """

    regression = False

    def __init__(self, smoothness: float = DEFAULT_SMOOTHNESS, margin: float = 1.0, *, l2: float = 0.0):
        self.smoothness = check_positive(smoothness, "smoothness")
        self.margin = check_scalar(margin, "margin")
        self.l2 = check_scalar(l2, "l2", low=0.0)

    def __repr__(self) -> str:
        return f"SmoothHinge(smoothness={self.smoothness!r}, margin={self.margin!r}, l2={self.l2!r})"

    @property
    def curvature_factor(self) -> float:
        """sup ψ'' = 1/(4τ) (σ(1 − σ) ≤ 1/4)."""
        return 0.25 / self.smoothness

    def _derivs(self, z, y, value=False):
        """(coefficient ψ'(m)·y, ψ''(m)) per row, or the values ψ(m)."""
        t = (self.margin - y * z) / self.smoothness
        if value:
            return self.smoothness * np.logaddexp(0.0, t)
        s = 0.5 + 0.5 * np.tanh(0.5 * t)  # the logistic sigmoid, overflow-free, numpy only
        return -s * y, s * (1.0 - s) / self.smoothness


class LogCosh:
    """ψ(r) = κ·log cosh(r/κ), r = ⟨w, x⟩ − y (a smooth Huber loss for regression).

    Convex, C^∞, |ψ'| = |tanh(r/κ)| ≤ 1, 0 < ψ'' = sech²(r/κ)/κ ≤ 1/κ.
    κ = ``width`` > 0; ``l2`` a data-independent ridge weight (a floor for μ).
    """

    regression = True

    def __init__(self, width: float = 1.0, *, l2: float = 0.0):
        self.width = check_positive(width, "width")
        self.l2 = check_scalar(l2, "l2", low=0.0)

    def __repr__(self) -> str:
        return f"LogCosh(width={self.width!r}, l2={self.l2!r})"

    @property
    def curvature_factor(self) -> float:
        """sup ψ'' = 1/κ."""
        return 1.0 / self.width

    def _derivs(self, z, y, value=False):
        t = (z - y) / self.width
        if value:
            a = np.abs(t)
            return self.width * (a + np.log1p(np.exp(-2.0 * a)) - math.log(2.0))
        th = np.tanh(t)
        return th, (1.0 - th * th) / self.width


def default_regularization(epsilon: float, n: int, data_norm: float, curvature: float) -> float:
    """The default μ = max(a·X²/(εn), c/(n(e^{fε} − 1))) (module docstring), a public rule."""
    eps = check_epsilon(epsilon)
    n = check_scalar(n, "n", low=1, integer=True)
    X = check_positive(data_norm, "data_norm")
    c = check_positive(curvature, "curvature")
    names = "epsilon, n, data_norm and curvature"
    with derived_from(names):
        mu = check_derived(REGULARIZATION * X * X / (eps * n), "the regularization", names)
        # The floor c/(n(e^{fε} − 1)) matters only for small ε; beyond fε = 700
        # it is below c·e^{−700}/n, negligible next to a·X²/(εn) (and e^{fε} overflows).
        if JACOBIAN_FRACTION * eps <= 700.0:
            mu = max(mu, accounting.objpert_regularization(eps, c, n, JACOBIAN_FRACTION))
        return mu


def _as_smooth_loss(loss):
    if isinstance(loss, (SmoothHinge, LogCosh)):
        return loss
    if isinstance(loss, _losses_mod.Logistic):
        # log(1 + e^{−m}) is SmoothHinge with h = 0, τ = 1 exactly (CMS's own example).
        return SmoothHinge(smoothness=1.0, margin=0.0, l2=loss.l2)
    raise TypeError("loss must be fasterm.erm.objpert.SmoothHinge, fasterm.erm.objpert.LogCosh or "
                    f"fasterm.losses.Logistic (a convex loss with a bounded, continuous ψ''), "
                    f"got {type(loss).__name__}")


@dataclass
class ObjPertResult:
    """What :func:`objective_perturbation` returns: the release and public constants only.

    Attributes
    ----------
    w : ndarray (float64, (d,)), the release ŵ + e — the private output.
    epsilon, delta : the privacy spent: ε_b + ε_jacobian + ε_output ≤ ε, and 0.0.
    noise_epsilon, jacobian_epsilon, output_epsilon : the three terms.
    regularization : μ used; lipschitz : L = X; curvature : c = sup ψ''·X².
    noise_scale : 2L/ε_b (‖b‖ ~ Gamma(d, noise_scale)).
    tolerance : the certified gradient norm g; output_scale : 2g/(μ ε_out)
        (‖e‖ ~ Gamma(d, output_scale)).
    steps : ``MAX_STEPS``, the solver's iteration cap — a public constant,
        not the number of iterations run.
    note : the privacy statement in words; info : n, d, the loss.
    nonprivate_diagnostics : None, unless the call asked for
        ``nonprivate_diagnostics=True``: then a dict of values that depend on
        the data and on the secret noise and are **not** covered by the
        privacy guarantee — ``noise_norm`` (‖b‖ drawn), ``output_noise_norm``
        (‖e‖ drawn), ``gradient_bound`` (the certified bound on ‖∇J(ŵ)‖
        reached, ≤ ``tolerance``) and ``steps`` (the iterations actually run).

    Every field but ``w`` (and ``nonprivate_diagnostics``, when asked for) is a
    function of public quantities only: ε, n, d, ``data_norm``, the loss's
    constants and the given regularization — the same for every data set of
    that size and every seed.  Changed in 0.x: ``noise_norm`` and
    ``gradient_bound`` are no longer fields (they identified the data set
    through the noise b; they are in ``nonprivate_diagnostics``), and
    ``steps`` is the public cap instead of the data-dependent iteration count.
    """

    w: np.ndarray
    epsilon: float
    delta: float
    noise_epsilon: float
    jacobian_epsilon: float
    output_epsilon: float
    regularization: float
    lipschitz: float
    curvature: float
    noise_scale: float
    tolerance: float
    output_scale: float
    steps: int
    note: str = ""
    info: dict = field(default_factory=dict, repr=False)
    nonprivate_diagnostics: dict | None = field(default=None, repr=False)


def _norm(v) -> float:
    """‖v‖₂ without overflow or underflow of the squares (entries up to the double range)."""
    m = float(np.max(np.abs(v))) if v.size else 0.0
    if m == 0.0 or not math.isfinite(m):
        return m
    return m * float(np.sqrt(np.sum(np.square(np.asarray(v, dtype=np.float64) / m))))


def _norm_noise(rng, d, scale):
    """A draw of density ∝ exp(−‖z‖/scale) on R^d: uniform direction, norm ~ Gamma(d, scale)."""
    while True:
        u = rng.standard_normal(d)
        nu = float(np.linalg.norm(u))
        if nu > 0.0:  # zero has probability 0; never taken in practice
            break
    r = float(rng.gamma(d, scale))
    return u * (r / nu), r


class _Objective:
    """J(w) = (1/n)Σψ + (μ/2)‖w‖² + ⟨bn, w⟩ (bn = b/n) on clipped float64 rows."""

    def __init__(self, loss, A, y, norms, mu, bn):
        self.loss, self.A, self.y, self.norms, self.mu, self.bn = loss, A, y, norms, mu, bn
        self.n = A.shape[0]

    def value(self, w):
        z = self.A @ w
        return float(np.sum(self.loss._derivs(z, self.y, value=True))) / self.n \
            + 0.5 * float(w @ (self.mu * w)) + float(self.bn @ w)

    def grad_hess_parts(self, w):
        z = self.A @ w
        coef, curv = self.loss._derivs(z, self.y)
        g = self.A.T @ coef / self.n + self.mu * w + self.bn
        return g, coef, curv

    def certify(self, w, h_rows, dtype=np.float64):
        """A rigorous upper bound on ‖∇J(w)‖ (exact arithmetic), from an evaluation in ``dtype``.

        ∇J(w) is recomputed in ``dtype`` (double, u = 2^-53, first; then
        ``numpy.longdouble`` — 80-bit on x86-64, u = 2^-64 — if double's
        rounding floor is too high for the tolerance), row block by
        row block, and bounded with Higham's γ_k = k·u/(1 − k·u) (a sum of k
        terms in any order errs by ≤ γ_k·Σ|terms|): the margins (k = d) move
        each ψ' by ≤ h·γ_d·‖x_i‖‖w‖, i.e. the gradient by ≤ γ_d·h_rows·‖w‖
        (h_rows = h·X²); the sum over rows and the two other terms (k = n + 2)
        by ≤ γ_{n+4}(Σ_i|ψ'_i|‖x_i‖/n + ‖μw‖ + ‖bn‖); ψ' itself carries a few
        ulps.  Extended precision keeps this floor ~2000 times below the
        tolerance for n·d up to ~1e10.
        """
        ld = dtype
        u = float(np.finfo(ld).eps) / 2.0
        n, d = self.A.shape
        wl = w.astype(ld)
        gsum = np.zeros(d, dtype=ld)
        rows = ld(0.0)
        block = max(1, (1 << 18) // max(d, 1))
        for lo in range(0, n, block):
            Ab = self.A[lo:lo + block].astype(ld)
            coef, _ = self.loss._derivs(Ab @ wl, self.y[lo:lo + block].astype(ld))
            gsum += Ab.T @ coef
            rows += np.abs(coef) @ self.norms[lo:lo + block].astype(ld)
        g = gsum / n + ld(1) * self.mu * wl + self.bn.astype(ld)

        def gamma(k):
            return k * u / (1.0 - k * u)
        wn = _norm(w)
        err = (gamma(n + 4) + 16 * u) * (float(rows) / n + _norm(self.mu * w)
                                         + _norm(self.bn)) + gamma(d + 2) * h_rows * wn
        # 2×: room for the rounding of the bound itself and of the norm of g
        gm = np.max(np.abs(g))
        gnorm = float(gm * np.sqrt(np.sum(np.square(g / gm)))) if gm > 0 else 0.0
        return gnorm * (1.0 + 1e-12) + 2.0 * err


def _solve(obj, d, tol, h_rows):
    """Damped Newton from 0 until ‖∇J(w)‖ is certified ≤ ``tol``; gradient steps as a fallback.

    Returns (w, certified bound, iterations).  Newton with backtracking
    converges globally on a strongly convex C² function; the fallback, plain
    gradient descent with step 1/β (β = h_rows + μ the smoothness), contracts
    ‖∇J‖² by (β/μ)(1 − μ/β)^k and so reaches ``tol`` in exact arithmetic.
    The certificate is :meth:`_Objective.certify`'s, tried whenever the
    double-precision gradient is below tol/2.  If even that never certifies
    (only conceivable without extended precision and with n·d·εn beyond
    ~1e15), ``ArithmeticError`` is raised rather than a release whose
    distance to the exact minimiser is not known.
    """
    mu = obj.mu
    w = np.zeros(d)
    it = 0
    stride = max(1, obj.n // max(_HESSIAN_ROWS, 8 * d))

    def certified(w, g):
        if _norm(g) > 0.5 * tol:
            return None
        bound = obj.certify(w, h_rows)
        if bound > tol:  # double's rounding floor too high: extended precision
            bound = obj.certify(w, h_rows, np.longdouble)
        return bound if bound <= tol else None

    for it in range(1, MAX_NEWTON_STEPS + 1):
        g, coef, curv = obj.grad_hess_parts(w)
        bound = certified(w, g)
        if bound is not None:
            return w, bound, it - 1
        # Newton's direction from a fixed, data-independent subset of rows
        # (every k-th): it only steers the iteration; the certificate above
        # uses every row.
        H = (obj.A[::stride].T * curv[::stride]) @ obj.A[::stride] / obj.A[::stride].shape[0]
        H.flat[::d + 1] += mu
        try:
            p = -np.linalg.solve(H, g)
        except np.linalg.LinAlgError:  # pragma: no cover - H ⪰ μI is never singular
            p = -g / (h_rows + np.max(mu))
        f0, slope, t = obj.value(w), float(g @ p), 1.0
        # Armijo with a rounding allowance: near the minimiser J is flat to
        # rounding along p and the full Newton step is the right one.
        slack = 64 * _U * (abs(f0) + 1.0)
        while t > 1e-12:
            if obj.value(w + t * p) <= f0 + 1e-4 * t * slope + slack:
                break
            t *= 0.5
        else:
            t = 1.0
        w = w + t * p
    beta = h_rows + float(np.max(mu))
    for k in range(MAX_GRADIENT_STEPS):  # pragma: no cover - Newton certifies first in every test
        g, _, _ = obj.grad_hess_parts(w)
        bound = certified(w, g)
        if bound is not None:
            return w, bound, it + k
        w = w - g / beta
    raise ArithmeticError("objective perturbation: the solve could not be certified to its tolerance "
                          "in this floating-point precision")  # pragma: no cover


def objective_perturbation(loss, X: np.typing.ArrayLike, y: np.typing.ArrayLike, epsilon: float, *,
                           data_norm: float, regularization: float | None = None,
                           label_bound: float | None = None,
                           random_state: None | int | np.random.Generator = None,
                           secure: bool | None = None,
                           nonprivate_diagnostics: bool = False) -> ObjPertResult:
    """Pure ε-DP ERM by objective perturbation with a certified solve (module docstring).

    Parameters
    ----------
    loss : :class:`SmoothHinge` (classification; y > 0 is +1, anything else
        −1), :class:`LogCosh` (regression) or ``fasterm.losses.Logistic``
        (= SmoothHinge(1, margin=0)).  Its ``l2`` is a floor for μ.
    X, y : (n, d) float32/float64 rows and (n,) labels.  Rows with
        ‖x‖ > ``data_norm`` are scaled to it; with ``label_bound`` regression
        labels are clipped to [−Y, Y] (LogCosh's constants do not need it).
    epsilon : ε > 0, the whole budget (δ = 0).
    data_norm : the public bound X on ‖x_i‖₂.
    regularization : μ > 0 to use instead of the default rule (then
        μ = max(μ, l2)); ``ValueError`` if log(1 + c/(nμ)) leaves no budget.
    random_state : None, int or Generator (one stream: b, then e).
    secure : must be falsy: no exact-grid version exists (``ValueError``).
    nonprivate_diagnostics : bool, default False.  True attaches
        ``result.nonprivate_diagnostics``, a dict with ‖b‖ and ‖e‖ as drawn,
        the certified residual reached and the iterations actually run.
        These depend on the data and on the secret noise: they are **not**
        private (from ‖b‖ and ``w`` alone the data set can be told from its
        neighbours), are for research on the mechanism only, and must never
        be published with ``w``.  The estimators never set it.

    Returns
    -------
    ObjPertResult with ``w`` (the private output), ``epsilon`` (≤ ε),
    ``delta = 0.0`` and the public calibration: (ε_b, ε_jacobian, ε_output),
    μ, L, c, the noise scales, the tolerance and ``steps = MAX_STEPS`` (the
    solver's iteration cap, a constant).  Changed in 0.x: the fields
    ``noise_norm`` and ``gradient_bound`` were removed and ``steps`` no
    longer counts the iterations run (all three depend on the data and on
    b; ``nonprivate_diagnostics=True`` gives them).

    Privacy: (``epsilon``, 0)-DP under replace-one neighbours with public n,
    by the theorem and the certified-solve argument of the module docstring.
    The guarantee covers the returned object exactly when
    ``nonprivate_diagnostics`` is False (the default): every field but ``w``
    is then a function of ε, n, d, ``data_norm``, ``regularization`` and the
    loss's constants.
    """
    if _secure.resolve(secure):
        raise ValueError("secure=True (or fasterm.secure_mode) is not available for objective "
                         "perturbation: its convex solve has no exact-grid version; use "
                         "fasterm.noisy_pgd(..., secure=True) for a floating-point-safe fit")
    sloss = _as_smooth_loss(loss)
    eps = check_epsilon(epsilon)
    data_norm = check_positive(data_norm, "data_norm")
    if regularization is not None:
        regularization = check_positive(regularization, "regularization")
    if label_bound is not None:
        label_bound = check_positive(label_bound, "label_bound")
    if not isinstance(nonprivate_diagnostics, (bool, np.bool_)):
        raise TypeError("nonprivate_diagnostics must be True or False, got "
                        f"{type(nonprivate_diagnostics).__name__}")
    rng = check_random_state(random_state)
    X, y = check_X_y(X, y, classification=not sloss.regression)
    n, d = X.shape
    # The rows as used: float64, clipped to X.  Rounding can leave a clipped
    # norm a few ulps above X; the constants use X padded by (d + 8)·4u.
    A = np.array(X, dtype=np.float64, order="C")
    norms = _losses_mod.row_norms(A)
    over = norms > data_norm
    if np.any(over):
        # x·X/‖x‖ through x/max|x_j| (entries ≤ 1), so rows whose norm
        # overflows a double are clipped too, never zeroed.
        rows = A[over]
        u = rows / np.max(np.abs(rows), axis=1)[:, None]
        A[over] = u * (data_norm / np.linalg.norm(u, axis=1))[:, None]
        norms[over] = np.linalg.norm(A[over], axis=1)
    Xpad = data_norm * (1.0 + 4.0 * (d + 8) * _U)
    if sloss.regression:
        yy = np.asarray(y, dtype=np.float64)
        if label_bound is not None:
            yy = np.clip(yy, -label_bound, label_bound)
    else:
        yy = np.where(y > 0, 1.0, -1.0)

    names = "epsilon, data_norm, n and the loss's constants (smoothness, width, l2)"
    with derived_from(names):
        L = check_derived(Xpad, "the Lipschitz constant", names)
        c = check_derived(sloss.curvature_factor * Xpad * Xpad, "the curvature bound", names)
        eps_out = OUTPUT_FRACTION * eps
        if regularization is None:
            mu = max(sloss.l2, default_regularization(eps, n, Xpad, c))
        else:
            mu = max(sloss.l2, regularization)
    try:
        eps_b = accounting.calibrate_objpert(eps, c, n, mu, eps_out)
    except ValueError as exc:  # a user's μ (or l2) too small for ε: name it
        raise ValueError(f"regularization μ = {mu!r} is too small for epsilon = {eps!r}: the Jacobian "
                         f"term log(1 + c/(n·μ)) with c = {c!r}, n = {n} leaves no budget for the "
                         "noise (raise regularization, or leave it None)") from exc
    with derived_from(names):
        eps_jac = accounting.objpert.objpert_log_det(c, n, mu)
        b_scale = accounting.norm_laplace_scale(2.0 * L, eps_b)
        # Relative to L + E‖b‖/n (public: E‖b‖ = d·noise scale), so that the
        # noise term's rounding never swamps the certificate when ε is tiny.
        tol = (L + d * b_scale / n) * max(GRADIENT_TOLERANCE, 64.0 * (n + d) * _U)
        out_scale = accounting.norm_laplace_scale(2.0 * tol / mu, eps_out)
        check_derived(1.0 + b_scale * d / n + out_scale * d, "the noise", names)
        spent = accounting.objpert_epsilon(eps_b, c, n, mu, eps_out)
    b, b_norm = _norm_noise(rng, d, b_scale)
    obj = _Objective(sloss, A, yy, norms, mu, b / n)
    w, gbound, steps = _solve(obj, d, tol, sloss.curvature_factor * Xpad * Xpad)
    e, e_norm = _norm_noise(rng, d, out_scale)
    # Only the release ŵ + e and public constants go on the result: ‖b‖, the
    # residual reached and the iterations run depend on the data and on b.
    diagnostics = None
    if nonprivate_diagnostics:
        diagnostics = {"noise_norm": b_norm, "output_noise_norm": e_norm, "gradient_bound": gbound,
                       "steps": steps}
    return ObjPertResult(
        w=w + e, epsilon=spent, delta=0.0, noise_epsilon=eps_b, jacobian_epsilon=eps_jac,
        output_epsilon=eps_out, regularization=mu, lipschitz=L, curvature=c, noise_scale=b_scale,
        tolerance=tol, output_scale=out_scale, steps=MAX_STEPS,
        note=("objective perturbation with a certified solve: (epsilon, 0)-DP under replace-one "
              "neighbours (Chaudhuri-Monteleoni-Sarwate 2011 Thm 9; Kifer-Smith-Thakurta 2012 Thm 2)"
              + ("; nonprivate_diagnostics holds values NOT covered by this guarantee"
                 if nonprivate_diagnostics else "")),
        info={"n": n, "d": d, "loss": repr(sloss)},
        nonprivate_diagnostics=diagnostics,
    )


def private_threshold(scores: np.typing.ArrayLike, y: np.typing.ArrayLike, epsilon: float, *, bound: float,
                      grid: int = THRESHOLD_GRID,
                      random_state: None | int | np.random.Generator = None) -> float:
    """A threshold t for the rule "y = +1 iff score > t", chosen by the exponential mechanism.

    Candidates: the public grid of ``grid`` points evenly spaced on
    [−``bound``, ``bound``] (``bound`` public, e.g. ‖coef‖·X for scores
    ⟨coef, x⟩ of rows clipped to ‖x‖ ≤ X; scores are clipped to it).  Score of
    a candidate: the number of rows it misclassifies (y > 0 read as +1).
    Replacing one row changes every count by at most 1, so the exponential
    mechanism with sensitivity 1 (McSherry & Talwar 2007; Dwork–Roth Thm 3.10,
    :func:`fasterm.mechanisms.exponential`) is (``epsilon``, 0)-DP under
    replace-one neighbours, when the scores of each row depend only on that
    row and on public (already released) quantities.
    """
    import fasterm.mechanisms as mechanisms

    bound = check_positive(bound, "bound")
    grid = int(check_scalar(grid, "grid", low=2, integer=True))
    eps = check_epsilon(epsilon)
    sc = check_array(scores, "scores", ndim=1, dtype=np.float64)
    labels = check_array(y, "y", ndim=1, dtype=np.float64)
    if labels.shape[0] != sc.shape[0]:
        raise ValueError(f"y has {labels.shape[0]} entries but scores has {sc.shape[0]}")
    pos = labels > 0
    ts = bound * np.linspace(-1.0, 1.0, grid)  # (not linspace(−bound, bound): 2·bound may overflow)
    # errors(t) = #{pos with s ≤ t} + #{neg with s > t}, from sorted scores
    s_pos = np.sort(np.clip(sc[pos], -bound, bound))
    s_neg = np.sort(np.clip(sc[~pos], -bound, bound))
    errors = (np.searchsorted(s_pos, ts, side="right")
              + (s_neg.shape[0] - np.searchsorted(s_neg, ts, side="right"))).astype(np.float64)
    k = mechanisms.exponential(errors, 1.0, eps, random_state=random_state)
    return float(ts[k])
