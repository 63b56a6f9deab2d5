"""Privacy behaviour: what the code *does*, measured through the public API.

The calibration tests (``test_calibration_refs.py``) check the numbers the code
reports; these tests check that the released values obey them.

Sensitivity.  For a pair of neighbouring data sets that attains the worst case
— one row whose per-example gradient saturates the clip (or a row beyond
``data_norm``, or a label beyond ``label_bound``) replaced by its mirror — one
noisy PGD step from the same starting point with the same seed draws the same
noise h, so w − w′ = −η(ḡ − ḡ′): the noise cancels and the difference of the
two outputs *is* η times the difference of the averaged clipped gradients.
It must equal the vector predicted by the clipping analysis, and its norm
must be η·Δ₂ exactly for a saturating row, and never more than the reported
η·Δ₂ (Δ₂ = ``result.sensitivity``).  A loop that clipped at a larger norm than
the one the sensitivity was computed with, or ignored the user's clip, fails.
The same holds for one step of ``noisy_gd``, and for ``noisy_sgd`` when row 0
is in the minibatch (the seed fixes the sample and the noise alike).

Noise.  On zero data the gradient is zero and one step is w = −η·h, so the
spread of w over many coordinates estimates the per-coordinate noise scale
actually applied: the standard deviation of N(0, σ²) or the mean absolute
value of Lap(b), within 1% of the reported ``noise_scale`` (with 2·10⁵
coordinates the standard error is ≤ 0.23%).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import fasterm as fe

# (noise, calibration, delta): every noise family and calibration of noisy_pgd
NOISES = [("laplace", "pure", 0.0), ("laplace", "l2", 1e-5), ("laplace", "coordinate", 1e-5),
          ("gaussian", "l2", 1e-5)]
NOISE_IDS = ["laplace-pure", "laplace-l2", "laplace-coordinate", "gaussian"]
DTYPES = [np.float64, np.float32]

N, D = 4, 3
XN = 2.0          # data_norm
YB = 1.5          # label_bound (squared loss)
LR = 0.5
BIG = 1e4         # a ball whose projection never binds here


def _row_clip(x, bound):
    nx = np.linalg.norm(x)
    return x * min(1.0, bound / nx) if nx > 0 else x


def _grad_at_zero(kind, x, y, clip):
    """The per-example gradient at w = 0 after the row clip, the label clip and
    the per-example gradient clip, from the losses' formulas (independent of the kernels)."""
    x = _row_clip(np.asarray(x, dtype=np.float64), XN)
    if kind == "linear":
        g = x                              # ∇⟨w, x⟩ = x
    elif kind == "hinge":
        g = -np.sign(y) * x                # margin 0 < 1: subgradient −y x
    elif kind == "logistic":
        g = -np.sign(y) * 0.5 * x          # −y σ(0) x
    else:                                  # squared: 2(⟨w, x⟩ − y)x with y clipped
        g = -2.0 * float(np.clip(y, -YB, YB)) * x
    return _row_clip(g, clip) if clip is not None else g


def _eff(clip, dtype, n, d, *, scale=None, reg=0.0, radius=BIG, rows=None):
    """The clip the kernels apply for a release of ``rows`` (default n) summed rows at
    ``scale`` (default 1/n): c/(1 + Θ), the floating-point margin (fasterm.erm._float_margin)."""
    from fasterm.erm import _float_margin

    if clip is None:
        return None
    th = _float_margin.margin("any", dtype, n if rows is None else rows, d,
                              scale=1.0 / n if scale is None else scale, bound=clip, reg=reg, radius=radius)
    return _float_margin.effective_clip(clip, th)


def _loss(kind):
    return {"linear": fe.losses.Linear(), "hinge": fe.losses.Hinge(), "logistic": fe.losses.Logistic(),
            "squared": fe.losses.Squared(label_bound=YB)}[kind]


def _lipschitz(kind):
    # G of each loss on the ball of radius BIG (losses.py docstrings; docs/guarantees.rst)
    return 2.0 * (YB + BIG * XN) * XN if kind == "squared" else XN


# (loss, user clip, does row 0 saturate the clip used for Δ₂?)
#   linear/hinge: ‖∇‖ = ‖x‖ = X at w = 0 (row 0 lies beyond X and is clipped to it);
#   logistic: ‖∇‖ = X/2, saturating only a clip ≤ X/2;
#   squared: ‖∇‖ = 2Y·X (label beyond Y, clipped), saturating a clip ≤ 2YX.
SENS_CASES = [("linear", None, True), ("linear", 0.7, True), ("hinge", None, True), ("hinge", 1.3, True),
              ("logistic", None, False), ("logistic", 0.4, True), ("squared", 2.5, True)]


def _neighbours(kind, dtype):
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (N, D))
    X *= 0.9 * XN / np.linalg.norm(X, axis=1, keepdims=True)
    v = np.array([3.0, -4.0, 12.0])            # ‖v‖ = 13 > X: beyond the declared bound
    X[0] = v
    y = np.array([1.0, -1.0, 1.0, -1.0])
    if kind == "squared":
        y = np.array([4.0, -0.5, 0.3, 1.0])   # |y₀| > Y: clipped
    X2, y2 = X.copy(), y.copy()
    if kind == "linear":
        X2[0] = -v                             # the mirror row
    else:
        y2[0] = -y[0]                          # the mirror label: the gradient at w = 0 flips
    return (X.astype(dtype), y.astype(dtype), X2.astype(dtype), y2.astype(dtype))


def _tol(dtype, *ws):
    # w − w′ is computed from w and w′, each rounded to the dtype
    return 8.0 * float(np.finfo(dtype).eps) * max(1.0, *(float(np.max(np.abs(w))) for w in ws))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("noise,calibration,delta", NOISES, ids=NOISE_IDS)
@pytest.mark.parametrize("kind,clip,saturates", SENS_CASES,
                         ids=[f"{k}-clip{c}" for k, c, _ in SENS_CASES])
def test_noisy_pgd_one_step_difference_is_eta_times_sensitivity(kind, clip, saturates, noise, calibration,
                                                                 delta, dtype):
    X, y, X2, y2 = _neighbours(kind, dtype)
    yy, yy2 = (None, None) if kind == "linear" else (y, y2)
    kw = dict(constraint=fe.L2Ball(BIG, D), epsilon=1.0, delta=delta, steps=1, noise=noise,
              calibration=calibration, data_norm=XN, clip=clip, lr=LR, average=False, random_state=42,
              label_bound=YB if kind == "squared" else None)
    loss = _loss(kind)
    r = fe.noisy_pgd(loss, X, yy, **kw)
    r2 = fe.noisy_pgd(loss, X2, yy2, **kw)
    G = _lipschitz(kind) if clip is None else min(clip, _lipschitz(kind))
    assert r.sensitivity == pytest.approx(2.0 * G / N, rel=1e-15)
    assert r2.sensitivity == r.sensitivity and r2.noise_scale == r.noise_scale
    diff = r.w.astype(np.float64) - r2.w.astype(np.float64)
    g_clip = clip if clip is not None else G  # noisy_pgd clips at G even without a user clip
    # ... at c/(1 + Θ), the floating-point margin (c the clip the sensitivity reports)
    g_eff = _eff(min(g_clip, G), dtype, N, D)
    expected = -LR * (_grad_at_zero(kind, X[0].astype(np.float64), float(y[0]), g_eff)
                      - _grad_at_zero(kind, X2[0].astype(np.float64), float(y2[0]), g_eff)) / N
    tol = _tol(dtype, r.w, r2.w)
    np.testing.assert_allclose(diff, expected, rtol=0, atol=tol)
    bound = LR * r.sensitivity
    assert np.linalg.norm(diff) <= bound + tol * math.sqrt(D)
    if saturates:
        assert np.linalg.norm(diff) == pytest.approx(bound * g_eff / min(g_clip, G), abs=tol * math.sqrt(D))


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_secure_noisy_pgd_one_step_difference_within_grid_sensitivity(noise):
    # Secure mode releases γ·(round(ḡ/γ) + Z): with the same seed Z cancels and
    # the difference is γ·(round(ḡ/γ) − round(ḡ′/γ)), within γ√d of ḡ − ḡ′ and
    # never beyond the rounding-enlarged sensitivity the calibration used.
    X, y, X2, y2 = _neighbours("linear", np.float64)
    kw = dict(constraint=fe.L2Ball(BIG, D), epsilon=1.0, delta=1e-5, steps=1, noise=noise, data_norm=XN,
              clip=0.7, lr=LR, average=False, random_state=3, secure=True, granularity=2.0 ** -4)
    r = fe.noisy_pgd(fe.losses.Linear(), X, None, **kw)
    r2 = fe.noisy_pgd(fe.losses.Linear(), X2, None, **kw)
    cal = r.info["secure"]
    diff = r.w - r2.w
    gamma = cal.granularity
    assert gamma == 2.0 ** -4
    true = LR * r.sensitivity
    assert abs(np.linalg.norm(diff) - true) <= LR * gamma * math.sqrt(D) + 1e-12
    assert np.linalg.norm(diff) <= LR * gamma * cal.grid_sensitivity * (1 + 1e-12)
    # every coordinate of the difference is η·γ times an integer (the grid)
    k = diff / (LR * gamma)
    np.testing.assert_allclose(k, np.round(k), atol=1e-9)


def test_dask_noisy_pgd_one_step_difference_is_eta_times_sensitivity():
    # the chunked path (map-reduce of the clipped gradient sums) clips as the in-memory loop
    da = pytest.importorskip("dask.array")
    import dask

    X, _, X2, _ = _neighbours("linear", np.float64)
    kw = dict(constraint=fe.L2Ball(BIG, D), epsilon=1.0, delta=1e-5, steps=1, noise="gaussian", data_norm=XN,
              clip=0.7, lr=LR, average=False, random_state=42)
    with dask.config.set(scheduler="synchronous"):
        r = fe.noisy_pgd(fe.losses.Linear(), da.from_array(X, chunks=(2, D)), None, **kw)
        r2 = fe.noisy_pgd(fe.losses.Linear(), da.from_array(X2, chunks=(2, D)), None, **kw)
    expected = -LR * (_grad_at_zero("linear", X[0], 0.0, 0.7) - _grad_at_zero("linear", X2[0], 0.0, 0.7)) / N
    np.testing.assert_allclose(r.w - r2.w, expected, rtol=0, atol=_tol(np.float64, r.w, r2.w))
    assert np.linalg.norm(r.w - r2.w) == pytest.approx(LR * r.sensitivity, rel=1e-9)


SMOOTH_CASES = [c for c in SENS_CASES if c[0] != "hinge"]


@pytest.mark.parametrize("accelerate", [False, True], ids=["plain", "momentum"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("noise,calibration,delta", [NOISES[1], NOISES[3]], ids=["laplace-l2", "gaussian"])
@pytest.mark.parametrize("kind,clip,saturates", SMOOTH_CASES, ids=[f"{k}-clip{c}" for k, c, _ in SMOOTH_CASES])
def test_noisy_gd_one_step_difference_is_eta_times_sensitivity(kind, clip, saturates, noise, calibration, delta,
                                                               dtype, accelerate):
    # one step (the compiled loop for plain steps, the numpy loop with momentum)
    X, y, X2, y2 = _neighbours(kind, dtype)
    yy, yy2 = (None, None) if kind == "linear" else (y, y2)
    kw = dict(constraint=fe.L2Ball(BIG, D), epsilon=1.0, delta=delta, steps=1, noise=noise,
              calibration=calibration, data_norm=XN, clip=clip, lr=LR, random_state=42, accelerate=accelerate,
              label_bound=YB if kind == "squared" else None)
    loss = _loss(kind)
    r, r2 = fe.noisy_gd(loss, X, yy, **kw), fe.noisy_gd(loss, X2, yy2, **kw)
    G = _lipschitz(kind) if clip is None else min(clip, _lipschitz(kind))
    assert r.sensitivity == pytest.approx(2.0 * G / N, rel=1e-15) and r2.noise_scale == r.noise_scale
    diff = r.w.astype(np.float64) - r2.w.astype(np.float64)
    g_clip = clip if clip is not None else G
    g_eff = _eff(min(g_clip, G), dtype, N, D)  # the floating-point margin
    expected = -LR * (_grad_at_zero(kind, X[0].astype(np.float64), float(y[0]), g_eff)
                      - _grad_at_zero(kind, X2[0].astype(np.float64), float(y2[0]), g_eff)) / N
    tol = _tol(dtype, r.w, r2.w)
    np.testing.assert_allclose(diff, expected, rtol=0, atol=tol)
    assert np.linalg.norm(diff) <= LR * r.sensitivity + tol * math.sqrt(D)
    if saturates:
        assert np.linalg.norm(diff) == pytest.approx(LR * r.sensitivity * g_eff / min(g_clip, G),
                                                     abs=tol * math.sqrt(D))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("kind,clip,saturates", SMOOTH_CASES, ids=[f"{k}-clip{c}" for k, c, _ in SMOOTH_CASES])
def test_noisy_sgd_one_step_difference_is_eta_times_clipped_change(kind, clip, saturates, dtype):
    # Poisson sampling at q = 1/2 with one seed: both runs sample the same rows and
    # draw the same noise, so w − w′ = −η·1[row 0 sampled]·(g₀ − g₀′)/(qn): either 0
    # or the full change, whose norm is ≤ η·2c/(qn) (= η·2·sensitivity/(qn)).
    X, y, X2, y2 = _neighbours(kind, dtype)
    yy, yy2 = (None, None) if kind == "linear" else (y, y2)
    loss = _loss(kind)
    G = _lipschitz(kind) if clip is None else min(clip, _lipschitz(kind))
    g_clip = clip if clip is not None else G
    # the run's one clip: the one-sided floating-point margin of batches up to a cap M ≤ N (the
    # smallest clip at M = N: the largest slack)
    from fasterm.erm import _float_margin
    low = _float_margin.run_clip(min(g_clip, G), dtype, N, D, scale=1.0 / (0.5 * N), bound=min(g_clip, G))
    full = -LR * (_grad_at_zero(kind, X[0].astype(np.float64), float(y[0]), g_clip)
                  - _grad_at_zero(kind, X2[0].astype(np.float64), float(y2[0]), g_clip)) / (0.5 * N)
    slack = float(np.max(np.abs(full))) * (1.0 - low / min(g_clip, G))
    seen = set()
    for seed in range(12):
        kw = dict(constraint=fe.L2Ball(BIG, D), epsilon=1.0, delta=1e-5, steps=1, sample_rate=0.5, data_norm=XN,
                  clip=clip, lr=LR, random_state=seed, label_bound=YB if kind == "squared" else None)
        r, r2 = fe.noisy_sgd(loss, X, yy, **kw), fe.noisy_sgd(loss, X2, yy2, **kw)
        assert r.sensitivity == pytest.approx(G, rel=1e-15) and r2.noise_scale == r.noise_scale
        diff = r.w.astype(np.float64) - r2.w.astype(np.float64)
        tol = _tol(dtype, r.w, r2.w)
        sampled = np.linalg.norm(diff) > 100 * tol
        seen.add(bool(sampled))
        np.testing.assert_allclose(diff, full if sampled else 0.0 * full, rtol=0, atol=tol + slack)
        assert np.linalg.norm(diff) <= LR * 2 * r.sensitivity / (0.5 * N) + tol * math.sqrt(D)
    assert seen == {True, False}  # both outcomes of the coin of row 0 occurred


def test_noisy_gd_and_sgd_applied_noise_match_reported_scale():
    # zero data, Linear loss: w_T = −η Σ_t h_t (gd: h_t ~ N(0, σ²); sgd: the sum's noise
    # N(0, σ²c²) divided by qn); T = 3 steps, 2·10⁵ coordinates.
    X = np.zeros((4, ND))
    r = fe.noisy_gd(fe.losses.Linear(), X, None, fe.L2Ball(1e12, ND), 1.0, 1e-5, steps=3, data_norm=1.0, lr=LR,
                    random_state=1)
    assert _spread(r.w, "gaussian") / (LR * math.sqrt(3)) == pytest.approx(r.noise_scale, rel=0.01)
    s = fe.noisy_sgd(fe.losses.Linear(), X, None, fe.L2Ball(1e12, ND), 1.0, 1e-5, steps=3, sample_rate=0.5,
                     data_norm=1.0, lr=LR, random_state=1)
    assert s.noise_scale == pytest.approx(s.info["noise_multiplier"] * 1.0, rel=1e-15)  # σ·c, c = G = 1
    assert _spread(s.w, "gaussian") / (LR * math.sqrt(3)) == pytest.approx(s.noise_scale / (0.5 * 4), rel=0.01)


# ---------------------------------------------------------------------------
# The estimators: two steps (the average of w₀ = 0 and w₁ is w₁/2, and w₁ is
# one noisy step from 0), neighbouring label flips on a row beyond data_norm.
# The other rows come in pairs (x, y), (x, −y) whose gradients at w = 0
# cancel, and n is large enough that the noise is small next to G: then
# ‖w₁‖ = lr·‖ḡ + h‖ stays inside the ball (lr = R/(G_eff√2) with R the
# diameter), so the projection cannot hide a larger difference.
# ---------------------------------------------------------------------------
EM, ED = 1000, 20
EN = 2 * EM + 1
S = 0.25  # intercept_scaling


def _est_data(dtype, flip):
    rng = np.random.default_rng(11)
    P = rng.uniform(-1, 1, (EM, ED)) / math.sqrt(ED)
    x0 = 5.0 * rng.uniform(-1, 1, ED)        # beyond data_norm = 1: clipped
    X = np.vstack([x0, P, P])
    y = np.concatenate([[1.0], np.ones(EM), -np.ones(EM)])
    if flip:
        y[0] = -y[0]
    return X.astype(dtype), y


def _aug_row(x):
    return np.append(_row_clip(np.asarray(x, np.float64), 1.0), S)


EST_CASES = [
    # (estimator, kind, clip, label scale): clip "auto" saturates at w = 0 for every kind
    ("DPLogisticRegression", "logistic", "auto", 1.0),
    ("DPLinearSVC", "hinge", "auto", 1.0),
    ("DPLinearSVC", "hinge", None, 1.0),          # no clip: the hinge gradient ‖x_aug‖ = X_aug saturates G
    ("DPLinearRegression", "squared", "auto", 3.0),  # |y| = 3 > label_bound = 1: clipped
]


# (estimator case, solver): noisy_gd for the smooth losses only
EST_SOLVER_CASES = [(case, solver) for case in EST_CASES for solver in ("pgd", "gd")
                    if solver == "pgd" or case[1] != "hinge"]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("noise,calibration,delta", [NOISES[1], NOISES[3]], ids=["laplace-l2", "gaussian"])
@pytest.mark.parametrize("case,solver", EST_SOLVER_CASES,
                         ids=[f"{c[0]}-{c[2]}-{sv}" for c, sv in EST_SOLVER_CASES])
# the regression case's labels |y| = 3 lie beyond label_bound on purpose: their warning is expected
@pytest.mark.filterwarnings("ignore:.*have \\|y\\| > label_bound:fasterm.DataWarning")
def test_estimator_neighbouring_fits_differ_by_lr_times_sensitivity(case, solver, noise, calibration, delta, dtype):
    # pgd: two steps, the average (w₀ + w₁)/2 = w₁/2; gd (smooth losses): one step, w₁ itself.
    est, kind, clip, yscale = case
    steps, share = (2, 0.5) if solver == "pgd" else (1, 1.0)
    cls = getattr(fe, est)
    params = dict(epsilon=1.0, delta=delta, noise=noise, calibration=calibration if noise == "laplace" else None,
                  steps=steps, random_state=5, clip=clip, intercept_scaling=S, solver="noisy_" + solver)
    if kind == "squared":
        params["label_bound"] = 1.0
    fits = []
    for flip in (False, True):
        X, y = _est_data(dtype, flip)
        m = cls(**params).fit(X, y * yscale)
        fits.append(m)
    m, m2 = fits
    X_aug = math.hypot(1.0, S)
    G = {"logistic": X_aug / (1 + math.e), "hinge": X_aug / 2, "squared": 1.0 * X_aug / 2}[kind]
    if clip is None:
        G = X_aug  # hinge: G = X_aug
    assert m.result_.steps == steps and m.result_.sensitivity == pytest.approx(2 * G / EN, rel=1e-14)
    lr = m.result_.lr
    assert m2.result_.lr == lr and m2.result_.noise_scale == m.result_.noise_scale

    def aug(model):
        return np.append(np.ravel(model.coef_).astype(np.float64), float(np.ravel(model.intercept_)[0]) / S)

    w, w2 = aug(m), aug(m2)
    radius = m.radius if m.radius is not None else m.result_.info["radius"]  # None: the resolved bound
    # precondition: the projection of w₁ did not bind (else the step would be shrunk)
    assert np.linalg.norm(w) / share < radius * (1 - 1e-6) and np.linalg.norm(w2) / share < radius * (1 - 1e-6)
    diff = w - w2
    X, y = _est_data(np.float64, False)
    x0 = _aug_row(X[0])
    yy = y[0] * yscale
    if kind == "hinge":
        g = -np.sign(yy) * x0
    elif kind == "logistic":
        g = -np.sign(yy) * 0.5 * x0
    else:
        g = -2.0 * float(np.clip(yy, -1.0, 1.0)) * x0
    # clipped at G/(1 + Θ), the floating-point margin (the regulariser α on the estimator's ball)
    # alpha None (DPLinearRegression): below 5,000 rows the classifiers' α (fasterm.linear_model._rules)
    alpha = m.alpha if m.alpha is not None else fe.linear_model._rules.DEFAULTS["alpha"]
    G_eff = _eff(G, dtype, EN, ED + 1, reg=alpha, radius=radius)
    g = _row_clip(g, G_eff)
    expected = -(lr * share) * (2 * g) / EN   # the flipped row's clipped gradient is −g
    # (×2 in float64: the intercept coordinate is read back divided by S = 1/4)
    tol = _tol(dtype, w, w2) * (10 if dtype == np.float32 else 2)
    np.testing.assert_allclose(diff, expected, rtol=0, atol=tol)
    assert np.linalg.norm(diff) == pytest.approx(lr * m.result_.sensitivity * share * G_eff / G,
                                                 abs=tol * math.sqrt(ED + 1))


# ---------------------------------------------------------------------------
# The noise actually applied
# ---------------------------------------------------------------------------
ND = 200_000


def _spread(v, noise):
    v = np.asarray(v, dtype=np.float64)
    if noise == "gaussian":
        return float(np.sqrt(np.mean(v * v)))   # σ̂ (the mean is 0)
    return float(np.mean(np.abs(v)))            # b̂: E|Lap(b)| = b


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("noise,calibration,delta", NOISES, ids=NOISE_IDS)
def test_noisy_pgd_applied_noise_matches_reported_scale(noise, calibration, delta, dtype):
    # zero data, Linear loss: the gradient is 0, so w_T = −η Σ_t h_t.  Gaussian:
    # T = 3 steps, each coordinate N(0, T·η²σ²); Laplace: one step (a sum of
    # Laplace draws is not Laplace), E|w_i| = η·b.
    steps = 3 if noise == "gaussian" else 1
    X = np.zeros((2, ND), dtype=dtype)
    r = fe.noisy_pgd(fe.losses.Linear(), X, None, fe.L2Ball(1e12, ND), 1.0, delta, steps=steps, noise=noise,
                     calibration=calibration, data_norm=1.0, lr=LR, average=False, random_state=1)
    est = _spread(r.w, noise) / (LR * math.sqrt(steps))
    assert est == pytest.approx(r.noise_scale, rel=0.01)
    assert r.noise_norm_sq == pytest.approx(ND * r.noise_scale ** 2 * (2.0 if noise == "laplace" else 1.0),
                                            rel=1e-12)


def test_noisy_pgd_applied_noise_dask_path():
    da = pytest.importorskip("dask.array")
    import dask

    X = da.zeros((2, 50_000), chunks=(1, 50_000))
    with dask.config.set(scheduler="synchronous"):
        r = fe.noisy_pgd(fe.losses.Linear(), X, None, fe.L2Ball(1e12, 50_000), 1.0, 1e-5, steps=1,
                         noise="gaussian", data_norm=1.0, lr=LR, average=False, random_state=1)
    assert _spread(r.w, "gaussian") / LR == pytest.approx(r.noise_scale, rel=0.02)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_secure_noisy_pgd_applied_noise_matches_reported_scale(noise):
    X = np.zeros((2, 100_000))
    r = fe.noisy_pgd(fe.losses.Linear(), X, None, fe.L2Ball(1e12, 100_000), 1.0, 1e-5, steps=1, noise=noise,
                     data_norm=1.0, lr=LR, average=False, random_state=1, secure=True)
    # discrete Laplace of scale t grid units: E|Z| = 2q/(1 − q²), q = e^{−1/t};
    # discrete Gaussian: E Z² < σ² and within 1e-3 of it for σ ≫ 1 grid unit (CKS 2020)
    cal = r.info["secure"]
    g = cal.granularity
    if noise == "laplace":
        t = float(cal.params.scale)
        q = math.exp(-1.0 / t)
        expected = g * 2 * q / (1 - q * q)
    else:
        expected = r.noise_scale
    assert _spread(r.w, noise) / LR == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("est,noise,dtype,solver", [("DPLogisticRegression", "gaussian", np.float64, "pgd"),
                                                    ("DPLogisticRegression", "gaussian", np.float64, "gd"),
                                                    ("DPLinearSVC", "laplace", np.float32, "pgd"),
                                                    ("DPLinearRegression", "gaussian", np.float32, "pgd"),
                                                    ("DPLinearRegression", "gaussian", np.float32, "gd")])
def test_estimator_applied_noise_matches_reported_scale(est, noise, dtype, solver):
    # zero features, no intercept: the gradient is 0; pgd's two-step average is
    # w₁/2 = −lr·h/2, gd's one step w₁ = −lr·h.  500 fits (seeds 0…499) × 200
    # coordinates; n = 400 keeps the noise below G, so ‖w₁‖ < radius (checked)
    # and the projection never binds.
    n, d, fits = 400, 200, 500
    steps, share = (2, 0.5) if solver == "pgd" else (1, 1.0)
    X = np.zeros((n, d), dtype=dtype)
    y = np.tile([0.0, 1.0], n // 2)
    model = getattr(fe, est)(epsilon=1.0, noise=noise, steps=steps, fit_intercept=False, solver="noisy_" + solver)
    h = np.empty((fits, d))
    for seed in range(fits):
        m = model.set_params(random_state=seed).fit(X, y)
        w = np.ravel(m.coef_).astype(np.float64)
        assert np.linalg.norm(w / share) < (m.radius or m.result_.info["radius"]) * (1 - 1e-6)
        h[seed] = w / share / m.result_.lr
    assert _spread(h, noise) == pytest.approx(m.result_.noise_scale, rel=0.01)


# ---------------------------------------------------------------------------
# The mechanisms: noise on a zero value
# ---------------------------------------------------------------------------
def test_mechanisms_applied_noise_matches_calibration():
    from scipy.stats import norm
    from scipy.optimize import brentq

    z = np.zeros(ND)
    # Laplace mechanism (Dwork–Roth Thm 3.6): b = Δ₁/ε
    out = fe.mechanisms.laplace(z, 0.7, 0.5, random_state=3)
    assert _spread(out, "laplace") == pytest.approx(0.7 / 0.5, rel=0.01)
    # Gaussian: σ = Δ₂/μ with μ solving Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = δ (Dong–Roth–Su Cor. 2.13)
    eps, delta = 1.0, 1e-5
    mu = brentq(lambda m: norm.cdf(-eps / m + m / 2) - math.exp(eps) * norm.cdf(-eps / m - m / 2) - delta,
                0.01, 10.0, xtol=1e-14)
    out = fe.mechanisms.gaussian(z, 0.7, eps, delta, random_state=4)
    assert _spread(out, "gaussian") == pytest.approx(0.7 / mu, rel=0.01)
    # L2 Laplace with δ = 0: the L1 mechanism with Δ₁ = √d·Δ₂, b = √d·Δ₂/ε
    out = fe.mechanisms.laplace_l2(z, 0.7, 0.5, 0.0, random_state=5)
    assert _spread(out, "laplace") == pytest.approx(math.sqrt(ND) * 0.7 / 0.5, rel=0.01)


def test_exponential_mechanism_rate():
    # two candidates with scores 0 and Δ: P[1]/P[0] = exp(−ε/2) (McSherry–Talwar,
    # Dwork–Roth Thm 3.10); exp(−ε) for monotone scores.
    from fasterm import mechanisms

    eps, n = 1.0, 400_000
    for monotonic, rate in ((False, eps / 2), (True, eps)):
        idx = mechanisms.releases._exponential(np.array([0.0, 1.0]), 1.0, eps, 9, monotonic, n)
        p1 = float(np.mean(idx == 1))
        expected = math.exp(-rate) / (1 + math.exp(-rate))
        se = math.sqrt(expected * (1 - expected) / n)
        assert abs(p1 - expected) < 5 * se
