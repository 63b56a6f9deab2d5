"""Multiclass linear models on one privacy budget: the multinomial logistic and Crammer–Singer losses.

:mod:`fasterm.linear_model` calls :func:`fit_multiclass` for K > 2 classes
(two classes keep the binary path of :mod:`fasterm.linear_model._rules`, bit for bit).
The model is one weight matrix W of shape (d + 1) × K, and every step
releases *one* noisy gradient of the whole matrix, so the whole (ε, δ) serves
all K classes.  Why, how the defaults were chosen, and the measurements:
docs/multiclass.rst.

Losses (z = Wᵀa the K scores of the augmented row a, y the class index)
    logistic  ℓ(W) = −log softmax(z)_y, ∇ℓ = a (p − e_y)ᵀ with p = softmax(z);
    hinge     ℓ(W) = max_j (z_j + [j ≠ y]) − z_y (Crammer & Singer 2001),
              a subgradient a (e_j − e_y)ᵀ for the maximising j (zero when j = y).

Sensitivity.  ‖a uᵀ‖_F = ‖a‖·‖u‖, ‖p − e_y‖² ≤ 2(1 − p_y)² ≤ 2 and
‖e_j − e_y‖ = √2, so G = √2·X_aug (:func:`fasterm.linear_model._rules.augmented_norm`);
per-example gradients are clipped at c ≤ G in Frobenius norm, so the averaged
gradient moves by at most Δ₂ = 2c/n under replace-one neighbours.

Privacy.  The T releases are calibrated as the binary models', in dimension
(d + 1)·K: Gaussian noise by μ-GDP (Dong, Roth & Su 2022, Thm. 2.7 and
Cor. 3.3; :func:`fasterm.accounting.calibrate_steps`), Laplace noise by
:func:`fasterm.noisy_pgd`'s calibrations, secure mode by :mod:`fasterm.mechanisms.secure`.
Step, ridge α·W, projection onto the Frobenius ball of radius ``radius`` and
momentum are post-processing; clipping changes *what* is optimised, never the
privacy.

Defaults (public: n, d, K, ε, δ, the declared bounds).  Solver "auto" is
the binary rule (:func:`fasterm.linear_model._rules.choose_solver`, applied by the fit plan,
:mod:`fasterm.linear_model._plan`): "sgd" for the logistic loss with
Gaussian noise from n = 5,000 rows, "gd" below and for Laplace noise, "pgd"
(Theorem 2 of :mod:`fasterm.erm.optimize`, G = c + α·R) for the hinge loss
and in secure mode; clip "auto" the binary rule.  The step uses
β₀ = X_aug²/K + α, the curvature at W = 0 (the worst case is X_aug²/2,
Böhning 1992): a public multiple beyond Theorem A's step, so no utility bound
is claimed.  "gd": T = ``max_steps`` or :func:`gd_budget` (80, down to 20 when
one pass n·(d + 1)·K exceeds GD_WORK/80; Laplace noise keeps the binary T
rule within it), η = min(4, H/T)/β₀, horizon H = min(``HORIZON_MAX``,
``HORIZON_NOISE``/ν), ν = √(E‖h_t‖²/T)/c (:func:`step_multiple`), momentum by
the binary rule, the last iterate.  "sgd": Poisson minibatches of expected
size clamp(n/100, 128, 1024), SGD_EPOCHS × the binary epochs, σ from
:func:`fasterm.accounting.calibrate_sgd_sigma` (replace-one; Rényi DP of the
subsampled Gaussian, Mironov, Talwar & Zhang 2019, converted by Balle et al.
2020, Thm. 21) for δ less the batch cap's share δ·2⁻²⁰ (one clip per run: Lemma
"one-sided margin" and Theorem "capped batches" of docs/guarantees.rst), η = min(4, 15/(ν·T))/β₀ (:func:`sgd_step_multiple`), the
average of the last half of the iterates (post-processing).  δ = 0 with
``solver="auto"`` and no ``noise``: the noisy class sums (:func:`_fit_class_sums`),
one Laplace release, (ε, 0)-DP by the Laplace mechanism.

Gradients: the compiled kernel (:func:`kernel_sum`, src/cpp/fasterm/multiclass.hpp),
one pass over the raw rows (dense or CSR, a minibatch in place) with the design
row built on the fly, every product and sum in double.  The step loop: one compiled call
(:mod:`fasterm.linear_model._mcrun`), the same bits as the numpy loop (kept for secure mode).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import fasterm.accounting as accounting
import fasterm.erm._backends as _backends
import fasterm.erm._engine as _engine
import fasterm.erm._float_margin as _float_margin
import fasterm.erm._mclosses as _mclosses
import fasterm.erm._sgdrun as _sgdrun
import fasterm.linear_model._mcrun as _mcrun
import fasterm.erm.core as core
from ._rules import GD_MAX_STEPS, LR_MULTIPLE, augmented_norm
from ..erm.constraints import L2Ball
from ..erm.losses import row_norms
from ..erm.optimize import OptimizeResult
from ..erm.solvers import ACCELERATE_BELOW
from .._validation import check_array, check_csr, check_derived, check_random_state, derived_from, is_sparse
from .._warnings import warn_cost

__all__ = ["fit_multiclass", "grad_sum", "kernel_sum", "lipschitz", "sgd_step_multiple",
           "step_multiple"]

KINDS = ("logistic", "hinge")
#: The "gd" solver's compute budget T for K > 2 (the binary models' is GD_MAX_STEPS = 40): 80 smaller
#: steps at the same horizon η·β₀·T (why: docs/multiclass.rst).
GD_STEPS = 80
#: The largest horizon η·β₀·T: LR_MULTIPLE × GD_MAX_STEPS = 4 × 40 (docs/multiclass.rst, η = 4/β₀, 40 steps).
HORIZON_MAX = LR_MULTIPLE * GD_MAX_STEPS
#: The horizon at high noise, HORIZON_NOISE/ν (:func:`step_multiple`; docs/multiclass.rst).
HORIZON_NOISE = 15.0
#: "sgd": the epochs are SGD_EPOCHS × the binary rule's, and the output is the average of the last
#: TAIL_AVERAGE of the iterates (docs/multiclass.rst, third round).
SGD_EPOCHS = 2.0
TAIL_AVERAGE = 0.5
#: "gd" with Gaussian noise: T = clamp(GD_WORK/(n·p·K), GD_MIN_STEPS, GD_STEPS) (a compute budget:
#: n·p·K is one pass of the gradient; docs/multiclass.rst).
GD_WORK = 2 ** 28
#: δ = 0 (class sums): rows are clipped in L1 norm to L1_CLIP·√d·X, half the worst case.
L1_CLIP = 0.5
GD_MIN_STEPS = 20
_SCALES = "epsilon, delta, data_norm, clip, steps and radius"


def lipschitz(data_norm) -> float:
    """G = √2·X: the Frobenius bound of a per-example gradient for rows of norm ≤ X (module docstring)."""
    return math.sqrt(2.0) * data_norm


def step_multiple(noise_sq, steps, clip) -> float:
    """η·β₀ of the "gd" solver: min(LR_MULTIPLE, min(HORIZON_MAX, HORIZON_NOISE/ν)/T) (module docstring).

    ν = √(E‖h_t‖²/T)/c, the noise of the T releases on the scale of the clip
    (for Gaussian noise 2√D/(nμ), independent of T): public, as the
    calibration is.  The horizon η·β₀·T shrinks as 1/ν once the noise
    dominates (the bias–variance trade-off of Theorem A, whose optimal horizon
    is ∝ 1/ν; the constants were chosen on data other than digits,
    docs/multiclass.rst); the step never exceeds LR_MULTIPLE/β₀.
    """
    nu = math.sqrt(noise_sq / steps) / clip
    horizon = HORIZON_MAX if nu == 0.0 else min(HORIZON_MAX, HORIZON_NOISE / nu)
    return min(LR_MULTIPLE, horizon / steps)


def sgd_step_multiple(noise_sq, steps, clip) -> float:
    """η·β₀ of the "sgd" solver: min(LR_MULTIPLE, HORIZON_NOISE/(ν·T)) (module docstring).

    ν = √(E‖h_t‖²/T)/c as in :func:`step_multiple`, with h_t the noise of one
    minibatch step (σ·c/m per coordinate, m = q·n): the horizon η·β₀·T is the
    binary SGD rule's LR_MULTIPLE·T (step 4/β₀ at every step) unless the noise
    horizon HORIZON_NOISE/ν is shorter.  Public: T, σ, c, m and D are.
    """
    nu = math.sqrt(noise_sq / steps) / clip
    if nu == 0.0:
        return LR_MULTIPLE
    return min(LR_MULTIPLE, HORIZON_NOISE / (nu * steps))


_KIND_CODE = {"logistic": _mclosses.LOGISTIC, "hinge": _mclosses.HINGE}


def kernel_sum(kind, X, y, W, norms, data_norm, intercept, clip, out, weights=None, rows=None):
    """out ← Σ_i w_i·clip_c(a_i u_iᵀ) over the rows of X (all, or ``rows``), by the compiled kernel.

    ``X``: the raw (n, d) rows (numpy, C-contiguous, or a canonical CSR
    matrix) in W's dtype; the design row a_i = (x_i·min(1, X/‖x_i‖), s) is
    built on the fly (``data_norm`` X ≤ 0: rows as given; ``intercept`` s = 0:
    no column), so the (n, d + 1) design is never formed.  ``y``: int64 class
    indices; ``norms``: ‖x_i‖ (float64) or None; u_i, the clip c and the
    weights as :func:`grad_sum`.  One pass over the rows, every product and
    sum in double (src/cpp/fasterm/multiclass.hpp).
    """
    code = _KIND_CODE[kind]
    if clip > 0.0:  # the inner bound: each gradient as formed has exact norm ≤ c (times its weight)
        clip = inner_clip(clip, X.shape[1] + (intercept > 0.0), W.shape[1], W.dtype)
    if is_sparse(X):
        _mclosses.csr_grad_sum(code, X.data, X.indices, X.indptr, X.shape[1], y, W, norms, data_norm,
                               intercept, clip, out, weights, rows)
    else:
        _mclosses.grad_sum(code, X, y, W, norms, data_norm, intercept, clip, out, weights, rows)
    return out


def inner_clip(clip, p, K, dtype):
    """c' = c·(1 − (p + K + 10)·2⁻⁵³ − 3u), u the unit roundoff of ``dtype``: the clip
    :func:`kernel_sum` hands the compiled kernel so that each per-example gradient as
    formed has exact Frobenius norm ≤ c (times its weight).

    Proof (docs/guarantees.rst, "Floating point", as for the binary kernels' inner
    bound), every step in double (src/cpp/fasterm/multiclass.hpp): ‖x‖ is a sum of d
    squares and a square root, the design row's norm ‖a‖ = √((r‖x‖)² + s²) four more
    roundings, ‖u‖ a sum of K squares and a root, ĝ = ‖a‖·‖u‖ one: ĝ ≥ ‖a‖‖u‖(1 −
    ((p + K)/2 + 8)·2⁻⁵³); the factor f = fl(c'/ĝ) rounds once, f·w, f·r (or f·s) and
    its product with u_k once each (the product with x_j is the sum's, counted in
    :func:`sum_theta`), c' itself once; f' (1 + 2⁻⁵³)⁵ ≤ 1 − ((p + K)/2 + 8)·2⁻⁵³ for
    f' = c'/c.  The 3u (float32) also covers a one-row sum's rounding to the dtype.
    An unclipped row (ĝ ≤ c') keeps f = 1.
    """
    u = 2.0 ** -24 if np.dtype(dtype) == np.float32 else 2.0 ** -53
    return clip * ((1.0 - float(p + K + 10) * 2.0 ** -53) - 3.0 * u)


def grad_sum(kind, A, y, W, norms, clip, out, weights=None):
    """out ← Σ_i w_i·clip_c(∇ℓ_i(W)) for the (p, K) matrix W (``out`` of the same shape).

    ``A``: the (n, p) design rows (already clipped to the row bound; a numpy
    array or a scipy.sparse CSR matrix), ``y`` the class indices, ``norms``
    the row norms ‖a_i‖, ``clip`` c > 0: each per-example gradient a_i u_iᵀ
    (u_i = softmax(Wᵀa_i) − e_y, or e_j − e_y for the hinge) is scaled by
    min(1, c'/(‖a_i‖·‖u_i‖)) (c' = :func:`inner_clip`, a hair below c), then by
    its sample weight w_i (``weights``, checked and in [0, B]; None: 1).  The
    compiled kernel (:func:`kernel_sum`, rows taken as given).
    """
    if not is_sparse(A):
        A = np.ascontiguousarray(A)
    W = np.ascontiguousarray(W, dtype=A.dtype)
    res = np.empty(W.shape, dtype=A.dtype)
    kernel_sum(kind, A, np.asarray(y, dtype=np.int64), W, np.asarray(norms, dtype=np.float64), 0.0, 0.0,
               float(clip), res, weights)
    out[...] = res
    return out


def gd_budget(n, p, K) -> int:
    """The "gd" solver's default T for Gaussian noise: clamp(⌊GD_WORK/(n·p·K)⌋, GD_MIN_STEPS, GD_STEPS).

    A compute budget on public sizes only (n rows, p = d + 1 design columns, K
    classes): 80 steps while one gradient pass n·p·K is below GD_WORK/80 ≈ 3.4·10⁶
    (digits: 8·10⁵), fewer — down to 20 — for wider problems, whose step grows
    with 1/T at the same horizon (:func:`step_multiple`; docs/multiclass.rst).
    """
    return int(min(GD_STEPS, max(GD_MIN_STEPS, GD_WORK // (n * p * K))))


def sum_theta(n, dtype):
    """θ of :func:`kernel_sum`'s sum of n rows: |Ŝ − S| ≤ θ Σ_i |g_i| entrywise, whatever order
    the compiled kernel (blocks, threads) adds in — each term meets at most n roundings in
    double (its product x_j·v_k and n − 1 additions): γ_n(2⁻⁵³) for float64; for float32
    γ_n(2⁻⁵³) plus u_T(1 + ·) for the rounding of the double total to float32."""
    g = _float_margin.gamma(max(int(n), 1), _float_margin.U)
    if np.dtype(dtype) == np.float32:
        return g + _float_margin.U32 * (1 + g)
    return g


def _row_sums(X):
    """(Σ_j |x_ij|, Σ_j x_ij²) of each row, in double, added left to right within the row
    (dense: column by column over blocks of rows; CSR: :func:`numpy.add.at` in storage order):
    each row's values depend on that row alone, not on the other rows or the alignment."""
    n = X.shape[0]
    l1, ss = np.zeros(n), np.zeros(n)
    if is_sparse(X):
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        v = np.asarray(X.data, dtype=np.float64)
        np.add.at(l1, rows, np.abs(v))
        np.add.at(ss, rows, v * v)
        return l1, ss
    for lo in range(0, n, 4096):
        blk = np.asarray(X[lo:lo + 4096], dtype=np.float64).T  # (d, b) view of the widened block
        a, q = l1[lo:lo + 4096], ss[lo:lo + 4096]
        for col in blk:
            a += np.abs(col)
            q += col * col
    return l1, ss


def class_sums(X, y, K, data_norm, clip, weights=None):
    """Ŝ = fl(Σ_i o_i x_i e_{y_i}ᵀ), the (d, K) float64 class sums of the δ = 0 release.

    o_i = min(min(1, X/‖x_i‖), fl(c/l_i))·w_i for the row's L1 norm l_i (X = ``data_norm``,
    no L2 clip when X ≤ 0; c = ``clip``; w_i the weight in [0, B], 1 without ``weights``):
    the row clipped to X in L2 and then to c in L1.  The float margin
    (:func:`fasterm.erm._float_margin.class_sums_theta`, which proves it): o_i·‖x_i‖₁ ≤ w_i·c·ρ
    exactly — l_i ≥ ‖x_i‖₁(1 − γ_{d−1}) (:func:`_row_sums`); fl(c/l_i) and fl(o·w_i) each
    round up by at most 1 + 2u, and a coefficient below the smallest normal is set to 0
    (a quotient that overflows means l_i < c/DBL_MAX: the row is negligible; l_i = 0: a zero
    row).  Each o_i is a function of row i alone (sequential sums, elementwise operations),
    and the product Xᵀ(o e_yᵀ) is one BLAS (or scipy) product, n terms per entry in an
    order fasterm does not control: the order-free bound γ_n holds (no Strassen-like
    algorithm).  Float32 rows are widened to double exactly.
    """
    n, d = X.shape
    tiny = np.finfo(np.float64).tiny
    l1, ss = _row_sums(X)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        q = np.where(l1 > 0, clip / np.where(l1 > 0, l1, 1.0), 1.0)  # l1 = inf: 0
        q[q < tiny] = 0.0
        r2 = np.ones(n) if not data_norm > 0 else np.minimum(1.0, data_norm / np.maximum(np.sqrt(ss), tiny))
        o = np.minimum(r2, q)
        if weights is not None:
            o = o * np.asarray(weights, dtype=np.float64)
            o[o < tiny] = 0.0
    O = np.zeros((n, K))
    O[np.arange(n), np.asarray(y, dtype=np.intp)] = o
    if is_sparse(X):
        return np.asarray(X.astype(np.float64).T @ O, dtype=np.float64)
    return np.asarray(X, dtype=np.float64).T @ O


def _laplace_l1_scale(wb: float, c1: float, eps: float) -> tuple[float, float]:
    """(Δ₁, b): Δ₁ = 2B·c₁ rounded up and b the smallest float with Δ₁/b ≤ ε exactly, so the
    Laplace mechanism's ε (Dwork & Roth 2014, Thm 3.6) is never a rounding above the budget."""
    exact = Fraction(2) * Fraction(wb) * Fraction(c1)
    l1 = float(exact)
    if Fraction(l1) < exact:
        l1 = math.nextafter(l1, math.inf)
    b = l1 / eps
    if not math.isfinite(b) or b <= 0.0:
        return l1, b  # reported by the caller's checks
    while Fraction(l1) > Fraction(eps) * Fraction(b):
        b = math.nextafter(b, math.inf)
    while Fraction(l1) <= Fraction(eps) * Fraction(math.nextafter(b, 0.0)):
        b = math.nextafter(b, 0.0)
    return l1, b


def _fit_class_sums(X, y, K, *, epsilon, data_norm, radius, alpha, fit_intercept, intercept_scaling,
                    random_state, sample_weight, weight_bound):
    """δ = 0, K > 2 (``solver="auto"``, no ``noise``): the noisy class sums, one pure-ε Laplace release.

    Release S̃ = S + Lap(Δ₁/ε)^{d×K}, S = Σ_i w_i x̄_i e_{y_i}ᵀ the (d, K) matrix
    of per-class sums of the rows clipped to ``data_norm`` X in L2 and then
    to c₁ = L1_CLIP·√d·X in L1 (x̄ = x·min(1, X/‖x‖)·min(1, c₁/‖·‖₁); the
    worst case of ‖x‖₁ for ‖x‖₂ ≤ X is √d·X), weighted by the sample weights
    in [0, B] (B = 1 unweighted).  Replacing one record moves S by
    w x̄ e_yᵀ − w′x̄′e_{y′}ᵀ, of L1 norm ≤ Δ₁ = 2B·c₁, so the release is (ε, 0)-DP by the
    Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006, Prop. 1; float
    Laplace noise, as fasterm's other non-secure Laplace releases).  Under floating
    point the rows are clipped in L1 at c₁/(1 + Θ) (:func:`class_sums`,
    Θ = :func:`fasterm.erm._float_margin.class_sums_theta`), so that the *computed* sums of
    neighbouring data differ by at most Δ₁ in L1.  The model
    is post-processing of S̃ alone: W = η/n·(S̃ − S̃·11ᵀ/K), the one gradient
    step from W = 0 of the unclipped multinomial loss (−∇ = Σ x̄(e_y − 1/K)ᵀ)
    with η = LR_MULTIPLE/β₀, projected onto the Frobenius ball of radius
    ``radius``; no intercept is estimated (``intercept_`` = 0: the intercept
    column would cost noise and carries the class counts only).  Chosen over
    Laplace noisy gradient descent in (d + 1)·K dimensions, which needs the
    L1 bound √D·Δ₂ of a clipped gradient per step: docs/multiclass.rst.
    """
    import fasterm.mechanisms._noise as _noise
    from ..mechanisms.noise import scale_for

    if is_sparse(X):
        X = check_csr(X, "X")
    n, d = X.shape
    weights, wb = core.sample_weights(sample_weight, weight_bound, n)
    eps = float(epsilon)
    with derived_from("epsilon, data_norm and weight_bound"):
        c1 = L1_CLIP * math.sqrt(d) * data_norm  # the rows' L1 clip (≤ the bound √d·X of ‖x̄‖₁)
        l1, b = _laplace_l1_scale(wb, c1, eps)
        l1 = check_derived(l1, "the L1 sensitivity", "data_norm")
        b = check_derived(b, "the Laplace scale", "epsilon and data_norm")
    with derived_from("data_norm and weight_bound"):
        if Fraction(wb) * Fraction(c1) < _float_margin.class_sums_floor(n, d):
            raise ValueError(f"data_norm={data_norm!r} (times weight_bound) is too small for the float margin of "
                             f"the class sums of {n} rows ({d} columns): their underflow is not covered")
    c_eff = _float_margin.effective_clip(c1, _float_margin.class_sums_theta(n, d))
    S = class_sums(X, y, K, data_norm, c_eff, weights)
    if not np.isfinite(S).all():
        check_array(X, "X", ndim=2)
    noise = np.empty(d * K, dtype=np.float64)
    _noise.laplace_fill(check_random_state(random_state).bit_generator, noise, scale_for(b, np.float64))
    S += noise.reshape(d, K)
    # post-processing of S̃: centre the class columns, one gradient step, the ball
    S -= S.mean(axis=1, keepdims=True)
    s = intercept_scaling  # resolved by the plan
    dn = augmented_norm(data_norm, fit_intercept, s)
    lr = LR_MULTIPLE / (wb * dn * dn / K + alpha)
    p = d + bool(fit_intercept)
    Wm = np.zeros((p, K))
    Wm[:d] = (lr / n) * S
    ball = L2Ball(radius, p * K)
    w = ball.project(Wm.ravel().astype(X.dtype))
    coef = w.reshape(p, K)[:d].T.astype(X.dtype, copy=True)
    intercept = np.zeros(K, dtype=X.dtype)
    result = OptimizeResult(
        w=w, epsilon=eps, delta=0.0, steps=1, lr=lr, noise="laplace", calibration="pure",
        noise_scale=b / n, lipschitz=None, sensitivity=l1 / n, noise_norm_sq=2.0 * d * K * (b / n) ** 2,
        utility_bound=None,
        info={"n": n, "d": d, "n_classes": K, "solver": "class_sums", "sensitivity_norm": "l1",
              "secure": None, "weight_bound": None if weights is None else wb})
    return coef, intercept, result


def _sgd_numpy(kind, Xw, yi, norms, data_norm, s_col, K, clips, w, steps, start, q, m, lr, alpha, backend, ball,
               weights):
    """The numpy loop of :func:`fasterm.linear_model._mcrun.sgd` (same draws, same bits): the tail sum."""
    rng, n, p = backend.rng, Xw.shape[0], w.shape[0] // K
    tail = np.zeros(w.shape[0], dtype=np.float64)
    count = [0]

    def step_grad(w, out):  # called with w_t, t = 0, …, T − 1
        if count[0] > start:
            np.add(tail, w, out=tail)
        count[0] += 1
        # Poisson sampling: |B| ~ Bin(n, q), then a uniform subset of that size — the law of n
        # independent q-coins (as fasterm.noisy_sgd), read in place by the kernel.
        size = int(rng.binomial(n, q))
        if size == 0:
            out.fill(0.0)
            return
        rows = np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n)
        kernel_sum(kind, Xw, yi, w.reshape(p, K), norms, data_norm, s_col, clips(size), out.reshape(p, K),
                   weights, rows.astype(np.int64, copy=False))

    w = _engine.descend(step_grad, w, ball, steps, lr, scale=1.0 / m, noise=backend, reg=alpha, average=False,
                        momentum=None, out_dtype=w.dtype)
    return tail + w  # w_T


def fit_multiclass(plan, X, y, *, random_state, sample_weight=None):
    """Fit one private K-class linear model as ``plan`` says; returns ``(coef, intercept, result)``.

    ``plan``: the :class:`fasterm.linear_model._plan.FitPlan` of this X with
    K = ``plan.n_classes`` > 2.  ``y`` holds class indices in [0, K); ``coef``
    has shape (K, d) and X's dtype, ``intercept`` shape (K,); ``result`` is the
    :class:`fasterm.OptimizeResult` with the (ε, δ) spent and ``w`` the
    flattened (d + 1) × K (or d × K) weight matrix.  Module docstring for the rules.
    A scipy.sparse X stays sparse (its CSR design, :func:`fasterm.erm._design.design`);
    ``sample_weight`` (mapped into [0, ``weight_bound``] B) multiplies each
    clipped per-example gradient, so Δ₂ = 2B·c/n (as in :func:`fasterm.noisy_pgd`).
    """
    kind, K, epsilon, delta = plan.kind, plan.n_classes, plan.epsilon, plan.delta
    data_norm, radius, alpha, fit_intercept = plan.data_norm, plan.radius, plan.alpha, plan.fit_intercept
    weight_bound, steps, max_steps = plan.weight_bound, plan.steps, plan.max_steps
    if plan.is_class_sums:
        return _fit_class_sums(X, y, K, epsilon=epsilon, data_norm=data_norm, radius=radius, alpha=alpha,
                               fit_intercept=fit_intercept, intercept_scaling=plan.intercept_scaling,
                               random_state=random_state, sample_weight=sample_weight, weight_bound=weight_bound)
    solver, noise, calibration, secure = plan.optimiser, plan.noise, plan.calibration, plan.secure
    sgd = plan.is_sgd
    if is_sparse(X):
        X = check_csr(X, "X")
    n, d = X.shape
    s = plan.intercept_scaling
    weights, wb = core.sample_weights(sample_weight, weight_bound, n)
    p = d + bool(fit_intercept)
    dim = p * K
    dn = plan.augmented_norm
    G = lipschitz(dn)
    c_clip = plan.clip
    c = wb * c_clip  # a weighted record's clipped gradient has norm ≤ B·c
    sens = 2.0 * c / n
    ball = L2Ball(radius, dim)
    if sgd:
        rng = check_random_state(random_state)
        backend = None
    else:
        backend = _backends.for_fit(secure, noise, calibration, random_state)
    with derived_from(_SCALES):
        beta0 = wb * dn * dn / K + alpha
        if sgd:
            q = plan.sample_rate
            delta_fit, eta_max = _float_margin.sgd_delta(delta)  # δ = δ_fit + η_max (the batch cap's share)
            sigma = accounting.calibrate_sgd_sigma(q, steps, epsilon, delta_fit, "replace_one")
            eps_spent = min(epsilon, accounting.sgd_epsilon(q, sigma, steps, delta_fit, "replace_one"))
            m = q * n  # the expected batch size: public (n is public under replace-one)
            scale = sigma * c
            noise_sq = dim * (scale / m) ** 2
            lr = check_derived(sgd_step_multiple(noise_sq, steps, c) / beta0, "the step size", "data_norm")
            momentum = None
            average = False
            backend = _backends.FloatNoise("gaussian", "l2", rng, scale=scale / m)
            check_derived(1.0 + lr * (c / q + alpha * radius + 64.0 * scale / m * math.sqrt(dim)),
                          "the largest step", "lr, " + _SCALES)
        elif plan.is_gd:
            lr = check_derived(LR_MULTIPLE / beta0, "the step size", "data_norm")
            budget = max_steps
            if steps is None:
                if noise == "gaussian":
                    # Gaussian noise of T releases adds η²·T·σ² ∝ η²T² = (horizon/β₀)² at a fixed
                    # horizon ηT, whatever T: more steps only refine the path (step_multiple)
                    steps = int(budget)
                else:
                    steps = core.laplace_steps(1.0 / lr, lr, float(radius), sens, dim, epsilon, delta,
                                               calibration, budget)
            cal = backend.calibrate(sens, dim, steps, epsilon, delta)
            lr = check_derived(step_multiple(cal.noise_sq(dim), steps, c) / beta0, "the step size",
                               "data_norm")
            momentum = core.fista(steps) if math.sqrt(cal.noise_sq(dim)) <= ACCELERATE_BELOW * c else None
            average = False
        else:
            R = float(ball.diameter)
            G_bound = c + alpha * radius
            if steps is None:
                steps = core.pgd_steps(noise, calibration, sens, dim, epsilon, delta, R, G_bound, max_steps)
            cal = backend.calibrate(sens, dim, steps, epsilon, delta)
            lr = core.pgd_bound(R, G_bound + cal.bias_norm(dim), cal.noise_sq(dim), steps)[1]
            momentum = None
            average = True
        if not sgd:
            check_derived(1.0 + lr * (wb * G + alpha * radius + 64.0 * cal.noise_scale * math.sqrt(dim)),
                          "the largest step", "lr, " + _SCALES)

    work = np.dtype(backend.work_dtype(X.dtype))
    # The kernel builds each design row (x·min(1, X/‖x‖), s) on the fly: X itself, in the work dtype.
    if is_sparse(X):
        Xw = X.astype(work) if X.dtype != work else X
    else:
        Xw = np.ascontiguousarray(X, dtype=work)
    norms = row_norms(Xw)
    yi = np.asarray(y, dtype=np.int64)
    s_col = float(s) if fit_intercept else 0.0

    # The floating-point margin of a release (docs/guarantees.rst, "Floating point"): clip at
    # c/(1 + Θ), Θ from the order-free bound of the sum (public: the number of rows summed, the
    # dtype, the scale, α, the radius), valid for the kernel's summation order as for any other.
    def release_clip(rows, scale):
        return _float_margin.release_clip("dense", np.dtype(work), int(rows), int(dim), float(c_clip), float(scale),
                                          float(wb * c_clip), float(alpha), float(radius), momentum is not None,
                                          sum_theta(rows, work))

    code = _KIND_CODE[kind]
    w = np.zeros(dim, dtype=work)
    warn_cost(steps, m if sgd else n, p, classes=K)  # public sizes: T, the (expected) batch, p, K
    if sgd:
        # The output: the average of the last iterates w_t, start < t ≤ T (TAIL_AVERAGE of them, at
        # least one).  Each is a function of the earlier releases, so their average is
        # post-processing; it lies in the ball (convex) and is projected to remove rounding.
        start = steps - max(1, int(math.ceil(TAIL_AVERAGE * steps)))
        # one clip for every batch: the one-sided margin of batches of at most M rows, M the public
        # cap of _float_margin.batch_cap (docs/guarantees.rst, "The margin of Poisson-subsampled SGD")
        cap = _float_margin.batch_cap(n, q, steps, epsilon, eta_max)
        clips = _sgdrun.RunClip(_float_margin.run_clip(c_clip, work, cap, dim, scale=1.0 / m, bound=wb * c_clip,
                                                       reg=float(alpha), radius=float(radius),
                                                       theta=sum_theta(cap, work)))
        if not clips.clip > 0.0:  # a subnormal clip rounds to 0, which the kernels read as "no clip"
            raise ValueError(f"clip={c_clip!r} is too small: the run's clip with its floating-point margin rounds to 0")
        if _mcrun.runs(Xw, ball, backend, sgd=True):
            tail = _mcrun.sgd(code, Xw, yi, norms, data_norm, s_col, K, clips, lambda t: inner_clip(t, p, K, work), w,
                              steps, start, q, m, lr, float(alpha), backend, ball, weights)
        else:
            tail = _sgd_numpy(kind, Xw, yi, norms, data_norm, s_col, K, clips, w, steps, start, q, m, lr, float(alpha),
                              backend, ball, weights)
        w = ball.project((tail / (steps - start)).astype(X.dtype))
    else:
        c_eff = release_clip(n, 1.0 / n)
        if _mcrun.runs(Xw, ball, backend, sgd=False):
            w = _mcrun.gd(code, Xw, yi, norms, data_norm, s_col, K, inner_clip(c_eff, p, K, work), w, steps, lr,
                          float(alpha), backend, ball, momentum, average, weights, X.dtype)
        else:
            def step_grad(w, out):
                kernel_sum(kind, Xw, yi, w.reshape(p, K), norms, data_norm, s_col, c_eff, out.reshape(p, K), weights)
            w = _engine.descend(step_grad, w, ball, steps, lr, scale=1.0 / n, noise=backend, reg=float(alpha),
                                average=average, momentum=momentum, out_dtype=X.dtype)
    if not np.isfinite(w).all() and not is_sparse(X):  # a NaN or inf in X reaches every step's sum
        check_array(X, "X", ndim=2)
    Wm = w.reshape(p, K)
    coef = Wm[:d].T.astype(X.dtype, copy=True)
    intercept = (Wm[d] * s).astype(X.dtype) if fit_intercept else np.zeros(K, dtype=X.dtype)
    info = {"n": n, "d": d, "n_classes": K, "solver": solver, "accelerate": momentum is not None,
            "lipschitz_loss": G, "secure": None if sgd else backend.secure_calibration,
            "weight_bound": None if weights is None else wb}
    if sgd:
        info.update({"sample_rate": q, "noise_multiplier": sigma, "neighbors": "replace_one"})
        result = OptimizeResult(
            w=w, epsilon=eps_spent, delta=delta, steps=steps, lr=lr, noise="gaussian", calibration=None,
            noise_scale=scale, lipschitz=c, sensitivity=c, noise_norm_sq=noise_sq, utility_bound=None,
            info=info)
    else:
        result = OptimizeResult(
            w=w, epsilon=cal.epsilon, delta=cal.delta, steps=steps, lr=lr, noise=noise,
            calibration=None if noise == "gaussian" else calibration, noise_scale=cal.noise_scale,
            lipschitz=c, sensitivity=sens, noise_norm_sq=cal.noise_sq(dim), utility_bound=None, info=info)
    return coef, intercept, result
